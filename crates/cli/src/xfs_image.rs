//! A real XFS image's superblock: where its internal log is (`export-image`, `recover`).

use std::io::{Read, Seek, SeekFrom};

/// The superblock fields that place the log (`struct xfs_dsb`, big-endian).
#[derive(Debug)]
pub struct Sb {
    pub blocksize: u64,
    pub uuid: [u8; 16],
    pub logstart: u64,
    pub agblocks: u64,
    pub logblocks: u64,
    pub agblklog: u32,
    pub logsectsize: u64,
    pub logsunit: u64,
}

fn be32(b: &[u8], o: usize) -> u64 {
    u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]) as u64
}

/// Reads and checks the primary superblock at byte 0.
pub fn read_sb(f: &mut (impl Read + Seek)) -> Result<Sb, String> {
    let mut b = [0u8; 512];
    f.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    f.read_exact(&mut b).map_err(|_| "not an XFS image (shorter than one superblock)".to_string())?;
    if &b[0..4] != b"XFSB" {
        return Err("not an XFS image (no XFSB superblock magic at byte 0)".into());
    }
    let mut uuid = [0u8; 16];
    uuid.copy_from_slice(&b[32..48]);
    let sb = Sb {
        blocksize: be32(&b, 4),
        uuid,
        logstart: u64::from_be_bytes(b[48..56].try_into().expect("8 bytes")),
        agblocks: be32(&b, 84),
        logblocks: be32(&b, 96),
        agblklog: b[124] as u32,
        logsectsize: u16::from_be_bytes([b[194], b[195]]) as u64,
        logsunit: be32(&b, 196),
    };
    // The checks xfs_validate_sb_common makes on the fields used here.
    if !(512..=65536).contains(&sb.blocksize) || !sb.blocksize.is_power_of_two() {
        return Err(format!("superblock: block size {} is not a power of two in 512..=65536", sb.blocksize));
    }
    if sb.agblklog == 0 || sb.agblklog > 31 || sb.agblocks == 0 || sb.agblocks > 1 << sb.agblklog {
        return Err(format!("superblock: {} blocks per AG does not fit agblklog {}", sb.agblocks, sb.agblklog));
    }
    if sb.logblocks < 2 {
        return Err(format!("superblock: a log of {} blocks is too small", sb.logblocks));
    }
    Ok(sb)
}

impl Sb {
    /// Byte offset of the internal log: `XFS_FSB_TO_DADDR` of `sb_logstart`, in bytes.
    pub fn log_offset(&self) -> u64 {
        let agno = self.logstart >> self.agblklog;
        let agbno = self.logstart & ((1u64 << self.agblklog) - 1);
        (agno * self.agblocks + agbno) * self.blocksize
    }

    pub fn log_bytes(&self) -> u64 {
        self.logblocks * self.blocksize
    }
}
