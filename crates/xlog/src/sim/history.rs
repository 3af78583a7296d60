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
    /// Every log record submitted: (LSN, the tail LSN stamped in its header).
    pub records: Vec<(Lsn, Lsn)>,
}
