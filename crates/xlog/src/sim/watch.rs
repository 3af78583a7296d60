//! Watchpoints: conditions on the journal's state that stop a run on the event that makes
//! them true (free log space low, the first cache flush, a deep throttle queue, a transaction
//! waiting too long).

use super::Sim;
use crate::units::{Ns, TaskId};
use serde::Serialize;

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
            .filter(|(_, w)| w.state.is_blocked())
            .map(|(i, w)| (i as TaskId, self.now - w.tx_start))
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
