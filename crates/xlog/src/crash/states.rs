//! The crash states at one crash point: which writes may survive, and the fates state `s` gives them.

use crate::device::{IoKind, SECTOR};
use crate::recovery::Fate;
use crate::sim::Sim;
use crate::trace::TraceHasher;
use rand_core::RngCore;
use std::collections::BTreeMap;
use std::hash::Hasher;

/// One write that a crash may or may not keep.
pub(super) struct Choice {
    pub(super) dev: usize,
    pub(super) req_id: u64,
    pub(super) sector: u64,
    pub(super) data: Vec<u8>,
    /// In flight: may also be torn. Cached: kept or lost.
    pub(super) inflight: bool,
    /// In flight with PREFLUSH: cached writes of this device with cseq < mark must survive.
    pub(super) preflush_mark: Option<u64>,
    pub(super) cseq: u64,
}

/// The writes a crash now may keep: cached ones (in completion order per device) first, then
/// the ones in flight. This is the order they apply in, and the slot order of the fates.
pub(super) fn choices(sim: &Sim) -> Vec<Choice> {
    let mut out = Vec::new();
    for (d, dev) in sim.devices().iter().enumerate() {
        for w in dev.cached() {
            out.push(Choice {
                dev: d,
                req_id: w.req_id,
                sector: w.sector,
                data: w.full_data(),
                inflight: false,
                preflush_mark: None,
                cseq: w.cseq,
            });
        }
        for r in dev.inflight() {
            if let IoKind::Write { preflush, .. } = r.kind {
                out.push(Choice {
                    dev: d,
                    req_id: r.id,
                    sector: r.sector,
                    data: r.full_data(),
                    inflight: true,
                    preflush_mark: preflush.then_some(r.flush_mark),
                    cseq: u64::MAX,
                });
            }
        }
    }
    out.sort_by_key(|c| c.inflight);
    out
}

/// Per crash point: the candidate writes and, per device, which sectors they cover.
pub(super) struct Candidates {
    pub(super) writes: Vec<Vec<u8>>,
    pub(super) index: Vec<BTreeMap<u64, Vec<(u32, u32)>>>,
    /// Content hash of each write, for deduplicating states.
    pub(super) hashes: Vec<u64>,
}

pub(super) fn index_choices(ndev: usize, ch: &[Choice]) -> Candidates {
    let mut index = vec![BTreeMap::new(); ndev];
    let mut writes = Vec::with_capacity(ch.len());
    let mut hashes = Vec::with_capacity(ch.len());
    for c in ch {
        let w = writes.len() as u32;
        for k in 0..c.data.len() / SECTOR {
            index[c.dev].entry(c.sector + k as u64).or_insert_with(Vec::new).push((w, k as u32));
        }
        let mut h = TraceHasher::default();
        h.write_u64(c.dev as u64);
        h.write_u64(c.sector);
        h.write(&c.data);
        hashes.push(h.finish());
        writes.push(c.data.clone());
    }
    Candidates { writes, index, hashes }
}

/// The crash states as mixed-radix numbers, least significant digit first.
///
/// subset: one digit per write (cached: lost/kept; in flight: absent/present/torn).
/// prefix: one cut per device (how many of its cached writes survive, in completion order),
/// then one digit per in-flight write, which may land only past an intact prefix.
pub(super) struct StateSpace {
    prefix: bool,
    ndev: usize,
    /// Per device: how many cached writes it holds.
    cached_on: Vec<u64>,
    /// Per choice: its place among its device's cached writes.
    pos: Vec<u64>,
    pub(super) radix: Vec<u64>,
    /// How many states there are (saturating).
    pub(super) total: u64,
}

impl StateSpace {
    pub(super) fn new(ch: &[Choice], ndev: usize, prefix: bool) -> StateSpace {
        let mut cached_on = vec![0u64; ndev];
        let mut pos = vec![0u64; ch.len()];
        for (i, c) in ch.iter().enumerate().filter(|(_, c)| !c.inflight) {
            pos[i] = cached_on[c.dev];
            cached_on[c.dev] += 1;
        }
        let radix: Vec<u64> = if prefix {
            cached_on.iter().map(|n| n + 1).chain(ch.iter().filter(|c| c.inflight).map(|_| 3)).collect()
        } else {
            ch.iter().map(|c| if c.inflight { 3 } else { 2 }).collect()
        };
        let total = radix.iter().try_fold(1u64, |acc, &r| acc.checked_mul(r)).unwrap_or(u64::MAX);
        StateSpace { prefix, ndev, cached_on, pos, radix, total }
    }

    /// The digits of state `s` when every state is enumerated.
    pub(super) fn digits_exhaustive(&self, s: u64, digits: &mut [u64]) {
        let mut x = s;
        for (d, &r) in digits.iter_mut().zip(&self.radix) {
            *d = x % r;
            x /= r;
        }
    }

    /// The digits of sampled state `s`: the two extremes first (nothing unflushed survives,
    /// everything lands), as those are where lost and reordered writes show most; then
    /// random states, one draw per digit.
    pub(super) fn digits_sampled(&self, s: u64, rng: &mut impl RngCore, digits: &mut [u64]) {
        for (d, &r) in digits.iter_mut().zip(&self.radix) {
            *d = match s {
                0 => 0,
                1 => r - 1,
                _ => rng.next_u64() % r,
            };
        }
    }

    /// The fate of each write in the state `digits` spell (before PREFLUSH marks).
    pub(super) fn fates(&self, ch: &[Choice], digits: &[u64], keep: &mut [Fate]) {
        if !self.prefix {
            for (p, &d) in keep.iter_mut().zip(digits) {
                *p = fate_of_digit(d);
            }
            return;
        }
        let mut next_inflight = self.ndev;
        for (i, c) in ch.iter().enumerate() {
            keep[i] = if c.inflight {
                let d = digits[next_inflight];
                next_inflight += 1;
                if digits[c.dev] == self.cached_on[c.dev] {
                    fate_of_digit(d)
                } else {
                    Fate::Lost
                }
            } else if self.pos[i] < digits[c.dev] {
                Fate::Kept
            } else {
                Fate::Lost
            };
        }
    }
}

/// A state digit of one write: 0 lost, 1 kept, 2 torn (in flight only).
fn fate_of_digit(d: u64) -> Fate {
    match d {
        0 => Fate::Lost,
        1 => Fate::Kept,
        _ => Fate::Torn,
    }
}

/// Which sectors of each write a tear keeps: the first half (exhaustive, so states stay
/// few) or a random non-empty subset, one draw per write of more than one sector.
pub(super) fn draw_tears(ch: &[Choice], exhaustive: bool, rng: &mut impl RngCore, tears: &mut [u64]) {
    for (i, c) in ch.iter().enumerate() {
        let n = (c.data.len() / SECTOR).max(1);
        tears[i] = if exhaustive || n == 1 { u64::MAX >> (64 - (n / 2).clamp(1, 63)) } else { rng.next_u64() | 1 };
    }
}

/// A surviving PREFLUSH write implies its flush finished first: the cached writes that
/// flush covered survive too.
pub(super) fn apply_preflush_marks(ch: &[Choice], ndev: usize, keep: &mut [Fate]) {
    let mut mark = vec![0u64; ndev];
    for (i, c) in ch.iter().enumerate() {
        if let (Some(m), true) = (c.preflush_mark, keep[i] != Fate::Lost) {
            mark[c.dev] = mark[c.dev].max(m);
        }
    }
    for (i, c) in ch.iter().enumerate() {
        if !c.inflight && c.cseq < mark[c.dev] {
            keep[i] = Fate::Kept;
        }
    }
}

/// The content hash of a state: equal for states that leave the same bytes, whatever
/// their index.
pub(super) fn state_hash(keep: &[Fate], tears: &[u64], hashes: &[u64]) -> u64 {
    let mut h = 0u64;
    for (i, &f) in keep.iter().enumerate() {
        if f != Fate::Lost {
            let t = if f == Fate::Torn { tears[i] } else { u64::MAX };
            h = h.wrapping_add((hashes[i] ^ t).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17));
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use Fate::{Kept, Lost, Torn};

    fn cached(dev: usize, cseq: u64) -> Choice {
        Choice {
            dev,
            req_id: cseq,
            sector: cseq * 8,
            data: vec![0; SECTOR],
            inflight: false,
            preflush_mark: None,
            cseq,
        }
    }

    fn inflight(dev: usize, preflush_mark: Option<u64>) -> Choice {
        Choice {
            dev,
            req_id: 0,
            sector: 1000,
            data: vec![0; 4 * SECTOR],
            inflight: true,
            preflush_mark,
            cseq: u64::MAX,
        }
    }

    fn fates_of(space: &StateSpace, ch: &[Choice], s: u64) -> Vec<Fate> {
        let mut digits = vec![0; space.radix.len()];
        space.digits_exhaustive(s, &mut digits);
        let mut keep = vec![Lost; ch.len()];
        space.fates(ch, &digits, &mut keep);
        keep
    }

    #[test]
    fn subset_states_give_each_write_its_own_digit() {
        let ch = [cached(0, 0), cached(0, 1), inflight(0, None)];
        let space = StateSpace::new(&ch, 1, false);
        assert_eq!(space.radix, [2, 2, 3]);
        assert_eq!(space.total, 12);
        assert_eq!(fates_of(&space, &ch, 0), [Lost, Lost, Lost]);
        // 5 = 1 + 0*2 + 1*4
        assert_eq!(fates_of(&space, &ch, 5), [Kept, Lost, Kept]);
        // 11 = 1 + 1*2 + 2*4: the last state keeps both cached writes and tears the in-flight one.
        assert_eq!(fates_of(&space, &ch, 11), [Kept, Kept, Torn]);
    }

    #[test]
    fn prefix_states_cut_each_device_and_land_in_flight_writes_only_past_a_whole_prefix() {
        // Device 0 caches two writes, device 1 one; one write in flight on each.
        let ch = [cached(0, 0), cached(1, 0), cached(0, 1), inflight(0, None), inflight(1, None)];
        let space = StateSpace::new(&ch, 2, true);
        assert_eq!(space.radix, [3, 2, 3, 3]);
        assert_eq!(space.total, 54);
        let fates = |digits: [u64; 4]| {
            let mut keep = vec![Lost; ch.len()];
            space.fates(&ch, &digits, &mut keep);
            keep
        };
        // Device 0 keeps its first write only, so its in-flight write is lost whatever its
        // digit; device 1 keeps all it cached, so its in-flight write lands.
        assert_eq!(fates([1, 1, 2, 1]), [Kept, Kept, Lost, Lost, Kept]);
        assert_eq!(fates([2, 0, 2, 2]), [Kept, Lost, Kept, Torn, Lost]);
        assert_eq!(fates([0, 1, 0, 2]), [Lost, Kept, Lost, Lost, Torn]);
        // State index 1 + 0*3 + 2*6 + 1*18 = 31 spells [1, 0, 2, 1].
        assert_eq!(fates_of(&space, &ch, 31), [Kept, Lost, Lost, Lost, Lost]);
    }

    #[test]
    fn sampled_states_start_with_nothing_then_everything() {
        let ch = [cached(0, 0), inflight(0, None)];
        let space = StateSpace::new(&ch, 1, false);
        let mut rng = rand_pcg::Pcg64Mcg::new(7);
        let mut digits = vec![9; 2];
        space.digits_sampled(0, &mut rng, &mut digits);
        assert_eq!(digits, [0, 0]);
        space.digits_sampled(1, &mut rng, &mut digits);
        assert_eq!(digits, [1, 2]);
        space.digits_sampled(2, &mut rng, &mut digits);
        assert!(digits[0] < 2 && digits[1] < 3);
    }

    #[test]
    fn a_surviving_preflush_write_brings_the_cached_writes_its_flush_covered() {
        let ch = [cached(0, 0), cached(0, 1), cached(0, 2), inflight(0, Some(2))];
        let mut keep = [Lost, Lost, Kept, Torn];
        apply_preflush_marks(&ch, 1, &mut keep);
        assert_eq!(keep, [Kept, Kept, Kept, Torn]);
        let mut keep = [Lost, Lost, Lost, Lost];
        apply_preflush_marks(&ch, 1, &mut keep);
        assert_eq!(keep, [Lost, Lost, Lost, Lost]);
    }

    #[test]
    fn tears_keep_the_first_half_when_exhaustive() {
        let ch = [cached(0, 0), inflight(0, None)];
        let mut tears = [0; 2];
        draw_tears(&ch, true, &mut rand_pcg::Pcg64Mcg::new(7), &mut tears);
        assert_eq!(tears, [0b1, 0b11]);
    }
}
