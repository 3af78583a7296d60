//! The iclog ring: one segment per iclog, coloured by state, filled by use.

use crate::drawing::{ring_segments, state_label};
use crate::palette;
use std::rc::Rc;
use xlog::{icl_flags_str, IclogsView, View};
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
    html! {
        <div class="panel ring">
            <h2>{ "iclog ring" }</h2>
            <p class="what">{ "The in-core log buffers (struct xlog_in_core): writers copy log records into the ring head (outlined); a full \
                or forced iclog is written out, and completes in ring order. FLUSH/FUA mark the cache-flush flags it will be written with; \
                \"commits N\" names the checkpoints whose commit record it carries." }</p>
            <svg viewBox="-100 0 600 400" role="img" aria-label="iclog ring">
                { for v.iclogs.iter().zip(segs.iter()).enumerate().map(|(i, (ic, seg))| {
                    let commits = detail.iclogs.get(i).map(|p| p.checkpoints.clone()).unwrap_or_default();
                    let mut marks = Vec::new();
                    let flags = icl_flags_str(ic.flags);
                    if flags.contains("XLOG_ICL_NEED_FLUSH") { marks.push("FLUSH".to_string()); }
                    if flags.contains("XLOG_ICL_NEED_FUA") { marks.push("FUA".to_string()); }
                    let flag_line = marks.join("|");
                    let commit_line = match commits.as_slice() {
                        [] => String::new(),
                        [one] => format!("commits {one}"),
                        [a, .., z] => format!("commits {a}–{z}"),
                    };
                    if !commit_line.is_empty() { marks.push(commit_line.clone()); }
                    let colour = palette::iclog_state(ic.state);
                    let head = ic.index == v.head_iclog;
                    let (dx, dy) = (seg.label_x - 200.0, seg.label_y - 200.0);
                    let d = dx.hypot(dy).max(1e-9);
                    // Beside the segment's number and state, away from the ring.
                    let (mx, my, anchor) = if dx / d > 0.3 {
                        (seg.label_x + 28.0, seg.label_y, "start")
                    } else if dx / d < -0.3 {
                        (seg.label_x - 28.0, seg.label_y, "end")
                    } else {
                        (seg.label_x, seg.label_y + dy.signum() * 28.0, "middle")
                    };
                    let title = format!("iclog {}: {} refcnt {} offset {} lsn {} {} {}",
                        ic.index, ic.state.kernel_name(), ic.refcnt, ic.offset, ic.lsn, icl_flags_str(ic.flags), marks.join(" "));
                    html! {
                        <g data-testid="iclog" data-state={state_label(ic.state)} data-head={head.to_string()}>
                            <title>{ title }</title>
                            <path d={seg.slot_path.clone()} fill={colour} fill-opacity="0.35"
                                stroke={if head { palette::INK } else { "none" }} stroke-width="2.5" />
                            <path d={seg.fill_path.clone()} fill={colour} />
                            <text x={format!("{:.1}", seg.label_x)} y={format!("{:.1}", seg.label_y - 7.0)}
                                text-anchor="middle" dominant-baseline="middle" font-size="13" font-weight="600" fill={palette::INK}>
                                { format!("{}{}", ic.index, if ic.refcnt > 0 { format!(" ·{}", ic.refcnt) } else { String::new() }) }
                            </text>
                            <text x={format!("{:.1}", seg.label_x)} y={format!("{:.1}", seg.label_y + 8.0)}
                                text-anchor="middle" dominant-baseline="middle" font-size="9" fill={palette::INK}>{ state_label(ic.state) }</text>
                            if !marks.is_empty() {
                                // Outside the ring, beside its segment.
                                <text x={format!("{:.1}", mx)} y={format!("{:.1}", my - 6.0)} data-testid="iclog-marks" data-marks={marks.join(" ")}
                                    text-anchor={anchor} dominant-baseline="middle" font-size="11" fill={palette::MARK}>
                                    <tspan x={format!("{:.1}", mx)}>{ flag_line.clone() }</tspan>
                                    <tspan x={format!("{:.1}", mx)} dy="12">{ commit_line.clone() }</tspan>
                                </text>
                            }
                        </g>
                    }
                }) }
                <text x="200" y="190" text-anchor="middle" font-size="15" fill={palette::INK}>{ format!("head {}", v.curr_lsn) }</text>
                <text x="200" y="212" text-anchor="middle" font-size="13" fill={palette::MUTED_TEXT}>{ format!("tail {}", v.tail_lsn) }</text>
                if noiclogs > 0 {
                    <text x="200" y="236" text-anchor="middle" font-size="12" fill={palette::MARK} data-testid="noiclogs">
                        { format!("{noiclogs} waiting for a free iclog (noiclogs)") }
                    </text>
                }
            </svg>
            <div class="legend">
                { for palette::ICLOG_STATES.iter().map(|&s| html! {
                    <span style={format!("--c:{}", palette::iclog_state(s))}>{ state_label(s) }</span>
                }) }
            </div>
        </div>
    }
}
