//! What a device profile says: the parameters every device has, and its media's own.

use crate::units::Ns;
use serde::Serialize;

/// Physical parameters of a device class (see `profile.rs` for the sources).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceProfile {
    pub name: &'static str,
    pub volatile_cache: bool,
    /// Requests the device works on at once; more than one lets completions reorder.
    pub queue_depth: u32,
    /// Fixed cost of every command (controller, protocol, network round trip).
    pub cmd_ns: Ns,
    /// Host-to-device transfer rate: a disk's link, which its requests take in turn; behind
    /// one hardware queue, a flash device's link, which its writes in flight share
    /// (`link_share`); NVMe's, each request's own.
    pub bus_bytes_per_sec: u64,
    /// Cache-to-media (or write-through) transfer rate.
    pub media_bytes_per_sec: u64,
    /// Fixed cost of a cache flush. Destaging the cache: per discontiguous extent on flash,
    /// per track visited on rotating media (a short seek).
    pub flush_base_ns: Ns,
    pub flush_per_extent_ns: Ns,
    /// An md array: `md_flush_request` admits one flush at a time; the flush requests that
    /// arrive while one runs wait for it and are then served together by the next.
    pub md_flush: bool,
    /// Minimum spacing between request starts (a provider's IOPS cap).
    pub min_interval_ns: Option<Ns>,
    pub capacity_sectors: u64,
    /// The device honours FUA. Without it the block layer sends the write and then a flush
    /// (`blk_flush_policy`: REQ_FSEQ_POSTFLUSH), and the write completes with that flush.
    pub fua: bool,
    /// A SATA drive behind libata, whose FUA support the kernel version decides (`sata_fua`).
    pub libata: bool,
    /// One hardware queue: blk-mq's one flush queue serves every flush, explicit ones
    /// (`blkdev_issue_flush`) too, so concurrent flushes share one command. Devices with a
    /// queue per CPU (NVMe) coalesce only within a CPU's queue; the model leaves theirs apart.
    pub one_flush_queue: bool,
    pub media: Media,
}

/// What holds the data behind the cache, and so what sets a request's media time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Media {
    /// Rotating disks: seeks, rotational waits, background destaging.
    Disk(Disk),
    /// No moving parts: flash pages and dies, or a volume whose network sets its times.
    Flash(Flash),
    /// A device measured as a whole: its latencies drawn from measured distributions.
    Measured(Measured),
}

/// A rotating disk, or an array of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Disk {
    /// Disks each with one actuator serving their reads and write-through writes in turn,
    /// while writes into the cache complete over the link (NCQ); an array's member holds a
    /// sector by md's chunk. None behind a RAID controller, whose channels are the spindles.
    pub ncq_disks: Option<u32>,
    /// Average seek and half a rotation.
    pub seek_ns: Ns,
    pub half_rotation_ns: Ns,
    /// Half a turn while destaging (the rotational wait, drawn per track).
    pub flush_rotation_ns: Ns,
    /// Spindles destaging in parallel (an array of `members` disks as one faster disk).
    pub members: u32,
    /// A parity array's full stripe: smaller writes pay a read-modify-write.
    pub parity_stripe_bytes: Option<u64>,
}

/// Flash (or a network volume with no moving parts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Flash {
    /// Program latency paid by write-through (FUA or no cache) writes; None where a
    /// power-loss-protected cache absorbs them.
    pub program_ns: Option<Ns>,
    /// Media time of a random 4 KiB read.
    pub read_ns: Ns,
    /// Its dies and the FTL's erases, where modelled (not behind a protected cache or a
    /// network).
    pub erase: Option<Erase>,
}

/// Flash dies program in parallel, a page at a time in turn; the FTL erases a block for every
/// `block_bytes` programmed, on the dies in turn, and a die is busy for `erase_ns` (tBERS)
/// while it erases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Erase {
    pub dies: u32,
    pub block_bytes: u64,
    pub erase_ns: Ns,
}

/// A measured latency distribution: (cumulative probability per million, latency) points.
pub type LatencyTable = &'static [(u32, Ns)];

/// A device measured as a whole, as (cumulative probability per million, latency) points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Measured {
    /// Drawn per write (cached or not: a measured device's writes take their measured time
    /// either way).
    pub write_latency: LatencyTable,
    /// Drawn per cache flush.
    pub flush_latency: LatencyTable,
    /// A device backed by a sparse file (a loop device): a flush after writes to blocks the
    /// file never held commits the host's allocations too, and draws from this instead.
    pub flush_latency_allocating: Option<LatencyTable>,
    /// `host_flush=inflight`: a flush waits for the requests in flight, then draws from these
    /// (after overwrites only, after writes to new blocks) instead.
    pub flush_idle: Option<(LatencyTable, LatencyTable)>,
    /// Media time of a random read.
    pub read_ns: Ns,
    /// Stalls of the whole device (a shared host's): nothing completes during one.
    pub stalls: Option<Stalls>,
    /// A loop device with direct I/O: its writes' latency on the host disk alone (from the
    /// loop's request to the host disk's completion), without the backing file's completion
    /// work, which waits for a CPU (`write_latency` holds both, measured with busy CPUs).
    pub host_write_latency: Option<LatencyTable>,
    /// Its writes draw from `host_write_latency`, and their completion reaches the block layer
    /// only once the simulator has run the backing file's completion on a CPU of the pool
    /// (`cpu_model=kernel`).
    pub completes_on_cpu: bool,
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

impl DeviceProfile {
    pub fn disk(&self) -> Option<&Disk> {
        match &self.media {
            Media::Disk(d) => Some(d),
            _ => None,
        }
    }
    pub fn flash(&self) -> Option<&Flash> {
        match &self.media {
            Media::Flash(f) => Some(f),
            _ => None,
        }
    }
    pub fn measured(&self) -> Option<&Measured> {
        match &self.media {
            Media::Measured(m) => Some(m),
            _ => None,
        }
    }
    /// Flash whose erases are modelled.
    pub fn erase(&self) -> Option<&Erase> {
        self.flash().and_then(|f| f.erase.as_ref())
    }
    /// Disks behind NCQ, each with its actuator; `None` for other devices.
    pub fn ncq_disks(&self) -> Option<usize> {
        self.disk().and_then(|d| d.ncq_disks).filter(|&n| n > 0).map(|n| n as usize)
    }
    /// How many members an array's rates and chunks divide among (1 for one device).
    pub fn members(&self) -> u64 {
        self.ncq_disks().map_or(1, |n| n as u64)
    }
}
