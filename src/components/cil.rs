//! The CIL panel: the open context filling toward its push and throttle limits, the throttle
//! queue, and the checkpoints being pushed.

use crate::drawing::cil_bar;
use crate::palette;
use std::rc::Rc;
use xlog::CilView;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct CilProps {
    pub cil: Rc<CilView>,
}

fn ms(ns: u64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

/// The push workers' time so far as shares, largest first, as a kernel trace of their
/// blocking stacks would split it.
fn push_time(t: &[u64; 6]) -> String {
    const PARTS: [&str; 6] = [
        "on a CPU",
        "waiting for a free iclog",
        "waiting for an earlier iclog before the commit record",
        "waiting behind earlier checkpoints' records",
        "waiting for the data-device flush",
        "waiting for a CPU",
    ];
    let total: u64 = t.iter().sum();
    if total == 0 {
        return "no push yet".into();
    }
    let mut parts: Vec<(u64, &str)> = t.iter().copied().zip(PARTS).filter(|&(n, _)| n > 0).collect();
    parts.sort_by_key(|&(n, _)| std::cmp::Reverse(n));
    let shares: Vec<String> =
        parts.iter().map(|&(n, what)| format!("{what} {:.0}%", n as f64 * 100.0 / total as f64)).collect();
    format!("{} in all: {}", ms(total), shares.join(", "))
}

#[function_component(CilPanel)]
pub fn cil_panel(p: &CilProps) -> Html {
    let c = &p.cil;
    let (used, push, block) = cil_bar(c.space_used, c.space_limit, c.blocking_limit);
    // 6.0+: the part of the context the push check has counted so far, on the same scale.
    let counted =
        (c.pcp_fold > 0 && c.pcp_counting).then(|| used * c.space_counted.max(0) as f64 / c.space_used.max(1) as f64);
    let kib = |b: i64| b / 1024;
    let over = c.space_used >= c.blocking_limit as i64;
    // The waits and runs under way count: a student sees the queued push's wait grow here.
    let dispatch_longest = c.push_dispatch_max_ns.max(c.push_queued_ns.unwrap_or(0));
    let run_longest = c.pusher_running_ns.iter().copied().fold(c.push_run_max_ns, u64::max);
    html! {
        <div class="panel" data-testid="cil" style="margin-top:14px">
            <h2>{ format!("CIL — context {}", c.sequence) }</h2>
            <p class="what">{ "The Committed Item List (struct xfs_cil): transactions commit into the open context in memory; \
                once its counted space passes the push limit a worker writes it to the log as one checkpoint, past the throttle limit committers sleep on xc_push_wait." }</p>
            <svg viewBox="0 0 100 8" preserveAspectRatio="none" style="width:100%;height:26px" role="img"
                aria-label={format!("CIL space used {} KiB; push at {} KiB; throttle at {} KiB", kib(c.space_used), c.space_limit / 1024, c.blocking_limit / 1024)}>
                <rect x="0" y="1" width="100" height="6" fill={palette::TRACK} />
                <rect x="0" y="1" width={format!("{:.3}", used * 100.0)} height="6" fill={if over { palette::VERMILLION } else { palette::BLUISH_GREEN }} />
                if let Some(counted) = counted {
                    <rect data-testid="cil-counted-bar" x="0" y="5" width={format!("{:.3}", counted * 100.0)} height="2" fill={palette::BLUE} />
                }
                <rect x={format!("{:.3}", push * 100.0)} y="0" width="0.5" height="8" fill={palette::ORANGE} />
                <rect x={format!("{:.3}", block * 100.0)} y="0" width="0.5" height="8" fill={palette::VERMILLION} />
            </svg>
            <div class="legend">
                <span style={format!("--c:{}", palette::BLUISH_GREEN)}>{ format!("used {} KiB, {} items", kib(c.space_used), c.items) }</span>
                if counted.is_some() {
                    <span style={format!("--c:{}", palette::BLUE)}>{ format!("counted {} KiB (the CPUs hold the rest)", kib(c.space_counted)) }</span>
                }
                <span style={format!("--c:{}", palette::ORANGE)}>{ format!("push at {} KiB", c.space_limit / 1024) }</span>
                <span style={format!("--c:{}", palette::VERMILLION)}>{ format!("throttle at {} KiB", c.blocking_limit / 1024) }</span>
            </div>
            <table class="stats">
                <tr><td>{ "throttle queue (xc_push_wait)" }</td><td data-key="throttle-depth">{ c.throttled.len() }</td></tr>
                <tr><td>{ "push requested up to" }</td><td>{ c.push_seq }</td></tr>
                if c.pcp_fold > 0 {
                    <tr><td title="6.0+: each CPU counts its commits and adds them to the context's count (ctx->space_used) only past its share of the push limit, so the push check sees them late; once the count reaches the limit every CPU's is added and counting is exact">
                        { format!("counted for the push check (per-CPU counters, folded past {} KiB each)", c.pcp_fold / 1024) }</td>
                        <td data-key="cil-counted">{ if c.pcp_counting { format!("{} KiB of {} KiB", kib(c.space_counted), kib(c.space_used)) } else { "all (past the push limit)".into() } }</td></tr>
                }
                { for c.committing.iter().map(|x| html! {
                    <tr><td>{ format!("checkpoint {} being pushed ({} KiB, {} items)", x.sequence, kib(x.space_used), x.items) }</td>
                        <td>{ if x.commit_lsn.0 != 0 { format!("start {} commit {}", x.start_lsn, x.commit_lsn) }
                              else if x.start_lsn.0 != 0 { format!("start {}, writing", x.start_lsn) } else { "building".into() } }</td></tr>
                }) }
                { for c.pushers.iter().zip(&c.pusher_running_ns).enumerate().map(|(k, (s, &ran))| {
                    let runnable = c.pushers_runnable.get(k).copied().unwrap_or(false);
                    let what = if runnable { format!("waiting for a CPU (runnable), then {}", s.describe()) } else { s.describe() };
                    html! {
                    <tr><td>{ format!("push worker {k}") }</td>
                        <td data-key={format!("pusher-{k}")}>{ if ran > 0 { format!("{what}, running {}", ms(ran)) } else { what } }</td></tr>
                }}) }
                if let Some(waited) = c.push_queued_ns {
                    <tr class="alert"><td>{ "push queued (queue_work), no worker free" }</td>
                        <td data-key="push-queued">{ format!("waiting {}", ms(waited)) }</td></tr>
                }
                <tr title="From queue_work to a worker starting the push (the kernel's workqueue_queue_work to workqueue_execute_start), and the push work's longest run so far, those under way included. A push that waits long enough for the writers to fill the CIL to its throttle limit is source thread 003's stutter.">
                    <td>{ "longest so far: push dispatch wait, push run" }</td>
                    <td data-key="push-longest">{ format!("{}, {}", ms(dispatch_longest), ms(run_longest)) }</td></tr>
                <tr title="Where the push workers' time went, as a kernel trace of their blocking stacks splits it (xlog_state_get_iclog_space, xlog_wait_on_iclog, xlog_cil_order_write). With a pool of CPUs (cpus) the push worker shares them with the writers and can wait runnable for one; without, it has a CPU of its own.">
                    <td>{ "push time so far" }</td>
                    <td data-key="push-time">{ push_time(&c.push_time_ns) }</td></tr>
            </table>
        </div>
    }
}
