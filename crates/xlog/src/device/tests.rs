//! The device's behaviour seen from outside: durability, flush sharing and service times.

use super::flash::FLASH_PAGE_BYTES;
use super::md::MD_CHUNK_SECTORS;
use super::*;
use crate::profile::profile;
use crate::scenario::DeviceClass;
use crate::units::{NS_PER_MS, NS_PER_US};

fn dev(class: DeviceClass) -> Device {
    Device::new(profile(class), DeviceBug::None, 1)
}
fn block(byte: u8) -> Vec<u8> {
    vec![byte; SECTOR]
}

/// Completion finds each request by id whatever the order: the in-flight list keeps the
/// others, the window of ids drops what has completed, and ids keep counting across an
/// empty window.
#[test]
fn requests_complete_in_any_order_and_each_is_the_one_asked_for() {
    let mut d = dev(DeviceClass::NvmeX4);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..4u64 {
        let mut ids: Vec<(u64, u64)> = (0..200)
            .map(|i| {
                let sector = 8 * (round * 1000 + i);
                let id = if i % 7 == 3 {
                    d.submit_flush(0, sector).0
                } else {
                    d.submit_write(0, sector, block(i as u8), ReqFlags::PLAIN, sector).0
                };
                (id, sector)
            })
            .collect();
        while !ids.is_empty() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (id, tag) = ids.swap_remove((x % ids.len() as u64) as usize);
            let req = d.complete(id);
            assert_eq!((req.id, req.tag), (id, tag));
            assert_eq!(d.inflight().len(), ids.len());
        }
        assert!(d.inflight_at.is_empty(), "round {round}: a drained device keeps no window");
    }
}

#[test]
fn plain_write_completes_into_cache_not_media() {
    let mut d = dev(DeviceClass::Nvme);
    let (id, _) = d.submit_write(0, 10, block(1), ReqFlags::PLAIN, 0);
    d.complete(id);
    assert!(d.stable().get(10).is_none());
    assert_eq!(d.cached().len(), 1);
}

#[test]
fn fua_write_is_stable_at_completion_and_orders_nothing_else() {
    let mut d = dev(DeviceClass::Nvme);
    let (a, _) = d.submit_write(0, 1, block(1), ReqFlags::PLAIN, 0);
    d.complete(a);
    let (b, _) = d.submit_write(0, 2, block(2), ReqFlags::FUA, 0);
    d.complete(b);
    assert_eq!(d.stable().get(2).unwrap()[0], 2);
    assert!(d.stable().get(1).is_none(), "FUA must not flush earlier cached writes");
}

#[test]
fn preflush_covers_only_writes_completed_before_issue() {
    let mut d = dev(DeviceClass::Nvme);
    let (a, _) = d.submit_write(0, 1, block(1), ReqFlags::PLAIN, 0);
    d.complete(a);
    let (b, _) = d.submit_write(0, 2, block(2), ReqFlags::PLAIN, 0); // in flight at issue
    let (f, _) = d.submit_write(0, 3, block(3), ReqFlags::PREFLUSH, 0);
    d.complete(b); // completes after the PREFLUSH was issued
    d.complete(f);
    assert!(d.stable().contains(1), "completed before issue: made stable");
    assert!(!d.stable().contains(2), "completed after issue: not covered");
    assert!(!d.stable().contains(3), "PREFLUSH without FUA leaves the write cached");
}

/// blk-flush: one flush in flight per queue. PREFLUSH writes that arrive while it runs
/// share the next flush, which starts only once the running flush and its writes are done.
#[test]
fn preflush_writes_share_one_flush_at_a_time_as_the_block_layer_runs_them() {
    let mut d = dev(DeviceClass::Nvme);
    let (first, t1) = d.submit_write(0, 8, block(1), ReqFlags::PREFLUSH_FUA, 0);
    let q1 = d.flush_window();
    assert_eq!(q1.0, 0);
    assert!(t1 > q1.1, "the write goes out once its flush is done");
    let (_, t2) = d.submit_write(NS_PER_US, 16, block(2), ReqFlags::PREFLUSH_FUA, 0);
    let q2 = d.flush_window();
    assert_eq!(q2.0, t1, "the second flush waits for the first and its write");
    let (_, t3) = d.submit_write(2 * NS_PER_US, 24, block(3), ReqFlags::PREFLUSH_FUA, 0);
    assert_eq!(d.flush_window().0, q2.0, "an arrival while the second waits shares it");
    assert!(t2 > q2.1 && t3 > q2.1);
    assert_eq!(d.stats.flushes, 3, "three PREFLUSH requests");
    d.complete(first);
    // Writes on a plain queue still overlap: only PREFLUSH writes queue for the flush.
    let (_, plain) = d.submit_write(3 * NS_PER_US, 32, block(4), ReqFlags::PLAIN, 0);
    assert!(plain < q2.0);
}

#[test]
fn explicit_flush_makes_earlier_completions_stable() {
    let mut d = dev(DeviceClass::Hdd);
    let (a, _) = d.submit_write(0, 7, block(7), ReqFlags::PLAIN, 0);
    d.complete(a);
    let (f, _) = d.submit_flush(0, 0);
    d.complete(f);
    assert_eq!(d.stable().get(7).unwrap()[0], 7);
    assert!(d.cached().is_empty());
}

#[test]
fn no_volatile_cache_elides_flushes_and_writes_are_stable() {
    let mut d = dev(DeviceClass::EnterpriseSsd);
    let (a, _) = d.submit_write(0, 4, block(4), ReqFlags::PREFLUSH_FUA, 0);
    d.complete(a);
    let (f, t) = d.submit_flush(100, 0);
    assert_eq!(t, 100);
    d.complete(f);
    assert_eq!(d.stats.flushes, 0);
    assert_eq!(d.stats.flushes_elided, 2, "the PREFLUSH and the explicit flush");
    assert_eq!(d.stats.fua_writes, 0);
    assert!(d.stable().contains(4));
}

#[test]
fn broken_fua_rule_leaves_data_in_cache() {
    let mut d = Device::new(profile(DeviceClass::Nvme), DeviceBug::FuaIgnored, 1);
    let (a, _) = d.submit_write(0, 5, block(5), ReqFlags::FUA, 0);
    d.complete(a);
    assert!(d.stable().get(5).is_none());
}

/// Flash behind one hardware queue: the writes in flight share its link. Together they
/// move no more than its rate (`vm-disk`'s is the rate measured on this machine's disk),
/// while a small write sent behind them is not held for all of them.
#[test]
fn the_writes_in_flight_share_a_flash_links_rate() {
    for class in [DeviceClass::SataSsd, DeviceClass::VmDisk] {
        let mut d = dev(class);
        let (n, bytes) = (32u64, 128u64 << 10);
        let last = (0..n).map(|i| d.submit_write(0, i * 1024, vec![0; bytes as usize], ReqFlags::PLAIN, 0).1);
        let last = last.max().unwrap();
        let wire = n * bytes * NS_PER_SEC / d.profile().bus_bytes_per_sec;
        let alone = dev(class).submit_write(0, 0, vec![0; bytes as usize], ReqFlags::PLAIN, 0).1;
        assert!(last >= wire && last > 4 * alone, "{class:?}: {n} writes done at {last}, wire {wire}, one {alone}");
        let (_, small) = d.submit_write(0, 1 << 30, block(1), ReqFlags::PLAIN, 0);
        assert!(small < last / 4, "{class:?}: a 512-byte write beside the backlog: {small} ({last})");
    }
}

#[test]
fn deep_queues_complete_out_of_order_and_hdd_in_order() {
    let mut d = dev(DeviceClass::NvmeX4);
    let (_, big) = d.submit_write(0, 0, vec![0; 256 << 10], ReqFlags::PLAIN, 0);
    let (_, small) = d.submit_write(0, 1000, block(1), ReqFlags::PLAIN, 0);
    assert!(small < big, "a small write behind a large one may finish first");
    let mut h = dev(DeviceClass::Hdd);
    let (_, t1) = h.submit_write(0, 0, vec![0; 256 << 10], ReqFlags::PLAIN, 0);
    let (_, t2) = h.submit_write(0, 1000, block(1), ReqFlags::PLAIN, 0);
    assert!(t2 > t1);
}

/// NCQ: a disk's writes into its cache complete over its link while its one actuator
/// seeks for a read; a second read waits for the first. In an array each member disk (by
/// md's chunk) has its own actuator.
#[test]
fn a_disk_caches_writes_while_its_actuator_seeks_and_reads_take_turns() {
    let mut h = dev(DeviceClass::Hdd);
    let (_, r1) = h.submit_read(0, 1 << 30, 4096, 0);
    let (_, w) = h.submit_write(0, 0, block(1), ReqFlags::PLAIN, 0);
    let (_, r2) = h.submit_read(0, 2 << 30, 4096, 0);
    assert!(r1 > NS_PER_MS && w < 200 * NS_PER_US, "the write does not wait for the seek: {w} vs {r1}");
    assert!(r2 > r1, "one actuator: {r2} after {r1}");
    // Sixteen reads far apart on member 0 (each seeks over a millisecond), then one on
    // member 1: it takes at most a seek and a turn, not its turn behind them.
    let mut a = dev(DeviceClass::HddX4);
    let member0: Vec<Ns> = (1..=16u64).map(|i| a.submit_read(0, i << 32, 4096, 0).1).collect();
    let (_, m1) = a.submit_read(0, (1 << 32) + MD_CHUNK_SECTORS, 4096, 0);
    assert!(member0.windows(2).all(|w| w[1] > w[0]), "one actuator per member: {member0:?}");
    assert!(m1 < member0[15], "another member's actuator does not wait: {m1} vs {}", member0[15]);
}

/// Writes of `bytes` each at `sectors`, all submitted at time 0, then a flush at `at` (or
/// once the last write completed, if later): how long from `at` until the flush is done.
fn flush_after(class: DeviceClass, sectors: &[u64], bytes: usize, at: Ns) -> Ns {
    let mut d = dev(class);
    let mut issue = at;
    for &s in sectors {
        let (id, done) = d.submit_write(0, s, vec![1; bytes], ReqFlags::PLAIN, 0);
        d.complete(id);
        issue = issue.max(done);
    }
    let (_, done) = d.submit_flush(issue, 0);
    done - at
}

/// A stall holds every request it overlaps for the overlap: requests in flight together
/// complete late together, as the CI machine's iclog writes do (its `vm-disk` profile);
/// between stalls a write takes its measured latency, under 2 ms. The host stalls about
/// twelve times as often while metadata is written back as otherwise.
#[test]
fn a_stall_delays_every_request_it_overlaps_and_writes_between_take_their_measured_time() {
    let mut d = dev(DeviceClass::VmDisk);
    let phase = |d: &mut Device, t0: Ns, writeback: bool| {
        let (mut t, mut any_late, mut both_late, mut fast) = (t0, 0, 0, 0);
        for _ in 0..4000 {
            let (_, a) = d.submit_write(t, 0, block(1), ReqFlags::default(), 0);
            let (_, b) = d.submit_write(t, 8, block(2), ReqFlags::default(), 0);
            if writeback {
                d.note_writeback(a.max(b));
            }
            let (la, lb) = (a - t, b - t);
            // Under 2 ms is a write's own latency; a stall makes it later.
            any_late += (la.max(lb) > 2 * NS_PER_MS) as u32;
            both_late += (la.min(lb) > 2 * NS_PER_MS) as u32;
            fast += (la <= 2 * NS_PER_MS) as u32;
            t = a.max(b) + 5 * NS_PER_MS;
        }
        (t, any_late, both_late, fast)
    };
    let (t, quiet, _, _) = phase(&mut d, 0, false);
    let (_, busy, both_late, fast) = phase(&mut d, t + NS_PER_SEC, true);
    assert!(fast > 3000, "most writes are fast: {fast}");
    eprintln!("late with writeback {busy}, without {quiet}");
    assert!(busy > 100 && busy < 1500, "a stall every ~54 ms over ~28 s of writeback: {busy}");
    assert!(quiet * 4 < busy && quiet > 5, "one every ~0.65 s without: {quiet} (with: {busy})");
    // Independent per-request tails would make both late about never.
    assert!(both_late * 5 >= busy * 4, "a stall holds both requests in flight: {both_late} of {busy}");
}

/// The loop device has a write cache, no FUA and one flush queue: a FUA write completes
/// with the flush sent after it and is then stable; flushes asked for together share one.
#[test]
fn a_loop_device_emulates_fua_with_a_flush_and_shares_concurrent_flushes() {
    let mut d = dev(DeviceClass::VmDisk);
    let (plain, t_plain) = d.submit_write(0, 0, block(1), ReqFlags::PLAIN, 0);
    d.complete(plain);
    assert_eq!(d.cached().len(), 1, "a plain write is volatile");
    let fua = ReqFlags { preflush: false, fua: true };
    let (w, t_fua) = d.submit_write(t_plain, 8, block(2), fua, 0);
    let data_done = d.inflight().iter().find(|r| r.id == w).map(|r| r.flush_window).unwrap();
    let (fstart, fend) = data_done.expect("the write carries its post-flush");
    assert_eq!(t_fua, fend, "the FUA write completes with its flush");
    assert!(fstart > t_plain, "the flush follows the write");
    d.complete(w);
    assert!(d.cached().is_empty(), "the flush after it made the earlier write stable too");
    assert_eq!(d.stable().get(8).unwrap()[0], 2);
    // Three explicit flushes asked for while one runs: the next flush serves all three.
    let (_, a) = d.submit_flush(t_fua, 0);
    let ends: Vec<Ns> = (0..3).map(|_| d.submit_flush(t_fua + 1, 0).1).collect();
    assert!(ends.iter().all(|&e| e == ends[0] && e > a), "{a} {ends:?}");
    assert_eq!(d.stats.flushes, 5, "one post-flush and four flush requests");
}

/// Its backing file is sparse: a flush after writes that grew it costs the host's
/// allocations too (0.9 ms at the median measured, against 0.25 ms after overwrites).
#[test]
fn a_loop_device_flush_costs_more_after_writes_that_grow_its_file() {
    let mut d = dev(DeviceClass::VmDisk);
    d.mark_backed(0, 64);
    let (mut t, mut over, mut grow) = (0, 0, 0);
    for i in 0..400u64 {
        // Even rounds rewrite a block the file holds; odd rounds write a new one.
        let sector = if i % 2 == 0 { 8 } else { 1_000 + 8 * i };
        let (w, done) = d.submit_write(t, sector, block(1), ReqFlags::PLAIN, 0);
        d.complete(w);
        let (_, end) = d.submit_flush(done, 0);
        *(if i % 2 == 0 { &mut over } else { &mut grow }) += end - done;
        t = end + NS_PER_MS;
    }
    let (over, grow) = (over / 200, grow / 200);
    assert!(over < 400 * NS_PER_US && grow > 2 * over, "mean flush after overwrites {over}, after growth {grow}");
}

/// `host_flush=inflight`: a flush on the loop device waits for the writes in flight, then
/// takes what a flush with nothing in flight takes (about 0.1 ms; 0.14 ms after new blocks),
/// where the measured tables give it their workloads' load whatever is in flight.
#[test]
fn a_loop_device_flush_waits_for_the_writes_in_flight_with_host_flush_inflight() {
    use crate::scenario::HostFlush;
    let inflight = crate::scenario::Scenario { device: DeviceClass::VmDisk, ..Default::default() };
    assert_eq!(inflight.host_flush, HostFlush::Inflight, "the default since model version 3");
    let s = crate::scenario::Scenario { host_flush: HostFlush::Table, ..inflight.clone() };
    let run_new = |s: &crate::scenario::Scenario, writes: u64, new_blocks: bool| {
        let mut d = Device::new(crate::profile::profile_for(s), DeviceBug::None, 1);
        if !new_blocks {
            d.mark_backed(0, 1 << 20);
        }
        let (mut t, mut waited, mut after_last) = (0, 0, 0);
        for round in 0..200 {
            let sector = |i: u64| 8 * (round * writes + i);
            let last = (0..writes).map(|i| d.submit_write(t, sector(i), block(1), ReqFlags::PLAIN, 0).1).max();
            let (_, end) = d.submit_flush(t, 0);
            waited += end - t;
            after_last += end.saturating_sub(last.unwrap_or(t));
            t = end + NS_PER_MS;
        }
        (waited / 200, after_last / 200)
    };
    let run = |s: &crate::scenario::Scenario, writes: u64| run_new(s, writes, false);
    let (idle, _) = run(&inflight, 0);
    assert!(idle < 150 * NS_PER_US, "nothing in flight: {idle}");
    let (busy, after_last) = run(&inflight, 32);
    assert!(busy > idle + 100 * NS_PER_US && after_last < 300 * NS_PER_US, "{busy} {after_last}");
    let (table, _) = run(&s, 0);
    assert!(table > 2 * idle, "the table's flushes hold fsync-heavy's load: {table} vs {idle}");
    // After a write to a block the sparse file never held: its own idle table (p50 140 us).
    let (grown, _) = run_new(&inflight, 1, true);
    let (rewritten, _) = run(&inflight, 1);
    assert!(grown > rewritten + 20 * NS_PER_US, "{grown} vs {rewritten}");
}

#[test]
fn a_disk_destages_in_the_background_so_a_flush_after_idle_waits_for_nothing() {
    let p = profile(DeviceClass::Hdd);
    let scattered: Vec<u64> = (0..64).map(|i| i * 7_919_000).collect();
    let at_once = flush_after(DeviceClass::Hdd, &scattered, 4096, 0);
    assert!(at_once > 64 * p.flush_per_extent_ns, "64 scattered extents to destage: {at_once}");
    let idle = flush_after(DeviceClass::Hdd, &scattered, 4096, 10 * NS_PER_SEC);
    assert_eq!(idle, p.cmd_ns + p.flush_base_ns, "the media wrote them out meanwhile");
    // Flash pays at the flush for every write cached since the last one.
    assert!(flush_after(DeviceClass::Nvme, &scattered, 4096, 10 * NS_PER_SEC) > 64 * 2 * NS_PER_US);
}

#[test]
fn a_disk_destages_appends_in_one_pass_and_scattered_writes_a_turn_each() {
    // 64 appends of 128 KiB: each continues where the last left the head.
    let appends: Vec<u64> = (0..64).map(|i| 1_000_000 + i * 256).collect();
    let seq = flush_after(DeviceClass::Hdd, &appends, 128 << 10, 0);
    let scattered: Vec<u64> = (0..64).map(|i| i * 7_919_000).collect();
    let far = flush_after(DeviceClass::Hdd, &scattered, 128 << 10, 0);
    let p = profile(DeviceClass::Hdd);
    let media = transfer_ns(64 * (128 << 10), p.media_bytes_per_sec);
    assert!(seq < media + 2 * p.disk().unwrap().seek_ns, "sequential: {seq} vs media time {media}");
    assert!(seq > media, "{seq}");
    assert!(far > media + 64 * p.flush_per_extent_ns, "a seek and a wait each: {far}");
    // Many extents on few tracks: the scheduler takes them as they come round, well under
    // half a turn each.
    let dense: Vec<u64> = (0..64).map(|i| 2_000_000 + i * 97).collect();
    let t = flush_after(DeviceClass::Hdd, &dense, 4096, 0);
    assert!(t < 64 * p.disk().unwrap().half_rotation_ns / 4, "RPO on a few tracks: {t}");
    // Seeded and address-driven: the same writes give the same time.
    assert_eq!(t, flush_after(DeviceClass::Hdd, &dense, 4096, 0));
}

/// A SATA drive has one hardware queue, so explicit flushes issued together share one
/// flush command (blk-mq's flush queue: one in flight, those arriving meanwhile share the
/// next); NVMe's queue per CPU sends each its own.
#[test]
fn a_sata_drive_shares_concurrent_flushes_and_nvme_sends_each() {
    for class in [DeviceClass::SataSsd, DeviceClass::Hdd] {
        let mut d = dev(class);
        let (_, a) = d.submit_flush(0, 0);
        let (_, b) = d.submit_flush(10, 0);
        let (_, c) = d.submit_flush(20, 0);
        assert!(b > a && b == c, "{class:?}: the second waits for the first, the third shares it: {a} {b} {c}");
    }
    let mut d = dev(DeviceClass::Nvme);
    let (_, a) = d.submit_flush(0, 0);
    let (_, b) = d.submit_flush(10, 0);
    let (_, c) = d.submit_flush(20, 0);
    assert!(b < 2 * a && c == b + 10, "each its own command, side by side: {a} {b} {c}");
}

/// On SATA (libata) a cache flush is not queued: it waits for the commands in flight, and
/// a command sent while it runs waits for it. NVMe queues a flush beside reads and writes.
#[test]
fn a_sata_flush_holds_the_drives_queue_and_an_nvme_flush_does_not() {
    for (class, libata) in [(DeviceClass::SataSsd, true), (DeviceClass::Hdd, true), (DeviceClass::Nvme, false)] {
        let mut d = dev(class);
        let (_, read) = d.submit_read(0, 1 << 20, 4096, 0);
        let (_, flush) = d.submit_flush(10, 0);
        let (_, write) = d.submit_write(20, 2 << 20, vec![0; 4096], ReqFlags::PLAIN, 0);
        let flush_alone = dev(class).submit_flush(10, 0).1;
        let write_alone = dev(class).submit_write(20, 2 << 20, vec![0; 4096], ReqFlags::PLAIN, 0).1;
        if libata {
            assert!(flush > flush_alone && flush > read, "{class:?}: the flush waits for the read: {read} {flush}");
            assert!(write > flush, "{class:?}: the write waits for the flush: {flush} {write}");
        } else {
            assert_eq!((flush, write), (flush_alone, write_alone), "{class:?}: side by side with the read");
        }
    }
}

/// Flash erases a block for every block's worth programmed, on the dies in turn, and a
/// program whose page lands on a die that is erasing waits for the erase to end.
#[test]
fn a_program_that_needs_an_erasing_die_waits_for_the_erase() {
    let mut d = dev(DeviceClass::Nvme);
    let e = *d.profile().erase().unwrap();
    let (block, erase) = (e.block_bytes, e.erase_ns);
    assert_eq!(d.program_dies(0, block - FLASH_PAGE_BYTES, 1_000), 0, "nothing erasing yet");
    // The page that fills the block: die 0 starts erasing when that program is done.
    assert_eq!(d.program_dies(2_000, FLASH_PAGE_BYTES, 100), 0);
    // A block is a whole number of pages per die round, so the next page is die 0's.
    assert_eq!(d.program_dies(3_000, FLASH_PAGE_BYTES, 100), 2_100 + erase - 3_000);
    // The next die is free, and die 0 is after its erase.
    assert_eq!(d.program_dies(3_000, FLASH_PAGE_BYTES, 100), 0);
    assert_eq!(d.program_dies(2_100 + erase, 32 * FLASH_PAGE_BYTES, 100), 0, "every die, none erasing");
    // Devices without the model (disks, measured ones) never wait.
    assert_eq!(dev(DeviceClass::VmDisk).program_dies(0, 2 * block, 100), 0);
}

#[test]
fn flush_cost_grows_with_dirty_cache() {
    let mut d = dev(DeviceClass::Hdd);
    let (_, empty) = d.submit_flush(0, 0);
    let mut d2 = dev(DeviceClass::Hdd);
    let mut last = 0;
    for i in 0..64 {
        let (id, done) = d2.submit_write(0, i * 1000, vec![0; 4096], ReqFlags::PLAIN, 0);
        d2.complete(id);
        last = last.max(done);
    }
    let (_, t) = d2.submit_flush(last, 0);
    assert!(t - last > empty * 2, "draining 64 extents costs more than an empty flush");
}
