//! A rotating disk: NCQ over one actuator per disk, seeks and rotational waits, and the
//! background destaging of its cache in rotational-position order.

use super::media::Disk;
use super::{transfer_ns, Device};
use crate::sectors::SECTOR;
use crate::units::{Ns, NS_PER_SEC};
use rand_core::RngCore;

/// Extents a disk's scheduler weighs at once when it picks the next to destage.
const RPO_WINDOW: usize = 32;

/// A disk's moving parts: per disk its link and its actuator (when each is free next), where
/// the head is, and the writes its cache holds that the media has not yet written.
#[derive(Clone, Debug)]
pub(super) struct DiskState {
    link_free: Vec<Ns>,
    actuator_free: Vec<Ns>,
    head_sector: u64,
    dirty: Vec<Dirty>,
    /// When the media is done with what it is writing now. The drive destages in the
    /// background.
    media_free_ns: Ns,
}

/// A write accepted into the cache at `at` and not yet written to the media (timing only:
/// what survives a crash is the `cache`'s business).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Dirty {
    at: Ns,
    sector: u64,
    sectors: u64,
}

impl DiskState {
    pub(super) fn new(disks: usize) -> DiskState {
        DiskState {
            link_free: vec![0; disks],
            actuator_free: vec![0; disks],
            head_sector: 0,
            dirty: Vec::new(),
            media_free_ns: 0,
        }
    }
}

impl Device {
    /// NCQ: when a request that starts at `start` is done, its `iface` (command and
    /// transfer) on its disk's link, then its `media` on that disk's actuator.
    pub(super) fn ncq_done(&mut self, sector: u64, start: Ns, held: bool, iface: Ns, media: Ns) -> Ns {
        let m = self.disk_of(sector);
        let s = &mut self.disk;
        // Model: a write held for its PREFLUSH reaches the drive only when that is done,
        // so it does not hold the link from those sent meanwhile.
        let link_done = if held { start } else { start.max(s.link_free[m]) } + iface;
        if !held {
            s.link_free[m] = link_done;
        }
        if media > 0 {
            let media_done = link_done.max(s.actuator_free[m]) + media;
            s.actuator_free[m] = s.actuator_free[m].max(media_done);
            media_done
        } else {
            link_done
        }
    }

    /// Media time of a read at `sector`: the seek there (the transfer is the caller's).
    pub(super) fn disk_read_ns(&mut self, sector: u64, bytes: u64) -> Ns {
        let ns = self.seek_ns(sector);
        self.disk.head_sector = sector + bytes / SECTOR as u64;
        ns
    }

    /// Media time of a write-through write at `sector`, past its transfer: the seek there,
    /// and on a parity array a partial stripe's read-modify-write.
    pub(super) fn disk_write_ns(&mut self, d: &Disk, sector: u64, bytes: u64) -> Ns {
        let mut ns = self.seek_ns(sector);
        if let Some(stripe) = d.parity_stripe_bytes {
            if !bytes.is_multiple_of(stripe) {
                // Read old data and parity, then write both (one more rotation).
                ns += 2 * d.half_rotation_ns + transfer_ns(bytes, self.profile.media_bytes_per_sec);
            }
        }
        self.disk.head_sector = sector + bytes / SECTOR as u64;
        ns
    }

    /// A write accepted into the cache at `at`, for the media to destage.
    pub(super) fn cache_dirty(&mut self, at: Ns, sector: u64, sectors: u64) {
        if self.rotating() {
            self.disk.dirty.push(Dirty { at, sector, sectors });
        }
    }

    /// A disk's destaging as of `now`: writes waiting for its next sweep, their bytes, and
    /// how long the media stays busy with the sweep under way. None on flash.
    pub fn destage_backlog(&self, now: Ns) -> Option<(u64, u64, Ns)> {
        self.rotating().then(|| {
            let waiting = self.disk.dirty.iter().filter(|d| d.at <= now);
            let (n, sectors) = waiting.fold((0, 0), |(n, s), d| (n + 1, s + d.sectors));
            (n, sectors * SECTOR as u64, self.disk.media_free_ns.saturating_sub(now))
        })
    }

    /// Rotating media: destages in the background (flash pays at the flush).
    pub fn rotating(&self) -> bool {
        self.profile.disk().is_some()
    }

    /// A disk with NCQ, as of `now`: for each of its disks, how long its actuator is still
    /// busy with the reads and write-through writes already queued for it.
    pub fn actuator_state(&self, now: Ns) -> Option<Vec<Ns>> {
        self.profile.ncq_disks().map(|_| self.disk.actuator_free.iter().map(|&t| t.saturating_sub(now)).collect())
    }

    /// A flush started at `start` on a disk: it waits for what the media has not yet written.
    pub(super) fn disk_flush_ns(&mut self, start: Ns) -> Ns {
        self.destage(start, true);
        self.profile.flush_base_ns + self.disk.media_free_ns.saturating_sub(start)
    }

    /// Runs the drive's background destaging up to `t`: whenever the media is free it takes
    /// every write then in the cache and writes them in one elevator sweep. With `drain`,
    /// also the sweeps that write out what the cache holds at `t` (a flush's wait).
    /// Model: reads and write-through writes do not compete with destaging for the media.
    pub(super) fn destage(&mut self, t: Ns, drain: bool) {
        let Some(disk) = self.profile.disk().copied() else { return };
        while let Some(first) = self.disk.dirty.iter().map(|d| d.at).min() {
            let start = self.disk.media_free_ns.max(first);
            if start > t && !(drain && first <= t) {
                return;
            }
            let (mut batch, rest): (Vec<Dirty>, Vec<Dirty>) = self.disk.dirty.drain(..).partition(|d| d.at <= start);
            self.disk.dirty = rest;
            self.disk.media_free_ns = start + self.sweep_ns(&disk, &mut batch, start);
        }
    }

    /// Media time of one destage on a disk that starts at `start`. Contiguous writes merge
    /// into one extent. The disk schedules by rotational position (RPO): from
    /// the head, it writes next whichever of the next `RPO_WINDOW` extents in elevator order
    /// it reaches first, counting the seek (a short one to change track) and the wait for
    /// the extent's first sector to come round. A sector's angle is its place on its track,
    /// and the platter turns with the clock, so the schedule follows from the addresses.
    fn sweep_ns(&mut self, d: &Disk, batch: &mut [Dirty], start: Ns) -> Ns {
        batch.sort_unstable_by_key(|d| d.sector);
        let mut extents: Vec<(u64, u64)> = Vec::with_capacity(batch.len());
        for d in batch.iter() {
            match extents.last_mut() {
                Some((s, n)) if *s + *n >= d.sector => *n = (*n).max(d.sector + d.sectors - *s),
                _ => extents.push((d.sector, d.sectors)),
            }
        }
        let p = &self.profile;
        let turn = 2 * d.flush_rotation_ns;
        let track = (p.media_bytes_per_sec as u128 * turn as u128 / NS_PER_SEC as u128 / SECTOR as u128).max(1) as u64;
        let cap = p.capacity_sectors.max(1);
        let (settle, seek_ns, members) = (p.flush_per_extent_ns, d.seek_ns, d.members.max(1) as u64);
        let media_rate = p.media_bytes_per_sec;
        let s = &mut self.disk;
        let split = extents.partition_point(|e| e.0 < s.head_sector);
        extents.rotate_left(split);
        let mut t = start;
        while !extents.is_empty() {
            let (mut best, mut at) = (Ns::MAX, 0);
            for (i, &(e, _)) in extents.iter().take(RPO_WINDOW).enumerate() {
                let head = s.head_sector;
                let seek = if e / track == head / track {
                    0
                } else {
                    let dist = e.abs_diff(head).min(cap);
                    (seek_ns * isqrt(dist * 1_000_000 / cap) / 1000 / members).max(settle)
                };
                let angle = (e % track) * turn / track;
                let wait = if e == head { 0 } else { (angle + turn - (t + seek) % turn) % turn };
                if seek + wait < best {
                    (best, at) = (seek + wait, i);
                }
            }
            let (e, n) = extents.remove(at);
            t += best + transfer_ns(n * SECTOR as u64, media_rate);
            s.head_sector = e + n;
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
        let (Some(d), cap) = (self.profile.disk().copied(), self.profile.capacity_sectors.max(1)) else { return 0 };
        if sector == self.disk.head_sector {
            return 0;
        }
        // Seek time grows with the square root of the distance (short-stroke vs full).
        let dist = sector.abs_diff(self.disk.head_sector).min(cap);
        let frac_milli = isqrt(dist * 1_000_000 / cap);
        let seek = d.seek_ns * frac_milli / 1000;
        seek + self.rotational_wait(d.half_rotation_ns)
    }
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
    use crate::device::Device;
    use crate::profile::profile;
    use crate::scenario::{DeviceBug, DeviceClass};

    #[test]
    fn a_disk_waits_for_its_sector_to_come_round() {
        // Reads of one sector, alternating between two tracks: the same seek each time, and a
        // rotational wait anywhere in a turn, half a turn on average.
        let mut d = Device::new(profile(DeviceClass::Hdd), DeviceBug::None, 1);
        let half = d.profile().disk().unwrap().half_rotation_ns;
        let mut waits = Vec::new();
        for i in 0..2000u64 {
            let track = (1 - i % 2) * 1_000_000;
            waits.push(d.seek_ns(track));
            d.disk.head_sector = track;
        }
        let seek = *waits.iter().min().unwrap();
        let spread = waits.iter().max().unwrap() - seek;
        let mean = waits.iter().sum::<u64>() / waits.len() as u64;
        assert!(spread > 2 * half * 9 / 10, "waits span a turn: {spread}");
        let mean_wait = mean - seek;
        assert!(mean_wait.abs_diff(half) < half / 10, "half a turn on average: {mean_wait}");
        // Seeded: the same seed draws the same times.
        let dev = || Device::new(profile(DeviceClass::Hdd), DeviceBug::None, 1);
        let (mut a, mut b) = (dev(), dev());
        assert_eq!(a.submit_read(0, 12345, 512, 0), b.submit_read(0, 12345, 512, 0));
    }
}
