//! What recovery reports: head, tail, what it trimmed, replayed and skipped, the items it
//! left, and the messages the kernel would log.

use crate::units::Lsn;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    pub head_blk: u32,
    pub tail_blk: u32,
    pub head_lsn: Lsn,
    pub tail_lsn: Lsn,
    pub empty: bool,
    pub clean: bool,
    /// Records between tail and head after trimming.
    pub records: u32,
    /// Torn head: the head block was moved back over a bad record.
    pub torn_head_trimmed: bool,
    /// The head found before a torn head was trimmed (`head_blk` when it was not).
    pub head_found_blk: u32,
    /// The trim was for a corrupt record header rather than a bad CRC (the kernel then also
    /// says "Corruption detected").
    pub torn_at_corrupt_header: bool,
    /// The tail was overwritten by iclogs that landed past the head and was moved on.
    pub tail_overwrite_skipped: bool,
    pub transactions_replayed: u32,
    /// Transactions whose start was found but whose commit record was not.
    pub transactions_uncommitted: u32,
    pub regions_skipped_by_lsn: u32,
    /// Cancel records met (stale buffers: format structure with `XFS_BLF_CANCEL`).
    pub cancel_records: u32,
    /// Buffer items not replayed because a later cancel record covers their block.
    pub buffers_cancelled: u32,
    /// Final item versions: in-place metadata with the log replayed over it.
    pub items: BTreeMap<u32, u64>,
    /// Metadata writes recovery makes (sector -> item, version, LSN), for running it again.
    #[serde(skip)]
    pub writes: BTreeMap<u64, (u32, u64, Lsn)>,
    /// Intact records from tail to head: (block, LSN, length in blocks).
    #[serde(skip)]
    pub records_found: Vec<(u32, Lsn, u32)>,
    /// Committed transactions replayed: (start LSN, item, version) per buffer.
    pub replayed: Vec<(Lsn, u32, u64)>,
    /// Filled by the oracle: why an invariant failed.
    pub why: String,
    /// Filled by the oracle: a recovered version predates the folded history, so its
    /// prefix window is known only as a superset.
    #[serde(skip)]
    pub before_horizon: bool,
}

impl RecoveryReport {
    /// What the kernel logs for this recovery of device `dev` (`xlog_recover`,
    /// `xlog_verify_head`, `xlog_verify_tail`): nothing for an empty or clean log.
    pub fn kernel_messages(&self, dev: &str) -> Vec<String> {
        let mut m = Vec::new();
        if self.empty || self.clean {
            return m;
        }
        if self.torn_at_corrupt_header {
            m.push(format!("XFS ({dev}): Corruption detected. Unmount and run xfs_repair"));
        }
        if self.torn_head_trimmed {
            m.push(format!(
                "XFS ({dev}): Torn write (CRC failure) detected at log block 0x{:x}. Truncating head block from 0x{:x}.",
                self.head_blk, self.head_found_blk
            ));
        }
        if self.tail_overwrite_skipped {
            m.push(format!(
                "XFS ({dev}): Tail block (0x{:x}) overwrite detected. Updated to 0x{:x}",
                self.tail_blk, self.tail_blk
            ));
        }
        m.push(format!("XFS ({dev}): Starting recovery (logdev: internal)"));
        m.push(format!("XFS ({dev}): Ending recovery (logdev: internal)"));
        m
    }

    pub(super) fn blank() -> RecoveryReport {
        RecoveryReport {
            head_blk: 0,
            tail_blk: 0,
            head_lsn: Lsn::ZERO,
            tail_lsn: Lsn::ZERO,
            empty: false,
            clean: false,
            records: 0,
            torn_head_trimmed: false,
            head_found_blk: 0,
            torn_at_corrupt_header: false,
            tail_overwrite_skipped: false,
            transactions_replayed: 0,
            transactions_uncommitted: 0,
            regions_skipped_by_lsn: 0,
            cancel_records: 0,
            buffers_cancelled: 0,
            items: BTreeMap::new(),
            writes: BTreeMap::new(),
            records_found: Vec::new(),
            replayed: Vec::new(),
            why: String::new(),
            before_horizon: false,
        }
    }
}
