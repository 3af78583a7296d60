//! The disk a crash left, as recovery reads it: each device's stable media with the writes
//! that survived on top (`Image`), and what the states of one crash point share (`SharedLog`:
//! the log blocks every state reads alike, the records parsed from them and the pass 1 walks
//! of each reading of the rest). `Image` is recovery's `LogReader`.

use super::pass1::{log_walk, LogWalk, SharedPass1Memo};
use super::reader::{is_header, parse_record, record_span, LogReader, Rec};
use crate::device::{SectorMap, SECTOR};
use crate::format::{self, rh};
use crate::sectors::PER_PAGE;
use crate::units::XLOG_HEADER_MAGIC_NUM;
use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// What a crash did to one write that had not reached stable media.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
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
        self.landed(self.index.get(&sector)?)
    }

    /// Of one sector's candidates, the last that landed.
    fn landed(&self, cands: &[(u32, u32)]) -> Option<(u32, u32)> {
        cands.iter().rev().copied().find(|&(w, k)| self.lands(w, k))
    }

    /// Whether sector `k` of write `w` reached the media in this crash.
    pub(super) fn lands(&self, w: u32, k: u32) -> bool {
        match self.keep[w as usize] {
            Fate::Kept => true,
            Fate::Torn => self.tears[w as usize] >> (k % 64) & 1 == 1,
            Fate::Lost => false,
        }
    }

    /// What this crash did to each of `writes`: states that agree on it read the same bytes
    /// wherever only those writes may land.
    fn fates_of(&self, writes: impl Iterator<Item = u32>) -> Option<LogFates> {
        writes
            .map(|w| {
                let fate = *self.keep.get(w as usize)?;
                Some((fate, if fate == Fate::Torn { *self.tears.get(w as usize)? } else { 0 }))
            })
            .collect()
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
    /// The writes that may land on an unshared block, as (write, first block, end block),
    /// with the address of the survivors' index they came from; pass 1 per fate of those
    /// writes (`Image::log_fates`), and the unshared records per fate of the writes under them.
    log_writes: OnceCell<(usize, Vec<WriteSpan>)>,
    walks_by_fate: RefCell<BTreeMap<LogFates, Rc<Result<LogWalk, String>>>>,
    records_by_fate: RecordsByFate,
    /// Pass 1 over the shared records, which every walk of this log starts with.
    pass1: SharedPass1Memo,
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
/// A write that may land in the log: (write, first block, end block).
type WriteSpan = (u32, u32, u32);
/// Per write that may land in the log, its fate (and, torn, which sectors landed).
type LogFates = Vec<(Fate, u64)>;
/// Unshared records by (header block, fate of each write under the record).
type RecordsByFate = RefCell<BTreeMap<(u32, Vec<(u32, Fate)>), Option<Rc<Rec>>>>;

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
        SharedLog {
            blocks,
            by_cycle,
            unshared,
            records: RefCell::default(),
            walks: RefCell::default(),
            log_writes: OnceCell::new(),
            walks_by_fate: RefCell::default(),
            records_by_fate: RefCell::default(),
            pass1: RefCell::default(),
        }
    }

    /// How many distinct readings of the unshared blocks pass 1 has walked.
    #[cfg(test)]
    pub(crate) fn walks_cached(&self) -> usize {
        self.walks.borrow().len() + self.walks_by_fate.borrow().len()
    }

    /// How many records read from unshared blocks were parsed once for the states that agree
    /// on the writes under them.
    #[cfg(test)]
    pub(crate) fn unshared_records_cached(&self) -> usize {
        self.records_by_fate.borrow().values().filter(|r| r.is_some()).count()
    }

    /// How many runs of shared records pass 1 has rebuilt once for every walk.
    #[cfg(test)]
    pub(crate) fn shared_pass1_cached(&self) -> usize {
        self.pass1.borrow().len()
    }

    /// The shared facts of block `blk`: (cycle, header magic).
    fn block(&self, blk: u32) -> Option<(u32, bool)> {
        self.blocks.get(blk as usize).copied().flatten()
    }
}

impl Image<'_> {
    /// Whether sector `s` of the log device lies in the log.
    pub fn in_log(&self, s: u64) -> bool {
        (self.log_start..self.log_start + self.log_bb as u64).contains(&s)
    }
    /// Which write each unshared log block reads from (None: stable media): images with equal
    /// keys hold the same log bytes (`cached_walk` keys by the cheaper `log_fates` where it can).
    fn log_key(&self, sh: &SharedLog) -> LogKey {
        let sv = self.devs[0].survivors.as_ref();
        sh.unshared.iter().map(|&b| sv.and_then(|v| v.source(self.log_start + b as u64))).collect()
    }
    /// The writes that may land on `sh`'s unshared blocks (write, first block, end block),
    /// when this image's survivors come from the index they were read from.
    fn log_writes<'s>(&self, sh: &'s SharedLog) -> Option<(&Survivors<'_>, &'s [WriteSpan])> {
        let sv = self.devs[0].survivors.as_ref()?;
        let at = std::ptr::from_ref(sv.index) as usize;
        let (from, writes) = sh.log_writes.get_or_init(|| {
            let end = self.log_start + self.log_bb as u64;
            let mut spans: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
            for (&s, cands) in sv.index.range(self.log_start..end) {
                let b = (s - self.log_start) as u32;
                for &(w, _) in cands {
                    let span = spans.entry(w).or_insert((b, b + 1));
                    *span = (span.0.min(b), span.1.max(b + 1));
                }
            }
            (at, spans.into_iter().map(|(w, (a, b))| (w, a, b)).collect())
        });
        (*from == at).then_some((sv, writes.as_slice()))
    }
    /// The fates of the writes that may land on `sh`'s unshared blocks: images that agree
    /// on them read the same log.
    fn log_fates(&self, sh: &SharedLog) -> Option<LogFates> {
        let (sv, writes) = self.log_writes(sh)?;
        sv.fates_of(writes.iter().map(|w| w.0))
    }
    /// Record `blk` read from unshared blocks: parsed once per fate of the writes under its
    /// blocks when none of them is torn (a torn write's sectors rarely land alike twice).
    fn unshared_record(&self, sh: &SharedLog, blk: u32) -> Option<Rc<Rec>> {
        let parse = || parse_record(self, blk).map(Rc::new);
        let Some((sv, writes)) = self.log_writes(sh) else { return parse() };
        let n = record_span(&is_header(self, blk)?);
        let (end, wrapped) = (blk as u64 + n as u64, (blk as u64 + n as u64).saturating_sub(self.log_bb as u64));
        let under = writes.iter().filter(|&&(_, a, b)| (a as u64) < end && b > blk || (a as u64) < wrapped);
        let Some(fates) = under
            .map(|&(w, _, _)| match sv.keep.get(w as usize) {
                Some(&f) if f != Fate::Torn => Some((w, f)),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
        else {
            return parse();
        };
        let key = (blk, fates);
        if let Some(r) = sh.records_by_fate.borrow().get(&key) {
            return r.clone();
        }
        let r = parse();
        sh.records_by_fate.borrow_mut().insert(key, r.clone());
        r
    }
    /// Whether every block of [blk, blk + n) reads the same in every state sharing this log.
    fn blocks_shared(&self, sh: &SharedLog, blk: u32, n: u32) -> bool {
        (0..n).all(|k| sh.block((blk + k) % self.log_bb).is_some())
    }
    /// The data device as the crash left it.
    pub(super) fn data(&self) -> &Layer<'_> {
        &self.devs[self.data_dev]
    }
}

impl LogReader for Image<'_> {
    fn log_bb(&self) -> u32 {
        self.log_bb
    }
    fn log_block(&self, blk: u32) -> [u8; SECTOR] {
        self.devs[0].read(self.log_start + blk as u64)
    }
    fn cycle(&self, blk: u32) -> u32 {
        if let Some((c, _)) = self.shared.and_then(|sh| sh.block(blk)) {
            return c;
        }
        self.devs[0].with_sector(self.log_start + blk as u64, format::sector_cycle)
    }
    fn has_magic(&self, blk: u32) -> bool {
        if let Some((_, m)) = self.shared.and_then(|sh| sh.block(blk)) {
            return m;
        }
        self.devs[0].with_sector(self.log_start + blk as u64, |s| format::be32(s, rh::MAGIC)) == XLOG_HEADER_MAGIC_NUM
    }
    /// With a shared log: the first shared block with that cycle (from its runs), or an
    /// earlier unshared one read from the image.
    fn first_block_of_cycle(&self, start: u32, n: u32, stop: u32) -> Option<u32> {
        let end = start.saturating_add(n);
        let Some(sh) = self.shared.filter(|_| end <= self.log_bb) else {
            return (start..end).find(|&b| self.cycle(b) == stop);
        };
        let first_shared = sh
            .by_cycle
            .get(&stop)
            .and_then(|v| v.get(v.partition_point(|&(_, e)| e <= start)))
            .map(|&(s, _)| s.max(start));
        let limit = first_shared.filter(|&b| b < end).unwrap_or(end);
        let from = sh.unshared.partition_point(|&b| b < start);
        sh.unshared[from..]
            .iter()
            .take_while(|&&b| b < limit)
            .find(|&&b| self.cycle(b) == stop)
            .copied()
            .or(first_shared.filter(|&b| b < end))
    }
    /// Parsed once per shared log when its blocks are shared.
    fn record(&self, blk: u32) -> Option<Rc<Rec>> {
        let Some(sh) = self.shared else { return parse_record(self, blk).map(Rc::new) };
        if !self.blocks_shared(sh, blk, 1) {
            return self.unshared_record(sh, blk);
        }
        if let Some(r) = sh.records.borrow().get(&blk) {
            return r.clone();
        }
        // Unshared blocks in its body: this state's reading is not every state's.
        if is_header(self, blk).is_some_and(|h| !self.blocks_shared(sh, blk, record_span(&h))) {
            return self.unshared_record(sh, blk);
        }
        let r = parse_record(self, blk).map(Rc::new);
        sh.records.borrow_mut().insert(blk, r.clone());
        r
    }
    fn shared_records(&self, records: &[Rc<Rec>]) -> usize {
        match self.shared {
            Some(sh) => records.iter().take_while(|r| self.blocks_shared(sh, r.blk, r.total_bb)).count(),
            None => 0,
        }
    }
}

/// Pass 1 of `img`, walked once per reading of the log's unshared blocks.
pub(super) fn cached_walk(img: &Image) -> Rc<Result<LogWalk, String>> {
    match img.shared {
        Some(sh) => {
            let walk = || Rc::new(log_walk(img, Some(&sh.pass1)));
            // States that agree on the log writes' fates read the same log. Keyed by those
            // (a few writes), not by each unshared block's source (thousands of blocks).
            if let Some(fates) = img.log_fates(sh) {
                let hit = sh.walks_by_fate.borrow().get(&fates).cloned();
                return hit.unwrap_or_else(|| {
                    let w = walk();
                    sh.walks_by_fate.borrow_mut().insert(fates, w.clone());
                    w
                });
            }
            let key = img.log_key(sh);
            let hit = sh.walks.borrow().get(&key).cloned();
            hit.unwrap_or_else(|| {
                let w = walk();
                sh.walks.borrow_mut().insert(key, w.clone());
                w
            })
        }
        None => Rc::new(log_walk(img, None)),
    }
}
