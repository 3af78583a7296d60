//! `loglab crash`: crash at chosen events, recover every allowed disk state, check invariants.

use serde_json::json;
use std::time::Instant;
use xlog::{explore_crash_states, CrashReport, Scenario, Sim};

/// Crashes `s` at `points` events spread over the run; returns the report and seconds taken.
pub fn explore(s: &Scenario, points: u32, per_point: u32) -> Result<(CrashReport, f64), String> {
    let mut probe = Sim::new(s)?;
    probe.run();
    let total = probe.events().max(1);
    let started = Instant::now();
    let mut sim = Sim::new(s)?;
    sim.set_keep_trace(false);
    let mut report = CrashReport::default();
    for p in 1..=points as u64 {
        let at = total * p / (points as u64 + 1);
        while sim.events() < at && sim.step().is_some() {}
        explore_crash_states(&sim, per_point as u64, s.seed, &mut report);
    }
    Ok((report, started.elapsed().as_secs_f64()))
}

pub fn run(s: &Scenario, points: u32, per_point: u32, as_json: bool) -> Result<(), String> {
    if points == 0 {
        return Err("--crash-points: 0 is out of range (allowed: 1 to 1000000)".into());
    }
    let (report, secs) = explore(s, points, per_point)?;
    let mut full = Sim::new(s)?;
    full.run();
    let m = full.metrics();
    let states_per_sec = report.crash_states as f64 / secs.max(1e-9);
    let scenario_json = serde_json::to_string(s).map_err(|e| e.to_string())?;
    let examples: Vec<_> = report
        .examples
        .iter()
        .map(|e| {
            json!({
                "invariant": e.invariant, "detail": e.detail, "event": e.event, "state": e.state, "t_ns": e.t_ns,
                "reproduce": format!("loglab crash --scenario <file> with scenario {scenario_json}"),
            })
        })
        .collect();
    if as_json {
        let v = json!({
            "crash_points": report.crash_points,
            "crash_states": report.crash_states,
            "duplicates": report.duplicates,
            "states_per_sec": states_per_sec,
            "violations": report.violations,
            "examples": examples,
            "torn_heads": report.torn_heads,
            "transactions_replayed": report.transactions_replayed,
            "hung": m.hung,
            "reservation_overruns": m.reservation_overruns,
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("serializable"));
    } else {
        println!("crash points         {}", report.crash_points);
        println!(
            "crash states         {} ({:.0} states/s, {} duplicates skipped)",
            report.crash_states, states_per_sec, report.duplicates
        );
        println!("torn heads trimmed   {}", report.torn_heads);
        if report.violations.is_empty() {
            println!("violations           none");
        }
        for (k, v) in &report.violations {
            println!("violation            {k}: {v}");
        }
    }
    Ok(())
}
