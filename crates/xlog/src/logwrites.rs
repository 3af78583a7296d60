//! The device write stream in the dm-log-writes format (`drivers/md/dm-log-writes.c`), the
//! log that fstests' generic/482 replays: writes enter the log in completion order once a
//! later flush covers them; FUA writes and flushes enter at completion; marks where set.

use crate::device::{DevIo, IoKind, IoReq};
use std::collections::BTreeMap;

pub const WRITE_LOG_MAGIC: u64 = 0x006A_7366_7773_6872;
pub const WRITE_LOG_VERSION: u64 = 1;
pub const LOG_FLUSH_FLAG: u64 = 1 << 0;
pub const LOG_FUA_FLAG: u64 = 1 << 1;
pub const LOG_DISCARD_FLAG: u64 = 1 << 2;
pub const LOG_MARK_FLAG: u64 = 1 << 3;
pub const LOG_METADATA_FLAG: u64 = 1 << 4;
/// `log_write_super.sectorsize`: one entry header per 512-byte basic block.
pub const SECTORSIZE: u32 = crate::units::BBSIZE;

/// One logged entry: a write (with data), an empty flush, or a mark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub sector: u64,
    pub nr_sectors: u64,
    pub flags: u64,
    pub data: Vec<u8>,
}

fn write_entry(r: &IoReq, meta: bool) -> Entry {
    let (preflush, fua) = match r.kind {
        IoKind::Write { preflush, fua } => (preflush, fua),
        IoKind::Flush => (true, false),
        IoKind::Read => (false, false),
    };
    let mut flags = 0;
    if preflush {
        flags |= LOG_FLUSH_FLAG;
    }
    if fua {
        flags |= LOG_FUA_FLAG;
    }
    if meta && r.bytes > 0 {
        flags |= LOG_METADATA_FLAG;
    }
    Entry { sector: r.sector, nr_sectors: r.bytes / 512, flags, data: r.full_data() }
}

/// Orders a device's request record as dm-log-writes would log it. `meta(tag)` says whether a write
/// carried REQ_META (XFS log and metadata writes do; file data does not).
pub fn entries(record: &[DevIo], meta: impl Fn(u64) -> bool) -> Vec<Entry> {
    let mut unflushed: Vec<Entry> = Vec::new();
    let mut captured: BTreeMap<u64, Vec<Entry>> = BTreeMap::new();
    let mut logged = Vec::new();
    for e in record {
        match e {
            // A flush takes the writes completed before it was issued (log_writes_map).
            DevIo::Submit { id, flush: true } => {
                captured.insert(*id, std::mem::take(&mut unflushed));
            }
            DevIo::Submit { .. } => {}
            DevIo::Complete(r) if r.kind == IoKind::Read => {}
            DevIo::Complete(r) => {
                let entry = write_entry(r, meta(r.tag));
                if entry.flags & LOG_FLUSH_FLAG != 0 {
                    logged.extend(captured.remove(&r.id).unwrap_or_default());
                    logged.push(entry);
                } else if entry.flags & LOG_FUA_FLAG != 0 {
                    logged.push(entry);
                } else {
                    unflushed.push(entry);
                }
            }
            DevIo::Mark(m) => {
                logged.push(Entry { sector: 0, nr_sectors: 0, flags: LOG_MARK_FLAG, data: m.as_bytes().to_vec() })
            }
        }
    }
    logged
}

/// The log device image: super block in sector 0, then each entry's header sector followed
/// by its data (a mark's text in the sector after its header).
pub fn encode(entries: &[Entry]) -> Vec<u8> {
    let ss = SECTORSIZE as usize;
    let mut out = vec![0u8; ss];
    out[0..8].copy_from_slice(&WRITE_LOG_MAGIC.to_le_bytes());
    out[8..16].copy_from_slice(&WRITE_LOG_VERSION.to_le_bytes());
    out[16..24].copy_from_slice(&(entries.len() as u64).to_le_bytes());
    out[24..28].copy_from_slice(&SECTORSIZE.to_le_bytes());
    for e in entries {
        let mut hdr = vec![0u8; ss];
        hdr[0..8].copy_from_slice(&e.sector.to_le_bytes());
        hdr[8..16].copy_from_slice(&e.nr_sectors.to_le_bytes());
        hdr[16..24].copy_from_slice(&e.flags.to_le_bytes());
        let data_len = if e.flags & LOG_MARK_FLAG != 0 { e.data.len() as u64 } else { 0 };
        hdr[24..32].copy_from_slice(&data_len.to_le_bytes());
        out.extend_from_slice(&hdr);
        if !e.data.is_empty() {
            let mut d = e.data.clone();
            d.resize(e.data.len().div_ceil(ss) * ss, 0);
            out.extend_from_slice(&d);
        }
    }
    out
}

/// Reads a log back (what `replay-log` does first); errors name the offset.
pub fn decode(bytes: &[u8]) -> Result<Vec<Entry>, String> {
    let u64_at = |o: usize| -> Result<u64, String> {
        bytes
            .get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| format!("log-writes: truncated at byte {o}"))
    };
    if u64_at(0)? != WRITE_LOG_MAGIC {
        return Err("log-writes: bad magic in the super block".into());
    }
    let n = u64_at(16)?;
    let ss = SECTORSIZE as usize;
    let mut off = ss;
    let mut out = Vec::new();
    for _ in 0..n {
        let (sector, nr, flags, data_len) = (u64_at(off)?, u64_at(off + 8)?, u64_at(off + 16)?, u64_at(off + 24)?);
        off += ss;
        let len = if flags & LOG_MARK_FLAG != 0 { data_len as usize } else { nr as usize * 512 };
        let data = bytes.get(off..off + len).ok_or_else(|| format!("log-writes: entry data truncated at {off}"))?;
        out.push(Entry { sector, nr_sectors: nr, flags, data: data.to_vec() });
        off += len.div_ceil(ss) * ss;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(id: u64, sector: u64, preflush: bool, fua: bool) -> IoReq {
        IoReq {
            id,
            kind: IoKind::Write { preflush, fua },
            sector,
            data: vec![id as u8; 512],
            bytes: 512,
            submit_ns: 0,
            done_ns: 0,
            flush_mark: 0,
            tag: 0,
            flush_window: None,
            crc: None,
        }
    }

    #[test]
    fn writes_wait_for_a_flush_and_fua_goes_at_once() {
        let j = vec![
            DevIo::Submit { id: 1, flush: false },
            DevIo::Complete(w(1, 10, false, false)),
            DevIo::Submit { id: 2, flush: false },
            DevIo::Complete(w(2, 20, false, true)),
            DevIo::Submit { id: 3, flush: true },
            DevIo::Submit { id: 4, flush: false },
            DevIo::Complete(w(4, 40, false, false)),
            DevIo::Complete(w(3, 30, true, true)),
            DevIo::Mark("end".into()),
        ];
        let e = entries(&j, |_| true);
        let order: Vec<u64> = e.iter().map(|x| x.sector).collect();
        // FUA 20 first; flush 3 brings 10 (completed before it was issued) but not 40.
        assert_eq!(order, vec![20, 10, 30, 0]);
        assert_eq!(e[2].flags & (LOG_FLUSH_FLAG | LOG_FUA_FLAG), LOG_FLUSH_FLAG | LOG_FUA_FLAG);
        assert_eq!(e[3].flags, LOG_MARK_FLAG);
        assert_eq!(decode(&encode(&e)).unwrap(), e);
    }
}
