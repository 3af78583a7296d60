//! The log as recovery reads it (`LogReader`): blocks by number, each block's cycle number
//! and whether a record header starts there, and whole records unpacked (`xlog_unpack_data`).
//! Recovery's passes read the log only through it; `Image` is one, and the crash explorer's
//! log shared by the states of a crash point sits behind it.

use crate::device::SECTOR;
use crate::format::{self, rh, XLOG_CYCLE_DATA_WORDS};
use crate::units::{btobb, Lsn};
use std::rc::Rc;

/// Where recovery reads the log from.
pub(crate) trait LogReader {
    /// The log's length in blocks.
    fn log_bb(&self) -> u32;
    fn log_block(&self, blk: u32) -> [u8; SECTOR];
    /// The cycle number stamped in block `blk`.
    fn cycle(&self, blk: u32) -> u32;
    /// Whether block `blk` starts with the record header magic number.
    fn has_magic(&self, blk: u32) -> bool;
    /// `xlog_find_verify_cycle`'s scan: the first block in [start, start + n) with cycle `stop`.
    fn first_block_of_cycle(&self, start: u32, n: u32, stop: u32) -> Option<u32> {
        (start..start.saturating_add(n)).find(|&b| self.cycle(b) == stop)
    }
    /// The record whose header is at `blk`, unpacked (a shared log parses it once).
    fn record(&self, blk: u32) -> Option<Rc<Rec>> {
        parse_record(self, blk).map(Rc::new)
    }
    /// How many of `records`, from the first, read alike in every state of a crash point.
    fn shared_records(&self, _records: &[Rc<Rec>]) -> usize {
        0
    }
}

/// A parsed record: where it is and its unpacked data.
#[derive(Debug)]
pub(crate) struct Rec {
    pub(crate) blk: u32,
    pub(crate) lsn: Lsn,
    pub(crate) tail: Lsn,
    pub(crate) num_logops: u32,
    pub(crate) data: Vec<u8>,
    pub(crate) total_bb: u32,
    pub(crate) crc_ok: bool,
}

/// Record header at `blk`, if the block holds one.
pub(super) fn is_header<R: LogReader + ?Sized>(img: &R, blk: u32) -> Option<[u8; SECTOR]> {
    img.has_magic(blk).then(|| img.log_block(blk))
}

pub(super) fn heads_of(hdr: &[u8]) -> u32 {
    format::be32(hdr, rh::SIZE).div_ceil(crate::format::XLOG_HEADER_CYCLE_SIZE).max(1)
}

/// The blocks a record with header `hdr` spans, header blocks included (as `parse_record`
/// reads them; one for a header it would reject).
pub(super) fn record_span(hdr: &[u8]) -> u32 {
    match valid_h_len(hdr) {
        Some(h_len) => heads_of(hdr) + btobb(h_len as u64) as u32,
        None => 1,
    }
}

/// The header's h_len, if `parse_record` accepts the header.
fn valid_h_len(hdr: &[u8]) -> Option<u32> {
    let h_len = format::be32(hdr, rh::LEN);
    // xlog_valid_rec_header and the iclog size check: neither may exceed XLOG_MAX_RECORD_BSIZE,
    // and "LR body must have data": a header with h_len 0 (mkfs fills the log with them) is
    // corruption, not a record (found against the 6.18 kernel on a real crash state).
    let bad = h_len == 0
        || h_len as u64 > 256 << 10
        || format::be32(hdr, rh::SIZE) > 256 << 10
        || format::be32(hdr, rh::VERSION) != 2;
    (!bad).then_some(h_len)
}

pub(super) fn parse_record<R: LogReader + ?Sized>(img: &R, blk: u32) -> Option<Rec> {
    let hdr = is_header(img, blk)?;
    let heads = heads_of(&hdr);
    let h_len = valid_h_len(&hdr)?;
    let bbs = btobb(h_len as u64) as usize;
    let total_bb = heads + bbs as u32;
    // The header blocks and the data apart: the data is read once, into the record's buffer.
    let block = |k: u32| img.log_block((blk + k) % img.log_bb());
    let mut raw = Vec::with_capacity(heads as usize * SECTOR);
    for k in 0..heads {
        raw.extend_from_slice(&block(k));
    }
    // Whole blocks, as the kernel's buffer is: an h_len off a block boundary still unpacks.
    let mut data = Vec::with_capacity(bbs * SECTOR);
    for k in heads..total_bb {
        data.extend_from_slice(&block(k));
    }
    let crc = u32::from_le_bytes(raw[rh::CRC..rh::CRC + 4].try_into().expect("4 bytes"));
    // xlog_recover_process, CRC pass: "mkfs always sets old_crc to 0 so we must consider this
    // valid even on v5 supers" (the replay pass would reject it; mkfs's is an unmount record).
    let crc_ok = crc == 0 || format::xlog_cksum_parts(&raw, &data, h_len as usize) == crc;
    // Unpack: restore the words the cycle stamps replaced. A record whose data outgrows its
    // header blocks (a corrupt h_len) reads its saved words on into the data, as one buffer of
    // the whole record would (those bytes are never the ones this loop rewrites).
    let hs = raw.len();
    for i in 0..bbs {
        let (j, k) = (i / XLOG_CYCLE_DATA_WORDS, i % XLOG_CYCLE_DATA_WORDS);
        let slot = if j == 0 { rh::CYCLE_DATA + 4 * k } else { j * SECTOR + 4 + 4 * k };
        let w = if slot < hs { format::be32(&raw, slot) } else { format::be32(&data, slot - hs) };
        data[i * SECTOR..i * SECTOR + 4].copy_from_slice(&w.to_be_bytes());
    }
    data.truncate(h_len as usize);
    Some(Rec {
        blk,
        lsn: Lsn(format::be64(&hdr, rh::LSN)),
        tail: Lsn(format::be64(&hdr, rh::TAIL_LSN)),
        num_logops: format::be32(&hdr, rh::NUM_LOGOPS),
        data,
        total_bb,
        crc_ok,
    })
}

pub(super) fn dist(log_bb: u32, from: u32, to: u32) -> u32 {
    (to + log_bb - from) % log_bb
}
