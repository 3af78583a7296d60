//! The liveness checker: tasks still asleep once nothing is left that could wake them.

use super::Sim;
use crate::units::{Ns, NS_PER_SEC};

/// `xfs_syncd_centisecs` default: the log worker runs every 30 s.
pub(crate) const LOG_WORKER_PERIOD: Ns = 30 * NS_PER_SEC;
/// How long the liveness probe may follow a device that is still working: an hour.
const LIVENESS_PROBE_MAX: Ns = 3600 * NS_PER_SEC;

impl Sim {
    fn any_writer_blocked(&self) -> bool {
        self.writers.iter().any(|w| w.state.is_blocked())
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
