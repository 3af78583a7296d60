//! blk-flush: flushes run one at a time, and those that arrive meanwhile share the next.

use super::media::Media;
use super::request::IoKind;
use super::Device;
use crate::units::Ns;

/// Flushes run one at a time: the latest flush (running or next) and when the writes that
/// waited for it are done. blk-mq's flush queue (`block/blk-flush.c`): C1, one flush in
/// flight, PREFLUSH requests that arrive meanwhile wait and share the next; C2, the next
/// also waits for the running sequence's DATA. Model: iclog writes use one queue (the one
/// CIL push worker submits most of them); explicit flushes (fsync, xfsaild) keep their own,
/// except on a device with one hardware queue (`one_flush_queue`), where all share it.
/// md (`md_flush_request`) runs C1 alone, for every flush of the array.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct FlushQueue {
    start: Ns,
    end: Ns,
    data_end: Ns,
    /// When the flush reached the driver: on libata it holds every command from then (it
    /// waits at the head of the dispatch queue for the drive's queue to drain, then runs).
    sent: Ns,
}

impl Device {
    /// Submits an explicit cache flush. Elided (completes at once) without a volatile cache.
    pub fn submit_flush(&mut self, now: Ns, tag: u64) -> (u64, Ns) {
        if !self.profile.volatile_cache {
            self.stats.flushes_elided += 1;
            return self.flush_without_command(now, now, tag);
        }
        self.stats.flushes += 1;
        if self.profile.md_flush || self.profile.one_flush_queue {
            let done = self.queued_flush(now);
            return self.flush_without_command(now, done, tag);
        }
        let start = self.start_at(now);
        let drain = self.flush_drain(start);
        let cost = drain + self.profile.cmd_ns + self.flush_wait(start + drain);
        self.enqueue(now, now, IoKind::Flush, 0, (Vec::new(), 0), (cost, 0), tag)
    }

    /// A flush request that takes no channel of its own: elided, or md's (done at `done`).
    fn flush_without_command(&mut self, now: Ns, done: Ns, tag: u64) -> (u64, Ns) {
        self.issue(now, done, IoKind::Flush, 0, (Vec::new(), 0), tag)
    }

    /// `blk_kick_flush` / `md_flush_request`: when the flush that covers a request made at
    /// `now` is done. A flush that has not started yet covers it; otherwise it waits for the
    /// running flush (and, in the block layer, that flush's DATA), then starts the next,
    /// which those arriving meanwhile share.
    /// Model: the flush command takes no channel of its own; an array's members' flushes are
    /// one flush of the array (their destage runs as one).
    pub(super) fn queued_flush(&mut self, now: Ns) -> Ns {
        let q = &self.flush_queue;
        if q.start > now {
            return q.end;
        }
        let sent = now.max(q.end).max(q.data_end);
        // FLUSH CACHE is not an NCQ command: libata issues it once the drive's queue has
        // drained (`ata_std_qc_defer`).
        let start = if self.profile.libata { sent.max(self.last_done()) } else { sent };
        let drained = start + self.flush_drain(start);
        let end = drained + self.profile.cmd_ns + self.flush_wait(drained);
        // A host stall holds flushes too (the backing file's fsync). Pops nothing: `now` can
        // be a later request's completion here.
        let end = self.after_stalls(0, drained, end);
        self.flush_queue = FlushQueue { start, end, data_end: end, sent };
        end
    }

    /// The latest flush's window (a PREFLUSH write waits for it).
    pub(super) fn flush_window(&self) -> (Ns, Ns) {
        (self.flush_queue.start, self.flush_queue.end)
    }

    /// A PREFLUSH write done at `done`: blk-mq's next flush waits for it (C2). md sends the
    /// next flush without waiting for these writes.
    pub(super) fn preflush_data_done(&mut self, done: Ns) {
        if !self.profile.md_flush {
            self.flush_queue.data_end = self.flush_queue.data_end.max(done);
        }
    }

    /// libata defers every command while a FLUSH CACHE runs (`ata_std_qc_defer`): when a
    /// command that would start at `start` does.
    /// Model: an array's member flushes are one flush of the array, so they hold every
    /// member's queue for its whole length.
    pub(super) fn after_libata_flush(&self, start: Ns) -> Ns {
        let q = &self.flush_queue;
        if self.profile.libata && q.sent <= start && start < q.end {
            q.end
        } else {
            start
        }
    }

    /// Time from `start` until a flush started then is done: as the media's destaging makes
    /// it, or as measured.
    fn flush_wait(&mut self, start: Ns) -> Ns {
        match self.profile.media {
            Media::Measured(m) => self.measured_flush_ns(&m),
            Media::Flash(_) => self.flash_flush_ns(start),
            Media::Disk(_) => self.disk_flush_ns(start),
        }
    }

    /// A SATA drive (libata), as of `now`: how long the cache flush that holds its queue still
    /// needs (from when it reached the driver: the commands in flight drain, then it runs;
    /// nothing else is sent meanwhile), or None when none does. None on other devices.
    pub fn flush_hold(&self, now: Ns) -> Option<Option<Ns>> {
        let q = &self.flush_queue;
        (self.profile.libata && self.profile.volatile_cache)
            .then(|| (q.sent <= now && now < q.end).then(|| q.end - now))
    }
}
