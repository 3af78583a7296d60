//! "What if": a copy of the run from this instant with one policy changed. Only knobs the
//! simulator reads as it goes may change; geometry, devices and workload were fixed when the
//! run was built.

use crate::scenario::{Scenario, SET_KEYS};

/// The keys a branch may change mid-run.
pub const BRANCH_KEYS: &[&str] = &[
    "flush",
    "commit_ordering",
    "throttle",
    "tail_update",
    "force_flush",
    "start_record_order",
    "shadow_round",
    "think",
    "fsync",
    "fsync_writers",
    "crash_model",
];

/// The run's scenario with `key=value`; the error names the key and what is allowed.
pub(super) fn branch_scenario(s: &Scenario, key: &str, value: &str) -> Result<Scenario, String> {
    if !BRANCH_KEYS.contains(&key) {
        let why = if SET_KEYS.contains(&key) { "cannot change mid-run" } else { "is not a setting" };
        return Err(format!("what-if: {key} {why} (allowed: {})", BRANCH_KEYS.join(", ")));
    }
    let mut next = s.clone();
    next.set(key, value)?;
    next.validate()?;
    Ok(next)
}

#[cfg(test)]
mod tests {
    use crate::presets::find;
    use crate::sim::Sim;
    use crate::units::NS_PER_MS;

    #[test]
    fn a_branch_with_the_same_value_continues_the_same_run() {
        let s = find("fsmark-create").unwrap();
        let mut a = Sim::new(&s).unwrap();
        a.run_until(30 * NS_PER_MS);
        let mut b = a.branch("flush", "upstream").unwrap();
        a.run_until(120 * NS_PER_MS);
        b.run_until(120 * NS_PER_MS);
        assert_eq!(a.trace_hash(), b.trace_hash());
    }

    #[test]
    fn a_branch_to_legacy_flushes_every_iclog_from_then_on() {
        let s = find("fsmark-create").unwrap();
        let mut up = Sim::new(&s).unwrap();
        up.run_until(30 * NS_PER_MS);
        let mut legacy = up.branch("flush", "legacy").unwrap();
        assert_eq!(legacy.scenario().flush, crate::scenario::FlushPolicy::Legacy);
        let flushes = |s: &Sim| s.devices().iter().map(|d| d.stats().flushes).sum::<u64>();
        let before = flushes(&up);
        up.run_until(150 * NS_PER_MS);
        legacy.run_until(150 * NS_PER_MS);
        assert!(
            flushes(&legacy) - before > 10 * (flushes(&up) - before).max(1),
            "{} vs {}",
            flushes(&legacy),
            flushes(&up)
        );
    }

    #[test]
    fn knobs_fixed_at_build_cannot_branch() {
        let sim = Sim::new(&find("small-crash").unwrap()).unwrap();
        let e = sim.branch("log_size", "4MiB").unwrap_err();
        assert!(e.starts_with("what-if: log_size cannot change mid-run (allowed: flush,"), "{e}");
        assert!(sim.branch("colour", "red").unwrap_err().contains("colour is not a setting"));
        assert!(sim.branch("flush", "sometimes").unwrap_err().contains("flush: 'sometimes' is not allowed"));
    }
}
