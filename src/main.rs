//! Log Lab in the browser: the Yew app around one `xlog` simulation.

mod address;
mod components;
mod driver;
mod geometry;
mod keyframes;
mod keys;
mod narrate;
mod series;
mod state;

use address::Opened;
use components::{
    ail::AilPanel, cil::CilPanel, controls::Controls, devices::DevicesPanel, logbar::LogBar, picker::Picker,
    plots::Plots, ring::IclogRing, settings::Settings, stats::Stats, tasks::TasksPanel, timeline::Timeline,
    watches::Watches, whatif::WhatIf,
};
use driver::{use_lab, Lab};
use std::rc::Rc;
use xlog::find_preset_entry;
use yew::prelude::*;

#[function_component(App)]
fn app() -> Html {
    let opened = use_state(|| Rc::new(address::open(&address::current_search())));
    address::use_address_sync((*opened).clone());
    let on_open = {
        let opened = opened.clone();
        Callback::from(move |o: Opened| opened.set(Rc::new(o)))
    };
    // A new scenario mounts a new page: its driver starts from a fresh simulation.
    let key = address::link_query(&opened);
    html! { <LabPage key={key} opened={(*opened).clone()} {on_open} /> }
}

#[derive(Properties, PartialEq)]
struct LabPageProps {
    opened: Rc<Opened>,
    on_open: Callback<Opened>,
}

#[function_component(LabPage)]
fn lab_page(p: &LabPageProps) -> Html {
    let opened = p.opened.clone();
    let lab = use_lab(opened.clone());
    keys::use_shortcuts(lab.clone());
    let scenario = &opened.scenario;
    let frame = lab.frame.clone();
    let v = frame.view.clone();
    let on_pick = {
        let on_open = p.on_open.clone();
        Callback::from(move |(name, fixed): (String, bool)| {
            if let Ok(e) = find_preset_entry(&name) {
                let scenario = if fixed { e.fixed() } else { e.scenario() };
                on_open.emit(Opened { scenario, preset: name, at: None, error: None });
            }
        })
    };
    let on_set = {
        let (on_open, opened) = (p.on_open.clone(), opened.clone());
        Callback::from(move |(k, v): (String, String)| -> Result<(), String> {
            let mut s = opened.scenario.clone();
            s.set(&k, &v)?;
            s.validate()?;
            on_open.emit(Opened { scenario: s, preset: opened.preset.clone(), at: None, error: None });
            Ok(())
        })
    };
    html! {
        <ContextProvider<Lab> context={lab.clone()}>
            <header>
                <h1>{ "Log Lab" }</h1>
                <span class="sub">{ format!("the XFS journal, live — {}: {} writers, {} x {} KiB iclogs, {} MiB log, {}",
                    if opened.preset.is_empty() { "custom scenario".to_string() } else { format!("preset {}", opened.preset) },
                    scenario.writers, scenario.iclog_count, scenario.iclog_size.0 >> 10, scenario.log_size.0 >> 20, scenario.device) }</span>
            </header>
            if let Some(e) = opened.error.as_ref().or(lab.error.as_ref()) {
                <p class="error" data-testid="error" role="alert">{ e }</p>
            }
            <div class="sr-live" aria-live="polite" data-testid="narration">
                { if lab.state.playing && lab.state.speed_ns > 100 * xlog::NS_PER_US { String::new() } else { frame.narration.join("; ") } }
            </div>
            <main id="lab" data-ready="true" data-sim-ns={v.now_ns.to_string()} data-events={frame.events.to_string()}
                data-preset={opened.preset.clone()} data-generation={frame.generation.to_string()} data-keyframes={lab.keyframes().to_string()}
                data-frame-ms-p95={lab.frame_times.borrow().p95().map_or(String::new(), |v| format!("{v:.2}"))}
                data-iclogs={v.iclogs.len().to_string()} data-trace-hash={frame.metrics.trace_hash.clone()}>
                <section>
                    <div class="panel" style="margin-bottom:14px">
                        <Picker preset={opened.preset.clone()} scenario={scenario.clone()} {on_pick} />
                        <Settings scenario={scenario.clone()} {on_set} />
                    </div>
                    <div class="panel" style="margin-bottom:14px">
                        <Controls />
                        <Watches />
                        <WhatIf />
                        <p class="keys">{ "Keys: " }{ for keys::SHORTCUTS.iter().map(|(k, what)| html! { <span><kbd>{ *k }</kbd>{ format!(" {what}") }</span> }) }</p>
                    </div>
                    <IclogRing view={v.clone()} iclogs={frame.iclogs.clone()} />
                    <LogBar view={v.clone()} space={frame.space.clone()} />
                    <DevicesPanel devices={frame.devices.clone()} />
                </section>
                <section>
                    <Timeline spans={frame.timeline.clone()} now={v.now_ns}
                        window={(lab.state.speed_ns * 120).clamp(2 * xlog::NS_PER_MS, driver::TIMELINE_NS)}
                        lanes={frame.devices.iter().map(|d| format!("{} device ({})", d.role, d.profile)).collect::<Vec<_>>()} />
                    <Plots series={frame.plots.clone()} />
                    <Stats view={v.clone()} metrics={frame.metrics.clone()} />
                    <CilPanel cil={frame.cil.clone()} />
                    <AilPanel ail={frame.ail.clone()} />
                    <TasksPanel view={v.clone()} />
                </section>
            </main>
        </ContextProvider<Lab>>
    }
}

fn main() {
    yew::Renderer::<App>::new().render();
}
