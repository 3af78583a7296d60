//! Golden trace: the first line of every event kind a small run prints, in trace-cmd text.
//! Regenerate after a deliberate format or model change with `UPDATE_GOLDEN=1 cargo test`.

use std::collections::BTreeSet;
use xlog::{find_preset, trace_cmd_header, Duration, Sim, TraceCmdPrinter, NS_PER_MS};

#[test]
fn trace_cmd_text_matches_the_golden_file() {
    let mut s = find_preset("small-crash").unwrap();
    s.duration = Duration(20 * NS_PER_MS);
    let mut sim = Sim::new(&s).unwrap();
    let mut p = TraceCmdPrinter::new("dbench");
    let mut seen = BTreeSet::new();
    let mut lines = Vec::new();
    while let Some(evs) = sim.step() {
        for ev in evs {
            if let Some(l) = p.line(ev) {
                let name = l.split(": ").nth(1).unwrap().to_string();
                if seen.insert(name) {
                    lines.push(l);
                }
            }
        }
    }
    let text = format!("{}{}\n", trace_cmd_header(lines.len() as u64), lines.join("\n"));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/small-crash.trace");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let want = std::fs::read_to_string(&path).expect("golden file (UPDATE_GOLDEN=1 creates it)");
    assert_eq!(text, want, "trace-cmd text changed; if deliberate, regenerate with UPDATE_GOLDEN=1");
    assert!(seen.len() >= 12, "only {} event kinds: {seen:?}", seen.len());
}

/// Every preset's whole-run trace hash, as this model version recorded it: a change that moves
/// any preset's trace must raise `xlog::MODEL_VERSION` and say why in docs/model-changes.md, so
/// a link made before it can tell its reader the model changed under it.
#[test]
fn every_presets_trace_is_the_one_this_model_version_recorded() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/preset-hashes.txt");
    let hashes: Vec<(String, String)> = std::thread::scope(|scope| {
        let runs: Vec<_> = xlog::PRESETS
            .iter()
            .map(|p| {
                scope.spawn(move || {
                    let mut sim = xlog::Sim::new(&p.scenario()).unwrap();
                    sim.run();
                    (p.name.to_string(), sim.metrics().trace_hash)
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut text = format!("model_version {}\n", xlog::MODEL_VERSION);
    for (name, hash) in &hashes {
        text += &format!("{name} {hash}\n");
    }
    let recorded = std::fs::read_to_string(&path).unwrap_or_default();
    let recorded_version: u32 = recorded
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("model_version "))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if std::env::var_os("UPDATE_GOLDEN").is_some() && text != recorded {
        assert!(
            recorded_version < xlog::MODEL_VERSION || recorded.lines().skip(1).eq(text.lines().skip(1)),
            "the preset traces moved: raise xlog::MODEL_VERSION (it is {}) and add its line to docs/model-changes.md first",
            xlog::MODEL_VERSION
        );
        std::fs::write(&path, &text).unwrap();
        return;
    }
    for (name, hash) in &hashes {
        let want = recorded.lines().find_map(|l| l.strip_prefix(&format!("{name} ")));
        assert_eq!(
            Some(hash.as_str()),
            want,
            "preset {name}'s trace moved (recorded at model version {recorded_version}): if deliberate, raise \
             xlog::MODEL_VERSION, add a line to docs/model-changes.md saying what and why, and rewrite \
             {} with UPDATE_GOLDEN=1",
            path.display()
        );
    }
    assert_eq!(recorded_version, xlog::MODEL_VERSION, "rewrite {} with UPDATE_GOLDEN=1", path.display());
}
