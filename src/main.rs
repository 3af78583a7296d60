//! Log Lab in the browser: the Yew app around one `xlog` simulation.

mod address;
mod components;
mod driver;
mod geometry;

use components::{controls::Controls, logbar::LogBar, ring::IclogRing, stats::Stats};
use driver::use_sim;
use yew::prelude::*;

#[function_component(App)]
fn app() -> Html {
    let opened = use_memo((), |_| address::open(&address::current_search()));
    let scenario = opened.scenario.clone();
    let sim = use_sim(scenario.clone(), opened.at);
    let v = sim.view.clone();
    let (play, pause, step, slice) = {
        let (a, b, c, d) = (sim.clone(), sim.clone(), sim.clone(), sim.clone());
        (
            Callback::from(move |_| a.play()),
            Callback::from(move |_| b.pause()),
            Callback::from(move |_| c.step(1)),
            Callback::from(move |ns| d.set_slice(ns)),
        )
    };
    html! {
        <>
            <header>
                <h1>{ "Log Lab" }</h1>
                <span class="sub">{ format!("the XFS journal, live — {}: {} writers, {} x {} KiB iclogs, {} MiB log, {}",
                    if opened.preset.is_empty() { "custom scenario".to_string() } else { format!("preset {}", opened.preset) },
                    scenario.writers, scenario.iclog_count, scenario.iclog_size.0 >> 10, scenario.log_size.0 >> 20, scenario.device) }</span>
            </header>
            if let Some(e) = opened.error.as_ref().or(sim.error.as_ref()) {
                <p class="error" data-testid="error" role="alert">{ e }</p>
            }
            <main id="lab" data-ready="true" data-sim-ns={v.now_ns.to_string()} data-events={sim.events.to_string()}
                data-preset={opened.preset.clone()}
                data-iclogs={v.iclogs.len().to_string()} data-trace-hash={sim.metrics.trace_hash.clone()}>
                <section>
                    <div class="panel" style="margin-bottom:14px">
                        <Controls playing={sim.playing} now_ns={v.now_ns} slice_ns={sim.slice_ns}
                            on_play={play} on_pause={pause} on_step={step} on_slice={slice} />
                    </div>
                    <IclogRing view={v.clone()} />
                    <LogBar view={v.clone()} />
                </section>
                <section>
                    <Stats view={v.clone()} metrics={sim.metrics.clone()} />
                </section>
            </main>
        </>
    }
}

fn main() {
    yew::Renderer::<App>::new().render();
}
