//! The event queue: a monotone radix heap keyed by (virtual time, insertion sequence).
//!
//! The simulator never schedules an event before the one it is running, so the queue is
//! monotone and a radix heap pops in the same order as a binary heap with fewer moves and
//! no comparisons on push. `radix-heap` (crates.io) has no peek, which every run loop
//! needs; hence this small one. Keys are unique (the sequence), so the order is total and
//! identical to `BinaryHeap<Reverse<(Ns, u64, Event)>>`.

use super::Event;
use crate::units::Ns;

type Key = u128;

fn key(t: Ns, seq: u64) -> Key {
    (t as Key) << 64 | seq as Key
}

fn time(k: Key) -> Ns {
    (k >> 64) as Ns
}

/// Bucket of `k` relative to `last`: 0 when equal, else 1 + the highest differing bit.
fn bucket(k: Key, last: Key) -> usize {
    (Key::BITS - (k ^ last).leading_zeros()) as usize
}

#[derive(Clone, Debug)]
pub(crate) struct EventQueue {
    /// The smallest key that may still be queued: every key present is at least this.
    last: Key,
    /// Bucket `b > 0` holds keys whose highest bit differing from `last` is `b - 1`.
    buckets: Vec<Vec<(Key, Event)>>,
    /// Bit `b` set when bucket `b` is not empty.
    full: [u64; 3],
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue { last: 0, buckets: vec![Vec::new(); Key::BITS as usize + 1], full: [0; 3], len: 0 }
    }
}

impl EventQueue {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn put(&mut self, k: Key, ev: Event) {
        let b = bucket(k, self.last);
        self.buckets[b].push((k, ev));
        self.full[b / 64] |= 1 << (b % 64);
    }

    pub fn push(&mut self, t: Ns, seq: u64, ev: Event) {
        let k = key(t, seq);
        if k < self.last {
            // Only after a `pop_if` declined an event later than this one: re-bucket all
            // around the new minimum (rare: a command between frames).
            self.last = k;
            let all: Vec<_> = self.buckets.iter_mut().flat_map(std::mem::take).collect();
            self.full = [0; 3];
            all.into_iter().for_each(|(k, ev)| self.put(k, ev));
        }
        self.put(k, ev);
        self.len += 1;
    }

    fn first_full(&self) -> Option<usize> {
        (0..3).find(|&w| self.full[w] != 0).map(|w| w * 64 + self.full[w].trailing_zeros() as usize)
    }

    /// Moves the smallest key into bucket 0: it becomes `last`.
    fn settle(&mut self) -> Option<()> {
        let b = self.first_full()?;
        if b > 0 {
            // Every key of bucket `b` agrees with the new `last` above bit `b - 1`, so each
            // lands in a lower bucket and `b` is left empty: it keeps its allocation.
            let mut items = std::mem::take(&mut self.buckets[b]);
            self.full[b / 64] &= !(1 << (b % 64));
            self.last = items.iter().map(|&(k, _)| k).min().expect("a full bucket");
            for &(k, ev) in &items {
                self.put(k, ev);
            }
            items.clear();
            self.buckets[b] = items;
        }
        Some(())
    }

    /// The earliest event, popped only if `take(time, event)` says so.
    pub fn pop_if(&mut self, take: impl FnOnce(Ns, Event) -> bool) -> Option<(Ns, Event)> {
        self.settle()?;
        let &(k, ev) = self.buckets[0].last().expect("settled");
        if !take(time(k), ev) {
            return None;
        }
        self.buckets[0].pop();
        if self.buckets[0].is_empty() {
            self.full[0] &= !1;
        }
        self.len -= 1;
        Some((time(k), ev))
    }

    pub fn pop(&mut self) -> Option<(Ns, Event)> {
        self.pop_if(|_, _| true)
    }

    /// The earliest event, without reordering anything.
    pub fn peek(&self) -> Option<(Ns, Event)> {
        let b = self.first_full()?;
        let &(k, ev) = self.buckets[b].iter().min_by_key(|&&(k, _)| k).expect("a full bucket");
        Some((time(k), ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Pushes at or after the last popped time, pops and peeks, declined pops and an
    /// occasional push into the past: the same events in the same order as a binary heap.
    #[test]
    fn the_queue_pops_what_a_binary_heap_pops() {
        let cfg = ProptestConfig { cases: 256, ..ProptestConfig::default() };
        proptest!(cfg, |(ops in prop::collection::vec((0u8..6, 0u64..5_000, 0u32..8), 1..400))| {
            let (mut q, mut h) = (EventQueue::default(), BinaryHeap::new());
            let (mut now, mut seq) = (0u64, 0u64);
            for (op, dt, task) in ops {
                match op {
                    0..=2 => {
                        // Mostly soon (ties at `now` included), sometimes far; rarely before now.
                        let t = if op == 2 && dt % 97 == 0 { now.saturating_sub(dt) } else { now + dt * dt % 10_000 };
                        seq += 1;
                        q.push(t, seq, Event::TaskRun(task));
                        h.push(Reverse((t, seq, Event::TaskRun(task))));
                    }
                    3 => {
                        let limit = now + dt;
                        let got = q.pop_if(|t, _| t <= limit);
                        let want = match h.peek() {
                            Some(&Reverse((t, _, _))) if t <= limit => h.pop().map(|Reverse((t, _, e))| (t, e)),
                            _ => None,
                        };
                        prop_assert_eq!(got, want);
                        if let Some((t, _)) = got { now = t; }
                    }
                    _ => {
                        prop_assert_eq!(q.peek(), h.peek().map(|&Reverse((t, _, e))| (t, e)));
                        let got = q.pop();
                        prop_assert_eq!(got, h.pop().map(|Reverse((t, _, e))| (t, e)));
                        if let Some((t, _)) = got { now = t; }
                    }
                }
                prop_assert_eq!(q.len(), h.len());
            }
            while let Some(got) = q.pop() {
                prop_assert_eq!(Some(got), h.pop().map(|Reverse((t, _, e))| (t, e)));
            }
            prop_assert!(h.is_empty());
        });
    }
}
