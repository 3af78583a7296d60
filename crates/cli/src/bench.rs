//! `loglab bench`: simulator throughput, measured (never asserted in tests).

use serde_json::json;
use std::time::Instant;
use xlog::{find_preset, Sim};

/// Crash states per second on the busy workloads (#44's goals): each preset, a point count
/// and states per point small enough to finish in seconds. The crash time excludes the run
/// that places the points.
struct Busy {
    /// Names its JSON keys (`crash_states_per_sec_<key>`).
    key: &'static str,
    preset: &'static str,
    set: &'static [(&'static str, &'static str)],
    points: u32,
    per_point: u32,
}

const BUSY: &[Busy] = &[
    Busy { key: "fsmark_create", preset: "fsmark-create", set: &[], points: 8, per_point: 8 },
    // What the lab's Explore does on `?preset=fsmark-create&at=200ms` (24 points, 64 states).
    Busy {
        key: "fsmark_create_200ms",
        preset: "fsmark-create",
        set: &[("duration", "200ms")],
        points: 24,
        per_point: 64,
    },
    Busy { key: "fsync_heavy", preset: "fsync-heavy", set: &[("writers", "32")], points: 50, per_point: 64 },
    Busy { key: "sync_append", preset: "sync-append", set: &[], points: 20, per_point: 16 },
];

/// `loglab bench --busy`: the explorer's rate on the busy presets.
pub fn busy(as_json: bool) -> Result<(), String> {
    let mut out = serde_json::Map::new();
    for &Busy { key, preset: name, set: sets, points, per_point } in BUSY {
        let mut s = find_preset(name)?;
        for (k, v) in sets {
            s.set(k, v)?;
        }
        let (report, secs, _) = crate::crash_cmd::explore_points(&s, xlog::CrashPoints::Even(points), per_point, None)?;
        let rate = report.crash_states as f64 / secs.max(1e-9);
        if as_json {
            out.insert(format!("crash_states_per_sec_{key}"), json!(rate));
            out.insert(format!("crash_states_{key}"), json!(report.crash_states));
        } else {
            let set: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
            println!(
                "crash explorer, {name} {}{points} points x {per_point}: {} states in {secs:.2} s = {rate:.1} states/s",
                if set.is_empty() { String::new() } else { format!("({}) ", set.join(" ")) },
                report.crash_states
            );
        }
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&serde_json::Value::Object(out)).expect("serializable"));
    }
    Ok(())
}

pub fn run(as_json: bool, events_only: bool) -> Result<(), String> {
    // A 200-writer fsync-heavy run: the source thread 000 shape (the browser runs the same one).
    // Best of three: the first run in a process also pays for the memory it is the first to
    // touch (page faults), which says more about the allocator than about the model.
    let s = xlog::bench_scenario();
    let (mut times, mut last) = (Vec::new(), None);
    for _ in 0..3 {
        let mut sim = Sim::new(&s)?;
        let t = Instant::now();
        sim.run();
        times.push(t.elapsed().as_secs_f64());
        last = Some(sim);
    }
    let sim = last.expect("three runs");
    let secs = times.iter().copied().fold(f64::MAX, f64::min);
    let events = sim.events();
    let events_per_sec = events as f64 / secs;
    let first_per_sec = events as f64 / times[0];
    let headline = json!({
        "events": events,
        "trace_hash": sim.metrics().trace_hash,
        "events_per_sec": events_per_sec,
        "events_per_sec_first_run": first_per_sec,
    });
    let headline_text = format!(
        "200-writer fsync-heavy: {events} events in {secs:.2} s = {events_per_sec:.0} events/s \
         (best of 3; the first run: {first_per_sec:.0})"
    );
    if events_only {
        match as_json {
            true => println!("{}", serde_json::to_string_pretty(&headline).expect("serializable")),
            false => println!("{headline_text}"),
        }
        return Ok(());
    }
    // The same run at 20, 200 and 2000 writers: how the event rate holds as tasks multiply.
    let mut curve = Vec::new();
    for writers in [20u32, 200, 2000] {
        let mut c = s.clone();
        c.writers = writers;
        let mut sim = Sim::new(&c)?;
        let t = Instant::now();
        sim.run();
        curve.push((writers, sim.events(), sim.events() as f64 / t.elapsed().as_secs_f64()));
    }
    let ratio = curve[2].2 / curve[0].2;
    let small = find_preset("small-crash")?;
    let (report, csecs, _) = crate::crash_cmd::explore_points(&small, xlog::CrashPoints::Even(200), 64, None)?;
    let crash_states_per_sec = report.crash_states as f64 / csecs;
    // Ten times the points on the same run: the simulation to reach them costs the same, so
    // this rate is the explorer's own (states of one point share its oracle index and log).
    let (dense, dsecs, _) = crate::crash_cmd::explore_points(&small, xlog::CrashPoints::Even(2000), 64, None)?;
    let dense_per_sec = dense.crash_states as f64 / dsecs;
    if as_json {
        let mut v = headline;
        v["crash_states"] = json!(report.crash_states);
        v["crash_states_per_sec"] = json!(crash_states_per_sec);
        v["crash_states_2000_points"] = json!(dense.crash_states);
        v["crash_states_per_sec_2000_points"] = json!(dense_per_sec);
        v["writer_curve"] =
            curve.iter().map(|&(w, e, r)| json!({"writers": w, "events": e, "events_per_sec": r})).collect();
        v["events_per_sec_2000_over_20"] = json!(ratio);
        println!("{}", serde_json::to_string_pretty(&v).expect("serializable"));
    } else {
        println!("{headline_text}");
        for (w, e, r) in &curve {
            println!("{w:>4}-writer fsync-heavy: {e} events = {r:.0} events/s");
        }
        println!("2000 writers run at {:.0}% of the event rate of 20", ratio * 100.0);
        println!(
            "crash explorer, 200 points: {} states in {csecs:.2} s = {crash_states_per_sec:.0} states/s",
            report.crash_states
        );
        println!(
            "crash explorer, 2000 points: {} states in {dsecs:.2} s = {dense_per_sec:.0} states/s",
            dense.crash_states
        );
    }
    Ok(())
}
