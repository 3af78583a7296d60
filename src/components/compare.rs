//! Compare mode: the scenario run a second time with one knob different (flush legacy against
//! upstream, throttle v5.9 against fixed, …), on the same clock: a metrics diff and the two
//! flush timelines one above the other.

use crate::components::timeline::Timeline;
use crate::driver::{Lab, TIMELINE_NS};
use xlog::{NS_PER_MS, REPORT_GROUPS, SET_KEYS};
use yew::prelude::*;

fn metric(m: &serde_json::Value, key: &str) -> Option<f64> {
    m.get(key).and_then(serde_json::Value::as_f64)
}

/// Metrics as a JSON object, to look up by the report's keys (through text: the same code the
/// exports use, rather than a second serializer in the wasm).
fn as_json(m: &xlog::Metrics) -> serde_json::Value {
    serde_json::to_string(m).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

fn show(v: Option<f64>) -> String {
    match v {
        Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        Some(v) => format!("{v:.3}"),
        None => "—".into(),
    }
}

#[function_component(ComparePanel)]
pub fn compare_panel() -> Html {
    let lab = use_context::<Lab>().expect("ComparePanel sits inside the lab's context");
    let key = use_state(|| "flush".to_string());
    let value = use_state(|| "legacy".to_string());
    let more = use_state(String::new);
    let error = use_state(|| None::<String>);
    let on_key = {
        let key = key.clone();
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            key.set(sel.value());
        })
    };
    let on_value = {
        let value = value.clone();
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            value.set(input.value());
        })
    };
    let on_more = {
        let more = more.clone();
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            more.set(input.value());
        })
    };
    let on_go = {
        let (lab, key, value, more, error) = (lab.clone(), key.clone(), value.clone(), more.clone(), error.clone());
        Callback::from(move |_: MouseEvent| {
            let mut changes = vec![((*key).clone(), value.trim().to_string())];
            for kv in more.split([',', '&']).map(str::trim).filter(|x| !x.is_empty()) {
                match kv.split_once('=') {
                    Some((k, v)) => changes.push((k.trim().to_string(), v.trim().to_string())),
                    None => return error.set(Some(format!("'{kv}' is not key=value"))),
                }
            }
            error.set(lab.compare_with_all(&changes).err())
        })
    };
    let on_stop = {
        let lab = lab.clone();
        Callback::from(move |_: MouseEvent| lab.stop_compare())
    };
    let frame = &lab.frame;
    let window = (lab.state.speed_ns * 120).clamp(2 * NS_PER_MS, TIMELINE_NS);
    html! {
        <div class="panel compare" data-testid="compare" style="margin-top:14px"
            data-b-label={frame.compare.as_ref().map(|c| c.label.clone())}
            data-b-sim-ns={frame.compare.as_ref().map(|c| c.now_ns.to_string())}
            data-b-trace-hash={frame.compare.as_ref().map(|c| c.metrics.trace_hash.clone())}>
            <h2>{ "compare" }</h2>
            <p class="what">{ "The same scenario run a second time with one setting changed from the start, on the same clock: \
                what the change does to the journal, metric by metric, and to the flush timeline." }</p>
            <div class="controls">
                <label>{ "B = A with " }
                    <select data-testid="compare-key" onchange={on_key} aria-label="setting to change">
                        { for SET_KEYS.iter().map(|k| html! { <option value={*k} selected={*k == key.as_str()}>{ *k }</option> }) }
                    </select>
                </label>
                { "=" }
                <input data-testid="compare-value" value={(*value).clone()} oninput={on_value} aria-label="its value" />
                <label>{ "and " }
                    <input data-testid="compare-more" placeholder="key=value, …" value={(*more).clone()} oninput={on_more} aria-label="more settings to change" />
                </label>
                <button class="small" data-testid="compare-go" onclick={on_go}>{ "Compare" }</button>
                if frame.compare.is_some() {
                    <button class="small secondary" data-testid="compare-stop" onclick={on_stop}>{ "Stop" }</button>
                }
            </div>
            if let Some(e) = &*error { <p class="error" role="alert">{ e.clone() }</p> }
            { match &frame.compare {
                None => html! { <p class="muted">{ "Choose a setting and a value, then Compare." }</p> },
                Some(c) => {
                    let a = as_json(&frame.metrics);
                    let b = as_json(&c.metrics);
                    html! {
                        <>
                            <table class="stats diff" data-testid="compare-table">
                                <tr><th>{ "metric" }</th><th>{ "A (as the link says)" }</th><th>{ format!("B ({})", c.label) }</th><th>{ "B − A" }</th></tr>
                                { for REPORT_GROUPS.iter().flat_map(|(_, keys)| keys.iter()).filter(|&&(k, _)| metric(&a, k).is_some() || metric(&b, k).is_some()).map(|&(k, unit)| {
                                    let (va, vb) = (metric(&a, k), metric(&b, k));
                                    let diff = match (va, vb) { (Some(x), Some(y)) => Some(y - x), _ => None };
                                    let changed = diff.is_some_and(|d| d != 0.0);
                                    html! {
                                        <tr class={classes!(changed.then_some("changed"))} data-metric={k}>
                                            <td>{ if unit.is_empty() { k.to_string() } else { format!("{k} ({unit})") } }</td>
                                            <td>{ show(va) }</td><td>{ show(vb) }</td>
                                            <td>{ diff.map_or("—".into(), |d| if d == 0.0 { "same".into() } else { format!("{}{}", if d > 0.0 { "+" } else { "" }, show(Some(d))) }) }</td>
                                        </tr>
                                    }
                                }) }
                            </table>
                            <h3 class="lane-title">{ format!("Flush timelines, the last {:.2} ms. A: as the link says", window as f64 / 1e6) }</h3>
                            <Timeline spans={frame.timeline.clone()} now={frame.view.now_ns} space={frame.space.clone()}
                                window={window.min(frame.view.now_ns.saturating_sub(frame.timeline_from)).max(NS_PER_MS / 10)}
                                lanes={frame.devices.iter().map(|d| format!("{} device ({})", d.role, d.profile)).collect::<Vec<_>>()} compact={true} />
                            <h3 class="lane-title">{ format!("B: {}", c.label) }</h3>
                            <Timeline spans={c.timeline.clone()} now={c.now_ns} space={c.space.clone()}
                                window={window.min(c.now_ns.saturating_sub(c.timeline_from)).max(NS_PER_MS / 10)}
                                lanes={c.lanes.clone()} compact={true} />
                        </>
                    }
                }
            } }
        </div>
    }
}
