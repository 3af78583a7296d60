//! What the kernel's own recovery did on a mount, from its tracepoints: the head and tail it
//! found (`xfs_log_recover`), the records it walked (`xfs_log_recover_record`, pass 1) and the
//! transactions it replayed with their items (`xfs_log_recover_item_recover`, pass 2), set
//! beside what the model's recovery (`recover --image --json`) found in the same bytes.

use super::readers;
use super::tracefs::{field, Instance};
use serde_json::{json, Map, Value};

const EVENTS: [&str; 3] = ["xfs_log_recover", "xfs_log_recover_record", "xfs_log_recover_item_recover"];

/// Runs `mount` (of `/dev/<loop_name>`, e.g. "loop3") with the kernel's recovery traced.
/// Returns what `mount` returned, what the kernel's recovery did, and the checks of `model`
/// (the model's `recover --image` of the same bytes) against it; both recoveries' transaction
/// lists are then reduced to their counts.
pub fn mount_traced<R>(
    loop_name: &str,
    model: &mut Value,
    mount: impl FnOnce() -> R,
) -> Result<(R, Value, Option<Value>), String> {
    let dev = super::rig::Rig::dev_t(loop_name)?;
    let events: Vec<(String, String)> = EVENTS.iter().map(|e| (format!("xfs/{e}"), format!("dev == {dev}"))).collect();
    // A checkpoint of a 32 MiB log holds tens of thousands of items: room for two passes.
    let inst = Instance::start(&format!("loglab-{}-recovery", std::process::id()), 32768, &events)?;
    let mounted = mount();
    let (text, lost) = inst.stop()?;
    inst.remove()?;
    // A partial trace cannot say what the kernel replayed.
    let mut kernel = if lost > 0 { json!({ "events_lost": lost }) } else { parse(&text) };
    let matches = agree(model, &kernel);
    readers::strip_transactions(model);
    readers::strip_transactions(&mut kernel);
    Ok((mounted, kernel, matches))
}

fn num(v: &str) -> Option<u64> {
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// An LSN as the kernel prints it (`0x` cycle << 32 | block) in the model's `cycle:block`.
fn lsn(v: &str) -> Option<String> {
    num(v).map(|l| format!("{}:{}", l >> 32, l & 0xffff_ffff))
}

/// The kernel's recovery from trace text: `{}` when it did not run (a clean log).
pub fn parse(text: &str) -> Value {
    let mut out = Map::new();
    let mut records = 0u64;
    // (tid, lsn) in the order pass 2 replayed them, each with its item types. Pass 2 traces
    // each item twice (`xlog_recover_commit_trans` queues it, `xlog_recover_items_pass2`
    // replays it), so the counts are halved. (Items cannot be told apart by address: `%p`
    // prints a 32-bit hash, and among 30,000 items of one checkpoint two of them collide.)
    let mut trans: Vec<((String, String), Map<String, Value>)> = Vec::new();
    for l in text.lines() {
        let Some((_, ev)) = l.split_once(": xfs_log_recover") else { continue };
        let (kind, rest) = ev.split_once(": ").unwrap_or((ev, ""));
        let w: Vec<&str> = rest.split_whitespace().collect();
        match kind {
            "" => {
                out.insert("head_blk".into(), json!(field(&w, "headblk").and_then(num)));
                out.insert("tail_blk".into(), json!(field(&w, "tailblk").and_then(num)));
            }
            "_record" => records += u64::from(field(&w, "pass") == Some("1")),
            "_item_recover" if field(&w, "pass") == Some("2") => {
                let (Some(tid), Some(lsn)) = (field(&w, "tid"), field(&w, "lsn").and_then(lsn)) else { continue };
                let ty = field(&w, "type").unwrap_or("?");
                let key = (tid.to_string(), lsn);
                if trans.last().is_none_or(|(k, _)| *k != key) {
                    trans.push((key, Map::new()));
                }
                let items = &mut trans.last_mut().expect("pushed").1;
                let n = items.get(ty).and_then(Value::as_u64).unwrap_or(0);
                items.insert(ty.to_string(), json!(n + 1));
            }
            _ => {}
        }
    }
    if out.is_empty() {
        return Value::Object(out);
    }
    out.insert("records".into(), json!(records));
    let halve = |items: Map<String, Value>| -> Map<String, Value> {
        items.into_iter().map(|(k, n)| (k, json!(n.as_u64().unwrap_or(0).div_ceil(2)))).collect()
    };
    out.insert(
        "transactions".into(),
        trans.into_iter().map(|((tid, lsn), items)| json!({ "tid": tid, "lsn": lsn, "items": halve(items) })).collect(),
    );
    Value::Object(out)
}

/// Named checks of the model's recovery against the kernel's on the same image. `None` when
/// either did not recover (a clean log, a failed mount, a log the model calls damaged).
pub fn agree(model: &Value, kernel: &Value) -> Option<Value> {
    let (mt, kt) = (model.get("transactions")?.as_array()?, kernel.get("transactions")?.as_array()?);
    let same = |k: &str| model.get(k) == kernel.get(k);
    let first_difference =
        mt.iter().zip(kt).position(|(a, b)| a != b).or((mt.len() != kt.len()).then_some(mt.len().min(kt.len())));
    Some(json!({
        "head_blk": same("head_blk"),
        "tail_blk": same("tail_blk"),
        "records": same("records"),
        "transactions_model": mt.len(),
        "transactions_kernel": kt.len(),
        // Same transactions, same order, same items by type: what the model would hand to
        // each item's recovery is what the kernel did.
        "transactions": first_difference.is_none(),
        "first_difference": first_difference.map(|i| json!({
            "index": i, "model": mt.get(i), "kernel": kt.get(i),
        })),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Pass 2 traces each item twice: queued (xlog_recover_commit_trans), then replayed
    // (xlog_recover_items_pass2).
    const TRACE: &str = "\
           mount-4242    [001] ..... 100.000001: xfs_log_recover: dev 7:3 headblk 0x2c0 tailblk 0x2\n\
           mount-4242    [001] ..... 100.000002: xfs_log_recover_record: dev 7:3 lsn 0x100000002 len 0x40 num_logops 0x9 pass 1\n\
           mount-4242    [001] ..... 100.000003: xfs_log_recover_record: dev 7:3 lsn 0x100000042 len 0x40 num_logops 0x3 pass 1\n\
           mount-4242    [001] ..... 100.000004: xfs_log_recover_item_recover: dev 7:3 tid 0x5eed lsn 0x100000002, pass 1, item 0x0000000012345678, item type XFS_LI_BUF item region count/total 2/2\n\
           mount-4242    [001] ..... 100.000005: xfs_log_recover_record: dev 7:3 lsn 0x100000002 len 0x40 num_logops 0x9 pass 2\n\
           mount-4242    [001] ..... 100.000006: xfs_log_recover_item_recover: dev 7:3 tid 0x5eed lsn 0x100000002, pass 2, item 0x0000000012345678, item type XFS_LI_BUF item region count/total 2/2\n\
           mount-4242    [001] ..... 100.000007: xfs_log_recover_item_recover: dev 7:3 tid 0x5eed lsn 0x100000002, pass 2, item 0x0000000012345679, item type XFS_LI_INODE item region count/total 2/2\n\
           mount-4242    [001] ..... 100.000008: xfs_log_recover_item_recover: dev 7:3 tid 0x5eed lsn 0x100000002, pass 2, item 0x000000001234567a, item type XFS_LI_INODE item region count/total 3/3\n\
           mount-4242    [001] ..... 100.000009: xfs_log_recover_item_recover: dev 7:3 tid 0x5eed lsn 0x100000002, pass 2, item 0x0000000012345678, item type XFS_LI_BUF item region count/total 2/2\n\
           mount-4242    [001] ..... 100.000010: xfs_log_recover_item_recover: dev 7:3 tid 0x5eed lsn 0x100000002, pass 2, item 0x0000000012345679, item type XFS_LI_INODE item region count/total 2/2\n\
           mount-4242    [001] ..... 100.000011: xfs_log_recover_item_recover: dev 7:3 tid 0x5eed lsn 0x100000002, pass 2, item 0x000000001234567a, item type XFS_LI_INODE item region count/total 3/3\n";

    #[test]
    fn the_kernels_recovery_is_read_from_its_tracepoints() {
        let k = parse(TRACE);
        assert_eq!(k["head_blk"], 0x2c0);
        assert_eq!(k["tail_blk"], 2);
        assert_eq!(k["records"], 2, "pass 1 walks each record once; pass 2 is not counted again");
        let t = &k["transactions"];
        assert_eq!(t.as_array().unwrap().len(), 1, "{t}");
        assert_eq!(t[0]["tid"], "0x5eed");
        assert_eq!(t[0]["lsn"], "1:2");
        assert_eq!(t[0]["items"], json!({ "XFS_LI_BUF": 1, "XFS_LI_INODE": 2 }), "pass 1's item is not counted");
        assert_eq!(parse("no recovery ran\n"), json!({}));
    }

    #[test]
    fn a_missing_or_reordered_transaction_is_the_first_difference() {
        let k = parse(TRACE);
        let mut m = k.clone();
        assert_eq!(agree(&m, &k).unwrap()["transactions"], true);
        m["transactions"][0]["items"]["XFS_LI_INODE"] = json!(1);
        let a = agree(&m, &k).unwrap();
        assert_eq!(a["transactions"], false);
        assert_eq!(a["first_difference"]["index"], 0);
        m["transactions"] = json!([]);
        assert_eq!(agree(&m, &k).unwrap()["first_difference"]["index"], 0);
        assert!(agree(&json!({ "damaged": "bad" }), &k).is_none());
    }
}
