//! The lab's UI state, in one reducer: play/pause and the speed of virtual time. Components
//! change it only by dispatching an `Action`.

use std::rc::Rc;
use xlog::{Ns, Watch, NS_PER_MS, NS_PER_US};
use yew::Reducible;

/// Virtual time per animation frame, on a log scale (the speed menu).
pub const SPEEDS: &[(Ns, &str)] = &[
    (NS_PER_US, "1 µs / frame"),
    (10 * NS_PER_US, "10 µs / frame"),
    (100 * NS_PER_US, "100 µs / frame"),
    (NS_PER_MS, "1 ms / frame"),
    (10 * NS_PER_MS, "10 ms / frame"),
    (100 * NS_PER_MS, "100 ms / frame"),
];

/// The speed a lab opens at.
pub const DEFAULT_SPEED: Ns = 10 * NS_PER_US;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabState {
    pub playing: bool,
    /// Virtual time per frame while playing, and per press of Step.
    pub speed_ns: Ns,
    /// The writer task whose wait the tasks panel explains.
    pub selected: Option<u32>,
    /// Conditions that pause the run when they become true, and what the last one found.
    pub watches: Vec<Watch>,
    pub hit: Option<String>,
    /// What-if branches taken on this page, oldest first.
    pub branches: Vec<String>,
}

impl Default for LabState {
    fn default() -> Self {
        LabState {
            playing: false,
            speed_ns: DEFAULT_SPEED,
            selected: None,
            watches: Vec::new(),
            hit: None,
            branches: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Play,
    Pause,
    /// Play if paused, pause if playing (the space bar).
    Toggle,
    /// One of `SPEEDS`; anything else is ignored (a stale menu value never sets a bad speed).
    SetSpeed(Ns),
    /// The next faster or slower speed (keyboard), clamped at the ends.
    Faster,
    Slower,
    /// Selects a task (again: deselects it).
    Select(u32),
    AddWatch(Watch),
    RemoveWatch(usize),
    /// A watch fired: pause and say what it found.
    WatchHit(String),
    /// The run was branched ("what if"): remember what changed, and when.
    Branched(String),
}

impl LabState {
    pub fn apply(&self, a: Action) -> LabState {
        let a = a.clone();
        let mut s = self.clone();
        let at = SPEEDS.iter().position(|&(ns, _)| ns == s.speed_ns).unwrap_or(1);
        match a {
            Action::Play => {
                s.playing = true;
                s.hit = None;
            }
            Action::Pause => s.playing = false,
            Action::Toggle => {
                s.playing = !s.playing;
                s.hit = None;
            }
            Action::SetSpeed(ns) if SPEEDS.iter().any(|&(v, _)| v == ns) => s.speed_ns = ns,
            Action::SetSpeed(_) => {}
            Action::Faster => s.speed_ns = SPEEDS[(at + 1).min(SPEEDS.len() - 1)].0,
            Action::Slower => s.speed_ns = SPEEDS[at.saturating_sub(1)].0,
            Action::Select(t) => s.selected = if s.selected == Some(t) { None } else { Some(t) },
            Action::AddWatch(w) if !s.watches.contains(&w) => s.watches.push(w),
            Action::AddWatch(_) => {}
            Action::RemoveWatch(i) if i < s.watches.len() => {
                s.watches.remove(i);
            }
            Action::RemoveWatch(_) => {}
            Action::Branched(what) => s.branches.push(what),
            Action::WatchHit(what) => {
                s.playing = false;
                s.hit = Some(what);
            }
        }
        s
    }
}

impl Reducible for LabState {
    type Action = Action;
    fn reduce(self: Rc<Self>, a: Action) -> Rc<Self> {
        let next = self.apply(a);
        if next == *self {
            self
        } else {
            Rc::new(next)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn play_pause_and_toggle() {
        let s = LabState::default();
        assert!(s.apply(Action::Play).playing);
        assert!(!s.apply(Action::Play).apply(Action::Pause).playing);
        assert!(s.apply(Action::Toggle).playing);
        assert!(!s.apply(Action::Toggle).apply(Action::Toggle).playing);
    }

    #[test]
    fn selecting_a_task_twice_deselects_it() {
        let s = LabState::default().apply(Action::Select(3));
        assert_eq!(s.selected, Some(3));
        assert_eq!(s.apply(Action::Select(4)).selected, Some(4));
        assert_eq!(s.apply(Action::Select(3)).selected, None);
    }

    #[test]
    fn a_watch_hit_pauses_and_play_clears_it() {
        let s = LabState::default().apply(Action::AddWatch(Watch::FirstFlush)).apply(Action::Play);
        assert_eq!(s.apply(Action::AddWatch(Watch::FirstFlush)).watches.len(), 1, "no duplicates");
        let hit = s.apply(Action::WatchHit("first flush".into()));
        assert!(!hit.playing && hit.hit.as_deref() == Some("first flush"));
        assert_eq!(hit.apply(Action::Play).hit, None);
        assert!(hit.apply(Action::RemoveWatch(0)).watches.is_empty());
        assert_eq!(hit.apply(Action::RemoveWatch(9)).watches.len(), 1);
    }

    #[test]
    fn speed_moves_along_the_log_scale_and_ignores_strangers() {
        let s = LabState::default();
        assert_eq!(s.apply(Action::Faster).speed_ns, 100 * NS_PER_US);
        assert_eq!(s.apply(Action::Slower).speed_ns, NS_PER_US);
        assert_eq!(s.apply(Action::Slower).apply(Action::Slower).speed_ns, NS_PER_US, "clamped");
        assert_eq!(s.apply(Action::SetSpeed(NS_PER_MS)).speed_ns, NS_PER_MS);
        assert_eq!(s.apply(Action::SetSpeed(12345)).speed_ns, DEFAULT_SPEED);
        let top = SPEEDS.last().unwrap().0;
        assert_eq!(s.apply(Action::SetSpeed(top)).apply(Action::Faster).speed_ns, top);
    }
}
