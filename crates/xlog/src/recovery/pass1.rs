//! Pass 1 (`xlog_do_recovery_pass` with `XLOG_RECOVER_PASS1`): the records from tail to head
//! rebuilt into transactions by ticket id, each committed one's log items, and the cancel
//! records of each buffer (`xlog_recover_buf_commit_pass1`).

use super::head::{find_head, log_is_empty, settle_head_and_tail};
use super::reader::{LogReader, Rec};
use super::report::RecoveryReport;
use crate::format::{
    self, OpHeader, BLF_HDR, XFS_BLF_CANCEL, XFS_LI_BUF, XFS_LI_INODE, XFS_TRANS_HEADER_MAGIC, XLOG_COMMIT_TRANS,
    XLOG_START_TRANS, XLOG_UNMOUNT_TRANS, XLOG_WAS_CONT_TRANS,
};
use crate::units::Lsn;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

#[derive(Clone, Debug, Default)]
pub(super) struct Trans {
    pub(super) tid: u32,
    pub(super) r_lsn: Lsn,
    regions: Vec<Region>,
}

/// A region of a transaction: a slice of one record's data, or the parts of a region split
/// over records joined.
#[derive(Clone, Debug)]
pub(super) enum Region {
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

/// What recovery learns from the log alone (the same for every image with these log bytes):
/// pass 1's report and, for a dirty log, each committed transaction's items and the cancel
/// records of each buffer.
#[derive(Debug)]
pub(super) struct LogWalk {
    pub(super) rep: RecoveryReport,
    pub(super) committed: Vec<(Lsn, Rc<Vec<LogItem>>)>,
    pub(super) cancelled: BTreeMap<u64, u32>,
    /// The first `shared_txns` committed transactions lie wholly in records every state of
    /// the crash point reads alike, walked from the record at `first_blk`: walks with the same
    /// pair share them (`point::Prefix`).
    pub(super) shared_txns: usize,
    pub(super) first_blk: u32,
}

pub(super) fn log_walk<R: LogReader>(img: &R, memo: Option<&SharedPass1Memo>) -> Result<LogWalk, String> {
    let (mut rep, records, shared_records) = match pass1_span(img)? {
        Span::Done(rep) => {
            return Ok(LogWalk {
                rep,
                committed: Vec::new(),
                cancelled: BTreeMap::new(),
                shared_txns: 0,
                first_blk: u32::MAX,
            })
        }
        Span::Dirty { rep, records, shared_records } => (rep, records, shared_records),
    };
    let first_blk = records.first().map_or(u32::MAX, |r| r.blk);
    // The transactions the shared records hold, rebuilt and parsed once per crash point.
    let shared = match memo {
        Some(m) if shared_records > 0 => {
            let key = (first_blk, shared_records);
            let hit = m.borrow().get(&key).cloned();
            Some(hit.unwrap_or_else(|| {
                let sp = Rc::new(SharedPass1::new(&records[..shared_records]));
                m.borrow_mut().insert(key, sp.clone());
                sp
            }))
        }
        _ => None,
    };
    let (mut rb, mut parsed, from) = match shared.as_deref() {
        Some(Err(e)) => return Err(e.clone()),
        Some(Ok(sp)) => {
            (Rebuild { open: sp.open.clone(), committed: Vec::new() }, sp.committed.clone(), shared_records)
        }
        None => (Rebuild::default(), Vec::new(), 0),
    };
    let mut shared_txns = 0;
    for (i, r) in records.iter().enumerate().skip(from) {
        if i == shared_records {
            shared_txns = parsed.len() + rb.committed.len();
        }
        rb.feed(r)?;
    }
    if records.len() <= shared_records {
        shared_txns = parsed.len() + rb.committed.len();
    }
    rep.transactions_uncommitted = rb.open.len() as u32;
    parsed.extend(rb.committed.iter().map(|t| (t.r_lsn, log_items(t).map(Rc::new))));
    // Pass 1's cancel records, then the items: the first transaction that does not parse is
    // the error, as `count_cancels` would meet it.
    let mut cancelled: BTreeMap<u64, u32> = BTreeMap::new();
    let mut committed = Vec::with_capacity(parsed.len());
    for (lsn, items) in parsed {
        let items = items?;
        for it in items.iter().filter(|it| it.cancel) {
            *cancelled.entry(it.blkno).or_default() += 1;
        }
        committed.push((lsn, items));
    }
    Ok(LogWalk { rep, committed, cancelled, shared_txns, first_blk })
}

/// Pass 1 over the records every state of a crash point reads alike, from one first record:
/// the transactions still open after them, and those committed within them, parsed.
#[derive(Debug)]
pub(super) struct SharedPass1 {
    open: BTreeMap<u32, Trans>,
    committed: Vec<(Lsn, Parsed)>,
}

/// A committed transaction's log items, or why they do not parse.
type Parsed = Result<Rc<Vec<LogItem>>, String>;

/// `SharedPass1` by (first record's block, shared records): a rebuild error in them is every
/// walk's error.
pub(super) type SharedPass1Memo = RefCell<BTreeMap<(u32, usize), Rc<Result<SharedPass1, String>>>>;

impl SharedPass1 {
    fn new(records: &[Rc<Rec>]) -> Result<SharedPass1, String> {
        let mut rb = Rebuild::default();
        for r in records {
            rb.feed(r)?;
        }
        let committed = rb.committed.iter().map(|t| (t.r_lsn, log_items(t).map(Rc::new))).collect();
        Ok(SharedPass1 { open: rb.open, committed })
    }
}

/// Where pass 1 stands once head and tail are settled.
enum Span {
    /// Empty or clean: nothing to replay.
    Done(RecoveryReport),
    /// The records from tail to head, the first `shared_records` read alike by every state
    /// of a crash point.
    Dirty { rep: RecoveryReport, records: Vec<Rc<Rec>>, shared_records: usize },
}

fn pass1_span<R: LogReader>(img: &R) -> Result<Span, String> {
    let mut rep = RecoveryReport::blank();
    let head = find_head(img)?;
    rep.head_blk = head;
    if log_is_empty(img, head) {
        rep.empty = true;
        return Ok(Span::Done(rep));
    }
    let span = settle_head_and_tail(img, head, &mut rep)?;
    rep.head_blk = span.head;
    rep.tail_blk = span.tail;
    rep.records = span.records.len() as u32;
    rep.records_found = span.records.iter().map(|r| (r.blk, r.lsn, r.total_bb)).collect();
    rep.clean = unmount_record_last(&span.records);
    if rep.clean {
        // A clean log needs no replay: everything is in place.
        return Ok(Span::Done(rep));
    }
    // Records before the first one a surviving write may change read alike in every state.
    let shared_records = img.shared_records(&span.records);
    Ok(Span::Dirty { rep, records: span.records, shared_records })
}

/// Pass 1 of a log read on its own (`recover_log_region`): head, tail, the records between
/// and the transactions they hold.
pub(super) enum Walk {
    /// Empty or clean: nothing to replay.
    Done(RecoveryReport),
    Replay {
        rep: RecoveryReport,
        committed: Vec<Trans>,
    },
}

pub(super) fn pass1<R: LogReader>(img: &R) -> Result<Walk, String> {
    match pass1_span(img)? {
        Span::Done(rep) => Ok(Walk::Done(rep)),
        Span::Dirty { mut rep, records, .. } => {
            let (committed, uncommitted) = rebuild_transactions(&records)?;
            rep.transactions_uncommitted = uncommitted;
            Ok(Walk::Replay { rep, committed })
        }
    }
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
fn rebuild_transactions(records: &[Rc<Rec>]) -> Result<(Vec<Trans>, u32), String> {
    let mut rb = Rebuild::default();
    for r in records {
        rb.feed(r)?;
    }
    Ok((rb.committed, rb.open.len() as u32))
}

/// Transactions being rebuilt from records in log order: open ones by tid, committed ones in
/// commit order.
#[derive(Clone, Default)]
struct Rebuild {
    open: BTreeMap<u32, Trans>,
    committed: Vec<Trans>,
}

impl Rebuild {
    /// Adds the op headers of record `r`.
    fn feed(&mut self, r: &Rc<Rec>) -> Result<(), String> {
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
            let Some(t) = self.open.get_mut(&oh.tid) else {
                if oh.flags & XLOG_START_TRANS != 0 {
                    self.open.insert(oh.tid, Trans { tid: oh.tid, r_lsn: r.lsn, regions: Vec::new() });
                }
                continue;
            };
            if oh.flags & XLOG_COMMIT_TRANS != 0 {
                self.committed.push(self.open.remove(&oh.tid).expect("present"));
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
        Ok(())
    }
}

/// Pass 1 (`xlog_recover_buf_commit_pass1`): the cancel records of each buffer, by block.
pub(super) fn count_cancels(committed: &[Trans]) -> Result<BTreeMap<u64, u32>, String> {
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

/// One log item of a committed transaction, parsed from its format structure.
#[derive(Debug)]
pub(super) struct LogItem {
    pub(super) is_inode: bool,
    pub(super) blkno: u64,
    /// A stale buffer's `XFS_BLF_CANCEL` record: format structure only.
    pub(super) cancel: bool,
    /// (item id, version) from the first data region.
    pub(super) payload: Option<(u32, u64)>,
}

/// A transaction's regions after its header (`xfs_trans_header`, magic "TRAN"), which must
/// be at least `min_len` bytes.
pub(super) fn after_trans_header(t: &Trans, min_len: usize) -> Result<std::slice::Iter<'_, Region>, String> {
    let mut regions = t.regions.iter();
    let th = regions.next().ok_or("transaction without a header")?;
    if th.len() < min_len || format::le32(th, 0) != XFS_TRANS_HEADER_MAGIC {
        return Err("transaction header magic is wrong".into());
    }
    Ok(regions)
}

/// The transaction's log items: its header checked, each format structure and its regions.
pub(super) fn log_items(t: &Trans) -> Result<Vec<LogItem>, String> {
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
