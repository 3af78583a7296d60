//! The log itself (`struct xlog`): the iclog ring, head and tail, grant heads and their waiters.

use crate::format::{OpHeader, OP_HDR};
use crate::geometry::Geometry;
use crate::grant::{xlog_space_left, GrantHead};
use crate::iclog::{IclogHeader, IclogState};
use crate::units::{btobb, next_cycle, Lsn, TaskId, BBSIZE};
use serde::Serialize;
use std::collections::VecDeque;

/// A task sleeping on a grant head (`xlog_grant_head_wait`), in FIFO order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GrantWaiter {
    pub task: TaskId,
    pub need: u32,
}

/// One in-core log buffer (`struct xlog_in_core`): its state is private to the log, which
/// changes it through `Xlog`'s kernel-named methods; everyone else reads it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Iclog {
    index: u32,
    state: IclogState,
    refcnt: u32,
    /// `ic_offset`: bytes of data used.
    offset: u32,
    flags: u32,
    /// `h_lsn`, `h_cycle`, `h_prev_block`, `h_num_logops`, `h_tail_lsn`
    lsn: Lsn,
    cycle: u32,
    prev_block: u32,
    num_logops: u32,
    tail_lsn: Lsn,
    /// Checkpoints whose commit record this iclog holds, in commit order (`ic_callbacks`).
    callbacks: Vec<u32>,
    /// Device writes still outstanding for this iclog (two when split at the log end).
    io_pending: u32,
    /// `ic_force_wait`: tasks waiting for its callbacks to run (the log force's wait).
    force_wait: Vec<TaskId>,
    /// `ic_write_wait`: tasks waiting for its write to complete.
    write_wait: Vec<TaskId>,
    #[serde(skip)]
    data: Vec<u8>,
}

impl Iclog {
    pub fn index(&self) -> u32 {
        self.index
    }
    pub fn state(&self) -> IclogState {
        self.state
    }
    pub fn refcnt(&self) -> u32 {
        self.refcnt
    }
    /// `ic_offset`: bytes of data used.
    pub fn offset(&self) -> u32 {
        self.offset
    }
    pub fn flags(&self) -> u32 {
        self.flags
    }
    pub fn lsn(&self) -> Lsn {
        self.lsn
    }
    pub fn tail_lsn(&self) -> Lsn {
        self.tail_lsn
    }
    /// Checkpoints whose commit record it holds, in commit order (`ic_callbacks`).
    pub fn callbacks(&self) -> &[u32] {
        &self.callbacks
    }
    /// Device writes still outstanding for it.
    pub fn io_pending(&self) -> u32 {
        self.io_pending
    }
    /// `ic_force_wait` and `ic_write_wait`.
    pub fn force_wait(&self) -> &[TaskId] {
        &self.force_wait
    }
    pub fn write_wait(&self) -> &[TaskId] {
        &self.write_wait
    }
    /// Its data buffer's size (the iclog's capacity).
    pub fn buffer_bytes(&self) -> usize {
        self.data.len()
    }
    /// What `xlog_sync` packs: the header's fields and the data written.
    pub fn header(&self) -> IclogHeader<'_> {
        IclogHeader {
            cycle: self.cycle,
            lsn: self.lsn,
            tail_lsn: self.tail_lsn,
            prev_block: self.prev_block,
            num_logops: self.num_logops,
            data: &self.data[..self.offset as usize],
        }
    }

    pub fn new(index: u32, geo: &Geometry) -> Iclog {
        Iclog {
            index,
            state: IclogState::Active,
            refcnt: 0,
            offset: 0,
            flags: 0,
            lsn: Lsn::ZERO,
            cycle: 0,
            prev_block: 0,
            num_logops: 0,
            tail_lsn: Lsn::ZERO,
            callbacks: Vec::new(),
            io_pending: 0,
            force_wait: Vec::new(),
            write_wait: Vec::new(),
            data: vec![0; geo.ic_capacity as usize],
        }
    }

    /// `xlog_state_activate_iclog`: reset for reuse.
    pub fn activate(&mut self) {
        self.state = IclogState::Active;
        self.offset = 0;
        self.num_logops = 0;
        self.lsn = Lsn::ZERO;
        self.tail_lsn = Lsn::ZERO;
        self.flags = 0;
        // The data buffer is not cleared: xlog_sync copies only the `offset` bytes written.
    }
}

/// Changed only through its methods, named after the kernel functions that change it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Xlog {
    geo: Geometry,
    /// The ring: reference counts, flags, states and wait queues change only through the
    /// methods below, named after the kernel functions that change them.
    iclogs: Vec<Iclog>,
    /// `l_iclog`: the ring head, the only iclog writers may copy into (not the log head,
    /// which is `curr_cycle:curr_block`).
    l_iclog: usize,
    curr_cycle: u32,
    curr_block: u32,
    prev_block: u32,
    prev_cycle: u32,
    reserve_head: GrantHead,
    write_head: GrantHead,
    reserve_waiters: VecDeque<GrantWaiter>,
    write_waiters: VecDeque<GrantWaiter>,
    /// `l_tail_lsn`, `l_last_sync_lsn`
    tail_lsn: Lsn,
    last_sync_lsn: Lsn,
    /// Tasks sleeping on `l_flush_wait` for an ACTIVE ring head.
    flush_wait: Vec<TaskId>,
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
            l_iclog: 0,
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

    pub fn iclogs(&self) -> &[Iclog] {
        &self.iclogs
    }
    pub fn iclog(&self, i: usize) -> &Iclog {
        &self.iclogs[i]
    }
    /// The ring head iclog.
    pub fn head_iclog(&self) -> &Iclog {
        &self.iclogs[self.l_iclog]
    }
    /// `ic_next`
    pub fn next(&self, i: usize) -> usize {
        (i + 1) % self.iclogs.len()
    }
    /// `ic_prev`
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
    pub fn xlog_state_get_iclog_space(&mut self, len: u32, to_sync: &mut Vec<usize>) -> Option<IclogSpace> {
        loop {
            let i = self.l_iclog;
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
                self.xlog_state_switch_iclogs(i, cap);
                if self.xlog_state_release_iclog(i) {
                    to_sync.push(i);
                }
                continue;
            }
            let start = self.iclogs[i].offset;
            if len <= avail {
                self.iclogs[i].offset += len;
            } else {
                self.iclogs[i].offset = cap;
                self.xlog_state_switch_iclogs(i, cap);
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
    pub fn xlog_state_switch_iclogs(&mut self, i: usize, eventual: u32) {
        debug_assert_eq!(i, self.l_iclog);
        self.set_state(i, IclogState::WantSync);
        let eventual = if eventual == 0 { self.iclogs[i].offset } else { eventual };
        self.iclogs[i].prev_block = self.prev_block;
        self.prev_block = self.curr_block;
        self.prev_cycle = self.curr_cycle;
        self.curr_block += (btobb(eventual as u64) + btobb(self.geo.iclog_hsize as u64)) as u32;
        let ro_bb = self.geo.roundoff / BBSIZE;
        if ro_bb > 1 {
            self.curr_block = self.curr_block.div_ceil(ro_bb) * ro_bb;
        }
        if self.curr_block >= self.geo.log_bb {
            self.curr_block -= self.geo.log_bb;
            self.curr_cycle = next_cycle(self.curr_cycle);
        }
        self.l_iclog = self.next(i);
    }

    /// `xlog_state_release_iclog`: drops a reference; true when this starts I/O (the last
    /// reference of a WANT_SYNC iclog), after moving it to SYNCING.
    pub fn xlog_state_release_iclog(&mut self, i: usize) -> bool {
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
    fn xlog_get_lowest_lsn(&self) -> Option<Lsn> {
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
            let i = (self.l_iclog + k) % n;
            match self.iclogs[i].state {
                IclogState::Active | IclogState::Dirty | IclogState::Callback => continue,
                IclogState::WantSync | IclogState::Syncing => return None,
                IclogState::DoneSync => {
                    if Some(self.iclogs[i].lsn) > self.xlog_get_lowest_lsn() {
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
    pub fn xlog_state_clean_iclog(&mut self, i: usize) -> Vec<usize> {
        self.set_state(i, IclogState::Dirty);
        let n = self.iclogs.len();
        let mut activated = Vec::new();
        for k in 0..n {
            let j = (self.l_iclog + k) % n;
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

    /// `atomic_inc(&iclog->ic_refcnt)`: a holder keeps the iclog from being synced.
    pub fn iclog_hold(&mut self, i: usize) {
        self.iclogs[i].refcnt += 1;
    }

    /// `iclog->ic_flags |= flags` (`XLOG_ICL_NEED_FLUSH`, `XLOG_ICL_NEED_FUA`).
    pub fn iclog_set_flags(&mut self, i: usize, flags: u32) {
        self.iclogs[i].flags |= flags;
    }

    /// `h_tail_lsn`, stamped when the iclog is released (or at sync, if not yet).
    pub fn iclog_set_tail(&mut self, i: usize, tail: Lsn) {
        self.iclogs[i].tail_lsn = tail;
    }

    /// `xlog_write_iovec` with its op header: copies one region (or part of one) at `pos`.
    pub fn xlog_write_iovec(&mut self, i: usize, pos: usize, hdr: &OpHeader, payload: &[u8]) {
        let buf = &mut self.iclogs[i].data;
        let data = pos + OP_HDR as usize;
        hdr.write(&mut buf[pos..data]);
        buf[data..data + payload.len()].copy_from_slice(payload);
    }

    /// After one `xlog_write` round: `nops` op headers went in and the copy ended at `end`.
    /// Byte-exact: a switched-out iclog's offset becomes what was really copied.
    pub fn xlog_write_done(&mut self, i: usize, end: u32, nops: u32) {
        let cap = self.geo.ic_capacity;
        let ic = &mut self.iclogs[i];
        if ic.offset == cap && end < ic.offset {
            ic.offset = end;
        }
        ic.num_logops += nops;
    }

    /// `xlog_cil_set_ctx_write_state` for a commit record: an extra reference on the commit
    /// iclog and the checkpoint's callback attached, in commit order (`ic_callbacks`).
    pub fn xlog_cil_attach_callback(&mut self, i: usize, ckpt: u32) {
        let ic = &mut self.iclogs[i];
        ic.refcnt += 1;
        ic.callbacks.push(ckpt);
    }

    /// `xlog_wait_on_iclog`: sleep on `ic_force_wait` until the iclog's callbacks have run.
    pub fn xlog_wait_on_iclog(&mut self, i: usize, task: TaskId) {
        self.iclogs[i].force_wait.push(task);
    }

    /// `xlog_wait(&iclog->ic_write_wait)`: sleep until the iclog's write completes.
    pub fn xlog_wait_on_iclog_write(&mut self, i: usize, task: TaskId) {
        self.iclogs[i].write_wait.push(task);
    }

    /// Sleep on `l_flush_wait` for an ACTIVE ring head (`noiclogs`).
    pub fn xlog_wait_for_iclog(&mut self, task: TaskId) {
        self.flush_wait.push(task);
    }

    /// The ring head is ACTIVE again: the tasks on `l_flush_wait` to wake.
    pub fn xlog_flush_wait_wake(&mut self) -> Vec<TaskId> {
        if self.head_iclog().state == IclogState::Active {
            std::mem::take(&mut self.flush_wait)
        } else {
            Vec::new()
        }
    }

    /// The record was split in `parts` device writes; all must complete.
    pub fn iclog_io_start(&mut self, i: usize, parts: u32) {
        self.iclogs[i].io_pending = parts;
    }

    /// One of the iclog's device writes completed: true when it was the last.
    pub fn iclog_io_done(&mut self, i: usize) -> bool {
        let ic = &mut self.iclogs[i];
        ic.io_pending -= 1;
        ic.io_pending == 0
    }

    /// `xlog_state_done_syncing`: SYNCING -> DONE_SYNC; returns the `ic_write_wait` sleepers.
    pub fn xlog_state_done_syncing(&mut self, i: usize) -> Vec<TaskId> {
        self.set_state(i, IclogState::DoneSync);
        std::mem::take(&mut self.iclogs[i].write_wait)
    }

    /// `xlog_state_do_iclog_callbacks`: the checkpoints whose commit records the iclog holds.
    pub fn xlog_take_callbacks(&mut self, i: usize) -> Vec<u32> {
        std::mem::take(&mut self.iclogs[i].callbacks)
    }

    /// After callbacks: `wake_up_all(&iclog->ic_force_wait)`; returns the sleepers.
    pub fn xlog_force_wait_wake(&mut self, i: usize) -> Vec<TaskId> {
        std::mem::take(&mut self.iclogs[i].force_wait)
    }

    pub fn geo(&self) -> &Geometry {
        &self.geo
    }
    /// `l_iclog`: the ring head.
    pub fn l_iclog(&self) -> usize {
        self.l_iclog
    }
    pub fn curr_cycle(&self) -> u32 {
        self.curr_cycle
    }
    pub fn curr_block(&self) -> u32 {
        self.curr_block
    }
    /// The log head, `curr_cycle:curr_block`.
    pub fn curr_lsn(&self) -> Lsn {
        Lsn::new(self.curr_cycle, self.curr_block)
    }
    pub fn reserve_head(&self) -> GrantHead {
        self.reserve_head
    }
    pub fn write_head(&self) -> GrantHead {
        self.write_head
    }
    /// Tasks sleeping on the reserve grant head, in FIFO order.
    pub fn reserve_waiters(&self) -> &VecDeque<GrantWaiter> {
        &self.reserve_waiters
    }
    pub fn write_waiters(&self) -> &VecDeque<GrantWaiter> {
        &self.write_waiters
    }
    /// `l_tail_lsn`
    pub fn tail_lsn(&self) -> Lsn {
        self.tail_lsn
    }
    /// `l_last_sync_lsn`: the LSN of the last iclog whose callbacks ran.
    pub fn last_sync_lsn(&self) -> Lsn {
        self.last_sync_lsn
    }
    /// Tasks sleeping on `l_flush_wait`.
    pub fn flush_waiters(&self) -> &[TaskId] {
        &self.flush_wait
    }

    /// `xlog_assign_tail_lsn`'s store: the tail moves to `tail`.
    pub fn set_tail_lsn(&mut self, tail: Lsn) {
        self.tail_lsn = tail;
    }

    /// `xlog_grant_add_space` on both grant heads.
    pub fn xlog_grant_add_space(&mut self, bytes: u32) {
        let lb = self.geo.log_bytes;
        self.reserve_head.add(lb, bytes);
        self.write_head.add(lb, bytes);
    }

    /// `xlog_grant_sub_space` on both grant heads (`xfs_log_ticket_ungrant`).
    pub fn xlog_grant_sub_space(&mut self, bytes: u32) {
        let lb = self.geo.log_bytes;
        self.reserve_head.sub(lb, bytes);
        self.write_head.sub(lb, bytes);
    }

    /// `xlog_grant_head_wait` on the reserve head: `waiter` sleeps at the back.
    pub fn xlog_grant_head_wait(&mut self, waiter: GrantWaiter) {
        self.reserve_waiters.push_back(waiter);
    }

    /// `xlog_grant_head_wake`'s wakeup of the first reserve waiter, taken.
    pub fn xlog_grant_head_wake_first(&mut self) -> Option<GrantWaiter> {
        self.reserve_waiters.pop_front()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Scenario, Size};

    /// A 2 MiB log (4096 blocks) of 32 KiB iclogs, or with a log stripe unit.
    fn log(lsu: u64) -> Xlog {
        let s = Scenario { log_size: Size(2 << 20), lsu: Size(lsu), tx_logres: 20_000, ..Scenario::default() };
        Xlog::new(s.validate().unwrap())
    }

    #[test]
    fn switch_advances_the_head_by_header_and_data_blocks() {
        let mut l = log(0);
        let mut to_sync = Vec::new();
        let sp = l.xlog_state_get_iclog_space(1000, &mut to_sync).unwrap();
        assert_eq!((sp.iclog, sp.start, sp.avail, sp.first), (0, 0, 1000, true));
        assert_eq!(l.iclog(0).lsn, Lsn::new(1, 0));
        l.xlog_state_switch_iclogs(0, 0);
        // 1000 bytes -> 2 blocks, plus one header block.
        assert_eq!((l.curr_cycle, l.curr_block), (1, 3));
        assert_eq!(l.l_iclog, 1);
        assert_eq!(l.iclog(0).state, IclogState::WantSync);
        assert!(l.xlog_state_release_iclog(0), "last reference of a WANT_SYNC iclog starts I/O");
        assert_eq!(l.iclog(0).state, IclogState::Syncing);
    }

    #[test]
    fn stripe_unit_rounds_the_head_up() {
        let mut l = log(32 << 10);
        let mut to_sync = Vec::new();
        l.xlog_state_get_iclog_space(100, &mut to_sync).unwrap();
        l.xlog_state_switch_iclogs(0, 0);
        assert_eq!(l.curr_block, 64, "one 32 KiB stripe unit");
    }

    #[test]
    fn head_wraps_to_block_zero_with_the_next_cycle() {
        let mut l = log(0);
        l.curr_block = 4096 - 2;
        let mut to_sync = Vec::new();
        l.xlog_state_get_iclog_space(1000, &mut to_sync).unwrap();
        l.xlog_state_switch_iclogs(0, 0);
        assert_eq!((l.curr_cycle, l.curr_block), (2, 1));
        assert_eq!(l.iclog(0).lsn, Lsn::new(1, 4094));
    }

    #[test]
    fn ring_neighbours_wrap() {
        let l = log(0);
        assert_eq!(l.next(7), 0);
        assert_eq!(l.prev(0), 7);
        assert_eq!(l.prev(l.next(3)), 3);
    }

    #[test]
    fn a_nearly_full_head_is_switched_out_and_the_next_one_used() {
        let mut l = log(0);
        let cap = l.geo.ic_capacity;
        let mut to_sync = Vec::new();
        l.xlog_state_get_iclog_space(cap - 20, &mut to_sync).unwrap();
        assert!(!l.xlog_state_release_iclog(0), "ACTIVE iclogs are not synced on release");
        // 20 bytes left: fewer than two op headers, so iclog 0 goes out and iclog 1 serves.
        let sp = l.xlog_state_get_iclog_space(100, &mut to_sync).unwrap();
        assert_eq!(to_sync, vec![0]);
        assert_eq!(sp.iclog, 1);
        assert_eq!(l.iclog(0).state, IclogState::Syncing);
    }

    #[test]
    fn completion_runs_callbacks_in_ring_order_and_reactivates() {
        let mut l = log(0);
        let mut to_sync = Vec::new();
        for i in 0..2 {
            let sp = l.xlog_state_get_iclog_space(100, &mut to_sync).unwrap();
            assert_eq!(sp.iclog, i);
            l.xlog_cil_attach_callback(i, i as u32);
            l.xlog_state_switch_iclogs(i, 0);
            l.xlog_state_release_iclog(i);
            assert!(l.xlog_state_release_iclog(i));
        }
        l.xlog_wait_on_iclog(0, 42);
        // The second write completes first: its callbacks wait for the first.
        assert!(l.xlog_state_done_syncing(1).is_empty());
        assert_eq!(l.next_callback_iclog(), None);
        l.xlog_state_done_syncing(0);
        assert_eq!(l.next_callback_iclog(), Some(0));
        assert_eq!(l.xlog_take_callbacks(0), vec![0]);
        assert_eq!(l.last_sync_lsn, l.iclog(0).lsn);
        l.xlog_state_clean_iclog(0);
        assert_eq!(l.xlog_force_wait_wake(0), vec![42]);
        assert_eq!(l.next_callback_iclog(), Some(1));
    }
}
