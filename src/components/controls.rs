//! Play, pause, step and the speed of virtual time, as intents on the lab.

use crate::driver::Lab;
use crate::state::SPEEDS;
use xlog::{Milestone, Ns};
use yew::prelude::*;

#[function_component(Controls)]
pub fn controls() -> Html {
    let lab = use_context::<Lab>().expect("Controls sits inside the lab's context");
    let (playing, speed, now) = (lab.state.playing, lab.state.speed_ns, lab.frame.view.now_ns);
    let toggle = {
        let lab = lab.clone();
        Callback::from(move |_: MouseEvent| lab.toggle())
    };
    let step = {
        let lab = lab.clone();
        Callback::from(move |_: MouseEvent| lab.step())
    };
    let back = {
        let lab = lab.clone();
        Callback::from(move |_: MouseEvent| lab.step_back())
    };
    let on_scrub = {
        let lab = lab.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Ok(us) = input.value().parse::<u64>() {
                lab.seek(us * 1000);
            }
        })
    };
    let (start_us, reached_us) = (lab.start() / 1000, lab.reached.div_ceil(1000));
    let on_speed = {
        let lab = lab.clone();
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(ns) = sel.value().parse::<Ns>() {
                lab.set_speed(ns);
            }
        })
    };
    let note = use_state(String::new);
    let step_to = |m: Milestone| {
        let (lab, note) = (lab.clone(), note.clone());
        Callback::from(move |_: MouseEvent| {
            let found = lab.step_to(m);
            note.set(if found { String::new() } else { format!("no {} within the next second", m.label()) });
        })
    };
    html! {
        <>
        <div class="controls">
            <button data-testid="play" onclick={toggle} aria-pressed={playing.to_string()}>
                { if playing { "Pause" } else { "Play" } }
            </button>
            <button class="secondary" data-testid="step-back" onclick={back} title="go back one speed step (b)">
                { "◀ Back" }
            </button>
            <button class="secondary" data-testid="step" onclick={step} title="advance virtual time by one speed step">
                { "Step" }
            </button>
            <select data-testid="speed" onchange={on_speed} aria-label="virtual time per frame">
                { for SPEEDS.iter().map(|&(ns, label)| html! {
                    <option value={ns.to_string()} selected={ns == speed}>{ label }</option>
                }) }
            </select>
            <span class="clock" data-testid="clock">{ format!("t = {:.3} ms", now as f64 / 1e6) }</span>
        </div>
        <div class="controls scrub">
            <input type="range" data-testid="scrub" aria-label="virtual time (µs): drag to travel back and forth"
                min={start_us.to_string()} max={reached_us.max(start_us + 1).to_string()} value={(now / 1000).to_string()}
                onchange={on_scrub} />
        </div>
        <div class="controls step-to">
            <span class="muted">{ "Step to:" }</span>
            { for Milestone::ALL.iter().map(|&m| html! {
                <button class="secondary small" data-testid={format!("step-to-{m:?}").to_lowercase()} onclick={step_to(m)}>
                    { m.label().trim_start_matches("next ") }
                </button>
            }) }
            if !note.is_empty() { <span class="muted" data-testid="step-to-note">{ (*note).clone() }</span> }
        </div>
        </>
    }
}
