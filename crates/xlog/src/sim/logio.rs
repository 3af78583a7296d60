//! Log I/O: `xlog_sync` and the flush policies, completion in ring order, checkpoint
//! callbacks, log forces and the tail.

use super::{Sim, TAG_ICLOG, TAG_ICLOG_DATA_FLUSH, TAG_MASK, TAG_META, TAG_PUSH_FLUSH, TASK_IOEND};
use crate::ail::AilUpdate;
use crate::grant::xlog_grant_push_threshold;
use crate::iclog::{xlog_pack_record, IclogState, Record, XLOG_ICL_NEED_FLUSH, XLOG_ICL_NEED_FUA};
use crate::scenario::{FlushPolicy, TailUpdate};
use crate::trace::{IclogEvent, TraceKind};
use crate::units::Lsn;

impl Sim {
    /// `xlog_assign_tail_lsn`: lowest AIL LSN, or the last synced LSN when the AIL is empty.
    pub(crate) fn assign_tail(&mut self, task: u32) -> Lsn {
        let new = self.ail.min_lsn().unwrap_or(self.log.last_sync_lsn);
        let old = self.log.tail_lsn;
        if new != old {
            self.log.tail_lsn = new;
            let last_sync = self.log.last_sync_lsn;
            self.emit(task, TraceKind::AssignTail { new, old, last_sync });
        }
        new
    }

    /// `xlog_grant_push_ail`: ask xfsaild to move the tail when free space runs short.
    pub(crate) fn grant_push_ail(&mut self, need: u32) {
        let (head, tail, last) = (self.log.reserve_head, self.log.tail_lsn, self.log.last_sync_lsn);
        if let Some(target) = xlog_grant_push_threshold(&self.geo, head, tail, last, need) {
            if self.ail.push(target) {
                self.wake_aild();
            }
        }
    }

    /// `xfs_log_space_wake`: wake grant waiters that now fit.
    pub(crate) fn xfs_log_space_wake(&mut self) {
        if !self.log.reserve_waiters.is_empty() {
            self.grant_head_wake();
        }
    }

    /// Where the policy stamps `h_tail_lsn` when an iclog is released: upstream (and the
    /// fixed 5.14 code) on the first release that is WANT_SYNC or carries NEED_FUA.
    pub(crate) fn stamp_tail_on_release(&mut self, i: usize) {
        let early = match self.scenario.flush {
            FlushPolicy::Upstream => true,
            FlushPolicy::V514 => self.scenario.tail_update == TailUpdate::Fixed,
            FlushPolicy::Legacy | FlushPolicy::SeriesV1 => false,
        };
        let ic = &self.log.iclogs[i];
        if early && ic.tail_lsn.is_zero() && (ic.state == IclogState::WantSync || ic.flags & XLOG_ICL_NEED_FUA != 0) {
            let tail = self.assign_tail(TASK_IOEND);
            self.log.iclogs[i].tail_lsn = tail;
        }
    }

    /// `xlog_sync`: stamp the tail, pack the record, charge roundoff, choose flags, submit.
    /// `payer` is the checkpoint whose ticket pays the roundoff (6.x), else the grant heads.
    pub(crate) fn xlog_sync(&mut self, i: usize, payer: Option<u64>) {
        self.stamp_tail_on_release(i);
        if self.log.iclogs[i].tail_lsn.is_zero() {
            let tail = self.assign_tail(TASK_IOEND);
            self.log.iclogs[i].tail_lsn = tail;
        }
        let tail = self.log.iclogs[i].tail_lsn;
        self.history.records.push((self.log.iclogs[i].lsn, tail));
        let rec = xlog_pack_record(&self.geo, &self.log.iclogs[i], &self.uuid);
        // No overwrite of the live log: the record must end within one log size of the tail.
        let log_bb = self.geo.log_bb;
        let end = self.log.iclogs[i].lsn.linear(log_bb) + rec.bytes.len() as u64 / 512;
        if end > tail.linear(log_bb) + log_bb as u64 {
            self.live_overwrites += 1;
        }
        let payer = payer.filter(|s| self.cil.committing.iter().any(|c| c.sequence == *s && c.ticket.curr_res != 0));
        match payer {
            Some(seq) => self.charge_ctx(seq, rec.roundoff as i64),
            None => {
                let lb = self.geo.log_bytes;
                self.log.reserve_head.add(lb, rec.roundoff);
                self.log.write_head.add(lb, rec.roundoff);
            }
        }
        self.counters.iclog_writes += 1;
        self.counters.log_blocks += rec.bytes.len() as u64 / 512;
        self.counters.bytes_logged += rec.bytes.len() as u64;
        self.trace_iclog(TASK_IOEND, IclogEvent::Sync, i);
        let flags = self.log.iclogs[i].flags;
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
            self.pending_records[i] = Some((rec, preflush, fua));
            self.submit_data_flush(TASK_IOEND, TAG_ICLOG_DATA_FLUSH | i as u64);
            return;
        }
        self.submit_record(i, rec, preflush, fua);
    }

    /// A flush of the data device went out as request `id`: it covers the tail as it is now.
    fn data_flush_submitted(&mut self, id: u64) {
        self.tail_at_data_flush = self.log.tail_lsn;
        self.flush_tails.insert(id, self.log.tail_lsn);
    }

    /// Issues a cache flush on the data device; its completion is routed by `tag`.
    pub(crate) fn submit_data_flush(&mut self, task: u32, tag: u64) {
        let dd = self.data_dev;
        let (id, done) = self.devs[dd].submit_flush(self.now, tag);
        self.data_flush_submitted(id);
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

    fn submit_record(&mut self, i: usize, rec: Record, preflush: bool, fua: bool) {
        let tag = TAG_ICLOG | i as u64;
        let base = self.log_start;
        let mut parts = Vec::with_capacity(2);
        match rec.split_bb {
            Some(split) => {
                let cut = split as usize * 512;
                parts.push((base + rec.bno as u64, rec.bytes[..cut].to_vec()));
                parts.push((base, rec.bytes[cut..].to_vec()));
            }
            None => parts.push((base + rec.bno as u64, rec.bytes)),
        }
        self.log.iclogs[i].io_pending = parts.len() as u32;
        let ic = &self.log.iclogs[i];
        // On an internal log a PREFLUSH write is also the data device's flush.
        let flushes_data = preflush && self.data_dev == 0;
        if !flushes_data && ic.tail_lsn > self.tail_at_data_flush {
            self.counters.records_tail_uncovered += 1;
            self.counters.commit_iclogs_tail_uncovered += !ic.callbacks.is_empty() as u64;
        }
        // Brian's race: without its own PREFLUSH a log write may reach media before any flush
        // still in flight, so the blocks it overwrites must be behind a completed flush's tail.
        if !preflush && self.devs[self.data_dev].profile.volatile_cache {
            let log_bb = self.geo.log_bb;
            let blocks: u64 = parts.iter().map(|p| p.1.len() as u64 / 512).sum();
            if ic.lsn.linear(log_bb) + blocks > self.tail_flushed.linear(log_bb) + log_bb as u64 {
                self.counters.log_overwrites_unflushed += 1;
            }
        }
        self.trace_iclog(TASK_IOEND, IclogEvent::Write, i);
        for (sector, data) in parts {
            let bytes = data.len() as u32;
            let (id, done) = self.devs[0].submit_write(self.now, sector, data, preflush, fua, tag);
            if flushes_data {
                self.data_flush_submitted(id);
            }
            self.emit(
                TASK_IOEND,
                TraceKind::DevSubmit { dev: 0, id, sector, bytes, preflush, fua, flush: false, read: false },
            );
            self.io_at(done, 0, id);
        }
    }

    pub(crate) fn io_done(&mut self, dev: usize, id: u64) {
        let req = self.devs[dev].complete(id);
        if dev == self.data_dev {
            if let Some(t) = self.flush_tails.remove(&id) {
                self.tail_flushed = self.tail_flushed.max(t);
            }
        }
        self.emit(TASK_IOEND, TraceKind::DevComplete { dev: dev as u8, id });
        let v = req.tag & TAG_MASK;
        match req.tag & !TAG_MASK {
            TAG_ICLOG => {
                let i = v as usize;
                self.log.iclogs[i].io_pending -= 1;
                if self.log.iclogs[i].io_pending == 0 {
                    self.iclog_done(i);
                }
            }
            TAG_ICLOG_DATA_FLUSH => {
                let i = v as usize;
                let (rec, preflush, fua) = self.pending_records[i].take().expect("record waits for the data flush");
                self.submit_record(i, rec, preflush, fua);
            }
            TAG_META => self.meta_done(v as u32),
            TAG_PUSH_FLUSH => self.wake(super::TASK_PUSH_BASE + v as u32),
            super::TAG_DATA | super::TAG_READ => self.wake(v as u32),
            _ => {}
        }
    }

    /// `xlog_state_done_syncing` and `xlog_state_do_callback`: ring-order completion.
    fn iclog_done(&mut self, i: usize) {
        self.log.set_state(i, IclogState::DoneSync);
        self.trace_iclog(TASK_IOEND, IclogEvent::SyncDone, i);
        for t in std::mem::take(&mut self.write_wait[i]) {
            self.wake(t);
        }
        while let Some(j) = self.log.next_callback_iclog() {
            self.trace_iclog(TASK_IOEND, IclogEvent::Callback, j);
            let cbs = std::mem::take(&mut self.log.iclogs[j].callbacks);
            let had = !cbs.is_empty();
            for c in cbs {
                self.check_checkpoint_stable(c, j);
                self.checkpoint_done(c);
            }
            if had {
                self.grant_push_ail(0);
            }
            self.trace_iclog(TASK_IOEND, IclogEvent::Clean, j);
            for a in self.log.clean_iclog(j) {
                self.trace_iclog(TASK_IOEND, IclogEvent::Activate, a);
            }
            for t in std::mem::take(&mut self.force_wait[j]) {
                self.wake(t);
            }
        }
        self.assign_tail(TASK_IOEND);
        self.xfs_log_space_wake();
        if self.log.iclogs[self.log.head].state == IclogState::Active {
            for t in std::mem::take(&mut self.log.flush_wait) {
                self.wake(t);
            }
        }
    }

    /// Commit implies checkpoint: when a checkpoint completes (its items are about to be
    /// unpinned), every log block from its start record to the end of its commit record must
    /// be on stable media with the cycle it was written in.
    fn check_checkpoint_stable(&mut self, c: u32, commit_iclog: usize) {
        let ck = &self.history.checkpoints[c as usize];
        let log_bb = self.geo.log_bb as u64;
        let ic = &self.log.iclogs[commit_iclog];
        let (count, _) = crate::iclog::xlog_calc_iclog_size(&self.geo, ic.offset);
        let (from, to) = (ck.start_lsn.linear(self.geo.log_bb), ic.lsn.linear(self.geo.log_bb) + count as u64 / 512);
        let stable = self.devs[0].stable();
        let ok = (from..to).all(|p| {
            let sector = self.log_start + p % log_bb;
            stable.get(sector).is_some_and(|s| crate::format::sector_cycle(s) as u64 == p / log_bb)
        });
        if !ok {
            self.ckpt_unstable_at_completion += 1;
        }
    }

    /// `xlog_cil_committed`: AIL insertion at the checkpoint's start LSN, unpin.
    fn checkpoint_done(&mut self, c: u32) {
        self.counters.checkpoints += 1;
        self.counters.flushes_at_checkpoint = self.devs.iter().map(|d| d.stats.flushes).sum();
        let ck = &mut self.history.checkpoints[c as usize];
        ck.completed = true;
        let (start, seq) = (ck.start_lsn, ck.sequence);
        let pos = self.cil.committing.iter().position(|x| x.sequence == seq).expect("completing a committing context");
        let ctx = self.cil.committing.remove(pos);
        self.emit(TASK_IOEND, TraceKind::CheckpointDone { ckpt: c, start });
        self.devs[0].note(crate::device::DevIo::Mark(format!("checkpoint-{c}")));
        let mut freed = false;
        for &id in ctx.items.keys() {
            let old = self.ail.lsn(id).unwrap_or(Lsn::ZERO);
            if matches!(self.ail.update(id, start), AilUpdate::Insert | AilUpdate::Move { .. }) {
                let inode = self.items[id as usize].kind.is_inode();
                self.emit(TASK_IOEND, TraceKind::AilInsert { item: id, inode, old, new: start });
            }
            let item = &mut self.items[id as usize];
            item.pinned -= 1;
            // xfs_buf_item_unpin: a stale buffer's last unpin takes it out of the AIL
            // without writeback (the block is free; its cancel record keeps recovery off it).
            if item.pinned == 0 && item.kind.is_stale() {
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
    }

    /// `xlog_force_iclog`: reference, flags, switch if ACTIVE, release.
    pub(crate) fn xlog_force_iclog(&mut self, task: u32, i: usize, flags: u32) {
        self.log.iclogs[i].refcnt += 1;
        self.log.iclogs[i].flags |= flags;
        self.trace_iclog(task, IclogEvent::Force, i);
        if self.log.iclogs[i].state == IclogState::Active {
            self.log.switch_iclogs(i, 0);
            self.trace_iclog(task, IclogEvent::Switch, i);
        }
        if self.log.release_iclog(i) {
            self.xlog_sync(i, None);
        }
    }

    /// `xfs_log_force(mp, 0)` without waiting: push the CIL with its commit iclog made
    /// stable (`xlog_cil_flush`), and push the head iclog out.
    pub(crate) fn xfs_log_force_async(&mut self, task: u32) {
        self.counters.log_forces += 1;
        self.emit(task, TraceKind::LogForce { lsn: Lsn::ZERO });
        if !self.cil.ctx.items.is_empty() {
            self.cil.push_commit_stable = true;
            if self.cil.push_seq < self.cil.ctx.sequence {
                self.cil.push_seq = self.cil.ctx.sequence;
                self.queue_push();
            }
        }
        let mut i = self.log.head;
        let ic = &self.log.iclogs[i];
        if ic.state == IclogState::Dirty || (ic.state == IclogState::Active && ic.refcnt == 0 && ic.offset == 0) {
            i = self.log.prev(i);
        }
        let flags = XLOG_ICL_NEED_FLUSH | XLOG_ICL_NEED_FUA;
        let ic = &self.log.iclogs[i];
        match ic.state {
            IclogState::Active if ic.offset > 0 && ic.refcnt == 0 => self.xlog_force_iclog(task, i, flags),
            IclogState::Active if ic.offset > 0 => {
                self.log.switch_iclogs(i, 0);
                self.trace_iclog(task, IclogEvent::Switch, i);
                self.log.iclogs[i].flags |= flags;
            }
            IclogState::WantSync => self.log.iclogs[i].flags |= flags,
            _ => {}
        }
    }
}
