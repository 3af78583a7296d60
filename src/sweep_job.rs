//! One run of a sweep, as a Web Worker runs it: a scenario in, its metrics out (the numbers
//! `loglab sweep --json` prints for that row).

use wasm_bindgen::prelude::*;

/// Runs a scenario (JSON) to the end; answers its metrics as JSON, or `{"error": …}`.
#[wasm_bindgen]
pub fn loglab_sweep_run(scenario: &str) -> String {
    let run = || -> Result<String, String> {
        let s: xlog::Scenario = serde_json::from_str(scenario).map_err(|e| format!("sweep run: {e}"))?;
        s.validate()?;
        let mut sim = xlog::Sim::new(&s)?;
        sim.run();
        serde_json::to_string(&sim.metrics()).map_err(|e| e.to_string())
    };
    run().unwrap_or_else(|e| crate::crash_job::error_json(&e))
}
