//! The iclog ring: one segment per iclog, coloured by state, filled by use.

use crate::geometry::{ring_segments, state_colour, state_label};
use std::rc::Rc;
use xlog::{icl_flags_str, IclogState, IclogsView, View};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct RingProps {
    pub view: Rc<View>,
    /// Flags, commit records held and waiters per iclog.
    pub iclogs: Rc<IclogsView>,
}

#[function_component(IclogRing)]
pub fn iclog_ring(props: &RingProps) -> Html {
    let v = &props.view;
    let detail = &props.iclogs;
    let noiclogs = detail.noiclog_waiters.len();
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
            <p class="what">{ "The in-core log buffers (struct xlog_in_core): writers copy log records into the ring head (outlined); a full \
                or forced iclog is written out, and completes in ring order. FLUSH/FUA mark the cache-flush flags it will be written with; \
                \"commits N\" names the checkpoints whose commit record it carries." }</p>
            <svg viewBox="0 0 400 400" role="img" aria-label="iclog ring">
                { for v.iclogs.iter().zip(segs.iter()).enumerate().map(|(i, (ic, seg))| {
                    let commits = detail.iclogs.get(i).map(|p| p.checkpoints.clone()).unwrap_or_default();
                    let mut marks = Vec::new();
                    let flags = icl_flags_str(ic.flags);
                    if flags.contains("XLOG_ICL_NEED_FLUSH") { marks.push("FLUSH".to_string()); }
                    if flags.contains("XLOG_ICL_NEED_FUA") { marks.push("FUA".to_string()); }
                    if !commits.is_empty() { marks.push(format!("commits {}", commits.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","))); }
                    let colour = state_colour(ic.state);
                    let head = ic.index == v.head_iclog;
                    let title = format!("iclog {}: {} refcnt {} offset {} lsn {} {} {}",
                        ic.index, ic.state.kernel_name(), ic.refcnt, ic.offset, ic.lsn, icl_flags_str(ic.flags), marks.join(" "));
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
                            if !marks.is_empty() {
                                <text x={format!("{:.1}", seg.label_x.clamp(70.0, 330.0))} y={format!("{:.1}", seg.label_y + 13.0)} data-testid="iclog-marks"
                                    text-anchor="middle" dominant-baseline="middle" font-size="9" fill="#b0201a">{ marks.join(" ") }</text>
                            }
                        </g>
                    }
                }) }
                <text x="200" y="190" text-anchor="middle" font-size="15" fill="#1d2428">{ format!("head {}", v.curr_lsn) }</text>
                <text x="200" y="212" text-anchor="middle" font-size="13" fill="#65707a">{ format!("tail {}", v.tail_lsn) }</text>
                if noiclogs > 0 {
                    <text x="200" y="236" text-anchor="middle" font-size="12" fill="#b0201a" data-testid="noiclogs">
                        { format!("{noiclogs} waiting for a free iclog (noiclogs)") }
                    </text>
                }
            </svg>
            <div class="legend">
                { for legend.iter().map(|&s| html! {
                    <span style={format!("--c:{}", state_colour(s))}>{ state_label(s) }</span>
                }) }
            </div>
        </div>
    }
}
