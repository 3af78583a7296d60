//! Iclog flag patterns from trace-cmd text: the model's trace and the real kernel's read the same.
//!
//! A checkpoint's iclogs are the `xlog_iclog_sync` events from one commit iclog (the one
//! carrying `XLOG_ICL_NEED_FUA`) to the next: the start iclog first, the middle ones, then the
//! commit iclog. Checkpoints that share one commit iclog count once (the trace cannot tell them
//! apart; the model's own counters can).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One `xlog_iclog_sync`: the record's LSN and whether it asks for a PREFLUSH and/or FUA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IclogSync {
    pub lsn: u64,
    pub flush: bool,
    pub fua: bool,
}

/// Every `xlog_iclog_sync` of a trace, in trace order (the kernel's and the model's print the
/// same fields: `lsn 0x… flags XLOG_ICL_NEED_FLUSH|XLOG_ICL_NEED_FUA`).
pub fn iclog_syncs(trace: &str) -> Vec<IclogSync> {
    trace.lines().filter(|l| l.contains(" xlog_iclog_sync: ")).filter_map(parse_sync).collect()
}

fn parse_sync(line: &str) -> Option<IclogSync> {
    let after = |key: &str| line.split(key).nth(1);
    let lsn_hex = after(" lsn 0x")?.split_whitespace().next()?;
    let lsn = u64::from_str_radix(lsn_hex, 16).ok()?;
    // `flags ` is followed by the flag names, or by nothing before ` caller`.
    let flags = after(" flags ")?.split(" caller").next()?.trim();
    Some(IclogSync { lsn, flush: flags.contains("XLOG_ICL_NEED_FLUSH"), fua: flags.contains("XLOG_ICL_NEED_FUA") })
}

fn mark(s: &IclogSync) -> &'static str {
    match (s.flush, s.fua) {
        (false, false) => "-",
        (true, false) => "FLUSH",
        (false, true) => "FUA",
        (true, true) => "FLUSH|FUA",
    }
}

/// What the iclog flags say about each checkpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlagPatterns {
    pub iclog_syncs: u64,
    /// Iclogs by flags: "-", "FLUSH", "FUA", "FLUSH|FUA".
    pub iclogs_by_flags: BTreeMap<String, u64>,
    /// Commit iclogs (NEED_FUA): one per checkpoint, or per group sharing one.
    pub commit_iclogs: u64,
    /// Checkpoints that span more than one iclog.
    pub multi_iclog_checkpoints: u64,
    /// Of those: the start iclog carries NEED_FLUSH.
    pub start_flush: u64,
    /// Of those: the first iclog has no flags because the start record went into the previous
    /// checkpoint's commit iclog (which carries NEED_FLUSH): pipelined pushes share it.
    pub start_in_previous_commit: u64,
    /// Of those: middle iclogs, and how many carry no flags.
    pub middle_iclogs: u64,
    pub middle_unflagged: u64,
    /// Of those: the commit iclog carries NEED_FLUSH and NEED_FUA.
    pub commit_flush_fua: u64,
    /// Iclogs per checkpoint, median and largest, over multi-iclog checkpoints.
    pub iclogs_per_checkpoint_p50: u64,
    pub iclogs_per_checkpoint_max: u64,
    /// Pattern → count, e.g. "FLUSH -x8 FLUSH|FUA" (the ten most common).
    pub patterns: BTreeMap<String, u64>,
    /// Records whose LSN does not follow the previous one (cycle:block order).
    pub out_of_order: u64,
}

impl FlagPatterns {
    pub fn of(syncs: &[IclogSync]) -> FlagPatterns {
        let mut p = FlagPatterns { iclog_syncs: syncs.len() as u64, ..Default::default() };
        for s in syncs {
            *p.iclogs_by_flags.entry(mark(s).to_string()).or_default() += 1;
        }
        p.out_of_order = syncs.windows(2).filter(|w| w[1].lsn <= w[0].lsn).count() as u64;
        let mut lens = Vec::new();
        let mut patterns: BTreeMap<String, u64> = BTreeMap::new();
        let mut cur: Vec<IclogSync> = Vec::new();
        let mut after_commit = false;
        for s in syncs {
            cur.push(*s);
            if !s.fua {
                continue;
            }
            p.commit_iclogs += 1;
            let ck = std::mem::take(&mut cur);
            if ck.len() > 1 {
                p.multi_iclog_checkpoints += 1;
                lens.push(ck.len() as u64);
                p.start_flush += ck[0].flush as u64;
                p.start_in_previous_commit += (!ck[0].flush && !ck[0].fua && after_commit) as u64;
                let middle = &ck[1..ck.len() - 1];
                p.middle_iclogs += middle.len() as u64;
                p.middle_unflagged += middle.iter().filter(|m| !m.flush && !m.fua).count() as u64;
                let last = ck[ck.len() - 1];
                p.commit_flush_fua += (last.flush && last.fua) as u64;
            }
            *patterns.entry(pattern(&ck)).or_default() += 1;
            after_commit = true;
        }
        lens.sort_unstable();
        p.iclogs_per_checkpoint_p50 = lens.get(lens.len() / 2).copied().unwrap_or(0);
        p.iclogs_per_checkpoint_max = lens.last().copied().unwrap_or(0);
        let mut top: Vec<(String, u64)> = patterns.into_iter().collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        p.patterns = top.into_iter().take(10).collect();
        p
    }
}

/// "FLUSH -x3 FLUSH|FUA": runs of equal flags collapsed.
fn pattern(ck: &[IclogSync]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ck.len() {
        let m = mark(&ck[i]);
        let n = ck[i..].iter().take_while(|s| mark(s) == m).count();
        out.push(if n > 1 { format!("{m}x{n}") } else { m.to_string() });
        i += n;
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as this machine's 6.18 kernel printed them (one checkpoint of four iclogs).
    const REAL: &str = "\
kworker/u8:0-26650   [001] .N... 18662.655483: xlog_iclog_sync: dev 7:0 state XLOG_STATE_SYNCING refcnt 0 offset 258048 lsn 0x100000002 flags XLOG_ICL_NEED_FLUSH caller xlog_state_release_iclog+0x121/0x1b0
kworker/u8:0-26650   [001] .N... 18662.655689: xlog_iclog_sync: dev 7:0 state XLOG_STATE_SYNCING refcnt 0 offset 258048 lsn 0x100000202 flags  caller xlog_state_release_iclog+0x121/0x1b0
kworker/1:1H-26650   [001] ..... 18662.656000: block_rq_issue: 7,0 FF 0 () 0 + 0 none,0,0 [kworker/1:1H]
kworker/u8:0-26650   [001] .N... 18662.655892: xlog_iclog_sync: dev 7:0 state XLOG_STATE_SYNCING refcnt 0 offset 258048 lsn 0x100000402 flags  caller xlog_state_release_iclog+0x121/0x1b0
kworker/u8:0-26650   [001] .N... 18662.656366: xlog_iclog_sync: dev 7:0 state XLOG_STATE_SYNCING refcnt 0 offset 31900 lsn 0x100000602 flags XLOG_ICL_NEED_FLUSH|XLOG_ICL_NEED_FUA caller xlog_state_release_iclog+0x121/0x1b0
kworker/u8:0-26650   [001] .N... 18662.656400: xlog_iclog_sync: dev 7:0 state XLOG_STATE_SYNCING refcnt 0 offset 512 lsn 0x100000640 flags XLOG_ICL_NEED_FLUSH|XLOG_ICL_NEED_FUA caller xlog_state_release_iclog+0x121/0x1b0
";

    #[test]
    fn a_real_trace_gives_start_middle_and_commit_flags() {
        let s = iclog_syncs(REAL);
        assert_eq!(s.len(), 5);
        assert_eq!(s[0], IclogSync { lsn: 0x1_0000_0002, flush: true, fua: false });
        assert!(!s[1].flush && !s[1].fua);
        let p = FlagPatterns::of(&s);
        assert_eq!((p.commit_iclogs, p.multi_iclog_checkpoints), (2, 1));
        assert_eq!((p.start_flush, p.middle_iclogs, p.middle_unflagged, p.commit_flush_fua), (1, 2, 2, 1));
        assert_eq!(p.start_in_previous_commit, 0, "the trace's first checkpoint starts in its own iclog");
        assert_eq!(p.iclogs_per_checkpoint_p50, 4);
        assert_eq!(p.patterns.get("FLUSH -x2 FLUSH|FUA"), Some(&1));
        assert_eq!(p.patterns.get("FLUSH|FUA"), Some(&1));
        assert_eq!(p.iclogs_by_flags.get("-"), Some(&2));
        assert_eq!(p.out_of_order, 0);
    }

    #[test]
    fn a_start_record_in_the_previous_commit_iclog_is_told_apart() {
        // Pipelined: the second checkpoint's first own iclog has no flags.
        let t =
            format!("{REAL}{}", REAL.replace("lsn 0x100000002 flags XLOG_ICL_NEED_FLUSH", "lsn 0x100000002 flags "));
        let p = FlagPatterns::of(&iclog_syncs(&t));
        assert_eq!((p.multi_iclog_checkpoints, p.start_flush, p.start_in_previous_commit), (2, 1, 1));
    }

    #[test]
    fn a_flagged_middle_iclog_and_a_backwards_lsn_are_counted() {
        let t = REAL.replace("lsn 0x100000402 flags ", "lsn 0x100000002 flags XLOG_ICL_NEED_FLUSH");
        let p = FlagPatterns::of(&iclog_syncs(&t));
        assert_eq!(p.middle_unflagged, 1);
        assert_eq!(p.out_of_order, 1);
    }
}
