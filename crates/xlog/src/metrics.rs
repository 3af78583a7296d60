//! Counters a run accumulates, and the metrics report computed from them.

use hdrhistogram::Histogram;
use serde::Serialize;

#[derive(Clone, Debug)]
pub struct Counters {
    pub transactions: u64,
    /// Log transactions committed to the CIL (the kernel's `xs_trans_sync + xs_trans_async`):
    /// one per operation, but two per O_DSYNC append (its timestamp, then its I/O completion).
    pub tx_committed: u64,
    /// Synced appends that logged both their timestamp update and their conversion, and
    /// those whose two transactions went into two checkpoints (CIL sequences).
    pub append_tx_pairs: u64,
    pub append_pairs_split: u64,
    pub latency_ns: Histogram<u64>,
    pub grant_head_waits: u64,
    /// `agi_lock=on`: creates that slept on their AG's AGI buffer lock.
    pub agi_lock_waits: u64,
    pub iclog_writes: u64,
    pub log_blocks: u64,
    pub noiclog_events: u64,
    pub log_forces: u64,
    /// fsyncs that skipped their own data-device flush because the log force did one.
    pub fsync_flushes_skipped: u64,
    pub log_force_sleeps: u64,
    pub bytes_logged: u64,
    /// File data of acknowledged fsyncs.
    pub data_bytes_synced: u64,
    pub metadata_writebacks: u64,
    /// Device writes xfsaild issued for them (an inode cluster's run is one).
    pub metadata_writes: u64,
    pub metadata_reads: u64,
    /// xfsaild passes (`xs_push_ail`), log forces they made (`xs_push_ail_flush`), and wakeups
    /// that found xfsaild mid-pass and were lost.
    pub xfsaild_passes: u64,
    pub xfsaild_log_forces: u64,
    pub xfsaild_wakeups_lost: u64,
    /// Items xfsaild's passes met pinned (`xs_push_ail_pinned`).
    pub xfsaild_items_pinned: u64,
    pub checkpoints: u64,
    /// Cache flushes issued when the last checkpoint completed: the next one's do not count.
    pub flushes_at_checkpoint: u64,
    pub checkpoint_bytes: Histogram<u64>,
    pub checkpoint_iclogs: u64,
    pub commit_records: u64,
    pub background_pushes: u64,
    pub cil_throttle_waits: u64,
    pub cil_throttle_depth_max: u64,
    /// Pushes that found tasks on `xc_push_wait`: checkpoints whose context throttled.
    pub checkpoints_throttled: u64,
    /// Pushes that left throttled tasks asleep (the 5.9 throttle with space gone back).
    pub cil_throttle_wakes_skipped: u64,
    /// 5.14: commit iclogs released after the tail moved past the push's up-front flush.
    pub tail_moved_after_flush: u64,
    /// ... of which single-iclog checkpoints: their commit iclog has FUA but no PREFLUSH.
    pub tail_moved_fua_only: u64,
    pub shadow_allocations: u64,
    /// From `queue_work` on the CIL push work to a worker starting it (`workqueue_*`).
    pub push_dispatch_ns: Histogram<u32>,
    /// From a worker starting the push work to its return.
    pub push_run_ns: Histogram<u32>,
    /// Push workers' time by `PushState::time_bucket`, then waiting runnable for a CPU.
    pub push_time_ns: [u64; 6],
    /// `cpu_model=kernel`: the I/O completion workers' time on a CPU, and runnable waiting for one.
    pub ioend_time_ns: [u64; 2],
    /// `cpu_model=kernel`: the log's I/O completion work's time on a CPU, and runnable waiting.
    pub ioend_log_time_ns: [u64; 2],
    /// `cpu_model=kernel` on `vm-disk`: the loop device's completion work's time on a CPU, and
    /// runnable waiting for its CPU; the metadata buffers' completions it ran.
    pub dio_time_ns: [u64; 2],
    pub buf_ioend_time_ns: u64,
    /// `cpu_model=kernel`: xfsaild's time on a CPU of the pool, and runnable waiting for one.
    pub aild_time_ns: [u64; 2],
    pub events: u64,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            transactions: 0,
            tx_committed: 0,
            append_tx_pairs: 0,
            append_pairs_split: 0,
            latency_ns: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds"),
            grant_head_waits: 0,
            agi_lock_waits: 0,
            iclog_writes: 0,
            log_blocks: 0,
            noiclog_events: 0,
            log_forces: 0,
            fsync_flushes_skipped: 0,
            log_force_sleeps: 0,
            bytes_logged: 0,
            data_bytes_synced: 0,
            metadata_writebacks: 0,
            metadata_writes: 0,
            metadata_reads: 0,
            xfsaild_passes: 0,
            xfsaild_log_forces: 0,
            xfsaild_items_pinned: 0,
            xfsaild_wakeups_lost: 0,
            checkpoints: 0,
            flushes_at_checkpoint: 0,
            checkpoint_bytes: Histogram::new_with_bounds(1, 1 << 40, 2).expect("valid histogram bounds"),
            checkpoint_iclogs: 0,
            commit_records: 0,
            background_pushes: 0,
            cil_throttle_waits: 0,
            cil_throttle_depth_max: 0,
            checkpoints_throttled: 0,
            cil_throttle_wakes_skipped: 0,
            tail_moved_after_flush: 0,
            tail_moved_fua_only: 0,
            shadow_allocations: 0,
            push_dispatch_ns: Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("valid histogram bounds"),
            push_run_ns: Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("valid histogram bounds"),
            push_time_ns: [0; 6],
            ioend_time_ns: [0; 2],
            ioend_log_time_ns: [0; 2],
            dio_time_ns: [0; 2],
            buf_ioend_time_ns: 0,
            aild_time_ns: [0; 2],
            events: 0,
        }
    }
}

/// The report of one run; keys are snake_case with units last (the CLI's JSON keys).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Metrics {
    pub sim_seconds: f64,
    pub transactions: u64,
    /// Log transactions committed (two per O_DSYNC append, one per other operation).
    pub tx_committed: u64,
    pub tx_per_sec: f64,
    pub latency_ms_p50: f64,
    pub latency_ms_p99: f64,
    pub latency_ms_p995: f64,
    /// Log bytes written per second.
    pub bandwidth_mb_s: f64,
    /// File data made durable per second by acknowledged fsyncs (source thread 000's "BW").
    pub data_mb_s: f64,
    pub grant_head_waits: u64,
    /// `agi_lock=on`: creates that slept on their AG's AGI buffer lock (`xfs_buf_lock` in
    /// `xfs_dialloc`).
    pub agi_lock_waits: u64,
    pub checkpoints: u64,
    pub checkpoint_kib_p50: f64,
    pub checkpoint_kib_max: f64,
    pub iclogs_per_checkpoint: f64,
    /// Flushes issued up to the last completed checkpoint, per checkpoint.
    pub cache_flushes_per_checkpoint: f64,
    pub commit_records: u64,
    pub iclog_writes: u64,
    pub log_blocks: u64,
    /// Times the log head wrapped (its cycle at the end, less the first).
    pub log_cycles: u64,
    pub noiclog_events: u64,
    pub log_forces: u64,
    /// fsyncs that skipped their own data-device flush because the log force did one.
    pub fsync_flushes_skipped: u64,
    pub cache_flushes: u64,
    /// Flushes and PREFLUSHes the block layer dropped: the device has no volatile cache.
    pub cache_flushes_elided: u64,
    pub fua_writes: u64,
    pub device_writes: u64,
    pub bytes_logged: u64,
    pub ail_pushes: u64,
    pub metadata_writebacks: u64,
    /// Device writes that carried them: an inode goes with the rest of its cluster.
    pub metadata_writes: u64,
    pub metadata_reads: u64,
    /// xfsaild passes (`xs_push_ail` in `/proc/fs/xfs/stat`).
    pub xfsaild_passes: u64,
    /// Log forces xfsaild made for pinned items (`xs_push_ail_flush`).
    pub xfsaild_log_forces: u64,
    /// Items xfsaild's passes met pinned (`xs_push_ail_pinned`).
    pub xfsaild_items_pinned: u64,
    /// Wakeups (a new target, a push-all request) that came while xfsaild ran a pass: lost,
    /// so it slept its pass's timeout.
    pub xfsaild_wakeups_lost: u64,
    pub background_pushes: u64,
    pub cil_throttle_waits: u64,
    pub cil_throttle_depth_max: u64,
    /// Pushes that found tasks on `xc_push_wait`: checkpoints whose context throttled.
    pub checkpoints_throttled: u64,
    /// Pushes that left throttled tasks asleep (the 5.9 throttle with space gone back).
    pub cil_throttle_wakes_skipped: u64,
    /// Synced appends that logged a timestamp update and a conversion, and of those the ones
    /// whose two transactions went into two checkpoints.
    pub append_tx_pairs: u64,
    pub append_pairs_split: u64,
    /// 5.14: commit iclogs released after the tail moved past the push's up-front flush.
    pub tail_moved_after_flush: u64,
    /// ... of which single-iclog checkpoints: their commit iclog has FUA but no PREFLUSH.
    pub tail_moved_fua_only: u64,
    /// Log records written without PREFLUSH whose `h_tail_lsn` is past the tail at the data
    /// device's latest flush: the tail moved for metadata still in the volatile cache.
    pub records_tail_uncovered: u64,
    /// ... of which carry a commit record: a crash can keep it and lose that metadata.
    pub commit_iclogs_tail_uncovered: u64,
    /// Brian's race (Jan 2021): log writes without PREFLUSH that overwrite log blocks whose
    /// metadata no *completed* flush has made stable (a flush still in flight orders nothing).
    pub log_overwrites_unflushed: u64,
    /// Start records written before an older checkpoint's (concurrent pushes, unordered).
    pub start_records_unordered: u64,
    pub shadow_allocations: u64,
    /// The CIL push work's dispatch delay (queued to started) and run time, as the kernel's
    /// `workqueue_queue_work`/`_execute_start`/`_execute_end` give them.
    pub cil_push_dispatch_ms_p50: f64,
    pub cil_push_dispatch_ms_p99: f64,
    pub cil_push_dispatch_ms_max: f64,
    pub cil_push_run_ms_p50: f64,
    pub cil_push_run_ms_p99: f64,
    pub cil_push_run_ms_max: f64,
    /// Runs of the push work (`xlog_cil_push_work` started and returned).
    pub cil_push_runs: u64,
    /// Push workers' time in all runs: on a CPU, waiting for a free iclog, for an earlier
    /// iclog before the commit record, behind earlier checkpoints' records, for v5.14's
    /// data-device flush (the kernel's blocking stacks split it the same way), and runnable
    /// waiting for a CPU of the pool (`cpus`; `sched_switch` to `sched_waking` on the kernel).
    pub cil_push_ms_cpu: f64,
    pub cil_push_ms_iclog_wait: f64,
    pub cil_push_ms_prev_iclog_wait: f64,
    pub cil_push_ms_order_wait: f64,
    pub cil_push_ms_data_flush_wait: f64,
    pub cil_push_ms_cpu_wait: f64,
    /// `cpu_model=kernel`: the O_DSYNC appends' I/O completion workers (`xfs_end_io`) on a CPU,
    /// and runnable waiting for one (`kernel run`'s `kernel_threads.ioend_completion`).
    pub ioend_ms_cpu: f64,
    pub ioend_ms_cpu_wait: f64,
    /// `cpu_model=kernel`: the log's I/O completion work (`xlog_ioend_work`: iclog completions
    /// and checkpoints' callbacks) on a CPU, and runnable waiting for one (`kernel run`'s
    /// `kernel_threads.iclog_completion`).
    pub iclog_ioend_ms_cpu: f64,
    pub iclog_ioend_ms_cpu_wait: f64,
    /// `cpu_model=kernel` on `vm-disk`: the loop device's completions (`iomap_dio_complete_work`
    /// on the CPU that takes the host disk's interrupts) on it, and runnable waiting for it.
    pub dio_complete_ms_cpu: f64,
    pub dio_complete_ms_cpu_wait: f64,
    /// `cpu_model=kernel` on `vm-disk`: the metadata buffers' write completions
    /// (`xfs_buf_ioend_work`), which the model runs in the loop's completion worker's turn.
    pub buf_ioend_ms_cpu: f64,
    /// `cpu_model=kernel`: xfsaild on a CPU (its passes' writeback), and runnable waiting for
    /// one (`kernel run`'s `kernel_threads.xfsaild`).
    pub xfsaild_ms_cpu: f64,
    pub xfsaild_ms_cpu_wait: f64,
    pub reservation_overruns: u64,
    pub rsum_reads: u64,
    pub hung: bool,
    pub events: u64,
    pub trace_hash: String,
}

pub fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The report's sections for people (`loglab run` without `--json`, the lab's tables): each
/// metric key once, with its unit ("" for a count).
pub const REPORT_GROUPS: &[(&str, &[(&str, &str)])] = &[
    (
        "Throughput and latency",
        &[
            ("sim_seconds", "s"),
            ("transactions", ""),
            ("tx_committed", ""),
            ("tx_per_sec", "tx/s"),
            ("latency_ms_p50", "ms"),
            ("latency_ms_p99", "ms"),
            ("latency_ms_p995", "ms"),
            ("bandwidth_mb_s", "MB/s"),
            ("data_mb_s", "MB/s"),
            ("bytes_logged", "bytes"),
        ],
    ),
    (
        "Log and grant heads",
        &[
            ("iclog_writes", ""),
            ("log_blocks", "blocks"),
            ("log_cycles", ""),
            ("noiclog_events", ""),
            ("log_forces", ""),
            ("grant_head_waits", ""),
            ("agi_lock_waits", ""),
            ("reservation_overruns", ""),
        ],
    ),
    (
        "CIL and checkpoints",
        &[
            ("checkpoints", ""),
            ("commit_records", ""),
            ("checkpoint_kib_p50", "KiB"),
            ("checkpoint_kib_max", "KiB"),
            ("iclogs_per_checkpoint", ""),
            ("background_pushes", ""),
            ("cil_throttle_waits", ""),
            ("cil_throttle_depth_max", "tasks"),
            ("checkpoints_throttled", ""),
            ("cil_throttle_wakes_skipped", ""),
            ("shadow_allocations", ""),
            ("append_tx_pairs", ""),
            ("append_pairs_split", ""),
            ("cil_push_dispatch_ms_p50", "ms"),
            ("cil_push_dispatch_ms_p99", "ms"),
            ("cil_push_dispatch_ms_max", "ms"),
            ("cil_push_run_ms_p50", "ms"),
            ("cil_push_run_ms_p99", "ms"),
            ("cil_push_run_ms_max", "ms"),
            ("cil_push_runs", ""),
            ("cil_push_ms_cpu", "ms"),
            ("cil_push_ms_iclog_wait", "ms"),
            ("cil_push_ms_prev_iclog_wait", "ms"),
            ("cil_push_ms_order_wait", "ms"),
            ("cil_push_ms_data_flush_wait", "ms"),
            ("cil_push_ms_cpu_wait", "ms"),
            ("ioend_ms_cpu", "ms"),
            ("ioend_ms_cpu_wait", "ms"),
            ("iclog_ioend_ms_cpu", "ms"),
            ("iclog_ioend_ms_cpu_wait", "ms"),
            ("dio_complete_ms_cpu", "ms"),
            ("dio_complete_ms_cpu_wait", "ms"),
            ("buf_ioend_ms_cpu", "ms"),
            ("xfsaild_ms_cpu", "ms"),
            ("xfsaild_ms_cpu_wait", "ms"),
        ],
    ),
    (
        "AIL and metadata",
        &[
            ("ail_pushes", ""),
            ("metadata_writebacks", ""),
            ("metadata_writes", ""),
            ("metadata_reads", ""),
            ("xfsaild_passes", ""),
            ("xfsaild_log_forces", ""),
            ("xfsaild_items_pinned", ""),
            ("xfsaild_wakeups_lost", ""),
            ("rsum_reads", ""),
        ],
    ),
    (
        "Devices",
        &[
            ("device_writes", ""),
            ("cache_flushes", ""),
            ("cache_flushes_elided", ""),
            ("cache_flushes_per_checkpoint", ""),
            ("fua_writes", ""),
            ("fsync_flushes_skipped", ""),
        ],
    ),
    (
        "Crash-relevant counters",
        &[
            ("tail_moved_after_flush", ""),
            ("tail_moved_fua_only", ""),
            ("records_tail_uncovered", ""),
            ("commit_iclogs_tail_uncovered", ""),
            ("log_overwrites_unflushed", ""),
            ("start_records_unordered", ""),
            ("hung", ""),
        ],
    ),
    ("Run", &[("events", ""), ("trace_hash", "")]),
];
