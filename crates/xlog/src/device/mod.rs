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
//!
//! The layers, each in its file: the cache and its durability rules (`cache.rs`), blk-flush
//! (`blk_flush.rs`), md (`md.rs`), a shared link (`link.rs`), the media behind (`disk.rs`,
//! `flash.rs`, `measured.rs`, as the profile's `Media` says), and the request record.

mod blk_flush;
mod cache;
mod disk;
mod flash;
mod link;
mod md;
mod measured;
mod media;
mod request;
mod request_record;

pub use self::media::{DeviceProfile, Disk, Erase, Flash, Measured, Media, Stalls};
pub use self::request::{CachedWrite, DeviceStats, IoKind, IoReq, ReqFlags};
pub use self::request_record::DevIo;
pub use crate::sectors::{SectorMap, SECTOR};

use crate::format::PendingCrc;
use crate::scenario::DeviceBug;
use crate::units::{Ns, NS_PER_SEC};
use rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Clone, Debug)]
pub struct Device {
    profile: DeviceProfile,
    bug: DeviceBug,
    /// The cache and stable media (`cache.rs`).
    stable: SectorMap,
    cache: VecDeque<CachedWrite>,
    cached_bytes: u64,
    next_cseq: u64,
    /// Requests in flight; index in `inflight` of request `inflight_base + i` (`GONE` once
    /// complete). Every request completes, so the window of ids spans only those issued
    /// while the oldest in flight was running.
    inflight: Vec<IoReq>,
    inflight_at: VecDeque<u32>,
    inflight_base: u64,
    next_id: u64,
    /// When each of the `queue_depth` channels is next free, as (time, channel): the earliest
    /// (lowest channel on a tie) takes the next request. A heap: 128 channels on nvme-x4.
    channels: BinaryHeap<Reverse<(Ns, usize)>>,
    last_start_ns: Ns,
    link: link::LinkQueue,
    flush_queue: blk_flush::FlushQueue,
    disk: disk::DiskState,
    flash: flash::FlashState,
    host: measured::HostState,
    stats: DeviceStats,
    /// The request record (what dm-log-writes would log): off unless an export asked for it,
    /// as it keeps every write's data.
    requests: Option<Vec<DevIo>>,
    /// The device's own seeded draws (rotational position, flash page type, measured
    /// latencies): service times vary as the physics makes them vary, and the same seed
    /// gives the same run.
    rng: Pcg64Mcg,
}

impl Device {
    pub fn new(profile: DeviceProfile, bug: DeviceBug, seed: u64) -> Device {
        let qd = profile.queue_depth.max(1) as usize;
        let dies = profile.erase().map_or(0, |e| e.dies.max(1) as usize);
        Device {
            rng: Pcg64Mcg::seed_from_u64(seed),
            disk: disk::DiskState::new(profile.ncq_disks().unwrap_or(0)),
            flash: flash::FlashState::new(dies),
            host: measured::HostState::default(),
            profile,
            bug,
            stable: SectorMap::new(),
            cache: VecDeque::new(),
            cached_bytes: 0,
            next_cseq: 0,
            inflight: Vec::new(),
            inflight_at: VecDeque::new(),
            inflight_base: 1,
            next_id: 1,
            channels: (0..qd).map(|i| Reverse((0, i))).collect(),
            last_start_ns: 0,
            link: link::LinkQueue::default(),
            flush_queue: blk_flush::FlushQueue::default(),
            stats: DeviceStats::default(),
            requests: None,
        }
    }

    pub fn profile(&self) -> &DeviceProfile {
        &self.profile
    }
    pub fn stats(&self) -> &DeviceStats {
        &self.stats
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
        self.note_backing(sector, sectors);
        self.stats.fua_writes += fua as u64;
        self.stats.preflush_writes += preflush as u64;
        self.stats.flushes += preflush as u64;
        self.destage(now, false);
        let cost = self.profile.cmd_ns + transfer_ns(bytes, self.link_rate());
        // The write goes out once its flush is done, without the PREFLUSH.
        let (mut not_before, mut window) = (now, None);
        if preflush {
            not_before = self.queued_flush(now);
            window = Some(self.flush_window());
        }
        // Without FUA support the write goes to the cache and a flush follows it.
        let post_flush = fua && !self.profile.fua;
        let cached = self.profile.volatile_cache && (!fua || post_flush);
        // A measured device's writes take their measured time, cached or not.
        let measured = matches!(self.profile.media, Media::Measured(_));
        let mut media = if !cached || measured { self.media_write_ns(sector, bytes) } else { 0 };
        if !cached {
            let at = self.start_at(not_before) + cost;
            media += self.program_dies(at, bytes, media);
        }
        let kind = IoKind::Write { preflush, fua };
        let (id, mut done) = self.enqueue(now, not_before, kind, sector, (data, bytes), (cost, media), tag);
        if post_flush {
            self.stats.flushes += 1;
            done = self.queued_flush(done);
            window = Some(self.flush_window());
            if let Some(r) = self.inflight.last_mut() {
                r.done_ns = done;
            }
        }
        if preflush {
            self.preflush_data_done(done);
        }
        if let Some(r) = self.inflight.last_mut() {
            r.flush_window = window;
        }
        if cached {
            self.cache_dirty(done, sector, sectors);
        }
        (id, done)
    }

    /// Submits a read of `bytes` at `sector`: a command plus a media access (a seek on disks).
    pub fn submit_read(&mut self, now: Ns, sector: u64, bytes: u64, tag: u64) -> (u64, Ns) {
        let cost = self.profile.cmd_ns + transfer_ns(bytes, self.link_rate());
        let mut media = transfer_ns(bytes, self.media_rate());
        media += match self.profile.media {
            Media::Disk(_) => self.disk_read_ns(sector, bytes),
            Media::Flash(f) => f.read_ns,
            Media::Measured(m) => m.read_ns,
        };
        self.enqueue(now, now, IoKind::Read, sector, (Vec::new(), bytes), (cost, media), tag)
    }

    /// Media time of a write that goes through to the media (or of any measured write).
    fn media_write_ns(&mut self, sector: u64, bytes: u64) -> Ns {
        let xfer = transfer_ns(bytes, self.media_rate());
        xfer + match self.profile.media {
            Media::Flash(f) => self.program_ns(&f),
            Media::Measured(m) => self.measured_write_ns(&m),
            Media::Disk(d) => self.disk_write_ns(&d, sector, bytes),
        }
    }

    /// One disk's link and media rates: an array's profile gives all its members' together.
    fn link_rate(&self) -> u64 {
        self.profile.bus_bytes_per_sec / self.profile.members()
    }
    fn media_rate(&self) -> u64 {
        self.profile.media_bytes_per_sec / self.profile.members()
    }

    /// When a request submitted now starts: on the first free channel, spaced by the IOPS cap.
    fn start_at(&self, now: Ns) -> Ns {
        let Reverse((free_at, _)) = *self.channels.peek().expect("queue_depth >= 1");
        let mut start = now.max(free_at);
        if let Some(interval) = self.profile.min_interval_ns {
            start = start.max(self.last_start_ns + interval);
        }
        self.after_libata_flush(start)
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
        let end = if self.profile.ncq_disks().is_some() {
            self.ncq_done(sector, start, not_before > now, iface, media)
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
        self.issue(now, done, kind, sector, (data, bytes), tag)
    }
}

fn transfer_ns(bytes: u64, rate: u64) -> Ns {
    if rate == 0 {
        return 0;
    }
    (bytes as u128 * NS_PER_SEC as u128 / rate as u128) as Ns
}

#[cfg(test)]
mod tests;
