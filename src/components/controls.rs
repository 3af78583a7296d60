//! Play, pause, step and the speed of virtual time.

use xlog::{Ns, NS_PER_MS, NS_PER_US};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ControlsProps {
    pub playing: bool,
    pub now_ns: Ns,
    pub slice_ns: Ns,
    pub on_play: Callback<()>,
    pub on_pause: Callback<()>,
    pub on_step: Callback<()>,
    pub on_slice: Callback<Ns>,
}

const SLICES: &[(Ns, &str)] = &[
    (NS_PER_US, "1 µs / frame"),
    (10 * NS_PER_US, "10 µs / frame"),
    (100 * NS_PER_US, "100 µs / frame"),
    (NS_PER_MS, "1 ms / frame"),
    (10 * NS_PER_MS, "10 ms / frame"),
];

#[function_component(Controls)]
pub fn controls(p: &ControlsProps) -> Html {
    let toggle = {
        let (play, pause, playing) = (p.on_play.clone(), p.on_pause.clone(), p.playing);
        Callback::from(move |_| if playing { pause.emit(()) } else { play.emit(()) })
    };
    let step = p.on_step.reform(|_: MouseEvent| ());
    let on_slice = {
        let cb = p.on_slice.clone();
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(ns) = sel.value().parse::<Ns>() {
                cb.emit(ns);
            }
        })
    };
    html! {
        <div class="controls">
            <button data-testid="play" onclick={toggle}>{ if p.playing { "Pause" } else { "Play" } }</button>
            <button class="secondary" data-testid="step" onclick={step}>{ "Step" }</button>
            <select data-testid="speed" onchange={on_slice}>
                { for SLICES.iter().map(|&(ns, label)| html! {
                    <option value={ns.to_string()} selected={ns == p.slice_ns}>{ label }</option>
                }) }
            </select>
            <span class="clock" data-testid="clock">{ format!("t = {:.3} ms", p.now_ns as f64 / 1e6) }</span>
        </div>
    }
}
