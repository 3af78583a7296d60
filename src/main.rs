//! Log Lab in the browser: the Yew app around one `xlog` simulation.

mod address;
mod api;
mod bench;
mod canvas;
mod components;
mod crash_job;
mod download;
mod drawing;
mod driver;
mod keyframes;
mod keys;
mod narrate;
mod palette;
mod panic_panel;
mod series;
mod state;
mod sweep_job;
mod workers;

use components::{
    ail::AilPanel,
    cil::CilPanel,
    compare::ComparePanel,
    controls::Controls,
    copylink::CopyLink,
    crash::CrashPanel,
    devices::DevicesPanel,
    exports::ExportsPanel,
    help::Help,
    lesson::{LessonCard, LessonList},
    logbar::LogBar,
    mkfs_panel::MkfsPanel,
    picker::Picker,
    plots::Plots,
    ring::IclogRing,
    rsum::RsumPanel,
    settings::Settings,
    stats::Stats,
    sweep::SweepPanel,
    tasks::TasksPanel,
    teacher::{AssignmentPanel, TeacherPanel},
    timeline::Timeline,
    trace::TracePanel,
    watches::Watches,
    whatif::WhatIf,
};
use driver::{use_lab, Lab};
use state::{LabState, Panel};
use std::rc::Rc;
use xlog::find_preset_entry;
use yew::prelude::*;

#[function_component(App)]
fn app() -> Html {
    let state = use_reducer(|| LabState::new(Rc::new(address::open(&address::current_search()))));
    address::use_address_sync(state.opened.clone());
    use_effect_with((), |_| {
        api::install();
        // "lab-ready": the first render, measured from navigation start by the e2e suite.
        if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
            let _ = p.mark("lab-ready");
        }
    });
    // A new scenario mounts a new page: its driver starts from a fresh simulation.
    let key = address::link_query(&state.opened);
    panic_panel::set_link(&key);
    html! { <LabPage key={key} {state} /> }
}

#[derive(Properties, PartialEq)]
struct LabPageProps {
    state: UseReducerHandle<LabState>,
}

#[function_component(LabPage)]
fn lab_page(p: &LabPageProps) -> Html {
    let lab = use_lab(p.state.clone());
    keys::use_shortcuts(lab.clone());
    api::set_current(&lab);
    {
        // The API's events: "load" once this page's scenario is on screen, "frame" per frame.
        let lab = lab.clone();
        use_effect_with(lab.frame.generation, move |&generation| {
            let detail = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&detail, &"now".into(), &(lab.frame.view.now_ns as f64).into());
            let _ = js_sys::Reflect::set(&detail, &"events".into(), &(lab.frame.events as f64).into());
            let _ = js_sys::Reflect::set(&detail, &"hash".into(), &lab.frame.metrics.trace_hash.clone().into());
            api::emit(if generation == 0 { "load" } else { "frame" }, &detail);
        });
    }
    let embed = lab.state.opened.link.embed;
    let opened = lab.state.opened.clone();
    let scenario = &opened.scenario;
    let frame = lab.frame.clone();
    let v = frame.view.clone();
    let shows = |panel: Panel| lab.state.shows(panel);
    let on_pick = {
        let lab = lab.clone();
        Callback::from(move |(name, fixed): (String, bool)| {
            if let Ok(e) = find_preset_entry(&name) {
                let scenario = if fixed { e.fixed() } else { e.scenario() };
                lab.set_scenario(address::chosen(scenario, name));
            }
        })
    };
    let on_set = {
        let (lab, opened) = (lab.clone(), opened.clone());
        Callback::from(move |(k, v): (String, String)| -> Result<(), String> {
            let mut s = opened.scenario.clone();
            s.set(&k, &v)?;
            s.validate()?;
            lab.set_scenario(address::chosen(s, opened.preset.clone()));
            Ok(())
        })
    };
    html! {
        <ContextProvider<Lab> context={lab.clone()}>
            <header class={classes!(embed.then_some("embedded"))}>
                <h1>{ "Log Lab" }</h1>
                if embed {
                    <a class="open-full" data-testid="open-full" target="_blank" rel="noopener"
                        href={address::full_lab_query(&opened)}>{ "open in Log Lab ↗" }</a>
                }
                <span class="sub">{ format!("the XFS journal, live — {}: {} writers, {} x {} KiB iclogs, {} MiB log, {}",
                    if opened.preset.is_empty() { "custom scenario".to_string() } else { format!("preset {}", opened.preset) },
                    scenario.writers, scenario.iclog_count, scenario.iclog_size.0 >> 10, scenario.log_size.0 >> 20, scenario.device) }</span>
            </header>
            if let Some(e) = opened.error.as_ref().or(lab.error.as_ref()) {
                <p class="error" data-testid="error" role="alert">{ e }</p>
            }
            if let Some(c) = lab.link_moved.as_ref() {
                <div class="banner" data-testid="model-changed" role="status" data-link-model={c.link_model.to_string()}
                    data-model={xlog::MODEL_VERSION.to_string()} data-link-hash={c.link_hash.clone()} data-hash={c.hash.clone()}>
                    <p>{ c.summary() }</p>
                    if !c.changes.is_empty() {
                        <ul>{ for c.changes.iter().map(|m| html! { <li data-version={m.version.to_string()}><strong>{ format!("Model {}: ", m.version) }</strong>{ m.text.replace('`', "") }</li> }) }</ul>
                    }
                </div>
            }
            if !embed { <TeacherPanel /> <AssignmentPanel /> <LessonCard /> }
            <div class="sr-live" aria-live="polite" data-testid="narration">
                { if lab.state.playing && lab.state.speed_ns > 100 * xlog::NS_PER_US { String::new() } else { frame.narration.join("; ") } }
            </div>
            <main id="lab" data-ready="true" data-embed={embed.to_string()} data-sim-ns={v.now_ns.to_string()} data-events={frame.events.to_string()}
                data-preset={opened.preset.clone()} data-generation={frame.generation.to_string()} data-keyframes={lab.keyframes().to_string()}
                data-frame-ms-p95={lab.frame_times.borrow().p95().map_or(String::new(), |v| format!("{v:.2}"))}
                data-iclogs={v.iclogs.len().to_string()} data-trace-hash={frame.metrics.trace_hash.clone()}>
                <section>
                    if !embed {
                        <div class="panel" style="margin-bottom:14px">
                            <Picker preset={opened.preset.clone()} scenario={scenario.clone()} {on_pick} />
                            <Settings scenario={scenario.clone()} {on_set} />
                        </div>
                    }
                    <div class="panel" style="margin-bottom:14px" data-testid="control-panel">
                        <Controls />
                        if !embed {
                        <Watches />
                        <WhatIf />
                        { components::panels::panel_picker(&lab) }
                        <CopyLink />
                        <LessonList />
                        <p class="keys">
                            <button class="small secondary" data-testid="help-open" onclick={let lab = lab.clone(); Callback::from(move |_: MouseEvent| lab.toggle_help())}>
                                { "Keyboard shortcuts" }</button>
                            <span>{ "or press " }<kbd>{ "?" }</kbd></span>
                        </p>
                        }
                    </div>
                    if shows(Panel::Ring) { <IclogRing view={v.clone()} iclogs={frame.iclogs.clone()} /> }
                    if shows(Panel::LogSpace) { <LogBar view={v.clone()} space={frame.space.clone()} /> }
                    if shows(Panel::Devices) { <DevicesPanel devices={frame.devices.clone()} /> }
                    if shows(Panel::Crash) { <CrashPanel /> }
                    if shows(Panel::Sizing) { <MkfsPanel /> }
                </section>
                <section>
                    if shows(Panel::Timeline) { <Timeline spans={frame.timeline.clone()} now={v.now_ns} space={frame.space.clone()}
                        window={(lab.state.speed_ns * 120).clamp(2 * xlog::NS_PER_MS, driver::TIMELINE_NS).min(v.now_ns.saturating_sub(frame.timeline_from)).max(xlog::NS_PER_MS / 10)}
                        lanes={frame.devices.iter().map(|d| format!("{} device ({})", d.role, d.profile)).collect::<Vec<_>>()} /> }
                    if shows(Panel::Plots) { <Plots series={frame.plots.clone()} /> }
                    if shows(Panel::Counters) { <Stats view={v.clone()} metrics={frame.metrics.clone()} /> }
                    if shows(Panel::Cil) { <CilPanel cil={frame.cil.clone()} /> }
                    if shows(Panel::Ail) { <AilPanel ail={frame.ail.clone()} /> }
                    if shows(Panel::Tasks) { <TasksPanel view={v.clone()} /> }
                    if shows(Panel::Trace) { <TracePanel /> }
                    if shows(Panel::Compare) { <ComparePanel /> }
                    if shows(Panel::Rsum) && frame.rt.is_some() { <RsumPanel rt={frame.rt.clone()} /> }
                    if shows(Panel::Sweep) { <SweepPanel /> }
                    if shows(Panel::Exports) { <ExportsPanel /> }
                </section>
            </main>
            <Help />
        </ContextProvider<Lab>>
    }
}

fn main() {
    // In a crash-explorer Web Worker the module is loaded for its exports only.
    if web_sys::window().is_none() {
        return;
    }
    match panic_panel::install() {
        Some(host) => yew::Renderer::<App>::with_root(host).render(),
        None => yew::Renderer::<App>::new().render(),
    };
}
