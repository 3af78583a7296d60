use xlog::*;

#[test]
fn presets_run() {
    for p in PRESETS {
        // Every preset runs and commits; the correct ones (and every fixed variant) never hang.
        let short = |mut s: Scenario| {
            s.duration = Duration(s.duration.0.min(200 * NS_PER_MS));
            s
        };
        let mut sim = Sim::new(&short(p.scenario())).unwrap();
        sim.run();
        let m = sim.metrics();
        assert!(m.transactions > 0, "{}", p.name);
        assert!(p.is_bug() || !m.hung, "{} hung", p.name);
        let mut fixed = Sim::new(&short(p.fixed())).unwrap();
        fixed.run();
        assert!(!fixed.metrics().hung, "{} fixed hung", p.name);
    }
}

/// A fuzz finding (recover_log, 2026-12-07): a record header whose h_len outgrows its header
/// blocks. Recovery reads such a record's saved cycle words on into its data and reports;
/// it never panics. Every h_len byte value is tried.
#[test]
fn a_record_whose_length_outgrows_its_header_blocks_is_recovered_without_a_panic() {
    let s = find_preset("small-crash").unwrap();
    let mut sim = Sim::new(&s).unwrap();
    sim.run_until(4_000_000);
    let base = sim.log_region();
    for v in 0..=255u8 {
        let mut log = base.clone();
        log[14] = v;
        let _ = recover_log_region(&log);
    }
}
