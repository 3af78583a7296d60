//! Sparse sector storage in 4 KiB pages: only written pages cost memory, and a clone shares
//! its pages until one side writes to them (copy on write), so keeping snapshots of a run
//! (the lab's time travel) costs a page table, not a copy of the disk. A page keeps its bytes
//! only up to its last sector that is not all zeros: a metadata block (a header, then zeros)
//! costs one sector, not eight.

use crate::format::PendingCrc;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `BBSIZE` as an index type: the unit every device offset is counted in.
pub const SECTOR: usize = crate::units::BBSIZE as usize;
pub const PER_PAGE: u64 = 8;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Page {
    /// The page's first sectors (whole sectors); those past its end are zeros.
    data: Arc<Vec<u8>>,
    /// Bit i: sector i of the page has been written.
    present: u8,
}

const PAGE: usize = SECTOR * PER_PAGE as usize;
/// The most sectors a log record spans (256 KiB of data and its headers), for finding the
/// records a write lands in.
const MAX_RECORD_SECTORS: u64 = 1024;
static ZERO_SECTOR: [u8; SECTOR] = [0; SECTOR];

/// `bytes` without its trailing all-zero sectors.
fn trimmed(bytes: &[u8]) -> Vec<u8> {
    // A whole sector OR-folded eight bytes at a time: no branch per word, so it vectorizes
    // natively and stays cheap in wasm (a byte compare was slow there).
    let nonzero =
        |s: &[u8]| s.chunks_exact(8).fold(0, |a, w| a | u64::from_ne_bytes(w.try_into().expect("8 bytes"))) != 0;
    let keep = bytes.chunks(SECTOR).rposition(nonzero).map_or(0, |i| i + 1);
    bytes[..keep * SECTOR].to_vec()
}

/// Sectors by number; unwritten sectors read as absent (zeros to the reader).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SectorMap {
    pages: BTreeMap<u64, Page>,
    /// Log records written here whose CRC is not stamped yet, by header sector: their bytes
    /// are all still here (a write over any of them stamps it first, or drops it with the
    /// header). `settle` stamps them all.
    crcs: BTreeMap<u64, PendingCrc>,
}

impl SectorMap {
    pub fn new() -> SectorMap {
        SectorMap::default()
    }

    /// Writes whole sectors starting at `sector` (`data` a multiple of 512 bytes).
    pub fn write(&mut self, sector: u64, data: &[u8]) {
        self.settle_overlapping(sector, sector + data.len().div_ceil(SECTOR) as u64);
        self.put(sector, data);
    }

    /// Writes a log record (`bytes` from `data`, then zeros) whose CRC is `crc`'s to stamp
    /// when something reads it (`None`: stamped already).
    pub fn write_record(&mut self, sector: u64, data: &[u8], bytes: u64, crc: Option<PendingCrc>) {
        self.write_zero_filled(sector, data, bytes);
        if let Some(c) = crc {
            self.crcs.insert(sector, c);
        }
    }

    /// Log records with a CRC still to stamp.
    pub fn crcs_pending(&self) -> usize {
        self.crcs.len()
    }

    /// Stamps every pending CRC: what recovery reads must carry them.
    pub fn settle(&mut self) {
        while let Some((&h, &c)) = self.crcs.first_key_value() {
            self.settle_one(h, c);
        }
    }

    /// Before a write over `[from, to)`: a record it overwrites in part gets its CRC from the
    /// bytes it still has; one whose header it overwrites is gone, and needs none.
    fn settle_overlapping(&mut self, from: u64, to: u64) {
        if self.crcs.is_empty() {
            return;
        }
        let hit: Vec<(u64, PendingCrc)> = self
            .crcs
            .range(from.saturating_sub(MAX_RECORD_SECTORS)..to)
            .filter(|&(&h, c)| h + c.sectors as u64 > from)
            .map(|(&h, &c)| (h, c))
            .collect();
        for (h, c) in hit {
            match h >= from {
                true => {
                    self.crcs.remove(&h);
                }
                false => self.settle_one(h, c),
            }
        }
    }

    fn settle_one(&mut self, header: u64, c: PendingCrc) {
        self.crcs.remove(&header);
        let mut rec = Vec::with_capacity(c.sectors as usize * SECTOR);
        for k in 0..c.sectors as u64 {
            rec.extend_from_slice(self.get(header + k).unwrap_or(&ZERO_SECTOR));
        }
        c.stamp(&mut rec);
        self.put(header, &rec[..SECTOR]);
    }

    fn put(&mut self, sector: u64, data: &[u8]) {
        let (mut s, mut rest) = (sector, data);
        // One page lookup (and at most one copy on write) per page touched, not per sector.
        while !rest.is_empty() {
            let first = (s % PER_PAGE) as usize;
            let n = (PER_PAGE as usize - first).min(rest.len().div_ceil(SECTOR));
            let (chunk, tail) = rest.split_at((n * SECTOR).min(rest.len()));
            if chunk.len() == PAGE {
                // A whole page: a new page from the bytes, not copied from a page a snapshot
                // shares.
                self.pages.insert(s / PER_PAGE, Page { data: Arc::new(trimmed(chunk)), present: u8::MAX });
                s += n as u64;
                rest = tail;
                continue;
            }
            let page = self.pages.entry(s / PER_PAGE).or_insert_with(|| Page { data: Arc::default(), present: 0 });
            let (from, to) = (first * SECTOR, first * SECTOR + n * SECTOR);
            let data = Arc::make_mut(&mut page.data);
            if data.len() < to {
                data.resize(to, 0);
            }
            data[from..from + chunk.len()].copy_from_slice(chunk);
            page.present |= (((1u16 << n) - 1) << first) as u8;
            s += n as u64;
            rest = tail;
        }
    }

    /// Writes `bytes` at `sector`: `data`, then zeros.
    pub fn write_zero_filled(&mut self, sector: u64, data: &[u8], bytes: u64) {
        self.settle_overlapping(sector, sector + bytes / SECTOR as u64);
        self.put(sector, data);
        let written = data.len() as u64 / SECTOR as u64;
        self.put_zeros(sector + written, bytes / SECTOR as u64 - written);
    }

    /// Writes `n` sectors of zeros at `sector`: whole pages become empty pages, no buffers.
    pub fn write_zeros(&mut self, sector: u64, n: u64) {
        self.settle_overlapping(sector, sector + n);
        self.put_zeros(sector, n);
    }

    fn put_zeros(&mut self, sector: u64, n: u64) {
        let (mut s, end) = (sector, sector + n);
        while s < end {
            let first = s % PER_PAGE;
            let k = (PER_PAGE - first).min(end - s);
            if k == PER_PAGE {
                self.pages.insert(s / PER_PAGE, Page { data: Arc::default(), present: u8::MAX });
            } else {
                let page = self.pages.entry(s / PER_PAGE).or_insert_with(|| Page { data: Arc::default(), present: 0 });
                let (from, to) = (first as usize * SECTOR, (first + k) as usize * SECTOR);
                if page.data.len() > from {
                    let data = Arc::make_mut(&mut page.data);
                    let to = to.min(data.len());
                    data[from..to].fill(0);
                }
                page.present |= (((1u16 << k) - 1) << first) as u8;
            }
            s += k;
        }
    }

    pub fn get(&self, sector: u64) -> Option<&[u8; SECTOR]> {
        let page = self.pages.get(&(sector / PER_PAGE))?;
        let i = sector % PER_PAGE;
        if page.present >> i & 1 == 0 {
            return None;
        }
        let off = i as usize * SECTOR;
        Some(page.data.get(off..off + SECTOR).map_or(&ZERO_SECTOR, |s| s.try_into().expect("one sector")))
    }

    pub fn contains(&self, sector: u64) -> bool {
        self.get(sector).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Written sectors in `[from, to)`, in order.
    pub fn sectors_in(&self, from: u64, to: u64) -> impl Iterator<Item = u64> + '_ {
        self.pages.range(from / PER_PAGE..to.div_ceil(PER_PAGE)).flat_map(move |(&p, page)| {
            (0..PER_PAGE)
                .filter(move |i| page.present >> i & 1 == 1)
                .map(move |i| p * PER_PAGE + i)
                .filter(move |&s| s >= from && s < to)
        })
    }

    /// Pages held.
    pub fn pages(&self) -> usize {
        self.pages.len()
    }

    /// The written pages over sectors `[from, to)`: (page number, its buffer, which of its
    /// `PER_PAGE` sectors are written). A buffer past its end reads as zeros. Clones share a
    /// buffer until one side writes, so an unchanged buffer is an unchanged page.
    pub fn page_buffers_in(&self, from: u64, to: u64) -> impl Iterator<Item = (u64, &Arc<Vec<u8>>, u8)> + '_ {
        self.pages.range(from / PER_PAGE..to.div_ceil(PER_PAGE)).map(|(&p, page)| (p, &page.data, page.present))
    }

    /// Each page's buffer address and size: clones share a buffer until one side writes, so
    /// the distinct addresses over many snapshots are the page memory they hold together.
    pub fn page_buffers(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.pages.values().map(|p| (Arc::as_ptr(&p.data) as usize, p.data.len()))
    }

    /// Every written sector with its bytes, in order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &[u8; SECTOR])> + '_ {
        self.sectors_in(0, u64::MAX).map(move |s| (s, self.get(s).expect("present")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_filled_write_equals_writing_its_zeros() {
        let mut old = SectorMap::new();
        old.write(3, &vec![7u8; 30 * SECTOR]);
        let (mut a, mut b) = (old.clone(), old);
        let mut head = vec![9u8; SECTOR];
        head[0] = 1;
        let mut full = head.clone();
        full.resize(20 * SECTOR, 0);
        a.write(5, &full);
        b.write_zero_filled(5, &head, 20 * SECTOR as u64);
        for s in 0..40 {
            assert_eq!(a.get(s), b.get(s), "sector {s}");
        }
        assert_eq!(b.get(6), Some(&ZERO_SECTOR), "old data overwritten by zeros");
        assert_eq!(b.get(24).map(|d| d[0]), Some(0));
        assert_eq!(b.get(25).map(|d| d[0]), Some(7), "past the write: untouched");
        assert!(b.get(40).is_none());
    }

    #[test]
    fn sparse_pages_track_written_sectors_only() {
        let mut m = SectorMap::new();
        m.write(7, &[1u8; 1024]); // sectors 7 and 8 straddle two pages
        assert!(m.contains(7) && m.contains(8) && !m.contains(6) && !m.contains(9));
        assert_eq!(m.get(8).unwrap()[0], 1);
        assert_eq!(m.sectors_in(0, 100).collect::<Vec<_>>(), vec![7, 8]);
        assert_eq!(m.sectors_in(8, 9).collect::<Vec<_>>(), vec![8]);
        assert_eq!(m.iter().count(), 2);
    }

    #[test]
    fn a_clone_shares_pages_until_either_side_writes() {
        let mut a = SectorMap::new();
        a.write(10, &[1u8; 512]);
        let mut b = a.clone();
        b.write(10, &[2u8; 512]);
        b.write(11, &[3u8; 512]);
        assert_eq!(a.get(10).unwrap()[0], 1, "the original keeps its bytes");
        assert!(a.get(11).is_none());
        assert_eq!((b.get(10).unwrap()[0], b.get(11).unwrap()[0]), (2, 3));
        // Page 1 (sector 10) is now two buffers; page 1 was never shared with anything else.
        let c = a.clone();
        let distinct: std::collections::BTreeSet<(usize, usize)> =
            a.page_buffers().chain(b.page_buffers()).chain(c.page_buffers()).collect();
        assert_eq!((a.pages(), b.pages(), distinct.len()), (1, 1, 2));
    }

    #[test]
    fn trailing_zero_sectors_cost_nothing_and_read_as_written() {
        let mut m = SectorMap::new();
        let mut block = vec![0u8; 4096];
        block[3] = 7; // a metadata block: a header, then zeros
        m.write(8, &block);
        assert_eq!(m.page_buffers().map(|(_, n)| n).collect::<Vec<_>>(), vec![512]);
        assert_eq!((m.get(8).unwrap()[3], m.get(15).unwrap()[511]), (7, 0));
        assert_eq!(m.sectors_in(0, 100).count(), 8, "every sector was written");
        m.write(13, &[9u8; 512]); // past the kept bytes: the page grows
        assert_eq!((m.get(13).unwrap()[0], m.get(12).unwrap()[0], m.get(14).unwrap()[0]), (9, 0, 0));
        m.write(0, &[0u8; 4096]);
        assert_eq!(m.get(0).map(|s| s[0]), Some(0), "an all-zero page is written, and empty");
    }

    /// A record of `sectors` with a header carrying magic and a zero CRC field, then data.
    fn record(sectors: u32, fill: u8) -> (Vec<u8>, PendingCrc) {
        let mut r = vec![fill; sectors as usize * SECTOR];
        r[..SECTOR].fill(0);
        r[0] = 0xfe;
        let c = PendingCrc { heads: 1, h_len: (sectors - 1) * SECTOR as u32, sectors };
        (r, c)
    }

    fn stamped(mut r: Vec<u8>, c: PendingCrc) -> Vec<u8> {
        c.stamp(&mut r);
        r
    }

    #[test]
    fn a_pending_crc_is_the_written_records_whatever_overwrites_it_later() {
        let (rec, c) = record(6, 7);
        let want = stamped(rec.clone(), c);
        assert_ne!(&want[crate::format::rh::CRC..crate::format::rh::CRC + 4], &[0; 4]);
        // Settled as written.
        let mut m = SectorMap::new();
        m.write_record(10, &rec, rec.len() as u64, Some(c));
        assert_eq!((m.crcs_pending(), &m.get(10).unwrap()[..]), (1, &rec[..SECTOR]), "not stamped yet");
        let mut a = m.clone();
        a.settle();
        assert_eq!((a.crcs_pending(), &a.get(10).unwrap()[..]), (0, &want[..SECTOR]));
        // A later write over its data (not its header) stamps it from the bytes it had.
        let mut b = m.clone();
        b.write(13, &[9u8; 2 * SECTOR]);
        assert_eq!((b.crcs_pending(), &b.get(10).unwrap()[..]), (0, &want[..SECTOR]));
        b.write_zeros(11, 1);
        assert_eq!(&b.get(10).unwrap()[..], &want[..SECTOR], "stamped once");
        // A write over its header leaves no record there: nothing to stamp.
        let mut d = m.clone();
        d.write(9, &[5u8; 2 * SECTOR]);
        assert_eq!((d.crcs_pending(), d.get(10).unwrap()[0]), (0, 5));
        // The original is untouched by its clones' writes.
        assert_eq!((m.crcs_pending(), m.get(13).unwrap()[0]), (1, 7));
    }

    #[test]
    fn a_whole_page_write_replaces_a_shared_page_and_leaves_the_clone_alone() {
        let mut a = SectorMap::new();
        a.write(16, &[1u8; 512]);
        let mut b = a.clone();
        b.write(16, &[2u8; 4096]); // sectors 16..24: exactly page 2
        b.write(17, &[3u8; 512]);
        assert_eq!(a.get(16).unwrap()[0], 1);
        assert!(a.get(17).is_none());
        assert_eq!((b.get(16).unwrap()[0], b.get(17).unwrap()[0], b.get(23).unwrap()[511]), (2, 3, 2));
        assert_eq!(b.sectors_in(0, 100).count(), 8);
        b.write(20, &[4u8; 4096]); // straddles pages 2 and 3: copied sector by sector
        assert_eq!((b.get(19).unwrap()[0], b.get(20).unwrap()[0], b.get(27).unwrap()[0]), (2, 4, 4));
    }
}
