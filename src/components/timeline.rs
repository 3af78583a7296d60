//! The flush timeline: every device request of the last stretch of virtual time as a bar, one
//! lane per device; PREFLUSH marked at a bar's start, FUA at its end, cache flushes as red
//! bands. Hovering names the request: iclog, record LSN and the checkpoints it commits.

use crate::geometry::{timeline_bars, TimelineBar, TIMELINE_ROWS};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use xlog::{IoKind, IoPurpose, IoSpan, Ns};
use yew::prelude::*;

const WIDTH: f64 = 1000.0;
const ROW_H: f64 = 8.0;
const TOP: f64 = 13.0;
const LANE_H: f64 = TOP + ROW_H * TIMELINE_ROWS as f64 + 4.0;

#[derive(Properties, PartialEq)]
pub struct TimelineProps {
    pub spans: Rc<Vec<IoSpan>>,
    pub now: Ns,
    /// Virtual time the width shows.
    pub window: Ns,
    /// Lane names, one per device.
    pub lanes: Vec<String>,
}

fn describe(s: &IoSpan) -> String {
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
    let what = match s.purpose {
        IoPurpose::Log { iclog, lsn } => {
            let ck = if s.checkpoints.is_empty() {
                String::new()
            } else {
                format!(", commit record of checkpoint {:?}", s.checkpoints)
            };
            format!("log record from iclog {iclog} at LSN {lsn}{ck}")
        }
        IoPurpose::LogDataFlush { iclog } => format!("data-device flush before iclog {iclog}'s record"),
        IoPurpose::PushFlush { worker } => format!("push worker {worker}'s flush before its first iclog (v5.14)"),
        IoPurpose::Metadata { item } => format!("xfsaild writing metadata item {item} back"),
        IoPurpose::FileData { task } => format!("fsync by writer {task}"),
        IoPurpose::MetaRead { task } => format!("metadata read by writer {task}"),
        IoPurpose::Flush => "flush".into(),
    };
    format!(
        "#{} {kind}, {} KiB at sector {}: {what}; {:.1} µs",
        s.id,
        s.bytes / 1024,
        s.sector,
        (s.done_ns - s.submit_ns) as f64 / 1e3
    )
}

fn draw(canvas: &HtmlCanvasElement, bars: &[TimelineBar], lanes: &[String]) {
    let Ok(Some(ctx)) = canvas.get_context("2d") else { return };
    let Ok(ctx) = ctx.dyn_into::<CanvasRenderingContext2d>() else { return };
    let scale = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).max(1.0);
    let h = LANE_H * lanes.len().max(1) as f64;
    canvas.set_width((WIDTH * scale) as u32);
    canvas.set_height((h * scale) as u32);
    let _ = ctx.set_transform(scale, 0.0, 0.0, scale, 0.0, 0.0);
    ctx.set_fill_style_str("#fbfbf9");
    ctx.fill_rect(0.0, 0.0, WIDTH, h);
    for (i, name) in lanes.iter().enumerate() {
        let y = i as f64 * LANE_H;
        ctx.set_fill_style_str("#eef0ec");
        ctx.fill_rect(0.0, y + LANE_H - 1.0, WIDTH, 1.0);
        ctx.set_fill_style_str("#65707a");
        ctx.set_font("11px system-ui, sans-serif");
        let _ = ctx.fill_text(name, 4.0, y + 10.0);
    }
    for b in bars {
        let lane_y = b.lane as f64 * LANE_H;
        let y = lane_y + TOP + b.row as f64 * ROW_H;
        if b.flush {
            // A cache flush shades its whole lane until it completes.
            ctx.set_fill_style_str("rgba(192,57,43,0.12)");
            ctx.fill_rect(b.x0, lane_y + TOP, b.x1 - b.x0, ROW_H * TIMELINE_ROWS as f64);
        }
        ctx.set_fill_style_str(b.colour);
        ctx.fill_rect(b.x0, y + 1.0, b.x1 - b.x0, ROW_H - 2.0);
        ctx.set_fill_style_str("#b0201a");
        if b.preflush {
            ctx.fill_rect(b.x0, y, 2.0, ROW_H);
        }
        if b.fua {
            ctx.fill_rect(b.x1 - 2.0, y, 2.0, ROW_H);
        }
    }
}

#[function_component(Timeline)]
pub fn timeline(p: &TimelineProps) -> Html {
    let canvas = use_node_ref();
    let hover = use_state(|| None::<String>);
    let bars = timeline_bars(&p.spans, p.now, p.window, WIDTH);
    {
        let (canvas, bars, lanes) = (canvas.clone(), bars.clone(), p.lanes.clone());
        use_effect_with((p.spans.clone(), p.now, p.window), move |_| {
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                draw(&c, &bars, &lanes);
            }
        });
    }
    let on_move = {
        let (hover, spans, canvas) = (hover.clone(), p.spans.clone(), canvas.clone());
        Callback::from(move |e: MouseEvent| {
            let Some(c) = canvas.cast::<HtmlCanvasElement>() else { return };
            let rect = c.get_bounding_client_rect();
            let x = (e.client_x() as f64 - rect.left()) / rect.width().max(1.0) * WIDTH;
            let y = (e.client_y() as f64 - rect.top()) / rect.height().max(1.0) * c.height() as f64
                / web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).max(1.0);
            let lane = (y / LANE_H) as u8;
            let row = ((y - lane as f64 * LANE_H - TOP) / ROW_H).max(0.0) as u8;
            let hit = bars
                .iter()
                .rev()
                .find(|b| b.lane == lane && (b.flush || b.row == row) && x >= b.x0 - 2.0 && x <= b.x1 + 2.0);
            hover.set(hit.and_then(|b| spans.get(b.span)).map(describe));
        })
    };
    let (log_writes, flagged) = p.spans.iter().fold((0, 0), |(n, f), s| match (s.purpose, s.kind) {
        (IoPurpose::Log { .. }, IoKind::Write { preflush, .. }) => (n + 1, f + preflush as u32),
        _ => (n, f),
    });
    html! {
        <div class="panel timeline" data-testid="timeline" data-log-writes={log_writes.to_string()} data-preflush={flagged.to_string()}>
            <h2>{ format!("flush timeline — the last {:.2} ms", p.window as f64 / 1e6) }</h2>
            <p class="what">{ "Every block request the journal issues, as it happens: log records (green; dark green carries a commit record), \
                metadata writeback (brown), fsync data (purple), cache flushes (red bands). A red tick at a bar's start is PREFLUSH, at its end FUA." }</p>
            <canvas ref={canvas} onmousemove={on_move} role="img"
                aria-label={format!("{} requests; {log_writes} log writes, {flagged} with PREFLUSH", p.spans.len())}
                style={format!("width:100%;height:{}px", LANE_H * p.lanes.len().max(1) as f64)} />
            <p class="hover" data-testid="timeline-hover">{ hover.as_deref().unwrap_or("Hover over a bar to see what it carries.") }</p>
        </div>
    }
}
