//! What the crash oracle checks recovery against: every checkpoint in commit-record order,
//! what was acknowledged, and every record written. Recovery never sees it.

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

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct History {
    pub checkpoints: Vec<CheckpointRecord>,
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

impl History {
    /// Notes a submitted record, forgetting the oldest beyond `RECENT_RECORDS`.
    pub fn record_submitted(&mut self, lsn: Lsn, tail: Lsn) {
        if self.records.len() == RECENT_RECORDS {
            self.records.pop_front();
        }
        self.records.push_back((lsn, tail));
    }
}
