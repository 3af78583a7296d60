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
    sim.run_until(4_000_000);
    let log = sim.log_region();
    let headers = (0..log.len() / 512).filter(|&b| be32(&log, b * 512) == MAGIC).collect();
    (log, headers)
}

#[test]
fn a_record_replaced_by_mkfs_filler_headers_is_corruption_as_the_kernel_says() {
    let (mut log, headers) = model_log();
    assert!(headers.len() >= 4, "records: {headers:?}");
    assert!(xlog::recover_log_region(&log).is_ok());
    // A crash state the kernel refused ("hlen <= 0 || hlen > bufsize", "failed to locate log
    // tail"): an unflushed record lost, its blocks still holding what mkfs wrote there, a
    // header with the record's cycle and h_len 0 in every block.
    let (from, to) = (headers[1], headers[2]);
    let cycle = be32(&log, from * 512 + 4);
    for b in from..to {
        let blk = &mut log[b * 512..(b + 1) * 512];
        blk.fill(0);
        blk[0..4].copy_from_slice(&MAGIC.to_be_bytes());
        blk[4..8].copy_from_slice(&cycle.to_be_bytes());
        blk[8..12].copy_from_slice(&2u32.to_be_bytes());
    }
    let err = xlog::recover_log_region(&log).expect_err("h_len 0 is not a record");
    assert!(err.contains("bad record header"), "{err}");
}
