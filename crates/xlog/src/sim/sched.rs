//! Who runs on the CPU pool (`cpus`, `CpuPool`) that the writers and the CIL push workers
//! share, when, and for how long.
//!
//! Model: by default one run queue. A writer's think is shorter than a slice and runs to its
//! end, its wakeups queue in order. A push worker woken from a sleep goes to the front (EEVDF
//! places a sleeper with its lag, so it is picked next; the kernel's pushes start 18 us after
//! being queued at the median), keeps its CPU across its CPU work until it sleeps, and after
//! EEVDF's base slice goes to the back when someone waits. With `cpu_model=kernel` an O_DSYNC
//! append's I/O completion worker and xfsaild take CPU time too; a writer keeps its CPU across
//! its operations as a push worker does (no preemption within its slice); each CPU has its own
//! fair run queue (`CpuPool`): a push worker woken by `queue_work` from a task on a CPU queues
//! on that CPU (`current_cpu`), every other woken task on its own last CPU. The iclog
//! completions take no CPU yet.

use super::tasks::{pusher_of, pusher_task, TASK_XFSAILD};
use super::Sim;
use crate::units::{Ns, TaskId};

/// EEVDF's base slice (`sysctl_sched_base_slice`: 0.75 ms, scaled by 1 + ilog2 of the CPUs,
/// at most 8, under the default `SCHED_TUNABLESCALING_LOG`).
pub(super) fn base_slice(cpus: u32) -> Ns {
    750_000 * (1 + u64::from(cpus.clamp(1, 8).ilog2()))
}

/// CPU time of an O_DSYNC append's I/O completion (`xfs_end_io`: the unwritten extent's
/// conversion and its transaction), measured on this machine's 6.18 (`kernel run --preset
/// sync-append`: 351.6 ms over 52,357 conversions, docs/kernel.md).
pub(super) const XFS_END_IO_NS: Ns = 6_700;

/// `push_time_ns` bucket of a push worker waiting runnable for a CPU.
pub const RUNNABLE: usize = 5;

/// What a push worker does when its CPU work is done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum CpuThen {
    /// Go on with its state (`pusher_run`).
    #[default]
    Run,
    /// Its copy into an iclog is done (`copy_done`).
    CopyDone,
}

impl Sim {
    /// Runs `think` ns of writer `w`'s CPU work: on a free CPU of the pool now, or after the
    /// tasks queued before it.
    pub(super) fn think_on_cpu(&mut self, w: TaskId, think: u64) {
        if !self.cpus.enabled() {
            self.writers[w as usize].set_task_cpu(w);
            return self.wake_at(self.now + think, w);
        }
        if self.writers[w as usize].take_holding() {
            return self.think_on_held_cpu(w, think);
        }
        let last = self.writers[w as usize].task_cpu();
        match self.cpus.select_idle_cpu(last) {
            Some(cpu) => self.run_on(cpu, w, think),
            None => self.cpus.enqueue_wakeup(w, think, last),
        }
    }

    /// A kernel worker woken to run `ns` of CPU work for writer `w` (its I/O completion): on
    /// an idle CPU, the writer's last when idle, else runnable in front of the writers, behind
    /// the kernel workers woken before it (EEVDF places a woken sleeper with its lag).
    pub(super) fn kworker_on_cpu(&mut self, w: TaskId, ns: Ns) {
        self.writers[w as usize].ioend_wakeup(self.now);
        let last = self.writers[w as usize].task_cpu();
        match self.cpus.select_idle_cpu(last) {
            Some(cpu) => self.run_on(cpu, w, ns),
            None => self.kworker_runnable(w, ns, last),
        }
    }

    /// Kernel thread `t` (a push worker, xfsaild, an I/O completion worker) woke and waits
    /// runnable for `ns` on a CPU: in front of the writers, behind the kernel threads woken
    /// before it (with `cpu_model=kernel`, on `cpu`'s queue, placed as any woken sleeper).
    pub(super) fn kworker_runnable(&mut self, t: TaskId, ns: Ns, cpu: u32) {
        let writers = &self.writers;
        let kworker = |t: TaskId| t == TASK_XFSAILD || writers.get(t as usize).is_some_and(|wr| wr.ioend_ran());
        self.cpus.enqueue_woken(t, ns, cpu, |t| pusher_of(t).is_some() || kworker(t));
    }

    /// The CPU held by the task whose event runs now (the waker of whom it wakes), if any.
    pub(super) fn current_cpu(&self) -> Option<u32> {
        let t = self.current?;
        match pusher_of(t) {
            Some(k) => self.pushers[k as usize].cpu(),
            None if t == TASK_XFSAILD => self.aild.cpu(),
            None => self.writers.get(t as usize).and_then(|wr| wr.on_cpu()),
        }
    }

    /// `cpu_model=kernel` on a pool: the kernel's threads take CPU time beside the writers.
    pub(super) fn kernel_threads_on_cpus(&self) -> bool {
        self.scenario.cpu_model == crate::scenario::CpuModel::Kernel && self.cpus.enabled()
    }

    /// Writer `w`'s think ended. By default it gives its CPU back now; with
    /// `cpu_model=kernel` it holds it through its transaction's steps (which take no CPU time
    /// in the model) until it thinks again or sleeps (`writer_cpu_settle`).
    pub(super) fn think_done(&mut self, w: TaskId) {
        let kernel = self.kernel_threads_on_cpus();
        if let Some(cpu) = self.writers[w as usize].put_prev_task(kernel) {
            self.cpu_release(cpu);
        }
    }

    /// Writer `w` thinks again on the CPU it holds: within its slice it runs on (EEVDF does
    /// not preempt a running task within its slice, `RUN_TO_PARITY`); with its slice used up
    /// and a task waiting on its CPU's queue, it queues again (at the back; with
    /// `cpu_model=kernel`'s fair queue, by the CPU time it has had) and the CPU goes to the
    /// first task.
    fn think_on_held_cpu(&mut self, w: TaskId, think: u64) {
        let slice = base_slice(self.cpus.ncpus());
        let wr = &mut self.writers[w as usize];
        if wr.slice_used_up() && self.cpus.has_runnable(wr.task_cpu()) {
            let cpu = wr.yield_cpu();
            self.cpus.enqueue_task(w, think, cpu);
            return self.cpu_release(cpu);
        }
        wr.run_in_slice(slice, think);
        self.cpus.charge(w, think);
        self.wake_at(self.now + think, w);
    }

    /// After writer `w`'s steps that take no CPU time: if it did not think again on the CPU
    /// it held, it sleeps (or has stopped) and gives the CPU back. A writer about to start its
    /// next transaction at this instant (`Thinking`) keeps it.
    pub(super) fn writer_cpu_settle(&mut self, w: TaskId) {
        if let Some(cpu) = self.writers[w as usize].settle_cpu() {
            self.cpu_release(cpu);
        }
    }

    fn run_on(&mut self, cpu: u32, w: TaskId, think: u64) {
        let slice = base_slice(self.cpus.ncpus());
        let wr = &mut self.writers[w as usize];
        if wr.ioend_ran() {
            self.counters.ioend_time_ns[0] += think;
            self.counters.ioend_time_ns[1] += self.now - wr.ioend_woke();
        }
        wr.set_next_task(cpu, slice, think);
        self.cpus.charge(w, think);
        self.wake_at(self.now + think, w);
    }

    /// A task left `cpu`: it goes to the first task waiting for one.
    pub(super) fn cpu_release(&mut self, cpu: u32) {
        if let Some((t, ns)) = self.cpus.pick_next_task(cpu) {
            match pusher_of(t) {
                Some(k) => self.push_granted(k, cpu, ns),
                None if t == TASK_XFSAILD => self.xfsaild_granted(cpu),
                None => self.run_on(cpu, t, ns),
            }
        }
    }

    /// Push worker `k` runs `ns` of CPU work (building, copying into an iclog), then `then`:
    /// on the CPU it holds, else on a free one, else after the tasks queued before it.
    pub(super) fn push_cpu(&mut self, k: u32, ns: Ns, then: CpuThen) {
        if !self.cpus.enabled() {
            return self.push_cpu_done_at(k, self.now + ns, then);
        }
        let p = &mut self.pushers[k as usize];
        if p.cpu_queued() {
            return;
        }
        p.set_cpu_then(then);
        match p.cpu() {
            // Its slice is used up and a task waits: preempted, queued again (at the back, or
            // by its CPU time in a fair queue).
            Some(cpu) if p.slice_used_up() && self.cpus.has_runnable(cpu) => {
                p.put_prev_task();
                self.queue_for_cpu(k, ns, false, cpu);
                self.cpu_release(cpu);
            }
            Some(_) => {
                p.run_in_slice(base_slice(self.cpus.ncpus()), ns);
                self.cpus.charge(pusher_task(k), ns);
                self.push_cpu_done_at(k, self.now + ns, then);
            }
            None => match self.cpus.take_idle_cpu() {
                Some(cpu) => self.push_granted(k, cpu, ns),
                None => self.queue_for_cpu(k, ns, true, self.pushers[k as usize].wake_cpu()),
            },
        }
    }

    /// Whether push worker `k` must first get a CPU before it goes on from a sleep.
    pub(super) fn push_needs_cpu(&self, k: u32) -> bool {
        self.cpus.enabled() && self.pushers[k as usize].cpu().is_none()
    }

    /// Push worker `k` waits runnable on `cpu`'s queue (the pool's one by default): at the
    /// front when it just woke, else at the back.
    fn queue_for_cpu(&mut self, k: u32, ns: Ns, woken: bool, cpu: u32) {
        // The time it waits runnable is its own bucket, not its state's.
        self.account_push_time(k as usize);
        self.pushers[k as usize].enqueue();
        if woken {
            // Behind the kernel threads woken before it.
            self.kworker_runnable(pusher_task(k), ns, cpu);
        } else {
            self.cpus.enqueue_task(pusher_task(k), ns, cpu);
        }
    }

    fn push_granted(&mut self, k: u32, cpu: u32, ns: Ns) {
        let slice = base_slice(self.cpus.ncpus());
        let (waited, then) = self.pushers[k as usize].set_next_task(cpu, slice, ns, self.now);
        if let Some(waited) = waited {
            self.counters.push_time_ns[RUNNABLE] += waited;
        }
        self.cpus.charge(pusher_task(k), ns);
        self.push_cpu_done_at(k, self.now + ns, then);
    }

    fn push_cpu_done_at(&mut self, k: u32, at: Ns, then: CpuThen) {
        match then {
            CpuThen::Run => self.wake_at(at, pusher_task(k)),
            CpuThen::CopyDone => self.copy_until(at, pusher_task(k)),
        }
    }

    /// Push worker `k` sleeps (or has finished): its CPU goes to the next task.
    pub(super) fn push_cpu_release(&mut self, k: u32) {
        if let Some(cpu) = self.pushers[k as usize].put_prev_task() {
            self.cpu_release(cpu);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::base_slice;

    #[test]
    fn the_base_slice_grows_with_the_log_of_the_cpus_up_to_eight() {
        assert_eq!(base_slice(1), 750_000);
        assert_eq!(base_slice(2), 1_500_000);
        assert_eq!(base_slice(4), 2_250_000);
        assert_eq!(base_slice(8), 3_000_000);
        assert_eq!(base_slice(44), 3_000_000);
    }
}
