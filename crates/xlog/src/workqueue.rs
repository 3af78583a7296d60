//! The log's workqueues. The CIL's push workqueue (`m_cil_workqueue` and a context's
//! `xc_push_work`): whether a push work is queued and since when, how many have been queued,
//! and the log forces waiting in `flush_workqueue` for the works queued before them. The log's
//! I/O completion work (`l_ioend_workqueue`, `xlog_ioend_work`) with `cpu_model=kernel`.
//! Changed only through these methods.

use crate::cpupool::KthreadCpu;
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

/// The log's I/O completion work on the CPU pool (`cpu_model=kernel`): the iclogs whose writes
/// are done and wait for it, the iclog whose callbacks it runs now (with its checkpoints), and
/// its place on the pool.
/// Model: one worker takes the done iclogs in the order they completed (the kernel queues each
/// iclog's own work on the CPU its completion came in on, a high-priority queue; their
/// callbacks run in ring order, one iclog at a time, under `l_icloglock`).
#[derive(Clone, Debug, Default)]
pub struct IoendWork {
    done: VecDeque<usize>,
    running: Option<(usize, Vec<u32>)>,
    on_cpu: KthreadCpu,
}

impl IoendWork {
    /// `queue_work` from `xlog_end_io`: iclog `i`'s write is done. True when the worker was
    /// asleep and now needs a CPU (a running or runnable one takes the iclog in turn).
    pub fn queue_work(&mut self, i: usize) -> bool {
        self.done.push_back(i);
        self.on_cpu.cpu().is_none() && !self.on_cpu.runnable()
    }

    /// The next iclog whose write is done, taken.
    pub fn next_done(&mut self) -> Option<usize> {
        self.done.pop_front()
    }

    /// It runs iclog `i`'s callbacks (checkpoints `cbs`) on its CPU.
    pub fn run_callbacks(&mut self, i: usize, cbs: Vec<u32>) {
        self.running = Some((i, cbs));
    }

    /// The callbacks whose CPU time is over, taken.
    pub fn take_running(&mut self) -> Option<(usize, Vec<u32>)> {
        self.running.take()
    }

    /// Its place on the pool: the CPU it holds, the one it last ran on, whether it waits.
    pub fn on_cpu(&self) -> &KthreadCpu {
        &self.on_cpu
    }
    pub fn on_cpu_mut(&mut self) -> &mut KthreadCpu {
        &mut self.on_cpu
    }

    /// The iclog whose callbacks it runs now.
    pub fn running_iclog(&self) -> Option<usize> {
        self.running.as_ref().map(|(i, _)| *i)
    }
    /// Iclog `i`'s write is done and waits for the worker.
    pub fn waits(&self, i: usize) -> bool {
        self.done.contains(&i)
    }
}

/// A loop device's completions on the CPU pool (`cpu_model=kernel`, a device that completes
/// through its backing file's direct I/O: `vm-disk`): the writes the host disk has done whose
/// completion waits for the backing file's `iomap_dio_complete_work`, on the `dio/<disk>`
/// workqueue of the CPU that takes the host disk's interrupts (bound, normal priority), and its
/// place on the pool. Each completion it runs completes the loop device's request
/// (`lo_rw_aio_complete`) and so its bio.
#[derive(Clone, Debug, Default)]
pub struct DioCompleteWork {
    /// (device, request id, the request's tag), in the order the host disk completed them.
    done: VecDeque<(u8, u64, u64)>,
    running: Option<(u8, u64, u64)>,
    on_cpu: KthreadCpu,
}

impl DioCompleteWork {
    /// `queue_work` from the host disk's completion: request `id` of device `dev` is done
    /// there. True when the worker was asleep and now needs its CPU.
    pub fn queue_work(&mut self, dev: u8, id: u64, tag: u64) -> bool {
        self.done.push_back((dev, id, tag));
        self.on_cpu.cpu().is_none() && !self.on_cpu.runnable()
    }

    /// The next completion to run, taken (its request's tag): it runs on the worker's CPU now.
    pub fn run_next(&mut self) -> Option<u64> {
        self.running = self.done.pop_front();
        self.running.map(|(_, _, tag)| tag)
    }

    /// The completion whose CPU time is over, taken.
    pub fn take_running(&mut self) -> Option<(u8, u64, u64)> {
        self.running.take()
    }

    pub fn on_cpu(&self) -> &KthreadCpu {
        &self.on_cpu
    }
    pub fn on_cpu_mut(&mut self) -> &mut KthreadCpu {
        &mut self.on_cpu
    }

    /// Whether the request tagged `tag` is done on the host disk and waits for the worker (or
    /// runs on it now).
    pub fn holds(&self, tag: u64) -> bool {
        self.running.iter().chain(&self.done).any(|&(_, _, t)| t == tag)
    }
}
