//! A sweep: the scenario over a grid of settings, every combination of the varied keys'
//! values, the first key outermost. The CLI (`loglab sweep`) and the lab's sweep panel both
//! build their grid here, run each cell here and print its row here, so a lab row and a CLI
//! row are the same scenario and the same JSON.

use crate::metrics::Metrics;
use crate::scenario::Scenario;
use crate::sim::Sim;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// The metrics a sweep's table shows unless told otherwise (`loglab sweep --columns`, the
/// lab's sweep table).
pub const DEFAULT_COLUMNS: &[&str] = &[
    "tx_per_sec",
    "latency_ms_p50",
    "latency_ms_p99",
    "latency_ms_p995",
    "grant_head_waits",
    "cil_throttle_waits",
    "cache_flushes",
];

/// The values of a varied key, from `V1,V2,...` (blanks dropped).
pub fn values(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string).collect()
}

/// One varied key and its values, from `KEY=V1,V2,...` (`--vary`).
pub fn parse_vary(text: &str) -> Result<(String, Vec<String>), String> {
    let (k, vals) = text.split_once('=').ok_or_else(|| format!("--vary '{text}' is not KEY=V1,V2,..."))?;
    let vals = values(vals);
    if vals.is_empty() {
        return Err(format!("--vary '{text}': no values"));
    }
    Ok((k.trim().to_string(), vals))
}

/// Every combination, the first key outermost; each cell the (key, value) pairs in order.
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

/// Each cell's scenario: `base` with the cell's settings, every one validated before any
/// runs (a bad value names its key and value).
pub fn cell_scenarios(base: &Scenario, cells: &[Vec<(String, String)>]) -> Result<Vec<Scenario>, String> {
    cells.iter().map(|cell| base.with_settings(cell.iter().map(|(k, v)| (k.as_str(), v.as_str())))).collect()
}

/// A number in a sweep's table: whole numbers without decimals, others with two. A latency of
/// a run where no operation completed says so, rather than a 0 that reads as instant.
pub fn cell_text(column: &str, value: f64, transactions: u64) -> String {
    if column.starts_with("latency_") && transactions == 0 {
        "none completed".into()
    } else if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// One cell run to the end: its metrics.
pub fn run_cell(scenario: &Scenario) -> Result<Metrics, String> {
    let mut sim = Sim::new(scenario)?;
    sim.run();
    Ok(sim.metrics())
}

/// A row as `loglab sweep --json` and the lab's JSON and CSV downloads print it: the cell's
/// settings, then every metric (both front ends print it through `serde_json::Value`, which
/// sorts the keys; the CSV puts the settings first).
#[derive(serde::Serialize)]
pub struct SweepRow<'a> {
    #[serde(flatten)]
    cell: Cell<'a>,
    #[serde(flatten)]
    metrics: &'a Metrics,
}

impl<'a> SweepRow<'a> {
    pub fn new(cell: &'a [(String, String)], metrics: &'a Metrics) -> SweepRow<'a> {
        SweepRow { cell: Cell(cell), metrics }
    }
}

/// The settings in their order.
struct Cell<'a>(&'a [(String, String)]);

impl Serialize for Cell<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
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
        assert_eq!(parse_vary("writers= 2, 4 ,"), Ok(("writers".into(), vec!["2".into(), "4".into()])));
        assert!(parse_vary("writers").unwrap_err().contains("is not KEY=V1,V2"));
        assert!(parse_vary("writers=,").unwrap_err().contains("no values"));
        assert_eq!(cell_text("latency_ms_p50", 0.0, 0), "none completed");
        assert_eq!(cell_text("tx_per_sec", 0.0, 0), "0");
        assert_eq!(cell_text("latency_ms_p50", 1.25, 12), "1.25");
        assert_eq!(cell_text("tx_per_sec", 1605.0, 12), "1605");
        let cells = grid(&[v("writers", &["2", "lots"])]);
        assert!(cell_scenarios(&Scenario::default(), &cells).unwrap_err().contains("'lots'"));
    }

    #[test]
    fn a_row_is_the_cell_in_order_then_every_metric() {
        let cell = vec![("writers".to_string(), "2".to_string()), ("flush".to_string(), "legacy".to_string())];
        let s = cell_scenarios(&crate::presets::find("small-crash").unwrap(), std::slice::from_ref(&cell)).unwrap();
        let m = run_cell(&s[0]).unwrap();
        let row = serde_json::to_string(&SweepRow::new(&cell, &m)).unwrap();
        let metrics = serde_json::to_string(&m).unwrap();
        assert_eq!(row, format!("{{\"writers\":\"2\",\"flush\":\"legacy\",{}", &metrics[1..]));
        assert_eq!(m.transactions, run_cell(&s[0]).unwrap().transactions, "a cell's run is deterministic");
    }
}
