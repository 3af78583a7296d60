//! A sweep: the scenario over a grid of settings, every combination of the varied keys'
//! values, the first key outermost. The CLI (`loglab sweep`) and the lab's sweep panel both
//! build their grid here, so a lab row and a CLI row are the same scenario.

use crate::scenario::Scenario;

/// One varied key and its values, from `KEY=V1,V2,...` (`--vary`).
pub fn parse_vary(text: &str) -> Result<(String, Vec<String>), String> {
    let (k, vals) = text.split_once('=').ok_or_else(|| format!("--vary '{text}' is not KEY=V1,V2,..."))?;
    let vals: Vec<String> = vals.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string).collect();
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
        let cells = grid(&[v("writers", &["2", "lots"])]);
        assert!(cell_scenarios(&Scenario::default(), &cells).unwrap_err().contains("'lots'"));
    }
}
