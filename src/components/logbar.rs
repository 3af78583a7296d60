//! The on-disk log as a bar: live region from tail to head, wrapping at the physical end.

use crate::geometry::log_fraction;
use std::rc::Rc;
use xlog::View;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct LogBarProps {
    pub view: Rc<View>,
}

#[function_component(LogBar)]
pub fn log_bar(props: &LogBarProps) -> Html {
    let v = &props.view;
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
            <svg viewBox="0 0 100 8" preserveAspectRatio="none" style="width:100%;height:28px" data-testid="logbar">
                <rect x="0" y="1" width="100" height="6" fill="#eef0ec" />
                { for live.iter().map(|&(x, w)| html! {
                    <rect x={format!("{x:.3}")} y="1" width={format!("{:.3}", w.max(0.0))} height="6" fill="#7fb8a8" />
                }) }
                <rect x={format!("{:.3}", tail)} y="0" width="0.4" height="8" fill="#65707a" />
                <rect x={format!("{:.3}", head)} y="0" width="0.4" height="8" fill="#1d2428" />
            </svg>
            <div class="legend">
                <span style="--c:#7fb8a8">{ format!("live: tail {} → head {}", v.tail_lsn, v.curr_lsn) }</span>
                <span style="--c:#1d2428">{ format!("cycle {}", v.curr_lsn.cycle()) }</span>
            </div>
        </div>
    }
}
