//! The simulator: one event loop that wires the log, the devices, the AIL and the tasks.
//!
//! Leaf modules (`log`, `grant`, `iclog`, `ail`, `device`) decide what happens; this module
//! applies it and records trace events. Simplifications are marked `Model:`.

use crate::ail::{Ail, AilUpdate};
use crate::device::{Device, IoKind};
use crate::format::{
    self, OpHeader, XFS_BLF_CHUNK, XFS_TRANSACTION, XLOG_COMMIT_TRANS, XLOG_CONTINUE_TRANS, XLOG_END_TRANS,
    XLOG_START_TRANS, XLOG_UNMOUNT_TRANS, XLOG_WAS_CONT_TRANS,
};
use crate::grant::{xlog_calc_unit_res, xlog_grant_push_threshold, Ticket, OP_HDR};
use crate::iclog::{xlog_pack_record, IclogState, Record, XLOG_ICL_NEED_FLUSH, XLOG_ICL_NEED_FUA};
use crate::log::{GrantWaiter, TaskId, Xlog};
use crate::metrics::{ms, Counters, Metrics};
use crate::profile::profile;
use crate::scenario::{FlushPolicy, ForceFlush, Geometry, Scenario, WorkloadKind};
use crate::trace::{GrantEvent, GrantView, IclogEvent, TicketView, TraceEvent, TraceHasher, TraceKind};
use crate::units::{Lsn, Ns, NS_PER_MS, NS_PER_SEC};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::Hash;

/// First sector of the metadata items on the data device; each item is a 4 KiB block.
pub const META_START_SECTOR: u64 = 128;
pub const META_BB: u64 = 8;
/// Task ids of the kernel threads (writers are 0..writers).
pub const TASK_XFSAILD: u32 = 90_000;
pub const TASK_LOG_WORKER: u32 = 90_001;
pub const TASK_IOEND: u32 = 90_002;
/// `xfs_syncd_centisecs` default: the log worker runs every 30 s.
const LOG_WORKER_PERIOD: Ns = 30 * NS_PER_SEC;
/// Model: memcpy into the iclog at 4 GB/s plus a fixed lock/setup cost.
const COPY_FIXED_NS: Ns = 300;
const COPY_BYTES_PER_NS: u64 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Event {
    WriterRun(TaskId),
    CopyDone(TaskId),
    IoDone { dev: u8, id: u64 },
    Aild,
    LogWorker,
}

const TAG_ICLOG: u64 = 1 << 56;
const TAG_ICLOG_DATA_FLUSH: u64 = 2 << 56;
const TAG_META: u64 = 3 << 56;

/// Commands a user (or a test) can give the running simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Command {
    /// `xfs_log_force(mp, 0)`: push the head iclog out now, as the log worker does.
    ForceLog,
}

/// What a writer task is doing (`Model:` a writer is a loop of reserve, commit, optional fsync).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum WriterState {
    Thinking,
    GrantWait,
    Writing,
    /// Sleeping on `l_flush_wait`: no ACTIVE iclog at the ring head.
    FlushWait,
    Copying {
        iclog: u32,
    },
    /// `xfs_log_force_seq` batching: waiting for the previous iclog's write.
    PrevWait {
        iclog: u32,
    },
    ForceWait {
        iclog: u32,
    },
    Stopped,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Body,
    Commit,
    Done,
}

/// An op about to be written: flags and its data bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Op {
    flags: u8,
    data: Vec<u8>,
}

/// Where an `xlog_write` is: which op, how much of it is out.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Cursor {
    ops: Vec<Op>,
    idx: usize,
    off: u32,
    phase: Phase,
}

#[derive(Clone, Debug)]
struct Writer {
    state: WriterState,
    ticket: Option<Ticket>,
    cursor: Cursor,
    tx_start: Ns,
    items: Vec<u32>,
    next_item: usize,
    tx_items: Vec<(u32, u64)>,
    start_lsn: Lsn,
    commit_lsn: Lsn,
    ckpt: Option<u32>,
    force_slept: bool,
}

/// A metadata item: a 4 KiB buffer logged in 128-byte chunks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    pub id: u32,
    pub daddr: u64,
    /// Version of the last committed change.
    pub version: u64,
    pub pinned: u32,
    /// Writeback in flight: (version, LSN) being written.
    pub flushing: Option<(u64, Lsn)>,
}

/// One checkpoint in commit-record order: the history the crash oracle checks against.
/// Recovery never sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckpointRecord {
    pub items: Vec<(u32, u64)>,
    pub start_lsn: Lsn,
    pub commit_lsn: Lsn,
    pub completed: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct History {
    pub checkpoints: Vec<CheckpointRecord>,
    /// Checkpoints 0..acked were acknowledged to a waiter (a log force returned).
    pub acked: u32,
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
    pub writer_states: Vec<WriterState>,
    pub transactions: u64,
    pub events: u64,
    pub finished: bool,
}

#[derive(Clone, Debug)]
pub struct Sim {
    scenario: Scenario,
    geo: Geometry,
    unit_res: u32,
    now: Ns,
    seq: u64,
    queue: BinaryHeap<Reverse<(Ns, u64, Event)>>,
    rng: Pcg64Mcg,
    log: Xlog,
    ail: Ail,
    aild_idle: bool,
    devs: Vec<Device>,
    log_start: u64,
    data_dev: usize,
    writers: Vec<Writer>,
    items: Vec<Item>,
    history: History,
    /// `ic_force_wait` and `ic_write_wait` per iclog.
    force_wait: Vec<Vec<TaskId>>,
    write_wait: Vec<Vec<TaskId>>,
    /// Records held back until a data-device flush completes (legacy external/split).
    pending_records: Vec<Option<Record>>,
    uuid: [u8; 16],
    counters: Counters,
    hash: TraceHasher,
    out: Vec<TraceEvent>,
    keep_trace: bool,
    stopping: bool,
    hung: bool,
    live_overwrites: u64,
}

impl Sim {
    /// Builds a simulation; the scenario is validated first.
    pub fn new(scenario: &Scenario) -> Result<Sim, String> {
        let geo = scenario.validate()?;
        let mut rng = Pcg64Mcg::seed_from_u64(scenario.seed);
        let prof = profile(scenario.device);
        let mut devs = vec![Device::new(prof.clone(), scenario.device_bug)];
        let (log_start, data_dev) = if scenario.external_log {
            devs.push(Device::new(prof, scenario.device_bug));
            (0, 1)
        } else {
            // Internal log in the middle of the data device, as mkfs places it (AG n/2).
            ((scenario.fs_size.0 / 512 / 2) & !7, 0)
        };
        let per_writer = scenario.tx_items * 4;
        let nitems = scenario.writers * per_writer;
        let items = (0..nitems)
            .map(|id| Item {
                id,
                daddr: META_START_SECTOR + id as u64 * META_BB,
                version: 0,
                pinned: 0,
                flushing: None,
            })
            .collect();
        let writers = (0..scenario.writers)
            .map(|w| Writer {
                state: WriterState::Thinking,
                ticket: None,
                cursor: Cursor { ops: Vec::new(), idx: 0, off: 0, phase: Phase::Done },
                tx_start: 0,
                items: (w * per_writer..(w + 1) * per_writer).collect(),
                next_item: 0,
                tx_items: Vec::new(),
                start_lsn: Lsn::ZERO,
                commit_lsn: Lsn::ZERO,
                ckpt: None,
                force_slept: false,
            })
            .collect();
        let mut uuid = [0u8; 16];
        rng.fill_bytes(&mut uuid);
        let n = geo.iclog_count as usize;
        let unit_res = xlog_calc_unit_res(&geo, scenario.tx_logres, scenario.unit_res_roundoff);
        let mut sim = Sim {
            scenario: scenario.clone(),
            geo: geo.clone(),
            unit_res,
            now: 0,
            seq: 0,
            queue: BinaryHeap::new(),
            rng,
            log: Xlog::new(geo),
            ail: Ail::default(),
            aild_idle: true,
            devs,
            log_start,
            data_dev,
            writers,
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
        };
        let think = scenario.think.0.max(1);
        for w in 0..scenario.writers {
            let start = sim.rng.next_u64() % think;
            sim.schedule(start, Event::WriterRun(w));
        }
        sim.schedule(LOG_WORKER_PERIOD, Event::LogWorker);
        Ok(sim)
    }

    fn schedule(&mut self, at: Ns, ev: Event) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, ev)));
    }

    fn emit(&mut self, task: u32, kind: TraceKind) {
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
            Event::WriterRun(w) => self.writer_run(w),
            Event::CopyDone(w) => self.copy_done(w),
            Event::IoDone { dev, id } => self.io_done(dev as usize, id),
            Event::Aild => self.xfsaild_push(),
            Event::LogWorker => self.log_worker(),
        }
        Some(&self.out)
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

    /// Runs the whole scenario duration.
    pub fn run(&mut self) {
        let keep = self.keep_trace;
        self.set_keep_trace(false);
        self.run_until(self.scenario.duration.0);
        self.keep_trace = keep;
    }

    /// Stops new transactions, lets in-flight work finish and forces the log out.
    pub fn drain(&mut self) {
        self.stopping = true;
        let keep = self.keep_trace;
        self.set_keep_trace(false);
        let mut idle_rounds = 0;
        while idle_rounds < 3 && !self.hung {
            self.run_quiet();
            self.xfs_log_force_async(TASK_LOG_WORKER);
            if self.queue.len() <= 1 {
                idle_rounds += 1;
            }
        }
        self.keep_trace = keep;
    }

    /// Applies a user command at the current instant.
    pub fn command(&mut self, cmd: Command) {
        match cmd {
            Command::ForceLog => self.xfs_log_force_async(TASK_LOG_WORKER),
        }
    }

    /// What writer `w` is doing (views and tests).
    pub fn writer_state(&self, w: u32) -> Option<WriterState> {
        self.writers.get(w as usize).map(|wr| wr.state)
    }

    /// Clean unmount (`xfs_log_unmount`): drain, write every AIL item back, flush the data
    /// device, then write a lone unmount record with PREFLUSH|FUA and wait for it.
    pub fn unmount(&mut self) {
        self.drain();
        if let Some(max) = self.ail.max_lsn() {
            self.ail.push(max);
            self.aild_idle = false;
            self.schedule(self.now, Event::Aild);
        }
        self.run_quiet();
        let dd = self.data_dev;
        let (id, done) = self.devs[dd].submit_flush(self.now, 0);
        self.schedule(done, Event::IoDone { dev: dd as u8, id });
        self.run_quiet();
        let mut to_sync = Vec::new();
        let len = OP_HDR + 8;
        let Some(sp) = self.log.get_iclog_space(len, &mut to_sync) else { return };
        debug_assert!(to_sync.is_empty() && sp.start == 0, "a drained log has an empty head iclog");
        let i = sp.iclog;
        let ic = &mut self.log.iclogs[i];
        let hdr = OpHeader { tid: self.rng.next_u32(), len: 8, clientid: format::XFS_LOG, flags: XLOG_UNMOUNT_TRANS };
        hdr.write(&mut ic.data[0..12]);
        // xfs_unmount_log_format: magic XLOG_UNMOUNT_TYPE 0x556e, pad.
        ic.data[12..14].copy_from_slice(&0x556eu16.to_le_bytes());
        ic.num_logops = 1;
        ic.refcnt -= 1;
        self.xlog_force_iclog(TASK_LOG_WORKER, i, XLOG_ICL_NEED_FLUSH | XLOG_ICL_NEED_FUA);
        self.run_quiet();
    }

    /// Runs every queued event except the periodic log worker.
    fn run_quiet(&mut self) {
        while let Some(&Reverse((_, _, ev))) = self.queue.peek() {
            if ev == Event::LogWorker && self.queue.len() == 1 {
                break;
            }
            self.step();
        }
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
            writer_states: self.writers.iter().map(|w| w.state).collect(),
            transactions: self.counters.transactions,
            events: self.counters.events,
            finished: self.finished(),
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
            commit_records: c.commit_records,
            iclog_writes: c.iclog_writes,
            log_blocks: c.log_blocks,
            noiclog_events: c.noiclog_events,
            log_forces: c.log_forces,
            cache_flushes: flushes,
            cache_flushes_elided: elided,
            fua_writes: fua,
            device_writes: writes,
            bytes_logged: c.bytes_logged,
            ail_pushes: self.ail.pushes,
            metadata_writebacks: c.metadata_writebacks,
            reservation_overruns: c.reservation_overruns,
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

    fn trace_grant(&mut self, task: u32, event: GrantEvent, t: &Ticket) {
        let ticket =
            TicketView { ocnt: t.ocnt, cnt: t.cnt, curr_res: t.curr_res, unit_res: t.unit_res, flags: t.flags };
        let log = self.grant_view();
        self.emit(task, TraceKind::Grant { event, ticket, log });
    }

    fn trace_iclog(&mut self, task: u32, event: IclogEvent, i: usize) {
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

    fn wake(&mut self, task: TaskId) {
        self.schedule(self.now, Event::WriterRun(task));
    }

    // ---- writers -----------------------------------------------------------------------

    fn writer_run(&mut self, w: TaskId) {
        match self.writers[w as usize].state {
            WriterState::Thinking => self.start_tx(w),
            WriterState::GrantWait => {
                let t = self.writers[w as usize].ticket.clone().expect("waiting writer has a ticket");
                self.trace_grant(w, GrantEvent::Wake, &t);
                self.trace_grant(w, GrantEvent::ReserveExit, &t);
                self.build_tx(w);
                self.write_step(w);
            }
            WriterState::FlushWait | WriterState::Writing => self.write_step(w),
            WriterState::PrevWait { .. } => self.force_commit(w),
            WriterState::ForceWait { .. } => self.force_done(w),
            WriterState::Copying { .. } | WriterState::Stopped => {}
        }
    }

    /// `xfs_log_reserve` for a permanent ticket of `tx_logcount` units.
    fn start_tx(&mut self, w: TaskId) {
        if self.stopping {
            self.writers[w as usize].state = WriterState::Stopped;
            return;
        }
        let tid = self.rng.next_u32();
        let t = Ticket::new(tid, self.unit_res, self.scenario.tx_logcount, true);
        let need = t.reserve_need();
        let wr = &mut self.writers[w as usize];
        wr.tx_start = self.now;
        wr.force_slept = false;
        wr.ticket = Some(t.clone());
        self.trace_grant(w, GrantEvent::Reserve, &t);
        self.grant_push_ail(need);
        if !self.log.reserve_waiters.is_empty() {
            self.grant_head_wake();
        }
        if !self.log.reserve_waiters.is_empty() || self.log.reserve_space_left() < need {
            self.counters.grant_head_waits += 1;
            self.log.reserve_waiters.push_back(GrantWaiter { task: w, need });
            self.writers[w as usize].state = WriterState::GrantWait;
            self.trace_grant(w, GrantEvent::Sleep, &t);
            return;
        }
        let geo_bytes = self.geo.log_bytes;
        self.log.reserve_head.add(geo_bytes, need);
        self.log.write_head.add(geo_bytes, need);
        self.trace_grant(w, GrantEvent::ReserveExit, &t);
        self.build_tx(w);
        self.write_step(w);
    }

    /// `xlog_grant_head_wake` on the reserve head: FIFO, no queue jumping.
    fn grant_head_wake(&mut self) {
        let mut free = self.log.reserve_space_left();
        let mut woken = 0;
        while let Some(front) = self.log.reserve_waiters.front().cloned() {
            if free < front.need {
                if woken == 0 {
                    self.grant_push_ail(front.need);
                }
                break;
            }
            free -= front.need;
            self.log.reserve_waiters.pop_front();
            let bytes = self.geo.log_bytes;
            self.log.reserve_head.add(bytes, front.need);
            self.log.write_head.add(bytes, front.need);
            let t = self.writers[front.task as usize].ticket.clone().expect("waiter has a ticket");
            self.trace_grant(front.task, GrantEvent::WakeUp, &t);
            self.wake(front.task);
            woken += 1;
        }
    }

    /// `xlog_grant_push_ail`: ask xfsaild to move the tail when free space runs short.
    fn grant_push_ail(&mut self, need: u32) {
        if let Some(target) =
            xlog_grant_push_threshold(&self.geo, self.log.reserve_head, self.log.tail_lsn, self.log.last_sync_lsn, need)
        {
            if self.ail.push(target) && self.aild_idle {
                self.aild_idle = false;
                self.schedule(self.now, Event::Aild);
            }
        }
    }

    /// Modifies the writer's next items and lays out the ops of its transaction:
    /// start record, transaction header, then per buffer a format region and a data region.
    /// Model: a writer's items are its own; the kernel's buffer locks would serialise shared ones.
    fn build_tx(&mut self, w: TaskId) {
        let n = self.scenario.tx_items as usize;
        let chunks = self.scenario.tx_chunks;
        let tid = self.writers[w as usize].ticket.as_ref().expect("ticket").tid;
        let mut ops = vec![
            Op { flags: XLOG_START_TRANS, data: Vec::new() },
            Op { flags: 0, data: format::trans_header(tid, 2 * n as u32).to_vec() },
        ];
        let mut tx_items = Vec::with_capacity(n);
        for k in 0..n {
            let id = self.next_tx_item(w, k);
            let item = &mut self.items[id as usize];
            item.version += 1;
            item.pinned += 1;
            tx_items.push((id, item.version));
            let map = [(1u32 << chunks) - 1];
            ops.push(Op { flags: 0, data: format::buf_log_format(item.daddr, META_BB as u16, 2, &map) });
            let mut data = vec![0u8; (chunks * XFS_BLF_CHUNK) as usize];
            format::fill_payload(&mut data, id, item.version);
            ops.push(Op { flags: 0, data });
        }
        let wr = &mut self.writers[w as usize];
        wr.tx_items = tx_items;
        wr.cursor = Cursor { ops, idx: 0, off: 0, phase: Phase::Body };
        wr.state = WriterState::Writing;
    }

    /// Which item a transaction dirties next. fsmark-like creates dirty the writer's
    /// directory block and then fresh inode buffers; the others cycle over the writer's set.
    fn next_tx_item(&mut self, w: TaskId, k: usize) -> u32 {
        let wr = &mut self.writers[w as usize];
        if self.scenario.workload == WorkloadKind::FsmarkCreate && k > 0 {
            let id = self.items.len() as u32;
            let daddr = META_START_SECTOR + id as u64 * META_BB;
            self.items.push(Item { id, daddr, version: 0, pinned: 0, flushing: None });
            return id;
        }
        let id = wr.items[wr.next_item % wr.items.len()];
        wr.next_item += 1;
        id
    }

    /// One round of `xlog_write`: get iclog space, copy what fits, hold the reference
    /// for the copy time.
    fn write_step(&mut self, w: TaskId) {
        let wi = w as usize;
        if self.writers[wi].cursor.phase == Phase::Done {
            return self.after_commit(w);
        }
        let remaining: u32 = {
            let c = &self.writers[wi].cursor;
            c.ops[c.idx..].iter().map(|o| OP_HDR + o.data.len() as u32).sum::<u32>() - c.off
        };
        let mut to_sync = Vec::new();
        let space = self.log.get_iclog_space(remaining, &mut to_sync);
        for i in to_sync {
            self.xlog_sync(i, Some(w));
        }
        let Some(sp) = space else {
            self.counters.noiclog_events += 1;
            self.log.flush_wait.push(w);
            self.writers[wi].state = WriterState::FlushWait;
            return;
        };
        self.trace_iclog(w, IclogEvent::GetSpace, sp.iclog);
        let hsize = self.geo.iclog_hsize as i64;
        if sp.first {
            self.charge(w, hsize);
        }
        // Lay out ops into [start, start + avail).
        let i = sp.iclog;
        let mut pos = sp.start as usize;
        let end = (sp.start + sp.avail) as usize;
        let mut nops = 0;
        let mut written = 0i64;
        let lsn = self.log.iclogs[i].lsn;
        let cap = self.geo.ic_capacity as usize;
        loop {
            let c = &self.writers[wi].cursor;
            if c.idx >= c.ops.len() || end - pos < OP_HDR as usize {
                break;
            }
            let op = &c.ops[c.idx];
            let left = op.data.len() - c.off as usize;
            let room = end - pos - OP_HDR as usize;
            let take = left.min(room);
            if take == 0 && left > 0 {
                break;
            }
            let cont = c.off > 0;
            let fin = take == left;
            let mut flags = op.flags;
            if cont {
                flags |= XLOG_WAS_CONT_TRANS | if fin { XLOG_END_TRANS } else { 0 };
            } else if !fin {
                flags |= XLOG_CONTINUE_TRANS;
            }
            let tid = self.writers[wi].ticket.as_ref().expect("ticket").tid;
            let hdr = OpHeader { tid, len: take as u32, clientid: XFS_TRANSACTION, flags };
            let buf = &mut self.log.iclogs[i].data;
            hdr.write(&mut buf[pos..pos + OP_HDR as usize]);
            let off = c.off as usize;
            buf[pos + OP_HDR as usize..pos + OP_HDR as usize + take].copy_from_slice(&op.data[off..off + take]);
            let op_flags = op.flags;
            pos += OP_HDR as usize + take;
            nops += 1;
            written += OP_HDR as i64 + take as i64;
            if op_flags & XLOG_START_TRANS != 0 {
                self.writers[wi].start_lsn = lsn;
                self.start_record_written(w, i);
            }
            if op_flags & XLOG_COMMIT_TRANS != 0 {
                self.commit_record_written(w, i, lsn);
            }
            let c = &mut self.writers[wi].cursor;
            if fin {
                c.idx += 1;
                c.off = 0;
            } else {
                c.off += take as u32;
                break;
            }
        }
        // Byte-exact: the iclog's offset is what was really copied.
        let ic = &mut self.log.iclogs[i];
        if ic.offset == cap as u32 && (pos as u32) < ic.offset {
            ic.offset = pos as u32;
        }
        ic.num_logops += nops;
        self.charge(w, written);
        let ic = &self.log.iclogs[i];
        if ic.state == IclogState::Active && cap as u32 - ic.offset <= OP_HDR {
            self.log.switch_iclogs(i, 0);
            self.trace_iclog(w, IclogEvent::Switch, i);
        }
        let c = &mut self.writers[wi].cursor;
        if c.idx >= c.ops.len() {
            c.phase = match c.phase {
                Phase::Body => {
                    c.ops = vec![Op { flags: XLOG_COMMIT_TRANS, data: Vec::new() }];
                    c.idx = 0;
                    c.off = 0;
                    Phase::Commit
                }
                _ => Phase::Done,
            };
        }
        let copy_ns = COPY_FIXED_NS + written as u64 / COPY_BYTES_PER_NS;
        self.writers[wi].state = WriterState::Copying { iclog: i as u32 };
        self.schedule(self.now + copy_ns, Event::CopyDone(w));
    }

    fn charge(&mut self, w: TaskId, bytes: i64) {
        let t = self.writers[w as usize].ticket.as_mut().expect("ticket");
        let before = t.curr_res;
        t.curr_res -= bytes;
        if before >= 0 && t.curr_res < 0 {
            // "Transaction log reservation overrun"
            self.counters.reservation_overruns += 1;
        }
    }

    fn start_record_written(&mut self, _w: TaskId, i: usize) {
        if self.scenario.flush != FlushPolicy::Legacy {
            // upstream: PREFLUSH on the iclog that holds the start record.
            self.log.iclogs[i].flags |= XLOG_ICL_NEED_FLUSH;
        }
    }

    fn commit_record_written(&mut self, w: TaskId, i: usize, lsn: Lsn) {
        let wi = w as usize;
        let id = self.history.checkpoints.len() as u32;
        let start_lsn = self.writers[wi].start_lsn;
        self.history.checkpoints.push(CheckpointRecord {
            items: std::mem::take(&mut self.writers[wi].tx_items),
            start_lsn,
            commit_lsn: lsn,
            completed: false,
        });
        self.counters.commit_records += 1;
        let ic = &mut self.log.iclogs[i];
        ic.callbacks.push(id);
        if self.scenario.flush != FlushPolicy::Legacy {
            ic.flags |= XLOG_ICL_NEED_FUA;
            if start_lsn != lsn {
                ic.flags |= XLOG_ICL_NEED_FLUSH;
            }
        }
        let wr = &mut self.writers[wi];
        wr.commit_lsn = lsn;
        wr.ckpt = Some(id);
        self.emit(w, TraceKind::TxCommit { ckpt: id, start: start_lsn, commit: lsn });
    }

    fn copy_done(&mut self, w: TaskId) {
        let WriterState::Copying { iclog } = self.writers[w as usize].state else {
            return;
        };
        let i = iclog as usize;
        self.trace_iclog(w, IclogEvent::Release, i);
        if self.log.release_iclog(i) {
            self.xlog_sync(i, Some(w));
        }
        self.writers[w as usize].state = WriterState::Writing;
        self.write_step(w);
    }

    /// `xfs_log_ticket_ungrant`, then the fsync (a log force to the commit LSN) if asked.
    fn after_commit(&mut self, w: TaskId) {
        let wi = w as usize;
        let mut t = self.writers[wi].ticket.take().expect("ticket");
        self.trace_grant(w, GrantEvent::Ungrant, &t);
        let bytes = t.ungrant_bytes();
        let lb = self.geo.log_bytes;
        self.log.reserve_head.sub(lb, bytes);
        self.log.write_head.sub(lb, bytes);
        self.trace_grant(w, GrantEvent::UngrantExit, &t);
        self.xfs_log_space_wake();
        if self.scenario.fsync {
            self.counters.log_forces += 1;
            let lsn = self.writers[wi].commit_lsn;
            self.emit(w, TraceKind::LogForce { lsn });
            self.force_commit(w);
        } else {
            self.finish_tx(w);
        }
    }

    /// `xlog_force_lsn` for the writer's commit LSN.
    fn force_commit(&mut self, w: TaskId) {
        let wi = w as usize;
        let lsn = self.writers[wi].commit_lsn;
        let found = self.log.iclogs.iter().position(|ic| {
            ic.lsn == lsn
                && !matches!(ic.state, IclogState::Dirty)
                && !(ic.state == IclogState::Active && ic.offset == 0)
        });
        let Some(i) = found else {
            return self.force_done(w); // already on disk
        };
        let force_flags = match self.scenario.force_flush {
            ForceFlush::Fixed => XLOG_ICL_NEED_FLUSH | XLOG_ICL_NEED_FUA,
            ForceFlush::None => 0,
        };
        match self.log.iclogs[i].state {
            IclogState::Active => {
                let p = self.log.prev(i);
                let prev_busy = matches!(self.log.iclogs[p].state, IclogState::WantSync | IclogState::Syncing);
                if !self.writers[wi].force_slept && prev_busy {
                    // Wait for the previous iclog's write so more commits can join this one.
                    self.writers[wi].force_slept = true;
                    self.write_wait[p].push(w);
                    self.writers[wi].state = WriterState::PrevWait { iclog: p as u32 };
                    return;
                }
                self.xlog_force_iclog(w, i, force_flags);
            }
            IclogState::WantSync => self.log.iclogs[i].flags |= force_flags,
            _ => {}
        }
        let st = self.log.iclogs[i].state;
        if matches!(st, IclogState::Active | IclogState::Dirty) {
            return self.force_done(w);
        }
        self.counters.log_force_sleeps += 1;
        self.trace_iclog(w, IclogEvent::WaitOn, i);
        self.force_wait[i].push(w);
        self.writers[wi].state = WriterState::ForceWait { iclog: i as u32 };
    }

    /// `xlog_force_iclog`: reference, flags, switch if ACTIVE, release.
    fn xlog_force_iclog(&mut self, task: u32, i: usize, flags: u32) {
        self.log.iclogs[i].refcnt += 1;
        self.log.iclogs[i].flags |= flags;
        self.trace_iclog(task, IclogEvent::Force, i);
        if self.log.iclogs[i].state == IclogState::Active {
            self.log.switch_iclogs(i, 0);
            self.trace_iclog(task, IclogEvent::Switch, i);
        }
        if self.log.release_iclog(i) {
            self.xlog_sync(i, None);
        }
    }

    fn force_done(&mut self, w: TaskId) {
        if let Some(c) = self.writers[w as usize].ckpt.take() {
            self.history.acked = self.history.acked.max(c + 1);
            self.emit(w, TraceKind::ForceDone { ckpt: c });
        }
        self.finish_tx(w);
    }

    fn finish_tx(&mut self, w: TaskId) {
        let wr = &mut self.writers[w as usize];
        let lat = (self.now - wr.tx_start).max(1);
        wr.state = WriterState::Thinking;
        wr.ckpt = None;
        self.counters.transactions += 1;
        self.counters.latency_ns.saturating_record(lat);
        // Think time varies uniformly over [0.5, 1.5) of the mean so writers drift apart.
        let mean = self.scenario.think.0;
        let think = mean / 2 + self.rng.next_u64() % mean.max(1);
        self.schedule(self.now + think, Event::WriterRun(w));
    }

    /// `xfs_log_force(mp, 0)`: push the head iclog out without waiting.
    fn xfs_log_force_async(&mut self, task: u32) {
        self.counters.log_forces += 1;
        self.emit(task, TraceKind::LogForce { lsn: Lsn::ZERO });
        let mut i = self.log.head;
        let ic = &self.log.iclogs[i];
        if ic.state == IclogState::Dirty || (ic.state == IclogState::Active && ic.refcnt == 0 && ic.offset == 0) {
            i = self.log.prev(i);
        }
        let flags = XLOG_ICL_NEED_FLUSH | XLOG_ICL_NEED_FUA;
        let ic = &self.log.iclogs[i];
        match ic.state {
            IclogState::Active if ic.offset > 0 && ic.refcnt == 0 => self.xlog_force_iclog(task, i, flags),
            IclogState::Active if ic.offset > 0 => {
                self.log.switch_iclogs(i, 0);
                self.trace_iclog(task, IclogEvent::Switch, i);
                self.log.iclogs[i].flags |= flags;
            }
            IclogState::WantSync => self.log.iclogs[i].flags |= flags,
            _ => {}
        }
    }

    // ---- log I/O -------------------------------------------------------------------------

    /// `xlog_assign_tail_lsn`: lowest AIL LSN, or the last synced LSN when the AIL is empty.
    fn assign_tail(&mut self, task: u32) -> Lsn {
        let new = self.ail.min_lsn().unwrap_or(self.log.last_sync_lsn);
        let old = self.log.tail_lsn;
        if new != old {
            self.log.tail_lsn = new;
            let last_sync = self.log.last_sync_lsn;
            self.emit(task, TraceKind::AssignTail { new, old, last_sync });
        }
        new
    }

    /// `xlog_sync`: stamp the tail, pack the record, charge roundoff, choose flags, submit.
    fn xlog_sync(&mut self, i: usize, payer: Option<TaskId>) {
        let tail = self.assign_tail(TASK_IOEND);
        self.log.iclogs[i].tail_lsn = tail;
        let rec = xlog_pack_record(&self.geo, &self.log.iclogs[i], &self.uuid);
        // No overwrite of the live log: the record must end within one log size of the tail.
        let lin = |l: Lsn| l.cycle() as u64 * self.geo.log_bb as u64 + l.block() as u64;
        let end = lin(self.log.iclogs[i].lsn) + rec.bytes.len() as u64 / 512;
        if end > lin(tail) + self.geo.log_bb as u64 {
            self.live_overwrites += 1;
        }
        match payer.filter(|&w| self.writers[w as usize].ticket.is_some()) {
            // d9f68777b251: roundoff is charged to the ticket that pushes the iclog out.
            Some(w) => self.charge(w, rec.roundoff as i64),
            None => {
                let lb = self.geo.log_bytes;
                self.log.reserve_head.add(lb, rec.roundoff);
                self.log.write_head.add(lb, rec.roundoff);
            }
        }
        self.counters.iclog_writes += 1;
        self.counters.log_blocks += rec.bytes.len() as u64 / 512;
        self.counters.bytes_logged += rec.bytes.len() as u64;
        self.trace_iclog(payer.unwrap_or(TASK_IOEND), IclogEvent::Sync, i);
        let ic = &mut self.log.iclogs[i];
        let (preflush, fua) = match self.scenario.flush {
            FlushPolicy::Legacy => {
                ic.flags |= XLOG_ICL_NEED_FUA;
                if self.scenario.external_log || rec.split_bb.is_some() {
                    // Legacy: flush the data device synchronously, then write with FUA only.
                    self.pending_records[i] = Some(rec);
                    let dd = self.data_dev;
                    let (id, done) = self.devs[dd].submit_flush(self.now, TAG_ICLOG_DATA_FLUSH | i as u64);
                    self.emit(
                        TASK_IOEND,
                        TraceKind::DevSubmit {
                            dev: dd as u8,
                            id,
                            sector: 0,
                            bytes: 0,
                            preflush: false,
                            fua: false,
                            flush: true,
                        },
                    );
                    self.schedule(done, Event::IoDone { dev: dd as u8, id });
                    return;
                }
                (true, true)
            }
            _ => (ic.flags & XLOG_ICL_NEED_FLUSH != 0, ic.flags & XLOG_ICL_NEED_FUA != 0),
        };
        self.submit_record(i, rec, preflush, fua);
    }

    fn submit_record(&mut self, i: usize, rec: Record, preflush: bool, fua: bool) {
        let tag = TAG_ICLOG | i as u64;
        let base = self.log_start;
        let mut parts = Vec::with_capacity(2);
        match rec.split_bb {
            Some(split) => {
                let cut = split as usize * 512;
                parts.push((base + rec.bno as u64, rec.bytes[..cut].to_vec()));
                parts.push((base, rec.bytes[cut..].to_vec()));
            }
            None => parts.push((base + rec.bno as u64, rec.bytes)),
        }
        self.log.iclogs[i].io_pending = parts.len() as u32;
        self.trace_iclog(TASK_IOEND, IclogEvent::Write, i);
        for (sector, data) in parts {
            let bytes = data.len() as u32;
            let (id, done) = self.devs[0].submit_write(self.now, sector, data, preflush, fua, tag);
            self.emit(TASK_IOEND, TraceKind::DevSubmit { dev: 0, id, sector, bytes, preflush, fua, flush: false });
            self.schedule(done, Event::IoDone { dev: 0, id });
        }
    }

    fn io_done(&mut self, dev: usize, id: u64) {
        let req = self.devs[dev].complete(id);
        self.emit(TASK_IOEND, TraceKind::DevComplete { dev: dev as u8, id });
        let v = req.tag & ((1 << 56) - 1);
        match req.tag & !((1 << 56) - 1) {
            TAG_ICLOG => {
                let i = v as usize;
                self.log.iclogs[i].io_pending -= 1;
                if self.log.iclogs[i].io_pending == 0 {
                    self.iclog_done(i);
                }
            }
            TAG_ICLOG_DATA_FLUSH => {
                let i = v as usize;
                let rec = self.pending_records[i].take().expect("record waits for the data flush");
                self.submit_record(i, rec, false, true);
            }
            TAG_META => self.meta_done(v as u32),
            _ => debug_assert!(matches!(req.kind, IoKind::Flush), "unknown I/O tag"),
        }
    }

    /// `xlog_state_done_syncing` and `xlog_state_do_callback`: ring-order completion.
    fn iclog_done(&mut self, i: usize) {
        self.log.set_state(i, IclogState::DoneSync);
        self.trace_iclog(TASK_IOEND, IclogEvent::SyncDone, i);
        for t in std::mem::take(&mut self.write_wait[i]) {
            self.wake(t);
        }
        while let Some(j) = self.log.next_callback_iclog() {
            self.trace_iclog(TASK_IOEND, IclogEvent::Callback, j);
            let cbs = std::mem::take(&mut self.log.iclogs[j].callbacks);
            let had = !cbs.is_empty();
            for c in cbs {
                self.checkpoint_done(c);
            }
            if had {
                self.grant_push_ail(0);
            }
            self.trace_iclog(TASK_IOEND, IclogEvent::Clean, j);
            for a in self.log.clean_iclog(j) {
                self.trace_iclog(TASK_IOEND, IclogEvent::Activate, a);
            }
            for t in std::mem::take(&mut self.force_wait[j]) {
                self.wake(t);
            }
        }
        self.assign_tail(TASK_IOEND);
        self.xfs_log_space_wake();
        if self.log.iclogs[self.log.head].state == IclogState::Active {
            for t in std::mem::take(&mut self.log.flush_wait) {
                self.wake(t);
            }
        }
    }

    /// `xlog_cil_committed` for one checkpoint: AIL insertion at the start LSN, unpin.
    fn checkpoint_done(&mut self, c: u32) {
        self.counters.checkpoints += 1;
        let ck = &mut self.history.checkpoints[c as usize];
        ck.completed = true;
        let start = ck.start_lsn;
        let items = ck.items.clone();
        self.emit(TASK_IOEND, TraceKind::CheckpointDone { ckpt: c, start });
        for (id, _) in items {
            let old = self.ail.lsn(id).unwrap_or(Lsn::ZERO);
            if matches!(self.ail.update(id, start), AilUpdate::Insert | AilUpdate::Move { .. }) {
                self.emit(TASK_IOEND, TraceKind::AilInsert { item: id, old, new: start });
            }
            self.items[id as usize].pinned -= 1;
        }
    }

    /// `xfs_log_space_wake`: wake grant waiters that now fit.
    fn xfs_log_space_wake(&mut self) {
        if !self.log.reserve_waiters.is_empty() {
            self.grant_head_wake();
        }
    }

    // ---- xfsaild and the log worker -------------------------------------------------------

    /// One `xfsaild_push` pass: write back unpinned items at or below the target.
    fn xfsaild_push(&mut self) {
        let batch: Vec<(Lsn, u32)> = self.ail.items_to_push().take(1000).collect();
        let (mut pushed, mut stuck, mut pinned) = (0u32, 0u32, false);
        for &(lsn, id) in &batch {
            let item = &self.items[id as usize];
            if item.pinned > 0 {
                stuck += 1;
                pinned = true;
                self.emit(TASK_XFSAILD, TraceKind::AilPinned { item: id, lsn });
                continue;
            }
            if item.flushing.is_some() {
                stuck += 1;
                continue;
            }
            let version = item.version;
            let daddr = item.daddr;
            self.items[id as usize].flushing = Some((version, lsn));
            let block = format::meta_block(id, version, lsn, (META_BB * 512) as usize);
            let dd = self.data_dev;
            let (rid, done) = self.devs[dd].submit_write(self.now, daddr, block, false, false, TAG_META | id as u64);
            self.emit(TASK_XFSAILD, TraceKind::AilPush { item: id, lsn });
            self.schedule(done, Event::IoDone { dev: dd as u8, id: rid });
            self.counters.metadata_writebacks += 1;
            pushed += 1;
            if stuck > 100 {
                break;
            }
        }
        if pinned {
            // Pinned items need their checkpoint on disk: force the log (async).
            self.xfs_log_force_async(TASK_XFSAILD);
        }
        let reached = batch.is_empty() || (pushed > 0 && stuck == 0 && batch.len() < 1000);
        if reached && self.ail.items_to_push().all(|(_, id)| self.items[id as usize].flushing.is_some()) {
            self.aild_idle = true;
            return;
        }
        let sleep = if stuck * 10 > 9 * batch.len() as u32 { 20 } else { 10 };
        self.schedule(self.now + sleep * NS_PER_MS, Event::Aild);
    }

    /// Metadata writeback completed (into the device cache): the item leaves the AIL if it
    /// was not relogged meanwhile, and the tail may move.
    fn meta_done(&mut self, id: u32) {
        let Some((_, lsn)) = self.items[id as usize].flushing.take() else {
            return;
        };
        if self.ail.lsn(id) == Some(lsn) {
            self.ail.delete(id);
            self.emit(TASK_XFSAILD, TraceKind::AilDelete { item: id, lsn });
            self.assign_tail(TASK_XFSAILD);
            self.xfs_log_space_wake();
        }
    }

    /// `xfs_log_worker`: force the log and push the whole AIL every 30 s.
    fn log_worker(&mut self) {
        let blocked = self.writers.iter().any(|w| !matches!(w.state, WriterState::Thinking | WriterState::Stopped));
        let only_worker = self.queue.is_empty();
        self.xfs_log_force_async(TASK_LOG_WORKER);
        if let Some(max) = self.ail.max_lsn() {
            if self.ail.push(max) && self.aild_idle {
                self.aild_idle = false;
                self.schedule(self.now, Event::Aild);
            }
        }
        if blocked && only_worker && self.queue.is_empty() {
            // Liveness: tasks are blocked and nothing, not even the worker, can wake them.
            self.hung = true;
        }
        if !self.stopping || !self.queue.is_empty() {
            self.schedule(self.now + LOG_WORKER_PERIOD, Event::LogWorker);
        }
    }
}
