//! Crash planning: where in a run to crash, and the links that replay one crash state.

use super::{explore_point, CrashExample, CrashReport, RunCache};
use crate::metrics::Metrics;
use crate::scenario::Scenario;
use crate::sim::Sim;
use crate::trace::TraceKind;
use crate::units::Ns;

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
        let s = &self.scenario;
        let total = self.run_events.max(1);
        let mut sim = Sim::new(s)?;
        let mut report = CrashReport::default();
        let mut cache = RunCache::default();
        let budget = self.states_per_point as u64;
        let parts = parts.max(1);
        if part >= parts || (part > 0 && !matches!(self.points, CrashPoints::Even(_))) {
            return Ok(report);
        }
        match self.points {
            CrashPoints::Even(n) => {
                sim.set_keep_trace(false);
                let all = Self::even_points(total, n);
                let mine = &all[all.len() * part / parts..all.len() * (part + 1) / parts];
                progress(0, mine.len() as u64);
                for (p, &at) in mine.iter().enumerate() {
                    while sim.events() < at && sim.step().is_some() {}
                    sim.settle_crcs();
                    explore_point(&sim, budget, s.seed, None, &mut cache, &mut report);
                    progress(p as u64 + 1, mine.len() as u64);
                }
            }
            CrashPoints::EveryIo => {
                progress(0, total);
                loop {
                    let io = match sim.step() {
                        None => break,
                        Some(evs) => evs
                            .iter()
                            .any(|e| matches!(e.kind, TraceKind::DevSubmit { .. } | TraceKind::DevComplete { .. })),
                    };
                    if io {
                        sim.settle_crcs();
                        explore_point(&sim, budget, s.seed, None, &mut cache, &mut report);
                    }
                    progress(sim.events(), total);
                }
            }
            CrashPoints::One { event, state } => {
                sim.set_keep_trace(false);
                while sim.events() < event && sim.step().is_some() {}
                if sim.events() != event {
                    return Err(format!("crash_event: {event} is past the run's last event ({})", sim.events()));
                }
                sim.settle_crcs();
                explore_point(&sim, budget, s.seed, state, &mut cache, &mut report);
            }
        }
        Ok(report)
    }
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
        let d = crate::url::decode(url)?;
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
