//! `loglab sweep`: a grid of runs in parallel on all cores, one row per run.

use crate::progress::Progress;
use crate::ScenarioArgs;
use clap::Args;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use xlog::sweep::SweepRow;
use xlog::Shard;

#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// A key and the values it takes, e.g. --vary log_size=10MiB,20MiB (repeatable: the grid
    /// is every combination).
    #[arg(long = "vary", value_name = "KEY=V1,V2,...", required = true)]
    pub vary: Vec<String>,
    /// Parallel runs (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Metrics shown as table columns (JSON output always has all of them).
    #[arg(long, value_delimiter = ',', default_values = xlog::sweep::DEFAULT_COLUMNS)]
    pub columns: Vec<String>,
    #[arg(long)]
    pub json: bool,
    /// Run only shard K of N (K from 1): grid cell i is shard (i mod N) + 1's. Prints the
    /// shard's JSON for `loglab merge`, which gives the whole sweep's `--json`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
}

pub fn run(a: &SweepArgs) -> Result<(), String> {
    let (base, link) = a.scenario.load_with_link()?;
    let vary = a.vary.iter().map(|v| xlog::sweep::parse_vary(v)).collect::<Result<Vec<_>, String>>()?;
    let rows = xlog::sweep::grid(&vary);
    // Validate every point before spending time on any of them.
    let scenarios = xlog::sweep::cell_scenarios(&base, &rows)?;
    if let Some(0) = a.jobs {
        return Err("--jobs: 0 is out of range (at least 1)".into());
    }
    let pool =
        rayon::ThreadPoolBuilder::new().num_threads(a.jobs.unwrap_or(0)).build().map_err(|e| format!("--jobs: {e}"))?;
    let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
    let mine: Vec<usize> = (0..scenarios.len()).filter(|&i| shard.unwrap_or(Shard::ALL).owns(i as u64)).collect();
    let bar = Progress::new(shard.unwrap_or(Shard::ALL), "runs", shard.is_some());
    let finished = AtomicU64::new(0);
    let results: Vec<Result<Value, String>> = pool.install(|| {
        mine.par_iter()
            .map(|&i| {
                let m = xlog::sweep::run_cell(&scenarios[i])?;
                let row = serde_json::to_value(SweepRow::new(&rows[i], &m)).map_err(|e| e.to_string());
                bar.set(finished.fetch_add(1, Ordering::Relaxed) + 1, mine.len() as u64);
                row
            })
            .collect()
    });
    bar.finish();
    let out = results.into_iter().collect::<Result<Vec<Value>, String>>()?;
    if let Some(shard) = shard {
        let doc = json!({
            "loglab_shard": {
                "kind": "sweep",
                "shard": shard.to_string(),
                "exploration": {"url": a.scenario.link_of(&base, link.as_ref()), "vary": a.vary},
                "cells": scenarios.len(),
            },
            "rows": mine.iter().zip(&out).map(|(i, r)| json!({"cell": i, "row": r})).collect::<Vec<_>>(),
        });
        crate::print_json(&doc);
        return Ok(());
    }
    if a.json {
        crate::print_json(&Value::Array(out));
        return Ok(());
    }
    let keys: Vec<String> = rows[0].iter().map(|(k, _)| k.clone()).chain(a.columns.iter().cloned()).collect();
    if let Some(bad) = a.columns.iter().find(|c| out[0].get(c.as_str()).is_none()) {
        return Err(format!("--columns: '{bad}' is not a metric"));
    }
    let cell = |o: &Value, k: &str| match &o[k] {
        Value::String(s) => s.clone(),
        Value::Number(n) => {
            xlog::sweep::cell_text(k, n.as_f64().unwrap_or(0.0), o["transactions"].as_u64().unwrap_or(0))
        }
        other => other.to_string(),
    };
    let table: Vec<Vec<String>> = out.iter().map(|o| keys.iter().map(|k| cell(o, k)).collect()).collect();
    let widths: Vec<usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| table.iter().map(|r| r[i].len()).chain([k.len()]).max().unwrap_or(0))
        .collect();
    let line =
        |cells: &[String]| cells.iter().zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect::<Vec<_>>().join("  ");
    println!("{}", line(&keys));
    for r in &table {
        println!("{}", line(r));
    }
    Ok(())
}
