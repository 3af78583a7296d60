//! The AIL panel: committed metadata in LSN order; its oldest item holds the log's tail.

use std::rc::Rc;
use xlog::{AilPush, AilView, Xfsaild};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct AilProps {
    pub ail: Rc<AilView>,
}

/// What xfsaild is doing now, and why a new target may wait.
fn xfsaild_state(a: &AilView) -> String {
    let ms = |ns: u64| ns as f64 / 1e6;
    match a.next_pass_in_ns {
        None => "idle: asleep until woken".into(),
        Some(0) => "pushing".into(),
        Some(n) if a.busy_ns > 0 => format!(
            "running its pass: writing back what it took on ({:.2} ms of CPU left), next pass in {:.1} ms. A wakeup now finds it running and is lost.{}",
            ms(a.busy_ns),
            ms(n),
            if a.wake_lost { " One already was: the new target waits for the next pass." } else { "" }
        ),
        Some(n) => format!(
            "{} in {:.1} ms.{}",
            if a.tail_lsn.is_some_and(|t| a.target < t) { "nothing at or below the target: looks again" } else { "asleep after its pass: next pass" },
            ms(n),
            if a.wake_lost {
                " A wakeup came during its last pass and was lost (xfsaild was running): the new target waits for this sleep to end."
            } else {
                ""
            }
        ),
    }
}

#[function_component(AilPanel)]
pub fn ail_panel(p: &AilProps) -> Html {
    let a = &p.ail;
    let state = |pinned: bool, flushing: bool| match (pinned, flushing) {
        (true, _) => "pinned (relogged in a checkpoint not yet on disk: no writeback until it is)",
        (false, true) => "being written back",
        (false, false) => "waiting for xfsaild",
    };
    html! {
        <div class="panel" data-testid="ail" style="margin-top:14px">
            <h2>{ format!("AIL — {} items", a.items) }</h2>
            <p class="what">{ "The Active Item List (struct xfs_ail): metadata whose changes are in the log but not yet written in place, \
                ordered by LSN. The oldest item is the log's tail; xfsaild writes items back up to its push target so the tail can move." }</p>
            <table class="stats">
                <tr><td>{ "tail (oldest item)" }</td><td data-key="ail-tail">{ a.tail_lsn.map_or("empty".into(), |l| l.to_string()) }</td></tr>
                <tr><td>{ "newest item" }</td><td>{ a.head_lsn.map_or("empty".into(), |l| l.to_string()) }</td></tr>
                <tr><td>{ "xfsaild push target" }</td><td>{ if a.target.is_zero() { "none yet".to_string() } else { a.target.to_string() } }</td></tr>
                <tr><td>{ "target set by" }</td><td data-key="ail-push">{ match a.ail_push {
                    AilPush::Upstream => "xfsaild (6.11+): a quarter of the log past the tail once the AIL spans 75% of the log; a reservation that sleeps pushes everything",
                    AilPush::Grant => "reservations (before 6.11): each pushes when the reserve grant head leaves under 25% of the log free",
                } }</td></tr>
                <tr class={ classes!(a.push_all.then_some("alert")) }><td>{ "AIL span" }</td><td data-key="ail-span">{
                    format!("{:.1}% of the log{}", a.span_permille as f64 / 10.0,
                        if a.push_all { " — push all requested: a reservation is asleep on the grant head" } else { "" })
                }</td></tr>
                <tr class={ classes!(a.wake_lost.then_some("alert")) }><td>{ "xfsaild" }</td><td data-key="ail-state">{ xfsaild_state(a) }</td></tr>
                <tr><td>{ "xfsaild pass" }</td><td data-key="ail-pass">{ match a.xfsaild {
                    Xfsaild::Upstream => "upstream (6.11+): no pause while work remains",
                    Xfsaild::Backoff => "backoff: 10 ms between passes of 1000 items",
                } }</td></tr>
                <tr><td>{ "written back" }</td><td data-key="ail-written">{ format!("{} items in {} writes", a.written_items, a.writes) }</td></tr>
            </table>
            if a.written_items > a.writes {
                <p class="what">{ format!("{:.1} items per write: an inode is written with the other dirty inodes of its 32-inode cluster buffer (xfs_iflush_cluster).",
                    a.written_items as f64 / a.writes.max(1) as f64) }</p>
            }
            <ul class="inflight" aria-label="the oldest AIL items">
                { for a.oldest.iter().take(6).map(|&(lsn, item, pinned, flushing)| html! {
                    <li>{ format!("{lsn}  item {item}: {}", state(pinned, flushing)) }</li>
                }) }
            </ul>
        </div>
    }
}
