//! A block request as the device sees it: its flags, its data and what it did to the cache.

use crate::format::PendingCrc;
use crate::units::Ns;
use serde::Serialize;

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
pub(super) fn stamp_in_place(data: &mut [u8], bytes: u64, crc: &mut Option<PendingCrc>) {
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
