//! Read-only accessors: what the crash explorer, the CLI and the lab may read of a run, and
//! its metrics report (from the counters, the devices and the monitor).

use super::{History, Item, PushState, Sim, WriterState};
use crate::ail::Ail;
use crate::cil::Cil;
use crate::device::Device;
use crate::geometry::Geometry;
use crate::log::Xlog;
use crate::metrics::{ms, Metrics};
use crate::scenario::Scenario;
use crate::units::{Ns, NS_PER_SEC};

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
        self.inodes_reused
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
        self.hash.0
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
        let iclogs = self.log.iclogs().iter().map(|ic| ic.data.len() as u64).sum::<u64>();
        let cache = self.devs.iter().map(|d| d.cached_bytes()).sum::<u64>();
        let history = self.history.checkpoints.iter().map(|c| 64 + c.items.len() as u64 * 16).sum::<u64>()
            + self.history.records.len() as u64 * 16
            + self.history.base.len() as u64 * 64;
        // A BTreeMap entry: key, Arc and presence bits, with node overhead.
        let page_tables = self.devs.iter().map(|d| d.stable().pages() as u64 * 48).sum::<u64>();
        let dirs = self.writers.iter().map(|w| w.dir().approx_bytes()).sum::<u64>();
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
            xfsaild_wakeups_lost: c.xfsaild_wakeups_lost,
            background_pushes: c.background_pushes,
            cil_throttle_waits: c.cil_throttle_waits,
            cil_throttle_depth_max: c.cil_throttle_depth_max,
            checkpoints_throttled: c.checkpoints_throttled,
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
            xfsaild_ms_cpu: ms(c.aild_time_ns[0]),
            xfsaild_ms_cpu_wait: ms(c.aild_time_ns[1]),
            reservation_overruns: self.monitor.reservation_overruns,
            rsum_reads: self.rt.as_ref().map_or(0, |r| r.summary_reads),
            hung: self.hung,
            events: c.events,
            trace_hash: format!("{:016x}", self.hash.0),
        }
    }
}
