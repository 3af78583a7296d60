//! The simulator: one event loop that wires the log, the CIL, the devices, the AIL and the tasks.
//!
//! Leaf modules (`log`, `grant`, `iclog`, `cil`, `ail`, `device`) decide what happens; the
//! files here apply it, one task kind each, and record trace events. Simplifications are
//! marked `Model:`.

mod aild;
mod logio;
mod push;
mod workload;
mod writer;

use crate::ail::Ail;
use crate::cil::{xlog_cil_blocking_space_limit, Cil, ItemKind};
use crate::device::Device;
use crate::grant::{xlog_calc_unit_res, Ticket};
use crate::iclog::{IclogState, Record};
use crate::log::{TaskId, Xlog};
use crate::metrics::{ms, Counters, Metrics};
use crate::profile::profile;
use crate::scenario::{Geometry, Scenario, WorkloadKind};
use crate::sectors::SectorMap;
use crate::trace::{GrantEvent, GrantView, IclogEvent, TicketView, TraceEvent, TraceHasher, TraceKind};
use crate::units::{Lsn, Ns, NS_PER_SEC};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::hash::Hash;

pub use push::PushState;
pub use writer::WriterState;

/// First sector of the metadata items on the data device; each item is a 4 KiB block.
pub const META_START_SECTOR: u64 = 128;
pub const META_BB: u64 = 8;
/// Most metadata items a run creates (about 80 bytes of model state each).
pub const MAX_ITEMS: u32 = 4 << 20;
/// Shared AG header buffers (AGF/AGI) every writer may dirty: items 0..SHARED_ITEMS.
pub const SHARED_ITEMS: u32 = 16;
/// Task ids of the kernel threads (writers are 0..writers).
pub const TASK_PUSH_BASE: u32 = 80_000;
pub const TASK_XFSAILD: u32 = 90_000;
pub const TASK_LOG_WORKER: u32 = 90_001;
pub const TASK_IOEND: u32 = 90_002;
/// `xfs_syncd_centisecs` default: the log worker runs every 30 s.
pub(crate) const LOG_WORKER_PERIOD: Ns = 30 * NS_PER_SEC;
/// How long the liveness probe may follow a device that is still working: an hour.
const LIVENESS_PROBE_MAX: Ns = 3600 * NS_PER_SEC;

/// Items each writer owns: a hot set for relogging workloads, a small pool for creates
/// (which also allocate fresh inodes); never more than the space below an internal log holds.
pub fn items_per_writer(s: &Scenario, log_start: u64) -> u32 {
    let want = match s.workload {
        WorkloadKind::FsmarkCreate | WorkloadKind::DirRemove | WorkloadKind::CreateRemove => 64,
        _ => s.tx_items * 4,
    };
    let end = if s.external_log { s.fs_size.0 / 512 } else { log_start };
    let capacity =
        (end.saturating_sub(META_START_SECTOR) / META_BB).saturating_sub(SHARED_ITEMS as u64) / s.writers.max(1) as u64;
    want.min(capacity.min(u32::MAX as u64) as u32)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Event {
    TaskRun(TaskId),
    CopyDone(TaskId),
    IoDone { dev: u8, id: u64 },
    Aild,
    LogWorker,
}

pub(crate) const TAG_ICLOG: u64 = 1 << 56;
pub(crate) const TAG_ICLOG_DATA_FLUSH: u64 = 2 << 56;
pub(crate) const TAG_META: u64 = 3 << 56;
pub(crate) const TAG_PUSH_FLUSH: u64 = 4 << 56;
pub(crate) const TAG_DATA: u64 = 5 << 56;
/// A writer's metadata read inside its transaction.
pub(crate) const TAG_READ: u64 = 6 << 56;
/// File data blocks carry this bit in their item id.
pub const DATA_ID_BASE: u32 = 0x8000_0000;
pub(crate) const TAG_MASK: u64 = (1 << 56) - 1;

/// Commands a user (or a test) can give the running simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Command {
    /// `xfs_log_force(mp, 0)`: push the CIL and the head iclog out now, as the log worker does.
    ForceLog,
}

/// An op about to be written: flags, data, and whether a transaction already paid for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Op {
    pub flags: u8,
    pub data: Vec<u8>,
    /// Region bytes and their op header were charged to transactions (CIL `space_used`).
    pub prepaid: bool,
}

/// Where an `xlog_write` is: which op, how much of it is out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub ops: Vec<Op>,
    pub idx: usize,
    pub off: u32,
    /// The first iclog of this `xlog_write` has been used.
    pub started: bool,
}

/// A metadata item: a 4 KiB buffer or an inode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    pub id: u32,
    pub daddr: u64,
    pub kind: ItemKind,
    /// Version of the last committed change.
    pub version: u64,
    /// Checkpoints holding this item that have not completed (`iop_pin` count).
    pub pinned: u32,
    /// Sequence of the CIL context the item was last inserted into.
    pub cil_seq: u64,
    /// Writeback in flight: (version, LSN) being written.
    pub flushing: Option<(u64, Lsn)>,
    /// Size of the item's shadow log vector buffer.
    pub shadow_size: u32,
}

/// One checkpoint in commit-record order: the history the crash oracle checks against.
/// Recovery never sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckpointRecord {
    pub sequence: u64,
    pub items: Vec<(u32, u64)>,
    /// Items logged as stale buffers (a cancel record): their blocks are free after it.
    pub freed: Vec<u32>,
    pub start_lsn: Lsn,
    pub commit_lsn: Lsn,
    pub completed: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct History {
    pub checkpoints: Vec<CheckpointRecord>,
    /// Checkpoints 0..acked were acknowledged to a waiter (a log force returned).
    pub acked: u32,
    /// File data blocks an fsync returned for: daddr -> version.
    pub acked_data: std::collections::BTreeMap<u64, u64>,
    /// Every log record submitted: (LSN, the tail LSN stamped in its header).
    pub records: Vec<(Lsn, Lsn)>,
}

/// Read-only state for views (UI, CLI), cheap to build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IclogView {
    pub index: u32,
    pub state: IclogState,
    pub refcnt: u32,
    pub offset: u32,
    pub capacity: u32,
    pub lsn: Lsn,
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
    pub transactions: u64,
    pub events: u64,
    pub finished: bool,
    pub hung: bool,
}

#[derive(Clone, Debug)]
pub struct Sim {
    pub(crate) scenario: Scenario,
    pub(crate) geo: Geometry,
    pub(crate) unit_res: u32,
    pub(crate) ctx_unit_res: u32,
    pub(crate) now: Ns,
    seq: u64,
    pub(crate) queue: BinaryHeap<Reverse<(Ns, u64, Event)>>,
    pub(crate) rng: Pcg64Mcg,
    pub(crate) log: Xlog,
    pub(crate) cil: Cil,
    pub(crate) ail: Ail,
    pub(crate) aild_idle: bool,
    pub(crate) devs: Vec<Device>,
    pub(crate) log_start: u64,
    pub(crate) data_dev: usize,
    pub(crate) writers: Vec<writer::Writer>,
    pub(crate) pushers: Vec<push::Pusher>,
    /// A push was requested and no worker has taken it yet (`queue_work`).
    pub(crate) push_queued: bool,
    pub(crate) items: Vec<Item>,
    pub(crate) history: History,
    /// `ic_force_wait` and `ic_write_wait` per iclog.
    pub(crate) force_wait: Vec<Vec<TaskId>>,
    pub(crate) write_wait: Vec<Vec<TaskId>>,
    /// Records held back until a data-device flush completes (external log or split).
    pub(crate) pending_records: Vec<Option<(Record, bool, bool)>>,
    pub(crate) uuid: [u8; 16],
    pub(crate) counters: Counters,
    hash: TraceHasher,
    out: Vec<TraceEvent>,
    keep_trace: bool,
    pub(crate) stopping: bool,
    pub(crate) hung: bool,
    pub(crate) live_overwrites: u64,
    /// The tail when the data device last got a flush (explicit, or PREFLUSH on an internal log).
    pub(crate) tail_at_data_flush: Lsn,
    /// The tail at submission of each flush still in flight on the data device (by request id).
    pub(crate) flush_tails: BTreeMap<u64, Lsn>,
    /// The newest tail a completed data-device flush covers: metadata behind it is stable.
    pub(crate) tail_flushed: Lsn,
    pub(crate) ckpt_unstable_at_completion: u64,
    /// fsyncs that returned while their data block or checkpoint was not on stable media.
    pub(crate) acked_unstable: u64,
    /// The realtime allocator of the rt-alloc workload (boxed: its bitmap is megabytes).
    pub(crate) rt: Option<Box<crate::rtalloc::RtAlloc>>,
    /// Each writer's last realtime extent end: the locality hint of its next allocation.
    pub(crate) rt_hint: Vec<u64>,
    pub(crate) rt_live: Vec<(u64, u64)>,
}

impl Sim {
    /// Builds a simulation; the scenario is validated first.
    pub fn new(scenario: &Scenario) -> Result<Sim, String> {
        let geo = scenario.validate()?;
        let mut rng = Pcg64Mcg::seed_from_u64(scenario.seed);
        let prof = profile(scenario.device);
        let mut devs = vec![Device::new(prof.clone(), scenario.device_bug)];
        let log_start = scenario.log_start_sector();
        let data_dev = if scenario.external_log {
            devs.push(Device::new(prof, scenario.device_bug));
            1
        } else {
            0
        };
        let per_writer = items_per_writer(scenario, log_start);
        let data_end = log_start + geo.log_bb as u64 + 8 + scenario.writers as u64 * META_BB;
        if !scenario.external_log && data_end > scenario.fs_size.0 / 512 {
            return Err(format!(
                "fs_size: {} has no room for the writers' data blocks past the log",
                crate::units::format_size(scenario.fs_size.0)
            ));
        }
        let nitems = SHARED_ITEMS + scenario.writers * per_writer;
        let items = (0..nitems)
            .map(|id| Item {
                id,
                daddr: META_START_SECTOR + id as u64 * META_BB,
                kind: ItemKind::Buf { dirty: 0 },
                version: 0,
                pinned: 0,
                cil_seq: 0,
                flushing: None,
                shadow_size: 0,
            })
            .collect();
        let writers = (0..scenario.writers)
            .map(|w| {
                let base = SHARED_ITEMS + w * per_writer;
                writer::Writer::new((base..base + per_writer).collect())
            })
            .collect();
        let mut uuid = [0u8; 16];
        rng.fill_bytes(&mut uuid);
        let n = geo.iclog_count as usize;
        let unit_res = xlog_calc_unit_res(&geo, scenario.tx_logres, scenario.unit_res_roundoff);
        let ctx_unit_res = xlog_calc_unit_res(&geo, 0, scenario.unit_res_roundoff);
        let first_ctx = Ticket::new(rng.next_u32(), ctx_unit_res, 1, false);
        let mut ctx_ticket = first_ctx;
        ctx_ticket.curr_res = 0; // xlog_cil_ticket_alloc: the first commit steals it
        let mut sim = Sim {
            scenario: scenario.clone(),
            geo: geo.clone(),
            unit_res,
            ctx_unit_res,
            now: 0,
            seq: 0,
            queue: BinaryHeap::new(),
            rng,
            log: Xlog::new(geo),
            cil: Cil::new(ctx_ticket),
            ail: Ail::default(),
            aild_idle: true,
            devs,
            log_start,
            data_dev,
            writers,
            pushers: (0..scenario.cil_pushers).map(|_| push::Pusher::default()).collect(),
            push_queued: false,
            items,
            history: History::default(),
            force_wait: vec![Vec::new(); n],
            write_wait: vec![Vec::new(); n],
            pending_records: vec![None; n],
            uuid,
            counters: Counters::default(),
            hash: TraceHasher::default(),
            out: Vec::new(),
            keep_trace: true,
            stopping: false,
            hung: false,
            live_overwrites: 0,
            tail_at_data_flush: Lsn::new(1, 0),
            flush_tails: BTreeMap::new(),
            tail_flushed: Lsn::new(1, 0),
            ckpt_unstable_at_completion: 0,
            acked_unstable: 0,
            rt: None,
            rt_hint: Vec::new(),
            rt_live: Vec::new(),
        };
        if scenario.workload == crate::scenario::WorkloadKind::RtAlloc {
            let cache = scenario.rsum_cache == crate::scenario::RsumCache::On;
            let rt = crate::rtalloc::fragmented(cache, scenario.seed);
            let n = rt.geo.rextents;
            sim.rt_hint = (0..scenario.writers).map(|_| sim.rng.next_u64() % n).collect();
            sim.rt = Some(Box::new(rt));
        }
        let think = scenario.think.0.max(1);
        for w in 0..scenario.writers {
            let start = sim.rng.next_u64() % think;
            sim.schedule(start, Event::TaskRun(w));
        }
        sim.schedule(LOG_WORKER_PERIOD, Event::LogWorker);
        Ok(sim)
    }

    pub(crate) fn schedule(&mut self, at: Ns, ev: Event) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, ev)));
    }

    pub(crate) fn wake(&mut self, task: TaskId) {
        self.schedule(self.now, Event::TaskRun(task));
    }

    pub(crate) fn wake_at(&mut self, at: Ns, task: TaskId) {
        self.schedule(at, Event::TaskRun(task));
    }

    pub(crate) fn copy_until(&mut self, at: Ns, task: TaskId) {
        self.schedule(at, Event::CopyDone(task));
    }

    pub(crate) fn io_at(&mut self, at: Ns, dev: usize, id: u64) {
        self.schedule(at, Event::IoDone { dev: dev as u8, id });
    }

    pub(crate) fn wake_aild(&mut self) {
        if self.aild_idle {
            self.aild_idle = false;
            self.schedule(self.now, Event::Aild);
        }
    }

    pub(crate) fn emit(&mut self, task: u32, kind: TraceKind) {
        let ev = TraceEvent { t_ns: self.now, task, kind };
        ev.hash(&mut self.hash);
        if self.keep_trace {
            self.out.push(ev);
        }
    }

    /// Runs one event; returns what happened, or `None` when nothing is left to run.
    pub fn step(&mut self) -> Option<&[TraceEvent]> {
        self.out.clear();
        let Reverse((t, _, ev)) = self.queue.pop()?;
        self.now = t;
        self.counters.events += 1;
        if !self.stopping && t >= self.scenario.duration.0 {
            self.stopping = true;
        }
        match ev {
            Event::TaskRun(task) if task >= TASK_PUSH_BASE => self.pusher_run(task - TASK_PUSH_BASE),
            Event::TaskRun(w) => self.writer_run(w),
            Event::CopyDone(task) => self.copy_done(task - TASK_PUSH_BASE),
            Event::IoDone { dev, id } => self.io_done(dev as usize, id),
            Event::Aild => self.xfsaild_push(),
            Event::LogWorker => self.log_worker(),
        }
        Some(&self.out)
    }

    /// Uses `uuid` in record headers (an export into a real image needs the image's UUID).
    pub fn set_uuid(&mut self, uuid: [u8; 16]) -> Result<(), String> {
        if self.counters.events > 0 {
            return Err("set_uuid: the run has already started".into());
        }
        self.uuid = uuid;
        Ok(())
    }

    /// The log region as the host would read it now (device cache over stable media).
    pub fn log_region(&self) -> Vec<u8> {
        let dev = &self.devs[0];
        let mut cached = SectorMap::new();
        for w in dev.cached() {
            cached.write(w.sector, &w.data);
        }
        let (start, end) = (self.log_start, self.log_start + self.geo.log_bb as u64);
        let mut out = vec![0u8; self.geo.log_bb as usize * 512];
        for layer in [dev.stable(), &cached] {
            for s in layer.sectors_in(start, end) {
                if let Some(d) = layer.get(s) {
                    let o = (s - start) as usize * 512;
                    out[o..o + 512].copy_from_slice(d);
                }
            }
        }
        out
    }

    /// Keeps every device request with its data from now on (for the dm-log-writes export).
    pub fn record_io(&mut self) {
        for d in &mut self.devs {
            d.record();
        }
    }

    /// Whether a request tag is file data (everything else is log or metadata: REQ_META).
    pub fn is_file_data(tag: u64) -> bool {
        tag & !TAG_MASK == TAG_DATA
    }

    /// Turns per-step trace collection off (hashing continues) for fast batch runs.
    pub fn set_keep_trace(&mut self, keep: bool) {
        self.keep_trace = keep;
        self.out.clear();
    }

    /// Runs until virtual time `until` (events at later times stay queued).
    pub fn run_until(&mut self, until: Ns) {
        while let Some(&Reverse((t, _, _))) = self.queue.peek() {
            if t > until || self.hung {
                break;
            }
            self.step();
        }
        self.now = self.now.max(until.min(self.scenario.duration.0));
    }

    /// Runs the whole scenario duration, then checks liveness.
    pub fn run(&mut self) {
        let keep = self.keep_trace;
        self.set_keep_trace(false);
        self.run_until(self.scenario.duration.0);
        self.keep_trace = keep;
        self.check_liveness();
    }

    /// Liveness: if tasks are blocked at the end, run a copy on with no new work for two
    /// log-worker periods, and on while the devices are still busy (one flush behind a slow
    /// disk's full cache can take minutes); tasks still blocked once the devices have gone
    /// idle for a whole window have nothing left that could wake them.
    pub fn check_liveness(&mut self) {
        if self.hung || !self.writers.iter().any(|w| w.state.is_blocked()) {
            return;
        }
        let mut probe = self.clone();
        probe.set_keep_trace(false);
        probe.stopping = true;
        let blocked = |p: &Sim| p.writers.iter().any(|w| w.state.is_blocked());
        let io =
            |p: &Sim| p.devs.iter().map(|d| d.stats.writes + d.stats.flushes + d.inflight().len() as u64).sum::<u64>();
        let cap = probe.now + LIVENESS_PROBE_MAX;
        let mut until = probe.now + 2 * LOG_WORKER_PERIOD + 1;
        loop {
            let before = io(&probe);
            // Stop as soon as every task is awake: the rest of the probe cannot change the verdict.
            while blocked(&probe) {
                match probe.queue.peek() {
                    Some(&Reverse((t, _, _))) if t <= until => probe.step(),
                    _ => break,
                };
            }
            let busy = io(&probe) != before || probe.devs.iter().any(|d| !d.inflight().is_empty());
            if !blocked(&probe) || !busy || until >= cap {
                break;
            }
            until += LOG_WORKER_PERIOD;
        }
        if blocked(&probe) {
            self.hung = true;
        }
    }

    /// Stops new transactions, lets in-flight work finish and forces the log out.
    pub fn drain(&mut self) {
        self.stopping = true;
        let keep = self.keep_trace;
        self.set_keep_trace(false);
        for _ in 0..4 {
            self.run_quiet();
            self.xfs_log_force_async(TASK_LOG_WORKER);
        }
        self.run_quiet();
        self.keep_trace = keep;
    }

    /// Runs every queued event except the periodic log worker.
    pub(crate) fn run_quiet(&mut self) {
        while let Some(&Reverse((_, _, ev))) = self.queue.peek() {
            if ev == Event::LogWorker && self.queue.len() == 1 {
                break;
            }
            self.step();
        }
    }

    /// Applies a user command at the current instant.
    pub fn command(&mut self, cmd: Command) {
        match cmd {
            Command::ForceLog => self.xfs_log_force_async(TASK_LOG_WORKER),
        }
    }

    /// Where writer `w`'s file data block lives on the data device: past the internal log,
    /// or past the metadata items on an external log's data device.
    pub fn data_daddr(&self, w: u32) -> u64 {
        let base = if self.scenario.external_log {
            META_START_SECTOR + self.items.len() as u64 * META_BB
        } else {
            (self.log_start + self.geo.log_bb as u64).div_ceil(META_BB) * META_BB
        };
        base + w as u64 * META_BB
    }

    pub fn writer_state(&self, w: u32) -> Option<WriterState> {
        self.writers.get(w as usize).map(|wr| wr.state)
    }
    pub fn pusher_state(&self, k: u32) -> Option<PushState> {
        self.pushers.get(k as usize).map(|p| p.state)
    }
    /// Events processed so far (cheap; `metrics()` computes quantiles).
    pub fn events(&self) -> u64 {
        self.counters.events
    }
    pub fn now(&self) -> Ns {
        self.now
    }
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    pub fn unit_res(&self) -> u32 {
        self.unit_res
    }
    pub fn history(&self) -> &History {
        &self.history
    }
    pub fn devices(&self) -> &[Device] {
        &self.devs
    }
    pub fn log_start_sector(&self) -> u64 {
        self.log_start
    }
    pub fn data_device(&self) -> usize {
        self.data_dev
    }
    pub fn items(&self) -> &[Item] {
        &self.items
    }
    pub fn xlog(&self) -> &Xlog {
        &self.log
    }
    pub fn ail(&self) -> &Ail {
        &self.ail
    }
    pub fn cil(&self) -> &Cil {
        &self.cil
    }
    pub fn uuid(&self) -> [u8; 16] {
        self.uuid
    }
    /// Device self-check failures (a broken flush or FUA rule) on any device.
    pub fn semantics_violations(&self) -> u64 {
        self.devs.iter().map(|d| d.stats.semantics_violations).sum()
    }
    /// Log writes that would have overwritten the live log past the tail.
    pub fn live_overwrites(&self) -> u64 {
        self.live_overwrites
    }
    /// Checkpoints that completed (items unpinned) before all their log blocks were stable.
    /// fsyncs acknowledged before their data and log were stable (durability, at the ack).
    pub fn acked_unstable(&self) -> u64 {
        self.acked_unstable
    }
    pub fn checkpoints_unstable_at_completion(&self) -> u64 {
        self.ckpt_unstable_at_completion
    }
    pub fn is_hung(&self) -> bool {
        self.hung
    }
    pub fn trace_hash(&self) -> u64 {
        self.hash.0
    }
    pub fn finished(&self) -> bool {
        self.queue.peek().is_none_or(|Reverse((t, _, _))| *t > self.scenario.duration.0) || self.hung
    }

    pub fn view(&self) -> View {
        View {
            now_ns: self.now,
            iclogs: self
                .log
                .iclogs
                .iter()
                .map(|ic| IclogView {
                    index: ic.index,
                    state: ic.state,
                    refcnt: ic.refcnt,
                    offset: ic.offset,
                    capacity: self.geo.ic_capacity,
                    lsn: ic.lsn,
                    flags: ic.flags,
                })
                .collect(),
            head_iclog: self.log.head as u32,
            curr_lsn: Lsn::new(self.log.curr_cycle, self.log.curr_block),
            tail_lsn: self.log.tail_lsn,
            last_sync_lsn: self.log.last_sync_lsn,
            log_bb: self.geo.log_bb,
            reserve_free_bytes: self.log.reserve_space_left(),
            reserve_waiters: self.log.reserve_waiters.len() as u32,
            write_waiters: self.log.write_waiters.len() as u32,
            ail_items: self.ail.len() as u32,
            cil_sequence: self.cil.ctx.sequence,
            cil_space_used: self.cil.ctx.space_used,
            cil_blocking_limit: xlog_cil_blocking_space_limit(&self.geo),
            cil_throttle_depth: self.cil.push_wait.len() as u32,
            checkpoints_committing: self.cil.committing.len() as u32,
            writer_states: self.writers.iter().map(|w| w.state).collect(),
            pusher_states: self.pushers.iter().map(|p| p.state).collect(),
            transactions: self.counters.transactions,
            events: self.counters.events,
            finished: self.finished(),
            hung: self.hung,
        }
    }

    pub fn metrics(&self) -> Metrics {
        let c = &self.counters;
        let secs = self.now.min(self.scenario.duration.0).max(1) as f64 / NS_PER_SEC as f64;
        let (mut flushes, mut elided, mut fua, mut writes) = (0, 0, 0, 0);
        for d in &self.devs {
            flushes += d.stats.flushes;
            elided += d.stats.flushes_elided;
            fua += d.stats.fua_writes;
            writes += d.stats.writes;
        }
        let q = |p: f64| ms(c.latency_ns.value_at_quantile(p));
        let per_ckpt = |n: u64| if c.checkpoints == 0 { 0.0 } else { n as f64 / c.checkpoints as f64 };
        Metrics {
            sim_seconds: secs,
            transactions: c.transactions,
            tx_per_sec: c.transactions as f64 / secs,
            latency_ms_p50: q(0.5),
            latency_ms_p99: q(0.99),
            latency_ms_p995: q(0.995),
            bandwidth_mb_s: c.bytes_logged as f64 / secs / 1e6,
            grant_head_waits: c.grant_head_waits,
            checkpoints: c.checkpoints,
            checkpoint_kib_p50: c.checkpoint_bytes.value_at_quantile(0.5) as f64 / 1024.0,
            checkpoint_kib_max: c.checkpoint_bytes.max() as f64 / 1024.0,
            iclogs_per_checkpoint: per_ckpt(c.checkpoint_iclogs),
            cache_flushes_per_checkpoint: per_ckpt(c.flushes_at_checkpoint),
            commit_records: c.commit_records,
            iclog_writes: c.iclog_writes,
            log_blocks: c.log_blocks,
            noiclog_events: c.noiclog_events,
            log_forces: c.log_forces,
            fsync_flushes_skipped: c.fsync_flushes_skipped,
            cache_flushes: flushes,
            cache_flushes_elided: elided,
            fua_writes: fua,
            device_writes: writes,
            bytes_logged: c.bytes_logged,
            ail_pushes: self.ail.pushes,
            metadata_writebacks: c.metadata_writebacks,
            metadata_reads: c.metadata_reads,
            background_pushes: c.background_pushes,
            cil_throttle_waits: c.cil_throttle_waits,
            cil_throttle_depth_max: c.cil_throttle_depth_max,
            cil_throttle_wakes_skipped: c.cil_throttle_wakes_skipped,
            tail_moved_after_flush: c.tail_moved_after_flush,
            tail_moved_fua_only: c.tail_moved_fua_only,
            records_tail_uncovered: c.records_tail_uncovered,
            commit_iclogs_tail_uncovered: c.commit_iclogs_tail_uncovered,
            log_overwrites_unflushed: c.log_overwrites_unflushed,
            start_records_unordered: c.start_records_unordered,
            shadow_allocations: c.shadow_allocations,
            reservation_overruns: c.reservation_overruns,
            rsum_reads: self.rt.as_ref().map_or(0, |r| r.summary_reads),
            hung: self.hung,
            events: c.events,
            trace_hash: format!("{:016x}", self.hash.0),
        }
    }

    // ---- tracing helpers -------------------------------------------------------------

    fn grant_view(&self) -> GrantView {
        GrantView {
            reserveq_active: !self.log.reserve_waiters.is_empty(),
            writeq_active: !self.log.write_waiters.is_empty(),
            reserve: self.log.reserve_head,
            write: self.log.write_head,
            curr_cycle: self.log.curr_cycle,
            curr_block: self.log.curr_block,
            tail: self.log.tail_lsn,
        }
    }

    pub(crate) fn trace_grant(&mut self, task: u32, event: GrantEvent, t: &Ticket) {
        let ticket =
            TicketView { ocnt: t.ocnt, cnt: t.cnt, curr_res: t.curr_res, unit_res: t.unit_res, flags: t.flags };
        let log = self.grant_view();
        self.emit(task, TraceKind::Grant { event, ticket, log });
    }

    pub(crate) fn trace_iclog(&mut self, task: u32, event: IclogEvent, i: usize) {
        let ic = &self.log.iclogs[i];
        let kind = TraceKind::Iclog {
            event,
            iclog: i as u32,
            state: ic.state,
            refcnt: ic.refcnt,
            offset: ic.offset,
            lsn: ic.lsn,
            flags: ic.flags,
        };
        self.emit(task, kind);
    }
}
