use xlog::*;

#[test]
fn presets_run() {
    for p in PRESETS {
        let mut sim = Sim::new(&p.scenario()).unwrap();
        sim.run();
        let m = sim.metrics();
        eprintln!("{} {:?}", p.name, m);
        assert!(m.transactions > 0, "{}", p.name);
        assert!(!m.hung);
    }
}
