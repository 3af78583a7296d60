//! CIL push workers (`xlog_cil_push_work`) and `xlog_write`: checkpoints onto the iclogs.

use super::history::CheckpointRecord;
use super::sched::{base_slice, CpuThen, RUNNABLE};
use super::tags::IoTag;
use super::tasks::{pusher_of, pusher_task, TASK_DIO, TASK_IOEND, TASK_XFSAILD};
use super::writer::IdleWake;
use super::Sim;
use crate::cil::{append_item_regions, xlog_cil_blocking_space_limit, CilCtx};
use crate::format::{
    self, OpHeader, OP_HDR, TRANS_HDR, XFS_TRANSACTION, XLOG_COMMIT_TRANS, XLOG_CONTINUE_TRANS, XLOG_END_TRANS,
    XLOG_START_TRANS, XLOG_WAS_CONT_TRANS,
};
use crate::grant::Ticket;
use crate::iclog::{IclogState, XLOG_ICL_NEED_FLUSH, XLOG_ICL_NEED_FUA};
use crate::scenario::{CommitOrdering, FlushPolicy, StartRecordOrder, TailUpdate, Throttle};
use crate::trace::{IclogEvent, TraceKind};
use crate::units::{Lsn, Ns};
use rand_core::RngCore;
use serde::Serialize;

/// Model: memcpy into the iclog at 4 GB/s plus a fixed lock/setup cost.
const COPY_FIXED_NS: Ns = 300;
const COPY_BYTES_PER_NS: u64 = 4;
/// CPU time `xlog_write` spends on each region beyond its bytes: its op header and the walk
/// to a log vector formatted long before (cache misses). Measured on this machine's 6.18
/// kernel: the push work ran on a CPU 7.6-8.1 ms per 3.8 MB checkpoint (`kernel run --preset
/// cil-throttle-rhythm`, `cil_push_ms_cpu`, 2 CPUs); the model's build and byte copies of its
/// ~28,000 regions take 2.5 ms, the rest is 200 ns a region.
const XLOG_WRITE_NS_PER_REGION: Ns = 200;

/// CPU time per log vector to build a checkpoint (list walk and sort; a few cache misses).
pub const PUSH_BUILD_NS_PER_VEC: u64 = 50;

/// An op about to be written: flags, its bytes in the cursor's buffer, and whether a
/// transaction already paid for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Op {
    pub flags: u8,
    pub start: u32,
    pub len: u32,
    /// Region bytes and their op header were charged to transactions (CIL `space_used`).
    pub prepaid: bool,
}

/// Where an `xlog_write` is: which op, how much of it is out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Cursor {
    /// Every op's payload, back to back (one allocation per checkpoint, not per region).
    pub buf: Vec<u8>,
    pub ops: Vec<Op>,
    pub idx: usize,
    pub off: u32,
    /// The first iclog of this `xlog_write` has been used.
    pub started: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum PushState {
    #[default]
    Idle,
    Starting,
    /// Building the checkpoint: walking and sorting the context's log vectors (CPU time).
    Building,
    /// v5.14: waiting for the async data-device cache flush issued at push start.
    DataFlushWait,
    /// Waiting for lower sequences' start records (`xc_start_wait`).
    StartOrderWait,
    Writing,
    /// Sleeping on `l_flush_wait`: no ACTIVE iclog at the ring head.
    FlushWait,
    Copying {
        iclog: u32,
    },
    /// Waiting for lower sequences' commit records (`xc_commit_wait`).
    CommitOrderWait,
    /// Waiting for an earlier iclog before releasing the commit iclog.
    PrevWait {
        iclog: u32,
    },
}

impl PushState {
    /// Where a push run's time in this state goes, as the kernel's blocking stacks split it:
    /// 0 on a CPU (starting, building, copying), 1 waiting for a free iclog
    /// (`xlog_state_get_iclog_space`), 2 for an earlier iclog before the commit record
    /// (`xlog_wait_on_iclog`), 3 behind earlier checkpoints' start or commit records
    /// (`xlog_cil_order_write`), 4 for v5.14's data-device flush; `None`: not running.
    pub fn time_bucket(self) -> Option<usize> {
        match self {
            PushState::Idle => None,
            PushState::Starting | PushState::Building | PushState::Writing | PushState::Copying { .. } => Some(0),
            PushState::FlushWait => Some(1),
            PushState::PrevWait { .. } => Some(2),
            PushState::StartOrderWait | PushState::CommitOrderWait => Some(3),
            PushState::DataFlushWait => Some(4),
        }
    }

    /// What the push worker is doing, in kernel terms.
    pub fn describe(&self) -> String {
        match self {
            PushState::Idle => "idle".into(),
            PushState::Starting => "starting (switching contexts)".into(),
            PushState::Building => "building the checkpoint".into(),
            PushState::DataFlushWait => "waiting for the data-device cache flush".into(),
            PushState::StartOrderWait => "waiting for older start records (xc_start_wait)".into(),
            PushState::Writing => "writing (xlog_write)".into(),
            PushState::FlushWait => "waiting for a free iclog (l_flush_wait)".into(),
            PushState::Copying { iclog } => format!("copying into iclog {iclog}"),
            PushState::CommitOrderWait => "waiting for older commit records (xc_commit_wait)".into(),
            PushState::PrevWait { iclog } => format!("waiting for iclog {iclog} (ic_force_wait)"),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Phase {
    #[default]
    Body,
    Commit,
    Done,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Pusher {
    state: PushState,
    seq: u64,
    cursor: Cursor,
    phase: Phase,
    preflush_tail: Lsn,
    iclogs_used: u32,
    commit_stable: bool,
    /// When this worker began its current run of the push work (`workqueue_execute_start`).
    run_start_ns: Ns,
    /// Since when it has been in `state`.
    state_since: Ns,
    /// Which push work it runs, in the order they were queued (`flush_workqueue`), and when
    /// that work was queued (`queue_work`).
    work_idx: u64,
    queued_at: Ns,
    /// The CPU of the pool it runs on (`cpus`), what is left of its slice there, and whether
    /// it waits runnable for one.
    cpu: Option<u32>,
    slice_left: Ns,
    cpu_queued: bool,
    cpu_then: CpuThen,
    /// `cpu_model=kernel`: the CPU whose run queue it joins when woken with none idle: its
    /// waker's (`queue_work` from a task on a CPU), else the last it ran on.
    wake_cpu: u32,
    /// `cpu_model=kernel`: its last wakeup came from a task on another CPU (`queue_work`),
    /// not from an I/O completion's interrupt.
    woken_remote: bool,
}

impl Pusher {
    pub fn state(&self) -> PushState {
        self.state
    }
    /// Since when it has been in its state.
    pub fn state_since(&self) -> Ns {
        self.state_since
    }
    /// When it began its current run of the push work.
    pub fn run_start_ns(&self) -> Ns {
        self.run_start_ns
    }
    /// The CPU it runs on, if it holds one.
    pub fn cpu(&self) -> Option<u32> {
        self.cpu
    }
    /// It waits runnable for a CPU.
    pub fn cpu_queued(&self) -> bool {
        self.cpu_queued
    }
    /// The CPU whose run queue it joins when woken with none idle.
    pub fn wake_cpu(&self) -> u32 {
        self.wake_cpu
    }
    /// Its slice on the CPU it holds is used up.
    pub fn slice_used_up(&self) -> bool {
        self.slice_left == 0
    }

    /// What it does when its CPU time ends.
    pub fn set_cpu_then(&mut self, then: CpuThen) {
        self.cpu_then = then;
    }
    /// Runs `ns` more on the CPU it holds: a fresh slice if the last one was used up.
    pub fn run_in_slice(&mut self, slice: Ns, ns: Ns) {
        if self.slice_left == 0 {
            self.slice_left = slice;
        }
        self.slice_left = self.slice_left.saturating_sub(ns);
    }
    /// Gives up its CPU (preempted, or asleep): answers the CPU given up.
    pub fn put_prev_task(&mut self) -> Option<u32> {
        self.cpu.take()
    }
    /// Queued runnable for a CPU.
    pub fn enqueue(&mut self) {
        self.cpu_queued = true;
    }
    /// Put on `cpu` at `now` to run `ns` with a fresh slice. Answers how long it waited
    /// runnable (if it did) and what to do when its CPU time ends.
    pub fn set_next_task(&mut self, cpu: u32, slice: Ns, ns: Ns, now: Ns) -> (Option<Ns>, CpuThen) {
        let waited = std::mem::take(&mut self.cpu_queued).then(|| now - std::mem::replace(&mut self.state_since, now));
        self.cpu = Some(cpu);
        self.wake_cpu = cpu;
        self.slice_left = slice.saturating_sub(ns);
        (waited, self.cpu_then)
    }
}

impl Sim {
    fn task(k: u32) -> u32 {
        pusher_task(k)
    }

    /// Moves worker `k` to `state`, counting the time it spent in the one it leaves.
    pub(super) fn set_push_state(&mut self, k: usize, state: PushState) {
        self.account_push_time(k);
        self.pushers[k].state = state;
        if state.time_bucket() != Some(0) {
            // It sleeps (or is done): its CPU goes to the next task.
            self.push_cpu_release(k as u32);
        }
    }

    /// Counts worker `k`'s time in its state up to now.
    pub(super) fn account_push_time(&mut self, k: usize) {
        let p = &mut self.pushers[k];
        if let Some(b) = p.state.time_bucket() {
            self.counters.push_time_ns[b] += self.now - p.state_since;
        }
        p.state_since = self.now;
    }

    fn ctx_mut(&mut self, seq: u64) -> &mut CilCtx {
        self.cil.committing_ctx(seq).expect("pushing a committing context")
    }

    pub(super) fn pusher_run(&mut self, k: u32) {
        let state = self.pushers[k as usize].state;
        if !matches!(state, PushState::Idle | PushState::Copying { .. }) && self.push_needs_cpu(k) {
            // Woken (or dispatched): runnable until a CPU is free.
            return self.push_cpu(k, 0, CpuThen::Run);
        }
        match state {
            PushState::Starting => self.push_start(k),
            PushState::Building => self.push_built(k),
            PushState::DataFlushWait | PushState::StartOrderWait => self.push_order_start(k),
            PushState::Writing | PushState::FlushWait => self.xlog_write(k),
            PushState::CommitOrderWait => self.push_order_commit(k),
            PushState::PrevWait { .. } => self.push_release_commit(k),
            PushState::Idle | PushState::Copying { .. } => {}
        }
    }

    /// `wake_up_all`: the woken tasks race for the lock on different CPUs. Model: they run
    /// in a seeded random order.
    fn wake_all(&mut self, mut tasks: Vec<u32>) {
        for i in (1..tasks.len()).rev() {
            let j = (rand_core::RngCore::next_u32(&mut self.rng) as usize) % (i + 1);
            tasks.swap(i, j);
        }
        for t in tasks {
            self.wake(t);
        }
    }

    /// `xlog_cil_push_work`, up to the first `xlog_write`.
    fn push_start(&mut self, k: u32) {
        let task = Self::task(k);
        // The work starts running (`workqueue_execute_start`): from `queue_work` to here is its
        // dispatch delay, a wait for a free worker and then for a CPU.
        let p = &mut self.pushers[k as usize];
        p.run_start_ns = self.now;
        self.counters.push_dispatch_ns.saturating_record(self.now - p.queued_at);
        let used = self.cil.ctx().space_used();
        let wake = match self.scenario.throttle {
            Throttle::V57 => true,
            // 5.9: only when the context being pushed is over the hard limit: the hang.
            Throttle::V59 => used >= xlog_cil_blocking_space_limit(&self.geo) as i64,
            Throttle::Fixed => !self.cil.push_waiters().is_empty(),
        };
        if !self.cil.push_waiters().is_empty() {
            let depth = self.cil.push_waiters().len() as u32;
            self.counters.checkpoints_throttled += 1;
            self.emit(task, TraceKind::CilPushWake { depth, woken: wake });
        }
        if wake {
            let waiters = self.cil.take_push_waiters();
            self.wake_all(waiters);
        } else if !self.cil.push_waiters().is_empty() {
            self.counters.cil_throttle_wakes_skipped += 1;
        }
        let commit_stable = self.cil.take_push_commit_stable();
        if self.cil.ctx().items().is_empty() || self.cil.push_seq() < self.cil.ctx().sequence() {
            if self.cil.ctx().items().is_empty() {
                self.cil.clear_push_seq();
            }
            return self.push_idle(k);
        }
        // Switch contexts: the old one is committing, a new one takes commits.
        let tid = self.rng.next_u32();
        let mut t = Ticket::new(tid, self.ctx_unit_res, 1, false);
        t.take_res();
        let ctx = self.cil.xlog_cil_ctx_switch(&self.geo, t);
        // Build the checkpoint: transaction header, then every item's regions.
        // Sized up front: the CIL's space covers every region (a big checkpoint would
        // otherwise grow its buffer by copying it over and over).
        let mut buf = Vec::with_capacity(TRANS_HDR as usize + ctx.space_used().max(0) as usize);
        buf.extend_from_slice(&format::trans_header(ctx.ticket().tid(), ctx.nvecs()));
        let mut ops = Vec::with_capacity(2 + ctx.nvecs() as usize);
        ops.push(Op { flags: XLOG_START_TRANS, start: 0, len: 0, prepaid: false });
        ops.push(Op { flags: 0, start: 0, len: buf.len() as u32, prepaid: true });
        for (&id, lv) in ctx.items() {
            let daddr = self.items[id as usize].daddr();
            append_item_regions(&mut buf, id, daddr, lv.version, lv.kind, |start, len| {
                ops.push(Op { flags: 0, start, len, prepaid: true })
            });
        }
        ctx.charge_ticket((TRANS_HDR + OP_HDR) as i64);
        let seq = ctx.sequence();
        self.counters.checkpoint_bytes.saturating_record(ctx.space_used().max(1) as u64);
        let p = &mut self.pushers[k as usize];
        p.seq = seq;
        p.cursor = Cursor { buf, ops, idx: 0, off: 0, started: false };
        p.phase = Phase::Body;
        p.iclogs_used = 0;
        p.commit_stable = commit_stable;
        p.preflush_tail = self.log.tail_lsn();
        self.emit(task, TraceKind::CilPush { seq });
        // Walking and sorting the log vector chain takes CPU time that grows with the
        // checkpoint: a big checkpoint's start record can trail a smaller, later one's.
        let build = PUSH_BUILD_NS_PER_VEC * self.pushers[k as usize].cursor.ops.len() as u64;
        self.set_push_state(k as usize, PushState::Building);
        self.push_cpu(k, build, CpuThen::Run);
    }

    /// The checkpoint is built: v5.14 flushes the data device, then start records go out.
    fn push_built(&mut self, k: u32) {
        let task = Self::task(k);
        if self.scenario.flush == FlushPolicy::V514 {
            // 0431d926b399: flush the data device asynchronously; wait before writing.
            self.submit_data_flush(task, IoTag::PushFlush(k));
            self.set_push_state(k as usize, PushState::DataFlushWait);
            return;
        }
        self.push_order_start(k);
    }

    /// `xlog_cil_order_write(_START_RECORD)` when start records are ordered.
    fn push_order_start(&mut self, k: u32) {
        let seq = self.pushers[k as usize].seq;
        if self.scenario.start_record_order == StartRecordOrder::Ordered && self.cil.start_pending_before(seq) {
            self.cil.wait_start(Self::task(k));
            self.set_push_state(k as usize, PushState::StartOrderWait);
            return;
        }
        self.set_push_state(k as usize, PushState::Writing);
        self.xlog_write(k);
    }

    /// `xlog_cil_order_write(_COMMIT_RECORD)`: commit records go out in sequence order.
    fn push_order_commit(&mut self, k: u32) {
        let seq = self.pushers[k as usize].seq;
        if self.cil.commit_pending_before(seq) {
            self.cil.wait_commit(Self::task(k));
            self.set_push_state(k as usize, PushState::CommitOrderWait);
            return;
        }
        let p = &mut self.pushers[k as usize];
        p.cursor = Cursor {
            buf: Vec::new(),
            ops: vec![Op { flags: XLOG_COMMIT_TRANS, start: 0, len: 0, prepaid: false }],
            idx: 0,
            off: 0,
            started: false,
        };
        p.phase = Phase::Commit;
        self.set_push_state(k as usize, PushState::Writing);
        self.xlog_write(k);
    }

    /// One round of `xlog_write`: get iclog space, copy what fits, hold the reference for
    /// the copy time. Region bytes were paid by transactions; the context ticket pays record
    /// headers, start/commit op headers and the op headers of split regions.
    fn xlog_write(&mut self, k: u32) {
        let ki = k as usize;
        let task = Self::task(k);
        if self.pushers[ki].phase == Phase::Done {
            return self.push_release_commit(k);
        }
        let remaining: u32 = {
            let c = &self.pushers[ki].cursor;
            c.ops[c.idx..].iter().map(|o| OP_HDR + o.len).sum::<u32>() - c.off
        };
        let mut to_sync = Vec::new();
        let space = self.log.xlog_state_get_iclog_space(remaining, &mut to_sync);
        let seq = self.pushers[ki].seq;
        for i in to_sync {
            self.xlog_sync(task, i, Some(seq));
        }
        let Some(sp) = space else {
            self.counters.noiclog_events += 1;
            self.log.xlog_wait_for_iclog(task);
            self.set_push_state(ki, PushState::FlushWait);
            return;
        };
        self.trace_iclog(task, IclogEvent::GetSpace, sp.iclog);
        self.pushers[ki].iclogs_used += 1;
        let mut charge = 0i64;
        if sp.first {
            charge += self.geo.iclog_hsize as i64;
        }
        let i = sp.iclog;
        if !self.pushers[ki].cursor.started {
            self.pushers[ki].cursor.started = true;
            if self.scenario.flush == FlushPolicy::SeriesV1 {
                // v1 3/5: NEED_FLUSH on the first iclog each xlog_write uses.
                self.log.iclog_set_flags(i, XLOG_ICL_NEED_FLUSH);
            }
        }
        let mut pos = sp.start as usize;
        let end = (sp.start + sp.avail) as usize;
        let mut nops = 0;
        let mut written = 0u64;
        let lsn = self.log.iclog(i).lsn();
        let tid = self.ctx_mut(seq).ticket().tid();
        loop {
            let c = &self.pushers[ki].cursor;
            if c.idx >= c.ops.len() || end - pos < OP_HDR as usize {
                break;
            }
            let op = &c.ops[c.idx];
            let left = (op.len - c.off) as usize;
            let take = left.min(end - pos - OP_HDR as usize);
            if take == 0 && left > 0 {
                break;
            }
            let cont = c.off > 0;
            let fin = take == left;
            let mut flags = op.flags;
            if cont {
                flags |= XLOG_WAS_CONT_TRANS | if fin { XLOG_END_TRANS } else { 0 };
            } else if !fin {
                flags |= XLOG_CONTINUE_TRANS;
            }
            if !op.prepaid || cont {
                charge += OP_HDR as i64;
            }
            let hdr = OpHeader { tid, len: take as u32, clientid: XFS_TRANSACTION, flags };
            let from = (op.start + c.off) as usize;
            let op_flags = op.flags;
            let c = &self.pushers[ki].cursor;
            self.log.xlog_write_iovec(i, pos, &hdr, &c.buf[from..from + take]);
            pos += OP_HDR as usize + take;
            nops += 1;
            written += OP_HDR as u64 + take as u64;
            if op_flags & XLOG_START_TRANS != 0 {
                self.start_record_written(k, i, lsn);
            }
            if op_flags & XLOG_COMMIT_TRANS != 0 {
                self.commit_record_written(k, i, lsn);
            }
            let c = &mut self.pushers[ki].cursor;
            if fin {
                c.idx += 1;
                c.off = 0;
            } else {
                c.off += take as u32;
                break;
            }
        }
        self.log.xlog_write_done(i, pos as u32, nops);
        self.charge_ctx(seq, charge);
        let ic = self.log.iclog(i);
        if ic.state() == IclogState::Active && self.geo.ic_capacity - ic.offset() <= OP_HDR {
            self.log.xlog_state_switch_iclogs(i, 0);
            self.trace_iclog(task, IclogEvent::Switch, i);
        }
        let p = &mut self.pushers[ki];
        if p.cursor.idx >= p.cursor.ops.len() {
            p.phase = match p.phase {
                Phase::Body => Phase::Commit,
                _ => Phase::Done,
            };
        }
        let copy_ns = COPY_FIXED_NS + written / COPY_BYTES_PER_NS + nops as Ns * XLOG_WRITE_NS_PER_REGION;
        self.set_push_state(ki, PushState::Copying { iclog: i as u32 });
        self.push_cpu(k, copy_ns, CpuThen::CopyDone);
    }

    /// Charges the checkpoint's context ticket (an overrun is the monitor's to count).
    pub(super) fn charge_ctx(&mut self, seq: u64, bytes: i64) {
        let (before, after) = self.ctx_mut(seq).charge_ticket(bytes);
        self.monitor.ticket_charged(before, after);
    }

    /// `xlog_cil_set_ctx_write_state` for the start record.
    fn start_record_written(&mut self, k: u32, i: usize, lsn: Lsn) {
        let seq = self.pushers[k as usize].seq;
        let older_pending = self.cil.start_pending_before(seq);
        self.monitor.start_record_written(older_pending);
        self.ctx_mut(seq).set_start_record(lsn);
        let waiters = self.cil.take_start_waiters();
        self.wake_all(waiters);
        if self.scenario.flush == FlushPolicy::Upstream {
            // 919edbadebe1: the start-record iclog carries PREFLUSH.
            self.log.iclog_set_flags(i, XLOG_ICL_NEED_FLUSH);
        }
    }

    /// `xlog_cil_set_ctx_write_state` for the commit record: extra reference on the commit
    /// iclog, callbacks attached in commit order, commit LSN published.
    fn commit_record_written(&mut self, k: u32, i: usize, lsn: Lsn) {
        let seq = self.pushers[k as usize].seq;
        let id = self.history.len();
        let ctx = self.ctx_mut(seq);
        ctx.set_commit_record(lsn, i as u32, id);
        let start_lsn = ctx.start_lsn();
        let items = ctx.items().iter().map(|(&item, lv)| (item, lv.version)).collect();
        let freed = ctx.items().iter().filter(|(_, lv)| lv.kind.is_stale()).map(|(&item, _)| item).collect();
        self.history.push(CheckpointRecord {
            sequence: seq,
            items,
            freed,
            start_lsn,
            commit_lsn: lsn,
            completed: false,
        });
        self.counters.commit_records += 1;
        self.log.xlog_cil_attach_callback(i, id);
        let waiters = self.cil.take_commit_waiters();
        self.wake_all(waiters);
        self.emit(Self::task(k), TraceKind::TxCommit { ckpt: id, start: start_lsn, commit: lsn });
    }

    /// A copy finished: drop the reference (maybe starting I/O), go on writing.
    pub(super) fn copy_done(&mut self, k: u32) {
        let PushState::Copying { iclog } = self.pushers[k as usize].state else {
            return;
        };
        let i = iclog as usize;
        self.trace_iclog(Self::task(k), IclogEvent::Release, i);
        if self.log.xlog_state_release_iclog(i) {
            let seq = self.pushers[k as usize].seq;
            self.xlog_sync(Self::task(k), i, Some(seq));
        }
        self.set_push_state(k as usize, PushState::Writing);
        let p = &self.pushers[k as usize];
        match p.phase {
            Phase::Commit if p.cursor.ops.iter().all(|o| o.flags & XLOG_COMMIT_TRANS == 0) => self.push_order_commit(k),
            _ => self.xlog_write(k),
        }
    }

    /// After the commit record: wait for earlier iclogs as the ordering variant says, flag
    /// the commit iclog, release it and give the context ticket back.
    fn push_release_commit(&mut self, k: u32) {
        let ki = k as usize;
        let seq = self.pushers[ki].seq;
        let ctx = self.ctx_mut(seq);
        let (start_lsn, commit_lsn) = (ctx.start_lsn(), ctx.commit_lsn());
        let ci = ctx.commit_iclog().expect("commit record written") as usize;
        let waited = matches!(self.pushers[ki].state, PushState::PrevWait { .. });
        if !waited && start_lsn != commit_lsn {
            if let Some(j) = self.iclog_to_wait_on(ci, start_lsn, commit_lsn) {
                self.trace_iclog(Self::task(k), IclogEvent::WaitOn, j);
                self.log.xlog_wait_on_iclog(j, Self::task(k));
                self.set_push_state(ki, PushState::PrevWait { iclog: j as u32 });
                return;
            }
        }
        match self.scenario.flush {
            FlushPolicy::V514 | FlushPolicy::Upstream => {
                self.log.iclog_set_flags(ci, XLOG_ICL_NEED_FUA);
                if start_lsn != commit_lsn {
                    self.log.iclog_set_flags(ci, XLOG_ICL_NEED_FLUSH);
                }
                let moved =
                    self.scenario.flush == FlushPolicy::V514 && self.log.tail_lsn() != self.pushers[ki].preflush_tail;
                self.counters.tail_moved_after_flush += moved as u64;
                self.counters.tail_moved_fua_only += (moved && start_lsn == commit_lsn) as u64;
                if moved && self.scenario.tail_update == TailUpdate::Fixed {
                    // 0dc8f7f139f0: the tail moved after the up-front flush: flush again.
                    self.log.iclog_set_flags(ci, XLOG_ICL_NEED_FLUSH);
                }
            }
            FlushPolicy::Legacy | FlushPolicy::SeriesV1 => {}
        }
        if self.pushers[ki].commit_stable && self.log.iclog(ci).state() == IclogState::Active {
            self.log.xlog_state_switch_iclogs(ci, 0);
            self.trace_iclog(Self::task(k), IclogEvent::Switch, ci);
        }
        self.stamp_tail_on_release(Self::task(k), ci);
        self.trace_iclog(Self::task(k), IclogEvent::Release, ci);
        if self.log.xlog_state_release_iclog(ci) {
            self.xlog_sync(Self::task(k), ci, Some(seq));
        }
        // 6.x: the context ticket is given back after the commit iclog is released.
        let ctx = self.ctx_mut(seq);
        let mut t = ctx.ticket_ungrant();
        let bytes = t.ungrant_bytes();
        self.log.xlog_grant_sub_space(bytes);
        self.xfs_log_space_wake();
        self.counters.checkpoint_iclogs += self.pushers[ki].iclogs_used as u64;
        self.push_idle(k);
    }

    /// Which older iclog the push waits for before releasing the commit iclog.
    fn iclog_to_wait_on(&self, ci: usize, start_lsn: Lsn, commit_lsn: Lsn) -> Option<usize> {
        let busy = |j: usize| !matches!(self.log.iclog(j).state(), IclogState::Active | IclogState::Dirty);
        let prev = self.log.prev(ci);
        match self.scenario.commit_ordering {
            CommitOrdering::None => None,
            // v1 2/5 xlog_wait_on_iclog_lsn: the newest busy iclog back to the start LSN.
            CommitOrdering::SeriesV1 => {
                let mut j = prev;
                for _ in 0..self.log.iclogs().len() - 1 {
                    let lsn = self.log.iclog(j).lsn();
                    if !lsn.is_zero() && lsn < start_lsn {
                        return None;
                    }
                    if busy(j) {
                        return Some(j);
                    }
                    j = self.log.prev(j);
                }
                None
            }
            // 5.14-rc1: ic_prev unconditionally, even when it is a newer iclog (the hang).
            CommitOrdering::V514Rc1 => busy(prev).then_some(prev),
            // 1effb72a8179: only an older ic_prev.
            CommitOrdering::Fixed => {
                let plsn = self.log.iclog(prev).lsn();
                (!plsn.is_zero() && plsn < commit_lsn && busy(prev)).then_some(prev)
            }
        }
    }

    fn push_idle(&mut self, k: u32) {
        self.set_push_state(k as usize, PushState::Idle);
        let p = &self.pushers[k as usize];
        self.counters.push_run_ns.saturating_record(self.now - p.run_start_ns);
        if self.cil_wq.pending_since().is_some() {
            self.push_dispatched(k as usize);
        }
        self.wake_flush_wq_waiters();
    }

    /// Wakes the push worker: `queue_work` on the CIL push work.
    pub(super) fn queue_push(&mut self) {
        self.cil_wq.queue_work(self.now);
        if let Some(k) = self.pushers.iter().position(|p| p.state == PushState::Idle) {
            self.push_dispatched(k);
        }
    }

    /// A worker takes the queued push; it starts once it has a CPU (`push_start`).
    pub(super) fn push_dispatched(&mut self, k: usize) {
        let (queued, work) = self.cil_wq.take_work(self.now);
        self.pushers[k].work_idx = work;
        self.pushers[k].queued_at = queued;
        self.set_push_state(k, PushState::Starting);
        self.pushers[k].run_start_ns = self.now;
        let waker = self.current_cpu();
        self.pushers[k].woken_remote = waker.is_some();
        if let Some(cpu) = waker {
            self.pushers[k].wake_cpu = cpu;
        }
        self.wake(pusher_task(k as u32));
    }

    /// Whether a push work numbered `target` or lower is queued or running.
    pub(super) fn push_works_pending(&self, target: u64) -> bool {
        self.cil_wq.pending_up_to(target)
            || self.pushers.iter().any(|p| p.state != PushState::Idle && p.work_idx <= target)
    }

    /// A push work finished: the forces whose `flush_workqueue` it ends go on. Whether works
    /// up to a target are pending only falls as the target does, and waiters queue by target,
    /// so those released are the front ones (2000 writers: no scan of every waiter).
    pub(super) fn wake_flush_wq_waiters(&mut self) {
        while let Some((w, target)) = self.cil_wq.first_flush_waiter() {
            if self.push_works_pending(target) {
                break;
            }
            self.cil_wq.pop_flush_waiter();
            self.wake(w);
        }
    }
}

impl Sim {
    /// Push worker `k` runs `ns` of CPU work (building, copying into an iclog), then `then`:
    /// on the CPU it holds, else on a free one, else after the tasks queued before it.
    pub(super) fn push_cpu(&mut self, k: u32, ns: Ns, then: CpuThen) {
        if !self.cpus.enabled() {
            return self.push_cpu_done_at(k, self.now + ns, then);
        }
        let p = &mut self.pushers[k as usize];
        if p.cpu_queued() {
            return;
        }
        p.set_cpu_then(then);
        match p.cpu() {
            // Its slice is used up and a task waits: preempted, queued again (at the back, or
            // by its CPU time in a fair queue).
            Some(cpu) if p.slice_used_up() && self.cpus.has_runnable(cpu) => {
                p.put_prev_task();
                self.queue_for_cpu(k, ns, false, cpu);
                self.cpu_release(cpu);
            }
            Some(_) => {
                p.run_in_slice(base_slice(self.cpus.ncpus()), ns);
                self.cpus.charge(pusher_task(k), ns);
                self.push_cpu_done_at(k, self.now + ns, then);
            }
            None => {
                let remote = std::mem::take(&mut p.woken_remote);
                match self.cpus.take_idle_cpu() {
                    Some(cpu) => {
                        let idle = self.idle_wake(IdleWake::Kworker { remote });
                        self.push_granted_after(k, cpu, ns, idle)
                    }
                    None => self.queue_for_cpu(k, ns, true, self.pushers[k as usize].wake_cpu()),
                }
            }
        }
    }

    /// Whether push worker `k` must first get a CPU before it goes on from a sleep.
    pub(super) fn push_needs_cpu(&self, k: u32) -> bool {
        self.cpus.enabled() && self.pushers[k as usize].cpu().is_none()
    }

    /// Push worker `k` waits runnable on `cpu`'s queue (the pool's one by default): at the
    /// front when it just woke, else at the back.
    fn queue_for_cpu(&mut self, k: u32, ns: Ns, woken: bool, cpu: u32) {
        // The time it waits runnable is its own bucket, not its state's.
        self.account_push_time(k as usize);
        self.pushers[k as usize].enqueue();
        if woken {
            // Behind the kernel threads woken before it.
            self.kworker_runnable(pusher_task(k), ns, cpu);
        } else {
            self.cpus.enqueue_task(pusher_task(k), ns, cpu);
        }
    }

    pub(super) fn push_granted(&mut self, k: u32, cpu: u32, ns: Ns) {
        self.push_granted_after(k, cpu, ns, 0)
    }

    /// Push worker `k` gets `cpu` and starts `idle` ns later (the CPU waking from idle).
    fn push_granted_after(&mut self, k: u32, cpu: u32, ns: Ns, idle: Ns) {
        let slice = base_slice(self.cpus.ncpus());
        let (waited, then) = self.pushers[k as usize].set_next_task(cpu, slice, ns, self.now);
        if let Some(waited) = waited {
            self.counters.push_time_ns[RUNNABLE] += waited;
        }
        self.cpus.charge(pusher_task(k), ns);
        self.push_cpu_done_at(k, self.now + idle + ns, then);
    }

    fn push_cpu_done_at(&mut self, k: u32, at: Ns, then: CpuThen) {
        match then {
            CpuThen::Run => self.wake_at(at, pusher_task(k)),
            CpuThen::CopyDone => self.copy_until(at, pusher_task(k)),
        }
    }

    /// Push worker `k` sleeps (or has finished): its CPU goes to the next task.
    pub(super) fn push_cpu_release(&mut self, k: u32) {
        if let Some(cpu) = self.pushers[k as usize].put_prev_task() {
            self.cpu_release(cpu);
        }
    }

    /// The CPU held by the task whose event runs now (the waker of whom it wakes), if any.
    pub(super) fn current_cpu(&self) -> Option<u32> {
        let t = self.current?;
        match pusher_of(t) {
            Some(k) => self.pushers[k as usize].cpu(),
            None if t == TASK_XFSAILD => self.aild.cpu(),
            None if t == TASK_IOEND => self.ioend.on_cpu().cpu(),
            None if t == TASK_DIO => self.dio.on_cpu().cpu(),
            None => self.writers.get(t as usize).and_then(|wr| wr.on_cpu()),
        }
    }
}
