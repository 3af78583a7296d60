//! One run of a sweep, as a Web Worker runs it: a cell in, its row out (the row `loglab sweep
//! --json` prints for it, from the same core code).

use wasm_bindgen::prelude::*;

/// A cell of the grid: its settings, in the grid's order, and the scenario they make.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct SweepJob {
    pub cell: Vec<(String, String)>,
    pub scenario: xlog::Scenario,
}

/// Runs a cell (a `SweepJob` as JSON) to the end; answers its row as JSON, or `{"error": …}`.
#[wasm_bindgen]
pub fn loglab_sweep_run(job: &str) -> String {
    let run = || -> Result<String, String> {
        let j: SweepJob = serde_json::from_str(job).map_err(|e| format!("sweep run: {e}"))?;
        j.scenario.validate()?;
        let m = xlog::sweep::run_cell(&j.scenario)?;
        serde_json::to_string(&xlog::sweep::SweepRow::new(&j.cell, &m)).map_err(|e| e.to_string())
    };
    run().unwrap_or_else(|e| crate::crash_job::error_json(&e))
}
