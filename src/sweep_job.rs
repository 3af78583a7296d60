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

/// The grid `loglab sweep` runs: every combination of the varied keys' values, the first key
/// outermost; each row the (key, value) pairs in order.
pub fn grid(vary: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut rows: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (k, vals) in vary {
        rows = rows
            .into_iter()
            .flat_map(|r| {
                vals.iter().map(move |v| {
                    let mut r = r.clone();
                    r.push((k.clone(), v.clone()));
                    r
                })
            })
            .collect();
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_every_combination_first_key_outermost() {
        let v = |k: &str, xs: &[&str]| (k.to_string(), xs.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        let g = grid(&[v("log_size", &["2MiB", "4MiB"]), v("flush", &["legacy", "upstream"])]);
        let flat: Vec<String> =
            g.iter().map(|r| r.iter().map(|(_, x)| x.as_str()).collect::<Vec<_>>().join("/")).collect();
        assert_eq!(flat, ["2MiB/legacy", "2MiB/upstream", "4MiB/legacy", "4MiB/upstream"]);
        assert_eq!(grid(&[]).len(), 1, "no key: the base scenario alone");
    }
}
