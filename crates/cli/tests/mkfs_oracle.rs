//! `loglab size` against the real `mkfs.xfs -N` (xfsprogs, installed by the test command) on a
//! grid of geometries: log blocks, minimum log blocks and AG geometry must match exactly, and
//! where mkfs refuses a geometry loglab must refuse it with the same message.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use std::process;

#[derive(Clone, Copy, Debug)]
struct Geo {
    size: &'static str,
    bs: u64,
    sect: u64,
    agcount: Option<u64>,
    dsu_k: u64,
    dsw: u64,
    lsu_k: u64,
    reflink: u8,
    rmapbt: u8,
    finobt: u8,
}

const BASE: Geo = Geo {
    size: "220g",
    bs: 4096,
    sect: 512,
    agcount: None,
    dsu_k: 0,
    dsw: 0,
    lsu_k: 0,
    reflink: 1,
    rmapbt: 0,
    finobt: 1,
};

fn grid() -> Vec<Geo> {
    let mut g = Vec::new();
    let sizes = ["300m", "512m", "1g", "4g", "16g", "64g", "128g", "220g", "1t", "4t"];
    for size in sizes {
        g.push(Geo { size, ..BASE });
    }
    for size in ["300m", "1g", "16g", "220g", "4t"] {
        for bs in [1024, 2048, 8192, 65536] {
            g.push(Geo { size, bs, ..BASE });
        }
    }
    for size in ["1g", "64g", "220g", "1t"] {
        g.push(Geo { size, sect: 4096, ..BASE });
        g.push(Geo { size, sect: 4096, bs: 16384, ..BASE });
    }
    for (size, n) in [("1g", 8), ("220g", 44), ("220g", 32), ("4t", 64), ("1g", 16), ("64g", 1), ("1g", 2000)] {
        g.push(Geo { size, agcount: Some(n), ..BASE });
    }
    for (size, su, sw) in
        [("220g", 64, 4), ("220g", 256, 4), ("220g", 512, 2), ("16g", 32, 8), ("1t", 128, 6), ("4g", 64, 4)]
    {
        g.push(Geo { size, dsu_k: su, dsw: sw, ..BASE });
    }
    for (size, lsu) in [("220g", 32), ("220g", 64), ("220g", 256), ("1g", 256), ("220g", 512), ("4t", 256)] {
        g.push(Geo { size, lsu_k: lsu, ..BASE });
    }
    for size in ["300m", "1g", "220g", "4t"] {
        g.push(Geo { size, reflink: 0, ..BASE });
        g.push(Geo { size, rmapbt: 1, ..BASE });
        g.push(Geo { size, rmapbt: 1, reflink: 0, ..BASE });
        g.push(Geo { size, finobt: 0, reflink: 0, ..BASE });
    }
    g.push(Geo { size: "299m", ..BASE });
    g.push(Geo { size: "1g", bs: 1024, rmapbt: 1, lsu_k: 64, ..BASE });
    g.push(Geo { size: "64g", sect: 4096, dsu_k: 64, dsw: 4, reflink: 0, ..BASE });
    g
}

fn bytes(size: &str) -> u64 {
    let (n, u) = size.split_at(size.len() - 1);
    let n: u64 = n.parse().unwrap();
    n << match u {
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => unreachable!(),
    }
}

fn mkfs(g: &Geo, file: &Path, log_size: Option<&str>) -> (bool, String) {
    let mut d = Vec::new();
    if let Some(n) = g.agcount {
        d.push(format!("agcount={n}"));
    }
    if g.dsu_k > 0 {
        d.push(format!("su={}k,sw={}", g.dsu_k, g.dsw));
    }
    let mut l = Vec::new();
    if g.lsu_k > 0 {
        l.push(format!("su={}k", g.lsu_k));
    }
    if let Some(s) = log_size {
        l.push(format!("size={s}"));
    }
    let mut cmd = process::Command::new("mkfs.xfs");
    cmd.args(["-N", "-f", "-b", &format!("size={}", g.bs), "-s", &format!("size={}", g.sect)]);
    cmd.args(["-m", &format!("reflink={},rmapbt={},finobt={}", g.reflink, g.rmapbt, g.finobt)]);
    if !d.is_empty() {
        cmd.args(["-d", &d.join(",")]);
    }
    if !l.is_empty() {
        cmd.args(["-l", &l.join(",")]);
    }
    let out = cmd.arg(file).output().expect("mkfs.xfs runs (installed by scripts/lab.sh test)");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

fn num_after(text: &str, key: &str) -> Option<u64> {
    let at = text.find(key)? + key.len();
    text[at..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().ok()
}

fn loglab(g: &Geo) -> (bool, Value, String) {
    let mut args = vec![
        "size".to_string(),
        "--json".into(),
        "--algo".into(),
        "xfsprogs-6.1".into(),
        "--fs-size".into(),
        g.size.to_string(),
        "--block-size".into(),
        g.bs.to_string(),
        "--sector-size".into(),
        g.sect.to_string(),
        "--reflink".into(),
        g.reflink.to_string(),
        "--rmapbt".into(),
        g.rmapbt.to_string(),
        "--finobt".into(),
        g.finobt.to_string(),
    ];
    if let Some(n) = g.agcount {
        args.extend(["--agcount".into(), n.to_string()]);
    }
    if g.dsu_k > 0 {
        args.extend(["--dsu".into(), format!("{}KiB", g.dsu_k), "--dsw".into(), g.dsw.to_string()]);
    }
    if g.lsu_k > 0 {
        args.extend(["--lsu".into(), format!("{}KiB", g.lsu_k)]);
    }
    let out = Command::cargo_bin("loglab").unwrap().args(&args).output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.success(), v, String::from_utf8_lossy(&out.stderr).to_string())
}

/// mkfs's first line that explains a refusal.
fn refusal(text: &str) -> String {
    text.lines()
        .find(|l| {
            !l.trim().is_empty()
                && !l.starts_with("Usage")
                && !l.starts_with("/*")
                && !l.starts_with(' ')
                && !l.starts_with('\t')
                && !l.starts_with('<')
        })
        .unwrap_or("")
        .trim()
        .to_string()
}

#[test]
fn loglab_size_matches_mkfs_xfs() {
    let dir = tempfile_dir();
    let grid = grid();
    assert!(grid.len() >= 60, "grid has {} geometries", grid.len());
    let mut compared = 0;
    let mut failures = Vec::new();
    for g in &grid {
        let file = dir.join(format!("img-{}", g.size));
        let f = std::fs::File::create(&file).unwrap();
        f.set_len(bytes(g.size)).unwrap();
        drop(f);
        let (ok, text) = mkfs(g, &file, None);
        let (lok, v, lerr) = loglab(g);
        if !ok {
            let why = refusal(&text);
            if lok || !lerr.contains(&why) {
                failures.push(format!("{g:?}: mkfs refused with '{why}', loglab said ok={lok} '{}'", lerr.trim()));
            }
            continue;
        }
        if !lok {
            failures.push(format!("{g:?}: mkfs accepted, loglab refused: {}", lerr.trim()));
            continue;
        }
        let (_, tiny) = mkfs(g, &file, Some("2m"));
        let want = (
            num_after(&text, "agcount="),
            num_after(&text, "agsize="),
            num_after(&text, "internal log           bsize=").and_then(|_| {
                let at = text.find("internal log")?;
                num_after(&text[at..], "blocks=")
            }),
            num_after(&tiny, "minimum size is "),
        );
        let got = (
            v["geometry"]["agcount"].as_u64(),
            v["geometry"]["agblocks"].as_u64(),
            v["log_blocks"].as_u64(),
            v["min_log_blocks"].as_u64(),
        );
        if want != got {
            failures.push(format!("{g:?}: mkfs (agcount, agsize, log, min) {want:?}, loglab {got:?}"));
        }
        compared += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{} geometries: {compared} sized by both, {} refused by both", grid.len(), grid.len() - compared);
    assert!(failures.is_empty(), "{} of {} differ:\n{}", failures.len(), grid.len(), failures.join("\n"));
    assert!(compared >= 55, "only {compared} geometries accepted by mkfs");
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("loglab-mkfs-{}", process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
