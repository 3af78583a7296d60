//! md raid0: which member disk holds a sector. (md's one flush at a time is `blk_flush.rs`'s
//! `md_flush` rule.)

use super::Device;

/// md's default chunk (mdadm 3.1 and later: 512 KiB), in sectors.
pub(super) const MD_CHUNK_SECTORS: u64 = 1024;

impl Device {
    /// The disk of an array (md raid0, `MD_CHUNK_SECTORS` chunks) that holds `sector`; 0 on a
    /// single disk.
    pub fn disk_of(&self, sector: u64) -> usize {
        (sector / MD_CHUNK_SECTORS % self.profile.members()) as usize
    }
}
