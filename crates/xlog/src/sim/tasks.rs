//! Task ids: writers are 0..writers; the kernel threads have fixed ids above them.

use crate::units::TaskId;

/// CIL push workers (`xlog_cil_push_work` on the "xfs-cil" workqueue): `TASK_PUSH_BASE + k`.
pub const TASK_PUSH_BASE: TaskId = 80_000;
pub const TASK_XFSAILD: TaskId = 90_000;
pub const TASK_LOG_WORKER: TaskId = 90_001;
/// The log I/O completion worker (`xlog_ioend_work`).
pub const TASK_IOEND: TaskId = 90_002;
/// A loop device's direct-I/O completion worker (`iomap_dio_complete_work`).
pub const TASK_DIO: TaskId = 90_003;

/// The task id of push worker `k`.
pub const fn pusher_task(k: u32) -> TaskId {
    TASK_PUSH_BASE + k
}

/// Push worker index of a task id, if it is one.
pub const fn pusher_of(task: TaskId) -> Option<u32> {
    if task >= TASK_PUSH_BASE && task < TASK_XFSAILD {
        Some(task - TASK_PUSH_BASE)
    } else {
        None
    }
}
