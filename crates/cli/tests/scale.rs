//! Explorations spread over processes: `--shard K/N` and `loglab merge` give exactly the
//! unsharded run's JSON, and `--checkpoint` resumes a killed crash exploration.

use assert_cmd::cargo::CommandCargoExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn loglab() -> Command {
    Command::cargo_bin("loglab").unwrap()
}

/// Runs loglab; its standard output (which must be a success).
fn out(args: &[&str]) -> Vec<u8> {
    let o = loglab().args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// The N shards as N processes at once, each writing its JSON to a file; then `merge`.
fn sharded(dir: &Path, args: &[&str], n: u32) -> Vec<u8> {
    let children: Vec<_> = (1..=n)
        .map(|k| {
            let file = std::fs::File::create(dir.join(format!("shard-{k}.json"))).unwrap();
            let shard = format!("{k}/{n}");
            loglab().args(args).args(["--shard", &shard]).stdout(file).stderr(Stdio::null()).spawn().unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    // In another order than dealt: merge sorts them out.
    let files: Vec<String> = (1..=n).rev().map(|k| dir.join(format!("shard-{k}.json")).display().to_string()).collect();
    let mut merge = vec!["merge"];
    merge.extend(files.iter().map(String::as_str));
    out(&merge)
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("loglab-scale-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_sharded_crash_exploration_merges_into_the_unsharded_report_byte_for_byte() {
    let dir = tempdir("crash");
    // A bug-zoo preset: violations and their example links must merge as one pass keeps them.
    let args = ["crash", "--preset", "force-without-flush", "--set", "duration=20ms", "--crash-points", "30"];
    let mut whole_args = args.to_vec();
    whole_args.extend(["--json", "--no-timing"]);
    let whole = out(&whole_args);
    let v: serde_json::Value = serde_json::from_slice(&whole).unwrap();
    assert_eq!(v["crash_points"], 30);
    assert!(v["violations"].as_object().is_some_and(|m| !m.is_empty()), "{v}");
    assert!(v.get("states_per_sec").is_none(), "--no-timing leaves the rate out");
    let mut shard_args = args.to_vec();
    shard_args.push("--no-timing");
    for n in [3, 4] {
        assert_eq!(
            String::from_utf8(sharded(&dir, &shard_args, n)).unwrap(),
            String::from_utf8(whole.clone()).unwrap(),
            "{n} shards"
        );
    }
    // With timing, every key but the wall-clock rate is the same.
    let merged: serde_json::Value = serde_json::from_slice(&sharded(&dir, &args, 2)).unwrap();
    assert!(merged["states_per_sec"].as_f64().unwrap() > 0.0);
    let mut m = merged.as_object().unwrap().clone();
    m.remove("states_per_sec");
    assert_eq!(serde_json::Value::Object(m), v);
    // Every crash point of the run is one shard's.
    let every: serde_json::Value =
        serde_json::from_slice(&out(&["crash", "--preset", "small-crash", "--every-io", "--json", "--no-timing"]))
            .unwrap();
    let merged: serde_json::Value =
        serde_json::from_slice(&sharded(&dir, &["crash", "--preset", "small-crash", "--every-io", "--no-timing"], 3))
            .unwrap();
    assert_eq!(merged, every);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sharded_sweep_merges_into_the_unsharded_json_byte_for_byte() {
    let dir = tempdir("sweep");
    let args = [
        "sweep",
        "--preset",
        "small-crash",
        "--set",
        "duration=50ms",
        "--vary",
        "log_size=2MiB,4MiB,8MiB",
        "--vary",
        "flush=legacy,upstream",
    ];
    let mut whole_args = args.to_vec();
    whole_args.push("--json");
    let whole = out(&whole_args);
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&whole).unwrap().as_array().unwrap().len(), 6);
    for n in [2, 4, 6, 8] {
        assert_eq!(sharded(&dir, &args, n), whole, "{n} shards");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_shards_and_incomplete_merges_are_named() {
    for (shard, needle) in [
        ("0/4", "K is 0, out of range for N = 4 (allowed: 1 to 4"),
        ("5/4", "K is 5, out of range for N = 4"),
        ("a/b", "'a/b' is not K/N"),
        ("1/0", "N is 0"),
    ] {
        for cmd in [
            &["crash", "--preset", "small-crash"][..],
            &["sweep", "--preset", "small-crash", "--vary", "log_size=2MiB"],
        ] {
            let o = loglab().args(cmd).args(["--shard", shard]).output().unwrap();
            assert_eq!(o.status.code(), Some(2), "{cmd:?} {shard}");
            let err = String::from_utf8(o.stderr).unwrap();
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(needle), "{cmd:?} {shard}: {err}");
        }
    }
    let dir = tempdir("bad");
    let args = ["crash", "--preset", "small-crash", "--crash-points", "4", "--no-timing"];
    for k in 1..=3 {
        let o = out(&[&args[..], &["--shard", &format!("{k}/3")]].concat());
        std::fs::write(dir.join(format!("s{k}.json")), o).unwrap();
    }
    let p = |k: u32| dir.join(format!("s{k}.json")).display().to_string();
    let fails = |files: &[String], needle: &str| {
        let o = loglab().arg("merge").args(files).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains(needle), "{files:?}: {err}");
    };
    fails(&[p(1), p(3)], "missing shards: 2/3");
    fails(&[p(1), p(2), p(2), p(3)], "shard 2/3 is given twice");
    std::fs::write(
        dir.join("s4.json"),
        out(&["crash", "--preset", "small-crash", "--crash-points", "5", "--shard", "2/3"]),
    )
    .unwrap();
    fails(&[p(1), p(4), p(3)], "shards of different explorations");
    std::fs::write(dir.join("s5.json"), "{\"crash_points\": 3}").unwrap();
    fails(&[p(5)], "not a shard's output");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_crash_exploration_resumes_from_its_checkpoint_with_the_same_report() {
    let dir = tempdir("ckpt");
    let ckpt = dir.join("run.ckpt");
    // About 25 ms a point here: long enough to be killed part way.
    let args = [
        "crash",
        "--preset",
        "fsync-heavy",
        "--set",
        "duration=1s",
        "--states-per-point",
        "4096",
        "--crash-points",
        "60",
        "--json",
        "--no-timing",
    ];
    let whole = out(&args);
    // Killed once some points are recorded (and before all are).
    let mut child = loglab()
        .args(args)
        .args(["--checkpoint", ckpt.to_str().unwrap(), "--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = |p: &Path| std::fs::read_to_string(p).map(|t| t.lines().count()).unwrap_or(0);
    let started = Instant::now();
    while lines(&ckpt) < 4 && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    let recorded = lines(&ckpt) - 1;
    assert!(!status.success() && (3..60).contains(&recorded), "killed after {recorded} points ({status})");
    // A partial line, as a kill in the middle of a write leaves.
    let mut text = std::fs::read_to_string(&ckpt).unwrap();
    text.push_str("{\"point\": 59, \"eve");
    std::fs::write(&ckpt, text).unwrap();
    let o = loglab().args(args).args(["--checkpoint", ckpt.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains(&format!("resuming from {}: {recorded} crash points already explored", ckpt.display())),
        "{err}"
    );
    assert_eq!(String::from_utf8(o.stdout).unwrap(), String::from_utf8(whole.clone()).unwrap());
    // Finished: every point is in the file, and a rerun explores none again.
    assert_eq!(lines(&ckpt), 61);
    assert_eq!(out(&[&args[..], &["--checkpoint", ckpt.to_str().unwrap()]].concat()), whole);
    // A checkpoint of another exploration is refused, and left as it was.
    let before = std::fs::read(&ckpt).unwrap();
    let o = loglab()
        .args(["crash", "--preset", "fsync-heavy", "--crash-points", "61", "--checkpoint", ckpt.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr).unwrap().contains("records another exploration"));
    assert_eq!(std::fs::read(&ckpt).unwrap(), before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// deploy/'s scripts as a Kubernetes Indexed Job and a Slurm job array run them: the
/// index each scheduler sets picks the shard; the shards merge into the unsharded report.
#[test]
fn the_cluster_scripts_run_each_shard_from_the_schedulers_index() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bin = assert_cmd::cargo::cargo_bin("loglab");
    let exploration = ["crash", "--preset", "force-without-flush", "--set", "duration=20ms", "--crash-points", "12"];
    let whole = out(&[&exploration[..], &["--json", "--no-timing"]].concat());
    let merged = |dir: &Path| {
        let files: Vec<String> = (1..=3).map(|k| dir.join(format!("shard-{k}.json")).display().to_string()).collect();
        assert!(dir.join("shard-2.ckpt").exists(), "a crash shard keeps a checkpoint");
        out(&[&["merge"][..], &files.iter().map(String::as_str).collect::<Vec<_>>()].concat())
    };
    // A deploy/ script as a scheduler runs it: its environment, loglab from this build.
    let script = |path: &str, args: &[&str], env: &[(&str, String)], out: &Path| {
        let mut c = Command::new(root.join(path));
        c.args(args).env("LOGLAB_OUT", out).env("LOGLAB_BIN", &bin).stdout(Stdio::null()).stderr(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        assert!(c.status().unwrap().success(), "{path} {env:?}");
    };
    // Kubernetes: JOB_COMPLETION_INDEX from 0.
    let k8s = tempdir("k8s");
    let args: Vec<&str> = exploration.iter().copied().chain(["--no-timing"]).collect();
    for index in 0..3 {
        let env = [("JOB_COMPLETION_INDEX", index.to_string()), ("LOGLAB_SHARDS", "3".into())];
        script("deploy/shard.sh", &args, &env, &k8s);
    }
    assert_eq!(merged(&k8s), whole);
    // The manifest runs that script with the index the Job sets.
    let job = std::fs::read_to_string(root.join("deploy/k8s/crash-indexed-job.yaml")).unwrap();
    for needle in ["completionMode: Indexed", "command: [\"loglab-shard\"]", "name: LOGLAB_SHARDS"] {
        assert!(job.contains(needle), "{needle}");
    }
    // Slurm: the array script, SLURM_ARRAY_TASK_ID from the array's first index.
    let slurm = tempdir("slurm");
    for task in 4..7 {
        let env = [
            ("SLURM_ARRAY_TASK_ID", task.to_string()),
            ("SLURM_ARRAY_TASK_MIN", "4".into()),
            ("SLURM_ARRAY_TASK_COUNT", "3".into()),
            ("SLURM_SUBMIT_DIR", root.display().to_string()),
            ("SLURM_CPUS_PER_TASK", "1".into()),
            ("LOGLAB_EXPLORATION", args.join(" ")),
        ];
        script("deploy/slurm/crash-array.sbatch", &[], &env, &slurm);
    }
    assert_eq!(merged(&slurm), whole);
    script("deploy/slurm/merge.sbatch", &[], &[], &slurm);
    assert_eq!(std::fs::read(slurm.join("report.json")).unwrap(), whole);
    // A shard already complete is not run again (a retried pod, a requeued task).
    let env = [("LOGLAB_SHARD", "1".to_string()), ("LOGLAB_SHARDS", "3".into())];
    script("deploy/shard.sh", &["crash", "--preset", "no-such-preset"], &env, &slurm);
    let _ = std::fs::remove_dir_all(&k8s);
    let _ = std::fs::remove_dir_all(&slurm);
}
