//! The front ends' door: everything the CLI, the lab and the crash explorer call on a
//! simulation besides `Sim::new` and `step` (tidy checks it).
//! - Run it and stop where asked: to a time, within an event budget, to its end (then the
//!   liveness check), to the next moment worth seeing (`Milestone`), or until a watched
//!   condition comes true (`Watch`); drain it at the end. Each runs the same events as
//!   `run_until`, so nothing it skips past differs from playing there.
//! - Read it: accessors, the views and "why" (built by `view` and `why` from a shared borrow),
//!   the metrics report.
//! - Command it: force the log, branch a what-if, keep a trace or a timeline, record I/O.

use super::aild::LOG_WORKER_PERIOD;
use super::tags::IoTag;
use super::tasks::TASK_LOG_WORKER;
use super::view::{self, AilView, CilView, CpusView, DevicePanel, IclogsView, LogSpaceView, RtView, TasksView, View};
use super::why;
use super::{Command, Event, History, IoSpan, Item, PushState, Sim, WriterState};
use crate::ail::Ail;
use crate::cil::Cil;
use crate::device::Device;
use crate::geometry::Geometry;
use crate::layout;
use crate::log::Xlog;
use crate::metrics::{ms, Metrics};
use crate::scenario::Scenario;
use crate::sectors::SectorMap;
use crate::trace::{GrantEvent, IclogEvent, TraceEvent, TraceKind};
use crate::units::{Ns, TaskId, BBSIZE, NS_PER_SEC};
use serde::Serialize;

/// How long the liveness probe may follow a device that is still working: an hour.
const LIVENESS_PROBE_MAX: Ns = 3600 * NS_PER_SEC;

impl Sim {
    /// Turns per-step trace collection off (hashing continues) for fast batch runs.
    pub fn set_keep_trace(&mut self, keep: bool) {
        self.trace.set_keep(keep);
    }

    /// Runs until virtual time `until` (events at later times stay queued).
    pub fn run_until(&mut self, until: Ns) {
        while !self.hung {
            let Some(next) = self.queue.pop_if(|t, _| t <= until) else { break };
            self.dispatch(next);
        }
        self.now = self.now.max(until.min(self.scenario.duration.0));
    }

    /// Runs events up to virtual time `until`, at most `budget` of them, and returns how many
    /// ran: the lab's frame loop, where a busy stretch slows the clock rather than the frame.
    /// The events are those `run_until` runs, in the same order, so the trace hash agrees.
    pub fn run_until_budget(&mut self, until: Ns, budget: u64) -> u64 {
        let mut ran = 0;
        while ran < budget {
            match self.queue.pop_if(|t, _| t <= until && !self.hung) {
                Some(next) => {
                    self.dispatch(next);
                    ran += 1;
                }
                None => {
                    self.now = self.now.max(until.min(self.scenario.duration.0));
                    break;
                }
            }
        }
        ran
    }

    /// Runs the whole scenario duration, then checks liveness.
    pub fn run(&mut self) {
        let keep = self.trace.keeps();
        self.set_keep_trace(false);
        self.run_until(self.scenario.duration.0);
        self.trace.set_keep(keep);
        self.check_liveness();
    }

    /// Stops new transactions, lets in-flight work finish and forces the log out.
    pub fn drain(&mut self) {
        self.stopping = true;
        let keep = self.trace.keeps();
        self.set_keep_trace(false);
        for _ in 0..4 {
            self.run_quiet();
            self.xfs_log_force_async(TASK_LOG_WORKER);
        }
        self.run_quiet();
        self.trace.set_keep(keep);
    }

    /// Runs every queued event except the periodic log worker.
    pub(super) fn run_quiet(&mut self) {
        loop {
            let alone = self.queue.len() == 1;
            let Some(next) = self.queue.pop_if(|_, ev| !(ev == Event::LogWorker && alone)) else { break };
            self.dispatch(next);
        }
    }

    fn any_writer_blocked(&self) -> bool {
        self.writers.iter().any(|w| w.state().is_blocked())
    }

    /// Requests the devices have taken so far, counting those still in flight.
    fn device_activity(&self) -> u64 {
        self.devs.iter().map(|d| d.stats().writes + d.stats().flushes + d.inflight().len() as u64).sum()
    }

    /// Liveness: if tasks are blocked at the end, run a copy on with no new work for two
    /// log-worker periods, and on while the devices are still busy (one flush behind a slow
    /// disk's full cache can take minutes); tasks still blocked once the devices have gone
    /// idle for a whole window have nothing left that could wake them.
    pub fn check_liveness(&mut self) {
        if self.hung || !self.any_writer_blocked() {
            return;
        }
        let mut probe = self.clone();
        probe.set_keep_trace(false);
        probe.stopping = true;
        let cap = probe.now + LIVENESS_PROBE_MAX;
        let mut until = probe.now + 2 * LOG_WORKER_PERIOD + 1;
        loop {
            let before = probe.device_activity();
            // Stop as soon as every task is awake: the rest of the probe cannot change the verdict.
            while probe.any_writer_blocked() {
                match probe.queue.pop_if(|t, _| t <= until) {
                    Some(next) => probe.dispatch(next),
                    None => break,
                };
            }
            let busy = probe.device_activity() != before || probe.devs.iter().any(|d| !d.inflight().is_empty());
            if !probe.any_writer_blocked() || !busy || until >= cap {
                break;
            }
            until += LOG_WORKER_PERIOD;
        }
        if probe.any_writer_blocked() {
            self.hung = true;
        }
    }
}

/// A kind of moment the lab can step to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Milestone {
    /// A cache flush goes out: an explicit flush or a write with PREFLUSH.
    Flush,
    /// A checkpoint completes (`xlog_cil_committed`).
    Checkpoint,
    /// An iclog changes state (switched out, synced, done, called back, cleaned, activated).
    IclogState,
    /// A committer goes to sleep on `xc_push_wait`.
    ThrottleWait,
}

impl Milestone {
    pub const ALL: [Milestone; 4] =
        [Milestone::Flush, Milestone::Checkpoint, Milestone::IclogState, Milestone::ThrottleWait];

    pub fn label(self) -> &'static str {
        match self {
            Milestone::Flush => "next flush",
            Milestone::Checkpoint => "next checkpoint",
            Milestone::IclogState => "next iclog state change",
            Milestone::ThrottleWait => "next throttle wait",
        }
    }

    /// Whether `e` is such a moment.
    pub fn matches(self, e: &TraceEvent) -> bool {
        match (self, &e.kind) {
            (Milestone::Flush, TraceKind::DevSubmit { flush, preflush, .. }) => *flush || *preflush,
            (Milestone::Checkpoint, TraceKind::CheckpointDone { .. }) => true,
            (Milestone::IclogState, TraceKind::Iclog { event, .. }) => matches!(
                event,
                IclogEvent::Switch
                    | IclogEvent::Sync
                    | IclogEvent::SyncDone
                    | IclogEvent::Callback
                    | IclogEvent::Clean
                    | IclogEvent::Activate
            ),
            (Milestone::ThrottleWait, TraceKind::Grant { event: GrantEvent::CilWait, .. }) => true,
            _ => false,
        }
    }
}

impl Sim {
    /// Runs events until one of them is a `m` moment (true), or until virtual time `limit`
    /// or `budget` events pass without one (false). The trace must be kept (`set_keep_trace`).
    pub fn run_to_next(&mut self, m: Milestone, limit: Ns, budget: u64) -> bool {
        let mut ran = 0;
        while ran < budget {
            let hung = self.hung;
            let Some(next) = self.queue.pop_if(|t, _| t <= limit && !hung) else { return false };
            ran += 1;
            if self.dispatch(next).iter().any(|e| m.matches(e)) {
                return true;
            }
        }
        false
    }
}

/// A condition the lab can watch for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Watch {
    /// The reserve grant head has fewer than this many bytes free.
    FreeLogBelow(u64),
    /// A cache flush (explicit or PREFLUSH) has been issued on any device.
    FirstFlush,
    /// More than this many tasks sleep on `xc_push_wait`.
    ThrottleDepthAbove(u32),
    /// A writer has been in its current transaction for longer than this.
    TaskWaitingLonger(Ns),
}

impl Watch {
    /// What the condition found, if it holds now.
    pub fn check(&self, sim: &Sim) -> Option<String> {
        match *self {
            Watch::FreeLogBelow(b) => {
                let free = sim.log.reserve_space_left() as u64;
                (free < b).then(|| format!("free log space {} KiB < {} KiB", free / 1024, b / 1024))
            }
            Watch::FirstFlush => {
                let n: u64 = sim.devs.iter().map(|d| d.stats().flushes).sum();
                (n > 0).then(|| "the first cache flush was issued".to_string())
            }
            Watch::ThrottleDepthAbove(k) => {
                let d = sim.cil.push_waiters().len() as u32;
                (d > k).then(|| format!("throttle queue depth {d} > {k}"))
            }
            Watch::TaskWaitingLonger(t) => sim.longest_wait().filter(|&(_, w)| w > t).map(|(task, w)| {
                format!(
                    "writer {task} has been in its transaction for {:.3} ms > {:.3} ms",
                    w as f64 / 1e6,
                    t as f64 / 1e6
                )
            }),
        }
    }
}

impl Sim {
    /// The blocked writer that has waited longest in its current transaction, and for how long.
    fn longest_wait(&self) -> Option<(TaskId, Ns)> {
        self.writers
            .iter()
            .enumerate()
            .filter(|(_, w)| w.state().is_blocked())
            .map(|(i, w)| (i as TaskId, self.now - w.tx_start()))
            .max_by_key(|&(i, w)| (w, std::cmp::Reverse(i)))
    }

    /// As `run_until_budget`, but stops on the first event after which a watch holds; returns
    /// the events run and, if one fired, which and what it found.
    pub fn run_until_watched(&mut self, until: Ns, budget: u64, watches: &[Watch]) -> (u64, Option<(Watch, String)>) {
        if watches.is_empty() {
            return (self.run_until_budget(until, budget), None);
        }
        // Conditions already true stop nothing: a watch fires when it becomes true.
        let armed: Vec<Watch> = watches.iter().copied().filter(|w| w.check(self).is_none()).collect();
        let mut ran = 0;
        while ran < budget {
            let ran_one = self.run_until_budget(until, 1);
            if ran_one == 0 {
                return (ran, None);
            }
            ran += 1;
            if let Some(hit) = armed.iter().find_map(|w| w.check(self).map(|s| (*w, s))) {
                return (ran, Some(hit));
            }
        }
        (ran, None)
    }
}

impl Sim {
    pub fn writer_state(&self, w: u32) -> Option<WriterState> {
        self.writers.get(w as usize).map(|wr| wr.state())
    }
    pub fn pusher_state(&self, k: u32) -> Option<PushState> {
        self.pushers.get(k as usize).map(|p| p.state())
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
    /// Creates that reused an inode past the run's inode cap (`alloc_item`).
    pub fn inodes_reused(&self) -> u64 {
        self.ialloc.reused()
    }
    /// Records every device request from now on, keeping the newest `cap` (0 turns it off).
    pub fn keep_timeline(&mut self, cap: usize) {
        self.timeline.keep(cap);
    }

    /// Recorded requests still in flight at or completed after `since`, oldest first.
    pub fn timeline_since(&self, since: Ns) -> Vec<IoSpan> {
        self.timeline.since(since)
    }

    /// Clean unmount (`xfs_log_unmount`): drain, write every AIL item back, flush the data
    /// device, then write a lone unmount record with PREFLUSH|FUA and wait for it.
    pub fn unmount(&mut self) {
        self.xfs_log_unmount();
    }

    /// This run from now on with `key=value` (a what-if); the error names the key and what
    /// is allowed (`BRANCH_KEYS`).
    pub fn branch(&self, key: &str, value: &str) -> Result<Sim, String> {
        let scenario = super::branch::branch_scenario(&self.scenario, key, value)?;
        Ok(Sim { scenario, ..self.clone() })
    }

    /// Folds old checkpoints in batches of `batch` (`FOLD_BATCH` by default), or never with
    /// 0: tests compare crash verdicts with and without folding.
    pub fn set_history_fold(&mut self, batch: usize) {
        self.fold_batch = batch;
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
        self.devs.iter().map(|d| d.stats().semantics_violations).sum()
    }
    /// Log writes that would have overwritten the live log past the tail.
    pub fn live_overwrites(&self) -> u64 {
        self.monitor.live_overwrites
    }
    /// fsyncs acknowledged before their data was stable (durability, at the ack).
    pub fn acked_unstable(&self) -> u64 {
        self.monitor.acked_unstable
    }
    /// Checkpoints that completed (items unpinned) before all their log blocks were stable.
    pub fn checkpoints_unstable_at_completion(&self) -> u64 {
        self.monitor.ckpt_unstable_at_completion
    }
    /// (events, virtual time) at which the live-overwrite, commit-implies-checkpoint and
    /// durability monitors first fired, in that order.
    pub fn first_monitor_violations(&self) -> [Option<(u64, Ns)>; 3] {
        self.monitor.first
    }
    /// Virtual time of the next queued event, if any.
    pub fn next_event_at(&self) -> Option<Ns> {
        self.queue.peek().map(|(t, _)| t)
    }

    pub fn is_hung(&self) -> bool {
        self.hung
    }
    pub fn trace_hash(&self) -> u64 {
        self.trace.hash()
    }
    pub fn finished(&self) -> bool {
        self.queue.peek().is_none_or(|(t, _)| t > self.scenario.duration.0) || self.hung
    }

    /// Roughly what a clone of this simulation holds that a clone does not share: items,
    /// iclog buffers, cached writes, the history and the device page tables. The pages
    /// themselves are shared until written (`device_page_buffers` tells them apart). The lab
    /// keeps its time-travel snapshots within a budget of both.
    pub fn approx_clone_bytes(&self) -> u64 {
        let items = self.items.len() as u64 * std::mem::size_of::<Item>() as u64;
        let iclogs = self.log.iclogs().iter().map(|ic| ic.buffer_bytes() as u64).sum::<u64>();
        let cache = self.devs.iter().map(|d| d.cached_bytes()).sum::<u64>();
        let history = self.history.checkpoints.iter().map(|c| 64 + c.items.len() as u64 * 16).sum::<u64>()
            + self.history.records.len() as u64 * 16
            + self.history.base.len() as u64 * 64;
        // A BTreeMap entry: key, Arc and presence bits, with node overhead.
        let page_tables = self.devs.iter().map(|d| d.stable().pages() as u64 * 48).sum::<u64>();
        let dirs = self.writers.iter().map(|w| w.pool().dir().approx_bytes()).sum::<u64>();
        items + iclogs + cache + history + page_tables + dirs
    }

    /// Every stable device page's buffer address and size (see `SectorMap::page_buffers`).
    pub fn device_page_buffers(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.devs.iter().flat_map(|d| d.stable().page_buffers())
    }
}

impl Sim {
    pub fn metrics(&self) -> Metrics {
        let c = &self.counters;
        let secs = self.now.min(self.scenario.duration.0).max(1) as f64 / NS_PER_SEC as f64;
        let (mut flushes, mut elided, mut fua, mut writes) = (0, 0, 0, 0);
        for d in &self.devs {
            flushes += d.stats().flushes;
            elided += d.stats().flushes_elided;
            fua += d.stats().fua_writes;
            writes += d.stats().writes;
        }
        let q = |p: f64| ms(c.latency_ns.value_at_quantile(p));
        let per_ckpt = |n: u64| if c.checkpoints == 0 { 0.0 } else { n as f64 / c.checkpoints as f64 };
        Metrics {
            sim_seconds: secs,
            transactions: c.transactions,
            tx_committed: c.tx_committed,
            tx_per_sec: c.transactions as f64 / secs,
            latency_ms_p50: q(0.5),
            latency_ms_p99: q(0.99),
            latency_ms_p995: q(0.995),
            bandwidth_mb_s: c.bytes_logged as f64 / secs / 1e6,
            data_mb_s: c.data_bytes_synced as f64 / secs / 1e6,
            grant_head_waits: c.grant_head_waits,
            agi_lock_waits: c.agi_lock_waits,
            checkpoints: c.checkpoints,
            checkpoint_kib_p50: c.checkpoint_bytes.value_at_quantile(0.5) as f64 / 1024.0,
            checkpoint_kib_max: c.checkpoint_bytes.max() as f64 / 1024.0,
            iclogs_per_checkpoint: per_ckpt(c.checkpoint_iclogs),
            cache_flushes_per_checkpoint: per_ckpt(c.flushes_at_checkpoint),
            commit_records: c.commit_records,
            iclog_writes: c.iclog_writes,
            log_blocks: c.log_blocks,
            log_cycles: self.log.curr_cycle().saturating_sub(1) as u64,
            noiclog_events: c.noiclog_events,
            log_forces: c.log_forces,
            fsync_flushes_skipped: c.fsync_flushes_skipped,
            cache_flushes: flushes,
            cache_flushes_elided: elided,
            fua_writes: fua,
            device_writes: writes,
            bytes_logged: c.bytes_logged,
            ail_pushes: self.ail.pushes(),
            metadata_writebacks: c.metadata_writebacks,
            metadata_writes: c.metadata_writes,
            metadata_reads: c.metadata_reads,
            xfsaild_passes: c.xfsaild_passes,
            xfsaild_log_forces: c.xfsaild_log_forces,
            xfsaild_items_pinned: c.xfsaild_items_pinned,
            xfsaild_wakeups_lost: c.xfsaild_wakeups_lost,
            background_pushes: c.background_pushes,
            cil_throttle_waits: c.cil_throttle_waits,
            cil_throttle_depth_max: c.cil_throttle_depth_max,
            checkpoints_throttled: c.checkpoints_throttled,
            append_tx_pairs: c.append_tx_pairs,
            append_pairs_split: c.append_pairs_split,
            cil_throttle_wakes_skipped: c.cil_throttle_wakes_skipped,
            tail_moved_after_flush: c.tail_moved_after_flush,
            tail_moved_fua_only: c.tail_moved_fua_only,
            records_tail_uncovered: self.monitor.records_tail_uncovered,
            commit_iclogs_tail_uncovered: self.monitor.commit_iclogs_tail_uncovered,
            log_overwrites_unflushed: self.monitor.log_overwrites_unflushed,
            start_records_unordered: self.monitor.start_records_unordered,
            shadow_allocations: c.shadow_allocations,
            cil_push_dispatch_ms_p50: ms(c.push_dispatch_ns.value_at_quantile(0.5)),
            cil_push_dispatch_ms_p99: ms(c.push_dispatch_ns.value_at_quantile(0.99)),
            cil_push_dispatch_ms_max: ms(c.push_dispatch_ns.max()),
            cil_push_run_ms_p50: ms(c.push_run_ns.value_at_quantile(0.5)),
            cil_push_run_ms_p99: ms(c.push_run_ns.value_at_quantile(0.99)),
            cil_push_run_ms_max: ms(c.push_run_ns.max()),
            cil_push_runs: c.push_run_ns.len(),
            cil_push_ms_cpu: ms(c.push_time_ns[0]),
            cil_push_ms_iclog_wait: ms(c.push_time_ns[1]),
            cil_push_ms_prev_iclog_wait: ms(c.push_time_ns[2]),
            cil_push_ms_order_wait: ms(c.push_time_ns[3]),
            cil_push_ms_data_flush_wait: ms(c.push_time_ns[4]),
            cil_push_ms_cpu_wait: ms(c.push_time_ns[5]),
            ioend_ms_cpu: ms(c.ioend_time_ns[0]),
            ioend_ms_cpu_wait: ms(c.ioend_time_ns[1]),
            iclog_ioend_ms_cpu: ms(c.ioend_log_time_ns[0]),
            iclog_ioend_ms_cpu_wait: ms(c.ioend_log_time_ns[1]),
            dio_complete_ms_cpu: ms(c.dio_time_ns[0]),
            dio_complete_ms_cpu_wait: ms(c.dio_time_ns[1]),
            buf_ioend_ms_cpu: ms(c.buf_ioend_time_ns),
            xfsaild_ms_cpu: ms(c.aild_time_ns[0]),
            xfsaild_ms_cpu_wait: ms(c.aild_time_ns[1]),
            reservation_overruns: self.monitor.reservation_overruns,
            rsum_reads: self.rt.alloc().map_or(0, |r| r.summary_reads()),
            hung: self.hung,
            events: c.events,
            trace_hash: format!("{:016x}", self.trace.hash()),
        }
    }
}

/// What the lab and the CLI read: views built by `view` and `why` from a shared borrow (they
/// cannot change the simulation).
impl Sim {
    pub fn view(&self) -> View {
        view::view(self)
    }
    /// Who runs on each CPU of the pool, and who waits for one; None without a pool.
    pub fn cpus_view(&self) -> Option<CpusView> {
        view::cpus_view(self)
    }
    pub fn iclogs_view(&self) -> IclogsView {
        view::iclogs_view(self)
    }
    pub fn log_space_view(&self) -> LogSpaceView {
        view::log_space_view(self)
    }
    pub fn cil_view(&self) -> CilView {
        view::cil_view(self)
    }
    pub fn devices_view(&self) -> Vec<DevicePanel> {
        view::devices_view(self)
    }
    pub fn ail_view(&self) -> AilView {
        view::ail_view(self)
    }
    pub fn tasks_view(&self) -> TasksView {
        view::tasks_view(self)
    }
    /// The chain for writer `w`, outermost wait first; empty when it is not blocked.
    pub fn why_blocked(&self, w: TaskId) -> Vec<String> {
        why::why_blocked(self, w)
    }
    /// The realtime allocator's summary, `cols` columns wide; `None` without a realtime device.
    pub fn rt_view(&self, cols: usize) -> Option<RtView> {
        view::rt_view(self, cols)
    }
}

/// Commands and the log region as the host would read it.
impl Sim {
    /// Uses `uuid` in record headers (an export into a real image needs the image's UUID).
    pub fn set_uuid(&mut self, uuid: [u8; 16]) -> Result<(), String> {
        if self.counters.events > 0 {
            return Err("set_uuid: the run has already started".into());
        }
        self.uuid = uuid;
        Ok(())
    }

    /// Keeps every device request with its data from now on (for the dm-log-writes export).
    pub fn record_io(&mut self) {
        for d in &mut self.devs {
            d.record();
        }
    }

    /// Whether a request tag is file data (everything else is log or metadata: REQ_META).
    pub fn is_file_data(tag: u64) -> bool {
        matches!(IoTag::unpack(tag), IoTag::Data(_))
    }

    /// Applies a user command at the current instant.
    pub fn command(&mut self, cmd: Command) {
        match cmd {
            Command::ForceLog => self.xfs_log_force_async(TASK_LOG_WORKER),
        }
    }

    /// Stamps the CRCs still pending on stable media (`PendingCrc`): recovery reads only
    /// settled devices. Cheap when nothing is pending; the cache's writes stamp their own.
    pub fn settle_crcs(&mut self) {
        for d in &mut self.devs {
            d.settle_crcs();
        }
    }

    /// Log records whose CRC is still to stamp on stable media.
    pub fn crcs_pending(&self) -> usize {
        self.devs.iter().map(|d| d.stable().crcs_pending()).sum()
    }

    /// The log region as the host would read it now (device cache over stable media).
    pub fn log_region(&self) -> Vec<u8> {
        let dev = &self.devs[0];
        let mut stable = dev.stable().clone();
        stable.settle();
        let mut cached = SectorMap::new();
        for w in dev.cached() {
            cached.write(w.sector, &w.full_data());
        }
        let (start, end) = (self.log_start, self.log_start + self.geo.log_bb as u64);
        let bb = BBSIZE as usize;
        let mut out = vec![0u8; self.geo.log_bb as usize * bb];
        for layer in [&stable, &cached] {
            for s in layer.sectors_in(start, end) {
                if let Some(d) = layer.get(s) {
                    let o = (s - start) as usize * bb;
                    out[o..o + bb].copy_from_slice(d);
                }
            }
        }
        out
    }

    /// Where writer `w`'s current fsync's data goes on the data device.
    pub fn data_daddr(&self, w: u32) -> u64 {
        let version = self.writers[w as usize].data_version();
        layout::data_daddr(&self.scenario, self.geo.log_bb, self.items.len() as u64, w, version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::find;
    use crate::units::NS_PER_MS;

    #[test]
    fn each_milestone_is_found_and_playing_there_is_the_same_run() {
        let s = find("cil-throttle-32mb").unwrap();
        for m in Milestone::ALL {
            let mut sim = Sim::new(&s).unwrap();
            assert!(sim.run_to_next(m, NS_PER_SEC, 10_000_000), "{m:?} found within a second");
            let (at, events, hash) = (sim.now(), sim.events(), sim.trace_hash());
            // The step stopped on the event that is the moment: nothing after it ran.
            let mut straight = Sim::new(&s).unwrap();
            while straight.events() < events {
                straight.step();
            }
            assert_eq!((straight.now(), straight.trace_hash()), (at, hash), "{m:?}");
        }
    }

    #[test]
    fn a_moment_that_never_comes_stops_at_the_limit() {
        let s = find("fsync-heavy").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        assert!(!sim.run_to_next(Milestone::ThrottleWait, 2_000_000, 1_000_000));
        assert!(sim.now() <= 2_000_000);
    }

    #[test]
    fn a_watch_stops_on_the_event_that_makes_it_true() {
        let s = find("cil-throttle-32mb").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        let (ran, hit) = sim.run_until_watched(500 * NS_PER_MS, 10_000_000, &[Watch::ThrottleDepthAbove(2)]);
        let (w, what) = hit.expect("the throttle queue grows past 2");
        assert_eq!(w, Watch::ThrottleDepthAbove(2));
        assert!(what.contains("depth 3 > 2"), "{what}");
        assert_eq!(sim.cil.push_waiters().len(), 3, "stopped on the third sleeper, not later");
        // A straight run to the same event count is the same state.
        let mut straight = Sim::new(&s).unwrap();
        while straight.events() < ran {
            straight.step();
        }
        assert_eq!(straight.trace_hash(), sim.trace_hash());
    }

    #[test]
    fn other_watches_fire_and_unmet_ones_run_to_the_end() {
        let s = find("small-crash").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        let (_, hit) = sim.run_until_watched(NS_PER_MS, 1_000_000, &[Watch::FirstFlush]);
        assert!(hit.is_some_and(|(w, _)| w == Watch::FirstFlush));
        let mut sim = Sim::new(&s).unwrap();
        let (_, hit) = sim.run_until_watched(10 * NS_PER_MS, 1_000_000, &[Watch::TaskWaitingLonger(100_000)]);
        assert!(hit.is_some_and(|(_, s)| s.contains("> 0.100 ms")));
        let mut sim = Sim::new(&s).unwrap();
        let (_, hit) = sim.run_until_watched(5 * NS_PER_MS, 1_000_000, &[Watch::FreeLogBelow(1024)]);
        assert!(hit.is_none());
        assert_eq!(sim.now(), 5 * NS_PER_MS);
    }
}
