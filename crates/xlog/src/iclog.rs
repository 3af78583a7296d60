//! In-core log buffers: the iclog states, flags and what `xlog_sync` puts on disk.

use crate::format::{self, rh, XLOG_CYCLE_DATA_WORDS, XLOG_FMT, XLOG_VERSION_2};
use crate::geometry::Geometry;
use crate::units::{btobb, next_cycle, Lsn, BBSIZE, XLOG_HEADER_MAGIC_NUM};
use serde::Serialize;

/// `enum xlog_iclog_state` (5.15).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum IclogState {
    Active,
    WantSync,
    Syncing,
    DoneSync,
    Callback,
    Dirty,
}

impl IclogState {
    /// `XLOG_STATE_STRINGS`
    pub fn kernel_name(self) -> &'static str {
        match self {
            IclogState::Active => "XLOG_STATE_ACTIVE",
            IclogState::WantSync => "XLOG_STATE_WANT_SYNC",
            IclogState::Syncing => "XLOG_STATE_SYNCING",
            IclogState::DoneSync => "XLOG_STATE_DONE_SYNC",
            IclogState::Callback => "XLOG_STATE_CALLBACK",
            IclogState::Dirty => "XLOG_STATE_DIRTY",
        }
    }

    /// The transitions of facts sheet §1.2; anything else is a model bug.
    pub fn may_become(self, next: IclogState) -> bool {
        use IclogState::*;
        matches!(
            (self, next),
            (Active, WantSync)
                | (WantSync, Syncing)
                | (Syncing, DoneSync)
                | (DoneSync, Callback)
                | (Callback, Dirty)
                | (Dirty, Active)
        )
    }
}

pub const XLOG_ICL_NEED_FLUSH: u32 = 1 << 0;
pub const XLOG_ICL_NEED_FUA: u32 = 1 << 1;

/// `XLOG_ICL_STRINGS` rendering of `ic_flags`.
pub fn icl_flags_str(flags: u32) -> String {
    let mut v = Vec::new();
    if flags & XLOG_ICL_NEED_FLUSH != 0 {
        v.push("XLOG_ICL_NEED_FLUSH");
    }
    if flags & XLOG_ICL_NEED_FUA != 0 {
        v.push("XLOG_ICL_NEED_FUA");
    }
    v.join("|")
}

/// `xlog_calc_iclog_size`: (count, roundoff) for an iclog with `offset` bytes of data.
pub fn xlog_calc_iclog_size(geo: &Geometry, offset: u32) -> (u32, u32) {
    let count_init = geo.iclog_hsize + offset;
    let count = count_init.div_ceil(geo.roundoff) * geo.roundoff;
    (count, count - count_init)
}

/// What `xlog_sync` writes: the record as bytes, ready for the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub bytes: Vec<u8>,
    /// `BLOCK_LSN(h_lsn)`: first block in the log.
    pub bno: u32,
    pub roundoff: u32,
    /// Blocks that fit before the physical end of the log; the rest wrap to block 0.
    pub split_bb: Option<u32>,
    /// The CRC still to stamp into `bytes` (its field is zero until then); a split record's
    /// is stamped at once, as its two writes go their own ways.
    pub crc: Option<format::PendingCrc>,
}

/// What `xlog_sync` packs of an iclog: its record header's fields and the data written
/// (`ic_offset` bytes).
pub struct IclogHeader<'a> {
    pub cycle: u32,
    pub lsn: Lsn,
    pub tail_lsn: Lsn,
    pub prev_block: u32,
    pub num_logops: u32,
    pub data: &'a [u8],
}

/// Builds the on-disk record for an iclog: header, extended headers, cycle-stamped data,
/// split handling at the log end, CRC32C (`xlog_sync` steps 1, 3, 4, 6–8).
pub fn xlog_pack_record(geo: &Geometry, ic: &IclogHeader, uuid: &[u8; 16]) -> Record {
    let offset = ic.data.len() as u32;
    let (count, roundoff) = xlog_calc_iclog_size(geo, offset);
    let heads = geo.iclog_heads as usize;
    let hsize = geo.iclog_hsize as usize;
    // Header space, the data, then zeros to the roundoff: the data is not zeroed first.
    let mut b = Vec::with_capacity(count as usize);
    b.resize(hsize, 0);
    b.extend_from_slice(ic.data);
    b.resize(count as usize, 0);
    let h_len = offset + roundoff;
    // xlog_pack_data: stamp the cycle into each data block, saving the word it replaces.
    for i in 0..btobb(h_len as u64) as usize {
        let o = hsize + i * BBSIZE as usize;
        let saved = format::be32(&b, o);
        format::put_be32(&mut b, o, ic.cycle);
        let (j, k) = (i / XLOG_CYCLE_DATA_WORDS, i % XLOG_CYCLE_DATA_WORDS);
        let slot = if j == 0 { rh::CYCLE_DATA + 4 * k } else { j * BBSIZE as usize + 4 + 4 * k };
        format::put_be32(&mut b, slot, saved);
    }
    for j in 1..heads {
        format::put_be32(&mut b, j * BBSIZE as usize, ic.cycle);
    }
    format::put_be32(&mut b, rh::MAGIC, XLOG_HEADER_MAGIC_NUM);
    format::put_be32(&mut b, rh::CYCLE, ic.cycle);
    format::put_be32(&mut b, rh::VERSION, XLOG_VERSION_2);
    format::put_be32(&mut b, rh::LEN, h_len);
    format::put_be64(&mut b, rh::LSN, ic.lsn.0);
    format::put_be64(&mut b, rh::TAIL_LSN, ic.tail_lsn.0);
    format::put_be32(&mut b, rh::PREV_BLOCK, ic.prev_block);
    format::put_be32(&mut b, rh::NUM_LOGOPS, ic.num_logops);
    format::put_be32(&mut b, rh::FMT, XLOG_FMT);
    b[rh::FS_UUID..rh::FS_UUID + 16].copy_from_slice(uuid);
    format::put_be32(&mut b, rh::SIZE, geo.iclog_size);
    // xlog_split_iclog: blocks past the physical end carry the next cycle.
    let bno = ic.lsn.block();
    let split_bb = if bno + count / BBSIZE > geo.log_bb {
        let split = geo.log_bb - bno;
        for blk in split as usize..(count / BBSIZE) as usize {
            let o = blk * BBSIZE as usize;
            let c = format::be32(&b, o);
            format::put_be32(&mut b, o, next_cycle(c));
        }
        Some(split)
    } else {
        None
    };
    let crc = format::PendingCrc { heads: heads as u32, h_len, sectors: count / BBSIZE };
    if split_bb.is_some() {
        crc.stamp(&mut b);
    }
    Record { bytes: b, bno, roundoff, crc: split_bb.is_none().then_some(crc), split_bb }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Scenario, Size};

    #[test]
    fn iclog_size_rounds_to_roundoff() {
        let mut s = Scenario::default();
        let g = s.validate().unwrap();
        assert_eq!(xlog_calc_iclog_size(&g, 100), (1024, 412));
        s.lsu = Size(32 << 10);
        let g = s.validate().unwrap();
        assert_eq!(xlog_calc_iclog_size(&g, 100), (32 << 10, (32 << 10) - 612));
    }

    #[test]
    fn only_kernel_transitions_are_legal() {
        use IclogState::*;
        assert!(Active.may_become(WantSync));
        assert!(Dirty.may_become(Active));
        assert!(!Active.may_become(Syncing));
        assert!(!DoneSync.may_become(Dirty));
    }
}
