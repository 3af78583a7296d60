//! What the crash oracle checks recovery against: every checkpoint in commit-record order,
//! what was acknowledged, and every record written. Recovery never sees it.
//!
//! A long run folds old checkpoints into one entry per item (`fold`), so memory stays
//! bounded by the item pool rather than growing with virtual time.

use crate::units::Lsn;
use serde::Serialize;
use std::collections::BTreeMap;

/// One checkpoint in commit-record order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckpointRecord {
    pub sequence: u64,
    pub items: Vec<(u32, u64)>,
    /// Items logged as stale buffers (a cancel record): their blocks are free after it.
    pub freed: Vec<u32>,
    pub start_lsn: Lsn,
    pub commit_lsn: Lsn,
    pub completed: bool,
}

/// What the folded checkpoints left of one item: its last touch among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FoldedItem {
    /// Index of the checkpoint that last logged it.
    pub checkpoint: u32,
    pub version: u64,
    pub commit_lsn: Lsn,
    /// That touch logged it stale: its block is free after it.
    pub freed: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct History {
    /// Checkpoints `folded..` in order; those before were folded into `base`. Index with
    /// `get`, which counts from the first checkpoint ever written.
    pub checkpoints: Vec<CheckpointRecord>,
    pub folded: u32,
    pub base: BTreeMap<u32, FoldedItem>,
    /// Items over the kept checkpoints (a fold is due past `FOLD_ITEMS`).
    kept_items: usize,
    /// Checkpoints 0..acked were acknowledged to a waiter (a log force returned).
    pub acked: u32,
    /// File data blocks an fsync returned for: daddr -> version.
    pub acked_data: BTreeMap<u64, u64>,
    /// The newest log records submitted, oldest first: (LSN, the tail LSN stamped in its
    /// header). The oracle reads at most the last `RECENT_RECORDS`, so no more are kept.
    pub records: std::collections::VecDeque<(Lsn, Lsn)>,
}

/// Records the oracle looks back over for the newest tail an intact record states.
pub const RECENT_RECORDS: usize = 64;

/// Folding waits until twice this many checkpoints are kept, then keeps this many at least.
pub const FOLD_BATCH: usize = 1024;

/// ... or until the kept checkpoints hold this many items (big checkpoints: create runs log
/// tens of thousands of inodes in each), then folds all it may.
pub const FOLD_ITEMS: usize = 1 << 20;

/// A checkpoint is folded only once the log head is this many cycles past its commit record:
/// every block it wrote has been rewritten since, so a crash state can bring it back only
/// through writes that a run of correct flushes would have made stable long ago.
pub const FOLD_CYCLES: u32 = 2;

impl History {
    /// Notes a submitted record, forgetting the oldest beyond `RECENT_RECORDS`.
    pub fn record_submitted(&mut self, lsn: Lsn, tail: Lsn) {
        if self.records.len() == RECENT_RECORDS {
            self.records.pop_front();
        }
        self.records.push_back((lsn, tail));
    }

    /// Appends the checkpoint whose commit record was just written.
    pub fn push(&mut self, ck: CheckpointRecord) {
        self.kept_items += ck.items.len();
        self.checkpoints.push(ck);
    }

    /// Checkpoints written so far, folded ones included.
    pub fn len(&self) -> u32 {
        self.folded + self.checkpoints.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checkpoint `c`, counted from the first ever written; `None` once folded.
    pub fn get(&self, c: u32) -> Option<&CheckpointRecord> {
        self.checkpoints.get(c.checked_sub(self.folded)? as usize)
    }

    pub fn get_mut(&mut self, c: u32) -> Option<&mut CheckpointRecord> {
        self.checkpoints.get_mut(c.checked_sub(self.folded)? as usize)
    }

    /// The kept checkpoints with their indexes.
    pub fn kept(&self) -> impl Iterator<Item = (u32, &CheckpointRecord)> {
        (self.folded..).zip(&self.checkpoints)
    }

    /// Folds the oldest checkpoints that are complete, `FOLD_CYCLES` behind `head` and below
    /// `limit`: once twice `batch` (normally `FOLD_BATCH`) are kept, keeping `batch`; once
    /// they hold `FOLD_ITEMS` items, as many as may be.
    pub fn fold_behind(&mut self, head: Lsn, limit: u32, batch: usize) {
        let keep = if self.checkpoints.len() >= 2 * batch {
            batch
        } else if self.kept_items >= FOLD_ITEMS {
            0
        } else {
            return;
        };
        let n = self.checkpoints[..self.checkpoints.len() - keep]
            .iter()
            .zip(self.folded..limit)
            .take_while(|(c, _)| c.completed && c.commit_lsn.cycle() + FOLD_CYCLES <= head.cycle())
            .count();
        self.fold(n);
    }

    /// Folds the `n` oldest kept checkpoints into `base`.
    pub fn fold(&mut self, n: usize) {
        for (c, ck) in (self.folded..).zip(self.checkpoints.drain(..n)) {
            self.kept_items -= ck.items.len();
            for &(item, version) in &ck.items {
                let freed = ck.freed.contains(&item);
                self.base.insert(item, FoldedItem { checkpoint: c, version, commit_lsn: ck.commit_lsn, freed });
            }
        }
        self.folded += n as u32;
    }
}
