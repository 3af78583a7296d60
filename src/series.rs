//! Time series for the plots: one sample per published frame, kept in a bounded ring (older
//! samples are thinned, not dropped, so a plot always spans the whole run), and decimated to
//! about two points per pixel column for drawing.

use std::collections::VecDeque;
use xlog::{Metrics, Ns, View};

/// What a plot can show, with its label and unit.
pub const PLOTS: &[(&str, &str)] = &[
    ("tx/s", "transactions per second"),
    ("latency p99 (ms)", "99th percentile transaction latency, ms"),
    ("grant waits", "reservations that slept on a grant head (cumulative)"),
    ("throttle depth", "tasks on xc_push_wait"),
    ("noiclogs", "times a writer found no ACTIVE iclog (cumulative)"),
    ("flushes per checkpoint", "cache flushes per completed checkpoint"),
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub t_ns: Ns,
    pub values: [f64; 6],
}

const CAP: usize = 4000;

#[derive(Debug, Default)]
pub struct Series {
    samples: VecDeque<Sample>,
    last_tx: Option<(Ns, u64)>,
}

impl Series {
    /// Adds the state after a frame (nothing if virtual time has not moved).
    pub fn push(&mut self, view: &View, m: &Metrics) {
        if self.samples.back().is_some_and(|s| s.t_ns >= view.now_ns) {
            return;
        }
        let tx_rate = match self.last_tx {
            Some((t, n)) if view.now_ns > t => (view.transactions - n) as f64 / ((view.now_ns - t) as f64 / 1e9),
            _ => 0.0,
        };
        self.last_tx = Some((view.now_ns, view.transactions));
        let values = [
            tx_rate,
            m.latency_ms_p99,
            m.grant_head_waits as f64,
            view.cil_throttle_depth as f64,
            m.noiclog_events as f64,
            m.cache_flushes_per_checkpoint,
        ];
        if self.samples.len() == CAP {
            // Thin the older half: every other sample goes, the newest half stays dense.
            let keep: VecDeque<Sample> =
                self.samples.iter().enumerate().filter(|(i, _)| *i >= CAP / 2 || i % 2 == 0).map(|(_, s)| *s).collect();
            self.samples = keep;
        }
        self.samples.push_back(Sample { t_ns: view.now_ns, values });
    }

    /// (time in ms, value) of plot `k`.
    pub fn points(&self, k: usize) -> Vec<(f64, f64)> {
        self.samples.iter().map(|s| (s.t_ns as f64 / 1e6, s.values[k])).collect()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.samples.len()
    }
}

/// About two points per pixel column: each column keeps its lowest and highest value (in
/// time order), so spikes survive.
pub fn decimate(points: &[(f64, f64)], columns: usize) -> Vec<(f64, f64)> {
    if points.len() <= 2 * columns.max(1) {
        return points.to_vec();
    }
    let (x0, x1) = (points[0].0, points[points.len() - 1].0);
    let width = (x1 - x0).max(f64::MIN_POSITIVE);
    let mut out = Vec::with_capacity(2 * columns);
    let mut i = 0;
    while i < points.len() {
        let col = (((points[i].0 - x0) / width) * columns as f64).floor().min(columns as f64 - 1.0);
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < points.len()
            && (((points[j].0 - x0) / width) * columns as f64).floor().min(columns as f64 - 1.0) == col
        {
            if points[j].1 < points[lo].1 {
                lo = j;
            }
            if points[j].1 > points[hi].1 {
                hi = j;
            }
            j += 1;
        }
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        out.push(points[a]);
        if b != a {
            out.push(points[b]);
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_two_points_per_column_and_the_spikes() {
        let mut pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, (i % 7) as f64)).collect();
        pts[5_000].1 = 1_000.0;
        let d = decimate(&pts, 100);
        assert!(d.len() <= 200, "{}", d.len());
        assert!(d.iter().any(|p| p.1 == 1_000.0), "the spike survives");
        assert!(d.windows(2).all(|w| w[0].0 <= w[1].0), "time order kept");
        assert_eq!(decimate(&pts[..50], 100).len(), 50, "short series are drawn as they are");
    }

    #[test]
    fn the_ring_thins_old_samples_and_spans_the_whole_run() {
        let s = xlog::find_preset("small-crash").unwrap();
        let mut sim = xlog::Sim::new(&s).unwrap();
        let mut series = Series::default();
        for k in 1..=(CAP as u64 + 500) {
            sim.run_until(k * 100);
            series.push(&sim.view(), &sim.metrics());
        }
        assert!(series.len() <= CAP);
        let pts = series.points(0);
        assert!(pts[0].0 < 0.001, "the first sample is still there");
        assert!(pts.last().unwrap().0 > 0.4);
    }
}
