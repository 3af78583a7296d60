//! Log Lab in the browser: the Yew app around one `xlog` simulation.

mod components;
mod driver;
mod geometry;

use components::{controls::Controls, logbar::LogBar, ring::IclogRing, stats::Stats};
use driver::use_sim;
use xlog::{find_preset, DEFAULT_PRESET};
use yew::prelude::*;

#[function_component(App)]
fn app() -> Html {
    let scenario = find_preset(DEFAULT_PRESET).expect("the default preset exists");
    let sim = use_sim(scenario.clone());
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
                <span class="sub">{ format!("the XFS journal, live — preset {DEFAULT_PRESET}: {} writers, {} x {} KiB iclogs, {} MiB log, {}",
                    scenario.writers, scenario.iclog_count, scenario.iclog_size.0 >> 10, scenario.log_size.0 >> 20, scenario.device) }</span>
            </header>
            if let Some(e) = &sim.error {
                <p class="error" data-testid="error">{ e }</p>
            }
            <main id="lab" data-ready="true" data-sim-ns={v.now_ns.to_string()}
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
