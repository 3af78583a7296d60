//! The Active Item List: committed items ordered by LSN, the log tail, and xfsaild's target.

use crate::units::Lsn;
use std::collections::VecDeque;

/// The AIL as a sorted deque with lazy deletion, where the kernel keeps a list: items enter
/// at (or near) the newest LSN, so an insert is a push at the back, and a move or delete only
/// marks the old entry dead (an entry lives while `lsn_of` names its LSN and generation).
/// Dead entries are dropped from both ends at once and from the middle when they outnumber
/// the live ones. Order and contents are a `BTreeSet<(Lsn, item)>`'s.
#[derive(Clone, Debug, Default)]
pub struct Ail {
    /// (li_lsn, item, generation) in (LSN, item) order, dead entries included.
    order: VecDeque<(Lsn, u32, u64)>,
    /// Item id (dense) to its LSN in the AIL and the generation of its live entry.
    lsn_of: Vec<Option<(Lsn, u64)>>,
    /// Live entries in `order`.
    live: usize,
    /// The next entry's generation.
    generation: u64,
    /// `ail_target`: xfsaild writes back items at or below it.
    pub target: Lsn,
    pub pushes: u64,
    /// `ail_last_pushed_lsn`: where xfsaild's next pass resumes (zero: the AIL's start).
    pub last_pushed: Lsn,
}

/// What `xfs_trans_ail_update` did with an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AilUpdate {
    Insert,
    Move { old: Lsn },
    Unchanged,
}

impl Ail {
    fn is_live(&self, &(lsn, id, generation): &(Lsn, u32, u64)) -> bool {
        self.lsn_of[id as usize] == Some((lsn, generation))
    }

    fn insert(&mut self, item: u32, lsn: Lsn) {
        let entry = (lsn, item, self.generation);
        self.lsn_of[item as usize] = Some((lsn, self.generation));
        self.generation += 1;
        self.live += 1;
        match self.order.back() {
            Some(&(l, i, _)) if (l, i) > (lsn, item) => {
                let at = self.order.partition_point(|&(l, i, _)| (l, i) < (lsn, item));
                self.order.insert(at, entry);
            }
            _ => self.order.push_back(entry),
        }
    }

    /// Called after an entry died: trims dead entries off both ends (so the ends are live),
    /// and compacts once dead entries outnumber the live ones.
    fn tidy(&mut self) {
        while self.order.front().is_some_and(|e| !self.is_live(e)) {
            self.order.pop_front();
        }
        while self.order.back().is_some_and(|e| !self.is_live(e)) {
            self.order.pop_back();
        }
        if self.order.len() > 2 * self.live + 64 {
            let lsn_of = &self.lsn_of;
            self.order.retain(|&(l, i, g)| lsn_of[i as usize] == Some((l, g)));
        }
    }

    /// Inserts `item` at `lsn`, or moves it forward; an item never moves back.
    pub fn update(&mut self, item: u32, lsn: Lsn) -> AilUpdate {
        let i = item as usize;
        if i >= self.lsn_of.len() {
            self.lsn_of.resize(i + 1, None);
        }
        match self.lsn_of[i] {
            Some((old, _)) if lsn <= old => AilUpdate::Unchanged,
            Some((old, _)) => {
                self.live -= 1;
                self.insert(item, lsn);
                self.tidy();
                AilUpdate::Move { old }
            }
            None => {
                self.insert(item, lsn);
                AilUpdate::Insert
            }
        }
    }

    pub fn delete(&mut self, item: u32) -> Option<Lsn> {
        let (lsn, _) = self.lsn_of.get_mut(item as usize)?.take()?;
        self.live -= 1;
        self.tidy();
        Some(lsn)
    }

    pub fn lsn(&self, item: u32) -> Option<Lsn> {
        self.lsn_of.get(item as usize).copied().flatten().map(|(lsn, _)| lsn)
    }

    pub fn min_lsn(&self) -> Option<Lsn> {
        self.order.front().map(|&(l, _, _)| l)
    }
    pub fn max_lsn(&self) -> Option<Lsn> {
        self.order.back().map(|&(l, _, _)| l)
    }
    pub fn len(&self) -> usize {
        self.live
    }
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// `xfs_ail_push`: raise the target; true if xfsaild must be woken.
    pub fn push(&mut self, target: Lsn) -> bool {
        if self.order.is_empty() || target <= self.target {
            return false;
        }
        self.target = target;
        self.pushes += 1;
        true
    }

    /// Items in LSN order, oldest (the tail) first.
    pub fn oldest(&self) -> impl Iterator<Item = (Lsn, u32)> + '_ {
        self.live_from(0)
    }

    fn live_from(&self, start: usize) -> impl Iterator<Item = (Lsn, u32)> + '_ {
        self.order.range(start..).filter(|e| self.is_live(e)).map(|&(l, i, _)| (l, i))
    }

    /// Up to `n` items after `(lsn, id)` (exclusive; `None`: from `last_pushed`), in order
    /// (one chunk of an xfsaild pass).
    pub fn items_after(&self, from: Option<(Lsn, u32)>, n: usize) -> Vec<(Lsn, u32)> {
        let start = match from {
            Some(k) => self.order.partition_point(|&(l, i, _)| (l, i) <= k),
            None => self.order.partition_point(|&(l, i, _)| (l, i) < (self.last_pushed, 0)),
        };
        self.live_from(start).take(n).collect()
    }

    /// Items at or below the target, oldest first.
    pub fn items_to_push(&self) -> impl Iterator<Item = (Lsn, u32)> + '_ {
        let t = self.target;
        self.oldest().take_while(move |&(l, _)| l <= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_only_move_forward_and_tail_is_min() {
        let mut a = Ail::default();
        assert_eq!(a.update(1, Lsn::new(1, 10)), AilUpdate::Insert);
        assert_eq!(a.update(2, Lsn::new(1, 5)), AilUpdate::Insert);
        assert_eq!(a.update(2, Lsn::new(1, 4)), AilUpdate::Unchanged);
        assert_eq!(a.min_lsn(), Some(Lsn::new(1, 5)));
        assert_eq!(a.update(2, Lsn::new(1, 20)), AilUpdate::Move { old: Lsn::new(1, 5) });
        assert_eq!(a.min_lsn(), Some(Lsn::new(1, 10)));
        assert!(a.push(Lsn::new(1, 15)));
        assert_eq!(a.items_to_push().collect::<Vec<_>>(), vec![(Lsn::new(1, 10), 1)]);
        assert!(!a.push(Lsn::new(1, 12)), "target never goes back");
    }

    /// The deque with lazy deletion behaves as the `BTreeSet<(Lsn, item)>` it replaced,
    /// through inserts behind the newest LSN, moves, deletes, re-inserts at an LSN where the
    /// item's dead entry still sits, and compaction.
    #[test]
    fn the_ail_is_the_set_of_live_items_in_lsn_order() {
        use proptest::prelude::*;
        use std::collections::BTreeSet;
        let op = (0u32..40, 0u32..3, 0u32..60);
        proptest!(ProptestConfig::with_cases(256), |(ops in proptest::collection::vec(op, 1..600))| {
            let (mut a, mut set, mut at) = (Ail::default(), BTreeSet::new(), vec![None; 40]);
            for (item, what, block) in ops {
                let lsn = Lsn::new(1, block);
                if what == 0 {
                    let want = match at[item as usize] {
                        Some(old) if lsn <= old => AilUpdate::Unchanged,
                        Some(old) => AilUpdate::Move { old },
                        None => AilUpdate::Insert,
                    };
                    if want != AilUpdate::Unchanged {
                        if let Some(old) = at[item as usize] {
                            set.remove(&(old, item));
                        }
                        set.insert((lsn, item));
                        at[item as usize] = Some(lsn);
                    }
                    prop_assert_eq!(a.update(item, lsn), want);
                } else if what == 1 {
                    let old = at[item as usize].take();
                    if let Some(old) = old {
                        set.remove(&(old, item));
                    }
                    prop_assert_eq!(a.delete(item), old);
                } else {
                    let from = (block % 2 == 0).then_some((lsn, item));
                    a.last_pushed = Lsn::new(1, block / 2);
                    let lo = from.map_or((a.last_pushed, 0), |k| k);
                    let want: Vec<_> =
                        set.iter().copied().filter(|&k| if from.is_some() { k > lo } else { k >= lo }).take(5).collect();
                    prop_assert_eq!(a.items_after(from, 5), want);
                }
                prop_assert_eq!(a.oldest().collect::<Vec<_>>(), set.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(a.len(), set.len());
                prop_assert_eq!(a.min_lsn(), set.first().map(|k| k.0));
                prop_assert_eq!(a.max_lsn(), set.last().map(|k| k.0));
                prop_assert!(a.order.len() <= 2 * a.live + 64);
            }
        });
    }
}
