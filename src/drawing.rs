//! The lab's drawing math (not the log's geometry: that is `xlog::geometry`): the iclog ring,
//! the log zoom, timeline bars and checkpoint brackets, plain functions of the views, tested natively.

use crate::palette;
use xlog::{
    CheckpointPanel, GrantHeadPanel, IclogState, IoKind, IoPurpose, IoSpan, LogSpaceView, Lsn, Ns, WriterState, BBSIZE,
};

/// Numbers as "1, 2, 3" (checkpoint sequences in tooltips).
pub fn list(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// What a writer task waits for, in words.
pub fn writer_label(s: &WriterState) -> &'static str {
    match s {
        WriterState::Thinking => "running",
        WriterState::TxWork => "in a transaction (working, or waiting for a CPU)",
        WriterState::Copying => "copying its append (or waiting for a CPU)",
        WriterState::WritebackDone => "data written, waiting for a CPU to fsync",
        WriterState::Stopped => "stopped",
        WriterState::GrantWait => "grant head wait",
        WriterState::AgiWait => "AGI buffer lock",
        WriterState::Throttled => "CIL throttle",
        WriterState::CommitWait => "waiting for a commit record",
        WriterState::PushFlushWait => "waiting for earlier CIL pushes",
        WriterState::PrevWait { .. } => "waiting for the previous iclog",
        WriterState::ForceWait { .. } => "log force",
        WriterState::DataWrite => "fsync data write",
        WriterState::DataFlush => "fsync cache flush",
        WriterState::MetaRead { .. } => "metadata read",
    }
}

pub fn state_label(state: IclogState) -> &'static str {
    state.kernel_name().trim_start_matches("XLOG_STATE_")
}

/// One ring segment: an SVG path for the whole slot and one for its used part.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    pub slot_path: String,
    pub fill_path: String,
    pub label_x: f64,
    pub label_y: f64,
}

const GAP_RAD: f64 = 0.04;

/// Segments for `n` iclogs around a ring centred at (cx, cy); `fill[i]` in 0..=1 is the
/// used fraction of iclog i, drawn as a thicker inner band.
pub fn ring_segments(n: usize, cx: f64, cy: f64, r_out: f64, r_in: f64, fill: &[f64]) -> Vec<Segment> {
    let step = std::f64::consts::TAU / n as f64;
    (0..n)
        .map(|i| {
            let a0 = -std::f64::consts::FRAC_PI_2 + i as f64 * step + GAP_RAD;
            let a1 = a0 + step - 2.0 * GAP_RAD;
            let f = fill.get(i).copied().unwrap_or(0.0).clamp(0.0, 1.0);
            let r_fill = r_in + (r_out - r_in) * f;
            let mid = (a0 + a1) / 2.0;
            let rl = r_out + 16.0;
            Segment {
                slot_path: annulus(cx, cy, r_out, r_in, a0, a1),
                fill_path: if f > 0.0 { annulus(cx, cy, r_fill, r_in, a0, a1) } else { String::new() },
                label_x: cx + rl * mid.cos(),
                label_y: cy + rl * mid.sin(),
            }
        })
        .collect()
}

fn annulus(cx: f64, cy: f64, ro: f64, ri: f64, a0: f64, a1: f64) -> String {
    let p = |r: f64, a: f64| (cx + r * a.cos(), cy + r * a.sin());
    let (x0, y0) = p(ro, a0);
    let (x1, y1) = p(ro, a1);
    let (x2, y2) = p(ri, a1);
    let (x3, y3) = p(ri, a0);
    let large = if a1 - a0 > std::f64::consts::PI { 1 } else { 0 };
    format!(
        "M{x0:.1},{y0:.1} A{ro:.1},{ro:.1} 0 {large} 1 {x1:.1},{y1:.1} L{x2:.1},{y2:.1} A{ri:.1},{ri:.1} 0 {large} 0 {x3:.1},{y3:.1} Z"
    )
}

/// Position of an LSN's block on the log bar, in 0..=1.
pub fn log_fraction(block: u32, log_bb: u32) -> f64 {
    if log_bb == 0 {
        0.0
    } else {
        block as f64 / log_bb as f64
    }
}

/// The CIL bar's scale and marks: (used, background push limit, blocking limit) as fractions
/// of a bar long enough to show all three (a quarter past the blocking limit, or more).
pub fn cil_bar(space_used: i64, space_limit: u32, blocking_limit: u32) -> (f64, f64, f64) {
    let scale = (blocking_limit as f64 * 1.25).max(space_used.max(0) as f64).max(1.0);
    (space_used.max(0) as f64 / scale, space_limit as f64 / scale, blocking_limit as f64 / scale)
}

/// Where a grant head (cycle, byte offset) sits on the log bar, in 0..=1.
pub fn grant_fraction(bytes: u32, log_bytes: u32) -> f64 {
    if log_bytes == 0 {
        0.0
    } else {
        (bytes as f64 / log_bytes as f64).clamp(0.0, 1.0)
    }
}

/// The live part of the log, tail to the furthest grant head, zoomed to the panel's width:
/// each position a fraction of that stretch, checkpoints laid out by their LSNs.
#[derive(Clone, Debug, PartialEq)]
pub struct LogZoom {
    /// Blocks the zoomed stretch covers.
    pub span_bb: u64,
    pub head: f64,
    pub last_sync: f64,
    pub write: f64,
    pub reserve: f64,
    /// (sequence, start, end, completed); a checkpoint still being written ends at the head.
    pub checkpoints: Vec<(u64, f64, f64, bool)>,
}

/// Blocks from the log's first cycle: LSNs and grant heads on one line, across wraps.
fn abs_block(cycle: u32, block: u64, log_bb: u32) -> u64 {
    cycle as u64 * log_bb as u64 + block
}

pub fn log_zoom(s: &LogSpaceView) -> LogZoom {
    let lsn = |l: Lsn| abs_block(l.cycle(), l.block() as u64, s.log_bb);
    let grant = |g: &GrantHeadPanel| abs_block(g.cycle, g.bytes as u64 / BBSIZE as u64, s.log_bb);
    let (tail, head) = (lsn(s.tail_lsn), lsn(s.head_lsn));
    let end = head.max(grant(&s.reserve)).max(grant(&s.write));
    let span_bb = (end.saturating_sub(tail) * 21 / 20).max(16);
    let x = |b: u64| (b.saturating_sub(tail) as f64 / span_bb as f64).clamp(0.0, 1.0);
    let checkpoints = s
        .checkpoints
        .iter()
        .filter(|c| c.start_lsn.0 != 0)
        .map(|c| {
            let stop = if c.commit_lsn.0 != 0 { lsn(c.commit_lsn) } else { head };
            (c.sequence, lsn(c.start_lsn), stop, c.completed)
        })
        .filter(|&(_, _, stop, _)| stop >= tail)
        .map(|(q, a, b, done)| (q, x(a), x(b), done))
        .collect();
    LogZoom {
        span_bb,
        head: x(head),
        last_sync: x(lsn(s.last_sync_lsn)),
        write: x(grant(&s.write)),
        reserve: x(grant(&s.reserve)),
        checkpoints,
    }
}

/// One request on the flush timeline, in canvas pixels.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineBar {
    /// Index into the spans it was drawn from (for hovering).
    pub span: usize,
    /// Device lane, and the row within it: 0 log records and flushes, 1 metadata and data.
    pub lane: u8,
    pub row: u8,
    pub x0: f64,
    pub x1: f64,
    pub colour: &'static str,
    pub preflush: bool,
    pub fua: bool,
    /// A cache flush: its end is marked as the moment the cache is stable.
    pub flush: bool,
    /// A PREFLUSH write's flush as the block layer ran it (from, to): before it the write
    /// queues, after it the write itself goes to the device.
    pub flush_x: Option<(f64, f64)>,
}

/// Rows a device lane stacks concurrent requests in (more wait in the last row).
pub const TIMELINE_ROWS: u8 = 8;

/// Lays out the requests of the window `[now - window, now]` across `width` pixels; requests
/// still in flight run to their completion time, clipped at the right edge. Requests that
/// overlap in time take the first free row of their device's lane, so the stack's height is
/// the device's queue depth at that moment.
pub fn timeline_bars(spans: &[IoSpan], now: Ns, window: Ns, width: f64) -> Vec<TimelineBar> {
    let start = now.saturating_sub(window.max(1));
    let x = |t: Ns| ((t.saturating_sub(start)) as f64 / window.max(1) as f64 * width).clamp(0.0, width);
    let mut row_end: Vec<[Ns; TIMELINE_ROWS as usize]> = Vec::new();
    spans
        .iter()
        .enumerate()
        .filter(|(_, s)| s.done_ns >= start && s.submit_ns <= now)
        .map(|(i, s)| {
            let (preflush, fua, flush) = match s.kind {
                IoKind::Write { preflush, fua } => (preflush, fua, false),
                IoKind::Flush => (false, false, true),
                IoKind::Read => (false, false, false),
            };
            let colour = palette::request(s);
            let lane = s.dev as usize;
            if row_end.len() <= lane {
                row_end.resize(lane + 1, [0; TIMELINE_ROWS as usize]);
            }
            let rows = &mut row_end[lane];
            let row = rows.iter().position(|&end| end <= s.submit_ns).unwrap_or(TIMELINE_ROWS as usize - 1);
            rows[row] = rows[row].max(s.done_ns);
            let x0 = x(s.submit_ns);
            TimelineBar {
                span: i,
                lane: s.dev,
                row: row as u8,
                x0,
                x1: x(s.done_ns).max(x0 + 1.0),
                colour,
                preflush,
                fua,
                flush,
                flush_x: s.flush_window.map(|(a, b)| (x(a).max(x0), x(b).max(x0))),
            }
        })
        .collect()
}

/// A checkpoint's log records on the flush timeline: a bracket over the bars from its first
/// record (at or after its start LSN) to the record carrying its commit record.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointBracket {
    pub sequence: u64,
    pub lane: u8,
    /// Brackets that overlap in time alternate between two rows.
    pub row: u8,
    pub x0: f64,
    pub x1: f64,
    /// The commit record is on disk in the window (else the bracket is still open).
    pub committed: bool,
}

/// Groups the log-record bars by the checkpoint whose LSN range `[start, commit]` holds their
/// record LSN (a record may hold the end of one checkpoint and the start of the next).
pub fn checkpoint_brackets(
    spans: &[IoSpan],
    bars: &[TimelineBar],
    checkpoints: &[CheckpointPanel],
) -> Vec<CheckpointBracket> {
    let mut out: Vec<CheckpointBracket> = Vec::new();
    for c in checkpoints.iter().filter(|c| c.start_lsn.0 != 0) {
        let end = if c.commit_lsn.0 != 0 { c.commit_lsn.0 } else { u64::MAX };
        let mut hit: Option<CheckpointBracket> = None;
        for b in bars {
            let Some(s) = spans.get(b.span) else { continue };
            let IoPurpose::Log { lsn, .. } = s.purpose else { continue };
            if lsn.0 < c.start_lsn.0 || lsn.0 > end {
                continue;
            }
            let committed = s.checkpoints.contains(&c.sequence);
            let h = hit.get_or_insert(CheckpointBracket {
                sequence: c.sequence,
                lane: b.lane,
                row: 0,
                x0: b.x0,
                x1: b.x1,
                committed,
            });
            h.x0 = h.x0.min(b.x0);
            h.x1 = h.x1.max(b.x1);
            h.committed |= committed;
        }
        if let Some(mut h) = hit {
            let overlaps = |row: u8| out.iter().any(|o| o.lane == h.lane && o.row == row && o.x1 > h.x0);
            h.row = if overlaps(0) { 1 } else { 0 };
            out.push(h);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_segment_per_iclog_and_fill_only_when_used() {
        let segs = ring_segments(8, 100.0, 100.0, 80.0, 50.0, &[0.0, 0.5, 1.0]);
        assert_eq!(segs.len(), 8);
        assert!(segs[0].fill_path.is_empty());
        assert!(!segs[1].fill_path.is_empty());
        assert!(segs[0].slot_path.starts_with('M'));
        // The first slot starts at the top of the ring (12 o'clock), right of centre.
        assert!(segs[0].label_x > 100.0 && segs[0].label_y < 100.0);
    }

    #[test]
    fn states_are_named_without_the_prefix() {
        use IclogState::*;
        let all = [Active, WantSync, Syncing, DoneSync, Callback, Dirty];
        assert_eq!(all.map(state_label).len(), 6);
        assert_eq!(state_label(WantSync), "WANT_SYNC");
    }

    #[test]
    fn cil_bar_keeps_both_limits_in_view() {
        let (used, push, block) = cil_bar(0, 8 << 20, 16 << 20);
        assert_eq!(used, 0.0);
        assert!((push - 0.4).abs() < 1e-9 && (block - 0.8).abs() < 1e-9);
        // Past the blocking limit the bar grows so the fill stays inside it.
        let (used, _, block) = cil_bar(40 << 20, 8 << 20, 16 << 20);
        assert_eq!(used, 1.0);
        assert!(block < 0.5);
        assert_eq!(grant_fraction(512, 1024), 0.5);
        assert_eq!(grant_fraction(5, 0), 0.0);
    }

    #[test]
    fn timeline_places_requests_in_their_window() {
        use xlog::Lsn;
        let span = |id, submit, done, kind, purpose| IoSpan {
            dev: 0,
            id,
            kind,
            sector: 0,
            bytes: 4096,
            submit_ns: submit,
            done_ns: done,
            purpose,
            checkpoints: vec![],
            flush_window: None,
        };
        let log = IoPurpose::Log { iclog: 0, lsn: Lsn::new(1, 0) };
        let queued = IoSpan {
            flush_window: Some((30, 60)),
            ..span(1, 0, 100, IoKind::Write { preflush: true, fua: true }, log)
        };
        let spans = vec![
            queued,
            span(2, 500, 750, IoKind::Write { preflush: false, fua: false }, log),
            span(3, 900, 1200, IoKind::Flush, IoPurpose::Flush),
        ];
        // Window [0, 1000] over 100 px.
        let bars = timeline_bars(&spans, 1000, 1000, 100.0);
        assert_eq!(bars.len(), 3);
        assert!(bars[0].preflush && bars[0].fua && (bars[0].x0, bars[0].x1) == (0.0, 10.0));
        assert_eq!(bars[0].flush_x, Some((3.0, 6.0)), "queued to 30 ns, flushed to 60, then written");
        assert_eq!(bars[1].flush_x, None);
        assert!(!bars[1].preflush && (bars[1].x0, bars[1].x1) == (50.0, 75.0));
        assert!(bars[2].flush && bars[2].x1 == 100.0, "in flight past now: clipped at the edge");
        assert_eq!(bars.iter().map(|b| b.row).collect::<Vec<_>>(), vec![0, 0, 0], "none overlap");
        // Three requests in flight together stack in three rows.
        let busy: Vec<_> = (0..3).map(|k| span(10 + k, 100 + k, 900, IoKind::Read, log)).collect();
        assert_eq!(timeline_bars(&busy, 1000, 1000, 100.0).iter().map(|b| b.row).collect::<Vec<_>>(), vec![0, 1, 2]);
        // Later, the first request has left the window.
        assert_eq!(timeline_bars(&spans, 1500, 1000, 100.0).len(), 2);
    }

    #[test]
    fn brackets_group_a_checkpoints_records_up_to_its_commit_record() {
        use xlog::Lsn;
        let rec = |id: u64, t: Ns, block: u32, commits: Vec<u64>| IoSpan {
            dev: 0,
            id,
            kind: IoKind::Write { preflush: false, fua: false },
            sector: 0,
            bytes: 4096,
            submit_ns: t,
            done_ns: t + 50,
            purpose: IoPurpose::Log { iclog: 0, lsn: Lsn::new(1, block) },
            checkpoints: commits,
            flush_window: None,
        };
        let spans =
            vec![rec(1, 100, 10, vec![]), rec(2, 200, 18, vec![7]), rec(3, 300, 26, vec![]), rec(4, 600, 34, vec![8])];
        let bars = timeline_bars(&spans, 1000, 1000, 1000.0);
        let ck = |sequence, start, commit| CheckpointPanel {
            sequence,
            start_lsn: Lsn::new(1, start),
            commit_lsn: if commit == 0 { Lsn::ZERO } else { Lsn::new(1, commit) },
            completed: commit != 0,
        };
        let b = checkpoint_brackets(&spans, &bars, &[ck(7, 10, 18), ck(8, 18, 34), ck(9, 34, 0)]);
        assert_eq!(b.iter().map(|b| b.sequence).collect::<Vec<_>>(), vec![7, 8, 9]);
        assert_eq!((b[0].x0, b[0].x1, b[0].committed), (100.0, 250.0, true));
        assert_eq!((b[1].x0, b[1].x1, b[1].row), (200.0, 650.0, 1), "shares record 2 with 7: the other row");
        assert!(!b[2].committed, "its commit record is not written yet");
    }

    #[test]
    fn the_zoom_runs_from_the_tail_and_lays_checkpoints_out_by_lsn() {
        let head = |cycle, bytes| GrantHeadPanel { cycle, bytes, free_bytes: 0, waiters: vec![] };
        let ck = |sequence, start: Lsn, commit: Lsn| CheckpointPanel {
            sequence,
            start_lsn: start,
            commit_lsn: commit,
            completed: commit.0 != 0,
        };
        // A 1000-block log that has wrapped: tail at 2:900, head at 3:100.
        let s = LogSpaceView {
            log_bb: 1000,
            log_bytes: 1000 * 512,
            head_lsn: Lsn::new(3, 100),
            tail_lsn: Lsn::new(2, 900),
            last_sync_lsn: Lsn::new(3, 50),
            reserve: head(3, 180 * 512),
            write: head(3, 120 * 512),
            tail_push_threshold_bb: 250,
            ail_target: Lsn::ZERO,
            checkpoints: vec![
                ck(1, Lsn::new(2, 800), Lsn::new(2, 850)),
                ck(2, Lsn::new(2, 950), Lsn::new(3, 50)),
                ck(3, Lsn::new(3, 60), Lsn::ZERO),
            ],
            in_transactions: (0, 0),
        };
        let z = log_zoom(&s);
        assert_eq!(z.span_bb, 294, "tail to the reserve head (280 blocks) and a margin");
        let at = |b: f64| b / 294.0;
        assert_eq!(z.head, at(200.0));
        assert_eq!(z.reserve, at(280.0));
        assert_eq!(z.write, at(220.0));
        assert_eq!(z.last_sync, at(150.0));
        assert_eq!(z.checkpoints.len(), 2, "checkpoint 1 is behind the tail");
        assert_eq!(z.checkpoints[0], (2, at(50.0), at(150.0), true));
        assert_eq!(z.checkpoints[1], (3, at(160.0), at(200.0), false), "open: ends at the head");
    }
}
