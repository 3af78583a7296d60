//! loglab's output held against real tools and pipelines: xfs_logprint on an exported
//! image, the source thread 003 awk pipeline on our trace, dm-log-writes ordering, scenario links.

use assert_cmd::Command;
use serde_json::Value;
use std::process;

fn loglab() -> Command {
    Command::cargo_bin("loglab").unwrap()
}

fn json(args: &[&str]) -> Value {
    let out = loglab().args(args).assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

/// A file of this run in the temporary directory (each test removes its own).
fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("loglab-tools-{}-{name}", process::id()))
}

#[test]
fn xfs_logprint_parses_an_exported_log() {
    let img = tmp("fsync.img");
    std::fs::File::create(&img).unwrap().set_len(1 << 30).unwrap();
    let mk = process::Command::new("mkfs.xfs").args(["-q", "-f"]).arg(&img).status().expect("mkfs.xfs runs");
    assert!(mk.success());
    // A fresh image: xfs_logprint shows mkfs's unmount record.
    let fresh = process::Command::new("xfs_logprint").arg(&img).output().expect("xfs_logprint runs");
    assert!(String::from_utf8_lossy(&fresh.stdout).contains("Unmount filesystem"));
    let v = json(&[
        "export-image",
        "--image",
        img.to_str().unwrap(),
        "--preset",
        "fsync-heavy",
        "--duration",
        "500ms",
        "--json",
    ]);
    let commits = v["commit_records"].as_u64().unwrap();
    assert!(commits > 100, "{v}");
    let out = process::Command::new("xfs_logprint").arg(&img).output().expect("xfs_logprint runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "xfs_logprint failed: {}", &text[..text.len().min(2000)]);
    for bad in ["ERROR", "Bad log", "bad magic"] {
        assert!(!text.contains(bad), "xfs_logprint says {bad}");
    }
    let printed = text.lines().filter(|l| l.contains("clientid: TRANS") && l.contains("flags: COMMIT")).count() as u64;
    assert_eq!(printed, commits, "commit records: xfs_logprint {printed}, loglab {commits}");
    assert!(text.contains("TRAN:") && text.contains("BUF:"), "transactions and buffer items are decoded");
    let _ = std::fs::remove_file(&img);
}

/// `xfs_logprint -t`'s summary line: (tail block, head block, state).
fn logprint_summary(text: &str) -> (u64, u64, String) {
    let l = text.lines().find(|l| l.contains("log tail:")).expect("xfs_logprint prints log tail/head");
    let w: Vec<&str> = l.split_whitespace().collect();
    (w[2].parse().unwrap(), w[4].parse().unwrap(), w[6].trim_matches(['<', '>']).to_string())
}

#[test]
fn recover_image_agrees_with_xfs_logprint_and_reports_damage() {
    let img = tmp("recover.img");
    std::fs::File::create(&img).unwrap().set_len(1 << 30).unwrap();
    assert!(process::Command::new("mkfs.xfs").args(["-q", "-f"]).arg(&img).status().unwrap().success());
    let path = img.to_str().unwrap();
    let logprint = || {
        let out = process::Command::new("xfs_logprint").args(["-t", path]).output().expect("xfs_logprint runs");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    // mkfs's log: one unmount record (with a zero CRC, as mkfs writes it): clean.
    let fresh = json(&["recover", "--image", path, "--json"]);
    let (tail, head, state) = logprint_summary(&logprint());
    assert_eq!(state, "CLEAN");
    assert_eq!(fresh["state"], "clean", "{fresh}");
    assert_eq!((fresh["tail_blk"].as_u64().unwrap(), fresh["head_blk"].as_u64().unwrap()), (tail, head));
    // The model's log, exported: the same head, tail, records, transactions and buffers.
    loglab()
        .args(["export-image", "--image", path, "--preset", "fsync-heavy", "--duration", "200ms"])
        .assert()
        .success();
    let r = json(&["recover", "--image", path, "--json"]);
    let text = logprint();
    let (tail, head, state) = logprint_summary(&text);
    assert_eq!((state.as_str(), r["state"].as_str().unwrap()), ("DIRTY", "dirty"));
    assert_eq!((r["tail_blk"].as_u64().unwrap(), r["head_blk"].as_u64().unwrap()), (tail, head), "{r}");
    let count = |p: &str| text.lines().filter(|l| l.trim_start().starts_with(p)).count() as u64;
    assert_eq!(r["records"].as_u64().unwrap(), count("LOG REC AT LSN"));
    assert_eq!(r["transactions_replayed"].as_u64().unwrap(), count("TRANS: tid"));
    assert_eq!(r["buffers_replayed"].as_u64().unwrap(), count("BUF: cnt"));
    assert!(r["transactions_replayed"].as_u64().unwrap() > 0);
    // Each transaction as the kernel's pass 2 sees it: its items by type add up to
    // xfs_logprint's buffer items.
    let ts = r["transactions"].as_array().unwrap();
    assert_eq!(ts.len() as u64, count("TRANS: tid"), "{r}");
    let bufs: u64 = ts.iter().map(|t| t["items"]["XFS_LI_BUF"].as_u64().unwrap_or(0)).sum();
    let inodes: u64 = ts.iter().map(|t| t["items"]["XFS_LI_INODE"].as_u64().unwrap_or(0)).sum();
    assert_eq!(bufs + inodes, count("BUF: cnt") + count("INODE: cnt"), "{r}");
    // Damage: flip a byte inside the tail record (not the head): a CRC failure recovery cannot
    // trim away. Exit 1 and one line, no panic.
    let daddr = r["log_daddr"].as_u64().unwrap();
    let mut bytes = std::fs::read(&img).unwrap();
    let at = ((daddr + tail + 1) * 512 + 100) as usize;
    bytes[at] ^= 0xff;
    std::fs::write(&img, &bytes).unwrap();
    let out = loglab().args(["recover", "--image", path]).assert().code(1).get_output().clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("loglab: damaged log: ") && err.contains("CRC"), "{err}");
    // An image cut short of its log, and a file that is not XFS.
    std::fs::write(&img, &bytes[..(daddr as usize + 10) * 512]).unwrap();
    let out = loglab().args(["recover", "--image", path]).assert().code(1).get_output().clone();
    assert!(String::from_utf8_lossy(&out.stderr).contains("runs past the end of the image"));
    std::fs::write(&img, b"hello").unwrap();
    let out = loglab().args(["recover", "--image", path]).assert().code(2).get_output().clone();
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an XFS image"));
    let _ = std::fs::remove_file(&img);
}

#[test]
fn seed_003_awk_pipeline_counts_cil_waits_by_log_cycle() {
    let args = ["--preset", "cil-throttle-32mb", "--duration", "1s"];
    let sh = format!(
        "{} trace {} --event xfs_log_cil_wait | awk '/^ / {{print $23}}' | sort -n | uniq -c",
        assert_cmd::cargo::cargo_bin("loglab").display(),
        args.join(" ")
    );
    let out = process::Command::new("sh").args(["-c", &sh]).output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<(u64, u64)> = text
        .lines()
        .map(|l| {
            let mut it = l.split_whitespace().map(|x| x.parse::<u64>().expect("count and cycle are numbers"));
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect();
    assert!(!rows.is_empty(), "no xfs_log_cil_wait lines: {text}");
    let mut m = vec!["run", "--json"];
    m.extend(args);
    let metrics = json(&m);
    assert_eq!(rows.iter().map(|r| r.0).sum::<u64>(), metrics["cil_throttle_waits"].as_u64().unwrap());
    // $23 is the grant reserve cycle: log cycles start at 1 and only grow.
    assert!(rows.iter().all(|r| r.1 >= 1) && rows.windows(2).all(|w| w[0].1 < w[1].1), "{text}");
}

#[test]
fn logwrites_export_logs_each_checkpoint_before_its_mark() {
    let out = tmp("fsync.logwrites");
    let v = json(&[
        "export-logwrites",
        "--preset",
        "fsync-heavy",
        "--duration",
        "200ms",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let bytes = std::fs::read(&out).unwrap();
    let entries = xlog::logwrites::decode(&bytes).unwrap();
    assert_eq!(entries.len() as u64, v["entries"].as_u64().unwrap());
    let (start, log_bb) = (v["log_start_sector"].as_u64().unwrap(), v["log_bb"].as_u64().unwrap());
    // Replay like replay-log: apply entries in order; at each checkpoint mark the log region
    // must already hold that checkpoint's commit record (the commit iclog is FUA).
    let mut log = vec![0u8; log_bb as usize * 512];
    let mut marks = 0;
    for e in &entries {
        if e.flags & xlog::logwrites::LOG_MARK_FLAG != 0 {
            let name = String::from_utf8(e.data.clone()).unwrap();
            let n: u64 = name.strip_prefix("checkpoint-").unwrap().parse().unwrap();
            let scan = xlog::logscan::scan(&log);
            assert!(scan.commit_records > n, "at mark {name}: only {} commit records", scan.commit_records);
            marks += 1;
            continue;
        }
        for (i, chunk) in e.data.chunks(512).enumerate() {
            let s = e.sector + i as u64;
            if s >= start && s < start + log_bb {
                let o = (s - start) as usize * 512;
                log[o..o + 512].copy_from_slice(chunk);
            }
        }
    }
    assert_eq!(marks, v["checkpoints"].as_u64().unwrap());
    assert!(v["flushes"].as_u64().unwrap() > 0 && v["fua"].as_u64().unwrap() > 0);
    let _ = std::fs::remove_file(&out);
}

#[test]
fn links_encode_decode_and_drive_runs() {
    let url = String::from_utf8(
        loglab()
            .args(["url", "encode", "--preset", "fsmark-create", "--set", "writers=32"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    let url = url.trim();
    assert_eq!(url, "http://127.0.0.1:8080/?preset=fsmark-create&writers=32");
    let dec = json(&["url", "decode", url]);
    assert_eq!(dec["writers"], 32);
    assert_eq!(dec["workload"], "fsmark-create");
    let a = json(&["run", "--url", url, "--duration", "50ms", "--json"]);
    let b = json(&["run", "--preset", "fsmark-create", "--set", "writers=32", "--duration", "50ms", "--json"]);
    assert_eq!(a["trace_hash"], b["trace_hash"]);
}

#[test]
fn a_crash_example_link_reproduces_its_violation() {
    let v = json(&[
        "crash",
        "--preset",
        "small-crash",
        "--set",
        "device_bug=fua-ignored",
        "--crash-points",
        "30",
        "--json",
    ]);
    let ex = &v["examples"][0];
    let url = ex["url"].as_str().unwrap();
    let again = json(&["crash", "--url", url, "--json"]);
    assert_eq!(again["crash_states"], 1, "{again}");
    let name = ex["invariant"].as_str().unwrap();
    assert_eq!(again["violations"][name], 1, "{again}");
}

#[test]
fn sweep_runs_the_grid_and_keeps_the_varied_keys() {
    let v = json(&[
        "sweep",
        "--preset",
        "small-crash",
        "--duration",
        "50ms",
        "--vary",
        "log_size=2MiB,4MiB",
        "--vary",
        "writers=2,4",
        "--jobs",
        "2",
        "--json",
    ]);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[3]["log_size"], "4MiB");
    assert_eq!(rows[3]["writers"], "4");
    // Each row is that run's metrics: the same as running it alone.
    let alone = json(&[
        "run",
        "--preset",
        "small-crash",
        "--duration",
        "50ms",
        "--set",
        "log_size=4MiB",
        "--set",
        "writers=4",
        "--json",
    ]);
    assert_eq!(rows[3]["trace_hash"], alone["trace_hash"]);
}

/// Per transaction in `xfs_logprint -t`: (inode items, buffer items, bytes with op headers).
fn logprint_transactions(text: &str) -> Vec<(u64, u64, u64)> {
    let mut out: Vec<(u64, u64, u64)> = Vec::new();
    for l in text.lines() {
        if l.starts_with("TRANS:") {
            out.push((0, 0, 0));
        }
        let (Some(t), Some(kind)) = (out.last_mut(), l.split(':').next()) else { continue };
        if !matches!(kind, "INO" | "BUF" | "ICR") || !l.contains(" cnt:") {
            continue;
        }
        let lens: Vec<u64> =
            l.split("len:").skip(1).map(|s| s.split_whitespace().next().unwrap().parse().unwrap()).collect();
        t.2 += lens.iter().sum::<u64>() + 12 * lens.len() as u64;
        match kind {
            "INO" => t.0 += 1,
            "BUF" => t.1 += 1,
            _ => {}
        }
    }
    out
}

/// What 16 writers' creates log, read back by xfs_logprint: per checkpoint, a 256-byte inode
/// item per create plus the directory blocks it grew, and more per create as the directories
/// grow (the hash-ordered leaves). This machine's kernel, 16 threads creating `f<n>` in a
/// directory each (`xfs_logprint -t` after a shutdown), logged 293.8 bytes per create in its
/// first checkpoint and 307.7-308.1 once the directories held 20,000 entries, with 16 fully
/// logged node blocks and 350-410 buffers per 9 MB checkpoint.
/// `fsmark-create` run for `duration`, exported and read back by `xfs_logprint -t`: bytes
/// per create and buffers of each full checkpoint (the CIL's 8 MiB space limit; xfsaild's
/// log forces push smaller ones). 16 of the inode items are the directories' own.
fn fsmark_checkpoints(duration: &str) -> Vec<(f64, u64)> {
    let img = tmp(&format!("fsmark-{duration}.img"));
    std::fs::File::create(&img).unwrap().set_len(16 << 30).unwrap();
    let mk = process::Command::new("mkfs.xfs").args(["-q", "-f", "-l", "size=64m"]).arg(&img).status().unwrap();
    assert!(mk.success());
    let i = img.to_str().unwrap();
    json(&["export-image", "--image", i, "--preset", "fsmark-create", "--duration", duration, "--json"]);
    let out = process::Command::new("xfs_logprint").args(["-t", i]).output().expect("xfs_logprint runs");
    let _ = std::fs::remove_file(&img);
    let text = String::from_utf8_lossy(&out.stdout);
    let full = logprint_transactions(&text).into_iter().filter(|t| t.2 >= 8 << 20);
    full.map(|(ino, bufs, bytes)| (bytes as f64 / (ino - 16) as f64, bufs)).collect()
}

/// What 16 writers' creates log, read back by xfs_logprint: per checkpoint, a 256-byte inode
/// item per create plus the directory blocks it grew, and more per create as the directories
/// grow (the hash-ordered leaves). This machine's kernel, 16 threads creating `f<n>` in a
/// directory each (`xfs_logprint -t` after a shutdown), logged 293.8 bytes per create in its
/// first checkpoint and 307.7-308.1 once the directories held 20,000 entries, with 16 fully
/// logged node blocks and 350-410 buffers per 9 MB checkpoint.
#[test]
fn fsmark_checkpoints_log_what_the_kernels_creates_log() {
    let early = fsmark_checkpoints("150ms");
    let late = fsmark_checkpoints("700ms");
    assert!(early.len() >= 2 && !late.is_empty(), "full checkpoints: {early:?} {late:?}");
    for &(pc, bufs) in early.iter().chain(&late) {
        assert!((285.0..325.0).contains(&pc), "bytes per create {pc:.1}: {early:?} {late:?}");
        assert!((250..500).contains(&bufs), "buffers per checkpoint {bufs}: {early:?} {late:?}");
    }
    // The first checkpoint's directories hold ~1,800 entries each, the last ones' ~17,000.
    let (first, last) = (early[0].0, late[late.len() - 1].0);
    assert!(last > first + 5.0, "bigger directories log more per create: {first:.1} then {last:.1}");
}
