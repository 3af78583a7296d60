//! The Active Item List: committed items ordered by LSN, the log tail, and xfsaild's target.

use crate::cpupool::KthreadCpu;
use crate::units::{Lsn, Ns};
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
    target: Lsn,
    pushes: u64,
    /// `ail_last_pushed_lsn`: where xfsaild's next pass resumes (zero: the AIL's start).
    last_pushed: Lsn,
}

/// xfsaild's own state, in the kernel the task fields of `struct xfs_ail` beside its list:
/// when its next pass runs, the pass under way, and the two requests it takes at a pass
/// (`ail_log_flush`, `XFS_AIL_OPSTATE_PUSH_ALL`). Changed only through these methods.
#[derive(Clone, Debug)]
pub struct Xfsaild {
    /// Asleep until woken (no pass scheduled).
    idle: bool,
    /// When the next pass runs (`Ns::MAX`: idle); an earlier wakeup makes it stale.
    next_pass: Ns,
    /// Until when xfsaild is on its CPU writing back what its last pass took on: a wakeup
    /// cannot cut that short, only the sleep after it.
    busy_until: Ns,
    /// A wakeup came during the last pass and was lost (cleared by the next pass).
    wake_lost: bool,
    /// `ail_log_flush`: pinned items were met since the last traversal began.
    log_flush: bool,
    /// `XFS_AIL_OPSTATE_PUSH_ALL` (6.11+): the next pass targets the AIL's newest item.
    push_all: bool,
    /// `cpu_model=kernel`: its place on the pool (the CPU it holds for its pass and the
    /// writeback it took on).
    on_cpu: KthreadCpu,
}

impl Default for Xfsaild {
    fn default() -> Self {
        Xfsaild {
            idle: true,
            next_pass: Ns::MAX,
            busy_until: 0,
            wake_lost: false,
            log_flush: false,
            push_all: false,
            on_cpu: KthreadCpu::default(),
        }
    }
}

/// What `wake_up_process(ailp->ail_task)` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AildWake {
    /// xfsaild was running a pass (TASK_RUNNING): the wakeup is lost.
    Lost,
    /// A pass is now due at this instant.
    PassAt(Ns),
    /// A pass was already due by then (or, under `backoff`, xfsaild is not idle).
    Nothing,
}

impl Xfsaild {
    /// `wake_up_process`: ends xfsaild's sleep at `now`, unless it is mid-pass (every kernel
    /// loses that wakeup: `xfsaild()` sets its sleep state only after the pass). Under the
    /// lab's earlier `backoff` pass only an idle xfsaild is woken.
    pub fn wake_up_process(&mut self, now: Ns, backoff: bool) -> AildWake {
        if now < self.busy_until {
            self.wake_lost = true;
            return AildWake::Lost;
        }
        if self.next_pass > now && (!backoff || self.idle) {
            self.idle = false;
            self.next_pass = now;
            return AildWake::PassAt(now);
        }
        AildWake::Nothing
    }

    /// Whether a pass scheduled for `now` is still the one due (not made stale by an
    /// earlier wakeup); starting it clears a lost wakeup.
    pub fn xfsaild_begin_pass(&mut self, now: Ns) -> bool {
        if now != self.next_pass {
            return false;
        }
        self.wake_lost = false;
        true
    }

    /// The pass met a pinned item: the next traversal from the AIL's start forces the log.
    pub fn set_log_flush(&mut self) {
        self.log_flush = true;
    }

    /// `ail_log_flush`, taken (and cleared) when a traversal from the start acts on it.
    pub fn take_log_flush(&mut self) -> bool {
        std::mem::take(&mut self.log_flush)
    }

    pub fn log_flush(&self) -> bool {
        self.log_flush
    }

    /// `test_and_set_bit(XFS_AIL_OPSTATE_PUSH_ALL)`: true when this request set it.
    pub fn request_push_all(&mut self) -> bool {
        !std::mem::replace(&mut self.push_all, true)
    }

    /// `test_and_clear_bit(XFS_AIL_OPSTATE_PUSH_ALL)` at the start of a pass.
    pub fn take_push_all(&mut self) -> bool {
        std::mem::take(&mut self.push_all)
    }

    /// The pass keeps xfsaild on its CPU until `until`.
    pub fn set_busy_until(&mut self, until: Ns) {
        self.busy_until = until;
    }

    /// Sleeps until woken (`schedule()` with nothing to do).
    pub fn sleep_until_woken(&mut self) {
        self.idle = true;
        self.next_pass = Ns::MAX;
    }

    /// Sleeps the pass's timeout: the next pass runs at `at` (returned, to schedule).
    pub fn sleep_until(&mut self, at: Ns) -> Ns {
        self.next_pass = at;
        at
    }

    /// A pass scheduled for `now` is still the one due.
    pub fn pass_due(&self, now: Ns) -> bool {
        now == self.next_pass
    }

    /// Its due pass waits runnable for a CPU of the pool from `now`.
    pub fn wait_for_cpu(&mut self, now: Ns) {
        self.on_cpu.wait_for_cpu(now);
    }

    /// It runs on `cpu` from `now`: its due pass starts now (late by the wait, returned).
    pub fn got_cpu(&mut self, now: Ns, cpu: u32) -> Ns {
        let held = self.on_cpu.cpu();
        debug_assert!(held.is_none_or(|c| c == cpu), "xfsaild holds CPU {held:?}, given {cpu}");
        self.next_pass = now;
        self.on_cpu.got_cpu(now, cpu)
    }

    /// The CPU it holds, given up.
    pub fn take_cpu(&mut self) -> Option<u32> {
        self.on_cpu.take_cpu()
    }
    pub fn cpu(&self) -> Option<u32> {
        self.on_cpu.cpu()
    }
    pub fn last_cpu(&self) -> u32 {
        self.on_cpu.last_cpu()
    }
    /// It waits runnable for a CPU of the pool.
    pub fn runnable(&self) -> bool {
        self.on_cpu.runnable()
    }

    pub fn idle(&self) -> bool {
        self.idle
    }
    pub fn next_pass(&self) -> Ns {
        self.next_pass
    }
    pub fn busy_until(&self) -> Ns {
        self.busy_until
    }
    pub fn wake_lost(&self) -> bool {
        self.wake_lost
    }
    pub fn push_all(&self) -> bool {
        self.push_all
    }
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

    /// `ail_target`: xfsaild writes back items at or below it.
    pub fn target(&self) -> Lsn {
        self.target
    }

    /// Times the target was raised.
    pub fn pushes(&self) -> u64 {
        self.pushes
    }

    /// `ail_last_pushed_lsn`: where xfsaild's next pass resumes (zero: the AIL's start).
    pub fn last_pushed(&self) -> Lsn {
        self.last_pushed
    }

    /// xfsaild pushed an item at `lsn` (`ailp->ail_last_pushed_lsn = lsn`).
    pub fn set_last_pushed(&mut self, lsn: Lsn) {
        self.last_pushed = lsn;
    }

    /// The next pass starts from the AIL's start again.
    pub fn restart_from_start(&mut self) {
        self.last_pushed = Lsn::ZERO;
    }

    /// Lowers the target to zero, which the kernel never does: for a test that raises it again.
    #[cfg(test)]
    pub fn clear_target_for_test(&mut self) {
        self.target = Lsn::ZERO;
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
