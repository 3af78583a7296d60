//! The CPU pool (`cpus`) the writers and the CIL push workers share: which CPUs are idle and
//! the tasks runnable but waiting for one. Changed only through these methods; which task
//! runs where, and for how long, is `sim/sched.rs`'s to decide.
//!
//! Model: one run queue for the pool, where the kernel keeps one per CPU (`struct rq`).

use crate::units::{Ns, TaskId};
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct CpuPool {
    /// CPUs in the pool (0: no pool, each writer has a CPU of its own).
    ncpus: u32,
    /// Idle CPUs, highest first: the lowest is taken first.
    idle: Vec<u32>,
    /// Runnable tasks waiting for a CPU, with the CPU time each then runs.
    runnable: VecDeque<(TaskId, Ns)>,
}

impl CpuPool {
    pub fn new(ncpus: u32) -> CpuPool {
        CpuPool { ncpus, idle: (0..ncpus).rev().collect(), runnable: VecDeque::new() }
    }

    /// Tasks share a pool of CPUs (else every writer runs on one of its own).
    pub fn enabled(&self) -> bool {
        self.ncpus > 0
    }

    pub fn ncpus(&self) -> u32 {
        self.ncpus
    }

    /// `select_idle_sibling` for a waking task: `prev`, the CPU it last ran on, when idle,
    /// else the lowest idle CPU; None when all are busy.
    pub fn select_idle_cpu(&mut self, prev: u32) -> Option<u32> {
        match self.idle.iter().position(|&c| c == prev) {
            Some(i) => Some(self.idle.remove(i)),
            None => self.idle.pop(),
        }
    }

    /// The lowest idle CPU, taken; None when all are busy.
    pub fn take_idle_cpu(&mut self) -> Option<u32> {
        self.idle.pop()
    }

    /// `enqueue_task` at the back: runnable behind every task waiting now.
    pub fn enqueue_task(&mut self, task: TaskId, ns: Ns) {
        self.runnable.push_back((task, ns));
    }

    /// `enqueue_task` of a woken sleeper, which EEVDF picks next: ahead of every waiting task
    /// but those at the front for which `woken_before` holds.
    pub fn enqueue_woken(&mut self, task: TaskId, ns: Ns, woken_before: impl Fn(TaskId) -> bool) {
        let at = self.runnable.iter().take_while(|&&(t, _)| woken_before(t)).count();
        self.runnable.insert(at, (task, ns));
    }

    /// `pick_next_task` for a CPU a task left: the first waiting task, taken, else the CPU
    /// goes idle.
    pub fn pick_next_task(&mut self, cpu: u32) -> Option<(TaskId, Ns)> {
        let next = self.runnable.pop_front();
        if next.is_none() {
            let at = self.idle.partition_point(|&c| c > cpu);
            self.idle.insert(at, cpu);
        }
        next
    }

    /// Some task waits for a CPU.
    pub fn has_runnable(&self) -> bool {
        !self.runnable.is_empty()
    }

    /// How many CPUs are idle.
    pub fn idle_cpus(&self) -> usize {
        self.idle.len()
    }

    /// The tasks waiting for a CPU, in the order they will get one.
    pub fn runnable(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.runnable.iter().map(|&(t, _)| t)
    }

    /// How many tasks wait ahead of `task`, when it waits for a CPU.
    pub fn runnable_ahead(&self, task: TaskId) -> Option<usize> {
        self.runnable.iter().position(|&(t, _)| t == task)
    }
}

#[cfg(test)]
mod tests {
    use super::CpuPool;

    #[test]
    fn a_waking_task_gets_its_last_cpu_when_idle_else_the_lowest() {
        let mut pool = CpuPool::new(4);
        assert_eq!(pool.select_idle_cpu(2), Some(2));
        assert_eq!(pool.select_idle_cpu(2), Some(0));
        assert_eq!(pool.take_idle_cpu(), Some(1));
        assert_eq!(pool.select_idle_cpu(1), Some(3));
        assert_eq!(pool.select_idle_cpu(0), None);
    }

    #[test]
    fn a_freed_cpu_goes_to_the_first_waiting_task_and_woken_ones_go_first() {
        let mut pool = CpuPool::new(1);
        let cpu = pool.take_idle_cpu().unwrap();
        pool.enqueue_task(10, 5);
        pool.enqueue_task(11, 6);
        // Task 20 woke earlier than 21: 21 queues behind it, both ahead of the writers.
        pool.enqueue_woken(20, 7, |t| t >= 20);
        pool.enqueue_woken(21, 8, |t| t >= 20);
        assert_eq!(pool.runnable_ahead(11), Some(3));
        assert_eq!(pool.pick_next_task(cpu), Some((20, 7)));
        assert_eq!(pool.pick_next_task(cpu), Some((21, 8)));
        assert_eq!(pool.pick_next_task(cpu), Some((10, 5)));
        assert_eq!(pool.pick_next_task(cpu), Some((11, 6)));
        assert!(!pool.has_runnable());
        assert_eq!(pool.pick_next_task(cpu), None);
        assert_eq!(pool.take_idle_cpu(), Some(cpu));
    }
}
