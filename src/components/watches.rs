//! Watchpoints: pause the run on the event that makes a condition true.

use crate::driver::Lab;
use xlog::{Watch, NS_PER_MS};
use yew::prelude::*;

fn describe(w: &Watch) -> String {
    match w {
        Watch::FreeLogBelow(b) => format!("free log space below {} KiB", b / 1024),
        Watch::FirstFlush => "the first cache flush".into(),
        Watch::ThrottleDepthAbove(k) => format!("throttle queue deeper than {k}"),
        Watch::TaskWaitingLonger(t) => format!("a writer waiting longer than {} ms", *t as f64 / 1e6),
    }
}

/// The kinds the form offers: (value, label, what the number means).
const KINDS: &[(&str, &str, &str)] = &[
    ("free", "free log space below", "KiB"),
    ("flush", "first cache flush", ""),
    ("throttle", "throttle queue deeper than", "tasks"),
    ("wait", "a writer waiting longer than", "ms"),
];

#[function_component(Watches)]
pub fn watches() -> Html {
    let lab = use_context::<Lab>().expect("Watches sits inside the lab's context");
    let kind = use_state(|| "throttle".to_string());
    let number = use_state(|| "2".to_string());
    let error = use_state(|| None::<String>);
    let on_kind = {
        let kind = kind.clone();
        Callback::from(move |e: Event| kind.set(e.target_unchecked_into::<web_sys::HtmlSelectElement>().value()))
    };
    let on_number = {
        let number = number.clone();
        Callback::from(move |e: Event| number.set(e.target_unchecked_into::<web_sys::HtmlInputElement>().value()))
    };
    let add = {
        let (lab, kind, number, error) = (lab.clone(), kind.clone(), number.clone(), error.clone());
        Callback::from(move |_: MouseEvent| {
            let n = number.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e9);
            let w = match (kind.as_str(), n) {
                ("flush", _) => Some(Watch::FirstFlush),
                ("free", Some(v)) => Some(Watch::FreeLogBelow((v * 1024.0) as u64)),
                ("throttle", Some(v)) => Some(Watch::ThrottleDepthAbove(v as u32)),
                ("wait", Some(v)) => Some(Watch::TaskWaitingLonger((v * NS_PER_MS as f64) as u64)),
                _ => None,
            };
            match w {
                Some(w) => {
                    error.set(None);
                    lab.add_watch(w);
                }
                None => error.set(Some(format!("'{}' is not a number from 0 to 999999999", *number))),
            }
        })
    };
    let unit = KINDS.iter().find(|k| k.0 == kind.as_str()).map_or("", |k| k.2);
    html! {
        <div class="watches" data-testid="watches">
            <div class="controls">
                <span class="muted">{ "Pause when:" }</span>
                <select data-testid="watch-kind" onchange={on_kind} aria-label="watchpoint condition">
                    { for KINDS.iter().map(|(v, label, _)| html! { <option value={*v} selected={*v == kind.as_str()}>{ *label }</option> }) }
                </select>
                if !unit.is_empty() {
                    <input data-testid="watch-number" class="num" value={(*number).clone()} onchange={on_number} aria-label={format!("threshold in {unit}")} />
                    <span class="muted">{ unit }</span>
                }
                <button class="secondary small" data-testid="watch-add" onclick={add}>{ "Add" }</button>
            </div>
            if let Some(e) = &*error { <p class="field-error">{ e }</p> }
            <ul class="watch-list">
                { for lab.state.watches.iter().enumerate().map(|(i, w)| {
                    let lab = lab.clone();
                    html! { <li>{ describe(w) }{ " " }
                        <button class="secondary small" aria-label={format!("remove watchpoint: {}", describe(w))}
                            onclick={Callback::from(move |_: MouseEvent| lab.remove_watch(i))}>{ "remove" }</button></li> }
                }) }
            </ul>
            if let Some(h) = &lab.state.hit { <p class="hit" data-testid="watch-hit" role="alert">{ h }</p> }
        </div>
    }
}
