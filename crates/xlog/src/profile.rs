//! Device profiles from physical parameters (never fitted to the source threads' results).

use crate::device::{DeviceProfile, Disk, Erase, Flash, Measured, Media, Stalls};
use crate::scenario::{CpuModel, DeviceClass, HostFlush, SataFua, Scenario};
use crate::units::{Ns, NS_PER_MS, NS_PER_US};

const MB: u64 = 1_000_000;
/// 8 TB of 512-byte sectors: the seek model's full stroke.
const DISK_SECTORS: u64 = 8_000_000_000_000 / 512;

/// The lab's CI machine's disk as its log sees it (a loop device with direct I/O over a
/// Firecracker VM's disk, 6.18), from `block_rq_issue`/`_complete` of 37,695 32 KiB iclog
/// writes during a 60 s `loglab kernel run --preset cil-throttle-rhythm`. The writes under
/// 2 ms are the per-write latency; the rest come in episodes where every write in flight
/// completes late together (a host stall: `VM_DISK_STALLS`).
/// Points: (cumulative per million, latency).
const VM_DISK_WRITE_LATENCY: &[(u32, Ns)] = &[
    (0, 26 * NS_PER_US),
    (10_000, 78 * NS_PER_US),
    (100_000, 171 * NS_PER_US),
    (250_000, 256 * NS_PER_US),
    (500_000, 383 * NS_PER_US),
    (750_000, 516 * NS_PER_US),
    (900_000, 554 * NS_PER_US),
    (990_000, 1_166 * NS_PER_US),
    (1_000_000, 1_995 * NS_PER_US),
];
/// The same loop device's 32 KiB iclog writes from the loop's request (`block_rq_issue` on
/// the loop device) to the host disk's completion of the loop's direct write (`vda`), before
/// the backing file's completion work (`iomap_dio_complete_work`) runs on a CPU and completes
/// the loop's request: 6,889 writes traced in 12 s of `kernel run --preset cil-throttle-rhythm
/// --set device=vm-disk --set cpus=2 --set agi_lock=on` (2026-12-08; docs/kernel.md). As above,
/// the writes under 2 ms (6,780; the rest are the host's stalls). For `cpu_model=kernel`,
/// which runs that completion on the pool.
const VM_DISK_HOST_WRITE_LATENCY: &[(u32, Ns)] = &[
    (0, 37 * NS_PER_US),
    (10_000, 38 * NS_PER_US),
    (100_000, 44 * NS_PER_US),
    (250_000, 53 * NS_PER_US),
    (500_000, 74 * NS_PER_US),
    (750_000, 271 * NS_PER_US),
    (900_000, 358 * NS_PER_US),
    (990_000, 565 * NS_PER_US),
    (1_000_000, 1_990 * NS_PER_US),
];
/// The same loop device's cache flushes: the backing file's fsync on the host, from
/// `block_rq_issue`/`_complete` of its flush requests (`FF`) in `loglab kernel run --trace`.
/// Its file is sparse, so what a flush costs depends on whether the writes before it
/// allocated. Overwrites only: `fsync-heavy --duration 3s` (7,358 flushes; writers
/// rewriting their blocks, the log mkfs wrote). Points: (cumulative per million, latency).
const VM_DISK_FLUSH_LATENCY: &[(u32, Ns)] = &[
    (0, 44 * NS_PER_US),
    (10_000, 66 * NS_PER_US),
    (100_000, 107 * NS_PER_US),
    (250_000, 172 * NS_PER_US),
    (500_000, 253 * NS_PER_US),
    (750_000, 351 * NS_PER_US),
    (900_000, 462 * NS_PER_US),
    (990_000, 689 * NS_PER_US),
    (1_000_000, 3_650 * NS_PER_US),
];
/// Flushes after writes that grew the file: `seed-log-size --set device=nvme-x4 --duration
/// 2s` (1,106: 200 O_DSYNC appenders, the flush queue busy 61% of the time) and
/// `cil-throttle-rhythm --set cpus=2 --duration 10s` (90: new inode clusters).
const VM_DISK_FLUSH_ALLOCATING: &[(u32, Ns)] = &[
    (0, 53 * NS_PER_US),
    (10_000, 71 * NS_PER_US),
    (100_000, 255 * NS_PER_US),
    (250_000, 493 * NS_PER_US),
    (500_000, 916 * NS_PER_US),
    (750_000, 1_462 * NS_PER_US),
    (900_000, 1_999 * NS_PER_US),
    (990_000, 8_473 * NS_PER_US),
    (1_000_000, 38_557 * NS_PER_US),
];
/// Host stalls, which come with the guest's metadata writeback: in a 20 s `kernel run
/// --preset cil-throttle-rhythm --trace` (83 completion gaps of 2 ms or more with requests in
/// flight), 57 fell while xfsaild's writes were in flight or done less than 50 ms before (3.07 s
/// of the run: one per 54 ms), 26 in the other 16.9 s (one per 648 ms, 2.1-4.9 ms long); a
/// 20 s `fsync-heavy` run, with no writeback, had 4. The busy lengths are all the stalls of a
/// 60 s run of the same scenario (375, one per 0.16 s), most of them in writeback.
const VM_DISK_STALLS: Stalls = Stalls {
    busy_mean_gap_ns: 54 * NS_PER_MS,
    busy_lengths: &[
        (0, 2 * NS_PER_MS),
        (250_000, 3_600 * NS_PER_US),
        (500_000, 5_200 * NS_PER_US),
        (750_000, 8_800 * NS_PER_US),
        (900_000, 13_900 * NS_PER_US),
        (961_000, 20 * NS_PER_MS),
        (980_000, 30_800 * NS_PER_US),
        (990_000, 69 * NS_PER_MS),
        (996_000, 89 * NS_PER_MS),
        (1_000_000, 107_600 * NS_PER_US),
    ],
    quiet_mean_gap_ns: 648 * NS_PER_MS,
    quiet_lengths: &[
        (0, 2_100 * NS_PER_US),
        (250_000, 2_800 * NS_PER_US),
        (500_000, 3_400 * NS_PER_US),
        (750_000, 3_900 * NS_PER_US),
        (900_000, 4_200 * NS_PER_US),
        (1_000_000, 4_900 * NS_PER_US),
    ],
};

/// The same loop device's flushes with nothing in flight: one writer, an O_DIRECT write then
/// the loop device's `fsync`, 3,000 times (2026-12-07): after overwriting a 4 KiB block, and
/// after a 4 KiB write to a block the sparse file never held (128 KiB: p50 161 us, p90 207).
const VM_DISK_FLUSH_IDLE: &[(u32, Ns)] = &[
    (0, 53 * NS_PER_US),
    (10_000, 62 * NS_PER_US),
    (100_000, 87 * NS_PER_US),
    (250_000, 94 * NS_PER_US),
    (500_000, 101 * NS_PER_US),
    (750_000, 116 * NS_PER_US),
    (900_000, 128 * NS_PER_US),
    (990_000, 180 * NS_PER_US),
    (999_000, 213 * NS_PER_US),
    (1_000_000, 958 * NS_PER_US),
];
const VM_DISK_FLUSH_IDLE_ALLOCATING: &[(u32, Ns)] = &[
    (0, 83 * NS_PER_US),
    (10_000, 99 * NS_PER_US),
    (100_000, 121 * NS_PER_US),
    (250_000, 133 * NS_PER_US),
    (500_000, 140 * NS_PER_US),
    (750_000, 160 * NS_PER_US),
    (900_000, 171 * NS_PER_US),
    (990_000, 197 * NS_PER_US),
    (999_000, 436 * NS_PER_US),
    (1_000_000, 1_653 * NS_PER_US),
];

/// The device a scenario runs on: its class's profile, with the scenario's switches applied
/// (`sata_fua`, `host_flush`).
pub fn profile_for(s: &Scenario) -> DeviceProfile {
    let mut prof = profile(s.device);
    if prof.libata && s.sata_fua == SataFua::Emulated {
        prof.fua = false;
    }
    if let (Media::Measured(m), HostFlush::Inflight) = (&mut prof.media, s.host_flush) {
        m.flush_idle = Some((VM_DISK_FLUSH_IDLE, VM_DISK_FLUSH_IDLE_ALLOCATING));
    }
    // With the kernel's threads on the CPUs, the loop device's completions are one of them.
    if let (Media::Measured(m), CpuModel::Kernel) = (&mut prof.media, s.cpu_model) {
        if let (Some(host), true) = (m.host_write_latency, s.cpus > 0) {
            (m.write_latency, m.completes_on_cpu) = (host, true);
        }
    }
    prof
}

pub fn profile(class: DeviceClass) -> DeviceProfile {
    // 7200 rpm: 8.33 ms per turn, 4.17 ms half.
    let disk = Disk {
        ncq_disks: Some(1),
        seek_ns: 8 * NS_PER_MS + 500 * NS_PER_US, // 8.5 ms average seek (datasheet class)
        half_rotation_ns: 4_170 * NS_PER_US,
        // Each cached extent destages with a rotational wait (half a turn on average, drawn
        // per extent) after its short seek (`flush_per_extent_ns`).
        flush_rotation_ns: 4_170 * NS_PER_US,
        members: 1,
        parity_stripe_bytes: None,
    };
    let hdd = DeviceProfile {
        name: "hdd",
        volatile_cache: true,
        // NCQ: 32 commands queued; writes into the cache complete over the link while the
        // one actuator serves reads and write-through writes in turn.
        queue_depth: 32,
        cmd_ns: 50 * NS_PER_US, // SATA command + cache write
        bus_bytes_per_sec: 550 * MB,
        media_bytes_per_sec: 200 * MB, // outer-track sustained rate of a 7200 rpm disk
        flush_base_ns: 200 * NS_PER_US,
        // The short seek per extent destaged is the datasheet's single-track write seek
        // including settling, typical (Hitachi Deskstar 7K320 spec, table 7: 1.1 ms; 2.2 ms
        // is its maximum), like the typical average seek above.
        flush_per_extent_ns: 1_100 * NS_PER_US,
        md_flush: false,
        min_interval_ns: None,
        capacity_sectors: DISK_SECTORS,
        fua: true,
        libata: true,
        // SATA behind AHCI: one hardware queue, so one blk-mq flush queue for every flush.
        one_flush_queue: true,
        media: Media::Disk(disk),
    };
    let tlc = Flash {
        program_ns: Some(250 * NS_PER_US), // TLC page program for write-through (FUA)
        read_ns: 70 * NS_PER_US,           // TLC page read (tR) plus the FTL lookup
        // 3D TLC, datasheet class: a 1 TB drive's 8 channels x 4 dies; a block of 24 MiB
        // (1,536 pages of 16 KiB) erased in 3.5 ms (tBERS is 3-5 ms typical).
        erase: Some(Erase { dies: 32, block_bytes: 24 << 20, erase_ns: 3_500 * NS_PER_US }),
    };
    let nvme = DeviceProfile {
        name: "nvme",
        volatile_cache: true,
        queue_depth: 32,
        // 60k random-write IOPS at queue depth 1 class: ~16 us per 4 KiB write into DRAM cache.
        cmd_ns: 14 * NS_PER_US,
        bus_bytes_per_sec: 3_000 * MB,   // PCIe 3.0 x4
        media_bytes_per_sec: 1_500 * MB, // TLC NAND sustained program rate across dies
        flush_base_ns: 300 * NS_PER_US,  // flush: drain cache + FTL metadata commit
        flush_per_extent_ns: 2 * NS_PER_US,
        md_flush: false,
        min_interval_ns: None,
        capacity_sectors: DISK_SECTORS / 8,
        fua: true,
        libata: false,
        one_flush_queue: false,
        media: Media::Flash(tlc),
    };
    match class {
        DeviceClass::Hdd => hdd,
        DeviceClass::HddX4 => DeviceProfile {
            name: "hdd-x4",
            queue_depth: 4 * 32, // four disks, each with NCQ
            bus_bytes_per_sec: 4 * hdd.bus_bytes_per_sec,
            media_bytes_per_sec: 4 * hdd.media_bytes_per_sec,
            capacity_sectors: 4 * DISK_SECTORS,
            // Cached extents spread over four spindles, which destage them in parallel.
            flush_per_extent_ns: hdd.flush_per_extent_ns / 4,
            md_flush: true, // md raid0 over four disks
            media: Media::Disk(Disk {
                ncq_disks: Some(4),
                flush_rotation_ns: disk.flush_rotation_ns / 4,
                members: 4,
                ..disk
            }),
            ..hdd
        },
        DeviceClass::Nvme => nvme,
        DeviceClass::NvmeX4 => DeviceProfile {
            name: "nvme-x4",
            queue_depth: 128,
            bus_bytes_per_sec: 4 * nvme.bus_bytes_per_sec,
            media_bytes_per_sec: 4 * nvme.media_bytes_per_sec,
            // A flush must drain all four members: the slowest member sets the pace.
            flush_base_ns: nvme.flush_base_ns + 50 * NS_PER_US,
            md_flush: true, // md raid0 over four drives
            // md's chunks spread the pages over four drives' dies.
            media: Media::Flash(Flash { erase: Some(Erase { dies: 4 * 32, ..tlc.erase.unwrap() }), ..tlc }),
            ..nvme
        },
        DeviceClass::SataSsd => DeviceProfile {
            name: "sata-ssd",
            queue_depth: 32,             // NCQ
            cmd_ns: 60 * NS_PER_US,      // AHCI + SATA link
            bus_bytes_per_sec: 550 * MB, // SATA 6 Gb/s
            media_bytes_per_sec: 450 * MB,
            flush_base_ns: 2 * NS_PER_MS, // non-queued FLUSH CACHE drains NCQ and commits the FTL
            one_flush_queue: true,        // AHCI: one hardware queue
            libata: true,
            media: Media::Flash(Flash {
                program_ns: Some(500 * NS_PER_US), // consumer TLC/QLC program
                // A consumer drive's 4 channels x 2 dies.
                erase: Some(Erase { dies: 8, ..tlc.erase.unwrap() }),
                ..tlc
            }),
            ..nvme
        },
        DeviceClass::EnterpriseSsd => DeviceProfile {
            name: "enterprise-ssd",
            volatile_cache: false, // power-loss protected cache counts as stable
            cmd_ns: 20 * NS_PER_US,
            // The protected DRAM cache absorbs writes, and hides the erases behind it.
            media: Media::Flash(Flash { program_ns: None, erase: None, ..tlc }),
            ..nvme
        },
        DeviceClass::IscsiCloud => DeviceProfile {
            name: "iscsi-cloud",
            queue_depth: 32,
            cmd_ns: 500 * NS_PER_US,     // a network round trip per request
            bus_bytes_per_sec: 125 * MB, // provider throughput cap (1 Gb/s class)
            media_bytes_per_sec: 125 * MB,
            flush_base_ns: NS_PER_MS,
            min_interval_ns: Some(333 * NS_PER_US), // provider cap: 3000 IOPS
            one_flush_queue: true,                  // iscsi_tcp: one hardware queue per session
            // A replicated volume: the network, not a die, sets its times; write-through
            // costs another replicated round trip.
            media: Media::Flash(Flash { program_ns: Some(500 * NS_PER_US), erase: None, ..tlc }),
            ..nvme
        },
        DeviceClass::VmDisk => DeviceProfile {
            name: "vm-disk",
            // A loop device over this lab's CI machine's virtual disk (a Firecracker VM). It
            // advertises a write cache (`queue/write_cache`: write back) and no FUA, and has
            // one hardware queue: PREFLUSH and explicit flushes become flush requests, one at
            // a time, and a FUA write a write and a flush after it.
            volatile_cache: true,
            fua: false,
            one_flush_queue: true,
            queue_depth: 128,
            cmd_ns: 0,
            // Measured on a loop device (`--direct-io=on`) over a sparse file on this disk,
            // k `xfs_io -d` writers each writing 192 MiB of 128 KiB blocks to fresh space: 1 in
            // flight 453 MiB/s (0.28 ms a write), 4: 959, 8: 1,104, 16: 1,204, 32: 1,148. Its
            // link carries what the disk takes at most; the write latencies above hold the rest.
            bus_bytes_per_sec: 1_200 * MB,
            media_bytes_per_sec: 0,
            // Measured: its tables hold whatever the host's media did.
            media: Media::Measured(Measured {
                write_latency: VM_DISK_WRITE_LATENCY,
                flush_latency: VM_DISK_FLUSH_LATENCY,
                flush_latency_allocating: Some(VM_DISK_FLUSH_ALLOCATING),
                flush_idle: None,
                read_ns: tlc.read_ns, // not measured: reads are rare here
                stalls: Some(VM_DISK_STALLS),
                host_write_latency: Some(VM_DISK_HOST_WRITE_LATENCY),
                completes_on_cpu: false,
            }),
            ..nvme
        },
        DeviceClass::Raid6Old => DeviceProfile {
            name: "raid6-old",
            queue_depth: 6, // 8 disks, 6 data spindles
            bus_bytes_per_sec: 400 * MB,
            media_bytes_per_sec: 600 * MB,
            flush_base_ns: 10 * NS_PER_MS, // controller flushes its cache to every member
            capacity_sectors: 6 * DISK_SECTORS / 4,
            libata: false, // a hardware RAID controller: SCSI, FUA its own
            media: Media::Disk(Disk {
                ncq_disks: None,                          // the controller's queue: its channels are the spindles
                seek_ns: 9 * NS_PER_MS,                   // 2010-era 7200 rpm members
                parity_stripe_bytes: Some(6 * 64 * 1024), // 64 KiB chunks x 6 data disks
                ..disk
            }),
            ..hdd
        },
    }
}
