//! The crash oracle: named invariants checked on a crash image and its recovery.
//! It alone sees the checkpoint history; recovery never does.

use crate::format;
use crate::recovery::{read_record, recover, Image, RecoveryReport};
use crate::sim::{History, META_BB, META_START_SECTOR};
use crate::units::Lsn;
use serde::Serialize;
use std::collections::BTreeMap;

/// A named property of the journal. Reports list invariants by name, in alphabetical order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invariant {
    DeviceSemantics,
    CommitImpliesCheckpoint,
    WriteAhead,
    Tail,
    NoLiveOverwrite,
    MetadataLsnNotAhead,
    Durability,
    Prefix,
    RecoverySucceeds,
    RecoveryIdempotent,
    Liveness,
}

impl Invariant {
    pub const ALL: [Invariant; 11] = [
        Invariant::DeviceSemantics,
        Invariant::CommitImpliesCheckpoint,
        Invariant::WriteAhead,
        Invariant::Tail,
        Invariant::NoLiveOverwrite,
        Invariant::MetadataLsnNotAhead,
        Invariant::Durability,
        Invariant::Prefix,
        Invariant::RecoverySucceeds,
        Invariant::RecoveryIdempotent,
        Invariant::Liveness,
    ];

    /// The name reports and links use.
    pub fn as_str(self) -> &'static str {
        match self {
            Invariant::DeviceSemantics => "device_semantics",
            Invariant::CommitImpliesCheckpoint => "commit_implies_checkpoint",
            Invariant::WriteAhead => "write_ahead",
            Invariant::Tail => "tail",
            Invariant::NoLiveOverwrite => "no_live_overwrite",
            Invariant::MetadataLsnNotAhead => "metadata_lsn_not_ahead",
            Invariant::Durability => "durability",
            Invariant::Prefix => "prefix",
            Invariant::RecoverySucceeds => "recovery_succeeds",
            Invariant::RecoveryIdempotent => "recovery_idempotent",
            Invariant::Liveness => "liveness",
        }
    }

    /// What the invariant promises, in one sentence.
    pub fn explain(self) -> &'static str {
        match self {
            Invariant::DeviceSemantics => {
                "A completed FUA write is stable, and so is every write that completed before a completed flush."
            }
            Invariant::CommitImpliesCheckpoint => {
                "A checkpoint completes (its items unpinned) only when all its log blocks, commit record included, are stable."
            }
            Invariant::WriteAhead => {
                "Metadata reaches its place on disk only after the commit record of the checkpoint that logged it is stable."
            }
            Invariant::Tail => "Every change of a checkpoint the on-disk log tail has moved past is stable in place.",
            Invariant::NoLiveOverwrite => "A log write never lands on the live log between the tail and the head.",
            Invariant::MetadataLsnNotAhead => {
                "No metadata block on disk carries an LSN later than the log head at the crash."
            }
            Invariant::Durability => {
                "An acknowledged fsync survives the crash: its file data is stable and recovery brings its checkpoint back."
            }
            Invariant::Prefix => {
                "Recovery brings back the first k checkpoints for some k: never a later change without an earlier one."
            }
            Invariant::RecoverySucceeds => "Recovery finds the head and the tail and replays the log without an error.",
            Invariant::RecoveryIdempotent => {
                "Recovering again over what recovery wrote gives the same metadata, so a crash during recovery is harmless."
            }
            Invariant::Liveness => "The run never hangs: every task that sleeps is woken again.",
        }
    }
}

impl std::fmt::Display for Invariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// By name, so maps of invariants print (and serialize) alphabetically.
impl Ord for Invariant {
    fn cmp(&self, other: &Invariant) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for Invariant {
    fn partial_cmp(&self, other: &Invariant) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for Invariant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

pub const ALL_INVARIANTS: &[Invariant] = &Invariant::ALL;

/// The history at the crash, indexed for the prefix check.
pub struct Oracle<'h> {
    history: &'h History,
    /// item -> [(checkpoint index, version)] in commit order.
    touches: BTreeMap<u32, Vec<(u32, u64)>>,
    /// The log head at the crash: in-place metadata must not carry a later LSN.
    head_at_crash: Lsn,
    /// item -> (version, commit LSN) of its latest completed checkpoint, unless that freed it.
    last_completed: BTreeMap<u32, (u64, Lsn)>,
    /// item -> indexes into its `touches` that logged it stale: its block is free from that
    /// checkpoint until the next touch, so any content is right there.
    freed: BTreeMap<u32, Vec<usize>>,
}

impl<'h> Oracle<'h> {
    pub fn new(history: &'h History, head_at_crash: Lsn) -> Oracle<'h> {
        let mut touches: BTreeMap<u32, Vec<(u32, u64)>> = BTreeMap::new();
        let mut freed: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (c, ck) in history.checkpoints.iter().enumerate() {
            for &(item, v) in &ck.items {
                let t = touches.entry(item).or_default();
                if ck.freed.contains(&item) {
                    freed.entry(item).or_default().push(t.len());
                }
                t.push((c as u32, v));
            }
        }
        let mut last_completed = BTreeMap::new();
        for ck in history.checkpoints.iter().filter(|ck| ck.completed) {
            for &(item, v) in &ck.items {
                if ck.freed.contains(&item) {
                    last_completed.remove(&item);
                } else {
                    last_completed.insert(item, (v, ck.commit_lsn));
                }
            }
        }
        Oracle { history, touches, head_at_crash, last_completed, freed }
    }

    fn checkpoint_of(&self, item: u32, version: u64) -> Option<u32> {
        let t = self.touches.get(&item)?;
        t.iter().find(|&&(_, v)| v == version).map(|&(c, _)| c)
    }

    /// Length in blocks of the record holding `lsn`, when it is on the image intact.
    fn record_present(img: &Image, rep: Option<&RecoveryReport>, lsn: Lsn) -> Option<u32> {
        if let Some(rep) = rep {
            let found = &rep.records_found;
            let i = found.partition_point(|r| r.1 < lsn);
            if let Some(&(_, l, bb)) = found.get(i) {
                if l == lsn {
                    return Some(bb);
                }
            }
        }
        let r = read_record(img, lsn.block())?;
        (r.lsn == lsn && r.crc_ok).then_some(r.total_bb)
    }

    /// Checks one crash image; pushes the violated invariants.
    pub fn check(&self, img: &Image, idempotence: bool, out: &mut Vec<Invariant>) -> Result<RecoveryReport, String> {
        let mut why = String::new();
        let r = self.check_inner(img, idempotence, out, &mut why);
        match r {
            Ok(mut rep) => {
                rep.why = why;
                Ok(rep)
            }
            Err(e) => Err(e),
        }
    }

    fn check_inner(
        &self,
        img: &Image,
        idempotence: bool,
        out: &mut Vec<Invariant>,
        why: &mut String,
    ) -> Result<RecoveryReport, String> {
        // In-place metadata as the crash left it.
        let data = &img.devs[img.data_dev];
        let mut in_place: BTreeMap<u32, (u64, Lsn)> = BTreeMap::new();
        for &item in self.touches.keys() {
            if let Some((id, v, lsn)) = data.with_sector(META_START_SECTOR + item as u64 * META_BB, format::read_meta) {
                if id == item {
                    in_place.insert(item, (v, lsn));
                }
            }
        }
        if in_place.values().any(|&(_, lsn)| lsn > self.head_at_crash) {
            out.push(Invariant::MetadataLsnNotAhead);
        }
        let rep = match recover(img) {
            Ok(r) => r,
            Err(e) => {
                out.push(Invariant::RecoverySucceeds);
                return Err(e);
            }
        };
        let live_from = if rep.empty { Lsn::ZERO } else { rep.tail_lsn };
        // The newest tail any intact record on the image states: checkpoints behind it may
        // have left the log legitimately, even when recovery started from an older record.
        // Read lazily: it checksums records, and most states never need it.
        let mut stated_tail: Option<Lsn> = None;
        let mut stated_tail = || {
            *stated_tail.get_or_insert_with(|| {
                self.history
                    .records
                    .iter()
                    .rev()
                    .take(64)
                    .find(|&&(lsn, _)| {
                        lsn <= self.head_at_crash && Self::record_present(img, Some(&rep), lsn).is_some()
                    })
                    .map_or(Lsn::ZERO, |&(_, t)| t)
            })
        };
        // write-ahead: in-place metadata only from checkpoints whose commit record is stable
        // (or that the log has already moved past).
        for (&item, &(v, _)) in &in_place {
            let Some(c) = self.checkpoint_of(item, v) else { continue };
            let ck = &self.history.checkpoints[c as usize];
            if !ck.completed
                || (ck.commit_lsn >= live_from
                    && Self::record_present(img, Some(&rep), ck.commit_lsn).is_none()
                    && ck.commit_lsn >= stated_tail())
            {
                *why += &format!(
                    "write_ahead: item {item} v{v} in place from checkpoint {c} (start {} commit {}, completed {}), recovered tail {} first record {:?}; ",
                    ck.start_lsn, ck.commit_lsn, ck.completed, rep.tail_lsn, rep.records_found.first()
                );
                out.push(Invariant::WriteAhead);
                break;
            }
        }
        // tail: an item whose latest completed checkpoint lies wholly behind the on-disk
        // tail must be stable in place at least at that version.
        if !rep.empty {
            let last = &self.last_completed;
            let behind = |&(v, commit): &(u64, Lsn)| commit < rep.tail_lsn && v > 0;
            if let Some((item, e)) =
                last.iter().find(|(item, e)| behind(e) && in_place.get(item).map_or(0, |p| p.0) < e.0)
            {
                *why += &format!("tail {}: item {item} v{} (commit {}) not in place; ", rep.tail_lsn, e.0, e.1);
                out.push(Invariant::Tail);
            }
        }
        // prefix and durability: the recovered map is the state after checkpoints 0..k.
        let n_ckpt = self.history.checkpoints.len() as u32;
        let (mut lo, mut hi) = (0u32, n_ckpt);
        let (mut lo_item, mut hi_item) = ((0u32, 0u64), (0u32, 0u64));
        // Items with a freed block later than their recovered version are also right in
        // the windows where the block was free: (item, [first, last] checkpoint counts).
        let mut either: Vec<Vec<(u32, u32)>> = Vec::new();
        for (&item, t) in &self.touches {
            let v = rep.items.get(&item).copied().unwrap_or(0);
            let p = if v == 0 { Some(None) } else { t.iter().position(|&(_, tv)| tv == v).map(Some) };
            let (a, b) = match p {
                Some(None) => (0, t[0].0),
                Some(Some(p)) => (t[p].0 + 1, t.get(p + 1).map_or(u32::MAX, |n| n.0)),
                None => (1, 0),
            };
            let windows: Vec<(u32, u32)> = match (p, self.freed.get(&item)) {
                (Some(p), Some(f)) => f
                    .iter()
                    .filter(|&&q| p.is_none_or(|p| q > p))
                    .map(|&q| (t[q].0 + 1, t.get(q + 1).map_or(u32::MAX, |n| n.0)))
                    .collect(),
                _ => Vec::new(),
            };
            if !windows.is_empty() {
                either.push(std::iter::once((a, b)).chain(windows).collect());
                continue;
            }
            if a > lo {
                lo = a;
                lo_item = (item, v);
            }
            if b < hi {
                hi = b;
                hi_item = (item, v);
            }
        }
        if !either.is_empty() && lo <= hi {
            // The feasible prefixes: inside [lo, hi] and inside one interval of each such item.
            let hi_c = hi.min(n_ckpt);
            let mut count = vec![0i32; (hi_c - lo + 2) as usize];
            for ivs in &either {
                for &(a, b) in ivs {
                    let (a, b) = (a.max(lo), b.min(hi_c));
                    if a <= b {
                        count[(a - lo) as usize] += 1;
                        count[(b - lo + 1) as usize] -= 1;
                    }
                }
            }
            let mut run = 0;
            let mut last_ok = None;
            for (k, d) in count.iter().enumerate().take((hi_c - lo + 1) as usize) {
                run += d;
                if run == either.len() as i32 {
                    last_ok = Some(lo + k as u32);
                }
            }
            match last_ok {
                Some(k) => hi = k,
                None => {
                    *why += "prefix: no prefix fits the items whose blocks were freed; ";
                    (hi, lo) = (lo, lo + 1);
                }
            }
        }
        let data_lost = self
            .history
            .acked_data
            .iter()
            .any(|(&daddr, &v)| data.with_sector(daddr, format::read_meta).is_none_or(|(_, found, _)| found < v));
        if lo > hi {
            *why += &format!(
                "prefix: item {} at v{} needs checkpoint {lo} or later, item {} at v{} needs one before {hi} (of {}); ",
                lo_item.0,
                lo_item.1,
                hi_item.0,
                hi_item.1,
                self.history.checkpoints.len()
            );
            // Where the older item's next version lived, and what is in place for it.
            let ck = |c: u32| {
                self.history.checkpoints.get(c as usize).map_or(String::new(), |k| {
                    format!("checkpoint {c} start {} commit {} completed {}", k.start_lsn, k.commit_lsn, k.completed)
                })
            };
            *why += &format!(
                "item {} in place {:?}, next version in {}; item {} in {}; touches {:?}; ",
                hi_item.0,
                in_place.get(&hi_item.0),
                ck(hi),
                lo_item.0,
                ck(lo.saturating_sub(1)),
                self.touches.get(&hi_item.0)
            );
            out.push(Invariant::Prefix);
        }
        if (lo <= hi && hi < self.history.acked) || data_lost {
            out.push(Invariant::Durability);
        }
        if idempotence {
            let mut again = img.clone();
            for (&s, &(id, v, lsn)) in &rep.writes {
                again.devs[img.data_dev].over.write(s, &format::meta_block(id, v, lsn, (META_BB * 512) as usize));
            }
            match recover(&again) {
                Ok(r2) if r2.items == rep.items => {}
                _ => out.push(Invariant::RecoveryIdempotent),
            }
        }
        Ok(rep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invariants_have_distinct_names_and_sort_by_name() {
        let mut by_name: Vec<&str> = Invariant::ALL.iter().map(|i| i.as_str()).collect();
        by_name.sort_unstable();
        by_name.dedup();
        assert_eq!(by_name.len(), Invariant::ALL.len());
        let mut sorted = Invariant::ALL;
        sorted.sort();
        assert_eq!(sorted.map(|i| i.as_str()).to_vec(), by_name);
        for i in Invariant::ALL {
            assert_eq!(i.to_string(), i.as_str());
            assert!(i.explain().ends_with('.'), "{i}");
        }
    }
}
