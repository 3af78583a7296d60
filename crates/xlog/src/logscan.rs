//! A physical scan of a log region, record by record from block 0, as `xfs_logprint` reads
//! it: used to say how many records and commit records an exported log holds.

use crate::format::{self, rh, XLOG_COMMIT_TRANS, XLOG_CYCLE_DATA_WORDS};
use crate::units::{btobb, Lsn, BBSIZE, XLOG_HEADER_MAGIC_NUM};
use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LogScan {
    pub records: u64,
    pub ops: u64,
    pub commit_records: u64,
    /// The highest record LSN seen.
    pub last_lsn: u64,
}

/// Scans `log` (the whole log region, `log_bb` basic blocks). Block 0 onwards; a block that is
/// not a record header is skipped, a header's record is read whole and skipped past.
pub fn scan(log: &[u8]) -> LogScan {
    let bb = BBSIZE as usize;
    let log_bb = log.len() / bb;
    let mut out = LogScan::default();
    let mut blk = 0;
    while blk < log_bb {
        let h = &log[blk * bb..(blk + 1) * bb];
        if format::be32(h, rh::MAGIC) != XLOG_HEADER_MAGIC_NUM {
            blk += 1;
            continue;
        }
        let h_len = format::be32(h, rh::LEN) as usize;
        let h_size = format::be32(h, rh::SIZE).max(32 * 1024) as usize;
        let heads = h_size.div_ceil(32 * 1024);
        let data_bb = btobb(h_len as u64) as usize;
        let first = blk + heads;
        // Gather the record's data (it may wrap past the physical end) and unpack the cycles.
        let mut data = Vec::with_capacity(data_bb * bb);
        for i in 0..data_bb {
            let b = (first + i) % log_bb;
            data.extend_from_slice(&log[b * bb..(b + 1) * bb]);
        }
        let hdrs: Vec<&[u8]> =
            (0..heads).map(|j| &log[((blk + j) % log_bb) * bb..((blk + j) % log_bb + 1) * bb]).collect();
        for i in 0..data_bb {
            let (j, k) = (i / XLOG_CYCLE_DATA_WORDS, i % XLOG_CYCLE_DATA_WORDS);
            let saved =
                if j == 0 { format::be32(hdrs[0], rh::CYCLE_DATA + 4 * k) } else { format::be32(hdrs[j], 4 + 4 * k) };
            format::put_be32(&mut data, i * bb, saved);
        }
        let nops = format::be32(h, rh::NUM_LOGOPS) as u64;
        let mut off = 0;
        let mut seen = 0;
        while seen < nops && off + 12 <= h_len.min(data.len()) {
            let op = format::OpHeader::read(&data[off..off + 12]);
            if op.flags & XLOG_COMMIT_TRANS != 0 {
                out.commit_records += 1;
            }
            off += 12 + op.len as usize;
            seen += 1;
        }
        out.ops += seen;
        out.records += 1;
        out.last_lsn = out.last_lsn.max(Lsn(format::be64(h, rh::LSN)).0);
        blk += heads + data_bb;
    }
    out
}
