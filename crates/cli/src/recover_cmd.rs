//! `loglab recover --image FILE`: the model's log recovery over the internal log of a real XFS
//! image, found through its superblock. It reads the bytes only: head and tail by cycle
//! numbers, records walked, what would be replayed, and the kernel's messages for it.

use crate::xfs_image;
use clap::Args;
use serde_json::json;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct RecoverArgs {
    /// An XFS image with an internal log (e.g. one `export-image` wrote, or a crashed filesystem's).
    #[arg(long)]
    image: PathBuf,
    #[arg(long)]
    json: bool,
}

/// Why recover stopped: the image cannot be read as asked (exit 2), or its log is damaged
/// beyond what recovery can walk (exit 1).
enum Stop {
    Usage(String),
    Damaged(String),
}

pub fn main(a: &RecoverArgs) -> ExitCode {
    match run(a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Stop::Usage(e)) => {
            eprintln!("loglab: error: {e}");
            ExitCode::from(2)
        }
        Err(Stop::Damaged(e)) => {
            eprintln!("loglab: damaged log: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(a: &RecoverArgs) -> Result<(), Stop> {
    let name = a.image.display().to_string();
    let mut f = File::open(&a.image).map_err(|e| Stop::Usage(format!("--image {name}: {e}")))?;
    let sb = xfs_image::read_sb(&mut f).map_err(|e| Stop::Usage(format!("--image {name}: {e}")))?;
    if sb.logstart == 0 {
        return Err(Stop::Usage(format!(
            "--image {name}: the filesystem has an external log; recover reads an internal one"
        )));
    }
    let (offset, len) = (sb.log_offset(), sb.log_bytes());
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    if offset.checked_add(len).is_none_or(|end| end > size) {
        return Err(Stop::Damaged(format!(
            "--image {name}: the log ({len} bytes at byte {offset}) runs past the end of the image ({size} bytes)"
        )));
    }
    let mut log = vec![0u8; len as usize];
    f.seek(SeekFrom::Start(offset))
        .and_then(|_| f.read_exact(&mut log))
        .map_err(|e| Stop::Usage(format!("--image {name}: {e}")))?;
    let region = xlog::recover_log_region(&log).map_err(|e| Stop::Damaged(format!("{name}: {e}")))?;
    let mut r = region.report;
    if r.clean {
        // xlog_check_unmount_rec: a clean log's tail moves past the unmount record, to the head.
        r.tail_blk = r.head_blk;
    }
    let dev = a.image.file_name().map_or(name.clone(), |n| n.to_string_lossy().into_owned());
    let messages = r.kernel_messages(&dev);
    let state = if r.empty {
        "empty"
    } else if r.clean {
        "clean"
    } else {
        "dirty"
    };
    if a.json {
        crate::print_json(&json!({
            "image": name,
            "log_daddr": offset / 512,
            "log_blocks": sb.logblocks,
            "log_bytes": len,
            "state": state,
            "head_blk": r.head_blk,
            "tail_blk": r.tail_blk,
            "head_lsn": r.head_lsn.to_string(),
            "tail_lsn": r.tail_lsn.to_string(),
            "records": r.records,
            "transactions_replayed": r.transactions_replayed,
            "transactions_uncommitted": r.transactions_uncommitted,
            "transactions_committed": region.committed,
            // What the kernel's pass 2 would hand to each item's recovery, transaction by
            // transaction (its `xfs_log_recover_item_recover` events, grouped).
            "transactions": region.transactions.iter().map(|t| json!({
                "tid": format!("{:#x}", t.tid),
                "lsn": t.lsn.to_string(),
                "items": match &t.items {
                    Ok(m) => json!(m.iter().map(|(&ty, &n)| (xlog::log_item_name(ty), json!(n))).collect::<serde_json::Map<_, _>>()),
                    Err(e) => json!({ "unreadable": e }),
                },
            })).collect::<Vec<_>>(),
            "not_replayed": region.not_replayed,
            "buffers_replayed": r.replayed.len(),
            // Where replay leaves each item's last logged version (data-device sector).
            "replayed_blocks": r.writes.iter().map(|(&sector, &(item, version, lsn))| json!({
                "sector": sector, "item": item, "version": version, "lsn": lsn.to_string(),
            })).collect::<Vec<_>>(),
            "regions_skipped_by_lsn": r.regions_skipped_by_lsn,
            "cancel_records": r.cancel_records,
            "buffers_cancelled": r.buffers_cancelled,
            "torn_head_trimmed": r.torn_head_trimmed,
            "tail_overwrite_skipped": r.tail_overwrite_skipped,
            "kernel_messages": messages,
        }));
        return Ok(());
    }
    println!(
        "{name}: internal log at daddr {}, {} blocks of {} bytes ({len} bytes)",
        offset / 512,
        sb.logblocks,
        sb.blocksize
    );
    match state {
        "empty" => println!("log: empty (no record has ever been written)"),
        "clean" => println!("log: clean (the last record is an unmount record): nothing to replay"),
        _ => println!("log: dirty: recovery would replay it"),
    }
    if !r.empty {
        println!("head {} (block {}), tail {} (block {})", r.head_lsn, r.head_blk, r.tail_lsn, r.tail_blk);
        println!("records walked from tail to head: {}", r.records);
    }
    if let Some(why) = &region.not_replayed {
        println!(
            "{} committed transactions, {} without a commit record; their items are not the model's, so it does not replay them ({why})",
            region.committed, r.transactions_uncommitted
        );
    } else if state == "dirty" {
        println!(
            "checkpoints to replay: {} committed transactions ({} buffer items), {} without a commit record (dropped)",
            r.transactions_replayed,
            r.replayed.len(),
            r.transactions_uncommitted
        );
        println!(
            "skipped: {} regions older than their block's LSN, {} buffers under cancel records ({} cancel records)",
            r.regions_skipped_by_lsn, r.buffers_cancelled, r.cancel_records
        );
        println!(
            "torn head trimmed: {}; overwritten tail skipped: {}",
            if r.torn_head_trimmed { "yes" } else { "no" },
            if r.tail_overwrite_skipped { "yes" } else { "no" }
        );
    }
    for m in &messages {
        println!("  {m}");
    }
    Ok(())
}
