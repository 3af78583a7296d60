//! Tidy: the model stays pure (no web, I/O, clock or thread dependencies) and documented.

use std::fs;
use std::path::Path;

const BANNED_DEPS: &[&str] = &[
    "wasm-bindgen",
    "web-sys",
    "js-sys",
    "yew",
    "gloo",
    "tokio",
    "async-std",
    "rayon",
    "crossbeam",
    "getrandom",
    "rand",
    "chrono",
    "time",
    "std-fs",
    "reqwest",
    "serde_json",
    "clap",
];

#[test]
fn model_crate_has_no_web_io_clock_or_thread_dependencies() {
    let manifest = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    for line in deps.lines().filter(|l| l.contains('=')) {
        let name = line.split('=').next().unwrap().trim();
        assert!(!BANNED_DEPS.contains(&name), "xlog must not depend on {name}");
    }
}

#[test]
fn model_sources_use_no_banned_apis_and_open_with_a_doc_line() {
    let banned = [
        ("HashMap", "BTreeMap (deterministic order)"),
        ("HashSet", "BTreeSet (deterministic order)"),
        ("Instant::now", "virtual time"),
        ("SystemTime", "virtual time"),
        ("std::thread", "task state machines"),
        ("std::fs", "the emulated device"),
        ("std::net", "nothing: the model does no I/O"),
        ("FIXME", "an issue"),
        ("should_panic", "an assertion on the error value"),
    ];
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 10);
    for path in files {
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("//! "), "{} must open with a //! line of responsibility", path.display());
        for (word, instead) in banned {
            assert!(!text.contains(word), "{} uses {word}: use {instead}", path.display());
        }
    }
}
