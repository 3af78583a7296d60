//! A synced append's two transactions on the kernel, and whether they went into one checkpoint
//! or two: its timestamp update (`xfs_vn_update_time`, `tr_fsyncts`) commits from the writer,
//! its I/O completion's conversion (`xfs_iomap_write_unwritten`, `tr_write`; `xfs_setfilesize`
//! where the blocks were written already) from an `xfs-conv` worker, and a CIL push that starts
//! between the two commits switches the context.

use super::threads::{event, pid_of, work_ptr};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Appends that logged both transactions, and those whose two went into two checkpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AppendPairs {
    pub pairs: u64,
    pub split: u64,
}

impl AppendPairs {
    /// The share of the pairs split over two checkpoints (None without pairs).
    pub fn share_split(&self) -> Option<f64> {
        (self.pairs > 0).then(|| self.split as f64 / self.pairs as f64)
    }
}

#[derive(Clone, Copy)]
enum Tx {
    Timestamp,
    Convert,
}

/// From the trace's `xfs_update_time`, `xfs_unwritten_convert` (or `xfs_setfilesize`),
/// `xfs_trans_commit` and the push work's `workqueue_execute_start` (the work items
/// `push_works`): each task's next commit after one of the first three is that transaction's;
/// a completion pairs with its inode's last timestamp commit. None when the trace has no
/// timestamp updates.
/// Measured: the push's start stands for its context switch, which follows once the push
/// takes `xc_ctx_lock` from the commits in progress (microseconds).
pub fn append_pairs(trace: &str, push_works: &BTreeSet<String>) -> Option<AppendPairs> {
    let mut pending = BTreeMap::<u64, (Tx, String)>::new();
    let mut stamped = BTreeMap::<String, f64>::new();
    let (mut last_push, mut seen) = (f64::NEG_INFINITY, false);
    let mut out = AppendPairs::default();
    for l in trace.lines() {
        let Some((t, head, ev, args)) = event(l) else { continue };
        let ino = || args.split_whitespace().skip_while(|w| *w != "ino").nth(1).map(str::to_string);
        match ev {
            "xfs_update_time" | "xfs_unwritten_convert" | "xfs_setfilesize" => {
                let (Some(pid), Some(ino)) = (pid_of(head), ino()) else { continue };
                seen |= ev == "xfs_update_time";
                let tx = if ev == "xfs_update_time" { Tx::Timestamp } else { Tx::Convert };
                pending.insert(pid, (tx, ino));
            }
            "xfs_trans_commit" => {
                let Some((tx, ino)) = pid_of(head).and_then(|p| pending.remove(&p)) else { continue };
                match tx {
                    Tx::Timestamp => {
                        stamped.insert(ino, t);
                    }
                    Tx::Convert => {
                        if let Some(t1) = stamped.remove(&ino) {
                            out.pairs += 1;
                            out.split += u64::from(last_push > t1);
                        }
                    }
                }
            }
            "workqueue_execute_start" if work_ptr(args).is_some_and(|p| push_works.contains(p)) => last_push = t,
            _ => {}
        }
    }
    seen.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real 6.18 trace-cmd text, shortened: inode 0x83's timestamp update commits, a push
    /// starts, its conversion commits (two checkpoints); the conversion's second commit finds
    /// 0x83's next timestamp commit and pairs with nothing. Inode 0x84's first update is
    /// followed by the push, but its second one is not, and its completion (a size update:
    /// the blocks were written) pairs with the last: one checkpoint. Another task commits
    /// between 0x84's second update and its own commit, before a push: were it taken for
    /// 0x84's, the pair would split. Another mount's push does not count. A conversion with no
    /// timestamp update before it is not a pair.
    #[test]
    fn a_push_started_between_an_appends_two_commits_splits_it() {
        let trace = "\
          loglab-30650   [001] ..... 100.000100: xfs_update_time: dev 7:1 ino 0x83 iflags 0x0
          loglab-30650   [001] ..... 100.000110: xfs_trans_commit: dev 7:1 trans 1a2b flags 0x4 caller xfs_trans_commit+0x1c/0x30 [xfs]
          loglab-30651   [000] ..... 100.000120: xfs_update_time: dev 7:1 ino 0x84 iflags 0x0
          loglab-30651   [000] ..... 100.000125: xfs_trans_commit: dev 7:1 trans 1a2c flags 0x4 caller xfs_trans_commit+0x1c/0x30 [xfs]
    kworker/u8:3-27659   [001] ..... 100.000200: workqueue_execute_start: work struct 000000005b011256: function xlog_cil_push_work
    kworker/1:2-300      [001] ..... 100.000300: xfs_unwritten_convert: dev 7:1 ino 0x83 isize 0x2000 disize 0x1000 pos 0x1000 bytecount 0x1000
    kworker/1:2-300      [001] ..... 100.000310: xfs_trans_commit: dev 7:1 trans 1a2d flags 0x5 caller xfs_trans_commit+0x1c/0x30 [xfs]
          loglab-30650   [001] ..... 100.000312: xfs_update_time: dev 7:1 ino 0x83 iflags 0x0
          loglab-30650   [001] ..... 100.000315: xfs_trans_commit: dev 7:1 trans 1a2e flags 0x4 caller xfs_trans_commit+0x1c/0x30 [xfs]
    kworker/1:2-300      [001] ..... 100.000320: xfs_trans_commit: dev 7:1 trans 1a2f flags 0x5 caller xfs_trans_commit+0x1c/0x30 [xfs]
          loglab-30651   [000] ..... 100.000400: xfs_update_time: dev 7:1 ino 0x84 iflags 0x0
          loglab-30652   [001] ..... 100.000405: xfs_trans_commit: dev 7:1 trans 1a30 flags 0x4 caller xfs_trans_commit+0x1c/0x30 [xfs]
    kworker/u8:3-27659   [001] ..... 100.000407: workqueue_execute_start: work struct 000000005b011256: function xlog_cil_push_work
          loglab-30651   [000] ..... 100.000410: xfs_trans_commit: dev 7:1 trans 1a31 flags 0x4 caller xfs_trans_commit+0x1c/0x30 [xfs]
    kworker/u8:1-27000   [000] ..... 100.000450: workqueue_execute_start: work struct 00000000deadbeef: function xlog_cil_push_work
    kworker/0:2-301      [000] ..... 100.000500: xfs_setfilesize: dev 7:1 ino 0x84 isize 0x3000 disize 0x2000 pos 0x2000 bytecount 0x1000
    kworker/0:2-301      [000] ..... 100.000510: xfs_trans_commit: dev 7:1 trans 1a32 flags 0x5 caller xfs_trans_commit+0x1c/0x30 [xfs]
    kworker/0:2-301      [000] ..... 100.000600: xfs_unwritten_convert: dev 7:1 ino 0x85 isize 0x3000 disize 0x2000 pos 0x2000 bytecount 0x1000
    kworker/0:2-301      [000] ..... 100.000610: xfs_trans_commit: dev 7:1 trans 1a33 flags 0x5 caller xfs_trans_commit+0x1c/0x30 [xfs]
";
        let ours: BTreeSet<String> = ["000000005b011256".to_string()].into();
        let got = append_pairs(trace, &ours).unwrap();
        assert_eq!(got, AppendPairs { pairs: 2, split: 1 });
        assert_eq!(got.share_split(), Some(0.5));
        assert_eq!(append_pairs("", &ours), None, "no timestamp updates traced: nothing to say");
    }
}
