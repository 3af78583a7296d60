//! The log itself (`struct xlog`): the iclog ring, head and tail, grant heads and their waiters.

use crate::grant::{xlog_space_left, GrantHead, OP_HDR};
use crate::iclog::{Iclog, IclogState};
use crate::scenario::Geometry;
use crate::units::{btobb, next_cycle, Lsn};
use serde::Serialize;
use std::collections::VecDeque;

pub type TaskId = u32;

/// A task sleeping on a grant head (`xlog_grant_head_wait`), in FIFO order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GrantWaiter {
    pub task: TaskId,
    pub need: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Xlog {
    pub geo: Geometry,
    pub iclogs: Vec<Iclog>,
    /// `l_iclog`: the ring head, the only iclog writers use.
    pub head: usize,
    pub curr_cycle: u32,
    pub curr_block: u32,
    pub prev_block: u32,
    pub prev_cycle: u32,
    pub reserve_head: GrantHead,
    pub write_head: GrantHead,
    pub reserve_waiters: VecDeque<GrantWaiter>,
    pub write_waiters: VecDeque<GrantWaiter>,
    /// `l_tail_lsn`, `l_last_sync_lsn`
    pub tail_lsn: Lsn,
    pub last_sync_lsn: Lsn,
    /// Tasks sleeping on `l_flush_wait` for an ACTIVE ring head.
    pub flush_wait: Vec<TaskId>,
}

/// Space handed out by `xlog_state_get_iclog_space`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IclogSpace {
    pub iclog: usize,
    pub start: u32,
    pub avail: u32,
    /// The writer is the first into this iclog (it pays the record header).
    pub first: bool,
}

impl Xlog {
    pub fn new(geo: Geometry) -> Xlog {
        let iclogs = (0..geo.iclog_count).map(|i| Iclog::new(i, &geo)).collect();
        Xlog {
            geo,
            iclogs,
            head: 0,
            curr_cycle: 1,
            curr_block: 0,
            prev_block: 0,
            prev_cycle: 0,
            reserve_head: GrantHead::START,
            write_head: GrantHead::START,
            reserve_waiters: VecDeque::new(),
            write_waiters: VecDeque::new(),
            tail_lsn: Lsn::new(1, 0),
            last_sync_lsn: Lsn::new(1, 0),
            flush_wait: Vec::new(),
        }
    }

    pub fn next(&self, i: usize) -> usize {
        (i + 1) % self.iclogs.len()
    }
    pub fn prev(&self, i: usize) -> usize {
        (i + self.iclogs.len() - 1) % self.iclogs.len()
    }

    pub fn set_state(&mut self, i: usize, next: IclogState) {
        let ic = &mut self.iclogs[i];
        assert!(ic.state.may_become(next), "illegal iclog transition {:?} -> {:?}", ic.state, next);
        ic.state = next;
    }

    /// `xlog_state_get_iclog_space`: `None` when the head is not ACTIVE (caller sleeps on
    /// `l_flush_wait` and counts `noiclogs`). Takes a reference on the iclog. Iclogs that
    /// were switched out with no other holder are pushed to `to_sync`.
    pub fn get_iclog_space(&mut self, len: u32, to_sync: &mut Vec<usize>) -> Option<IclogSpace> {
        loop {
            let i = self.head;
            if self.iclogs[i].state != IclogState::Active {
                return None;
            }
            let first = self.iclogs[i].offset == 0;
            if first {
                let lsn = Lsn::new(self.curr_cycle, self.curr_block);
                let ic = &mut self.iclogs[i];
                ic.cycle = self.curr_cycle;
                ic.lsn = lsn;
            }
            self.iclogs[i].refcnt += 1; // prevents sync
            let cap = self.geo.ic_capacity;
            let avail = cap - self.iclogs[i].offset;
            if avail < 2 * OP_HDR {
                // Room for fewer than two op headers: switch it out and start again.
                self.switch_iclogs(i, cap);
                if self.release_iclog(i) {
                    to_sync.push(i);
                }
                continue;
            }
            let start = self.iclogs[i].offset;
            if len <= avail {
                self.iclogs[i].offset += len;
            } else {
                self.iclogs[i].offset = cap;
                self.switch_iclogs(i, cap);
            }
            return Some(IclogSpace { iclog: i, start, avail: len.min(avail), first });
        }
    }

    /// `xlog_state_switch_iclogs`: ACTIVE -> WANT_SYNC, head advances by the eventual size.
    ///
    /// ```text
    ///  l_curr_block += BTOBB(eventual) + BTOBB(hsize), rounded to the stripe unit;
    ///  past l_logBBsize it wraps to the start and the cycle advances:
    ///  |rec|rec|rec|..........|rec|re|   ->   |c|rec|...   (cycle + 1)
    /// ```
    pub fn switch_iclogs(&mut self, i: usize, eventual: u32) {
        debug_assert_eq!(i, self.head);
        self.set_state(i, IclogState::WantSync);
        let eventual = if eventual == 0 { self.iclogs[i].offset } else { eventual };
        self.iclogs[i].prev_block = self.prev_block;
        self.prev_block = self.curr_block;
        self.prev_cycle = self.curr_cycle;
        self.curr_block += (btobb(eventual as u64) + btobb(self.geo.iclog_hsize as u64)) as u32;
        let ro_bb = self.geo.roundoff / 512;
        if ro_bb > 1 {
            self.curr_block = self.curr_block.div_ceil(ro_bb) * ro_bb;
        }
        if self.curr_block >= self.geo.log_bb {
            self.curr_block -= self.geo.log_bb;
            self.curr_cycle = next_cycle(self.curr_cycle);
        }
        self.head = self.next(i);
    }

    /// `xlog_state_release_iclog`: drops a reference; true when this starts I/O (the last
    /// reference of a WANT_SYNC iclog), after moving it to SYNCING.
    pub fn release_iclog(&mut self, i: usize) -> bool {
        let ic = &mut self.iclogs[i];
        assert!(ic.refcnt > 0, "releasing iclog {i} with no reference");
        ic.refcnt -= 1;
        if ic.refcnt == 0 && ic.state == IclogState::WantSync {
            self.set_state(i, IclogState::Syncing);
            return true;
        }
        false
    }

    /// `xlog_get_lowest_lsn`: lowest `h_lsn` among iclogs with I/O or callbacks pending.
    fn lowest_lsn(&self) -> Option<Lsn> {
        self.iclogs
            .iter()
            .filter(|ic| !matches!(ic.state, IclogState::Active | IclogState::Dirty))
            .map(|ic| ic.lsn)
            .min()
    }

    /// `xlog_state_do_callback`'s walk: the next DONE_SYNC iclog whose callbacks may run
    /// now, in ring order from the head. It moves to CALLBACK and advances `l_last_sync_lsn`.
    pub fn next_callback_iclog(&mut self) -> Option<usize> {
        let n = self.iclogs.len();
        for k in 0..n {
            let i = (self.head + k) % n;
            match self.iclogs[i].state {
                IclogState::Active | IclogState::Dirty | IclogState::Callback => continue,
                IclogState::WantSync | IclogState::Syncing => return None,
                IclogState::DoneSync => {
                    if Some(self.iclogs[i].lsn) > self.lowest_lsn() {
                        return None;
                    }
                    self.set_state(i, IclogState::Callback);
                    if !self.iclogs[i].callbacks.is_empty() {
                        self.last_sync_lsn = self.iclogs[i].lsn;
                    }
                    return Some(i);
                }
            }
        }
        None
    }

    /// `xlog_state_clean_iclog` + `xlog_state_activate_iclogs`: CALLBACK -> DIRTY, then
    /// DIRTY iclogs from the head become ACTIVE up to the first busy one.
    pub fn clean_iclog(&mut self, i: usize) -> Vec<usize> {
        self.set_state(i, IclogState::Dirty);
        let n = self.iclogs.len();
        let mut activated = Vec::new();
        for k in 0..n {
            let j = (self.head + k) % n;
            match self.iclogs[j].state {
                IclogState::Dirty => {
                    self.set_state(j, IclogState::Active);
                    self.iclogs[j].activate();
                    activated.push(j);
                }
                IclogState::Active => continue,
                _ => break,
            }
        }
        activated
    }

    pub fn reserve_space_left(&self) -> u32 {
        xlog_space_left(self.geo.log_bytes, self.reserve_head, self.tail_lsn)
    }
    pub fn write_space_left(&self) -> u32 {
        xlog_space_left(self.geo.log_bytes, self.write_head, self.tail_lsn)
    }

    /// `xlog_valid_lsn`: an LSN at or behind the current head.
    pub fn valid_lsn(&self, lsn: Lsn) -> bool {
        lsn <= Lsn::new(self.curr_cycle, self.curr_block)
    }
}
