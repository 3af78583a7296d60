//! Writer tasks: reserve, commit into the CIL (delayed logging), throttle, fsync.

use super::sched::base_slice;
use super::tags::IoTag;
use super::workload::{TxBuilder, WriterPool};
use super::Sim;
use crate::cil::{shadow_size, xlog_cil_blocking_space_limit, xlog_cil_space_limit};
use crate::device::ReqFlags;
use crate::grant::Ticket;
use crate::iclog::{IclogState, XLOG_ICL_NEED_FLUSH, XLOG_ICL_NEED_FUA};
use crate::layout::DATA_ID_BASE;
use crate::log::GrantWaiter;
use crate::scenario::{AilPush, ForceFlush, Scenario, Throttle, TxWorkAt, WorkloadKind};
use crate::trace::{GrantEvent, IclogEvent, TraceKind};
use crate::units::{Lsn, Ns, TaskId};
use rand_core::RngCore;
use serde::Serialize;

/// How often the coarse clock that stamps files moves: one tick of this machine's 6.18
/// (`CONFIG_HZ=250`, Debian's default). Measured: with 16 writers appending 4 KiB and fsyncing
/// every 2 ms, 49% of appends logged their timestamps (`xfs_vn_update_time`), 2 ms / 4 ms.
const COARSE_TICK_NS: Ns = 4_000_000;

/// The CPUs transactions commit on: the pool (`cpus`), or one per writer. A writer commits on
/// the CPU its think ran on.
pub(super) fn commit_cpus(s: &Scenario) -> usize {
    (if s.cpus == 0 { s.writers } else { s.cpus }).max(1) as usize
}

/// What a writer task is doing (`Model:` a writer is a loop of reserve, commit, optional fsync).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum WriterState {
    Thinking,
    /// Inside the transaction, reservation held: the operation's own CPU work (inode
    /// allocation, directory insert, ...), on a CPU of the pool or waiting for one.
    TxWork,
    /// A synced append's data copied into the page cache, after its timestamp update
    /// (`cpu_model=kernel`: the kernel's `write` stamps the file first, then copies).
    Copying,
    /// A synced append's data is written and its extent converted: woken from
    /// `folio_wait_writeback`, it runs again before its fsync forces the log
    /// (`cpu_model=kernel`).
    WritebackDone,
    GrantWait,
    /// Inside the transaction: asleep on its AG's AGI buffer lock (`agi_lock=on`), held by
    /// another create until that one commits.
    AgiWait,
    /// Sleeping on `xc_push_wait`: the CIL hard throttle.
    Throttled,
    /// `xlog_cil_force_seq`: waiting for a checkpoint's commit record (`xc_commit_wait`).
    CommitWait,
    /// `xlog_cil_push_now` of a synchronous force: waiting for the pushes queued or running
    /// when it came to finish (`flush_workqueue`) before queueing its own.
    PushFlushWait,
    /// `xfs_log_force_seq` batching: waiting for the previous iclog's write.
    PrevWait {
        iclog: u32,
    },
    ForceWait {
        iclog: u32,
    },
    /// Inside the transaction, reservation held: reading metadata blocks (`left` more after this).
    MetaRead {
        left: u32,
    },
    /// fsync: writing the file's data block, or flushing the data device's cache.
    DataWrite,
    DataFlush,
    Stopped,
}

impl WriterState {
    pub fn is_blocked(&self) -> bool {
        !matches!(
            self,
            WriterState::Thinking
                | WriterState::TxWork
                | WriterState::Copying
                | WriterState::WritebackDone
                | WriterState::Stopped
        )
    }
}

/// Where a synced append is (`sync-append`'s O_DSYNC writes, `fsync_op=append`):
/// `file_update_time` logs the new timestamps (`tr_fsyncts`) before the data is written, and
/// the I/O completion converts the written part of the preallocated extent (`tr_write`) before
/// the fsync forces the log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum AppendStep {
    #[default]
    Timestamp,
    Convert,
}

#[derive(Clone, Debug)]
pub(crate) struct Writer {
    state: WriterState,
    ticket: Option<Ticket>,
    tx_start: u64,
    /// The items it works on, and its directory (the workload's).
    pool: WriterPool,
    tx_count: u64,
    /// CIL sequence the last transaction committed into.
    seq: u64,
    commit_lsn: Lsn,
    force_slept: bool,
    /// The last log force started I/O on (or flagged) an iclog: fsync may skip its flush.
    log_flushed: bool,
    /// Version of the file data block last written.
    data_version: u64,
    /// Thinking on a CPU of the pool (`cpus`), which it gives back when the think ends (with
    /// `cpu_model=kernel`, when it sleeps or its slice is used up and a task waits).
    on_cpu: bool,
    /// `cpu_model=kernel`: its think ended and it still holds its CPU, in the transaction's
    /// steps that take no CPU time in the model, until it thinks again or sleeps.
    holding: bool,
    /// `agi_lock=on`: the part of its create's CPU work still to run under the AGI lock.
    agi_part: Option<u64>,
    /// `cpu_model=kernel`: what is left of its slice on the CPU it holds.
    slice_left: u64,
    /// `cpu_model=kernel`: a task woken onto its CPU preempts it on its way back to user space
    /// (`TIF_NEED_RESCHED`).
    need_resched: bool,
    /// `cpu_model=kernel`: its synced append's I/O completion has had its CPU time.
    ioend_ran: bool,
    /// When that completion's worker woke.
    ioend_woke: u64,
    /// A synced append's copy, drawn with its operation, run after its timestamp update.
    copy_ns: u64,
    /// The CPU its I/O completion worker gave up, and when: the writer it wakes there at that
    /// instant finds the CPU awake.
    ioend_left: Option<(u32, u64)>,
    /// The current transaction's CPU work is done (`TxWork`).
    worked: bool,
    /// The CPU it last ran on: where its commits count the CIL's space (`cil_space=percpu`).
    cpu: u32,
    append_step: AppendStep,
    /// The CIL sequence its synced append's timestamp update committed into, until the
    /// append's conversion commits.
    timestamp_seq: Option<u64>,
    /// The coarse clock's tick its file's timestamps were last set in (`fsync_op=append`).
    mtime_tick: Option<u64>,
    /// `cpu_model=kernel`: its operation ended while it slept (an fsync's log force): the
    /// operation returns to user space, and its latency ends, when it next runs on a CPU.
    latency_from: Option<u64>,
}

impl Writer {
    pub fn state(&self) -> WriterState {
        self.state
    }
    pub fn ticket(&self) -> Option<&Ticket> {
        self.ticket.as_ref()
    }
    /// The CIL sequence its last transaction committed into.
    pub fn seq(&self) -> u64 {
        self.seq
    }
    pub fn tx_start(&self) -> u64 {
        self.tx_start
    }
    pub fn pool(&self) -> &WriterPool {
        &self.pool
    }
    pub fn data_version(&self) -> u64 {
        self.data_version
    }
    /// Its synced append's I/O completion runs (in a kernel worker woken at `ioend_woke`).
    pub fn ioend_ran(&self) -> bool {
        self.ioend_ran
    }
    pub fn ioend_woke(&self) -> Ns {
        self.ioend_woke
    }
    /// The CPU it last ran on (`task_cpu`).
    pub fn task_cpu(&self) -> u32 {
        self.cpu
    }
    /// The CPU it runs on, if it holds one (`task_on_cpu`).
    pub fn on_cpu(&self) -> Option<u32> {
        self.on_cpu.then_some(self.cpu)
    }
    /// Its slice on the CPU it holds is used up.
    pub fn slice_used_up(&self) -> bool {
        self.slice_left == 0
    }
    /// `resched_curr`: a task woken onto its CPU is to run before it.
    pub fn set_need_resched(&mut self) {
        self.need_resched = true;
    }
    /// Whether it was to give its CPU up (it no longer is).
    pub fn take_need_resched(&mut self) -> bool {
        std::mem::take(&mut self.need_resched)
    }

    /// `set_task_cpu`: where it runs next (and where its commits count the CIL's space).
    pub fn set_task_cpu(&mut self, cpu: u32) {
        self.cpu = cpu;
    }
    /// Its completion worker woke at `now`.
    pub fn ioend_wakeup(&mut self, now: Ns) {
        self.ioend_woke = now;
    }
    /// Whether it still held its CPU from its last think (it no longer does).
    pub fn take_holding(&mut self) -> bool {
        std::mem::take(&mut self.holding)
    }
    /// Put on `cpu` to run `think` ns, with a fresh slice.
    pub fn set_next_task(&mut self, cpu: u32, slice: Ns, think: u64) {
        self.need_resched = false;
        self.slice_left = slice.saturating_sub(think);
        self.on_cpu = true;
        self.cpu = cpu;
    }
    /// Runs `think` ns more on the CPU it holds: a fresh slice if the last one was used up.
    pub fn run_in_slice(&mut self, slice: Ns, think: u64) {
        if self.slice_left == 0 {
            self.slice_left = slice;
        }
        self.slice_left = self.slice_left.saturating_sub(think);
    }
    /// Its think ended: it keeps its CPU (`hold`) or gives it up. Answers the CPU given up.
    pub fn put_prev_task(&mut self, hold: bool) -> Option<u32> {
        if !self.on_cpu {
            return None;
        }
        if hold {
            self.holding = true;
            return None;
        }
        self.leave_cpu()
    }
    /// `schedule()` away from its CPU: whatever was to preempt it no longer needs to.
    fn leave_cpu(&mut self) -> Option<u32> {
        self.need_resched = false;
        self.on_cpu = false;
        Some(self.cpu)
    }
    /// Gives up the CPU it holds (its slice is used up and a task waits): answers the CPU.
    pub fn yield_cpu(&mut self) -> u32 {
        self.leave_cpu();
        self.cpu
    }
    /// After steps that take no CPU time: a writer that held its CPU and did not think again
    /// sleeps and gives it up (one about to start its next transaction keeps it).
    pub fn settle_cpu(&mut self) -> Option<u32> {
        if !self.holding || self.state == WriterState::Thinking {
            return None;
        }
        self.holding = false;
        self.leave_cpu()
    }

    pub fn new(items: Vec<u32>) -> Writer {
        Writer {
            state: WriterState::Thinking,
            ticket: None,
            tx_start: 0,
            pool: WriterPool::new(items),
            tx_count: 0,
            seq: 0,
            commit_lsn: Lsn::ZERO,
            force_slept: false,
            log_flushed: false,
            data_version: 0,
            on_cpu: false,
            holding: false,
            agi_part: None,
            slice_left: 0,
            need_resched: false,
            ioend_ran: false,
            ioend_woke: 0,
            copy_ns: 0,
            ioend_left: None,
            worked: false,
            cpu: 0,
            append_step: AppendStep::Timestamp,
            timestamp_seq: None,
            mtime_tick: None,
            latency_from: None,
        }
    }
}

impl Sim {
    pub(super) fn writer_run(&mut self, w: TaskId) {
        match self.writers[w as usize].state {
            WriterState::Thinking => {
                self.think_done(w);
                if self.exit_to_user_mode(w) {
                    return;
                }
                self.syscall_returned(w);
                self.start_tx(w);
                self.writer_cpu_settle(w)
            }
            WriterState::TxWork => {
                self.think_done(w);
                self.tx_body(w);
                self.writer_cpu_settle(w)
            }
            WriterState::Copying => {
                self.think_done(w);
                self.fsync_start(w);
                self.writer_cpu_settle(w)
            }
            WriterState::WritebackDone => {
                self.think_done(w);
                self.fsync_force(w);
                self.writer_cpu_settle(w)
            }
            WriterState::GrantWait => {
                let t = self.writers[w as usize].ticket.clone().expect("waiting writer has a ticket");
                self.trace_grant(w, GrantEvent::Wake, &t);
                self.trace_grant(w, GrantEvent::ReserveExit, &t);
                self.tx_body(w);
            }
            // Handed the AGI, it is woken in TxWork; it sleeps on through any other wakeup.
            WriterState::AgiWait => {}
            WriterState::MetaRead { left } => self.meta_read(w, left),
            WriterState::Throttled => self.after_commit(w),
            WriterState::CommitWait => self.force_seq(w),
            WriterState::PushFlushWait => self.force_seq_pushed(w),
            WriterState::PrevWait { .. } => self.xlog_force_lsn(w),
            WriterState::ForceWait { .. } => self.force_done(w),
            WriterState::DataWrite if self.synced_append(w) => self.xfs_end_io(w),
            WriterState::DataWrite => self.fsync_force(w),
            WriterState::DataFlush => self.fsync_done(w),
            WriterState::Stopped => {}
        }
    }

    /// `xfs_end_io`: writer `w`'s append is written; its completion converts the extent (the
    /// append's second transaction). With `cpu_model=kernel` the completion's worker first
    /// runs its CPU time on the pool.
    /// Model: the worker is the writer's task (the writer sleeps meanwhile in the kernel too),
    /// and its CPU time runs before the conversion's transaction.
    fn xfs_end_io(&mut self, w: TaskId) {
        if self.kernel_threads_on_cpus() {
            let wr = &mut self.writers[w as usize];
            if !std::mem::replace(&mut wr.ioend_ran, true) {
                return self.kworker_on_cpu(w, super::sched::XFS_END_IO_NS);
            }
            wr.ioend_ran = false;
            if wr.on_cpu {
                let cpu = wr.yield_cpu();
                wr.ioend_left = Some((cpu, self.now));
                self.cpu_release(cpu);
            }
        }
        self.start_tx(w)
    }

    /// Whether writer `w` makes appends durable (O_DSYNC, or an append and fsync): two
    /// transactions around its data write.
    pub(super) fn synced_append(&self, w: TaskId) -> bool {
        let n = self.scenario.fsync_writers;
        self.scenario.appends() && self.scenario.fsync && (n == 0 || w < n)
    }

    /// The transaction writer `w` runs now is a synced append's timestamp update.
    pub(super) fn timestamp_tx(&self, w: TaskId) -> bool {
        self.synced_append(w) && self.writers[w as usize].append_step == AppendStep::Timestamp
    }

    /// `file_update_time` for writer `w`'s append: whether its file's timestamps change, and
    /// so its timestamp update is logged. The kernel stamps files with the coarse clock, which
    /// moves once a tick (`CONFIG_HZ`); `sync-append`'s appends always log it.
    /// Model: `sync-append`'s appenders come back less often than a tick on the kernel (about
    /// 50 appends a second each), so only `fsync-heavy`'s appends follow the clock; the tick is
    /// read before the reservation (the kernel stamps the time after `xfs_trans_alloc`).
    fn file_update_time(&mut self, w: TaskId) -> bool {
        if self.scenario.workload == WorkloadKind::SyncAppend {
            return true;
        }
        let tick = self.now / COARSE_TICK_NS;
        let wr = &mut self.writers[w as usize];
        wr.mtime_tick.replace(tick) != Some(tick)
    }

    /// `xfs_log_reserve` for a permanent ticket of `tx_logcount` units, or for an append's
    /// timestamp update (`tr_fsyncts`: one unit, not permanent, a log count of 0 as the kernel
    /// traces it).
    fn start_tx(&mut self, w: TaskId) {
        // An append's I/O completion runs its transaction whatever the clock says.
        let converting = self.synced_append(w) && self.writers[w as usize].append_step == AppendStep::Convert;
        if self.stopping && !converting {
            self.writers[w as usize].state = WriterState::Stopped;
            return;
        }
        if self.timestamp_tx(w) && !self.file_update_time(w) {
            // The file's timestamps are current: the append goes straight to its data.
            let wr = &mut self.writers[w as usize];
            wr.tx_start = self.now;
            wr.force_slept = false;
            wr.worked = false;
            wr.append_step = AppendStep::Convert;
            return self.append_copy(w);
        }
        let tid = self.rng.next_u32();
        let t = match self.timestamp_tx(w) {
            true => Ticket::new(tid, self.ts_unit_res, 0, false).with_iclog_hdrs(self.ts_unit_hdrs),
            false => Ticket::new(tid, self.unit_res, self.scenario.tx_logcount, true).with_iclog_hdrs(self.unit_hdrs),
        };
        let need = t.reserve_need();
        let wr = &mut self.writers[w as usize];
        if !converting {
            wr.tx_start = self.now;
        }
        wr.force_slept = false;
        wr.worked = false;
        wr.ticket = Some(t.clone());
        self.trace_grant(w, GrantEvent::Reserve, &t);
        self.grant_push_ail(need);
        if !self.log.reserve_waiters().is_empty() {
            self.grant_head_wake();
        }
        if !self.log.reserve_waiters().is_empty() || self.log.reserve_space_left() < need {
            self.counters.grant_head_waits += 1;
            self.log.xlog_grant_head_wait(GrantWaiter { task: w, need });
            self.writers[w as usize].state = WriterState::GrantWait;
            if self.scenario.ail_push == AilPush::Upstream {
                // 6.11+ `xlog_grant_head_wait`: push on the AIL to free up all the log space.
                self.xfs_ail_push_all();
            }
            self.trace_grant(w, GrantEvent::Sleep, &t);
            return;
        }
        self.log.xlog_grant_add_space(need);
        self.trace_grant(w, GrantEvent::ReserveExit, &t);
        self.tx_body(w);
    }

    /// Between reservation and commit: read the metadata the change needs, then commit.
    fn tx_body(&mut self, w: TaskId) {
        if self.work_in_tx() && !self.writers[w as usize].worked && self.agi_create(w) {
            return self.xfs_create_agi(w);
        }
        if self.work_in_tx() && !std::mem::replace(&mut self.writers[w as usize].worked, true) {
            let think = self.draw_think();
            if think > 0 {
                self.writers[w as usize].state = WriterState::TxWork;
                return self.think_on_cpu(w, think);
            }
        }
        // create-remove: the creators' directories are hot; the removers walk a cold tree.
        let creator = self.scenario.workload == WorkloadKind::CreateRemove && w.is_multiple_of(2);
        // An append reads btree blocks only when it allocates.
        let tx = self.writers[w as usize].tx_count;
        let append = self.scenario.append_size.0;
        let in_prealloc = self.scenario.appends() && !super::workload::append_allocates(tx, append);
        match if creator || in_prealloc || self.timestamp_tx(w) { 0 } else { self.scenario.tx_reads } {
            0 => self.xlog_cil_commit(w),
            n => self.meta_read(w, n),
        }
    }

    /// One metadata block read with the reservation held (a btree block not in memory).
    /// Model: the block is anywhere in the data section, chosen by the seeded RNG.
    fn meta_read(&mut self, w: TaskId, left: u32) {
        if left == 0 {
            return self.xlog_cil_commit(w);
        }
        let dd = self.data_dev;
        let span = (self.scenario.fs_size.0 / 4096).max(1);
        let sector = (self.rng.next_u64() % span) * 8;
        let (id, done) = self.devs[dd].submit_read(self.now, sector, 4096, IoTag::Read(w).pack());
        self.note_io(dd, id, done, IoTag::Read(w));
        let kind = TraceKind::DevSubmit {
            dev: dd as u8,
            id,
            sector,
            bytes: 4096,
            preflush: false,
            fua: false,
            flush: false,
            read: true,
        };
        self.emit(w, kind);
        self.counters.metadata_reads += 1;
        self.writers[w as usize].state = WriterState::MetaRead { left: left - 1 };
        self.io_at(done, dd, id);
    }

    /// `xlog_grant_head_wake` on the reserve head: FIFO, no queue jumping.
    pub(super) fn grant_head_wake(&mut self) {
        let mut free = self.log.reserve_space_left();
        let mut woken = 0;
        while let Some(front) = self.log.reserve_waiters().front().cloned() {
            if free < front.need {
                if woken == 0 {
                    self.grant_push_ail(front.need);
                }
                break;
            }
            free -= front.need;
            self.log.xlog_grant_head_wake_first();
            self.log.xlog_grant_add_space(front.need);
            let t = self.writers[front.task as usize].ticket.clone().expect("waiter has a ticket");
            self.trace_grant(front.task, GrantEvent::WakeUp, &t);
            self.wake(front.task);
            woken += 1;
        }
    }

    /// `xlog_cil_commit`: format the changed items into the current context, account the
    /// space, give back the rest of the reservation, then push and throttle as needed.
    fn xlog_cil_commit(&mut self, w: TaskId) {
        let wi = w as usize;
        let timestamp = self.timestamp_tx(w);
        let wr = &mut self.writers[wi];
        let changes = TxBuilder {
            scenario: &self.scenario,
            w,
            tx: wr.tx_count,
            pool: &mut wr.pool,
            timestamp,
            rng: &mut self.rng,
            items: &mut self.items,
            ail: &self.ail,
            ialloc: &mut self.ialloc,
            agcount: self.agcount,
            rt: &mut self.rt,
        }
        .changes();
        let seq = self.cil.ctx().sequence();
        let round = self.scenario.shadow_round;
        let mut formatted = Vec::with_capacity(changes.len());
        for &(id, kind) in &changes {
            let (version, grew) = self.items[id as usize].xlog_cil_insert_item(kind, seq, shadow_size(kind, round));
            if grew {
                self.counters.shadow_allocations += 1;
            }
            formatted.push((id, version, kind));
        }
        let cpu = self.writers[wi].cpu as usize;
        let hdrs = self.writers[wi].ticket.as_ref().map_or(1, |t| t.iclog_hdrs());
        let cost = self.cil.insert_items(&self.geo, cpu, hdrs, &formatted);
        let t = self.writers[wi].ticket.as_mut().expect("committing writer has a ticket");
        let before = t.curr_res();
        t.charge(cost.ctx_res + cost.split_res + cost.len);
        let after = t.curr_res();
        self.monitor.ticket_charged(before, after);
        let mut t = self.writers[wi].ticket.take().expect("ticket");
        self.trace_grant(w, GrantEvent::Ungrant, &t);
        let bytes = t.ungrant_bytes();
        self.log.xlog_grant_sub_space(bytes);
        self.trace_grant(w, GrantEvent::UngrantExit, &t);
        self.xfs_log_space_wake();
        // `tx_count` counts operations: an append's timestamp update is the first half of one.
        let timestamp = self.timestamp_tx(w);
        let append = self.synced_append(w);
        let wr = &mut self.writers[wi];
        wr.seq = seq;
        if !timestamp {
            wr.tx_count += 1;
        }
        // An append's two transactions in one checkpoint or two (`kernel compare` sets the
        // share beside the kernel's).
        if timestamp {
            wr.timestamp_seq = Some(seq);
        } else if let Some(ts) = wr.timestamp_seq.take().filter(|_| append) {
            self.counters.append_tx_pairs += 1;
            self.counters.append_pairs_split += u64::from(ts != seq);
        }
        self.counters.tx_committed += 1;
        self.xfs_trans_commit_agi(w);
        self.xlog_cil_push_background(w);
    }

    /// `agi_lock=on` and writer `w`'s operation is a create.
    fn agi_create(&self, w: TaskId) -> bool {
        self.agi.enabled()
            && match self.scenario.workload {
                WorkloadKind::FsmarkCreate => true,
                WorkloadKind::CreateRemove => w.is_multiple_of(2),
                _ => false,
            }
    }

    /// A create's work with `agi_lock=on`, in two parts: what comes before `xfs_dialloc`,
    /// then `xfs_ialloc_read_agi` takes the AG's AGI buffer lock (or sleeps until it is handed
    /// over) and the rest runs under it until the commit releases it.
    fn xfs_create_agi(&mut self, w: TaskId) {
        let wi = w as usize;
        if self.writers[wi].agi_part.is_none() {
            let think = self.draw_think();
            let under = think * crate::agi::AGI_HOLD_SHARE.0 / crate::agi::AGI_HOLD_SHARE.1;
            self.writers[wi].agi_part = Some(under);
            if think > under {
                self.writers[wi].state = WriterState::TxWork;
                return self.think_on_cpu(w, think - under);
            }
        }
        if !self.agi.xfs_buf_lock(self.agi.ag_of(w), w) {
            self.counters.agi_lock_waits += 1;
            self.writers[wi].state = WriterState::AgiWait;
            return;
        }
        let under = self.writers[wi].agi_part.take().unwrap_or(0);
        self.writers[wi].worked = true;
        if under > 0 {
            self.writers[wi].state = WriterState::TxWork;
            return self.think_on_cpu(w, under);
        }
        self.tx_body(w)
    }

    /// `xfs_trans_commit` releases the transaction's buffers: the AGI goes to its first waiter.
    fn xfs_trans_commit_agi(&mut self, w: TaskId) {
        if let Some(next) = self.agi.xfs_buf_relse(self.agi.ag_of(w), w) {
            // It holds the AGI now, and goes on with its create's work when it runs.
            self.writers[next as usize].state = WriterState::TxWork;
            self.wake(next);
        }
    }

    /// `xlog_cil_push_background`: queue a push past the space limit; throttle committers
    /// past the blocking limit (and, once engaged, all of them with the fixed throttle).
    fn xlog_cil_push_background(&mut self, w: TaskId) {
        let used = self.cil.ctx().space_counted();
        if used >= xlog_cil_space_limit(&self.geo) as i64 && self.cil.request_push(self.cil.ctx().sequence()) {
            self.counters.background_pushes += 1;
            self.queue_push();
        }
        let over = used >= xlog_cil_blocking_space_limit(&self.geo) as i64;
        let engage = match self.scenario.throttle {
            Throttle::V57 | Throttle::V59 => over,
            Throttle::Fixed => over || !self.cil.push_waiters().is_empty(),
        };
        if engage {
            let t = self.cil.ctx().ticket().clone();
            self.trace_grant(w, GrantEvent::CilWait, &t);
            let depth = self.cil.throttle(w);
            self.counters.cil_throttle_waits += 1;
            self.counters.cil_throttle_depth_max = self.counters.cil_throttle_depth_max.max(depth as u64);
            self.writers[w as usize].state = WriterState::Throttled;
            return;
        }
        self.after_commit(w);
    }

    fn after_commit(&mut self, w: TaskId) {
        if self.synced_append(w) {
            let wr = &mut self.writers[w as usize];
            return match wr.append_step {
                AppendStep::Timestamp => {
                    wr.append_step = AppendStep::Convert;
                    self.append_copy(w)
                }
                AppendStep::Convert => {
                    wr.append_step = AppendStep::Timestamp;
                    if self.stamp_first(w) {
                        // The completion worker converted; the writer needs a CPU to go on.
                        self.writers[w as usize].state = WriterState::WritebackDone;
                        return self.think_on_cpu(w, 0);
                    }
                    self.fsync_force(w)
                }
            };
        }
        let n = self.scenario.fsync_writers;
        if self.scenario.fsync && (n == 0 || w < n) {
            self.fsync_start(w);
        } else {
            self.finish_tx(w);
        }
    }

    /// `xfs_file_fsync`: write the file's data, (external log: flush the data device), force
    /// the log to the inode's sequence, and flush the data device unless the force did.
    fn fsync_start(&mut self, w: TaskId) {
        let wr = &mut self.writers[w as usize];
        wr.data_version += 1;
        wr.log_flushed = false;
        let (version, daddr) = (wr.data_version, self.data_daddr(w));
        let bytes = self.scenario.append_size.0;
        // The data's first sector carries its version; the rest of the append is zeros.
        let block = crate::format::meta_block(DATA_ID_BASE | w, version, Lsn::ZERO, crate::units::BBSIZE as usize);
        let dd = self.data_dev;
        let tag = IoTag::Data(w).pack();
        if self.scenario.appends() {
            // Model: a writer's data lives at one address, but an append's blocks are new to
            // its file, and to a sparse file under the device.
            self.devs[dd].note_allocating_write();
        }
        let (id, done) = self.devs[dd].submit_write_zero_filled(self.now, daddr, block, bytes, ReqFlags::PLAIN, tag);
        self.note_io(dd, id, done, IoTag::Data(w));
        self.emit(
            w,
            TraceKind::DevSubmit {
                dev: dd as u8,
                id,
                sector: daddr,
                bytes: bytes as u32,
                preflush: false,
                fua: false,
                flush: false,
                read: false,
            },
        );
        self.io_at(done, dd, id);
        self.writers[w as usize].state = WriterState::DataWrite;
    }

    fn fsync_force(&mut self, w: TaskId) {
        if self.scenario.external_log {
            // The log is elsewhere: the data device's cache is flushed first.
            return self.fsync_flush(w);
        }
        self.counters.log_forces += 1;
        self.force_seq(w);
    }

    fn fsync_flush(&mut self, w: TaskId) {
        self.submit_data_flush(w, IoTag::Data(w));
        self.writers[w as usize].state = WriterState::DataFlush;
    }

    /// After the data flush: an external log still needs its force; then the fsync returns.
    fn fsync_done(&mut self, w: TaskId) {
        let wr = &mut self.writers[w as usize];
        if self.scenario.external_log && !wr.log_flushed {
            wr.log_flushed = true; // marks that the data flush came first
            self.counters.log_forces += 1;
            return self.force_seq(w);
        }
        self.ack_fsync(w);
    }

    /// `xlog_cil_force_seq` for the writer's sequence, then `xlog_force_lsn`. Its
    /// `xlog_cil_push_now` first waits for every push already queued or running
    /// (`flush_workqueue`: "start on any pending background push to minimise wait time on
    /// it"), so commits made meanwhile go out together in the next checkpoint.
    fn force_seq(&mut self, w: TaskId) {
        let target = self.cil_wq.works_queued();
        if self.push_works_pending(target) {
            self.cil_wq.flush_workqueue_wait(w, target);
            self.writers[w as usize].state = WriterState::PushFlushWait;
            return;
        }
        self.force_seq_pushed(w)
    }

    /// The rest of `xlog_cil_force_seq`, once the pushes before it are done.
    fn force_seq_pushed(&mut self, w: TaskId) {
        let seq = self.writers[w as usize].seq;
        if seq == self.cil.ctx().sequence() && !self.cil.ctx().items().is_empty() && self.cil.request_push(seq) {
            self.queue_push();
        }
        let pending = seq >= self.cil.ctx().sequence() || self.cil.commit_pending_before(seq + 1);
        if pending {
            self.cil.wait_commit(w);
            self.writers[w as usize].state = WriterState::CommitWait;
            return;
        }
        match self.cil.committing().iter().find(|c| c.sequence() == seq).map(|c| c.commit_lsn()) {
            Some(commit_lsn) => {
                self.writers[w as usize].commit_lsn = commit_lsn;
                self.emit(w, TraceKind::LogForce { lsn: commit_lsn });
                self.xlog_force_lsn(w);
            }
            None => self.force_done(w), // the checkpoint already completed
        }
    }

    /// `xlog_force_lsn` for the writer's commit LSN: the second half of forcing a sequence.
    fn xlog_force_lsn(&mut self, w: TaskId) {
        let wi = w as usize;
        let lsn = self.writers[wi].commit_lsn;
        let found = self.log.iclogs().iter().position(|ic| {
            ic.lsn() == lsn
                && ic.state() != IclogState::Dirty
                && !(ic.state() == IclogState::Active && ic.offset() == 0)
        });
        let Some(i) = found else {
            return self.force_done(w); // already on disk
        };
        let force_flags = match self.scenario.force_flush {
            ForceFlush::Fixed => XLOG_ICL_NEED_FLUSH | XLOG_ICL_NEED_FUA,
            ForceFlush::None => 0,
        };
        match self.log.iclog(i).state() {
            IclogState::Active => {
                let p = self.log.prev(i);
                let prev_busy = matches!(self.log.iclog(p).state(), IclogState::WantSync | IclogState::Syncing);
                if !self.writers[wi].force_slept && prev_busy {
                    // Wait for the previous iclog's write so more commits can join this one.
                    self.writers[wi].force_slept = true;
                    self.log.xlog_wait_on_iclog_write(p, w);
                    self.writers[wi].state = WriterState::PrevWait { iclog: p as u32 };
                    return;
                }
                self.xlog_force_iclog(w, i, force_flags);
                self.writers[wi].log_flushed = true;
            }
            IclogState::WantSync => self.log.iclog_set_flags(i, force_flags),
            _ => {}
        }
        if matches!(self.log.iclog(i).state(), IclogState::Active | IclogState::Dirty) {
            return self.force_done(w);
        }
        self.counters.log_force_sleeps += 1;
        self.trace_iclog(w, IclogEvent::WaitOn, i);
        self.log.xlog_wait_on_iclog(i, w);
        self.writers[wi].state = WriterState::ForceWait { iclog: i as u32 };
    }

    /// The log force returned: the fsync flushes the data device itself unless the force
    /// started an iclog write (which the fixed kernel flags PREFLUSH|FUA).
    fn force_done(&mut self, w: TaskId) {
        let wr = &self.writers[w as usize];
        if !self.scenario.external_log && !wr.log_flushed {
            return self.fsync_flush(w);
        }
        if !self.scenario.external_log {
            self.counters.fsync_flushes_skipped += 1;
        }
        self.ack_fsync(w);
    }

    fn ack_fsync(&mut self, w: TaskId) {
        let seq = self.writers[w as usize].seq;
        // Every checkpoint up to this sequence is on stable storage now. Checkpoints are in
        // sequence order and those below `acked` are known to be covered: search the rest
        // (an fsync workload folds only acknowledged checkpoints, so they are all kept).
        let h = &self.history;
        let rest = &h.checkpoints[(h.acked - h.folded) as usize..];
        let upto = h.acked + rest.partition_point(|c| c.sequence <= seq) as u32;
        if upto > self.history.acked {
            self.history.acked = upto;
            self.emit(w, TraceKind::ForceDone { ckpt: upto - 1 });
        }
        let daddr = self.data_daddr(w);
        let version = self.writers[w as usize].data_version;
        self.history.acked_data.insert(daddr, version);
        self.counters.data_bytes_synced += self.scenario.append_size.0;
        self.monitor.fsync_acked(self.devs[self.data_dev].stable(), daddr, version);
        self.finish_tx(w);
    }

    fn finish_tx(&mut self, w: TaskId) {
        let (kernel, work_in_tx) = (self.kernel_threads_on_cpus(), self.work_in_tx());
        let wr = &mut self.writers[w as usize];
        let lat = (self.now - wr.tx_start).max(1);
        wr.state = WriterState::Thinking;
        self.counters.transactions += 1;
        if kernel {
            // The system call returns to user space once the writer runs there: on its CPU
            // now unless preempted on the way (`syscall_returned`), else when it next runs
            // (`run_on_after`), as the kernel's writers time their operations.
            // Model: a `tx_work=inside` writer woken without a CPU returns at once.
            wr.latency_from = Some(wr.tx_start);
        } else {
            self.counters.latency_ns.saturating_record(lat);
        }
        if work_in_tx {
            return self.wake(w);
        }
        let mut think = self.draw_think();
        if self.stamp_first(w) {
            // Its copy comes after its timestamp update; it first needs a CPU to run on.
            self.writers[w as usize].copy_ns = std::mem::take(&mut think);
        }
        self.think_on_cpu(w, think);
    }

    /// `cpu_model=kernel`: a synced append stamps its file (`xfs_file_write_checks`) before it
    /// copies its data, as the kernel's `write` does (traced: docs/kernel.md).
    fn stamp_first(&self, w: TaskId) -> bool {
        self.kernel_threads_on_cpus() && self.synced_append(w)
    }

    /// A synced append's data goes to the page cache, then to the device.
    fn append_copy(&mut self, w: TaskId) {
        if !self.stamp_first(w) {
            return self.fsync_start(w);
        }
        // A writer's first append has drawn none yet (it started without a think).
        let copy = match std::mem::take(&mut self.writers[w as usize].copy_ns) {
            0 => self.draw_think(),
            drawn => drawn,
        };
        self.writers[w as usize].state = WriterState::Copying;
        self.think_on_cpu(w, copy)
    }

    /// Think time varies uniformly over [0.5, 1.5) of the mean so writers drift apart.
    fn draw_think(&mut self) -> u64 {
        let mean = self.scenario.think.0;
        mean / 2 + self.rng.next_u64() % mean.max(1)
    }

    /// Whether an operation's CPU work runs inside its transaction (`tx_work`): `xfs_trans_alloc`
    /// reserves log space first, then the work (inode allocation, directory and btree changes)
    /// runs with the reservation held until the commit. A synced append's work (copying the
    /// data into the page cache) comes before its transactions.
    fn work_in_tx(&self) -> bool {
        self.scenario.tx_work == TxWorkAt::Inside && !self.scenario.appends()
    }
}

/// Who is woken onto an idle CPU (`Sim::idle_wake`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IdleWake {
    Writer,
    Kworker { remote: bool },
}

impl Sim {
    /// Runs `think` ns of writer `w`'s CPU work: on a free CPU of the pool now, or after the
    /// tasks queued before it.
    pub(super) fn think_on_cpu(&mut self, w: TaskId, think: u64) {
        if !self.cpus.enabled() {
            self.writers[w as usize].set_task_cpu(w);
            return self.wake_at(self.now + think, w);
        }
        let ioend_left = self.writers[w as usize].ioend_left.take();
        if self.writers[w as usize].take_holding() {
            return self.think_on_held_cpu(w, think);
        }
        let last = self.writers[w as usize].task_cpu();
        match self.cpus.select_idle_cpu(last) {
            Some(cpu) => {
                let idle = match ioend_left == Some((cpu, self.now)) {
                    true => 0,
                    false => self.idle_wake(IdleWake::Writer),
                };
                self.run_on_after(cpu, w, think, idle)
            }
            None => {
                self.cpus.enqueue_wakeup(w, think, last);
                self.check_preempt_wakeup(last);
            }
        }
    }

    /// A task woken onto `cpu`'s queue: the writer running there, past its fair share, is to
    /// give the CPU up at its next preemption point (`resched_curr`).
    pub(super) fn check_preempt_wakeup(&mut self, cpu: u32) {
        if !self.kernel_threads_on_cpus() {
            return;
        }
        let Some(curr) = self.curr_writer(cpu) else { return };
        if self.cpus.wakeup_preempts(cpu, curr as TaskId) {
            self.writers[curr].set_need_resched();
        }
    }

    /// The writer running on `cpu`, if one is.
    fn curr_writer(&self, cpu: u32) -> Option<usize> {
        self.writers.iter().position(|wr| wr.on_cpu() == Some(cpu))
    }

    /// A high-priority kernel worker (nice -20: the log's I/O completion work) woken onto
    /// `cpu`'s queue: the writer running there gives the CPU up at its next preemption point.
    pub(super) fn resched_curr(&mut self, cpu: u32) {
        if let Some(curr) = self.curr_writer(cpu) {
            self.writers[curr].set_need_resched();
        }
    }

    /// Writer `w` returned to user space on its CPU without being preempted: the operation it
    /// finished ends now, if it has not been counted yet.
    fn syscall_returned(&mut self, w: TaskId) {
        if let Some(t0) = self.writers[w as usize].latency_from.take() {
            self.counters.latency_ns.saturating_record((self.now - t0).max(1));
        }
    }

    /// A writer between its operations, returning to user space (the only preemption point of
    /// a `PREEMPT_NONE` kernel such as this machine's): preempted if a woken task is to run
    /// before it, it waits runnable and starts its next operation when it runs again.
    fn exit_to_user_mode(&mut self, w: TaskId) -> bool {
        let wr = &mut self.writers[w as usize];
        if !wr.take_need_resched() || wr.on_cpu().is_none() || !wr.take_holding() {
            return false;
        }
        let cpu = wr.yield_cpu();
        self.cpus.enqueue_task(w, 0, cpu);
        self.cpu_release(cpu);
        true
    }

    /// A kernel worker woken to run `ns` of CPU work for writer `w` (its I/O completion): on
    /// an idle CPU, the writer's last when idle, else runnable in front of the writers, behind
    /// the kernel workers woken before it (`CpuPool::enqueue_woken`).
    pub(super) fn kworker_on_cpu(&mut self, w: TaskId, ns: Ns) {
        self.writers[w as usize].ioend_wakeup(self.now);
        let last = self.writers[w as usize].task_cpu();
        match self.cpus.select_idle_cpu(last) {
            Some(cpu) => {
                // Queued by the data write's completion interrupt (`xfs-conv` is bound to its CPU).
                let idle = self.idle_wake(IdleWake::Kworker { remote: false });
                self.run_on_after(cpu, w, ns, idle)
            }
            None => self.kworker_runnable(w, ns, last),
        }
    }

    /// Writer `w`'s think ended. By default it gives its CPU back now; with
    /// `cpu_model=kernel` it holds it through its transaction's steps (which take no CPU time
    /// in the model) until it thinks again or sleeps (`writer_cpu_settle`).
    pub(super) fn think_done(&mut self, w: TaskId) {
        let kernel = self.kernel_threads_on_cpus();
        if let Some(cpu) = self.writers[w as usize].put_prev_task(kernel) {
            self.cpu_release(cpu);
        }
    }

    /// Writer `w` thinks again on the CPU it holds: within its slice it runs on (EEVDF does
    /// not preempt a running task within its slice, `RUN_TO_PARITY`); with its slice used up
    /// and a task waiting on its CPU's queue, it queues again (at the back; with
    /// `cpu_model=kernel`'s fair queue, by the CPU time it has had) and the CPU goes to the
    /// first task.
    fn think_on_held_cpu(&mut self, w: TaskId, think: u64) {
        let slice = base_slice(self.cpus.ncpus());
        let wr = &mut self.writers[w as usize];
        // Its user-space work (`tx_work=before`) starts back in user space: preempted there.
        let at_user = wr.state == WriterState::Thinking && wr.take_need_resched();
        if !at_user {
            self.syscall_returned(w);
        }
        let wr = &mut self.writers[w as usize];
        if at_user || (wr.slice_used_up() && self.cpus.has_runnable(wr.task_cpu())) {
            let cpu = wr.yield_cpu();
            self.cpus.enqueue_task(w, think, cpu);
            return self.cpu_release(cpu);
        }
        wr.run_in_slice(slice, think);
        self.cpus.charge(w, think);
        self.wake_at(self.now + think, w);
    }

    /// After writer `w`'s steps that take no CPU time: if it did not think again on the CPU
    /// it held, it sleeps (or has stopped) and gives the CPU back. A writer about to start its
    /// next transaction at this instant (`Thinking`) keeps it.
    pub(super) fn writer_cpu_settle(&mut self, w: TaskId) {
        if let Some(cpu) = self.writers[w as usize].settle_cpu() {
            self.cpu_release(cpu);
        }
    }

    /// With `cpu_model=kernel`, how long a task woken onto an idle CPU takes to start there: a
    /// writer, or a kernel worker woken by a task on another CPU (`remote`) or by an interrupt
    /// on that CPU; 0 otherwise.
    pub(super) fn idle_wake(&self, waking: IdleWake) -> Ns {
        use super::sched::{IDLE_WAKE_LOCAL_NS, IDLE_WAKE_REMOTE_NS, IDLE_WAKE_WRITER_NS};
        if !self.kernel_threads_on_cpus() {
            return 0;
        }
        match waking {
            IdleWake::Writer => IDLE_WAKE_WRITER_NS,
            IdleWake::Kworker { remote: true } => IDLE_WAKE_REMOTE_NS,
            IdleWake::Kworker { remote: false } => IDLE_WAKE_LOCAL_NS,
        }
    }

    pub(super) fn run_on(&mut self, cpu: u32, w: TaskId, think: u64) {
        self.run_on_after(cpu, w, think, 0)
    }

    /// Writer `w` (or its I/O completion worker) gets `cpu` and starts `idle` ns later (the CPU
    /// waking from idle), to run `think` ns.
    fn run_on_after(&mut self, cpu: u32, w: TaskId, think: u64, idle: Ns) {
        let slice = base_slice(self.cpus.ncpus());
        let wr = &mut self.writers[w as usize];
        if wr.ioend_ran() {
            self.counters.ioend_time_ns[0] += think;
            self.counters.ioend_time_ns[1] += self.now - wr.ioend_woke();
        }
        if let Some(t0) = wr.latency_from.take() {
            self.counters.latency_ns.saturating_record((self.now + idle - t0).max(1));
        }
        wr.set_next_task(cpu, slice, think);
        self.cpus.charge(w, think);
        self.wake_at(self.now + idle + think, w);
    }
}

#[cfg(test)]
mod tests {
    use crate::presets::find;
    use crate::sim::{Sim, WriterState};
    use crate::trace::{GrantEvent, TraceKind};
    use std::collections::BTreeMap;

    /// With `cpu_model=kernel` a synced append runs as the kernel's `write` and `fsync` do
    /// (traced, docs/kernel.md): it stamps its file, then copies its data (its think) before
    /// the data goes to the device; after its I/O completion converts the extent, the writer
    /// itself must run again (woken, waiting for a CPU) before its fsync forces the log.
    #[test]
    fn a_synced_append_stamps_then_copies_and_forces_once_it_runs_again() {
        let mut s = find("sync-append").unwrap();
        for (k, v) in [("cpus", "2"), ("device", "vm-disk"), ("cpu_model", "kernel"), ("think", "300us")] {
            s.set(k, v).unwrap();
        }
        let mut sim = Sim::new(&s).unwrap();
        sim.set_keep_trace(true);
        let mut committed: BTreeMap<u32, u64> = BTreeMap::new();
        let (mut writes, mut steps_woken) = (0, 0);
        while sim.now() < 200 * crate::units::NS_PER_MS {
            let Some(events) = sim.step() else { break };
            let events = events.to_vec();
            let woken = (0..s.writers).filter(|&w| sim.writer_state(w) == Some(WriterState::WritebackDone));
            steps_woken += woken.count();
            for e in events {
                let since = |c: &BTreeMap<u32, u64>| e.t_ns - c.get(&e.task).copied().unwrap_or(0);
                match e.kind {
                    TraceKind::Grant { event: GrantEvent::Ungrant, .. } => {
                        committed.insert(e.task, e.t_ns);
                    }
                    TraceKind::DevSubmit { sector, read: false, .. }
                        if e.task < s.writers && sector == sim.data_daddr(e.task) =>
                    {
                        writes += 1;
                        assert!(
                            since(&committed) >= 150_000,
                            "writer {} wrote its data {} ns after stamping",
                            e.task,
                            since(&committed)
                        );
                    }
                    _ => {}
                }
            }
        }
        assert!(writes > 500, "{writes} data writes");
        assert!(steps_woken > 100, "steps with a writer woken from its writeback, waiting to run: {steps_woken}");
    }

    /// `fsync-heavy`'s appends (`fsync_op=append`) log their timestamps only when the coarse
    /// clock ticked: with `cpu_model=kernel` every append copies its data before its write,
    /// whether its stamp was logged or not.
    #[test]
    fn every_synced_append_copies_before_its_write_logged_stamp_or_not() {
        let mut s = find("fsync-heavy").unwrap();
        for (k, v) in [("cpus", "2"), ("cpu_model", "kernel"), ("fsync_op", "append"), ("think", "100us")] {
            s.set(k, v).unwrap();
        }
        let mut sim = Sim::new(&s).unwrap();
        sim.set_keep_trace(true);
        let mut copied = std::collections::BTreeSet::new();
        let (mut writes, mut stamps) = (0, 0);
        while sim.now() < 100 * crate::units::NS_PER_MS {
            let Some(events) = sim.step() else { break };
            let events = events.to_vec();
            for e in events {
                match e.kind {
                    TraceKind::Grant { event: GrantEvent::Reserve, ticket, .. } if ticket.ocnt == 0 => stamps += 1,
                    TraceKind::DevSubmit { sector, read: false, .. }
                        if e.task < s.writers && sector == sim.data_daddr(e.task) =>
                    {
                        writes += 1;
                        assert!(copied.remove(&e.task), "writer {} wrote an append it never copied", e.task);
                    }
                    _ => {}
                }
            }
            copied.extend((0..s.writers).filter(|&w| sim.writer_state(w) == Some(WriterState::Copying)));
        }
        // Some appends stamped (a tick passed), most did not.
        assert!(writes > 100 && stamps > 0 && stamps < writes / 2, "{writes} writes, {stamps} stamps");
    }
}
