//! Finding the head and the tail (`xlog_find_head`, `xlog_find_tail`, `xlog_verify_head`,
//! `xlog_verify_tail`): the head by cycle numbers, the tail from the last record's header,
//! then a walk from tail to head that trims a torn head and skips an overwritten tail.

use super::reader::{dist, heads_of, is_header, LogReader, Rec};
use super::report::RecoveryReport;
use crate::format::{self, rh};
use crate::units::btobb;
use std::collections::BTreeMap;
use std::rc::Rc;

/// `XLOG_MAX_ICLOGS`: how many records back from the head a torn write may reach.
const XLOG_MAX_ICLOGS: usize = format::XLOG_MAX_ICLOGS as usize;

/// `xlog_find_cycle_start`: binary search for the first block carrying `cycle`.
fn find_cycle_start<R: LogReader>(img: &R, mut first: u32, mut last: u32, cycle: u32) -> u32 {
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
fn find_verify_cycle<R: LogReader>(img: &R, start: u32, n: u32, stop: u32) -> Option<u32> {
    img.first_block_of_cycle(start, n, stop)
}

/// `xlog_find_verify_log_record`: if `head` lands inside a record, move it to its header.
/// Near block 0 the search goes on from the physical end of the log (a record that wraps).
/// `None`: no record header in the `max_back` blocks before `head`.
fn verify_log_record<R: LogReader>(img: &R, head: u32, max_back: u32) -> Option<u32> {
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
        let log_bb = img.log_bb();
        for i in (log_bb.saturating_sub(max_back - head)..log_bb).rev() {
            if let Some(whole) = check(i, log_bb - i + head) {
                return Some(if whole { head } else { i });
            }
        }
    }
    None
}

/// `xlog_find_zeroed`: Some(first zero block) when the log has never wrapped.
fn find_zeroed<R: LogReader>(img: &R) -> Result<Option<u32>, String> {
    let log_bb = img.log_bb();
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
pub(super) fn find_head<R: LogReader>(img: &R) -> Result<u32, String> {
    if let Some(b) = find_zeroed(img)? {
        return Ok(b);
    }
    let log_bb = img.log_bb();
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

/// A log never written: the head is block 0 and the whole log has cycle 0.
pub(super) fn log_is_empty<R: LogReader>(img: &R, head: u32) -> bool {
    head == 0 && format::sector_cycle(&img.log_block(head)) == 0 && matches!(find_zeroed(img), Ok(Some(0)))
}

/// Where `xlog_verify_head`'s CRC pass starts: the `XLOG_MAX_ICLOGS`-th block back from `head`
/// that starts with the header magic number (`xlog_rseek_logrec_hdr`), or `tail` if fewer.
fn head_window<R: LogReader>(img: &R, head: u32, tail: u32) -> u32 {
    let mut headers = 0;
    for k in 1..=dist(img.log_bb(), tail, head) {
        let blk = (head + img.log_bb() - k) % img.log_bb();
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
fn last_header_before<R: LogReader>(img: &R, head: u32) -> Option<u32> {
    (1..=img.log_bb()).map(|k| (head + img.log_bb() - k) % img.log_bb()).find(|&b| img.has_magic(b))
}

/// What pass 1 learns of a block, worked out once per recovery: a record header's length in
/// blocks and its CRC verdict (settling the head and tail walks the same records many times).
struct Probe<'i, R> {
    img: &'i R,
    seen: BTreeMap<u32, Option<(u32, bool)>>,
}

/// A record as pass 1 walks it: (block, length in blocks, CRC good).
type RecAt = (u32, u32, bool);

impl<R: LogReader> Probe<'_, R> {
    fn record(&mut self, blk: u32) -> Option<(u32, bool)> {
        let img = self.img;
        *self.seen.entry(blk).or_insert_with(|| img.record(blk).map(|r| (r.total_bb, r.crc_ok)))
    }

    /// Records from `tail` up to `head`, in order; `Err((block, why))` where no record starts.
    fn walk(&mut self, tail: u32, head: u32) -> Result<Vec<RecAt>, (u32, String)> {
        let log_bb = self.img.log_bb();
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
        let log_bb = self.img.log_bb();
        let n = dist(log_bb, b, head);
        (1..n).map(|k| (b + k) % log_bb).find(|&x| self.record(x).is_some_and(|(_, ok)| ok))
    }
}

/// The live log recovery settled on: intact records from `tail` up to `head`.
pub(super) struct LogSpan {
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) records: Vec<Rc<Rec>>,
}

/// Tail from the last record before the head, then a walk to the head verifying CRCs: a bad
/// record near the head is a torn write (the head moves back over it); a missing or bad
/// record near the head reached from the tail means iclogs that landed past a torn head
/// overwrote the tail (the tail moves on a record). Notes both in `rep`.
pub(super) fn settle_head_and_tail<R: LogReader>(
    img: &R,
    mut head: u32,
    rep: &mut RecoveryReport,
) -> Result<LogSpan, String> {
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
        if tries > img.log_bb() as usize {
            return Err("could not settle the log head and tail".into());
        }
        let last = match last_for {
            Some((h, last)) if h == head => last,
            _ => last_header_before(img, head).ok_or("no record header found in a dirty log")?,
        };
        last_for = Some((head, last));
        let rec = img.record(last).ok_or_else(|| format!("bad record header at log block {last}"))?;
        let max_inflight = XLOG_MAX_ICLOGS as u32 * btobb(format::be32(&img.log_block(last), rh::SIZE) as u64) as u32;
        tail = skip_tail_to.unwrap_or(rec.tail.block());
        rep.tail_lsn = rec.tail;
        rep.head_lsn = rec.lsn;
        if tail >= img.log_bb() {
            return Err(format!("tail block {tail} outside the log"));
        }
        let near_head = |b: u32| dist(img.log_bb(), head, b) <= max_inflight;
        let walked = probe.walk(tail, head);
        records = match walked {
            Ok(r) => r,
            Err((b, _))
                if b != head
                    && dist(img.log_bb(), tail, b) >= dist(img.log_bb(), tail, head_window(img, head, tail)) =>
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
        .map(|&(blk, _, _)| img.record(blk).ok_or_else(|| format!("bad record header at log block {blk}")))
        .collect::<Result<Vec<_>, String>>()?;
    if let Some(t) = skip_tail_to {
        if let Some(r) = records.first() {
            debug_assert_eq!(r.blk, t);
            rep.tail_lsn = r.lsn;
        }
    }
    Ok(LogSpan { head, tail, records })
}
