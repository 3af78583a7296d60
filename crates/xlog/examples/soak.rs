//! A long run with memory sampled along the way (issue: soak). Prints, every tenth of the run,
//! the process's resident memory and what the simulation's history holds.
//!   cargo run --release -p xlog --example soak -- fsync-heavy 3600
fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()).unwrap_or(0) * 4
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let preset = args.next().unwrap_or_else(|| "fsync-heavy".into());
    let secs: u64 = args.next().map_or(Ok(60), |s| s.parse().map_err(|_| format!("seconds: '{s}' is not a number")))?;
    let mut s = xlog::find_preset(&preset)?;
    s.duration = xlog::Duration(secs * xlog::NS_PER_SEC);
    let mut sim = xlog::Sim::new(&s)?;
    println!("virtual_s,events,rss_kib,checkpoints,checkpoint_items,records,approx_clone_kib");
    for k in 1..=10 {
        sim.run_until(secs * xlog::NS_PER_SEC * k / 10);
        let h = sim.history();
        let items: usize = h.checkpoints.iter().map(|c| c.items.len()).sum();
        println!(
            "{},{},{},{},{items},{},{}",
            secs * k / 10,
            sim.events(),
            rss_kib(),
            h.checkpoints.len(),
            h.records.len(),
            sim.approx_clone_bytes() / 1024
        );
    }
    Ok(())
}
