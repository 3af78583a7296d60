//! The crash explorer: every disk state a crash at this instant may leave, recovered and checked.
//!
//! Allowed states: stable media, plus any subset of completed-but-unflushed writes (with
//! `crash_model=prefix`: only a completion-order prefix per device, as dm-log-writes replay
//! sees it), plus each in-flight write absent, present or torn at sector granularity (a write
//! whose PREFLUSH had to finish first brings the writes that flush covered). Exhaustive up to the state
//! budget, seeded sampling beyond, deduplicated by content hash.

mod plan;
mod states;

use crate::device::SectorMap;
use crate::oracle::{Invariant, Oracle, OracleIndex, PointOracle};
use crate::recovery::{Fate, Image, Layer, LogPageCache, RecoveryReport, SharedLog, Survivors};
use crate::scenario::CrashModel;
use crate::sim::Sim;
pub use plan::{explore_events, merge_points, CrashLink, CrashPlan, CrashPoints, PointDone, PointReport};
use rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};
use states::{apply_preflush_marks, choices, draw_tears, index_choices, state_hash, Candidates, StateSpace};
use std::collections::{BTreeMap, BTreeSet};

/// Most states enumerated exhaustively at one crash point.
pub const EXHAUSTIVE_MAX: u64 = 1 << 16;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CrashExample {
    pub invariant: Invariant,
    /// What recovery reported, when it failed.
    pub detail: String,
    pub event: u64,
    pub state: u64,
    pub t_ns: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
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
    /// States whose prefix window is a superset: a recovered version predates the checkpoints
    /// a long run folded (`History::fold_behind`). Listed only when some are.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub horizon_states: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl CrashReport {
    pub fn total_violations(&self) -> u64 {
        self.violations.values().sum()
    }

    /// Adds the report of the points that came after this one's (`CrashPlan::explore_part`):
    /// the sums, and the examples one report of all the points would have kept.
    pub fn merge(&mut self, later: CrashReport) {
        // Destructured whole: a new field must say how it merges.
        let CrashReport {
            crash_points,
            crash_states,
            duplicates,
            violations,
            examples,
            torn_heads,
            transactions_replayed,
            cancel_records,
            buffers_cancelled,
            horizon_states,
        } = later;
        self.crash_points += crash_points;
        self.crash_states += crash_states;
        self.duplicates += duplicates;
        for (k, v) in violations {
            *self.violations.entry(k).or_default() += v;
        }
        for e in examples {
            if self.examples.len() < 8 && !self.examples.iter().any(|x| x.invariant == e.invariant) {
                self.examples.push(e);
            }
        }
        self.torn_heads += torn_heads;
        self.transactions_replayed += transactions_replayed;
        self.cancel_records += cancel_records;
        self.buffers_cancelled += buffers_cancelled;
        self.horizon_states += horizon_states;
    }

    /// Counts a violation; keeps the first example of each invariant, up to 8 (`example` is
    /// built only then).
    fn record(&mut self, name: Invariant, example: impl FnOnce() -> CrashExample) {
        *self.violations.entry(name).or_default() += 1;
        if self.examples.len() < 8 && !self.examples.iter().any(|e| e.invariant == name) {
            self.examples.push(example());
        }
    }
}

/// Explores the crash states of `sim` as it is now; adds to `report`.
pub fn explore(sim: &Sim, max_states: u64, seed: u64, report: &mut CrashReport) {
    explore_only(sim, max_states, seed, None, report)
}

/// As `explore`, but when `only` names a state index, checks just that state (the same
/// enumeration and sampling run, so the index means what it meant in the full exploration).
pub fn explore_only(sim: &Sim, max_states: u64, seed: u64, only: Option<u64>, report: &mut CrashReport) {
    explore_point(sim, max_states, seed, only, &mut RunCache::default(), report)
}

/// What the crash points of one run share, kept across them by an explorer: the oracle's
/// index of the history (checkpoints only append and complete between points) and what
/// the log's stable pages said (most are unchanged from one point to the next).
#[derive(Clone, Debug, Default)]
pub struct RunCache {
    index: OracleIndex,
    log_pages: LogPageCache,
}

/// As `explore_only`, sharing `cache` with the other crash points of the same run.
pub fn explore_point(
    sim: &Sim,
    max_states: u64,
    seed: u64,
    only: Option<u64>,
    cache: &mut RunCache,
    report: &mut CrashReport,
) {
    let sim = &*settled(sim);
    report.crash_points += 1;
    cache.index.sync(sim.history());
    let event = sim.events();
    let ch = choices(sim);
    let ndev = sim.devices().len();
    let cand = index_choices(ndev, &ch);
    let space = StateSpace::new(&ch, ndev, sim.scenario().crash_model == CrashModel::Prefix);
    let budget = max_states.clamp(1, EXHAUSTIVE_MAX);
    let exhaustive = space.total <= budget;
    let n_states = if exhaustive { space.total } else { budget };
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ event.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let head = sim.xlog().curr_lsn();
    let point = PointCheck {
        sim,
        event,
        oracle: Oracle::with_index(sim.history(), &cache.index, head),
        sim_level: sim_level(sim),
    };
    let mut seen = BTreeSet::new();
    let mut digits = vec![0u64; space.radix.len()];
    let mut keep = vec![Fate::Lost; ch.len()];
    let mut tears: Vec<u64> = vec![0; ch.len()];
    let mut out = Vec::new();
    let shared = shared_log(sim, &cand, &mut cache.log_pages);
    // What the states share in recovery and in the oracle's judgement, worked out once.
    let layered = PointOracle::new(&point.oracle, &image(sim, &cand, &[], &[], Some(&shared)));
    for s in 0..n_states {
        // The random draws happen for every state, skipped or not: a state index names the
        // same state in a full exploration and in a replay of that one state.
        if exhaustive {
            space.digits_exhaustive(s, &mut digits);
        } else {
            space.digits_sampled(s, &mut rng, &mut digits);
        }
        space.fates(&ch, &digits, &mut keep);
        draw_tears(&ch, exhaustive, &mut rng, &mut tears);
        apply_preflush_marks(&ch, ndev, &mut keep);
        if !seen.insert(state_hash(&keep, &tears, &cand.hashes)) {
            report.duplicates += 1;
            continue;
        }
        if only.is_some_and(|o| o != s) {
            continue;
        }
        report.crash_states += 1;
        point.check(&image(sim, &cand, &keep, &tears, Some(&shared)), layered.as_ref(), s, &mut out, report);
    }
}

/// A write a crash at this instant may keep or lose, in the order the explorer's fates use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AtRisk {
    pub dev: usize,
    /// The device request that wrote it (names it on the flush timeline).
    pub req_id: u64,
    pub sector: u64,
    pub bytes: u64,
    /// In flight: may also be torn. Otherwise completed into the volatile cache.
    pub inflight: bool,
    /// In flight with PREFLUSH: if it survives, the cached writes before it do too.
    pub preflush: bool,
}

/// The writes a crash now may keep: the cached ones in completion order, then those in flight.
pub fn writes_at_risk(sim: &Sim) -> Vec<AtRisk> {
    choices(sim)
        .iter()
        .map(|c| AtRisk {
            dev: c.dev,
            req_id: c.req_id,
            sector: c.sector,
            bytes: c.data.len() as u64,
            inflight: c.inflight,
            preflush: c.preflush_mark.is_some(),
        })
        .collect()
}

/// One crash state someone chose, recovered and judged.
#[derive(Clone, Debug)]
pub struct ChosenState {
    /// The fates as applied: the crash model's order and PREFLUSH implications enforced.
    pub fates: Vec<Fate>,
    /// For invariants the run broke before the crash: the event that first broke each.
    pub causes: String,
    pub recovery: Result<RecoveryReport, String>,
    pub violated: Vec<Invariant>,
}

/// Crashes `sim` now with `fates` for `writes_at_risk(sim)` (missing ones lost): under
/// `crash_model=prefix` a device keeps its cached writes only in completion order (a kept one
/// keeps those before it); a surviving PREFLUSH write keeps what its flush covered; a torn
/// write keeps its first half. Then recovery and every invariant, as the explorer checks them.
pub fn check_chosen_state(sim: &Sim, fates: &[Fate]) -> ChosenState {
    let sim = &*settled(sim);
    let ch = choices(sim);
    let ndev = sim.devices().len();
    let cand = index_choices(ndev, &ch);
    let mut keep: Vec<Fate> = (0..ch.len()).map(|i| fates.get(i).copied().unwrap_or(Fate::Lost)).collect();
    if sim.scenario().crash_model == CrashModel::Prefix {
        for d in 0..ndev {
            let last = ch
                .iter()
                .enumerate()
                .filter(|(i, c)| c.dev == d && !c.inflight && keep[*i] != Fate::Lost)
                .map(|(i, _)| i)
                .max();
            for (i, c) in ch.iter().enumerate() {
                if c.dev == d && !c.inflight && last.is_some_and(|l| i <= l) {
                    keep[i] = Fate::Kept;
                }
            }
            // An in-flight write lands after every cached one of its device.
            let all_cached = ch.iter().enumerate().all(|(i, c)| c.dev != d || c.inflight || keep[i] != Fate::Lost);
            for (i, c) in ch.iter().enumerate() {
                if c.dev == d && c.inflight && !all_cached {
                    keep[i] = Fate::Lost;
                }
            }
        }
    }
    let mut tears = vec![0u64; ch.len()];
    let mut no_rng = rand_pcg::Pcg64Mcg::seed_from_u64(0);
    draw_tears(&ch, true, &mut no_rng, &mut tears);
    apply_preflush_marks(&ch, ndev, &mut keep);
    let head = sim.xlog().curr_lsn();
    let oracle = Oracle::new(sim.history(), head);
    let mut violated = sim_level(sim);
    let recovery = oracle.check(&image(sim, &cand, &keep, &tears, None), true, &mut violated);
    violated.sort_unstable();
    violated.dedup();
    ChosenState { fates: keep, recovery, violated, causes: sim_level_causes(sim) }
}

/// For the invariants the sim decided as it ran: the event that first broke each.
fn sim_level_causes(sim: &Sim) -> String {
    let first = sim.first_monitor_violations();
    [(0, Invariant::NoLiveOverwrite), (1, Invariant::CommitImpliesCheckpoint), (2, Invariant::Durability)]
        .iter()
        .filter_map(|&(k, inv)| {
            first[k]
                .map(|(e, t)| format!("{} first broken at event {e} (t = {:.6} ms); ", inv.as_str(), t as f64 / 1e6))
        })
        .collect()
}

/// The invariants the sim decided while it ran, where they are exact: every state of a
/// crash point violates them.
fn sim_level(sim: &Sim) -> Vec<Invariant> {
    [
        (sim.semantics_violations() > 0, Invariant::DeviceSemantics),
        (sim.live_overwrites() > 0, Invariant::NoLiveOverwrite),
        (sim.checkpoints_unstable_at_completion() > 0, Invariant::CommitImpliesCheckpoint),
        (sim.acked_unstable() > 0, Invariant::Durability),
        (sim.is_hung(), Invariant::Liveness),
    ]
    .into_iter()
    .filter_map(|(bad, n)| bad.then_some(n))
    .collect()
}

/// `sim` with every log record's CRC on its stable media: itself when settled (the explorers
/// settle their runs as they go, `Sim::settle_crcs`), else a settled copy.
fn settled(sim: &Sim) -> std::borrow::Cow<'_, Sim> {
    match sim.crcs_pending() {
        0 => std::borrow::Cow::Borrowed(sim),
        _ => {
            let mut c = sim.clone();
            c.settle_crcs();
            std::borrow::Cow::Owned(c)
        }
    }
}

/// The log as every state at this crash point reads it outside the candidate writes.
fn shared_log(sim: &Sim, cand: &Candidates, pages: &mut LogPageCache) -> SharedLog {
    SharedLog::new_cached(
        sim.devices()[0].stable(),
        sim.log_start_sector(),
        sim.geometry().log_bb,
        cand.index[0].keys().copied(),
        pages,
    )
}

/// The disk a crash state leaves: each device's stable media with the surviving writes on top.
fn image<'a>(
    sim: &'a Sim,
    cand: &'a Candidates,
    keep: &'a [Fate],
    tears: &'a [u64],
    shared: Option<&'a SharedLog>,
) -> Image<'a> {
    Image {
        devs: sim
            .devices()
            .iter()
            .enumerate()
            .map(|(d, dev)| Layer {
                base: dev.stable(),
                over: SectorMap::new(),
                survivors: Some(Survivors { index: &cand.index[d], writes: &cand.writes, keep, tears }),
            })
            .collect(),
        data_dev: sim.data_device(),
        log_start: sim.log_start_sector(),
        log_bb: sim.geometry().log_bb,
        shared,
    }
}

/// What checking a state at one crash point needs.
struct PointCheck<'a> {
    sim: &'a Sim,
    event: u64,
    oracle: Oracle<'a>,
    sim_level: Vec<Invariant>,
}

impl PointCheck<'_> {
    /// Recovers state `s` and runs the oracle on it; adds to `report`.
    fn check(
        &self,
        img: &Image,
        layered: Option<&PointOracle>,
        s: u64,
        out: &mut Vec<Invariant>,
        report: &mut CrashReport,
    ) {
        out.clear();
        out.extend(self.sim_level.iter().copied());
        // Idempotence recovers twice: every 16th state is enough to catch it.
        let rep = match layered {
            Some(l) => l.check(img, s.is_multiple_of(16), out),
            None => self.oracle.check(img, s.is_multiple_of(16), out),
        };
        if let Ok(r) = &rep {
            report.torn_heads += r.torn_head_trimmed as u64;
            report.transactions_replayed += r.transactions_replayed as u64;
            report.cancel_records += r.cancel_records as u64;
            report.buffers_cancelled += r.buffers_cancelled as u64;
            report.horizon_states += r.before_horizon as u64;
        }
        if out.is_empty() {
            return;
        }
        out.sort_unstable();
        out.dedup();
        // Only the first example of each invariant keeps its detail: word it only then.
        let mut detail: Option<String> = None;
        for &name in out.iter() {
            report.record(name, || CrashExample {
                invariant: name,
                detail: detail.get_or_insert_with(|| self.detail(&rep)).clone(),
                event: self.event,
                state: s,
                t_ns: self.sim.now(),
            });
        }
    }

    /// What a kept example says: recovery's outcome, and the events that broke the
    /// invariants the sim decided.
    fn detail(&self, rep: &Result<RecoveryReport, String>) -> String {
        let d = match rep {
            Ok(r) => format!(
                "head {} tail {} records {} replayed {}; {}",
                r.head_blk, r.tail_blk, r.records, r.transactions_replayed, r.why
            ),
            Err(e) => e.clone(),
        };
        if self.sim_level.is_empty() {
            d
        } else {
            format!("{}; {}", d.trim_end_matches([' ', ';']), sim_level_causes(self.sim))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::find as find_preset;
    use crate::recovery::recover;
    use crate::units::Lsn;

    /// One crash point as an explorer sets it up: the writes at risk, their index, the state
    /// space and the log every state shares.
    struct Point {
        ch: Vec<states::Choice>,
        cand: Candidates,
        space: StateSpace,
        shared: SharedLog,
    }

    impl Point {
        fn new(sim: &Sim, prefix: bool, pages: &mut LogPageCache) -> Point {
            let ch = choices(sim);
            let cand = index_choices(sim.devices().len(), &ch);
            let space = StateSpace::new(&ch, sim.devices().len(), prefix);
            let shared = shared_log(sim, &cand, pages);
            Point { ch, cand, space, shared }
        }

        /// The first `n` sampled states (draws seeded by `seed`), each as `f(state, keep, tears)`
        /// sees its fates; returns how many there were.
        fn sampled(&self, ndev: usize, seed: u64, n: u64, mut f: impl FnMut(u64, &[Fate], &[u64])) -> u64 {
            let mut rng = Pcg64Mcg::seed_from_u64(seed);
            let mut digits = vec![0u64; self.space.radix.len()];
            let mut keep = vec![Fate::Lost; self.ch.len()];
            let mut tears = vec![0u64; self.ch.len()];
            let n = self.space.total.min(n);
            for st in 0..n {
                self.space.digits_sampled(st, &mut rng, &mut digits);
                self.space.fates(&self.ch, &digits, &mut keep);
                draw_tears(&self.ch, false, &mut rng, &mut tears);
                apply_preflush_marks(&self.ch, ndev, &mut keep);
                f(st, &keep, &tears);
            }
            n
        }
    }

    /// The states of a crash point share what they read alike (`SharedLog`, its page facts
    /// cached along the run): recovering with it must give what recovering each image on its
    /// own gives, errors included.
    #[test]
    fn recovery_through_the_shared_log_equals_recovery_of_each_image_alone() {
        // series-v1-external-log wraps its small log: a lost write leaves an older record at the
        // same block (none of its walks resumes from shared records).
        for (preset, model, resumes) in [
            ("small-crash", "subset", true),
            ("series-v1-flush-race", "subset", true),
            ("small-crash", "prefix", true),
            ("series-v1-external-log", "subset", false),
        ] {
            let mut s = find_preset(preset).unwrap();
            s.set("crash_model", model).unwrap();
            let mut sim = Sim::new(&s).unwrap();
            sim.set_keep_trace(false);
            let (mut states, mut distinct_logs, mut shared_pass1, mut unshared_records) = (0, 0, 0, 0);
            // One page cache along the run, as an explorer keeps it.
            let mut pages = LogPageCache::default();
            for at in CrashPlan::even_points(40_000, 24) {
                while sim.events() < at && sim.step().is_some() {}
                sim.settle_crcs();
                let pt = Point::new(&sim, model == "prefix", &mut pages);
                states += pt.sampled(sim.devices().len(), at, 32, |st, keep, tears| {
                    let alone = recover(&image(&sim, &pt.cand, keep, tears, None));
                    let with = recover(&image(&sim, &pt.cand, keep, tears, Some(&pt.shared)));
                    assert_eq!(with, alone, "{preset} {model}: event {at} state {st}");
                });
                distinct_logs += pt.shared.walks_cached();
                shared_pass1 += pt.shared.shared_pass1_cached();
                unshared_records += pt.shared.unshared_records_cached();
            }
            // Records in blocks a surviving write may cover were parsed once per fate of those writes.
            assert!(unshared_records > 0, "{preset} {model}: no unshared record was kept");
            assert!(states > 100, "{preset}: {states} states");
            // The walks resumed pass 1 from the shared records' transactions.
            assert!(shared_pass1 > 12 || !resumes, "{preset} {model}: {shared_pass1} shared pass 1 runs");
            // Unshared log blocks were read differently across states, so pass 1 ran more than once per point.
            assert!(distinct_logs > 12, "{preset} {model}: {distinct_logs} log readings");
        }
    }

    /// The states of a crash point are judged on shared layers (`PointOracle`): every verdict,
    /// every recovery count and every word of `why` must be what `Oracle::check` finds on the
    /// image alone, and most states must take the layered path.
    #[test]
    fn the_layered_oracle_judges_each_state_as_the_oracle_does_alone() {
        // Every rule the layers judge on their own must break somewhere, or the test proves little.
        let mut seen = BTreeSet::new();
        for (preset, model, events) in [
            ("small-crash", "subset", 40_000),
            ("small-crash", "prefix", 40_000),
            ("series-v1-flush-race", "subset", 40_000),
            ("sync-append", "subset", 6_000),
            // Broken prefix, tail and idempotence; an external log.
            ("unordered-start-records", "subset", 40_000),
            ("series-v1-external-log", "subset", 40_000),
        ] {
            let mut s = find_preset(preset).unwrap();
            s.set("crash_model", model).unwrap();
            let mut sim = Sim::new(&s).unwrap();
            sim.set_keep_trace(false);
            let (mut states, mut layered_states) = (0, 0);
            let mut violations: BTreeMap<Invariant, u32> = BTreeMap::new();
            let mut pages = LogPageCache::default();
            for at in CrashPlan::even_points(events, 16) {
                while sim.events() < at && sim.step().is_some() {}
                sim.settle_crcs();
                let pt = Point::new(&sim, model == "prefix", &mut pages);
                let head = sim.xlog().curr_lsn();
                // The true history, and one the rules break on: every third checkpoint left
                // incomplete (write-ahead, tail) and a head half way back (LSNs ahead).
                let mut distorted = sim.history().clone();
                for c in (0..distorted.len()).step_by(3) {
                    if let Some(ck) = distorted.get_mut(c) {
                        ck.completed = false;
                    }
                }
                let early = Lsn::new(head.cycle(), head.block() / 2);
                for (history, head) in [(sim.history(), head), (&distorted, early)] {
                    let oracle = Oracle::new(history, head);
                    let Some(layered) = PointOracle::new(&oracle, &image(&sim, &pt.cand, &[], &[], Some(&pt.shared)))
                    else {
                        continue;
                    };
                    states += pt.sampled(sim.devices().len(), at, 24, |st, keep, tears| {
                        let img = image(&sim, &pt.cand, keep, tears, Some(&pt.shared));
                        let idem = st % 4 == 0;
                        let (mut alone_out, mut with_out) = (Vec::new(), Vec::new());
                        let alone = oracle.check(&img, idem, &mut alone_out).map(|mut r| {
                            (r.items, r.writes, r.replayed) = Default::default();
                            r
                        });
                        let Some(with) = layered.check_layered(&img, idem, &mut with_out) else { return };
                        alone_out.sort_unstable();
                        with_out.sort_unstable();
                        let at_state = format!("{preset} {model}: event {at} state {st}");
                        assert_eq!(with_out, alone_out, "{at_state}");
                        assert_eq!(with, alone, "{at_state}");
                        for v in alone_out {
                            *violations.entry(v).or_insert(0) += 1;
                        }
                        layered_states += 1;
                    });
                }
            }
            assert!(layered_states * 10 >= states * 9, "{preset} {model}: {layered_states} of {states} layered");
            assert!(layered_states > 60, "{preset} {model}: {layered_states} states");
            eprintln!("{preset} {model}: {layered_states} of {states} states layered, violations {violations:?}");
            seen.extend(violations.into_keys());
        }
        for inv in [
            Invariant::WriteAhead,
            Invariant::Tail,
            Invariant::MetadataLsnNotAhead,
            Invariant::Prefix,
            Invariant::Durability,
            Invariant::RecoverySucceeds,
            Invariant::RecoveryIdempotent,
        ] {
            assert!(seen.contains(&inv), "no state broke {inv}");
        }
    }
}
