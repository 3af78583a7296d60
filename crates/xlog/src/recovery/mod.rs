//! Log recovery from device bytes alone: find head and tail by cycle numbers, verify CRCs,
//! trim a torn head, replay committed transactions with v5 LSN ordering.
//!
//! Split as the kernel's passes: `reader` (the log as recovery reads it), `head` (head and
//! tail), `pass1` (transactions and cancel records), `pass2` (replay); `image` is the crash
//! image the explorer hands in, `point` what the states of one crash point share.

use crate::device::{SectorMap, SECTOR};
use crate::format;
use crate::units::Lsn;
use std::collections::BTreeMap;
use std::rc::Rc;

mod head;
mod image;
mod pass1;
mod pass2;
mod point;
mod reader;
mod report;

use image::cached_walk;
pub use image::{Fate, Image, Layer, LogPageCache, SharedLog, Survivors};
use pass1::{after_trans_header, count_cancels, log_items, pass1, LogWalk, Trans, Walk};
use pass2::{in_place_meta, is_meta_sector, meta_region_end, replay_committed, versions};
pub(crate) use point::{Entry, InPlace, PointRecovered, PointRecovery};
use reader::{LogReader, Rec};
pub use report::RecoveryReport;

/// The record whose header is at block `blk` of `img`'s log.
pub(crate) fn read_record(img: &Image, blk: u32) -> Option<std::rc::Rc<Rec>> {
    img.record(blk)
}

/// Runs recovery over `img`: returns the report, or an error recovery would stop on.
pub fn recover(img: &Image) -> Result<RecoveryReport, String> {
    let walk = cached_walk(img);
    let walk = walk.as_ref().as_ref().map_err(|e| e.clone())?;
    let mut rep = walk.rep.clone();
    let mut meta = in_place_meta(img);
    let mut cancelled = walk.cancelled.clone();
    replay_committed(&walk.committed, &mut cancelled, &mut meta, &mut rep)?;
    rep.items = versions(meta);
    Ok(rep)
}

/// Recovery of a bare log region: the report, and why replay stopped if the log holds items
/// this model does not replay (a real kernel's log: inodes, EFIs, icreate, …).
#[derive(Clone, Debug)]
pub struct RegionRecovery {
    pub report: RecoveryReport,
    /// Committed transactions found from tail to head.
    pub committed: u32,
    pub not_replayed: Option<String>,
    /// Each committed transaction as the kernel's pass 2 sees it (`xlog_recover_commit_trans`).
    pub transactions: Vec<CommittedTrans>,
}

/// A committed transaction found between tail and head: the ticket id of its op headers, the
/// LSN of the record it starts in (`r_lsn`), and how many log items of each type it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommittedTrans {
    pub tid: u32,
    pub lsn: Lsn,
    /// Item type (`XFS_LI_*`) -> items, or why the regions do not split into items.
    pub items: Result<BTreeMap<u16, u32>, String>,
}

/// The kernel's name of a log item type, as its tracepoints print it.
pub fn log_item_name(t: u16) -> String {
    const NAMES: [&str; 26] = [
        "XFS_LI_EFI",
        "XFS_LI_EFD",
        "XFS_LI_IUNLINK",
        "",
        "",
        "XFS_LI_INODE",
        "XFS_LI_BUF",
        "XFS_LI_DQUOT",
        "XFS_LI_QUOTAOFF",
        "XFS_LI_ICREATE",
        "XFS_LI_RUI",
        "XFS_LI_RUD",
        "XFS_LI_CUI",
        "XFS_LI_CUD",
        "XFS_LI_BUI",
        "XFS_LI_BUD",
        "XFS_LI_ATTRI",
        "XFS_LI_ATTRD",
        "XFS_LI_XMI",
        "XFS_LI_XMD",
        "XFS_LI_EFI_RT",
        "XFS_LI_EFD_RT",
        "XFS_LI_RUI_RT",
        "XFS_LI_RUD_RT",
        "XFS_LI_CUI_RT",
        "XFS_LI_CUD_RT",
    ];
    match t.checked_sub(0x1236).and_then(|i| NAMES.get(i as usize)) {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => format!("{t:#x}"),
    }
}

/// Recovery over a bare log region, as `xfs_logprint` reads one: `log` holds the log's blocks
/// from block 0. There is no data device: what would be replayed is counted, not written.
/// Arbitrary bytes give a report or an error, never a panic (a fuzz target holds it to that).
pub fn recover_log_region(log: &[u8]) -> Result<RegionRecovery, String> {
    if log.len() < 2 * SECTOR || !log.len().is_multiple_of(SECTOR) {
        return Err(format!(
            "a log region is a whole number of 512-byte blocks, at least 2; this one is {} bytes",
            log.len()
        ));
    }
    let log_bb = u32::try_from(log.len() / SECTOR)
        .map_err(|_| format!("a log of {} bytes is larger than XFS allows", log.len()))?;
    let mut map = SectorMap::new();
    for (i, s) in log.chunks_exact(SECTOR).enumerate() {
        if s.iter().any(|&b| b != 0) {
            map.write(i as u64, s);
        }
    }
    let none = SectorMap::new();
    let img =
        Image { devs: vec![Layer::new(&map), Layer::new(&none)], data_dev: 1, log_start: 0, log_bb, shared: None };
    let mut meta = in_place_meta(&img);
    let (mut rep, committed) = match pass1(&img)? {
        Walk::Done(mut report) => {
            report.items = versions(meta);
            return Ok(RegionRecovery { report, committed: 0, not_replayed: None, transactions: Vec::new() });
        }
        Walk::Replay { rep, committed, .. } => (rep, committed),
    };
    let n = committed.len() as u32;
    let transactions =
        committed.iter().map(|t| CommittedTrans { tid: t.tid, lsn: t.r_lsn, items: item_types(t) }).collect();
    let replayed = count_cancels(&committed).and_then(|mut c| {
        let items =
            committed.iter().map(|t| Ok((t.r_lsn, Rc::new(log_items(t)?)))).collect::<Result<Vec<_>, String>>()?;
        replay_committed(&items, &mut c, &mut meta, &mut rep)
    });
    match replayed {
        Ok(()) => Ok(RegionRecovery { report: rep, committed: n, not_replayed: None, transactions }),
        Err(e) => {
            // The log itself is sound (pass 1 walked it); its items are not the model's.
            rep.transactions_replayed = 0;
            rep.replayed.clear();
            rep.writes.clear();
            Ok(RegionRecovery { report: rep, committed: n, not_replayed: Some(e), transactions })
        }
    }
}

/// Splits a transaction's regions into items as `xlog_recover_add_to_trans` does: the first
/// region is the transaction header; each item's first region is a format structure whose
/// type and size (regions, itself included) lead it in the CPU's byte order (little-endian
/// here, as on the x86 kernel whose logs it reads).
fn item_types(t: &Trans) -> Result<BTreeMap<u16, u32>, String> {
    let mut regions = after_trans_header(t, 4)?;
    let mut types = BTreeMap::new();
    while let Some(f) = regions.next() {
        if f.len() < 4 {
            return Err(format!("log item format of {} bytes", f.len()));
        }
        let (ty, size) = (format::le16(f, 0), format::le16(f, 2));
        if size == 0 {
            return Err(format!("log item {} with no regions", log_item_name(ty)));
        }
        for _ in 1..size {
            regions.next().ok_or_else(|| format!("log item {} is missing regions", log_item_name(ty)))?;
        }
        *types.entry(ty).or_insert(0) += 1;
    }
    Ok(types)
}
