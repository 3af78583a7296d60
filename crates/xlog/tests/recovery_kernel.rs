//! Recovery decisions checked against the 6.18 kernel on real crash states (`loglab kernel
//! crash`), kept here as deterministic cases.

const MAGIC: u32 = 0xFEED_BABE;

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// A model log after a short run, and the blocks holding record headers.
fn model_log() -> (Vec<u8>, Vec<usize>) {
    let s = xlog::find_preset("small-crash").unwrap();
    let mut sim = xlog::Sim::new(&s).unwrap();
    // Enough records that one can be lost more than XLOG_MAX_ICLOGS headers before the head.
    sim.run_until(20_000_000);
    let log = sim.log_region();
    let headers = (0..log.len() / 512).filter(|&b| be32(&log, b * 512) == MAGIC).collect();
    (log, headers)
}

#[test]
fn a_record_replaced_by_mkfs_filler_headers_is_corruption_as_the_kernel_says() {
    let (mut log, headers) = model_log();
    assert!(xlog::recover_log_region(&log).is_ok());
    // A crash state the kernel refused ("hlen <= 0 || hlen > bufsize", "failed to locate log
    // tail"): an unflushed record lost, its blocks still holding what mkfs wrote there, a
    // header with the record's cycle and h_len 0 in every block, and more than XLOG_MAX_ICLOGS
    // headers after it: outside the span xlog_verify_head may truncate.
    let tail = xlog::recover_log_region(&log).unwrap().report.tail_blk as usize;
    let lost = headers.iter().position(|&h| h == tail).unwrap() + 1;
    assert!(headers.len() - 1 - lost >= 8, "{lost} of {headers:?}");
    fill_with_mkfs_headers(&mut log, headers[lost], headers[lost + 1]);
    let err = xlog::recover_log_region(&log).expect_err("h_len 0 is not a record");
    assert!(err.contains("bad record header"), "{err}");
}

/// What mkfs leaves in a log block it cleared: a header with the cycle and h_len 0.
fn fill_with_mkfs_headers(log: &mut [u8], from: usize, to: usize) {
    let cycle = be32(log, from * 512 + 4);
    for b in from..to {
        let blk = &mut log[b * 512..(b + 1) * 512];
        blk.fill(0);
        blk[0..4].copy_from_slice(&MAGIC.to_be_bytes());
        blk[4..8].copy_from_slice(&cycle.to_be_bytes());
        blk[8..12].copy_from_slice(&2u32.to_be_bytes());
    }
}

#[test]
fn a_lost_record_among_the_last_iclogs_truncates_the_head_as_the_kernel_does() {
    let (log, headers) = model_log();
    let n = headers.len();
    let head = xlog::recover_log_region(&log).unwrap().report.head_blk as usize;
    // One header block (32 KiB iclogs) and the record's h_len of data.
    let last_len = be32(&log, headers[n - 1] * 512 + 12) as usize;
    assert_eq!(head, headers[n - 1] + 1 + last_len.div_ceil(512), "the head follows the last record");
    // The 6.18 kernel on a real subset state: unflushed iclogs lost, holes of zeros among the
    // kept ones beyond the reach of its head search (xlog_find_zeroed looks back 4,096 blocks
    // from the first zeroed block it finds), so the head lands past a hole. xlog_verify_head's
    // CRC pass over the last 8 records met the hole where a header should be: "Corruption
    // detected. Unmount and run xfs_repair", "Torn write (CRC failure) detected at log block
    // 0xce0f. Truncating head block from 0xcf0f.", and recovery ran to the new head. Here the
    // lost header's block holds a data block of this cycle (no magic number), so the head
    // search, by cycle numbers, also finds the head past it.
    let lost = n - 4;
    let mut hole = log.clone();
    let (h, next) = (headers[lost] * 512, headers[lost] * 512 + 512);
    let data_block = hole[next..next + 512].to_vec();
    hole[h..h + 512].copy_from_slice(&data_block);
    let r = xlog::recover_log_region(&hole).expect("the head is truncated, not the log refused");
    assert!(r.report.torn_head_trimmed && r.report.torn_at_corrupt_header);
    assert_eq!(r.report.head_blk as usize, headers[lost]);
    assert_eq!(r.report.head_found_blk as usize, head);
    let msgs = r.report.kernel_messages("loop0");
    assert_eq!(msgs[0], "XFS (loop0): Corruption detected. Unmount and run xfs_repair");
    assert_eq!(
        msgs[1],
        format!(
            "XFS (loop0): Torn write (CRC failure) detected at log block 0x{:x}. Truncating head block from 0x{head:x}.",
            headers[lost]
        )
    );
    // A hole of zeros the head search reaches ends the log there, by cycle number: no trim.
    let mut zeroed = log.clone();
    zeroed[headers[lost] * 512..headers[lost + 1] * 512].fill(0);
    let r = xlog::recover_log_region(&zeroed).unwrap();
    assert_eq!((r.report.head_blk as usize, r.report.torn_head_trimmed), (headers[lost], false));
    // The same hole holding mkfs's headers: the pass then starts inside it (its window is the
    // last XLOG_MAX_ICLOGS blocks with the header magic), truncates there, and finds no good
    // record before the new head: the log is refused, as when the hole is further back.
    let mut filled = log.clone();
    let lost = n - 6;
    let magic_after = (headers[lost + 1] - headers[lost] - 1) + (n - 1 - lost);
    assert!(magic_after >= 8, "the window starts inside the hole: {magic_after}");
    fill_with_mkfs_headers(&mut filled, headers[lost], headers[lost + 1]);
    assert!(xlog::recover_log_region(&filled).is_err());
}
