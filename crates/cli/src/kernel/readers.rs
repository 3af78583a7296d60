//! The three readers of a crashed image's log besides the kernel's mount: the model's recovery
//! (`loglab recover --image`, run as a separate process so a damaged log is its exit status),
//! `xfs_logprint -t`, and `xfs_repair -n` for the filesystem the mount left.

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// The model's recovery over an image: head, tail, records and the transactions it would
/// replay (with their items: `strip_transactions` leaves the count), or
/// `{"damaged": why}` (exit 1) or `{"error": why}`.
pub fn model_recover(img: &Path) -> Value {
    let Ok(exe) = std::env::current_exe() else { return json!({ "error": "loglab itself not found" }) };
    match Command::new(exe).args(["recover", "--json", "--image"]).arg(img).output() {
        Ok(o) if o.status.success() => {
            let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
            let keep = [
                "state",
                "tail_blk",
                "head_blk",
                "records",
                "transactions_committed",
                "torn_head_trimmed",
                "transactions",
            ];
            Value::Object(keep.iter().filter_map(|k| Some((k.to_string(), v.get(*k)?.clone()))).collect())
        }
        Ok(o) => json!({ "damaged": String::from_utf8_lossy(&o.stderr).trim() }),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

/// `xfs_logprint -t`'s summary ("    log tail: 2 head: 258 state: <DIRTY>") and its records.
pub fn logprint(img: &Path, logdev: Option<&str>) -> Value {
    let mut c = Command::new("xfs_logprint");
    c.arg("-t");
    if let Some(l) = logdev {
        c.args(["-l", l]);
    }
    let text = c.arg(img).output().map(|o| String::from_utf8_lossy(&o.stdout).to_string()).unwrap_or_default();
    let summary = text.lines().find(|l| l.contains("log tail:")).unwrap_or("");
    let w: Vec<&str> = summary.split_whitespace().collect();
    let num = |i: usize| w.get(i).and_then(|x| x.parse::<u64>().ok());
    let records = text.lines().filter(|l| l.trim_start().starts_with("LOG REC AT LSN")).count();
    json!({
        "tail_blk": num(2),
        "head_blk": num(4),
        "state": w.get(6).map(|s| s.trim_matches(['<', '>']).to_lowercase()),
        "records": records,
    })
}

/// Whether the model found the head, tail and records `xfs_logprint` reports.
pub fn agree(model: &Value, logprint: &Value) -> bool {
    model.get("head_blk").is_some() && ["tail_blk", "head_blk", "records"].iter().all(|k| model[k] == logprint[k])
}

/// `xfs_repair -n` over a device: "clean", or what went wrong.
pub fn repair_n(dev: &str, logdev: Option<&str>) -> String {
    let mut c = Command::new("xfs_repair");
    c.arg("-n");
    if let Some(l) = logdev {
        c.args(["-l", l]);
    }
    match c.arg(dev).output() {
        Ok(o) if o.status.success() => "clean".into(),
        Ok(o) => format!("found problems (exit {})", o.status.code().unwrap_or(-1)),
        Err(e) => format!("not run: {e}"),
    }
}

/// Replaces a recovery's `transactions` list by its length, once it has been compared.
pub fn strip_transactions(v: &mut Value) {
    if let Some(t) = v.get_mut("transactions") {
        *t = json!(t.as_array().map_or(0, Vec::len));
    }
}
