//! Crash and recover: a power cut at this instant, every disk state it may leave recovered
//! from the device bytes alone and judged by the named invariants (`loglab crash` at this
//! event). A crash link (`crash_event`, `crash_state`, `crash_budget`) opens on its state.

use crate::address::link_query;
use crate::driver::Lab;
use std::rc::Rc;
use xlog::{CrashLink, CrashReport, Invariant};
use yew::prelude::*;

/// States per crash point the menu offers (the CLI's `--states-per-point`).
const BUDGETS: &[u32] = &[64, 256, 1024, 4096];
const DEFAULT_BUDGET: u32 = 64;

/// One crash as the panel shows it: where, how many states, and what they found.
#[derive(Clone, PartialEq)]
struct Crash {
    event: u64,
    t_ns: u64,
    budget: u32,
    /// The one state a link named, if any.
    state: Option<u64>,
    report: Rc<CrashReportView>,
}

/// What the panel needs of a `CrashReport`.
#[derive(Clone, PartialEq)]
struct CrashReportView {
    states: u64,
    duplicates: u64,
    torn_heads: u64,
    replayed: u64,
    violated: Vec<Violated>,
}

/// A violated invariant: how many states, the first example's detail and (event, state).
type Violated = (Invariant, u64, String, Option<(u64, u64)>);

impl From<&CrashReport> for CrashReportView {
    fn from(r: &CrashReport) -> Self {
        CrashReportView {
            states: r.crash_states,
            duplicates: r.duplicates,
            torn_heads: r.torn_heads,
            replayed: r.transactions_replayed,
            violated: r
                .violations
                .iter()
                .map(|(&inv, &n)| {
                    let ex = r.examples.iter().find(|e| e.invariant == inv);
                    (inv, n, ex.map_or(String::new(), |e| e.detail.clone()), ex.map(|e| (e.event, e.state)))
                })
                .collect(),
        }
    }
}

#[function_component(CrashPanel)]
pub fn crash_panel() -> Html {
    let lab = use_context::<Lab>().expect("CrashPanel sits inside the lab's context");
    let budget = use_state(|| lab.state.opened.crash.and_then(|c| c.budget).unwrap_or(DEFAULT_BUDGET));
    let shown = use_state(|| None::<Crash>);
    let run = {
        let (lab, shown) = (lab.clone(), shown.clone());
        move |budget: u32, state: Option<u64>| {
            let report = lab.crash_now(budget, state);
            shown.set(Some(Crash {
                event: lab.events(),
                t_ns: lab.frame.view.now_ns,
                budget,
                state,
                report: Rc::new(CrashReportView::from(&report)),
            }));
        }
    };
    {
        // A crash link: judge its state as soon as the page is on its event.
        let (run, crash) = (run.clone(), lab.state.opened.crash);
        use_effect_with((), move |_| {
            if let Some(c) = crash {
                run(c.budget.unwrap_or(DEFAULT_BUDGET), c.state);
            }
        });
    }
    let on_crash = {
        let (run, budget) = (run.clone(), budget.clone());
        Callback::from(move |_: MouseEvent| run(*budget, None))
    };
    let on_budget = {
        let budget = budget.clone();
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(b) = sel.value().parse::<u32>() {
                if BUDGETS.contains(&b) {
                    budget.set(b);
                }
            }
        })
    };
    let base = link_query(&lab.state.opened);
    let model = format!("{:?}", lab.state.opened.scenario.crash_model).to_lowercase();
    html! {
        <div class="panel crash" data-testid="crash" style="margin-top:14px">
            <h2>{ "crash and recover" }</h2>
            <p class="what">{ format!("A power cut at this instant: stable media plus every mix of the writes still in the volatile cache or in \
                flight that crash_model={model} allows. Each disk state is recovered from its bytes alone (find head and tail, verify CRCs, \
                replay committed checkpoints) and judged by the invariants below — the same as loglab crash at this event.") }</p>
            <div class="controls">
                <button data-testid="crash-now" onclick={on_crash}>{ "Crash now" }</button>
                <label>{ "states: " }
                    <select data-testid="crash-budget" onchange={on_budget} aria-label="crash states to check">
                        { for BUDGETS.iter().map(|&b| html! { <option value={b.to_string()} selected={b == *budget}>{ format!("up to {b}") }</option> }) }
                    </select>
                </label>
                <span class="muted">{ format!("event {}", lab.events()) }</span>
            </div>
            <p class="muted" data-testid="crash-at-risk">{ "At risk now: " }{ lab.frame.devices.iter().map(|d| format!(
                "{} device: {} completed write{} ({} KiB) in the volatile cache, {} request{} in flight",
                d.role, d.cached_writes, if d.cached_writes == 1 { "" } else { "s" }, d.cached_bytes / 1024,
                d.inflight.len(), if d.inflight.len() == 1 { "" } else { "s" })).collect::<Vec<_>>().join("; ") }</p>
            { match &*shown {
                None => html! { <p class="muted">{ "Pause anywhere and crash: the verdict appears here." }</p> },
                Some(c) => verdict(c, &base),
            } }
        </div>
    }
}

fn verdict(c: &Crash, base: &str) -> Html {
    let r = &c.report;
    let bad: u64 = r.violated.iter().map(|v| v.1).sum();
    let summary = match (c.state, bad) {
        (Some(s), 0) => format!("State {s} of the crash at event {}: every invariant holds.", c.event),
        (Some(s), _) => format!("State {s} of the crash at event {} violates an invariant.", c.event),
        (None, 0) => format!("{} crash states at event {}: every invariant holds in every one.", r.states, c.event),
        (None, n) => format!("{} crash states at event {}: {n} invariant violations.", r.states, c.event),
    };
    let replay = |event: u64, state: u64| CrashLink { event, state: Some(state), budget: Some(c.budget) }.url(base);
    html! {
        <div data-testid="crash-verdict" data-states={r.states.to_string()} data-violations={bad.to_string()}
            data-event={c.event.to_string()} class={if bad > 0 { "verdict bad" } else { "verdict good" }}>
            <p><strong>{ summary }</strong></p>
            <p class="muted">{ format!("t = {:.6} ms; {} states checked (up to {} per point), {} duplicates skipped; {} torn heads trimmed; {} checkpoints replayed in all",
                c.t_ns as f64 / 1e6, r.states, c.budget, r.duplicates, r.torn_heads, r.replayed) }</p>
            <ul class="invariants">
                { for Invariant::ALL.iter().map(|&inv| {
                    let hit = r.violated.iter().find(|v| v.0 == inv);
                    html! {
                        <li class={if hit.is_some() { "fail" } else { "pass" }} data-invariant={inv.as_str()}>
                            <span class="mark">{ if hit.is_some() { "✗ violated" } else { "✓ holds" } }</span>
                            <code>{ inv.as_str() }</code>
                            { match hit {
                                Some((_, n, detail, ex)) => html! {
                                    <>
                                        { format!(" in {n} state{}: {}", if *n == 1 { "" } else { "s" }, inv.explain()) }
                                        if !detail.is_empty() { <div class="detail">{ detail.clone() }</div> }
                                        if let Some((event, state)) = ex {
                                            <a href={replay(*event, *state)} data-testid="crash-replay">{ format!("open state {state} of event {event}") }</a>
                                        }
                                    </>
                                },
                                None => html! { <span class="muted">{ format!(" — {}", inv.explain()) }</span> },
                            } }
                        </li>
                    }
                }) }
            </ul>
        </div>
    }
}
