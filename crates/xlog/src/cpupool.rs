//! The CPU pool (`cpus`) the writers and the CIL push workers share: which CPUs are idle and
//! the tasks runnable but waiting for one. Changed only through these methods; which task
//! runs where, and for how long, the simulator decides (`sim/writer.rs`, `sim/push.rs`, and
//! `cpu_release` in `sim/mod.rs`).
//!
//! By default one run queue serves the pool, first come, first served. With
//! `cpu_model=kernel` each CPU has its own (`struct rq`), as the kernel does: a task woken with
//! no CPU idle queues on the CPU the simulator names (a push worker its waker's, others their
//! own last one), a CPU with nothing
//! queued takes the first task of the longest other queue that is not bound to its own CPU
//! (`newidle_balance`; no periodic balancing; `bind`: a per-CPU worker), and each queue is fair: the next task is the one that has had the least CPU
//! time, as CFS picks by vruntime, a woken sleeper credited half a slice (CFS's placement;
//! EEVDF keeps the sleeper's lag, tried and measured worse: docs/kernel.md), but a woken kernel
//! worker goes before the writers queued on its CPU (`enqueue_woken`; this kernel's pushes
//! started 24 us after `queue_work` at the median with 168 writers runnable). A woken task
//! preempts a running one past the queue's average CPU time (`wakeup_preempts`).

use crate::units::{Ns, TaskId};
use std::collections::{BTreeMap, VecDeque};

/// A kernel thread's place on the pool with `cpu_model=kernel` (xfsaild, the log's I/O
/// completion work): the CPU it holds, the one it last ran on, and since when it has waited
/// runnable for one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KthreadCpu {
    cpu: Option<u32>,
    last_cpu: u32,
    runnable_since: Option<Ns>,
}

impl KthreadCpu {
    /// It waits runnable for a CPU from `now`.
    pub fn wait_for_cpu(&mut self, now: Ns) {
        self.runnable_since = Some(now);
    }

    /// It runs on `cpu` from `now`; returns how long it waited runnable.
    pub fn got_cpu(&mut self, now: Ns, cpu: u32) -> Ns {
        self.cpu = Some(cpu);
        self.last_cpu = cpu;
        now - self.runnable_since.take().unwrap_or(now)
    }

    /// The CPU it holds, given up.
    pub fn take_cpu(&mut self) -> Option<u32> {
        self.cpu.take()
    }

    pub fn cpu(&self) -> Option<u32> {
        self.cpu
    }
    pub fn last_cpu(&self) -> u32 {
        self.last_cpu
    }
    /// It waits runnable for a CPU of the pool.
    pub fn runnable(&self) -> bool {
        self.runnable_since.is_some()
    }
}

#[derive(Clone, Debug)]
pub struct CpuPool {
    /// CPUs in the pool (0: no pool, each writer has a CPU of its own).
    ncpus: u32,
    /// Idle CPUs, highest first: the lowest is taken first.
    idle: Vec<u32>,
    /// The run queues: one for the pool, or one a CPU (`struct rq`, `cpu_model=kernel`).
    rqs: Vec<Rq>,
    /// Fair: the CPU time each task has had (`vruntime`, all nice 0) and the queues' floor.
    fair: Option<Fair>,
    /// Tasks bound to one CPU (a per-CPU workqueue's worker): never pulled to another.
    bound: Vec<(TaskId, u32)>,
}

/// A run queue: runnable tasks waiting for a CPU, with the CPU time each then runs.
#[derive(Clone, Debug, Default)]
struct Rq {
    tasks: VecDeque<(TaskId, Ns)>,
    /// Fair: each task's key (the vruntime it queued with), ascending, beside `tasks`.
    keys: VecDeque<Ns>,
}

#[derive(Clone, Debug, Default)]
struct Fair {
    vruntime: BTreeMap<TaskId, Ns>,
    /// Model: one floor for every queue (the kernel keeps one a queue).
    min_vruntime: Ns,
    /// A woken sleeper's credit: it queues this far below `min_vruntime` at most.
    credit: Ns,
}

impl Fair {
    fn vruntime(&self, task: TaskId) -> Ns {
        self.vruntime.get(&task).copied().unwrap_or(0)
    }
}

impl CpuPool {
    pub fn new(ncpus: u32) -> CpuPool {
        CpuPool { ncpus, idle: (0..ncpus).rev().collect(), rqs: vec![Rq::default()], fair: None, bound: Vec::new() }
    }

    /// `cpu_model=kernel`: a run queue a CPU, fair, a woken sleeper's credit being `credit`.
    pub fn with_cpu_run_queues(mut self, credit: Ns) -> CpuPool {
        self.fair = Some(Fair { credit, ..Fair::default() });
        self.rqs = vec![Rq::default(); self.ncpus.max(1) as usize];
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

    /// `task` runs on `cpu` only (`kthread_bind`: a per-CPU workqueue's worker).
    pub fn bind(&mut self, task: TaskId, cpu: u32) {
        self.bound.retain(|&(t, _)| t != task);
        self.bound.push((task, cpu));
    }

    /// The CPU `task` is bound to, if it is.
    pub fn bound_cpu(&self, task: TaskId) -> Option<u32> {
        self.bound.iter().find(|&&(t, _)| t == task).map(|&(_, c)| c)
    }

    /// `cpu`, taken when idle (a task bound to it wakes there or waits for it).
    pub fn take_cpu_if_idle(&mut self, cpu: u32) -> bool {
        let at = self.idle.iter().position(|&c| c == cpu);
        at.map(|i| self.idle.remove(i)).is_some()
    }

    /// The lowest idle CPU, taken; None when all are busy.
    pub fn take_idle_cpu(&mut self) -> Option<u32> {
        self.idle.pop()
    }

    fn rq_of(&self, cpu: u32) -> usize {
        (cpu as usize).min(self.rqs.len() - 1)
    }

    /// Fair: into `cpu`'s queue at `key`, behind every task with a key no larger.
    fn enqueue_at_key(&mut self, cpu: u32, task: TaskId, ns: Ns, key: Ns) {
        let q = self.rq_of(cpu);
        let rq = &mut self.rqs[q];
        let at = rq.keys.partition_point(|&k| k <= key);
        rq.keys.insert(at, key);
        rq.tasks.insert(at, (task, ns));
    }

    /// `enqueue_task` on `cpu`'s queue (the pool's one by default) at the back: runnable
    /// behind every task waiting there now. Fair: by the CPU time it has had, never below the
    /// floor.
    pub fn enqueue_task(&mut self, task: TaskId, ns: Ns, cpu: u32) {
        match &self.fair {
            Some(f) => self.enqueue_at_key(cpu, task, ns, f.vruntime(task).max(f.min_vruntime)),
            None => self.rqs[0].tasks.push_back((task, ns)),
        }
    }

    /// `enqueue_task` of a woken writer: at the back; fair, with a sleeper's credit.
    pub fn enqueue_wakeup(&mut self, task: TaskId, ns: Ns, cpu: u32) {
        match &self.fair {
            Some(f) => {
                let key = f.vruntime(task).max(f.min_vruntime.saturating_sub(f.credit));
                self.enqueue_at_key(cpu, task, ns, key)
            }
            None => self.rqs[0].tasks.push_back((task, ns)),
        }
    }

    /// `enqueue_task` of a woken kernel worker, which runs next on its CPU: ahead of every
    /// waiting task but those at the front for which `woken_before` holds (the kernel workers
    /// woken before it), fair queues too.
    /// Model: the kernel's EEVDF picks it so (traced, docs/kernel.md); the model does not
    /// derive that from lags and deadlines.
    pub fn enqueue_woken(&mut self, task: TaskId, ns: Ns, cpu: u32, woken_before: impl Fn(TaskId) -> bool) {
        let q = self.rq_of(cpu);
        let Some(f) = &self.fair else {
            let rq = &mut self.rqs[q];
            let at = rq.tasks.iter().take_while(|&&(t, _)| woken_before(t)).count();
            return rq.tasks.insert(at, (task, ns));
        };
        // Fair: a key no task's on any queue is below (a woken writer's is the floor less its
        // credit at least), so no CPU pulls a writer ahead of it (`pick_next_task`); among
        // equal keys, behind the kernel workers woken before it.
        let floor = f.min_vruntime.saturating_sub(f.credit);
        let key = self.rqs.iter().filter_map(|rq| rq.keys.front().copied()).fold(floor, Ns::min);
        let rq = &mut self.rqs[q];
        let mut at = rq.keys.partition_point(|&k| k < key);
        while at < rq.keys.len() && rq.keys[at] == key && woken_before(rq.tasks[at].0) {
            at += 1;
        }
        rq.keys.insert(at, key);
        rq.tasks.insert(at, (task, ns));
    }

    /// `pick_next_task` for a CPU a task left: the first task waiting on its queue, else
    /// (`newidle_balance`), or when another queue is longer by two or more and its first comes
    /// before this one's by key (`load_balance`), the first of the longest other queue not bound to
    /// another CPU, else the
    /// CPU goes idle.
    pub fn pick_next_task(&mut self, cpu: u32) -> Option<(TaskId, Ns)> {
        let own = self.rq_of(cpu);
        let len = |q: usize| self.rqs[q].tasks.len();
        let longest = (0..self.rqs.len()).max_by_key(|&q| (len(q), std::cmp::Reverse(q))).filter(|&q| len(q) > 0);
        // A queue's first task that may run on `cpu` (its own queue's: its first).
        let bound = &self.bound;
        let movable = |q: usize| match q == own {
            true => Some(0),
            false => self.rqs[q].tasks.iter().position(|&(t, _)| !bound.iter().any(|&(b, c)| b == t && c != cpu)),
        };
        // Model: balancing happens as a CPU picks (the kernel's `load_balance` runs from the
        // tick too): it runs its own queue's first unless another is longer by two or more.
        // A task pulled from another queue joins this one's order: the first of the two
        // heads by key goes (fair queues; a tie stays home).
        let key_at = |q: usize, at: Option<usize>| at.and_then(|i| self.rqs[q].keys.get(i).copied());
        let from = match longest {
            Some(q) if len(q) > len(own) + 1 && movable(q).is_some() => {
                let pull = len(own) == 0 || key_at(q, movable(q)) < key_at(own, Some(0));
                match pull {
                    true => Some((q, movable(q).unwrap_or(0))),
                    false => Some((own, 0)),
                }
            }
            _ if len(own) > 0 => Some((own, 0)),
            Some(q) => movable(q).map(|at| (q, at)),
            None => None,
        };
        let Some((q, at)) = from else {
            let at = self.idle.partition_point(|&c| c > cpu);
            self.idle.insert(at, cpu);
            return None;
        };
        let rq = &mut self.rqs[q];
        if let (Some(f), Some(key)) = (&mut self.fair, rq.keys.remove(at)) {
            f.min_vruntime = f.min_vruntime.max(key);
        }
        rq.tasks.remove(at)
    }

    /// `check_preempt_wakeup_fair` for the task running on `cpu`, `curr`, after a wakeup queued
    /// a task there: fair only. EEVDF lets a running task keep its CPU while it is eligible (has
    /// had no more than the queue's average CPU time, `RUN_TO_PARITY`); past it, the first task
    /// waiting, when eligible, preempts it.
    pub fn wakeup_preempts(&self, cpu: u32, curr: TaskId) -> bool {
        let Some(f) = &self.fair else { return false };
        let rq = &self.rqs[self.rq_of(cpu)];
        let Some(&head) = rq.keys.front() else { return false };
        let vc = f.vruntime(curr).max(f.min_vruntime);
        let n = rq.keys.len() as u128 + 1;
        let avg = (rq.keys.iter().map(|&k| u128::from(k)).sum::<u128>() + u128::from(vc)) / n;
        u128::from(vc) > avg && u128::from(head) <= avg
    }

    /// Some task waits for `cpu` (on its queue).
    pub fn has_runnable(&self, cpu: u32) -> bool {
        !self.rqs[self.rq_of(cpu)].tasks.is_empty()
    }

    /// How many CPUs are idle.
    pub fn idle_cpus(&self) -> usize {
        self.idle.len()
    }

    /// The tasks waiting for a CPU, queue by queue, each in the order they will get one.
    pub fn runnable(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.rqs.iter().flat_map(|rq| rq.tasks.iter().map(|&(t, _)| t))
    }

    /// How many tasks wait ahead of `task` on its queue, when it waits for a CPU.
    pub fn runnable_ahead(&self, task: TaskId) -> Option<usize> {
        self.rqs.iter().find_map(|rq| rq.tasks.iter().position(|&(t, _)| t == task))
    }

    /// With a run queue a CPU: the CPU whose queue `task` waits on.
    pub fn queued_on(&self, task: TaskId) -> Option<u32> {
        if self.rqs.len() < 2 {
            return None;
        }
        self.rqs.iter().position(|rq| rq.tasks.iter().any(|&(t, _)| t == task)).map(|q| q as u32)
    }

    /// With a run queue a CPU: how many wait on each (empty with one queue for the pool).
    pub fn queue_lengths(&self) -> Vec<usize> {
        match self.rqs.len() {
            0 | 1 => Vec::new(),
            _ => self.rqs.iter().map(|rq| rq.tasks.len()).collect(),
        }
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
        pool.enqueue_task(10, 5, 3);
        pool.enqueue_task(11, 6, 0);
        // Task 20 woke earlier than 21: 21 queues behind it, both ahead of the writers.
        pool.enqueue_woken(20, 7, 0, |t| t >= 20);
        pool.enqueue_woken(21, 8, 0, |t| t >= 20);
        assert_eq!(pool.runnable_ahead(11), Some(3));
        assert_eq!(pool.pick_next_task(cpu), Some((20, 7)));
        assert_eq!(pool.pick_next_task(cpu), Some((21, 8)));
        assert_eq!(pool.pick_next_task(cpu), Some((10, 5)));
        assert_eq!(pool.pick_next_task(cpu), Some((11, 6)));
        assert!(!pool.has_runnable(cpu));
        assert_eq!(pool.pick_next_task(cpu), None);
        assert_eq!(pool.take_idle_cpu(), Some(cpu));
    }

    #[test]
    fn a_fair_queue_runs_the_task_with_the_least_cpu_first_and_credits_a_sleeper_half_a_slice() {
        let mut pool = CpuPool::new(1).with_cpu_run_queues(500);
        let cpu = pool.take_idle_cpu().unwrap();
        pool.charge(10, 3_000);
        pool.charge(11, 1_000);
        pool.enqueue_task(10, 5, 0);
        pool.enqueue_task(11, 6, 0);
        // 11 has had less CPU: it goes first, and the queue's floor rises to its 1,000.
        assert_eq!(pool.pick_next_task(cpu), Some((11, 6)));
        // A task queued again never queues below the floor (12 at 1,000, not its 400); a
        // sleeper that has had none queues half a slice below it (500), ahead of both.
        pool.charge(12, 400);
        pool.enqueue_task(12, 7, 0);
        pool.enqueue_woken(20, 8, 0, |_| false);
        assert_eq!(pool.runnable().collect::<Vec<_>>(), [20, 12, 10]);
        // Equal keys keep their order: 13 queues at the floor behind 12.
        pool.enqueue_task(13, 9, 0);
        assert_eq!(pool.runnable().collect::<Vec<_>>(), [20, 12, 13, 10]);
        assert_eq!(pool.pick_next_task(cpu), Some((20, 8)));
        assert_eq!(pool.pick_next_task(cpu), Some((12, 7)));
    }

    #[test]
    fn a_fair_queue_runs_a_woken_kernel_worker_before_its_writers_whatever_cpu_it_had() {
        let mut pool = CpuPool::new(1).with_cpu_run_queues(500);
        let cpu = pool.take_idle_cpu().unwrap();
        pool.charge(10, 3_000);
        pool.charge(11, 1_000);
        pool.charge(90, 50_000);
        pool.enqueue_task(10, 5, 0);
        pool.enqueue_task(11, 6, 0);
        // Kernel workers (90, 91) go ahead of the writers, in the order they woke, though 90
        // has had the most CPU time.
        pool.enqueue_woken(90, 7, 0, |t| t >= 90);
        pool.enqueue_woken(91, 8, 0, |t| t >= 90);
        assert_eq!(pool.runnable().collect::<Vec<_>>(), [90, 91, 11, 10]);
        assert_eq!(pool.pick_next_task(cpu), Some((90, 7)));
        // A writer woken now queues by its key: behind the worker still waiting.
        pool.enqueue_wakeup(12, 9, 0);
        assert_eq!(pool.runnable().collect::<Vec<_>>(), [91, 12, 11, 10]);
    }

    #[test]
    fn a_cpu_pulls_from_a_longer_queue_only_what_would_run_before_its_own_first() {
        let mut pool = CpuPool::new(2).with_cpu_run_queues(500);
        let (c0, c1) = (pool.take_idle_cpu().unwrap(), pool.take_idle_cpu().unwrap());
        pool.charge(10, 1_000);
        for t in 10..14 {
            pool.enqueue_task(t, 1, c0);
        }
        // A push worker woken onto CPU 1's queue runs there next, though CPU 0's is longer.
        pool.charge(80, 9_000);
        pool.enqueue_woken(80, 2, c1, |t| t >= 80);
        assert_eq!(pool.pick_next_task(c1), Some((80, 2)));
        // With a writer of its own queued behind CPU 0's first by key, CPU 1 pulls CPU 0's
        // first while CPU 0's queue is longer by two or more, then runs its own.
        pool.charge(20, 5_000);
        pool.enqueue_task(20, 3, c1);
        assert_eq!(pool.pick_next_task(c1), Some((11, 1)));
        assert_eq!(pool.pick_next_task(c1), Some((12, 1)));
        assert_eq!(pool.pick_next_task(c1), Some((20, 3)));
    }

    #[test]
    fn a_woken_task_preempts_only_a_running_task_past_the_queues_average() {
        let mut pool = CpuPool::new(1).with_cpu_run_queues(0);
        let cpu = pool.take_idle_cpu().unwrap();
        assert!(!pool.wakeup_preempts(cpu, 10), "nothing waits");
        // 10 runs having had 3,000; 11 wakes having had 1,000: the average is 2,000.
        pool.charge(10, 3_000);
        pool.charge(11, 1_000);
        pool.enqueue_wakeup(11, 5, cpu);
        assert!(pool.wakeup_preempts(cpu, 10));
        // With 14 (5,000) waiting too the average is 10's own 3,000: eligible, it runs on.
        pool.charge(14, 5_000);
        pool.enqueue_task(14, 5, cpu);
        assert!(!pool.wakeup_preempts(cpu, 10));
        // 15 has had 4,000, past the average of 3,333.
        pool.charge(15, 4_000);
        assert!(pool.wakeup_preempts(cpu, 15));
        assert!(!CpuPool::new(1).wakeup_preempts(0, 10), "only the fair queues preempt");
    }

    #[test]
    fn each_cpu_runs_its_own_queue_and_an_idle_one_takes_from_the_longest_other() {
        let mut pool = CpuPool::new(3).with_cpu_run_queues(0);
        let (c0, c1, c2) =
            (pool.take_idle_cpu().unwrap(), pool.take_idle_cpu().unwrap(), pool.take_idle_cpu().unwrap());
        pool.enqueue_task(10, 1, c0);
        pool.enqueue_task(11, 1, c1);
        pool.enqueue_task(12, 1, c1);
        assert!(pool.has_runnable(c0) && !pool.has_runnable(c2));
        // CPU 0 runs its own task though CPU 1's queue is longer.
        assert_eq!(pool.pick_next_task(c0), Some((10, 1)));
        // CPU 2 has none queued: it takes CPU 1's first, then CPU 1 runs the other.
        assert_eq!(pool.pick_next_task(c2), Some((11, 1)));
        assert_eq!(pool.runnable_ahead(12), Some(0));
        assert_eq!(pool.pick_next_task(c1), Some((12, 1)));
        assert_eq!(pool.pick_next_task(c0), None);
        assert_eq!(pool.idle_cpus(), 1);
    }

    #[test]
    fn a_bound_task_waits_for_its_own_cpu_and_is_never_pulled_to_another() {
        let mut pool = CpuPool::new(2).with_cpu_run_queues(0);
        pool.bind(90, 1);
        assert_eq!(pool.bound_cpu(90), Some(1));
        assert_eq!(pool.bound_cpu(91), None);
        assert!(pool.take_cpu_if_idle(1));
        assert!(!pool.take_cpu_if_idle(1), "taken");
        let c0 = pool.take_idle_cpu().unwrap();
        // 90 waits on CPU 1's queue with a writer behind it: CPU 0, with nothing queued, pulls
        // the writer, not 90; then nothing it may run, so it goes idle.
        pool.enqueue_woken(90, 1, 1, |_| false);
        pool.enqueue_task(10, 1, 1);
        assert_eq!(pool.pick_next_task(c0), Some((10, 1)));
        assert_eq!(pool.pick_next_task(c0), None);
        assert_eq!(pool.runnable().collect::<Vec<_>>(), [90]);
        assert_eq!(pool.pick_next_task(1), Some((90, 1)));
    }
}
