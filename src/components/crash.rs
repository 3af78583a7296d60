//! Crash and recover: a power cut at this instant, every disk state it may leave recovered
//! from the device bytes alone and judged by the named invariants (`loglab crash` at this
//! event). A crash link (`crash_event`, `crash_state`, `crash_budget`) opens on its state.

use crate::address::link_query;
use crate::crash_job::{Job, PointResult};
use crate::driver::Lab;
use crate::palette;
use crate::workers::{self, Pool};
use std::rc::Rc;
use xlog::{CrashLink, CrashPlan, CrashReport, Invariant};

/// Crash points the heat map offers over the run so far.
const POINTS: &[u32] = &[12, 24, 48, 96];

/// Points per worker job: small enough for a smooth progress bar, large enough that re-running
/// the scenario from the start for each job stays a small share of the work.
const POINTS_PER_JOB: usize = 4;

/// Where the heat map's exploration stands.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub total: usize,
    /// Results so far, ordered by event.
    pub points: Vec<PointResult>,
    pub workers: usize,
    pub error: Option<String>,
}

impl Progress {
    fn finished(&self) -> bool {
        self.error.is_some() || self.points.len() >= self.total
    }

    /// Takes one job's answer: its points, or the error that stops the exploration.
    fn take(&mut self, answer: &str) {
        match serde_json::from_str::<Vec<PointResult>>(answer) {
            Ok(points) => {
                self.points.extend(points);
                self.points.sort_by_key(|p| p.event);
            }
            Err(_) => {
                let why = serde_json::from_str::<serde_json::Value>(answer)
                    .ok()
                    .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string));
                self.error = Some(why.unwrap_or_else(|| "a crash worker failed".into()));
            }
        }
    }
}
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
    let on_worst = {
        let (lab, run, budget) = (lab.clone(), run.clone(), budget.clone());
        Callback::from(move |_: MouseEvent| {
            // The first state the explorer finds breaking an invariant, alone.
            let found = lab.crash_now(*budget, None);
            match found.examples.first() {
                Some(ex) => run(*budget, Some(ex.state)),
                None => run(*budget, None),
            }
        })
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
    let points = use_state(|| 24u32);
    let pool = use_mut_ref(|| None::<Pool>);
    let heat = use_state(|| None::<Progress>);
    let acc = use_mut_ref(Progress::default);
    let on_explore = {
        let (lab, budget, points, pool, heat, acc) =
            (lab.clone(), budget.clone(), points.clone(), pool.clone(), heat.clone(), acc.clone());
        Callback::from(move |_: MouseEvent| {
            let events = CrashPlan::even_points(lab.events(), *points);
            // crash_model may have been switched mid-run; it changes what a crash keeps, not the run.
            let scenario = lab.scenario_now();
            let jobs: Vec<String> = events
                .chunks(POINTS_PER_JOB)
                .map(|e| {
                    serde_json::to_string(&Job { scenario: scenario.clone(), events: e.to_vec(), budget: *budget })
                        .unwrap_or_default()
                })
                .collect();
            *acc.borrow_mut() = Progress { total: events.len(), ..Progress::default() };
            let (h, acc2) = (heat.clone(), acc.clone());
            let on_result = Callback::from(move |(_, answer): (usize, String)| {
                acc2.borrow_mut().take(&answer);
                h.set(Some(acc2.borrow().clone()));
            });
            match workers::run("loglab_crash_points", jobs, on_result) {
                Ok((p, n)) => {
                    *pool.borrow_mut() = Some(p);
                    acc.borrow_mut().workers = n;
                    heat.set(Some(acc.borrow().clone()));
                }
                Err(e) => heat.set(Some(Progress { error: Some(e), ..Progress::default() })),
            }
        })
    };
    let on_cancel = {
        let (pool, heat) = (pool.clone(), heat.clone());
        Callback::from(move |_: MouseEvent| {
            pool.borrow_mut().take();
            if let Some(p) = (*heat).clone() {
                heat.set(Some(Progress {
                    error: Some(format!("cancelled after {} of {} points", p.points.len(), p.total)),
                    ..p
                }));
            }
        })
    };
    let on_points = {
        let points = points.clone();
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(n) = sel.value().parse::<u32>() {
                if POINTS.contains(&n) {
                    points.set(n);
                }
            }
        })
    };
    if heat.as_ref().is_some_and(Progress::finished) && pool.borrow().is_some() {
        // Done: the workers are let go.
        pool.borrow_mut().take();
    }
    let base = link_query(&lab.state.opened);
    let model = lab.scenario_now().crash_model.as_str();
    let on_model = {
        let lab = lab.clone();
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            // A what-if branch: the run goes on from here; only what a crash may keep changes.
            let _ = lab.branch("crash_model", &sel.value());
        })
    };
    html! {
        <div class="panel crash" data-testid="crash" style="margin-top:14px">
            <h2>{ "crash and recover" }</h2>
            <p class="what">{ format!("A power cut at this instant: stable media plus every mix of the writes still in the volatile cache or in \
                flight that crash_model={model} allows. Each disk state is recovered from its bytes alone (find head and tail, verify CRCs, \
                replay committed checkpoints) and judged by the invariants below — the same as loglab crash at this event.") }</p>
            <div class="controls">
                <button data-testid="crash-now" onclick={on_crash}>{ "Crash now" }</button>
                <button class="secondary" data-testid="crash-worst" onclick={on_worst}>{ "Worst found" }</button>
                <label>{ "states: " }
                    <select data-testid="crash-budget" onchange={on_budget} aria-label="crash states to check">
                        { for BUDGETS.iter().map(|&b| html! { <option value={b.to_string()} selected={b == *budget}>{ format!("up to {b}") }</option> }) }
                    </select>
                </label>
                <label>{ "crash model: " }
                    <select data-testid="crash-model" onchange={on_model} aria-label="crash model">
                        { for ["subset", "prefix"].iter().map(|m| html! { <option value={*m} selected={*m == model}>{ *m }</option> }) }
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
            <crate::components::chosen::ChosenCrash />
            <h3 class="sub">{ "Every crash point of the run so far" }</h3>
            <div class="controls">
                <label>{ "points: " }
                    <select data-testid="crash-points" onchange={on_points} aria-label="crash points">
                        { for POINTS.iter().map(|&n| html! { <option value={n.to_string()} selected={n == *points}>{ n }</option> }) }
                    </select>
                </label>
                <button class="small" data-testid="crash-explore" onclick={on_explore}>{ "Explore" }</button>
                if pool.borrow().is_some() {
                    <button class="small secondary" data-testid="crash-cancel" onclick={on_cancel}>{ "Cancel" }</button>
                }
            </div>
            { heat.as_ref().map(|p| heat_map(p, lab.events())).unwrap_or_default() }
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
                                        if let Some(k) = inv.on_real_kernel() {
                                            <div class="detail" data-testid="on-real-kernel">{ k }</div>
                                        }
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

/// One cell per crash point, green when every state held, vermillion when one broke an
/// invariant; the title names the point and what broke.
fn heat_map(p: &Progress, events: u64) -> Html {
    let states: u64 = p.points.iter().map(|x| x.states).sum();
    let bad: u64 = p.points.iter().map(|x| x.violated()).sum();
    let failing = p.points.iter().filter(|x| x.violated() > 0).count();
    let n = p.total.max(1) as f64;
    html! {
        <div data-testid="crash-heatmap" data-points={p.points.len().to_string()} data-total={p.total.to_string()}
            data-states={states.to_string()} data-violations={bad.to_string()} data-workers={p.workers.to_string()}>
            <progress data-testid="crash-progress" max={p.total.to_string()} value={p.points.len().to_string()} style="width:100%" />
            <svg viewBox="0 0 100 6" preserveAspectRatio="none" style="width:100%;height:22px" role="img"
                aria-label={format!("{} of {} crash points explored, {failing} with a violated invariant", p.points.len(), p.total)}>
                <rect x="0" y="0" width="100" height="6" fill={palette::TRACK} />
                { for p.points.iter().enumerate().map(|(i, x)| {
                    let k = (x.event as f64 / events.max(1) as f64 * n).floor().min(n - 1.0).max(0.0);
                    let colour = if x.violated() > 0 { palette::VERMILLION } else { palette::BLUISH_GREEN };
                    let what = if x.violations.is_empty() { "every invariant holds".to_string() } else {
                        x.violations.iter().map(|(k, v)| format!("{k} in {v}")).collect::<Vec<_>>().join(", ")
                    };
                    html! {
                        <rect key={i} x={format!("{:.3}", k / n * 100.0)} y="0" width={format!("{:.3}", 100.0 / n * 0.9)} height="6" fill={colour}>
                            <title>{ format!("event {} (t = {:.3} ms): {} states; {what}", x.event, x.t_ns as f64 / 1e6, x.states) }</title>
                        </rect>
                    }
                }) }
            </svg>
            <p class="muted">{ match &p.error {
                Some(e) => e.clone(),
                None if p.points.len() < p.total => format!("{} of {} points on {} workers…", p.points.len(), p.total, p.workers),
                None => format!("{} points, {states} crash states: {}", p.total,
                    if bad == 0 { "every invariant held in every one".to_string() } else { format!("{failing} points with violations ({bad} in all)") }),
            } }</p>
        </div>
    }
}
