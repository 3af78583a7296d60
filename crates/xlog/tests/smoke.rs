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
