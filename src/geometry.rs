//! Pure geometry of the iclog ring drawing: a plain function of the view, testable natively.

use xlog::IclogState;

/// Colour for each iclog state (shared by the ring and its legend).
pub fn state_colour(state: IclogState) -> &'static str {
    match state {
        IclogState::Active => "#7fb8a8",
        IclogState::WantSync => "#e5b04a",
        IclogState::Syncing => "#d9742b",
        IclogState::DoneSync => "#8c6bb1",
        IclogState::Callback => "#5b8bd0",
        IclogState::Dirty => "#a4a9ad",
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
    fn every_state_has_a_distinct_colour() {
        use IclogState::*;
        let all = [Active, WantSync, Syncing, DoneSync, Callback, Dirty];
        let mut c: Vec<_> = all.iter().map(|&s| state_colour(s)).collect();
        c.sort();
        c.dedup();
        assert_eq!(c.len(), all.len());
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
}
