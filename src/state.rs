//! The lab's UI state, in one reducer: the scenario shown, play/pause and the speed of virtual
//! time, the selected task, watchpoints, which panels are shown and the help overlay.
//! Components change it only through the lab's intents, which dispatch an `Action`.

use crate::address::Opened;
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

/// The speed a lab opens at when neither its link nor its preset names one.
pub const DEFAULT_SPEED: Ns = 10 * NS_PER_US;

/// The speed a preset plays at by default: its headline event shows within seconds of Play.
pub fn preset_speed(preset: &str) -> Ns {
    xlog::find_preset_entry(preset)
        .map(|p| p.play().speed_ns)
        .ok()
        .filter(|s| SPEEDS.iter().any(|&(v, _)| v == *s))
        .unwrap_or(DEFAULT_SPEED)
}

/// The panels a student can hide (a hidden panel costs nothing per frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Panel {
    Ring,
    LogSpace,
    Devices,
    Timeline,
    Plots,
    /// The log's counters (`journal` in a link's `panels=`).
    Counters,
    Cil,
    Ail,
    Tasks,
    Crash,
    Sizing,
    Trace,
    Compare,
    Rsum,
    Sweep,
    Exports,
}

impl Panel {
    pub const ALL: [Panel; 16] = [
        Panel::Ring,
        Panel::LogSpace,
        Panel::Devices,
        Panel::Timeline,
        Panel::Plots,
        Panel::Counters,
        Panel::Cil,
        Panel::Ail,
        Panel::Tasks,
        Panel::Crash,
        Panel::Sizing,
        Panel::Trace,
        Panel::Compare,
        Panel::Rsum,
        Panel::Sweep,
        Panel::Exports,
    ];
    pub fn label(self) -> &'static str {
        match self {
            Panel::Ring => "iclog ring",
            Panel::LogSpace => "on-disk log",
            Panel::Devices => "devices",
            Panel::Timeline => "flush timeline",
            Panel::Plots => "plots",
            Panel::Counters => "log counters",
            Panel::Cil => "CIL",
            Panel::Ail => "AIL",
            Panel::Tasks => "tasks",
            Panel::Crash => "crash",
            Panel::Sizing => "mkfs log sizing",
            Panel::Trace => "trace",
            Panel::Compare => "compare",
            Panel::Rsum => "realtime summary",
            Panel::Sweep => "sweep",
            Panel::Exports => "exports",
        }
    }

    /// Its name in a link's `panels=` (`xlog::url::PANELS`, in this order).
    pub fn link_name(self) -> &'static str {
        xlog::url::PANELS[Panel::ALL.iter().position(|&p| p == self).unwrap_or(0)]
    }

    pub fn from_link_name(name: &str) -> Option<Panel> {
        let name = xlog::url::panel_name(name)?;
        xlog::url::PANELS.iter().position(|&n| n == name).map(|i| Panel::ALL[i])
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct LabState {
    /// The scenario on screen, as its link opened it (or the picker and editor changed it).
    pub opened: Rc<Opened>,
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
    /// Panels the student hid.
    pub hidden: Vec<Panel>,
    /// The keyboard help (`?`) is open.
    pub help: bool,
}

impl Default for LabState {
    fn default() -> Self {
        LabState::new(Rc::new(Opened::default()))
    }
}

impl LabState {
    pub fn new(opened: Rc<Opened>) -> Self {
        // A link that names its panels shows those; one that names its speed plays at it.
        let hidden = match &opened.link.panels {
            Some(names) => {
                let shown: Vec<Panel> = names.iter().filter_map(|n| Panel::from_link_name(n)).collect();
                Panel::ALL.into_iter().filter(|p| !shown.contains(p)).collect()
            }
            // The sizing workbench, the trace, compare mode and sweeps are tools of their own:
            // shown on request.
            None => vec![Panel::Sizing, Panel::Trace, Panel::Compare, Panel::Sweep],
        };
        let speed_ns = opened.link.speed.unwrap_or_else(|| preset_speed(&opened.preset));
        LabState {
            opened,
            playing: false,
            speed_ns,
            selected: None,
            watches: Vec::new(),
            hit: None,
            branches: Vec::new(),
            hidden,
            help: false,
        }
    }

    pub fn shows(&self, p: Panel) -> bool {
        !self.hidden.contains(&p)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Show another scenario: a fresh run, paused; speed, watchpoints and panels stay.
    SetScenario(Rc<Opened>),
    /// Hide a shown panel, show a hidden one.
    TogglePanel(Panel),
    /// Open or close the keyboard help; `CloseHelp` only closes it (Escape).
    ToggleHelp,
    CloseHelp,
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
        let mut s = self.clone();
        let at = SPEEDS.iter().position(|&(ns, _)| ns == s.speed_ns).unwrap_or(1);
        match a {
            Action::SetScenario(o) => {
                // Another preset plays at its own speed; a changed setting keeps the speed.
                if o.preset != s.opened.preset {
                    s.speed_ns = o.link.speed.unwrap_or_else(|| preset_speed(&o.preset));
                }
                s.opened = o;
                s.playing = false;
                s.selected = None;
                s.hit = None;
                s.branches.clear();
            }
            Action::TogglePanel(p) => {
                if let Some(i) = s.hidden.iter().position(|&h| h == p) {
                    s.hidden.remove(i);
                } else {
                    s.hidden.push(p);
                    s.hidden.sort();
                }
            }
            Action::ToggleHelp => s.help = !s.help,
            Action::CloseHelp => s.help = false,
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
    fn panel_link_names_are_the_links_vocabulary_in_order() {
        assert_eq!(Panel::ALL.len(), xlog::url::PANELS.len());
        for p in Panel::ALL {
            assert_eq!(Panel::from_link_name(p.link_name()), Some(p));
        }
        assert_eq!(SPEEDS.iter().map(|&(ns, _)| ns).collect::<Vec<_>>(), xlog::url::SPEEDS);
        let o = crate::address::open("?preset=small-crash&v=2&panels=ring,cil&speed=1ms");
        let s = LabState::new(Rc::new(o));
        assert!(s.shows(Panel::Ring) && s.shows(Panel::Cil) && !s.shows(Panel::Tasks));
        assert_eq!(s.speed_ns, NS_PER_MS);
        // The log counters panel answers to its label's name too; links still write `journal`.
        assert_eq!(Panel::from_link_name("counters"), Panel::from_link_name("journal"));
        assert_eq!(Panel::from_link_name("counters").map(Panel::link_name), Some("journal"));
        let o = crate::address::open("?preset=small-crash&v=2&panels=counters");
        assert!(LabState::new(Rc::new(o)).shows(Panel::from_link_name("journal").unwrap()));
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

    #[test]
    fn a_new_scenario_starts_paused_and_keeps_speed_watches_and_panels() {
        let s = LabState::default()
            .apply(Action::SetSpeed(NS_PER_MS))
            .apply(Action::AddWatch(Watch::FirstFlush))
            .apply(Action::TogglePanel(Panel::Plots))
            .apply(Action::Select(2))
            .apply(Action::Branched("flush=legacy".into()))
            .apply(Action::Play);
        let mut o = (*s.opened).clone();
        o.scenario.writers = 3;
        let n = s.apply(Action::SetScenario(Rc::new(o)));
        assert_eq!(n.opened.scenario.writers, 3);
        assert!(!n.playing && n.selected.is_none() && n.branches.is_empty());
        assert_eq!((n.speed_ns, n.watches.len()), (NS_PER_MS, 1));
        assert!(!n.shows(Panel::Plots) && n.shows(Panel::Cil));
        assert!(n.apply(Action::TogglePanel(Panel::Plots)).shows(Panel::Plots));
    }

    #[test]
    fn help_opens_toggles_and_escape_only_closes() {
        let s = LabState::default();
        assert!(s.apply(Action::ToggleHelp).help);
        assert!(!s.apply(Action::ToggleHelp).apply(Action::ToggleHelp).help);
        assert!(!s.apply(Action::CloseHelp).help);
        assert!(!s.apply(Action::ToggleHelp).apply(Action::CloseHelp).help);
    }
}
