//! `loglab crash`: crash at chosen events, recover every allowed disk state, check invariants.

use crate::ScenarioArgs;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;
use xlog::{CrashLink, CrashPlan, CrashPoints, CrashReport, Metrics, Ns, Scenario};

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
    /// Spread the crash points over the run up to this virtual time only (no wind-down): the
    /// lab's crash heat map over the run so far.
    #[arg(long, value_name = "DURATION", conflicts_with = "every_io")]
    pub until: Option<String>,
    #[arg(long)]
    pub json: bool,
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

/// Crashes `s` at `points` under a progress bar; returns the report, the seconds the crashes
/// took (the whole run before them not counted), and the whole run's metrics. Evenly spread
/// points are split between the machine's cores (the same report as one thread's).
pub fn explore_points(
    s: &Scenario,
    points: CrashPoints,
    per_point: u32,
    until: Option<Ns>,
) -> Result<(CrashReport, f64, Metrics), String> {
    let plan = match until {
        Some(t) => CrashPlan::new_until(s, points, per_point, t)?,
        None => CrashPlan::new(s, points, per_point)?,
    };
    let parts = match points {
        // A part's own run to its first point costs a run's worth of events at most: worth
        // it once a part has a few points to crash.
        CrashPoints::Even(n) => {
            std::thread::available_parallelism().map_or(1, |c| c.get()).min((n as usize / 8).max(1))
        }
        CrashPoints::EveryIo | CrashPoints::One { .. } => 1,
    };
    let started = Instant::now();
    let pb: OnceLock<ProgressBar> = OnceLock::new();
    let done: Vec<AtomicU64> = (0..parts).map(|_| AtomicU64::new(0)).collect();
    let total = match points {
        CrashPoints::Even(n) => Some(n as u64),
        _ => None,
    };
    let reports: Vec<Result<CrashReport, String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..parts)
            .map(|part| {
                let (plan, pb, done) = (&plan, &pb, &done);
                scope.spawn(move || {
                    plan.explore_part(part, parts, &mut |d, t| {
                        done[part].store(d, Ordering::Relaxed);
                        let sum = done.iter().map(|x| x.load(Ordering::Relaxed)).sum();
                        pb.get_or_init(|| progress(total.unwrap_or(t))).set_position(sum);
                    })
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a crash explorer thread panicked")).collect()
    });
    if let Some(pb) = pb.get() {
        pb.finish_and_clear();
    }
    let mut report = CrashReport::default();
    for r in reports {
        report.merge(r?);
    }
    Ok((report, started.elapsed().as_secs_f64(), plan.run_metrics().clone()))
}

pub fn run(a: &CrashArgs) -> Result<(), String> {
    let s = a.scenario.load()?;
    if a.crash_points == 0 && !a.every_io {
        return Err("--crash-points: 0 is out of range (allowed: 1 to 1000000)".into());
    }
    if a.states_per_point == 0 {
        return Err("--states-per-point: 0 is out of range (allowed: 1 to 65536)".into());
    }
    let link = match &a.scenario.url {
        Some(u) => CrashLink::parse(u)?,
        None => None,
    };
    let (points, per_point) = match link {
        Some(l) => (l.points(), l.budget.unwrap_or(a.states_per_point)),
        None if a.every_io => (CrashPoints::EveryIo, a.states_per_point),
        None => (CrashPoints::Even(a.crash_points), a.states_per_point),
    };
    let until = a.until.as_deref().map(|u| xlog::parse_duration("--until", u)).transpose()?;
    let (report, secs, m) = explore_points(&s, points, per_point, until)?;
    let states_per_sec = report.crash_states as f64 / secs.max(1e-9);
    let base = a.scenario.link(&s);
    let examples: Vec<_> = report
        .examples
        .iter()
        .map(|e| {
            let url = e.link(&base, per_point);
            json!({
                "invariant": e.invariant, "detail": e.detail, "event": e.event, "state": e.state, "t_ns": e.t_ns,
                "url": url,
                "reproduce": format!("loglab crash --url '{url}'"),
            })
        })
        .collect();
    if a.json {
        let mut v = json!({
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
        if report.horizon_states > 0 {
            v["horizon_states"] = json!(report.horizon_states);
        }
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
        if report.horizon_states > 0 {
            println!(
                "before the horizon   {} (a recovered version predates the folded history)",
                report.horizon_states
            );
        }
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
