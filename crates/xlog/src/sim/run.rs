//! Running a simulation and stopping it where asked: to a time, within an event budget, to
//! its end (then the liveness check), to the next moment worth seeing (`Milestone`), or until
//! a watched condition comes true (`Watch`); draining it at the end. Each runs the same events
//! as `run_until`, so nothing it skips past differs from playing there.

use super::tasks::TASK_LOG_WORKER;
use super::{Event, Sim};
use crate::trace::{GrantEvent, IclogEvent, TraceEvent, TraceKind};
use crate::units::{Ns, TaskId, NS_PER_SEC};
use serde::Serialize;

/// `xfs_syncd_centisecs` default: the log worker runs every 30 s.
pub(crate) const LOG_WORKER_PERIOD: Ns = 30 * NS_PER_SEC;
/// How long the liveness probe may follow a device that is still working: an hour.
const LIVENESS_PROBE_MAX: Ns = 3600 * NS_PER_SEC;

impl Sim {
    /// Turns per-step trace collection off (hashing continues) for fast batch runs.
    pub fn set_keep_trace(&mut self, keep: bool) {
        self.keep_trace = keep;
        self.out.clear();
    }

    /// Runs until virtual time `until` (events at later times stay queued).
    pub fn run_until(&mut self, until: Ns) {
        while !self.hung {
            let Some(next) = self.queue.pop_if(|t, _| t <= until) else { break };
            self.dispatch(next);
        }
        self.now = self.now.max(until.min(self.scenario.duration.0));
    }

    /// Runs events up to virtual time `until`, at most `budget` of them, and returns how many
    /// ran: the lab's frame loop, where a busy stretch slows the clock rather than the frame.
    /// The events are those `run_until` runs, in the same order, so the trace hash agrees.
    pub fn run_until_budget(&mut self, until: Ns, budget: u64) -> u64 {
        let mut ran = 0;
        while ran < budget {
            match self.queue.pop_if(|t, _| t <= until && !self.hung) {
                Some(next) => {
                    self.dispatch(next);
                    ran += 1;
                }
                None => {
                    self.now = self.now.max(until.min(self.scenario.duration.0));
                    break;
                }
            }
        }
        ran
    }

    /// Runs the whole scenario duration, then checks liveness.
    pub fn run(&mut self) {
        let keep = self.keep_trace;
        self.set_keep_trace(false);
        self.run_until(self.scenario.duration.0);
        self.keep_trace = keep;
        self.check_liveness();
    }

    /// Stops new transactions, lets in-flight work finish and forces the log out.
    pub fn drain(&mut self) {
        self.stopping = true;
        let keep = self.keep_trace;
        self.set_keep_trace(false);
        for _ in 0..4 {
            self.run_quiet();
            self.xfs_log_force_async(TASK_LOG_WORKER);
        }
        self.run_quiet();
        self.keep_trace = keep;
    }

    /// Runs every queued event except the periodic log worker.
    pub(super) fn run_quiet(&mut self) {
        loop {
            let alone = self.queue.len() == 1;
            let Some(next) = self.queue.pop_if(|_, ev| !(ev == Event::LogWorker && alone)) else { break };
            self.dispatch(next);
        }
    }

    fn any_writer_blocked(&self) -> bool {
        self.writers.iter().any(|w| w.state().is_blocked())
    }

    /// Requests the devices have taken so far, counting those still in flight.
    fn device_activity(&self) -> u64 {
        self.devs.iter().map(|d| d.stats().writes + d.stats().flushes + d.inflight().len() as u64).sum()
    }

    /// Liveness: if tasks are blocked at the end, run a copy on with no new work for two
    /// log-worker periods, and on while the devices are still busy (one flush behind a slow
    /// disk's full cache can take minutes); tasks still blocked once the devices have gone
    /// idle for a whole window have nothing left that could wake them.
    pub fn check_liveness(&mut self) {
        if self.hung || !self.any_writer_blocked() {
            return;
        }
        let mut probe = self.clone();
        probe.set_keep_trace(false);
        probe.stopping = true;
        let cap = probe.now + LIVENESS_PROBE_MAX;
        let mut until = probe.now + 2 * LOG_WORKER_PERIOD + 1;
        loop {
            let before = probe.device_activity();
            // Stop as soon as every task is awake: the rest of the probe cannot change the verdict.
            while probe.any_writer_blocked() {
                match probe.queue.pop_if(|t, _| t <= until) {
                    Some(next) => probe.dispatch(next),
                    None => break,
                };
            }
            let busy = probe.device_activity() != before || probe.devs.iter().any(|d| !d.inflight().is_empty());
            if !probe.any_writer_blocked() || !busy || until >= cap {
                break;
            }
            until += LOG_WORKER_PERIOD;
        }
        if probe.any_writer_blocked() {
            self.hung = true;
        }
    }
}

/// A kind of moment the lab can step to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Milestone {
    /// A cache flush goes out: an explicit flush or a write with PREFLUSH.
    Flush,
    /// A checkpoint completes (`xlog_cil_committed`).
    Checkpoint,
    /// An iclog changes state (switched out, synced, done, called back, cleaned, activated).
    IclogState,
    /// A committer goes to sleep on `xc_push_wait`.
    ThrottleWait,
}

impl Milestone {
    pub const ALL: [Milestone; 4] =
        [Milestone::Flush, Milestone::Checkpoint, Milestone::IclogState, Milestone::ThrottleWait];

    pub fn label(self) -> &'static str {
        match self {
            Milestone::Flush => "next flush",
            Milestone::Checkpoint => "next checkpoint",
            Milestone::IclogState => "next iclog state change",
            Milestone::ThrottleWait => "next throttle wait",
        }
    }

    /// Whether `e` is such a moment.
    pub fn matches(self, e: &TraceEvent) -> bool {
        match (self, &e.kind) {
            (Milestone::Flush, TraceKind::DevSubmit { flush, preflush, .. }) => *flush || *preflush,
            (Milestone::Checkpoint, TraceKind::CheckpointDone { .. }) => true,
            (Milestone::IclogState, TraceKind::Iclog { event, .. }) => matches!(
                event,
                IclogEvent::Switch
                    | IclogEvent::Sync
                    | IclogEvent::SyncDone
                    | IclogEvent::Callback
                    | IclogEvent::Clean
                    | IclogEvent::Activate
            ),
            (Milestone::ThrottleWait, TraceKind::Grant { event: GrantEvent::CilWait, .. }) => true,
            _ => false,
        }
    }
}

impl Sim {
    /// Runs events until one of them is a `m` moment (true), or until virtual time `limit`
    /// or `budget` events pass without one (false). The trace must be kept (`set_keep_trace`).
    pub fn run_to_next(&mut self, m: Milestone, limit: Ns, budget: u64) -> bool {
        let mut ran = 0;
        while ran < budget {
            let hung = self.hung;
            let Some(next) = self.queue.pop_if(|t, _| t <= limit && !hung) else { return false };
            ran += 1;
            if self.dispatch(next).iter().any(|e| m.matches(e)) {
                return true;
            }
        }
        false
    }
}

/// A condition the lab can watch for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Watch {
    /// The reserve grant head has fewer than this many bytes free.
    FreeLogBelow(u64),
    /// A cache flush (explicit or PREFLUSH) has been issued on any device.
    FirstFlush,
    /// More than this many tasks sleep on `xc_push_wait`.
    ThrottleDepthAbove(u32),
    /// A writer has been in its current transaction for longer than this.
    TaskWaitingLonger(Ns),
}

impl Watch {
    /// What the condition found, if it holds now.
    pub fn check(&self, sim: &Sim) -> Option<String> {
        match *self {
            Watch::FreeLogBelow(b) => {
                let free = sim.log.reserve_space_left() as u64;
                (free < b).then(|| format!("free log space {} KiB < {} KiB", free / 1024, b / 1024))
            }
            Watch::FirstFlush => {
                let n: u64 = sim.devs.iter().map(|d| d.stats().flushes).sum();
                (n > 0).then(|| "the first cache flush was issued".to_string())
            }
            Watch::ThrottleDepthAbove(k) => {
                let d = sim.cil.push_waiters().len() as u32;
                (d > k).then(|| format!("throttle queue depth {d} > {k}"))
            }
            Watch::TaskWaitingLonger(t) => sim.longest_wait().filter(|&(_, w)| w > t).map(|(task, w)| {
                format!(
                    "writer {task} has been in its transaction for {:.3} ms > {:.3} ms",
                    w as f64 / 1e6,
                    t as f64 / 1e6
                )
            }),
        }
    }
}

impl Sim {
    /// The blocked writer that has waited longest in its current transaction, and for how long.
    fn longest_wait(&self) -> Option<(TaskId, Ns)> {
        self.writers
            .iter()
            .enumerate()
            .filter(|(_, w)| w.state().is_blocked())
            .map(|(i, w)| (i as TaskId, self.now - w.tx_start()))
            .max_by_key(|&(i, w)| (w, std::cmp::Reverse(i)))
    }

    /// As `run_until_budget`, but stops on the first event after which a watch holds; returns
    /// the events run and, if one fired, which and what it found.
    pub fn run_until_watched(&mut self, until: Ns, budget: u64, watches: &[Watch]) -> (u64, Option<(Watch, String)>) {
        if watches.is_empty() {
            return (self.run_until_budget(until, budget), None);
        }
        // Conditions already true stop nothing: a watch fires when it becomes true.
        let armed: Vec<Watch> = watches.iter().copied().filter(|w| w.check(self).is_none()).collect();
        let mut ran = 0;
        while ran < budget {
            let ran_one = self.run_until_budget(until, 1);
            if ran_one == 0 {
                return (ran, None);
            }
            ran += 1;
            if let Some(hit) = armed.iter().find_map(|w| w.check(self).map(|s| (*w, s))) {
                return (ran, Some(hit));
            }
        }
        (ran, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::find;
    use crate::units::NS_PER_MS;

    #[test]
    fn each_milestone_is_found_and_playing_there_is_the_same_run() {
        let s = find("cil-throttle-32mb").unwrap();
        for m in Milestone::ALL {
            let mut sim = Sim::new(&s).unwrap();
            assert!(sim.run_to_next(m, NS_PER_SEC, 10_000_000), "{m:?} found within a second");
            let (at, events, hash) = (sim.now(), sim.events(), sim.trace_hash());
            // The step stopped on the event that is the moment: nothing after it ran.
            let mut straight = Sim::new(&s).unwrap();
            while straight.events() < events {
                straight.step();
            }
            assert_eq!((straight.now(), straight.trace_hash()), (at, hash), "{m:?}");
        }
    }

    #[test]
    fn a_moment_that_never_comes_stops_at_the_limit() {
        let s = find("fsync-heavy").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        assert!(!sim.run_to_next(Milestone::ThrottleWait, 2_000_000, 1_000_000));
        assert!(sim.now() <= 2_000_000);
    }

    #[test]
    fn a_watch_stops_on_the_event_that_makes_it_true() {
        let s = find("cil-throttle-32mb").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        let (ran, hit) = sim.run_until_watched(500 * NS_PER_MS, 10_000_000, &[Watch::ThrottleDepthAbove(2)]);
        let (w, what) = hit.expect("the throttle queue grows past 2");
        assert_eq!(w, Watch::ThrottleDepthAbove(2));
        assert!(what.contains("depth 3 > 2"), "{what}");
        assert_eq!(sim.cil.push_waiters().len(), 3, "stopped on the third sleeper, not later");
        // A straight run to the same event count is the same state.
        let mut straight = Sim::new(&s).unwrap();
        while straight.events() < ran {
            straight.step();
        }
        assert_eq!(straight.trace_hash(), sim.trace_hash());
    }

    #[test]
    fn other_watches_fire_and_unmet_ones_run_to_the_end() {
        let s = find("small-crash").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        let (_, hit) = sim.run_until_watched(NS_PER_MS, 1_000_000, &[Watch::FirstFlush]);
        assert!(hit.is_some_and(|(w, _)| w == Watch::FirstFlush));
        let mut sim = Sim::new(&s).unwrap();
        let (_, hit) = sim.run_until_watched(10 * NS_PER_MS, 1_000_000, &[Watch::TaskWaitingLonger(100_000)]);
        assert!(hit.is_some_and(|(_, s)| s.contains("> 0.100 ms")));
        let mut sim = Sim::new(&s).unwrap();
        let (_, hit) = sim.run_until_watched(5 * NS_PER_MS, 1_000_000, &[Watch::FreeLogBelow(1024)]);
        assert!(hit.is_none());
        assert_eq!(sim.now(), 5 * NS_PER_MS);
    }
}
