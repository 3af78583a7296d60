//! Log recovery from device bytes alone: find head and tail by cycle numbers, verify CRCs,
//! trim a torn head, replay committed transactions with v5 LSN ordering.

use crate::device::{SectorMap, SECTOR};
use crate::format::{
    self, rh, OpHeader, BLF_HDR, XFS_BLF_CANCEL, XFS_LI_BUF, XFS_LI_INODE, XFS_TRANS_HEADER_MAGIC, XLOG_COMMIT_TRANS,
    XLOG_CYCLE_DATA_WORDS, XLOG_START_TRANS, XLOG_UNMOUNT_TRANS, XLOG_WAS_CONT_TRANS,
};
use crate::layout::{item_daddr, item_sector, META_START_SECTOR};
use crate::sectors::PER_PAGE;
use crate::units::{btobb, Lsn, XLOG_HEADER_MAGIC_NUM};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

mod point;
pub(crate) use point::{Entry, InPlace, PointRecovered, PointRecovery};

/// `XLOG_MAX_ICLOGS`: how many records back from the head a torn write may reach.
const XLOG_MAX_ICLOGS: usize = format::XLOG_MAX_ICLOGS as usize;

/// What a crash did to one write that had not reached stable media.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Lost,
    Kept,
    /// Some of its sectors landed (`Survivors::tears`).
    Torn,
}

/// Writes a crash kept on top of stable media, looked up in place instead of copied.
#[derive(Clone, Copy, Debug)]
pub struct Survivors<'a> {
    /// sector -> candidate (write, sector within it), in the order they apply.
    pub index: &'a BTreeMap<u64, Vec<(u32, u32)>>,
    pub writes: &'a [Vec<u8>],
    pub keep: &'a [Fate],
    /// Per write: bit k set when a torn write's sector k landed.
    pub tears: &'a [u64],
}

impl Survivors<'_> {
    fn get(&self, sector: u64) -> Option<&[u8]> {
        self.source(sector).map(|(w, k)| &self.writes[w as usize][k as usize * SECTOR..(k as usize + 1) * SECTOR])
    }

    /// The surviving write that sector `sector` reads from: (write, sector within it).
    fn source(&self, sector: u64) -> Option<(u32, u32)> {
        let cands = self.index.get(&sector)?;
        cands.iter().rev().copied().find(|&(w, k)| match self.keep[w as usize] {
            Fate::Kept => true,
            Fate::Torn => self.tears[w as usize] >> (k % 64) & 1 == 1,
            Fate::Lost => false,
        })
    }
}

/// One device as a crash left it: stable sectors, the writes that survived, and anything
/// recovery itself wrote, on top.
#[derive(Clone, Debug)]
pub struct Layer<'a> {
    pub base: &'a SectorMap,
    pub over: SectorMap,
    pub survivors: Option<Survivors<'a>>,
}

impl<'a> Layer<'a> {
    pub fn new(base: &'a SectorMap) -> Layer<'a> {
        debug_assert_eq!(base.crcs_pending(), 0, "recovery reads media with every CRC stamped (settle_crcs)");
        Layer { base, over: SectorMap::new(), survivors: None }
    }

    pub fn read(&self, sector: u64) -> [u8; SECTOR] {
        self.with_sector(sector, |s| s.try_into().expect("one sector"))
    }

    /// Looks at one sector without copying it (zeros where nothing was written).
    pub fn with_sector<R>(&self, sector: u64, f: impl FnOnce(&[u8]) -> R) -> R {
        if let Some(s) = self.over.get(sector) {
            return f(s);
        }
        if let Some(s) = self.survivors.as_ref().and_then(|v| v.get(sector)) {
            return f(s);
        }
        match self.base.get(sector) {
            Some(s) => f(s),
            None => f(&[0; SECTOR]),
        }
    }

    /// Sectors in [from, to) that may hold data, in order (duplicates removed).
    pub fn sectors_in(&self, from: u64, to: u64) -> Vec<u64> {
        let mut v: Vec<u64> = self.base.sectors_in(from, to).chain(self.over.sectors_in(from, to)).collect();
        if let Some(sv) = &self.survivors {
            v.extend(sv.index.range(from..to).map(|(&s, _)| s));
        }
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// What recovery sees: the log device, the data device (the same one for an internal log).
#[derive(Clone, Debug)]
pub struct Image<'a> {
    pub devs: Vec<Layer<'a>>,
    pub data_dev: usize,
    pub log_start: u64,
    pub log_bb: u32,
    /// What images that differ only in their survivors share (the crash explorer's states):
    /// valid while nothing in `over` lies in the log region.
    pub shared: Option<&'a SharedLog>,
}

/// The log blocks every crash state at one crash point reads alike, worked out once from the
/// stable media: a block's cycle number, whether it starts with a record header, and the
/// records lying wholly in such blocks. A block some surviving write may cover is read from
/// the image each time.
#[derive(Debug)]
pub struct SharedLog {
    /// Per log block: its cycle number and header magic, or None where a candidate write covers it.
    blocks: Vec<Option<(u32, bool)>>,
    /// Shared blocks by cycle number, as runs [start, end) ascending: where
    /// `xlog_find_verify_cycle` stops.
    by_cycle: BTreeMap<u32, Vec<(u32, u32)>>,
    /// The blocks a candidate write covers, ascending.
    unshared: Vec<u32>,
    records: RefCell<BTreeMap<u32, Option<Rc<Rec>>>>,
    /// Pass 1 per reading of the unshared blocks (`Image::log_key`).
    walks: RefCell<BTreeMap<LogKey, Rc<Result<LogWalk, String>>>>,
}

/// What `SharedLog::new_cached` read from each log page of the stable media, from the log's
/// first page on: the page's buffer and written sectors then, and each sector's (cycle,
/// header magic).
#[derive(Clone, Debug, Default)]
pub struct LogPageCache {
    pages: Vec<Option<LogPageFacts>>,
}

type LogPageFacts = (Arc<Vec<u8>>, u8, [(u32, bool); PER_PAGE as usize]);

/// Per unshared log block, the surviving write (write, sector within it) it reads from.
type LogKey = Vec<Option<(u32, u32)>>;

impl SharedLog {
    /// The log region of `base` (stable media of the log device), where `covered` lists the
    /// sectors a surviving write may replace.
    pub fn new(base: &SectorMap, log_start: u64, log_bb: u32, covered: impl Iterator<Item = u64>) -> SharedLog {
        Self::new_cached(base, log_start, log_bb, covered, &mut LogPageCache::default())
    }

    /// As `new`, reading again only the pages of `base` that changed since `cache` saw them.
    pub fn new_cached(
        base: &SectorMap,
        log_start: u64,
        log_bb: u32,
        covered: impl Iterator<Item = u64>,
        cache: &mut LogPageCache,
    ) -> SharedLog {
        let end = log_start + log_bb as u64;
        let mut blocks = vec![Some((0, false)); log_bb as usize];
        let first_page = log_start / PER_PAGE;
        cache.pages.resize(end.div_ceil(PER_PAGE).saturating_sub(first_page) as usize, None);
        for (p, data, present) in base.page_buffers_in(log_start, end) {
            let slot = &mut cache.pages[(p - first_page) as usize];
            let known = slot.as_ref().filter(|(d, pr, _)| *pr == present && Arc::ptr_eq(d, data));
            let facts = match known {
                Some(&(_, _, facts)) => facts,
                None => {
                    let mut facts = [(0, false); PER_PAGE as usize];
                    for (i, f) in facts.iter_mut().enumerate().filter(|(i, _)| present >> i & 1 == 1) {
                        if let Some(x) = data.get(i * SECTOR..(i + 1) * SECTOR) {
                            *f = (format::sector_cycle(x), format::be32(x, rh::MAGIC) == XLOG_HEADER_MAGIC_NUM);
                        }
                    }
                    // Holding the buffer keeps its address from naming another page's bytes.
                    *slot = Some((Arc::clone(data), present, facts));
                    facts
                }
            };
            for (i, &f) in facts.iter().enumerate() {
                let s = p * PER_PAGE + i as u64;
                if (log_start..end).contains(&s) {
                    blocks[(s - log_start) as usize] = Some(f);
                }
            }
        }
        let mut unshared = Vec::new();
        for sector in covered.filter(|s| (log_start..end).contains(s)) {
            let b = (sector - log_start) as u32;
            blocks[b as usize] = None;
            unshared.push(b);
        }
        unshared.sort_unstable();
        unshared.dedup();
        // Blocks come in runs of one cycle: a log holds a few runs, however many blocks.
        let mut by_cycle: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
        let mut run: Option<(u32, u32, u32)> = None;
        for (b, x) in (0u32..).zip(&blocks) {
            match (*x, &mut run) {
                (Some((c, _)), Some((rc, _, end))) if *rc == c => *end = b + 1,
                (x, _) => {
                    if let Some((rc, start, end)) = run.take() {
                        by_cycle.entry(rc).or_default().push((start, end));
                    }
                    run = x.map(|(c, _)| (c, b, b + 1));
                }
            }
        }
        if let Some((rc, start, end)) = run {
            by_cycle.entry(rc).or_default().push((start, end));
        }
        SharedLog { blocks, by_cycle, unshared, records: RefCell::default(), walks: RefCell::default() }
    }

    /// How many distinct readings of the unshared blocks pass 1 has walked.
    #[cfg(test)]
    pub(crate) fn walks_cached(&self) -> usize {
        self.walks.borrow().len()
    }

    /// The shared facts of block `blk`: (cycle, header magic).
    fn block(&self, blk: u32) -> Option<(u32, bool)> {
        self.blocks.get(blk as usize).copied().flatten()
    }
}

impl Image<'_> {
    fn log_block(&self, blk: u32) -> [u8; SECTOR] {
        self.devs[0].read(self.log_start + blk as u64)
    }
    fn shared(&self) -> Option<&SharedLog> {
        self.shared
    }
    /// Whether sector `s` of the log device lies in the log.
    pub fn in_log(&self, s: u64) -> bool {
        (self.log_start..self.log_start + self.log_bb as u64).contains(&s)
    }
    fn cycle(&self, blk: u32) -> u32 {
        if let Some((c, _)) = self.shared().and_then(|sh| sh.block(blk)) {
            return c;
        }
        self.devs[0].with_sector(self.log_start + blk as u64, format::sector_cycle)
    }
    /// Whether block `blk` starts with the record header magic number.
    fn has_magic(&self, blk: u32) -> bool {
        if let Some((_, m)) = self.shared().and_then(|sh| sh.block(blk)) {
            return m;
        }
        self.devs[0].with_sector(self.log_start + blk as u64, |s| format::be32(s, rh::MAGIC)) == XLOG_HEADER_MAGIC_NUM
    }
    /// Which write each unshared log block reads from (None: stable media): images with equal
    /// keys hold the same log bytes.
    fn log_key(&self, sh: &SharedLog) -> LogKey {
        let sv = self.devs[0].survivors.as_ref();
        sh.unshared.iter().map(|&b| sv.and_then(|v| v.source(self.log_start + b as u64))).collect()
    }
    /// Whether every block of [blk, blk + n) reads the same in every state sharing this log.
    fn blocks_shared(&self, sh: &SharedLog, blk: u32, n: u32) -> bool {
        (0..n).all(|k| sh.block((blk + k) % self.log_bb).is_some())
    }
    fn data(&self) -> &Layer<'_> {
        &self.devs[self.data_dev]
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    pub head_blk: u32,
    pub tail_blk: u32,
    pub head_lsn: Lsn,
    pub tail_lsn: Lsn,
    pub empty: bool,
    pub clean: bool,
    /// Records between tail and head after trimming.
    pub records: u32,
    /// Torn head: the head block was moved back over a bad record.
    pub torn_head_trimmed: bool,
    /// The head found before a torn head was trimmed (`head_blk` when it was not).
    pub head_found_blk: u32,
    /// The trim was for a corrupt record header rather than a bad CRC (the kernel then also
    /// says "Corruption detected").
    pub torn_at_corrupt_header: bool,
    /// The tail was overwritten by iclogs that landed past the head and was moved on.
    pub tail_overwrite_skipped: bool,
    pub transactions_replayed: u32,
    /// Transactions whose start was found but whose commit record was not.
    pub transactions_uncommitted: u32,
    pub regions_skipped_by_lsn: u32,
    /// Cancel records met (stale buffers: format structure with `XFS_BLF_CANCEL`).
    pub cancel_records: u32,
    /// Buffer items not replayed because a later cancel record covers their block.
    pub buffers_cancelled: u32,
    /// Final item versions: in-place metadata with the log replayed over it.
    pub items: BTreeMap<u32, u64>,
    /// Metadata writes recovery makes (sector -> item, version, LSN), for running it again.
    #[serde(skip)]
    pub writes: BTreeMap<u64, (u32, u64, Lsn)>,
    /// Intact records from tail to head: (block, LSN, length in blocks).
    #[serde(skip)]
    pub records_found: Vec<(u32, Lsn, u32)>,
    /// Committed transactions replayed: (start LSN, item, version) per buffer.
    pub replayed: Vec<(Lsn, u32, u64)>,
    /// Filled by the oracle: why an invariant failed.
    pub why: String,
    /// Filled by the oracle: a recovered version predates the folded history, so its
    /// prefix window is known only as a superset.
    #[serde(skip)]
    pub before_horizon: bool,
}

/// `xlog_find_cycle_start`: binary search for the first block carrying `cycle`.
fn find_cycle_start(img: &Image, mut first: u32, mut last: u32, cycle: u32) -> u32 {
    let mut mid = first + (last - first) / 2;
    while mid != first && mid != last {
        if img.cycle(mid) == cycle {
            last = mid;
        } else {
            first = mid;
        }
        mid = first + (last - first) / 2;
    }
    last
}

/// `xlog_find_verify_cycle`: first block in [start, start + n) with cycle `stop`.
fn find_verify_cycle(img: &Image, start: u32, n: u32, stop: u32) -> Option<u32> {
    let end = start.saturating_add(n);
    let Some(sh) = img.shared().filter(|_| end <= img.log_bb) else {
        return (start..end).find(|&b| img.cycle(b) == stop);
    };
    // The first shared block with that cycle, or an earlier unshared one read from the image.
    let first_shared =
        sh.by_cycle.get(&stop).and_then(|v| v.get(v.partition_point(|&(_, e)| e <= start))).map(|&(s, _)| s.max(start));
    let limit = first_shared.filter(|&b| b < end).unwrap_or(end);
    let from = sh.unshared.partition_point(|&b| b < start);
    sh.unshared[from..]
        .iter()
        .take_while(|&&b| b < limit)
        .find(|&&b| img.cycle(b) == stop)
        .copied()
        .or(first_shared.filter(|&b| b < end))
}

/// Record header at `blk`, if the block holds one.
fn is_header(img: &Image, blk: u32) -> Option<[u8; SECTOR]> {
    img.has_magic(blk).then(|| img.log_block(blk))
}

fn heads_of(hdr: &[u8]) -> u32 {
    format::be32(hdr, rh::SIZE).div_ceil(crate::format::XLOG_HEADER_CYCLE_SIZE).max(1)
}

/// `xlog_find_verify_log_record`: if `head` lands inside a record, move it to its header.
/// Near block 0 the search goes on from the physical end of the log (a record that wraps).
/// `None`: no record header in the `max_back` blocks before `head`.
fn verify_log_record(img: &Image, head: u32, max_back: u32) -> Option<u32> {
    let check = |i: u32, span: u32| -> Option<bool> {
        let h = is_header(img, i)?;
        let len_bb = btobb(format::be32(&h, rh::LEN) as u64) as u32;
        Some(span == len_bb + heads_of(&h))
    };
    let lo = head.saturating_sub(max_back);
    for i in (lo..head).rev() {
        if let Some(whole) = check(i, head - i) {
            return Some(if whole { head } else { i });
        }
    }
    if head < max_back {
        let log_bb = img.log_bb;
        for i in (log_bb.saturating_sub(max_back - head)..log_bb).rev() {
            if let Some(whole) = check(i, log_bb - i + head) {
                return Some(if whole { head } else { i });
            }
        }
    }
    None
}

/// `xlog_find_zeroed`: Some(first zero block) when the log has never wrapped.
fn find_zeroed(img: &Image) -> Result<Option<u32>, String> {
    let log_bb = img.log_bb;
    if img.cycle(0) == 0 {
        return Ok(Some(0));
    }
    if img.cycle(log_bb - 1) != 0 {
        return Ok(None);
    }
    let mut last = find_cycle_start(img, 0, log_bb - 1, 0);
    // A later iclog may have landed past an earlier one still missing: back up over holes.
    let scan = (XLOG_MAX_ICLOGS as u32 * 512).min(last);
    let start = last - scan;
    if let Some(b) = find_verify_cycle(img, start, scan, 0) {
        last = b;
    }
    // The header search goes back only to the scan's start: when the first zeroed block is
    // that start, or no header lies between, 6.18 refuses the log (seen on a real crash state).
    verify_log_record(img, last, last - start)
        .map(Some)
        .ok_or_else(|| format!("log inconsistent (didn't find previous header) before block {last}"))
}

/// `xlog_find_head`.
fn find_head(img: &Image) -> Result<u32, String> {
    if let Some(b) = find_zeroed(img)? {
        return Ok(b);
    }
    let log_bb = img.log_bb;
    let first_cycle = img.cycle(0);
    let last_cycle = img.cycle(log_bb - 1);
    let (mut head, stop) = if first_cycle == last_cycle {
        (log_bb, last_cycle.wrapping_sub(1))
    } else {
        (find_cycle_start(img, 0, log_bb - 1, last_cycle), last_cycle)
    };
    // XLOG_TOTAL_REC_SHIFT: the most the iclogs can have in flight (8 x 256 KiB).
    let scan = log_bb.min(4096);
    if head >= scan {
        if let Some(b) = find_verify_cycle(img, head - scan, scan, stop) {
            head = b;
        }
    } else {
        let start = log_bb - (scan - head);
        if let Some(b) = find_verify_cycle(img, start, scan - head, stop.wrapping_sub(1)) {
            head = b;
        } else if let Some(b) = find_verify_cycle(img, 0, head, stop) {
            head = b;
        }
    }
    let head = verify_log_record(img, head, 512 + 8).unwrap_or(head);
    Ok(if head == log_bb { 0 } else { head })
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

/// The record at `blk`, parsed once per shared log when its blocks are shared.
pub(crate) fn read_record(img: &Image, blk: u32) -> Option<Rc<Rec>> {
    let Some(sh) = img.shared().filter(|sh| img.blocks_shared(sh, blk, 1)) else {
        return parse_record(img, blk).map(Rc::new);
    };
    if let Some(r) = sh.records.borrow().get(&blk) {
        return r.clone();
    }
    let r = parse_record(img, blk);
    // Unshared blocks in its body: this state's reading is not every state's.
    if r.as_ref().is_some_and(|r| !img.blocks_shared(sh, blk, r.total_bb)) {
        return r.map(Rc::new);
    }
    let r = r.map(Rc::new);
    sh.records.borrow_mut().insert(blk, r.clone());
    r
}

fn parse_record(img: &Image, blk: u32) -> Option<Rec> {
    let hdr = is_header(img, blk)?;
    let heads = heads_of(&hdr);
    let h_len = format::be32(&hdr, rh::LEN);
    // xlog_valid_rec_header and the iclog size check: neither may exceed XLOG_MAX_RECORD_BSIZE,
    // and "LR body must have data": a header with h_len 0 (mkfs fills the log with them) is
    // corruption, not a record (found against the 6.18 kernel on a real crash state).
    if h_len == 0
        || h_len as u64 > 256 << 10
        || format::be32(&hdr, rh::SIZE) > 256 << 10
        || format::be32(&hdr, rh::VERSION) != 2
    {
        return None;
    }
    let total_bb = heads + btobb(h_len as u64) as u32;
    let mut raw = Vec::with_capacity(total_bb as usize * SECTOR);
    for k in 0..total_bb {
        raw.extend_from_slice(&img.log_block((blk + k) % img.log_bb));
    }
    let crc = u32::from_le_bytes(raw[rh::CRC..rh::CRC + 4].try_into().expect("4 bytes"));
    // xlog_recover_process, CRC pass: "mkfs always sets old_crc to 0 so we must consider this
    // valid even on v5 supers" (the replay pass would reject it; mkfs's is an unmount record).
    let crc_ok = crc == 0 || format::xlog_cksum(&raw, heads as usize, h_len as usize) == crc;
    // Unpack: restore the words the cycle stamps replaced.
    let hs = heads as usize * SECTOR;
    let bbs = btobb(h_len as u64) as usize;
    // Whole blocks, as the kernel's buffer is: an h_len off a block boundary still unpacks.
    let mut data = raw[hs..hs + bbs * SECTOR].to_vec();
    for i in 0..bbs {
        let (j, k) = (i / XLOG_CYCLE_DATA_WORDS, i % XLOG_CYCLE_DATA_WORDS);
        let slot = if j == 0 { rh::CYCLE_DATA + 4 * k } else { j * SECTOR + 4 + 4 * k };
        let w = format::be32(&raw, slot);
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

/// Where `xlog_verify_head`'s CRC pass starts: the `XLOG_MAX_ICLOGS`-th block back from `head`
/// that starts with the header magic number (`xlog_rseek_logrec_hdr`), or `tail` if fewer.
fn head_window(img: &Image, head: u32, tail: u32) -> u32 {
    let mut headers = 0;
    for k in 1..=dist(img.log_bb, tail, head) {
        let blk = (head + img.log_bb - k) % img.log_bb;
        if img.has_magic(blk) {
            headers += 1;
            if headers == XLOG_MAX_ICLOGS {
                return blk;
            }
        }
    }
    tail
}

/// Last record header before `head`, scanning back over the whole log.
fn last_header_before(img: &Image, head: u32) -> Option<u32> {
    (1..=img.log_bb).map(|k| (head + img.log_bb - k) % img.log_bb).find(|&b| img.has_magic(b))
}

fn dist(log_bb: u32, from: u32, to: u32) -> u32 {
    (to + log_bb - from) % log_bb
}

/// What pass 1 learns of a block, worked out once per recovery: a record header's length in
/// blocks and its CRC verdict (settling the head and tail walks the same records many times).
struct Probe<'i, 'a> {
    img: &'i Image<'a>,
    seen: BTreeMap<u32, Option<(u32, bool)>>,
}

/// A record as pass 1 walks it: (block, length in blocks, CRC good).
type RecAt = (u32, u32, bool);

impl Probe<'_, '_> {
    fn record(&mut self, blk: u32) -> Option<(u32, bool)> {
        let img = self.img;
        *self.seen.entry(blk).or_insert_with(|| read_record(img, blk).map(|r| (r.total_bb, r.crc_ok)))
    }

    /// Records from `tail` up to `head`, in order; `Err((block, why))` where no record starts.
    fn walk(&mut self, tail: u32, head: u32) -> Result<Vec<RecAt>, (u32, String)> {
        let log_bb = self.img.log_bb;
        let mut out = Vec::new();
        let mut blk = tail;
        let span = dist(log_bb, tail, head);
        let mut walked = 0;
        while walked < span {
            let (total_bb, crc_ok) =
                self.record(blk).ok_or_else(|| (blk, format!("bad record header at log block {blk}")))?;
            out.push((blk, total_bb, crc_ok));
            walked += total_bb;
            blk = (blk + total_bb) % log_bb;
        }
        if walked != span {
            return Err((blk, format!("record at log block {blk} runs past the head")));
        }
        Ok(out)
    }

    /// The first record header after block `b` with a good CRC, scanning forward to the head.
    fn next_header_after(&mut self, b: u32, head: u32) -> Option<u32> {
        let log_bb = self.img.log_bb;
        let n = dist(log_bb, b, head);
        (1..n).map(|k| (b + k) % log_bb).find(|&x| self.record(x).is_some_and(|(_, ok)| ok))
    }
}

#[derive(Default)]
struct Trans {
    tid: u32,
    r_lsn: Lsn,
    regions: Vec<Region>,
}

/// A region of a transaction: a slice of one record's data, or the parts of a region split
/// over records joined.
enum Region {
    In(Rc<Rec>, std::ops::Range<usize>),
    Joined(Vec<u8>),
}

impl std::ops::Deref for Region {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Region::In(r, range) => &r.data[range.clone()],
            Region::Joined(v) => v,
        }
    }
}

/// Runs recovery over `img`: returns the report, or an error recovery would stop on.
pub fn recover(img: &Image) -> Result<RecoveryReport, String> {
    let walk = cached_walk(img);
    let walk = walk.as_ref().as_ref().map_err(|e| e.clone())?;
    let mut rep = walk.rep.clone();
    let mut meta = in_place_meta(img);
    let mut cancelled = walk.cancelled.clone();
    replay_committed(&walk.committed, &mut cancelled, &mut meta, &mut rep)?;
    rep.items = versions(meta);
    Ok(rep)
}

/// Pass 1 of `img`, walked once per reading of the log's unshared blocks.
fn cached_walk(img: &Image) -> Rc<Result<LogWalk, String>> {
    match img.shared() {
        Some(sh) => {
            let key = img.log_key(sh);
            let hit = sh.walks.borrow().get(&key).cloned();
            hit.unwrap_or_else(|| {
                let w = Rc::new(log_walk(img));
                sh.walks.borrow_mut().insert(key, w.clone());
                w
            })
        }
        None => Rc::new(log_walk(img)),
    }
}

/// What recovery learns from the log alone (the same for every image with these log bytes):
/// pass 1's report and, for a dirty log, each committed transaction's items and the cancel
/// records of each buffer.
#[derive(Debug)]
struct LogWalk {
    rep: RecoveryReport,
    committed: Vec<(Lsn, Vec<LogItem>)>,
    cancelled: BTreeMap<u64, u32>,
    /// The first `shared_txns` committed transactions lie wholly in records every state of
    /// the crash point reads alike, walked from the record at `first_blk`: walks with the same
    /// pair share them (`point::Prefix`).
    shared_txns: usize,
    first_blk: u32,
}

fn log_walk(img: &Image) -> Result<LogWalk, String> {
    match pass1(img)? {
        Walk::Done(rep) => {
            Ok(LogWalk { rep, committed: Vec::new(), cancelled: BTreeMap::new(), shared_txns: 0, first_blk: u32::MAX })
        }
        Walk::Replay { rep, committed, shared_txns } => {
            let cancelled = count_cancels(&committed)?;
            let first_blk = rep.records_found.first().map_or(u32::MAX, |r| r.0);
            let committed = committed.iter().map(|t| Ok((t.r_lsn, log_items(t)?))).collect::<Result<_, String>>()?;
            Ok(LogWalk { rep, committed, cancelled, shared_txns, first_blk })
        }
    }
}

/// Pass 1: head, tail, the records between and the transactions they hold.
enum Walk {
    /// Empty or clean: nothing to replay.
    Done(RecoveryReport),
    Replay {
        rep: RecoveryReport,
        committed: Vec<Trans>,
        /// Committed transactions whose records are all shared (`LogWalk::shared_txns`).
        shared_txns: usize,
    },
}

fn pass1(img: &Image) -> Result<Walk, String> {
    let mut rep = RecoveryReport::blank();
    let head = find_head(img)?;
    rep.head_blk = head;
    if log_is_empty(img, head) {
        rep.empty = true;
        return Ok(Walk::Done(rep));
    }
    let span = settle_head_and_tail(img, head, &mut rep)?;
    rep.head_blk = span.head;
    rep.tail_blk = span.tail;
    rep.records = span.records.len() as u32;
    rep.records_found = span.records.iter().map(|r| (r.blk, r.lsn, r.total_bb)).collect();
    rep.clean = unmount_record_last(&span.records);
    if rep.clean {
        // A clean log needs no replay: everything is in place.
        return Ok(Walk::Done(rep));
    }
    // Records before the first one a surviving write may change read alike in every state.
    let shared_records = match img.shared() {
        Some(sh) => span.records.iter().take_while(|r| img.blocks_shared(sh, r.blk, r.total_bb)).count(),
        None => 0,
    };
    let (committed, uncommitted, shared_txns) = rebuild_transactions(&span.records, shared_records)?;
    rep.transactions_uncommitted = uncommitted;
    Ok(Walk::Replay { rep, committed, shared_txns })
}

/// Recovery of a bare log region: the report, and why replay stopped if the log holds items
/// this model does not replay (a real kernel's log: inodes, EFIs, icreate, …).
#[derive(Clone, Debug)]
pub struct RegionRecovery {
    pub report: RecoveryReport,
    /// Committed transactions found from tail to head.
    pub committed: u32,
    pub not_replayed: Option<String>,
    /// Each committed transaction as the kernel's pass 2 sees it (`xlog_recover_commit_trans`).
    pub transactions: Vec<CommittedTrans>,
}

/// A committed transaction found between tail and head: the ticket id of its op headers, the
/// LSN of the record it starts in (`r_lsn`), and how many log items of each type it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommittedTrans {
    pub tid: u32,
    pub lsn: Lsn,
    /// Item type (`XFS_LI_*`) -> items, or why the regions do not split into items.
    pub items: Result<BTreeMap<u16, u32>, String>,
}

/// The kernel's name of a log item type, as its tracepoints print it.
pub fn log_item_name(t: u16) -> String {
    const NAMES: [&str; 26] = [
        "XFS_LI_EFI",
        "XFS_LI_EFD",
        "XFS_LI_IUNLINK",
        "",
        "",
        "XFS_LI_INODE",
        "XFS_LI_BUF",
        "XFS_LI_DQUOT",
        "XFS_LI_QUOTAOFF",
        "XFS_LI_ICREATE",
        "XFS_LI_RUI",
        "XFS_LI_RUD",
        "XFS_LI_CUI",
        "XFS_LI_CUD",
        "XFS_LI_BUI",
        "XFS_LI_BUD",
        "XFS_LI_ATTRI",
        "XFS_LI_ATTRD",
        "XFS_LI_XMI",
        "XFS_LI_XMD",
        "XFS_LI_EFI_RT",
        "XFS_LI_EFD_RT",
        "XFS_LI_RUI_RT",
        "XFS_LI_RUD_RT",
        "XFS_LI_CUI_RT",
        "XFS_LI_CUD_RT",
    ];
    match t.checked_sub(0x1236).and_then(|i| NAMES.get(i as usize)) {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => format!("{t:#x}"),
    }
}

/// Splits a transaction's regions into items as `xlog_recover_add_to_trans` does: the first
/// region is the transaction header; each item's first region is a format structure whose
/// type and size (regions, itself included) lead it in the CPU's byte order (little-endian
/// here, as on the x86 kernel whose logs it reads).
fn item_types(t: &Trans) -> Result<BTreeMap<u16, u32>, String> {
    let mut regions = after_trans_header(t, 4)?;
    let mut types = BTreeMap::new();
    while let Some(f) = regions.next() {
        if f.len() < 4 {
            return Err(format!("log item format of {} bytes", f.len()));
        }
        let (ty, size) = (format::le16(f, 0), format::le16(f, 2));
        if size == 0 {
            return Err(format!("log item {} with no regions", log_item_name(ty)));
        }
        for _ in 1..size {
            regions.next().ok_or_else(|| format!("log item {} is missing regions", log_item_name(ty)))?;
        }
        *types.entry(ty).or_insert(0) += 1;
    }
    Ok(types)
}

/// Recovery over a bare log region, as `xfs_logprint` reads one: `log` holds the log's blocks
/// from block 0. There is no data device: what would be replayed is counted, not written.
/// Arbitrary bytes give a report or an error, never a panic (a fuzz target holds it to that).
pub fn recover_log_region(log: &[u8]) -> Result<RegionRecovery, String> {
    if log.len() < 2 * SECTOR || !log.len().is_multiple_of(SECTOR) {
        return Err(format!(
            "a log region is a whole number of 512-byte blocks, at least 2; this one is {} bytes",
            log.len()
        ));
    }
    let log_bb = u32::try_from(log.len() / SECTOR)
        .map_err(|_| format!("a log of {} bytes is larger than XFS allows", log.len()))?;
    let mut map = SectorMap::new();
    for (i, s) in log.chunks_exact(SECTOR).enumerate() {
        if s.iter().any(|&b| b != 0) {
            map.write(i as u64, s);
        }
    }
    let none = SectorMap::new();
    let img =
        Image { devs: vec![Layer::new(&map), Layer::new(&none)], data_dev: 1, log_start: 0, log_bb, shared: None };
    let mut meta = in_place_meta(&img);
    let (mut rep, committed) = match pass1(&img)? {
        Walk::Done(mut report) => {
            report.items = versions(meta);
            return Ok(RegionRecovery { report, committed: 0, not_replayed: None, transactions: Vec::new() });
        }
        Walk::Replay { rep, committed, .. } => (rep, committed),
    };
    let n = committed.len() as u32;
    let transactions =
        committed.iter().map(|t| CommittedTrans { tid: t.tid, lsn: t.r_lsn, items: item_types(t) }).collect();
    let replayed = count_cancels(&committed).and_then(|mut c| {
        let items = committed.iter().map(|t| Ok((t.r_lsn, log_items(t)?))).collect::<Result<Vec<_>, String>>()?;
        replay_committed(&items, &mut c, &mut meta, &mut rep)
    });
    match replayed {
        Ok(()) => Ok(RegionRecovery { report: rep, committed: n, not_replayed: None, transactions }),
        Err(e) => {
            // The log itself is sound (pass 1 walked it); its items are not the model's.
            rep.transactions_replayed = 0;
            rep.replayed.clear();
            rep.writes.clear();
            Ok(RegionRecovery { report: rep, committed: n, not_replayed: Some(e), transactions })
        }
    }
}

impl RecoveryReport {
    /// What the kernel logs for this recovery of device `dev` (`xlog_recover`,
    /// `xlog_verify_head`, `xlog_verify_tail`): nothing for an empty or clean log.
    pub fn kernel_messages(&self, dev: &str) -> Vec<String> {
        let mut m = Vec::new();
        if self.empty || self.clean {
            return m;
        }
        if self.torn_at_corrupt_header {
            m.push(format!("XFS ({dev}): Corruption detected. Unmount and run xfs_repair"));
        }
        if self.torn_head_trimmed {
            m.push(format!(
                "XFS ({dev}): Torn write (CRC failure) detected at log block 0x{:x}. Truncating head block from 0x{:x}.",
                self.head_blk, self.head_found_blk
            ));
        }
        if self.tail_overwrite_skipped {
            m.push(format!(
                "XFS ({dev}): Tail block (0x{:x}) overwrite detected. Updated to 0x{:x}",
                self.tail_blk, self.tail_blk
            ));
        }
        m.push(format!("XFS ({dev}): Starting recovery (logdev: internal)"));
        m.push(format!("XFS ({dev}): Ending recovery (logdev: internal)"));
        m
    }

    fn blank() -> RecoveryReport {
        RecoveryReport {
            head_blk: 0,
            tail_blk: 0,
            head_lsn: Lsn::ZERO,
            tail_lsn: Lsn::ZERO,
            empty: false,
            clean: false,
            records: 0,
            torn_head_trimmed: false,
            head_found_blk: 0,
            torn_at_corrupt_header: false,
            tail_overwrite_skipped: false,
            transactions_replayed: 0,
            transactions_uncommitted: 0,
            regions_skipped_by_lsn: 0,
            cancel_records: 0,
            buffers_cancelled: 0,
            items: BTreeMap::new(),
            writes: BTreeMap::new(),
            records_found: Vec::new(),
            replayed: Vec::new(),
            why: String::new(),
            before_horizon: false,
        }
    }
}

/// Item versions alone, from (version, LSN) pairs.
fn versions(meta: BTreeMap<u32, (u64, Lsn)>) -> BTreeMap<u32, u64> {
    meta.into_iter().map(|(k, (v, _))| (k, v)).collect()
}

/// Where in-place metadata ends on the data device: an internal log follows the metadata on
/// the same device, so it stops where the log starts.
fn meta_region_end(data_dev: usize, log_start: u64) -> u64 {
    if data_dev == 0 {
        log_start.max(META_START_SECTOR + 1)
    } else {
        u64::MAX
    }
}

/// A sector where a metadata item starts.
fn is_meta_sector(s: u64) -> bool {
    item_sector(s).is_some()
}

/// In-place metadata as the crash left it: item -> (version, LSN).
fn in_place_meta(img: &Image) -> BTreeMap<u32, (u64, Lsn)> {
    let data = img.data();
    let mut meta = BTreeMap::new();
    let meta_to = meta_region_end(img.data_dev, img.log_start);
    let sectors: Vec<u64> =
        data.sectors_in(META_START_SECTOR, meta_to).into_iter().filter(|&s| is_meta_sector(s)).collect();
    for s in sectors {
        if let Some((id, v, lsn)) = data.with_sector(s, format::read_meta) {
            meta.insert(id, (v, lsn));
        }
    }
    meta
}

/// A log never written: the head is block 0 and the whole log has cycle 0.
fn log_is_empty(img: &Image, head: u32) -> bool {
    head == 0 && format::sector_cycle(&img.log_block(head)) == 0 && matches!(find_zeroed(img), Ok(Some(0)))
}

/// The live log recovery settled on: intact records from `tail` up to `head`.
struct LogSpan {
    head: u32,
    tail: u32,
    records: Vec<Rc<Rec>>,
}

/// Tail from the last record before the head, then a walk to the head verifying CRCs: a bad
/// record near the head is a torn write (the head moves back over it); a missing or bad
/// record near the head reached from the tail means iclogs that landed past a torn head
/// overwrote the tail (the tail moves on a record). Notes both in `rep`.
fn settle_head_and_tail(img: &Image, mut head: u32, rep: &mut RecoveryReport) -> Result<LogSpan, String> {
    let mut probe = Probe { img, seen: BTreeMap::new() };
    let mut records: Vec<RecAt>;
    let mut tail;
    let mut tries = 0;
    // The tail may have been overwritten by iclogs that landed past a torn head: up to
    // XLOG_MAX_ICLOGS records of the largest size (xlog_verify_tail).
    let mut skip_tail_to: Option<u32> = None;
    let mut last_for: Option<(u32, u32)> = None;
    loop {
        tries += 1;
        // Each pass moves the head back or the tail forward by a record: bounded by the log.
        if tries > img.log_bb as usize {
            return Err("could not settle the log head and tail".into());
        }
        let last = match last_for {
            Some((h, last)) if h == head => last,
            _ => last_header_before(img, head).ok_or("no record header found in a dirty log")?,
        };
        last_for = Some((head, last));
        let rec = read_record(img, last).ok_or_else(|| format!("bad record header at log block {last}"))?;
        let max_inflight = XLOG_MAX_ICLOGS as u32 * btobb(format::be32(&img.log_block(last), rh::SIZE) as u64) as u32;
        tail = skip_tail_to.unwrap_or(rec.tail.block());
        rep.tail_lsn = rec.tail;
        rep.head_lsn = rec.lsn;
        if tail >= img.log_bb {
            return Err(format!("tail block {tail} outside the log"));
        }
        let near_head = |b: u32| dist(img.log_bb, head, b) <= max_inflight;
        let walked = probe.walk(tail, head);
        records = match walked {
            Ok(r) => r,
            Err((b, _))
                if b != head && dist(img.log_bb, tail, b) >= dist(img.log_bb, tail, head_window(img, head, tail)) =>
            {
                // xlog_verify_head's CRC pass fails on a corrupt header as on a bad CRC: its
                // first_bad is that header's block, and the head is truncated to it (seen on
                // the 6.18 kernel: "Corruption detected", then "Torn write (CRC failure)").
                // The pass starts at the window's first header, so a bad header there, not `b`,
                // would be first_bad: then the next try finds no good header before the head.
                if !rep.torn_head_trimmed {
                    rep.head_found_blk = head;
                    rep.torn_at_corrupt_header = true;
                }
                head = b;
                rep.torn_head_trimmed = true;
                skip_tail_to = None;
                if head == tail {
                    records = Vec::new();
                    break;
                }
                continue;
            }
            Err((b, _)) if near_head(b) => {
                // "Tail block overwrite detected": move the tail to the next record.
                skip_tail_to = Some(probe.next_header_after(b, head).ok_or("no record after an overwritten tail")?);
                rep.tail_overwrite_skipped = true;
                continue;
            }
            Err((_, e)) => return Err(e),
        };
        let n = records.len();
        match records.iter().position(|r| !r.2) {
            None => break,
            Some(bad) if n - bad <= XLOG_MAX_ICLOGS => {
                // "Torn write (CRC failure) detected ... Truncating head block".
                if !rep.torn_head_trimmed {
                    rep.head_found_blk = head;
                }
                head = records[bad].0;
                rep.torn_head_trimmed = true;
                skip_tail_to = None;
                if head == tail {
                    records.clear();
                    break;
                }
            }
            Some(bad) if near_head(records[bad].0) => {
                skip_tail_to =
                    Some(probe.next_header_after(records[bad].0, head).ok_or("no record after an overwritten tail")?);
                rep.tail_overwrite_skipped = true;
            }
            Some(bad) => {
                return Err(format!("CRC failure in record at log block {} (not at the head)", records[bad].0))
            }
        }
    }
    let records = records
        .iter()
        .map(|&(blk, _, _)| read_record(img, blk).ok_or_else(|| format!("bad record header at log block {blk}")))
        .collect::<Result<Vec<_>, String>>()?;
    if let Some(t) = skip_tail_to {
        if let Some(r) = records.first() {
            debug_assert_eq!(r.blk, t);
            rep.tail_lsn = r.lsn;
        }
    }
    Ok(LogSpan { head, tail, records })
}

/// `xlog_check_unmount_rec`: a lone unmount record right before the head means clean.
fn unmount_record_last(records: &[Rc<Rec>]) -> bool {
    records.last().is_some_and(|r| {
        r.num_logops == 1 && r.data.len() >= 12 && OpHeader::read(&r.data).flags & XLOG_UNMOUNT_TRANS != 0
    })
}

/// Rebuilds transactions by tid from the records' op headers: the committed ones in commit
/// order, how many were started but not committed, and how many committed within the first
/// `shared_records` records.
fn rebuild_transactions(records: &[Rc<Rec>], shared_records: usize) -> Result<(Vec<Trans>, u32, usize), String> {
    let mut open: BTreeMap<u32, Trans> = BTreeMap::new();
    let mut committed: Vec<Trans> = Vec::new();
    let mut shared_txns = 0;
    for (i, r) in records.iter().enumerate() {
        if i == shared_records {
            shared_txns = committed.len();
        }
        let mut off = 0usize;
        for _ in 0..r.num_logops {
            if off + 12 > r.data.len() {
                return Err(format!("op header past the end of record at block {}", r.blk));
            }
            let oh = OpHeader::read(&r.data[off..]);
            off += 12;
            let end = off + oh.len as usize;
            if end > r.data.len() {
                return Err(format!("op length {} past the end of record at block {}", oh.len, r.blk));
            }
            let body = &r.data[off..end];
            off = end;
            if oh.clientid != format::XFS_TRANSACTION && oh.clientid != format::XFS_LOG {
                return Err(format!("bad client id {:#x} in record at block {}", oh.clientid, r.blk));
            }
            if oh.flags & XLOG_UNMOUNT_TRANS != 0 {
                continue;
            }
            let Some(t) = open.get_mut(&oh.tid) else {
                if oh.flags & XLOG_START_TRANS != 0 {
                    open.insert(oh.tid, Trans { tid: oh.tid, r_lsn: r.lsn, regions: Vec::new() });
                }
                continue;
            };
            if oh.flags & XLOG_COMMIT_TRANS != 0 {
                committed.push(open.remove(&oh.tid).expect("present"));
                continue;
            }
            if oh.flags & XLOG_WAS_CONT_TRANS != 0 {
                let last = t.regions.last_mut().ok_or("continued region without a first part")?;
                if let Region::In(..) = last {
                    *last = Region::Joined(last.to_vec());
                }
                if let Region::Joined(v) = last {
                    v.extend_from_slice(body);
                }
            } else if !body.is_empty() {
                t.regions.push(Region::In(r.clone(), off - body.len()..off));
            }
        }
    }
    if records.len() <= shared_records {
        shared_txns = committed.len();
    }
    Ok((committed, open.len() as u32, shared_txns))
}

/// Pass 1 (`xlog_recover_buf_commit_pass1`): the cancel records of each buffer, by block.
fn count_cancels(committed: &[Trans]) -> Result<BTreeMap<u64, u32>, String> {
    let mut cancelled: BTreeMap<u64, u32> = BTreeMap::new();
    for t in committed {
        for it in log_items(t)? {
            if it.cancel {
                *cancelled.entry(it.blkno).or_default() += 1;
            }
        }
    }
    Ok(cancelled)
}

/// Pass 2: replays the committed transactions in log order.
fn replay_committed(
    committed: &[(Lsn, Vec<LogItem>)],
    cancelled: &mut BTreeMap<u64, u32>,
    meta: &mut BTreeMap<u32, (u64, Lsn)>,
    rep: &mut RecoveryReport,
) -> Result<(), String> {
    for (r_lsn, items) in committed {
        replay(*r_lsn, items, cancelled, meta, rep)?;
        rep.transactions_replayed += 1;
    }
    Ok(())
}

/// One log item of a committed transaction, parsed from its format structure.
#[derive(Debug)]
struct LogItem {
    is_inode: bool,
    blkno: u64,
    /// A stale buffer's `XFS_BLF_CANCEL` record: format structure only.
    cancel: bool,
    /// (item id, version) from the first data region.
    payload: Option<(u32, u64)>,
}

/// A transaction's regions after its header (`xfs_trans_header`, magic "TRAN"), which must
/// be at least `min_len` bytes.
fn after_trans_header(t: &Trans, min_len: usize) -> Result<std::slice::Iter<'_, Region>, String> {
    let mut regions = t.regions.iter();
    let th = regions.next().ok_or("transaction without a header")?;
    if th.len() < min_len || format::le32(th, 0) != XFS_TRANS_HEADER_MAGIC {
        return Err("transaction header magic is wrong".into());
    }
    Ok(regions)
}

/// The transaction's log items: its header checked, each format structure and its regions.
fn log_items(t: &Trans) -> Result<Vec<LogItem>, String> {
    let mut regions = after_trans_header(t, 16)?;
    let mut out = Vec::new();
    while let Some(f) = regions.next() {
        if f.len() < BLF_HDR as usize {
            return Err("log item format too short".into());
        }
        let (is_inode, blkno, cancel) = match format::le16(f, 0) {
            XFS_LI_BUF => (false, format::le64(f, 8), format::le16(f, 4) & XFS_BLF_CANCEL != 0),
            XFS_LI_INODE if f.len() >= 56 => (true, format::le64(f, 40), false),
            t => return Err(format!("unknown log item type {t:#x}")),
        };
        let nregions = format::le16(f, 2) as usize;
        let mut payload = None;
        for _ in 1..nregions {
            let d = regions.next().ok_or("log item is missing regions")?;
            if payload.is_none() {
                payload = format::payload_id(d);
            }
        }
        if payload.is_none() && !cancel {
            return Err("log item without data".into());
        }
        out.push(LogItem { is_inode, blkno, cancel, payload });
    }
    Ok(out)
}

/// Pass 2 of one committed transaction: buffers and inodes whose on-disk LSN is older,
/// unless a later cancel record covers their block (xlog_is_buffer_cancelled).
fn replay(
    r_lsn: Lsn,
    items: &[LogItem],
    cancelled: &mut BTreeMap<u64, u32>,
    meta: &mut BTreeMap<u32, (u64, Lsn)>,
    rep: &mut RecoveryReport,
) -> Result<(), String> {
    for it in items {
        let blkno = it.blkno;
        if it.cancel {
            // xlog_put_buffer_cancelled: buffers after the last cancel record replay again.
            if let Some(n) = cancelled.get_mut(&blkno) {
                *n -= 1;
                if *n == 0 {
                    cancelled.remove(&blkno);
                }
            }
            rep.cancel_records += 1;
            continue;
        }
        if cancelled.contains_key(&blkno) {
            rep.buffers_cancelled += 1;
            continue;
        }
        let is_inode = it.is_inode;
        let (id, v) = it.payload.ok_or("log item without data")?;
        if blkno != item_daddr(id, is_inode) {
            return Err(format!("item at daddr {blkno} carries item {id}"));
        }
        // v5 ordering: buffers at or after this transaction's LSN are not overwritten;
        // inodes only when strictly after (32baa63d82ee: checkpoints may share a start LSN).
        let old = meta.get(&id).map_or(Lsn::ZERO, |&(_, lsn)| lsn);
        if old > r_lsn || (!is_inode && old == r_lsn) {
            rep.regions_skipped_by_lsn += 1;
            continue;
        }
        // A recovered buffer takes its LSN only when it is written out after the pass
        // (xfs_buf_delwri_submit), so a later checkpoint sharing this start LSN still
        // replays over it; inode recovery stamps current_lsn into di_lsn at once.
        meta.insert(id, (v, if is_inode { r_lsn } else { old }));
        rep.replayed.push((r_lsn, id, v));
        rep.writes.insert(blkno, (id, v, r_lsn));
    }
    Ok(())
}
