//! The one place that owns and runs the simulation. Each animation frame it advances virtual
//! time by the chosen speed, but runs at most `FRAME_EVENT_BUDGET` events (a busy stretch
//! slows the clock, never the page), then publishes a new `Frame` with a higher generation.
//! Components read frames and call intents; they never touch the `Sim`.

use crate::address::Opened;
use crate::keyframes::Keyframes;
use crate::series::{Series, PLOTS};
use crate::state::{Action, LabState, Panel};
use gloo_render::{request_animation_frame, AnimationFrame};
use std::cell::RefCell;
use std::rc::Rc;
use xlog::moment::Moment;
use xlog::{
    check_chosen_state, explore_crash_state, writer_comm, writes_at_risk, AilView, AtRisk, ChosenState, CilView,
    CrashReport, DevicePanel, Fate, IclogsView, IoSpan, LinkCheck, LogSpaceView, Metrics, Milestone, Ns, RtView,
    Scenario, Sim, TraceCmdPrinter, View, Watch, NS_PER_MS, NS_PER_SEC,
};
use yew::prelude::*;

/// Milliseconds of script the last frames' model steps and frame builds took (a ring).
#[derive(Default)]
pub struct FrameTimes {
    ms: std::collections::VecDeque<f64>,
}

impl FrameTimes {
    const KEEP: usize = 240;
    fn push(&mut self, ms: f64) {
        if self.ms.len() == Self::KEEP {
            self.ms.pop_front();
        }
        self.ms.push_back(ms);
    }
    /// The 95th percentile of the kept frames, if any.
    pub fn p95(&self) -> Option<f64> {
        let mut v: Vec<f64> = self.ms.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        v.get((v.len() * 95 / 100).min(v.len().saturating_sub(1))).copied()
    }
}

/// The reader asked for less motion (`prefers-reduced-motion: reduce`).
fn prefers_reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-reduced-motion: reduce)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// With reduced motion the model still steps every animation frame, but the page shows a new
/// frame at most this often (calm steps instead of animation).
const REDUCED_MOTION_MS: f64 = 250.0;

fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// The frame loop's next tick: set while playing, taken to stop.
type Tick = Rc<RefCell<Option<Box<dyn Fn()>>>>;

/// How much past the flush timeline may show, and how many requests it keeps.
pub const TIMELINE_NS: Ns = 200 * NS_PER_MS;
const TIMELINE_MAX: usize = 600;
const TIMELINE_RECORD: usize = 20_000;

/// Most events one "step to" may run before it gives up (about a second of wasm time).
const STEP_TO_BUDGET: u64 = 300_000;

/// Columns of the realtime summary heat map.
const RSUM_COLUMNS: usize = 256;

/// Most events one frame runs: about 10 ms of model time in Chromium's wasm.
pub const FRAME_EVENT_BUDGET: u64 = 4000;

/// What the page shows after a frame: built once per frame, shared by every panel.
#[derive(Debug, PartialEq)]
pub struct Frame {
    pub view: Rc<View>,
    pub metrics: Rc<Metrics>,
    /// The subsystem views the panels draw.
    pub cil: Rc<CilView>,
    pub iclogs: Rc<IclogsView>,
    pub ail: Rc<AilView>,
    pub space: Rc<LogSpaceView>,
    pub devices: Rc<Vec<DevicePanel>>,
    /// Requests of the last `TIMELINE_NS` (at most `TIMELINE_MAX`), for the flush timeline.
    pub timeline: Rc<Vec<IoSpan>>,
    /// From when the timeline is complete: older requests were dropped (or never recorded).
    pub timeline_from: Ns,
    /// The plots' series, one (ms, value) list per plot.
    pub plots: Rc<Vec<Vec<(f64, f64)>>>,
    /// What changed since the frame before, for the live region.
    pub narration: Rc<Vec<String>>,
    /// The run it is being compared with, on the same clock.
    pub compare: Option<Rc<CompareFrame>>,
    /// The realtime summary, for a scenario with a realtime device.
    pub rt: Option<Rc<RtView>>,
    /// Events processed so far.
    pub events: u64,
    /// Bumped on every publish: panels compare it to skip work on unchanged frames.
    pub generation: u64,
}

/// A second run of the scenario with one knob different, kept on the first run's clock.
pub struct Compare {
    /// The settings that differ, `key=value` each.
    pub changes: Vec<(String, String)>,
    scenario: Scenario,
    sim: Sim,
}

impl Compare {
    fn new(base: &Scenario, changes: &[(String, String)]) -> Result<Compare, String> {
        let s = base.with_settings(changes.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        let mut sim = Sim::new(&s)?;
        sim.keep_timeline(TIMELINE_RECORD);
        Ok(Compare { changes: changes.to_vec(), scenario: s, sim })
    }

    /// Brings the second run to `now`: forward by running, back by starting again.
    fn follow(&mut self, now: Ns) {
        if self.sim.now() > now {
            if let Ok(mut sim) = Sim::new(&self.scenario) {
                sim.keep_timeline(TIMELINE_RECORD);
                self.sim = sim;
            }
        }
        self.sim.run_until(now);
    }
}

/// What the compare panel draws of the second run.
#[derive(Debug, PartialEq)]
pub struct CompareFrame {
    /// `key=value`, the knob that differs.
    pub label: String,
    pub now_ns: Ns,
    pub metrics: Rc<Metrics>,
    pub timeline: Rc<Vec<IoSpan>>,
    pub timeline_from: Ns,
    pub space: Rc<LogSpaceView>,
    pub lanes: Vec<String>,
}

/// The flush timeline's recent requests, at most `TIMELINE_MAX`, and from when they are complete.
fn recent_requests(sim: &Sim) -> (Vec<IoSpan>, Ns) {
    let mut timeline = sim.timeline_since(sim.now().saturating_sub(TIMELINE_NS));
    let cut = timeline.len().saturating_sub(TIMELINE_MAX);
    timeline.drain(..cut);
    let from = match timeline.first() {
        Some(s) if cut > 0 => s.submit_ns,
        _ => sim.now().saturating_sub(TIMELINE_NS),
    };
    (timeline, from)
}

/// The lab as components see it: the latest frame, the UI state, and intents.
#[derive(Clone)]
pub struct Lab {
    pub frame: Rc<Frame>,
    pub state: Rc<LabState>,
    /// Why the scenario could not be built (the default scenario runs instead).
    pub error: Option<String>,
    dispatch: UseReducerDispatcher<LabState>,
    sim: Rc<RefCell<Sim>>,
    keyframes: Rc<RefCell<Keyframes>>,
    /// The furthest virtual time this page has reached (the scrubber's end).
    pub reached: Ns,
    pub frame_times: Rc<RefCell<FrameTimes>>,
    publish: Rc<dyn Fn()>,
    compare: Rc<RefCell<Option<Compare>>>,
    /// The link's trace hash against this model's at its moment, when they differ.
    pub link_moved: Option<Rc<LinkCheck>>,
}

impl PartialEq for Lab {
    fn eq(&self, other: &Self) -> bool {
        self.frame.generation == other.frame.generation
            && self.state == other.state
            && self.error == other.error
            && self.reached == other.reached
    }
}

impl Lab {
    /// Shows another scenario: the page remounts on it with a fresh run.
    pub fn set_scenario(&self, o: Opened) {
        self.dispatch.dispatch(Action::SetScenario(Rc::new(o)));
    }
    pub fn toggle_panel(&self, p: Panel) {
        self.dispatch.dispatch(Action::TogglePanel(p));
    }
    pub fn toggle_help(&self) {
        self.dispatch.dispatch(Action::ToggleHelp);
    }
    pub fn close_help(&self) {
        self.dispatch.dispatch(Action::CloseHelp);
    }
    pub fn play(&self) {
        self.dispatch.dispatch(Action::Play);
    }
    pub fn pause(&self) {
        self.dispatch.dispatch(Action::Pause);
    }
    pub fn toggle(&self) {
        self.dispatch.dispatch(Action::Toggle);
    }
    pub fn set_speed(&self, ns: Ns) {
        self.dispatch.dispatch(Action::SetSpeed(ns));
    }
    pub fn faster(&self) {
        self.dispatch.dispatch(Action::Faster);
    }
    pub fn slower(&self) {
        self.dispatch.dispatch(Action::Slower);
    }
    pub fn add_watch(&self, w: Watch) {
        self.dispatch.dispatch(Action::AddWatch(w));
    }
    pub fn remove_watch(&self, i: usize) {
        self.dispatch.dispatch(Action::RemoveWatch(i));
    }
    /// Continues the run from now with `key=value` (a what-if branch). Snapshots before the
    /// branch belong to the other run, so time travel starts again here.
    pub fn branch(&self, key: &str, value: &str) -> Result<(), String> {
        let next = self.sim.borrow().branch(key, value)?;
        let at = next.now();
        *self.keyframes.borrow_mut() = Keyframes::new(&next);
        *self.sim.borrow_mut() = next;
        self.dispatch.dispatch(Action::Branched(format!("{key}={value} from t = {:.3} ms", at as f64 / 1e6)));
        (self.publish)();
        Ok(())
    }
    pub fn select(&self, task: u32) {
        self.dispatch.dispatch(Action::Select(task));
    }
    /// Why writer `w` is blocked, as a chain of kernel objects (empty when it is not).
    pub fn why_blocked(&self, w: u32) -> Vec<String> {
        self.sim.borrow().why_blocked(w)
    }
    /// Runs to the next `m` moment, at most a second of virtual time ahead; false if none came.
    pub fn step_to(&self, m: Milestone) -> bool {
        let found = {
            let mut sim = self.sim.borrow_mut();
            let limit = (sim.now() + NS_PER_SEC).min(sim.scenario().duration.0);
            let found = sim.run_to_next(m, limit, STEP_TO_BUDGET);
            self.keyframes.borrow_mut().offer(&sim);
            found
        };
        (self.publish)();
        found
    }
    /// Advances virtual time by one speed step (all its events, whatever the budget).
    pub fn step(&self) {
        {
            let mut sim = self.sim.borrow_mut();
            let t = sim.now() + self.state.speed_ns;
            sim.run_until(t);
            self.keyframes.borrow_mut().offer(&sim);
        }
        (self.publish)();
    }
    /// Goes to virtual time `t`, back or forward: the nearest snapshot, run forward.
    pub fn seek(&self, t: Ns) {
        let sim = self.keyframes.borrow().seek(t.max(self.keyframes.borrow().start()));
        *self.sim.borrow_mut() = sim;
        (self.publish)();
    }
    /// Runs `n` events (the API's `step(n)`); returns the events run so far.
    pub fn step_events(&self, n: u64) -> u64 {
        let events = {
            let mut sim = self.sim.borrow_mut();
            for _ in 0..n {
                if sim.step().is_none() {
                    break;
                }
            }
            self.keyframes.borrow_mut().offer(&sim);
            sim.events()
        };
        (self.publish)();
        events
    }
    /// Virtual time now.
    pub fn now(&self) -> Ns {
        self.sim.borrow().now()
    }
    /// The trace hash of the events run so far (`loglab run --until`'s `trace_hash`).
    pub fn trace_hash(&self) -> String {
        format!("{:016x}", self.sim.borrow().trace_hash())
    }
    /// The metrics now, with the keys of `loglab run --json`.
    pub fn metrics_now(&self) -> Metrics {
        self.sim.borrow().metrics()
    }
    /// Goes back one speed step.
    pub fn step_back(&self) {
        let now = self.sim.borrow().now();
        self.seek(now.saturating_sub(self.state.speed_ns));
    }
    /// Every disk state a crash now may leave (at most `budget`, sampled beyond), recovered
    /// from the device bytes and judged; `state` checks just that one (a crash link's).
    pub fn crash_now(&self, budget: u32, state: Option<u64>) -> CrashReport {
        self.sim.borrow_mut().settle_crcs();
        let sim = self.sim.borrow();
        let mut report = CrashReport::default();
        let seed = sim.scenario().seed;
        explore_crash_state(&sim, budget as u64, seed, state, &mut report);
        report
    }
    /// The trace-cmd text of this run up to now (`loglab trace --until` for a link's `at=`),
    /// keeping only `only` when it names an event: the scenario is run again from the start,
    /// so what-if branches are not in it.
    pub fn trace_to_now(&self, only: &str) -> Result<String, String> {
        let at = Moment::Events(self.sim.borrow().events());
        let s = &self.state.opened.scenario;
        let keep = |name: &str| only.is_empty() || name == only;
        xlog::moment::trace_text(s, at, TraceCmdPrinter::new(writer_comm(s)), keep)
    }
    /// Runs the scenario a second time with `key=value`, on this run's clock (compare mode).
    pub fn compare_with(&self, key: &str, value: &str) -> Result<(), String> {
        self.compare_with_all(&[(key.to_string(), value.to_string())])
    }
    /// As `compare_with`, with several settings changed at once.
    pub fn compare_with_all(&self, changes: &[(String, String)]) -> Result<(), String> {
        let mut c = Compare::new(&self.state.opened.scenario, changes)?;
        c.follow(self.sim.borrow().now());
        *self.compare.borrow_mut() = Some(c);
        (self.publish)();
        Ok(())
    }
    /// The query of a link to this moment: what Copy link copies. Its hash is that of every
    /// event up to now (a frame may stop part way through an instant's events), so the link
    /// reopens on the same trace hash.
    pub fn moment_query(&self) -> String {
        let (now, hash) = {
            let sim = self.sim.borrow();
            let mut whole = sim.clone();
            whole.run_until(sim.now());
            (whole.now(), format!("{:016x}", whole.trace_hash()))
        };
        let shown: Vec<&str> = Panel::ALL.into_iter().filter(|&p| self.state.shows(p)).map(Panel::link_name).collect();
        let compare = self.compare.borrow().as_ref().map(|c| c.changes.clone()).unwrap_or_default();
        crate::address::moment_query(&self.state.opened, now, &hash, &shown, self.state.speed_ns, &compare)
    }
    pub fn stop_compare(&self) {
        *self.compare.borrow_mut() = None;
        (self.publish)();
    }
    /// The dm-log-writes stream of this run up to now (`loglab export-logwrites --until` for a
    /// link's `at=`): the scenario run again from the start with every request recorded.
    pub fn logwrites_to_now(&self) -> Result<Vec<u8>, String> {
        let at = Moment::Events(self.sim.borrow().events());
        Ok(xlog::moment::logwrites_to(&self.state.opened.scenario, at)?.bytes)
    }
    /// The scenario the run follows now (the link's, with any what-if branch applied).
    pub fn scenario_now(&self) -> Scenario {
        self.sim.borrow().scenario().clone()
    }
    /// The writes a crash now may keep or lose, each with its request as the flush timeline
    /// recorded it (what it was issued for), when that is still recorded.
    pub fn at_risk(&self) -> Vec<(AtRisk, Option<IoSpan>)> {
        let sim = self.sim.borrow();
        // Only when paused, so a scan per write (no map to build) is cheap enough.
        let spans = sim.timeline_since(0);
        writes_at_risk(&sim)
            .into_iter()
            .map(|w| {
                let span = spans.iter().rev().find(|s| s.dev as usize == w.dev && s.id == w.req_id).cloned();
                (w, span)
            })
            .collect()
    }
    /// A crash now with these fates for `at_risk()`, recovered and judged.
    pub fn check_chosen(&self, fates: &[Fate]) -> ChosenState {
        self.sim.borrow_mut().settle_crcs();
        check_chosen_state(&self.sim.borrow(), fates)
    }
    /// The run's current event count (where a crash now would happen).
    pub fn events(&self) -> u64 {
        self.frame.events
    }
    /// Time-travel snapshots held.
    pub fn keyframes(&self) -> usize {
        self.keyframes.borrow().count()
    }
    /// The earliest time the scrubber reaches.
    pub fn start(&self) -> Ns {
        self.keyframes.borrow().start()
    }
}

fn frame_of(
    sim: &Sim,
    compare: Option<&Compare>,
    generation: u64,
    prev: Option<&View>,
    series: &RefCell<Series>,
) -> Frame {
    let view = sim.view();
    let metrics = sim.metrics();
    series.borrow_mut().push(&view, &metrics);
    let plots = {
        let s = series.borrow();
        (0..PLOTS.len()).map(|k| s.points(k)).collect()
    };
    let narration = prev.map(|p| crate::narrate::narrate(p, &view)).unwrap_or_default();
    let (timeline, timeline_from) = recent_requests(sim);
    let compare = compare.map(|c| {
        let (timeline, timeline_from) = recent_requests(&c.sim);
        Rc::new(CompareFrame {
            label: c.changes.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&"),
            now_ns: c.sim.now(),
            metrics: Rc::new(c.sim.metrics()),
            timeline: Rc::new(timeline),
            timeline_from,
            space: Rc::new(c.sim.log_space_view()),
            lanes: c.sim.devices_view().iter().map(|d| format!("{} device ({})", d.role, d.profile)).collect(),
        })
    });
    Frame {
        compare,
        rt: sim.rt_view(RSUM_COLUMNS).map(Rc::new),
        narration: Rc::new(narration),
        view: Rc::new(view),
        metrics: Rc::new(metrics),
        plots: Rc::new(plots),
        cil: Rc::new(sim.cil_view()),
        iclogs: Rc::new(sim.iclogs_view()),
        ail: Rc::new(sim.ail_view()),
        space: Rc::new(sim.log_space_view()),
        devices: Rc::new(sim.devices_view()),
        timeline_from,
        timeline: Rc::new(timeline),
        events: sim.events(),
        generation,
    }
}

/// Samples the plots take, and snapshots time travel is offered, on the way to where a link
/// opens: a shared link's page shows the run that led there and can go back into it.
const OPEN_SAMPLES: u64 = 400;

/// Builds the simulation the page opened with and runs it to `at` (the same events as one
/// `run_until(at)`, so its trace hash equals `loglab run --until`), sampling the plots and
/// keeping time-travel snapshots from the start.
fn build(opened: &Opened, series: &mut Series) -> (Sim, Keyframes, Option<String>, Option<LinkCheck>) {
    let made = Sim::new(&opened.scenario).and_then(|mut sim| {
        sim.keep_timeline(TIMELINE_RECORD);
        let mut keyframes = Keyframes::new(&sim);
        let mut sample = |sim: &Sim| {
            series.push(&sim.view(), &sim.metrics());
            keyframes.offer(sim);
        };
        sim.set_keep_trace(false);
        if opened.at.is_some() || opened.crash.is_some() {
            sample(&sim);
        }
        if let Some(at) = opened.at {
            let from = sim.now();
            for i in 1..=OPEN_SAMPLES {
                // Slices run the events one `run_until(at)` runs, in the same order.
                sim.run_until(from + (at.saturating_sub(from) as u128 * i as u128 / OPEN_SAMPLES as u128) as Ns);
                sample(&sim);
            }
        }
        if let Some(c) = opened.crash {
            // As `loglab crash` replays a link: the same run, stopped on that event.
            let every = (c.event / OPEN_SAMPLES).max(1);
            while sim.events() < c.event && sim.step().is_some() {
                if sim.events() % every == 0 {
                    sample(&sim);
                }
            }
            if sim.events() != c.event {
                return Err(format!("crash_event: {} is past the run's last event ({})", c.event, sim.events()));
            }
        }
        sim.set_keep_trace(true);
        Ok((sim, keyframes))
    });
    match made {
        Ok((sim, keyframes)) => {
            let moved = link_moved(opened, &sim);
            (sim, keyframes, None, moved)
        }
        Err(e) => {
            *series = Series::default();
            let sim = Sim::new(&Scenario::default()).expect("the default scenario is valid");
            let keyframes = Keyframes::new(&sim);
            (sim, keyframes, Some(e), None)
        }
    }
}

/// The link's hash against this model's at its moment (`sim`, opened there), when it has one
/// and they differ. A link with a hash but no moment names the whole run's end.
fn link_moved(opened: &Opened, sim: &Sim) -> Option<LinkCheck> {
    let link_hash = opened.link.hash.as_deref()?;
    let hash = if opened.at.is_some() || opened.crash.is_some() {
        format!("{:016x}", sim.trace_hash())
    } else {
        let mut whole = Sim::new(&opened.scenario).ok()?;
        whole.set_keep_trace(false);
        whole.run();
        format!("{:016x}", whole.trace_hash())
    };
    let check = xlog::compare_hashes(link_hash, opened.link.model, &hash);
    (!check.holds()).then_some(check)
}

/// The driver of one scenario's page; `state` is the app's reducer (it outlives the page).
#[hook]
pub fn use_lab(state: UseReducerHandle<LabState>) -> Lab {
    let opened = state.opened.clone();
    let frame_times = use_mut_ref(FrameTimes::default);
    let series = use_mut_ref(Series::default);
    type Built = (Rc<RefCell<Sim>>, Rc<RefCell<Keyframes>>, Option<String>, Option<Rc<LinkCheck>>);
    let built = use_mut_ref(|| None::<Built>);
    let (sim, keyframes, error, link_moved) = built
        .borrow_mut()
        .get_or_insert_with(|| {
            let (sim, k, e, moved) = build(&opened, &mut series.borrow_mut());
            (Rc::new(RefCell::new(sim)), Rc::new(RefCell::new(k)), e, moved.map(Rc::new))
        })
        .clone();
    // A link's compare settings start the comparison (a bad one was refused when decoding).
    let compare = {
        let sim = sim.clone();
        use_mut_ref(move || {
            (!opened.link.compare.is_empty())
                .then(|| Compare::new(&opened.scenario, &opened.link.compare).ok())
                .flatten()
                .map(|mut c| {
                    c.follow(sim.borrow().now());
                    c
                })
        })
    };
    let frame = {
        let (sim, series, compare) = (sim.clone(), series.clone(), compare.clone());
        use_state(move || Rc::new(frame_of(&sim.borrow(), compare.borrow().as_ref(), 0, None, &series)))
    };
    let publish: Rc<dyn Fn()> = {
        let (sim, frame, series, compare) = (sim.clone(), frame.clone(), series.clone(), compare.clone());
        let generation = use_mut_ref(|| 0u64);
        Rc::new(move || {
            *generation.borrow_mut() += 1;
            let prev = frame.view.clone();
            let sim = sim.borrow();
            let mut compare = compare.borrow_mut();
            if let Some(c) = compare.as_mut() {
                c.follow(sim.now());
            }
            frame.set(Rc::new(frame_of(&sim, compare.as_ref(), *generation.borrow(), Some(&prev), &series)));
        })
    };
    let reduced = *use_memo((), |_| prefers_reduced_motion());
    {
        let (sim, publish, keyframes, dispatch) = (sim.clone(), publish.clone(), keyframes.clone(), state.dispatcher());
        let times = frame_times.clone();
        use_effect_with((state.playing, state.speed_ns, state.watches.clone()), move |(playing, speed, watches)| {
            let (playing, speed, watches) = (*playing, *speed, watches.clone());
            if reduced && !playing {
                // The last steps may not have been shown yet.
                publish();
            }
            let shown_at = Rc::new(std::cell::Cell::new(f64::MIN));
            let handle: Rc<RefCell<Option<AnimationFrame>>> = Rc::new(RefCell::new(None));
            let tick: Tick = Rc::new(RefCell::new(None));
            if playing {
                let (h, t) = (handle.clone(), tick.clone());
                *tick.borrow_mut() = Some(Box::new(move || {
                    if crate::panic_panel::panicked() {
                        return;
                    }
                    let started = now_ms();
                    let mut hit_any = false;
                    {
                        let mut sim = sim.borrow_mut();
                        crate::panic_panel::injected_panic_point();
                        let target = sim.now() + speed;
                        let (_, hit) = sim.run_until_watched(target, FRAME_EVENT_BUDGET, &watches);
                        keyframes.borrow_mut().offer(&sim);
                        if let Some((_, what)) = hit {
                            hit_any = true;
                            let at = sim.now();
                            dispatch.dispatch(Action::WatchHit(format!(
                                "watchpoint at t = {:.6} ms: {what}",
                                at as f64 / 1e6
                            )));
                        }
                    }
                    if !reduced || hit_any || started - shown_at.get() >= REDUCED_MOTION_MS {
                        shown_at.set(started);
                        publish();
                    }
                    times.borrow_mut().push(now_ms() - started);
                    let t = t.clone();
                    *h.borrow_mut() = Some(request_animation_frame(move |_| {
                        if let Some(f) = t.borrow().as_ref() {
                            f()
                        }
                    }));
                }));
                let t = tick.clone();
                *handle.borrow_mut() = Some(request_animation_frame(move |_| {
                    if let Some(f) = t.borrow().as_ref() {
                        f()
                    }
                }));
            }
            move || {
                // Breaks the tick <-> frame cycle and cancels the pending frame.
                tick.borrow_mut().take();
                handle.borrow_mut().take();
            }
        });
    }
    let reached = use_mut_ref(|| 0);
    let now = frame.view.now_ns;
    let reached = {
        let mut r = reached.borrow_mut();
        *r = (*r).max(now);
        *r
    };
    Lab {
        frame: (*frame).clone(),
        state: Rc::new((*state).clone()),
        error,
        dispatch: state.dispatcher(),
        sim,
        keyframes,
        reached,
        frame_times,
        publish,
        compare,
        link_moved,
    }
}
