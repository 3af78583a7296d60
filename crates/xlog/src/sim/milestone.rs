//! Stepping to the next moment worth seeing: a cache flush, a checkpoint, an iclog state
//! change, a CIL throttle wait. Runs the same events as `run_until`, so nothing it skips past
//! differs from playing there.

use super::Sim;
use crate::trace::{GrantEvent, IclogEvent, TraceEvent, TraceKind};
use crate::units::Ns;
use serde::Serialize;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::find;
    use crate::units::NS_PER_SEC;

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
}
