//! The simulator: one event loop that owns the log, the CIL, the devices, the AIL and the
//! tasks, and dispatches events and CPUs to them.
//!
//! Leaf modules (`log`, `grant`, `iclog`, `cil`, `ail`, `device`, `cpupool`) decide what
//! happens. `impl Sim` lives in this file, in the front ends' door (`api`: run, read,
//! command) and in one file per task kind whose steps it runs (`writer`, `push`, `logio`,
//! `aild`). The rest are objects and read-only views: `workload` (what a transaction
//! changes, inode allocation), `sched` (slices), `tracing`, `timeline`, `monitor` (broken
//! rules), `history` (what the crash oracle needs), `view` and `why`. Simplifications are
//! marked `Model:`.

mod aild;
mod api;
mod branch;
mod dir;
mod history;
mod log_item;
mod logio;
mod monitor;
mod push;
mod queue;
mod sched;
mod tags;
pub mod tasks;
mod timeline;
mod tracing;
mod view;
mod why;
mod workload;
mod writer;

use crate::agi::AgiLocks;
use crate::ail::{Ail, Xfsaild};
use crate::cil::{Cil, ItemKind};
use crate::cpupool::CpuPool;
use crate::device::{Device, ReqFlags};
use crate::geometry::Geometry;
use crate::grant::{xlog_calc_unit_res, xlog_calc_unit_res_hdrs, Ticket};
use crate::iclog::Record;
use crate::layout::{self, SHARED_ITEMS};
use crate::log::Xlog;
use crate::metrics::Counters;
use crate::profile::profile_for;
use crate::scenario::{CilSpace, CpuModel, Scenario};
use crate::trace::TraceEvent;
use crate::units::{format_size, Ns, TaskId, BBSIZE};
use crate::workqueue::{CilWorkqueue, DioCompleteWork, IoendWork};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;

pub use api::{Milestone, Watch};
pub use branch::BRANCH_KEYS;
pub use history::{CheckpointRecord, FoldedItem, History, FOLD_BATCH, RECENT_RECORDS};
pub use log_item::Item;
pub use push::PushState;
pub use timeline::{IoPurpose, IoSpan};
pub use view::{
    AilView, CheckpointPanel, CilView, CommittingPanel, CpuTask, CpusView, DevicePanel, FlashErase, GrantHeadPanel,
    IclogPanel, IclogView, IclogsView, LinkShare, LogSpaceView, RtView, TasksView, View, VIEW_LIST_MAX,
};
pub use writer::WriterState;

use aild::LOG_WORKER_PERIOD;
use monitor::Monitor;
use tags::IoTag;
use tasks::{pusher_of, TASK_DIO, TASK_IOEND, TASK_XFSAILD};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Event {
    TaskRun(TaskId),
    CopyDone(TaskId),
    IoDone { dev: u8, id: u64 },
    Aild,
    LogWorker,
}

/// Commands a user (or a test) can give the running simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Command {
    /// `xfs_log_force(mp, 0)`: push the CIL and the head iclog out now, as the log worker does.
    ForceLog,
}

#[derive(Clone, Debug)]
pub struct Sim {
    scenario: Scenario,
    geo: Geometry,
    /// Reservation of one writer's transaction and of a CIL context ticket.
    unit_res: u32,
    /// `tr_fsyncts`: an O_DSYNC append's timestamp update.
    ts_unit_res: u32,
    ctx_unit_res: u32,
    /// Record headers the writers' and timestamp tickets' reservations hold (`t_iclog_hdrs`).
    unit_hdrs: u32,
    ts_unit_hdrs: u32,
    now: Ns,
    /// Ties between events at one instant break by insertion order.
    queue: queue::EventQueue,
    rng: Pcg64Mcg,
    log: Xlog,
    cil: Cil,
    ail: Ail,
    aild: Xfsaild,
    /// The log device first; an external log's data device second.
    devs: Vec<Device>,
    log_start: u64,
    data_dev: usize,
    writers: Vec<writer::Writer>,
    pushers: Vec<push::Pusher>,
    /// The CIL push workqueue: pending work, its numbering, `flush_workqueue` waiters.
    cil_wq: CilWorkqueue,
    /// `cpu_model=kernel`: the log's I/O completion work, and a loop device's, on the pool.
    ioend: IoendWork,
    dio: DioCompleteWork,
    items: Vec<Item>,
    ialloc: workload::InodeAlloc,
    /// The file system's AGs (mkfs's count for `fs_size`, or `agcount`).
    agcount: u32,
    history: History,
    /// Fold old checkpoints in batches of this many (`History::fold_behind`); 0: never.
    fold_batch: usize,
    /// Records held back until a data-device flush completes (external log or split), with
    /// the task that synced them.
    pending_records: Vec<Option<(TaskId, Record, ReqFlags)>>,
    uuid: [u8; 16],
    counters: Counters,
    monitor: Monitor,
    trace: tracing::Tracer,
    stopping: bool,
    hung: bool,
    rt: workload::RtFiles,
    /// The flush timeline's record, when the lab keeps one.
    timeline: timeline::Timeline,
    /// The CPUs (`cpus`) the writers and push workers share, and the task whose event runs.
    cpus: CpuPool,
    current: Option<TaskId>,
    /// `agi_lock=on`: each AG's AGI buffer lock.
    agi: AgiLocks,
}

impl Sim {
    /// Builds a simulation; the scenario is validated first.
    pub fn new(scenario: &Scenario) -> Result<Sim, String> {
        let geo = scenario.validate()?;
        let mut rng = Pcg64Mcg::seed_from_u64(scenario.seed);
        let prof = profile_for(scenario);
        // Each device draws from its own stream, so the simulator's draws stay as they were.
        let dev_seed = |d: u64| scenario.seed ^ 0x9e37_79b9_7f4a_7c15_u64.wrapping_mul(d + 1);
        let mut devs = vec![Device::new(prof.clone(), scenario.device_bug, dev_seed(0))];
        let log_start = layout::log_start_sector(scenario);
        // mkfs zeroed the log: a sparse-file device's file already holds it.
        devs[0].mark_backed(log_start, geo.log_bb as u64);
        let data_dev = if scenario.external_log {
            devs.push(Device::new(prof, scenario.device_bug, dev_seed(1)));
            1
        } else {
            0
        };
        let per_writer = layout::items_per_writer(scenario);
        let data_end = log_start + geo.log_bb as u64 + 8 + scenario.writers as u64 * layout::META_BB;
        if !scenario.external_log && data_end > scenario.fs_size.0 / BBSIZE as u64 {
            return Err(format!(
                "fs_size: {} has no room for the writers' data blocks past the log",
                format_size(scenario.fs_size.0)
            ));
        }
        let nitems = SHARED_ITEMS + scenario.writers * per_writer;
        let items = (0..nitems).map(|id| Item::new(id, ItemKind::Buf { dirty: 0 })).collect();
        let writers = (0..scenario.writers)
            .map(|w| {
                let base = SHARED_ITEMS + w * per_writer;
                let mut wr = writer::Writer::new((base..base + per_writer).collect());
                // Threads start spread over the CPUs, one each while there are enough.
                wr.set_task_cpu(w % writer::commit_cpus(scenario) as u32);
                wr
            })
            .collect();
        let mut uuid = [0u8; 16];
        rng.fill_bytes(&mut uuid);
        let n = geo.iclog_count as usize;
        let (unit_res, unit_hdrs) = xlog_calc_unit_res_hdrs(&geo, scenario.tx_logres, scenario.unit_res_roundoff);
        let (ts_unit_res, ts_unit_hdrs) =
            xlog_calc_unit_res_hdrs(&geo, crate::geometry::XFS_CALC_INODE_RES, scenario.unit_res_roundoff);
        let ctx_unit_res = xlog_calc_unit_res(&geo, 0, scenario.unit_res_roundoff);
        let mut ctx_ticket = Ticket::new(rng.next_u32(), ctx_unit_res, 1, false);
        ctx_ticket.take_res(); // xlog_cil_ticket_alloc: the first commit steals it
        let cil = match scenario.cil_space {
            CilSpace::Upstream => Cil::new(ctx_ticket).with_upstream_space(&geo, writer::commit_cpus(scenario)),
            CilSpace::Global => Cil::new(ctx_ticket),
        };
        let rt = workload::RtFiles::for_scenario(scenario, &mut rng);
        let ialloc = workload::InodeAlloc::new(nitems, &geo);
        let mut sim = Sim {
            scenario: scenario.clone(),
            geo: geo.clone(),
            unit_res,
            ts_unit_res,
            ctx_unit_res,
            unit_hdrs,
            ts_unit_hdrs,
            now: 0,
            queue: Default::default(),
            rng,
            monitor: Monitor::new(geo.log_bb),
            log: Xlog::new(geo),
            cil,
            ail: Ail::default(),
            aild: Xfsaild::default(),
            cpus: sched::cpu_pool(scenario, devs[0].profile()),
            devs,
            log_start,
            data_dev,
            writers,
            pushers: (0..scenario.cil_pushers).map(|_| push::Pusher::default()).collect(),
            cil_wq: CilWorkqueue::default(),
            ioend: IoendWork::default(),
            dio: DioCompleteWork::default(),
            ialloc,
            agcount: crate::agi::mkfs_agcount(scenario),
            items,
            history: History::default(),
            fold_batch: FOLD_BATCH,
            pending_records: vec![None; n],
            uuid,
            counters: Counters::default(),
            trace: Default::default(),
            stopping: false,
            hung: false,
            rt,
            timeline: Default::default(),
            current: None,
            agi: AgiLocks::for_scenario(scenario),
        };
        let think = scenario.think.0.max(1);
        for w in 0..scenario.writers {
            let start = sim.rng.next_u64() % think;
            sim.schedule(start, Event::TaskRun(w));
        }
        sim.schedule(LOG_WORKER_PERIOD, Event::LogWorker);
        Ok(sim)
    }

    fn schedule(&mut self, at: Ns, ev: Event) {
        self.queue.push(at, ev);
    }

    fn wake(&mut self, task: TaskId) {
        self.schedule(self.now, Event::TaskRun(task));
    }

    fn wake_at(&mut self, at: Ns, task: TaskId) {
        self.schedule(at, Event::TaskRun(task));
    }

    fn copy_until(&mut self, at: Ns, task: TaskId) {
        self.schedule(at, Event::CopyDone(task));
    }

    fn io_at(&mut self, at: Ns, dev: usize, id: u64) {
        self.schedule(at, Event::IoDone { dev: dev as u8, id });
    }

    /// Notes request `id` just submitted to device `dev` for `tag`, when a timeline is kept.
    fn note_io(&mut self, dev: usize, id: u64, done_ns: Ns, tag: IoTag) {
        if self.timeline.is_on() {
            let span = timeline::submitted_span(self, dev, id, done_ns, tag);
            self.timeline.record(span);
        }
    }

    /// Runs one event; returns what happened, or `None` when nothing is left to run.
    pub fn step(&mut self) -> Option<&[TraceEvent]> {
        match self.queue.pop() {
            Some(next) => Some(self.dispatch(next)),
            None => {
                self.trace.clear();
                None
            }
        }
    }

    /// Runs one popped event.
    fn dispatch(&mut self, (t, ev): (Ns, Event)) -> &[TraceEvent] {
        self.trace.clear();
        self.now = t;
        self.counters.events += 1;
        self.monitor.clock = (self.counters.events, t);
        if !self.stopping && t >= self.scenario.duration.0 {
            self.stopping = true;
        }
        self.current = match ev {
            Event::TaskRun(t) | Event::CopyDone(t) => Some(t),
            Event::Aild => Some(tasks::TASK_XFSAILD),
            Event::IoDone { .. } | Event::LogWorker => None,
        };
        match ev {
            Event::TaskRun(tasks::TASK_XFSAILD) => self.xfsaild_cpu_done(),
            Event::TaskRun(TASK_IOEND) => self.xlog_ioend_work(),
            Event::TaskRun(TASK_DIO) => self.dio_complete_work(),
            Event::TaskRun(task) => match pusher_of(task) {
                Some(k) => self.pusher_run(k),
                None => self.writer_run(task),
            },
            Event::CopyDone(task) => self.copy_done(pusher_of(task).expect("only push workers copy")),
            Event::IoDone { dev, id } => self.io_done(dev as usize, id),
            Event::Aild => self.xfsaild_event(),
            Event::LogWorker => self.log_worker(),
        }
        // A command or the drain between events wakes no one from a CPU.
        self.current = None;
        self.trace.events()
    }

    pub(crate) fn emit(&mut self, task: u32, kind: crate::trace::TraceKind) {
        self.trace.emit(self.now, task, kind);
    }
}

impl Sim {
    /// `cpu_model=kernel` on a pool: the kernel's threads take CPU time beside the writers.
    pub(super) fn kernel_threads_on_cpus(&self) -> bool {
        self.scenario.cpu_model == CpuModel::Kernel && self.cpus.enabled()
    }

    /// Kernel thread `t` (a push worker, xfsaild, an I/O completion worker) woke and waits
    /// runnable for `ns` on a CPU: in front of the writers, behind the kernel threads woken
    /// before it (with `cpu_model=kernel`, on `cpu`'s queue).
    pub(super) fn kworker_runnable(&mut self, t: TaskId, ns: Ns, cpu: u32) {
        let writers = &self.writers;
        let kworker = |t| {
            matches!(t, TASK_XFSAILD | TASK_IOEND | TASK_DIO) || writers.get(t as usize).is_some_and(|w| w.ioend_ran())
        };
        self.cpus.enqueue_woken(t, ns, cpu, |t| pusher_of(t).is_some() || kworker(t));
        self.check_preempt_wakeup(cpu);
    }

    /// A task left `cpu`: it goes to the first task waiting for one.
    pub(super) fn cpu_release(&mut self, cpu: u32) {
        if let Some((t, ns)) = self.cpus.pick_next_task(cpu) {
            match pusher_of(t) {
                Some(k) => self.push_granted(k, cpu, ns),
                None if t == TASK_XFSAILD => self.xfsaild_granted(cpu),
                None if t == TASK_IOEND => self.xlog_ioend_granted(cpu),
                None if t == TASK_DIO => self.dio_complete_granted(cpu),
                None => self.run_on(cpu, t, ns),
            }
        }
    }
}
