//! `loglab`: the Log Lab journal model on the command line (runs, sweeps, traces, crash checks,
//! sizing, exports, benchmarks).

mod bench;
mod crash_cmd;
mod export_cmd;
mod kernel;
mod lessons_cmd;
mod merge_cmd;
mod progress;
mod recover_cmd;
mod run_cmd;
mod size_cmd;
mod sweep_cmd;
mod xfs_image;

use clap::{Args, Parser, Subcommand};
use serde_json::json;
use std::process::ExitCode;
use xlog::{find_preset, parse_duration, Duration, Scenario, PRESETS, SET_KEYS};

/// Where `scripts/lab.sh run` serves the lab: the origin of every link the CLI prints.
pub const LAB_ORIGIN: &str = "http://127.0.0.1:8080/";

/// A full link to `s` on the local lab, relative to `preset` when one is named.
pub fn lab_link(s: &Scenario, preset: Option<&str>) -> Result<String, String> {
    Ok(format!("{LAB_ORIGIN}{}", xlog::url::encode(s, preset)?))
}

#[derive(Parser)]
#[command(
    name = "loglab",
    version,
    about = "The XFS journal model of Log Lab, on the command line",
    after_help = "Examples:
  loglab presets
  loglab run --preset fsync-heavy --set log_size=32MiB --json
  loglab run --url 'http://127.0.0.1:8080/?preset=fsmark-create&writers=32' --trace run.txt
  loglab sweep --preset seed-log-size --vary log_size=10MiB,20MiB,40MiB,80MiB,160MiB --vary device=hdd-x4,nvme-x4
  loglab trace --preset cil-throttle-32mb --event xfs_log_cil_wait | awk '/^ / {print $23}' | sort -n | uniq -c
  loglab crash --preset small-crash --crash-points 20 --json
  loglab crash --preset fsmark-create --crash-points 400 --shard 2/4 --checkpoint s2.ckpt > s2.json
  loglab merge s1.json s2.json s3.json s4.json
  loglab size --fs-size 220GiB --algo all
  loglab url encode --preset fsmark-create --set writers=32
  loglab url encode --preset cil-throttle-32mb --at 150ms --stamp
  loglab url check 'http://127.0.0.1:8080/?preset=cil-throttle-32mb&at=150ms&v=2&m=2&h=…'
  loglab export-logwrites --preset fsync-heavy --out fsync.logwrites
  loglab export-image --image xfs.img --preset fsync-heavy
  loglab recover --image xfs.img
  loglab bench --json
  sudo loglab kernel compare --preset fsmark-create --set writers=4 --set duration=2s --json"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the named scenarios, one line each.
    Presets {
        #[arg(long)]
        json: bool,
    },
    /// Run a scenario and print its metrics.
    Run {
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// Print the metrics as one JSON object.
        #[arg(long)]
        json: bool,
        /// Also write the run's trace to FILE (trace-cmd text; JSON when FILE ends in .json).
        #[arg(long, value_name = "FILE")]
        trace: Option<std::path::PathBuf>,
        /// Stop at this virtual time, with no wind-down (the state the lab shows for `at=`).
        #[arg(long, value_name = "DURATION", conflicts_with = "trace")]
        until: Option<String>,
    },
    /// Run a grid of scenarios in parallel and print one row per run.
    #[command(
        after_help = "Example:\n  loglab sweep --preset seed-log-size --vary log_size=10MiB,20MiB,40MiB,80MiB,160MiB --vary device=hdd-x4,nvme-x4\n  loglab sweep --preset fsmark-create --vary flush=legacy,v5.14,upstream --json"
    )]
    Sweep(sweep_cmd::SweepArgs),
    /// Print a run's trace events (trace-cmd text as `trace-cmd show` prints it, or JSON).
    #[command(
        after_help = "Example (the source thread 003 pipeline: CIL throttle waits per log cycle):\n  loglab trace --preset cil-throttle-32mb --event xfs_log_cil_wait | awk '/^ / {print $23}' | sort -n | uniq -c"
    )]
    Trace {
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// trace-cmd (block events as the source threads' 5.x kernels print them), trace-cmd-6.18 (as 6.10
        /// and later print them, with the I/O priority) or json.
        #[arg(long, default_value = "trace-cmd")]
        format: String,
        /// Keep only these events (repeatable), like `trace-cmd start -e`.
        #[arg(long = "event", value_name = "NAME")]
        events: Vec<String>,
        /// Stop at this virtual time, with no wind-down (the trace the lab downloads at `at=`).
        #[arg(long, value_name = "DURATION")]
        until: Option<String>,
    },
    /// Crash the scenario at chosen events, recover each allowed disk state and check the invariants.
    #[command(
        after_help = "Examples:\n  loglab crash --preset force-without-flush --crash-points 200 --json\n  loglab crash --preset force-without-flush --fixed --every-io\n  loglab crash --url '<an example's url from --json>'   # replays that one crash state"
    )]
    Crash(crash_cmd::CrashArgs),
    /// Size the internal log as mkfs.xfs does (pre-2022, seed patch, xfsprogs 6.1), with the steps taken.
    #[command(
        after_help = "Examples:\n  loglab size --fs-size 220GiB\n  loglab size --fs-size 4TiB --block-size 1024 --algo xfsprogs-6.1 --json\n  loglab size --fs-size 220GiB --dsu 64KiB --dsw 4 --rmapbt 1"
    )]
    Size(size_cmd::SizeArgs),
    /// Scenario links: encode a preset or scenario file, or decode a link to its scenario.
    Url {
        #[command(subcommand)]
        cmd: UrlCmd,
    },
    /// Write the simulated log into the log region of an XFS image made by mkfs.xfs.
    #[command(
        after_help = "Example:\n  truncate -s 1G xfs.img && mkfs.xfs -q xfs.img\n  loglab export-image --image xfs.img --preset fsync-heavy --json\n  xfs_logprint xfs.img"
    )]
    ExportImage(export_cmd::ImageArgs),
    /// Recover the internal log of a real XFS image with the model's recovery (reads only).
    #[command(
        after_help = "Examples:\n  loglab export-image --image xfs.img --preset fsync-heavy && loglab recover --image xfs.img\n  loglab recover --image crashed.img --json\n\nExit status: 0 recovered (or clean), 1 the log is damaged beyond what recovery walks, 2 bad arguments or not an XFS image."
    )]
    Recover(recover_cmd::RecoverArgs),
    /// The lab's lessons: list them, or solve or check one for a student's seed.
    #[command(
        after_help = "Examples:\n  loglab lessons\n  loglab lessons --json\n  loglab lessons solve bigger-log --seed 7\n  loglab lessons check throttle-hang fixed"
    )]
    Lessons(lessons_cmd::LessonsArgs),
    /// Combine the JSON of `crash --shard K/N` or `sweep --shard K/N` runs into the whole run's `--json`.
    #[command(
        after_help = "Example (four processes, here or on four machines; see docs/scale.md):\n  for k in 1 2 3 4; do loglab crash --preset fsmark-create --crash-points 400 --shard $k/4 > shard-$k.json & done; wait\n  loglab merge shard-*.json > report.json"
    )]
    Merge(merge_cmd::MergeArgs),
    /// Write the device request stream in the dm-log-writes format.
    ExportLogwrites(export_cmd::LogwritesArgs),
    /// Measure simulator throughput: events/s and crash states/s.
    Bench {
        #[arg(long)]
        json: bool,
        /// Only the 200-writer run (best of 3): what the browser's bench runs, for a harness
        /// that alternates the two.
        #[arg(long)]
        events_only: bool,
        /// Only the crash explorer's states/s on the busy presets (fsmark-create, over its run
        /// and at 200 ms as the lab explores it, fsync-heavy with 32 writers, sync-append): a
        /// minute or so.
        #[arg(long, conflicts_with = "events_only")]
        busy: bool,
    },
    /// The real kernel as the oracle: run a scenario on this machine's XFS (root, loop devices, tracefs).
    #[command(
        subcommand,
        after_help = "Examples:\n  sudo loglab kernel run --preset fsmark-create --set writers=16 --set duration=5s --json\n  sudo loglab kernel compare --preset fsmark-create --set writers=4 --set duration=2s"
    )]
    Kernel(kernel::KernelCmd),
}

#[derive(Subcommand)]
enum UrlCmd {
    /// Print the link for a preset (with --set overrides) or a scenario file.
    Encode {
        /// A scenario file (JSON with the `--set` keys), instead of --preset.
        file: Option<std::path::PathBuf>,
        #[arg(long, conflicts_with = "file")]
        preset: Option<String>,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// For a bug-zoo preset: link to the fixed variant.
        #[arg(long, requires = "preset")]
        fixed: bool,
        /// The moment the lab opens at, paused (`at=`).
        #[arg(long, value_name = "DURATION")]
        at: Option<String>,
        /// Any other link key (repeatable): panels, cmp, lesson, step, speed, embed, ...
        #[arg(long = "key", value_name = "KEY=VALUE")]
        keys: Vec<String>,
        /// Record the link schema, the model version and the trace hash at the link's moment
        /// (`v`, `m`, `h`; runs the scenario to `--at`, or to its end), so that a reader can
        /// tell when the model has changed under the link (`loglab url check`).
        #[arg(long)]
        stamp: bool,
    },
    /// Print the scenario a link describes, as JSON.
    Decode { url: String },
    /// Whether a link still shows what it showed: its trace hash (`h`) against this model's
    /// at its moment, and the model changes since the version it names (`m`). Exit status 0
    /// when it holds, 1 when the model moved it, 2 when the link cannot be read.
    #[command(
        after_help = "Example:\n  loglab url check \"$(loglab url encode --preset cil-throttle-32mb --at 150ms --stamp)\""
    )]
    Check {
        url: String,
        #[arg(long)]
        json: bool,
    },
}

/// Where a scenario comes from, plus `--set` overrides.
#[derive(Args, Clone, Default)]
pub struct ScenarioArgs {
    /// A named preset (see `loglab presets`).
    #[arg(long, conflicts_with_all = ["scenario", "url"])]
    pub preset: Option<String>,
    /// A scenario file (JSON with the `--set` keys).
    #[arg(long, conflicts_with = "url")]
    pub scenario: Option<std::path::PathBuf>,
    /// A scenario link (see `loglab url`).
    #[arg(long)]
    pub url: Option<String>,
    /// Override one key, e.g. --set log_size=32MiB (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Simulated duration, e.g. 10s or 500ms (same as --set duration=...).
    #[arg(long)]
    pub duration: Option<String>,
    /// For a bug-zoo preset: run the fixed variant instead of the historic bug.
    #[arg(long, requires = "preset")]
    pub fixed: bool,
}

pub fn apply_sets(s: &mut Scenario, sets: &[String]) -> Result<(), String> {
    for kv in sets {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set '{kv}' is not KEY=VALUE (keys: {})", SET_KEYS.join(", ")))?;
        s.set(k.trim(), v.trim())?;
    }
    Ok(())
}

impl ScenarioArgs {
    pub fn load(&self) -> Result<Scenario, String> {
        self.load_with_link().map(|(s, _)| s)
    }

    /// The scenario, and `--url` decoded (once) when given: its crash keys and its preset
    /// are read from that.
    pub fn load_with_link(&self) -> Result<(Scenario, Option<xlog::url::Decoded>), String> {
        let decoded = self.url.as_deref().map(xlog::url::decode).transpose()?;
        let mut s = match (&self.preset, &self.scenario, &decoded) {
            (Some(p), _, _) => {
                let entry = xlog::find_preset_entry(p)?;
                if self.fixed && !entry.is_bug() {
                    return Err(format!("--fixed: preset '{p}' is not a bug-zoo preset"));
                }
                if self.fixed {
                    entry.fixed()
                } else {
                    entry.scenario()
                }
            }
            (None, Some(f), _) => {
                let text = std::fs::read_to_string(f).map_err(|e| format!("--scenario {}: {e}", f.display()))?;
                serde_json::from_str(&text).map_err(|e| format!("--scenario {}: {e}", f.display()))?
            }
            (None, None, Some(d)) => d.scenario.clone(),
            (None, None, None) => find_preset(xlog::DEFAULT_PRESET)?,
        };
        apply_sets(&mut s, &self.set)?;
        if let Some(d) = &self.duration {
            s.duration = Duration(parse_duration("duration", d)?);
        }
        s.validate()?;
        Ok((s, decoded))
    }

    /// The preset a link should be relative to: the named one, or the link's own (`--url`,
    /// decoded once by `load_with_link`).
    fn base_preset_of(&self, decoded: Option<&xlog::url::Decoded>) -> Option<String> {
        if self.fixed {
            return None;
        }
        self.preset.clone().or_else(|| decoded?.preset.clone())
    }

    /// A link that reproduces this scenario, with `--url` as `load_with_link` decoded it.
    pub fn link_of(&self, s: &Scenario, decoded: Option<&xlog::url::Decoded>) -> String {
        lab_link(s, self.base_preset_of(decoded).as_deref()).unwrap_or_else(|_| LAB_ORIGIN.into())
    }
}

fn main() -> ExitCode {
    // A closed pipe (`loglab run --json | head -c 100`) ends the CLI quietly, as it does other
    // Unix tools: Rust ignores SIGPIPE, which would turn the next print into a panic.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            // --help and --version
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // One line: clap's first line names the flag and the problem.
            // (a first line ending in ':' goes on with its list, e.g. the missing arguments).
            let text = e.render().to_string();
            let mut lines =
                text.lines().map(str::trim).filter(|l| !l.is_empty()).take_while(|l| !l.starts_with("Usage:"));
            let mut first = lines.next().unwrap_or("bad arguments").to_string();
            if first.ends_with(':') {
                for l in lines {
                    first.push(' ');
                    first.push_str(l);
                }
            }
            eprintln!("loglab: {}", first.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    if let Cmd::Recover(a) = &cli.cmd {
        // Its own exit statuses: a damaged log is 1, not a usage error.
        return recover_cmd::main(a);
    }
    if let Cmd::Url { cmd: UrlCmd::Check { url, json } } = &cli.cmd {
        // Its own exit statuses: a link the model moved is 1, not a usage error.
        return url_check(url, *json);
    }
    match dispatch(cli.cmd) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: scripts read the first line of stderr.
            eprintln!("loglab: error: {}", e.replace('\n', " "));
            ExitCode::from(2)
        }
    }
}

/// `loglab url check`: 0 the link's hash holds (or it has none), 1 the model moved it, 2 it cannot be read.
fn url_check(url: &str, as_json: bool) -> ExitCode {
    let check = match xlog::check_link(url) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("loglab: error: {}", e.replace('\n', " "));
            return ExitCode::from(2);
        }
    };
    let Some(c) = check else {
        if as_json {
            print_json(&json!({"holds": null, "model": xlog::MODEL_VERSION}));
        } else {
            println!("This link records no trace hash (h=): nothing to check. `loglab url encode --stamp` makes one that does.");
        }
        return ExitCode::SUCCESS;
    };
    if as_json {
        let changes: Vec<_> = c.changes.iter().map(|m| json!({"version": m.version, "change": m.text})).collect();
        print_json(&json!({
            "holds": c.holds(),
            "link_hash": c.link_hash,
            "hash": c.hash,
            "link_model": c.link_model,
            "model": xlog::MODEL_VERSION,
            "changes": changes,
        }));
    } else {
        println!("{}", c.message());
    }
    if c.holds() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

pub fn print_json(v: &serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(v).expect("JSON values serialize"));
}

fn dispatch(cmd: Cmd) -> Result<(), String> {
    match cmd {
        Cmd::Presets { json } => {
            if json {
                let v: Vec<_> = PRESETS
                    .iter()
                    .map(|p| {
                        let play = p.play();
                        json!({"name": p.name, "about": p.about, "speed": xlog::format_duration(play.speed_ns),
                            "headline": play.headline, "headline_metric": play.metric})
                    })
                    .collect();
                print_json(&json!(v));
            } else {
                for p in PRESETS {
                    println!("{:<26} {}", p.name, p.about);
                }
            }
            Ok(())
        }
        Cmd::Run { scenario, json, trace, until } => run_cmd::run(&scenario, json, trace.as_deref(), until.as_deref()),
        Cmd::Sweep(a) => sweep_cmd::run(&a),
        Cmd::Trace { scenario, format, events, until } => {
            run_cmd::trace(&scenario.load()?, &format, &events, until.as_deref())
        }
        Cmd::Crash(a) => crash_cmd::run(&a),
        Cmd::Merge(a) => merge_cmd::run(&a),
        Cmd::Lessons(a) => lessons_cmd::run(&a),
        Cmd::Size(a) => size_cmd::run(&a),
        Cmd::Url { cmd } => match cmd {
            UrlCmd::Encode { file, preset, set, fixed, at, keys, stamp } => {
                let (mut s, base) = match (file, preset) {
                    (Some(f), _) => {
                        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
                        let s: Scenario = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?;
                        (s, None)
                    }
                    (None, Some(p)) => {
                        let entry = xlog::find_preset_entry(&p)?;
                        if fixed && !entry.is_bug() {
                            return Err(format!("--fixed: preset '{p}' is not a bug-zoo preset"));
                        }
                        (if fixed { entry.fixed() } else { entry.scenario() }, Some(p))
                    }
                    (None, None) => return Err("url encode: give --preset NAME or a scenario FILE".into()),
                };
                apply_sets(&mut s, &set)?;
                s.validate()?;
                let mut extra: Vec<(&str, String)> = Vec::new();
                if let Some(at) = &at {
                    extra.push(("at", at.clone()));
                }
                for kv in &keys {
                    let (k, v) = kv.split_once('=').ok_or_else(|| format!("--key '{kv}' is not KEY=VALUE"))?;
                    extra.push((k.trim(), v.trim().to_string()));
                }
                if stamp {
                    let query = xlog::url::encode_with(&s, base.as_deref(), &extra)?;
                    let h = xlog::link_moment_hash(&xlog::url::decode(&query)?)?;
                    extra.retain(|(k, _)| !["v", "m", "h"].contains(k));
                    extra.extend([
                        ("v", xlog::url::LINK_VERSION.to_string()),
                        ("m", xlog::MODEL_VERSION.to_string()),
                        ("h", h),
                    ]);
                }
                println!("{LAB_ORIGIN}{}", xlog::url::encode_with(&s, base.as_deref(), &extra)?);
                Ok(())
            }
            UrlCmd::Decode { url } => {
                let d = xlog::url::decode(&url)?;
                let mut v = serde_json::to_value(&d.scenario).map_err(|e| e.to_string())?;
                if !d.extra.is_empty() {
                    let extra: serde_json::Map<_, _> = d.extra.into_iter().map(|(k, v)| (k, json!(v))).collect();
                    v = json!({"scenario": v, "link": extra});
                }
                print_json(&v);
                Ok(())
            }
            // Its own exit statuses: main() runs it.
            UrlCmd::Check { .. } => Ok(()),
        },
        // main() runs it, for its own exit statuses.
        Cmd::Recover(_) => Ok(()),
        Cmd::ExportImage(a) => export_cmd::image(&a),
        Cmd::ExportLogwrites(a) => export_cmd::logwrites(&a),
        Cmd::Bench { json, events_only, busy } => {
            if busy {
                bench::busy(json)
            } else {
                bench::run(json, events_only)
            }
        }
        Cmd::Kernel(k) => kernel::dispatch(k),
    }
}
