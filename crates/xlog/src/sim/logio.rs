//! Log I/O: `xlog_sync` and the flush policies, completion in ring order, checkpoint
//! callbacks, log forces and the tail; the grant-head and iclog tracepoints.

use super::monitor::RecordSubmit;
use super::tags::IoTag;
use super::tasks::{pusher_task, TASK_DIO, TASK_IOEND};
use super::Sim;
use crate::ail::AilUpdate;
use crate::device::{IoKind, ReqFlags};
use crate::grant::xlog_grant_push_threshold;
use crate::grant::Ticket;
use crate::iclog::{xlog_pack_record, IclogState, Record, XLOG_ICL_NEED_FLUSH, XLOG_ICL_NEED_FUA};
use crate::scenario::{AilPush, FlushPolicy, TailUpdate};
use crate::trace::{GrantEvent, GrantView, IclogEvent, TicketView, TraceKind};
use crate::units::{Lsn, Ns, TaskId, BBSIZE};

impl Sim {
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
        let ticket = TicketView {
            ocnt: t.ocnt(),
            cnt: t.cnt(),
            curr_res: t.curr_res(),
            unit_res: t.unit_res(),
            flags: t.flags(),
        };
        let log = self.grant_view();
        self.emit(task, TraceKind::Grant { event, ticket, log });
    }

    pub(crate) fn trace_iclog(&mut self, task: u32, event: IclogEvent, i: usize) {
        let ic = self.log.iclog(i);
        let kind = TraceKind::Iclog {
            event,
            iclog: i as u32,
            state: ic.state(),
            refcnt: ic.refcnt(),
            offset: ic.offset(),
            lsn: ic.lsn(),
            flags: ic.flags(),
        };
        self.emit(task, kind);
    }

    /// `xlog_assign_tail_lsn`: lowest AIL LSN, or the last synced LSN when the AIL is empty.
    pub(super) fn assign_tail(&mut self, task: u32) -> Lsn {
        let new = self.ail.min_lsn().unwrap_or(self.log.last_sync_lsn());
        let old = self.log.tail_lsn();
        if new != old {
            self.log.set_tail_lsn(new);
            let last_sync = self.log.last_sync_lsn();
            self.emit(task, TraceKind::AssignTail { new, old, last_sync });
        }
        new
    }

    /// `xlog_grant_push_ail`: ask xfsaild to move the tail when free space runs short
    /// (before 6.11; since then xfsaild sets its own target).
    pub(super) fn grant_push_ail(&mut self, need: u32) {
        if self.scenario.ail_push != AilPush::Grant {
            return;
        }
        let (head, tail, last) = (self.log.reserve_head(), self.log.tail_lsn(), self.log.last_sync_lsn());
        if let Some(target) = xlog_grant_push_threshold(&self.geo, head, tail, last, need) {
            if self.ail.push(target) {
                self.wake_aild();
            }
        }
    }

    /// `xfs_log_space_wake`: wake grant waiters that now fit.
    pub(super) fn xfs_log_space_wake(&mut self) {
        if !self.log.reserve_waiters().is_empty() {
            self.grant_head_wake();
        }
    }

    /// Where the policy stamps `h_tail_lsn` when an iclog is released: upstream (and the
    /// fixed 5.14 code) on the first release that is WANT_SYNC or carries NEED_FUA.
    pub(super) fn stamp_tail_on_release(&mut self, task: TaskId, i: usize) {
        let early = match self.scenario.flush {
            FlushPolicy::Upstream => true,
            FlushPolicy::V514 => self.scenario.tail_update == TailUpdate::Fixed,
            FlushPolicy::Legacy | FlushPolicy::SeriesV1 => false,
        };
        let ic = self.log.iclog(i);
        if early
            && ic.tail_lsn().is_zero()
            && (ic.state() == IclogState::WantSync || ic.flags() & XLOG_ICL_NEED_FUA != 0)
        {
            let tail = self.assign_tail(task);
            self.log.iclog_set_tail(i, tail);
        }
    }

    /// `xlog_sync`: stamp the tail, pack the record, charge roundoff, choose flags, submit.
    /// `payer` is the checkpoint whose ticket pays the roundoff (6.x), else the grant heads.
    /// It runs in the task that dropped the last reference, as in the kernel, so its trace
    /// events and device requests carry that task.
    pub(super) fn xlog_sync(&mut self, task: TaskId, i: usize, payer: Option<u64>) {
        self.stamp_tail_on_release(task, i);
        if self.log.iclog(i).tail_lsn().is_zero() {
            let tail = self.assign_tail(task);
            self.log.iclog_set_tail(i, tail);
        }
        let (lsn, tail) = (self.log.iclog(i).lsn(), self.log.iclog(i).tail_lsn());
        self.history.record_submitted(lsn, tail);
        let rec = xlog_pack_record(&self.geo, &self.log.iclog(i).header(), &self.uuid);
        let blocks = rec.bytes.len() as u64 / BBSIZE as u64;
        self.monitor.record_packed(lsn, blocks, tail);
        let payer =
            payer.filter(|s| self.cil.committing().iter().any(|c| c.sequence() == *s && c.ticket().curr_res() != 0));
        match payer {
            Some(seq) => self.charge_ctx(seq, rec.roundoff as i64),
            None => {
                self.log.xlog_grant_add_space(rec.roundoff);
            }
        }
        self.counters.iclog_writes += 1;
        self.counters.log_blocks += blocks;
        self.counters.bytes_logged += rec.bytes.len() as u64;
        self.trace_iclog(task, IclogEvent::Sync, i);
        let flags = self.log.iclog(i).flags();
        let (need_flush, need_fua) = (flags & XLOG_ICL_NEED_FLUSH != 0, flags & XLOG_ICL_NEED_FUA != 0);
        let external = self.scenario.external_log;
        let split = rec.split_bb.is_some();
        // (data-device flush first, PREFLUSH, FUA)
        let (data_flush, preflush, fua) = match self.scenario.flush {
            // Before 5.14: every iclog PREFLUSH|FUA, except external or split writes, which
            // flush the data device synchronously first and go out FUA only.
            FlushPolicy::Legacy if external || split => (true, false, true),
            FlushPolicy::Legacy => (false, true, true),
            // v1 3/5: NEED_FLUSH iclogs get PREFLUSH|FUA, others nothing; external or split
            // NEED_FLUSH writes flush the data device and clear NEED_FLUSH (Chandan's finding).
            FlushPolicy::SeriesV1 if need_flush && (external || split) => (true, false, false),
            FlushPolicy::SeriesV1 => (false, need_flush, need_flush),
            FlushPolicy::V514 => (false, need_flush, need_fua),
            // b5d721eaae47: external logs flush the data device before NEED_FLUSH iclogs.
            FlushPolicy::Upstream => (external && need_flush, need_flush, need_fua),
        };
        if data_flush {
            self.pending_records[i] = Some((task, rec, ReqFlags { preflush, fua }));
            self.submit_data_flush(task, IoTag::IclogDataFlush(i));
            return;
        }
        self.submit_record(task, i, rec, ReqFlags { preflush, fua });
    }

    /// Issues a cache flush on the data device; its completion is routed by `tag`.
    pub(super) fn submit_data_flush(&mut self, task: u32, tag: IoTag) {
        let dd = self.data_dev;
        let (id, done) = self.devs[dd].submit_flush(self.now, tag.pack());
        self.note_io(dd, id, done, tag);
        self.monitor.data_flush_submitted(id, self.log.tail_lsn());
        let kind = TraceKind::DevSubmit {
            dev: dd as u8,
            id,
            sector: 0,
            bytes: 0,
            preflush: false,
            fua: false,
            flush: true,
            read: false,
        };
        self.emit(task, kind);
        self.io_at(done, dd, id);
    }

    /// Model: a record held back for a data-device flush goes out when the flush completes,
    /// on behalf of the task that synced it (the kernel's task waits for the flush itself).
    fn submit_record(&mut self, task: TaskId, i: usize, rec: Record, flags: ReqFlags) {
        let ReqFlags { preflush, fua } = flags;
        let tag = IoTag::Iclog(i).pack();
        let base = self.log_start;
        let blocks = rec.bytes.len() as u64 / BBSIZE as u64;
        let mut parts = Vec::with_capacity(2);
        match rec.split_bb {
            Some(split) => {
                let cut = split as usize * BBSIZE as usize;
                parts.push((base + rec.bno as u64, rec.bytes[..cut].to_vec()));
                parts.push((base, rec.bytes[cut..].to_vec()));
            }
            None => parts.push((base + rec.bno as u64, rec.bytes)),
        }
        self.log.iclog_io_start(i, parts.len() as u32);
        let ic = self.log.iclog(i);
        // On an internal log a PREFLUSH write is also the data device's flush.
        let flushes_data = preflush && self.data_dev == 0;
        self.monitor.record_submitted(&RecordSubmit {
            lsn: ic.lsn(),
            tail: ic.tail_lsn(),
            blocks,
            preflush,
            flushes_data,
            commit: !ic.callbacks().is_empty(),
            volatile: self.devs[self.data_dev].profile().volatile_cache,
        });
        self.trace_iclog(task, IclogEvent::Write, i);
        for (sector, data) in parts {
            let bytes = data.len() as u32;
            let (id, done) = self.devs[0].submit_record_write(self.now, sector, data, flags, tag, rec.crc);
            self.note_io(0, id, done, IoTag::Iclog(i));
            if flushes_data {
                self.monitor.data_flush_submitted(id, self.log.tail_lsn());
            }
            self.emit(
                task,
                TraceKind::DevSubmit { dev: 0, id, sector, bytes, preflush, fua, flush: false, read: false },
            );
            self.io_at(done, 0, id);
        }
    }

    pub(super) fn io_done(&mut self, dev: usize, id: u64) {
        let req = self.devs[dev].complete(id);
        let dio = self.devs[dev].profile().measured().is_some_and(|m| m.completes_on_cpu);
        match (dio, req.kind) {
            (true, IoKind::Write { .. }) => self.dio_queue(dev, id, req.tag),
            _ => self.bio_endio(dev, id, req.tag),
        }
    }

    /// Request `id` of device `dev` (issued for `tag`) is complete: its submitter sees it.
    fn bio_endio(&mut self, dev: usize, id: u64, tag: u64) {
        if dev == self.data_dev {
            self.monitor.data_request_completed(id);
        }
        self.emit(TASK_IOEND, TraceKind::DevComplete { dev: dev as u8, id });
        match IoTag::unpack(tag) {
            IoTag::Iclog(i) if self.log.iclog_io_done(i) => match self.kernel_threads_on_cpus() {
                true => self.xlog_ioend_queue(i),
                false => self.iclog_done(i),
            },
            IoTag::Iclog(_) => {}
            IoTag::IclogDataFlush(i) => {
                let (task, rec, flags) = self.pending_records[i].take().expect("record waits for the data flush");
                self.submit_record(task, i, rec, flags);
            }
            IoTag::Meta { first, count } => {
                for id in first..first + count {
                    self.meta_done(id);
                }
            }
            IoTag::PushFlush(k) => self.wake(pusher_task(k)),
            IoTag::Data(w) | IoTag::Read(w) => self.wake(w),
            IoTag::None => {}
        }
    }

    /// A loop device's write is done on the host disk (`cpu_model=kernel`): the backing file's
    /// completion work on the CPU that takes the host disk's interrupts completes it, woken there
    /// by the interrupt when that CPU is idle, else queued ahead of its writers (a normal-priority
    /// worker: it preempts the writer running there at its next preemption point only once that
    /// writer has had more than its share, `check_preempt_wakeup`).
    /// Model: the loop's flushes complete in its own worker, which takes no CPU here (a
    /// PREFLUSH or FUA write's flushes are sequenced at the host's completions, and only the
    /// request's last completion waits for the CPU); its reads complete inline.
    fn dio_queue(&mut self, dev: usize, id: u64, tag: u64) {
        if !self.dio.queue_work(dev as u8, id, tag) {
            return;
        }
        let cpu = self.cpus.bound_cpu(TASK_DIO).unwrap_or(0);
        let idle = self.cpus.take_cpu_if_idle(cpu).then_some(cpu);
        self.kthread_woken(TASK_DIO, idle, cpu, false);
    }

    /// Kernel worker `task` (the loop's or the log's I/O completion), asleep, is woken by
    /// `queue_work` from an interrupt: on `idle` when it got an idle CPU (that CPU wakes first),
    /// else it waits runnable on `cpu`'s queue, ahead of its writers; a high-priority one has the
    /// writer there yield at its next preemption point.
    fn kthread_woken(&mut self, task: TaskId, idle: Option<u32>, cpu: u32, highpri: bool) {
        fn on_cpu(sim: &mut Sim, task: TaskId) -> &mut crate::cpupool::KthreadCpu {
            if task == TASK_DIO {
                sim.dio.on_cpu_mut()
            } else {
                sim.ioend.on_cpu_mut()
            }
        }
        match idle {
            Some(idle_cpu) => {
                let now = self.now;
                on_cpu(self, task).got_cpu(now, idle_cpu);
                let wake = self.idle_wake(super::writer::IdleWake::Kworker { remote: false });
                self.wake_at(self.now + wake, task);
            }
            None => {
                let now = self.now;
                on_cpu(self, task).wait_for_cpu(now);
                self.kworker_runnable(task, 0, cpu);
                if highpri {
                    self.resched_curr(cpu);
                }
            }
        }
    }

    /// The CPU pool gives the loop's completion worker `cpu`: it runs at this instant.
    pub(super) fn dio_complete_granted(&mut self, cpu: u32) {
        self.counters.dio_time_ns[1] += self.dio.on_cpu_mut().got_cpu(self.now, cpu);
        self.wake(TASK_DIO);
    }

    /// `iomap_dio_complete_work` on its CPU: the completion whose CPU time is over completes
    /// its request; then the next takes its CPU time (`DIO_COMPLETE_NS`, and `XFS_BUF_IOEND_NS`
    /// for a metadata buffer's), in the order the host disk completed them; with none left the
    /// worker sleeps and gives its CPU up.
    /// Model: a metadata buffer's completion work runs in this worker's turn, not as a task of
    /// its own; each buffer is a request of its own (the kernel merges adjacent ones).
    pub(super) fn dio_complete_work(&mut self) {
        use super::sched::{DIO_COMPLETE_NS, XFS_BUF_IOEND_NS};
        debug_assert!(self.dio.on_cpu().cpu().is_some(), "the loop's completion runs on a CPU");
        if let Some((dev, id, tag)) = self.dio.take_running() {
            self.bio_endio(dev as usize, id, tag);
        }
        if let Some(tag) = self.dio.run_next() {
            // A metadata buffer's completion work runs next on this CPU (`xfs-buf`, per CPU).
            let buf = matches!(IoTag::unpack(tag), IoTag::Meta { .. }) as Ns * XFS_BUF_IOEND_NS;
            let ns = DIO_COMPLETE_NS + buf;
            self.counters.dio_time_ns[0] += DIO_COMPLETE_NS;
            self.counters.buf_ioend_time_ns += buf;
            self.cpus.charge(TASK_DIO, ns);
            return self.wake_at(self.now + ns, TASK_DIO);
        }
        if let Some(cpu) = self.dio.on_cpu_mut().take_cpu() {
            self.cpu_release(cpu);
        }
    }

    /// `xlog_state_done_syncing` and `xlog_state_do_callback`: ring-order completion.
    fn iclog_done(&mut self, i: usize) {
        self.xlog_state_done_syncing(i);
        while let Some(j) = self.log.next_callback_iclog() {
            self.trace_iclog(TASK_IOEND, IclogEvent::Callback, j);
            let cbs = self.log.xlog_take_callbacks(j);
            self.xlog_state_do_iclog_callbacks(j, cbs);
        }
        self.xlog_ioend_done();
    }

    /// `xlog_state_done_syncing`: iclog `i` is written; its `ic_write_wait` sleepers wake
    /// (how many: returned).
    fn xlog_state_done_syncing(&mut self, i: usize) -> usize {
        let write_waiters = self.log.xlog_state_done_syncing(i);
        self.trace_iclog(TASK_IOEND, IclogEvent::SyncDone, i);
        let n = write_waiters.len();
        for t in write_waiters {
            self.wake(t);
        }
        n
    }

    /// Iclog `j`'s callbacks (checkpoints `cbs`), then it is clean: iclogs from the head
    /// become active, and its force waiters wake (how many: returned).
    fn xlog_state_do_iclog_callbacks(&mut self, j: usize, cbs: Vec<u32>) -> usize {
        let had = !cbs.is_empty();
        for c in cbs {
            self.check_checkpoint_stable(c, j);
            self.xlog_cil_committed(c);
        }
        if had {
            self.grant_push_ail(0);
        }
        self.trace_iclog(TASK_IOEND, IclogEvent::Clean, j);
        for a in self.log.xlog_state_clean_iclog(j) {
            self.trace_iclog(TASK_IOEND, IclogEvent::Activate, a);
        }
        let force_waiters = self.log.xlog_force_wait_wake(j);
        let n = force_waiters.len();
        for t in force_waiters {
            self.wake(t);
        }
        n
    }

    /// The end of a completion's callbacks: the tail moves on, and those waiting for log
    /// space or for an iclog wake (how many for an iclog: returned).
    fn xlog_ioend_done(&mut self) -> usize {
        self.assign_tail(TASK_IOEND);
        self.xfs_log_space_wake();
        let flush_waiters = self.log.xlog_flush_wait_wake();
        let n = flush_waiters.len();
        for t in flush_waiters {
            self.wake(t);
        }
        n
    }

    /// `xlog_end_io` with `cpu_model=kernel`: iclog `i`'s completion work is queued, and the
    /// worker, asleep, wakes: on an idle CPU (woken by the completion's interrupt there), else
    /// runnable in front of the writers, the one running there to give it the CPU at its next
    /// preemption point (`xfs-log` is a high-priority workqueue: its runs were never seen
    /// runnable for long, docs/kernel.md).
    /// Model: it wakes on the CPU it last ran on, or with a loop device's completions on the
    /// pool, on theirs (it is bound there).
    fn xlog_ioend_queue(&mut self, i: usize) {
        if !self.ioend.queue_work(i) {
            return;
        }
        // Bound to the CPU its bio completes on (the loop's completion worker's), if it is.
        let (last, idle) = match self.cpus.bound_cpu(TASK_IOEND) {
            Some(b) => (b, self.cpus.take_cpu_if_idle(b).then_some(b)),
            None => {
                let last = self.ioend.on_cpu().last_cpu();
                (last, self.cpus.select_idle_cpu(last))
            }
        };
        self.kthread_woken(TASK_IOEND, idle, last, true);
    }

    /// The CPU pool gives the completion worker `cpu`: it runs at this instant.
    pub(super) fn xlog_ioend_granted(&mut self, cpu: u32) {
        self.counters.ioend_log_time_ns[1] += self.ioend.on_cpu_mut().got_cpu(self.now, cpu);
        self.wake(TASK_IOEND);
    }

    /// `xlog_ioend_work` on its CPU (`cpu_model=kernel`): the callbacks whose CPU time is over
    /// take effect; then the next iclog ready for callbacks in ring order takes its CPU time
    /// (`XLOG_IOEND_NS`, and `XLOG_IOEND_NS_PER_ITEM` a log item of its checkpoints), taking
    /// the done iclogs in turn; with none left the worker sleeps and gives its CPU up.
    /// Each task it wakes costs `XLOG_IOEND_NS_PER_WAKEUP` more before it goes on.
    /// Model: an iclog's callbacks take effect together at the end of their CPU time (the
    /// kernel puts items in the AIL in batches of 32 as it goes), and the tail and the space
    /// waiters are seen to after each iclog's; the grant head's sleepers it wakes cost nothing.
    pub(super) fn xlog_ioend_work(&mut self) {
        use super::sched::{XLOG_IOEND_NS, XLOG_IOEND_NS_PER_ITEM, XLOG_IOEND_NS_PER_WAKEUP};
        debug_assert!(self.ioend.on_cpu().cpu().is_some(), "the log's I/O completion runs on a CPU");
        let mut woken = 0;
        if let Some((j, cbs)) = self.ioend.take_running() {
            woken += self.xlog_state_do_iclog_callbacks(j, cbs);
            woken += self.xlog_ioend_done();
        }
        loop {
            if woken > 0 {
                return self.xlog_ioend_busy(XLOG_IOEND_NS_PER_WAKEUP * woken as u64);
            }
            if let Some(j) = self.log.next_callback_iclog() {
                self.trace_iclog(TASK_IOEND, IclogEvent::Callback, j);
                let cbs = self.log.xlog_take_callbacks(j);
                let items: usize = cbs.iter().map(|&c| self.checkpoint_items(c)).sum();
                self.ioend.run_callbacks(j, cbs);
                return self.xlog_ioend_busy(XLOG_IOEND_NS + XLOG_IOEND_NS_PER_ITEM * items as u64);
            }
            match self.ioend.next_done() {
                Some(i) => woken += self.xlog_state_done_syncing(i),
                None => break,
            }
        }
        if let Some(cpu) = self.ioend.on_cpu_mut().take_cpu() {
            self.cpu_release(cpu);
        }
    }

    /// The completion worker runs `ns` on the CPU it holds, then goes on.
    fn xlog_ioend_busy(&mut self, ns: Ns) {
        self.counters.ioend_log_time_ns[0] += ns;
        self.cpus.charge(TASK_IOEND, ns);
        self.wake_at(self.now + ns, TASK_IOEND);
    }

    /// Log items in checkpoint `c`'s committing context.
    fn checkpoint_items(&self, c: u32) -> usize {
        let seq = self.history.get(c).expect("a completing checkpoint is never folded").sequence;
        let ctx = self.cil.committing().iter().find(|x| x.sequence() == seq);
        ctx.expect("a checkpoint's callbacks find its committing context").items().len()
    }

    /// Tells the monitor a checkpoint completes: its log blocks end with the commit iclog.
    fn check_checkpoint_stable(&mut self, c: u32, commit_iclog: usize) {
        let ic = self.log.iclog(commit_iclog);
        let (count, _) = crate::iclog::xlog_calc_iclog_size(&self.geo, ic.offset());
        let end = ic.lsn().linear(self.geo.log_bb) + count as u64 / BBSIZE as u64;
        let ck = self.history.get(c).expect("a completing checkpoint is never folded");
        self.monitor.checkpoint_completed(ck, end, self.devs[0].stable(), self.log_start);
    }

    /// `xlog_cil_committed`: AIL insertion at the checkpoint's start LSN, unpin.
    fn xlog_cil_committed(&mut self, c: u32) {
        self.counters.checkpoints += 1;
        self.counters.flushes_at_checkpoint = self.devs.iter().map(|d| d.stats().flushes).sum();
        let ck = self.history.get_mut(c).expect("a completing checkpoint is never folded");
        ck.completed = true;
        let (start, seq) = (ck.start_lsn, ck.sequence);
        let ctx = self.cil.remove_committing(seq).expect("completing a committing context");
        self.emit(TASK_IOEND, TraceKind::CheckpointDone { ckpt: c, start });
        if self.devs[0].recording() {
            self.devs[0].note(crate::device::DevIo::Mark(format!("checkpoint-{c}")));
        }
        let mut freed = false;
        let was_empty = self.ail.is_empty();
        for &id in ctx.items().keys() {
            let old = self.ail.lsn(id).unwrap_or(Lsn::ZERO);
            if matches!(self.ail.update(id, start), AilUpdate::Insert | AilUpdate::Move { .. }) {
                let inode = self.items[id as usize].kind().is_inode();
                self.emit(TASK_IOEND, TraceKind::AilInsert { item: id, inode, old, new: start });
            }
            let item = &mut self.items[id as usize];
            let pins = item.iop_unpin();
            // xfs_buf_item_unpin: a stale buffer's last unpin takes it out of the AIL
            // without writeback (the block is free; its cancel record keeps recovery off it).
            if pins == 0 && item.kind().is_stale() {
                if let Some(lsn) = self.ail.lsn(id) {
                    self.ail.delete(id);
                    self.emit(TASK_IOEND, TraceKind::AilDelete { item: id, inode: false, lsn });
                    freed = true;
                }
            }
        }
        if freed {
            self.assign_tail(TASK_IOEND);
            self.xfs_log_space_wake();
        }
        // 6.11+ `xfs_trans_ail_update_bulk`: the first insert wakes xfsaild, which then looks
        // again every 50 ms while the AIL holds items.
        if was_empty && !self.ail.is_empty() && self.scenario.ail_push == AilPush::Upstream {
            self.wake_aild();
        }
        if self.fold_batch > 0 {
            // An fsync workload folds only acknowledged checkpoints: `ack_fsync` searches above them.
            let limit = if self.scenario.fsync { self.history.acked } else { u32::MAX };
            self.history.fold_behind(self.log.curr_lsn(), limit, self.fold_batch);
        }
    }

    /// `xlog_force_iclog`: reference, flags, switch if ACTIVE, release.
    pub(super) fn xlog_force_iclog(&mut self, task: u32, i: usize, flags: u32) {
        self.log.iclog_hold(i);
        self.log.iclog_set_flags(i, flags);
        self.trace_iclog(task, IclogEvent::Force, i);
        if self.log.iclog(i).state() == IclogState::Active {
            self.log.xlog_state_switch_iclogs(i, 0);
            self.trace_iclog(task, IclogEvent::Switch, i);
        }
        if self.log.xlog_state_release_iclog(i) {
            self.xlog_sync(task, i, None);
        }
    }

    /// `xfs_log_force(mp, 0)` without waiting: push the CIL with its commit iclog made
    /// stable (`xlog_cil_flush`), and push the head iclog out.
    pub(super) fn xfs_log_force_async(&mut self, task: u32) {
        self.counters.log_forces += 1;
        self.emit(task, TraceKind::LogForce { lsn: Lsn::ZERO });
        if !self.cil.ctx().items().is_empty() {
            self.cil.set_push_commit_stable();
            if self.cil.request_push(self.cil.ctx().sequence()) {
                self.queue_push();
            }
        }
        let mut i = self.log.l_iclog();
        let ic = self.log.iclog(i);
        if ic.state() == IclogState::Dirty || (ic.state() == IclogState::Active && ic.refcnt() == 0 && ic.offset() == 0)
        {
            i = self.log.prev(i);
        }
        let flags = XLOG_ICL_NEED_FLUSH | XLOG_ICL_NEED_FUA;
        let ic = self.log.iclog(i);
        match ic.state() {
            IclogState::Active if ic.offset() > 0 && ic.refcnt() == 0 => self.xlog_force_iclog(task, i, flags),
            IclogState::Active if ic.offset() > 0 => {
                self.log.xlog_state_switch_iclogs(i, 0);
                self.trace_iclog(task, IclogEvent::Switch, i);
                self.log.iclog_set_flags(i, flags);
            }
            IclogState::WantSync => self.log.iclog_set_flags(i, flags),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::sched::{XLOG_IOEND_NS, XLOG_IOEND_NS_PER_ITEM, XLOG_IOEND_NS_PER_WAKEUP};
    use crate::format::{self, rh};
    use crate::presets::find;
    use crate::scenario::Duration;
    use crate::sim::{CpuTask, Sim, WriterState};
    use crate::trace::{IclogEvent, TraceKind};
    use crate::units::NS_PER_MS;
    use crate::units::{BBSIZE, XLOG_HEADER_MAGIC_NUM};

    #[test]
    fn records_leave_their_crc_pending_and_settling_stamps_what_xlog_cksum_computes() {
        let s = crate::presets::find("small-crash").unwrap();
        let mut sim = super::Sim::new(&s).unwrap();
        sim.run_until(20_000_000);
        assert!(sim.crcs_pending() > 0, "a run stamps no CRC on its own");
        let before = sim.clone();
        sim.settle_crcs();
        assert_eq!(sim.crcs_pending(), 0);
        // Settling changes what the media hold, not what happened.
        assert_eq!(sim.metrics().trace_hash, before.metrics().trace_hash);
        let log = sim.log_region();
        let bb = BBSIZE as usize;
        let mut checked = 0;
        for b in (0..log.len() / bb).filter(|&b| format::be32(&log, b * bb) == XLOG_HEADER_MAGIC_NUM) {
            let h_len = format::be32(&log, b * bb + rh::LEN) as usize;
            let sectors = 1 + h_len.div_ceil(bb);
            if b + sectors > log.len() / bb {
                continue; // wraps the log end: stamped at once, checked by recovery
            }
            let rec = &log[b * bb..(b + sectors) * bb];
            let crc = u32::from_le_bytes(rec[rh::CRC..rh::CRC + 4].try_into().unwrap());
            assert_eq!(crc, format::xlog_cksum(rec, 1, h_len), "record at block {b}");
            assert_ne!(crc, 0);
            checked += 1;
        }
        assert!(checked > 10, "{checked} records");
        // log_region settles a copy: the unsettled run reads the same.
        assert_eq!(before.log_region(), log);
    }

    /// With `cpu_model=kernel` an iclog's completion work runs its callbacks on a CPU before
    /// the iclog is clean: `XLOG_IOEND_NS`, and `XLOG_IOEND_NS_PER_ITEM` for each log item its
    /// checkpoints put in the AIL (one `AilInsert` each); the rest of its CPU time is
    /// `XLOG_IOEND_NS_PER_WAKEUP` a task it woke (on `fsync-heavy`, the fsync waiting on nearly
    /// every iclog), for which it keeps its CPU before it goes on. By default an iclog is clean
    /// at once and the completions take no CPU.
    #[test]
    fn an_iclogs_callbacks_take_cpu_time_before_it_is_clean_with_the_kernel_cpu_model() {
        for (preset, min_items, min_wakeups) in [("fsmark-create", 10_000, 0), ("fsync-heavy", 100, 100)] {
            for kernel in [true, false] {
                let mut s = find(preset).unwrap();
                s.set("cpus", "2").unwrap();
                s.set("cpu_model", if kernel { "kernel" } else { "writers" }).unwrap();
                s.duration = Duration(400 * NS_PER_MS);
                let mut sim = Sim::new(&s).unwrap();
                let (mut began, mut inserted) = (None, 0u64);
                let (mut cleaned, mut items, mut callbacks_ns, mut force_waiters) = (0, 0, 0, 0);
                // Until when the worker is busy with the wakeups of the last iclog it cleaned.
                let mut hold_until = 0;
                while let Some(events) = sim.step() {
                    let mut clean = None;
                    for e in events {
                        match e.kind {
                            TraceKind::Iclog { event: IclogEvent::Callback | IclogEvent::SyncDone, .. }
                                if e.t_ns < hold_until =>
                            {
                                panic!(
                                    "{preset}: the worker went on at {} before its wakeups ended at {hold_until}",
                                    e.t_ns
                                )
                            }
                            TraceKind::Iclog { event: IclogEvent::Callback, iclog, .. } => {
                                assert!(began.is_none(), "one iclog's callbacks at a time");
                                (began, inserted) = (Some((iclog, e.t_ns)), 0);
                            }
                            TraceKind::AilInsert { .. } => inserted += 1,
                            TraceKind::Iclog { event: IclogEvent::Clean, iclog, .. } => {
                                let (i, t0) = began.take().expect("callbacks before clean");
                                assert_eq!(i, iclog);
                                let cpu = if kernel { XLOG_IOEND_NS + XLOG_IOEND_NS_PER_ITEM * inserted } else { 0 };
                                assert_eq!(e.t_ns - t0, cpu, "{preset} kernel={kernel}: iclog {i}, {inserted} items");
                                (cleaned, items, callbacks_ns) = (cleaned + 1, items + inserted, callbacks_ns + cpu);
                                clean = Some((iclog, e.t_ns));
                            }
                            _ => {}
                        }
                    }
                    if sim.now() < hold_until {
                        let held = sim.cpus_view().unwrap().running.contains(&Some(CpuTask::LogIoEnd));
                        assert!(held, "{preset}: the worker gave its CPU up at {} within its wakeups", sim.now());
                    }
                    // The log forces it woke have not run yet.
                    if let Some((i, t)) = clean {
                        let forcing =
                            |w| matches!(sim.writer_state(w), Some(WriterState::ForceWait { iclog }) if iclog == i);
                        let woken = (0..s.writers).filter(|&w| forcing(w)).count() as u64;
                        force_waiters += woken;
                        hold_until = if kernel { t + XLOG_IOEND_NS_PER_WAKEUP * woken } else { 0 };
                    }
                }
                assert!(
                    cleaned > 100 && items > min_items,
                    "{preset} kernel={kernel}: {cleaned} iclogs, {items} items"
                );
                let m = sim.metrics();
                let wakeup_ns = (m.iclog_ioend_ms_cpu * 1e6).round() as u64 - callbacks_ns;
                assert_eq!(wakeup_ns % XLOG_IOEND_NS_PER_WAKEUP, 0, "{preset} kernel={kernel}: {wakeup_ns} ns");
                let wakeups = wakeup_ns / XLOG_IOEND_NS_PER_WAKEUP;
                assert!(
                    !kernel || (wakeups >= force_waiters && force_waiters >= min_wakeups),
                    "{preset}: {wakeups} wakeups, {force_waiters} log forces woken, {cleaned} iclogs"
                );
                assert!(kernel || m.iclog_ioend_ms_cpu == 0.0, "{preset}: {}", m.iclog_ioend_ms_cpu);
                if preset == "fsmark-create" {
                    // Two CPUs busy with creates: a completion often waits for the writer's
                    // next preemption point.
                    assert_eq!(m.iclog_ioend_ms_cpu_wait > 0.0, kernel, "{}", m.iclog_ioend_ms_cpu_wait);
                }
            }
        }
    }

    /// With `cpu_model=kernel` on `vm-disk`, every write the host disk has done reaches the
    /// block layer through the loop's completion work, bound to the last CPU: `DIO_COMPLETE_NS`
    /// a write, and `XFS_BUF_IOEND_NS` more for a metadata buffer's; it and the log's I/O
    /// completion work, which it queues there, only ever run on that CPU. By default, or on a
    /// device that completes in its interrupt, none of it takes CPU time.
    #[test]
    fn a_loop_devices_writes_complete_on_the_cpu_its_host_disk_interrupts() {
        use super::super::sched::{DIO_COMPLETE_NS, XFS_BUF_IOEND_NS};
        for (device, model, on_cpu) in
            [("vm-disk", "kernel", true), ("vm-disk", "writers", false), ("nvme", "kernel", false)]
        {
            let mut s = find("fsmark-create").unwrap();
            for (k, v) in [("cpus", "2"), ("cpu_model", model), ("device", device)] {
                s.set(k, v).unwrap();
            }
            s.duration = Duration(300 * NS_PER_MS);
            let mut sim = Sim::new(&s).unwrap();
            let (mut dio_seen, mut ioend_seen) = (0, 0);
            // The writes submitted (log and data), and how many completed while the loop's
            // completion worker held CPU 1 just before: all of them when it delivers them.
            let (mut writes_in_flight, mut delivered, mut by_worker) = (std::collections::BTreeSet::new(), 0, 0);
            let mut worker_held = false;
            while let Some(events) = sim.step() {
                for e in events {
                    match e.kind {
                        TraceKind::DevSubmit { dev, id, flush: false, read: false, .. } => {
                            writes_in_flight.insert((dev, id));
                        }
                        TraceKind::DevComplete { dev, id } if writes_in_flight.remove(&(dev, id)) => {
                            delivered += 1;
                            by_worker += worker_held as u32;
                        }
                        _ => {}
                    }
                }
                let running = sim.cpus_view().unwrap().running;
                worker_held = running[1] == Some(CpuTask::LoopIoEnd);
                for (cpu, t) in running.iter().enumerate() {
                    let (dio, ioend) = (*t == Some(CpuTask::LoopIoEnd), *t == Some(CpuTask::LogIoEnd));
                    assert!(!(dio || ioend && on_cpu) || cpu == 1, "{device} {model}: {t:?} on CPU {cpu}");
                    (dio_seen, ioend_seen) = (dio_seen + dio as u32, ioend_seen + ioend as u32);
                }
            }
            let m = sim.metrics();
            let (writes, meta) = (m.device_writes, m.metadata_writes);
            assert!(writes > 1_000 && meta > 500, "{device} {model}: {writes} writes, {meta} metadata");
            let ns = |ms: f64| (ms * 1e6).round() as u64;
            let cpu_ns = (ns(m.dio_complete_ms_cpu), ns(m.buf_ioend_ms_cpu));
            let want = if on_cpu { (writes * DIO_COMPLETE_NS, meta * XFS_BUF_IOEND_NS) } else { (0, 0) };
            assert_eq!(cpu_ns, want, "{device} {model}: {writes} writes, {meta} metadata");
            // Two CPUs busy with creates: the completions wait for their CPU.
            assert_eq!(m.dio_complete_ms_cpu_wait > 0.0, on_cpu, "{device} {model}: {}", m.dio_complete_ms_cpu_wait);
            assert_eq!(dio_seen > 0, on_cpu, "{device} {model}");
            assert!(delivered > 100, "{device} {model}: {delivered}");
            assert_eq!(by_worker, if on_cpu { delivered } else { 0 }, "{device} {model}: of {delivered}");
            assert!(ioend_seen > 0 || model == "writers", "{device} {model}");
        }
    }
}
