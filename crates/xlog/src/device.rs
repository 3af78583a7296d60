//! Emulated block device: a volatile write cache over stable media, with Linux flush/FUA rules.
//!
//! Durability model (what survives a crash, and why):
//! - Stable media always survive. A completed plain write sits in the volatile cache and
//!   becomes stable only when a flush *issued after it completed* finishes.
//! - PREFLUSH on a write: every write completed before that write was issued is made stable
//!   before the write's own data lands. FUA: that one write is stable when it completes.
//! - At a crash any subset of cached writes may survive; in-flight writes may be absent,
//!   present or torn at sector granularity. Without a volatile cache, writes complete to
//!   stable media and flushes are elided (as the block layer does).

use crate::format::PendingCrc;
use crate::scenario::DeviceBug;
use crate::units::{Ns, NS_PER_SEC};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

pub use crate::sectors::{SectorMap, SECTOR};

/// Physical parameters of a device class (see `profile.rs` for the sources).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceProfile {
    pub name: &'static str,
    pub volatile_cache: bool,
    /// Requests the device works on at once; more than one lets completions reorder.
    pub queue_depth: u32,
    /// Disks whose one actuator each serves their reads and write-through writes in turn,
    /// while writes into the cache complete over the link (NCQ); 0 for flash and for devices
    /// whose channels are the whole story. An array's member holds a sector by md's chunk.
    pub actuators: u32,
    /// Fixed cost of every command (controller, protocol, network round trip).
    pub cmd_ns: Ns,
    /// Host-to-device transfer rate: a disk's link, which its requests take in turn; behind
    /// one hardware queue, a flash device's link, which its writes in flight share
    /// (`link_share`); NVMe's, each request's own.
    pub bus_bytes_per_sec: u64,
    /// Cache-to-media (or write-through) transfer rate.
    pub media_bytes_per_sec: u64,
    /// Rotating media: average seek and half a rotation; zero for flash.
    pub seek_ns: Ns,
    pub half_rotation_ns: Ns,
    /// Flash program latency paid by write-through (FUA or no cache) writes.
    pub program_ns: Ns,
    /// Fixed cost of a cache flush. Destaging the cache: per discontiguous extent on flash,
    /// per track visited on rotating media (a short seek); and on rotating media half the
    /// time of a turn (the rotational wait, drawn per track).
    pub flush_base_ns: Ns,
    pub flush_per_extent_ns: Ns,
    pub flush_rotation_ns: Ns,
    /// Spindles destaging in parallel (an array of `members` disks as one faster disk).
    pub members: u32,
    /// An md array: `md_flush_request` admits one flush at a time; the flush requests that
    /// arrive while one runs wait for it and are then served together by the next.
    pub md_flush: bool,
    /// Media time of a random 4 KiB read on flash (disks pay seek and rotation instead).
    pub read_ns: Ns,
    /// Minimum spacing between request starts (provider IOPS cap); zero for none.
    pub min_interval_ns: Ns,
    /// Full-stripe size of a parity array; smaller writes pay a read-modify-write.
    pub stripe_bytes: u64,
    pub capacity_sectors: u64,
    /// A measured write latency distribution, as (cumulative probability per million,
    /// latency) points, drawn per write (cached or not: a measured device's writes take their
    /// measured time either way); empty for devices modelled from parts.
    pub write_latency: &'static [(u32, Ns)],
    /// A measured cache flush latency distribution, in the same form, drawn per flush in
    /// place of the parts above; empty for devices modelled from parts.
    pub flush_latency: &'static [(u32, Ns)],
    /// A device backed by a sparse file (a loop device): a flush after writes to blocks the
    /// file never held commits the host's allocations too, and draws from this measured
    /// distribution instead; empty when every flush costs the same.
    pub flush_latency_allocating: &'static [(u32, Ns)],
    /// The device honours FUA. Without it the block layer sends the write and then a flush
    /// (`blk_flush_policy`: REQ_FSEQ_POSTFLUSH), and the write completes with that flush.
    pub fua: bool,
    /// A SATA drive behind libata, whose FUA support the kernel version decides (`sata_fua`).
    pub libata: bool,
    /// Flash: its dies program in parallel, a page at a time in turn; the FTL erases a block
    /// for every `erase_block_bytes` programmed, on the dies in turn, and a die is busy for
    /// `erase_ns` (tBERS) while it erases. 0 where not modelled (disks, measured devices,
    /// power-loss-protected caches).
    pub dies: u32,
    pub erase_block_bytes: u64,
    pub erase_ns: Ns,
    /// One hardware queue: blk-mq's one flush queue serves every flush, explicit ones
    /// (`blkdev_issue_flush`) too, so concurrent flushes share one command. Devices with a
    /// queue per CPU (NVMe) coalesce only within a CPU's queue; the model leaves theirs apart.
    pub one_flush_queue: bool,
    /// Stalls of the whole device (a shared host's, an SSD's garbage collection): nothing
    /// completes during one. None for devices without.
    pub stalls: Option<Stalls>,
}

/// Device stalls, at two rates: while the device writes back metadata (a write noted with
/// `Device::note_writeback` in flight, or done less than `WRITEBACK_TAIL_NS` ago) and
/// otherwise, each with its measured lengths (integer draws: the same in wasm as natively).
/// Candidate stalls come at the busy rate, the gap between two uniform in `[0, 2 *
/// busy_mean_gap_ns]`; a quiet one is kept with probability `busy / quiet` mean gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Stalls {
    pub busy_mean_gap_ns: Ns,
    pub busy_lengths: &'static [(u32, Ns)],
    pub quiet_mean_gap_ns: Ns,
    pub quiet_lengths: &'static [(u32, Ns)],
}

/// How long past a metadata writeback the stall rate stays at its busy value.
pub const WRITEBACK_TAIL_NS: Ns = 50_000_000;

/// A draw from a measured distribution given as (cumulative probability per million, value)
/// points: its inverse distribution function, linear between the points.
fn draw(points: &[(u32, Ns)], rng: &mut Pcg64Mcg) -> Ns {
    if points.len() < 2 {
        return 0;
    }
    let u = (rng.next_u64() % 1_000_000) as u32;
    let i = points.partition_point(|&(p, _)| p <= u).clamp(1, points.len() - 1);
    let ((p0, l0), (p1, l1)) = (points[i - 1], points[i]);
    l0 + l1.saturating_sub(l0) * u64::from(u.saturating_sub(p0)) / u64::from((p1 - p0).max(1))
}

/// `REQ_PREFLUSH` and `REQ_FUA` on a write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReqFlags {
    pub preflush: bool,
    pub fua: bool,
}

impl ReqFlags {
    pub const PLAIN: ReqFlags = ReqFlags { preflush: false, fua: false };
    pub const PREFLUSH: ReqFlags = ReqFlags { preflush: true, fua: false };
    pub const FUA: ReqFlags = ReqFlags { preflush: false, fua: true };
    pub const PREFLUSH_FUA: ReqFlags = ReqFlags { preflush: true, fua: true };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum IoKind {
    Write {
        preflush: bool,
        fua: bool,
    },
    Flush,
    /// A read from the media (the cache holds only writes here; reads never hit it).
    Read,
}

/// One request from submission to completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoReq {
    pub id: u64,
    pub kind: IoKind,
    pub sector: u64,
    /// The request's first bytes; the rest of its `bytes` are zeros (file data is mostly
    /// zeros here, so it is not carried). Empty for flushes and reads.
    pub data: Vec<u8>,
    pub bytes: u64,
    pub submit_ns: Ns,
    pub done_ns: Ns,
    /// Completion sequence at issue: a flush covers cached writes below this mark.
    pub flush_mark: u64,
    /// Opaque to the device: what the simulator issued it for.
    pub tag: u64,
    /// A PREFLUSH write's flush, when the block layer (or md) ran it: the write waits for it.
    pub flush_window: Option<(Ns, Ns)>,
    /// A log record's CRC, stamped when its data is read (`data` has a zero CRC field).
    pub crc: Option<PendingCrc>,
}

/// A completed write that has not reached stable media.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedWrite {
    pub cseq: u64,
    pub req_id: u64,
    pub sector: u64,
    /// As in `IoReq`: the first bytes of `bytes`, the rest zeros.
    pub data: Vec<u8>,
    pub bytes: u64,
    pub crc: Option<PendingCrc>,
}

impl CachedWrite {
    /// The whole write, zeros included (and its record's CRC).
    pub fn full_data(&self) -> Vec<u8> {
        padded(&self.data, self.bytes, self.crc)
    }
}

impl IoReq {
    /// The whole request's data, zeros included (and its record's CRC).
    pub fn full_data(&self) -> Vec<u8> {
        padded(&self.data, self.bytes, self.crc)
    }
}

/// Writes a pending CRC into a write's own bytes (they begin with the record's header).
fn stamp_in_place(data: &mut [u8], bytes: u64, crc: &mut Option<PendingCrc>) {
    if let Some(c) = crc.take() {
        let full = padded(data, bytes, Some(c));
        let at = crate::format::rh::CRC;
        data[at..at + 4].copy_from_slice(&full[at..at + 4]);
    }
}

fn padded(data: &[u8], bytes: u64, crc: Option<PendingCrc>) -> Vec<u8> {
    let mut v = data.to_vec();
    v.resize(bytes as usize, 0);
    if let Some(c) = crc {
        c.stamp(&mut v);
    }
    v
}

/// What a recording device saw, in order (for the dm-log-writes export).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DevIo {
    /// A request was submitted; `flush` if it was a flush or carried PREFLUSH.
    Submit {
        id: u64,
        flush: bool,
    },
    Complete(IoReq),
    /// A named point in the stream (a dm-log-writes mark).
    Mark(String),
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DeviceStats {
    pub writes: u64,
    pub write_bytes: u64,
    pub flushes: u64,
    pub flushes_elided: u64,
    pub fua_writes: u64,
    pub preflush_writes: u64,
    /// Self-check: a FUA write or a flush that did not make its data stable.
    pub semantics_violations: u64,
}

#[derive(Clone, Debug)]
pub struct Device {
    pub profile: DeviceProfile,
    bug: DeviceBug,
    stable: SectorMap,
    cache: VecDeque<CachedWrite>,
    inflight: Vec<IoReq>,
    /// Index in `inflight` of request `inflight_base + i` (`GONE` once complete): completion
    /// is a lookup, not a scan (2000 writers). Every request completes, so the window of ids
    /// spans only those issued while the oldest in flight was running.
    inflight_at: VecDeque<u32>,
    inflight_base: u64,
    /// When each of the `queue_depth` channels is next free, as (time, channel): the earliest
    /// (lowest channel on a tie) takes the next request. A heap: 128 channels on nvme-x4.
    channels: BinaryHeap<Reverse<(Ns, usize)>>,
    /// Per disk (`actuators`): when its link is free for the next transfer, and when its
    /// actuator is free for the next media access.
    link_free: Vec<Ns>,
    actuator_free: Vec<Ns>,
    /// Flash behind one hardware queue: its link (`link_share`).
    link: LinkQueue,
    /// Flash: bytes programmed so far, when each die's erase under way ends, the die the
    /// next page goes to, and how many blocks have been erased.
    programmed: u64,
    /// The cache's writes from this `cseq` on are not yet programmed, and the last drain
    /// started ends here.
    programmed_mark: u64,
    drained_at: Ns,
    die_busy: Vec<Ns>,
    next_die: usize,
    erases: u64,
    last_start_ns: Ns,
    head_sector: u64,
    next_id: u64,
    next_cseq: u64,
    cached_bytes: u64,
    /// Writes in the cache the drive has not yet written to its media, and when the media
    /// is done with what it is writing now. The drive destages in the background.
    dirty: Vec<Dirty>,
    media_free_ns: Ns,
    /// The flushes run one at a time: the block layer's for PREFLUSH writes, or md's for
    /// every flush of an array.
    flush_queue: FlushQueue,
    pub stats: DeviceStats,
    /// The request record (what dm-log-writes would log): off unless an export asked for it,
    /// as it keeps every write's data.
    requests: Option<Vec<DevIo>>,
    /// The device's own seeded draws (rotational position, flash page type): service times
    /// vary as the physics makes them vary, and the same seed gives the same run.
    rng: Pcg64Mcg,
    /// Stall windows drawn so far that have not ended before the last request started, and
    /// where the next one is drawn from.
    stall_windows: VecDeque<(Ns, Ns)>,
    stalls_drawn_to: Ns,
    /// Until when the stall rate is the busy one (metadata writeback in flight or just done).
    writeback_until: Ns,
    /// A sparse-file device's blocks written so far, as sector ranges (start -> end), and
    /// whether a write since the last flush began allocated new ones.
    backed: BTreeMap<u64, u64>,
    allocated_since_flush: bool,
}

/// Flushes run one at a time: the latest flush (running or next) and when the writes that
/// waited for it are done. blk-mq's flush queue (`block/blk-flush.c`): C1, one flush in
/// flight, PREFLUSH requests that arrive meanwhile wait and share the next; C2, the next
/// also waits for the running sequence's DATA. Model: iclog writes use one queue (the one
/// CIL push worker submits most of them); explicit flushes (fsync, xfsaild) keep their own,
/// except on a device with one hardware queue (`one_flush_queue`), where all share it.
/// md (`md_flush_request`) runs C1 alone, for every flush of the array.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct FlushQueue {
    start: Ns,
    end: Ns,
    data_end: Ns,
    /// When the flush reached the driver: on libata it holds every command from then (it
    /// waits at the head of the dispatch queue for the drive's queue to drain, then runs).
    sent: Ns,
}

/// A write accepted into the cache at `at` and not yet written to the media (timing only:
/// what survives a crash is the `cache`'s business).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Dirty {
    at: Ns,
    sector: u64,
    sectors: u64,
}

/// `Device::inflight_at` of a request no longer in flight.
const GONE: u32 = u32::MAX;

/// A flash page: what a die programs at once.
const FLASH_PAGE_BYTES: u64 = 16 << 10;

/// md's default chunk (mdadm 3.1 and later: 512 KiB), in sectors.
const MD_CHUNK_SECTORS: u64 = 1024;

/// Extents a disk's scheduler weighs at once when it picks the next to destage.
const RPO_WINDOW: usize = 32;

/// Program time of the three pages of a TLC wordline (lower, middle, upper), in quarters of
/// the profile's mean `program_ns`: each extra bit per cell needs finer program-verify steps.
const TLC_PROGRAM_QUARTERS: [u64; 3] = [2, 4, 6];

impl Device {
    pub fn new(profile: DeviceProfile, bug: DeviceBug, seed: u64) -> Device {
        let qd = profile.queue_depth.max(1) as usize;
        let disks = profile.actuators as usize;
        let dies = if profile.erase_ns > 0 { profile.dies.max(1) as usize } else { 0 };
        Device {
            rng: Pcg64Mcg::seed_from_u64(seed),
            stall_windows: VecDeque::new(),
            stalls_drawn_to: 0,
            writeback_until: 0,
            profile,
            bug,
            stable: SectorMap::new(),
            cache: VecDeque::new(),
            inflight: Vec::new(),
            inflight_at: VecDeque::new(),
            inflight_base: 1,
            channels: (0..qd).map(|i| Reverse((0, i))).collect(),
            link_free: vec![0; disks],
            link: LinkQueue::default(),
            actuator_free: vec![0; disks],
            programmed: 0,
            programmed_mark: 0,
            drained_at: 0,
            die_busy: vec![0; dies],
            next_die: 0,
            erases: 0,
            last_start_ns: 0,
            head_sector: 0,
            next_id: 1,
            next_cseq: 0,
            cached_bytes: 0,
            dirty: Vec::new(),
            media_free_ns: 0,
            flush_queue: FlushQueue::default(),
            stats: DeviceStats::default(),
            requests: None,
            backed: BTreeMap::new(),
            allocated_since_flush: false,
        }
    }

    /// Sectors a sparse-file device's file already holds (mkfs wrote them): writes there
    /// allocate nothing.
    pub fn mark_backed(&mut self, sector: u64, sectors: u64) {
        if self.sparse_backed() && sectors > 0 {
            self.back(sector, sector + sectors);
        }
    }

    /// The next write grows the sparse file under the device wherever it lands (an append
    /// the model writes over its file's one address).
    pub fn note_allocating_write(&mut self) {
        self.allocated_since_flush |= self.sparse_backed();
    }

    /// A device over a sparse file, whose flushes cost more after writes that grew it.
    fn sparse_backed(&self) -> bool {
        !self.profile.flush_latency_allocating.is_empty()
    }

    /// Adds [start, end) to the backed ranges; true when some of it was not backed before.
    fn back(&mut self, start: u64, end: u64) -> bool {
        let covered = self.backed.range(..=start).next_back().is_some_and(|(_, &e)| e >= end);
        if covered {
            return false;
        }
        let (mut lo, mut hi) = (start, end);
        let touching: Vec<(u64, u64)> =
            self.backed.range(..=end).rev().take_while(|(_, &e)| e >= start).map(|(&s, &e)| (s, e)).collect();
        for (s, e) in touching {
            self.backed.remove(&s);
            (lo, hi) = (lo.min(s), hi.max(e));
        }
        self.backed.insert(lo, hi);
        true
    }

    /// Submits a write (data length a multiple of 512) and returns (id, completion time).
    pub fn submit_write(&mut self, now: Ns, sector: u64, data: Vec<u8>, flags: ReqFlags, tag: u64) -> (u64, Ns) {
        let bytes = data.len() as u64;
        self.submit_write_zero_filled(now, sector, data, bytes, flags, tag)
    }

    /// Submits a log record's write whose CRC `crc` stamps when its data is read.
    pub fn submit_record_write(
        &mut self,
        now: Ns,
        sector: u64,
        data: Vec<u8>,
        flags: ReqFlags,
        tag: u64,
        crc: Option<PendingCrc>,
    ) -> (u64, Ns) {
        let r = self.submit_write(now, sector, data, flags, tag);
        if let Some(q) = self.inflight.last_mut() {
            q.crc = crc;
        }
        r
    }

    /// Stamps the CRCs of the log records this device holds (before recovery reads them):
    /// on stable media, and in the cache's and in-flight writes' own bytes, so a crash
    /// explorer reading them at point after point computes each once.
    pub fn settle_crcs(&mut self) {
        self.stable.settle();
        for w in &mut self.cache {
            stamp_in_place(&mut w.data, w.bytes, &mut w.crc);
        }
        for r in &mut self.inflight {
            stamp_in_place(&mut r.data, r.bytes, &mut r.crc);
        }
    }

    /// Submits a write of `bytes` that begins with `data` and is zeros after it.
    pub fn submit_write_zero_filled(
        &mut self,
        now: Ns,
        sector: u64,
        data: Vec<u8>,
        bytes: u64,
        flags: ReqFlags,
        tag: u64,
    ) -> (u64, Ns) {
        let ReqFlags { preflush, fua } = flags;
        debug_assert!(data.len().is_multiple_of(SECTOR) && bytes.is_multiple_of(SECTOR as u64) && bytes > 0);
        debug_assert!(data.len() as u64 <= bytes);
        // Without a volatile cache the block layer strips PREFLUSH and FUA.
        if !self.profile.volatile_cache {
            self.stats.flushes_elided += preflush as u64;
        }
        let (preflush, fua) = if self.profile.volatile_cache { (preflush, fua) } else { (false, false) };
        self.stats.writes += 1;
        self.stats.write_bytes += bytes;
        let sectors = bytes / SECTOR as u64;
        if self.sparse_backed() && self.back(sector, sector + sectors) {
            self.allocated_since_flush = true;
        }
        self.stats.fua_writes += fua as u64;
        self.stats.preflush_writes += preflush as u64;
        self.stats.flushes += preflush as u64;
        self.destage(now, false);
        let cost = self.profile.cmd_ns + transfer_ns(bytes, self.link_rate());
        // The write goes out once its flush is done, without the PREFLUSH.
        let (mut not_before, mut window) = (now, None);
        if preflush {
            not_before = self.queued_flush(now);
            window = Some((self.flush_queue.start, self.flush_queue.end));
        }
        // Without FUA support the write goes to the cache and a flush follows it.
        let post_flush = fua && !self.profile.fua;
        let cached = self.profile.volatile_cache && (!fua || post_flush);
        let mut media =
            if !cached || !self.profile.write_latency.is_empty() { self.media_write_ns(sector, bytes) } else { 0 };
        if !cached {
            let at = self.start_at(not_before) + cost;
            media += self.program_dies(at, bytes, media);
        }
        let kind = IoKind::Write { preflush, fua };
        let (id, mut done) = self.enqueue(now, not_before, kind, sector, (data, bytes), (cost, media), tag);
        if post_flush {
            self.stats.flushes += 1;
            done = self.queued_flush(done);
            window = Some((self.flush_queue.start, self.flush_queue.end));
            if let Some(r) = self.inflight.last_mut() {
                r.done_ns = done;
            }
        }
        // C2 is blk-mq's: md sends the next flush without waiting for these writes.
        if preflush && !self.profile.md_flush {
            self.flush_queue.data_end = self.flush_queue.data_end.max(done);
        }
        if let Some(r) = self.inflight.last_mut() {
            r.flush_window = window;
        }
        if cached && self.rotating() {
            self.dirty.push(Dirty { at: done, sector, sectors });
        }
        (id, done)
    }

    /// Submits a read of `bytes` at `sector`: a command plus a media access (a seek on disks).
    pub fn submit_read(&mut self, now: Ns, sector: u64, bytes: u64, tag: u64) -> (u64, Ns) {
        let cost = self.profile.cmd_ns + transfer_ns(bytes, self.link_rate());
        let mut media = transfer_ns(bytes, self.media_rate());
        if self.profile.seek_ns > 0 {
            media += self.seek_ns(sector);
            self.head_sector = sector + bytes / SECTOR as u64;
        } else {
            media += self.profile.read_ns;
        }
        self.enqueue(now, now, IoKind::Read, sector, (Vec::new(), bytes), (cost, media), tag)
    }

    /// Submits an explicit cache flush. Elided (completes at once) without a volatile cache.
    pub fn submit_flush(&mut self, now: Ns, tag: u64) -> (u64, Ns) {
        if !self.profile.volatile_cache {
            self.stats.flushes_elided += 1;
            return self.flush_without_command(now, now, tag);
        }
        self.stats.flushes += 1;
        if self.profile.md_flush || self.profile.one_flush_queue {
            let done = self.queued_flush(now);
            return self.flush_without_command(now, done, tag);
        }
        let cost = self.profile.cmd_ns + self.flush_wait(self.start_at(now));
        self.enqueue(now, now, IoKind::Flush, 0, (Vec::new(), 0), (cost, 0), tag)
    }

    /// A flush request that takes no channel of its own: elided, or md's (done at `done`).
    fn flush_without_command(&mut self, now: Ns, done: Ns, tag: u64) -> (u64, Ns) {
        let id = self.next_id;
        self.next_id += 1;
        let req = IoReq {
            id,
            kind: IoKind::Flush,
            sector: 0,
            data: Vec::new(),
            bytes: 0,
            submit_ns: now,
            done_ns: done,
            flush_mark: self.next_cseq,
            tag,
            flush_window: None,
            crc: None,
        };
        self.push_inflight(req);
        self.note(DevIo::Submit { id, flush: true });
        (id, done)
    }

    /// `blk_kick_flush` / `md_flush_request`: when the flush that covers a request made at
    /// `now` is done. A flush that has not started yet covers it; otherwise it waits for the
    /// running flush (and, in the block layer, that flush's DATA), then starts the next,
    /// which those arriving meanwhile share.
    /// Model: the flush command takes no channel of its own; an array's members' flushes are
    /// one flush of the array (their destage runs as one).
    fn queued_flush(&mut self, now: Ns) -> Ns {
        let q = &self.flush_queue;
        if q.start > now {
            return q.end;
        }
        let sent = now.max(q.end).max(q.data_end);
        // FLUSH CACHE is not an NCQ command: libata issues it once the drive's queue has
        // drained (`ata_std_qc_defer`).
        let start = if self.profile.libata { sent.max(self.last_done()) } else { sent };
        let end = start + self.profile.cmd_ns + self.flush_wait(start);
        // A host stall holds flushes too (the backing file's fsync). Pops nothing: `now` can
        // be a later request's completion here.
        let end = self.after_stalls(0, start, end);
        self.flush_queue = FlushQueue { start, end, data_end: end, sent };
        end
    }

    fn actuators(&self) -> usize {
        self.profile.actuators as usize
    }

    /// The disk of an array (md raid0, `MD_CHUNK_SECTORS` chunks) that holds `sector`; 0 on a
    /// single disk.
    pub fn disk_of(&self, sector: u64) -> usize {
        (sector / MD_CHUNK_SECTORS % self.actuators().max(1) as u64) as usize
    }

    /// One disk's link and media rates: an array's profile gives all its members' together.
    fn link_rate(&self) -> u64 {
        self.profile.bus_bytes_per_sec / self.actuators().max(1) as u64
    }
    fn media_rate(&self) -> u64 {
        self.profile.media_bytes_per_sec / self.actuators().max(1) as u64
    }

    /// When a request submitted now starts: on the first free channel, spaced by the IOPS cap.
    fn start_at(&self, now: Ns) -> Ns {
        let Reverse((free_at, _)) = *self.channels.peek().expect("queue_depth >= 1");
        let mut start = now.max(free_at);
        if self.profile.min_interval_ns > 0 {
            start = start.max(self.last_start_ns + self.profile.min_interval_ns);
        }
        // libata defers every command while a FLUSH CACHE runs (`ata_std_qc_defer`).
        // Model: an array's member flushes are one flush of the array, so they hold every
        // member's queue for its whole length.
        let q = &self.flush_queue;
        if self.profile.libata && q.sent <= start && start < q.end {
            start = q.end;
        }
        start
    }

    /// When the last request in flight completes (its channel is free again).
    fn last_done(&self) -> Ns {
        self.channels.iter().map(|Reverse((free_at, _))| *free_at).max().unwrap_or(0)
    }

    /// Queues a request submitted at `now` that may not start before `not_before`: `iface`
    /// of command and transfer, then `media` of media access (on its disk's actuator, for a
    /// device with `actuators`).
    #[allow(clippy::too_many_arguments)]
    fn enqueue(
        &mut self,
        now: Ns,
        not_before: Ns,
        kind: IoKind,
        sector: u64,
        (data, bytes): (Vec<u8>, u64),
        (iface, media): (Ns, Ns),
        tag: u64,
    ) -> (u64, Ns) {
        let start = self.start_at(not_before);
        let Reverse((_, slot)) = self.channels.pop().expect("queue_depth >= 1");
        self.last_start_ns = start;
        let end = if self.actuators() > 0 {
            let m = self.disk_of(sector);
            // Model: a write held for its PREFLUSH reaches the drive only when that is done,
            // so it does not hold the link from those sent meanwhile.
            let held = not_before > now;
            let link_done = if held { start } else { start.max(self.link_free[m]) } + iface;
            if !held {
                self.link_free[m] = link_done;
            }
            if media > 0 {
                let media_done = link_done.max(self.actuator_free[m]) + media;
                self.actuator_free[m] = self.actuator_free[m].max(media_done);
                media_done
            } else {
                link_done
            }
        } else {
            let xfer = transfer_ns(bytes, self.link_rate()).min(iface);
            let link_done = match kind {
                // As on a disk, a write held for its PREFLUSH does not hold up those sent
                // meanwhile; it shares the link with those still crossing it when it starts.
                IoKind::Write { .. } if self.profile.one_flush_queue => {
                    self.link_share(start + iface - xfer, xfer, not_before <= now)
                }
                _ => start + iface,
            };
            link_done + media
        };
        let done = self.after_stalls(now, start, end.max(start + 1));
        self.channels.push(Reverse((done, slot)));
        let id = self.next_id;
        self.next_id += 1;
        let req = IoReq {
            id,
            kind,
            sector,
            data,
            bytes,
            submit_ns: now,
            done_ns: done,
            flush_mark: self.next_cseq,
            tag,
            flush_window: None,
            crc: None,
        };
        self.push_inflight(req);
        let flush = matches!(kind, IoKind::Flush | IoKind::Write { preflush: true, .. });
        self.note(DevIo::Submit { id, flush });
        (id, done)
    }

    /// Flash behind one hardware queue (AHCI's SATA link, a loop device): when a write whose
    /// command is done at `ready` has moved its data (`xfer` at the link's rate alone) over
    /// the link it shares with the writes whose data is still moving. The drive works on its
    /// queued commands side by side, so a small write is not held behind a large one, and a
    /// link with a backlog takes on no more than its rate. Model: a transfer already under
    /// way is not slowed by a later one; reads are let pass (rare here); NVMe's link is not
    /// shared (its queues are served round robin, and the push's copy per region, which
    /// would pace its iclogs, is not modelled). A write not `booked`, held for its PREFLUSH
    /// (starting later than those sent after it), meets the backlog and adds none.
    fn link_share(&mut self, ready: Ns, xfer: Ns, booked: bool) -> Ns {
        let lq = &mut self.link;
        while lq.transfers.peek().is_some_and(|&Reverse(t)| t <= ready) {
            lq.transfers.pop();
        }
        let sharing = lq.transfers.len() as u64;
        let done = ready + xfer + lq.end.saturating_sub(ready).min(xfer.saturating_mul(sharing));
        if booked {
            lq.end = lq.end.max(ready) + xfer;
            lq.transfers.push(Reverse(done));
        }
        done
    }

    /// Starts keeping a record of requests (with their data).
    pub fn record(&mut self) {
        self.requests.get_or_insert_with(Vec::new);
    }

    /// A request record is being kept.
    pub fn recording(&self) -> bool {
        self.requests.is_some()
    }
    /// The request record (empty when none is kept).
    pub fn request_record(&self) -> &[DevIo] {
        self.requests.as_deref().unwrap_or(&[])
    }

    fn push_inflight(&mut self, req: IoReq) {
        if self.inflight_at.is_empty() {
            self.inflight_base = req.id;
        }
        let slot = (req.id - self.inflight_base) as usize;
        self.inflight_at.resize(self.inflight_at.len().max(slot + 1), GONE);
        self.inflight_at[slot] = self.inflight.len() as u32;
        self.inflight.push(req);
    }

    fn inflight_slot(&mut self, id: u64) -> &mut u32 {
        let slot = id.checked_sub(self.inflight_base).expect("a request id in the window");
        &mut self.inflight_at[slot as usize]
    }

    pub fn note(&mut self, e: DevIo) {
        if let Some(j) = &mut self.requests {
            j.push(e);
        }
    }

    /// Time from `start` until a flush started then is done. A disk destages in the
    /// background, so the flush waits for what its media has not yet written. Flash pays for
    /// every write cached since the last flush: the FTL commits their mappings (per extent)
    /// and programs their data.
    fn flush_wait(&mut self, start: Ns) -> Ns {
        if !self.profile.flush_latency.is_empty() {
            // Only a sparse-backed device ever notes an allocating write.
            let table = if std::mem::take(&mut self.allocated_since_flush) {
                self.profile.flush_latency_allocating
            } else {
                self.profile.flush_latency
            };
            return draw(table, &mut self.rng);
        }
        if !self.rotating() {
            if self.cache.is_empty() {
                return self.profile.flush_base_ns;
            }
            let p = &self.profile;
            let extents = self.cache.len() as u64;
            let busy = p.flush_base_ns
                + extents * p.flush_per_extent_ns
                + transfer_ns(self.cached_bytes, p.media_bytes_per_sec);
            if self.die_busy.is_empty() {
                return busy;
            }
            // Flushes side by side drain one cache: the first programs what is new since the
            // last drain, and none completes before the drain it shares is done.
            let mark = std::mem::replace(&mut self.programmed_mark, self.next_cseq);
            let fresh: u64 = self.cache.iter().rev().take_while(|w| w.cseq >= mark).map(|w| w.bytes).sum();
            let end = start + busy + self.program_dies(start, fresh, busy);
            self.drained_at = self.drained_at.max(end);
            return self.drained_at - start;
        }
        self.destage(start, true);
        self.profile.flush_base_ns + self.media_free_ns.saturating_sub(start)
    }

    /// Flash: `bytes` programmed from `start` for `busy`: how much longer it takes because a
    /// die its pages need is erasing. Each block's worth programmed then starts an erase on
    /// the next die once this program is done.
    /// Model: no erase suspend; the FTL erases a block when it has filled one, not ahead.
    fn program_dies(&mut self, start: Ns, bytes: u64, busy: Ns) -> Ns {
        let dies = self.die_busy.len();
        if dies == 0 || bytes == 0 {
            return 0;
        }
        let pages = bytes.div_ceil(FLASH_PAGE_BYTES);
        let used = pages.min(dies as u64) as usize;
        let ready = (0..used).map(|i| self.die_busy[(self.next_die + i) % dies]).max().unwrap_or(0);
        let wait = ready.saturating_sub(start);
        self.next_die = (self.next_die + (pages % dies as u64) as usize) % dies;
        self.programmed += bytes;
        let done = start + wait + busy;
        while self.erases < self.programmed / self.profile.erase_block_bytes.max(1) {
            let d = (self.erases % dies as u64) as usize;
            self.die_busy[d] = self.die_busy[d].max(done) + self.profile.erase_ns;
            self.erases += 1;
        }
        wait
    }

    /// A disk's destaging as of `now`: writes waiting for its next sweep, their bytes, and
    /// how long the media stays busy with the sweep under way. None on flash.
    pub fn destage_backlog(&self, now: Ns) -> Option<(u64, u64, Ns)> {
        self.rotating().then(|| {
            let waiting = self.dirty.iter().filter(|d| d.at <= now);
            let (n, sectors) = waiting.fold((0, 0), |(n, s), d| (n + 1, s + d.sectors));
            (n, sectors * SECTOR as u64, self.media_free_ns.saturating_sub(now))
        })
    }

    /// Rotating media: destages in the background (flash pays at the flush).
    pub fn rotating(&self) -> bool {
        self.profile.flush_rotation_ns > 0
    }

    /// Runs the drive's background destaging up to `t`: whenever the media is free it takes
    /// every write then in the cache and writes them in one elevator sweep. With `drain`,
    /// also the sweeps that write out what the cache holds at `t` (a flush's wait).
    /// Model: reads and write-through writes do not compete with destaging for the media.
    fn destage(&mut self, t: Ns, drain: bool) {
        while let Some(first) = self.dirty.iter().map(|d| d.at).min() {
            let start = self.media_free_ns.max(first);
            if start > t && !(drain && first <= t) {
                return;
            }
            let (mut batch, rest): (Vec<Dirty>, Vec<Dirty>) = self.dirty.drain(..).partition(|d| d.at <= start);
            self.dirty = rest;
            self.media_free_ns = start + self.sweep_ns(&mut batch, start);
        }
    }

    /// Media time of one destage on a disk that starts at `start`. Contiguous writes merge
    /// into one extent. The disk schedules by rotational position (RPO): from
    /// the head, it writes next whichever of the next `RPO_WINDOW` extents in elevator order
    /// it reaches first, counting the seek (a short one to change track) and the wait for
    /// the extent's first sector to come round. A sector's angle is its place on its track,
    /// and the platter turns with the clock, so the schedule follows from the addresses.
    fn sweep_ns(&mut self, batch: &mut [Dirty], start: Ns) -> Ns {
        batch.sort_unstable_by_key(|d| d.sector);
        let mut extents: Vec<(u64, u64)> = Vec::with_capacity(batch.len());
        for d in batch.iter() {
            match extents.last_mut() {
                Some((s, n)) if *s + *n >= d.sector => *n = (*n).max(d.sector + d.sectors - *s),
                _ => extents.push((d.sector, d.sectors)),
            }
        }
        let p = &self.profile;
        let turn = 2 * p.flush_rotation_ns;
        let track = (p.media_bytes_per_sec as u128 * turn as u128 / NS_PER_SEC as u128 / SECTOR as u128).max(1) as u64;
        let cap = p.capacity_sectors.max(1);
        let (settle, seek_ns, members) = (p.flush_per_extent_ns, p.seek_ns, p.members.max(1) as u64);
        let split = extents.partition_point(|e| e.0 < self.head_sector);
        extents.rotate_left(split);
        let mut t = start;
        while !extents.is_empty() {
            let (mut best, mut at) = (Ns::MAX, 0);
            for (i, &(s, _)) in extents.iter().take(RPO_WINDOW).enumerate() {
                let head = self.head_sector;
                let seek = if s / track == head / track {
                    0
                } else {
                    let dist = s.abs_diff(head).min(cap);
                    (seek_ns * isqrt(dist * 1_000_000 / cap) / 1000 / members).max(settle)
                };
                let angle = (s % track) * turn / track;
                let wait = if s == head { 0 } else { (angle + turn - (t + seek) % turn) % turn };
                if seek + wait < best {
                    (best, at) = (seek + wait, i);
                }
            }
            let (s, n) = extents.remove(at);
            t += best + transfer_ns(n * SECTOR as u64, self.profile.media_bytes_per_sec);
            self.head_sector = s + n;
        }
        t - start
    }

    /// A rotational wait whose mean is `half`: the target sector is anywhere on the track
    /// when the head arrives, so the wait is uniform over a whole turn.
    fn rotational_wait(&mut self, half: Ns) -> Ns {
        if half == 0 {
            return 0;
        }
        self.rng.next_u64() % (2 * half)
    }

    /// Positioning time from the head's last sector to `sector` (zero when already there).
    fn seek_ns(&mut self, sector: u64) -> Ns {
        let p = &self.profile;
        if sector == self.head_sector {
            return 0;
        }
        // Seek time grows with the square root of the distance (short-stroke vs full).
        let dist = sector.abs_diff(self.head_sector).min(p.capacity_sectors.max(1));
        let frac_milli = isqrt(dist * 1_000_000 / p.capacity_sectors.max(1));
        let seek = p.seek_ns * frac_milli / 1000;
        seek + self.rotational_wait(self.profile.half_rotation_ns)
    }

    /// When a request that runs from `start` and would be done at `done` is done: the device
    /// makes no progress during a stall, so every stall it overlaps adds the overlap.
    /// Windows that ended by `over` are dropped: only those over by now may go, as a request
    /// that starts later (held for a flush) must not take a stall still under way from the
    /// view (`stall_state`).
    fn after_stalls(&mut self, over: Ns, start: Ns, mut done: Ns) -> Ns {
        let Some(st) = self.profile.stalls else { return done };
        while self.stall_windows.front().is_some_and(|&(_, end)| end <= over.min(start)) {
            self.stall_windows.pop_front();
        }
        let mut i = 0;
        loop {
            while i == self.stall_windows.len() {
                if self.stalls_drawn_to > done {
                    return done;
                }
                let begin = self.stalls_drawn_to + self.rng.next_u64() % (2 * st.busy_mean_gap_ns + 1);
                // Model: busy or quiet as the writebacks submitted so far say (a window is
                // drawn at most a gap ahead of the request that reaches it).
                let busy = begin <= self.writeback_until;
                let keep = busy || self.rng.next_u64() % st.quiet_mean_gap_ns.max(1) < st.busy_mean_gap_ns;
                if !keep {
                    self.stalls_drawn_to = begin;
                    continue;
                }
                let lengths = if busy { st.busy_lengths } else { st.quiet_lengths };
                let end = begin + draw(lengths, &mut self.rng).max(1);
                self.stall_windows.push_back((begin, end));
                self.stalls_drawn_to = end;
            }
            let (begin, end) = self.stall_windows[i];
            if begin >= done {
                return done;
            }
            if end > start {
                done += end - begin.max(start);
            }
            i += 1;
        }
    }

    /// A device with host stalls, as of `now`: how much longer a stall under way holds the
    /// requests in flight (None when none is), and whether the busy (writeback) rate applies.
    pub fn stall_state(&self, now: Ns) -> Option<(Option<Ns>, bool)> {
        self.profile.stalls?;
        let left = self.stall_windows.iter().find(|&&(b, e)| b <= now && now < e).map(|&(_, e)| e - now);
        Some((left, now <= self.writeback_until))
    }

    /// A disk with NCQ, as of `now`: for each of its disks, how long its actuator is still
    /// busy with the reads and write-through writes already queued for it.
    pub fn actuator_state(&self, now: Ns) -> Option<Vec<Ns>> {
        (self.actuators() > 0).then(|| self.actuator_free.iter().map(|&t| t.saturating_sub(now)).collect())
    }

    /// A SATA drive (libata), as of `now`: how long the cache flush that holds its queue still
    /// needs (from when it reached the driver: the commands in flight drain, then it runs;
    /// nothing else is sent meanwhile), or None when none does. None on other devices.
    pub fn flush_hold(&self, now: Ns) -> Option<Option<Ns>> {
        let q = &self.flush_queue;
        (self.profile.libata && self.profile.volatile_cache)
            .then(|| (q.sent <= now && now < q.end).then(|| q.end - now))
    }

    /// Flash behind one hardware queue, as of `now`: the writes still moving their data over
    /// its link, how long until the last of them is done with it, and the link's rate. None
    /// on other devices.
    pub fn link_state(&self, now: Ns) -> Option<(u64, Ns, u64)> {
        (self.profile.one_flush_queue && self.actuators() == 0).then(|| {
            let moving = self.link.transfers.iter().filter(|&&Reverse(t)| t > now);
            let (n, last) = moving.fold((0, now), |(n, last), &Reverse(t)| (n + 1, last.max(t)));
            (n, last - now, self.link_rate())
        })
    }

    /// Flash with its erases modelled, as of `now`: blocks erased so far (or begun), the dies
    /// erasing now, and how long the last of those still needs.
    pub fn erase_state(&self, now: Ns) -> Option<(u64, u32, Ns)> {
        let erase = self.profile.erase_ns;
        (!self.die_busy.is_empty()).then(|| {
            let erasing = self.die_busy.iter().filter(|&&end| end > now && end - erase <= now);
            let (n, left) = erasing.fold((0, 0), |(n, left), &end| (n + 1, left.max(end - now)));
            (self.erases, n, left)
        })
    }

    /// A metadata writeback done at `done` was submitted: a device with stalls stalls at
    /// its busy rate until `WRITEBACK_TAIL_NS` after it.
    pub fn note_writeback(&mut self, done: Ns) {
        self.writeback_until = self.writeback_until.max(done + WRITEBACK_TAIL_NS);
    }

    fn measured_latency(&mut self) -> Ns {
        draw(self.profile.write_latency, &mut self.rng)
    }

    /// A write-through program on flash: which page of its wordline it lands on sets the time.
    fn program_ns(&mut self) -> Ns {
        if self.profile.program_ns == 0 {
            return 0;
        }
        let quarters = TLC_PROGRAM_QUARTERS[(self.rng.next_u64() % 3) as usize];
        self.profile.program_ns * quarters / 4
    }

    fn media_write_ns(&mut self, sector: u64, bytes: u64) -> Ns {
        let (program, measured) = (self.program_ns(), self.measured_latency());
        let seek = if self.profile.seek_ns > 0 { self.seek_ns(sector) } else { 0 };
        let mut ns = transfer_ns(bytes, self.media_rate()) + program + measured + seek;
        let p = &self.profile;
        if p.stripe_bytes > 0 && !bytes.is_multiple_of(p.stripe_bytes) {
            // Partial-stripe write: read old data and parity, then write both (one more rotation).
            ns += 2 * p.half_rotation_ns + transfer_ns(bytes, p.media_bytes_per_sec);
        }
        self.head_sector = sector + bytes / SECTOR as u64;
        ns
    }

    /// Completes request `id`, applying the durability rules; returns the request. A write
    /// left in the volatile cache moves its data there: the returned request has none.
    pub fn complete(&mut self, id: u64) -> IoReq {
        let pos = std::mem::replace(self.inflight_slot(id), GONE);
        assert!(pos != GONE, "completing an in-flight request");
        let mut req = self.inflight.swap_remove(pos as usize);
        if let Some(moved) = self.inflight.get(pos as usize).map(|r| r.id) {
            *self.inflight_slot(moved) = pos;
        }
        while self.inflight_at.front() == Some(&GONE) {
            self.inflight_at.pop_front();
            self.inflight_base += 1;
        }
        if self.requests.is_some() {
            self.note(DevIo::Complete(req.clone()));
        }
        match req.kind {
            IoKind::Read => {}
            IoKind::Flush => self.flush_through(req.flush_mark),
            IoKind::Write { preflush, fua } => {
                // An emulated FUA's flush ran after the write: it covers what completed
                // before the write was submitted at least (the conservative mark).
                if preflush || (fua && !self.profile.fua) {
                    self.flush_through(req.flush_mark);
                }
                let stable = !self.profile.volatile_cache || (fua && self.bug != DeviceBug::FuaIgnored);
                if stable {
                    self.stable.write_record(req.sector, &req.data, req.bytes, req.crc);
                } else {
                    // A FUA write left in the cache breaks the device's own promise.
                    self.stats.semantics_violations += fua as u64;
                    self.cached_bytes += req.bytes;
                    self.cache.push_back(CachedWrite {
                        cseq: self.next_cseq,
                        req_id: req.id,
                        sector: req.sector,
                        data: std::mem::take(&mut req.data),
                        bytes: req.bytes,
                        crc: req.crc,
                    });
                    self.next_cseq += 1;
                }
            }
        }
        req
    }

    /// Makes every cached write with a completion sequence below `mark` stable.
    fn flush_through(&mut self, mark: u64) {
        if self.bug == DeviceBug::FlushIgnored {
            if self.cache.front().is_some_and(|w| w.cseq < mark) {
                self.stats.semantics_violations += 1;
            }
            return;
        }
        while let Some(w) = self.cache.front() {
            if w.cseq >= mark {
                break;
            }
            let w = self.cache.pop_front().expect("front exists");
            self.cached_bytes -= w.bytes;
            self.stable.write_record(w.sector, &w.data, w.bytes, w.crc);
        }
    }

    /// Stable media only: what survives any crash (the cache is `cached()`).
    pub fn stable(&self) -> &SectorMap {
        &self.stable
    }
    pub fn cached(&self) -> &VecDeque<CachedWrite> {
        &self.cache
    }
    pub fn inflight(&self) -> &[IoReq] {
        &self.inflight
    }
    pub fn cached_bytes(&self) -> u64 {
        self.cached_bytes
    }
    pub fn queue_len(&self) -> usize {
        self.inflight.len()
    }
    /// Completion sequence the next cached write will get.
    pub fn next_cseq(&self) -> u64 {
        self.next_cseq
    }
}

/// A flash device's link: when the data of the writes sent on it so far has crossed it, and
/// when each still crossing it is done.
#[derive(Clone, Debug, Default)]
struct LinkQueue {
    end: Ns,
    transfers: BinaryHeap<Reverse<Ns>>,
}

fn transfer_ns(bytes: u64, rate: u64) -> Ns {
    if rate == 0 {
        return 0;
    }
    (bytes as u128 * NS_PER_SEC as u128 / rate as u128) as Ns
}

fn isqrt(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let mut x = n;
    let mut y = x.div_ceil(2);
    while y < x {
        x = y;
        y = (x + n / x) / 2;
    }
    x
}

#[cfg(test)]
mod tests {
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
        let q1 = d.flush_queue.clone();
        assert_eq!(q1.start, 0);
        assert!(t1 > q1.end, "the write goes out once its flush is done");
        let (_, t2) = d.submit_write(NS_PER_US, 16, block(2), ReqFlags::PREFLUSH_FUA, 0);
        let q2 = d.flush_queue.clone();
        assert_eq!(q2.start, t1, "the second flush waits for the first and its write");
        let (_, t3) = d.submit_write(2 * NS_PER_US, 24, block(3), ReqFlags::PREFLUSH_FUA, 0);
        assert_eq!(d.flush_queue.start, q2.start, "an arrival while the second waits shares it");
        assert!(t2 > q2.end && t3 > q2.end);
        assert_eq!(d.stats.flushes, 3, "three PREFLUSH requests");
        d.complete(first);
        // Writes on a plain queue still overlap: only PREFLUSH writes queue for the flush.
        let (_, plain) = d.submit_write(3 * NS_PER_US, 32, block(4), ReqFlags::PLAIN, 0);
        assert!(plain < q2.start);
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
            let wire = n * bytes * NS_PER_SEC / d.profile.bus_bytes_per_sec;
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

    #[test]
    fn a_disk_waits_for_its_sector_to_come_round_a_flash_page_takes_its_type_s_time() {
        // Reads of one sector, alternating between two tracks: the same seek each time, and a
        // rotational wait anywhere in a turn, half a turn on average.
        let mut d = dev(DeviceClass::Hdd);
        let p = d.profile.clone();
        let mut waits = Vec::new();
        for i in 0..2000u64 {
            let track = (1 - i % 2) * 1_000_000;
            waits.push(d.seek_ns(track));
            d.head_sector = track;
        }
        let seek = *waits.iter().min().unwrap();
        let spread = waits.iter().max().unwrap() - seek;
        let mean = waits.iter().sum::<u64>() / waits.len() as u64;
        assert!(spread > 2 * p.half_rotation_ns * 9 / 10, "waits span a turn: {spread}");
        let mean_wait = mean - seek;
        assert!(
            mean_wait.abs_diff(p.half_rotation_ns) < p.half_rotation_ns / 10,
            "half a turn on average: {mean_wait}"
        );
        // TLC program times: three page types, their mean the profile's.
        let mut f = dev(DeviceClass::Nvme);
        let times: Vec<u64> = (0..3000).map(|_| f.program_ns()).collect();
        let kinds: std::collections::BTreeSet<u64> = times.iter().copied().collect();
        assert_eq!(kinds.len(), 3);
        let mean = times.iter().sum::<u64>() / times.len() as u64;
        assert!(mean.abs_diff(f.profile.program_ns) < f.profile.program_ns / 20, "{mean}");
        // Seeded: the same seed draws the same times.
        let (mut a, mut b) = (dev(DeviceClass::Hdd), dev(DeviceClass::Hdd));
        assert_eq!(a.submit_read(0, 12345, 512, 0), b.submit_read(0, 12345, 512, 0));
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
        assert!(seq < media + 2 * p.seek_ns, "sequential: {seq} vs media time {media}");
        assert!(seq > media, "{seq}");
        assert!(far > media + 64 * p.flush_per_extent_ns, "a seek and a wait each: {far}");
        // Many extents on few tracks: the scheduler takes them as they come round, well under
        // half a turn each.
        let dense: Vec<u64> = (0..64).map(|i| 2_000_000 + i * 97).collect();
        let t = flush_after(DeviceClass::Hdd, &dense, 4096, 0);
        assert!(t < 64 * p.half_rotation_ns / 4, "RPO on a few tracks: {t}");
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
        let (block, erase) = (d.profile.erase_block_bytes, d.profile.erase_ns);
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
}
