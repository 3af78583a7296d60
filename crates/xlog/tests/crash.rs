//! Recovery round trips and the crash oracle, positive and negative.

use xlog::*;

fn small() -> Scenario {
    find_preset("small-crash").unwrap()
}

/// Runs `s`, crashing at `points` evenly spaced events, exploring up to `per_point` states.
fn explore(s: &Scenario, points: u64, per_point: u64) -> CrashReport {
    let mut probe = Sim::new(s).unwrap();
    probe.run();
    let total = probe.metrics().events;
    let mut sim = Sim::new(s).unwrap();
    sim.set_keep_trace(false);
    let mut report = CrashReport::default();
    for p in 1..=points {
        let at = total * p / (points + 1);
        while sim.metrics().events < at {
            sim.step();
        }
        explore_crash_states(&sim, per_point, s.seed, &mut report);
    }
    report
}

#[test]
fn legacy_flush_policy_has_no_violations_over_10k_crash_states() {
    let r = explore(&small(), 8000, 64);
    assert!(r.crash_states >= 10_000, "explored {} states", r.crash_states);
    assert_eq!(r.violations, Default::default(), "examples: {:?}", r.examples);
    assert!(r.transactions_replayed > 0, "recovery replayed something");
}

#[test]
fn a_device_that_ignores_fua_breaks_durability_and_is_caught() {
    let mut s = small();
    s.device_bug = DeviceBug::FuaIgnored;
    let r = explore(&s, 10, 200);
    assert!(r.violations.get("durability").copied().unwrap_or(0) > 0, "{:?}", r.violations);
    assert!(r.violations.contains_key("device_semantics"));
}

#[test]
fn a_device_that_ignores_flushes_is_caught() {
    let mut s = small();
    s.device_bug = DeviceBug::FlushIgnored;
    s.workload = WorkloadKind::FsmarkCreate;
    let r = explore(&s, 10, 200);
    assert!(r.violations.contains_key("device_semantics"), "{:?}", r.violations);
}
