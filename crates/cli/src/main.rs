//! `loglab`: the Log Lab journal model on the command line (runs, crash checks, benchmarks).

mod bench;
mod crash_cmd;
mod size_cmd;

use clap::{Args, Parser, Subcommand};
use serde_json::json;
use std::process::ExitCode;
use xlog::{find_preset, parse_duration, Duration, Scenario, Sim, PRESETS, SET_KEYS};

#[derive(Parser)]
#[command(
    name = "loglab",
    version,
    about = "The XFS journal model of Log Lab, on the command line",
    after_help = "Examples:\n  loglab presets\n  loglab run --preset fsync-heavy --set log_size=32MiB --json\n  loglab crash --preset small-crash --crash-points 20 --json\n  loglab bench --json\n  loglab size --fs-size 220GiB --algo all"
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
    },
    /// Crash the scenario at chosen events, recover each allowed disk state and check the invariants.
    Crash {
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// How many crash points, spread evenly over the run.
        #[arg(long, default_value_t = 20)]
        crash_points: u32,
        /// Most crash states explored at each crash point (exhaustive below it, sampled above).
        #[arg(long, default_value_t = 64)]
        states_per_point: u32,
        #[arg(long)]
        json: bool,
    },
    /// Size the internal log as mkfs.xfs does (pre-2022, seed patch, xfsprogs 6.1), with the steps taken.
    Size(size_cmd::SizeArgs),
    /// Measure simulator throughput: events/s and crash states/s.
    Bench {
        #[arg(long)]
        json: bool,
    },
}

/// Where a scenario comes from, plus `--set` overrides.
#[derive(Args)]
pub struct ScenarioArgs {
    /// A named preset (see `loglab presets`).
    #[arg(long, conflicts_with = "scenario")]
    preset: Option<String>,
    /// A scenario file (JSON with the `--set` keys).
    #[arg(long)]
    scenario: Option<std::path::PathBuf>,
    /// Override one key, e.g. --set log_size=32MiB (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Simulated duration, e.g. 10s or 500ms (same as --set duration=...).
    #[arg(long)]
    duration: Option<String>,
    /// For a bug-zoo preset: run the fixed variant instead of the historic bug.
    #[arg(long, requires = "preset")]
    fixed: bool,
}

impl ScenarioArgs {
    pub fn load(&self) -> Result<Scenario, String> {
        let mut s = match (&self.preset, &self.scenario) {
            (Some(p), _) => {
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
            (None, Some(f)) => {
                let text = std::fs::read_to_string(f).map_err(|e| format!("--scenario {}: {e}", f.display()))?;
                serde_json::from_str(&text).map_err(|e| format!("--scenario {}: {e}", f.display()))?
            }
            (None, None) => find_preset(xlog::DEFAULT_PRESET)?,
        };
        for kv in &self.set {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("--set '{kv}' is not KEY=VALUE (keys: {})", SET_KEYS.join(", ")))?;
            s.set(k.trim(), v.trim())?;
        }
        if let Some(d) = &self.duration {
            s.duration = Duration(parse_duration("duration", d)?);
        }
        s.validate()?;
        Ok(s)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.cmd) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loglab: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn print_json(v: &serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(v).expect("JSON values serialize"));
}

fn dispatch(cmd: Cmd) -> Result<(), String> {
    match cmd {
        Cmd::Presets { json } => {
            if json {
                let v: Vec<_> = PRESETS.iter().map(|p| json!({"name": p.name, "about": p.about})).collect();
                print_json(&json!(v));
            } else {
                for p in PRESETS {
                    println!("{:<24} {}", p.name, p.about);
                }
            }
            Ok(())
        }
        Cmd::Run { scenario, json } => {
            let s = scenario.load()?;
            let mut sim = Sim::new(&s)?;
            sim.run();
            let m = sim.metrics();
            if json {
                print_json(&serde_json::to_value(&m).map_err(|e| e.to_string())?);
            } else {
                let v = serde_json::to_value(&m).map_err(|e| e.to_string())?;
                for (k, val) in v.as_object().expect("metrics are an object") {
                    println!("{k:<24} {val}");
                }
                println!("reproduce with: loglab run --preset ... --set seed={}", s.seed);
            }
            Ok(())
        }
        Cmd::Crash { scenario, crash_points, states_per_point, json } => {
            crash_cmd::run(&scenario.load()?, crash_points, states_per_point, json)
        }
        Cmd::Size(a) => size_cmd::run(&a),
        Cmd::Bench { json } => bench::run(json),
    }
}
