//! `loglab crash`: crash at chosen events, recover every allowed disk state, check invariants.

use crate::ScenarioArgs;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::time::Instant;
use xlog::{explore_crash_state, CrashReport, Metrics, Scenario, Sim, TraceKind};

#[derive(Args)]
pub struct CrashArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// How many crash points, spread evenly over the run.
    #[arg(long, default_value_t = 20, conflicts_with = "every_io")]
    pub crash_points: u32,
    /// Crash after every device request submission and completion instead.
    #[arg(long)]
    pub every_io: bool,
    /// Most crash states explored at each crash point (exhaustive below it, sampled above).
    #[arg(long, default_value_t = 64)]
    pub states_per_point: u32,
    #[arg(long)]
    pub json: bool,
}

/// Where to crash.
#[derive(Clone, Copy, Debug)]
pub enum Points {
    Even(u32),
    EveryIo,
    /// One state at one event (from a link).
    One {
        event: u64,
        state: Option<u64>,
    },
}

fn progress(len: u64) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} crash points {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb
}

/// Crashes `s` at `points`; returns the report, seconds taken, and the whole run's metrics.
pub fn explore_points(s: &Scenario, points: Points, per_point: u32) -> Result<(CrashReport, f64, Metrics), String> {
    // A full run first: its length places the crash points, its metrics go in the report.
    let mut probe = Sim::new(s)?;
    probe.run();
    let total = probe.events().max(1);
    let started = Instant::now();
    let mut sim = Sim::new(s)?;
    let mut report = CrashReport::default();
    let budget = per_point as u64;
    match points {
        Points::Even(n) => {
            sim.set_keep_trace(false);
            let pb = progress(n as u64);
            for p in 1..=n as u64 {
                let at = total * p / (n as u64 + 1);
                while sim.events() < at && sim.step().is_some() {}
                explore_crash_state(&sim, budget, s.seed, None, &mut report);
                pb.inc(1);
            }
            pb.finish_and_clear();
        }
        Points::EveryIo => {
            let pb = progress(total);
            loop {
                let io = match sim.step() {
                    None => break,
                    Some(evs) => evs
                        .iter()
                        .any(|e| matches!(e.kind, TraceKind::DevSubmit { .. } | TraceKind::DevComplete { .. })),
                };
                if io {
                    explore_crash_state(&sim, budget, s.seed, None, &mut report);
                }
                pb.set_position(sim.events());
            }
            pb.finish_and_clear();
        }
        Points::One { event, state } => {
            sim.set_keep_trace(false);
            while sim.events() < event && sim.step().is_some() {}
            if sim.events() != event {
                return Err(format!("crash_event: {event} is past the run's last event ({})", sim.events()));
            }
            explore_crash_state(&sim, budget, s.seed, state, &mut report);
        }
    }
    Ok((report, started.elapsed().as_secs_f64(), probe.metrics()))
}

/// The crash point a link names, if any.
fn link_point(args: &ScenarioArgs) -> Result<Option<(Points, Option<u32>)>, String> {
    let Some(u) = &args.url else { return Ok(None) };
    let d = xlog::url::decode(u)?;
    let get = |k: &str| -> Result<Option<u64>, String> {
        d.extra
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.parse::<u64>().map_err(|_| format!("url: {k}: '{v}' is not a whole number")))
            .transpose()
    };
    let Some(event) = get("crash_event")? else { return Ok(None) };
    let budget = get("crash_budget")?.map(|b| b.clamp(1, u32::MAX as u64) as u32);
    Ok(Some((Points::One { event, state: get("crash_state")? }, budget)))
}

pub fn run(a: &CrashArgs) -> Result<(), String> {
    let s = a.scenario.load()?;
    if a.crash_points == 0 && !a.every_io {
        return Err("--crash-points: 0 is out of range (allowed: 1 to 1000000)".into());
    }
    if a.states_per_point == 0 {
        return Err("--states-per-point: 0 is out of range (allowed: 1 to 65536)".into());
    }
    let (points, per_point) = match link_point(&a.scenario)? {
        Some((p, b)) => (p, b.unwrap_or(a.states_per_point)),
        None if a.every_io => (Points::EveryIo, a.states_per_point),
        None => (Points::Even(a.crash_points), a.states_per_point),
    };
    let (report, secs, m) = explore_points(&s, points, per_point)?;
    let states_per_sec = report.crash_states as f64 / secs.max(1e-9);
    let base = a.scenario.link(&s);
    let sep = if base.contains('?') { '&' } else { '?' };
    let examples: Vec<_> = report
        .examples
        .iter()
        .map(|e| {
            let url = format!("{base}{sep}crash_event={}&crash_state={}&crash_budget={per_point}", e.event, e.state);
            json!({
                "invariant": e.invariant, "detail": e.detail, "event": e.event, "state": e.state, "t_ns": e.t_ns,
                "url": url,
                "reproduce": format!("loglab crash --url '{url}'"),
            })
        })
        .collect();
    if a.json {
        let v = json!({
            "crash_points": report.crash_points,
            "crash_states": report.crash_states,
            "duplicates": report.duplicates,
            "states_per_sec": states_per_sec,
            "violations": report.violations,
            "examples": examples,
            "torn_heads": report.torn_heads,
            "transactions_replayed": report.transactions_replayed,
            "cancel_records": report.cancel_records,
            "buffers_cancelled": report.buffers_cancelled,
            "hung": m.hung,
            "reservation_overruns": m.reservation_overruns,
            "url": base,
        });
        crate::print_json(&v);
    } else {
        println!("crash points         {}", report.crash_points);
        println!(
            "crash states         {} ({:.0} states/s, {} duplicates skipped)",
            report.crash_states, states_per_sec, report.duplicates
        );
        println!("torn heads trimmed   {}", report.torn_heads);
        println!("replayed transactions {}", report.transactions_replayed);
        println!("cancel records       {} ({} buffers not replayed)", report.cancel_records, report.buffers_cancelled);
        println!("hung                 {}", m.hung);
        println!("reservation overruns {}", m.reservation_overruns);
        if report.violations.is_empty() {
            println!("violations           none");
        }
        for (k, v) in &report.violations {
            println!("violation            {k}: {v}");
        }
        for e in &examples {
            println!("example              {}: {}", e["invariant"], e["url"].as_str().unwrap_or(""));
        }
    }
    Ok(())
}
