//! The scheduler's model and its constants: who runs on the CPU pool (`cpus`, `CpuPool`)
//! that the writers and the CIL push workers share, when, and for how long. The steps live
//! with their tasks: a writer's in `writer.rs` (`think_on_cpu`, `run_on`), a push worker's in
//! `push.rs` (`push_cpu`), the CPU given to the next task in `mod.rs` (`cpu_release`).
//!
//! Model: by default one run queue. A writer's think is shorter than a slice and runs to its
//! end, its wakeups queue in order. A push worker woken from a sleep goes to the front (EEVDF
//! places a sleeper with its lag, so it is picked next; the kernel's pushes start 18 us after
//! being queued at the median), keeps its CPU across its CPU work until it sleeps, and after
//! EEVDF's base slice goes to the back when someone waits. With `cpu_model=kernel` an O_DSYNC
//! append's I/O completion worker and xfsaild take CPU time too; a writer keeps its CPU across
//! its operations as a push worker does (no preemption within its slice, but by a woken task
//! between its operations, below); each CPU has its own
//! fair run queue (`CpuPool`): a push worker woken by `queue_work` from a task on a CPU queues
//! on that CPU (`current_cpu`), every other woken task on its own last CPU, a kernel worker
//! ahead of the writers queued there; a synced append stamps its file, then copies its data
//! (its think), and runs again after its I/O completion before its fsync forces the log
//! (`writer.rs`); a task woken onto
//! a queue preempts the writer running there once that writer has had more than the queue's
//! average CPU time (EEVDF's eligibility), at the writer's next preemption point: between its
//! operations (`PREEMPT_NONE`), `check_preempt_wakeup` in writer.rs; and a task woken onto an
//! idle CPU starts once that CPU has woken (`IDLE_WAKE_*`); an iclog's completion runs its
//! callbacks on a CPU before the iclog is clean (`logio.rs`, `xlog_ioend_work`).

use super::tasks::{TASK_DIO, TASK_IOEND};
use crate::cpupool::CpuPool;
use crate::device::DeviceProfile;
use crate::scenario::{CpuModel, Scenario};
use crate::units::Ns;

/// The scenario's CPU pool. With `cpu_model=kernel`, a run queue a CPU and a sleeper credited
/// half a slice; on a device whose completions run on the pool (`vm-disk`), its completion
/// worker is bound to the last CPU (this machine's host disk interrupts CPU 1 of 2:
/// `/proc/interrupts`, `virtio1-req.0`), and so is the log's I/O completion work, which its
/// completions queue on the per-CPU `xfs-log` workqueue (7,450 of 7,452 runs on CPU 1 in a
/// `cil-throttle-rhythm` trace, docs/kernel.md).
pub(super) fn cpu_pool(s: &Scenario, prof: &DeviceProfile) -> CpuPool {
    match s.cpu_model {
        CpuModel::Kernel => {
            let mut pool = CpuPool::new(s.cpus).with_cpu_run_queues(base_slice(s.cpus) / 2);
            if prof.measured().is_some_and(|m| m.completes_on_cpu) {
                pool.bind(TASK_DIO, s.cpus.saturating_sub(1));
                pool.bind(TASK_IOEND, s.cpus.saturating_sub(1));
            }
            pool
        }
        CpuModel::Writers => CpuPool::new(s.cpus),
    }
}

/// EEVDF's base slice (`sysctl_sched_base_slice`: 0.75 ms, scaled by 1 + ilog2 of the CPUs,
/// at most 8, under the default `SCHED_TUNABLESCALING_LOG`).
pub(super) fn base_slice(cpus: u32) -> Ns {
    750_000 * (1 + u64::from(cpus.clamp(1, 8).ilog2()))
}

/// CPU time of an O_DSYNC append's I/O completion (`xfs_end_io`: the unwritten extent's
/// conversion and its transaction), measured on this machine's 6.18 (`kernel run --preset
/// sync-append`: 351.6 ms over 52,357 conversions, docs/kernel.md).
pub(super) const XFS_END_IO_NS: Ns = 6_700;

/// CPU time of the log's I/O completion work (`xlog_ioend_work`) for one iclog (its state
/// change and wakeups), and per log item of the checkpoints whose commit records it holds (their
/// callbacks: `xfs_trans_committed_bulk` puts each in the AIL and unpins it, then the context is
/// freed). Measured on this machine's 6.18 (1 s of `workqueue_execute_*`, `sched_switch` and
/// `xfs_ail_insert`/`_move` during each of `kernel run --preset cil-throttle-rhythm`,
/// `fsmark-create` and `sync-append` with `device=vm-disk cpus=2`, docs/kernel.md): 121.0 ms over
/// the 192 runs that put 168,251 items in the AIL (0.72 us an item; runs of up to 33,518 items
/// ran 24 ms without leaving their CPU); an iclog without callbacks 2-3 us at the median on the
/// create runs (20 us on `sync-append`, whose completions wake the writers waiting on their
/// iclogs: `XLOG_IOEND_NS_PER_WAKEUP`, below).
/// Model: one cost per item, where small checkpoints cost more an item (about 1.3 us at 20-60).
pub(super) const XLOG_IOEND_NS: Ns = 3_000;
pub(super) const XLOG_IOEND_NS_PER_ITEM: Ns = 720;
/// Its CPU time per task it wakes (an iclog's force and write waiters, those waiting for an
/// iclog): 1.68 us, fitted with the per-item cost over the 193 runs of the `sync-append` trace
/// above, whose completions woke 12.9 tasks at the mean (`sched_waking` from the worker).
pub(super) const XLOG_IOEND_NS_PER_WAKEUP: Ns = 1_680;

/// CPU time of one loop-device completion (`iomap_dio_complete_work` completing the loop's
/// request and its bio), and of a metadata buffer's write completion (`xfs_buf_ioend_work` on
/// the per-CPU `xfs-buf` workqueue, queued where the bio completed: its items leave the AIL).
/// Measured on this machine's 6.18 as CPU time (scheduler events), pooled over two traces:
/// 0.54 s of `kernel run --preset fsmark-create --set cpus=2` (624 loop completions in 1.3 ms,
/// 6,157 buffers in 66.3 ms) and `kernel compare --preset cil-throttle-rhythm --set
/// device=vm-disk --set cpu_model=kernel --set agi_lock=on --duration 10s` (6,964 in 11.9 ms,
/// 27,079 in 195.0 ms): 1.74 us and 7.9 us a run (docs/kernel.md). The work the bio's
/// completion queues (an iclog's `xlog_ioend_work`, an append's `xfs_end_io`) runs on its own.
pub(super) const DIO_COMPLETE_NS: Ns = 1_740;
pub(super) const XFS_BUF_IOEND_NS: Ns = 7_900;

/// How long after its wakeup a task woken onto an idle CPU starts on it, with `cpu_model=kernel`
/// (this machine is a VM: an idle CPU halts, and a wakeup from another CPU must reach it).
/// Medians measured on this machine's 6.18 from `sched_waking` to `sched_switch` where the
/// target CPU ran its idle task (0.5 s of `kernel run --preset fsync-heavy`, docs/kernel.md):
/// a writer (woken by a kernel worker on another CPU: 8,759 wakeups), 47 us; a kernel worker
/// woken from another CPU, 30 us (1,025); one woken on the idle CPU itself, by the interrupt that
/// woke that CPU, 10 us (3,524).
/// Model: one value each, where the kernel's spread (p90 187, 51 and 19 us) grows with how
/// long the CPU was idle; xfsaild, woken by its timer (8 us), starts at once.
pub(super) const IDLE_WAKE_WRITER_NS: Ns = 47_000;
pub(super) const IDLE_WAKE_REMOTE_NS: Ns = 30_000;
pub(super) const IDLE_WAKE_LOCAL_NS: Ns = 10_000;

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
