//! Narration for the ARIA live region: what changed between two frames, in kernel terms
//! ("iclog 3 → SYNCING, PREFLUSH|FUA"), so the lab can be followed without seeing it.

use crate::drawing::state_label;
use xlog::{icl_flags_str, View};

/// At most this many lines per frame: at speed the region summarises instead.
const MAX_LINES: usize = 4;

/// What changed from `prev` to `next`.
pub fn narrate(prev: &View, next: &View) -> Vec<String> {
    let mut out = Vec::new();
    for (a, b) in prev.iclogs.iter().zip(&next.iclogs) {
        if a.state != b.state {
            let flags = icl_flags_str(b.flags);
            let flags =
                if flags.is_empty() { String::new() } else { format!(", {}", flags.replace("XLOG_ICL_NEED_", "")) };
            out.push(format!("iclog {} → {}{flags}", b.index, state_label(b.state)));
        }
    }
    if next.cil_throttle_depth != prev.cil_throttle_depth {
        out.push(format!("CIL throttle queue {} → {}", prev.cil_throttle_depth, next.cil_throttle_depth));
    }
    if next.reserve_waiters != prev.reserve_waiters {
        out.push(format!("grant head waiters {} → {}", prev.reserve_waiters, next.reserve_waiters));
    }
    if next.tail_lsn != prev.tail_lsn {
        out.push(format!("log tail moved to {}", next.tail_lsn));
    }
    if out.len() > MAX_LINES {
        let n = out.len();
        out.truncate(MAX_LINES - 1);
        out.push(format!("and {} more changes", n - (MAX_LINES - 1)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlog::{find_preset, Sim, NS_PER_US};

    #[test]
    fn iclog_state_changes_are_told_with_their_flags() {
        let s = find_preset("small-crash").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        let mut prev = sim.view();
        let mut lines = Vec::new();
        for _ in 0..200 {
            sim.run_until(sim.now() + 5 * NS_PER_US);
            let v = sim.view();
            lines.extend(narrate(&prev, &v));
            prev = v;
        }
        assert!(lines.iter().any(|l| l.contains("→ SYNCING, FLUSH|FUA")), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("→ ACTIVE")), "{lines:?}");
        assert!(narrate(&prev, &prev).is_empty(), "no change, no words");
    }
}
