//! Named scenarios: the presets `loglab presets` lists, the lab opens, and the bug zoo.

use crate::scenario::{
    AilPush, CilSpace, CommitOrdering, CrashModel, DeviceClass, Directory, Duration, FlushPolicy, ForceFlush, SataFua,
    Scenario, Size, StartRecordOrder, TailUpdate, Throttle, TxWorkAt, UnitResRoundoff, WorkloadKind, Xfsaild,
};
use crate::units::{NS_PER_MS, NS_PER_SEC, NS_PER_US};

pub struct Preset {
    pub name: &'static str,
    pub about: &'static str,
    build: fn() -> Scenario,
    /// For a bug-zoo preset: the settings that turn the historic bug into the fix.
    pub fix: &'static [(&'static str, &'static str)],
}

impl Preset {
    pub fn scenario(&self) -> Scenario {
        (self.build)()
    }
    /// The same scenario with the bug fixed (unchanged for presets that are not bugs).
    pub fn fixed(&self) -> Scenario {
        let mut s = self.scenario();
        for (k, v) in self.fix {
            s.set(k, v).expect("preset fixes use valid settings");
        }
        s
    }
    pub fn is_bug(&self) -> bool {
        !self.fix.is_empty()
    }
    /// How the lab plays it: the speed at which its headline event shows soon after Play.
    pub fn play(&self) -> PlayHint {
        PLAY.iter()
            .find(|p| p.0 == self.name)
            .map(|&(_, speed_ns, metric, headline)| PlayHint { speed_ns, metric, headline })
            .unwrap_or(PlayHint { speed_ns: 10 * NS_PER_US, metric: "transactions", headline: "the first transaction" })
    }
    /// Which list a picker shows it in: "bug zoo" (historic bugs with their fixes), "source
    /// threads" (the source threads' experiments) or "workloads".
    pub fn group(&self) -> &'static str {
        if self.is_bug() {
            "bug zoo"
        } else if self.about.starts_with("source thread ") {
            "source threads"
        } else {
            "workloads"
        }
    }
}

pub const DEFAULT_PRESET: &str = "fsync-heavy";

/// A small fsync workload whose log wraps several times a second: fast to crash-test.
fn small_base() -> Scenario {
    Scenario {
        workload: WorkloadKind::FsyncHeavy,
        writers: 4,
        fsync: true,
        log_size: Size(2 << 20),
        fs_size: Size(64 << 20),
        tx_logres: 20_000,
        tx_logcount: 2,
        duration: Duration(NS_PER_SEC),
        // The crash tests and the bug zoo were built on the earlier xfsaild pacing, and on
        // reservations pushing the AIL (the kernels of their bugs predate 6.11) and the
        // CIL counting its space globally (before 6.0).
        xfsaild: Xfsaild::Backoff,
        ail_push: AilPush::Grant,
        cil_space: CilSpace::Global,
        tx_work: TxWorkAt::Before,
        ..Scenario::default()
    }
}

/// Creates without fsync on a small log: multi-iclog checkpoints and steady AIL pushing.
fn busy_base() -> Scenario {
    Scenario {
        workload: WorkloadKind::FsmarkCreate,
        writers: 16,
        fsync: false,
        log_size: Size(4 << 20),
        fs_size: Size(256 << 20),
        tx_logres: 20_000,
        tx_logcount: 2,
        tx_items: 4,
        think: Duration(5 * NS_PER_US),
        duration: Duration(300 * NS_PER_MS),
        // Small transactions on a small log: the bug zoo's exposures were built on them.
        directory: Directory::Chunk,
        xfsaild: Xfsaild::Backoff,
        ail_push: AilPush::Grant,
        cil_space: CilSpace::Global,
        tx_work: TxWorkAt::Before,
        ..Scenario::default()
    }
}

/// fsmark-like creates (tr_create, no fsync) with `iclog` byte iclogs.
fn fsmark(iclog: u64) -> Scenario {
    Scenario {
        workload: WorkloadKind::FsmarkCreate,
        writers: 16,
        fsync: false,
        tx_logres: 214_000,
        tx_logcount: 2,
        tx_items: 4,
        tx_chunks: 4,
        // CPU time of one create (inode allocation and init, directory insert), inside its
        // transaction: ~20 us.
        think: Duration(20 * NS_PER_US),
        iclog_size: Size(iclog),
        ..Scenario::default()
    }
}

/// The kernel of source thread 003 (5.7/5.8): flushes on every iclog, one push at a time,
/// commit records unordered, the 5.7 throttle, reservations push the AIL, no FUA from libata;
/// fsmark on a SATA SSD.
fn thread003() -> Scenario {
    Scenario {
        ail_push: AilPush::Grant,
        cil_space: CilSpace::Global,
        sata_fua: SataFua::Emulated,
        flush: FlushPolicy::Legacy,
        cil_pushers: 1,
        throttle: Throttle::V57,
        commit_ordering: CommitOrdering::None,
        device: DeviceClass::SataSsd,
        duration: Duration(5 * NS_PER_SEC),
        ..fsmark(32 << 10)
    }
}

/// Source thread 000's append size, from its tables (it names none). 200 writers in a closed loop
/// complete 200 / (mean latency) appends per second, and the mean is at most the p99.5, so
/// an append is at most BW x p99.5 / 200: 156 KB on the 4-HDD 160 MB row (364 MB/s, 86 ms),
/// the tightest of the table's rows. The largest power of two under it is 128 KiB.
const THREAD000_APPEND: u64 = 128 << 10;

/// How the lab plays a preset: the virtual time per frame at which its headline event shows
/// within a few seconds of Play (at 60 frames a second, and at most `FRAME_EVENT_BUDGET`
/// events a frame), and that event, as a metric that becomes nonzero when it happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayHint {
    pub speed_ns: u64,
    pub metric: &'static str,
    pub headline: &'static str,
}

/// Each preset's `PlayHint`. The times are when the event first happens in the model today
/// (`loglab run --preset P --until T`), for choosing the speed; they are not asserted.
const PLAY: &[(&str, u64, &str, &str)] = &[
    ("fsync-heavy", 10 * NS_PER_US, "checkpoints", "the first checkpoint written to the log (0.7 ms)"),
    ("fsmark-create", NS_PER_MS, "checkpoints", "the first CIL push: a checkpoint of thousands of creates (82 ms)"),
    ("sync-append", 100 * NS_PER_US, "checkpoints", "the first checkpoint, forced by an fsync (19 ms)"),
    ("seed-log-size", 100 * NS_PER_US, "grant_head_waits", "the first reservation asleep on the grant head (7 ms)"),
    ("fsmark-create-32k", NS_PER_MS, "checkpoints", "the first checkpoint (82 ms)"),
    ("fsmark-create-256k", NS_PER_MS, "checkpoints", "the first checkpoint (82 ms)"),
    (
        "fsmark-64way-256k",
        NS_PER_MS,
        "cil_throttle_waits",
        "the first writer caught by the CIL's hard throttle (106 ms)",
    ),
    ("cil-throttle-32mb", NS_PER_MS, "cil_throttle_waits", "the first writer asleep on xc_push_wait (53 ms)"),
    ("cil-throttle-64mb", NS_PER_MS, "cil_throttle_waits", "the first writer asleep on xc_push_wait (53 ms)"),
    ("cil-throttle-rhythm", NS_PER_MS, "checkpoints", "the first checkpoint, pushed while the creates go on (146 ms)"),
    (
        "btree-relog",
        10 * NS_PER_US,
        "shadow_allocations",
        "the first shadow buffer allocated for a relogged btree block",
    ),
    ("dir-remove", 10 * NS_PER_US, "shadow_allocations", "the first shadow buffer of a shrinking attribute fork"),
    ("rt-alloc-fragmented", 10 * NS_PER_US, "rsum_reads", "the first realtime summary block read"),
    ("small-crash", 10 * NS_PER_US, "checkpoints", "the first checkpoint (0.6 ms)"),
    (
        "series-v1-flush-race",
        NS_PER_MS,
        "log_overwrites_unflushed",
        "Brian's race: a log write over metadata still in the cache (36 ms)",
    ),
    ("series-v1-external-log", 10 * NS_PER_US, "checkpoints", "the first commit record on the external log (0.7 ms)"),
    (
        "throttle-v5.9-hang",
        100 * NS_PER_MS,
        "cil_throttle_waits",
        "the creators caught by the throttle (3 ms); by about 7 s they stay asleep for good",
    ),
    (
        "unit-res-1x-overrun",
        100 * NS_PER_MS,
        "reservation_overruns",
        "a transaction logging more than it reserved (4.8 s)",
    ),
    (
        "tail-update-unflushed",
        NS_PER_MS,
        "commit_iclogs_tail_uncovered",
        "a commit iclog whose tail its flush did not cover (44 ms)",
    ),
    (
        "force-without-flush",
        100 * NS_PER_US,
        "fsync_flushes_skipped",
        "an fsync acknowledged without a data-device flush (3 ms)",
    ),
    (
        "wait-future-iclog",
        NS_PER_MS,
        "cil_throttle_waits",
        "the writers throttled (7 ms); by 50 ms a push waits on a newer iclog and nothing moves",
    ),
    (
        "unordered-start-records",
        10 * NS_PER_MS,
        "start_records_unordered",
        "two start records written out of order (203 ms)",
    ),
];

pub static PRESETS: &[Preset] = &[
    Preset {
        name: "fsync-heavy",
        about: "16 writers, small transactions, each followed by an fsync (dbench-like)",
        build: || Scenario { workload: WorkloadKind::FsyncHeavy, writers: 16, fsync: true, ..Scenario::default() },
        fix: &[],
    },
    Preset {
        name: "fsmark-create",
        about: "16 writers creating files (tr_create), no fsync, 8 x 32KiB iclogs",
        build: || fsmark(32 << 10),
        fix: &[],
    },
    Preset {
        name: "sync-append",
        about: "200 writers appending 128KiB synchronously (tr_write + fsync), 220GiB fs: the source thread 000 shape",
        build: || Scenario {
            workload: WorkloadKind::SyncAppend,
            writers: 200,
            fsync: true,
            tx_items: 3,
            append_size: Size(THREAD000_APPEND),
            ..Scenario::default()
        },
        fix: &[],
    },
    Preset {
        name: "seed-log-size",
        about: "source thread 000: 200 writers appending synchronously to a 220GiB, 44-AG fs on 4 HDDs; vary log_size",
        build: || Scenario {
            workload: WorkloadKind::SyncAppend,
            writers: 200,
            fsync: true,
            device: DeviceClass::HddX4,
            fs_size: Size(220 << 30),
            agcount: 44,
            // The smallest log of the source thread's table; `--vary log_size=...` walks the rest.
            log_size: Size(10 << 20),
            // tr_write at 44 AGs of 5GiB (allocbt height 3), reflink log count 4.
            tx_logres: 109_048,
            tx_logcount: 4,
            tx_items: 3,
            append_size: Size(THREAD000_APPEND),
            // One free-space or bmap btree block not in memory per allocation: the
            // reservation stays out for a random read (a seek on disks, a page read on flash).
            tx_reads: 1,
            duration: Duration(5 * NS_PER_SEC),
            // Source thread 000's kernel (2022) predates 6.11: reservations push the AIL; and 6.3:
            // libata sent no FUA, so each FUA write is a write and a flush.
            ail_push: AilPush::Grant,
            cil_space: CilSpace::Global,
            sata_fua: SataFua::Emulated,
            ..Scenario::default()
        },
        fix: &[],
    },
    Preset {
        name: "fsmark-create-32k",
        about: "fsmark-create with 8 x 32KiB iclogs (the default logbsize)",
        build: || fsmark(32 << 10),
        fix: &[],
    },
    Preset {
        name: "fsmark-create-256k",
        about: "fsmark-create with 8 x 256KiB iclogs (logbsize=256k): fewer, larger log writes",
        build: || fsmark(256 << 10),
        fix: &[],
    },
    Preset {
        name: "fsmark-64way-256k",
        about: "64-way fsmark creates, 256KiB iclogs, 512MiB log on a SATA SSD, one push at a time: \
                checkpoints grow to the hard throttle; compare flush=legacy|v5.14|upstream",
        build: || Scenario {
            writers: 64,
            device: DeviceClass::SataSsd,
            log_size: Size(512 << 20),
            fs_size: Size(1 << 40),
            cil_pushers: 1,
            // Source thread 001's kernels (2021) count the CIL's space globally, and libata sent no FUA.
            cil_space: CilSpace::Global,
            sata_fua: SataFua::Emulated,
            duration: Duration(NS_PER_SEC),
            ..fsmark(256 << 10)
        },
        fix: &[],
    },
    Preset {
        name: "cil-throttle-32mb",
        about: "source thread 003: 16-way fsmark on a 32MiB log; the CIL throttle catches every writer",
        build: || Scenario { writers: 16, log_size: Size(32 << 20), ..thread003() },
        fix: &[],
    },
    Preset {
        name: "cil-throttle-64mb",
        about: "source thread 003: 32-way fsmark on a 64MiB log; grant-head waits take over from the CIL throttle",
        build: || Scenario { writers: 32, log_size: Size(64 << 20), ..thread003() },
        fix: &[],
    },
    Preset {
        name: "cil-throttle-rhythm",
        about: "source thread 003 where CPUs set the pace: 16-way fsmark on 4 CPUs, NVMe, 32MiB log; the push keeps up and the throttle stays off",
        // The source thread's trace header shows #P:4; source thread 001's test machine has NVMe SSDs. The
        // creates, not the log, are the limit, so the push keeps up. (The source thread's rare
        // stutter, once in hundreds of log cycles, is not modelled yet.)
        build: || Scenario {
            writers: 16,
            log_size: Size(32 << 20),
            device: DeviceClass::Nvme,
            cpus: 4,
            duration: Duration(10 * NS_PER_SEC),
            ..thread003()
        },
        fix: &[],
    },
    Preset {
        name: "btree-relog",
        about: "btree blocks whose dirty range grows one 128-byte chunk per transaction (shadow buffers)",
        build: || Scenario { workload: WorkloadKind::BtreeChurn, writers: 8, fsync: false, ..Scenario::default() },
        fix: &[],
    },
    Preset {
        name: "dir-remove",
        about: "xattr removal: inode attribute forks shrink, so CIL space used goes backwards",
        build: || Scenario { workload: WorkloadKind::DirRemove, writers: 16, fsync: false, ..Scenario::default() },
        fix: &[],
    },
    Preset {
        name: "rt-alloc-fragmented",
        about: "source thread 004: near-allocations on a fragmented 8TiB realtime device; toggle rsum_cache",
        build: || Scenario {
            workload: WorkloadKind::RtAlloc,
            writers: 4,
            fsync: false,
            think: Duration(50 * NS_PER_US),
            duration: Duration(NS_PER_SEC),
            // Source thread 004's kernel (2018) predates 6.11: reservations push the AIL.
            ail_push: AilPush::Grant,
            cil_space: CilSpace::Global,
            ..Scenario::default()
        },
        fix: &[],
    },
    Preset {
        name: "small-crash",
        about: "4 fsync writers on a 2MiB log: small enough for exhaustive crash exploration",
        build: small_base,
        fix: &[],
    },
    // ---- the bug zoo: each shows one historic bug; `fix` is the correct variant ----
    Preset {
        name: "series-v1-flush-race",
        about: "bug: v1 flushes only the first iclog of a write; a later iclog lands first over log blocks \
                whose metadata is still in the cache (Brian, Jan 2021); fixed by 5.14's flush before the push",
        // Four NVMe queues let a later iclog complete before the first one's PREFLUSH; the race
        // only shows under `subset` (a prefix keeps the metadata that completed first). The fix
        // is the thread's answer, a data-device flush waited for before the first iclog: upstream's
        // PREFLUSH on the start record alone leaves it open (log_overwrites_unflushed). 128 KiB
        // iclogs keep a checkpoint within the XLOG_MAX_ICLOGS records recovery can repair: with
        // 32 KiB ones a reordering cache can leave a post-series log unrecoverable (README).
        // A 5 MiB log: on 4 MiB the fix's run also fills the log while a commit iclog stamped
        // early takes a later checkpoint, and writes a record past its stamped tail (the stale
        // stamped tail in the README, a hazard of its own, kept by its own test).
        build: || Scenario {
            flush: FlushPolicy::SeriesV1,
            device: DeviceClass::NvmeX4,
            iclog_size: Size(128 << 10),
            log_size: Size(5 << 20),
            ..busy_base()
        },
        fix: &[("flush", "v5.14")],
    },
    Preset {
        name: "series-v1-external-log",
        about: "bug: v1 on an external log sends the commit iclog without PREFLUSH|FUA (Chandan, Jan 2021)",
        build: || Scenario { flush: FlushPolicy::SeriesV1, external_log: true, ..small_base() },
        fix: &[("flush", "upstream")],
    },
    Preset {
        name: "throttle-v5.9-hang",
        about: "bug: the 5.9 throttle wakes only if the pushed CIL is over the limit; removals take it back \
                under, the creators stay asleep and the removers alone never refill it",
        // Two creators fill the CIL; two removers (cold tree: two reads per unlink) mark
        // blocks stale. 5.9's own flushes (PREFLUSH|FUA on every iclog) on this SSD make a
        // push slow enough that the next context reaches the hard limit behind it, and a
        // 4 MiB log keeps that limit small (1 MiB): the removals can then take it back
        // under before the push starts.
        build: || Scenario {
            workload: WorkloadKind::CreateRemove,
            throttle: Throttle::V59,
            writers: 4,
            fsync: false,
            cil_pushers: 1,
            device: DeviceClass::SataSsd,
            log_size: Size(4 << 20),
            flush: FlushPolicy::Legacy,
            fs_size: Size(1 << 30),
            tx_reads: 2,
            think: Duration(NS_PER_US),
            tx_work: TxWorkAt::Before,
            // The removals must land in the window before a push starts: with the block
            // layer's serialised flushes that takes a few seconds of pushes to line up.
            duration: Duration(10 * NS_PER_SEC),
            // As unit-res-1x-overrun: under `subset` a lone body iclog can outlive the cached
            // metadata its tail passed.
            crash_model: CrashModel::Prefix,
            directory: Directory::Chunk,
            xfsaild: Xfsaild::Backoff,
            ail_push: AilPush::Grant,
            cil_space: CilSpace::Global,
            ..Scenario::default()
        },
        fix: &[("throttle", "fixed")],
    },
    Preset {
        name: "unit-res-1x-overrun",
        about: "bug: v1 1/5 lost the factor 2 of the roundoff in xlog_calc_unit_res; 256KiB stripe unit",
        // fsyncs make every push commit_stable (its commit iclog goes out part-full); on an
        // 8 MiB log xfsaild's async forces catch pushes mid-copy (a second part-full iclog).
        build: || Scenario {
            unit_res_roundoff: UnitResRoundoff::X1,
            iclog_size: Size(256 << 10),
            lsu: Size(256 << 10),
            log_size: Size(8 << 20),
            fs_size: Size(1 << 30),
            writers: 32,
            tx_items: 8,
            tx_chunks: 32,
            tx_logres: 60_000,
            // A force catching a push mid-copy is rare (a few per 10 s on every seed).
            duration: Duration(10 * NS_PER_SEC),
            // Under `subset`, unflushed body iclogs whose tail passed cached metadata can
            // survive alone (upstream too); crash as generic/482 does.
            crash_model: CrashModel::Prefix,
            ..small_base()
        },
        fix: &[("unit_res_roundoff", "2x")],
    },
    Preset {
        name: "tail-update-unflushed",
        about: "bug: 5.14-rc1 moved the tail after the up-front flush without covering it (fixed in rc4)",
        // The exposure is a single-iclog checkpoint (FUA, no PREFLUSH) whose commit iclog is
        // stamped after metadata completions moved the tail past the push's flush: 256 KiB
        // iclogs hold whole checkpoints pushed by xfsaild's forces on a 2 MiB log under
        // constant tail pushing (metric commit_iclogs_tail_uncovered).
        build: || Scenario {
            flush: FlushPolicy::V514,
            tail_update: TailUpdate::Unflushed,
            device: DeviceClass::SataSsd,
            writers: 128,
            iclog_count: 2,
            iclog_size: Size(256 << 10),
            log_size: Size(2 << 20),
            fs_size: Size(64 << 20),
            duration: Duration(500 * NS_PER_MS),
            // Under `subset` a lone body iclog can outlive the cached metadata its tail
            // passed, in the fixed code too (see unit-res-1x-overrun).
            crash_model: CrashModel::Prefix,
            ..busy_base()
        },
        fix: &[("tail_update", "fixed")],
    },
    Preset {
        name: "force-without-flush",
        about: "bug: 5.14 log forces did not imply a data-device cache flush; fsync loses file data",
        // 8 writers: with 32, while a force waits for the push in flight (`flush_workqueue`)
        // other fsyncs' own flushes land and cover its data, and the window all but closes.
        build: || Scenario {
            flush: FlushPolicy::V514,
            force_flush: ForceFlush::None,
            writers: 8,
            device: DeviceClass::SataSsd,
            ..small_base()
        },
        fix: &[("force_flush", "fixed")],
    },
    Preset {
        name: "wait-future-iclog",
        about: "bug: 5.14-rc1 waited on ic_prev even when it was a newer iclog: the generic/019 hang",
        build: || Scenario {
            commit_ordering: CommitOrdering::V514Rc1,
            iclog_count: 2,
            iclog_size: Size(16 << 10),
            // Checkpoints here span ~40 iclogs: far past the XLOG_MAX_ICLOGS records recovery
            // can repair, so a cache that reorders them (`subset`) can leave a post-series log
            // unrecoverable. The hang needs no crash; its fix is crash-tested as generic/482 does.
            crash_model: CrashModel::Prefix,
            // A SATA SSD's flushes keep the older iclog in flight long enough for the push to
            // wait on its newer neighbour (on NVMe only some seeds hang). 8 writers: since the
            // push's copies cost what the kernel's do (200 ns a region), 4 and 8 writers meet
            // the race on every seed, 12 and more miss it.
            device: DeviceClass::SataSsd,
            writers: 8,
            ..busy_base()
        },
        fix: &[("commit_ordering", "fixed")],
    },
    Preset {
        name: "unordered-start-records",
        about: "bug: concurrent pushes wrote start records out of order; recovery stamps the wrong LSN",
        // 128-way fsmark on a 4MiB log on a SATA SSD with 5.14's up-front flush: pushes
        // overlap, and a big checkpoint's start record can trail a smaller later one's.
        // (With 512-byte inodes the NVMe default no longer stalls a push long enough; since
        // the SATA SSD's flushes share its one flush queue, 64 writers overtake too rarely.)
        // Crashes as generic/482 replays them (dm-log-writes): cached writes survive as a
        // completion-order prefix.
        build: || Scenario {
            flush: FlushPolicy::V514,
            start_record_order: StartRecordOrder::Unordered,
            crash_model: CrashModel::Prefix,
            log_size: Size(4 << 20),
            // Two seconds: every seed overtakes a start record that a crash then exposes.
            duration: Duration(2 * NS_PER_SEC),
            xfsaild: Xfsaild::Backoff,
            ail_push: AilPush::Grant,
            cil_space: CilSpace::Global,
            device: DeviceClass::SataSsd,
            writers: 128,
            tx_work: TxWorkAt::Before,
            ..fsmark(32 << 10)
        },
        fix: &[("start_record_order", "ordered")],
    },
];

/// `loglab bench`'s run, natively and in the browser: 200-writer fsync-heavy for 2 s (the
/// source thread 000 shape).
pub fn bench_scenario() -> Scenario {
    let mut s = find("fsync-heavy").unwrap_or_default();
    s.writers = 200;
    s.duration = Duration(2 * NS_PER_SEC);
    s
}

pub fn find(name: &str) -> Result<Scenario, String> {
    find_preset_entry(name).map(Preset::scenario)
}

pub fn find_preset_entry(name: &str) -> Result<&'static Preset, String> {
    PRESETS.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        format!("unknown preset '{name}' (available: {})", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pickers_three_groups_each_hold_their_presets() {
        let group = |name: &str| find_preset_entry(name).unwrap().group();
        assert_eq!(group("seed-log-size"), "source threads");
        assert_eq!(group("fsync-heavy"), "workloads");
        for g in ["workloads", "source threads", "bug zoo"] {
            assert!(PRESETS.iter().any(|p| p.group() == g), "no preset in {g}");
        }
        for p in PRESETS.iter().filter(|p| p.about.starts_with("source thread ") && !p.is_bug()) {
            assert_eq!(p.group(), "source threads", "{}", p.name);
        }
    }

    #[test]
    fn every_preset_has_a_play_hint_at_a_speed_of_play() {
        for p in PRESETS {
            assert!(PLAY.iter().any(|h| h.0 == p.name), "{} has no PlayHint", p.name);
            assert!(crate::url::SPEEDS.contains(&p.play().speed_ns), "{}", p.name);
        }
        assert_eq!(PLAY.len(), PRESETS.len());
    }
}
