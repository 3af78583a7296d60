//! A metadata item with its log item (`struct xfs_log_item`, with the buffer's or inode's own
//! state): what it holds and at which version, its pin count, the CIL context it was last
//! inserted into, and its writeback. Its state is private: the commit, the checkpoint's
//! completion and xfsaild change it through the item operations named after the kernel's.

use crate::cil::ItemKind;
use crate::layout::item_daddr;
use crate::units::Lsn;
use serde::Serialize;

/// A metadata item: a 4 KiB buffer or an inode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    id: u32,
    daddr: u64,
    kind: ItemKind,
    /// Version of the last committed change.
    version: u64,
    /// Checkpoints holding this item that have not completed (`iop_pin` count).
    pinned: u32,
    /// Sequence of the CIL context the item was last inserted into.
    cil_seq: u64,
    /// Writeback in flight: (version, LSN) being written.
    flushing: Option<(u64, Lsn)>,
    /// Size of the item's shadow log vector buffer.
    shadow_size: u32,
}

impl Item {
    pub(crate) fn new(id: u32, kind: ItemKind) -> Item {
        Item {
            id,
            daddr: item_daddr(id, kind.is_inode()),
            kind,
            version: 0,
            pinned: 0,
            cil_seq: 0,
            flushing: None,
            shadow_size: 0,
        }
    }

    pub fn id(&self) -> u32 {
        self.id
    }
    /// Where it lives on the data device.
    pub fn daddr(&self) -> u64 {
        self.daddr
    }
    pub fn kind(&self) -> ItemKind {
        self.kind
    }
    /// The version of its last committed change (0: never changed).
    pub fn version(&self) -> u64 {
        self.version
    }
    /// Checkpoints holding it that have not completed.
    pub fn pinned(&self) -> u32 {
        self.pinned
    }
    /// Its writeback in flight: the version and the AIL LSN being written.
    pub fn flushing(&self) -> Option<(u64, Lsn)> {
        self.flushing
    }

    /// A committed change to `kind` inserted into CIL context `seq`
    /// (`xlog_cil_insert_format_items`): its version moves on, the first insert into a
    /// context pins it (`iop_pin`), and its shadow buffer grows to `shadow` if smaller.
    /// Answers the new version and whether the shadow buffer was (re)allocated.
    pub fn xlog_cil_insert_item(&mut self, kind: ItemKind, seq: u64, shadow: u32) -> (u64, bool) {
        self.version += 1;
        self.kind = kind;
        // A pool item becomes an inode or a buffer with its first change, for good.
        self.daddr = item_daddr(self.id, kind.is_inode());
        let grew = shadow > self.shadow_size;
        if grew {
            self.shadow_size = shadow;
        }
        if self.cil_seq != seq {
            self.cil_seq = seq;
            self.pinned += 1;
        }
        (self.version, grew)
    }

    /// `iop_unpin` as its checkpoint completes: answers the pins left.
    pub fn iop_unpin(&mut self) -> u32 {
        self.pinned -= 1;
        self.pinned
    }

    /// `iop_push`: written back at its current version from AIL LSN `lsn`; answers the
    /// version written.
    pub fn iop_push(&mut self, lsn: Lsn) -> u64 {
        self.flushing = Some((self.version, lsn));
        self.version
    }

    /// Its writeback completed (`xfs_buf_ioend`): answers the version and LSN it wrote, if it
    /// was being written.
    pub fn iodone(&mut self) -> Option<(u64, Lsn)> {
        self.flushing.take()
    }
}
