//! `loglab export-image` and `loglab export-logwrites`: the simulated log for real tools.

use crate::ScenarioArgs;
use clap::Args;
use serde_json::json;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
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
    #[arg(long)]
    json: bool,
}

/// The superblock fields that place the log (`struct xfs_dsb`, big-endian).
#[derive(Debug)]
struct Sb {
    blocksize: u64,
    uuid: [u8; 16],
    logstart: u64,
    agblocks: u64,
    logblocks: u64,
    agblklog: u32,
    logsectsize: u64,
    logsunit: u64,
}

fn be32(b: &[u8], o: usize) -> u64 {
    u32::from_be_bytes(b[o..o + 4].try_into().expect("4 bytes")) as u64
}

fn read_sb(b: &[u8]) -> Result<Sb, String> {
    if &b[0..4] != b"XFSB" {
        return Err("not an XFS image (no XFSB superblock magic at byte 0)".into());
    }
    let mut uuid = [0u8; 16];
    uuid.copy_from_slice(&b[32..48]);
    Ok(Sb {
        blocksize: be32(b, 4),
        uuid,
        logstart: u64::from_be_bytes(b[48..56].try_into().expect("8 bytes")),
        agblocks: be32(b, 84),
        logblocks: be32(b, 96),
        agblklog: b[124] as u32,
        logsectsize: u16::from_be_bytes([b[194], b[195]]) as u64,
        logsunit: be32(b, 196),
    })
}

pub fn image(a: &ImageArgs) -> Result<(), String> {
    let name = a.image.display().to_string();
    let mut f = OpenOptions::new().read(true).write(true).open(&a.image).map_err(|e| format!("--image {name}: {e}"))?;
    let mut sb = vec![0u8; 512];
    f.read_exact(&mut sb).map_err(|e| format!("--image {name}: {e}"))?;
    let sb = read_sb(&sb).map_err(|e| format!("--image {name}: {e}"))?;
    if sb.logstart == 0 {
        return Err(format!("--image {name}: the filesystem has an external log; export needs an internal one"));
    }
    if sb.logsectsize > 512 {
        return Err(format!("--image {name}: log sector size {} is not supported (512 only)", sb.logsectsize));
    }
    // The simulated log takes the image's geometry and identity.
    let mut s = a.scenario.load()?;
    s.external_log = false;
    s.log_size = Size(sb.logblocks * sb.blocksize);
    s.lsu = Size(if sb.logsunit > 1 { sb.logsunit } else { 0 });
    s.validate().map_err(|e| format!("--image {name}: this image's log does not fit the scenario: {e}"))?;
    let mut sim = Sim::new(&s)?;
    sim.set_uuid(sb.uuid)?;
    sim.run();
    let region = sim.log_region();
    let agno = sb.logstart >> sb.agblklog;
    let agbno = sb.logstart & ((1u64 << sb.agblklog) - 1);
    let offset = (agno * sb.agblocks + agbno) * sb.blocksize;
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
        "url": a.scenario.link(&s),
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
    let s = a.scenario.load()?;
    let mut sim = Sim::new(&s)?;
    sim.record_io();
    sim.run();
    let entries = logwrites::entries(sim.devices()[0].journal(), |tag| !Sim::is_file_data(tag));
    let bytes = logwrites::encode(&entries);
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
        "url": a.scenario.link(&s),
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
