//! The settings editor: every `--set` key, validated exactly as the CLI validates it. A bad
//! value keeps what the user typed and shows the message beside the field.

use xlog::{Scenario, SET_KEYS};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct SettingsProps {
    pub scenario: Scenario,
    /// Applies key=value to the scenario; `Err` is the message to show beside the field.
    pub on_set: Callback<(String, String), Result<(), String>>,
}

#[derive(Properties, PartialEq)]
struct FieldProps {
    key_name: &'static str,
    value: String,
    on_set: Callback<(String, String), Result<(), String>>,
}

#[function_component(Field)]
fn field(p: &FieldProps) -> Html {
    let text = use_state(|| p.value.clone());
    let error = use_state(|| None::<String>);
    {
        // A new scenario resets the field to its value, unless the user's text is in error.
        let (text, error, value) = (text.clone(), error.clone(), p.value.clone());
        use_effect_with(value, move |v| {
            if error.is_none() {
                text.set(v.clone());
            }
        });
    }
    let on_change = {
        let (text, error, cb, key) = (text.clone(), error.clone(), p.on_set.clone(), p.key_name);
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let v = input.value();
            text.set(v.clone());
            error.set(cb.emit((key.to_string(), v)).err());
        })
    };
    let id = format!("set-{}", p.key_name);
    html! {
        <div class={classes!("field", error.is_some().then_some("bad"))}>
            <label for={id.clone()}>{ p.key_name }</label>
            <input id={id} data-testid={format!("set-{}", p.key_name)} value={(*text).clone()} onchange={on_change}
                aria-invalid={error.is_some().to_string()} spellcheck="false" />
            if let Some(e) = &*error { <span class="field-error" role="alert" data-testid="field-error">{ e }</span> }
        </div>
    }
}

#[function_component(Settings)]
pub fn settings(p: &SettingsProps) -> Html {
    html! {
        <details class="settings" data-testid="settings">
            <summary>{ "Settings (every --set key)" }</summary>
            <div class="fields">
                { for SET_KEYS.iter().map(|k| html! {
                    <Field key_name={*k} value={p.scenario.get(k).unwrap_or_default()} on_set={p.on_set.clone()} />
                }) }
            </div>
        </details>
    }
}
