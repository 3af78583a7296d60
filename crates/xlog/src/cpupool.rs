//! The CPU pool (`cpus`) the writers and the CIL push workers share: which CPUs are idle and
//! the tasks runnable but waiting for one. Changed only through these methods; which task
//! runs where, and for how long, is `sim/sched.rs`'s to decide.
//!
//! Model: one run queue for the pool, where the kernel keeps one per CPU (`struct rq`). By
//! default it is first come, first served; with `cpu_model=kernel` it is fair (`fair`): the
//! next task is the one that has had the least CPU time, as CFS picks by vruntime, and a woken
//! sleeper gets half a slice of credit (CFS's placement; EEVDF keeps the sleeper's lag).

use crate::units::{Ns, TaskId};
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Debug)]
pub struct CpuPool {
    /// CPUs in the pool (0: no pool, each writer has a CPU of its own).
    ncpus: u32,
    /// Idle CPUs, highest first: the lowest is taken first.
    idle: Vec<u32>,
    /// Runnable tasks waiting for a CPU, with the CPU time each then runs.
    runnable: VecDeque<(TaskId, Ns)>,
    /// Fair: the run queue's keys (parallel to `runnable`, ascending), the CPU time each task
    /// has had (`vruntime`, all nice 0) and the queue's floor (`min_vruntime`).
    fair: Option<Fair>,
}

#[derive(Clone, Debug, Default)]
struct Fair {
    keys: VecDeque<Ns>,
    vruntime: BTreeMap<TaskId, Ns>,
    min_vruntime: Ns,
    /// A woken sleeper's credit: it queues this far below `min_vruntime` at most.
    credit: Ns,
}

impl Fair {
    /// Where a task with `key` goes: behind every task with a key no larger.
    fn place(&mut self, key: Ns) -> usize {
        let at = self.keys.partition_point(|&k| k <= key);
        self.keys.insert(at, key);
        at
    }

    fn vruntime(&self, task: TaskId) -> Ns {
        self.vruntime.get(&task).copied().unwrap_or(0)
    }
}

impl CpuPool {
    pub fn new(ncpus: u32) -> CpuPool {
        CpuPool { ncpus, idle: (0..ncpus).rev().collect(), runnable: VecDeque::new(), fair: None }
    }

    /// A fair run queue (`cpu_model=kernel`), a woken sleeper's credit being `credit`.
    pub fn with_fair_queue(mut self, credit: Ns) -> CpuPool {
        self.fair = Some(Fair { credit, ..Fair::default() });
        self
    }

    /// Fair: `task` is given `ns` of CPU time (`update_curr`).
    pub fn charge(&mut self, task: TaskId, ns: Ns) {
        if let Some(f) = &mut self.fair {
            *f.vruntime.entry(task).or_default() += ns;
        }
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
    /// Fair: by the CPU time it has had, never below the queue's floor.
    pub fn enqueue_task(&mut self, task: TaskId, ns: Ns) {
        match &mut self.fair {
            Some(f) => {
                let key = f.vruntime(task).max(f.min_vruntime);
                let at = f.place(key);
                self.runnable.insert(at, (task, ns));
            }
            None => self.runnable.push_back((task, ns)),
        }
    }

    /// `enqueue_task` of a woken writer: at the back; fair, with a sleeper's credit.
    pub fn enqueue_wakeup(&mut self, task: TaskId, ns: Ns) {
        match &mut self.fair {
            Some(f) => {
                let key = f.vruntime(task).max(f.min_vruntime.saturating_sub(f.credit));
                let at = f.place(key);
                self.runnable.insert(at, (task, ns));
            }
            None => self.runnable.push_back((task, ns)),
        }
    }

    /// `enqueue_task` of a woken sleeper, which EEVDF picks next: ahead of every waiting task
    /// but those at the front for which `woken_before` holds.
    /// Fair: as any woken sleeper (`enqueue_wakeup`).
    pub fn enqueue_woken(&mut self, task: TaskId, ns: Ns, woken_before: impl Fn(TaskId) -> bool) {
        if self.fair.is_some() {
            return self.enqueue_wakeup(task, ns);
        }
        let at = self.runnable.iter().take_while(|&&(t, _)| woken_before(t)).count();
        self.runnable.insert(at, (task, ns));
    }

    /// `pick_next_task` for a CPU a task left: the first waiting task, taken, else the CPU
    /// goes idle.
    pub fn pick_next_task(&mut self, cpu: u32) -> Option<(TaskId, Ns)> {
        let next = self.runnable.pop_front();
        if let Some(f) = &mut self.fair {
            if let Some(key) = f.keys.pop_front() {
                f.min_vruntime = f.min_vruntime.max(key);
            }
        }
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

    #[test]
    fn a_fair_queue_runs_the_task_with_the_least_cpu_first_and_credits_a_sleeper_half_a_slice() {
        let mut pool = CpuPool::new(1).with_fair_queue(500);
        let cpu = pool.take_idle_cpu().unwrap();
        pool.charge(10, 3_000);
        pool.charge(11, 1_000);
        pool.enqueue_task(10, 5);
        pool.enqueue_task(11, 6);
        // 11 has had less CPU: it goes first, and the queue's floor rises to its 1,000.
        assert_eq!(pool.pick_next_task(cpu), Some((11, 6)));
        // A task queued again never queues below the floor (12 at 1,000, not its 400); a
        // sleeper that has had none queues half a slice below it (500), ahead of both.
        pool.charge(12, 400);
        pool.enqueue_task(12, 7);
        pool.enqueue_woken(20, 8, |_| false);
        assert_eq!(pool.runnable().collect::<Vec<_>>(), [20, 12, 10]);
        // Equal keys keep their order: 13 queues at the floor behind 12.
        pool.enqueue_task(13, 9);
        assert_eq!(pool.runnable().collect::<Vec<_>>(), [20, 12, 13, 10]);
        assert_eq!(pool.pick_next_task(cpu), Some((20, 8)));
        assert_eq!(pool.pick_next_task(cpu), Some((12, 7)));
    }
}
