//! `loglab size`: mkfs log sizing under each algorithm, with the decisions taken.

use clap::Args;
use serde_json::{json, Map, Value};
use xlog::parse_size;
use xlog::sizing::{size_log, SizingAlgo, SizingInput};

#[derive(Args)]
pub struct SizeArgs {
    /// Data device size, e.g. 220GiB.
    #[arg(long)]
    fs_size: String,
    /// Filesystem block size in bytes (1024 to 65536).
    #[arg(long, default_value = "4096")]
    block_size: String,
    /// Sector size in bytes (512 or 4096; the internal log uses it too).
    #[arg(long, default_value = "512")]
    sector_size: String,
    /// Allocation group count (default: mkfs's own choice).
    #[arg(long)]
    agcount: Option<u64>,
    /// Data stripe unit in bytes (`-d su=`).
    #[arg(long)]
    dsu: Option<String>,
    /// Data stripe width in stripe units (`-d sw=`).
    #[arg(long)]
    dsw: Option<u64>,
    /// Log stripe unit in bytes (`-l su=`).
    #[arg(long)]
    lsu: Option<String>,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=1))]
    reflink: u8,
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    rmapbt: u8,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=1))]
    finobt: u8,
    /// pre-2022, seed-patch, xfsprogs-6.1 or all.
    #[arg(long, default_value = "all")]
    algo: String,
    #[arg(long)]
    json: bool,
}

impl SizeArgs {
    fn input(&self) -> Result<SizingInput, String> {
        Ok(SizingInput {
            fs_bytes: parse_size("--fs-size", &self.fs_size)?,
            block_size: parse_size("--block-size", &self.block_size)?,
            sector_size: parse_size("--sector-size", &self.sector_size)?,
            inode_size: 512,
            agcount: self.agcount,
            dsu: self.dsu.as_deref().map(|s| parse_size("--dsu", s)).transpose()?.unwrap_or(0),
            dsw: self.dsw.unwrap_or(0),
            lsu: self.lsu.as_deref().map(|s| parse_size("--lsu", s)).transpose()?.unwrap_or(0),
            reflink: self.reflink == 1,
            rmapbt: self.rmapbt == 1,
            finobt: self.finobt == 1,
        })
    }
}

pub fn run(a: &SizeArgs) -> Result<(), String> {
    let inp = a.input()?;
    let algos = SizingAlgo::parse(&a.algo)?;
    let mut per = Map::new();
    let mut reports = Vec::new();
    for algo in &algos {
        let r = size_log(&inp, *algo)?;
        per.insert(algo.as_str().into(), serde_json::to_value(&r).map_err(|e| e.to_string())?);
        reports.push(r);
    }
    // Top-level keys: the shipped algorithm when asked for, else the one chosen.
    let main = reports.iter().find(|r| r.algo == SizingAlgo::Xfsprogs61.as_str()).unwrap_or(&reports[0]);
    if a.json {
        let v = json!({
            "algo": main.algo,
            "log_blocks": main.log_blocks,
            "min_log_blocks": main.min_log_blocks,
            "steps": main.steps,
            "geometry": main.geometry,
            "min_log": main.min_log,
            "derived": main.derived,
            "algorithms": Value::Object(per),
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("serializable"));
        return Ok(());
    }
    let g = &main.geometry;
    println!(
        "geometry: {} AGs x {} blocks ({} data blocks), log stripe unit {} blocks",
        g.agcount, g.agblocks, g.dblocks, g.lsunit
    );
    println!(
        "largest reservation: {} logres {} x {} (unit {} bytes)",
        main.min_log.max_trans, main.min_log.logres, main.min_log.logcount, main.min_log.unit_res
    );
    for r in &reports {
        let bytes = r.log_blocks * inp.block_size;
        println!(
            "\n{}: log {} blocks ({}), minimum {} blocks",
            r.algo,
            r.log_blocks,
            xlog::format_size(bytes),
            r.min_log_blocks
        );
        for s in &r.steps {
            println!("  - {s}");
        }
    }
    let d = &main.derived;
    println!(
        "\nderived ({}): CIL push at {}, hard limit {}, tail push keeps {} blocks free, iclogs {} x {} (header {} bytes)",
        main.algo,
        xlog::format_size(d.cil_space_limit_bytes),
        xlog::format_size(d.cil_blocking_limit_bytes),
        d.tail_push_threshold_blocks,
        d.logbufs,
        xlog::format_size(d.logbsize),
        d.iclog_header_bytes
    );
    Ok(())
}
