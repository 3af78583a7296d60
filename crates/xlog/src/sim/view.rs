//! Read-only views of the simulation for the UI and the CLI, built on demand.

use super::IoSpan;
use super::{PushState, Sim, WriterState};
use crate::cil::{xlog_cil_blocking_space_limit, xlog_cil_space_limit};
use crate::device::DeviceStats;
use crate::grant::{xlog_grant_push_threshold_bb, xlog_lsn_sub, GrantHead};
use crate::iclog::IclogState;
use crate::log::Iclog;
use crate::scenario::{AilPush, Xfsaild};
use crate::units::{Lsn, Ns, TaskId};
use serde::Serialize;

/// Read-only state for views (UI, CLI), cheap to build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IclogView {
    pub index: u32,
    pub state: IclogState,
    pub refcnt: u32,
    pub offset: u32,
    pub capacity: u32,
    pub lsn: Lsn,
    /// `XLOG_ICL_NEED_FLUSH` | `XLOG_ICL_NEED_FUA` (`icl_flags_str` names them).
    pub flags: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct View {
    pub now_ns: Ns,
    pub iclogs: Vec<IclogView>,
    pub head_iclog: u32,
    pub curr_lsn: Lsn,
    pub tail_lsn: Lsn,
    pub last_sync_lsn: Lsn,
    pub log_bb: u32,
    pub reserve_free_bytes: u32,
    pub reserve_waiters: u32,
    pub write_waiters: u32,
    pub ail_items: u32,
    pub cil_sequence: u64,
    pub cil_space_used: i64,
    pub cil_blocking_limit: u32,
    pub cil_throttle_depth: u32,
    pub checkpoints_committing: u32,
    pub writer_states: Vec<WriterState>,
    pub pusher_states: Vec<PushState>,
    /// The CPU pool (`cpus`): who runs on each CPU and who waits for one; None without a pool.
    pub cpus: Option<CpusView>,
    pub transactions: u64,
    pub events: u64,
    pub finished: bool,
    pub hung: bool,
}

fn iclog_view(sim: &Sim, ic: &Iclog) -> IclogView {
    IclogView {
        index: ic.index(),
        state: ic.state(),
        refcnt: ic.refcnt(),
        offset: ic.offset(),
        capacity: sim.geo.ic_capacity,
        lsn: ic.lsn(),
        flags: ic.flags(),
    }
}

pub(super) fn view(sim: &Sim) -> View {
    View {
        now_ns: sim.now,
        iclogs: sim.log.iclogs().iter().map(|ic| iclog_view(sim, ic)).collect(),
        head_iclog: sim.log.l_iclog() as u32,
        curr_lsn: sim.log.curr_lsn(),
        tail_lsn: sim.log.tail_lsn(),
        last_sync_lsn: sim.log.last_sync_lsn(),
        log_bb: sim.geo.log_bb,
        reserve_free_bytes: sim.log.reserve_space_left(),
        reserve_waiters: sim.log.reserve_waiters().len() as u32,
        write_waiters: sim.log.write_waiters().len() as u32,
        ail_items: sim.ail.len() as u32,
        cil_sequence: sim.cil.ctx().sequence(),
        cil_space_used: sim.cil.ctx().space_used(),
        cil_blocking_limit: xlog_cil_blocking_space_limit(&sim.geo),
        cil_throttle_depth: sim.cil.push_waiters().len() as u32,
        checkpoints_committing: sim.cil.committing().len() as u32,
        writer_states: sim.writers.iter().map(|w| w.state()).collect(),
        pusher_states: sim.pushers.iter().map(|p| p.state()).collect(),
        cpus: cpus_view(sim),
        transactions: sim.counters.transactions,
        events: sim.counters.events,
        finished: sim.finished(),
        hung: sim.hung,
    }
}

/// A task on the CPU pool: a writer, or one of the kernel's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CpuTask {
    Writer(TaskId),
    /// Writer `w`'s O_DSYNC append's I/O completion worker (`xfs_end_io`, `cpu_model=kernel`).
    IoEnd(TaskId),
    PushWorker(u32),
    Xfsaild,
    /// The log's I/O completion work (`xlog_ioend_work`: iclog completions, checkpoints'
    /// callbacks; `cpu_model=kernel`).
    LogIoEnd,
    /// A loop device's completions (`iomap_dio_complete_work`, bound to one CPU; `cpu_model=kernel`
    /// on `vm-disk`).
    LoopIoEnd,
}

impl std::fmt::Display for CpuTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuTask::Writer(w) => write!(f, "writer {w}"),
            CpuTask::IoEnd(w) => write!(f, "writer {w}'s I/O completion"),
            CpuTask::PushWorker(k) => write!(f, "push worker {k}"),
            CpuTask::Xfsaild => write!(f, "xfsaild"),
            CpuTask::LogIoEnd => write!(f, "the log's I/O completion"),
            CpuTask::LoopIoEnd => write!(f, "the loop device's I/O completion"),
        }
    }
}

/// The CPU pool as the tasks panel shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CpusView {
    /// Per CPU, the task on it (None: idle).
    pub running: Vec<Option<CpuTask>>,
    /// The first `VIEW_LIST_MAX` tasks waiting runnable, in the order they get a CPU, and how
    /// many wait in all.
    pub runnable: Vec<CpuTask>,
    pub runnable_total: usize,
    /// With a run queue a CPU (`cpu_model=kernel`): how many wait on each CPU's queue (the
    /// runnable list above goes queue by queue); empty with one queue for the pool.
    pub queued: Vec<usize>,
    /// CPUs the pool counts idle: every CPU is either running a task above or idle.
    pub idle: usize,
}

fn cpu_task(sim: &Sim, t: TaskId) -> CpuTask {
    match super::tasks::pusher_of(t) {
        Some(k) => CpuTask::PushWorker(k),
        None if t == super::tasks::TASK_XFSAILD => CpuTask::Xfsaild,
        None if t == super::tasks::TASK_IOEND => CpuTask::LogIoEnd,
        None if t == super::tasks::TASK_DIO => CpuTask::LoopIoEnd,
        None if sim.writers.get(t as usize).is_some_and(|w| w.ioend_ran()) => CpuTask::IoEnd(t),
        None => CpuTask::Writer(t),
    }
}

/// Who runs on each CPU of the pool, and who waits for one; None without a pool.
pub(super) fn cpus_view(sim: &Sim) -> Option<CpusView> {
    if !sim.cpus.enabled() {
        return None;
    }
    let mut running = vec![None; sim.cpus.ncpus() as usize];
    let mut put = |cpu: u32, t: CpuTask| {
        if let Some(slot) = running.get_mut(cpu as usize) {
            debug_assert!(slot.is_none(), "CPU {cpu} held by {slot:?} and {t:?}");
            *slot = Some(t);
        }
    };
    for (w, cpu) in sim.writers.iter().enumerate().filter_map(|(w, wr)| Some((w, wr.on_cpu()?))) {
        put(cpu, cpu_task(sim, w as TaskId));
    }
    for (k, p) in sim.pushers.iter().enumerate() {
        if let Some(cpu) = p.cpu() {
            put(cpu, CpuTask::PushWorker(k as u32));
        }
    }
    if let Some(cpu) = sim.aild.cpu() {
        put(cpu, CpuTask::Xfsaild);
    }
    if let Some(cpu) = sim.ioend.on_cpu().cpu() {
        put(cpu, CpuTask::LogIoEnd);
    }
    if let Some(cpu) = sim.dio.on_cpu().cpu() {
        put(cpu, CpuTask::LoopIoEnd);
    }
    let runnable_total = sim.cpus.runnable().count();
    let runnable = sim.cpus.runnable().take(VIEW_LIST_MAX).map(|t| cpu_task(sim, t)).collect();
    Some(CpusView { running, runnable, runnable_total, queued: sim.cpus.queue_lengths(), idle: sim.cpus.idle_cpus() })
}

/// Who `task`, runnable, waits for, in words: the tasks on the CPUs ("writer 3 and
/// xfsaild"), or with a run queue a CPU the one on its queue's CPU ("xfsaild (on CPU 1,
/// whose queue it waits on: 2 tasks ahead)").
pub(super) fn cpu_holders_for(sim: &Sim, task: TaskId) -> String {
    let (Some(cpu), Some(v)) = (sim.cpus.queued_on(task), cpus_view(sim)) else { return cpu_holders(sim) };
    let holder = v.running.get(cpu as usize).cloned().flatten().map_or("no task".into(), |t| t.to_string());
    let ahead = sim.cpus.runnable_ahead(task).unwrap_or(0);
    let tasks = if ahead == 1 { "task" } else { "tasks" };
    format!("{holder} (on CPU {cpu}, whose queue it waits on: {ahead} {tasks} ahead)")
}

/// The tasks on the CPUs, in words ("writer 3 and xfsaild").
pub(super) fn cpu_holders(sim: &Sim) -> String {
    let Some(v) = cpus_view(sim) else { return String::new() };
    let names: Vec<String> = v.running.iter().flatten().map(|t| t.to_string()).collect();
    match names.as_slice() {
        [] => "no task".into(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

// ---- one view per subsystem, for the lab's panels --------------------------------------

/// How many entries a list in a subsystem view keeps (the oldest AIL items, the newest
/// checkpoints, in-flight and cached requests): enough for a panel, bounded for a frame.
pub const VIEW_LIST_MAX: usize = 64;

/// One iclog as the ring panel shows it: the summary, plus what it holds and who waits on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IclogPanel {
    #[serde(flatten)]
    pub iclog: IclogView,
    /// Checkpoint sequences whose commit records it holds (`ic_callbacks`).
    pub checkpoints: Vec<u64>,
    /// Tasks on `ic_force_wait` and `ic_write_wait`.
    pub force_waiters: Vec<TaskId>,
    pub write_waiters: Vec<TaskId>,
}

/// The in-core log buffers (`l_iclog` ring).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IclogsView {
    pub iclogs: Vec<IclogPanel>,
    /// `l_iclog`: the ring head writers copy into.
    pub head: u32,
    /// Tasks on `l_flush_wait`: the ring head is not ACTIVE (`noiclogs`).
    pub noiclog_waiters: Vec<TaskId>,
}

/// A grant head (`l_reserve_head` / `l_write_head`) and its FIFO of sleepers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GrantHeadPanel {
    pub cycle: u32,
    pub bytes: u32,
    pub free_bytes: u32,
    /// (task, bytes it needs), first in line first.
    pub waiters: Vec<(TaskId, u32)>,
}

/// A checkpoint laid out on the log by LSN.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckpointPanel {
    pub sequence: u64,
    pub start_lsn: Lsn,
    pub commit_lsn: Lsn,
    pub completed: bool,
}

/// The on-disk log as a ring: head, tail, grant heads, thresholds and checkpoints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LogSpaceView {
    pub log_bb: u32,
    pub log_bytes: u32,
    /// `l_curr_cycle:l_curr_block`: where the next record goes.
    pub head_lsn: Lsn,
    /// `l_tail_lsn`, `l_last_sync_lsn`.
    pub tail_lsn: Lsn,
    pub last_sync_lsn: Lsn,
    pub reserve: GrantHeadPanel,
    pub write: GrantHeadPanel,
    /// `xlog_grant_push_threshold`: free blocks below which reservations push the AIL.
    pub tail_push_threshold_bb: u32,
    /// xfsaild's current push target.
    pub ail_target: Lsn,
    /// The newest checkpoints, oldest first, including those still being written (commit
    /// LSN zero).
    pub checkpoints: Vec<CheckpointPanel>,
    /// Writers inside a transaction (reservation granted, working or reading before the
    /// commit): how many, and the bytes their tickets hold on the grant heads.
    pub in_transactions: (u32, u64),
}

/// A CIL context being pushed (`xc_committing`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CommittingPanel {
    pub sequence: u64,
    pub space_used: i64,
    pub items: u32,
    /// Zero until the push has written the record.
    pub start_lsn: Lsn,
    pub commit_lsn: Lsn,
}

/// The Committed Item List: the open context, its limits, the throttle and the pushes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CilView {
    pub sequence: u64,
    pub space_used: i64,
    /// What the push check reads (`ctx->space_used`): with per-CPU counting (6.0+), the
    /// bytes the CPUs have folded in so far.
    pub space_counted: i64,
    /// Per-CPU counting: each CPU folds its bytes in past this share of the push limit
    /// (0: counted globally, as before 6.0), and whether the CPUs still count on their own
    /// (until the count reaches the push limit).
    pub pcp_fold: u32,
    pub pcp_counting: bool,
    pub items: u32,
    /// `XLOG_CIL_SPACE_LIMIT` (background push) and `XLOG_CIL_BLOCKING_SPACE_LIMIT` (throttle).
    pub space_limit: u32,
    pub blocking_limit: u32,
    /// Tasks on `xc_push_wait`: the throttle queue.
    pub throttled: Vec<TaskId>,
    pub push_seq: u64,
    pub committing: Vec<CommittingPanel>,
    pub pushers: Vec<PushState>,
    /// How long each push worker has been in its current run of the push work (0: idle).
    pub pusher_running_ns: Vec<Ns>,
    /// A push queued (`queue_work`) that no worker has taken yet: how long it has waited.
    pub push_queued_ns: Option<Ns>,
    /// The longest dispatch delay and push run so far (`cil_push_dispatch_ms_max`, `_run_`).
    pub push_dispatch_max_ns: Ns,
    pub push_run_max_ns: Ns,
    /// The push workers' time so far, runs under way included: on a CPU, waiting for a free
    /// iclog, for an earlier iclog, behind earlier checkpoints' records, for v5.14's flush,
    /// runnable waiting for a CPU (`cpus`).
    pub push_time_ns: [Ns; 6],
    /// Each push worker waits runnable for a CPU of the pool (`cpus`).
    pub pushers_runnable: Vec<bool>,
}

/// A block device: its volatile cache against stable media, and what is in flight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DevicePanel {
    /// "log" (or the only device, internal log) and "data" for an external log's data device.
    pub role: &'static str,
    pub profile: &'static str,
    pub volatile_cache: bool,
    pub cached_writes: u64,
    pub cached_bytes: u64,
    /// A disk's background destaging (none on flash): cached writes waiting for its next
    /// sweep, their bytes, and how long the media is still busy with the current one.
    pub destage: Option<(u64, u64, Ns)>,
    /// Requests in flight, with what each was issued for.
    pub inflight: Vec<IoSpan>,
    pub stats: DeviceStats,
    /// A device with host stalls (`vm-disk`): the time a stall under way still holds every
    /// request in flight, and whether stalls come at the writeback rate now.
    pub host_stall: Option<(Option<Ns>, bool)>,
    /// Flash with erases modelled: blocks erased so far, dies erasing now, the longest time
    /// one still needs, and the profile's block and die count.
    pub flash_erase: Option<FlashErase>,
    /// A disk with NCQ: per disk, how long its actuator stays busy with the reads and
    /// write-through writes already queued (writes into the cache do not wait for it).
    pub actuators: Option<Vec<Ns>>,
    /// A SATA drive: how long the cache flush holding its queue still needs (None: no flush
    /// holds it). libata sends no command while a FLUSH CACHE runs.
    pub flush_hold: Option<Option<Ns>>,
    /// Flash behind one hardware queue (SATA, a loop device): the link its writes share.
    pub link: Option<LinkShare>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkShare {
    /// Writes whose data is still crossing the link.
    pub moving: u64,
    /// How long until the last of them is done with the link.
    pub backlog_ns: Ns,
    pub bytes_per_sec: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FlashErase {
    pub erased: u64,
    pub erasing: u32,
    pub left_ns: Ns,
    pub block_bytes: u64,
    pub erase_ns: Ns,
    pub dies: u32,
}

/// The Active Item List: committed items by LSN, the tail, xfsaild.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AilView {
    pub items: u32,
    pub tail_lsn: Option<Lsn>,
    pub head_lsn: Option<Lsn>,
    pub target: Lsn,
    pub xfsaild_idle: bool,
    /// xfsaild's pass, and what it has written back so far: items, and the writes that
    /// carried them.
    pub xfsaild: Xfsaild,
    /// What sets the push target, and the AIL's span (newest less oldest LSN) in thousandths
    /// of the log: 6.11+ xfsaild pushes on its own past 750.
    pub ail_push: AilPush,
    pub span_permille: u32,
    /// A push-all request (a reservation went to sleep) the next pass will take.
    pub push_all: bool,
    /// CPU time xfsaild still spends on the items its last pass took on (a wakeup in it is
    /// lost), when its next pass starts (`None`: asleep until woken), and whether a wakeup
    /// since that pass was lost.
    pub busy_ns: Ns,
    pub next_pass_in_ns: Option<Ns>,
    pub wake_lost: bool,
    pub written_items: u64,
    pub writes: u64,
    /// The oldest items: (LSN, item, pinned by an uncompleted checkpoint, being written back).
    pub oldest: Vec<(Lsn, u32, bool, bool)>,
}

/// Every task and what it waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TasksView {
    pub writers: Vec<WriterState>,
    pub pushers: Vec<PushState>,
    pub xfsaild_idle: bool,
}

pub(super) fn iclogs_view(sim: &Sim) -> IclogsView {
    let seq_of = |c: u32| sim.history.get(c).map_or(0, |k| k.sequence);
    IclogsView {
        iclogs: sim
            .log
            .iclogs()
            .iter()
            .map(|ic| IclogPanel {
                iclog: iclog_view(sim, ic),
                checkpoints: ic.callbacks().iter().map(|&c| seq_of(c)).collect(),
                force_waiters: ic.force_wait().to_vec(),
                write_waiters: ic.write_wait().to_vec(),
            })
            .collect(),
        head: sim.log.l_iclog() as u32,
        noiclog_waiters: sim.log.flush_waiters().to_vec(),
    }
}

pub(super) fn log_space_view(sim: &Sim) -> LogSpaceView {
    let head = |h: GrantHead, free: u32, q: &std::collections::VecDeque<crate::log::GrantWaiter>| GrantHeadPanel {
        cycle: h.cycle,
        bytes: h.bytes,
        free_bytes: free,
        waiters: q.iter().map(|w| (w.task, w.need)).collect(),
    };
    let l = &sim.log;
    let cks = &sim.history.checkpoints;
    let in_tx = sim.writers.iter().filter(|w| matches!(w.state(), WriterState::TxWork | WriterState::MetaRead { .. }));
    let in_transactions =
        in_tx.fold((0, 0), |(n, bytes), w| (n + 1, bytes + w.ticket().map_or(0, |t| t.reserve_need() as u64)));
    LogSpaceView {
        in_transactions,
        log_bb: sim.geo.log_bb,
        log_bytes: sim.geo.log_bytes,
        head_lsn: l.curr_lsn(),
        tail_lsn: l.tail_lsn(),
        last_sync_lsn: l.last_sync_lsn(),
        reserve: head(l.reserve_head(), l.reserve_space_left(), l.reserve_waiters()),
        write: head(l.write_head(), l.write_space_left(), l.write_waiters()),
        tail_push_threshold_bb: xlog_grant_push_threshold_bb(&sim.geo, 0),
        ail_target: sim.ail.target(),
        checkpoints: {
            // Written checkpoints, then those whose records are being written (no commit
            // record yet): the newest VIEW_LIST_MAX.
            let writing =
                sim.cil.committing().iter().filter(|x| x.start_lsn().0 != 0 && x.commit_lsn().0 == 0).map(|x| {
                    CheckpointPanel {
                        sequence: x.sequence(),
                        start_lsn: x.start_lsn(),
                        commit_lsn: Lsn::ZERO,
                        completed: false,
                    }
                });
            let mut all: Vec<CheckpointPanel> = cks[cks.len().saturating_sub(VIEW_LIST_MAX)..]
                .iter()
                .map(|c| CheckpointPanel {
                    sequence: c.sequence,
                    start_lsn: c.start_lsn,
                    commit_lsn: c.commit_lsn,
                    completed: c.completed,
                })
                .chain(writing)
                .collect();
            all.sort_by_key(|c| c.sequence);
            all.drain(..all.len().saturating_sub(VIEW_LIST_MAX));
            all
        },
    }
}

pub(super) fn cil_view(sim: &Sim) -> CilView {
    let c = &sim.cil;
    CilView {
        sequence: c.ctx().sequence(),
        space_used: c.ctx().space_used(),
        space_counted: c.ctx().space_counted(),
        pcp_fold: if c.pcp_cpus() == 0 { 0 } else { xlog_cil_space_limit(&sim.geo) / c.pcp_cpus() as u32 },
        pcp_counting: c.pcp_counting(),
        items: c.ctx().items().len() as u32,
        space_limit: xlog_cil_space_limit(&sim.geo),
        blocking_limit: xlog_cil_blocking_space_limit(&sim.geo),
        throttled: c.push_waiters().to_vec(),
        push_seq: c.push_seq(),
        committing: c
            .committing()
            .iter()
            .map(|x| CommittingPanel {
                sequence: x.sequence(),
                space_used: x.space_used(),
                items: x.items().len() as u32,
                start_lsn: x.start_lsn(),
                commit_lsn: x.commit_lsn(),
            })
            .collect(),
        pushers: sim.pushers.iter().map(|p| p.state()).collect(),
        pusher_running_ns: sim
            .pushers
            .iter()
            .map(|p| if p.state() == PushState::Idle { 0 } else { sim.now - p.run_start_ns() })
            .collect(),
        push_queued_ns: sim.cil_wq.pending_since().map(|at| sim.now - at),
        push_dispatch_max_ns: sim.counters.push_dispatch_ns.max(),
        push_run_max_ns: sim.counters.push_run_ns.max(),
        push_time_ns: {
            let mut t = sim.counters.push_time_ns;
            for p in &sim.pushers {
                let bucket = if p.cpu_queued() { Some(super::sched::RUNNABLE) } else { p.state().time_bucket() };
                if let Some(b) = bucket {
                    t[b] += sim.now - p.state_since();
                }
            }
            t
        },
        pushers_runnable: sim.pushers.iter().map(|p| p.cpu_queued()).collect(),
    }
}

pub(super) fn devices_view(sim: &Sim) -> Vec<DevicePanel> {
    sim.devs
        .iter()
        .enumerate()
        .map(|(d, dev)| DevicePanel {
            role: if d == 0 { "log" } else { "data" },
            profile: dev.profile().name,
            volatile_cache: dev.profile().volatile_cache,
            cached_writes: dev.cached().len() as u64,
            cached_bytes: dev.cached_bytes(),
            destage: dev.destage_backlog(sim.now),
            inflight: dev.inflight().iter().take(VIEW_LIST_MAX).map(|r| super::timeline::io_span(sim, d, r)).collect(),
            stats: dev.stats().clone(),
            host_stall: dev.stall_state(sim.now),
            flash_erase: dev.erase_state(sim.now).zip(dev.profile().erase()).map(|((erased, erasing, left_ns), e)| {
                FlashErase { erased, erasing, left_ns, block_bytes: e.block_bytes, erase_ns: e.erase_ns, dies: e.dies }
            }),
            actuators: dev.actuator_state(sim.now),
            flush_hold: dev.flush_hold(sim.now),
            link: dev.link_state(sim.now).map(|(moving, backlog_ns, bytes_per_sec)| LinkShare {
                moving,
                backlog_ns,
                bytes_per_sec,
            }),
        })
        .collect()
}

pub(super) fn ail_view(sim: &Sim) -> AilView {
    AilView {
        items: sim.ail.len() as u32,
        tail_lsn: sim.ail.min_lsn(),
        head_lsn: sim.ail.max_lsn(),
        target: sim.ail.target(),
        xfsaild_idle: sim.aild.idle(),
        xfsaild: sim.scenario.xfsaild,
        ail_push: sim.scenario.ail_push,
        span_permille: match (sim.ail.min_lsn(), sim.ail.max_lsn()) {
            (Some(min), Some(max)) => (xlog_lsn_sub(&sim.geo, max, min) * 1000 / sim.geo.log_bytes as u64) as u32,
            _ => 0,
        },
        push_all: sim.aild.push_all(),
        busy_ns: sim.aild.busy_until().saturating_sub(sim.now),
        next_pass_in_ns: (!sim.aild.idle() && sim.aild.next_pass() != Ns::MAX)
            .then(|| sim.aild.next_pass().saturating_sub(sim.now)),
        wake_lost: sim.aild.wake_lost(),
        written_items: sim.counters.metadata_writebacks,
        writes: sim.counters.metadata_writes,
        oldest: sim
            .ail
            .oldest()
            .take(VIEW_LIST_MAX)
            .map(|(lsn, id)| {
                let it = &sim.items[id as usize];
                (lsn, id, it.pinned() > 0, it.flushing().is_some())
            })
            .collect(),
    }
}

pub(super) fn tasks_view(sim: &Sim) -> TasksView {
    TasksView {
        writers: sim.writers.iter().map(|w| w.state()).collect(),
        pushers: sim.pushers.iter().map(|p| p.state()).collect(),
        xfsaild_idle: sim.aild.idle(),
    }
}

/// The realtime summary (rsum) as a picture: levels by runs of bitmap blocks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RtView {
    pub levels: u32,
    pub rbmblocks: u64,
    /// Bitmap blocks per column of `grid`.
    pub blocks_per_column: u64,
    /// `grid[column][level]`: free extents of that size class starting in those blocks.
    pub grid: Vec<Vec<u32>>,
    /// Per column, the lowest level the minimum-level cache allows (`None`: cache off).
    pub cache: Option<Vec<u8>>,
    pub summary_reads: u64,
    pub bitmap_reads: u64,
    pub free_extents: u64,
    pub free_runs: u64,
}

/// The realtime allocator's summary, `cols` columns wide; `None` without a realtime device.
pub(super) fn rt_view(sim: &Sim, cols: usize) -> Option<RtView> {
    let rt = sim.rt.alloc()?;
    let (blocks_per_column, grid, cache) = rt.summary_columns(cols);
    Some(RtView {
        levels: rt.geo().levels(),
        rbmblocks: rt.geo().rbmblocks(),
        blocks_per_column,
        grid,
        cache,
        summary_reads: rt.summary_reads(),
        bitmap_reads: rt.bitmap_reads(),
        free_extents: rt.free_extents(),
        free_runs: rt.free_runs(),
    })
}

#[cfg(test)]
mod tests {
    use crate::presets::find;
    use crate::sim::Sim;

    #[test]
    fn subsystem_views_agree_with_the_summary_view() {
        let mut s = find("cil-throttle-32mb").unwrap();
        s.duration = crate::scenario::Duration(300 * crate::units::NS_PER_MS);
        let mut sim = Sim::new(&s).unwrap();
        sim.run_until(200 * crate::units::NS_PER_MS);
        let v = sim.view();
        let ic = sim.iclogs_view();
        assert_eq!(ic.head, v.head_iclog);
        assert_eq!(ic.iclogs.iter().map(|i| i.iclog.clone()).collect::<Vec<_>>(), v.iclogs);
        let ls = sim.log_space_view();
        assert_eq!((ls.head_lsn, ls.tail_lsn), (v.curr_lsn, v.tail_lsn));
        assert_eq!(ls.reserve.free_bytes, v.reserve_free_bytes);
        assert_eq!(ls.reserve.waiters.len() as u32, v.reserve_waiters);
        assert!(ls.checkpoints.windows(2).all(|w| w[0].sequence < w[1].sequence));
        let cil = sim.cil_view();
        assert_eq!(
            (cil.sequence, cil.space_used, cil.throttled.len() as u32),
            (v.cil_sequence, v.cil_space_used, v.cil_throttle_depth)
        );
        assert_eq!(cil.blocking_limit, 2 * cil.space_limit);
        assert_eq!(sim.ail_view().items, v.ail_items);
        assert!(sim.ail_view().oldest.windows(2).all(|w| w[0].0 <= w[1].0), "oldest first");
        let devs = sim.devices_view();
        assert_eq!(devs.len(), 1);
        assert!(devs[0].stats.writes > 0);
        assert_eq!(sim.tasks_view().writers, v.writer_states);
        // Every iclog that holds commit records names checkpoints not yet completed.
        for seq in ic.iclogs.iter().flat_map(|p| &p.checkpoints) {
            let ck = sim.history().checkpoints.iter().find(|c| c.sequence == *seq).expect("a real checkpoint");
            assert!(!ck.completed);
        }
    }
}
