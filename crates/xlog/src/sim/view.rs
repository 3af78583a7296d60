//! Read-only views of the simulation for the UI and the CLI, built on demand.

use super::{PushState, Sim, WriterState};
use crate::cil::xlog_cil_blocking_space_limit;
use crate::iclog::IclogState;
use crate::units::{Lsn, Ns};
use serde::Serialize;

/// Read-only state for views (UI, CLI), cheap to build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IclogView {
    pub index: u32,
    pub state: IclogState,
    pub refcnt: u32,
    pub offset: u32,
    pub capacity: u32,
    pub lsn: Lsn,
    pub flags: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct View {
    pub now_ns: Ns,
    pub iclogs: Vec<IclogView>,
    pub head_iclog: u32,
    pub curr_lsn: Lsn,
    pub tail_lsn: Lsn,
    pub last_sync_lsn: Lsn,
    pub log_bb: u32,
    pub reserve_free_bytes: u32,
    pub reserve_waiters: u32,
    pub write_waiters: u32,
    pub ail_items: u32,
    pub cil_sequence: u64,
    pub cil_space_used: i64,
    pub cil_blocking_limit: u32,
    pub cil_throttle_depth: u32,
    pub checkpoints_committing: u32,
    pub writer_states: Vec<WriterState>,
    pub pusher_states: Vec<PushState>,
    pub transactions: u64,
    pub events: u64,
    pub finished: bool,
    pub hung: bool,
}

impl Sim {
    pub fn view(&self) -> View {
        View {
            now_ns: self.now,
            iclogs: self
                .log
                .iclogs()
                .iter()
                .map(|ic| IclogView {
                    index: ic.index,
                    state: ic.state,
                    refcnt: ic.refcnt,
                    offset: ic.offset,
                    capacity: self.geo.ic_capacity,
                    lsn: ic.lsn,
                    flags: ic.flags,
                })
                .collect(),
            head_iclog: self.log.l_iclog as u32,
            curr_lsn: Lsn::new(self.log.curr_cycle, self.log.curr_block),
            tail_lsn: self.log.tail_lsn,
            last_sync_lsn: self.log.last_sync_lsn,
            log_bb: self.geo.log_bb,
            reserve_free_bytes: self.log.reserve_space_left(),
            reserve_waiters: self.log.reserve_waiters.len() as u32,
            write_waiters: self.log.write_waiters.len() as u32,
            ail_items: self.ail.len() as u32,
            cil_sequence: self.cil.ctx.sequence,
            cil_space_used: self.cil.ctx.space_used,
            cil_blocking_limit: xlog_cil_blocking_space_limit(&self.geo),
            cil_throttle_depth: self.cil.push_wait.len() as u32,
            checkpoints_committing: self.cil.committing.len() as u32,
            writer_states: self.writers.iter().map(|w| w.state).collect(),
            pusher_states: self.pushers.iter().map(|p| p.state).collect(),
            transactions: self.counters.transactions,
            events: self.counters.events,
            finished: self.finished(),
            hung: self.hung,
        }
    }
}
