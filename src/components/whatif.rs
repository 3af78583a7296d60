//! "What if": continue the run from this instant with one policy changed (the knobs the model
//! reads as it goes; geometry and devices were fixed when the run was built).

use crate::driver::Lab;
use xlog::BRANCH_KEYS;
use yew::prelude::*;

#[function_component(WhatIf)]
pub fn what_if() -> Html {
    let lab = use_context::<Lab>().expect("WhatIf sits inside the lab's context");
    let key = use_state(|| "flush".to_string());
    let value = use_state(|| "legacy".to_string());
    let error = use_state(|| None::<String>);
    let on_key = {
        let key = key.clone();
        Callback::from(move |e: Event| key.set(e.target_unchecked_into::<web_sys::HtmlSelectElement>().value()))
    };
    let on_value = {
        let value = value.clone();
        Callback::from(move |e: Event| value.set(e.target_unchecked_into::<web_sys::HtmlInputElement>().value()))
    };
    let go = {
        let (lab, key, value, error) = (lab.clone(), key.clone(), value.clone(), error.clone());
        Callback::from(move |_: MouseEvent| error.set(lab.branch(&key, &value).err()))
    };
    html! {
        <div class="watches" data-testid="whatif">
            <div class="controls">
                <span class="muted">{ "What if, from now:" }</span>
                <select data-testid="whatif-key" onchange={on_key} aria-label="setting to change mid-run">
                    { for BRANCH_KEYS.iter().map(|k| html! { <option value={*k} selected={*k == key.as_str()}>{ *k }</option> }) }
                </select>
                { "=" }
                <input data-testid="whatif-value" class="num" value={(*value).clone()} onchange={on_value} aria-label="new value" />
                <button class="secondary small" data-testid="whatif-go" onclick={go}>{ "Branch here" }</button>
            </div>
            if let Some(e) = &*error { <p class="field-error" role="alert">{ e }</p> }
            if !lab.state.branches.is_empty() {
                <p class="muted" data-testid="whatif-branches">{ format!("Branched: {} (the address still names the original run)", lab.state.branches.join("; ")) }</p>
            }
        </div>
    }
}
