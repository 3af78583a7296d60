//! xfsaild (metadata writeback), the periodic log worker, and clean unmount.

use super::liveness::LOG_WORKER_PERIOD;
use super::tags::IoTag;
use super::tasks::{TASK_LOG_WORKER, TASK_XFSAILD};
use super::{Event, Sim};
use crate::device::ReqFlags;
use crate::format::{self, OpHeader, OP_HDR, XLOG_UNMOUNT_TRANS};
use crate::iclog::{XLOG_ICL_NEED_FLUSH, XLOG_ICL_NEED_FUA};
use crate::layout::META_BB;
use crate::trace::TraceKind;
use crate::units::{Lsn, BBSIZE, NS_PER_MS};
use rand_core::RngCore;

/// Items one xfsaild pass looks at.
const AILD_BATCH: usize = 1000;

impl Sim {
    /// One `xfsaild_push` pass: write back unpinned items at or below the target.
    pub(super) fn xfsaild_push(&mut self) {
        let batch: Vec<(Lsn, u32)> = self.ail.items_to_push().take(AILD_BATCH).collect();
        let (mut pushed, mut stuck, mut pinned) = (0u32, 0u32, false);
        for &(lsn, id) in &batch {
            let item = &self.items[id as usize];
            if item.pinned > 0 {
                stuck += 1;
                pinned = true;
                self.emit(TASK_XFSAILD, TraceKind::AilPinned { item: id, inode: item.kind.is_inode(), lsn });
                continue;
            }
            if item.flushing.is_some() {
                stuck += 1;
                continue;
            }
            let (version, daddr, inode) = (item.version, item.daddr, item.kind.is_inode());
            self.items[id as usize].flushing = Some((version, lsn));
            let block = format::meta_block(id, version, lsn, (META_BB * BBSIZE as u64) as usize);
            let dd = self.data_dev;
            let (rid, done) =
                self.devs[dd].submit_write(self.now, daddr, block, ReqFlags::PLAIN, IoTag::Meta(id).pack());
            self.note_io(dd, rid, done, IoTag::Meta(id));
            self.emit(TASK_XFSAILD, TraceKind::AilPush { item: id, inode, lsn });
            self.io_at(done, dd, rid);
            self.counters.metadata_writebacks += 1;
            pushed += 1;
            if stuck > 100 {
                break;
            }
        }
        if pinned {
            // Pinned items need their checkpoint on disk: flush the CIL (async, 5.15).
            self.xfs_log_force_async(TASK_XFSAILD);
        }
        let reached = batch.is_empty() || (pushed > 0 && stuck == 0 && batch.len() < AILD_BATCH);
        if reached && self.ail.items_to_push().all(|(_, id)| self.items[id as usize].flushing.is_some()) {
            self.aild_idle = true;
            return;
        }
        let sleep = if stuck * 10 > 9 * batch.len() as u32 { 20 } else { 10 };
        self.schedule(self.now + sleep * NS_PER_MS, Event::Aild);
    }

    /// Metadata writeback completed (into the device cache): the item leaves the AIL if it
    /// was not relogged meanwhile, and the tail may move.
    pub(super) fn meta_done(&mut self, id: u32) {
        let Some((_, lsn)) = self.items[id as usize].flushing.take() else {
            return;
        };
        if self.ail.lsn(id) == Some(lsn) {
            self.ail.delete(id);
            let inode = self.items[id as usize].kind.is_inode();
            self.emit(TASK_XFSAILD, TraceKind::AilDelete { item: id, inode, lsn });
            self.assign_tail(TASK_XFSAILD);
            self.xfs_log_space_wake();
        }
    }

    /// `xfs_log_worker`: force the log and push the whole AIL every 30 s.
    pub(super) fn log_worker(&mut self) {
        self.xfs_log_force_async(TASK_LOG_WORKER);
        if let Some(max) = self.ail.max_lsn() {
            if self.ail.push(max) {
                self.wake_aild();
            }
        }
        if !self.stopping || !self.queue.is_empty() {
            self.schedule(self.now + LOG_WORKER_PERIOD, Event::LogWorker);
        }
    }

    /// Clean unmount (`xfs_log_unmount`): drain, write every AIL item back, flush the data
    /// device, then write a lone unmount record with PREFLUSH|FUA and wait for it.
    pub fn unmount(&mut self) {
        self.drain();
        if let Some(max) = self.ail.max_lsn() {
            self.ail.push(max);
            self.wake_aild();
        }
        self.run_quiet();
        let dd = self.data_dev;
        let (id, done) = self.devs[dd].submit_flush(self.now, IoTag::None.pack());
        self.note_io(dd, id, done, IoTag::None);
        self.io_at(done, dd, id);
        self.run_quiet();
        let mut to_sync = Vec::new();
        let Some(sp) = self.log.xlog_state_get_iclog_space(OP_HDR + 8, &mut to_sync) else { return };
        debug_assert!(to_sync.is_empty() && sp.start == 0, "a drained log has an empty head iclog");
        let i = sp.iclog;
        let tid = self.rng.next_u32();
        let hdr = OpHeader { tid, len: 8, clientid: format::XFS_LOG, flags: XLOG_UNMOUNT_TRANS };
        // xfs_unmount_log_format: magic XLOG_UNMOUNT_TYPE 0x556e, padding.
        self.log.xlog_write_iovec(i, 0, &hdr, &[0x6e, 0x55, 0, 0, 0, 0, 0, 0]);
        self.log.xlog_write_done(i, OP_HDR + 8, 1);
        self.log.xlog_state_release_iclog(i);
        self.xlog_force_iclog(TASK_LOG_WORKER, i, XLOG_ICL_NEED_FLUSH | XLOG_ICL_NEED_FUA);
        self.run_quiet();
    }
}
