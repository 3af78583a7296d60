//! `loglab merge`: the shards' JSON (`crash --shard`, `sweep --shard`) combined into exactly
//! what the unsharded run prints with `--json`.

use clap::Args;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use xlog::{PointDone, Shard};

#[derive(Args)]
pub struct MergeArgs {
    /// The shards' JSON files (`-` reads one from standard input), in any order: every shard
    /// K/N of one exploration, each once.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

struct Part {
    name: String,
    kind: String,
    shard: Shard,
    exploration: Value,
    doc: Value,
}

fn read(path: &PathBuf) -> Result<Part, String> {
    let name = path.display().to_string();
    let text = if name == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| format!("standard input: {e}"))?
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?
    };
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{name}: not JSON ({e})"))?;
    let head = &doc["loglab_shard"];
    let kind = head["kind"].as_str().unwrap_or_default().to_string();
    if !head.is_object() || !["crash", "sweep"].contains(&kind.as_str()) {
        return Err(format!(
            "{name}: not a shard's output (made by `loglab crash --shard K/N` or `loglab sweep --shard K/N`)"
        ));
    }
    let shard = Shard::parse(head["shard"].as_str().unwrap_or_default()).map_err(|e| format!("{name}: {e}"))?;
    Ok(Part { name, kind, shard, exploration: head["exploration"].clone(), doc })
}

pub fn run(a: &MergeArgs) -> Result<(), String> {
    let parts = a.files.iter().map(read).collect::<Result<Vec<_>, String>>()?;
    let first = &parts[0];
    let n = first.shard.n();
    let mut seen: BTreeMap<u32, &str> = BTreeMap::new();
    for p in &parts {
        if p.kind != first.kind
            || p.exploration != first.exploration
            || p.doc["loglab_shard"]["no_timing"] != first.doc["loglab_shard"]["no_timing"]
        {
            return Err(format!(
                "{} and {} are shards of different explorations ({} {} against {} {})",
                first.name, p.name, first.kind, first.exploration, p.kind, p.exploration
            ));
        }
        if p.shard.n() != n {
            return Err(format!(
                "{} is shard {} but {} is shard {}: one N for all",
                first.name, first.shard, p.name, p.shard
            ));
        }
        if let Some(other) = seen.insert(p.shard.k(), &p.name) {
            return Err(format!("shard {} is given twice ({other} and {})", p.shard, p.name));
        }
    }
    let missing: Vec<String> = (1..=n).filter(|k| !seen.contains_key(k)).map(|k| format!("{k}/{n}")).collect();
    if !missing.is_empty() {
        let more = if missing.len() > 10 { format!(" and {} more", missing.len() - 10) } else { String::new() };
        return Err(format!("missing shards: {}{more}", missing[..missing.len().min(10)].join(", ")));
    }
    let v = match first.kind.as_str() {
        "crash" => merge_crash(&parts)?,
        _ => merge_sweep(&parts)?,
    };
    crate::print_json(&v);
    Ok(())
}

fn merge_crash(parts: &[Part]) -> Result<Value, String> {
    let mut points = Vec::new();
    let mut secs = Some(0.0);
    for p in parts {
        let mine: Vec<PointDone> = serde_json::from_value(p.doc["points"].clone())
            .map_err(|e| format!("{}: its crash points do not read ({e})", p.name))?;
        points.extend(mine);
        secs = secs.zip(p.doc["seconds"].as_f64()).map(|(a, b)| a + b);
    }
    let report = xlog::merge_crash_points(points)?;
    let id = &parts[0].exploration;
    let per_point = id["states_per_point"].as_u64().unwrap_or(0) as u32;
    // The rate over every shard's own time: states per second of one process.
    let rate = secs.map(|s| report.crash_states as f64 / f64::max(s, 1e-9));
    let d = &parts[0].doc;
    let base = id["url"].as_str().unwrap_or_default();
    Ok(crate::crash_cmd::report_json(&report, rate, &d["hung"], &d["reservation_overruns"], base, per_point))
}

fn merge_sweep(parts: &[Part]) -> Result<Value, String> {
    let cells = parts[0].doc["loglab_shard"]["cells"].as_u64().unwrap_or(0) as usize;
    let mut rows: Vec<Option<Value>> = vec![None; cells];
    for p in parts {
        for r in p.doc["rows"].as_array().into_iter().flatten() {
            let i = r["cell"].as_u64().map(|i| i as usize).filter(|&i| i < cells && p.shard.owns(i as u64));
            let Some(i) = i else {
                return Err(format!("{}: cell {} is not shard {}'s", p.name, r["cell"], p.shard));
            };
            if rows[i].replace(r["row"].clone()).is_some() {
                return Err(format!("{}: cell {i} is given twice", p.name));
            }
        }
    }
    if let Some(i) = rows.iter().position(Option::is_none) {
        return Err(format!("cell {i} of {cells} is in no shard's output"));
    }
    Ok(json!(rows.into_iter().flatten().collect::<Vec<_>>()))
}
