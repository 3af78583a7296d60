//! The flush timeline's record: every device request as a span of virtual time, with what it
//! carried (which iclog, record LSN and checkpoints, or which metadata or file block). Off
//! unless asked for (`Sim::keep_timeline`), bounded, and only observes: nothing here feeds
//! back into the simulation or its trace hash.

use super::tags::IoTag;
use super::Sim;
use crate::device::{IoKind, IoReq};
use crate::units::{Lsn, Ns, TaskId};
use serde::Serialize;
use std::collections::VecDeque;

/// What a request was issued for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum IoPurpose {
    /// A log record: iclog `iclog` written at `lsn`.
    Log { iclog: u32, lsn: Lsn },
    /// The data-device flush a log record waits for (external log, or a wrapped record).
    LogDataFlush { iclog: u32 },
    /// v5.14's flush before a push writes its first iclog.
    PushFlush { worker: u32 },
    /// xfsaild writing a metadata item back in place.
    Metadata { item: u32 },
    /// fsync's file data write or data-device flush.
    FileData { task: TaskId },
    /// A metadata read inside a transaction.
    MetaRead { task: TaskId },
    /// A flush nobody waits for (unmount).
    Flush,
}

/// One request from submission to completion.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IoSpan {
    pub dev: u8,
    pub id: u64,
    /// As the device took it: a device without a volatile cache has its PREFLUSH/FUA stripped.
    pub kind: IoKind,
    pub sector: u64,
    pub bytes: u64,
    pub submit_ns: Ns,
    pub done_ns: Ns,
    pub purpose: IoPurpose,
    /// For a log record: the checkpoint sequences whose commit records it carries.
    pub checkpoints: Vec<u64>,
    /// A PREFLUSH write's flush (start, end): the block layer runs one at a time, and the
    /// write goes to the device once its flush is done.
    pub flush_window: Option<(Ns, Ns)>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Timeline {
    cap: usize,
    spans: VecDeque<IoSpan>,
}

impl Timeline {
    /// Records every device request from now on, keeping the newest `cap` (0 turns it off).
    pub fn keep(&mut self, cap: usize) {
        *self = Timeline { cap, spans: VecDeque::with_capacity(cap.min(4096)) };
    }
    pub fn is_on(&self) -> bool {
        self.cap > 0
    }
    /// Recorded requests still in flight at or completed after `since`, oldest first.
    pub fn since(&self, since: Ns) -> Vec<IoSpan> {
        self.spans.iter().filter(|s| s.done_ns >= since).cloned().collect()
    }
    pub fn record(&mut self, span: IoSpan) {
        if self.spans.len() == self.cap {
            self.spans.pop_front();
        }
        self.spans.push_back(span);
    }
}

/// Request `id` just submitted to device `dev` for `tag`, as a span.
pub(super) fn submitted_span(sim: &Sim, dev: usize, id: u64, done_ns: Ns, tag: IoTag) -> IoSpan {
    // A flush elided by a cache-less device completes at once and is never in flight.
    match sim.devs[dev].inflight().iter().rev().find(|r| r.id == id) {
        Some(r) => io_span(sim, dev, r),
        None => span_for(sim, dev, id, IoKind::Flush, 0, 0, (sim.now, done_ns), tag),
    }
}

/// A device request as a span: what it is, when, and what it was issued for.
pub(super) fn io_span(sim: &Sim, dev: usize, r: &IoReq) -> IoSpan {
    let tag = IoTag::unpack(r.tag);
    let span = span_for(sim, dev, r.id, r.kind, r.sector, r.bytes, (r.submit_ns, r.done_ns), tag);
    IoSpan { flush_window: r.flush_window, ..span }
}

#[allow(clippy::too_many_arguments)] // the fields of one request, named at both callers
fn span_for(
    sim: &Sim,
    dev: usize,
    id: u64,
    kind: IoKind,
    sector: u64,
    bytes: u64,
    (submit_ns, done_ns): (Ns, Ns),
    tag: IoTag,
) -> IoSpan {
    let mut checkpoints = Vec::new();
    let purpose = match tag {
        IoTag::Iclog(i) => {
            let ic = sim.log.iclog(i);
            checkpoints = ic.callbacks().iter().filter_map(|&c| sim.history.get(c).map(|k| k.sequence)).collect();
            IoPurpose::Log { iclog: i as u32, lsn: ic.lsn() }
        }
        IoTag::IclogDataFlush(i) => IoPurpose::LogDataFlush { iclog: i as u32 },
        IoTag::PushFlush(k) => IoPurpose::PushFlush { worker: k },
        IoTag::Meta { first, .. } => IoPurpose::Metadata { item: first },
        IoTag::Data(task) => IoPurpose::FileData { task },
        IoTag::Read(task) => IoPurpose::MetaRead { task },
        IoTag::None => IoPurpose::Flush,
    };
    IoSpan { dev: dev as u8, id, kind, sector, bytes, submit_ns, done_ns, purpose, checkpoints, flush_window: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::find;
    use crate::scenario::FlushPolicy;

    fn log_writes(flush: FlushPolicy) -> Vec<IoSpan> {
        let mut s = find("fsmark-create").unwrap();
        s.flush = flush;
        let mut sim = Sim::new(&s).unwrap();
        sim.keep_timeline(100_000);
        sim.run_until(100 * crate::units::NS_PER_MS);
        let spans = sim.timeline_since(0);
        assert!(spans.windows(2).all(|w| w[0].submit_ns <= w[1].submit_ns));
        spans.into_iter().filter(|s| matches!(s.purpose, IoPurpose::Log { .. })).collect()
    }

    #[test]
    fn legacy_flushes_every_log_write_and_upstream_only_some() {
        let preflush = |s: &IoSpan| matches!(s.kind, IoKind::Write { preflush: true, .. });
        let share = |spans: &[IoSpan]| spans.iter().filter(|s| preflush(s)).count() as f64 / spans.len().max(1) as f64;
        // Legacy: every iclog PREFLUSH|FUA (but those wrapping at the log's end, which flush
        // the device first); upstream: only a checkpoint's first and commit iclogs.
        let legacy = log_writes(FlushPolicy::Legacy);
        assert!(legacy.len() > 100 && share(&legacy) > 0.9, "{} writes, {}", legacy.len(), share(&legacy));
        let upstream = log_writes(FlushPolicy::Upstream);
        assert!(upstream.len() > 100 && share(&upstream) < 0.1, "{} writes, {}", upstream.len(), share(&upstream));
        // Commit records are named by checkpoint on the iclog that carries them.
        assert!(upstream.iter().any(|s| !s.checkpoints.is_empty()));
    }

    #[test]
    fn the_record_is_bounded_and_changes_nothing() {
        let s = find("small-crash").unwrap();
        let mut plain = Sim::new(&s).unwrap();
        plain.run_until(5 * crate::units::NS_PER_MS);
        let mut traced = Sim::new(&s).unwrap();
        traced.keep_timeline(10);
        traced.run_until(5 * crate::units::NS_PER_MS);
        assert_eq!(plain.trace_hash(), traced.trace_hash());
        assert_eq!(traced.timeline_since(0).len(), 10);
    }
}
