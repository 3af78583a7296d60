//! What the crash states of one crash point share in recovery, worked out once: the in-place
//! metadata of the stable media, and pass 2 over the committed transactions that lie before
//! the first write at risk (`Prefix`). A state replays again only the items its surviving
//! writes change. Pass 2 splits by item: an item's replay reads and writes only its own
//! in-place LSN and the cancel records of its own blocks (`xlog_recover_buf_commit_pass2`,
//! `xlog_recover_inode_commit_pass2`, `xlog_is_buffer_cancelled`).
//!
//! Where a state is not that simple (a header outside its item's slot, a log item on no
//! item's slot, an item that fails to replay), `PointRecovery::recover` says so and the state
//! is recovered on its own, so every state's result is the one `recover` gives.

use super::{cached_walk, is_meta_sector, meta_region_end, Image, LogWalk, SharedLog, Survivors};
use crate::device::{SectorMap, SECTOR};
use crate::format;
use crate::layout::{item_at, item_daddr, DATA_ID_BASE, META_START_SECTOR};
use crate::units::Lsn;
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// An item's in-place (version, LSN).
pub(crate) type Entry = (u64, Lsn);
/// Items whose in-place metadata a state's survivors change, and what it is then.
pub(crate) type InPlace = BTreeMap<u32, Option<Entry>>;
/// A metadata header as read: (item, version, LSN).
type Header = (u32, u64, Lsn);
/// A block recovery writes: (daddr, header it carries).
type Write = (u64, Header);

/// What one item's pass 2 did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct ItemReplay {
    /// In place after the replay (None: never on disk and never replayed).
    meta: Option<Entry>,
    /// The blocks recovery writes for it, the last write of each: an item has two slots
    /// (buffer, inode), and a log item of another block fails its replay.
    writes: [Option<Write>; 2],
    skipped_by_lsn: u32,
    buffers_cancelled: u32,
}

impl ItemReplay {
    fn writes_any(&self) -> bool {
        self.writes[0].is_some()
    }

    /// The header recovery last wrote at `daddr` for this item.
    fn written(&self, daddr: u64) -> Option<Header> {
        self.writes.iter().flatten().find(|w| w.0 == daddr).map(|w| w.1)
    }

    /// Records a write of `hdr` at `daddr` (false: a third block, which no item has).
    fn write(&mut self, daddr: u64, hdr: Header) -> bool {
        match self.writes.iter_mut().find(|w| w.is_none_or(|w| w.0 == daddr)) {
            Some(slot) => {
                *slot = Some((daddr, hdr));
                true
            }
            None => false,
        }
    }
}

/// Log item positions (transaction, item) in a walk, grouped by item, items ascending and
/// each item's positions in log order.
#[derive(Debug, Default)]
struct ByItem {
    ids: Vec<u32>,
    /// `pos[starts[k]..starts[k + 1]]` are item `ids[k]`'s.
    starts: Vec<u32>,
    pos: Vec<(u32, u32)>,
}

impl ByItem {
    /// From (item, transaction, item within it) triples in any order.
    fn new(mut triples: Vec<(u32, u32, u32)>) -> ByItem {
        triples.sort_unstable();
        let mut by = ByItem { pos: Vec::with_capacity(triples.len()), ..ByItem::default() };
        for (id, t, i) in triples {
            if by.ids.last() != Some(&id) {
                by.ids.push(id);
                by.starts.push(by.pos.len() as u32);
            }
            by.pos.push((t, i));
        }
        by.starts.push(by.pos.len() as u32);
        by
    }

    fn at(&self, k: usize) -> &[(u32, u32)] {
        &self.pos[self.starts[k] as usize..self.starts[k + 1] as usize]
    }

    /// Item `id`'s positions (none if it has no log item here).
    fn get(&self, id: u32) -> &[(u32, u32)] {
        self.ids.binary_search(&id).map_or(&[], |k| self.at(k))
    }

    fn iter(&self) -> impl Iterator<Item = (u32, &[(u32, u32)])> {
        self.ids.iter().enumerate().map(|(k, &id)| (id, self.at(k)))
    }
}

/// Items' replays, items ascending.
type Replays = Vec<(u32, ItemReplay)>;

fn replay_of(replays: &Replays, id: u32) -> Option<&ItemReplay> {
    replays.binary_search_by_key(&id, |r| r.0).ok().map(|k| &replays[k].1)
}

/// Pass 2 over the committed transactions before the first write at risk, on the stable
/// media's in-place metadata: the same for every walk from the same first record through the
/// same number of shared transactions.
#[derive(Debug)]
struct Prefix {
    /// Every item replayed went without an error (else states recover on their own).
    ok: bool,
    /// Per item: its log items' positions in the walk.
    by_id: ByItem,
    replays: Replays,
    skipped_by_lsn: u32,
    buffers_cancelled: u32,
    cancel_records: u32,
    /// Items whose replay over what this prefix wrote differs (found when first asked).
    not_idempotent: OnceCell<BTreeSet<u32>>,
}

/// A crash candidate at a metadata header sector: the surviving-write sources that may land
/// there and the header each would leave.
#[derive(Debug)]
struct MetaCandidate {
    sector: u64,
    base: Option<Header>,
    /// (write, sector within it, header), in the order they apply.
    sources: Vec<(u32, u32, Option<Header>)>,
}

impl MetaCandidate {
    /// The header the last source to land leaves (None: none landed).
    fn landed(&self, sv: &Survivors) -> Option<Option<Header>> {
        self.sources.iter().rev().find(|&&(w, k, _)| sv.lands(w, k)).map(|&(_, _, now)| now)
    }
}

/// The shared recovery work of one crash point (see the module's comment).
#[derive(Debug)]
pub(crate) struct PointRecovery<'a> {
    shared: &'a SharedLog,
    data: &'a SectorMap,
    meta_to: u64,
    /// `in_place_meta` of the stable media.
    base: BTreeMap<u32, Entry>,
    /// Every header of the stable media lies in its own item's slot.
    eligible: bool,
    /// The candidate writes' metadata header sectors (the same for every state of the point).
    candidates: OnceCell<Vec<MetaCandidate>>,
    prefixes: RefCell<BTreeMap<(u32, usize), Rc<Prefix>>>,
}

/// One state's recovery, as layers over the point's: the items it replayed again (`own`)
/// over the prefix's, over the stable media's.
#[derive(Debug)]
pub(crate) struct PointRecovered {
    /// Pass 1's report with pass 2's counts; `items`, `writes` and `replayed` left empty.
    pub rep: super::RecoveryReport,
    prefix: Rc<Prefix>,
    own: Replays,
    /// Per item: its log items after the prefix, positions in the walk.
    later: ByItem,
    /// In-place metadata where this state's differs from the stable media's.
    in_place: InPlace,
}

impl<'a> PointRecovery<'a> {
    /// For the states of `img`'s crash point (`img` is any of them: they differ only in
    /// which candidate writes survive). None without a shared log.
    pub(crate) fn new(img: &Image<'a>) -> Option<PointRecovery<'a>> {
        let shared = img.shared?;
        let layer = &img.devs[img.data_dev];
        let data = layer.base;
        let meta_to = meta_region_end(img.data_dev, img.log_start);
        let stable = super::Layer::new(data);
        let (mut base, mut eligible) = (BTreeMap::new(), layer.over.is_empty());
        for s in stable.sectors_in(META_START_SECTOR, meta_to).into_iter().filter(|&s| is_meta_sector(s)) {
            if let Some((id, v, lsn)) = stable.with_sector(s, format::read_meta) {
                // File data blocks carry headers too; they replace an item's, never pose as one.
                eligible &= item_at(s) == Some(id) || id >= DATA_ID_BASE;
                base.insert(id, (v, lsn));
            }
        }
        Some(PointRecovery {
            shared,
            data,
            meta_to,
            base,
            eligible,
            candidates: OnceCell::new(),
            prefixes: RefCell::default(),
        })
    }

    /// Where headers stop being metadata (the log or the end of the data device).
    pub(crate) fn meta_to(&self) -> u64 {
        self.meta_to
    }

    /// The stable media's in-place metadata (item -> version, LSN).
    pub(crate) fn base(&self) -> &BTreeMap<u32, Entry> {
        &self.base
    }

    fn stable_header(&self, s: u64) -> Option<Header> {
        self.data.get(s).and_then(|b| format::read_meta(b))
    }

    fn candidates(&self, img: &Image) -> &[MetaCandidate] {
        self.candidates.get_or_init(|| {
            let Some(sv) = img.devs[img.data_dev].survivors.as_ref() else { return Vec::new() };
            sv.index
                .range(META_START_SECTOR..self.meta_to)
                .filter(|(&s, _)| is_meta_sector(s))
                .map(|(&s, cands)| MetaCandidate {
                    sector: s,
                    base: self.stable_header(s),
                    sources: cands
                        .iter()
                        .map(|&(w, k)| {
                            let at = k as usize * SECTOR;
                            (w, k, sv.writes[w as usize].get(at..at + SECTOR).and_then(format::read_meta))
                        })
                        .collect(),
                })
                .collect()
        })
    }

    /// Recovers one state of this crash point, as `recover` would (`rep.items` aside: ask
    /// `version`). None: this state must be recovered on its own.
    /// `in_place` is the state's `in_place_changes`.
    pub(crate) fn recover(&self, img: &Image, in_place: InPlace) -> Option<Result<PointRecovered, String>> {
        if !self.eligible || !std::ptr::eq(img.shared?, self.shared) || !img.devs[img.data_dev].over.is_empty() {
            return None;
        }
        let walk_rc = cached_walk(img);
        let walk = match walk_rc.as_ref() {
            Ok(w) => w,
            Err(e) => return Some(Err(e.clone())),
        };
        let prefix = self.prefix(walk);
        if !prefix.ok {
            return None;
        }
        let n = walk.shared_txns;
        let mut triples = Vec::new();
        let mut later_cancels = 0;
        for (t, (_, items)) in walk.committed.iter().enumerate().skip(n) {
            for (i, it) in items.iter().enumerate() {
                triples.push((item_at(it.blkno)?, t as u32, i as u32));
                later_cancels += it.cancel as u32;
            }
        }
        let later = ByItem::new(triples);
        let ids = union_ascending(in_place.keys().copied(), later.ids.iter().copied());
        let mut own = Vec::with_capacity(ids.len());
        let mut rep = walk.rep.clone();
        rep.transactions_replayed = walk.committed.len() as u32;
        rep.cancel_records = prefix.cancel_records + later_cancels;
        rep.regions_skipped_by_lsn = prefix.skipped_by_lsn;
        rep.buffers_cancelled = prefix.buffers_cancelled;
        for id in ids {
            let seq = prefix.by_id.get(id).iter().chain(later.get(id)).copied();
            let start = in_place.get(&id).copied().unwrap_or_else(|| self.base.get(&id).copied());
            let r = replay_item(walk, seq, start).ok()?;
            if let Some(p) = replay_of(&prefix.replays, id) {
                rep.regions_skipped_by_lsn -= p.skipped_by_lsn;
                rep.buffers_cancelled -= p.buffers_cancelled;
            }
            rep.regions_skipped_by_lsn += r.skipped_by_lsn;
            rep.buffers_cancelled += r.buffers_cancelled;
            own.push((id, r));
        }
        Some(Ok(PointRecovered { rep, prefix, own, later, in_place }))
    }

    /// The items whose in-place metadata this state's survivors change, and what it is now.
    /// None when a surviving header lies outside its item's slot.
    pub(crate) fn in_place_changes(&self, img: &Image) -> Option<InPlace> {
        if !self.eligible || !img.devs[img.data_dev].over.is_empty() {
            return None;
        }
        let layer = &img.devs[img.data_dev];
        let Some(sv) = layer.survivors.as_ref() else {
            return Some(InPlace::new());
        };
        let cands = self.candidates(img);
        let mut changed = Vec::new();
        for c in cands {
            let Some(now) = c.landed(sv) else { continue };
            if now == c.base {
                continue;
            }
            let owner = item_at(c.sector)?;
            if now.is_some_and(|(id, _, _)| id != owner && id < DATA_ID_BASE) {
                return None;
            }
            changed.push(owner);
        }
        changed.sort_unstable();
        changed.dedup();
        // A slot's header as the layer reads it: a candidate's from the write that landed
        // there, any other metadata sector's from the stable media (no survivor covers it).
        let header = |s: u64| {
            if !((META_START_SECTOR..self.meta_to).contains(&s) && is_meta_sector(s)) {
                return layer.with_sector(s, format::read_meta);
            }
            match cands.binary_search_by_key(&s, |c| c.sector) {
                Ok(k) => cands[k].landed(sv).unwrap_or(cands[k].base),
                Err(_) => self.stable_header(s),
            }
        };
        Some(changed.into_iter().map(|id| (id, self.entry(id, header))).collect())
    }

    /// Item `id`'s in-place entry as `in_place_meta` finds it when `header` reads each
    /// sector: the later of its two slots (buffer, inode) that holds its header.
    fn entry(&self, id: u32, header: impl Fn(u64) -> Option<Header>) -> Option<Entry> {
        [item_daddr(id, false), item_daddr(id, true)]
            .into_iter()
            .filter(|&s| s < self.meta_to)
            .filter_map(|s| header(s).filter(|h| h.0 == id))
            .map(|(_, v, lsn)| (v, lsn))
            .next_back()
    }

    fn prefix(&self, walk: &LogWalk) -> Rc<Prefix> {
        let key = (walk.first_blk, walk.shared_txns);
        if let Some(p) = self.prefixes.borrow().get(&key) {
            return p.clone();
        }
        let p = Rc::new(self.build_prefix(walk));
        self.prefixes.borrow_mut().insert(key, p.clone());
        p
    }

    fn build_prefix(&self, walk: &LogWalk) -> Prefix {
        let (mut ok, mut cancel_records) = (true, 0);
        let mut triples = Vec::new();
        for (t, (_, items)) in walk.committed.iter().enumerate().take(walk.shared_txns) {
            for (i, it) in items.iter().enumerate() {
                cancel_records += it.cancel as u32;
                match item_at(it.blkno) {
                    Some(id) => triples.push((id, t as u32, i as u32)),
                    None => ok = false,
                }
            }
        }
        let by_id = ByItem::new(triples);
        let (mut replays, mut skipped_by_lsn, mut buffers_cancelled) = (Vec::with_capacity(by_id.ids.len()), 0, 0);
        // The stable media's entries walked beside the items (both ascending).
        let mut base = self.base.iter().peekable();
        for (id, seq) in by_id.iter() {
            while base.next_if(|(&k, _)| k < id).is_some() {}
            let start = base.peek().filter(|(&k, _)| k == id).map(|(_, &e)| e);
            match replay_item(walk, seq.iter().copied(), start) {
                Ok(r) => {
                    skipped_by_lsn += r.skipped_by_lsn;
                    buffers_cancelled += r.buffers_cancelled;
                    replays.push((id, r));
                }
                Err(_) => ok = false,
            }
        }
        Prefix {
            ok,
            by_id,
            replays,
            skipped_by_lsn,
            buffers_cancelled,
            cancel_records,
            not_idempotent: OnceCell::new(),
        }
    }

    /// Recovering `img` again over what its recovery `rec` wrote gives the same item versions
    /// (the oracle's idempotence check, as `recover` twice would find it).
    pub(crate) fn idempotent(&self, img: &Image, rec: &PointRecovered) -> bool {
        let walk_rc = cached_walk(img);
        let Ok(walk) = walk_rc.as_ref() else { return false };
        let prefix = &rec.prefix;
        let not_idempotent = prefix.not_idempotent.get_or_init(|| {
            prefix
                .replays
                .iter()
                .filter(|(_, r)| r.writes_any())
                .filter(|&&(id, ref r)| {
                    let seq = prefix.by_id.get(id).iter().copied();
                    !self.replays_alike(walk, id, seq, r, |s| self.stable_header(s))
                })
                .map(|&(id, _)| id)
                .collect()
        });
        if not_idempotent.iter().any(|&id| !rec.recomputes(id)) {
            return false;
        }
        let layer = &img.devs[img.data_dev];
        rec.own.iter().filter(|(_, r)| r.writes_any()).all(|&(id, ref r)| {
            let seq = prefix.by_id.get(id).iter().chain(rec.later.get(id)).copied();
            self.replays_alike(walk, id, seq, r, |s| layer.with_sector(s, format::read_meta))
        })
    }

    /// Whether replaying item `id` over what its replay `first` wrote (on top of `header`'s
    /// reading of each sector) leaves the version `first` left.
    fn replays_alike(
        &self,
        walk: &LogWalk,
        id: u32,
        seq: impl Iterator<Item = (u32, u32)> + Clone,
        first: &ItemReplay,
        header: impl Fn(u64) -> Option<Header>,
    ) -> bool {
        let written = |s: u64| first.written(s).or_else(|| header(s));
        let start = self.entry(id, written);
        replay_item(walk, seq, start).is_ok_and(|again| again.meta.map(|m| m.0) == first.meta.map(|m| m.0))
    }
}

impl PointRecovered {
    /// Item `id`'s recovered version (None: not on disk and not replayed), over `point`'s layers.
    pub(crate) fn version(&self, point: &PointRecovery, id: u32) -> Option<u64> {
        match replay_of(&self.own, id) {
            Some(r) => r.meta.map(|m| m.0),
            None => self.prefix_version(point, id),
        }
    }

    /// Item `id`'s version on the layers under this state's own: its prefix's, or the stable
    /// media's. States with the same `prefix_key` agree on it.
    pub(crate) fn prefix_version(&self, point: &PointRecovery, id: u32) -> Option<u64> {
        replay_of(&self.prefix.replays, id).and_then(|r| r.meta).or_else(|| point.base.get(&id).copied()).map(|m| m.0)
    }

    /// `prefix_version` of each of `ids`, which must ascend: one walk along the layers'
    /// maps instead of two searches per item.
    pub(crate) fn prefix_versions<'s>(
        &'s self,
        point: &'s PointRecovery,
        ids: impl Iterator<Item = u32> + 's,
    ) -> impl Iterator<Item = Option<u64>> + 's {
        let mut replays = self.prefix.replays.iter().peekable();
        let mut base = point.base.iter().peekable();
        ids.map(move |id| {
            while replays.next_if(|&&(k, _)| k < id).is_some() {}
            while base.next_if(|(&k, _)| k < id).is_some() {}
            let replayed = replays.peek().filter(|&&&(k, _)| k == id).and_then(|(_, r)| r.meta);
            replayed.or_else(|| base.peek().filter(|(&k, _)| k == id).map(|(_, &e)| e)).map(|m| m.0)
        })
    }

    /// This state replayed item `id` again.
    pub(crate) fn recomputes(&self, id: u32) -> bool {
        self.own.binary_search_by_key(&id, |r| r.0).is_ok()
    }

    /// Items this state replayed again: every other item's version is its prefix's (or the
    /// stable media's).
    pub(crate) fn recomputed(&self) -> impl Iterator<Item = u32> + '_ {
        self.own.iter().map(|r| r.0)
    }

    /// Items whose in-place metadata differs from the stable media's, and what it is.
    pub(crate) fn in_place_changes(&self) -> &InPlace {
        &self.in_place
    }

    /// Identifies the prefix layer: states with equal keys share every non-recomputed version.
    pub(crate) fn prefix_key(&self) -> usize {
        Rc::as_ptr(&self.prefix) as usize
    }
}

/// Pass 2 for one item: its log items at `seq` (positions in `walk`, in log order), from
/// in-place `start`. Mirrors `replay`; an error is the same error `replay` would meet.
fn replay_item(
    walk: &LogWalk,
    seq: impl Iterator<Item = (u32, u32)> + Clone,
    start: Option<Entry>,
) -> Result<ItemReplay, String> {
    let items = seq.map(|(t, i)| {
        let (lsn, items) = &walk.committed[t as usize];
        (*lsn, &items[i as usize])
    });
    // Cancel records of its blocks, counted over the whole walk as pass 1 counts them.
    let mut cancelled: Vec<(u64, u32)> = Vec::new();
    for (_, it) in items.clone().filter(|(_, it)| it.cancel) {
        match cancelled.iter_mut().find(|c| c.0 == it.blkno) {
            Some(c) => c.1 += 1,
            None => cancelled.push((it.blkno, 1)),
        }
    }
    let mut r = ItemReplay { meta: start, ..ItemReplay::default() };
    for (r_lsn, it) in items {
        let blkno = it.blkno;
        let count = cancelled.iter_mut().find(|c| c.0 == blkno && c.1 > 0);
        if it.cancel {
            if let Some(c) = count {
                c.1 -= 1;
            }
            continue;
        }
        if count.is_some() {
            r.buffers_cancelled += 1;
            continue;
        }
        let (id, v) = it.payload.ok_or("log item without data")?;
        if blkno != item_daddr(id, it.is_inode) {
            return Err(format!("item at daddr {blkno} carries item {id}"));
        }
        let old = r.meta.map_or(Lsn::ZERO, |m| m.1);
        if old > r_lsn || (!it.is_inode && old == r_lsn) {
            r.skipped_by_lsn += 1;
            continue;
        }
        r.meta = Some((v, if it.is_inode { r_lsn } else { old }));
        if !r.write(blkno, (id, v, r_lsn)) {
            return Err(format!("item {id} written at a third block {blkno}"));
        }
    }
    Ok(r)
}

/// The ascending union of two ascending sequences, each value once.
fn union_ascending(a: impl Iterator<Item = u32>, b: impl Iterator<Item = u32>) -> Vec<u32> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut out = Vec::new();
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(&x), Some(&y)) if x == y => {
                b.next();
                a.next()
            }
            (Some(&x), Some(&y)) if x < y => a.next(),
            (Some(_), None) => a.next(),
            (_, Some(_)) => b.next(),
            (None, None) => break,
        };
        out.extend(next);
    }
    out
}
