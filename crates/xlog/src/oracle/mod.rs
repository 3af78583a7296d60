//! The crash oracle: named invariants checked on a crash image and its recovery.
//! It alone sees the checkpoint history; recovery never does.

use crate::format;
use crate::layout::{item_bb, item_daddr, item_sector};
use crate::recovery::{read_record, recover, Image, Layer, RecoveryReport};
use crate::sim::{FoldedItem, History};
use crate::units::{Lsn, BBSIZE};

mod point;
pub(crate) use point::PointOracle;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

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

    /// What the real kernel said where the model reports this invariant broken, or that it
    /// has not been asked yet: the lab never shows a model-only finding as the kernel's.
    pub fn on_real_kernel(self) -> Option<&'static str> {
        match self {
            Invariant::RecoverySucceeds => Some(
                "Seen on Linux 6.18 too (loglab kernel crash): when a crash keeps only some of the iclogs written \
                 since the last flush, the real mount fails (\"failed to locate log tail\", error -117), and the \
                 model's recovery fails on the same states.",
            ),
            Invariant::Prefix | Invariant::Tail | Invariant::NoLiveOverwrite => {
                Some("The model's finding: not yet reproduced on a real kernel, so read it as the model's claim.")
            }
            _ => None,
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

impl<'de> serde::Deserialize<'de> for Invariant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Invariant::ALL
            .into_iter()
            .find(|i| i.as_str() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("'{name}' is not an invariant")))
    }
}

pub const ALL_INVARIANTS: &[Invariant] = &Invariant::ALL;

/// The history indexed by item for the prefix, write-ahead and tail checks. An explorer
/// keeps one across the crash points of a run and `sync`s it: checkpoints only append and
/// complete between points, so only a fold rebuilds it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OracleIndex {
    /// `History::folded` when built, and checkpoints indexed so far.
    folded: u32,
    indexed: u32,
    /// Indexed checkpoints not yet completed when last synced.
    pending: Vec<u32>,
    /// item -> [(checkpoint index, version)] in commit order.
    touches: BTreeMap<u32, Vec<(u32, u64)>>,
    /// item -> (version, commit LSN) of its latest completed checkpoint, unless that freed it.
    last_completed: BTreeMap<u32, (u64, Lsn)>,
    /// item -> indexes into its `touches` that logged it stale: its block is free from that
    /// checkpoint until the next touch, so any content is right there.
    freed: BTreeMap<u32, Vec<usize>>,
    /// Items whose versions do not rise along their touches (commit records out of sequence
    /// order): found by a scan, the others by binary search.
    disordered: BTreeSet<u32>,
}

impl OracleIndex {
    /// The index of `history` as it is now.
    pub fn new(history: &History) -> OracleIndex {
        let mut ix = OracleIndex::default();
        ix.sync(history);
        ix
    }

    /// Brings the index up to `history`, which has only grown since (or folded: rebuilt).
    pub fn sync(&mut self, history: &History) {
        if self.indexed == 0 || history.folded != self.folded || history.len() < self.indexed {
            self.rebuild_base(history);
        }
        let mut newly = Vec::new();
        self.pending.retain(|&c| {
            let done = history.get(c).is_none_or(|ck| ck.completed);
            if done {
                newly.push(c);
            }
            !done
        });
        for (c, ck) in history.kept().skip((self.indexed - self.folded) as usize) {
            for &(item, v) in &ck.items {
                let t = self.touches.entry(item).or_default();
                if ck.freed.contains(&item) {
                    self.freed.entry(item).or_default().push(t.len());
                }
                if t.last().is_some_and(|&(_, last)| last >= v) {
                    self.disordered.insert(item);
                }
                t.push((c, v));
            }
            if ck.completed {
                newly.push(c);
            } else {
                self.pending.push(c);
            }
        }
        self.indexed = history.len();
        // Checkpoints may complete out of order: an item's entry is its latest completed touch.
        for c in newly {
            let Some(ck) = history.get(c) else { continue };
            for &(item, _) in &ck.items {
                self.relatch(history, item);
            }
        }
    }

    /// Starts over from the folded checkpoints (`base`): a folded item's last folded touch
    /// stands first among its touches.
    fn rebuild_base(&mut self, history: &History) {
        *self = OracleIndex { folded: history.folded, indexed: history.folded, ..OracleIndex::default() };
        for (&item, b) in &history.base {
            self.touches.insert(item, vec![(b.checkpoint, b.version)]);
            if b.freed {
                self.freed.insert(item, vec![0]);
            } else {
                self.last_completed.insert(item, (b.version, b.commit_lsn));
            }
        }
    }

    /// `last_completed` of `item` from its touches: the latest one whose checkpoint completed.
    fn relatch(&mut self, history: &History, item: u32) {
        let t = &self.touches[&item];
        let latest = t.iter().enumerate().rev().find_map(|(q, &(c, v))| match history.get(c) {
            Some(ck) => ck.completed.then_some((q, v, ck.commit_lsn)),
            // Folded: complete, and its commit LSN kept in `base`.
            None => history.base.get(&item).map(|b| (q, v, b.commit_lsn)),
        });
        let freed = |q: usize| self.freed.get(&item).is_some_and(|f| f.contains(&q));
        match latest {
            Some((q, v, lsn)) if !freed(q) => self.last_completed.insert(item, (v, lsn)),
            _ => self.last_completed.remove(&item),
        };
    }
}

/// The history at the crash, indexed for the prefix check.
pub struct Oracle<'h> {
    history: &'h History,
    index: std::borrow::Cow<'h, OracleIndex>,
    /// The log head at the crash: in-place metadata must not carry a later LSN.
    head_at_crash: Lsn,
}

impl<'h> Oracle<'h> {
    pub fn new(history: &'h History, head_at_crash: Lsn) -> Oracle<'h> {
        Oracle { history, index: std::borrow::Cow::Owned(OracleIndex::new(history)), head_at_crash }
    }

    /// As `new`, with an index already synced to `history`.
    pub fn with_index(history: &'h History, index: &'h OracleIndex, head_at_crash: Lsn) -> Oracle<'h> {
        debug_assert_eq!((index.indexed, index.folded), (history.len(), history.folded));
        Oracle { history, index: std::borrow::Cow::Borrowed(index), head_at_crash }
    }

    fn checkpoint_of(&self, item: u32, version: u64) -> Option<u32> {
        let t = self.index.touches.get(&item)?;
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
        let data = &img.devs[img.data_dev];
        let in_place = self.in_place(data);
        if in_place.values().any(|&(_, lsn)| lsn > self.head_at_crash) {
            out.push(Invariant::MetadataLsnNotAhead);
        }
        let mut rep = match recover(img) {
            Ok(r) => r,
            Err(e) => {
                out.push(Invariant::RecoverySucceeds);
                return Err(e);
            }
        };
        if let Some(w) = self.write_ahead_broken(img, &rep, &in_place) {
            *why += &w;
            out.push(Invariant::WriteAhead);
        }
        if let Some(w) = self.tail_broken(&rep, &in_place) {
            *why += &w;
            out.push(Invariant::Tail);
        }
        // prefix and durability: the recovered map is the state after checkpoints 0..k.
        let window = prefix_window(
            &self.index.touches,
            &self.index.freed,
            &self.index.disordered,
            &self.history.base,
            &rep.items,
            self.history.len(),
        );
        rep.before_horizon = window.before_horizon;
        if window.before_horizon {
            *why += &format!("prefix: a recovered version predates the {} folded checkpoints; ", self.history.folded);
        }
        if window.freed_misfit {
            *why += "prefix: no prefix fits the items whose blocks were freed; ";
        }
        let data_lost = self.acked_data_lost(data);
        if window.lo > window.hi {
            *why += &self.prefix_why(&window, &in_place);
            out.push(Invariant::Prefix);
        }
        if (window.lo <= window.hi && window.hi < self.history.acked) || data_lost {
            out.push(Invariant::Durability);
        }
        if idempotence && !recovery_idempotent(img, &rep) {
            out.push(Invariant::RecoveryIdempotent);
        }
        Ok(rep)
    }

    /// In-place metadata of the items the history logged, as the crash left it.
    fn in_place(&self, data: &Layer) -> BTreeMap<u32, (u64, Lsn)> {
        let mut in_place = BTreeMap::new();
        for &item in self.index.touches.keys() {
            // An item is an inode or a buffer: its header is at one of the two places.
            for inode in [false, true] {
                if let Some((id, v, lsn)) = data.with_sector(item_daddr(item, inode), format::read_meta) {
                    if id == item {
                        in_place.insert(item, (v, lsn));
                    }
                }
            }
        }
        in_place
    }

    /// write-ahead: in-place metadata only from checkpoints whose commit record is stable
    /// (or that the log has already moved past). Why not, when it is broken.
    fn write_ahead_broken(
        &self,
        img: &Image,
        rep: &RecoveryReport,
        in_place: &BTreeMap<u32, (u64, Lsn)>,
    ) -> Option<String> {
        let mut judge = WriteAhead::new(self, img, rep);
        for (&item, &(v, _)) in in_place {
            let Some(c) = self.checkpoint_of(item, v) else { continue };
            if judge.breaks(c) {
                return Some(judge.why(item, v, c));
            }
        }
        None
    }

    /// tail: an item whose latest completed checkpoint lies wholly behind the on-disk tail
    /// must be stable in place at least at that version. Why not, when it is broken.
    fn tail_broken(&self, rep: &RecoveryReport, in_place: &BTreeMap<u32, (u64, Lsn)>) -> Option<String> {
        if rep.empty {
            return None;
        }
        let behind = |&(v, commit): &(u64, Lsn)| commit < rep.tail_lsn && v > 0;
        let (item, e) = self
            .index
            .last_completed
            .iter()
            .find(|(item, e)| behind(e) && in_place.get(item).map_or(0, |p| p.0) < e.0)?;
        Some(tail_why(rep.tail_lsn, *item, *e))
    }

    /// An acknowledged fsync's file data block is missing or older on the image.
    fn acked_data_lost(&self, data: &Layer) -> bool {
        self.history
            .acked_data
            .iter()
            .any(|(&daddr, &v)| data.with_sector(daddr, format::read_meta).is_none_or(|(_, found, _)| found < v))
    }

    /// Why no prefix fits: the two items that bound the window, and where they stand.
    fn prefix_why(&self, w: &PrefixWindow, in_place: &BTreeMap<u32, (u64, Lsn)>) -> String {
        let (lo, hi, lo_item, hi_item) = (w.lo, w.hi, w.lo_item, w.hi_item);
        let mut why = format!(
            "prefix: item {} at v{} needs checkpoint {lo} or later, item {} at v{} needs one before {hi} (of {}); ",
            lo_item.0,
            lo_item.1,
            hi_item.0,
            hi_item.1,
            self.history.len()
        );
        // Where the older item's next version lived, and what is in place for it.
        let ck = |c: u32| {
            self.history.get(c).map_or(String::new(), |k| {
                format!("checkpoint {c} start {} commit {} completed {}", k.start_lsn, k.commit_lsn, k.completed)
            })
        };
        why += &format!(
            "item {} in place {:?}, next version in {}; item {} in {}; touches {:?}; ",
            hi_item.0,
            in_place.get(&hi_item.0),
            ck(hi),
            lo_item.0,
            ck(lo.saturating_sub(1)),
            self.index.touches.get(&hi_item.0)
        );
        why
    }
}

/// Why the tail rule broke: `item`'s latest completed (version, commit) is not in place.
fn tail_why(tail: Lsn, item: u32, e: (u64, Lsn)) -> String {
    format!("tail {tail}: item {item} v{} (commit {}) not in place; ", e.0, e.1)
}

/// The write-ahead rule for one recovered state: which checkpoints' metadata may be in place.
struct WriteAhead<'o, 'h, 'i, 'a> {
    oracle: &'o Oracle<'h>,
    img: &'i Image<'a>,
    rep: &'i RecoveryReport,
    live_from: Lsn,
    /// The newest tail any intact record on the image states: checkpoints behind it may
    /// have left the log legitimately, even when recovery started from an older record.
    /// Read lazily: it checksums records, and most states never need it.
    stated_tail: Option<Lsn>,
}

impl<'o, 'h, 'i, 'a> WriteAhead<'o, 'h, 'i, 'a> {
    fn new(oracle: &'o Oracle<'h>, img: &'i Image<'a>, rep: &'i RecoveryReport) -> Self {
        let live_from = if rep.empty { Lsn::ZERO } else { rep.tail_lsn };
        WriteAhead { oracle, img, rep, live_from, stated_tail: None }
    }

    /// Metadata of checkpoint `c` in place breaks the rule.
    fn breaks(&mut self, c: u32) -> bool {
        // Folded: complete, and its commit record FOLD_CYCLES behind the head.
        let Some(ck) = self.oracle.history.get(c) else { return false };
        !ck.completed
            || (ck.commit_lsn >= self.live_from
                && Oracle::record_present(self.img, Some(self.rep), ck.commit_lsn).is_none()
                && ck.commit_lsn >= self.stated_tail())
    }

    fn stated_tail(&mut self) -> Lsn {
        let (o, img, rep) = (self.oracle, self.img, self.rep);
        *self.stated_tail.get_or_insert_with(|| {
            o.history
                .records
                .iter()
                .rev()
                .take(crate::sim::RECENT_RECORDS)
                .find(|&&(lsn, _)| lsn <= o.head_at_crash && Oracle::record_present(img, Some(rep), lsn).is_some())
                .map_or(Lsn::ZERO, |&(_, t)| t)
        })
    }

    /// Why, for item `item` in place at `v` from checkpoint `c` (which `breaks`).
    fn why(&self, item: u32, v: u64, c: u32) -> String {
        let ck = self.oracle.history.get(c).expect("a checkpoint that breaks is kept");
        format!(
            "write_ahead: item {item} v{v} in place from checkpoint {c} (start {} commit {}, completed {}), recovered tail {} first record {:?}; ",
            ck.start_lsn, ck.commit_lsn, ck.completed, self.rep.tail_lsn, self.rep.records_found.first()
        )
    }
}

/// Recovering again over what recovery wrote must give the same items.
fn recovery_idempotent(img: &Image, rep: &RecoveryReport) -> bool {
    let mut again = img.clone();
    if img.data_dev == 0 && rep.writes.keys().any(|&s| img.in_log(s)) {
        again.shared = None;
    }
    for (&s, &(id, v, lsn)) in &rep.writes {
        // The block is its header sector, then zeros.
        let header = format::meta_block(id, v, lsn, BBSIZE as usize);
        let bb = item_bb(item_sector(s) == Some(true));
        again.devs[img.data_dev].over.write_zero_filled(s, &header, bb * BBSIZE as u64);
    }
    matches!(recover(&again), Ok(r2) if r2.items == rep.items)
}

/// The prefix lengths k (checkpoints 0..k applied) that agree with the recovered versions:
/// some fit when `lo <= hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PrefixWindow {
    lo: u32,
    hi: u32,
    /// (item, recovered version) that last raised `lo` and last lowered `hi`.
    lo_item: (u32, u64),
    hi_item: (u32, u64),
    /// No k in the window fits every item whose block was freed (`lo > hi` then).
    freed_misfit: bool,
    /// An item's recovered version predates its last folded touch: its interval is widened
    /// to every prefix up to that touch, so the window may be wider than the full history's.
    before_horizon: bool,
}

/// The window of prefix lengths the recovered versions allow. `touches`: item -> (checkpoint,
/// version) in commit order, a folded item's `base` touch first; `freed`: item -> indexes into
/// its touches that logged it stale; `disordered`: items whose versions do not rise along
/// their touches.
fn prefix_window(
    touches: &BTreeMap<u32, Vec<(u32, u64)>>,
    freed: &BTreeMap<u32, Vec<usize>>,
    disordered: &BTreeSet<u32>,
    base: &BTreeMap<u32, FoldedItem>,
    recovered: &BTreeMap<u32, u64>,
    n_ckpt: u32,
) -> PrefixWindow {
    let mut w = PrefixWindow::new(n_ckpt);
    // Items with a freed block later than their recovered version are also right in the
    // windows where the block was free; they are intersected after the plain items.
    let mut either: Vec<Vec<(u32, u32)>> = Vec::new();
    for (&item, t) in touches {
        let v = recovered.get(&item).copied().unwrap_or(0);
        let fit = item_fit(item, t, freed, disordered, base, v);
        w.before_horizon |= fit.horizon;
        match fit.either {
            Some(e) => either.push(e),
            None => w.raise(fit.plain, item, v),
        }
    }
    w.fit_either(either.iter().map(Vec::as_slice), n_ckpt);
    w
}

/// What one item's recovered version says of the prefix length.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ItemFit {
    /// The inclusive interval its version allows.
    plain: (u32, u32),
    /// With windows where its block was free: `plain` and those, any one fitting.
    either: Option<Vec<(u32, u32)>>,
    /// Its version predates its last folded touch.
    horizon: bool,
}

/// `prefix_window`'s judgement of one item at recovered version `v`.
fn item_fit(
    item: u32,
    t: &[(u32, u64)],
    freed: &BTreeMap<u32, Vec<usize>>,
    disordered: &BTreeSet<u32>,
    base: &BTreeMap<u32, FoldedItem>,
    v: u64,
) -> ItemFit {
    let mut horizon = false;
    let ((a, b), windows) = match base.get(&item) {
        // Older than its last folded touch: right while its block is free after a stale
        // touch; otherwise somewhere up to that touch, before the horizon.
        Some(f) if v < f.version => {
            let windows = free_windows(t, freed.get(&item), None);
            if windows.is_empty() {
                horizon = true;
                ((0, f.checkpoint), windows)
            } else {
                ((1, 0), windows)
            }
        }
        _ => item_windows(t, freed.get(&item), v, !disordered.contains(&item)),
    };
    let either = (!windows.is_empty()).then(|| std::iter::once((a, b)).chain(windows).collect());
    ItemFit { plain: (a, b), either, horizon }
}

impl PrefixWindow {
    /// Every prefix of `n_ckpt` checkpoints, before any item narrows it.
    fn new(n_ckpt: u32) -> PrefixWindow {
        PrefixWindow { lo: 0, hi: n_ckpt, lo_item: (0, 0), hi_item: (0, 0), freed_misfit: false, before_horizon: false }
    }

    /// Narrows the window to an item's plain interval (the first item to reach a bound names it).
    fn raise(&mut self, (a, b): (u32, u32), item: u32, v: u64) {
        if a > self.lo {
            self.lo = a;
            self.lo_item = (item, v);
        }
        if b < self.hi {
            self.hi = b;
            self.hi_item = (item, v);
        }
    }

    /// Intersects the window with the items that may also sit in free windows.
    fn fit_either<'e>(&mut self, either: impl Iterator<Item = &'e [(u32, u32)]> + Clone, n_ckpt: u32) {
        if either.clone().next().is_some() && self.lo <= self.hi {
            match last_common(either, self.lo, self.hi.min(n_ckpt)) {
                Some(k) => self.hi = k,
                None => {
                    self.freed_misfit = true;
                    (self.hi, self.lo) = (self.lo, self.lo + 1);
                }
            }
        }
    }
}

/// The prefix lengths at which an item with touches `t` holds version `v` (0: not logged
/// yet), as an inclusive interval (`u32::MAX`: no later touch; empty when `v` is unknown),
/// and the windows its block was free after `v`, from the stale touches `freed`. `rising`:
/// the versions along `t` rise, so a binary search finds `v`.
fn item_windows(t: &[(u32, u64)], freed: Option<&Vec<usize>>, v: u64, rising: bool) -> ((u32, u32), Vec<(u32, u32)>) {
    let find = |v: u64| {
        if rising {
            let p = t.partition_point(|&(_, tv)| tv < v);
            t.get(p).is_some_and(|x| x.1 == v).then_some(p)
        } else {
            t.iter().position(|&(_, tv)| tv == v)
        }
    };
    let p = if v == 0 { Some(None) } else { find(v).map(Some) };
    let (a, b) = match p {
        Some(None) => (0, t[0].0),
        Some(Some(p)) => (t[p].0 + 1, t.get(p + 1).map_or(u32::MAX, |n| n.0)),
        None => (1, 0),
    };
    let windows = match p {
        Some(p) => free_windows(t, freed, p),
        None => Vec::new(),
    };
    ((a, b), windows)
}

/// The windows an item's block is free, from its stale touches `freed` after touch `after`.
fn free_windows(t: &[(u32, u64)], freed: Option<&Vec<usize>>, after: Option<usize>) -> Vec<(u32, u32)> {
    freed.map_or(Vec::new(), |f| {
        f.iter()
            .filter(|&&q| after.is_none_or(|p| q > p))
            .map(|&q| (t[q].0 + 1, t.get(q + 1).map_or(u32::MAX, |n| n.0)))
            .collect()
    })
}

/// The last k in [lo, hi] that lies inside one interval of every list (a sweep over the
/// interval ends, clipped to [lo, hi]).
fn last_common<'e>(lists: impl Iterator<Item = &'e [(u32, u32)]>, lo: u32, hi: u32) -> Option<u32> {
    let mut count = vec![0i32; (hi - lo + 2) as usize];
    let mut n = 0;
    for ivs in lists {
        n += 1;
        for &(a, b) in ivs {
            let (a, b) = (a.max(lo), b.min(hi));
            if a <= b {
                count[(a - lo) as usize] += 1;
                count[(b - lo + 1) as usize] -= 1;
            }
        }
    }
    let mut run = 0;
    let mut last_ok = None;
    for (k, d) in count.iter().enumerate().take((hi - lo + 1) as usize) {
        run += d;
        if run == n {
            last_ok = Some(lo + k as u32);
        }
    }
    last_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Synced point by point over a run that folds and completes checkpoints out of order,
    /// the index equals one built from scratch at each point.
    #[test]
    fn an_index_synced_along_a_run_equals_one_built_afresh() {
        // small-crash folds every 64 checkpoints here; four NVMe queues complete out of order.
        for (preset, events) in [("small-crash", 150_000), ("series-v1-flush-race", 30_000)] {
            let mut s = crate::presets::find(preset).unwrap();
            s.set("duration", "10s").unwrap();
            let mut sim = crate::sim::Sim::new(&s).unwrap();
            sim.set_keep_trace(false);
            sim.set_history_fold(64);
            let mut ix = OracleIndex::default();
            let (mut folds, mut last_folded, mut points) = (0, 0, 0);
            while sim.events() < events && sim.step().is_some() {
                if !sim.events().is_multiple_of(31) {
                    continue;
                }
                ix.sync(sim.history());
                assert_eq!(ix, OracleIndex::new(sim.history()), "{preset} at event {}", sim.events());
                folds += (sim.history().folded != last_folded) as u32;
                last_folded = sim.history().folded;
                points += 1;
            }
            assert!(points > 900, "{preset}: {points} points");
            assert!(folds > 2 || preset != "small-crash", "{preset}: {folds} folds");
        }
    }

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

    /// item -> [(checkpoint, version)] from (item, checkpoint, version) triples.
    fn touches(t: &[(u32, u32, u64)]) -> BTreeMap<u32, Vec<(u32, u64)>> {
        let mut m: BTreeMap<u32, Vec<(u32, u64)>> = BTreeMap::new();
        for &(item, c, v) in t {
            m.entry(item).or_default().push((c, v));
        }
        m
    }

    fn window(
        t: &BTreeMap<u32, Vec<(u32, u64)>>,
        freed: &[(u32, Vec<usize>)],
        recovered: &[(u32, u64)],
        n_ckpt: u32,
    ) -> PrefixWindow {
        let freed = freed.iter().cloned().collect();
        prefix_window(t, &freed, &disordered(t), &BTreeMap::new(), &recovered.iter().copied().collect(), n_ckpt)
    }

    fn disordered(t: &BTreeMap<u32, Vec<(u32, u64)>>) -> BTreeSet<u32> {
        t.iter().filter(|(_, v)| v.windows(2).any(|w| w[0].1 >= w[1].1)).map(|(&i, _)| i).collect()
    }

    #[test]
    fn each_recovered_version_bounds_the_prefix_window() {
        // Item 1: v1 in checkpoint 0, v2 in checkpoint 2. Item 2: v1 in checkpoint 1.
        let t = touches(&[(1, 0, 1), (2, 1, 1), (1, 2, 2)]);
        // Item 1 at v1 means 1 or 2 checkpoints applied; item 2 at v1 means 2 or more.
        let w = window(&t, &[], &[(1, 1), (2, 1)], 4);
        assert_eq!((w.lo, w.hi, w.lo_item, w.hi_item, w.freed_misfit), (2, 2, (2, 1), (1, 1), false));
        // Everything recovered: the window runs to the last checkpoint.
        let w = window(&t, &[], &[(1, 2), (2, 1)], 4);
        assert_eq!((w.lo, w.hi), (3, 4));
        // Nothing recovered: only the empty prefix fits.
        let w = window(&t, &[], &[], 4);
        assert_eq!((w.lo, w.hi), (0, 0));
        // Item 1's later change without item 2's earlier one: no prefix.
        let w = window(&t, &[], &[(1, 2)], 4);
        assert_eq!((w.lo, w.hi, w.lo_item, w.hi_item), (3, 1, (1, 2), (2, 0)));
        // A version the history never logged fits no prefix.
        let w = window(&t, &[], &[(1, 7), (2, 1)], 4);
        assert!(w.lo > w.hi);
    }

    #[test]
    fn a_freed_block_may_hold_an_older_version_while_it_is_free() {
        // Item 1: v1 in checkpoint 0, freed (logged stale) as v2 in checkpoint 1, v3 in
        // checkpoint 3. Item 2: v1 in checkpoint 2.
        let t = touches(&[(1, 0, 1), (1, 1, 2), (2, 2, 1), (1, 3, 3)]);
        let freed = [(1, vec![1])];
        assert_eq!(item_windows(&t[&1], Some(&vec![1]), 1, true), ((1, 1), vec![(2, 3)]));
        assert_eq!(item_windows(&t[&1], Some(&vec![1]), 0, true), ((0, 0), vec![(2, 3)]));
        // After the version it was freed at, the free window no longer applies.
        assert_eq!(item_windows(&t[&1], Some(&vec![1]), 3, true), ((4, u32::MAX), vec![]));
        // Item 2 needs 3 or more checkpoints; item 1's old v1 is fine while its block is free.
        let w = window(&t, &freed, &[(1, 1), (2, 1)], 4);
        assert_eq!((w.lo, w.hi, w.freed_misfit), (3, 3, false));
        // Without the free, item 1 at v1 and item 2 at v1 conflict.
        let w = window(&t, &[], &[(1, 1), (2, 1)], 4);
        assert!(w.lo > w.hi && !w.freed_misfit);
        // Item 3 pins the prefix to 1, where item 1 can be neither at v0 nor free.
        let t = touches(&[(1, 0, 1), (1, 1, 2), (3, 0, 1), (3, 1, 2), (1, 3, 3)]);
        let w = window(&t, &freed, &[(3, 1)], 4);
        assert_eq!((w.lo, w.hi, w.freed_misfit), (2, 1, true));
    }

    #[test]
    fn a_block_freed_by_its_last_touch_stays_free_to_the_end() {
        let t = touches(&[(1, 0, 1), (1, 1, 2), (2, 0, 1)]);
        assert_eq!(item_windows(&t[&1], Some(&vec![1]), 1, true), ((1, 1), vec![(2, u32::MAX)]));
        // Commit records out of sequence order: versions fall along the touches, and the scan
        // still finds the touch that logged v1.
        assert_eq!(item_windows(&[(0, 2), (1, 1), (2, 3)], None, 1, false), ((2, 2), vec![]));
        let w = window(&t, &[(1, vec![1])], &[(1, 1), (2, 1)], 3);
        assert_eq!((w.lo, w.hi), (1, 3));
    }

    #[test]
    fn a_version_older_than_the_folded_history_widens_the_window_and_says_so() {
        // Item 1 was last touched in folded checkpoint 5 at v3, then in checkpoint 8 at v4.
        // Item 2 is touched only in checkpoint 9.
        let fold = |freed| FoldedItem { checkpoint: 5, version: 3, commit_lsn: Lsn::ZERO, freed };
        let t = touches(&[(1, 5, 3), (1, 8, 4), (2, 9, 1)]);
        let base: BTreeMap<u32, FoldedItem> = [(1, fold(false))].into();
        let w = |base: &BTreeMap<u32, FoldedItem>, freed: &BTreeMap<u32, Vec<usize>>, rec: &[(u32, u64)]| {
            prefix_window(&t, freed, &disordered(&t), base, &rec.iter().copied().collect(), 10)
        };
        let none = BTreeMap::new();
        // At its folded version: exact, 6..=8 checkpoints applied.
        let at = w(&base, &none, &[(1, 3)]);
        assert_eq!((at.lo, at.hi, at.before_horizon), (6, 8, false));
        // Older (v1, or never logged): somewhere up to checkpoint 5, flagged.
        let old = w(&base, &none, &[(1, 1)]);
        assert_eq!((old.lo, old.hi, old.before_horizon), (0, 5, true));
        assert!(w(&base, &none, &[]).before_horizon);
        // Older and item 2 at v1 (needs 10): no prefix, still flagged.
        let old = w(&base, &none, &[(1, 1), (2, 1)]);
        assert!(old.lo > old.hi && old.before_horizon);
        // Freed by its folded touch: any older content is right while the block is free.
        let base: BTreeMap<u32, FoldedItem> = [(1, fold(true))].into();
        let freed = [(1, vec![0])].into();
        let free = w(&base, &freed, &[(1, 1)]);
        assert_eq!((free.hi, free.before_horizon, free.freed_misfit), (8, false, false));
    }

    #[test]
    fn last_common_finds_the_latest_point_inside_one_interval_of_each_list() {
        let lists = [vec![(0, 1), (4, 6)], vec![(1, 5)]];
        let l = || lists.iter().map(Vec::as_slice);
        assert_eq!(last_common(l(), 0, 9), Some(5));
        assert_eq!(last_common(l(), 0, 3), Some(1));
        assert_eq!(last_common(l(), 2, 3), None);
        assert_eq!(last_common([&[(0, u32::MAX)][..]].into_iter(), 2, 7), Some(7));
    }
}
