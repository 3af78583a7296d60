//! Recovery over arbitrary device bytes: a report or an error, never a panic or an endless
//! loop. Half the inputs are raw log regions; the other half are corruptions (offset, byte
//! pairs) of a real log the model wrote, which reach far deeper into recovery.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// A 2 MiB log after a short run of the small crash preset, and how much of it is written.
fn model_log() -> &'static (Vec<u8>, usize) {
    static LOG: OnceLock<(Vec<u8>, usize)> = OnceLock::new();
    LOG.get_or_init(|| {
        let s = xlog::find_preset("small-crash").expect("preset");
        let mut sim = xlog::Sim::new(&s).expect("valid");
        sim.run_until(4_000_000);
        let log = sim.log_region();
        let used = log.iter().rposition(|&b| b != 0).map_or(512, |i| (i / 512 + 2) * 512).min(log.len());
        (log, used)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode & 1 == 0 {
        let n = rest.len() / 512 * 512;
        let _ = xlog::recover_log_region(&rest[..n]);
        return;
    }
    let (base, used) = model_log();
    let mut log = base.clone();
    for pair in rest.chunks_exact(5) {
        // Mostly inside the records written; now and then anywhere.
        let at = u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]) as usize;
        let at = if at & 0x8000_0000 == 0 { at % used } else { at % log.len() };
        log[at] = pair[4];
    }
    let _ = xlog::recover_log_region(&log);
});
