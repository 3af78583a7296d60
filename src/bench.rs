//! `loglab bench`'s simulator run inside the browser, for the e2e suite to set beside the
//! native number (measured and reported, never asserted).

use wasm_bindgen::prelude::*;

/// Runs the bench scenario once; returns `{"events": N, "secs": S, "trace_hash": H,
/// "crc_ok": B}` (`crc_ok`: the browser's SIMD CRC equals the portable one).
#[wasm_bindgen]
pub fn loglab_bench() -> String {
    let now = || web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now());
    let Ok(mut sim) = xlog::Sim::new(&xlog::bench_scenario()) else {
        return "{}".into();
    };
    let t0 = now();
    sim.run();
    let secs = (now() - t0) / 1e3;
    let (events, hash, crc_ok) = (sim.events(), sim.metrics().trace_hash, xlog::crc::self_check());
    format!(r#"{{"events":{events},"secs":{secs},"trace_hash":"{hash}","crc_ok":{crc_ok}}}"#)
}

/// The wasm linear memory's size in bytes: it only grows, so a soak reads its high-water mark.
#[wasm_bindgen]
pub fn loglab_memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    let pages = core::arch::wasm32::memory_size(0);
    #[cfg(not(target_arch = "wasm32"))]
    let pages = 0;
    (pages * 65536) as f64
}
