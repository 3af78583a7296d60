//! The event queue: a monotone radix heap on virtual time, first in first out at one time.
//!
//! The simulator never schedules an event before the one it is running, so the queue is
//! monotone and a radix heap pops in the same order as a binary heap with fewer moves and
//! no comparisons on push. `radix-heap` (crates.io) has no peek, which every run loop
//! needs, and pops ties last in first out; hence this small one. Events at one time leave
//! in insertion order, so the order is that of a binary heap on (time, insertion sequence)
//! without keeping the sequence.

use super::Event;
use crate::units::Ns;
use std::collections::VecDeque;

type Entry = (Ns, Event);

/// Bucket of time `t` relative to `last`: 0 when equal, else 1 + the highest differing bit.
fn bucket(t: Ns, last: Ns) -> usize {
    (Ns::BITS - (t ^ last).leading_zeros()) as usize
}

#[derive(Clone, Debug)]
pub(crate) struct EventQueue {
    /// The earliest time that may still be queued: every event present is at or after it.
    last: Ns,
    /// The events at `last`, in insertion order.
    now: VecDeque<Entry>,
    /// `later[b]` holds events whose time differs from `last` first in bit `b`. Events of one
    /// time share a bucket, and a bucket is filled by moves from one higher bucket while it
    /// is empty and then by pushes, both in order: so they stay in insertion order.
    later: [Vec<Entry>; Ns::BITS as usize],
    /// Bit `b` set when `later[b]` is not empty.
    full: u64,
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue { last: 0, now: VecDeque::new(), later: std::array::from_fn(|_| Vec::new()), full: 0, len: 0 }
    }
}

impl EventQueue {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Files an event at or after `last`; one at `last` is the latest inserted there.
    fn put(&mut self, e: Entry) {
        match bucket(e.0, self.last) {
            0 => self.now.push_back(e),
            b => {
                self.later[b - 1].push(e);
                self.full |= 1 << (b - 1);
            }
        }
    }

    pub fn push(&mut self, t: Ns, ev: Event) {
        if t < self.last {
            // Only after a `pop_if` declined an event later than this one: file all again
            // around the new earliest time (rare: a command between frames).
            self.last = t;
            let mut all: Vec<_> = self.now.drain(..).collect();
            all.extend(self.later.iter_mut().flat_map(std::mem::take));
            self.full = 0;
            all.into_iter().for_each(|e| self.put(e));
        }
        self.put((t, ev));
        self.len += 1;
    }

    /// Makes the earliest events the `now` ones.
    fn settle(&mut self) {
        if !self.now.is_empty() || self.full == 0 {
            return;
        }
        // Every event of the first full bucket agrees with the new `last` above its bit, so
        // each lands in a lower bucket and the bucket keeps its allocation for reuse.
        let b = self.full.trailing_zeros() as usize;
        let mut items = std::mem::take(&mut self.later[b]);
        self.full &= !(1 << b);
        self.last = items.iter().map(|e| e.0).min().expect("a full bucket");
        for &e in &items {
            self.put(e);
        }
        items.clear();
        self.later[b] = items;
    }

    /// The earliest event, popped only if `take(time, event)` says so.
    pub fn pop_if(&mut self, take: impl FnOnce(Ns, Event) -> bool) -> Option<(Ns, Event)> {
        self.settle();
        let &(t, ev) = self.now.front()?;
        if !take(t, ev) {
            return None;
        }
        self.now.pop_front();
        self.len -= 1;
        Some((t, ev))
    }

    pub fn pop(&mut self) -> Option<(Ns, Event)> {
        self.pop_if(|_, _| true)
    }

    /// The earliest event, without reordering anything (the first of the earliest time).
    pub fn peek(&self) -> Option<(Ns, Event)> {
        match self.now.front() {
            Some(&e) => Some(e),
            None if self.full == 0 => None,
            None => self.later[self.full.trailing_zeros() as usize].iter().min_by_key(|e| e.0).copied(),
        }
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
                        q.push(t, Event::TaskRun(task));
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
