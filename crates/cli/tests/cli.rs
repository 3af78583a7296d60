//! The loglab command line, as scripts and course material use it.

use assert_cmd::Command;
use serde_json::Value;

fn loglab() -> Command {
    Command::cargo_bin("loglab").unwrap()
}

fn json(args: &[&str]) -> Value {
    let out = loglab().args(args).assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn presets_lists_the_named_scenarios() {
    let out = loglab().arg("presets").assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    for p in ["fsync-heavy", "fsmark-create", "small-crash"] {
        assert!(text.lines().any(|l| l.starts_with(p)), "{p} missing in {text}");
    }
}

#[test]
fn run_json_has_the_metric_keys_and_is_deterministic() {
    let args = ["run", "--preset", "small-crash", "--set", "duration=100ms", "--json"];
    let a = json(&args);
    for k in [
        "sim_seconds",
        "transactions",
        "tx_per_sec",
        "latency_ms_p50",
        "latency_ms_p99",
        "latency_ms_p995",
        "bandwidth_mb_s",
        "grant_head_waits",
        "checkpoints",
        "iclog_writes",
        "noiclog_events",
        "cache_flushes",
        "fua_writes",
        "device_writes",
        "reservation_overruns",
        "cil_throttle_waits",
        "cil_throttle_depth_max",
        "shadow_allocations",
        "rsum_reads",
        "hung",
        "events",
        "trace_hash",
        "ail_pushes",
        "metadata_writebacks",
        "bytes_logged",
        "log_overwrites_unflushed",
    ] {
        assert!(a.get(k).is_some(), "missing key {k}");
    }
    assert!(a["transactions"].as_u64().unwrap() > 0);
    assert_eq!(a["sim_seconds"].as_f64().unwrap(), 0.1);
    assert_eq!(a, json(&args), "same scenario and seed, same output");
}

#[test]
fn set_changes_the_model() {
    let base = json(&["run", "--preset", "small-crash", "--duration", "100ms", "--json"]);
    let other = json(&["run", "--preset", "small-crash", "--duration", "100ms", "--set", "seed=2", "--json"]);
    assert_ne!(base["trace_hash"], other["trace_hash"]);
    let ssd =
        json(&["run", "--preset", "small-crash", "--duration", "100ms", "--set", "device=enterprise-ssd", "--json"]);
    assert_eq!(ssd["cache_flushes"].as_u64().unwrap(), 0, "no volatile cache: flushes elided");
    assert!(ssd["cache_flushes_elided"].as_u64().unwrap() > 0);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, needle) in [
        (vec!["run", "--preset", "nope"], "unknown preset 'nope'"),
        (vec!["run", "--set", "fs_size=22OGiB"], "fs_size"),
        (vec!["run", "--set", "iclog_count=9"], "iclog_count: 9 is out of range (allowed: 2 to 8)"),
        (vec!["run", "--set", "bogus=1"], "unknown key 'bogus'"),
        (vec!["run", "--set", "flush"], "is not KEY=VALUE"),
        (vec!["crash", "--crash-points", "0"], "--crash-points"),
        (vec!["trace", "--preset", "nope"], "unknown preset 'nope'"),
        (vec!["trace", "--format", "xml"], "--format"),
        (vec!["sweep", "--vary", "log_size=22OGiB"], "log_size"),
        (vec!["sweep", "--vary", "bogus=1,2"], "unknown key 'bogus'"),
        (vec!["url", "decode", "http://127.0.0.1:8080/?colour=red"], "unknown key 'colour'"),
        (vec!["run", "--url", "?writers=lots"], "writers"),
        (vec!["size", "--fs-size", "1TiB", "--block-size", "3000"], "block_size"),
        (vec!["size", "--fs-size", "1TiB", "--algo", "newest"], "--algo"),
        (vec!["run", "--no-such-flag"], "--no-such-flag"),
        (vec!["export-image", "--image", "/nonexistent/x.img"], "/nonexistent/x.img"),
        (vec!["url", "encode", "--fixed"], "required arguments were not provided: --preset"),
        (vec!["url", "encode", "--preset", "fsync-heavy", "--fixed"], "'fsync-heavy' is not a bug-zoo preset"),
    ] {
        let out = loglab().args(&args).assert().code(2).get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn crash_reports_states_and_violations_by_invariant() {
    let ok = json(&["crash", "--preset", "small-crash", "--crash-points", "30", "--json"]);
    assert!(ok["crash_states"].as_u64().unwrap() >= 30);
    assert!(ok["states_per_sec"].as_f64().unwrap() > 0.0);
    assert_eq!(ok["violations"], serde_json::json!({}));
    assert_eq!(ok["hung"], false);
    let bad = json(&[
        "crash",
        "--preset",
        "small-crash",
        "--set",
        "device_bug=fua-ignored",
        "--crash-points",
        "30",
        "--json",
    ]);
    assert!(bad["violations"]["durability"].as_u64().unwrap() > 0, "{bad}");
    assert!(!bad["examples"].as_array().unwrap().is_empty());
}

#[test]
fn size_reports_each_algorithm_with_its_steps() {
    let v = json(&["size", "--fs-size", "100GiB", "--json"]);
    let algos = v["algorithms"].as_object().unwrap();
    assert_eq!(algos.len(), 3);
    // Below 128 GiB the 2022 floor (64 MiB) beats the 2048:1 ratio that pre-2022 used.
    assert_eq!(algos["pre-2022"]["log_blocks"], 12800);
    assert_eq!(algos["xfsprogs-6.1"]["log_blocks"], 16384);
    assert_eq!(v["log_blocks"], 16384);
    assert_eq!(v["min_log_blocks"], 1986);
    assert!(algos["xfsprogs-6.1"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s.as_str().unwrap().contains("64 MiB floor")));
    // The seed patch as posted used 512 MB as its tiny threshold; xfsprogs shipped 300 MB.
    let small = json(&["size", "--fs-size", "400MiB", "--json"]);
    assert!(
        small["algorithms"]["seed-patch"]["log_blocks"].as_u64()
            < small["algorithms"]["xfsprogs-6.1"]["log_blocks"].as_u64()
    );
    loglab().args(["size", "--fs-size", "22OGiB"]).assert().code(2);
    let out = loglab().args(["size", "--fs-size", "299MiB"]).assert().code(2).get_output().stderr.clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("Filesystem must be larger than 300MB") && err.lines().count() == 1, "{err}");
}

#[test]
fn rt_summary_cache_cuts_summary_reads_tenfold_without_changing_the_run() {
    let off = json(&["run", "--preset", "rt-alloc-fragmented", "--set", "rsum_cache=off", "--json"]);
    let on = json(&["run", "--preset", "rt-alloc-fragmented", "--set", "rsum_cache=on", "--json"]);
    let (a, b) = (off["rsum_reads"].as_u64().unwrap(), on["rsum_reads"].as_u64().unwrap());
    assert!(b * 10 <= a, "summary reads: {b} with the cache, {a} without");
    // Same allocations, same events: the cache only saves buffer reads.
    assert_eq!(off["trace_hash"], on["trace_hash"]);
    assert_eq!(json(&["run", "--preset", "fsync-heavy", "--duration", "50ms", "--json"])["rsum_reads"], 0);
}

#[test]
fn a_fixed_variant_has_a_link_that_runs_it() {
    let out = loglab().args(["url", "encode", "--preset", "series-v1-flush-race", "--fixed"]).assert().success();
    let url = String::from_utf8(out.get_output().stdout.clone()).unwrap().trim().to_string();
    assert_eq!(url, "http://127.0.0.1:8080/?preset=series-v1-flush-race&flush=v5.14");
    let by_link = json(&["run", "--url", &url, "--duration", "50ms", "--json"]);
    let by_flag = json(&["run", "--preset", "series-v1-flush-race", "--fixed", "--duration", "50ms", "--json"]);
    assert_eq!(by_link["trace_hash"], by_flag["trace_hash"]);
}

#[test]
fn until_stops_at_that_instant_and_the_link_form_agrees() {
    let part = json(&["run", "--preset", "small-crash", "--until", "5ms", "--json"]);
    let whole = json(&["run", "--preset", "small-crash", "--json"]);
    assert!((part["sim_seconds"].as_f64().unwrap() - 0.005).abs() < 1e-12, "{}", part["sim_seconds"]);
    assert!(part["events"].as_u64() < whole["events"].as_u64());
    assert_ne!(part["trace_hash"], whole["trace_hash"]);
    // `at=` in a link is where the lab opens; run takes the same instant with --until.
    let link = json(&["run", "--url", "http://127.0.0.1:8080/?preset=small-crash&at=5ms", "--until", "5ms", "--json"]);
    assert_eq!(link["trace_hash"], part["trace_hash"]);
    let out = loglab().args(["run", "--preset", "small-crash", "--until", "9s"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--until: 9s is past the scenario's duration (allowed: 0 to"), "{err}");
}

#[test]
fn a_closed_pipe_ends_the_cli_quietly() {
    use std::io::Read;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_loglab"))
        .args(["trace", "--preset", "small-crash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap(); // then the pipe closes
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && err.is_empty(), "stderr: {err}");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_loglab"))
        .args(["run", "--preset", "small-crash", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // closed before the report is printed
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && err.is_empty(), "stderr: {err}");
}

#[test]
fn the_text_report_groups_every_metric_once_with_units() {
    let v = json(&["run", "--preset", "small-crash", "--json"]);
    let keys: Vec<&str> = xlog::REPORT_GROUPS.iter().flat_map(|(_, ks)| ks.iter().map(|(k, _)| *k)).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), keys.len(), "a metric is in two sections");
    let json_keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(sorted, json_keys, "every --json key is in exactly one section");
    let out = loglab().args(["run", "--preset", "small-crash"]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    for title in
        ["Throughput and latency", "Log and grant heads", "CIL and checkpoints", "Devices", "Crash-relevant counters"]
    {
        assert!(text.lines().any(|l| l == title), "section {title} missing:\n{text}");
    }
    let p99 = text.lines().find(|l| l.trim_start().starts_with("latency_ms_p99 ")).unwrap();
    assert!(p99.ends_with(" ms"), "{p99}");
    assert!(text.contains("reproduce: http://127.0.0.1:8080/?preset=small-crash"));
}

#[test]
fn trace_until_is_the_start_of_the_whole_trace_up_to_that_time() {
    let text =
        |args: &[&str]| String::from_utf8(loglab().args(args).assert().success().get_output().stdout.clone()).unwrap();
    let body = |t: &str| t.lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect::<Vec<_>>();
    let whole = body(&text(&["trace", "--preset", "small-crash", "--duration", "10ms"]));
    let until = text(&["trace", "--preset", "small-crash", "--duration", "10ms", "--until", "2ms"]);
    let part = body(&until);
    assert!(!part.is_empty() && part.len() < whole.len());
    assert_eq!(part[..], whole[..part.len()], "a prefix of the whole run's trace");
    assert!(until.contains(&format!("entries-in-buffer/entries-written: {}/{}", part.len(), part.len())));
    // Every kept event is at or before 2 ms; the next one in the whole trace is after it.
    let stamp = |l: &str| l.split_whitespace().nth(3).unwrap().trim_end_matches(':').parse::<f64>().unwrap();
    assert!(part.iter().all(|l| stamp(l) <= 0.002));
    assert!(stamp(&whole[part.len()]) > 0.002);
}

#[test]
fn bench_reports_the_writer_curve_of_the_runs_it_names() {
    let b = json(&["bench", "--json"]);
    let curve = b["writer_curve"].as_array().unwrap();
    assert_eq!(curve.iter().map(|c| c["writers"].as_u64().unwrap()).collect::<Vec<_>>(), [20, 200, 2000]);
    // Each point is the 2 s fsync-heavy run at that many writers: the same events as `run`.
    for c in curve {
        let w = c["writers"].as_u64().unwrap().to_string();
        let set = format!("writers={w}");
        let r = json(&["run", "--preset", "fsync-heavy", "--set", &set, "--duration", "2s", "--json"]);
        assert_eq!(c["events"], r["events"], "{w} writers");
        assert!(c["events_per_sec"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(curve[1]["events"], b["events"]);
    assert!(b["events_per_sec_2000_over_20"].as_f64().unwrap() > 0.0);
    assert!(b["crash_states"].as_u64().unwrap() > 1000, "{b}");
    // Ten times the crash points: more states, each point explored as the 200-point run does.
    assert!(b["crash_states_2000_points"].as_u64().unwrap() > 5 * b["crash_states"].as_u64().unwrap(), "{b}");
    assert!(b["crash_states_per_sec_2000_points"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_stamped_link_is_checked_against_the_model_and_bad_links_are_named() {
    let out = loglab()
        .args([
            "url",
            "encode",
            "--preset",
            "cil-throttle-32mb",
            "--at",
            "150ms",
            "--stamp",
            "--key",
            "panels=cil,tasks",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let link = String::from_utf8(out).unwrap().trim().to_string();
    assert!(link.contains("&at=150ms") && link.contains("&v=2") && link.contains("&h="), "{link}");
    // The hash is `loglab run --until`'s at the same moment.
    let run = json(&["run", "--url", &link, "--until", "150ms", "--json"]);
    assert!(link.ends_with(run["trace_hash"].as_str().unwrap()) || link.contains(run["trace_hash"].as_str().unwrap()));
    loglab().args(["url", "check", &link]).assert().code(0);
    // A link whose hash the model no longer produces: exit 1, and the changes since its version.
    let h = run["trace_hash"].as_str().unwrap();
    let made_with = link.split('&').find(|kv| kv.starts_with("m=")).expect("a stamped link records its model");
    let stale = link.replace(h, "0123456789abcdef").replace(&format!("&{made_with}&"), "&m=1&");
    let o = loglab().args(["url", "check", &stale, "--json"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["holds"].as_bool(), v["link_model"].as_u64()), (Some(false), Some(1)));
    assert!(!v["changes"].as_array().unwrap().is_empty(), "{v}");
    // Every path that reads a link validates all of it.
    let digits = "9".repeat(9000);
    for (args, needle) in [
        (vec!["run", "--url", "?preset=small-crash&at=-5ms"], "at: '-5ms' is not a duration"),
        (vec!["url", "decode", "?preset=small-crash&v=9"], "schema version 9, newer than this lab's 2"),
        (vec!["url", "check", "?preset=small-crash&panels=kitchen"], "panels: 'kitchen' is not a panel"),
        (vec!["crash", "--url", "?preset=small-crash&speed=2ms"], "speed: '2ms' is not a speed of Play"),
    ] {
        let o = loglab().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains(needle) && err.lines().count() == 1, "{args:?}: {err}");
    }
    let long = format!("?preset=small-crash&writers={digits}");
    let o = loglab().args(["run", "--url", &long]).output().unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("bytes long (at most 8192)") && err.len() < 200, "{err}");
}

#[test]
fn lessons_list_and_judge_answers_with_the_model() {
    let list = json(&["lessons", "--json"]);
    let list = list.as_array().unwrap();
    assert!(list.len() >= 14);
    for l in list {
        assert!(l["link"].as_str().unwrap().contains("lesson="), "{l}");
    }
    // The model's answer for seed 3 is judged right, a far-off one wrong.
    let out = loglab()
        .args(["lessons", "solve", "throttle-32-64", "--seed", "3"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let right = String::from_utf8(out).unwrap().trim().to_string();
    let v = json(&["lessons", "check", "throttle-32-64", &right, "--seed", "3", "--json"]);
    assert_eq!(v["correct"], true, "{v}");
    let wrong = (right.parse::<f64>().unwrap() * 3.0 + 100.0).to_string();
    let v = json(&["lessons", "check", "throttle-32-64", &wrong, "--seed", "3", "--json"]);
    assert_eq!(v["correct"], false, "{v}");
    let o = loglab().args(["lessons", "check", "no-such", "1"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr).unwrap().contains("unknown lesson 'no-such'"));
}
