//! The on-disk log: the whole ring as a bar (live region from tail to head, wrapping at the
//! physical end), and a zoom on the live part with the grant heads and checkpoints by LSN.

use crate::drawing::{grant_fraction, log_fraction, log_zoom};
use crate::palette;
use std::rc::Rc;
use xlog::{LogSpaceView, View};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct LogBarProps {
    pub view: Rc<View>,
    pub space: Rc<LogSpaceView>,
}

fn tick(x: f64, y: f64, h: f64, colour: &'static str) -> Html {
    html! { <rect x={format!("{:.3}", x * 100.0)} y={y.to_string()} width="0.35" height={h.to_string()} fill={colour} /> }
}

#[function_component(LogBar)]
pub fn log_bar(props: &LogBarProps) -> Html {
    let v = &props.view;
    let s = &props.space;
    let reserve = grant_fraction(s.reserve.bytes, s.log_bytes);
    let write = grant_fraction(s.write.bytes, s.log_bytes);
    let head = log_fraction(v.curr_lsn.block(), v.log_bb);
    let tail = log_fraction(v.tail_lsn.block(), v.log_bb);
    // The live log runs from tail to head; past the physical end it wraps to block 0.
    let live: Vec<(f64, f64)> = if v.curr_lsn.cycle() == v.tail_lsn.cycle() {
        vec![(tail, head - tail)]
    } else {
        vec![(tail, 1.0 - tail), (0.0, head)]
    };
    let z = log_zoom(s);
    let waiters = s.reserve.waiters.iter().chain(s.write.waiters.iter()).count();
    html! {
        <div class="panel" style="margin-top:14px" data-testid="logspace" data-checkpoints={z.checkpoints.len().to_string()}>
            <h2>{ format!("on-disk log ({} blocks)", v.log_bb) }</h2>
            <p class="what">{ "The log (struct xlog) is a ring of 512-byte blocks: records go in at the head; space comes back only when the tail moves, \
                after the AIL has written the metadata behind it back in place. Reservations take space ahead of the head on the grant heads." }</p>
            <svg viewBox="0 0 100 8" preserveAspectRatio="none" style="width:100%;height:28px" data-testid="logbar" role="img"
                aria-label={format!("whole log: tail {} head {}", v.tail_lsn, v.curr_lsn)}>
                <rect x="0" y="1" width="100" height="6" fill={palette::TRACK} />
                { for live.iter().map(|&(x, w)| html! {
                    <rect x={format!("{:.3}", x * 100.0)} y="1" width={format!("{:.3}", (w * 100.0).max(0.0))} height="6" fill={palette::BLUISH_GREEN} fill-opacity="0.6" />
                }) }
                { tick(tail, 0.0, 8.0, palette::GREY) }
                { tick(head, 0.0, 8.0, palette::INK) }
                { tick(reserve, 0.0, 3.0, palette::VERMILLION) }
                { tick(write, 5.0, 3.0, palette::BLUE) }
            </svg>
            <p class="what" style="margin:6px 0 2px">{ format!("Zoom: the {} blocks from the tail to the furthest grant head, checkpoints laid out by LSN (start record to commit record).", z.span_bb) }</p>
            <svg viewBox="0 0 100 14" preserveAspectRatio="none" style="width:100%;height:44px" data-testid="logzoom" role="img"
                aria-label={format!("{} checkpoints between tail {} and head {}", z.checkpoints.len(), s.tail_lsn, s.head_lsn)}>
                <rect x="0" y="4" width="100" height="8" fill={palette::TRACK} />
                <rect x="0" y="4" width={format!("{:.3}", z.head * 100.0)} height="8" fill={palette::BLUISH_GREEN} fill-opacity="0.25" />
                { for z.checkpoints.iter().enumerate().map(|(k, &(q, a, b, done))| html! {
                    <rect x={format!("{:.3}", a * 100.0)} y={if k % 2 == 0 { "5" } else { "8" }} width={format!("{:.3}", ((b - a) * 100.0).max(0.3))} height="3"
                        fill={if done { palette::BLUE } else { palette::SKY_BLUE }}>
                        <title>{ format!("checkpoint {q}{}", if done { "" } else { " (commit record not yet on disk)" }) }</title>
                    </rect>
                }) }
                { tick(z.last_sync, 2.0, 12.0, palette::GREY) }
                { tick(z.head, 0.0, 14.0, palette::INK) }
                { tick(z.write, 0.0, 4.0, palette::BLUE) }
                { tick(z.reserve, 0.0, 4.0, palette::VERMILLION) }
            </svg>
            <div class="legend">
                <span style={format!("--c:{}", palette::BLUISH_GREEN)}>{ format!("live: tail {} → head {}", v.tail_lsn, v.curr_lsn) }</span>
                <span style={format!("--c:{}", palette::INK)}>{ format!("head, cycle {}", v.curr_lsn.cycle()) }</span>
                <span style={format!("--c:{}", palette::VERMILLION)}>{ format!("reserve grant head: cycle {}, {} KiB in ({} KiB free, {} waiting)", s.reserve.cycle, s.reserve.bytes / 1024, s.reserve.free_bytes / 1024, s.reserve.waiters.len()) }</span>
                <span style={format!("--c:{}", palette::BLUE)}>{ format!("write grant head: cycle {}, {} KiB in ({} KiB free, {} waiting)", s.write.cycle, s.write.bytes / 1024, s.write.free_bytes / 1024, s.write.waiters.len()) }</span>
                <span style={format!("--c:{}", palette::BLUE)}>{ format!("{} checkpoints in the live log", z.checkpoints.len()) }</span>
                <span style={format!("--c:{}", palette::GREY)}>{ format!("last_sync_lsn {}; the AIL is pushed when fewer than {} blocks are free", s.last_sync_lsn, s.tail_push_threshold_bb) }</span>
            </div>
            if s.in_transactions.0 > 0 {
                <p class="muted" data-key="grant-in-tx">{ format!(
                    "{} writer{} inside {} transaction{} hold{} {} KiB of the reserve grant head: xfs_trans_alloc reserves the log space before the work it does, so it stays taken until the commit",
                    s.in_transactions.0, if s.in_transactions.0 == 1 { "" } else { "s" },
                    if s.in_transactions.0 == 1 { "its" } else { "their" }, if s.in_transactions.0 == 1 { "" } else { "s" },
                    if s.in_transactions.0 == 1 { "s" } else { "" }, s.in_transactions.1 / 1024) }</p>
            }
            if waiters > 0 {
                <p class="muted" data-testid="grant-waiters">{ format!("Waiting for log space (first in line first): {}",
                    s.reserve.waiters.iter().map(|(t, need)| format!("{t} needs {} KiB", need / 1024)).collect::<Vec<_>>().join(", ")) }</p>
            }
        </div>
    }
}
