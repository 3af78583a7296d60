//! `loglab kernel run|compare`: the real kernel as the model's oracle. A scenario's geometry
//! and workload run on XFS on this machine, recorded through tracefs and XFS's own counters,
//! and set beside the model's run of the same scenario.

mod appends;
mod crashes;
mod flags;
mod load;
mod readers;
mod recorder;
mod replay;
mod rig;
mod stats;
mod threads;
mod tracefs;

use crate::ScenarioArgs;
use clap::{Args, Subcommand};
use flags::{iclog_syncs, FlagPatterns};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use stats::XfsStats;
use std::path::PathBuf;
use xlog::{writer_comm, FsyncOp, Scenario, Setting, Sim, TraceCmdPrinter, WorkloadKind};

#[derive(Subcommand)]
pub enum KernelCmd {
    /// Run the scenario on this machine's XFS and print what the kernel did (needs root).
    Run(KernelArgs),
    /// Run the scenario on the model and on this machine's XFS; print both and named checks.
    Compare(KernelArgs),
    /// Record the real run's block stream (FUSE under a loop device), build crash states from
    /// it as the model's crash models do, and let the kernel's recovery judge each.
    Crash(KernelCrashArgs),
}

#[derive(Args)]
pub struct KernelCrashArgs {
    #[command(flatten)]
    pub run: KernelArgs,
    /// Flushes to cut at, spread over the run (each a `prefix` state).
    #[arg(long, default_value_t = 6)]
    pub crash_points: usize,
    /// Random `subset` states per cut (some of the writes completed after the flush survive).
    #[arg(long, default_value_t = 1)]
    pub subsets: usize,
    /// Keep the image of every state on which the model's recovery and the kernel's disagree
    /// in DIR (as the crash left it), to reproduce with `loglab recover --image` and `mount`.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

/// A slower device than the machine's: the data device is served by the recorder (a FUSE
/// file under the loop device), which takes this long over each request of the workload.
#[derive(Args, Clone, Copy)]
pub struct SlowDevice {
    /// How long each cache flush takes, in microseconds (0: at once). A slow flush, as a
    /// disk's, lets the kernel issue later writes while it is in progress.
    #[arg(long, default_value_t = 0, value_name = "US")]
    pub flush_delay_us: u64,
    /// How long each write request takes, in microseconds (0: at once). A slow log device
    /// lets the CIL fill while checkpoints wait for their iclogs (the CIL throttle).
    #[arg(long, default_value_t = 0, value_name = "US")]
    pub write_delay_us: u64,
}

impl SlowDevice {
    fn slowed(&self) -> bool {
        self.write_delay_us + self.flush_delay_us > 0
    }

    fn delays(&self) -> Result<recorder::Delays, String> {
        if self.flush_delay_us > 1_000_000 {
            return Err(format!("--flush-delay-us {}: allowed 0 to 1000000 (one second)", self.flush_delay_us));
        }
        if self.write_delay_us > 100_000 {
            return Err(format!("--write-delay-us {}: allowed 0 to 100000 (100 ms)", self.write_delay_us));
        }
        Ok(recorder::Delays {
            flush: std::time::Duration::from_micros(self.flush_delay_us),
            write: std::time::Duration::from_micros(self.write_delay_us),
        })
    }
}

#[derive(Args)]
pub struct KernelArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Where the sparse image files go (default: the system's temporary directory).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Also write the kernel's trace (trace-cmd text, as tracefs printed it) to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// compare: run the model exactly as given, even where its kernel-behaviour switches
    /// (flush, throttle, …) describe an older kernel than the one running here.
    #[arg(long)]
    pub as_given: bool,
    /// End the run with a crash (`xfs_io -x -c shutdown`) instead of an unmount, then recover
    /// the image three ways: the model's recovery, `xfs_logprint`, and the kernel's mount
    /// (followed by `xfs_repair -n`).
    #[arg(long)]
    pub shutdown: bool,
    #[command(flatten)]
    pub device: SlowDevice,
}

/// The model as the running kernel behaves: the scenario's kernel-behaviour switches set to
/// upstream's (the defaults), with what changed ("flush: legacy -> upstream").
fn as_running_kernel(s: &Scenario) -> (Scenario, Vec<String>) {
    let up = Scenario::default();
    let mut m = s.clone();
    let mut changed = Vec::new();
    macro_rules! upstream {
        ($($f:ident),*) => {$(
            if m.$f != up.$f {
                changed.push(format!("{}: {} -> {}", stringify!($f), m.$f.setting_text(), up.$f.setting_text()));
                m.$f = up.$f;
            }
        )*};
    }
    upstream!(
        flush,
        commit_ordering,
        throttle,
        unit_res_roundoff,
        tail_update,
        force_flush,
        start_record_order,
        shadow_round,
        cil_pushers,
        device_bug,
        xfsaild,
        ail_push,
        cil_space,
        sata_fua
    );
    // The kernel's runner makes a fsync-heavy operation an append and an fsync (load.rs): the
    // model does the same.
    if m.workload == WorkloadKind::FsyncHeavy && m.fsync_op != FsyncOp::Append {
        changed.push(format!("fsync_op: {} -> append", m.fsync_op));
        m.fsync_op = FsyncOp::Append;
    }
    // The kernel's writer threads share this machine's CPUs.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    if m.cpus != cpus {
        changed.push(format!("cpus: {} -> {cpus}", m.cpus));
        m.cpus = cpus;
    }
    (m, changed)
}

pub fn dispatch(cmd: KernelCmd) -> Result<(), String> {
    match cmd {
        KernelCmd::Crash(c) => {
            let s = c.run.scenario.load()?;
            let v = kernel_crash(&s, &c)?;
            if c.run.json {
                crate::print_json(&v);
            } else {
                let r = &v["recorded"];
                println!(
                    "recorded {} requests ({} flushes, {} MB written); {} states",
                    r["requests"], r["flushes"], r["mb_written"], v["summary"]["states"]
                );
                let sm = &v["summary"];
                println!(
                    "the model's recovery replays what the kernel's replayed in {} of the {} states both recovered",
                    sm["model_replays_what_kernel_replayed"], sm["both_recovered"]
                );
                for st in v["states"].as_array().into_iter().flatten() {
                    println!(
                        "  {:<18} flush #{:<7} kept {}/{} unflushed  mount {}  repair {}  fsynced {} checked, {} lost  model {}{}",
                        st["kind"].as_str().unwrap_or(""),
                        st["flush_index"],
                        st["unflushed_kept"],
                        st["unflushed"],
                        st["mount"].as_str().unwrap_or(""),
                        st["xfs_repair_n"].as_str().unwrap_or(""),
                        st["fsynced_checked"],
                        st["fsynced_lost"].as_array().map_or(0, Vec::len),
                        if st["model_agrees_with_kernel"] == true { "agrees" } else { "DIFFERS" },
                        match st["model_recovery_matches_kernel"].get("transactions").and_then(Value::as_bool) {
                            Some(true) => ", replays the kernel's transactions",
                            Some(false) => ", replays OTHER transactions than the kernel",
                            None => "",
                        }
                    );
                }
            }
            Ok(())
        }
        KernelCmd::Run(a) => {
            let s = a.scenario.load()?;
            let k = kernel_run(&s, &a)?;
            if a.json {
                crate::print_json(&k);
            } else {
                print_side("kernel", &k);
            }
            Ok(())
        }
        KernelCmd::Compare(a) => {
            let (s, link) = a.scenario.load_with_link()?;
            let (ms, changed) = if a.as_given { (s.clone(), Vec::new()) } else { as_running_kernel(&s) };
            let m = model_run(&ms)?;
            let k = kernel_run(&s, &a)?;
            let agree = checks(&Compared::of(&m, "model")?, &Compared::of(&k, "kernel")?, synced_appends(&ms));
            let all = agree.values().all(|c| c["agree"] != json!(false));
            // The model has no slowed recorder among its device classes: say so beside numbers
            // that depend on device speed.
            let device_note = a.device.slowed().then(|| {
                format!(
                    "the kernel's device was slowed ({} us per write, {} us per flush) and the model's is {}: \
                     throughput, waits and throttling depend on device speed and are not compared",
                    a.device.write_delay_us,
                    a.device.flush_delay_us,
                    ms.device.setting_text()
                )
            });
            let v = json!({
                "scenario": a.scenario.link_of(&s, link.as_ref()),
                "model_scenario": crate::lab_link(&ms, None)?,
                "model_set_to_running_kernel": changed.clone(),
                "model": m,
                "kernel": k,
                "agree": agree,
                "agree_all": all,
                "device_differs": device_note,
            });
            if a.json {
                crate::print_json(&v);
            } else {
                if !changed.is_empty() {
                    println!("model set to the running kernel's behaviour: {}", changed.join(", "));
                }
                if let Some(n) = &device_note {
                    println!("note: {n}");
                }
                print_side("model", &m);
                print_side("kernel", &k);
                println!("checks");
                for (name, c) in &agree {
                    let verdict = match c["agree"].as_bool() {
                        Some(true) => "agree",
                        Some(false) => "DIFFER",
                        None => "undecided",
                    };
                    println!("  {name:<34} {verdict:<9} model {}  kernel {}", c["model"], c["kernel"]);
                }
            }
            Ok(())
        }
    }
}

/// The workload's operations are appends made durable (O_DSYNC, or an append and its fsync).
fn synced_appends(s: &Scenario) -> bool {
    s.appends() && s.fsync
}

/// An operation time histogram's quantile in ms (0 when empty), as the model reports its own.
fn quantile_ms(h: &hdrhistogram::Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.value_at_quantile(q) as f64 / 1e6
    }
}

/// The keys `loglab run --json` and `kernel run --json` share, in report order.
const SHARED: [&str; 20] = [
    "latency_ms_p50",
    "latency_ms_p99",
    "latency_ms_p995",
    "transactions",
    "tx_per_sec",
    "bytes_logged",
    "bytes_per_transaction",
    "log_blocks",
    "iclog_writes",
    "noiclog_events",
    "log_forces",
    "checkpoints",
    "iclogs_per_checkpoint",
    "cache_flushes",
    "grant_head_waits",
    "cil_throttle_waits",
    "xfsaild_passes",
    "xfsaild_log_forces",
    "xfsaild_items_pinned",
    "metadata_reads",
];

fn print_side(title: &str, v: &Value) {
    println!("{title}");
    for k in SHARED {
        if let Some(x) = v.get(k) {
            println!("  {k:<28} {x}");
        }
    }
    for k in ["checkpoint_patterns", "cil_push_work", "kernel_threads"] {
        if let Some(p) = v.get(k) {
            println!("  {k:<28} {p}");
        }
    }
}

fn per(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The model's run of the scenario: its metrics and the flag patterns of its own trace.
pub fn model_run(s: &Scenario) -> Result<Value, String> {
    let mut sim = Sim::new(s)?;
    let mut p = TraceCmdPrinter::new(writer_comm(s));
    let mut text = String::new();
    // xfsaild's counts as the workload ends, as the kernel's are read: after it the model
    // drains, and xfsaild keeps looking every 50 ms until the log worker empties the AIL.
    let mut xfsaild_at_end = None;
    let mut log_blocks_at_end = None;
    loop {
        if xfsaild_at_end.is_none() && sim.now() >= s.duration.0 {
            let m = sim.metrics();
            xfsaild_at_end = Some((m.xfsaild_passes, m.xfsaild_log_forces, m.xfsaild_items_pinned));
            log_blocks_at_end = Some(m.log_blocks);
        }
        let Some(evs) = sim.step() else { break };
        for ev in evs {
            if let Some(line) = p.line_if(ev, |n| n == "xlog_iclog_sync" || n == "xfs_log_cil_wait") {
                text.push_str(&line);
                text.push('\n');
            }
        }
    }
    let typed = sim.metrics();
    let metrics = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    let pats = FlagPatterns::of(&iclog_syncs(&text));
    let mut out = Map::new();
    for k in SHARED {
        if let Some(v) = metrics.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    if let Some((passes, forces, pinned)) = xfsaild_at_end {
        out.insert("xfsaild_passes".into(), json!(passes));
        out.insert("xfsaild_log_forces".into(), json!(forces));
        out.insert("xfsaild_items_pinned".into(), json!(pinned));
    }
    // The kernel counts log transactions (`xs_trans_*`) and operations apart, and so does the
    // model: an O_DSYNC append is one operation of two transactions.
    let secs = typed.sim_seconds.max(1e-9);
    out.insert("ops".into(), json!(typed.transactions));
    out.insert("transactions".into(), json!(typed.tx_committed));
    out.insert("tx_per_sec".into(), json!(typed.tx_committed as f64 / secs));
    let cil = sim.view().cil_space_used.max(0) as u64;
    out.insert("bytes_per_transaction".into(), json!(per(typed.bytes_logged + cil, typed.tx_committed)));
    out.insert("iclog_flags".into(), serde_json::to_value(&pats).map_err(|e| e.to_string())?);
    out.insert("cil_throttle_waits_by_cycle".into(), json!(cil_waits_by_cycle(&text)));
    // The kernel's log blocks are read as its workload ends, before the unmount's force.
    let log_blocks = log_blocks_at_end.unwrap_or(typed.log_blocks);
    out.insert("log_cycles_written".into(), json!(per(log_blocks, sim.geometry().log_bb as u64)));
    // The kernel side's `cil_push_work`, from the model's metrics of the same names.
    let mut push = Map::new();
    for k in metrics.as_object().into_iter().flatten().map(|(k, _)| k).filter(|k| k.starts_with("cil_push_")) {
        push.insert(k.clone(), metrics[k].clone());
    }
    // What the kernel's scheduler events can tell apart: asleep, whatever for.
    let asleep: f64 = ["iclog_wait", "prev_iclog_wait", "order_wait", "data_flush_wait"]
        .iter()
        .filter_map(|w| metrics.get(format!("cil_push_ms_{w}")).and_then(Value::as_f64))
        .sum();
    push.insert("cil_push_ms_asleep".into(), json!(asleep));
    out.insert("cil_push_work".into(), Value::Object(push));
    let pairs = appends::AppendPairs { pairs: typed.append_tx_pairs, split: typed.append_pairs_split };
    out.insert("append_checkpoints".into(), json!(synced_appends(s).then_some(pairs)));
    out.insert("kernel_threads".into(), model_kernel_threads(s, &typed));
    Ok(Value::Object(out))
}

/// The kernel side's `kernel_threads` (on a CPU, runnable), from the model's metrics: with
/// `cpu_model=kernel` on a pool, where its kernel threads take CPU time; null otherwise.
fn model_kernel_threads(s: &Scenario, m: &xlog::Metrics) -> Value {
    if s.cpu_model != xlog::CpuModel::Kernel || s.cpus == 0 {
        return Value::Null;
    }
    let side = |cpu: f64, runnable: f64| json!({ "cpu_ms": cpu, "runnable_ms": runnable });
    let mut ic = side(m.iclog_ioend_ms_cpu, m.iclog_ioend_ms_cpu_wait);
    ic["iclog_writes"] = json!(m.iclog_writes);
    let per_write = if m.iclog_writes > 0 { 1e3 * m.iclog_ioend_ms_cpu / m.iclog_writes as f64 } else { 0.0 };
    ic["cpu_us_per_iclog_write"] = json!(per_write);
    json!({
        "cil_push": side(m.cil_push_ms_cpu, m.cil_push_ms_cpu_wait),
        "iclog_completion": ic,
        "ioend_completion": side(m.ioend_ms_cpu, m.ioend_ms_cpu_wait),
        "xfsaild": side(m.xfsaild_ms_cpu, m.xfsaild_ms_cpu_wait),
        // One worker in the model runs both (`vm-disk`): its wait for a CPU is the loop's.
        "loop_completion": side(m.dio_complete_ms_cpu, m.dio_complete_ms_cpu_wait),
        "buf_completion": side(m.buf_ioend_ms_cpu, 0.0),
    })
}

/// Removes a directory however the caller ends.
struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The scenario on this machine's XFS, its block stream recorded, then crash states from it.
pub fn kernel_crash(s: &Scenario, c: &KernelCrashArgs) -> Result<Value, String> {
    if let Some(why) = rig::missing() {
        return Err(format!("kernel crash {why}"));
    }
    let delays = c.run.device.delays()?;
    if c.crash_points == 0 || c.crash_points > 1000 || c.subsets > 100 {
        return Err(format!(
            "--crash-points {} / --subsets {}: allowed 1 to 1000 points and 0 to 100 subsets",
            c.crash_points, c.subsets
        ));
    }
    rig::on_interrupt();
    let workdir = c.run.workdir.clone().unwrap_or_else(std::env::temp_dir);
    let mut r = rig::Rig::new(s, &workdir, Some(recorder::Setup { delays, keep_data: true }))?;
    load::prepare(s, &r.mnt)?;
    let counter = r.recording.as_ref().map(|x| std::sync::Arc::clone(&x.count)).ok_or("no recorder")?;
    r.trace_start(false)?;
    r.recording.as_ref().ok_or("no recorder")?.arm();
    let from = counter.load(std::sync::atomic::Ordering::SeqCst) as usize;
    let done = load::run(s, &r.mnt, Some(std::sync::Arc::clone(&counter)))?;
    let (trace, _lost) = r.trace_stop()?;
    if let Some(path) = &c.run.trace {
        std::fs::write(path, &trace).map_err(|e| format!("--trace {}: {e}", path.display()))?;
    }
    let log = r.log_range()?;
    let mount_opts = r.mount_opts.clone();
    let stream = r.finish_recorded()?;
    if rig::STOP.load(std::sync::atomic::Ordering::SeqCst) {
        return Err("interrupted (everything it made is cleaned up)".into());
    }
    if stream.overflow {
        return Err(format!("the run wrote more than {} MiB: shorten duration", recorder::MAX_RECORDED >> 20));
    }
    let dir = workdir.join(format!("loglab-kernel-{}-crash", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let _cleanup = TempDir(dir.clone());
    let crashes = crashes::Crashes {
        stream: &stream,
        durable: &done.durable,
        dir,
        size: s.fs_size.0,
        mount_opts,
        log,
        keep: c.keep.clone(),
        early: crashes::reorderable(&stream, from, &trace),
    };
    let states = crashes.run(from, c.crash_points, c.subsets, s.seed)?;
    let flushes = stream.ios.iter().filter(|io| matches!(io, recorder::Io::Flush)).count();
    let early: usize = crashes.early.values().map(Vec::len).sum();
    let count = |f: &dyn Fn(&crashes::Verdict) -> bool| states.iter().filter(|v| f(v)).count();
    Ok(json!({
        "kernel_release": std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim(),
        "workload": load::describe(s),
        "recorded": {
            "requests": stream.ios.len(),
            "flushes": flushes,
            "writes": stream.ios.len() - flushes,
            "mb_written": stream.bytes as f64 / 1e6,
            "run_starts_at_request": from,
            // Writes issued before a flush completed that the stream shows after it.
            "reorderable_writes": early,
        },
        "run": { "ops": done.ops, "fsyncs": done.fsyncs, "seconds": done.seconds },
        "summary": {
            "states": states.len(),
            "recovered": count(&|v| v.mount == "recovered"),
            "mount_failed": count(&|v| v.mount != "recovered"),
            "repair_problems": count(&|v| v.xfs_repair_n != "clean"),
            "fsync_lost": count(&|v| !v.fsynced_lost.is_empty()),
            "model_agrees_with_kernel": count(&|v| v.model_agrees_with_kernel),
            // Of the states both recovered: the model found the kernel's head, tail and
            // records, and would replay the transactions the kernel replayed, item for item.
            "both_recovered": count(&|v| v.model_recovery_matches_kernel.is_some()),
            "model_replays_what_kernel_replayed": count(&|v| v.replay_matches()),
            "all_ok": states.iter().all(crashes::Verdict::ok),
        },
        "states": states,
    }))
}

/// The scenario on this machine's XFS.
pub fn kernel_run(s: &Scenario, a: &KernelArgs) -> Result<Value, String> {
    if let Some(why) = rig::missing() {
        return Err(format!("kernel run {why}"));
    }
    rig::on_interrupt();
    let workdir = a.workdir.clone().unwrap_or_else(std::env::temp_dir);
    let delays = a.device.delays()?;
    // A slowed device is the recorder, counting rather than keeping what it is sent.
    let slow = a.device.slowed().then_some(recorder::Setup { delays, keep_data: false });
    let log_bb = s.validate()?.log_bb as u64;
    let mut r = rig::Rig::new(s, &workdir, slow)?;
    load::prepare(s, &r.mnt)?;
    let before = XfsStats::parse(&r.stats()?)?;
    // Whether the kernel's runner appends (fsync-heavy's always does), not the scenario's words.
    r.trace_start(synced_appends(&as_running_kernel(s).0))?;
    if let Some(rec) = &r.recording {
        rec.arm();
    }
    let done = load::run(s, &r.mnt, None)?;
    // What the workload left in the CIL is not part of the run: stop before unmount forces it.
    let (trace, lost) = r.trace_stop()?;
    let d = XfsStats::parse(&r.stats()?)?.since(&before);
    if let Some(rec) = &r.recording {
        rec.disarm();
    }
    // Bytes per transaction count every transaction's bytes: a log force writes what the
    // CIL still holds (the model adds its CIL's space used alike). Not before a --shutdown:
    // the crash must find the log as the load left it.
    let forced = if a.shutdown {
        d.log_blocks
    } else {
        r.syncfs()?;
        XfsStats::parse(&r.stats()?)?.since(&before).log_blocks
    };
    let (mkfs, opts) = (r.mkfs_args.join(" "), r.mount_opts.clone());
    let push_wq = format!("xfs-cil/{}", r.data_loop);
    let dev = r.data_loop.clone();
    let recovery = if a.shutdown { Some(r.crash_and_recover()?) } else { None };
    r.finish()?;
    if rig::STOP.load(std::sync::atomic::Ordering::SeqCst) {
        return Err("interrupted (everything it made is cleaned up)".into());
    }
    if let Some(path) = &a.trace {
        std::fs::write(path, &trace).map_err(|e| format!("--trace {}: {e}", path.display()))?;
    }
    let count = |ev: &str| trace.lines().filter(|l| l.contains(&format!(" {ev}: "))).count() as u64;
    // `block_rq_issue` rwbs: a leading F is a flush (alone or as a PREFLUSH); an F after the
    // op letter is FUA.
    let rwbs: Vec<&str> = trace
        .lines()
        .filter_map(|l| l.split(" block_rq_issue: ").nth(1))
        .filter_map(|r| r.split_whitespace().nth(1))
        .collect();
    let cache_flushes = rwbs.iter().filter(|r| r.starts_with('F')).count() as u64;
    let fua_writes = rwbs.iter().filter(|r| r.len() > 1 && r[1..].contains('F') && r.contains('W')).count() as u64;
    let pats = FlagPatterns::of(&iclog_syncs(&trace));
    let transactions = d.trans_sync + d.trans_async;
    let bytes = d.log_blocks * 512;
    let mut out = json!({
        "kernel_release": std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim(),
        "mkfs": format!("mkfs.xfs {mkfs}"),
        "mount_options": opts,
        "workload": load::describe(s),
        "writers": s.writers,
        "seconds": done.seconds,
        "ops": done.ops,
        "fsyncs": done.fsyncs,
        "ops_per_sec": per(done.ops, 1) / done.seconds.max(1e-9),
        // Where the CPU went: the writers' own threads per operation, and the machine's
        // busy CPUs (of `cpus_online`) over the run, kernel threads and interrupts included.
        "writer_cpu_us_per_op": per(done.writer_cpu_ns, done.ops) / 1e3,
        "cpus_busy": done.busy_cpu_ns as f64 / 1e9 / done.seconds.max(1e-9),
        "cpus_online": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "latency_ms_p50": quantile_ms(&done.latency_ns, 0.5),
        "latency_ms_p99": quantile_ms(&done.latency_ns, 0.99),
        "latency_ms_p995": quantile_ms(&done.latency_ns, 0.995),
        "transactions": transactions,
        "tx_per_sec": transactions as f64 / done.seconds.max(1e-9),
        "bytes_logged": bytes,
        "bytes_per_transaction": per(forced * 512, transactions),
        "log_blocks": d.log_blocks,
        "iclog_writes": d.log_writes,
        "noiclog_events": d.log_noiclogs,
        "log_forces": d.log_force,
        "log_force_sleeps": d.log_force_sleep,
        "xfsaild_passes": d.push_ail,
        "xfsaild_log_forces": d.push_ail_flush,
        "metadata_reads": d.buf_reads,
        // A trace cannot separate checkpoints that share one commit iclog: a lower bound.
        "checkpoints": pats.commit_iclogs,
        "iclogs_per_checkpoint": per(pats.iclog_syncs, pats.commit_iclogs),
        "cache_flushes": cache_flushes,
        "fua_writes": fua_writes,
        "grant_head_waits": count("xfs_log_grant_sleep"),
        "cil_throttle_waits": count("xfs_log_cil_wait"),
        // Source thread 003's `awk '{print $23}' | sort -n | uniq -c`: waits by log cycle (6.18 prints
        // the cycle as `curr_cycle`, field 31, where 5.x printed `grant_reserve_cycle`, 23).
        "cil_throttle_waits_by_cycle": cil_waits_by_cycle(&trace),
        // How many times the workload's writes went round the log (mkfs made it the
        // scenario's size): fractional, where the model's `log_cycles` counts whole cycles.
        "log_cycles_written": per(d.log_blocks, log_bb),
        "cil_push_work": cil_push_work(&trace, &push_wq),
        // The log's kernel threads' CPU time, per run and per what each did.
        "kernel_threads": threads::kernel_threads(&trace, &dev, &[
            ("cil_push", "checkpoints", "checkpoint", pats.commit_iclogs),
            ("iclog_completion", "iclog_writes", "iclog_write", d.log_writes),
            ("ioend_completion", "unwritten_conversions", "conversion", count("xfs_unwritten_convert")),
            ("xfsaild", "passes", "pass", d.push_ail),
            ("xfsaild", "items_pushed", "item_pushed", count("xfs_ail_push")),
        ]),
        "slowed_device": slow.map(|_| json!({ "flush_delay_us": a.device.flush_delay_us, "write_delay_us": a.device.write_delay_us })),
        "iclog_flags": pats,
        "trace_events_lost": lost,
        "shutdown_recovery": recovery,
    });
    let push_works = threads::works_of(&trace, "xlog_cil_push_work", &push_wq);
    // A buffer that lost events may have lost pushes: no share from it.
    out["append_checkpoints"] = json!(appends::append_pairs(&trace, &push_works).filter(|_| lost == 0));
    // (Outside the one `json!` above: serde_json's macro recursion limit.)
    out["xfsaild_items_pinned"] = json!(d.push_ail_pinned);
    Ok(out)
}

/// The CIL push work of workqueue `wq` from its `workqueue_*` events: how long each queueing
/// waited for a worker to start it (dispatch) and how long each run took, in ms, as the
/// model's `cil_push_dispatch_ms_*` and `cil_push_run_ms_*`. Null without the events.
fn cil_push_work(trace: &str, wq: &str) -> Value {
    // `<task> [cpu] flags <ts>: <event>: work struct[= ]<ptr>...`
    let parse = |l: &str, ev: &str| -> Option<(f64, String)> {
        let (head, rest) = l.split_once(&format!(" {ev}: "))?;
        let ts = head.trim_end().trim_end_matches(':').rsplit(' ').next()?.parse::<f64>().ok()?;
        let ptr = rest.strip_prefix("work struct")?.trim_start_matches(['=', ' ']).split([' ', ':']).next()?;
        Some((ts, ptr.to_string()))
    };
    // Since 5.14 each CIL context has its own work item, so pushes of several contexts can be
    // pending or running at once: match each start and end to its own work item.
    let mut ours = std::collections::BTreeSet::new();
    let (mut queued, mut started) =
        (std::collections::BTreeMap::<String, f64>::new(), std::collections::BTreeMap::<String, f64>::new());
    let (mut dispatch, mut run) = (Vec::new(), Vec::new());
    for l in trace.lines() {
        if let Some((t, p)) = parse(l, "workqueue_queue_work") {
            if l.contains(&format!("workqueue={wq} ")) {
                queued.entry(p.clone()).or_insert(t);
                ours.insert(p);
            }
        } else if let Some((t, p)) = parse(l, "workqueue_execute_start") {
            if ours.contains(&p) {
                if let Some(q) = queued.remove(&p) {
                    dispatch.push((t - q) * 1e3);
                }
                started.insert(p, t);
            }
        } else if let Some((t, p)) = parse(l, "workqueue_execute_end") {
            if let Some(s) = started.remove(&p) {
                run.push((t - s) * 1e3);
            }
        }
    }
    if dispatch.is_empty() {
        return Value::Null;
    }
    dispatch.sort_by(f64::total_cmp);
    run.sort_by(f64::total_cmp);
    // Sorted `v` at quantile `p`, to the microsecond the trace's timestamps have.
    let q = |v: &[f64], p: f64| {
        let x = v.get(((v.len() as f64 * p) as usize).min(v.len().saturating_sub(1))).copied().unwrap_or(0.0);
        (x * 1e3).round() / 1e3
    };
    let mut out = json!({
        "pushes": dispatch.len(),
        "cil_push_runs": run.len(),
        "cil_push_dispatch_ms_p50": q(&dispatch, 0.5),
        "cil_push_dispatch_ms_p99": q(&dispatch, 0.99),
        "cil_push_dispatch_ms_max": q(&dispatch, 1.0),
        "cil_push_run_ms_p50": q(&run, 0.5),
        "cil_push_run_ms_p99": q(&run, 0.99),
        "cil_push_run_ms_max": q(&run, 1.0),
    });
    // Where the runs spent their time: on a CPU, runnable waiting for one, asleep.
    if let Some(runs) = threads::work_runs(trace, &ours) {
        let total = threads::Split::sum(&runs);
        let ms = |x: f64| (x * 1e6).round() / 1e3;
        out["cil_push_ms_cpu"] = json!(ms(total.cpu));
        out["cil_push_ms_cpu_wait"] = json!(ms(total.runnable));
        out["cil_push_ms_asleep"] = json!(ms(total.asleep));
    }
    out
}

/// `xfs_log_cil_wait` events by the log cycle they happened in: cycle -> waits.
fn cil_waits_by_cycle(trace: &str) -> std::collections::BTreeMap<u64, u64> {
    let mut by = std::collections::BTreeMap::new();
    for l in trace.lines().filter(|l| l.contains(" xfs_log_cil_wait: ")) {
        let w: Vec<&str> = l.split_whitespace().collect();
        if let Some(c) = tracefs::field(&w, "curr_cycle").and_then(|c| c.parse::<u64>().ok()) {
            *by.entry(c).or_insert(0) += 1;
        }
    }
    by
}

fn ratio_check(m: f64, k: f64, within: f64, rule: &str) -> Value {
    json!({ "model": m, "kernel": k, "agree": ratio_within(m, k, within), "rule": rule })
}

/// Whether `m` and `k` are within a factor of `1 + within`; None when either is 0.
fn ratio_within(m: f64, k: f64, within: f64) -> Option<bool> {
    (m > 0.0 && k > 0.0).then(|| (m / k).max(k / m) <= 1.0 + within)
}

/// A fraction both sides must have at (or near) 1; undecided when either side has no cases.
fn all_check(m: (u64, u64), k: (u64, u64), rule: &str) -> Value {
    let f = |(n, d): (u64, u64)| (d > 0).then(|| n as f64 / d as f64);
    let (fm, fk) = (f(m), f(k));
    let agree = match (fm, fk) {
        (Some(a), Some(b)) => Some(a >= 0.99 && b >= 0.99),
        _ => None,
    };
    json!({ "model": fm, "kernel": fk, "agree": agree, "rule": rule })
}

/// Below this many log cycles a side has too few to say how often the throttle bursts.
const THROTTLE_MIN_CYCLES: f64 = 20.0;
/// Fewer appends with both transactions say too little about how often they split.
const MIN_APPEND_PAIRS: u64 = 100;
/// Throttle bursts per hundred log cycles that count as rare: source thread 003's stutter,
/// about one in 300 cycles on this machine's kernel over three runs (docs/kernel.md).
const RARE_BURSTS: f64 = 1.0;

/// What the checks read of one side's report, typed: a key either side stops reporting
/// (or reports renamed) is an error, never a silent zero that agrees.
#[derive(Debug, Deserialize)]
struct Compared {
    /// Operations (an O_DSYNC append is one, of two transactions).
    ops: f64,
    /// The push work's runs; None where the kernel's trace could not time them.
    cil_push_work: Option<PushWork>,
    grant_head_waits: f64,
    xfsaild_passes: f64,
    /// Transactions committed (an append's timestamp update and conversion are two).
    transactions: f64,
    bytes_per_transaction: f64,
    iclog_flags: FlagPatterns,
    /// `xfs_log_cil_wait`s by the log cycle they slept in, and the cycles the head went round.
    cil_throttle_waits_by_cycle: std::collections::BTreeMap<u64, u64>,
    log_cycles_written: f64,
    /// Synced appends' two transactions in one checkpoint or two; null where not measured.
    #[serde(deserialize_with = "Option::deserialize")]
    append_checkpoints: Option<appends::AppendPairs>,
}

#[derive(Debug, Deserialize)]
struct PushWork {
    cil_push_runs: f64,
    cil_push_dispatch_ms_p99: f64,
    cil_push_run_ms_p99: f64,
}

impl Compared {
    /// Operations per run of the push work (0: no runs timed).
    fn ops_per_push_run(&self) -> f64 {
        let runs = self.cil_push_work.as_ref().map_or(0.0, |p| p.cil_push_runs);
        if runs > 0.0 {
            self.ops / runs
        } else {
            0.0
        }
    }

    /// Log cycles in which the CIL throttle made a task wait (a burst across a cycle's end
    /// counts in both), per hundred cycles written, and whether that is rare: at most one
    /// burst in the run, or one in a hundred cycles. None over fewer than `THROTTLE_MIN_CYCLES`.
    fn throttle_bursts_per_100_cycles(&self) -> Option<(f64, bool)> {
        let bursts = self.cil_throttle_waits_by_cycle.values().filter(|&&n| n > 0).count() as f64;
        let per_100 = 100.0 * bursts / self.log_cycles_written;
        (self.log_cycles_written >= THROTTLE_MIN_CYCLES).then_some((per_100, bursts <= 1.0 || per_100 <= RARE_BURSTS))
    }

    /// Log bytes per operation, counted as `bytes_per_transaction` counts them.
    fn bytes_per_op(&self) -> f64 {
        if self.ops > 0.0 {
            self.bytes_per_transaction * self.transactions / self.ops
        } else {
            0.0
        }
    }

    fn of(report: &Value, side: &str) -> Result<Compared, String> {
        Compared::deserialize(report).map_err(|e| format!("kernel compare: the {side}'s report: {e}"))
    }
}

/// The checks that should hold whatever the device's speed; `synced_appends`: the workload's
/// operations are appends made durable (`sync-append`'s O_DSYNC writes, `fsync-heavy`'s
/// appends and fsyncs), which adds the checks of what they log and how they batch.
fn checks(m: &Compared, k: &Compared, synced_appends: bool) -> Map<String, Value> {
    let mut c = Map::new();
    // The push's rhythm: how long a queued push waits for a worker, and how long a run takes
    // (source thread 003's stutter is a push held by a long log write or a busy CPU).
    let of = |v: &Compared| {
        v.cil_push_work.as_ref().map_or((0.0, 0.0), |p| (p.cil_push_dispatch_ms_p99, p.cil_push_run_ms_p99))
    };
    let ((md, mr), (kd, kr)) = (of(m), of(k));
    for (name, mv, kv, rule) in [
        (
            "push_dispatch_p99",
            md,
            kd,
            "p99 of a queued CIL push's wait for a worker to start it (`queue_work` to \
             `workqueue_execute_start`) within 2x",
        ),
        ("push_run_p99", mr, kr, "p99 of a CIL push run (`workqueue_execute_start` to `_end`) within 2x"),
    ] {
        c.insert(name.into(), ratio_check(mv, kv, 1.0, rule));
    }
    if synced_appends {
        c.insert(
            "appends_per_push_run".into(),
            ratio_check(
                m.ops_per_push_run(),
                k.ops_per_push_run(),
                1.0,
                "synced appends (O_DSYNC, or append and fsync) per run of the CIL push work within 2x: how \
                 many appends' transactions one push gathers while its appenders' I/O completions and forces \
                 queue behind it",
            ),
        );
        let share = |v: &Compared| v.append_checkpoints.filter(|p| p.pairs >= MIN_APPEND_PAIRS)?.share_split();
        let (sm, sk) = (share(m), share(k));
        c.insert(
            "appends_in_two_checkpoints".into(),
            json!({ "model": sm, "kernel": sk,
                    "agree": sm.zip(sk).map(|(a, b)| (a - b).abs() <= 0.20),
                    "rule": "share of synced appends whose timestamp update and conversion went into two \
                             checkpoints (a CIL push started between their commits) within 20 points; not \
                             applicable under 100 appends with both" }),
        );
        c.insert(
            "bytes_per_append".into(),
            ratio_check(
                m.bytes_per_op(),
                k.bytes_per_op(),
                0.15,
                "log bytes per synced append within 15%: its timestamp update (when the clock ticked) and its \
                 extent conversion, with their headers and their share of the checkpoints",
            ),
        );
    }
    c.insert(
        "start_iclog_needs_flush".into(),
        all_check(
            (m.iclog_flags.start_flush + m.iclog_flags.start_in_previous_commit, m.iclog_flags.multi_iclog_checkpoints),
            (k.iclog_flags.start_flush + k.iclog_flags.start_in_previous_commit, k.iclog_flags.multi_iclog_checkpoints),
            "a multi-iclog checkpoint's start record is in an iclog with XLOG_ICL_NEED_FLUSH: its own first \
             iclog, or the previous checkpoint's commit iclog it shares",
        ),
    );
    c.insert(
        "middle_iclogs_unflagged".into(),
        all_check(
            (m.iclog_flags.middle_unflagged, m.iclog_flags.middle_iclogs),
            (k.iclog_flags.middle_unflagged, k.iclog_flags.middle_iclogs),
            "iclogs between a checkpoint's start and commit iclogs carry no flags",
        ),
    );
    c.insert(
        "commit_iclog_needs_flush_fua".into(),
        all_check(
            (m.iclog_flags.commit_flush_fua, m.iclog_flags.multi_iclog_checkpoints),
            (k.iclog_flags.commit_flush_fua, k.iclog_flags.multi_iclog_checkpoints),
            "the commit iclog of a multi-iclog checkpoint carries NEED_FLUSH|NEED_FUA",
        ),
    );
    // Iclogs by their flags: "FUA" is the pattern that counts, and absent means none.
    let fua_only = |v: &Compared| v.iclog_flags.iclogs_by_flags.get("FUA").copied().unwrap_or(0);
    let (fm, fk) = (fua_only(m), fua_only(k));
    c.insert(
        "no_fua_without_flush".into(),
        json!({ "model": fm, "kernel": fk, "agree": fm == 0 && fk == 0,
                "rule": "no iclog asks for FUA without a PREFLUSH (iclogs with FUA alone)" }),
    );
    // Concurrent pushers release iclogs in any order, so submissions leave LSN order on the
    // kernel too: both sides should show it, or neither.
    let (om, ok) = (m.iclog_flags.out_of_order, k.iclog_flags.out_of_order);
    c.insert(
        "iclogs_submitted_out_of_lsn_order".into(),
        json!({ "model": om, "kernel": ok, "agree": (om > 0) == (ok > 0),
                "rule": "iclog writes submitted out of LSN order (concurrent pushers releasing iclogs) on both sides or neither" }),
    );
    // Counts differ by design: the kernel's sleepers wake and sleep again (every xfs_log_space_wake
    // wakes those that fit, unreserved), the model's sleep once. Whether they sleep does not.
    let (gm, gk) = (m.grant_head_waits, k.grant_head_waits);
    c.insert(
        "grant_head_sleeps".into(),
        json!({ "model": gm, "kernel": gk, "agree": (gm > 0.0) == (gk > 0.0),
                "rule": "reservations sleep on the grant head on both sides or neither (6.11+: xfsaild keeps a \
                         quarter of the log free only past the AIL's span, so a busy log fills, a reservation \
                         sleeps and pushes the whole AIL)" }),
    );
    c.insert(
        "xfsaild_passes".into(),
        ratio_check(
            m.xfsaild_passes,
            k.xfsaild_passes,
            1.5,
            "xfsaild passes within a factor of 2.5 while the workload runs (`xs_push_ail`): a look every 50 ms \
             while the AIL holds items, 20 ms when most items are stuck, at once while work remains, and a \
             wakeup only between passes (one during a pass is lost)",
        ),
    );
    let (bm, bk) = (m.throttle_bursts_per_100_cycles(), k.throttle_bursts_per_100_cycles());
    c.insert(
        "cil_throttle_bursts".into(),
        json!({ "model": bm.map(|b| b.0), "kernel": bk.map(|b| b.0),
                "agree": bm.zip(bk).map(|((a, a_rare), (b, b_rare))| (a_rare && b_rare) || ratio_within(a, b, 1.0) == Some(true)),
                "rule": "log cycles in which the CIL throttle made a task wait (`xfs_log_cil_wait`), per hundred \
                         cycles written: within 2x, or rare on both sides (at most one burst in the run, or one \
                         per hundred cycles; the kernel's rhythm showed one in about 300 over three runs); not \
                         applicable over fewer than 20 cycles" }),
    );
    c.insert(
        "bytes_per_transaction".into(),
        ratio_check(
            m.bytes_per_transaction,
            k.bytes_per_transaction,
            0.05,
            "log bytes per transaction within 5%, the CIL's last contents forced out on both sides (what \
             each transaction logs: items, regions, headers, and buffers' dirty ranges held until writeback)",
        ),
    );
    c.insert(
        "iclogs_per_checkpoint".into(),
        ratio_check(
            m.iclog_flags.iclogs_per_checkpoint_p50 as f64,
            k.iclog_flags.iclogs_per_checkpoint_p50 as f64,
            0.3,
            "median iclogs per multi-iclog checkpoint within 30% (CIL space limit / iclog size)",
        ),
    );
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checks read typed reports: the model's own parses, and a report that lacks a
    /// compared key is an error naming it, not a zero that agrees.
    #[test]
    fn compare_checks_read_typed_reports_and_a_missing_key_is_an_error() {
        let s = xlog::find_preset("small-crash").unwrap();
        let m = model_run(&s).unwrap();
        let c = Compared::of(&m, "model").unwrap();
        assert!(c.bytes_per_transaction > 0.0 && c.iclog_flags.iclog_syncs > 0, "{c:?}");
        let agree = checks(&c, &c, false);
        assert_eq!(agree.len(), 12);
        assert!(c.ops > 0.0 && c.ops_per_push_run() > 0.0, "{c:?}");
        let appends = checks(&c, &c, true);
        assert_eq!(appends["appends_per_push_run"]["agree"], json!(true), "{appends:?}");
        assert_eq!(appends["bytes_per_append"]["agree"], json!(true), "{appends:?}");
        let heavier =
            Compared { bytes_per_transaction: 1.2 * c.bytes_per_transaction, ..Compared::of(&m, "kernel").unwrap() };
        let off = checks(&c, &heavier, true);
        assert_eq!(off["bytes_per_append"]["agree"], json!(false), "20% more an append: {off:?}");
        let untimed = Compared { cil_push_work: None, ..Compared::of(&m, "kernel").unwrap() };
        let undecided = checks(&c, &untimed, true);
        assert_eq!(undecided["appends_per_push_run"]["agree"], Value::Null, "no push runs timed: undecided");
        // small-crash makes no appends durable: its share is not applicable.
        assert_eq!(appends["appends_in_two_checkpoints"]["agree"], Value::Null, "{appends:?}");
        let split = |pairs, split| Compared {
            append_checkpoints: Some(appends::AppendPairs { pairs, split }),
            ..Compared::of(&m, "kernel").unwrap()
        };
        let two = |a: &Compared, b: &Compared| checks(a, b, true)["appends_in_two_checkpoints"]["agree"].clone();
        assert_eq!(two(&split(1000, 780), &split(2000, 1900)), json!(true), "78% against 95%");
        assert_eq!(two(&split(1000, 700), &split(2000, 1900)), json!(false), "70% against 95%");
        assert_eq!(two(&split(99, 99), &split(2000, 1900)), Value::Null, "99 appends say too little");
        assert!(agree.values().all(|v| v["agree"] != json!(false)), "{agree:?}");
        let mut renamed = m.clone();
        let v = renamed.as_object_mut().unwrap().remove("xfsaild_passes").unwrap();
        renamed["xfsaild_pass"] = v;
        let e = Compared::of(&renamed, "kernel").unwrap_err();
        assert!(e.contains("kernel") && e.contains("xfsaild_passes"), "{e}");
        // A key whose value may be null must still be there: absent is not "not measured".
        let mut unpaired = m.clone();
        unpaired.as_object_mut().unwrap().remove("append_checkpoints").unwrap();
        let e = Compared::of(&unpaired, "kernel").unwrap_err();
        assert!(e.contains("append_checkpoints"), "{e}");
    }

    /// The model counts an append's two transactions as the kernel's trace pairs them: each
    /// O_DSYNC append of `sync-append` logs both, and some go into two checkpoints.
    #[test]
    fn the_model_pairs_each_synced_appends_two_transactions() {
        let mut s = xlog::find_preset("sync-append").unwrap();
        s.set("duration", "300ms").unwrap();
        let m = model_run(&s).unwrap();
        let c = Compared::of(&m, "model").unwrap();
        let p = c.append_checkpoints.expect("sync-append's appends are paired");
        // Appends still in flight at the end logged their timestamp update only.
        assert!(p.pairs as f64 >= 0.95 * c.ops && p.pairs as f64 <= c.ops, "{p:?} of {} appends", c.ops);
        assert!(p.split > 0 && p.split < p.pairs, "{p:?}");
        let none = model_run(&xlog::find_preset("small-crash").unwrap()).unwrap();
        assert_eq!(none["append_checkpoints"], Value::Null);
    }

    /// With `cpu_model=kernel` the model's side reports its kernel threads' CPU time in the
    /// kernel side's shape (the iclog completions' per iclog write too); by default, null.
    #[test]
    fn the_models_kernel_threads_are_reported_as_the_kernels_are() {
        let mut s = xlog::find_preset("sync-append").unwrap();
        for (k, v) in [("duration", "300ms"), ("cpus", "2"), ("cpu_model", "kernel")] {
            s.set(k, v).unwrap();
        }
        let m = model_run(&s).unwrap();
        let ic = &m["kernel_threads"]["iclog_completion"];
        let (cpu_ms, writes) = (ic["cpu_ms"].as_f64().unwrap(), m["iclog_writes"].as_f64().unwrap());
        assert!(cpu_ms > 0.0 && writes > 0.0, "{m}");
        assert!((ic["cpu_us_per_iclog_write"].as_f64().unwrap() - 1e3 * cpu_ms / writes).abs() < 1e-6, "{ic}");
        for t in ["cil_push", "ioend_completion"] {
            assert!(m["kernel_threads"][t]["cpu_ms"].as_f64().unwrap() > 0.0, "{t}: {m}");
        }
        assert_eq!(m["kernel_threads"]["loop_completion"]["cpu_ms"], 0.0, "not on vm-disk: {m}");
        s.set("device", "vm-disk").unwrap();
        let m = model_run(&s).unwrap();
        for t in ["loop_completion", "buf_completion"] {
            assert!(m["kernel_threads"][t]["cpu_ms"].as_f64().unwrap() > 0.0, "{t}: {m}");
        }
        s.set("cpu_model", "writers").unwrap();
        assert_eq!(model_run(&s).unwrap()["kernel_threads"], Value::Null);
    }

    /// The throttle's bursts: the model's `xfs_log_cil_wait` lines are read by the kernel's
    /// parser (a 32 MiB log whose CIL throttles every cycle); a burst a cycle on one side and
    /// none on the other differ, one in 300 cycles beside none is rare on both sides, and a
    /// run of few cycles is not judged.
    #[test]
    fn throttle_bursts_are_counted_per_hundred_log_cycles_on_both_sides_alike() {
        let mut s = xlog::find_preset("cil-throttle-32mb").unwrap();
        s.set("duration", "4s").unwrap();
        let m = model_run(&s).unwrap();
        let c = Compared::of(&m, "model").unwrap();
        let waits: u64 = c.cil_throttle_waits_by_cycle.values().sum();
        assert_eq!(waits as f64, m["cil_throttle_waits"].as_f64().unwrap(), "every wait has its cycle: {m}");
        assert!(c.log_cycles_written > 1.0 && c.cil_throttle_waits_by_cycle.len() >= 2, "{c:?}");
        let with = |bursts: u64, cycles: f64| Compared {
            cil_throttle_waits_by_cycle: (0..bursts).map(|cycle| (cycle, 16)).collect(),
            log_cycles_written: cycles,
            ..Compared::of(&m, "kernel").unwrap()
        };
        let judge = |a: &Compared, b: &Compared| checks(a, b, false)["cil_throttle_bursts"]["agree"].clone();
        assert_eq!(judge(&with(60, 60.0), &with(0, 60.0)), json!(false), "every cycle against none");
        assert_eq!(judge(&with(60, 60.0), &with(40, 60.0)), json!(true), "within 2x");
        assert_eq!(judge(&with(0, 300.0), &with(1, 300.0)), json!(true), "rare on both sides");
        assert_eq!(judge(&with(0, 31.0), &with(1, 31.0)), json!(true), "one burst in a 60 s run is rare");
        assert_eq!(judge(&with(0, 31.0), &with(3, 31.0)), json!(false), "three in 31 cycles are not");
        assert_eq!(judge(&with(0, 300.0), &with(30, 300.0)), json!(false), "one in ten cycles is not rare");
        assert_eq!(judge(&with(5, 10.0), &with(0, 10.0)), Value::Null, "ten cycles say too little");
    }

    /// Real trace-cmd text (6.18): a push queued on this mount's workqueue, started 4 us later
    /// and ended 13 us after that; one queued while it was pending adds nothing; another
    /// mount's push work is not counted.
    #[test]
    fn push_work_dispatch_and_run_come_from_this_mounts_workqueue_events() {
        let trace = "\
          loglab-30650   [001] d..2. 52947.374684: workqueue_queue_work: work struct=000000005b011256 function=xlog_cil_push_work workqueue=xfs-cil/loop1 req_cpu=256 cpu=-1
    kworker/u8:3-27659   [001] ..... 52947.374688: workqueue_execute_start: work struct 000000005b011256: function xlog_cil_push_work
    kworker/u8:3-27659   [001] ..... 52947.374701: workqueue_execute_end: work struct 000000005b011256: function xlog_cil_push_work
          loglab-30674   [000] d..2. 52947.621503: workqueue_queue_work: work struct=000000005b011256 function=xlog_cil_push_work workqueue=xfs-cil/loop1 req_cpu=256 cpu=-1
          fsstress-4242  [000] d..2. 52947.621600: workqueue_queue_work: work struct=00000000deadbeef function=xlog_cil_push_work workqueue=xfs-cil/loop7 req_cpu=256 cpu=-1
    kworker/u8:1-27000   [001] ..... 52947.622000: workqueue_execute_start: work struct 00000000deadbeef: function xlog_cil_push_work
    kworker/u8:3-27659   [000] ..... 52947.661503: workqueue_execute_start: work struct 000000005b011256: function xlog_cil_push_work
    kworker/u8:3-27659   [000] ..... 52947.665503: workqueue_execute_end: work struct 000000005b011256: function xlog_cil_push_work
";
        let v = cil_push_work(trace, "xfs-cil/loop1");
        assert_eq!(v["pushes"], 2);
        assert_eq!(v["cil_push_dispatch_ms_p50"], 40.0);
        assert_eq!(v["cil_push_dispatch_ms_max"], 40.0);
        assert_eq!(v["cil_push_run_ms_p50"], 4.0);
        assert_eq!(v["cil_push_run_ms_max"], 4.0);
        assert!(cil_push_work(trace, "xfs-cil/loop3").is_null());
        assert!(v.get("cil_push_ms_cpu").is_none(), "no scheduler events, no split: {v}");
    }

    /// The scheduler's events split a push run: on a CPU until its worker switches out asleep
    /// (`prev_state=D`), asleep until woken, runnable until switched in, on a CPU to its end.
    /// Another worker's switches do not count.
    #[test]
    fn the_push_workers_scheduling_splits_its_runs_into_cpu_runnable_and_asleep() {
        let trace = "\
          loglab-30650   [001] d..2. 52947.621503: workqueue_queue_work: work struct=000000005b011256 function=xlog_cil_push_work workqueue=xfs-cil/loop1 req_cpu=256 cpu=-1
    kworker/u8:3-27659   [000] ..... 52947.661503: workqueue_execute_start: work struct 000000005b011256: function xlog_cil_push_work
    kworker/u8:3-27659   [000] d..2. 52947.662503: sched_switch: prev_comm=kworker/u8:3 prev_pid=27659 prev_prio=120 prev_state=D ==> next_comm=loglab next_pid=30650 next_prio=120
    kworker/u8:1-27000   [001] d..2. 52947.662600: sched_switch: prev_comm=kworker/u8:1 prev_pid=27000 prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0       [001] dNh4. 52947.663503: sched_waking: comm=kworker/u8:3 pid=27659 prio=120 target_cpu=000
          loglab-30650   [000] d..2. 52947.664003: sched_switch: prev_comm=loglab prev_pid=30650 prev_prio=120 prev_state=R+ ==> next_comm=kworker/u8:3 next_pid=27659 next_prio=120
    kworker/u8:3-27659   [000] ..... 52947.665503: workqueue_execute_end: work struct 000000005b011256: function xlog_cil_push_work
";
        let v = cil_push_work(trace, "xfs-cil/loop1");
        assert_eq!(v["cil_push_run_ms_max"], 4.0);
        assert_eq!(v["cil_push_ms_cpu"], 2.5, "{v}");
        assert_eq!(v["cil_push_ms_cpu_wait"], 0.5, "{v}");
        assert_eq!(v["cil_push_ms_asleep"], 1.0, "{v}");
    }

    /// Two contexts' pushes (two work items) overlap: each start and end is matched to its
    /// own queueing, not to the other's.
    #[test]
    fn overlapping_pushes_of_two_contexts_are_timed_each_on_its_own() {
        // The same trace-cmd text as above, made line by line: (time, event, work item).
        let line = |(t, ev, work): (f64, &str, &str)| match ev {
            "queue_work" => format!(
                "loglab-1 [000] d..2. {t:.6}: workqueue_queue_work: work struct={work} \
                 function=xlog_cil_push_work workqueue=xfs-cil/loop0 req_cpu=256 cpu=-1"
            ),
            _ => format!(
                "kworker/u8:3-2 [001] ..... {t:.6}: workqueue_{ev}: work struct {work}: function xlog_cil_push_work"
            ),
        };
        let (a, b) = ("00000000aaaaaaaa", "00000000bbbbbbbb");
        let events = [
            (100.000, "queue_work", a),
            (100.001, "execute_start", a),
            (100.050, "queue_work", b),
            (100.052, "execute_start", b),
            (100.062, "execute_end", b),
            (100.201, "execute_end", a),
        ];
        let trace = events.into_iter().map(line).collect::<Vec<_>>().join("\n");
        let trace = trace.as_str();
        let v = cil_push_work(trace, "xfs-cil/loop0");
        assert_eq!(v["pushes"], 2);
        assert_eq!(v["cil_push_dispatch_ms_max"], 2.0, "{v}");
        assert_eq!(v["cil_push_run_ms_max"], 200.0, "{v}");
        assert_eq!(v["cil_push_run_ms_p50"], 200.0, "{v}");
    }
}
