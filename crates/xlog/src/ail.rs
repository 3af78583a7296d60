//! The Active Item List: committed items ordered by LSN, the log tail, and xfsaild's target.

use crate::units::Lsn;
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Ail {
    /// (li_lsn, item): the AIL in LSN order.
    order: BTreeSet<(Lsn, u32)>,
    /// Item id (dense) to its LSN in the AIL.
    lsn_of: Vec<Option<Lsn>>,
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
    /// Inserts `item` at `lsn`, or moves it forward; an item never moves back.
    pub fn update(&mut self, item: u32, lsn: Lsn) -> AilUpdate {
        let i = item as usize;
        if i >= self.lsn_of.len() {
            self.lsn_of.resize(i + 1, None);
        }
        match self.lsn_of[i] {
            Some(old) if lsn <= old => AilUpdate::Unchanged,
            Some(old) => {
                self.order.remove(&(old, item));
                self.order.insert((lsn, item));
                self.lsn_of[i] = Some(lsn);
                AilUpdate::Move { old }
            }
            None => {
                self.order.insert((lsn, item));
                self.lsn_of[i] = Some(lsn);
                AilUpdate::Insert
            }
        }
    }

    pub fn delete(&mut self, item: u32) -> Option<Lsn> {
        let lsn = self.lsn_of.get_mut(item as usize)?.take()?;
        self.order.remove(&(lsn, item));
        Some(lsn)
    }

    pub fn lsn(&self, item: u32) -> Option<Lsn> {
        self.lsn_of.get(item as usize).copied().flatten()
    }

    pub fn min_lsn(&self) -> Option<Lsn> {
        self.order.first().map(|&(l, _)| l)
    }
    pub fn max_lsn(&self) -> Option<Lsn> {
        self.order.last().map(|&(l, _)| l)
    }
    pub fn len(&self) -> usize {
        self.order.len()
    }
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
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
        self.order.iter().copied()
    }

    /// Items at or below the target, oldest first (one xfsaild pass).
    /// Up to `n` items after `(lsn, id)` (exclusive; `None`: from `last_pushed`), in order.
    pub fn items_after(&self, from: Option<(Lsn, u32)>, n: usize) -> Vec<(Lsn, u32)> {
        use std::ops::Bound::{Excluded, Included, Unbounded};
        let lo = match from {
            Some(k) => Excluded(k),
            None => Included((self.last_pushed, 0)),
        };
        self.order.range((lo, Unbounded)).take(n).copied().collect()
    }

    pub fn items_to_push(&self) -> impl Iterator<Item = (Lsn, u32)> + '_ {
        let t = self.target;
        self.order.iter().copied().take_while(move |&(l, _)| l <= t)
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
}
