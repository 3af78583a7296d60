//! Real crash states: disk images built from a recorded block stream the way the model's
//! crash models build them, each mounted by the real kernel (its recovery runs) and judged.
//!
//! - `prefix`: every write completed before a flush, nothing after it (dm-log-writes replay).
//! - `subset`: that prefix plus a random subset of the writes completed after the flush and
//!   before the next one (a volatile cache may persist any of them).
//! - `middle-iclog-lost`: the exposure the model reports under `subset`: within one unflushed
//!   window, every log write survives but one that has more than `XLOG_MAX_ICLOGS` (8) later
//!   log writes behind it.

use super::load::{Durable, PATTERN};
use super::readers;
use super::recorder::{Io, Stream};
use serde::Serialize;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A log write's first record header: its LSN, the tail LSN it carries, and its length in blocks.
#[derive(Clone, Copy, Debug)]
struct RecHead {
    cycle: u32,
    block: u32,
    tail_cycle: u32,
    tail_block: u32,
    blocks: u32,
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn rec_head(data: &[u8]) -> Option<RecHead> {
    if data.len() < 512 || be32(data, 0) != 0xFEED_BABE {
        return None;
    }
    let h_len = be32(data, 12);
    let (lsn_c, lsn_b, tail_c, tail_b) = (be32(data, 16), be32(data, 20), be32(data, 24), be32(data, 28));
    Some(RecHead {
        cycle: lsn_c,
        block: lsn_b,
        tail_cycle: tail_c,
        tail_block: tail_b,
        blocks: (data.len() / 512) as u32,
    })
    .filter(|_| h_len > 0)
}

/// Log writes that must survive behind the lost one: recovery's torn-head search looks back
/// only `XLOG_MAX_ICLOGS` iclogs from the head, so a hole further back is not trimmed.
const LATER_SURVIVORS: usize = 9;

#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub kind: &'static str,
    /// The stream index of the flush the state is cut at, and writes applied in all.
    pub flush_index: usize,
    pub writes: usize,
    /// Unflushed writes after the flush: how many exist and how many this state keeps.
    pub unflushed: usize,
    pub unflushed_kept: usize,
    pub mount: String,
    pub xfs_repair_n: String,
    /// Fsyncs returned before the cut: their files checked, and those missing or short.
    pub fsynced_checked: usize,
    pub fsynced_lost: Vec<String>,
    /// What the kernel said while mounting (XFS lines of the kernel log).
    pub kernel_log: Vec<String>,
    /// The model's recovery over the same image before the kernel touched it (`recover
    /// --image`): head, tail and records, or the damage it reports.
    pub model_recovery: serde_json::Value,
    /// `xfs_logprint -t` over the same bytes: tail, head, state and records.
    pub xfs_logprint: serde_json::Value,
    /// The kernel's recovery, from its tracepoints: head, tail, records walked and
    /// transactions replayed (`{}` if it did not run).
    pub kernel_recovery: serde_json::Value,
    /// Named checks of the model's recovery against the kernel's: head, tail, records, and the
    /// transactions replayed, in order, with their items by type (null if either did not recover).
    pub model_recovery_matches_kernel: Option<serde_json::Value>,
    /// The model's recovery succeeds exactly when the kernel's mount does.
    pub model_agrees_with_kernel: bool,
    /// With `--keep DIR`: the image of a state on which they disagree, as the crash left it.
    pub kept_image: Option<String>,
}

impl Verdict {
    /// The model's recovery found what the kernel's did and would replay the same
    /// transactions with the same items.
    pub fn replay_matches(&self) -> bool {
        self.model_recovery_matches_kernel
            .as_ref()
            .is_some_and(|m| ["head_blk", "tail_blk", "records", "transactions"].iter().all(|k| m[*k] == true))
    }

    pub fn ok(&self) -> bool {
        self.mount == "recovered" && self.xfs_repair_n == "clean" && self.fsynced_lost.is_empty()
    }
}

/// A tiny seeded generator for subset choices (the states are reproducible from the stream).
struct Pick(u64);
impl Pick {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// What the crash states are built from and checked against.
pub struct Crashes<'a> {
    pub stream: &'a Stream,
    pub durable: &'a [Durable],
    pub dir: PathBuf,
    pub size: u64,
    pub mount_opts: String,
    /// The byte range of the internal log in the image (writes there are iclog writes).
    pub log: (u64, u64),
    /// Where to keep the images of states on which the model and the kernel disagree.
    pub keep: Option<PathBuf>,
    /// Writes a device may complete before a flush the stream shows them after: by flush
    /// stream index, the writes issued before that flush completed (from `block_rq_issue` and
    /// `block_rq_complete`, see `reorderable`).
    pub early: std::collections::BTreeMap<usize, Vec<usize>>,
}

/// One block request event of the recorded device, in trace order.
struct BlockEv {
    complete: bool,
    flush: bool,
    /// A write with PREFLUSH: the block layer sends its data only after the flush completes.
    preflush: bool,
    sector: u64,
    nr: u64,
}

fn block_events(trace: &str) -> Vec<BlockEv> {
    let mut out = Vec::new();
    for l in trace.lines() {
        let (complete, rest) = match (l.split_once(" block_rq_issue: "), l.split_once(" block_rq_complete: ")) {
            (Some((_, r)), _) => (false, r),
            (_, Some((_, r))) => (true, r),
            _ => continue,
        };
        // "7,0 WSM 32768 () 4194866 + 64 be,0,4 [comm]" / "7,0 FF () 0 + 0 none,0,0 [0]"
        let w: Vec<&str> = rest.split_whitespace().collect();
        let Some(plus) = w.iter().position(|x| *x == "+") else { continue };
        let (Some(sector), Some(nr)) =
            (w.get(plus - 1).and_then(|x| x.parse().ok()), w.get(plus + 1).and_then(|x| x.parse().ok()))
        else {
            continue;
        };
        let rwbs = w.get(1).copied().unwrap_or("");
        let flush = rwbs == "FF" || rwbs == "FN";
        out.push(BlockEv { complete, flush, preflush: !flush && rwbs.starts_with('F'), sector, nr });
    }
    out
}

/// For each flush of the stream (from `from` on), the writes the stream shows completing
/// after it that were issued before it completed: a multi-queue device may complete those
/// first. The recorder serves requests in arrival order, so the stream never does.
pub fn reorderable(stream: &Stream, from: usize, trace: &str) -> std::collections::BTreeMap<usize, Vec<usize>> {
    let evs = block_events(trace);
    // Trace position of each flush completion, matched in order to the stream's flushes.
    let flush_done: Vec<usize> =
        evs.iter().enumerate().filter(|(_, e)| e.complete && e.flush).map(|(i, _)| i).collect();
    let stream_flushes: Vec<usize> = (from..stream.ios.len()).filter(|&i| matches!(stream.ios[i], Io::Flush)).collect();
    // Issue position of each write, matched in order by (sector, sectors).
    let mut issues: std::collections::BTreeMap<(u64, u64), std::collections::VecDeque<usize>> = Default::default();
    for (i, e) in evs.iter().enumerate().filter(|(_, e)| !e.complete && !e.flush) {
        // A PREFLUSH write still takes its place in the matching, but never moves earlier.
        issues.entry((e.sector, e.nr)).or_default().push_back(if e.preflush { usize::MAX } else { i });
    }
    let mut issued_at = std::collections::BTreeMap::new();
    for i in from..stream.ios.len() {
        if let Io::Write { offset, data } = &stream.ios[i] {
            if let Some(q) = issues.get_mut(&(offset / 512, data.len() as u64 / 512)) {
                if let Some(t) = q.pop_front() {
                    issued_at.insert(i, t);
                }
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    for (k, &fi) in stream_flushes.iter().enumerate() {
        let Some(&done) = flush_done.get(k) else { break };
        let early: Vec<usize> = issued_at.iter().filter(|&(&i, &t)| i > fi && t < done).map(|(&i, _)| i).collect();
        if !early.is_empty() {
            out.insert(fi, early);
        }
    }
    out
}

impl Crashes<'_> {
    fn flushes(&self) -> Vec<usize> {
        self.stream.ios.iter().enumerate().filter(|(_, io)| matches!(io, Io::Flush)).map(|(i, _)| i).collect()
    }

    /// Writes in `(from, to)` (stream indices), in order.
    fn writes_between(&self, from: usize, to: usize) -> Vec<usize> {
        (from + 1..to).filter(|&i| matches!(self.stream.ios[i], Io::Write { .. })).collect()
    }

    fn is_log(&self, i: usize) -> bool {
        matches!(&self.stream.ios[i], Io::Write { offset, .. } if *offset >= self.log.0 && *offset < self.log.0 + self.log.1)
    }

    /// The first exposure the model reports under upstream's flush placement: a log write
    /// completed after flush `f` (so only a volatile cache holds it) that lands on blocks the
    /// durable log still needs at `f` (between the tail and the head of the newest record that
    /// flush made stable). Returns (index into `flushes`, the write's stream index).
    fn overwrite_exposure(&self, flushes: &[usize]) -> Option<(usize, usize)> {
        let log_bb = (self.log.1 / 512) as u32;
        // The cycle each durable log block carries (a header block: its h_cycle).
        let mut cycles = vec![0u32; log_bb as usize];
        let block_cycle = |blk: &[u8]| if be32(blk, 0) == 0xFEED_BABE { be32(blk, 4) } else { be32(blk, 0) };
        let mut newest: Option<RecHead> = None;
        let mut next = 0usize;
        for (c, &f) in flushes.iter().enumerate() {
            // Everything completed before flush `f` is durable.
            while next <= f {
                if let (Io::Write { offset, data }, true) = (&self.stream.ios[next], self.is_log(next)) {
                    let first = ((offset - self.log.0) / 512) as usize;
                    for (k, blk) in data.chunks_exact(512).enumerate() {
                        cycles[(first + k) % log_bb as usize] = block_cycle(blk);
                    }
                    if let Some(h) = rec_head(data) {
                        if newest.is_none_or(|n| (h.cycle, h.block) > (n.cycle, n.block)) {
                            newest = Some(h);
                        }
                    }
                }
                next += 1;
            }
            let (Some(n), Some(&to)) = (newest, flushes.get(c + 1)) else { continue };
            let (tail, head) = ((n.tail_cycle, n.tail_block), (n.cycle, (n.block + n.blocks) % log_bb));
            // The cycle a block of the live log (tail to head, possibly across the wrap) holds.
            let live_cycle = |b: u32| -> Option<u32> {
                if tail.0 == head.0 {
                    (b >= tail.1 && b < head.1).then_some(head.0)
                } else if b >= tail.1 {
                    Some(tail.0)
                } else {
                    (b < head.1).then_some(head.0)
                }
            };
            // What a crash just before flush `to` completes may hold: the writes completed
            // since `f`, and those issued before `to` completed that the device could finish first.
            let mut candidates = self.writes_between(f, to);
            candidates.extend(self.early.get(&to).into_iter().flatten().copied());
            for i in candidates {
                let Io::Write { offset, data } = &self.stream.ios[i] else { continue };
                if !self.is_log(i) {
                    continue;
                }
                let first = ((offset - self.log.0) / 512) as u32;
                // Overwriting live data: the block holds the live log's cycle, and this write a
                // later one (filling a block the live log has not reached is not that).
                let hits = data.chunks_exact(512).enumerate().any(|(k, blk)| {
                    let b = (first + k as u32) % log_bb;
                    live_cycle(b).is_some_and(|lc| cycles[b as usize] == lc && block_cycle(blk) > lc)
                });
                if hits {
                    return Some((c, i));
                }
            }
        }
        None
    }

    /// The states to try: `points` prefixes spread over the flushes from `from` on, each with
    /// `subsets` random subsets, and the middle-iclog exposure where a window allows it.
    pub fn run(&self, from: usize, points: usize, subsets: usize, seed: u64) -> Result<Vec<Verdict>, String> {
        let flushes: Vec<usize> = self.flushes().into_iter().filter(|&f| f >= from).collect();
        if flushes.len() < 2 {
            return Err(format!("the recorded run has {} flushes after it started: too few to cut at", flushes.len()));
        }
        let step = (flushes.len() - 1).div_ceil(points.max(1)).max(1);
        // (index into `flushes`, whether this cut is an exposure rather than a spread cut)
        let mut plan: Vec<(usize, bool)> =
            (0..flushes.len() - 1).step_by(step).take(points).map(|c| (c, false)).collect();
        let hole = (0..flushes.len() - 1).find(|&c| {
            let pending = self.writes_between(flushes[c], flushes[c + 1]);
            pending.iter().filter(|&&i| self.is_log(i)).count() > LATER_SURVIVORS + 1
        });
        if let Some(c) = hole {
            plan.push((c, true));
        }
        let overwrite = self.overwrite_exposure(&flushes);
        if let Some((c, _)) = overwrite {
            plan.push((c, true));
        }
        plan.sort();
        plan.dedup();
        let work = self.dir.join("crash-base.img");
        let base = OpenOptions::new().create(true).truncate(true).write(true).read(true).open(&work);
        let base = base.map_err(|e| format!("{}: {e}", work.display()))?;
        base.set_len(self.size).map_err(|e| e.to_string())?;
        let mut applied = 0usize;
        let mut pick = Pick(seed);
        let mut out = Vec::new();
        for (c, exposure) in plan {
            let (f, next) = (flushes[c], flushes[c + 1]);
            // Bring the base image up to this flush: everything completed before it.
            while applied <= f {
                if let Io::Write { offset, data } = &self.stream.ios[applied] {
                    base.write_all_at(data, *offset).map_err(|e| e.to_string())?;
                }
                applied += 1;
            }
            let pending = self.writes_between(f, next);
            let writes = (0..=f).filter(|&i| matches!(self.stream.ios[i], Io::Write { .. })).count();
            if exposure {
                if let Some((oc, w)) = overwrite.filter(|&(oc, _)| oc == c) {
                    // Only the overwriting log write survives of the unflushed ones.
                    let _ = oc;
                    out.push(self.judge("log-overwrites-unflushed", &work, f, writes, &pending, &[w])?);
                }
                if hole == Some(c) {
                    let logs: Vec<usize> = pending.iter().copied().filter(|&i| self.is_log(i)).collect();
                    let lost = logs[logs.len() - 1 - LATER_SURVIVORS];
                    let keep: Vec<usize> = pending.iter().copied().filter(|&i| i != lost).collect();
                    out.push(self.judge("middle-iclog-lost", &work, f, writes, &pending, &keep)?);
                    out.push(self.judge("middle-iclog-kept", &work, f, writes, &pending, &pending)?);
                }
                continue;
            }
            out.push(self.judge("prefix", &work, f, writes, &pending, &[])?);
            for _ in 0..subsets {
                let keep: Vec<usize> = pending.iter().copied().filter(|_| pick.next().is_multiple_of(2)).collect();
                out.push(self.judge("subset", &work, f, writes, &pending, &keep)?);
            }
        }
        let _ = fs::remove_file(&work);
        Ok(out)
    }

    /// Copies the base, adds `keep` of the pending writes, mounts it (the kernel's recovery),
    /// checks the fsynced files, unmounts and runs `xfs_repair -n`.
    fn judge(
        &self,
        kind: &'static str,
        base: &Path,
        flush: usize,
        writes: usize,
        pending: &[usize],
        keep: &[usize],
    ) -> Result<Verdict, String> {
        let img = self.dir.join("crash-state.img");
        let st = Command::new("cp").args(["--sparse=always"]).arg(base).arg(&img).status();
        if !st.is_ok_and(|s| s.success()) {
            return Err(format!("cp {} {}: failed", base.display(), img.display()));
        }
        {
            let f = OpenOptions::new().write(true).open(&img).map_err(|e| format!("{}: {e}", img.display()))?;
            for &i in keep {
                if let Io::Write { offset, data } = &self.stream.ios[i] {
                    f.write_all_at(data, *offset).map_err(|e| e.to_string())?;
                }
            }
        }
        let (mut model_recovery, xfs_logprint) = (readers::model_recover(&img), readers::logprint(&img, None));
        // A copy before the kernel's recovery writes to it, kept only if the verdicts differ.
        let pristine = self.keep.as_ref().map(|_| self.dir.join("crash-pristine.img"));
        if let Some(p) = &pristine {
            let _ = Command::new("cp").args(["--sparse=always"]).arg(&img).arg(p).status();
        }
        let dev = super::rig::losetup(&img)?;
        let _detach = Detach(dev.clone());
        let mnt = self.dir.join("crash-mnt");
        fs::create_dir_all(&mnt).map_err(|e| e.to_string())?;
        let mark = kmsg_mark();
        let (mounted, kernel_recovery, model_recovery_matches_kernel) =
            super::replay::mount_traced(dev.trim_start_matches("/dev/"), &mut model_recovery, || {
                Command::new("mount").args(["-t", "xfs", "-o", &self.mount_opts]).arg(&dev).arg(&mnt).output()
            })?;
        let mut v = Verdict {
            kind,
            flush_index: flush,
            writes: writes + keep.len(),
            unflushed: pending.len(),
            unflushed_kept: keep.len(),
            mount: String::new(),
            xfs_repair_n: String::new(),
            fsynced_checked: 0,
            fsynced_lost: Vec::new(),
            kernel_log: Vec::new(),
            model_recovery,
            xfs_logprint,
            kernel_recovery,
            model_recovery_matches_kernel,
            model_agrees_with_kernel: false,
            kept_image: None,
        };
        match mounted {
            Ok(o) if o.status.success() => {
                v.mount = "recovered".into();
                // Every fsync that returned before the flush the state is cut at (it saw at
                // most `flush + 1` requests) must have its file, and its bytes. A file's
                // largest promise covers its smaller ones: one check per file.
                let mut promised: std::collections::BTreeMap<&str, u64> = Default::default();
                for d in self.durable.iter().filter(|d| d.after <= flush as u64 + 1) {
                    v.fsynced_checked += 1;
                    let m = promised.entry(d.path.as_str()).or_default();
                    *m = (*m).max(d.min_size);
                }
                for (path, min_size) in promised {
                    if !holds(&mnt.join(path), min_size) {
                        v.fsynced_lost.push(format!("{path} ({min_size} bytes)"));
                    }
                }
                let _ = Command::new("umount").arg(&mnt).status();
            }
            Ok(o) => {
                v.mount = format!("failed: {}", String::from_utf8_lossy(&o.stderr).lines().next().unwrap_or("").trim())
            }
            Err(e) => v.mount = format!("failed: {e}"),
        }
        v.kernel_log = kmsg_since(mark);
        let model_ok = v.model_recovery.get("head_blk").is_some();
        v.model_agrees_with_kernel = model_ok == (v.mount == "recovered");
        if let (Some(keep), Some(p)) = (&self.keep, &pristine) {
            if !v.model_agrees_with_kernel {
                let _ = fs::create_dir_all(keep);
                let name = keep.join(format!("{kind}-flush{flush}-kept{}.img", v.unflushed_kept));
                let _ = fs::rename(p, &name);
                v.kept_image = Some(name.display().to_string());
            }
        }
        v.xfs_repair_n = readers::repair_n(&dev, None);
        Ok(v)
    }
}

/// Detaches a crash state's loop device however `judge` ends.
struct Detach(String);
impl Drop for Detach {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

fn holds(path: &Path, min_size: u64) -> bool {
    let Ok(f) = File::open(path) else { return false };
    if min_size == 0 {
        return true;
    }
    let mut buf = vec![0u8; min_size as usize];
    f.read_exact_at(&mut buf, 0).is_ok() && buf.iter().all(|&b| b == PATTERN)
}

/// Kernel log lines so far (their count), to read what a mount says.
fn kmsg_mark() -> usize {
    dmesg().len()
}

fn kmsg_since(mark: usize) -> Vec<String> {
    dmesg().into_iter().skip(mark).filter(|l| l.contains("XFS")).take(20).collect()
}

fn dmesg() -> Vec<String> {
    let out = Command::new("dmesg").output().map(|o| o.stdout).unwrap_or_default();
    String::from_utf8_lossy(&out).lines().map(|l| l.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG_AT: u64 = 1 << 20;

    /// A log write of `blocks` blocks at `block`: a record header (LSN cycle:block, tail) then
    /// blocks stamped with the cycle, as iclog writes are.
    fn record(cycle: u32, block: u32, tail: (u32, u32), blocks: u32) -> Io {
        let mut d = vec![0u8; blocks as usize * 512];
        for (k, blk) in d.chunks_exact_mut(512).enumerate() {
            blk[0..4].copy_from_slice(&cycle.to_be_bytes());
            if k == 0 {
                blk[0..4].copy_from_slice(&0xFEED_BABEu32.to_be_bytes());
                blk[4..8].copy_from_slice(&cycle.to_be_bytes());
                blk[8..12].copy_from_slice(&2u32.to_be_bytes());
                blk[12..16].copy_from_slice(&((blocks - 1) * 512).to_be_bytes());
                for (at, v) in [(16, cycle), (20, block), (24, tail.0), (28, tail.1)] {
                    blk[at..at + 4].copy_from_slice(&v.to_be_bytes());
                }
            }
        }
        Io::Write { offset: LOG_AT + block as u64 * 512, data: d }
    }

    fn exposure(ios: Vec<Io>, early: BTreeMap<usize, Vec<usize>>) -> Option<(usize, usize)> {
        let stream = Stream { ios, bytes: 0, overflow: false };
        let c = Crashes {
            stream: &stream,
            durable: &[],
            dir: PathBuf::from("/nonexistent"),
            size: 0,
            mount_opts: String::new(),
            log: (LOG_AT, 64 * 512),
            keep: None,
            early,
        };
        let flushes = c.flushes();
        c.overwrite_exposure(&flushes)
    }

    use std::collections::BTreeMap;

    #[test]
    fn issue_order_from_a_6_18_trace_names_the_writes_a_device_may_complete_first() {
        // As this machine's kernel printed them (loop device 7:0, 64-sector iclog writes).
        let trace = "\
 kworker/u8:2-4487 [000] ..... 23210.463000: block_rq_issue: 7,0 FF 0 () 0 + 0 none,0,0 [kworker/u8:2]
 kworker/u8:2-4487 [000] ..... 23210.463010: block_rq_issue: 7,0 WSM 32768 () 2097733 + 64 be,0,4 [kworker/u8:2]
 ksoftirqd/0-14    [000] .Ns.. 23210.463061: block_rq_complete: 7,0 FF () 18446744073709551615 + 0 none,0,0 [0]
 kworker/0:0H-10   [000] ..... 23210.463074: block_rq_issue: 7,0 WSM 32768 () 2097221 + 64 be,0,4 [kworker/0:0H]
 ksoftirqd/0-14    [000] ..s.. 23210.463145: block_rq_complete: 7,0 WSM () 2097221 + 64 be,0,4 [0]
 ksoftirqd/0-14    [000] ..s.. 23210.463150: block_rq_complete: 7,0 WSM () 2097733 + 64 be,0,4 [0]
";
        let w = |sector: u64| Io::Write { offset: sector * 512, data: vec![0; 64 * 512] };
        // Completion order as the recorder saw it: the flush, then both writes.
        let stream = Stream { ios: vec![Io::Flush, w(2097221), w(2097733)], bytes: 0, overflow: false };
        let early = reorderable(&stream, 0, trace);
        // 2097733 was issued before the flush completed; 2097221 (the start iclog) after.
        assert_eq!(early, BTreeMap::from([(0usize, vec![2usize])]));
    }

    #[test]
    fn a_log_write_over_the_durable_live_log_is_found_and_filling_ahead_is_not() {
        // Durable at the first flush: records at 10 (30 blocks) and 40 (8), tail 1:10, head 1:48.
        let base = vec![record(1, 10, (1, 10), 30), record(1, 40, (1, 10), 8), Io::Flush];
        // Filling ahead of the head, then wrapping to block 0 short of the tail: both harmless.
        let mut ios = base.clone();
        ios.extend([record(1, 48, (1, 10), 16), record(2, 0, (1, 40), 10), Io::Flush]);
        assert_eq!(exposure(ios, BTreeMap::new()), None);
        // Wrapping onto blocks 10..16 while the durable tail still needs them.
        let mut ios = base.clone();
        ios.extend([record(1, 48, (1, 10), 16), record(2, 0, (1, 40), 16), Io::Flush]);
        assert_eq!(exposure(ios, BTreeMap::new()), Some((0, 4)));
        // After the next flush: the same write is only a danger if a device could complete it
        // before that flush (issued earlier), per the issue order.
        let mut ios = base.clone();
        ios.extend([record(1, 48, (1, 10), 16), Io::Flush, record(2, 0, (1, 40), 16), Io::Flush]);
        assert_eq!(exposure(ios.clone(), BTreeMap::new()), None, "completed after a flush that made 48.. durable");
        let early = BTreeMap::from([(4usize, vec![5usize])]);
        assert!(exposure(ios, early).is_some(), "issued before the flush at 4 completed: it may land first");
    }
}
