//! The iclog ring: one segment per iclog, coloured by state, filled by use.

use crate::geometry::{ring_segments, state_colour, state_label};
use std::rc::Rc;
use xlog::{icl_flags_str, IclogState, View};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct RingProps {
    pub view: Rc<View>,
}

#[function_component(IclogRing)]
pub fn iclog_ring(props: &RingProps) -> Html {
    let v = &props.view;
    let fill: Vec<f64> = v.iclogs.iter().map(|ic| ic.offset as f64 / ic.capacity.max(1) as f64).collect();
    let segs = ring_segments(v.iclogs.len(), 200.0, 200.0, 150.0, 95.0, &fill);
    let legend = [
        IclogState::Active,
        IclogState::WantSync,
        IclogState::Syncing,
        IclogState::DoneSync,
        IclogState::Callback,
        IclogState::Dirty,
    ];
    html! {
        <div class="panel ring">
            <h2>{ "iclog ring" }</h2>
            <svg viewBox="0 0 400 400" role="img" aria-label="iclog ring">
                { for v.iclogs.iter().zip(segs.iter()).map(|(ic, seg)| {
                    let colour = state_colour(ic.state);
                    let head = ic.index == v.head_iclog;
                    let title = format!("iclog {}: {} refcnt {} offset {} lsn {} {}",
                        ic.index, ic.state.kernel_name(), ic.refcnt, ic.offset, ic.lsn, icl_flags_str(ic.flags));
                    html! {
                        <g data-testid="iclog" data-state={state_label(ic.state)} data-head={head.to_string()}>
                            <title>{ title }</title>
                            <path d={seg.slot_path.clone()} fill={colour} fill-opacity="0.35"
                                stroke={if head { "#1d2428" } else { "none" }} stroke-width="2.5" />
                            <path d={seg.fill_path.clone()} fill={colour} />
                            <text x={format!("{:.1}", seg.label_x)} y={format!("{:.1}", seg.label_y)}
                                text-anchor="middle" dominant-baseline="middle" font-size="12" fill="#333">
                                { format!("{}{}", ic.index, if ic.refcnt > 0 { format!(" ·{}", ic.refcnt) } else { String::new() }) }
                            </text>
                        </g>
                    }
                }) }
                <text x="200" y="190" text-anchor="middle" font-size="15" fill="#1d2428">{ format!("head {}", v.curr_lsn) }</text>
                <text x="200" y="212" text-anchor="middle" font-size="13" fill="#65707a">{ format!("tail {}", v.tail_lsn) }</text>
            </svg>
            <div class="legend">
                { for legend.iter().map(|&s| html! {
                    <span style={format!("--c:{}", state_colour(s))}>{ state_label(s) }</span>
                }) }
            </div>
        </div>
    }
}
