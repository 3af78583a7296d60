//! `loglab kernel`: the real kernel as the model's oracle. These run where root, loop devices,
//! XFS and tracefs are (this machine and CI); elsewhere each says what it needs and skips.

use assert_cmd::Command;
use serde_json::Value;
use std::time::Duration;

fn loglab() -> Command {
    Command::cargo_bin("loglab").unwrap()
}

/// Why this machine cannot run the kernel tests, or `None`.
fn unavailable() -> Option<&'static str> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root");
    }
    if !std::path::Path::new("/dev/loop-control").exists() {
        return Some("needs loop devices");
    }
    if !std::fs::read_to_string("/proc/filesystems").is_ok_and(|f| f.contains("xfs")) {
        return Some("needs XFS in the kernel");
    }
    if std::process::Command::new("mkfs.xfs").arg("-V").output().is_err() {
        return Some("needs mkfs.xfs");
    }
    None
}

/// One kernel run at a time: each checks that it left nothing behind, which a run beside it
/// would break (and two runs would share the machine's two cores).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

macro_rules! require_kernel {
    () => {
        if let Some(why) = unavailable() {
            eprintln!("skipped: the kernel oracle {why}");
            return;
        }
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    };
}

/// Loop devices backed by a file of a kernel run (`loglab-kernel-<pid>`), and its mounts.
fn leftovers() -> Vec<String> {
    let loops = std::process::Command::new("losetup").arg("-a").output().unwrap().stdout;
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    String::from_utf8_lossy(&loops)
        .lines()
        .chain(mounts.lines())
        .filter(|l| l.contains("loglab-kernel-") || l.contains("loglab-recorder"))
        .map(str::to_string)
        .collect()
}

fn compare(args: &[&str]) -> Value {
    let out = loglab().args(["kernel", "compare", "--json"]).args(args).timeout(Duration::from_secs(120)).assert();
    let out = out.success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn kernel_and_model_agree_on_the_flags_of_every_checkpoint_iclog() {
    require_kernel!();
    // fsmark-create: checkpoints pushed at the CIL space limit span many iclogs.
    let v = compare(&["--preset", "fsmark-create", "--set", "writers=4", "--set", "duration=2s"]);
    let k = &v["kernel"];
    assert!(k["transactions"].as_u64().unwrap() > 1000, "the kernel ran the workload: {k}");
    assert!(k["iclog_flags"]["multi_iclog_checkpoints"].as_u64().unwrap() >= 1, "{k}");
    assert_eq!(k["trace_events_lost"], 0);
    for check in
        ["start_iclog_needs_flush", "middle_iclogs_unflagged", "commit_iclog_needs_flush_fua", "no_fua_without_flush"]
    {
        assert_eq!(v["agree"][check]["agree"], true, "{check}: {}", v["agree"][check]);
    }
    // Both sides report the same keys for what the run logged.
    for key in ["bytes_per_transaction", "iclog_writes", "log_blocks", "checkpoints", "cache_flushes"] {
        assert!(v["model"][key].is_number() && k[key].is_number(), "{key}");
    }
    assert_eq!(k["bytes_logged"].as_u64().unwrap(), 512 * k["log_blocks"].as_u64().unwrap());
    // Where the push runs' time went, on both sides: on a CPU, runnable, asleep (the kernel's
    // from its kworkers' `sched_switch` and `sched_waking`).
    for side in ["model", "kernel"] {
        let w = &v[side]["cil_push_work"];
        for key in ["cil_push_ms_cpu", "cil_push_ms_cpu_wait", "cil_push_ms_asleep"] {
            assert!(w[key].is_number(), "{side} {key}: {w}");
        }
    }
    assert!(k["cil_push_work"]["cil_push_ms_cpu"].as_f64().unwrap() > 0.0, "{}", k["cil_push_work"]);
    // A create logs what the kernel's does: the inode, and the directory blocks it grew
    // (measured here: model 303.3, kernel 300.6 bytes; the old one-chunk directory, ~257).
    assert_eq!(v["agree"]["bytes_per_transaction"]["agree"], true, "{}", v["agree"]["bytes_per_transaction"]);
    // fsmark-create is upstream already: only its writers move onto this machine's CPUs.
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert_eq!(v["model_set_to_running_kernel"], serde_json::json!([format!("cpus: 0 -> {cpus}")]));
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
}

#[test]
fn fsync_forces_the_log_on_the_kernel_as_in_the_model() {
    require_kernel!();
    let v = compare(&["--preset", "fsync-heavy", "--set", "writers=4", "--set", "duration=1s"]);
    let (m, k) = (&v["model"], &v["kernel"]);
    // Every fsync is a log force whose iclog asks for a PREFLUSH and FUA, on both sides.
    assert!(k["fsyncs"].as_u64().unwrap() > 100, "{k}");
    assert!(k["log_forces"].as_u64().unwrap() > 100 && m["log_forces"].as_u64().unwrap() > 100);
    let fua = |x: &Value| x["iclog_flags"]["iclogs_by_flags"]["FLUSH|FUA"].as_u64().unwrap_or(0);
    assert!(fua(k) * 2 > k["iclog_writes"].as_u64().unwrap(), "most kernel iclogs are forced: {k}");
    assert!(fua(m) * 2 > m["iclog_writes"].as_u64().unwrap(), "most model iclogs are forced: {m}");
    assert!(k["cache_flushes"].as_u64().unwrap() > 100, "the loop device saw the flushes: {k}");
    // The model runs what the kernel's runner runs, an append and an fsync (`fsync_op=append`):
    // the I/O completion's conversion each time and the timestamps only once the clock ticked,
    // so between one and two transactions a fsync (`fsync_op=tx`: one). Four writers, one an
    // AG, keep their extents in the inode (measured here over 5 s: 1.30 and 1.27 transactions a
    // fsync, 805 and 782 bytes).
    let changed = v["model_set_to_running_kernel"].as_array().unwrap();
    assert!(changed.iter().any(|c| c == "fsync_op: tx -> append"), "{changed:?}");
    let per_fsync = |x: &Value, key: &str| x[key].as_f64().unwrap() / x["ops"].as_f64().unwrap();
    for side in [m, k] {
        let tx = per_fsync(side, "transactions");
        assert!((1.05..=1.8).contains(&tx), "transactions a fsync: {tx:.2}: {side}");
    }
    let (mb, kb) = (per_fsync(m, "bytes_logged"), per_fsync(k, "bytes_logged"));
    assert!(mb < 1.3 * kb && kb < 1.3 * mb, "bytes a fsync: model {mb:.0}, kernel {kb:.0}");
    assert_eq!(v["agree"]["bytes_per_append"]["agree"], true, "{}", v["agree"]["bytes_per_append"]);
    // Each side times its operations (write + fsync): a distribution, in order, on both.
    for side in [m, k] {
        let q = |p: &str| side[format!("latency_ms_{p}")].as_f64().unwrap();
        assert!(q("p50") > 0.0 && q("p50") <= q("p99") && q("p99") <= q("p995"), "{side}");
    }
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
}

/// Source thread 000's workload on the real kernel: 200 threads appending 128 KiB with O_DSYNC to a
/// 44-AG filesystem with a 10 MiB log (which mkfs accepts only at that AG size), the model on
/// the loop device the kernel runs on. An append is two transactions on both sides, its
/// timestamp update (`tr_fsyncts`) and its I/O completion's conversion (`tr_write`; the
/// kernel's allocations add 0.2). A synchronous force first waits for the pushes in flight
/// (`flush_workqueue`), so on both sides a checkpoint carries many appends (measured here:
/// model 10-11; kernel 22-25 per push work run, 36-46 per commit iclog, so `checkpoints`, which
/// counts commit iclogs, is a lower bound; without that wait the model pushed one per force,
/// under one append each). Bytes per append: model 781, kernel 663-749. `xfs_logprint -t`
/// of the kernel's log shows an append's inode (56 + 176 bytes and its extents) logged in two
/// checkpoints 95% of the time, its two transactions split by later pushes while the I/O
/// completion waits for a CPU (200 threads on 2). The model's kernel threads take no CPU
/// (#17.2); its appends' data writes share the disk's measured bandwidth (~9,700 appends a
/// second against the kernel's 3,800-5,700; 41,000 before), so its two transactions are
/// further apart too. (Model 577 bytes per append when its disk took any bandwidth.)
#[test]
fn an_o_dsync_append_logs_about_what_the_kernels_appends_log() {
    require_kernel!();
    let v = compare(&["--preset", "seed-log-size", "--set", "device=vm-disk", "--set", "duration=2s"]);
    let (m, k) = (&v["model"], &v["kernel"]);
    let fsyncs = k["fsyncs"].as_f64().unwrap();
    assert!(fsyncs > 1000.0, "the kernel ran the appends: {k}");
    let appends = m["ops"].as_f64().unwrap();
    let (mc, kc) = (appends / m["checkpoints"].as_f64().unwrap(), fsyncs / k["checkpoints"].as_f64().unwrap());
    assert!(mc > 4.0 && kc > 4.0, "appends per checkpoint: model {mc:.1}, kernel {kc:.1}");
    let model = m["bytes_logged"].as_f64().unwrap() / appends;
    let kernel = k["bytes_logged"].as_f64().unwrap() / fsyncs;
    assert!(model < 1.35 * kernel && kernel < 1.4 * model, "bytes per append: model {model:.0}, kernel {kernel:.0}");
    let (mt, kt) = (m["transactions"].as_f64().unwrap() / appends, k["transactions"].as_f64().unwrap() / fsyncs);
    assert!(
        (1.9..=2.1).contains(&mt) && (1.9..=2.6).contains(&kt),
        "transactions per append: model {mt:.2}, kernel {kt:.2}"
    );
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
}

#[test]
fn a_seed_scenario_of_an_older_kernel_is_compared_as_the_running_kernel_behaves() {
    require_kernel!();
    // Source thread 003 ran 5.7 (legacy flushes, one serialised push): this kernel is 6.18.
    // 4 s: enough checkpoints for a steady median (2 s gave 8–10, and once a median of 171 to 130).
    let run = || compare(&["--preset", "cil-throttle-32mb", "--set", "duration=4s"]);
    let v = run();
    let changed: Vec<&str> =
        v["model_set_to_running_kernel"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert!(changed.contains(&"flush: legacy -> upstream"), "{changed:?}");
    assert!(changed.contains(&"ail_push: grant -> upstream"), "{changed:?}");
    assert!(changed.contains(&"cil_space: global -> upstream"), "{changed:?}");
    // 6.11+: the 32 MiB log fills before xfsaild pushes, on both sides.
    for check in ["start_iclog_needs_flush", "commit_iclog_needs_flush_fua", "grant_head_sleeps"] {
        assert_eq!(v["agree"][check]["agree"], true, "{check}: {}", v["agree"][check]);
    }
    // xfsaild's passes, from /proc/fs/xfs/stat on the kernel, counted to the workload's end in
    // the model (87-202 on the kernel in 4 s runs here, 101 in the model).
    let passes = &v["agree"]["xfsaild_passes"];
    assert!(passes["model"].as_f64().unwrap() > 20.0 && passes["kernel"].as_f64().unwrap() > 20.0, "{passes}");
    // Checkpoints at the CIL space limit. Once in a while the kernel's xfsaild, pushing the
    // whole AIL for sleeping reservations, meets pinned items and forces the log early for
    // most of a 4 s run (a median of 85 iclogs against the usual 142-152). The model's does
    // so far more rarely (#17.2): a second kernel run decides.
    let sized = |v: &Value| v["agree"]["iclogs_per_checkpoint"]["agree"] == true;
    let v = if sized(&v) { v } else { run() };
    assert!(sized(&v), "iclogs_per_checkpoint: {}", v["agree"]["iclogs_per_checkpoint"]);
}

#[test]
fn ctrl_c_stops_the_run_and_leaves_nothing_behind() {
    require_kernel!();
    let exe = assert_cmd::cargo::cargo_bin("loglab");
    let child = std::process::Command::new(exe)
        .args(["kernel", "run", "--preset", "fsync-heavy", "--set", "writers=2", "--set", "duration=60s"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
}

#[test]
fn a_geometry_the_kernel_refuses_is_named_before_anything_is_made() {
    require_kernel!();
    let out = loglab()
        .args(["kernel", "run", "--preset", "fsync-heavy", "--set", "iclog_count=1"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(err.contains("iclog_count") && err.contains("2 to 8"), "{err}");
    assert!(leftovers().is_empty());
}

#[test]
fn without_root_it_says_what_it_needs() {
    require_kernel!();
    // As nobody, through util-linux's setpriv: the one-line reason, exit status 2.
    let exe = assert_cmd::cargo::cargo_bin("loglab");
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(exe)
        .args(["kernel", "run", "--preset", "fsync-heavy"])
        .output();
    let Ok(out) = out else {
        eprintln!("skipped: needs setpriv");
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("needs root"), "{err}");
}

/// The literal pieces of a tracepoint's `print fmt` around its conversions (`%u`, `%llx`, `%s`,
/// `%pS`, …): a printed line must hold them in order, the first at its start.
fn print_fmt_pieces(format_file: &str) -> Vec<String> {
    let fmt = format_file.split("print fmt: \"").nth(1).expect("print fmt");
    let mut pieces = vec![String::new()];
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => {
                if let Some(n) = chars.next() {
                    pieces.last_mut().unwrap().push(n);
                }
            }
            '%' if chars.peek() == Some(&'%') => {
                chars.next();
                pieces.last_mut().unwrap().push('%');
            }
            '%' => {
                // Flags, width, precision and length, then the conversion (and %p's suffix).
                while chars.peek().is_some_and(|c| "-+ #0123456789.hlzjt".contains(*c)) {
                    chars.next();
                }
                if chars.next() == Some('p') && chars.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                    chars.next();
                }
                pieces.push(String::new());
            }
            c => pieces.last_mut().unwrap().push(c),
        }
    }
    pieces
}

fn matches_pieces(text: &str, pieces: &[String]) -> bool {
    let Some(rest) = text.strip_prefix(pieces[0].as_str()) else { return false };
    let mut rest = rest;
    for p in &pieces[1..] {
        if p.is_empty() {
            continue;
        }
        match rest.find(p.as_str()) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

#[test]
fn every_kernel_event_the_model_prints_has_the_running_kernels_fields() {
    require_kernel!();
    let root = std::path::Path::new("/sys/kernel/tracing/events");
    if !root.join("xfs").exists() {
        // A fresh machine may not have tracefs mounted yet; as root it can be (kernel runs do).
        let _ = std::process::Command::new("mount").args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"]).status();
    }
    if !root.join("xfs").exists() {
        eprintln!("skipped: needs tracefs mounted at /sys/kernel/tracing");
        return;
    }
    let mut lines: std::collections::BTreeMap<String, String> = Default::default();
    for preset in ["fsync-heavy", "cil-throttle-32mb", "small-crash", "dir-remove", "seed-log-size", "fsmark-create"] {
        let out = loglab()
            .args(["trace", "--preset", preset, "--until", "300ms", "--format", "trace-cmd-6.18"])
            .assert()
            .success();
        for l in String::from_utf8_lossy(&out.get_output().stdout).lines().filter(|l| !l.starts_with('#')) {
            let Some((_, after)) = l.split_once("]") else { continue };
            // "[cpu] flags  timestamp: name: body"
            let mut parts = after.splitn(3, ": ");
            let (Some(_), Some(name), Some(body)) = (parts.next(), parts.next(), parts.next()) else { continue };
            lines.entry(name.to_string()).or_insert_with(|| body.to_string());
        }
    }
    let mut checked = 0;
    for (name, body) in &lines {
        if name.starts_with("loglab_") {
            continue; // the model's own markers, not kernel events
        }
        let sys = if name.starts_with("block_") { "block" } else { "xfs" };
        let path = root.join(sys).join(name).join("format");
        let format = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {}: {e}", path.display()));
        let pieces = print_fmt_pieces(&format);
        assert!(
            matches_pieces(body, &pieces),
            "{name}: the model prints\n  {body}\nthe kernel's format has {pieces:?}"
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} kernel events in the model's traces: {:?}", lines.keys());
}

#[test]
fn the_model_recovers_a_crashed_kernel_log_as_xfs_logprint_reads_it() {
    require_kernel!();
    let out = loglab()
        .args(["kernel", "run", "--preset", "fsync-heavy", "--set", "writers=4", "--set", "duration=1s"])
        .args(["--shutdown", "--json"])
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let r = &v["shutdown_recovery"];
    // A log the kernel wrote and a shutdown cut: the model's recovery finds the same tail,
    // head and records as xfs_logprint; the kernel's own mount recovers it, repair finds nothing.
    assert_eq!(r["xfs_logprint"]["state"], "dirty", "{r}");
    assert_eq!(r["model_agrees_with_xfs_logprint"], true, "{r}");
    assert!(r["model"]["records"].as_u64().unwrap() > 10, "{r}");
    assert_eq!(r["kernel_mount"], "recovered", "{r}");
    assert_eq!(r["xfs_repair_n"], "clean", "{r}");
    // The kernel's recovery tracepoints: the model would replay the transactions it replayed.
    assert_replays_as_kernel(r["model_recovery_matches_kernel"].clone(), r);
    assert!(r["kernel_recovery"]["transactions"].as_u64().unwrap() >= 1, "{r}");
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
}

/// The model's recovery found the kernel's head, tail and records (from the kernel's
/// `xfs_log_recover*` tracepoints) and the same committed transactions, in the same order,
/// with the same items by type.
fn assert_replays_as_kernel(m: Value, ctx: &Value) {
    for k in ["head_blk", "tail_blk", "records", "transactions"] {
        assert_eq!(m[k], true, "{k}: {m}\n{ctx}");
    }
    assert_eq!(m["transactions_model"], m["transactions_kernel"], "{m}");
}

fn crash(args: &[&str]) -> Value {
    let out = loglab().args(["kernel", "crash", "--json"]).args(args).timeout(Duration::from_secs(170)).assert();
    serde_json::from_slice(&out.success().get_output().stdout).unwrap()
}

#[test]
fn recorded_fsyncs_survive_every_real_crash_state_and_the_model_recovers_each_as_the_kernel_does() {
    require_kernel!();
    let v = crash(&["--preset", "fsync-heavy", "--set", "writers=4", "--set", "duration=1s", "--set", "fs_size=1GiB"]);
    let (rec, sum) = (&v["recorded"], &v["summary"]);
    // The recorder saw the kernel's flushes: about one per fsync.
    assert!(rec["flushes"].as_u64().unwrap() > 100, "{rec}");
    assert!(sum["states"].as_u64().unwrap() >= 6, "{sum}");
    for st in v["states"].as_array().unwrap() {
        assert_eq!(st["mount"], "recovered", "{st}");
        assert_eq!(st["xfs_repair_n"], "clean", "{st}");
        assert_eq!(st["fsynced_lost"], serde_json::json!([]), "an fsync that returned was lost: {st}");
        assert_eq!(st["model_agrees_with_kernel"], true, "{st}");
        // Where both read the log: the model's head, tail and records are xfs_logprint's.
        for k in ["head_blk", "tail_blk", "records"] {
            assert_eq!(st["model_recovery"][k], st["xfs_logprint"][k], "{k}: {st}");
        }
        if st["kernel_recovery"]["head_blk"].is_u64() {
            assert_replays_as_kernel(st["model_recovery_matches_kernel"].clone(), st);
        }
    }
    assert!(sum["model_replays_what_kernel_replayed"].as_u64().unwrap() >= 1, "{sum}");
    assert!(v["states"].as_array().unwrap().iter().any(|s| s["fsynced_checked"].as_u64().unwrap() > 100));
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
}

#[test]
fn a_lost_unflushed_log_write_fails_the_real_mount_exactly_where_the_model_says() {
    require_kernel!();
    // fsmark-create: checkpoints of ~130 iclogs written between two flushes, so a crash can
    // keep any subset of them (the model's `subset` crash model).
    let v = crash(&[
        "--preset",
        "fsmark-create",
        "--set",
        "writers=4",
        "--set",
        "duration=2s",
        "--set",
        "fs_size=1GiB",
        "--crash-points",
        "3",
        // Each subset of a long unflushed window fails to mount about 2 times in 3: with 4 per
        // cut, a run where none fails is about 1 in 7,000 rather than 1 in 80.
        "--subsets",
        "4",
    ]);
    let states = v["states"].as_array().unwrap();
    assert!(states.iter().any(|s| s["kind"] == "middle-iclog-lost"), "a window with enough log writes");
    for st in states {
        assert_eq!(st["model_agrees_with_kernel"], true, "{st}");
        if st["kind"] == "prefix" {
            assert_eq!(st["mount"], "recovered", "a flush-consistent state always mounts: {st}");
        }
        // Checkpoints of hundreds of inode, buffer and icreate items: the same ones, replayed.
        if st["mount"] == "recovered" && st["kernel_recovery"]["head_blk"].is_u64() {
            assert_replays_as_kernel(st["model_recovery_matches_kernel"].clone(), st);
        }
    }
    // Holes among the unflushed iclogs: the 6.18 kernel cannot mount those states.
    assert!(states.iter().any(|s| s["mount"] != "recovered"), "{}", v["summary"]);
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
}

#[test]
fn the_kernel_recovers_the_models_log_and_leaves_each_block_where_the_model_says() {
    require_kernel!();
    let dir = std::env::temp_dir().join(format!("loglab-kernel-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let img = dir.join("model.img");
    // A filesystem of the scenario's size; the model's metadata lands on blocks mkfs left free.
    std::fs::File::create(&img).unwrap().set_len(220 << 30).unwrap();
    assert!(std::process::Command::new("mkfs.xfs").args(["-q", "-f"]).arg(&img).status().unwrap().success());
    let path = img.to_str().unwrap();
    loglab()
        .args(["export-image", "--image", path, "--preset", "fsync-heavy", "--duration", "200ms"])
        .assert()
        .success();
    let out = loglab().args(["recover", "--image", path, "--json"]).assert().success();
    let r: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let blocks = r["replayed_blocks"].as_array().unwrap().clone();
    assert!(blocks.len() > 50, "{r}");
    // Replay writes each region as logged: the block holds, at a chunk boundary, the payload
    // head of the item's last logged version (item, then version, big-endian).
    let holds_last_version = |b: &Value| {
        let f = std::fs::File::open(&img).unwrap();
        let mut blk = vec![0u8; 4096];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut blk, b["sector"].as_u64().unwrap() * 512).unwrap();
        let mut pat = (b["item"].as_u64().unwrap() as u32).to_be_bytes().to_vec();
        pat.extend_from_slice(&b["version"].as_u64().unwrap().to_be_bytes());
        (0..4096).step_by(128).any(|o| blk[o..o + 12] == pat[..])
    };
    assert!(!blocks.iter().any(holds_last_version), "nothing is replayed before the kernel mounts it");
    let dev = String::from_utf8(
        std::process::Command::new("losetup").args(["-f", "--show"]).arg(&img).output().unwrap().stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = std::process::Command::new("mount").arg(&dev).arg(&mnt).status().unwrap().success();
    if mounted {
        std::process::Command::new("umount").arg(&mnt).status().unwrap();
    }
    let repair = std::process::Command::new("xfs_repair").arg("-n").arg(&dev).output().unwrap();
    std::process::Command::new("losetup").args(["-d", &dev]).status().unwrap();
    let missing: Vec<&Value> = blocks.iter().filter(|b| !holds_last_version(b)).collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(mounted, "the kernel's recovery of the model's log completes");
    assert!(
        missing.is_empty(),
        "{} of {} blocks not as the model says: {:?}",
        missing.len(),
        blocks.len(),
        &missing[..missing.len().min(3)]
    );
    assert!(repair.status.success(), "xfs_repair -n: {}", String::from_utf8_lossy(&repair.stdout));
}

#[test]
fn with_slow_flushes_the_kernel_issues_writes_while_a_flush_is_in_progress() {
    require_kernel!();
    // A 2 ms flush, as a disk's: the issue order (block_rq_issue) then holds writes that a
    // device could complete before the flush the recorder shows them after.
    let v = crash(&[
        "--preset",
        "fsync-heavy",
        "--set",
        "writers=4",
        "--set",
        "duration=1s",
        "--set",
        "fs_size=1GiB",
        "--crash-points",
        "2",
        "--subsets",
        "0",
        "--flush-delay-us",
        "2000",
    ]);
    assert!(v["recorded"]["reorderable_writes"].as_u64().unwrap() > 0, "{}", v["recorded"]);
    for st in v["states"].as_array().unwrap() {
        assert_eq!(st["model_agrees_with_kernel"], true, "{st}");
        assert_eq!(st["fsynced_lost"], serde_json::json!([]), "{st}");
    }
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
}

#[test]
fn the_seed_003_awk_pipeline_counts_real_cil_throttle_waits_on_a_slow_log_device() {
    require_kernel!();
    // 6.18 keeps the CIL under its blocking limit on a device that keeps up (0 waits on
    // cil-throttle-32mb as given). A log device doing one 256 KiB iclog per 40 ms (6.4 MB/s)
    // cannot drain the 32 MiB checkpoints of a 512 MiB log as fast as 16 creators fill them:
    // once four pushes are waiting on iclogs, the next context reaches the 64 MiB blocking
    // limit, about 190 MB of CIL (some 650,000 creates: 10 s here alone, more than 25 s in one
    // full test run, so it runs 40 s). How soon depends on the creators' rate, which varies
    // with the machine's load (one CI run: 30,000 creates a second logging 5.7 MB/s, and no
    // throttle in 40 s), so a run that saw no throttle is run again, for 90 s, before the checks.
    let trace = std::env::temp_dir().join(format!("loglab-kernel-cilwait-{}.trace", std::process::id()));
    let path = trace.to_str().unwrap();
    let run = |secs: u64| -> Value {
        let out = loglab()
            .args(["kernel", "run", "--preset", "cil-throttle-32mb", "--json", "--trace", path])
            .args(["--set", "log_size=512MiB", "--set", "fs_size=4GiB", "--set", "iclog_size=256KiB"])
            .args(["--set", &format!("duration={secs}s"), "--write-delay-us", "40000"])
            .timeout(Duration::from_secs(secs + 130))
            .assert()
            .success();
        serde_json::from_slice(&out.get_output().stdout).unwrap()
    };
    let mut v = run(40);
    if v["cil_throttle_waits"] == 0 {
        v = run(90);
    }
    // The source thread's pipeline, with 6.18's column for the log cycle (`curr_cycle`, field 31; 5.x
    // printed `grant_reserve_cycle` as field 23, which on 6.18 is the word "tail").
    let pipeline = |col: u32| {
        let sh = format!("grep ' xfs_log_cil_wait: ' {path} | awk '/^ / {{print ${col}}}' | sort -n | uniq -c");
        let o = std::process::Command::new("sh").arg("-c").arg(&sh).output().unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    let counts: Vec<(u64, u64)> = pipeline(31)
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace().map(|x| x.parse::<u64>().unwrap());
            (w.next().unwrap(), w.next().unwrap())
        })
        .collect();
    let old_column = pipeline(23);
    let _ = std::fs::remove_file(&trace);
    let waits: u64 = counts.iter().map(|c| c.0).sum();
    assert_eq!(waits, v["cil_throttle_waits"].as_u64().unwrap(), "{counts:?}");
    for (n, cycle) in &counts {
        assert_eq!(v["cil_throttle_waits_by_cycle"][cycle.to_string()], *n, "{v}");
    }
    // As in the seed: when it throttles, it captures most of the 16 writers at once, and the
    // reservation grant wait lists stay empty (log space is not what they wait for).
    assert!(counts.iter().any(|c| c.0 >= 8), "a burst of most writers: {counts:?}\n{v}");
    assert_eq!(v["grant_head_waits"], 0, "{v}");
    assert!(old_column.lines().all(|l| l.ends_with(" tail")), "5.x's column on a 6.18 trace: {old_column}");
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
}
