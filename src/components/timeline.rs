//! The flush timeline: every device request of the last stretch of virtual time as a bar, one
//! lane per device; PREFLUSH marked at a bar's start, FUA at its end, cache flushes (and the
//! flush a PREFLUSH write waits for) as red bands. Hovering names the request: iclog, record
//! LSN and the checkpoints it commits.

use crate::canvas::{context_2d, use_canvas};
use crate::drawing::{checkpoint_brackets, timeline_bars, CheckpointBracket, TimelineBar, TIMELINE_ROWS};
use crate::palette;
use std::rc::Rc;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use xlog::{CheckpointPanel, IoKind, IoPurpose, IoSpan, LogSpaceView, Ns};
use yew::prelude::*;

const WIDTH: f64 = 1000.0;
const ROW_H: f64 = 8.0;
const LABEL_H: f64 = 13.0;
const BRACKET_H: f64 = 9.0;
const LANE_NAME_W: f64 = 150.0;
const TOP: f64 = LABEL_H + 2.0 * BRACKET_H;
const LANE_H: f64 = TOP + ROW_H * TIMELINE_ROWS as f64 + 4.0;

#[derive(Properties, PartialEq)]
pub struct TimelineProps {
    pub spans: Rc<Vec<IoSpan>>,
    pub now: Ns,
    /// Virtual time the width shows.
    pub window: Ns,
    /// Lane names, one per device.
    pub lanes: Vec<String>,
    /// The log space view: its newest checkpoints and their LSN ranges group the log records.
    pub space: Rc<LogSpaceView>,
    /// Only the drawing and the hover line (compare mode shows two, one above the other).
    #[prop_or(false)]
    pub compact: bool,
}

/// What a request was issued for, in words: for a log record its iclog, LSN, the checkpoint(s)
/// it belongs to (by `checkpoints`' LSN ranges) and those whose commit records it carries.
/// The flush timeline's hover and the crash panel's list of writes at risk both say it so.
pub fn purpose(s: &IoSpan, checkpoints: &[CheckpointPanel]) -> String {
    match s.purpose {
        IoPurpose::Log { iclog, lsn } => {
            let ck = if s.checkpoints.is_empty() {
                String::new()
            } else {
                format!(", commit record of checkpoint {}", crate::drawing::list(&s.checkpoints))
            };
            let within: Vec<u64> = checkpoints
                .iter()
                .filter(|c| c.start_lsn.0 != 0 && c.start_lsn <= lsn && (c.commit_lsn.0 == 0 || lsn <= c.commit_lsn))
                .map(|c| c.sequence)
                .collect();
            let part = match within.as_slice() {
                [] => String::new(),
                [one] => format!(", part of checkpoint {one}"),
                many => format!(", part of checkpoints {}", crate::drawing::list(many)),
            };
            format!("log record from iclog {iclog} at LSN {lsn}{part}{ck}")
        }
        IoPurpose::LogDataFlush { iclog } => format!("data-device flush before iclog {iclog}'s record"),
        IoPurpose::PushFlush { worker } => format!("push worker {worker}'s flush before its first iclog (v5.14)"),
        IoPurpose::Metadata { item } => format!("xfsaild writing metadata item {item} back"),
        IoPurpose::FileData { task } => format!("fsync by writer {task}"),
        IoPurpose::MetaRead { task } => format!("metadata read by writer {task}"),
        IoPurpose::Flush => "flush".into(),
    }
}

fn describe(s: &IoSpan, checkpoints: &[CheckpointPanel]) -> String {
    let kind = match s.kind {
        IoKind::Write { preflush, fua } => format!(
            "write{}{}",
            if preflush { " PREFLUSH" } else { "" },
            if fua {
                if preflush {
                    "|FUA"
                } else {
                    " FUA"
                }
            } else {
                ""
            }
        ),
        IoKind::Flush => "cache flush".into(),
        IoKind::Read => "read".into(),
    };
    let what = purpose(s, checkpoints);
    let flush = s.flush_window.map_or(String::new(), |(a, b)| {
        format!(
            " ({:.1} µs queued for the block layer's one flush at a time, {:.1} µs its flush)",
            a.saturating_sub(s.submit_ns) as f64 / 1e3,
            b.saturating_sub(a) as f64 / 1e3
        )
    });
    format!(
        "#{} {kind}, {} KiB at sector {}: {what}; {:.1} µs{flush}",
        s.id,
        s.bytes / 1024,
        s.sector,
        (s.done_ns - s.submit_ns) as f64 / 1e3
    )
}

fn draw(ctx: &CanvasRenderingContext2d, bars: &[TimelineBar], brackets: &[CheckpointBracket], lanes: &[String]) {
    let h = LANE_H * lanes.len().max(1) as f64;
    ctx.set_fill_style_str(palette::CANVAS_BG);
    ctx.fill_rect(0.0, 0.0, WIDTH, h);
    ctx.set_font("11px system-ui, sans-serif");
    for (i, name) in lanes.iter().enumerate() {
        let y = i as f64 * LANE_H;
        ctx.set_fill_style_str(palette::TRACK);
        ctx.fill_rect(0.0, y + LANE_H - 1.0, WIDTH, 1.0);
        ctx.set_fill_style_str(palette::MUTED_TEXT);
        let _ = ctx.fill_text(name, 4.0, y + 10.0);
    }
    // Checkpoint brackets: a line over the records of one checkpoint, labelled when it fits.
    ctx.set_font("9px system-ui, sans-serif");
    let mut label_end = [f64::MIN; 2];
    for b in brackets {
        let y = b.lane as f64 * LANE_H + LABEL_H + b.row as f64 * BRACKET_H + 6.0;
        ctx.set_fill_style_str(if b.committed { palette::BLUE } else { palette::GREY });
        ctx.fill_rect(b.x0, y, (b.x1 - b.x0).max(1.0), 1.5);
        ctx.fill_rect(b.x0, y - 3.0, 1.0, 4.0);
        if b.committed {
            ctx.fill_rect(b.x1 - 1.0, y - 3.0, 1.0, 4.0);
        }
        let text = format!("ckpt {}", b.sequence);
        // Clear of the lane's name at the top left.
        let x = (b.x0 + 3.0).max(if b.row == 0 { LANE_NAME_W } else { 0.0 });
        let end = x + 5.0 * text.len() as f64;
        let row = &mut label_end[b.row.min(1) as usize];
        if end < b.x1 + 16.0 && x > *row + 4.0 {
            let _ = ctx.fill_text(&text, x, y - 1.5);
            *row = end;
        }
    }
    for b in bars {
        let lane_y = b.lane as f64 * LANE_H;
        let y = lane_y + TOP + b.row as f64 * ROW_H;
        match b.flush_x {
            // Queued for the block layer's flush (a thin line), the flush (a cache-flush band),
            // then the write.
            Some((f0, f1)) => {
                ctx.set_fill_style_str(b.colour);
                ctx.fill_rect(b.x0, y + ROW_H / 2.0 - 1.0, f0 - b.x0, 2.0);
                ctx.fill_rect(f1, y + 1.0, (b.x1 - f1).max(1.0), ROW_H - 2.0);
                ctx.set_fill_style_str(palette::VERMILLION);
                ctx.fill_rect(f0, y + 2.0, (f1 - f0).max(1.0), ROW_H - 4.0);
            }
            None => {
                ctx.set_fill_style_str(b.colour);
                ctx.fill_rect(b.x0, y + 1.0, b.x1 - b.x0, ROW_H - 2.0);
            }
        }
        if b.flush {
            // A cache flush's completion: the moment what was cached is stable.
            ctx.set_fill_style_str(palette::INK);
            ctx.fill_rect(b.x1 - 1.0, y - 1.0, 1.0, ROW_H + 2.0);
            ctx.fill_rect(b.x1 - 3.0, y + ROW_H, 3.0, 1.0);
        }
        ctx.set_fill_style_str(palette::INK);
        if b.preflush {
            ctx.fill_rect(b.x0, y - 1.0, 2.0, ROW_H + 1.0);
        }
        if b.fua {
            ctx.fill_rect(b.x1 - 2.0, y - 1.0, 2.0, ROW_H + 1.0);
        }
    }
}

#[function_component(Timeline)]
pub fn timeline(p: &TimelineProps) -> Html {
    let hover = use_state(|| None::<String>);
    let bars = Rc::new(timeline_bars(&p.spans, p.now, p.window, WIDTH));
    let brackets = Rc::new(checkpoint_brackets(&p.spans, &bars, &p.space.checkpoints));
    let height = LANE_H * p.lanes.len().max(1) as f64;
    let canvas = {
        let (bars, brackets, lanes) = (bars.clone(), brackets.clone(), p.lanes.clone());
        use_canvas((WIDTH, height), (p.spans.clone(), p.now, p.window), move |c: &HtmlCanvasElement, scale| {
            if let Some(ctx) = context_2d(c, scale) {
                draw(&ctx, &bars, &brackets, &lanes);
            }
        })
    };
    let on_move = {
        let (hover, spans, canvas, bars, cks) =
            (hover.clone(), p.spans.clone(), canvas.clone(), bars.clone(), p.space.clone());
        Callback::from(move |e: MouseEvent| {
            let Some(c) = canvas.cast::<HtmlCanvasElement>() else { return };
            let rect = c.get_bounding_client_rect();
            let x = (e.client_x() as f64 - rect.left()) / rect.width().max(1.0) * WIDTH;
            let y = (e.client_y() as f64 - rect.top()) / rect.height().max(1.0) * height;
            let lane = (y / LANE_H) as u8;
            let row = ((y - lane as f64 * LANE_H - TOP) / ROW_H).max(0.0) as u8;
            let hit = bars.iter().rev().find(|b| b.lane == lane && b.row == row && x >= b.x0 - 2.0 && x <= b.x1 + 2.0);
            hover.set(hit.and_then(|b| spans.get(b.span)).map(|s| describe(s, &cks.checkpoints)));
        })
    };
    let (log_writes, flagged) = p.spans.iter().fold((0, 0), |(n, f), s| match (s.purpose, s.kind) {
        (IoPurpose::Log { .. }, IoKind::Write { preflush, .. }) => (n + 1, f + preflush as u32),
        _ => (n, f),
    });
    // PREFLUSH writes that queued behind another flush before their own began.
    let queued = p.spans.iter().filter(|s| s.flush_window.is_some_and(|(a, _)| a > s.submit_ns)).count();
    html! {
        <div class="panel timeline" data-testid="timeline" data-brackets={brackets.len().to_string()} data-log-writes={log_writes.to_string()} data-preflush={flagged.to_string()} data-flush-queued={queued.to_string()}>
            if !p.compact { <h2>{ format!("flush timeline — the last {:.2} ms", p.window as f64 / 1e6) }</h2> }
            if !p.compact { <p class="what">{ "Every block request the filesystem issues (log writes, file data, metadata writeback, cache flushes), as it happens, one lane per device. Stacked bars are requests in flight \
                together. A black tick at a bar's start is PREFLUSH (flush the cache first), at its end FUA (this write goes straight to media); a cache flush \
                ends in a black corner when the cache is stable. A PREFLUSH write is a thin line while it waits its turn (the block layer runs one \
                flush at a time), a red band while its flush runs, then the write itself. A bracket above groups the log records of one checkpoint, from its first record to its commit record." }</p> }
            <canvas ref={canvas} onmousemove={on_move} role="img"
                aria-label={format!("{} requests; {log_writes} log writes, {flagged} with PREFLUSH", p.spans.len())}
                style={format!("width:100%;height:{height}px")} />
            if !p.compact { <div class="legend">
                { for palette::REQUEST_LEGEND.iter().map(|(c, what)| html! { <span style={format!("--c:{c}")}>{ *what }</span> }) }
                <span style={format!("--c:{}", palette::INK)}>{ "PREFLUSH / FUA tick, flush done" }</span>
                <span style={format!("--c:{}", palette::BLUE)} class="line">{ format!("checkpoint bracket ({} shown)", brackets.len()) }</span>
            </div> }
            <p class="hover" data-testid="timeline-hover">{ hover.as_deref().unwrap_or("Hover over a bar to see what it carries.") }</p>
        </div>
    }
}
