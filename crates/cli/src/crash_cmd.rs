//! `loglab crash`: crash at chosen events, recover every allowed disk state, check invariants.

use crate::progress::Progress;
use crate::ScenarioArgs;
use clap::Args;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use xlog::{CrashLink, CrashPlan, CrashPoints, CrashReport, Metrics, Ns, PointDone, Scenario, Shard};

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
    /// Explore only shard K of N (K from 1): crash point i is shard (i mod N) + 1's. Prints
    /// the shard's JSON for `loglab merge`, which gives the report of the whole exploration.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Record each finished crash point in FILE (JSON lines) and, when FILE exists, skip the
    /// points it has: a stopped or killed exploration resumes where it was, with the same report.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Leave the wall-clock rate (`states_per_sec`) out, so that the output is the same
    /// from run to run (and from `loglab merge` of the shards).
    #[arg(long)]
    pub no_timing: bool,
    /// Threads (default: every core; points split into contiguous runs, each from its own
    /// fresh run of the scenario).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// What identifies one exploration: shards and checkpoints of the same one agree on it.
pub fn exploration_id(base: &str, points: CrashPoints, per_point: u32, until: Option<Ns>) -> Value {
    let points = match points {
        CrashPoints::Even(n) => format!("even:{n}"),
        CrashPoints::EveryIo => "every_io".to_string(),
        CrashPoints::One { event, state: None } => format!("event:{event}"),
        CrashPoints::One { event, state: Some(st) } => format!("event:{event}:state:{st}"),
    };
    json!({"url": base, "points": points, "states_per_point": per_point, "until_ns": until})
}

/// Explores `plan`'s points that `shard` owns and `skip` lacks, on `jobs` threads under a
/// progress bar; hands each point to `done` as it finishes (from any thread, one at a time).
fn explore_plan(
    plan: &CrashPlan,
    shard: Shard,
    skip: &BTreeSet<u64>,
    jobs: usize,
    lines: bool,
    done: &(dyn Fn(PointDone) + Sync),
) -> Result<(), String> {
    let want = |i: u64| shard.owns(i) && !skip.contains(&i);
    let mine: Vec<u64> = match plan.point_count() {
        Some(n) => (0..n).filter(|&i| want(i)).collect(),
        None => Vec::new(),
    };
    // Evenly spread points split into contiguous runs, one per thread. A part's own run to
    // its first point costs a run's worth of events at most: worth it once a part has a few
    // points to crash. The other plans find their points as the run goes: one thread.
    let parts = match plan.point_count() {
        Some(_) if mine.len() > 1 => jobs.min((mine.len() / 8).max(1)),
        _ => 1,
    };
    let bar = Progress::new(shard, if plan.point_count().is_some() { "crash points" } else { "events" }, lines);
    let total = plan.point_count().map(|_| mine.len() as u64);
    let counts: Vec<AtomicU64> = (0..parts).map(|_| AtomicU64::new(0)).collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(parts).build().map_err(|e| format!("--jobs: {e}"))?;
    let results: Vec<Result<(), String>> = pool.install(|| {
        (0..parts)
            .into_par_iter()
            .map(|part| {
                let range = if plan.point_count().is_some() {
                    let (lo, hi) = (mine.len() * part / parts, mine.len() * (part + 1) / parts);
                    if lo == hi {
                        return Ok(());
                    }
                    mine[lo]..=mine[hi - 1]
                } else {
                    0..=u64::MAX
                };
                plan.explore_where(&|i| range.contains(&i) && want(i), &mut |p| done(p), &mut |d, t| {
                    counts[part].store(d, Ordering::Relaxed);
                    bar.set(counts.iter().map(|x| x.load(Ordering::Relaxed)).sum(), total.unwrap_or(t));
                })
            })
            .collect()
    });
    bar.finish();
    results.into_iter().collect()
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
    let plan = plan_of(s, points, per_point, until)?;
    let started = Instant::now();
    let got = Mutex::new(Vec::new());
    explore_plan(&plan, Shard::ALL, &BTreeSet::new(), cores(), false, &|p| got.lock().expect("no panics").push(p))?;
    let report = xlog::merge_crash_points(got.into_inner().expect("no panics"))?;
    Ok((report, started.elapsed().as_secs_f64(), plan.run_metrics().clone()))
}

fn plan_of(s: &Scenario, points: CrashPoints, per_point: u32, until: Option<Ns>) -> Result<CrashPlan, String> {
    match until {
        Some(t) => CrashPlan::new_until(s, points, per_point, t),
        None => CrashPlan::new(s, points, per_point),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |c| c.get())
}

/// The report as `loglab crash --json` prints it (and `loglab merge` of its shards).
pub fn report_json(
    report: &CrashReport,
    states_per_sec: Option<f64>,
    hung: &Value,
    overruns: &Value,
    base: &str,
    per_point: u32,
) -> Value {
    let mut v = json!({
        "crash_points": report.crash_points,
        "crash_states": report.crash_states,
        "duplicates": report.duplicates,
    });
    if let Some(r) = states_per_sec {
        v["states_per_sec"] = json!(r);
    }
    let rest = json!({
        "violations": report.violations,
        "examples": examples(report, base, per_point),
        "torn_heads": report.torn_heads,
        "transactions_replayed": report.transactions_replayed,
        "cancel_records": report.cancel_records,
        "buffers_cancelled": report.buffers_cancelled,
        "hung": hung,
        "reservation_overruns": overruns,
        "url": base,
    });
    for (k, x) in rest.as_object().expect("an object") {
        v[k] = x.clone();
    }
    if report.horizon_states > 0 {
        v["horizon_states"] = json!(report.horizon_states);
    }
    v
}

fn examples(report: &CrashReport, base: &str, per_point: u32) -> Vec<Value> {
    report
        .examples
        .iter()
        .map(|e| {
            let url = e.link(base, per_point);
            json!({
                "invariant": e.invariant, "detail": e.detail, "event": e.event, "state": e.state, "t_ns": e.t_ns,
                "url": url,
                "reproduce": format!("loglab crash --url '{url}'"),
            })
        })
        .collect()
}

pub fn run(a: &CrashArgs) -> Result<(), String> {
    let (s, decoded) = a.scenario.load_with_link()?;
    if a.crash_points == 0 && !a.every_io {
        return Err("--crash-points: 0 is out of range (allowed: 1 to 1000000)".into());
    }
    if a.states_per_point == 0 {
        return Err("--states-per-point: 0 is out of range (allowed: 1 to 65536)".into());
    }
    if a.jobs == Some(0) {
        return Err("--jobs: 0 is out of range (at least 1)".into());
    }
    let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
    let link = match &decoded {
        Some(d) => CrashLink::of(d)?,
        None => None,
    };
    let (points, per_point) = match link {
        Some(l) => (l.points(), l.budget.unwrap_or(a.states_per_point)),
        None if a.every_io => (CrashPoints::EveryIo, a.states_per_point),
        None => (CrashPoints::Even(a.crash_points), a.states_per_point),
    };
    let until = a.until.as_deref().map(|u| xlog::parse_duration("--until", u)).transpose()?;
    let base = a.scenario.link_of(&s, decoded.as_ref());
    let id = exploration_id(&base, points, per_point, until);
    let mut ckpt = match &a.checkpoint {
        Some(path) => {
            Some(Checkpoint::open(path, &json!({"exploration": id, "shard": shard.unwrap_or(Shard::ALL).to_string()}))?)
        }
        None => None,
    };
    let plan = plan_of(&s, points, per_point, until)?;
    let m = plan.run_metrics();
    let (hung, overruns) = (json!(m.hung), json!(m.reservation_overruns));
    let started = Instant::now();
    let skip: BTreeSet<u64> = ckpt.as_ref().map(|c| c.points.iter().map(|p| p.point).collect()).unwrap_or_default();
    let lines = shard.is_some() || ckpt.is_some();
    let fresh = Mutex::new((Vec::new(), ckpt.as_mut().map(|c| &mut c.file)));
    let write_err = Mutex::new(None);
    explore_plan(&plan, shard.unwrap_or(Shard::ALL), &skip, a.jobs.unwrap_or_else(cores), lines, &|p| {
        let mut g = fresh.lock().expect("no panics");
        if let Some(f) = g.1.as_mut() {
            if let Err(e) = Checkpoint::append(f, &p) {
                write_err.lock().expect("no panics").get_or_insert(e);
            }
        }
        g.0.push(p);
    })?;
    if let Some(e) = write_err.into_inner().expect("no panics") {
        return Err(e);
    }
    let secs = started.elapsed().as_secs_f64();
    let mut all = fresh.into_inner().expect("no panics").0;
    if let Some(c) = ckpt {
        all.extend(c.points);
    }
    if let Some(shard) = shard {
        all.sort_by_key(|p| p.point);
        let doc = json!({
            "loglab_shard": {"kind": "crash", "shard": shard.to_string(), "exploration": id, "no_timing": a.no_timing},
            "seconds": if a.no_timing { json!(null) } else { json!(secs) },
            "hung": hung,
            "reservation_overruns": overruns,
            "points": all,
        });
        crate::print_json(&doc);
        return Ok(());
    }
    let report = xlog::merge_crash_points(all)?;
    let states_per_sec = (!a.no_timing).then(|| report.crash_states as f64 / secs.max(1e-9));
    let v = report_json(&report, states_per_sec, &hung, &overruns, &base, per_point);
    if a.json {
        crate::print_json(&v);
    } else {
        print_text(&v);
    }
    Ok(())
}

/// The report as text, from its JSON.
pub fn print_text(v: &Value) {
    let n = |k: &str| v[k].as_u64().unwrap_or(0);
    println!("crash points         {}", n("crash_points"));
    match v["states_per_sec"].as_f64() {
        Some(r) => {
            println!(
                "crash states         {} ({r:.0} states/s, {} duplicates skipped)",
                n("crash_states"),
                n("duplicates")
            )
        }
        None => println!("crash states         {} ({} duplicates skipped)", n("crash_states"), n("duplicates")),
    }
    println!("torn heads trimmed   {}", n("torn_heads"));
    println!("replayed transactions {}", n("transactions_replayed"));
    println!("cancel records       {} ({} buffers not replayed)", n("cancel_records"), n("buffers_cancelled"));
    if n("horizon_states") > 0 {
        println!("before the horizon   {} (a recovered version predates the folded history)", n("horizon_states"));
    }
    println!("hung                 {}", v["hung"]);
    println!("reservation overruns {}", v["reservation_overruns"]);
    let violations = v["violations"].as_object().cloned().unwrap_or_default();
    if violations.is_empty() {
        println!("violations           none");
    }
    for (k, x) in &violations {
        println!("violation            {k}: {x}");
    }
    for e in v["examples"].as_array().into_iter().flatten() {
        println!("example              {}: {}", e["invariant"], e["url"].as_str().unwrap_or(""));
    }
}

/// A crash exploration's checkpoint file: a header line naming the exploration, then one
/// JSON line per finished crash point, appended as each finishes.
struct Checkpoint {
    file: std::fs::File,
    points: Vec<PointDone>,
}

impl Checkpoint {
    fn open(path: &Path, header: &Value) -> Result<Checkpoint, String> {
        use std::io::Write;
        let shown = path.display();
        let header_line = serde_json::to_string(&json!({"loglab_checkpoint": 1, "of": header})).expect("JSON");
        let mut points = Vec::new();
        let mut keep = 0;
        match std::fs::read_to_string(path) {
            Ok(text) if !text.is_empty() => {
                let mut lines = text.split_inclusive('\n');
                let first = lines.next().unwrap_or("");
                if first.trim_end() != header_line {
                    let theirs: Value = serde_json::from_str(first).unwrap_or(Value::Null);
                    return Err(format!(
                        "--checkpoint {shown}: it records another exploration ({}); this one is {}: give another file",
                        theirs["of"], header
                    ));
                }
                keep = first.len();
                for line in lines {
                    // A run killed mid-line leaves a partial last line: that point runs again.
                    match serde_json::from_str::<PointDone>(line) {
                        Ok(p) if line.ends_with('\n') => {
                            keep += line.len();
                            points.push(p);
                        }
                        _ => break,
                    }
                }
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("--checkpoint {shown}: {e}")),
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| format!("--checkpoint {shown}: {e}"))?;
        file.set_len(keep as u64).map_err(|e| format!("--checkpoint {shown}: {e}"))?;
        use std::io::Seek;
        file.seek(std::io::SeekFrom::End(0)).map_err(|e| format!("--checkpoint {shown}: {e}"))?;
        if keep == 0 {
            writeln!(file, "{header_line}").map_err(|e| format!("--checkpoint {shown}: {e}"))?;
        }
        if !points.is_empty() {
            eprintln!("loglab: resuming from {shown}: {} crash points already explored", points.len());
        }
        Ok(Checkpoint { file, points })
    }

    /// One point, as one write of one line: a kill loses at most the point in progress.
    fn append(file: &mut std::fs::File, p: &PointDone) -> Result<(), String> {
        use std::io::Write;
        let mut line = serde_json::to_string(p).expect("JSON");
        line.push('\n');
        file.write_all(line.as_bytes()).map_err(|e| format!("--checkpoint: {e}"))
    }
}
