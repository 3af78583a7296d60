//! Numbers of the run so far: time, transactions, log space, grant waits, device traffic.

use crate::palette;
use std::rc::Rc;
use xlog::{Metrics, View};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct StatsProps {
    pub view: Rc<View>,
    pub metrics: Rc<Metrics>,
}

#[function_component(Stats)]
pub fn stats(props: &StatsProps) -> Html {
    let v = &props.view;
    let m = &props.metrics;
    let rows: Vec<(&str, String)> = vec![
        ("transactions", v.transactions.to_string()),
        ("log head (cycle:block)", v.curr_lsn.to_string()),
        ("log tail", v.tail_lsn.to_string()),
        ("reserve grant free", format!("{} KiB", v.reserve_free_bytes / 1024)),
        ("grant head waiters", v.reserve_waiters.to_string()),
        ("AIL items", v.ail_items.to_string()),
        ("CIL sequence", v.cil_sequence.to_string()),
        (
            "CIL space used",
            format!(
                "{} KiB (push at {}, throttle at {} KiB)",
                v.cil_space_used / 1024,
                v.cil_blocking_limit / 2048,
                v.cil_blocking_limit / 1024
            ),
        ),
        ("CIL throttle queue", v.cil_throttle_depth.to_string()),
        ("checkpoints committing", v.checkpoints_committing.to_string()),
        ("checkpoints", m.checkpoints.to_string()),
        ("iclog writes", m.iclog_writes.to_string()),
        ("noiclogs waits", m.noiclog_events.to_string()),
        ("cache flushes", m.cache_flushes.to_string()),
        ("FUA writes", m.fua_writes.to_string()),
        ("events", v.events.to_string()),
    ];
    html! {
        <div class="panel">
            <h2>{ "log counters" }</h2>
            <table class="stats" data-testid="stats">
                { for rows.into_iter().map(|(k, val)| html! { <tr><td>{ k }</td><td data-key={k}>{ val }</td></tr> }) }
            </table>
            <h2 style="margin-top:14px">{ format!("writers ({})", v.writer_states.len()) }</h2>
            <div class="writers" title="grey: thinking (running a create, or waiting for a CPU when cpus is set) · red: grant wait · yellow: CIL throttle · green: waiting for a checkpoint · blue: waiting for log I/O · purple: fsync data write or flush · brown: reading metadata inside a transaction">
                { for v.writer_states.iter().map(|s| html! { <i style={format!("--c:{}", palette::writer(s))}></i> }) }
            </div>
        </div>
    }
}
