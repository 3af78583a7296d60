//! The crash explorer's share of work that a Web Worker runs: the same wasm module, loaded in
//! the worker, explores the crash points it is given and answers with one result per point.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;

/// What the page sends a worker.
#[derive(Deserialize, Serialize)]
pub struct Job {
    pub scenario: xlog::Scenario,
    /// Event counts to crash after, ascending.
    pub events: Vec<u64>,
    pub budget: u32,
}

/// One crash point's result, as the heat map needs it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct PointResult {
    pub event: u64,
    pub t_ns: u64,
    pub states: u64,
    pub duplicates: u64,
    /// Invariant name -> states violating it.
    pub violations: BTreeMap<String, u64>,
}

impl PointResult {
    pub fn violated(&self) -> u64 {
        self.violations.values().sum()
    }
}

/// `{"error": "…"}`, the answer of a job that failed.
pub fn error_json(e: &str) -> String {
    format!(r#"{{"error":{}}}"#, serde_json::to_string(e).unwrap_or_else(|_| "\"?\"".into()))
}

/// Runs a job (JSON `Job`); answers JSON `[PointResult]`, or `{"error": …}`.
#[wasm_bindgen]
pub fn loglab_crash_points(job: &str) -> String {
    let run = || -> Result<Vec<PointResult>, String> {
        let job: Job = serde_json::from_str(job).map_err(|e| format!("crash job: {e}"))?;
        job.scenario.validate()?;
        let points = xlog::explore_crash_events(&job.scenario, &job.events, job.budget)?;
        Ok(points
            .into_iter()
            .map(|p| PointResult {
                event: p.event,
                t_ns: p.t_ns,
                states: p.report.crash_states,
                duplicates: p.report.duplicates,
                violations: p.report.violations.iter().map(|(k, &v)| (k.as_str().to_string(), v)).collect(),
            })
            .collect())
    };
    match run() {
        Ok(v) => serde_json::to_string(&v).unwrap_or_else(|e| error_json(&e.to_string())),
        Err(e) => error_json(&e),
    }
}
