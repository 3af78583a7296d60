//! Choose what survives: the writes a crash now may keep or lose, each with what it holds, and
//! a verdict for the state picked by hand, at random or the worst the explorer found.

use crate::components::timeline::purpose;
use crate::driver::Lab;
use xlog::{AtRisk, CheckpointPanel, ChosenState, Fate, Invariant, IoSpan};
use yew::prelude::*;

/// Writes listed (a busy cache holds hundreds; the rest count as lost).
const LISTED: usize = 48;

fn describe(w: &AtRisk, span: Option<&IoSpan>, checkpoints: &[CheckpointPanel]) -> String {
    let what = span.map(|s| purpose(s, checkpoints));
    format!(
        "#{} {}{}: {} KiB at sector {}, {}",
        w.req_id,
        what.unwrap_or_else(|| "write".into()),
        if w.preflush { " (PREFLUSH)" } else { "" },
        w.bytes / 1024,
        w.sector,
        if w.inflight { "in flight" } else { "completed, in the volatile cache" }
    )
}

fn fate_name(f: Fate) -> &'static str {
    match f {
        Fate::Lost => "lost",
        Fate::Kept => "kept",
        Fate::Torn => "torn",
    }
}

/// A small deterministic generator for "Random" (the same page gives the same sequence).
fn next_random(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[function_component(ChosenCrash)]
pub fn chosen_crash() -> Html {
    let lab = use_context::<Lab>().expect("ChosenCrash sits inside the lab's context");
    let at = use_state(|| (lab.events(), lab.at_risk()));
    // The list follows the run while it is paused (listing costs a walk of the recorded
    // requests: not something to do every animation frame).
    if !lab.state.playing && at.0 != lab.events() {
        at.set((lab.events(), lab.at_risk()));
    }
    if lab.state.playing {
        return html! {
            <div class="chosen" data-testid="crash-choose" data-writes="">
                <h3 class="sub">{ "Choose what survives" }</h3>
                <p class="muted">{ "Pause to list the writes a crash at that instant may keep or lose." }</p>
            </div>
        };
    }
    let fates = use_state(Vec::<Fate>::new);
    let verdict = use_state(|| None::<(String, ChosenState)>);
    let seed = use_mut_ref(|| 0x9e37_79b9_7f4a_7c15u64);
    let risk = &at.1;
    let current: Vec<Fate> = (0..risk.len()).map(|i| fates.get(i).copied().unwrap_or(Fate::Lost)).collect();
    let check = {
        let (lab, verdict, fates) = (lab.clone(), verdict.clone(), fates.clone());
        move |how: String, f: Vec<Fate>| {
            let c = lab.check_chosen(&f);
            fates.set(c.fates.clone());
            verdict.set(Some((how, c)));
        }
    };
    let on_check = {
        let (check, current) = (check.clone(), current.clone());
        Callback::from(move |_: MouseEvent| check("the state chosen above".into(), current.clone()))
    };
    let on_random = {
        let (check, risk, seed) = (check.clone(), risk.clone(), seed.clone());
        Callback::from(move |_: MouseEvent| {
            let mut s = seed.borrow_mut();
            let f: Vec<Fate> = risk
                .iter()
                .map(|(w, _)| match next_random(&mut s) % if w.inflight { 3 } else { 2 } {
                    0 => Fate::Lost,
                    1 => Fate::Kept,
                    _ => Fate::Torn,
                })
                .collect();
            check("a random state".into(), f)
        })
    };
    let set_fate = |i: usize| {
        let (fates, n) = (fates.clone(), risk.len());
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            let mut f: Vec<Fate> = (0..n).map(|k| fates.get(k).copied().unwrap_or(Fate::Lost)).collect();
            f[i] = match sel.value().as_str() {
                "kept" => Fate::Kept,
                "torn" => Fate::Torn,
                _ => Fate::Lost,
            };
            fates.set(f);
        })
    };
    html! {
        <div class="chosen" data-testid="crash-choose" data-writes={risk.len().to_string()}>
            <h3 class="sub">{ "Choose what survives" }</h3>
            if risk.is_empty() {
                <p class="muted">{ "Nothing is at risk at this instant: every completed write is stable. Step on and look again." }</p>
            } else {
                <ul class="at-risk">
                    { for risk.iter().take(LISTED).enumerate().map(|(i, (w, span))| html! {
                        <li>
                            <select data-testid="crash-fate" onchange={set_fate(i)} aria-label={format!("fate of request {}", w.req_id)}>
                                { for [Fate::Lost, Fate::Kept, Fate::Torn].iter().filter(|f| w.inflight || **f != Fate::Torn).map(|&f| html! {
                                    <option value={fate_name(f)} selected={current[i] == f}>{ fate_name(f) }</option>
                                }) }
                            </select>
                            <span>{ describe(w, span.as_ref(), &lab.frame.space.checkpoints) }</span>
                        </li>
                    }) }
                </ul>
                if risk.len() > LISTED { <p class="muted">{ format!("… and {} more, lost unless a PREFLUSH write that survives covers them", risk.len() - LISTED) }</p> }
                <div class="controls">
                    <button class="small" data-testid="crash-check" onclick={on_check}>{ "Check this state" }</button>
                    <button class="small secondary" data-testid="crash-random" onclick={on_random}>{ "Random" }</button>
                </div>
            }
            { verdict.as_ref().map(|(how, c)| chosen_verdict(how, c)).unwrap_or_default() }
        </div>
    }
}

fn chosen_verdict(how: &str, c: &ChosenState) -> Html {
    let kept = c.fates.iter().filter(|f| **f != Fate::Lost).count();
    html! {
        <div data-testid="crash-chosen-verdict" data-violations={c.violated.len().to_string()}
            class={if c.violated.is_empty() { "verdict good" } else { "verdict bad" }}>
            <p><strong>{ format!("Crash with {how}: {kept} of {} writes survive (after the crash model's rules). {}", c.fates.len(),
                if c.violated.is_empty() { "Every invariant holds." } else { "Invariants broken:" }) }</strong></p>
            { match &c.recovery {
                Ok(r) => html! {
                    <>
                        <p class="muted" data-testid="crash-recovery">{ if r.empty { "Recovery: the log is empty.".to_string() } else if r.clean { "Recovery: the log is clean (unmount record last).".to_string() } else {
                            format!("Recovery: head {} (block {}), tail {} (block {}), {} records walked, {} checkpoints replayed, {} without a commit record dropped{}{}.",
                                r.head_lsn, r.head_blk, r.tail_lsn, r.tail_blk, r.records, r.transactions_replayed, r.transactions_uncommitted,
                                if r.torn_head_trimmed { "; a torn head trimmed" } else { "" },
                                if r.tail_overwrite_skipped { "; an overwritten tail skipped" } else { "" })
                        } }</p>
                        <pre class="kernel">{ r.kernel_messages("loop0").join("\n") }</pre>
                        if !r.why.is_empty() { <p class="muted">{ r.why.clone() }</p> }
                    </>
                },
                Err(e) => html! { <p class="error">{ format!("Recovery failed: {e}") }</p> },
            } }
            if !c.causes.is_empty() { <p class="muted" data-testid="crash-causes">{ c.causes.clone() }</p> }
            <ul class="invariants">
                { for c.violated.iter().map(|&inv: &Invariant| html! {
                    <li class="fail" data-invariant={inv.as_str()}><span class="mark">{ "✗ violated" }</span><code>{ inv.as_str() }</code>{ format!(" — {}", inv.explain()) }
                        if let Some(k) = inv.on_real_kernel() { <div class="detail" data-testid="on-real-kernel">{ k }</div> }
                    </li>
                }) }
            </ul>
        </div>
    }
}
