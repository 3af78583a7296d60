//! A device measured as a whole: latencies drawn from measured distributions, host stalls,
//! and a loop device's sparse backing file.

use super::media::{Measured, Media, Stalls};
use super::Device;
use crate::units::Ns;
use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;
use std::collections::{BTreeMap, VecDeque};

/// How long past a metadata writeback the stall rate stays at its busy value.
const WRITEBACK_TAIL_NS: Ns = 50_000_000;

/// A draw from a measured distribution given as (cumulative probability per million, value)
/// points: its inverse distribution function, linear between the points.
fn draw(points: &[(u32, Ns)], rng: &mut Pcg64Mcg) -> Ns {
    if points.len() < 2 {
        return 0;
    }
    let u = (rng.next_u64() % 1_000_000) as u32;
    let i = points.partition_point(|&(p, _)| p <= u).clamp(1, points.len() - 1);
    let ((p0, l0), (p1, l1)) = (points[i - 1], points[i]);
    l0 + l1.saturating_sub(l0) * u64::from(u.saturating_sub(p0)) / u64::from((p1 - p0).max(1))
}

/// The host under a measured device: its stall windows drawn so far that have not ended
/// before the last request started, where the next one is drawn from, until when the stall
/// rate is the busy one (metadata writeback in flight or just done); and a sparse-file
/// device's blocks written so far, as sector ranges (start -> end), and whether a write
/// since the last flush allocated new ones.
#[derive(Clone, Debug, Default)]
pub(super) struct HostState {
    stall_windows: VecDeque<(Ns, Ns)>,
    stalls_drawn_to: Ns,
    writeback_until: Ns,
    backed: BTreeMap<u64, u64>,
    allocated_since_flush: bool,
}

impl Device {
    /// Sectors a sparse-file device's file already holds (mkfs wrote them): writes there
    /// allocate nothing.
    pub fn mark_backed(&mut self, sector: u64, sectors: u64) {
        if self.sparse_backed() && sectors > 0 {
            self.back(sector, sector + sectors);
        }
    }

    /// The next write grows the sparse file under the device wherever it lands (an append
    /// the model writes over its file's one address).
    pub fn note_allocating_write(&mut self) {
        self.host.allocated_since_flush |= self.sparse_backed();
    }

    /// A write of `sectors` at `sector`: on a sparse-file device, it allocates what the file
    /// did not hold.
    pub(super) fn note_backing(&mut self, sector: u64, sectors: u64) {
        if self.sparse_backed() && self.back(sector, sector + sectors) {
            self.host.allocated_since_flush = true;
        }
    }

    /// A device over a sparse file, whose flushes cost more after writes that grew it.
    fn sparse_backed(&self) -> bool {
        self.profile.measured().is_some_and(|m| m.flush_latency_allocating.is_some())
    }

    /// Adds [start, end) to the backed ranges; true when some of it was not backed before.
    fn back(&mut self, start: u64, end: u64) -> bool {
        let backed = &mut self.host.backed;
        let covered = backed.range(..=start).next_back().is_some_and(|(_, &e)| e >= end);
        if covered {
            return false;
        }
        let (mut lo, mut hi) = (start, end);
        let touching: Vec<(u64, u64)> =
            backed.range(..=end).rev().take_while(|(_, &e)| e >= start).map(|(&s, &e)| (s, e)).collect();
        for (s, e) in touching {
            backed.remove(&s);
            (lo, hi) = (lo.min(s), hi.max(e));
        }
        backed.insert(lo, hi);
        true
    }

    /// A measured write's latency.
    pub(super) fn measured_write_ns(&mut self, m: &Measured) -> Ns {
        draw(m.write_latency, &mut self.rng)
    }

    /// A measured flush's latency: after writes that grew a sparse backing file, from the
    /// allocating distribution (only a sparse-backed device ever notes one).
    /// With `host_flush=inflight`, the tables of a flush with nothing in flight (it first
    /// waits for the requests in flight: `flush_drain`).
    pub(super) fn measured_flush_ns(&mut self, m: &Measured) -> Ns {
        let allocated = std::mem::take(&mut self.host.allocated_since_flush);
        let (plain, allocating) = match m.flush_idle {
            Some((plain, allocating)) => (plain, Some(allocating)),
            None => (m.flush_latency, m.flush_latency_allocating),
        };
        let table = match allocating {
            Some(allocating) if allocated => allocating,
            _ => plain,
        };
        draw(table, &mut self.rng)
    }

    /// `host_flush=inflight`: how long a flush that starts at `start` first waits for the
    /// requests in flight on the device (the host's flush waits for them), 0 otherwise. Their
    /// completions already hold any host stall, so the flush's own stalls count from its end.
    /// Model: it waits for the last of them, each drawn on its own; many in flight make the wait
    /// longer than the host's (32 writers of 4 KiB: about 1 ms, where the host's flush took 281
    /// us at the median).
    pub(super) fn flush_drain(&self, start: Ns) -> Ns {
        match self.profile.media {
            Media::Measured(m) if m.flush_idle.is_some() => self.last_done().saturating_sub(start),
            _ => 0,
        }
    }

    /// When a request that runs from `start` and would be done at `done` is done: the device
    /// makes no progress during a stall, so every stall it overlaps adds the overlap.
    /// Windows that ended by `over` are dropped: only those over by now may go, as a request
    /// that starts later (held for a flush) must not take a stall still under way from the
    /// view (`stall_state`).
    pub(super) fn after_stalls(&mut self, over: Ns, start: Ns, mut done: Ns) -> Ns {
        let Some(st) = self.stalls() else { return done };
        let h = &mut self.host;
        while h.stall_windows.front().is_some_and(|&(_, end)| end <= over.min(start)) {
            h.stall_windows.pop_front();
        }
        let mut i = 0;
        loop {
            while i == h.stall_windows.len() {
                if h.stalls_drawn_to > done {
                    return done;
                }
                let begin = h.stalls_drawn_to + self.rng.next_u64() % (2 * st.busy_mean_gap_ns + 1);
                // Model: busy or quiet as the writebacks submitted so far say (a window is
                // drawn at most a gap ahead of the request that reaches it).
                let busy = begin <= h.writeback_until;
                let keep = busy || self.rng.next_u64() % st.quiet_mean_gap_ns.max(1) < st.busy_mean_gap_ns;
                if !keep {
                    h.stalls_drawn_to = begin;
                    continue;
                }
                let lengths = if busy { st.busy_lengths } else { st.quiet_lengths };
                let end = begin + draw(lengths, &mut self.rng).max(1);
                h.stall_windows.push_back((begin, end));
                h.stalls_drawn_to = end;
            }
            let (begin, end) = h.stall_windows[i];
            if begin >= done {
                return done;
            }
            if end > start {
                done += end - begin.max(start);
            }
            i += 1;
        }
    }

    fn stalls(&self) -> Option<Stalls> {
        self.profile.measured().and_then(|m| m.stalls)
    }

    /// A device with host stalls, as of `now`: how much longer a stall under way holds the
    /// requests in flight (None when none is), and whether the busy (writeback) rate applies.
    pub fn stall_state(&self, now: Ns) -> Option<(Option<Ns>, bool)> {
        self.stalls()?;
        let h = &self.host;
        let left = h.stall_windows.iter().find(|&&(b, e)| b <= now && now < e).map(|&(_, e)| e - now);
        Some((left, now <= h.writeback_until))
    }

    /// A metadata writeback done at `done` was submitted: a device with stalls stalls at
    /// its busy rate until `WRITEBACK_TAIL_NS` after it.
    pub fn note_writeback(&mut self, done: Ns) {
        self.host.writeback_until = self.host.writeback_until.max(done + WRITEBACK_TAIL_NS);
    }
}
