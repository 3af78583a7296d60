//! On-disk log format: record headers, op headers, transaction and buffer log formats, CRC32C.
//! Field order and sizes follow `xfs_log_format.h`; headers are big-endian, item formats
//! little-endian (host order on x86, as XFS writes them).

use crate::units::{Lsn, BBSIZE, XLOG_HEADER_MAGIC_NUM};

pub const XLOG_VERSION_2: u32 = 2;
/// `XLOG_HEADER_CYCLE_SIZE`: data bytes one record header sector's cycle words cover.
pub const XLOG_HEADER_CYCLE_SIZE: u32 = 32 << 10;
/// `XLOG_MAX_ICLOGS`: the most iclogs (records) that can be in flight at once.
pub const XLOG_MAX_ICLOGS: u32 = 8;
/// `XLOG_MAX_RECORD_BSIZE`: the largest iclog.
pub const XLOG_MAX_RECORD_BSIZE: u32 = 256 << 10;
/// `XFS_MIN_LOG_BYTES` and `XFS_MAX_LOG_BYTES`.
pub const XFS_MIN_LOG_BYTES: u64 = 10 << 20;
pub const XFS_MAX_LOG_BYTES: u64 = (2 << 30) - XFS_MIN_LOG_BYTES;

/// `sizeof(struct xlog_op_header)`
pub const OP_HDR: u32 = 12;
/// `sizeof(struct xfs_trans_header)`
pub const TRANS_HDR: u32 = 16;
/// `sizeof(struct xfs_log_vec)` and `sizeof(struct xfs_log_iovec)` on 64-bit kernels.
pub const LOG_VEC_SIZE: u32 = 56;
pub const LOG_IOVEC_SIZE: u32 = 16;
/// `sizeof(struct xfs_inode_log_format)` and of the logged inode core (`xfs_log_dinode`, v3).
pub const INODE_FMT: u32 = 56;
pub const INODE_CORE: u32 = 176;
/// Largest inline extent list / attribute fork the workloads grow to, in bytes.
pub const FORK_MAX: u32 = 2048;
/// `XLOG_FMT_LINUX_LE`
pub const XLOG_FMT: u32 = 1;
pub const XLOG_CYCLE_DATA_WORDS: usize = 64;

// Op header flags (`xlog_op_header.oh_flags`).
pub const XLOG_START_TRANS: u8 = 0x01;
pub const XLOG_COMMIT_TRANS: u8 = 0x02;
pub const XLOG_CONTINUE_TRANS: u8 = 0x04;
pub const XLOG_WAS_CONT_TRANS: u8 = 0x08;
pub const XLOG_END_TRANS: u8 = 0x10;
pub const XLOG_UNMOUNT_TRANS: u8 = 0x20;
pub const XFS_TRANSACTION: u8 = 0x69;
pub const XFS_LOG: u8 = 0xaa;

pub const XFS_TRANS_HEADER_MAGIC: u32 = 0x5452_414e;
pub const XFS_TRANS_CHECKPOINT: u32 = 40;
pub const XFS_LI_BUF: u16 = 0x123c;
pub const XFS_LI_INODE: u16 = 0x123b;
/// `blf_flags`: the buffer is being freed; recovery must not replay it (pass 1 counts these).
pub const XFS_BLF_CANCEL: u16 = 1 << 1;
/// `XFS_BLF_CHUNK`: buffers are logged in 128-byte chunks.
pub const XFS_BLF_CHUNK: u32 = 128;
/// Chunks in a 4 KiB buffer.
pub const BUF_CHUNKS: u32 = 32;
/// `offsetof(struct xfs_buf_log_format, blf_data_map)`
pub const BLF_HDR: u32 = 20;

/// Field offsets in `struct xlog_rec_header`.
pub mod rh {
    pub const MAGIC: usize = 0;
    pub const CYCLE: usize = 4;
    pub const VERSION: usize = 8;
    pub const LEN: usize = 12;
    pub const LSN: usize = 16;
    pub const TAIL_LSN: usize = 24;
    pub const CRC: usize = 32;
    pub const PREV_BLOCK: usize = 36;
    pub const NUM_LOGOPS: usize = 40;
    pub const CYCLE_DATA: usize = 44;
    pub const FMT: usize = 300;
    pub const FS_UUID: usize = 304;
    pub const SIZE: usize = 320;
    /// `sizeof(struct xlog_rec_header)` (324 bytes padded to 8).
    pub const SIZEOF: usize = 328;
    /// `sizeof(struct xlog_rec_ext_header)`
    pub const EXT_SIZEOF: usize = 260;
}

pub fn put_be32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_be_bytes());
}
pub fn put_be64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_be_bytes());
}
pub fn be32(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}
pub fn be64(b: &[u8], off: usize) -> u64 {
    u64::from_be_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}
pub fn le16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(b[off..off + 2].try_into().expect("2 bytes"))
}
pub fn le32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}
pub fn le64(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

/// `struct xlog_op_header` (12 bytes, big-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpHeader {
    pub tid: u32,
    pub len: u32,
    pub clientid: u8,
    pub flags: u8,
}

impl OpHeader {
    pub fn write(&self, b: &mut [u8]) {
        put_be32(b, 0, self.tid);
        put_be32(b, 4, self.len);
        b[8] = self.clientid;
        b[9] = self.flags;
        b[10] = 0;
        b[11] = 0;
    }
    pub fn read(b: &[u8]) -> OpHeader {
        OpHeader { tid: be32(b, 0), len: be32(b, 4), clientid: b[8], flags: b[9] }
    }
}

/// `struct xfs_trans_header` (16 bytes, host order).
pub fn trans_header(tid: u32, num_items: u32) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&XFS_TRANS_HEADER_MAGIC.to_le_bytes());
    b[4..8].copy_from_slice(&XFS_TRANS_CHECKPOINT.to_le_bytes());
    b[8..12].copy_from_slice(&tid.to_le_bytes());
    b[12..16].copy_from_slice(&num_items.to_le_bytes());
    b
}

/// `struct xfs_buf_log_format` for a buffer of `len_bb` basic blocks at `blkno`,
/// with `nregions` regions in all (this one included) and the dirty chunk bitmap.
/// An empty bitmap is a stale buffer: `xfs_buf_item_format` logs it with `XFS_BLF_CANCEL`.
pub fn put_buf_log_format(out: &mut Vec<u8>, blkno: u64, len_bb: u16, nregions: u16, map: &[u32]) {
    let flags = if map.iter().all(|&w| w == 0) { XFS_BLF_CANCEL } else { 0 };
    out.extend_from_slice(&XFS_LI_BUF.to_le_bytes());
    out.extend_from_slice(&nregions.to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&len_bb.to_le_bytes());
    out.extend_from_slice(&blkno.to_le_bytes());
    out.extend_from_slice(&(map.len() as u32).to_le_bytes());
    const _: () = assert!(BLF_HDR == 20, "blf_data_map follows blf_map_size");
    for w in map {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// `struct xfs_inode_log_format` (56 bytes, host order) for the inode at `blkno`.
pub fn put_inode_log_format(out: &mut Vec<u8>, blkno: u64, nregions: u16, dsize: u16, asize: u16) {
    let mut b = [0u8; INODE_FMT as usize];
    b[0..2].copy_from_slice(&XFS_LI_INODE.to_le_bytes());
    b[2..4].copy_from_slice(&nregions.to_le_bytes());
    // ilf_fields: XFS_ILOG_CORE (1) | DDATA (2) | ADATA (0x40) as the forks are logged.
    let fields = 1u32 | if dsize > 0 { 2 } else { 0 } | if asize > 0 { 0x40 } else { 0 };
    b[4..8].copy_from_slice(&fields.to_le_bytes());
    b[8..10].copy_from_slice(&asize.to_le_bytes());
    b[10..12].copy_from_slice(&dsize.to_le_bytes());
    b[16..24].copy_from_slice(&blkno.to_le_bytes()); // ilf_ino: the model's inode number
    b[40..48].copy_from_slice(&blkno.to_le_bytes()); // ilf_blkno
    b[48..52].copy_from_slice(&8i32.to_le_bytes()); // ilf_len
    out.extend_from_slice(&b);
}

/// Payload of a logged region or metadata block: the item id and version it carries,
/// then a filler pattern, so recovery can rebuild the item map from bytes alone.
pub fn fill_payload(b: &mut [u8], item: u32, version: u64) {
    let n = b.len();
    let mut head = [0u8; 12];
    head[..4].copy_from_slice(&item.to_be_bytes());
    head[4..].copy_from_slice(&version.to_be_bytes());
    let k = head.len().min(n);
    b[..k].copy_from_slice(&head[..k]);
    // Filler: (item ^ offset) per byte, eight bytes at a time (a byte loop is slow in wasm).
    let splat = u64::from_ne_bytes([item as u8; 8]);
    let mut words = b[k..].chunks_exact_mut(8);
    for (w, chunk) in (0..).zip(&mut words) {
        chunk.copy_from_slice(&(splat ^ FILLER_OFFSETS[w % FILLER_OFFSETS.len()]).to_ne_bytes());
    }
    let rest = words.into_remainder();
    let done = n - k - rest.len();
    for (i, x) in rest.iter_mut().enumerate() {
        *x = (item as u8) ^ ((done + i) as u8);
    }
}

/// Bytes 0..=255 as 32 words: the filler's offsets within its 256-byte period.
const FILLER_OFFSETS: [u64; 32] = {
    let mut w = [0u64; 32];
    let mut i = 0;
    while i < 32 {
        let b = (8 * i) as u8;
        w[i] = u64::from_ne_bytes([b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7]);
        i += 1;
    }
    w
};

pub fn payload_id(b: &[u8]) -> Option<(u32, u64)> {
    (b.len() >= 12).then(|| (be32(b, 0), be64(b, 4)))
}

/// Metadata block in place on the data device: magic, item id, version, LSN of the change.
pub const META_MAGIC: u32 = 0x4c4c_4d44; // "LLMD"
pub fn meta_block(item: u32, version: u64, lsn: Lsn, bytes: usize) -> Vec<u8> {
    let mut b = vec![0u8; bytes];
    put_be32(&mut b, 0, META_MAGIC);
    put_be32(&mut b, 4, item);
    put_be64(&mut b, 8, version);
    put_be64(&mut b, 16, lsn.0);
    b
}
pub fn read_meta(b: &[u8]) -> Option<(u32, u64, Lsn)> {
    (be32(b, 0) == META_MAGIC).then(|| (be32(b, 4), be64(b, 8), Lsn(be64(b, 16))))
}

/// `xlog_cksum`: header (CRC field as zero), extended headers, then `h_len` bytes of data.
/// `rec` is the whole record: `heads` header sectors then the data. CRC32C (Castagnoli),
/// seeded with ~0 and inverted at the end (`crc`: hardware natively).
pub fn xlog_cksum(rec: &[u8], heads: usize, h_len: usize) -> u32 {
    let (hdr, data) = rec.split_at(heads * BBSIZE as usize);
    xlog_cksum_parts(hdr, data, h_len)
}

/// `xlog_cksum` of a record held as its `heads` header blocks and its data apart.
pub fn xlog_cksum_parts(hdr: &[u8], data: &[u8], h_len: usize) -> u32 {
    let mut crc = crate::crc::crc32c(&hdr[..rh::CRC]);
    crc = crate::crc::crc32c_append(crc, &[0u8; 4]);
    crc = crate::crc::crc32c_append(crc, &hdr[rh::CRC + 4..rh::SIZEOF]);
    for o in (BBSIZE as usize..hdr.len()).step_by(BBSIZE as usize) {
        crc = crate::crc::crc32c_append(crc, &hdr[o..o + rh::EXT_SIZEOF]);
    }
    crate::crc::crc32c_append(crc, &data[..h_len])
}

/// A record whose CRC is not written yet (`xlog_cksum`, computed when something first reads
/// the record's header: a run no one recovers from never pays for it). The record spans
/// `sectors` from its header, `heads` of them headers, and its CRC covers `h_len` data bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingCrc {
    pub heads: u32,
    pub h_len: u32,
    pub sectors: u32,
}

impl PendingCrc {
    /// Writes the CRC of `rec` (the whole record as written, CRC field zero) into its header.
    pub fn stamp(self, rec: &mut [u8]) {
        let crc = xlog_cksum(rec, self.heads as usize, self.h_len as usize);
        rec[rh::CRC..rh::CRC + 4].copy_from_slice(&crc.to_le_bytes());
    }
}

/// The cycle number a sector carries: its first word, or the second if the first is the
/// header magic (`xlog_get_cycle`).
pub fn sector_cycle(s: &[u8]) -> u32 {
    let w = be32(s, 0);
    if w == XLOG_HEADER_MAGIC_NUM {
        be32(s, 4)
    } else {
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_known_vector() {
        assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn op_header_round_trips_in_12_bytes() {
        let h = OpHeader {
            tid: 0xdead_beef,
            len: 77,
            clientid: XFS_TRANSACTION,
            flags: XLOG_WAS_CONT_TRANS | XLOG_END_TRANS,
        };
        let mut b = [0u8; 12];
        h.write(&mut b);
        assert_eq!(&b[..4], &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(OpHeader::read(&b), h);
    }

    #[test]
    fn buf_format_is_24_bytes_for_a_4k_buffer() {
        let mut b = vec![7];
        put_buf_log_format(&mut b, 64, 8, 2, &[0x3]);
        assert_eq!(b.len(), 1 + 24);
        assert_eq!(&b[1..5], &[XFS_LI_BUF.to_le_bytes()[0], XFS_LI_BUF.to_le_bytes()[1], 2, 0]);
        assert_eq!(&b[21..25], &3u32.to_le_bytes());
    }

    #[test]
    fn a_payload_is_its_item_and_version_then_item_xor_offset() {
        // The filler is (item ^ offset) per byte after the 12-byte head, whatever the length.
        for n in [0, 5, 12, 13, 20, 21, 128, 267, 300, 4096 + 3] {
            let mut b = vec![0xaau8; n];
            fill_payload(&mut b, 0x1234_56c7, 9);
            for (i, &x) in b.iter().enumerate().skip(12) {
                assert_eq!(x, 0xc7 ^ ((i - 12) as u8), "n {n} byte {i}");
            }
            assert_eq!(payload_id(&b), (n >= 12).then_some((0x1234_56c7, 9)));
        }
    }
}
