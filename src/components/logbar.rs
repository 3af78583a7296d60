//! The on-disk log as a bar: live region from tail to head, wrapping at the physical end.

use crate::geometry::{grant_fraction, log_fraction};
use std::rc::Rc;
use xlog::{LogSpaceView, View};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct LogBarProps {
    pub view: Rc<View>,
    pub space: Rc<LogSpaceView>,
}

#[function_component(LogBar)]
pub fn log_bar(props: &LogBarProps) -> Html {
    let v = &props.view;
    let s = &props.space;
    let reserve = grant_fraction(s.reserve.bytes, s.log_bytes) * 100.0;
    let write = grant_fraction(s.write.bytes, s.log_bytes) * 100.0;
    let head = log_fraction(v.curr_lsn.block(), v.log_bb) * 100.0;
    let tail = log_fraction(v.tail_lsn.block(), v.log_bb) * 100.0;
    // The live log runs from tail to head; past the physical end it wraps to block 0.
    let live: Vec<(f64, f64)> = if v.curr_lsn.cycle() == v.tail_lsn.cycle() {
        vec![(tail, head - tail)]
    } else {
        vec![(tail, 100.0 - tail), (0.0, head)]
    };
    html! {
        <div class="panel" style="margin-top:14px">
            <h2>{ format!("on-disk log ({} blocks)", v.log_bb) }</h2>
            <p class="what">{ "The log (struct xlog) is a ring of 512-byte blocks: records go in at the head; space comes back only when the tail moves,                 after the AIL has written the metadata behind it back in place. Reservations take space ahead of the head on the grant heads." }</p>
            <svg viewBox="0 0 100 8" preserveAspectRatio="none" style="width:100%;height:28px" data-testid="logbar">
                <rect x="0" y="1" width="100" height="6" fill="#eef0ec" />
                { for live.iter().map(|&(x, w)| html! {
                    <rect x={format!("{x:.3}")} y="1" width={format!("{:.3}", w.max(0.0))} height="6" fill="#7fb8a8" />
                }) }
                <rect x={format!("{:.3}", tail)} y="0" width="0.4" height="8" fill="#65707a" />
                <rect x={format!("{:.3}", head)} y="0" width="0.4" height="8" fill="#1d2428" />
                <rect x={format!("{:.3}", reserve)} y="0" width="0.4" height="3" fill="#c0392b" />
                <rect x={format!("{:.3}", write)} y="5" width="0.4" height="3" fill="#5b8bd0" />
            </svg>
            <div class="legend">
                <span style="--c:#7fb8a8">{ format!("live: tail {} → head {}", v.tail_lsn, v.curr_lsn) }</span>
                <span style="--c:#1d2428">{ format!("cycle {}", v.curr_lsn.cycle()) }</span>
                <span style="--c:#c0392b">{ format!("reserve grant head: cycle {}, {} KiB in ({} KiB free, {} waiting)", s.reserve.cycle, s.reserve.bytes / 1024, s.reserve.free_bytes / 1024, s.reserve.waiters.len()) }</span>
                <span style="--c:#5b8bd0">{ format!("write grant head: cycle {}, {} KiB in ({} KiB free)", s.write.cycle, s.write.bytes / 1024, s.write.free_bytes / 1024) }</span>
                <span style="--c:#a4a9ad">{ format!("last synced {}; AIL pushed when fewer than {} blocks are free", s.last_sync_lsn, s.tail_push_threshold_bb) }</span>
            </div>
        </div>
    }
}
