//! Time travel: snapshots of the simulation (`Sim` is plain data and clones share device
//! pages) taken as the run goes on, in bounded memory. Seeking restores the nearest earlier
//! snapshot and runs forward, so it lands on the state a straight run reaches.

use std::collections::BTreeMap;
use xlog::{Ns, Sim};

/// Events between snapshots at first; thinning doubles it.
const FIRST_EVERY: u64 = 20_000;
/// At most this many snapshots, and about this much memory in them.
const MAX_KEYFRAMES: usize = 32;
const MAX_BYTES: u64 = 192 << 20;

pub struct Keyframes {
    frames: Vec<Sim>,
    every: u64,
    /// Device page buffers the snapshots hold, by address: how many hold each, and its size.
    /// A page the run rewrote since a snapshot is that snapshot's alone (a log cycle's worth
    /// soon).
    pages: BTreeMap<usize, (u32, usize)>,
    page_bytes: u64,
    /// What the snapshots hold besides those pages (`Sim::approx_clone_bytes`).
    other_bytes: u64,
}

impl Keyframes {
    /// Starts from the simulation as the page opened it.
    pub fn new(first: &Sim) -> Keyframes {
        let mut k =
            Keyframes { frames: Vec::new(), every: FIRST_EVERY, pages: BTreeMap::new(), page_bytes: 0, other_bytes: 0 };
        k.push(first.clone());
        k
    }

    fn push(&mut self, sim: Sim) {
        for (a, n) in sim.device_page_buffers() {
            let e = self.pages.entry(a).or_insert((0, n));
            if e.0 == 0 {
                self.page_bytes += n as u64;
            }
            e.0 += 1;
        }
        self.other_bytes += sim.approx_clone_bytes();
        self.frames.push(sim);
    }

    fn forget(&mut self, sim: &Sim) {
        for (a, _) in sim.device_page_buffers() {
            if let Some(e) = self.pages.get_mut(&a) {
                e.0 -= 1;
                if e.0 == 0 {
                    self.page_bytes -= e.1 as u64;
                    self.pages.remove(&a);
                }
            }
        }
        self.other_bytes -= sim.approx_clone_bytes();
    }

    /// Memory the snapshots hold: distinct page buffers plus the rest of each.
    pub fn bytes(&self) -> u64 {
        self.page_bytes + self.other_bytes
    }

    /// Takes a snapshot of `sim` if it has run `every` events past the last one.
    pub fn offer(&mut self, sim: &Sim) {
        let last = self.frames.last().map_or(0, |f| f.events());
        if sim.events() < last + self.every {
            return;
        }
        self.push(sim.clone());
        while self.frames.len() > MAX_KEYFRAMES || (self.frames.len() > 2 && self.bytes() > MAX_BYTES) {
            // Keep the first and every other one after it: snapshots thin out evenly.
            let frames = std::mem::take(&mut self.frames);
            for (i, f) in frames.into_iter().enumerate() {
                if i == 0 || i % 2 == 1 {
                    self.frames.push(f);
                } else {
                    self.forget(&f);
                }
            }
            self.every *= 2;
        }
    }

    /// The simulation at virtual time `t` (not before the first snapshot): the latest snapshot
    /// at or before it, run forward to `t`.
    pub fn seek(&self, t: Ns) -> Sim {
        let i = self.frames.partition_point(|f| f.now() <= t).saturating_sub(1);
        let mut sim = self.frames[i].clone();
        sim.set_keep_trace(false);
        sim.run_until(t);
        // The lab reads each step's events (snapshots taken while opening a link kept none).
        sim.set_keep_trace(true);
        sim
    }

    /// The earliest time a seek can reach.
    pub fn start(&self) -> Ns {
        self.frames[0].now()
    }

    /// Snapshots held (for tests and the page's data attributes).
    pub fn count(&self) -> usize {
        self.frames.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xlog::{find_preset, NS_PER_MS};

    #[test]
    fn seeking_back_lands_on_the_straight_run() {
        let s = find_preset("small-crash").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        let mut k = Keyframes::new(&sim);
        k.every = 200;
        for ms in 1..=40 {
            sim.run_until(ms * NS_PER_MS);
            k.offer(&sim);
        }
        assert!(k.count() > 1, "snapshots were taken");
        for t in [0, 3 * NS_PER_MS + 17, 25 * NS_PER_MS, 40 * NS_PER_MS] {
            let back = k.seek(t);
            let mut straight = Sim::new(&s).unwrap();
            straight.run_until(t);
            assert_eq!((back.now(), back.events(), back.trace_hash()), (t, straight.events(), straight.trace_hash()));
        }
    }

    /// Opening a link runs to its moment without keeping each step's events; a sim restored
    /// from those snapshots must keep them again (milestones and narration read them).
    #[test]
    fn a_snapshot_taken_without_the_trace_restores_with_it() {
        let s = find_preset("small-crash").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        sim.set_keep_trace(false);
        let mut k = Keyframes::new(&sim);
        k.every = 200;
        for ms in 1..=10 {
            sim.run_until(ms * NS_PER_MS);
            k.offer(&sim);
        }
        let mut back = k.seek(5 * NS_PER_MS);
        assert!((0..100).any(|_| back.step().is_some_and(|evs| !evs.is_empty())), "steps report their events");
    }

    #[test]
    fn snapshots_stay_bounded_by_thinning() {
        let s = find_preset("small-crash").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        let mut k = Keyframes::new(&sim);
        k.every = 50;
        for ms in 1..=200 {
            sim.run_until(ms * NS_PER_MS);
            k.offer(&sim);
        }
        assert!(k.count() <= MAX_KEYFRAMES);
        assert!(k.every > 50, "the interval grew as snapshots thinned");
        // The running count of pages and bytes is what counting afresh gives.
        let distinct: std::collections::BTreeSet<(usize, usize)> =
            k.frames.iter().flat_map(|f| f.device_page_buffers()).collect();
        let other: u64 = k.frames.iter().map(|f| f.approx_clone_bytes()).sum();
        assert_eq!(k.bytes(), distinct.iter().map(|&(_, n)| n as u64).sum::<u64>() + other);
        assert!(k.bytes() > other, "the snapshots hold pages of their own");
        assert!(k.frames.windows(2).all(|w| w[0].now() <= w[1].now()));
    }
}
