//! `loglab export-image` and `loglab export-logwrites`: the simulated log for real tools.

use crate::{xfs_image, ScenarioArgs};
use clap::Args;
use serde_json::json;
use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::PathBuf;
use xlog::moment::{LogWrites, Moment};
use xlog::{logscan, logwrites, Sim, Size};

#[derive(Args)]
pub struct ImageArgs {
    /// An XFS image made by mkfs.xfs with an internal log; its log region is overwritten.
    #[arg(long)]
    image: PathBuf,
    #[command(flatten)]
    scenario: ScenarioArgs,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct LogwritesArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
    /// Where to write the dm-log-writes log.
    #[arg(long)]
    out: PathBuf,
    /// Stop at this virtual time, with no wind-down (what the lab downloads at `at=`).
    #[arg(long, value_name = "DURATION")]
    until: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn image(a: &ImageArgs) -> Result<(), String> {
    let name = a.image.display().to_string();
    let mut f = OpenOptions::new().read(true).write(true).open(&a.image).map_err(|e| format!("--image {name}: {e}"))?;
    let sb = xfs_image::read_sb(&mut f).map_err(|e| format!("--image {name}: {e}"))?;
    if sb.logstart == 0 {
        return Err(format!("--image {name}: the filesystem has an external log; export needs an internal one"));
    }
    if sb.logsectsize > 512 {
        return Err(format!("--image {name}: log sector size {} is not supported (512 only)", sb.logsectsize));
    }
    // The simulated log takes the image's geometry and identity.
    let (mut s, link) = a.scenario.load_with_link()?;
    s.external_log = false;
    s.log_size = Size(sb.logblocks * sb.blocksize);
    s.lsu = Size(if sb.logsunit > 1 { sb.logsunit } else { 0 });
    s.validate().map_err(|e| format!("--image {name}: this image's log does not fit the scenario: {e}"))?;
    let mut sim = Sim::new(&s)?;
    sim.set_uuid(sb.uuid)?;
    sim.run();
    let region = sim.log_region();
    let offset = sb.log_offset();
    f.seek(SeekFrom::Start(offset)).map_err(|e| format!("--image {name}: {e}"))?;
    f.write_all(&region).map_err(|e| format!("--image {name}: {e}"))?;
    f.sync_all().map_err(|e| format!("--image {name}: {e}"))?;
    let scan = logscan::scan(&region);
    let m = sim.metrics();
    let v = json!({
        "image": name,
        "log_daddr": offset / 512,
        "log_blocks": sb.logblocks,
        "log_bytes": region.len(),
        "records": scan.records,
        "log_ops": scan.ops,
        "commit_records": scan.commit_records,
        "checkpoints": m.checkpoints,
        "url": a.scenario.link_of(&s, link.as_ref()),
    });
    if a.json {
        crate::print_json(&v);
    } else {
        println!(
            "wrote {} bytes of log at daddr {} in {name}: {} records, {} commit records ({} checkpoints in the run)",
            region.len(),
            offset / 512,
            scan.records,
            scan.commit_records,
            m.checkpoints
        );
        println!("check it with: xfs_logprint {name}");
    }
    Ok(())
}

pub fn logwrites(a: &LogwritesArgs) -> Result<(), String> {
    let (s, link) = a.scenario.load_with_link()?;
    let until = a.until.as_deref().map(|u| xlog::parse_duration("--until", u)).transpose()?;
    let LogWrites { entries, bytes, sim } = xlog::moment::logwrites_to(&s, Moment::until(until))?;
    std::fs::write(&a.out, &bytes).map_err(|e| format!("--out {}: {e}", a.out.display()))?;
    let count = |f: u64| entries.iter().filter(|e| e.flags & f != 0).count();
    let v = json!({
        "out": a.out.display().to_string(),
        "bytes": bytes.len(),
        "entries": entries.len(),
        "writes": entries.iter().filter(|e| e.nr_sectors > 0).count(),
        "flushes": count(logwrites::LOG_FLUSH_FLAG),
        "fua": count(logwrites::LOG_FUA_FLAG),
        "marks": count(logwrites::LOG_MARK_FLAG),
        "log_start_sector": sim.log_start_sector(),
        "log_bb": sim.geometry().log_bb,
        "checkpoints": sim.metrics().checkpoints,
        "url": a.scenario.link_of(&s, link.as_ref()),
    });
    if a.json {
        crate::print_json(&v);
    } else {
        println!(
            "wrote {} entries ({} writes, {} flushes, {} FUA, {} marks) to {}",
            v["entries"], v["writes"], v["flushes"], v["fua"], v["marks"], v["out"]
        );
    }
    Ok(())
}
