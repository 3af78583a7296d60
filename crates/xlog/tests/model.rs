//! Behaviour of the whole model: determinism, snapshots, byte-exact accounting, recovery.

use proptest::prelude::*;
use xlog::*;

fn small() -> Scenario {
    find_preset("small-crash").unwrap()
}

fn image(sim: &Sim) -> Image<'_> {
    Image {
        devs: sim.devices().iter().map(|d| Layer::new(d.stable())).collect(),
        data_dev: sim.data_device(),
        log_start: sim.log_start_sector(),
        log_bb: sim.geometry().log_bb,
        shared: None,
    }
}

#[test]
fn determinism_same_seed_same_trace_hash_and_another_seed_differs() {
    let run = |seed| {
        let mut s = small();
        s.seed = seed;
        let mut sim = Sim::new(&s).unwrap();
        sim.run();
        sim.metrics()
    };
    let (a, b, c) = (run(7), run(7), run(8));
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a, b);
    assert_ne!(a.trace_hash, c.trace_hash);
}

#[test]
fn determinism_a_mid_run_snapshot_continues_identically() {
    let mut sim = Sim::new(&small()).unwrap();
    for _ in 0..5_000 {
        sim.step();
    }
    let mut snap = sim.clone();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for _ in 0..5_000 {
        a.extend(sim.step().unwrap().iter().cloned());
        b.extend(snap.step().unwrap().iter().cloned());
    }
    assert!(!a.is_empty());
    assert_eq!(a, b);
    assert_eq!(sim.trace_hash(), snap.trace_hash());
}

#[test]
fn step_reports_typed_events_in_time_order() {
    let mut sim = Sim::new(&small()).unwrap();
    let mut last = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for _ in 0..3_000 {
        for e in sim.step().unwrap() {
            assert!(e.t_ns >= last);
            last = e.t_ns;
            kinds.insert(format!("{:?}", e.kind).split([' ', '{', '(']).next().unwrap().to_string());
        }
    }
    for k in ["Grant", "Iclog", "DevSubmit", "DevComplete", "TxCommit", "CheckpointDone", "LogForce"] {
        assert!(kinds.contains(k), "missing {k} in {kinds:?}");
    }
}

/// Grant heads hold exactly the bytes written once every ticket is given back.
fn assert_byte_exact(s: &Scenario) {
    let mut sim = Sim::new(s).unwrap();
    sim.run();
    sim.drain();
    let log = sim.xlog();
    let physical = GrantHead { cycle: log.curr_cycle(), bytes: log.curr_block() * 512 };
    assert_eq!(log.write_head(), physical, "write head vs physical head");
    assert_eq!(log.reserve_head(), physical, "reserve head vs physical head");
    assert_eq!(sim.metrics().reservation_overruns, 0);
}

#[test]
fn byte_exact_accounting_with_stripe_unit_and_big_iclogs() {
    let mut s = small();
    s.iclog_size = Size(256 << 10);
    s.lsu = Size(32 << 10);
    s.log_size = Size(8 << 20);
    assert_byte_exact(&s);
}

/// Worst case for the checkpoint ticket: both its data iclog and its commit iclog are pushed
/// out part-full while the push holds them, so it pays two stripe-unit roundoffs.
fn overruns_with_two_forced_roundoffs(roundoff: UnitResRoundoff) -> u64 {
    let mut s = small();
    s.iclog_size = Size(256 << 10);
    s.lsu = Size(256 << 10);
    s.log_size = Size(64 << 20);
    s.fs_size = Size(1 << 30);
    s.writers = 1;
    s.unit_res_roundoff = roundoff;
    let mut sim = Sim::new(&s).unwrap();
    let copying = |sim: &Sim| matches!(sim.pusher_state(0), Some(PushState::Copying { .. }));
    for _ in 0..2 {
        // Once for the checkpoint body, once for its commit record.
        while !copying(&sim) {
            sim.step();
        }
        sim.command(Command::ForceLog);
        // The copy completes: the push's release sends the part-full iclog out.
        sim.step();
    }
    while sim.pusher_state(0) != Some(PushState::Idle) {
        sim.step();
    }
    sim.metrics().reservation_overruns
}

#[test]
fn unit_res_1x_bug_overruns_with_a_256k_stripe_unit_and_2x_does_not() {
    assert!(overruns_with_two_forced_roundoffs(UnitResRoundoff::X1) > 0, "the lost factor two must overrun");
    assert_eq!(overruns_with_two_forced_roundoffs(UnitResRoundoff::X2), 0);
}

#[test]
fn recovery_after_clean_unmount_finds_an_unmount_record_and_every_item_in_place() {
    let mut sim = Sim::new(&small()).unwrap();
    sim.run();
    sim.unmount();
    sim.settle_crcs();
    let rep = recover(&image(&sim)).unwrap();
    assert!(rep.clean, "{rep:?}");
    for item in sim.items().iter().filter(|i| i.version() > 0) {
        assert_eq!(rep.items.get(&item.id()), Some(&item.version()), "item {}", item.id());
    }
}

#[test]
fn recovery_from_stable_media_only_replays_a_prefix_covering_every_acknowledged_fsync() {
    let mut sim = Sim::new(&small()).unwrap();
    sim.run_until(300 * NS_PER_MS);
    // Crash: nothing in the volatile caches or in flight survives.
    sim.settle_crcs();
    let rep = recover(&image(&sim)).unwrap();
    assert!(rep.transactions_replayed > 0);
    let h = sim.history();
    let acked = h.acked as usize;
    assert!(acked > 0);
    // Every item of an acknowledged checkpoint is at least at that checkpoint's version.
    for ck in &h.checkpoints[..acked] {
        for &(item, v) in &ck.items {
            assert!(rep.items.get(&item).copied().unwrap_or(0) >= v, "item {item} lost version {v}");
        }
    }
}

#[test]
fn recovery_of_an_empty_log_is_empty() {
    let mut sim = Sim::new(&small()).unwrap();
    sim.settle_crcs();
    let rep = recover(&image(&sim)).unwrap();
    assert!(rep.empty);
    assert_eq!(rep.transactions_replayed, 0);
}

#[test]
fn recovery_trims_a_torn_head_record() {
    let mut sim = Sim::new(&small()).unwrap();
    // Step until an iclog write is in flight on the log device.
    let req = loop {
        sim.step();
        if let Some(r) =
            sim.devices()[0].inflight().iter().find(|r| r.data.len() >= 1024 && r.sector >= sim.log_start_sector())
        {
            break r.clone();
        }
    };
    sim.settle_crcs();
    let mut img = image(&sim);
    // Tear it: only its first sector (the record header) lands.
    let mut over = SectorMap::new();
    over.write(req.sector, &req.full_data()[..512]);
    img.devs[0].over = over;
    let rep = recover(&img).unwrap();
    let torn_blk = (req.sector - sim.log_start_sector()) as u32;
    assert!(
        rep.head_blk <= torn_blk || rep.head_blk == 0,
        "head {} must not pass the torn record at {torn_blk}",
        rep.head_blk
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random geometries, devices and workloads: no illegal iclog transition (the model
    /// asserts each one), no overrun with the 2x roundoff, byte-exact heads after draining.
    #[test]
    fn iclog_state_machine_and_accounting_hold_over_random_runs(
        seed in 0u64..1000,
        writers in 1u32..24,
        count in 2u32..=8,
        size_shift in 0u32..5,
        lsu_shift in 0u32..4,
        device in 0usize..8,
        fsync in any::<bool>(),
    ) {
        let mut s = small();
        s.seed = seed;
        s.writers = writers;
        s.iclog_count = count;
        s.iclog_size = Size(16 << 10 << size_shift);
        s.lsu = Size(if lsu_shift == 0 { 0 } else { (8 << 10 << lsu_shift).min(s.iclog_size.0) });
        s.log_size = Size(8 << 20);
        s.device = DeviceClass::ALL[device];
        s.fsync = fsync;
        s.duration = Duration(50 * NS_PER_MS);
        let mut sim = Sim::new(&s).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        while !sim.finished() {
            for e in sim.step().unwrap_or(&[]) {
                if let TraceKind::Iclog { state, .. } = e.kind {
                    seen.insert(state);
                }
            }
        }
        sim.drain();
        prop_assert!(sim.metrics().iclog_writes > 0);
        prop_assert!(seen.iter().all(|s| *s != IclogState::Syncing) || sim.metrics().iclog_writes > 0);
        let log = sim.xlog();
        let physical = GrantHead { cycle: log.curr_cycle(), bytes: log.curr_block() * 512 };
        prop_assert_eq!(log.write_head(), physical);
        prop_assert_eq!(log.reserve_head(), physical);
        prop_assert_eq!(sim.metrics().reservation_overruns, 0);
    }
}

fn value_for(key: &str, pick: usize) -> String {
    let opts: &[&str] = match key {
        "seed" => &["0", "1", "18446744073709551615"],
        "duration" => &["1ns", "20ms", "0s", "2h", "x"],
        "writers" | "fsync_writers" => &["0", "1", "7", "5000"],
        "workload" => {
            &["sync-append", "fsmark-create", "fsync-heavy", "dir-remove", "rt-alloc", "create-remove", "nope"]
        }
        "device" => {
            &["hdd", "hdd-x4", "nvme", "nvme-x4", "sata-ssd", "enterprise-ssd", "iscsi-cloud", "raid6-old", "vm-disk"]
        }
        "external_log" | "fsync" => &["0", "1", "maybe"],
        "fs_size" => &["1MiB", "64MiB", "16MiB", "4TiB", "2PiB"],
        "log_size" => &["0", "2MiB", "3MiB", "64MiB", "2GiB", "1000"],
        "iclog_count" => &["0", "2", "8", "9"],
        "iclog_size" => &["8KiB", "16KiB", "48KiB", "256KiB", "512KiB"],
        "lsu" => &["0", "512", "4KiB", "32KiB", "256KiB", "300KiB", "100"],
        "tx_logres" | "tx_logcount" | "tx_items" | "tx_chunks" | "tx_reads" => {
            &["0", "1", "3", "33", "2000", "5000000"]
        }
        "think" => &["0ns", "1us", "1s", "11s"],
        "cpus" => &["0", "1", "2", "16", "4097"],
        "append_size" => &["0", "512", "100", "128KiB", "16MiB", "32MiB"],
        "agcount" => &["0", "1", "44", "100000"],
        "crash_model" => &["subset", "prefix", "nope"],
        "directory" => &["blocks", "chunk", "nope"],
        "xfsaild" => &["upstream", "backoff", "nope"],
        "cil_space" => &["upstream", "global", "nope"],
        "cpu_model" => &["writers", "kernel", "nope"],
        _ => &["fixed", "none", "upstream", "legacy", "2x", "1x", "off", "on", "512", "v5.9", "ordered"],
    };
    opts[pick % opts.len()].to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Any combination of settings is either rejected with a message naming a field or runs.
    #[test]
    fn no_panic_is_reachable_from_a_scenario(picks in proptest::collection::vec((0usize..SET_KEYS.len(), 0usize..8), 1..8)) {
        let mut s = small();
        s.duration = Duration(20 * NS_PER_MS);
        for (k, v) in picks {
            let key = SET_KEYS[k];
            if let Err(e) = s.set(key, &value_for(key, v)) {
                prop_assert!(e.contains(key), "error for {key} does not name it: {e}");
            }
        }
        match Sim::new(&s) {
            Err(e) => prop_assert!(SET_KEYS.iter().any(|k| e.starts_with(k)), "unnamed error: {e}"),
            Ok(mut sim) => {
                for _ in 0..20_000 {
                    if sim.step().is_none() { break; }
                }
            }
        }
    }
}

/// xfs_log_cil_wait events of a run, counted from its trace (queue depth seen in events).
fn cil_waits(s: &Scenario) -> (u64, u64, u64) {
    let mut sim = Sim::new(s).unwrap();
    let mut events = 0;
    while let Some(evs) = sim.step() {
        events +=
            evs.iter().filter(|e| matches!(e.kind, TraceKind::Grant { event: GrantEvent::CilWait, .. })).count() as u64;
    }
    let m = sim.metrics();
    (events, m.cil_throttle_waits, m.cil_throttle_depth_max)
}

#[test]
fn seed_003_a_32mib_log_throttles_many_more_commits_than_a_64mib_log() {
    let mut small = find_preset("cil-throttle-32mb").unwrap();
    small.duration = Duration(2 * NS_PER_SEC);
    // With FUA sent to the SSD (6.3+), the push keeps up with a 64 MiB log's CIL but not a
    // 32 MiB one's. With the seed kernel's emulated FUA this SSD's log is slower than both:
    // every checkpoint throttles at either size.
    small.sata_fua = SataFua::Upstream;
    let mut big = small.clone();
    big.log_size = Size(64 << 20);
    let (e32, w32, d32) = cil_waits(&small);
    let (e64, w64, _) = cil_waits(&big);
    assert_eq!(e32, w32, "every throttled commit traces xfs_log_cil_wait");
    assert_eq!(e64, w64);
    assert_eq!(d32, 16, "the throttle catches all 16 writers at once");
    assert!(e32 * 2 >= e64 * 3, "32MiB: {e32} waits, 64MiB: {e64}");
}

fn flush_run(device: DeviceClass, flush: FlushPolicy, ms: u64) -> Metrics {
    let mut s = find_preset("fsmark-64way-256k").unwrap();
    s.duration = Duration(ms * NS_PER_MS);
    s.device = device;
    s.flush = flush;
    let mut sim = Sim::new(&s).unwrap();
    sim.run();
    sim.metrics()
}

/// Issue #4: a large fsmark on 256KiB iclogs. Legacy flushes every iclog of a checkpoint that
/// fills to the hard throttle; v5.14 flushes twice per checkpoint, upstream about once.
#[test]
fn flush_policies_cut_cache_flushes_per_checkpoint_by_two_orders_of_magnitude() {
    // Two seconds: with no FUA from libata (the preset's 2021 kernel) legacy's flushes after
    // every iclog write leave one checkpoint done in the first.
    let legacy = flush_run(DeviceClass::SataSsd, FlushPolicy::Legacy, 2000);
    assert!(legacy.iclogs_per_checkpoint > 200.0, "checkpoints span {} iclogs", legacy.iclogs_per_checkpoint);
    for policy in [FlushPolicy::V514, FlushPolicy::Upstream] {
        let m = flush_run(DeviceClass::SataSsd, policy, 2000);
        assert!(m.cache_flushes_per_checkpoint > 0.0);
        let ratio = legacy.cache_flushes_per_checkpoint / m.cache_flushes_per_checkpoint;
        eprintln!(
            "{policy:?}: {:.2} flushes per checkpoint, legacy {:.1}",
            m.cache_flushes_per_checkpoint, legacy.cache_flushes_per_checkpoint
        );
        assert!(ratio >= 100.0, "{policy:?}: {ratio:.0}x fewer flushes per checkpoint than legacy");
    }
}

/// A preset with `--set` keys applied, run for `secs` of virtual time.
fn run_set(preset: &str, sets: &[(&str, &str)], secs: u64) -> Metrics {
    let mut s = find_preset(preset).unwrap();
    for (key, value) in sets {
        s.set(key, value).unwrap();
    }
    s.duration = Duration(secs * NS_PER_SEC);
    let mut sim = Sim::new(&s).unwrap();
    sim.run();
    sim.metrics()
}

/// Patch 3/5 of source thread 001 on NVMe: with 32 KiB iclogs legacy's PREFLUSH on every iclog queues
/// each write behind the block layer's one flush at a time, so the log's write rate, then the
/// creates, fall short of upstream's; the push waits for iclogs and reservations for space.
/// With 256 KiB iclogs the writes are few enough that both run at the writers' CPU limit.
#[test]
fn legacy_flushes_cap_the_logs_iops_at_32k_iclogs_and_not_at_256k() {
    let run = |iclog: &str, flush: &str| {
        // The thread's kernel (5.x) pushed the AIL from reservations.
        let sets = [("device", "nvme"), ("iclog_size", iclog), ("flush", flush), ("ail_push", "grant")];
        // 3 s: at 256 KiB legacy's first full log costs it a grant-head pinch (2 s: 2.3% behind).
        run_set("fsmark-create", &sets, 3)
    };
    let (legacy, upstream) = (run("32KiB", "legacy"), run("32KiB", "upstream"));
    eprintln!("32 KiB: {:.0} -> {:.0} tx/s", legacy.tx_per_sec, upstream.tx_per_sec);
    assert!(legacy.tx_per_sec * 1.3 < upstream.tx_per_sec, "{} vs {}", legacy.tx_per_sec, upstream.tx_per_sec);
    assert!(legacy.iclog_writes * 13 < upstream.iclog_writes * 10, "the flushes cap the log's writes");
    assert!(legacy.noiclog_events * 10 > legacy.iclog_writes * 5, "the push waits on iclogs");
    assert!(legacy.grant_head_waits > 0 && upstream.grant_head_waits == 0);
    let (legacy, upstream) = (run("256KiB", "legacy"), run("256KiB", "upstream"));
    // Within 5%: what legacy's flushes still cost at 256 KiB is a flush, and every iclog
    // queued behind it, waiting out a die's block erase now and then (2% in these 3 s).
    assert!(legacy.tx_per_sec * 1.05 > upstream.tx_per_sec, "{} vs {}", legacy.tx_per_sec, upstream.tx_per_sec);
    assert!(legacy.noiclog_events > 5 * upstream.noiclog_events, "noiclogs still drop sharply");
}

/// Without a volatile cache the block layer drops every flush: the policies perform the same.
#[test]
fn without_a_volatile_cache_the_flush_policies_perform_the_same() {
    let runs: Vec<_> = [FlushPolicy::Legacy, FlushPolicy::V514, FlushPolicy::Upstream]
        .into_iter()
        .map(|p| flush_run(DeviceClass::EnterpriseSsd, p, 250))
        .collect();
    for m in &runs {
        assert_eq!(m.cache_flushes, 0);
        assert!(m.cache_flushes_elided > 0, "the policy's flushes were issued and elided");
        assert_eq!(
            (m.transactions, m.checkpoints, m.bytes_logged),
            (runs[0].transactions, runs[0].checkpoints, runs[0].bytes_logged)
        );
    }
}

/// A block is an inode or a buffer for its whole life: recovery orders the two differently
/// (an inode takes the transaction's LSN at once, a buffer only when written), so a block
/// logged as both could replay an older checkpoint over a newer one. Small filesystems fill
/// the metadata area, where creates fall back to relogging pool inodes.
#[test]
fn no_block_is_logged_both_as_an_inode_and_as_a_buffer() {
    for wl in ["fsmark-create", "create-remove", "dir-remove", "sync-append", "fsync-heavy", "btree-churn", "rt-alloc"]
    {
        let mut s = Scenario::default();
        for (k, v) in [
            ("workload", wl),
            ("writers", "128"),
            ("fs_size", "64MiB"),
            ("log_size", "2MiB"),
            ("tx_items", "6"),
            ("duration", "200ms"),
        ] {
            s.set(k, v).unwrap();
        }
        let mut sim = Sim::new(&s).unwrap();
        sim.set_keep_trace(false);
        let mut kind: Vec<Option<bool>> = Vec::new();
        while sim.step().is_some() {
            for it in sim.items().iter().filter(|i| i.version() > 0) {
                let i = it.id() as usize;
                if kind.len() <= i {
                    kind.resize(i + 1, None);
                }
                let now = it.kind().is_inode();
                assert_eq!(*kind[i].get_or_insert(now), now, "{wl}: item {} changed kind", it.id());
            }
        }
    }
}

/// On a disk whose one cache flush has minutes of cached random writes to destage, writers
/// wait longer than two log-worker periods; the liveness probe follows the busy device
/// instead of calling that a hang (it did, with the fixed throttle on an HDD).
#[test]
fn a_slow_disk_still_flushing_is_not_a_hang() {
    for flush in ["legacy", "upstream"] {
        let mut s = find_preset_entry("throttle-v5.9-hang").unwrap().fixed();
        s.set("device", "hdd").unwrap();
        s.set("flush", flush).unwrap();
        s.set("duration", "2s").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        sim.run();
        assert!(sim.view().writer_states.iter().any(|w| w.is_blocked()), "{flush}: writers wait at the end");
        assert!(!sim.is_hung(), "{flush}: a busy disk is not a hang");
    }
}

#[test]
fn frames_with_an_event_budget_run_the_same_events_as_one_run_until() {
    let s = find_preset("small-crash").unwrap();
    let until = 3 * NS_PER_MS;
    let mut whole = Sim::new(&s).unwrap();
    whole.run_until(until);
    let mut framed = Sim::new(&s).unwrap();
    let (mut t, mut frames) = (0, 0);
    while framed.now() < until {
        // 100 µs of virtual time per frame, but never more than 7 events: the clock lags.
        t = (t + 100 * NS_PER_US).min(until).max(framed.now());
        let ran = framed.run_until_budget(t, 7);
        assert!(ran <= 7);
        if ran < 7 {
            assert_eq!(framed.now(), t, "a frame that finishes its stretch lands on its target");
        } else {
            t = framed.now();
        }
        frames += 1;
        assert!(frames < 1_000_000);
    }
    assert_eq!(framed.events(), whole.events());
    assert_eq!(framed.trace_hash(), whole.trace_hash());
    assert!(frames > 30, "the budget split the run into many frames ({frames})");
}

/// Past its inode cap a create run reuses inodes oldest first, and each reused inode has left
/// the log by then (a debug assertion checks it at every reuse): creates keep logging whole
/// inodes, so checkpoints keep coming and memory stays bounded.
#[test]
fn creates_past_the_inode_cap_reuse_clean_inodes_and_keep_checkpointing() {
    let s = Scenario {
        log_size: Size(4 << 20),
        fs_size: Size(4 << 30),
        duration: Duration(NS_PER_SEC),
        ..find_preset("fsmark-create").unwrap()
    };
    let mut sim = Sim::new(&s).unwrap();
    sim.run_until(NS_PER_SEC / 2);
    let (reused, checkpoints) = (sim.inodes_reused(), sim.metrics().checkpoints);
    assert!(reused > 0, "the cap was reached");
    sim.run();
    let m = sim.metrics();
    assert!(sim.inodes_reused() > reused && m.checkpoints > checkpoints + 10, "{} checkpoints", m.checkpoints);
    // Every create logs a whole inode item (256 bytes with its op headers) as a new one does.
    assert!(m.bytes_logged / m.transactions >= 256, "{} bytes per transaction", m.bytes_logged / m.transactions);
}

/// Service times vary as the devices' physics makes them vary (flash pages program in one of
/// three times, disks wait for their sector to come round), seeded: fsync latency has a tail.
#[test]
fn fsync_latency_has_a_tail_from_device_physics_and_the_seed_fixes_it() {
    let s = Scenario { writers: 32, ..find_preset("fsync-heavy").unwrap() };
    let run = |s: &Scenario| {
        let mut sim = Sim::new(s).unwrap();
        sim.run();
        sim.metrics()
    };
    let m = run(&s);
    assert!(m.latency_ms_p99 > 1.1 * m.latency_ms_p50, "p50 {} p99 {}", m.latency_ms_p50, m.latency_ms_p99);
    let again = run(&s);
    assert_eq!((again.latency_ms_p99, again.trace_hash), (m.latency_ms_p99, m.trace_hash.clone()));
}

/// xfsaild (6.11+, `xfsaild=upstream`) writes an inode with the rest of its cluster: far
/// fewer metadata requests than inodes written. The earlier pass (`backoff`) writes each
/// item alone, and with 10 ms pauses falls behind: the log runs out of space sooner.
#[test]
fn xfsaild_writes_inodes_by_cluster_and_keeps_up_with_creates() {
    let run = |aild: Xfsaild| {
        let s = Scenario {
            device: DeviceClass::Nvme,
            duration: Duration(NS_PER_SEC),
            xfsaild: aild,
            ..find_preset("fsmark-create").unwrap()
        };
        let mut sim = Sim::new(&s).unwrap();
        sim.run();
        let m = sim.metrics();
        // Device writes besides the log's own are xfsaild's (no fsync data here).
        (m.metadata_writebacks, m.device_writes - m.iclog_writes, m.transactions)
    };
    let (items, requests, up_tx) = run(Xfsaild::Upstream);
    assert!(items > 100_000 && items >= 16 * requests, "{items} inodes in {requests} writes");
    let (items, requests, back_tx) = run(Xfsaild::Backoff);
    // One write per item (the count of device writes has one more of its own).
    assert!(requests.abs_diff(items) <= 1, "{items} items in {requests} writes");
    assert!(up_tx > back_tx * 3 / 2, "upstream {up_tx} transactions, backoff {back_tx}");
}

/// Writers queue for a CPU of the pool when there are fewer CPUs than writers: the create
/// rate is the CPUs' (`cpus` / mean think), less what the CIL push worker runs on them.
#[test]
fn a_cpu_pool_caps_the_create_rate_and_the_push_worker_shares_it() {
    let run = |cpus: u32, secs: u64| {
        let mut s = find_preset("fsmark-create").unwrap();
        s.duration = Duration(secs * NS_PER_SEC);
        s.cpus = cpus;
        let mut sim = Sim::new(&s).unwrap();
        sim.run();
        sim.metrics()
    };
    let (unlimited, per_writer, two) = (run(0, 1), run(16, 1), run(2, 2));
    // Think time is uniform over [10, 30) us: two CPUs run at most 100k creates/s.
    assert!(two.tx_per_sec <= 100_500.0 && two.tx_per_sec > 95_000.0, "{}", two.tx_per_sec);
    assert!(unlimited.tx_per_sec > 2.0 * two.tx_per_sec, "{} vs {}", unlimited.tx_per_sec, two.tx_per_sec);
    // The push worker's CPU time comes out of the same two CPUs: the writers' and its own
    // add up to no more than two CPUs (the model before counted 2.02).
    let busy = two.tx_per_sec * 20e-6 + two.cil_push_ms_cpu / 2_000.0;
    assert!(two.cil_push_ms_cpu > 10.0 && busy <= 2.005, "{busy} CPUs busy");
    assert!(two.cil_push_ms_cpu_wait > 0.0, "the push worker never waited for a CPU");
    // Woken, it is picked next (EEVDF places a sleeper with its lag): it starts within a think.
    assert!(two.cil_push_dispatch_ms_p99 < 0.05, "dispatch p99 {} ms", two.cil_push_dispatch_ms_p99);
    // A CPU per writer: the push worker still takes one now and then, and a writer waits.
    assert!(per_writer.cil_push_ms_cpu_wait > 0.0 && per_writer.tx_per_sec > 0.9 * unlimited.tx_per_sec);
    assert_eq!(unlimited.cil_push_ms_cpu_wait, 0.0);
}

/// Source thread 003's rhythm: where the creates (4 CPUs) set the pace, the push keeps up and the
/// throttle catches all 16 writers at most in rare bursts; where the log sets it (a SATA SSD
/// flushing every iclog, a CPU per writer), every checkpoint throttles.
#[test]
fn the_cil_throttle_bursts_rarely_when_cpus_not_the_log_set_the_pace() {
    let run = |preset: &str, secs: u64| {
        let mut s = find_preset(preset).unwrap();
        s.duration = Duration(secs * NS_PER_SEC);
        let mut sim = Sim::new(&s).unwrap();
        sim.run();
        sim.metrics()
    };
    let rhythm = run("cil-throttle-rhythm", 10);
    assert!(rhythm.checkpoints > 80, "{}", rhythm.checkpoints);
    assert!(rhythm.checkpoints_throttled * 20 <= rhythm.checkpoints, "{rhythm:?}");
    assert_eq!(rhythm.cil_throttle_waits, 16 * rhythm.checkpoints_throttled, "a burst holds every writer");
    assert_eq!(rhythm.grant_head_waits, 0);
    let bound = run("cil-throttle-32mb", 5);
    assert!(bound.checkpoints_throttled * 10 >= bound.checkpoints * 9, "{bound:?}");
}

/// Source thread 000's sweep: 200 writers appending 128 KiB synchronously. Grant-head waits fall to
/// none as the log grows on both device classes, every acknowledged fsync made its append
/// durable (`data_mb_s`), and only the appends that outgrow the preallocation allocate.
#[test]
fn seed_000_waits_fall_to_none_as_the_log_grows_and_each_fsync_syncs_its_append() {
    for device in ["hdd-x4", "nvme-x4"] {
        let rows: Vec<Metrics> = ["10MiB", "40MiB", "160MiB"]
            .iter()
            .map(|log| run_set("seed-log-size", &[("device", device), ("log_size", log)], 2))
            .collect();
        let waits: Vec<u64> = rows.iter().map(|m| m.grant_head_waits).collect();
        assert!(waits[0] > waits[1] && waits[1] >= waits[2] && waits[2] == 0, "{device}: {waits:?}");
        for m in &rows {
            let synced = m.transactions as f64 * (128 << 10) as f64 / m.sim_seconds / 1e6;
            assert!((m.data_mb_s - synced).abs() < 1e-6, "{device}: {} vs {synced}", m.data_mb_s);
            // Most appends log only their inode, twice (the timestamp, then the converted
            // extent), as the kernel's do: 728-743 bytes per append measured here.
            let per_append = m.bytes_logged as f64 / m.transactions as f64;
            assert!((600.0..1000.0).contains(&per_append), "{device}: {per_append} bytes per append");
            // A writer's nth append allocates when n is a power of two: at most log2 + 1 each.
            let bound = 200 * (m.transactions.ilog2() as u64 + 1);
            assert!(m.metadata_reads <= bound, "{device}: reads only when allocating: {m:?}");
        }
    }
}

/// An O_DSYNC append is two transactions, as the kernel's are: `file_update_time` logs the
/// timestamps (`tr_fsyncts`: one unit of 2,860 bytes, not permanent, log count 0, exactly as
/// this machine's 6.18 kernel traces it for this geometry) before the data goes to the disk,
/// and the I/O completion converts the written extent (`tr_write`, 112,720 x 4) only once the
/// data write is done; then the fsync forces the log.
#[test]
fn an_o_dsync_append_logs_its_timestamp_before_its_data_and_its_extent_after() {
    let mut s = find_preset("seed-log-size").unwrap();
    s.set("device", "nvme-x4").unwrap();
    s.duration = Duration(20 * NS_PER_MS);
    let mut sim = Sim::new(&s).unwrap();
    let (mut steps, mut data_write) = (Vec::new(), None);
    while let Some(evs) = sim.step() {
        for e in evs {
            match &e.kind {
                TraceKind::Grant { event: GrantEvent::Reserve, ticket, .. } if e.task == 7 => {
                    steps.push(format!("reserve {} x{}", ticket.unit_res, ticket.ocnt))
                }
                TraceKind::DevSubmit { id, bytes: 131_072, read: false, .. } if e.task == 7 => {
                    data_write = Some(*id);
                    steps.push("data write".into());
                }
                TraceKind::DevComplete { id, .. } if Some(*id) == data_write => steps.push("data written".into()),
                TraceKind::LogForce { .. } if e.task == 7 => steps.push("log force".into()),
                _ => {}
            }
        }
    }
    let append = ["reserve 2860 x0", "data write", "data written", "reserve 112720 x4", "log force"];
    assert!(steps.len() >= 2 * append.len(), "{steps:?}");
    for (i, step) in steps.iter().take(2 * append.len()).enumerate() {
        assert_eq!(step, append[i % append.len()], "{steps:?}");
    }
    let m = sim.metrics();
    assert!(m.tx_committed >= 2 * m.transactions && m.tx_committed <= 2 * m.transactions + 2 * 200, "{m:?}");
}

/// `fsync_op=append`: a `fsync-heavy` operation is what `loglab kernel run` does, an append and
/// an fsync. The I/O completion's extent conversion is logged every time; the file's
/// timestamps only when the coarse clock (a 4 ms tick) moved since their last update. Writers
/// back within a tick log them for some appends (this machine's kernel: 49% at 2 ms an
/// operation), writers slower than a tick for every one; the default logs one transaction.
#[test]
fn an_appends_timestamps_are_logged_only_once_the_clock_has_ticked() {
    let ratio = |m: &Metrics| m.tx_committed as f64 / m.transactions as f64;
    let fast = run_set("fsync-heavy", &[("fsync_op", "append")], 1);
    let slow = run_set("fsync-heavy", &[("fsync_op", "append"), ("think", "10ms")], 1);
    let tx = run_set("fsync-heavy", &[], 1);
    eprintln!("transactions per fsync: fast {:.3}, slow {:.3}", ratio(&fast), ratio(&slow));
    assert!(ratio(&fast) > 1.1 && ratio(&fast) < 1.7, "{}", ratio(&fast));
    assert!(ratio(&slow) > 1.98, "{}", ratio(&slow));
    assert!((ratio(&tx) - 1.0).abs() < 0.01, "{}", ratio(&tx));
    // The files' extents overflow the inode (the first 16 appends, under allocsize, are an
    // extent each): each conversion logs a bmap btree leaf, so an fsync logs more than a
    // transaction of two buffers does.
    let per_op = |m: &Metrics| m.bytes_logged as f64 / m.transactions as f64;
    assert!(per_op(&fast) > 1.3 * per_op(&tx), "{} vs {}", per_op(&fast), per_op(&tx));
    // Four writers on mkfs's four AGs each have an AG to themselves: their files grow in place,
    // keep their few extents in the inode and log no btree leaf (the kernel's: 782-799 bytes an
    // fsync against 1,147-1,198 with sixteen).
    let alone = run_set("fsync-heavy", &[("fsync_op", "append"), ("writers", "4")], 1);
    assert!(per_op(&fast) > 1.15 * per_op(&alone), "{} vs {}", per_op(&fast), per_op(&alone));
}

/// The CIL push work's dispatch delay is the time a queued push waits for a worker. Where the
/// log sets the pace (one worker, a SATA SSD flushing every iclog), a background push is
/// queued while the last one still runs, so it waits about a run; where the worker is idle
/// when asked (fsync-heavy's small pushes), it starts at once.
#[test]
fn a_push_queued_while_the_worker_runs_waits_for_it_and_an_idle_worker_starts_at_once() {
    let busy = run_set("cil-throttle-32mb", &[], 1);
    assert!(busy.cil_push_run_ms_p50 > 1.0, "pushes wait on iclogs: {}", busy.cil_push_run_ms_p50);
    assert!(
        busy.cil_push_dispatch_ms_p50 > 0.2 * busy.cil_push_run_ms_p50,
        "queued behind the running push: dispatch {} run {}",
        busy.cil_push_dispatch_ms_p50,
        busy.cil_push_run_ms_p50
    );
    assert!(busy.cil_push_dispatch_ms_max <= 1.01 * busy.cil_push_run_ms_max, "never longer than a run");
    let idle = run_set("fsync-heavy", &[], 1);
    assert_eq!(idle.cil_push_dispatch_ms_max, 0.0, "an idle worker takes the push at once");
    assert!(idle.cil_push_run_ms_p50 > 0.0);
}

/// 6.0+ counts the CIL's space per CPU: a CPU adds its bytes to the context's count only past
/// its share of the push limit (8 MiB / 16 CPUs here), and the push check reads only that
/// count. Eight creators and eight removers (each unlink reads two blocks first) commit at
/// different rates, so when the busy CPUs' folds reach the limit the quiet ones still hold up
/// to a share each: the push is queued late and checkpoints grow past the limit. Counted
/// globally (before 6.0) every checkpoint is pushed just past it.
#[test]
fn per_cpu_cil_counting_queues_the_push_late_under_uneven_load() {
    let run = |cil_space| {
        run_set("fsmark-create", &[("workload", "create-remove"), ("tx_reads", "2"), ("cil_space", cil_space)], 1)
    };
    let (global, percpu) = (run("global"), run("upstream"));
    eprintln!("checkpoint p50: global {} KiB, percpu {} KiB", global.checkpoint_kib_p50, percpu.checkpoint_kib_p50);
    assert!(global.checkpoint_kib_max < 8.0 * 1024.0 + 128.0, "global: {}", global.checkpoint_kib_max);
    assert!(percpu.checkpoint_kib_p50 > global.checkpoint_kib_p50 + 512.0, "{}", percpu.checkpoint_kib_p50);
    assert!(percpu.checkpoint_kib_max < 16.0 * 1024.0 && percpu.cil_throttle_waits == 0);
}

/// 6.11 ("AIL doesn't need manual pushing", "background AIL push should target physical
/// space"): xfsaild pushes on its own only once the AIL spans three quarters of the log, so
/// here, where 16 reservations of 438 KiB and the CIL fill the rest first, writeback starts only
/// when a reservation finds the log full, sleeps and pushes everything. Before 6.11 each
/// reservation pushed as soon as the reserve grant head left under a quarter free: writeback
/// began with the AIL far shorter and nobody slept.
#[test]
fn since_6_11_writeback_waits_for_the_ail_to_fill_the_log_or_a_reservation_to_sleep() {
    let first_push = |ail_push: &str| {
        let mut s = find_preset("cil-throttle-rhythm").unwrap();
        s.set("ail_push", ail_push).unwrap();
        s.set("cpus", "2").unwrap();
        s.duration = Duration(3 * NS_PER_SEC);
        let mut sim = Sim::new(&s).unwrap();
        let mut first = None;
        while first.is_none() {
            let Some(evs) = sim.step() else { break };
            if evs.iter().any(|e| matches!(e.kind, TraceKind::AilPush { .. })) {
                first = Some((sim.ail_view().span_permille, sim.metrics().grant_head_waits));
            }
        }
        sim.run();
        (first.expect("xfsaild wrote something back"), sim.metrics())
    };
    let ((up_span, up_slept), up) = first_push("upstream");
    let ((grant_span, grant_slept), grant) = first_push("grant");
    eprintln!("first writeback: AIL span {up_span}‰ after {up_slept} sleeps (upstream), {grant_span}‰ after {grant_slept} (grant)");
    assert!(up_span > 750 || up_slept > 0, "6.11 pushed early: AIL span {up_span}‰, nobody asleep");
    assert!(grant_slept == 0 && grant_span + 150 < up_span, "grant pushed at {grant_span}‰ after {grant_slept} sleeps");
    assert!(
        up.grant_head_waits > 0 && grant.grant_head_waits == 0,
        "{} {}",
        up.grant_head_waits,
        grant.grant_head_waits
    );
}

/// A push run's time splits as the kernel's blocking stacks split it. Where the log sets the
/// pace, the push waits for free iclogs nearly all the time; v5.14's push waits first for
/// its data-device cache flush, most of it on the SATA SSD.
#[test]
fn a_push_runs_time_splits_into_its_cpu_and_what_it_waits_for() {
    let parts = |m: &Metrics| {
        [
            m.cil_push_ms_cpu,
            m.cil_push_ms_iclog_wait,
            m.cil_push_ms_prev_iclog_wait,
            m.cil_push_ms_order_wait,
            m.cil_push_ms_data_flush_wait,
        ]
    };
    let upstream = run_set("cil-throttle-32mb", &[], 1);
    let total: f64 = parts(&upstream).iter().sum();
    assert!(upstream.cil_push_ms_cpu > 0.0 && upstream.cil_push_ms_iclog_wait > 0.9 * total, "{:?}", parts(&upstream));
    assert_eq!(upstream.cil_push_ms_data_flush_wait, 0.0);
    let v514 = run_set("cil-throttle-32mb", &[("flush", "v5.14")], 1);
    let total: f64 = parts(&v514).iter().sum();
    assert!(v514.cil_push_ms_data_flush_wait > 0.5 * total, "{:?}", parts(&v514));
}

/// `vm-disk`'s host stalls in the lab's device view: while one is under way every request in
/// flight completes after it, and the view says so; stalls come at the writeback rate while
/// xfsaild's writes are out (the 6.11 AIL push writes back in pinches once the log fills).
#[test]
fn the_device_view_shows_a_host_stall_holding_every_request_in_flight() {
    let mut s = find_preset("cil-throttle-rhythm").unwrap();
    for (k, v) in [("device", "vm-disk"), ("cpus", "2"), ("ail_push", "upstream"), ("cil_pushers", "4")] {
        s.set(k, v).unwrap();
    }
    s.duration = Duration(6 * NS_PER_SEC);
    let mut sim = Sim::new(&s).unwrap();
    let (mut stalls_seen, mut busy_seen, mut quiet_seen) = (0, false, false);
    while sim.step().is_some() {
        let d = &sim.devices_view()[0];
        let (left, writeback) = d.host_stall.expect("vm-disk has host stalls");
        (busy_seen, quiet_seen) = (busy_seen || writeback, quiet_seen || !writeback);
        if let Some(left) = left {
            if stalls_seen == 0 {
                // The lab's e2e test opens a moment inside this first stall (`at=353ms`).
                let (at, end) = (sim.now(), sim.now() + left);
                assert!(at <= 353_000_000 && 353_000_000 < end, "the e2e test's stall moved: {at}..{end} ns");
            }
            stalls_seen += 1;
            let end = sim.now() + left;
            assert!(
                d.inflight.iter().all(|r| r.done_ns >= end),
                "a request in flight finishes inside a stall: {:?} at {} left {left}",
                d.inflight.iter().filter(|r| r.done_ns < end).collect::<Vec<_>>(),
                sim.now()
            );
        }
    }
    assert!(stalls_seen > 0 && busy_seen && quiet_seen, "stalls {stalls_seen}, busy {busy_seen}, quiet {quiet_seen}");
    let nvme = Sim::new(&find_preset("cil-throttle-rhythm").unwrap()).unwrap();
    assert_eq!(nvme.devices_view()[0].host_stall, None, "devices modelled from parts have none");
}

/// Before 6.3 libata sent SATA drives no FUA (`libata.fua=0`): the block layer writes a FUA
/// request to the cache and flushes after it, so on a SATA SSD every legacy iclog write
/// (PREFLUSH|FUA) costs two flushes, where 6.3+ sends one and the FUA write. NVMe is not
/// behind libata: the switch changes nothing there.
#[test]
fn without_libata_fua_every_fua_write_is_followed_by_a_flush_on_sata_only() {
    let run =
        |device: &str, sata_fua: &str| run_set("cil-throttle-32mb", &[("device", device), ("sata_fua", sata_fua)], 1);
    let (native, emulated) = (run("sata-ssd", "upstream"), run("sata-ssd", "emulated"));
    eprintln!(
        "native: {} flushes, {} iclogs, {:.0} tx/s; emulated: {} flushes, {} iclogs, {:.0} tx/s",
        native.cache_flushes,
        native.iclog_writes,
        native.tx_per_sec,
        emulated.cache_flushes,
        emulated.iclog_writes,
        emulated.tx_per_sec
    );
    assert_eq!(native.cache_flushes, native.iclog_writes, "one PREFLUSH per iclog, FUA on the drive");
    assert_eq!(emulated.cache_flushes, 2 * emulated.iclog_writes, "a PREFLUSH and a POSTFLUSH per iclog");
    assert!(emulated.tx_per_sec < native.tx_per_sec, "the flushes after each write slow the log");
    let (a, b) = (run("nvme", "upstream"), run("nvme", "emulated"));
    assert_eq!((a.trace_hash.clone(), a.tx_per_sec), (b.trace_hash.clone(), b.tx_per_sec));
}

/// #17.5, latency has a distribution: on NVMe the group commit's cache flush that needs a die
/// in the middle of a block erase (3.5 ms, one per 24 MiB programmed) waits for it, so some
/// fsyncs take up to an erase longer than the median's (the page types alone keep p99.5
/// within 1.2x of p50). With 16 KiB fsyncs that is a few in a hundred (with 4 KiB ones, about
/// one in two hundred: p99.5's edge). A power-loss-protected SSD (no flushes, no erases in
/// sight) keeps its tail near its median.
#[test]
fn flash_erases_give_fsync_latency_a_tail() {
    let nvme = run_set("fsync-heavy", &[("writers", "32"), ("append_size", "16KiB")], 2);
    eprintln!("nvme: p50 {} p99 {} p99.5 {}", nvme.latency_ms_p50, nvme.latency_ms_p99, nvme.latency_ms_p995);
    assert!(
        nvme.latency_ms_p995 > 1.4 * nvme.latency_ms_p50,
        "p99.5 {} vs p50 {}",
        nvme.latency_ms_p995,
        nvme.latency_ms_p50
    );
    let plp = run_set("fsync-heavy", &[("writers", "32"), ("append_size", "16KiB"), ("device", "enterprise-ssd")], 2);
    assert!(
        plp.latency_ms_p995 < 1.5 * plp.latency_ms_p50,
        "p99.5 {} vs p50 {}",
        plp.latency_ms_p995,
        plp.latency_ms_p50
    );
}

/// The device view names flash erases: while a die erases a block the view says how long it
/// still needs, and a flush that needs it completes no earlier. Devices modelled without
/// erases (measured ones) show no row.
#[test]
fn the_device_view_shows_a_flash_erase_under_way() {
    let mut s = find_preset("fsync-heavy").unwrap();
    s.writers = 32;
    s.duration = Duration(NS_PER_SEC);
    let mut sim = Sim::new(&s).unwrap();
    let (mut first, mut last_erased) = (None, 0);
    while sim.step().is_some() {
        let e = sim.devices_view()[0].flash_erase.clone().expect("nvme models its erases");
        assert!(e.erased >= last_erased && e.left_ns <= e.erase_ns);
        last_erased = e.erased;
        if e.erasing > 0 && first.is_none() {
            first = Some((sim.now(), e.left_ns, e.erased));
        }
    }
    let (at, left, erased) = first.expect("an erase within a second");
    eprintln!("first erase under way at {at} ns, {left} ns left, {erased} erased");
    assert!(erased >= 1 && last_erased > erased, "erases keep coming: {last_erased}");
    let measured = Sim::new(&Scenario { device: DeviceClass::VmDisk, ..s }).unwrap();
    assert_eq!(measured.devices_view()[0].flash_erase, None);
}

/// The device view shows each disk's actuator: a read in flight completes no later than the
/// time its disk's actuator is booked to, and on 4 HDDs the disks are busy apart (md's chunks).
#[test]
fn the_device_view_shows_each_disks_actuator_and_reads_finish_within_it() {
    let mut s = find_preset("seed-log-size").unwrap();
    s.duration = Duration(NS_PER_SEC);
    let mut sim = Sim::new(&s).unwrap();
    let (mut reads_seen, mut apart) = (0, false);
    while sim.step().is_some() {
        let d = &sim.devices_view()[0];
        let busy = d.actuators.clone().expect("hdd-x4 has actuators");
        assert_eq!(busy.len(), 4);
        apart |= busy.contains(&0) && busy.iter().any(|&b| b > 0);
        for r in d.inflight.iter().filter(|r| r.kind == IoKind::Read) {
            let disk = sim.devices()[0].disk_of(r.sector);
            assert!(r.done_ns <= sim.now() + busy[disk], "a read outlasts its disk's actuator");
            reads_seen += 1;
        }
    }
    assert!(reads_seen > 0 && apart, "reads {reads_seen}, disks busy apart {apart}");
    let flash = Sim::new(&find_preset("fsync-heavy").unwrap()).unwrap();
    assert_eq!(flash.devices_view()[0].actuators, None);
}

/// The device view shows a SATA drive's queue held by a cache flush: a request submitted while
/// it holds the queue completes after it; NVMe has no row.
#[test]
fn the_device_view_shows_a_sata_flush_holding_the_queue() {
    let mut s = find_preset("seed-log-size").unwrap();
    s.duration = Duration(NS_PER_SEC);
    let mut sim = Sim::new(&s).unwrap();
    let (mut holds, mut checked, mut idle) = (0, 0, false);
    while sim.step().is_some() {
        let now = sim.now();
        let d = &sim.devices_view()[0];
        match d.flush_hold.expect("a SATA array has the row") {
            Some(left) => {
                holds += 1;
                // Requests sent at this very moment wait for the flush.
                for r in d.inflight.iter().filter(|r| r.submit_ns == now && r.kind != IoKind::Flush) {
                    assert!(r.done_ns > now + left - 1, "{r:?} completes inside the flush ({left} ns left)");
                    checked += 1;
                }
            }
            None => idle = true,
        }
    }
    assert!(holds > 0 && checked > 0 && idle, "holds {holds}, requests checked {checked}, idle {idle}");
    let nvme = Sim::new(&find_preset("fsync-heavy").unwrap()).unwrap();
    assert_eq!(nvme.devices_view()[0].flush_hold, None);
}

/// The device view shows the link a device with one hardware queue shares: a write sent
/// while others move their data takes at least its own bytes' time on it, and when the 200
/// appenders' 128 KiB writes fill it, the view counts them and the data they still carry.
/// NVMe has no row.
#[test]
fn the_device_view_shows_the_writes_sharing_a_one_queue_link() {
    let mut s = find_preset("seed-log-size").unwrap();
    s.set("device", "vm-disk").unwrap();
    s.duration = Duration(300 * NS_PER_MS);
    let mut sim = Sim::new(&s).unwrap();
    let (mut busiest, mut longest, mut checked) = (0, 0, 0);
    while sim.step().is_some() {
        let now = sim.now();
        let d = &sim.devices_view()[0];
        let l = d.link.as_ref().expect("the loop device has one queue");

        assert_eq!(l.bytes_per_sec, 1_200_000_000);
        for r in d.inflight.iter().filter(|r| r.submit_ns == now && matches!(r.kind, IoKind::Write { .. })) {
            assert!(r.done_ns >= now + r.bytes * NS_PER_SEC / l.bytes_per_sec, "{r:?} beat the link");
            checked += 1;
        }
        (busiest, longest) = (busiest.max(l.moving), longest.max(l.backlog_ns));
    }
    assert!(checked > 100 && busiest >= 16 && longest > NS_PER_MS, "{checked} writes, {busiest} moving, {longest} ns");
    let nvme = Sim::new(&find_preset("fsync-heavy").unwrap()).unwrap();
    assert_eq!(nvme.devices_view()[0].link, None);
}

/// A create's CPU work runs inside its transaction, as `xfs_create`'s does: 16 creators on 2
/// CPUs each hold their `tr_create` reservation while they work or wait for a CPU, so the
/// grant head runs out long before the AIL spans three quarters of the log and reservations
/// sleep (the kernel on this geometry: 1,548-2,092 grant sleeps in 5 s of `cil-throttle-32mb`,
/// where the model with the work before the reservation had 80), and a create takes its work's
/// time (the kernel's median 0.14 ms) instead of none.
#[test]
fn a_writer_at_work_holds_its_reservation() {
    let set = [("cpus", "2"), ("device", "vm-disk"), ("ail_push", "upstream")];
    let inside = run_set("cil-throttle-rhythm", &[&set[..], &[("tx_work", "inside")]].concat(), 2);
    let before = run_set("cil-throttle-rhythm", &[&set[..], &[("tx_work", "before")]].concat(), 2);
    eprintln!(
        "inside: {} grant waits, p50 {} ms; before: {} grant waits, p50 {} ms",
        inside.grant_head_waits, inside.latency_ms_p50, before.grant_head_waits, before.latency_ms_p50
    );
    assert!(
        inside.grant_head_waits > 10 * before.grant_head_waits.max(1),
        "reservations held while working fill the log"
    );
    assert!(inside.latency_ms_p50 > 0.1 && before.latency_ms_p50 < 0.01, "a create takes its work's time");
    assert!(inside.tx_per_sec > 0.95 * before.tx_per_sec, "the CPUs, not the log, still set the pace");
}

/// The log-space view counts the reservations of the writers inside a transaction: never more
/// than the reserve grant head stands ahead of the log head, and on 2 CPUs a good part of it.
#[test]
fn the_log_space_view_counts_the_reservations_of_writers_at_work() {
    let mut s = find_preset("cil-throttle-rhythm").unwrap();
    for (k, v) in [("cpus", "2"), ("ail_push", "upstream")] {
        s.set(k, v).unwrap();
    }
    s.duration = Duration(300 * NS_PER_MS);
    let mut sim = Sim::new(&s).unwrap();
    let mut most = 0;
    while sim.step().is_some() {
        let v = sim.log_space_view();
        let head_bytes = v.head_lsn.cycle() as u64 * v.log_bytes as u64 + v.head_lsn.block() as u64 * 512;
        let reserve_bytes = v.reserve.cycle as u64 * v.log_bytes as u64 + v.reserve.bytes as u64;
        let (n, held) = v.in_transactions;
        assert!(held <= reserve_bytes - head_bytes, "{n} writers hold {held} bytes, more than the grant head is ahead");
        most = most.max(n);
    }
    assert!(most >= 2, "at most {most} writers were inside a transaction at once");
}

/// With a pool of CPUs the CIL panel shows a woken push worker waiting runnable for one, and
/// where its time went; a writer waiting for a CPU hears who holds them.
#[test]
fn the_cil_view_shows_a_push_worker_waiting_for_a_cpu() {
    let mut s = find_preset("fsmark-create").unwrap();
    s.cpus = 2;
    s.duration = Duration(NS_PER_SEC / 2);
    let mut sim = Sim::new(&s).unwrap();
    let mut seen = None;
    while sim.step().is_some() {
        let v = sim.cil_view();
        if v.pushers_runnable.iter().any(|&r| r) {
            seen = Some((sim.now(), v));
            break;
        }
    }
    let (at, v) = seen.expect("a push worker waited for a CPU");
    // The lab's e2e test opens this moment (`at=288575us`): runnable from 288,568,107 ns.
    assert_eq!(at, 288_568_107, "the e2e test's moment moved");
    while sim.step().is_some() && sim.cil_view().pushers_runnable.iter().any(|&r| r) {}
    assert!(sim.now() > 288_575_000, "runnable until {} ns", sim.now());
    assert!(v.pushers.iter().zip(&v.pushers_runnable).any(|(p, &r)| r && *p != PushState::Idle));
    let mut none = find_preset("fsmark-create").unwrap();
    none.duration = Duration(NS_PER_SEC / 4);
    let mut sim = Sim::new(&none).unwrap();
    sim.run();
    assert!(sim.cil_view().pushers_runnable.iter().all(|&r| !r));
    assert_eq!(sim.cil_view().push_time_ns[5], 0);
}

/// `cpu_model=kernel`: each O_DSYNC append's I/O completion runs its measured CPU time
/// (`xfs_end_io`, 6.7 us) on the pool: one charge per append written, none with the default
/// model or without a pool; on two CPUs shared with 200 writers the workers wait runnable.
#[test]
fn an_appends_io_completion_takes_cpu_time_on_the_pool_with_the_kernel_cpu_model() {
    let base = [("device", "vm-disk"), ("cpus", "2")];
    let kernel = run_set("sync-append", &[&base[..], &[("cpu_model", "kernel")]].concat(), 1);
    let writers = run_set("sync-append", &base, 1);
    let no_pool = run_set("sync-append", &[("device", "vm-disk"), ("cpu_model", "kernel")], 1);
    assert_eq!((writers.ioend_ms_cpu, writers.ioend_ms_cpu_wait), (0.0, 0.0));
    assert_eq!((no_pool.ioend_ms_cpu, no_pool.ioend_ms_cpu_wait), (0.0, 0.0));
    let completions = kernel.ioend_ms_cpu / 0.0067;
    let appends = kernel.transactions as f64;
    assert!(appends > 1000.0, "{appends}");
    // Every append acknowledged had its completion run; some in flight at the end ran too.
    assert!(completions >= appends && completions <= appends + 200.0, "{completions} for {appends} appends");
    assert!(kernel.ioend_ms_cpu_wait > 0.0, "200 writers on two CPUs: a completion waits for one");
    assert_ne!(kernel.trace_hash, writers.trace_hash);
}

/// `cpu_model=kernel`: xfsaild runs its passes on the pool, holding a CPU for the writeback
/// each took on (560 ns an inode or buffer), and waits runnable when the writers hold both
/// CPUs; the default model gives it none.
#[test]
fn xfsaild_runs_its_passes_on_the_pool_with_the_kernel_cpu_model() {
    let set = [("device", "vm-disk"), ("cpus", "2")];
    let kernel = run_set("cil-throttle-rhythm", &[&set[..], &[("cpu_model", "kernel")]].concat(), 2);
    let writers = run_set("cil-throttle-rhythm", &set, 2);
    assert_eq!((writers.xfsaild_ms_cpu, writers.xfsaild_ms_cpu_wait), (0.0, 0.0));
    let writeback_ms = kernel.metadata_writebacks as f64 * 560e-6;
    assert!(kernel.metadata_writebacks > 10_000, "{}", kernel.metadata_writebacks);
    assert!(
        (kernel.xfsaild_ms_cpu - writeback_ms).abs() < writeback_ms / 100.0,
        "{} vs {writeback_ms}",
        kernel.xfsaild_ms_cpu
    );
    assert!(kernel.xfsaild_ms_cpu_wait > 0.0, "16 writers on two CPUs: a pass waits for one");
    assert!(!kernel.hung && kernel.xfsaild_passes > 10);
}

/// `cpu_model=kernel`: a writer keeps its CPU across its creates until it sleeps, its slice
/// (EEVDF's base slice, 1.5 ms on two CPUs) is used up while a task waits, or a woken
/// high-priority worker (an iclog's completion) preempts it on its way back to user space. So
/// 16 CPU-bound writers on two CPUs wait up to 14 slices / 2 CPUs = 10.5 ms for their turn, in
/// the operation they return from (the latency p99: 6.8 ms); by default a writer gives its CPU
/// back after every create and never waits more than a create's think. (A woken push worker's
/// wait, a dozen pushes in 2 s, now ends at any such preemption: `kernel compare` holds it.)
#[test]
fn a_writer_holds_its_cpu_for_its_slice_with_the_kernel_cpu_model() {
    let set = [("device", "vm-disk"), ("cpus", "2")];
    let kernel = run_set("cil-throttle-rhythm", &[&set[..], &[("cpu_model", "kernel")]].concat(), 2);
    let writers = run_set("cil-throttle-rhythm", &set, 2);
    let turn_ms = 14.0 * 1.5 / 2.0;
    assert!((turn_ms / 3.0..turn_ms * 1.25).contains(&kernel.latency_ms_p99), "{}", kernel.latency_ms_p99);
    assert!(writers.latency_ms_p99 < 1.0, "{}", writers.latency_ms_p99);
    assert!(writers.cil_push_dispatch_ms_p99 < 0.1, "{}", writers.cil_push_dispatch_ms_p99);
}

/// `agi_lock=on`: a create sleeps on its AG's AGI buffer lock only while another create of
/// that AG holds it ("why is this blocked" names the holder), and runs the same CPU work in
/// two parts around it; `off` never sleeps there.
#[test]
fn a_create_sleeps_on_its_ags_agi_only_while_another_create_holds_it() {
    let mut s = find_preset("cil-throttle-rhythm").unwrap();
    for (k, v) in [("cpus", "2"), ("device", "vm-disk"), ("cpu_model", "kernel"), ("agi_lock", "on")] {
        s.set(k, v).unwrap();
    }
    s.duration = Duration(100 * NS_PER_MS);
    let mut sim = Sim::new(&s).unwrap();
    let mut asleep = 0;
    while sim.step().is_some() {
        for w in 0..s.writers {
            if sim.writer_state(w) != Some(WriterState::AgiWait) {
                continue;
            }
            asleep += 1;
            let why = sim.why_blocked(w).join("; ");
            let holder =
                why.split("held by writer ").nth(1).and_then(|r| r.split([',', ' ']).next()?.parse::<u32>().ok());
            let holder = holder.unwrap_or_else(|| panic!("writer {w} at {}: {why}", sim.now()));
            assert!(holder != w && holder % 4 == w % 4, "writer {w}'s AG is held by writer {holder}: {why}");
        }
    }
    assert!(asleep > 1000, "{asleep}");
    let on = sim.metrics();
    s.set("agi_lock", "off").unwrap();
    let mut sim = Sim::new(&s).unwrap();
    sim.run();
    let off = sim.metrics();
    assert_eq!(off.agi_lock_waits, 0);
    assert!(on.agi_lock_waits > 1000, "{}", on.agi_lock_waits);
    // The same CPU work a create: on two CPUs both run at the CPUs' limit.
    let ratio = on.transactions as f64 / off.transactions as f64;
    assert!((0.9..1.1).contains(&ratio), "{ratio}");
}

/// `cpu_model=kernel`: an AGI handed to a woken waiter preempts its waker, which has had more
/// than its share of the CPU, on the waker's way back to user space (`PREEMPT_NONE`). The
/// waker then waits runnable, not on the lock, and the AG's convoy breaks: on this machine's
/// kernel 60% of acquisitions find the AGI free and the median create takes 13 us; without the
/// preemption 98% of the model's creates slept there and the median took 160 us.
#[test]
fn a_woken_agi_waiter_preempts_its_waker_between_creates_and_the_convoy_breaks() {
    let set = [("cpus", "2"), ("device", "vm-disk"), ("cpu_model", "kernel"), ("agi_lock", "on")];
    let m = run_set("cil-throttle-rhythm", &set, 1);
    let slept = m.agi_lock_waits as f64 / m.transactions as f64;
    assert!((0.05..0.5).contains(&slept), "{slept}");
    assert!(m.latency_ms_p50 < 0.05, "{}", m.latency_ms_p50);
    // The convoys that remain, and the slices, still make some creates wait a slice or more.
    assert!(m.latency_ms_p99 > 0.5, "{}", m.latency_ms_p99);
}

/// `cpu_model=kernel`: a task woken onto an idle CPU starts only once that CPU has woken (this
/// VM's idle CPUs halt): on fsync-heavy, whose two CPUs are mostly idle, a queued push starts
/// 10 us or more after `queue_work` at the median, where the default model starts it at once.
/// Woken onto a busy CPU, a kernel worker runs there before the writers queued on it (as the
/// kernel's did, traced: docs/kernel.md), so no writer's think comes before a push: its tail
/// stays under 0.1 ms (0.124 ms when it queued behind them).
#[test]
fn a_task_woken_onto_an_idle_cpu_starts_once_the_cpu_has_woken() {
    let kernel = run_set("fsync-heavy", &[("cpus", "2"), ("cpu_model", "kernel")], 1);
    let writers = run_set("fsync-heavy", &[("cpus", "2")], 1);
    assert!((0.009..0.05).contains(&kernel.cil_push_dispatch_ms_p50), "{}", kernel.cil_push_dispatch_ms_p50);
    assert!(kernel.cil_push_dispatch_ms_p99 < 0.1, "{}", kernel.cil_push_dispatch_ms_p99);
    assert_eq!(writers.cil_push_dispatch_ms_p50, 0.0);
}

/// An fsync that slept returns to user space when its writer runs again: a lone writer
/// without think time runs its operations back to back, so their latencies fill the run
/// (the median near the mean). Ending them when the log force completed left out the 47 us
/// its idle CPU takes to wake (median 0.755 ms against a mean of 0.814 ms).
#[test]
fn an_fsync_returns_once_its_writer_runs_on_a_cpu_again() {
    let m = run_set("sync-append", &[("writers", "1"), ("cpus", "1"), ("cpu_model", "kernel"), ("think", "0")], 1);
    let mean_ms = 1000.0 / m.transactions as f64;
    assert!((m.latency_ms_p50 - mean_ms).abs() < 0.03, "median {} ms, mean {mean_ms} ms", m.latency_ms_p50);
}

/// With the kernel's threads on the pool, every CPU is always either idle or held by exactly one
/// task (none leaked, none held twice), and a task waits in the run queue at most once.
#[test]
fn every_cpu_of_the_pool_is_idle_or_held_by_one_task_with_the_kernel_cpu_model() {
    for (preset, sets) in [
        ("cil-throttle-rhythm", &[("cpus", "1")][..]),
        ("cil-throttle-rhythm", &[("cpus", "2"), ("device", "vm-disk")][..]),
        ("sync-append", &[("cpus", "2"), ("device", "vm-disk")][..]),
        ("fsync-heavy", &[("cpus", "1")][..]),
        ("fsmark-create", &[("cpus", "2")][..]),
        ("cil-throttle-32mb", &[("cpus", "1"), ("ail_push", "upstream")][..]),
    ] {
        let mut s = find_preset(preset).unwrap();
        for (k, v) in sets {
            s.set(k, v).unwrap();
        }
        s.set("cpu_model", "kernel").unwrap();
        s.duration = Duration(500 * NS_PER_MS);
        let mut sim = Sim::new(&s).unwrap();
        while sim.step().is_some() {
            let v = sim.cpus_view().unwrap();
            let held = v.running.iter().flatten().count();
            assert_eq!(held + v.idle, v.running.len(), "{preset} {sets:?} at {}: {v:?}", sim.now());
            let mut queued = v.runnable.clone();
            queued.sort_by_key(|t| format!("{t:?}"));
            queued.dedup();
            assert_eq!(queued.len(), v.runnable.len(), "{preset} {sets:?} at {}: queued twice: {v:?}", sim.now());
        }
        assert!(!sim.is_hung(), "{preset} {sets:?}");
    }
}
