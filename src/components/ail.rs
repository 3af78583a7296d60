//! The AIL panel: committed metadata in LSN order; its oldest item holds the log's tail.

use std::rc::Rc;
use xlog::AilView;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct AilProps {
    pub ail: Rc<AilView>,
}

#[function_component(AilPanel)]
pub fn ail_panel(p: &AilProps) -> Html {
    let a = &p.ail;
    let state = |pinned: bool, flushing: bool| match (pinned, flushing) {
        (true, _) => "pinned (its checkpoint is not on disk yet)",
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
                <tr><td>{ "xfsaild push target" }</td><td>{ a.target.to_string() }</td></tr>
                <tr><td>{ "xfsaild" }</td><td>{ if a.xfsaild_idle { "idle" } else { "pushing" } }</td></tr>
            </table>
            <ul class="inflight" aria-label="the oldest AIL items">
                { for a.oldest.iter().take(6).map(|&(lsn, item, pinned, flushing)| html! {
                    <li>{ format!("{lsn}  item {item}: {}", state(pinned, flushing)) }</li>
                }) }
            </ul>
        </div>
    }
}
