//! Crash planning: where in a run to crash, and the links that replay one crash state.

use super::{explore_point, CrashExample, CrashReport, RunCache};
use crate::metrics::Metrics;
use crate::scenario::Scenario;
use crate::sim::Sim;
use crate::trace::TraceKind;
use crate::units::Ns;
use serde::{Deserialize, Serialize};

/// Where in a run to crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashPoints {
    /// This many points, spread evenly over the run.
    Even(u32),
    /// After every event that submits or completes a device request.
    EveryIo,
    /// One event, and there one state when given (from a link).
    One { event: u64, state: Option<u64> },
}

/// A crash exploration of one scenario. The whole run comes first: its length places the
/// crash points and its metrics belong in the report.
#[derive(Clone, Debug)]
pub struct CrashPlan {
    scenario: Scenario,
    points: CrashPoints,
    states_per_point: u32,
    run_events: u64,
    run_metrics: Metrics,
}

impl CrashPlan {
    /// Runs `s` once to the end.
    pub fn new(s: &Scenario, points: CrashPoints, states_per_point: u32) -> Result<CrashPlan, String> {
        Self::probed(s, points, states_per_point, |probe| probe.run())
    }

    /// As `new`, but the run ends at virtual time `until` (no wind-down): the points spread
    /// over the run so far, as the lab's crash heat map spreads them.
    pub fn new_until(s: &Scenario, points: CrashPoints, states_per_point: u32, until: Ns) -> Result<CrashPlan, String> {
        Self::probed(s, points, states_per_point, |probe| {
            probe.set_keep_trace(false);
            probe.run_until(until)
        })
    }

    /// A plan whose run length and metrics come from a probe run driven by `run`.
    fn probed(
        s: &Scenario,
        points: CrashPoints,
        states_per_point: u32,
        run: impl FnOnce(&mut Sim),
    ) -> Result<CrashPlan, String> {
        let mut probe = Sim::new(s)?;
        run(&mut probe);
        Ok(CrashPlan {
            scenario: s.clone(),
            points,
            states_per_point,
            run_events: probe.events(),
            run_metrics: probe.metrics(),
        })
    }

    /// Where `Even(n)` crashes a run of `total` events.
    pub fn even_points(total: u64, n: u32) -> Vec<u64> {
        (1..=n as u64).map(|p| total.max(1) * p / (n as u64 + 1)).collect()
    }

    /// The metrics of the whole run, without crashes.
    pub fn run_metrics(&self) -> &Metrics {
        &self.run_metrics
    }

    /// How many crash points the plan has, when known before exploring (`EveryIo` finds its
    /// points as the run goes).
    pub fn point_count(&self) -> Option<u64> {
        match self.points {
            CrashPoints::Even(n) => Some(n as u64),
            CrashPoints::One { .. } => Some(1),
            CrashPoints::EveryIo => None,
        }
    }

    /// Crashes a fresh run at those of the planned points whose ordinal (from 0, in run
    /// order) `want` accepts, and hands each point's own report to `done`. Reports merged in
    /// ordinal order are `explore`'s, whichever process or thread explored each point: what
    /// `--shard`, `--checkpoint` and the threads of one process build on. `progress(done,
    /// total)` counts points (`Even`) or events (`EveryIo`).
    pub fn explore_where(
        &self,
        want: &dyn Fn(u64) -> bool,
        done: &mut dyn FnMut(PointDone),
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), String> {
        let s = &self.scenario;
        let total = self.run_events.max(1);
        let mut sim = Sim::new(s)?;
        let mut cache = RunCache::default();
        let budget = self.states_per_point as u64;
        let mut at_point = |sim: &mut Sim, point: u64, state: Option<u64>, done: &mut dyn FnMut(PointDone)| {
            let mut report = CrashReport::default();
            sim.settle_crcs();
            explore_point(sim, budget, s.seed, state, &mut cache, &mut report);
            done(PointDone { point, event: sim.events(), t_ns: sim.now(), report });
        };
        match self.points {
            CrashPoints::Even(n) => {
                sim.set_keep_trace(false);
                let mine: Vec<(u64, u64)> = Self::even_points(total, n)
                    .into_iter()
                    .enumerate()
                    .map(|(i, at)| (i as u64, at))
                    .filter(|&(i, _)| want(i))
                    .collect();
                progress(0, mine.len() as u64);
                for (p, &(i, at)) in mine.iter().enumerate() {
                    while sim.events() < at && sim.step().is_some() {}
                    at_point(&mut sim, i, None, done);
                    progress(p as u64 + 1, mine.len() as u64);
                }
            }
            CrashPoints::EveryIo => {
                progress(0, total);
                let mut point = 0u64;
                loop {
                    let io = match sim.step() {
                        None => break,
                        Some(evs) => evs
                            .iter()
                            .any(|e| matches!(e.kind, TraceKind::DevSubmit { .. } | TraceKind::DevComplete { .. })),
                    };
                    if io {
                        if want(point) {
                            at_point(&mut sim, point, None, done);
                        }
                        point += 1;
                    }
                    progress(sim.events(), total);
                }
            }
            CrashPoints::One { event, state } => {
                if !want(0) {
                    return Ok(());
                }
                sim.set_keep_trace(false);
                while sim.events() < event && sim.step().is_some() {}
                if sim.events() != event {
                    return Err(format!("crash_event: {event} is past the run's last event ({})", sim.events()));
                }
                at_point(&mut sim, 0, state, done);
            }
        }
        Ok(())
    }

    /// Crashes a fresh run at the planned points. `progress(done, total)` is called with 0
    /// before the first point and then as points (`Even`) or events (`EveryIo`) pass.
    pub fn explore(&self, progress: &mut dyn FnMut(u64, u64)) -> Result<CrashReport, String> {
        self.explore_part(0, 1, progress)
    }

    /// Part `part` of `parts` of `explore`: an `Even` plan's points split into contiguous
    /// runs, each from its own fresh run of the scenario, so parts can go to separate
    /// threads; their reports `merge`d in part order are `explore`'s, byte for byte. The
    /// other plans are all in part 0. `progress` counts this part's points or events.
    pub fn explore_part(
        &self,
        part: usize,
        parts: usize,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<CrashReport, String> {
        let parts = parts.max(1);
        let mut report = CrashReport::default();
        let mine: Box<dyn Fn(u64) -> bool> = match self.points {
            CrashPoints::Even(n) => {
                let (n, part, parts) = (n as u64, part as u64, parts as u64);
                Box::new(move |i| (n * part / parts..n * (part + 1) / parts).contains(&i))
            }
            _ => Box::new(move |_| part == 0),
        };
        if part >= parts {
            return Ok(report);
        }
        self.explore_where(&*mine, &mut |p| report.merge(p.report), progress)?;
        Ok(report)
    }
}

/// One explored crash point: its ordinal in the plan, where it fell, and its own report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointDone {
    pub point: u64,
    pub event: u64,
    pub t_ns: Ns,
    pub report: CrashReport,
}

/// The report of a whole exploration from its points' own reports, in any order (each
/// point once): merged in ordinal order, as one pass over them all keeps them.
pub fn merge_points(mut points: Vec<PointDone>) -> Result<CrashReport, String> {
    points.sort_by_key(|p| p.point);
    if let Some(w) = points.windows(2).find(|w| w[0].point == w[1].point) {
        return Err(format!("crash point {} is reported twice", w[0].point));
    }
    let mut report = CrashReport::default();
    for p in points {
        report.merge(p.report);
    }
    Ok(report)
}

/// One crash point's result, for the lab's heat map.
#[derive(Clone, Debug)]
pub struct PointReport {
    pub event: u64,
    pub t_ns: Ns,
    pub report: CrashReport,
}

/// Crashes a fresh run of `s` at each of `events` (ascending), `budget` states each: what an
/// `Even` exploration does at those points, one report per point (a worker's share).
pub fn explore_events(s: &Scenario, events: &[u64], budget: u32) -> Result<Vec<PointReport>, String> {
    let mut sim = Sim::new(s)?;
    sim.set_keep_trace(false);
    let mut cache = RunCache::default();
    let mut out = Vec::with_capacity(events.len());
    for &at in events {
        while sim.events() < at && sim.step().is_some() {}
        let mut report = CrashReport::default();
        sim.settle_crcs();
        explore_point(&sim, budget as u64, s.seed, None, &mut cache, &mut report);
        out.push(PointReport { event: sim.events(), t_ns: sim.now(), report });
    }
    Ok(out)
}

/// One crash state in a link: a scenario link plus `crash_event`, `crash_state` and
/// `crash_budget` (the states per point the index was counted under).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashLink {
    pub event: u64,
    pub state: Option<u64>,
    pub budget: Option<u32>,
}

impl CrashLink {
    /// The crash a link names, or None when it names none (no `crash_event`).
    pub fn parse(url: &str) -> Result<Option<CrashLink>, String> {
        Self::of(&crate::url::decode(url)?)
    }

    /// The crash keys of a decoded link, if it has them.
    pub fn of(d: &crate::url::Decoded) -> Result<Option<CrashLink>, String> {
        let get = |k: &str| -> Result<Option<u64>, String> {
            d.extra
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.parse::<u64>().map_err(|_| format!("url: {k}: '{v}' is not a whole number")))
                .transpose()
        };
        let Some(event) = get("crash_event")? else { return Ok(None) };
        let budget = get("crash_budget")?.map(|b| b.clamp(1, u32::MAX as u64) as u32);
        Ok(Some(CrashLink { event, state: get("crash_state")?, budget }))
    }

    /// `base`, a scenario link, with this crash's keys added.
    pub fn url(&self, base: &str) -> String {
        let sep = if base.contains('?') { '&' } else { '?' };
        let mut u = format!("{base}{sep}crash_event={}", self.event);
        if let Some(s) = self.state {
            u += &format!("&crash_state={s}");
        }
        if let Some(b) = self.budget {
            u += &format!("&crash_budget={b}");
        }
        u
    }

    /// Where the link crashes.
    pub fn points(&self) -> CrashPoints {
        CrashPoints::One { event: self.event, state: self.state }
    }
}

impl CrashExample {
    /// The link that replays this example, explored `budget` states per point.
    pub fn link(&self, base: &str, budget: u32) -> String {
        CrashLink { event: self.event, state: Some(self.state), budget: Some(budget) }.url(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAB_ORIGIN: &str = "http://127.0.0.1:8080/";

    #[test]
    fn parts_merged_in_order_are_the_whole_exploration() {
        // A bug preset: its violations and their examples must merge as one pass keeps them.
        let mut s = crate::presets::find("force-without-flush").unwrap();
        s.duration = crate::scenario::Duration(20 * crate::units::NS_PER_MS);
        let plan = CrashPlan::new(&s, CrashPoints::Even(24), 16).unwrap();
        let whole = plan.explore(&mut |_, _| {}).unwrap();
        assert!(whole.total_violations() > 0 && whole.crash_points == 24, "{whole:?}");
        let json = |r: &CrashReport| serde_json::to_string(r).unwrap();
        for parts in [2, 3, 7] {
            let mut merged = CrashReport::default();
            for part in 0..parts {
                merged.merge(plan.explore_part(part, parts, &mut |_, _| {}).unwrap());
            }
            assert_eq!(json(&merged), json(&whole), "{parts} parts");
        }
        // Only evenly spread points split: the other plans are all in part 0.
        let one = CrashPlan::new(&s, CrashPoints::One { event: 500, state: None }, 16).unwrap();
        assert_eq!(one.explore_part(1, 2, &mut |_, _| {}).unwrap().crash_points, 0);
    }

    #[test]
    fn points_dealt_to_shards_merge_into_the_whole_exploration() {
        let mut s = crate::presets::find("force-without-flush").unwrap();
        s.duration = crate::scenario::Duration(20 * crate::units::NS_PER_MS);
        let json = |r: &CrashReport| serde_json::to_string(r).unwrap();
        for points in [CrashPoints::Even(24), CrashPoints::EveryIo] {
            let plan = CrashPlan::new(&s, points, 8).unwrap();
            let whole = plan.explore(&mut |_, _| {}).unwrap();
            assert!(whole.total_violations() > 0 && whole.crash_points >= 24, "{whole:?}");
            for n in [2, 5] {
                let mut all = Vec::new();
                for k in 1..=n {
                    let shard = crate::shard::Shard::new(k, n).unwrap();
                    let mut mine = Vec::new();
                    plan.explore_where(&|i| shard.owns(i), &mut |p| mine.push(p), &mut |_, _| {}).unwrap();
                    assert!(mine.iter().all(|p| shard.owns(p.point)), "{shard}");
                    // Through the JSON a shard's process writes, and back.
                    let text = serde_json::to_string(&mine).unwrap();
                    all.extend(serde_json::from_str::<Vec<PointDone>>(&text).unwrap());
                }
                // Shards finish in any order.
                all.reverse();
                assert_eq!(json(&merge_points(all).unwrap()), json(&whole), "{points:?} over {n} shards");
            }
        }
        let twice = vec![
            PointDone { point: 3, event: 1, t_ns: 0, report: CrashReport::default() },
            PointDone { point: 3, event: 1, t_ns: 0, report: CrashReport::default() },
        ];
        assert_eq!(merge_points(twice).unwrap_err(), "crash point 3 is reported twice");
    }

    #[test]
    fn crash_links_round_trip() {
        let base = format!("{LAB_ORIGIN}?preset=small-crash");
        let link = CrashLink { event: 812, state: Some(3), budget: Some(64) };
        let url = link.url(&base);
        assert_eq!(url, format!("{base}&crash_event=812&crash_state=3&crash_budget=64"));
        assert_eq!(CrashLink::parse(&url), Ok(Some(link)));
        assert_eq!(link.url(LAB_ORIGIN), format!("{LAB_ORIGIN}?crash_event=812&crash_state=3&crash_budget=64"));
        assert_eq!(link.points(), CrashPoints::One { event: 812, state: Some(3) });
        let bare = CrashLink { event: 9, state: None, budget: None };
        assert_eq!(CrashLink::parse(&bare.url(&base)), Ok(Some(bare)));
    }

    #[test]
    fn crash_link_keys_are_whole_numbers_and_a_budget_is_at_least_one() {
        let base = format!("{LAB_ORIGIN}?preset=small-crash");
        assert_eq!(CrashLink::parse(&base), Ok(None));
        assert_eq!(CrashLink::parse(&format!("{base}&crash_state=2")), Ok(None));
        assert_eq!(
            CrashLink::parse(&format!("{base}&crash_event=x")),
            Err("url: crash_event: 'x' is not a whole number".to_string())
        );
        assert_eq!(
            CrashLink::parse(&format!("{base}&crash_event=1&crash_state=-1")),
            Err("url: crash_state: '-1' is not a whole number".to_string())
        );
        let l = CrashLink::parse(&format!("{base}&crash_event=1&crash_budget=0")).unwrap().unwrap();
        assert_eq!(l.budget, Some(1));
    }
}
