//! The scenario file parser and the one validation layer: any JSON gives a scenario or a
//! message; a scenario that validates builds a simulation that runs a few hundred events
//! without a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = serde_json::from_slice::<xlog::Scenario>(data) else { return };
    if s.validate().is_err() {
        return;
    }
    if let Ok(mut sim) = xlog::Sim::new(&s) {
        for _ in 0..300 {
            if sim.step().is_none() {
                break;
            }
        }
        let _ = sim.metrics();
    }
});
