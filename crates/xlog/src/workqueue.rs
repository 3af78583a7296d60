//! The CIL's push workqueue (`m_cil_workqueue` and a context's `xc_push_work`): whether a push
//! work is queued and since when, how many have been queued, and the log forces waiting in
//! `flush_workqueue` for the works queued before them. Changed only through these methods.

use crate::units::{Ns, TaskId};
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct CilWorkqueue {
    /// `WORK_STRUCT_PENDING`: a push work is queued and no worker has taken it; since when.
    queued: Option<Ns>,
    /// Push works queued so far (a pending one is the last).
    works_queued: u64,
    /// Forces in `flush_workqueue`, each waiting for the works up to its target, in the
    /// order they came (so by target: those a finished work releases are a prefix).
    flush_waiters: VecDeque<(TaskId, u64)>,
}

impl CilWorkqueue {
    /// `queue_work`: queueing pending work again is a no-op, and the first request's time is
    /// when the work was queued.
    pub fn queue_work(&mut self, now: Ns) {
        if self.queued.is_none() {
            self.works_queued += 1;
        }
        self.queued.get_or_insert(now);
    }

    /// A worker takes the pending work: when it was queued (or `now`) and its number.
    pub fn take_work(&mut self, now: Ns) -> (Ns, u64) {
        (self.queued.take().unwrap_or(now), self.works_queued)
    }

    /// Since when a work is pending, if one is.
    pub fn pending_since(&self) -> Option<Ns> {
        self.queued
    }

    /// The number of the newest work queued: what a `flush_workqueue` now waits for.
    pub fn works_queued(&self) -> u64 {
        self.works_queued
    }

    /// Whether a queued (not yet running) work is numbered `target` or lower.
    pub fn pending_up_to(&self, target: u64) -> bool {
        self.queued.is_some() && self.works_queued <= target
    }

    /// `flush_workqueue`: `task` waits for the works up to `target`.
    pub fn flush_workqueue_wait(&mut self, task: TaskId, target: u64) {
        self.flush_waiters.push_back((task, target));
    }

    /// The first waiter and the works it waits for.
    pub fn first_flush_waiter(&self) -> Option<(TaskId, u64)> {
        self.flush_waiters.front().copied()
    }

    pub fn pop_flush_waiter(&mut self) {
        self.flush_waiters.pop_front();
    }
}
