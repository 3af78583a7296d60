//! The metrics report of a run, computed from the counters, the devices and the monitor.

use super::Sim;
use crate::metrics::{ms, Metrics};
use crate::units::NS_PER_SEC;

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
