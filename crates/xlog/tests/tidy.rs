//! Tidy: the model stays pure (no web, I/O, clock or thread dependencies) and documented.

use std::fs;
use std::path::{Path, PathBuf};

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
    let files = files_under(vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")]);
    assert!(files.len() > 10);
    for path in files {
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("//! "), "{} must open with a //! line of responsibility", path.display());
        for (word, instead) in banned {
            assert!(!text.contains(word), "{} uses {word}: use {instead}", path.display());
        }
    }
}

/// The model's layers, lowest first: a module may import its own layer (without cycles) or
/// any layer below, never one above.
const LAYERS: &[&[&str]] = &[
    &["units", "crc", "shard", "changes"],
    &["scenario"],
    &["format", "layout", "presets", "sectors"],
    &["geometry", "url"],
    // Leaf modules: each models one kernel structure or device.
    &[
        "device",
        "profile",
        "iclog",
        "grant",
        "log",
        "cil",
        "cpupool",
        "agi",
        "ail",
        "rtalloc",
        "sizing",
        "trace",
        "metrics",
        "logscan",
        "logwrites",
        "workqueue",
    ],
    // The one wiring module.
    &["sim"],
    // What runs on a simulation's results: recovery, the oracle, the crash explorer, printers.
    &["recovery", "oracle", "crash", "tracefmt", "links", "moment", "sweep"],
    &["lib"],
];

/// Every file under `dirs`, at any depth.
fn files_under(mut dirs: Vec<PathBuf>) -> Vec<PathBuf> {
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
    files
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The crate modules each source file names (`crate::x`), outside its `#[cfg(test)]` part.
fn imports(src: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for path in files_under(vec![src.to_path_buf()]) {
        let rel = path.strip_prefix(src).unwrap();
        // A module's tests in their own file (`device/tests.rs`) are all test code.
        if rel.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        // A file's module is its first path component (sim/push.rs is part of `sim`).
        let module = rel.iter().next().unwrap().to_str().unwrap().trim_end_matches(".rs").to_string();
        let text = fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + 7..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && name != module {
                out.push((module.clone(), name));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn model_layers_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = imports(&src);
    assert!(edges.len() > 30, "found only {} imports", edges.len());
    for (from, to) in &edges {
        let (Some(lf), Some(lt)) = (layer_of(from), layer_of(to)) else {
            panic!("{from} imports {to}: put every module in a layer in tests/tidy.rs");
        };
        assert!(lt <= lf, "{from} (layer {lf}) imports {to} (layer {lt}): imports point down only");
    }
    let only = |m: &str, allowed: &[&str]| {
        for (from, to) in edges.iter().filter(|(f, _)| f == m) {
            assert!(allowed.contains(&to.as_str()), "{from} imports {to}: it may import only {allowed:?}");
        }
    };
    only("scenario", &["units"]);
    // Recovery reads device bytes only: never the simulator's memory.
    only("recovery", &["format", "layout", "sectors", "device", "units"]);
    // Same-layer imports must not form a cycle.
    let same: Vec<(String, String)> = edges.iter().filter(|(f, t)| layer_of(f) == layer_of(t)).cloned().collect();
    let left = cycle_of(&same);
    assert!(left.is_empty(), "import cycle among {left:?}");
}

#[test]
fn a_wrong_way_import_is_caught() {
    // The checker itself: `log` importing `sim` would be a leaf reaching up.
    assert!(layer_of("sim").unwrap() > layer_of("log").unwrap());
    assert!(layer_of("units").unwrap() < layer_of("scenario").unwrap());
    assert!(layer_of("nonexistent").is_none());
}

/// The kernel objects whose state is private: (file, struct). Each changes only through its
/// methods, named after the kernel functions that change it.
const KERNEL_OBJECTS: &[(&str, &str)] = &[
    ("log.rs", "Xlog"),
    ("log.rs", "Iclog"),
    ("cil.rs", "Cil"),
    ("cil.rs", "CilCtx"),
    ("ail.rs", "Ail"),
    ("ail.rs", "Xfsaild"),
    ("workqueue.rs", "CilWorkqueue"),
    ("workqueue.rs", "IoendWork"),
    ("workqueue.rs", "DioCompleteWork"),
    ("cpupool.rs", "CpuPool"),
    ("cpupool.rs", "KthreadCpu"),
    ("agi.rs", "AgiLocks"),
    ("device/mod.rs", "Device"),
    ("sim/writer.rs", "Writer"),
    ("sim/push.rs", "Pusher"),
    ("sim/log_item.rs", "Item"),
    ("grant.rs", "Ticket"),
    ("rtalloc.rs", "RtAlloc"),
    ("sim/dir.rs", "Dir"),
];

/// The fields of `pub struct name` (or `pub(crate)`) in `text` that are visible outside its
/// module.
fn public_fields(text: &str, name: &str) -> Option<Vec<String>> {
    let start =
        text.find(&format!("pub struct {name} {{")).or_else(|| text.find(&format!("pub(crate) struct {name} {{")))?;
    let body = &text[start..];
    let body = &body[..body.find("\n}")?];
    Some(
        body.lines()
            .skip(1)
            .map(str::trim)
            .filter(|l| l.starts_with("pub ") || l.starts_with("pub("))
            .map(|l| l.split(':').next().unwrap_or(l).to_string())
            .collect(),
    )
}

#[test]
fn kernel_objects_keep_their_state_private() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (file, name) in KERNEL_OBJECTS {
        let text = fs::read_to_string(src.join(file)).unwrap();
        let fields = public_fields(&text, name).unwrap_or_else(|| panic!("{file} has no `pub struct {name}`"));
        assert!(fields.is_empty(), "{file}: {name} has fields open to other modules: {fields:?}");
    }
}

#[test]
fn an_open_field_is_caught() {
    let text = "pub struct Open {\n    /// doc\n    pub a: u32,\n    b: u32,\n    pub(crate) c: u8,\n}\n";
    assert_eq!(public_fields(text, "Open"), Some(vec!["pub a".to_string(), "pub(crate) c".to_string()]));
    assert_eq!(public_fields(text, "Missing"), None);
}

/// The names `text` takes from `super` (`super::x`, `super::{a, b::c}`): the first segment of
/// each path.
fn super_names(text: &str) -> Vec<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    for (i, _) in text.match_indices("super::") {
        let rest = &text[i + 7..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                out.extend(group.split(',').map(|p| ident(p.trim())).filter(|n| !n.is_empty()));
            }
            None => out.push(ident(rest)),
        }
    }
    out
}

/// What `mod.rs` re-exports from its files (`pub use x::{A, B}`, `use x::C`): item to file.
fn reexports(mod_rs: &str, files: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in mod_rs.lines().map(str::trim) {
        let Some(path) =
            ["pub use ", "pub(crate) use ", "pub(super) use ", "use "].iter().find_map(|p| line.strip_prefix(p))
        else {
            continue;
        };
        let Some((file, items)) = path.split_once("::") else { continue };
        if !files.iter().any(|f| f == file) {
            continue;
        }
        let items = items.trim_end_matches(';').trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',').map(str::trim).filter(|i| !i.is_empty() && *i != "self") {
            let name = item.rsplit(" as ").next().unwrap_or(item).rsplit("::").next().unwrap_or(item);
            out.push((name.trim().to_string(), file.to_string()));
        }
    }
    out
}

/// Within a module directory (`recovery/`, `oracle/`, `crash/`, `sim/`, `device/`): the sibling
/// files each file imports, outside its `#[cfg(test)]` part: named (`super::x`), or through
/// an item `mod.rs` re-exports from them (`super::{X}` where mod.rs has `pub use x::X`).
fn sibling_imports(dir: &Path) -> Vec<(String, String)> {
    let files: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_str().unwrap().to_string())
        .filter(|n| n != "mod")
        .collect();
    let mod_rs = fs::read_to_string(dir.join("mod.rs")).unwrap_or_default();
    let via = reexports(&mod_rs, &files);
    let mut out = Vec::new();
    for f in &files {
        let text = fs::read_to_string(dir.join(format!("{f}.rs"))).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for name in super_names(code) {
            let target = if files.contains(&name) {
                Some(name)
            } else {
                via.iter().find(|(item, _)| *item == name).map(|(_, file)| file.clone())
            };
            if let Some(t) = target.filter(|t| t != f) {
                out.push((f.clone(), t));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn imports_through_a_reexport_are_seen() {
    let files = vec!["image".to_string(), "point".to_string()];
    let via = reexports("mod image;\npub use image::{Image, SharedLog as Log};\nuse point::X;\n", &files);
    assert!(via.contains(&("Image".to_string(), "image".to_string())));
    assert!(via.contains(&("Log".to_string(), "image".to_string())));
    assert!(via.contains(&("X".to_string(), "point".to_string())));
    assert_eq!(
        super_names("use super::{cached_walk, image::Image};\nsuper::head::x"),
        ["cached_walk", "image", "head"]
    );
}

/// Edges left after repeatedly removing those into a module that imports nothing left: a cycle.
fn cycle_of(edges: &[(String, String)]) -> Vec<(String, String)> {
    let mut left = edges.to_vec();
    loop {
        let before = left.len();
        let sinks: Vec<String> =
            left.iter().map(|(_, t)| t.clone()).filter(|t| !left.iter().any(|(f, _)| f == t)).collect();
        left.retain(|(_, t)| !sinks.contains(t));
        if left.len() == before {
            return left;
        }
    }
}

#[test]
fn the_files_of_a_module_directory_import_one_another_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let recovery = sibling_imports(&src.join("recovery"));
    assert!(recovery.len() >= 6, "found only {recovery:?}");
    for dir in ["recovery", "oracle", "crash", "sim", "device"] {
        let edges = sibling_imports(&src.join(dir));
        assert!(cycle_of(&edges).is_empty(), "{dir}/: import cycle among {:?}", cycle_of(&edges));
    }
    let looped = [("a".to_string(), "b".to_string()), ("b".to_string(), "a".to_string())];
    assert_eq!(cycle_of(&looped).len(), 2, "the checker finds a cycle");
}

/// The layers split out of one large file stay small: no file of `device/` or `recovery/`
/// over 600 lines.
#[test]
fn the_device_and_recovery_files_stay_small() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for dir in ["device", "recovery"] {
        let files: Vec<_> = fs::read_dir(src.join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        assert!(files.len() >= 6, "{dir}/ has {} files", files.len());
        for path in files {
            let lines = fs::read_to_string(&path).unwrap().lines().count();
            assert!(lines <= 600, "{} has {lines} lines (at most 600)", path.display());
        }
    }
}

/// `Sim` is the event loop: its methods live in `sim/mod.rs` (building it, dispatching events
/// and CPUs), the front ends' door `sim/api.rs`, and one file per kernel task kind whose
/// steps it runs (`writer`, `push`, `logio`, `aild`). Everything a front end may call is in
/// `api.rs` (besides `new` and `step`); the rest is `pub(super)`. mod.rs stays small.
#[test]
fn the_event_loop_keeps_its_methods_in_few_files_and_its_door_in_one() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let mut holders = Vec::new();
    for e in fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let text = fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let code = text.split("#[cfg(test)]").next().unwrap();
        let mut in_impl = false;
        for line in code.lines() {
            if line == "impl Sim {" {
                in_impl = true;
                holders.push(name.clone());
            } else if line == "}" {
                in_impl = false;
            } else if in_impl && line.starts_with("    pub fn ") && name != "api.rs" {
                let allowed = name == "mod.rs" && (line.contains("fn new(") || line.contains("fn step("));
                assert!(allowed, "{name}: `{}` is public outside sim/api.rs", line.trim());
            }
        }
    }
    holders.sort();
    holders.dedup();
    assert!(holders.len() <= 6, "impl Sim in {} files (at most 6): {holders:?}", holders.len());
    let lines = fs::read_to_string(dir.join("mod.rs")).unwrap().lines().count();
    assert!(lines <= 350, "sim/mod.rs has {lines} lines (at most 350)");
}

/// ARCHITECTURE.md names every source file of the workspace (by its stem), so the map stays
/// true as files come and go.
#[test]
fn the_architecture_page_names_every_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let page = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let words: Vec<&str> = page.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
    let dirs = ["crates/xlog/src", "crates/cli/src", "crates/lessons/src", "src"];
    let mut missing = Vec::new();
    for path in files_under(dirs.iter().map(|d| root.join(d)).collect()) {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        if path.extension().is_some_and(|x| x == "rs") && !words.contains(&stem.as_str()) {
            missing.push(path.strip_prefix(&root).unwrap().display().to_string());
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "ARCHITECTURE.md does not name {missing:?}");
}
