//! Where the model puts things on the data device: metadata item blocks, per-writer pools,
//! the internal log in the middle, file data blocks past it.
//!
//! ```text
//!  sector 0     META_START_SECTOR                      log_start          log end
//!  |  (unused)  | shared AG headers | writer pools ... |======= log =======| file data |
//! ```

use crate::scenario::{Scenario, WorkloadKind};
use crate::units::BBSIZE;

/// First sector of the metadata items on the data device.
pub const META_START_SECTOR: u64 = 128;
/// Sectors per metadata buffer (4 KiB).
pub const META_BB: u64 = 8;
/// Sectors per inode: 512-byte inodes (mkfs.xfs's default for v5 filesystems).
pub const INODE_BB: u64 = 1;
/// Item ids come in groups of one inode cluster (`xfs_iflush_cluster`: 16 KiB of 512-byte
/// inodes): a group's buffers in 4 KiB slots, then its inodes packed one sector each, so an
/// inode cluster written back is one 16 KiB extent, as the kernel writes it.
pub const ITEM_GROUP: u32 = 32;
const GROUP_BB: u64 = ITEM_GROUP as u64 * (META_BB + INODE_BB);
/// Most metadata items a run creates (about 80 bytes of model state each).
pub const MAX_ITEMS: u32 = 4 << 20;
/// Shared AG header buffers (AGF/AGI) every writer may dirty: items 0..SHARED_ITEMS.
pub const SHARED_ITEMS: u32 = 16;
/// File data blocks carry this bit in their item id.
pub const DATA_ID_BASE: u32 = 0x8000_0000;

/// Sector of metadata item `id`: an inode or a buffer (an item is always one or the other).
pub const fn item_daddr(id: u32, inode: bool) -> u64 {
    let base = META_START_SECTOR + (id / ITEM_GROUP) as u64 * GROUP_BB;
    let k = (id % ITEM_GROUP) as u64;
    if inode {
        base + ITEM_GROUP as u64 * META_BB + k * INODE_BB
    } else {
        base + k * META_BB
    }
}

/// Sectors item `id` takes on disk.
pub const fn item_bb(inode: bool) -> u64 {
    if inode {
        INODE_BB
    } else {
        META_BB
    }
}

/// Whether a metadata item starts at sector `s` (a buffer's slot or an inode's sector), and
/// whether it is an inode's.
pub fn item_sector(s: u64) -> Option<bool> {
    let off = s.checked_sub(META_START_SECTOR)? % GROUP_BB;
    let buffers = ITEM_GROUP as u64 * META_BB;
    match off < buffers {
        true => off.is_multiple_of(META_BB).then_some(false),
        false => Some(true),
    }
}

/// The item whose slot starts at sector `s` (`item_daddr`'s inverse).
pub fn item_at(s: u64) -> Option<u32> {
    let rel = s.checked_sub(META_START_SECTOR)?;
    let (group, off) = (rel / GROUP_BB, rel % GROUP_BB);
    let buffers = ITEM_GROUP as u64 * META_BB;
    let k = match off < buffers {
        true => off.is_multiple_of(META_BB).then_some(off / META_BB)?,
        false => off - buffers,
    };
    u32::try_from(group * ITEM_GROUP as u64 + k).ok().filter(|&id| id < DATA_ID_BASE)
}

/// Items whose group ends at or before sector `end`.
pub fn items_below(end: u64) -> u64 {
    end.saturating_sub(META_START_SECTOR) / GROUP_BB * ITEM_GROUP as u64
}

/// First sector of the log on its device: an internal log sits in the middle of the data
/// device, as mkfs places it in the middle AG; an external log starts at 0.
pub fn log_start_sector(s: &Scenario) -> u64 {
    if s.external_log {
        0
    } else {
        (s.fs_size.0 / BBSIZE as u64 / 2) & !7
    }
}

/// Where metadata items must end: the internal log, or the end of an external log's data device.
pub fn meta_area_end(s: &Scenario) -> u64 {
    if s.external_log {
        s.fs_size.0 / BBSIZE as u64
    } else {
        log_start_sector(s)
    }
}

/// Items each writer owns: a hot set for relogging workloads, a small pool for creates
/// (which also allocate fresh inodes); never more than the space below an internal log holds.
pub fn items_per_writer(s: &Scenario) -> u32 {
    let want = match s.workload {
        WorkloadKind::FsmarkCreate | WorkloadKind::DirRemove | WorkloadKind::CreateRemove => 64,
        _ => s.tx_items * 4,
    };
    let capacity = items_below(meta_area_end(s)).saturating_sub(SHARED_ITEMS as u64) / s.writers.max(1) as u64;
    want.min(capacity.min(u32::MAX as u64) as u32)
}

/// Appends an appender's file (`sync-append`, `fsync_op=append`) holds before it wraps: each
/// writer's file is a ring of them (a rotating trace log), so appends land next to the
/// previous one on the device.
pub const FILE_SLOTS: u64 = 16;

/// Data slots in writer `w`'s file: `FILE_SLOTS` for appenders, one block rewritten otherwise.
pub fn file_slots(s: &Scenario) -> u64 {
    if s.appends() {
        FILE_SLOTS
    } else {
        1
    }
}

/// Where writer `w`'s data for its `version`th fsync lives: in its file, past the internal
/// log (rounded to a block), or past the `nitems` metadata items on an external log's data
/// device. Files sit side by side, each `file_slots` appends long.
pub fn data_daddr(s: &Scenario, log_bb: u32, nitems: u64, w: u32, version: u64) -> u64 {
    let base = if s.external_log {
        META_START_SECTOR + nitems.div_ceil(ITEM_GROUP as u64) * GROUP_BB
    } else {
        (log_start_sector(s) + log_bb as u64).div_ceil(META_BB) * META_BB
    };
    let append_bb = s.append_size.0 / BBSIZE as u64;
    base + w as u64 * file_bb(s) + version.saturating_sub(1) % file_slots(s) * append_bb
}

/// Sectors one writer's file takes, rounded to a block.
fn file_bb(s: &Scenario) -> u64 {
    (file_slots(s) * s.append_size.0 / BBSIZE as u64).div_ceil(META_BB) * META_BB
}

/// Sectors past the data area's start that the writers' files need.
pub fn data_area_bb(s: &Scenario) -> u64 {
    s.writers as u64 * file_bb(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_log_sits_mid_device_and_data_blocks_follow_it() {
        let s = Scenario::default();
        let start = log_start_sector(&s);
        assert_eq!(start, (220u64 << 30) / 512 / 2);
        let log_bb = (s.log_size.0 / 512) as u32;
        assert_eq!(data_daddr(&s, log_bb, 0, 0, 1), start + log_bb as u64);
        assert_eq!(data_daddr(&s, log_bb, 0, 3, 1) - data_daddr(&s, log_bb, 0, 2, 1), META_BB);
        assert_eq!(data_daddr(&s, log_bb, 0, 3, 9), data_daddr(&s, log_bb, 0, 3, 1), "a block rewritten");
        let a = Scenario { workload: WorkloadKind::SyncAppend, append_size: crate::scenario::Size(128 << 10), ..s };
        let next = data_daddr(&a, log_bb, 0, 0, 2) - data_daddr(&a, log_bb, 0, 0, 1);
        assert_eq!(next, 256, "the next append follows the last");
        assert_eq!(data_daddr(&a, log_bb, 0, 0, 17), data_daddr(&a, log_bb, 0, 0, 1), "the file wraps");
        assert_eq!(data_daddr(&a, log_bb, 0, 1, 1) - data_daddr(&a, log_bb, 0, 0, 1), 16 * 256);
        assert_eq!(item_daddr(2, false), META_START_SECTOR + 16);
        // A group's 32 inodes follow its 32 buffer slots, one sector each.
        assert_eq!(item_daddr(2, true), META_START_SECTOR + 256 + 2);
        assert_eq!(item_daddr(33, false), META_START_SECTOR + 288 + 8);
        for id in [0, 2, 31, 32, 33, 1000] {
            assert_eq!(item_sector(item_daddr(id, true)), Some(true));
            assert_eq!(item_sector(item_daddr(id, false)), Some(false));
            assert_eq!(item_sector(item_daddr(id, false) + 1), None, "inside a buffer");
            assert_eq!(item_at(item_daddr(id, true)), Some(id));
            assert_eq!(item_at(item_daddr(id, false)), Some(id));
            assert_eq!(item_at(item_daddr(id, false) + 1), None);
        }
        assert_eq!(item_at(META_START_SECTOR - 1), None);
    }

    #[test]
    fn pools_shrink_to_fit_the_space_below_the_log() {
        let mut s = Scenario { fs_size: crate::scenario::Size(16 << 20), writers: 1000, ..Scenario::default() };
        // 8 MiB below the log: (16384 - 128) / 288 = 56 groups of 32 items, less the 16
        // shared ones: 1776 items for 1000 writers.
        assert_eq!(items_per_writer(&s), 1);
        s.writers = 1;
        assert_eq!(items_per_writer(&s), s.tx_items * 4);
    }
}
