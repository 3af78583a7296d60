//! The log's kernel threads on this machine's CPUs: how much CPU time each kind of the log's
//! own work takes (the CIL push, iclog completion, I/O completion, the log worker, xfsaild),
//! from a `kernel run`'s workqueue and scheduler events.

use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The log's workqueue functions a run times: (report key, function, its workqueue's name
/// before `/<dev>`).
pub const LOG_WORK: [(&str, &str, &str); 6] = [
    // `xlog_cil_push_now`: one run per checkpoint (or more, when it sleeps and is requeued).
    ("cil_push", "xlog_cil_push_work", "xfs-cil"),
    // `xlog_end_io` queues it per iclog write: `xlog_state_done_syncing`, and for the iclog
    // that completes a checkpoint its callbacks (`xlog_cil_committed`: the items into the AIL).
    ("iclog_completion", "xlog_ioend_work", "xfs-log"),
    // `xfs_end_bio` queues it for a write needing a transaction at completion: unwritten
    // extent conversion (`xfs_iomap_write_unwritten`), a size update (`xfs_setfilesize`).
    ("ioend_completion", "xfs_end_io", "xfs-conv"),
    // `xfs_log_worker`: every 30 s (`xfs_syncd_centisecs`), a log force and covering.
    ("log_worker", "xfs_log_worker", "xfs-sync"),
    // `xfs_buf_bio_end_io` queues it per metadata buffer written (`xfs_buf_ioend`: its items
    // leave the AIL), on the per-CPU queue of the CPU the bio completed on.
    ("buf_completion", "xfs_buf_ioend_work", "xfs-buf"),
    // The loop device's backing file's direct-I/O completions (`iomap_dio_bio_end_io`), on its
    // host disk's `dio/<disk>` queue (any disk's: `LOOP_DIO_WQ`), which complete the loop's
    // requests and so the log's and the buffers' bios.
    ("loop_completion", "iomap_dio_complete_work", LOOP_DIO_WQ),
];

/// The workqueue of the loop device's completions, named after the host disk under its file
/// rather than the mount: every `dio/...` queue counts.
const LOOP_DIO_WQ: &str = "dio/";

/// The parts of a thread's time, in seconds: on a CPU, runnable waiting for one, asleep.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Split {
    pub cpu: f64,
    pub runnable: f64,
    pub asleep: f64,
}

impl Split {
    fn add(&mut self, st: St, secs: f64) {
        match st {
            St::On => self.cpu += secs,
            St::Runnable => self.runnable += secs,
            St::Asleep => self.asleep += secs,
        }
    }
    pub fn sum(parts: &[Split]) -> Split {
        parts.iter().fold(Split::default(), |mut s, p| {
            s.cpu += p.cpu;
            s.runnable += p.runnable;
            s.asleep += p.asleep;
            s
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    On,
    Runnable,
    Asleep,
}

/// A trace line's timestamp, event name and arguments.
pub(super) fn event(l: &str) -> Option<(f64, &str, &str, &str)> {
    let (head, rest) = l.split_once(": ")?;
    let (event, args) = rest.split_once(": ")?;
    let ts = head.trim_end().trim_end_matches(':').rsplit(' ').next()?.parse::<f64>().ok()?;
    Some((ts, head, event, args))
}

fn field<'a>(args: &'a str, key: &str) -> Option<&'a str> {
    args.split_whitespace().find_map(|w| w.strip_prefix(key))
}

/// The pid of the task a trace line's head names (`kworker/u8:3-27659   [001] ...`).
pub(super) fn pid_of(head: &str) -> Option<u64> {
    head.split_whitespace().next()?.rsplit('-').next()?.parse().ok()
}

/// The work item a `workqueue_*` event names.
pub(super) fn work_ptr(args: &str) -> Option<&str> {
    args.strip_prefix("work struct")?.trim_start_matches(['=', ' ']).split([' ', ':']).next()
}

/// Each run of the work items `works` (`workqueue_execute_start` to `_end`), split by the
/// scheduler's events (`sched_switch` out with `prev_state` R is a preemption, any other a
/// sleep; `sched_waking` ends a sleep). A run the trace does not see end counts what it saw.
/// None without scheduler events in the trace.
pub fn work_runs(trace: &str, works: &BTreeSet<String>) -> Option<Vec<Split>> {
    // pid -> (this run's parts so far, state, since)
    let mut running = BTreeMap::<u64, (Split, St, f64)>::new();
    let mut runs = Vec::new();
    let mut seen_sched = false;
    let close = |running: &mut BTreeMap<u64, (Split, St, f64)>, pid: u64, next: St, t: f64| {
        if let Some((split, st, since)) = running.get_mut(&pid) {
            split.add(*st, t - *since);
            (*st, *since) = (next, t);
        }
    };
    for l in trace.lines() {
        let Some((t, head, event, args)) = event(l) else { continue };
        match event {
            "workqueue_execute_start" | "workqueue_execute_end" => {
                let (Some(pid), Some(ptr)) = (pid_of(head), work_ptr(args)) else { continue };
                if !works.contains(ptr) {
                    continue;
                }
                if event == "workqueue_execute_start" {
                    running.insert(pid, (Split::default(), St::On, t));
                } else if let Some((mut split, st, since)) = running.remove(&pid) {
                    split.add(st, t - since);
                    runs.push(split);
                }
            }
            "sched_switch" => {
                seen_sched = true;
                let Some((prev, next)) = args.split_once(" ==> ") else { continue };
                let runnable = prev.split_whitespace().any(|w| w.starts_with("prev_state=R"));
                if let Some(pid) = field(prev, "prev_pid=").and_then(|p| p.parse().ok()) {
                    close(&mut running, pid, if runnable { St::Runnable } else { St::Asleep }, t);
                }
                if let Some(pid) = field(next, "next_pid=").and_then(|p| p.parse().ok()) {
                    close(&mut running, pid, St::On, t);
                }
            }
            "sched_waking" => {
                seen_sched = true;
                if let Some(pid) = field(args, "pid=").and_then(|p| p.parse().ok()) {
                    if matches!(running.get(&pid), Some((_, St::Asleep, _))) {
                        close(&mut running, pid, St::Runnable, t);
                    }
                }
            }
            _ => {}
        }
    }
    runs.extend(running.into_values().map(|(split, _, _)| split));
    seen_sched.then_some(runs)
}

/// The work items of `function` queued on workqueue `wq` (`xfs-log/loop1`; ending in `/`, on
/// every workqueue whose name starts so).
pub fn works_of(trace: &str, function: &str, wq: &str) -> BTreeSet<String> {
    let space = if wq.ends_with('/') { "" } else { " " };
    let (f, q) = (format!("function={function} "), format!("workqueue={wq}{space}"));
    trace
        .lines()
        .filter(|l| l.contains(" workqueue_queue_work: ") && l.contains(&f) && l.contains(&q))
        .filter_map(|l| event(l).and_then(|(_, _, _, args)| work_ptr(args)).map(str::to_string))
        .collect()
}

/// A kernel thread's time (`comm`, as `xfsaild/loop1`) from the trace's scheduler events, from
/// its first switch in: on a CPU, runnable, asleep. None when the trace never runs it.
pub fn thread_split(trace: &str, comm: &str) -> Option<Split> {
    let mut state: Option<(St, f64)> = None;
    let mut split = Split::default();
    let (out, into, woken) = (format!("prev_comm={comm} "), format!("next_comm={comm} "), format!("comm={comm} "));
    let mut go = |next: St, t: f64, state: &mut Option<(St, f64)>| {
        if let Some((st, since)) = *state {
            split.add(st, t - since);
        }
        *state = Some((next, t));
    };
    for l in trace.lines() {
        let Some((t, _, event, args)) = event(l) else { continue };
        match event {
            "sched_switch" => {
                let Some((prev, next)) = args.split_once(" ==> ") else { continue };
                if format!("{prev} ").contains(&out) {
                    let runnable = prev.split_whitespace().any(|w| w.starts_with("prev_state=R"));
                    go(if runnable { St::Runnable } else { St::Asleep }, t, &mut state);
                } else if format!("{next} ").contains(&into) {
                    go(St::On, t, &mut state);
                }
            }
            "sched_waking" if args.starts_with(&woken) && matches!(state, Some((St::Asleep, _))) => {
                go(St::Runnable, t, &mut state)
            }
            _ => {}
        }
    }
    state.map(|_| split)
}

fn ms(secs: f64) -> f64 {
    (secs * 1e6).round() / 1e3
}

/// Sorted `v` at quantile `p`.
fn quantile(v: &[f64], p: f64) -> f64 {
    v.get(((v.len() as f64 * p) as usize).min(v.len().saturating_sub(1))).copied().unwrap_or(0.0)
}

/// Every log work function's runs on mount `dev` (`loop1`), and xfsaild's time, with their CPU
/// time per run; `units` adds, per report key, a count of what the work did (`name`: `n`) and
/// its CPU per one (`cpu_us_per_<one>`). Null without scheduler events.
pub fn kernel_threads(trace: &str, dev: &str, units: &[(&str, &str, &str, u64)]) -> Value {
    let mut out = Map::new();
    for (key, function, wq) in LOG_WORK {
        let wq = if wq == LOOP_DIO_WQ { wq.to_string() } else { format!("{wq}/{dev}") };
        let works = works_of(trace, function, &wq);
        let Some(runs) = work_runs(trace, &works) else { return Value::Null };
        let total = Split::sum(&runs);
        let mut cpu_us: Vec<f64> = runs.iter().map(|r| r.cpu * 1e6).collect();
        cpu_us.sort_by(f64::total_cmp);
        let per = |n: f64| if n > 0.0 { (total.cpu * 1e6 / n * 1e3).round() / 1e3 } else { 0.0 };
        out.insert(
            key.into(),
            json!({
                "runs": runs.len(),
                "cpu_ms": ms(total.cpu),
                "runnable_ms": ms(total.runnable),
                "asleep_ms": ms(total.asleep),
                "cpu_us_per_run": per(runs.len() as f64),
                "cpu_us_per_run_p50": (quantile(&cpu_us, 0.5) * 1e3).round() / 1e3,
                "cpu_us_per_run_p99": (quantile(&cpu_us, 0.99) * 1e3).round() / 1e3,
            }),
        );
    }
    let aild = thread_split(trace, &format!("xfsaild/{dev}")).unwrap_or_default();
    out.insert("xfsaild".into(), json!({ "cpu_ms": ms(aild.cpu), "runnable_ms": ms(aild.runnable) }));
    for &(key, name, one, n) in units {
        if let Some(Value::Object(o)) = out.get_mut(key) {
            let cpu_ms = o.get("cpu_ms").and_then(Value::as_f64).unwrap_or(0.0);
            o.insert(name.into(), json!(n));
            let per = if n > 0 { (cpu_ms * 1e3 / n as f64 * 1e3).round() / 1e3 } else { 0.0 };
            o.insert(format!("cpu_us_per_{one}"), json!(per));
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real 6.18 trace-cmd text, shortened: an iclog completion on this mount runs 30 us,
    /// sleeps 100 us, waits runnable 20 us and runs 10 us more; another mount's is not counted;
    /// a loop completion on the host disk's queue runs 3 us; xfsaild runs 50 us, is preempted
    /// for 25 us, runs 5 us and sleeps.
    #[test]
    fn each_log_work_and_xfsaild_get_their_cpu_time_from_the_scheduler() {
        let trace = "\
    kworker/1:1H-70    [001] d..2. 100.000000: workqueue_queue_work: work struct=00000000aaaa0001 function=xlog_ioend_work workqueue=xfs-log/loop1 req_cpu=1 cpu=1
    kworker/1:1H-70    [001] d..2. 100.000000: workqueue_queue_work: work struct=00000000bbbb0001 function=xlog_ioend_work workqueue=xfs-log/loop7 req_cpu=1 cpu=1
    kworker/1:1H-70    [001] ..... 100.000010: workqueue_execute_start: work struct 00000000aaaa0001: function xlog_ioend_work
    kworker/1:1H-70    [001] d..2. 100.000040: sched_switch: prev_comm=kworker/1:1H prev_pid=70 prev_prio=100 prev_state=D ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0     [000] dNh4. 100.000140: sched_waking: comm=kworker/1:1H pid=70 prio=100 target_cpu=001
          loglab-9     [001] d..2. 100.000160: sched_switch: prev_comm=loglab prev_pid=9 prev_prio=120 prev_state=R+ ==> next_comm=kworker/1:1H next_pid=70 next_prio=100
    kworker/1:1H-70    [001] ..... 100.000170: workqueue_execute_end: work struct 00000000aaaa0001: function xlog_ioend_work
    kworker/0:2H-71    [000] ..... 100.000200: workqueue_execute_start: work struct 00000000bbbb0001: function xlog_ioend_work
    kworker/0:2H-71    [000] ..... 100.000900: workqueue_execute_end: work struct 00000000bbbb0001: function xlog_ioend_work
          <idle>-0     [001] dNs2. 100.000910: workqueue_queue_work: work struct=00000000cccc0001 function=iomap_dio_complete_work workqueue=dio/vda req_cpu=256 cpu=1
    kworker/1:12-72    [001] ..... 100.000920: workqueue_execute_start: work struct 00000000cccc0001: function iomap_dio_complete_work
    kworker/1:12-72    [001] ..... 100.000923: workqueue_execute_end: work struct 00000000cccc0001: function iomap_dio_complete_work
          loglab-9     [000] d..2. 100.001000: sched_switch: prev_comm=loglab prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=xfsaild/loop1 next_pid=80 next_prio=120
   xfsaild/loop1-80    [000] d..2. 100.001050: sched_switch: prev_comm=xfsaild/loop1 prev_pid=80 prev_prio=120 prev_state=R+ ==> next_comm=loglab next_pid=9 next_prio=120
          loglab-9     [000] d..2. 100.001075: sched_switch: prev_comm=loglab prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=xfsaild/loop1 next_pid=80 next_prio=120
   xfsaild/loop1-80    [000] d..2. 100.001080: sched_switch: prev_comm=xfsaild/loop1 prev_pid=80 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
";
        let v = kernel_threads(trace, "loop1", &[("iclog_completion", "iclog_writes", "iclog_write", 2)]);
        let ic = &v["iclog_completion"];
        assert_eq!(ic["runs"], 1, "{v}");
        assert_eq!(ic["cpu_ms"], 0.04, "{v}");
        assert_eq!(ic["runnable_ms"], 0.02, "{v}");
        assert_eq!(ic["asleep_ms"], 0.1, "{v}");
        assert_eq!(ic["cpu_us_per_iclog_write"], 20.0, "{v}");
        assert_eq!(v["xfsaild"]["cpu_ms"], 0.055, "{v}");
        assert_eq!(v["xfsaild"]["runnable_ms"], 0.025, "{v}");
        assert_eq!(v["cil_push"]["runs"], 0);
        // The loop's completions run on its host disk's queue, whatever the mount.
        assert_eq!(
            (v["loop_completion"]["runs"].clone(), v["loop_completion"]["cpu_ms"].clone()),
            (1.into(), 0.003.into())
        );
        assert_eq!(v["buf_completion"]["runs"], 0);
        assert!(kernel_threads("", "loop1", &[]).is_null(), "no scheduler events, nothing to say");
    }
}
