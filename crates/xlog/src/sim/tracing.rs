//! The trace: events as the tracepoints emit them, and the run's trace hash.

use crate::trace::{TraceEvent, TraceHasher, TraceKind};
use crate::units::Ns;
use std::hash::Hash;

/// The trace: every event hashed as it happens (the run's trace hash), and the current
/// step's events kept for the caller unless turned off.
#[derive(Clone, Debug)]
pub(crate) struct Tracer {
    hash: TraceHasher,
    out: Vec<TraceEvent>,
    keep: bool,
}

impl Default for Tracer {
    fn default() -> Self {
        Tracer { hash: TraceHasher::default(), out: Vec::new(), keep: true }
    }
}

impl Tracer {
    pub fn emit(&mut self, now: Ns, task: u32, kind: TraceKind) {
        // `TraceEvent`'s derived hash, field by field: no event is built unless kept.
        now.hash(&mut self.hash);
        task.hash(&mut self.hash);
        kind.hash(&mut self.hash);
        if self.keep {
            self.out.push(TraceEvent { t_ns: now, task, kind });
        }
    }
    /// A new step begins.
    pub fn clear(&mut self) {
        self.out.clear();
    }
    /// The current step's events.
    pub fn events(&self) -> &[TraceEvent] {
        &self.out
    }
    pub fn keeps(&self) -> bool {
        self.keep
    }
    /// Keeps each step's events (`true`) or only hashes them.
    pub fn set_keep(&mut self, keep: bool) {
        self.keep = keep;
        self.out.clear();
    }
    pub fn hash(&self) -> u64 {
        self.hash.0
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::Sim;
    use crate::trace::TraceHasher;
    use std::hash::{Hash, Hasher};

    /// `emit` hashes an event's fields without building it: the running hash must stay the
    /// derived hash of the events in order, as a trace's reader would compute it.
    #[test]
    fn the_trace_hash_is_the_derived_hash_of_the_events_in_order() {
        let mut sim = Sim::new(&crate::presets::find("small-crash").unwrap()).unwrap();
        let mut h = TraceHasher::default();
        sim.trace.events().iter().for_each(|e| e.hash(&mut h));
        for _ in 0..20_000 {
            let Some(evs) = sim.step() else { break };
            evs.iter().for_each(|e| e.hash(&mut h));
        }
        assert!(sim.events() >= 20_000);
        assert_eq!(h.finish(), sim.trace_hash());
    }
}
