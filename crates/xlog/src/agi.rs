//! The AGI buffers' locks (`agi_lock=on`): a create takes its allocation group's AGI buffer
//! lock in `xfs_dialloc` (`xfs_ialloc_read_agi` -> `xfs_buf_lock`) and holds it until its
//! transaction commits (`xfs_trans_commit` releases the transaction's buffers), so the creates
//! of one AG allocate their inodes one at a time. On this machine's 6.18, 16 create writers on
//! 2 CPUs spend about 42% of their time asleep there (docs/kernel.md).
//!
//! Model: the lock is a semaphore handed to its first waiter on release (`up()`), so a woken
//! waiter holds it while it waits for a CPU. Only creates whose work runs inside their
//! transaction (`tx_work=inside`) take it; an unlink's (`xfs_difree`) is not modelled.

use crate::scenario::{AgiLock, Scenario};
use crate::sizing::{ag_geometry, SizingInput};
use crate::units::TaskId;
use std::collections::VecDeque;

/// The share of a create's CPU time that runs under the AGI lock, 6 of 11: on this machine's
/// 6.18 a create held its AGI 6 us at the median and took it again 5 us after releasing it
/// (`xfs_buf_lock_done` to `xfs_buf_unlock` of the four AGI buffers, 78,701 holds in 1 s of
/// `cil-throttle-rhythm --set device=vm-disk --set cpus=2`, docs/kernel.md).
pub const AGI_HOLD_SHARE: (u64, u64) = (6, 11);

#[derive(Clone, Debug, Default)]
pub struct AgiLocks {
    /// Each AG's holder, none when the switch is off.
    holder: Vec<Option<TaskId>>,
    /// Each AG's waiters, in the order they came.
    waiters: Vec<VecDeque<TaskId>>,
}

/// The scenario's AGs: `agcount`, else as many as mkfs makes for `fs_size`.
/// Model: a file system mkfs would not make (under 300 MB) gets mkfs's usual 4.
pub fn mkfs_agcount(s: &Scenario) -> u32 {
    if s.agcount > 0 {
        return s.agcount;
    }
    let input = SizingInput { fs_bytes: s.fs_size.0, ..SizingInput::default() };
    let ags = ag_geometry(&input, &mut Vec::new()).map_or(4, |g| g.agcount);
    ags.clamp(1, u64::from(u32::MAX)) as u32
}

impl AgiLocks {
    /// Locks for `agcount` AGs (0: the switch is off, nothing is ever locked).
    pub fn new(agcount: u32) -> AgiLocks {
        AgiLocks { holder: vec![None; agcount as usize], waiters: vec![VecDeque::new(); agcount as usize] }
    }

    /// The scenario's locks: one an AG (`agcount`, else as many as mkfs makes for `fs_size`)
    /// with `agi_lock=on`, none with `off`.
    pub fn for_scenario(s: &Scenario) -> AgiLocks {
        if s.agi_lock == AgiLock::Off {
            return AgiLocks::new(0);
        }
        AgiLocks::new(mkfs_agcount(s))
    }

    pub fn enabled(&self) -> bool {
        !self.holder.is_empty()
    }

    /// The AG a writer's creates allocate in: its directory's (each writer has its own, and
    /// new directories go round the AGs).
    /// Model: writer `w`'s directory is in AG `w mod agcount`.
    pub fn ag_of(&self, w: TaskId) -> usize {
        w as usize % self.holder.len().max(1)
    }

    /// `xfs_buf_lock` by `task` on AG `ag`'s AGI: true when it holds it now (or held it
    /// already), else it queues and sleeps.
    pub fn xfs_buf_lock(&mut self, ag: usize, task: TaskId) -> bool {
        match self.holder[ag] {
            None => {
                self.holder[ag] = Some(task);
                true
            }
            Some(t) if t == task => true,
            Some(_) => {
                self.waiters[ag].push_back(task);
                false
            }
        }
    }

    /// `xfs_buf_relse` by `task`, if it holds AG `ag`'s AGI: the lock goes to the first
    /// waiter, returned to be woken.
    pub fn xfs_buf_relse(&mut self, ag: usize, task: TaskId) -> Option<TaskId> {
        if self.holder.get(ag).copied().flatten() != Some(task) {
            return None;
        }
        let next = self.waiters[ag].pop_front();
        self.holder[ag] = next;
        next
    }

    /// Who holds AG `ag`'s AGI.
    pub fn holder(&self, ag: usize) -> Option<TaskId> {
        self.holder.get(ag).copied().flatten()
    }

    /// How many wait for AG `ag`'s AGI.
    pub fn waiting(&self, ag: usize) -> usize {
        self.waiters.get(ag).map_or(0, VecDeque::len)
    }
}

#[cfg(test)]
mod tests {
    use super::AgiLocks;

    #[test]
    fn an_agi_goes_to_its_waiters_in_order_and_other_ags_are_free() {
        let mut agi = AgiLocks::new(4);
        assert_eq!((agi.ag_of(1), agi.ag_of(5), agi.ag_of(2)), (1, 1, 2));
        assert!(agi.xfs_buf_lock(1, 1));
        assert!(agi.xfs_buf_lock(1, 1), "its holder takes it again");
        assert!(!agi.xfs_buf_lock(1, 5));
        assert!(!agi.xfs_buf_lock(1, 9));
        assert!(agi.xfs_buf_lock(2, 2), "another AG's is free");
        assert_eq!(agi.waiting(1), 2);
        assert_eq!(agi.xfs_buf_relse(1, 5), None, "only its holder releases it");
        assert_eq!(agi.xfs_buf_relse(1, 1), Some(5));
        assert_eq!(agi.holder(1), Some(5));
        assert_eq!(agi.xfs_buf_relse(1, 5), Some(9));
        assert_eq!(agi.xfs_buf_relse(1, 9), None);
        assert_eq!(agi.holder(1), None);
        assert!(!AgiLocks::new(0).enabled());
    }
}
