//! The crash explorer: every disk state a crash at this instant may leave, recovered and checked.
//!
//! Allowed states: stable media, plus any subset of completed-but-unflushed writes (with
//! `crash_model=prefix`: only a completion-order prefix per device, as dm-log-writes replay
//! sees it), plus each in-flight write absent, present or torn at sector granularity (a write
//! whose PREFLUSH had to finish first brings the writes that flush covered). Exhaustive up to the state
//! budget, seeded sampling beyond, deduplicated by content hash.

use crate::device::{IoKind, SectorMap, SECTOR};
use crate::oracle::{Invariant, Oracle};
use crate::recovery::{Fate, Image, Layer, Survivors};
use crate::scenario::CrashModel;
use crate::sim::Sim;
use crate::trace::TraceHasher;
use crate::units::Lsn;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher;

/// Most states enumerated exhaustively at one crash point.
pub const EXHAUSTIVE_MAX: u64 = 1 << 16;

#[derive(Clone, Debug, Serialize)]
pub struct CrashExample {
    pub invariant: Invariant,
    /// What recovery reported, when it failed.
    pub detail: String,
    pub event: u64,
    pub state: u64,
    pub t_ns: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct CrashReport {
    pub crash_points: u64,
    pub crash_states: u64,
    pub duplicates: u64,
    pub violations: BTreeMap<Invariant, u64>,
    pub examples: Vec<CrashExample>,
    pub torn_heads: u64,
    pub transactions_replayed: u64,
    /// Cancel records recovery met (stale buffers), and buffer items it skipped for them.
    pub cancel_records: u64,
    pub buffers_cancelled: u64,
}

impl CrashReport {
    pub fn total_violations(&self) -> u64 {
        self.violations.values().sum()
    }
    fn record(&mut self, name: Invariant, ex: CrashExample) {
        *self.violations.entry(name).or_default() += 1;
        if self.examples.len() < 8 && !self.examples.iter().any(|e| e.invariant == name) {
            self.examples.push(ex);
        }
    }
}

/// One write that a crash may or may not keep.
struct Choice {
    dev: usize,
    sector: u64,
    data: Vec<u8>,
    /// In flight: may also be torn. Cached: kept or lost.
    inflight: bool,
    /// In flight with PREFLUSH: cached writes of this device with cseq < mark must survive.
    preflush_mark: Option<u64>,
    cseq: u64,
}

fn choices(sim: &Sim) -> Vec<Choice> {
    let mut out = Vec::new();
    for (d, dev) in sim.devices().iter().enumerate() {
        for w in dev.cached() {
            out.push(Choice {
                dev: d,
                sector: w.sector,
                data: w.data.clone(),
                inflight: false,
                preflush_mark: None,
                cseq: w.cseq,
            });
        }
        for r in dev.inflight() {
            if let IoKind::Write { preflush, .. } = r.kind {
                out.push(Choice {
                    dev: d,
                    sector: r.sector,
                    data: r.data.clone(),
                    inflight: true,
                    preflush_mark: preflush.then_some(r.flush_mark),
                    cseq: u64::MAX,
                });
            }
        }
    }
    out
}

/// Per crash point: the candidate writes and, per device, which sectors they cover.
struct Candidates {
    writes: Vec<Vec<u8>>,
    index: Vec<BTreeMap<u64, Vec<(u32, u32)>>>,
    /// Content hash of each write, for deduplicating states.
    hashes: Vec<u64>,
}

fn index_choices(ndev: usize, ch: &[Choice]) -> Candidates {
    let mut index = vec![BTreeMap::new(); ndev];
    let mut writes = Vec::with_capacity(ch.len());
    let mut hashes = Vec::with_capacity(ch.len());
    // The caller sorted cached writes (completion order) before in-flight ones: the order
    // they apply in, and the slot order `keep` uses.
    for c in ch {
        let w = writes.len() as u32;
        for k in 0..c.data.len() / SECTOR {
            index[c.dev].entry(c.sector + k as u64).or_insert_with(Vec::new).push((w, k as u32));
        }
        let mut h = TraceHasher::default();
        h.write_u64(c.dev as u64);
        h.write_u64(c.sector);
        h.write(&c.data);
        hashes.push(h.finish());
        writes.push(c.data.clone());
    }
    Candidates { writes, index, hashes }
}

/// A state digit of one write: 0 lost, 1 kept, 2 torn (in flight only).
fn fate_of_digit(d: u64) -> Fate {
    match d {
        0 => Fate::Lost,
        1 => Fate::Kept,
        _ => Fate::Torn,
    }
}

/// Explores the crash states of `sim` as it is now; adds to `report`.
pub fn explore(sim: &Sim, max_states: u64, seed: u64, report: &mut CrashReport) {
    explore_only(sim, max_states, seed, None, report)
}

/// As `explore`, but when `only` names a state index, checks just that state (the same
/// enumeration and sampling run, so the index means what it meant in the full exploration).
pub fn explore_only(sim: &Sim, max_states: u64, seed: u64, only: Option<u64>, report: &mut CrashReport) {
    report.crash_points += 1;
    let event = sim.events();
    let mut ch = choices(sim);
    // Same order as the candidate slots: cached first, then in flight.
    ch.sort_by_key(|c| c.inflight);
    let ndev = sim.devices().len();
    let cand = index_choices(ndev, &ch);
    // Digits of a state: subset: one per write (cached: lost/kept; in flight: absent/present/
    // torn). prefix: one cut per device (how many of its cached writes survive, in completion
    // order), then one per in-flight write, which may land only past an intact prefix.
    let prefix = sim.scenario().crash_model == CrashModel::Prefix;
    let mut cached_on = vec![0u64; ndev];
    let mut pos = vec![0u64; ch.len()];
    for (i, c) in ch.iter().enumerate().filter(|(_, c)| !c.inflight) {
        pos[i] = cached_on[c.dev];
        cached_on[c.dev] += 1;
    }
    let radix: Vec<u64> = if prefix {
        cached_on.iter().map(|n| n + 1).chain(ch.iter().filter(|c| c.inflight).map(|_| 3)).collect()
    } else {
        ch.iter().map(|c| if c.inflight { 3 } else { 2 }).collect()
    };
    let mut digits = vec![0u64; radix.len()];
    let total = radix.iter().try_fold(1u64, |acc, &r| acc.checked_mul(r)).unwrap_or(u64::MAX);
    let budget = max_states.clamp(1, EXHAUSTIVE_MAX);
    let exhaustive = total <= budget;
    let n_states = if exhaustive { total } else { budget };
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ event.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let head = Lsn::new(sim.xlog().curr_cycle, sim.xlog().curr_block);
    let oracle = Oracle::new(sim.history(), head);
    let sim_level: Vec<Invariant> = [
        (sim.semantics_violations() > 0, Invariant::DeviceSemantics),
        (sim.live_overwrites() > 0, Invariant::NoLiveOverwrite),
        (sim.checkpoints_unstable_at_completion() > 0, Invariant::CommitImpliesCheckpoint),
        (sim.acked_unstable() > 0, Invariant::Durability),
        (sim.is_hung(), Invariant::Liveness),
    ]
    .into_iter()
    .filter_map(|(bad, n)| bad.then_some(n))
    .collect();
    let mut seen = BTreeSet::new();
    let mut keep = vec![Fate::Lost; ch.len()];
    let mut tears: Vec<u64> = vec![0; ch.len()];
    let mut out = Vec::new();
    for s in 0..n_states {
        if exhaustive {
            let mut x = s;
            for (d, &r) in digits.iter_mut().zip(&radix) {
                *d = x % r;
                x /= r;
            }
        } else {
            // Sampled: the two extremes first (nothing unflushed survives, everything lands),
            // as those are where lost and reordered writes show most; then random states.
            for (d, &r) in digits.iter_mut().zip(&radix) {
                *d = match s {
                    0 => 0,
                    1 => r - 1,
                    _ => rng.next_u64() % r,
                };
            }
        }
        if prefix {
            let mut next_inflight = ndev;
            for (i, c) in ch.iter().enumerate() {
                keep[i] = if c.inflight {
                    let d = digits[next_inflight];
                    next_inflight += 1;
                    if digits[c.dev] == cached_on[c.dev] {
                        fate_of_digit(d)
                    } else {
                        Fate::Lost
                    }
                } else if pos[i] < digits[c.dev] {
                    Fate::Kept
                } else {
                    Fate::Lost
                };
            }
        } else {
            for (p, &d) in keep.iter_mut().zip(&digits) {
                *p = fate_of_digit(d);
            }
        }
        for (i, c) in ch.iter().enumerate() {
            let n = (c.data.len() / SECTOR).max(1);
            // A tear keeps the first half (exhaustive) or a random non-empty subset of sectors.
            tears[i] = if exhaustive || n == 1 { u64::MAX >> (64 - (n / 2).clamp(1, 63)) } else { rng.next_u64() | 1 };
        }
        // A surviving PREFLUSH write implies its flush finished first.
        let mut mark = vec![0u64; ndev];
        for (i, c) in ch.iter().enumerate() {
            if let (Some(m), true) = (c.preflush_mark, keep[i] != Fate::Lost) {
                mark[c.dev] = mark[c.dev].max(m);
            }
        }
        let mut h = 0u64;
        for (i, c) in ch.iter().enumerate() {
            if !c.inflight && c.cseq < mark[c.dev] {
                keep[i] = Fate::Kept;
            }
            if keep[i] != Fate::Lost {
                let t = if keep[i] == Fate::Torn { tears[i] } else { u64::MAX };
                h = h.wrapping_add((cand.hashes[i] ^ t).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17));
            }
        }
        if !seen.insert(h) {
            report.duplicates += 1;
            continue;
        }
        if only.is_some_and(|o| o != s) {
            continue;
        }
        report.crash_states += 1;
        let img = Image {
            devs: sim
                .devices()
                .iter()
                .enumerate()
                .map(|(d, dev)| Layer {
                    base: dev.stable(),
                    over: SectorMap::new(),
                    survivors: Some(Survivors {
                        index: &cand.index[d],
                        writes: &cand.writes,
                        keep: &keep,
                        tears: &tears,
                    }),
                })
                .collect(),
            data_dev: sim.data_device(),
            log_start: sim.log_start_sector(),
            log_bb: sim.geometry().log_bb,
        };
        out.clear();
        out.extend(sim_level.iter().copied());
        let rep = oracle.check(&img, s % 16 == 0, &mut out);
        let detail = match &rep {
            Ok(r) => {
                report.torn_heads += r.torn_head_trimmed as u64;
                report.transactions_replayed += r.transactions_replayed as u64;
                report.cancel_records += r.cancel_records as u64;
                report.buffers_cancelled += r.buffers_cancelled as u64;
                format!(
                    "head {} tail {} records {} replayed {}; {}",
                    r.head_blk, r.tail_blk, r.records, r.transactions_replayed, r.why
                )
            }
            Err(e) => e.clone(),
        };
        out.sort_unstable();
        out.dedup();
        for &name in &out {
            report.record(
                name,
                CrashExample { invariant: name, detail: detail.clone(), event, state: s, t_ns: sim.now() },
            );
        }
    }
}
