//! Pass 2 (`XLOG_RECOVER_PASS2`): the committed transactions replayed over the in-place
//! metadata in log order, with v5 LSN ordering and cancelled buffers skipped
//! (`xlog_recover_buf_commit_pass2`, `xlog_recover_inode_commit_pass2`).

use super::image::Image;
use super::pass1::LogItem;
use super::report::RecoveryReport;
use crate::format;
use crate::layout::{item_daddr, item_sector, META_START_SECTOR};
use crate::units::Lsn;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Pass 2: replays the committed transactions in log order.
pub(super) fn replay_committed(
    committed: &[(Lsn, Rc<Vec<LogItem>>)],
    cancelled: &mut BTreeMap<u64, u32>,
    meta: &mut BTreeMap<u32, (u64, Lsn)>,
    rep: &mut RecoveryReport,
) -> Result<(), String> {
    for (r_lsn, items) in committed {
        replay(*r_lsn, items, cancelled, meta, rep)?;
        rep.transactions_replayed += 1;
    }
    Ok(())
}

/// Pass 2 of one committed transaction: buffers and inodes whose on-disk LSN is older,
/// unless a later cancel record covers their block (xlog_is_buffer_cancelled).
fn replay(
    r_lsn: Lsn,
    items: &[LogItem],
    cancelled: &mut BTreeMap<u64, u32>,
    meta: &mut BTreeMap<u32, (u64, Lsn)>,
    rep: &mut RecoveryReport,
) -> Result<(), String> {
    for it in items {
        let blkno = it.blkno;
        if it.cancel {
            // xlog_put_buffer_cancelled: buffers after the last cancel record replay again.
            if let Some(n) = cancelled.get_mut(&blkno) {
                *n -= 1;
                if *n == 0 {
                    cancelled.remove(&blkno);
                }
            }
            rep.cancel_records += 1;
            continue;
        }
        if cancelled.contains_key(&blkno) {
            rep.buffers_cancelled += 1;
            continue;
        }
        let is_inode = it.is_inode;
        let (id, v) = it.payload.ok_or("log item without data")?;
        if blkno != item_daddr(id, is_inode) {
            return Err(format!("item at daddr {blkno} carries item {id}"));
        }
        // v5 ordering: buffers at or after this transaction's LSN are not overwritten;
        // inodes only when strictly after (32baa63d82ee: checkpoints may share a start LSN).
        let old = meta.get(&id).map_or(Lsn::ZERO, |&(_, lsn)| lsn);
        if old > r_lsn || (!is_inode && old == r_lsn) {
            rep.regions_skipped_by_lsn += 1;
            continue;
        }
        // A recovered buffer takes its LSN only when it is written out after the pass
        // (xfs_buf_delwri_submit), so a later checkpoint sharing this start LSN still
        // replays over it; inode recovery stamps current_lsn into di_lsn at once.
        meta.insert(id, (v, if is_inode { r_lsn } else { old }));
        rep.replayed.push((r_lsn, id, v));
        rep.writes.insert(blkno, (id, v, r_lsn));
    }
    Ok(())
}

/// In-place metadata as the crash left it: item -> (version, LSN).
pub(super) fn in_place_meta(img: &Image) -> BTreeMap<u32, (u64, Lsn)> {
    let data = img.data();
    let mut meta = BTreeMap::new();
    let meta_to = meta_region_end(img.data_dev, img.log_start);
    let sectors: Vec<u64> =
        data.sectors_in(META_START_SECTOR, meta_to).into_iter().filter(|&s| is_meta_sector(s)).collect();
    for s in sectors {
        if let Some((id, v, lsn)) = data.with_sector(s, format::read_meta) {
            meta.insert(id, (v, lsn));
        }
    }
    meta
}

/// Item versions alone, from (version, LSN) pairs.
pub(super) fn versions(meta: BTreeMap<u32, (u64, Lsn)>) -> BTreeMap<u32, u64> {
    meta.into_iter().map(|(k, (v, _))| (k, v)).collect()
}

/// Where in-place metadata ends on the data device: an internal log follows the metadata on
/// the same device, so it stops where the log starts.
pub(super) fn meta_region_end(data_dev: usize, log_start: u64) -> u64 {
    if data_dev == 0 {
        log_start.max(META_START_SECTOR + 1)
    } else {
        u64::MAX
    }
}

/// A sector where a metadata item starts.
pub(super) fn is_meta_sector(s: u64) -> bool {
    item_sector(s).is_some()
}
