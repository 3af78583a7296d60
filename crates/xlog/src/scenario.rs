//! What a run is: geometry, device, workload, policies and seed, with validation by field.

use crate::units::{format_duration, format_size, parse_duration, parse_size, Ns, BBSIZE, NS_PER_SEC, NS_PER_US};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Defines a string-valued switch with its allowed spellings (the CLI, URL and file names).
macro_rules! switch {
    ($(#[$m:meta])* $name:ident { $($var:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name { $($var),+ }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            pub const NAMES: &'static [&'static str] = &[$($s),+];
            pub fn as_str(self) -> &'static str { match self { $($name::$var => $s),+ } }
            pub fn parse(field: &str, s: &str) -> Result<Self, String> {
                match s { $($s => Ok($name::$var),)+ _ => Err(format!(
                    "{field}: '{s}' is not allowed (allowed: {})", Self::NAMES.join(", "))) }
            }
        }
        impl Setting for $name {
            fn parse_setting(field: &str, v: &str) -> Result<Self, String> { $name::parse(field, v) }
            fn setting_text(&self) -> String { self.as_str().into() }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(self.as_str()) }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                $name::parse(stringify!($name), &s).map_err(serde::de::Error::custom)
            }
        }
    };
}

switch!(
    /// Device classes of SPEC.md §2.
    DeviceClass { Hdd = "hdd", HddX4 = "hdd-x4", Nvme = "nvme", NvmeX4 = "nvme-x4", SataSsd = "sata-ssd",
    EnterpriseSsd = "enterprise-ssd", IscsiCloud = "iscsi-cloud", Raid6Old = "raid6-old", VmDisk = "vm-disk" }
);
switch!(
    /// Which iclogs carry PREFLUSH/FUA (SPEC.md §4).
    FlushPolicy { Legacy = "legacy", SeriesV1 = "series-v1", V514 = "v5.14", Upstream = "upstream" }
);
switch!(CommitOrdering { None = "none", SeriesV1 = "series-v1", V514Rc1 = "v5.14-rc1", Fixed = "fixed" });
switch!(Throttle { V57 = "v5.7", V59 = "v5.9", Fixed = "fixed" });
switch!(UnitResRoundoff { X2 = "2x", X1 = "1x" });
switch!(TailUpdate { Unflushed = "unflushed", Fixed = "fixed" });
switch!(ForceFlush { None = "none", Fixed = "fixed" });
switch!(StartRecordOrder { Unordered = "unordered", Ordered = "ordered" });
switch!(ShadowRound { Off = "off", R512 = "512" });
switch!(RsumCache { Off = "off", On = "on" });
switch!(
    /// What a create logs of its directory: `blocks`, the kernel's node-form blocks as they
    /// grow (data, hash-ordered leaves, free index, node, the directory inode); `chunk`, one
    /// 128-byte chunk of a single block per create (small transactions; the bug zoo's
    /// small-log presets are built on it).
    Directory { Blocks = "blocks", Chunk = "chunk" }
);
switch!(
    /// xfsaild's pass: `upstream` (6.11+: resumes where it stopped, skips items being
    /// written, writes an inode with its cluster, no pause while work remains); `backoff`,
    /// the lab's earlier pass (one write per item, 10 ms pauses), on which the bug zoo is built.
    Xfsaild { Upstream = "upstream", Backoff = "backoff" }
);
switch!(
    /// What sets xfsaild's push target: `upstream` (6.11+, `xfs_ail_calc_push_target`: keep
    /// 25% of the physical log free, measured as the AIL's span, polled every 50 ms; a
    /// reservation that has to sleep pushes the whole AIL); `grant` (before 6.11,
    /// `xlog_grant_push_ail`: every reservation pushes when the reserve grant head leaves
    /// less than 25% free).
    AilPush { Upstream = "upstream", Grant = "grant" }
);
switch!(
    /// The CIL's space accounting: `upstream` (6.0+, `xlog_cil_insert_items` with `xc_pcp`):
    /// each CPU keeps its own count of committed bytes and folds it into the context's when it
    /// passes `XLOG_CIL_SPACE_LIMIT / ncpus`, past the soft limit every commit counts at once,
    /// and each new context takes the record headers for the blocking limit's worth of iclogs
    /// from its first commits (`xc_iclog_hdrs`); `global` (before 6.0): every commit adds to
    /// one count, and headers are taken as that count crosses iclog boundaries.
    CilSpace { Upstream = "upstream", Global = "global" }
);
switch!(
    /// Where an operation's CPU time (`think`) runs: `inside` its transaction, after
    /// `xfs_trans_alloc` reserved its log space and before the commit, as the kernel's creates,
    /// unlinks and btree updates do (so a writer at work, or waiting for a CPU, holds its
    /// reservation); `before`, the lab's earlier model (the work first, then a reservation
    /// committed at once), on which the bug zoo is built. `sync-append` copies its data into
    /// the page cache before its transactions either way.
    TxWorkAt { Inside = "inside", Before = "before" }
);
switch!(
    /// Which threads take CPU time on the pool (`cpus`): `writers`, the writers and the CIL
    /// push worker; `kernel`, also the I/O completion of a synced append (`xfs_end_io` on
    /// `xfs-conv`: its extent conversion, measured on this machine's 6.18) and xfsaild (its
    /// passes' writeback), which wait for a CPU as a woken kernel worker does. No effect
    /// without a pool (`cpus=0`).
    CpuModel { Writers = "writers", Kernel = "kernel" }
);
switch!(
    /// Whether a create holds its AG's AGI buffer lock from its inode allocation to its
    /// commit (`xfs_dialloc` to `xfs_trans_commit`), so creates in one AG allocate one at a
    /// time: `off`, or `on` (as the kernel does; measured on this machine: docs/kernel.md).
    AgiLock { Off = "off", On = "on" }
);
switch!(
    /// What a `fsync-heavy` operation does before its fsync: `tx`, one transaction of
    /// `tx_items` buffers (dbench-like: the lab's default); `append`, a buffered append of
    /// `append_size` to the writer's file, as `loglab kernel run` does and the kernel logs it:
    /// the file's timestamps when the coarse clock ticked since their last update
    /// (`file_update_time`), then at the fsync the data write and its I/O completion's
    /// unwritten-extent conversion (`xfs_iomap_write_unwritten`), as a `sync-append` append.
    FsyncOp { Tx = "tx", Append = "append" }
);
switch!(
    /// How `vm-disk` (a loop device over this machine's disk) times a cache flush: `table`,
    /// drawn from flushes measured under the workloads it was measured with (`fsync-heavy`'s
    /// overwrites; after new blocks, 200 O_DSYNC appenders and new inode clusters), so each
    /// holds its workload's writes in flight; `inflight`, as the host does it: the flush waits
    /// for the requests in flight on the device, then takes what a flush with nothing in
    /// flight takes (measured alone, after an overwrite or after new blocks). No effect on
    /// other devices.
    HostFlush { Table = "table", Inflight = "inflight" }
);
switch!(
    /// How a SATA drive (`hdd`, `hdd-x4`, `sata-ssd`) is sent a FUA write: `upstream` (6.3+,
    /// libata's `fua` parameter on: the drive gets WRITE FPDMA QUEUED with FUA); `emulated`
    /// (before 6.3, `libata.fua=0`: the disk advertises no FUA, so the block layer writes to
    /// the cache and then flushes it, `REQ_FSEQ_POSTFLUSH`), which the seed presets keep. The
    /// bug zoo keeps FUA: its bugs are those of drives that honour it (a flush after every FUA
    /// write would hide `force-without-flush`'s).
    SataFua { Upstream = "upstream", Emulated = "emulated" }
);
switch!(
    /// Which disk states a crash may leave (SPEC.md §2): `subset` keeps any subset of the
    /// completed-but-unflushed writes; `prefix` keeps them only as a completion-order prefix,
    /// as dm-log-writes replay (fstests generic/482) sees a crash.
    CrashModel { Subset = "subset", Prefix = "prefix" }
);
switch!(
    /// Deliberately broken device rules, for showing that the oracle catches them.
    DeviceBug { None = "none", FuaIgnored = "fua-ignored", FlushIgnored = "flush-ignored" }
);
switch!(
    /// Writer loops of SPEC.md §9.
    WorkloadKind { SyncAppend = "sync-append", FsmarkCreate = "fsmark-create", FsyncHeavy = "fsync-heavy",
    BtreeChurn = "btree-churn", DirRemove = "dir-remove", RtAlloc = "rt-alloc", CreateRemove = "create-remove" }
);

/// A byte count written as "64MiB" in files and URLs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Size(pub u64);
/// A virtual duration written as "10s" in files and URLs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub Ns);

macro_rules! text_unit {
    ($t:ident, $fmt:ident, $parse:ident) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$fmt(self.0))
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[derive(Deserialize)]
                #[serde(untagged)]
                enum Raw {
                    N(u64),
                    S(String),
                }
                match Raw::deserialize(d)? {
                    Raw::N(n) => Ok($t(n)),
                    Raw::S(s) => $parse(stringify!($t), &s).map($t).map_err(serde::de::Error::custom),
                }
            }
        }
    };
}
text_unit!(Size, format_size, parse_size);
text_unit!(Duration, format_duration, parse_duration);

/// Everything that defines a run. Field names are the `--set` keys, file keys and URL keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    pub seed: u64,
    pub duration: Duration,
    pub writers: u32,
    pub workload: WorkloadKind,
    pub device: DeviceClass,
    pub external_log: bool,
    pub fs_size: Size,
    pub log_size: Size,
    pub iclog_count: u32,
    pub iclog_size: Size,
    /// Log stripe unit in bytes; 0 means none (roundoff 512).
    pub lsu: Size,
    pub flush: FlushPolicy,
    pub commit_ordering: CommitOrdering,
    pub throttle: Throttle,
    pub unit_res_roundoff: UnitResRoundoff,
    pub tail_update: TailUpdate,
    pub force_flush: ForceFlush,
    pub start_record_order: StartRecordOrder,
    pub shadow_round: ShadowRound,
    pub rsum_cache: RsumCache,
    pub device_bug: DeviceBug,
    pub crash_model: CrashModel,
    /// Transaction reservation (`tr_logres`) each writer asks for.
    pub tx_logres: u32,
    /// `tr_logcount`: how many rolls the permanent ticket pre-reserves.
    pub tx_logcount: u32,
    /// Buffers each transaction dirties, and the 128-byte chunks dirtied in each.
    pub tx_items: u32,
    pub tx_chunks: u32,
    /// Metadata blocks each transaction reads from the data device while it holds its
    /// reservation (btree blocks not in memory): the time a reservation stays out.
    /// create-remove: only the removers read (the creators' directories are hot).
    pub tx_reads: u32,
    /// CIL pushes that may run at once: 1 is the serialised push work of 5.4–5.15,
    /// 4 the pipelined pushes of later kernels (the "xfs-cil" workqueue's max_active).
    pub cil_pushers: u32,
    /// Whether each transaction is followed by an fsync (a log force to its commit LSN).
    pub fsync: bool,
    /// File data each fsync writes back: the bytes of one synchronous append (`sync-append`:
    /// appended to the writer's file) or of the block rewritten (the other workloads).
    pub append_size: Size,
    /// Allocation groups mkfs makes (0: mkfs's default). Only the kernel runner uses it
    /// (`mkfs.xfs -d agcount=`); the model's reservations come from `tx_logres`.
    pub agcount: u32,
    /// With fsync: only the first this-many writers fsync (0: all of them).
    pub fsync_writers: u32,
    /// CPU time of a writer's operation (where it runs: `tx_work`).
    pub think: Duration,
    /// Where an operation's CPU time runs: inside its transaction or before it.
    pub tx_work: TxWorkAt,
    /// CPUs the writers' CPU time runs on (0: one per writer). Fewer CPUs than writers queue
    /// them for a CPU, as on a real machine where the create path, not the log, is the limit.
    pub cpus: u32,
    /// Which threads take CPU time on the pool: the writers and the push worker, or the
    /// kernel's I/O completion and xfsaild too.
    pub cpu_model: CpuModel,
    /// Whether creates hold their AG's AGI buffer lock from inode allocation to commit.
    pub agi_lock: AgiLock,
    /// What a `fsync-heavy` operation does before its fsync: a transaction, or an append.
    pub fsync_op: FsyncOp,
    /// How `vm-disk` times a cache flush: from its measured tables, or after the writes in flight.
    pub host_flush: HostFlush,
    /// What creates log of their directory.
    pub directory: Directory,
    /// How xfsaild paces its passes.
    pub xfsaild: Xfsaild,
    /// What sets xfsaild's push target.
    pub ail_push: AilPush,
    /// How commits count towards the CIL's space limits and pay its record headers.
    pub cil_space: CilSpace,
    /// Whether a SATA drive gets FUA writes or the block layer's flush after each.
    pub sata_fua: SataFua,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            seed: 1,
            duration: Duration(2 * NS_PER_SEC),
            writers: 16,
            workload: WorkloadKind::FsyncHeavy,
            device: DeviceClass::Nvme,
            external_log: false,
            fs_size: Size(220 << 30),
            log_size: Size(64 << 20),
            iclog_count: 8,
            iclog_size: Size(32 << 10),
            lsu: Size(0),
            flush: FlushPolicy::Upstream,
            commit_ordering: CommitOrdering::Fixed,
            throttle: Throttle::Fixed,
            unit_res_roundoff: UnitResRoundoff::X2,
            tail_update: TailUpdate::Fixed,
            force_flush: ForceFlush::Fixed,
            start_record_order: StartRecordOrder::Ordered,
            shadow_round: ShadowRound::R512,
            rsum_cache: RsumCache::On,
            device_bug: DeviceBug::None,
            crash_model: CrashModel::Subset,
            tx_logres: 109_048,
            tx_logcount: 4,
            tx_items: 2,
            tx_chunks: 2,
            tx_reads: 0,
            cil_pushers: 4,
            fsync: true,
            append_size: Size(4096),
            agcount: 0,
            fsync_writers: 0,
            think: Duration(20 * NS_PER_US),
            cpus: 0,
            cpu_model: CpuModel::Writers,
            agi_lock: AgiLock::Off,
            fsync_op: FsyncOp::Tx,
            host_flush: HostFlush::Inflight,
            directory: Directory::Blocks,
            xfsaild: Xfsaild::Upstream,
            ail_push: AilPush::Upstream,
            cil_space: CilSpace::Upstream,
            sata_fua: SataFua::Upstream,
            tx_work: TxWorkAt::Inside,
        }
    }
}

/// A field's text form in `--set` values, scenario files and links.
pub trait Setting: Sized {
    /// Reads `v`; the error names `field`, the value and what is allowed.
    fn parse_setting(field: &str, v: &str) -> Result<Self, String>;
    /// Writes the value so that `parse_setting` reads it back.
    fn setting_text(&self) -> String;
}

impl Setting for u64 {
    fn parse_setting(field: &str, v: &str) -> Result<Self, String> {
        v.trim().parse().map_err(|_| format!("{field}: '{v}' is not a whole number"))
    }
    fn setting_text(&self) -> String {
        self.to_string()
    }
}

impl Setting for u32 {
    fn parse_setting(field: &str, v: &str) -> Result<Self, String> {
        let n = u64::parse_setting(field, v)?;
        u32::try_from(n).map_err(|_| format!("{field}: {v} is too large (at most {})", u32::MAX))
    }
    fn setting_text(&self) -> String {
        self.to_string()
    }
}

impl Setting for bool {
    fn parse_setting(field: &str, v: &str) -> Result<Self, String> {
        match v.trim() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(format!("{field}: '{v}' is not a boolean (use 0 or 1)")),
        }
    }
    fn setting_text(&self) -> String {
        if *self { "1" } else { "0" }.into()
    }
}

impl Setting for Size {
    fn parse_setting(field: &str, v: &str) -> Result<Self, String> {
        parse_size(field, v).map(Size)
    }
    fn setting_text(&self) -> String {
        format_size(self.0)
    }
}

impl Setting for Duration {
    fn parse_setting(field: &str, v: &str) -> Result<Self, String> {
        parse_duration(field, v).map(Duration)
    }
    fn setting_text(&self) -> String {
        format_duration(self.0)
    }
}

fn unknown_key(key: &str) -> String {
    format!("unknown key '{key}' (allowed: {})", SET_KEYS.join(", "))
}

/// The `--set` keys, once: `SET_KEYS` (in the order `loglab` documents them), `set` and `get`.
macro_rules! settings {
    ($($key:ident),+ $(,)?) => {
        /// Every `--set` key, in the order `loglab` documents them.
        pub const SET_KEYS: &[&str] = &[$(stringify!($key)),+];

        impl Scenario {
            /// Applies one `key=value` setting, naming the key in any error.
            pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
                match key {
                    $(stringify!($key) => self.$key = Setting::parse_setting(key, value)?,)+
                    _ => return Err(unknown_key(key)),
                }
                Ok(())
            }

            /// The value of one `--set` key, written so that `set` reads it back.
            pub fn get(&self, key: &str) -> Result<String, String> {
                match key {
                    $(stringify!($key) => Ok(self.$key.setting_text()),)+
                    _ => Err(unknown_key(key)),
                }
            }
        }
    };
}

settings!(
    seed,
    duration,
    writers,
    workload,
    device,
    external_log,
    fs_size,
    log_size,
    iclog_count,
    iclog_size,
    lsu,
    flush,
    commit_ordering,
    throttle,
    unit_res_roundoff,
    tail_update,
    force_flush,
    start_record_order,
    shadow_round,
    rsum_cache,
    device_bug,
    crash_model,
    tx_logres,
    tx_logcount,
    tx_items,
    tx_chunks,
    tx_reads,
    cil_pushers,
    fsync,
    fsync_writers,
    think,
    directory,
    xfsaild,
    ail_push,
    cil_space,
    cpus,
    append_size,
    agcount,
    sata_fua,
    tx_work,
    cpu_model,
    agi_lock,
    fsync_op,
    host_flush,
);

impl Scenario {
    /// The keys (in `SET_KEYS` order) whose values differ from `base`.
    pub fn diff(&self, base: &Scenario) -> Vec<(&'static str, String)> {
        SET_KEYS
            .iter()
            .filter_map(|k| {
                let v = self.get(k).ok()?;
                (base.get(k).ok()? != v).then_some((*k, v))
            })
            .collect()
    }

    /// Whether an operation is an append made durable (`sync-append`'s O_DSYNC appends, or
    /// `fsync-heavy`'s appends with `fsync_op=append`): its file grows, and an fsync writes
    /// the data and converts the extent it landed in. Without fsync it is a plain write.
    pub fn appends(&self) -> bool {
        match self.workload {
            WorkloadKind::SyncAppend => true,
            WorkloadKind::FsyncHeavy => self.fsync_op == FsyncOp::Append,
            _ => false,
        }
    }

    /// Checks each field on its own; `validate` (in `geometry`) then checks them together.
    pub fn check_fields(&self) -> Result<(), String> {
        let range = |field: &str, v: u64, lo: u64, hi: u64| -> Result<(), String> {
            if v < lo || v > hi {
                Err(format!("{field}: {v} is out of range (allowed: {lo} to {hi})"))
            } else {
                Ok(())
            }
        };
        let ic = self.iclog_size.0;
        if !ic.is_power_of_two() || !(16 << 10..=256 << 10).contains(&ic) {
            return Err(format!(
                "iclog_size: {} is not allowed (allowed: a power of two from 16KiB to 256KiB)",
                format_size(ic)
            ));
        }
        range("iclog_count", self.iclog_count as u64, 2, 8)?;
        let lsu = self.lsu.0;
        if lsu > 256 << 10 {
            return Err(format!("lsu: {} is out of range (allowed: 0 to 256KiB)", format_size(lsu)));
        }
        if !lsu.is_multiple_of(BBSIZE as u64) {
            return Err(format!("lsu: {lsu} is not a multiple of 512 bytes"));
        }
        let log = self.log_size.0;
        if !log.is_multiple_of(4096) {
            return Err(format!("log_size: {log} is not a multiple of 4KiB"));
        }
        if self.fs_size.0 < 16 << 20 || self.fs_size.0 > 1 << 50 {
            return Err(format!("fs_size: {} is out of range (allowed: 16MiB to 1PiB)", format_size(self.fs_size.0)));
        }
        range("writers", self.writers as u64, 1, 4096)?;
        range("fsync_writers", self.fsync_writers as u64, 0, 4096)?;
        let d = self.duration.0;
        if d == 0 || d > 3600 * NS_PER_SEC {
            return Err(format!("duration: {} is out of range (allowed: 1ns to 1h)", format_duration(d)));
        }
        range("tx_logres", self.tx_logres as u64, 1024, 4 << 20)?;
        range("tx_logcount", self.tx_logcount as u64, 1, 16)?;
        range("tx_items", self.tx_items as u64, 1, 64)?;
        range("tx_reads", self.tx_reads as u64, 0, 64)?;
        range("tx_chunks", self.tx_chunks as u64, 1, 32)?;
        range("cil_pushers", self.cil_pushers as u64, 1, 8)?;
        range("cpus", self.cpus as u64, 0, 4096)?;
        if self.agcount > 0 {
            let ag = self.fs_size.0 / self.agcount as u64;
            if !(16 << 20..=1 << 40).contains(&ag) {
                return Err(format!(
                    "agcount: {} makes {} allocation groups of {} (allowed: 16MiB to 1TiB each)",
                    self.agcount,
                    self.agcount,
                    format_size(ag)
                ));
            }
        }
        let append = self.append_size.0;
        if !(BBSIZE as u64..=16 << 20).contains(&append) || !append.is_multiple_of(BBSIZE as u64) {
            return Err(format!(
                "append_size: {} is not allowed (allowed: a multiple of 512 bytes from 512 to 16MiB)",
                format_size(append)
            ));
        }
        if self.think.0 > 10 * NS_PER_SEC {
            return Err(format!("think: {} is out of range (allowed: 0 to 10s)", format_duration(self.think.0)));
        }
        Ok(())
    }
}

/// The model's smallest log (`-l size=` lower limit); the largest is `XFS_MAX_LOG_BYTES`.
pub const LOG_BYTES_MIN: u64 = 2 << 20;

#[cfg(test)]
#[allow(clippy::field_reassign_with_default)] // tests change one knob at a time
mod tests {
    use super::*;

    #[test]
    fn bad_geometry_names_field_value_and_range() {
        let mut s = Scenario::default();
        s.iclog_size = Size(48 << 10);
        let e = s.validate().unwrap_err();
        assert!(e.contains("iclog_size") && e.contains("48KiB") && e.contains("16KiB to 256KiB"), "{e}");
        let mut s = Scenario::default();
        s.iclog_count = 9;
        assert!(s.validate().unwrap_err().contains("iclog_count: 9 is out of range (allowed: 2 to 8)"));
        let mut s = Scenario::default();
        s.lsu = Size(512 << 10);
        s.iclog_size = Size(256 << 10);
        assert!(s.validate().unwrap_err().starts_with("lsu: 512KiB"));
        let mut s = Scenario::default();
        s.log_size = Size(1 << 20);
        assert!(s.validate().unwrap_err().starts_with("log_size"));
    }

    #[test]
    fn set_rejects_unknown_keys_and_values() {
        let mut s = Scenario::default();
        assert!(s.set("bogus", "1").unwrap_err().contains("unknown key 'bogus'"));
        assert!(s.set("flush", "sometimes").unwrap_err().contains("legacy, series-v1, v5.14, upstream"));
        s.set("log_size", "32MiB").unwrap();
        assert_eq!(s.log_size, Size(32 << 20));
    }
}
