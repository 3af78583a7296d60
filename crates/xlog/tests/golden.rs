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
