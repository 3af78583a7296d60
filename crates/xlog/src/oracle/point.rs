//! The oracle over the states of one crash point, on `PointRecovery`'s layers: what the
//! stable media and each shared prefix say is judged once, and a state judges again only
//! the items its survivors change (in place) or its recovery replays again. Every verdict
//! and every word of `why` is the one `Oracle::check` gives; a state the layers cannot
//! judge goes to `Oracle::check`.

use super::{item_fit, tail_why, Invariant, ItemFit, Oracle, PrefixWindow, WriteAhead};
use crate::layout::{item_daddr, DATA_ID_BASE};
use crate::recovery::{Entry, Image, InPlace, PointRecovered, PointRecovery, RecoveryReport};
use crate::units::Lsn;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// `prefix_window` over the items a state does not replay again, for one prefix layer.
#[derive(Debug)]
struct WindowBase {
    /// (a, item, version) with a > 0, a descending then item ascending: the first a state
    /// does not replay again bounds `lo`.
    lo: Vec<(u32, u32, u64)>,
    /// (b, item, version) with b below the history's length, b then item ascending.
    hi: Vec<(u32, u32, u64)>,
    either: BTreeMap<u32, Vec<(u32, u32)>>,
    horizon: Vec<u32>,
}

/// The oracle's work common to the states of one crash point.
pub(crate) struct PointOracle<'o, 'h, 'a> {
    oracle: &'o Oracle<'h>,
    rec: PointRecovery<'a>,
    /// Logged items in place on the stable media whose LSN is past the head.
    ahead: Vec<u32>,
    /// Logged items in place on the stable media from a kept checkpoint: incomplete ones
    /// (checkpoint, items), and complete ones by commit LSN.
    wa_incomplete: Vec<(u32, Vec<u32>)>,
    wa_complete: BTreeMap<Lsn, Vec<(u32, Vec<u32>)>>,
    /// (commit, item) of each latest completed touch (v > 0) not in place on the stable media.
    lag: Vec<(Lsn, u32)>,
    windows: RefCell<BTreeMap<usize, Rc<WindowBase>>>,
}

impl<'o, 'h, 'a> PointOracle<'o, 'h, 'a> {
    /// For the states of `img`'s crash point; None when its layers cannot judge them.
    pub(crate) fn new(oracle: &'o Oracle<'h>, img: &Image<'a>) -> Option<Self> {
        let rec = PointRecovery::new(img)?;
        let touches = &oracle.index.touches;
        let last = touches.keys().next_back().copied().unwrap_or(0);
        // `Oracle::in_place` reads both slots of every logged item: all must be metadata.
        if last >= DATA_ID_BASE || item_daddr(last, true) >= rec.meta_to() {
            return None;
        }
        let mut ahead = Vec::new();
        let mut incomplete: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut complete: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        // The stable media's items that were logged: the two maps walked side by side.
        let mut logged = touches.iter().peekable();
        for (&item, &(v, lsn)) in rec.base() {
            while logged.next_if(|(&k, _)| k < item).is_some() {}
            let Some((_, t)) = logged.peek().filter(|(&k, _)| k == item) else { continue };
            if lsn > oracle.head_at_crash {
                ahead.push(item);
            }
            // `Oracle::checkpoint_of`, on the touches at hand.
            let Some(c) = t.iter().find(|&&(_, tv)| tv == v).map(|&(c, _)| c) else { continue };
            let Some(ck) = oracle.history.get(c) else { continue };
            match ck.completed {
                false => incomplete.entry(c).or_default().push(item),
                true => complete.entry(c).or_default().push(item),
            }
        }
        let mut wa_complete: BTreeMap<Lsn, Vec<(u32, Vec<u32>)>> = BTreeMap::new();
        for (c, items) in complete {
            let commit = oracle.history.get(c).expect("kept").commit_lsn;
            wa_complete.entry(commit).or_default().push((c, items));
        }
        let mut in_place = rec.base().iter().peekable();
        let mut in_place_v = |item: u32| {
            while in_place.next_if(|(&k, _)| k < item).is_some() {}
            in_place.peek().filter(|(&k, _)| k == item).map_or(0, |(_, e)| e.0)
        };
        // Ascending items: `in_place_v` walks the stable media's map alongside.
        let mut lag: Vec<(Lsn, u32)> = oracle
            .index
            .last_completed
            .iter()
            .filter(|&(&item, &(v, _))| v > 0 && in_place_v(item) < v)
            .map(|(&item, &(_, commit))| (commit, item))
            .collect();
        lag.sort_unstable();
        Some(PointOracle {
            oracle,
            rec,
            ahead,
            wa_incomplete: incomplete.into_iter().collect(),
            wa_complete,
            lag,
            windows: RefCell::default(),
        })
    }

    /// `Oracle::check` of one state of this crash point.
    pub(crate) fn check(
        &self,
        img: &Image,
        idempotence: bool,
        out: &mut Vec<Invariant>,
    ) -> Result<RecoveryReport, String> {
        let mut o = Vec::new();
        match self.check_layered(img, idempotence, &mut o) {
            Some(r) => {
                out.extend(o);
                r
            }
            None => self.oracle.check(img, idempotence, out),
        }
    }

    /// As `check`, or None where the layers cannot judge the state.
    pub(crate) fn check_layered(
        &self,
        img: &Image,
        idempotence: bool,
        out: &mut Vec<Invariant>,
    ) -> Option<Result<RecoveryReport, String>> {
        let oracle = self.oracle;
        let touched = |id: &u32| oracle.index.touches.contains_key(id);
        let changes = self.rec.in_place_changes(img)?;
        // The LSN first: most changed items are behind the head, and need no map search.
        let ahead = self.ahead.iter().any(|id| !changes.contains_key(id))
            || changes.iter().any(|(id, e)| e.is_some_and(|e| e.1 > oracle.head_at_crash) && touched(id));
        let rec = match self.rec.recover(img, changes)? {
            Ok(r) => r,
            Err(e) => {
                if ahead {
                    out.push(Invariant::MetadataLsnNotAhead);
                }
                out.push(Invariant::RecoverySucceeds);
                return Some(Err(e));
            }
        };
        if ahead {
            out.push(Invariant::MetadataLsnNotAhead);
        }
        let changes = rec.in_place_changes();
        let mut rep = rec.rep.clone();
        let mut why = String::new();
        if let Some(w) = self.write_ahead_broken(img, &rep, changes) {
            why += &w;
            out.push(Invariant::WriteAhead);
        }
        if let Some(w) = self.tail_broken(&rep, changes) {
            why += &w;
            out.push(Invariant::Tail);
        }
        let window = self.prefix_window(&rec);
        rep.before_horizon = window.before_horizon;
        if window.before_horizon {
            why += &format!("prefix: a recovered version predates the {} folded checkpoints; ", oracle.history.folded);
        }
        if window.freed_misfit {
            why += "prefix: no prefix fits the items whose blocks were freed; ";
        }
        let data_lost = oracle.acked_data_lost(&img.devs[img.data_dev]);
        if window.lo > window.hi {
            let id = window.hi_item.0;
            let entry = match changes.get(&id) {
                Some(e) => *e,
                None => self.rec.base().get(&id).copied(),
            };
            let hi_in_place: BTreeMap<u32, Entry> =
                entry.filter(|_| touched(&id)).map(|e| (id, e)).into_iter().collect();
            why += &oracle.prefix_why(&window, &hi_in_place);
            out.push(Invariant::Prefix);
        }
        if (window.lo <= window.hi && window.hi < oracle.history.acked) || data_lost {
            out.push(Invariant::Durability);
        }
        if idempotence && !self.rec.idempotent(img, &rec) {
            out.push(Invariant::RecoveryIdempotent);
        }
        rep.why = why;
        Some(Ok(rep))
    }

    /// `Oracle::write_ahead_broken` on the stable media's in-place items with `changes` over them.
    fn write_ahead_broken(&self, img: &Image, rep: &RecoveryReport, changes: &InPlace) -> Option<String> {
        let oracle = self.oracle;
        let mut judge = WriteAhead::new(oracle, img, rep);
        // The first item in order that breaks it: (item, version, checkpoint).
        let mut first: Option<(u32, u64, u32)> = None;
        let mut offer = |item: u32, v: u64, c: u32| {
            if first.is_none_or(|f| item < f.0) {
                first = Some((item, v, c));
            }
        };
        let unchanged = |items: &[u32]| items.iter().copied().find(|id| !changes.contains_key(id));
        let base_v = |id: u32| self.rec.base()[&id].0;
        for (c, items) in &self.wa_incomplete {
            if let Some(id) = unchanged(items) {
                offer(id, base_v(id), *c);
            }
        }
        let live_from = if rep.empty { Lsn::ZERO } else { rep.tail_lsn };
        for (c, items) in self.wa_complete.range(live_from..).flat_map(|(_, g)| g) {
            if let Some(id) = unchanged(items).filter(|_| judge.breaks(*c)) {
                offer(id, base_v(id), *c);
            }
        }
        for (&id, e) in changes {
            let Some((v, _)) = *e else { continue };
            // `Oracle::checkpoint_of`, with one search of the touches.
            let Some(t) = oracle.index.touches.get(&id) else { continue };
            let c = t.iter().find(|&&(_, tv)| tv == v).map(|&(c, _)| c);
            if let Some(c) = c.filter(|&c| judge.breaks(c)) {
                offer(id, v, c);
            }
        }
        first.map(|(item, v, c)| judge.why(item, v, c))
    }

    /// `Oracle::tail_broken` on the stable media's in-place items with `changes` over them.
    fn tail_broken(&self, rep: &RecoveryReport, changes: &InPlace) -> Option<String> {
        if rep.empty {
            return None;
        }
        let last_completed = &self.oracle.index.last_completed;
        let behind = self.lag.partition_point(|&(commit, _)| commit < rep.tail_lsn);
        let unchanged = self.lag[..behind].iter().map(|&(_, id)| id).filter(|id| !changes.contains_key(id)).min();
        let changed = changes
            .iter()
            .filter_map(|(&id, now)| Some((id, now, last_completed.get(&id)?)))
            .filter(|&(_, now, &(v, commit))| commit < rep.tail_lsn && v > 0 && now.map_or(0, |p| p.0) < v)
            .map(|(id, _, _)| id)
            .next();
        let item = unchanged.into_iter().chain(changed).min()?;
        Some(tail_why(rep.tail_lsn, item, last_completed[&item]))
    }

    /// `prefix_window` of a recovered state: its prefix layer's, with the items it replayed again.
    fn prefix_window(&self, rec: &PointRecovered) -> PrefixWindow {
        let oracle = self.oracle;
        let n_ckpt = oracle.history.len();
        let base = self.window_base(rec);
        let mut w = PrefixWindow::new(n_ckpt);
        w.before_horizon = base.horizon.iter().any(|&id| !rec.recomputes(id));
        let mut own_either = Vec::new();
        let mut own_plain = Vec::new();
        for id in rec.recomputed() {
            let Some(t) = oracle.index.touches.get(&id) else { continue };
            let v = rec.version(&self.rec, id).unwrap_or(0);
            let fit = self.fit(id, t, v);
            w.before_horizon |= fit.horizon;
            match fit.either {
                Some(e) => own_either.push(e),
                None => own_plain.push((fit.plain, id, v)),
            }
        }
        // Bounds go to the largest a (smallest b), the lowest item among equals: the first
        // item in order that reached it.
        if let Some(&(a, id, v)) = base.lo.iter().find(|x| !rec.recomputes(x.1)) {
            w.raise((a, n_ckpt), id, v);
        }
        if let Some(&(b, id, v)) = base.hi.iter().find(|x| !rec.recomputes(x.1)) {
            w.raise((0, b), id, v);
        }
        for &((a, b), id, v) in &own_plain {
            if a > w.lo || (a == w.lo && a > 0 && id < w.lo_item.0) {
                w.lo = a;
                w.lo_item = (id, v);
            }
            if b < w.hi || (b == w.hi && b < n_ckpt && id < w.hi_item.0) {
                w.hi = b;
                w.hi_item = (id, v);
            }
        }
        let either = base
            .either
            .iter()
            .filter(|(&id, _)| !rec.recomputes(id))
            .map(|(_, e)| e.as_slice())
            .chain(own_either.iter().map(Vec::as_slice));
        w.fit_either(either, n_ckpt);
        w
    }

    fn fit(&self, item: u32, t: &[(u32, u64)], v: u64) -> ItemFit {
        let ix = &self.oracle.index;
        item_fit(item, t, &ix.freed, &ix.disordered, &self.oracle.history.base, v)
    }

    /// The window over every logged item at its prefix-layer version, kept per prefix layer.
    fn window_base(&self, rec: &PointRecovered) -> Rc<WindowBase> {
        let key = rec.prefix_key();
        if let Some(b) = self.windows.borrow().get(&key) {
            return b.clone();
        }
        let n_ckpt = self.oracle.history.len();
        let mut b = WindowBase { lo: Vec::new(), hi: Vec::new(), either: BTreeMap::new(), horizon: Vec::new() };
        let touches = &self.oracle.index.touches;
        for ((&item, t), v) in touches.iter().zip(rec.prefix_versions(&self.rec, touches.keys().copied())) {
            let v = v.unwrap_or(0);
            let fit = self.fit(item, t, v);
            if fit.horizon {
                b.horizon.push(item);
            }
            match fit.either {
                Some(e) => {
                    b.either.insert(item, e);
                }
                None => {
                    let (a, bb) = fit.plain;
                    if a > 0 {
                        b.lo.push((a, item, v));
                    }
                    if bb < n_ckpt {
                        b.hi.push((bb, item, v));
                    }
                }
            }
        }
        b.lo.sort_unstable_by_key(|&(a, item, _)| (std::cmp::Reverse(a), item));
        b.hi.sort_unstable_by_key(|&(bb, item, _)| (bb, item));
        let b = Rc::new(b);
        self.windows.borrow_mut().insert(key, b.clone());
        b
    }
}
