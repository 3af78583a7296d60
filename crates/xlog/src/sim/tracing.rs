//! Trace events: the tracepoints' views of the grant heads and iclogs, and the trace hash.

use super::Sim;
use crate::grant::Ticket;
use crate::trace::{GrantEvent, GrantView, IclogEvent, TicketView, TraceEvent, TraceKind};
use std::hash::Hash;

impl Sim {
    pub(crate) fn emit(&mut self, task: u32, kind: TraceKind) {
        // `TraceEvent`'s derived hash, field by field: no event is built unless kept.
        self.now.hash(&mut self.hash);
        task.hash(&mut self.hash);
        kind.hash(&mut self.hash);
        if self.keep_trace {
            self.out.push(TraceEvent { t_ns: self.now, task, kind });
        }
    }

    fn grant_view(&self) -> GrantView {
        GrantView {
            reserveq_active: !self.log.reserve_waiters().is_empty(),
            writeq_active: !self.log.write_waiters().is_empty(),
            reserve: self.log.reserve_head(),
            write: self.log.write_head(),
            curr_cycle: self.log.curr_cycle(),
            curr_block: self.log.curr_block(),
            tail: self.log.tail_lsn(),
        }
    }

    pub(crate) fn trace_grant(&mut self, task: u32, event: GrantEvent, t: &Ticket) {
        let ticket =
            TicketView { ocnt: t.ocnt, cnt: t.cnt, curr_res: t.curr_res, unit_res: t.unit_res, flags: t.flags };
        let log = self.grant_view();
        self.emit(task, TraceKind::Grant { event, ticket, log });
    }

    pub(crate) fn trace_iclog(&mut self, task: u32, event: IclogEvent, i: usize) {
        let ic = self.log.iclog(i);
        let kind = TraceKind::Iclog {
            event,
            iclog: i as u32,
            state: ic.state,
            refcnt: ic.refcnt,
            offset: ic.offset,
            lsn: ic.lsn,
            flags: ic.flags,
        };
        self.emit(task, kind);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceHasher;
    use std::hash::Hasher;

    /// `emit` hashes an event's fields without building it: the running hash must stay the
    /// derived hash of the events in order, as a trace's reader would compute it.
    #[test]
    fn the_trace_hash_is_the_derived_hash_of_the_events_in_order() {
        let mut sim = Sim::new(&crate::presets::find("small-crash").unwrap()).unwrap();
        let mut h = TraceHasher::default();
        sim.out.iter().for_each(|e| e.hash(&mut h));
        for _ in 0..20_000 {
            let Some(evs) = sim.step() else { break };
            evs.iter().for_each(|e| e.hash(&mut h));
        }
        assert!(sim.events() >= 20_000);
        assert_eq!(h.finish(), sim.trace_hash());
    }
}
