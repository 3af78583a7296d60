//! The scenario picker: every preset with its description, grouped (workloads, source
//! threads, bug zoo); a bug preset has a bug/fixed switch.

use xlog::{find_preset_entry, Scenario, PRESETS};
use yew::prelude::*;

const GROUPS: &[&str] = &["workloads", "source threads", "bug zoo"];

#[derive(Properties, PartialEq)]
pub struct PickerProps {
    /// The preset the scenario is based on ("" for none).
    pub preset: String,
    pub scenario: Scenario,
    /// Opens (preset, fixed variant?).
    pub on_pick: Callback<(String, bool)>,
}

#[function_component(Picker)]
pub fn picker(p: &PickerProps) -> Html {
    let entry = find_preset_entry(&p.preset).ok();
    let fixed = entry.is_some_and(|e| e.is_bug() && e.fixed() == p.scenario);
    let on_change = {
        let cb = p.on_pick.clone();
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            cb.emit((sel.value(), false));
        })
    };
    let on_fixed = {
        let (cb, preset) = (p.on_pick.clone(), p.preset.clone());
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            cb.emit((preset.clone(), input.checked()));
        })
    };
    html! {
        <div class="picker">
            <label>{ "Scenario " }
                <select data-testid="preset" onchange={on_change}>
                    if entry.is_none() { <option selected=true value="">{ "custom scenario" }</option> }
                    { for GROUPS.iter().map(|g| html! {
                        <optgroup label={*g}>
                            { for PRESETS.iter().filter(|e| e.group() == *g).map(|e| html! {
                                <option value={e.name} selected={e.name == p.preset}>{ e.name }</option>
                            }) }
                        </optgroup>
                    }) }
                </select>
            </label>
            if let Some(e) = entry.filter(|e| e.is_bug()) {
                <label class="fixed" title={format!("the fix: {}", e.fix.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "))}>
                    <input type="checkbox" data-testid="fixed" checked={fixed} onchange={on_fixed} />
                    { " fixed" }
                </label>
            }
            if let Some(e) = entry {
                <p class="what" data-testid="preset-about">{ e.about }</p>
            }
        </div>
    }
}
