//! The bug detectors, apart from the code they watch: the simulator reports what happened
//! (a record submitted, a flush completed, a checkpoint completed, an fsync acknowledged)
//! and the monitor decides whether a rule was broken. Like a test oracle it only observes:
//! nothing here feeds back into the simulation.

use super::history::CheckpointRecord;
use crate::sectors::SectorMap;
use crate::units::{Lsn, Ns};
use std::collections::BTreeMap;

/// A log record going to the device, as the monitor needs to judge it.
pub(crate) struct RecordSubmit {
    pub lsn: Lsn,
    /// `h_tail_lsn` stamped in its header.
    pub tail: Lsn,
    /// Basic blocks it covers.
    pub blocks: u64,
    pub preflush: bool,
    /// Its PREFLUSH also flushes the data device (an internal log).
    pub flushes_data: bool,
    /// It carries a commit record.
    pub commit: bool,
    /// The data device has a volatile cache.
    pub volatile: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Monitor {
    log_bb: u32,
    /// Log writes that would have overwritten the live log past the tail.
    pub live_overwrites: u64,
    /// The tail when the data device last got a flush (explicit, or PREFLUSH on an internal log).
    tail_at_data_flush: Lsn,
    /// The tail at submission of each flush still in flight on the data device (by request id).
    flush_tails: BTreeMap<u64, Lsn>,
    /// The newest tail a completed data-device flush covers: metadata behind it is stable.
    tail_flushed: Lsn,
    /// Checkpoints that completed (items unpinned) before all their log blocks were stable.
    pub ckpt_unstable_at_completion: u64,
    /// fsyncs that returned while their data block was not on stable media.
    pub acked_unstable: u64,
    /// Log records written without PREFLUSH whose `h_tail_lsn` is past the tail at the data
    /// device's latest flush: the tail moved for metadata still in the volatile cache.
    pub records_tail_uncovered: u64,
    /// ... of which carry a commit record: a crash can keep it and lose that metadata.
    pub commit_iclogs_tail_uncovered: u64,
    /// Brian's race (Jan 2021): log writes without PREFLUSH that overwrite log blocks whose
    /// metadata no *completed* flush has made stable (a flush still in flight orders nothing).
    pub log_overwrites_unflushed: u64,
    /// Start records written before an older checkpoint's (concurrent pushes, unordered).
    pub start_records_unordered: u64,
    /// "Transaction log reservation overrun": a ticket went below zero.
    pub reservation_overruns: u64,
    /// (events, virtual time) of the event being run, so a first violation can say when.
    pub(crate) clock: (u64, Ns),
    /// When each of live_overwrites, ckpt_unstable_at_completion and acked_unstable first rose.
    pub first: [Option<(u64, Ns)>; 3],
}

impl Monitor {
    pub(crate) fn new(log_bb: u32) -> Monitor {
        Monitor {
            log_bb,
            live_overwrites: 0,
            tail_at_data_flush: Lsn::new(1, 0),
            flush_tails: BTreeMap::new(),
            tail_flushed: Lsn::new(1, 0),
            ckpt_unstable_at_completion: 0,
            acked_unstable: 0,
            records_tail_uncovered: 0,
            commit_iclogs_tail_uncovered: 0,
            log_overwrites_unflushed: 0,
            start_records_unordered: 0,
            reservation_overruns: 0,
            clock: (0, 0),
            first: [None; 3],
        }
    }

    fn note_first(&mut self, k: usize) {
        self.first[k].get_or_insert(self.clock);
    }

    /// `xlog_sync` packed a record of `blocks` at `lsn`: it must end within one log size of the tail.
    pub(crate) fn record_packed(&mut self, lsn: Lsn, blocks: u64, tail: Lsn) {
        if lsn.linear(self.log_bb) + blocks > tail.linear(self.log_bb) + self.log_bb as u64 {
            self.note_first(0);
            self.live_overwrites += 1;
        }
    }

    /// A flush of the data device went out as request `id`: it covers the tail as it is now.
    pub(crate) fn data_flush_submitted(&mut self, id: u64, tail: Lsn) {
        self.tail_at_data_flush = tail;
        self.flush_tails.insert(id, tail);
    }

    /// A request on the data device completed; a flush among them makes its tail stable.
    pub(crate) fn data_request_completed(&mut self, id: u64) {
        if let Some(t) = self.flush_tails.remove(&id) {
            self.tail_flushed = self.tail_flushed.max(t);
        }
    }

    /// A log record is submitted (before its own flush, if it carries one, is noted).
    pub(crate) fn record_submitted(&mut self, r: &RecordSubmit) {
        if !r.flushes_data && r.tail > self.tail_at_data_flush {
            self.records_tail_uncovered += 1;
            self.commit_iclogs_tail_uncovered += r.commit as u64;
        }
        // Brian's race: without its own PREFLUSH a log write may reach media before any flush
        // still in flight, so the blocks it overwrites must be behind a completed flush's tail.
        if !r.preflush
            && r.volatile
            && r.lsn.linear(self.log_bb) + r.blocks > self.tail_flushed.linear(self.log_bb) + self.log_bb as u64
        {
            self.log_overwrites_unflushed += 1;
        }
    }

    /// Commit implies checkpoint: when a checkpoint completes (its items are about to be
    /// unpinned), every log block from its start record to `commit_end` (linear blocks) must
    /// be on stable media with the cycle it was written in.
    pub(crate) fn checkpoint_completed(
        &mut self,
        ck: &CheckpointRecord,
        commit_end: u64,
        stable: &SectorMap,
        log_start: u64,
    ) {
        let log_bb = self.log_bb as u64;
        let ok = (ck.start_lsn.linear(self.log_bb)..commit_end).all(|p| {
            let sector = log_start + p % log_bb;
            stable.get(sector).is_some_and(|s| crate::format::sector_cycle(s) as u64 == p / log_bb)
        });
        if !ok {
            self.note_first(1);
            self.ckpt_unstable_at_completion += 1;
        }
    }

    /// Durability at the ack: a crash right now may drop anything not on stable media, so the
    /// file data block at `daddr` must already be stable at `version` or later.
    pub(crate) fn fsync_acked(&mut self, stable: &SectorMap, daddr: u64, version: u64) {
        let ok = stable.get(daddr).and_then(|s| crate::format::read_meta(s)).is_some_and(|(_, v, _)| v >= version);
        if !ok {
            self.note_first(2);
            self.acked_unstable += 1;
        }
    }

    /// A start record went out; `older_pending` when an older checkpoint's has not.
    pub(crate) fn start_record_written(&mut self, older_pending: bool) {
        self.start_records_unordered += older_pending as u64;
    }

    /// A ticket was charged: going below zero is an overrun.
    pub(crate) fn ticket_charged(&mut self, before: i64, after: i64) {
        if before >= 0 && after < 0 {
            self.reservation_overruns += 1;
        }
    }
}
