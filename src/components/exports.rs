//! Taking the run away: its metrics (the JSON `loglab run --json` prints), the plots' series
//! as CSV, the charts as PNG and the device requests as a dm-log-writes stream.

use crate::driver::Lab;
use crate::series::PLOTS;
use yew::prelude::*;

#[function_component(ExportsPanel)]
pub fn exports_panel() -> Html {
    let lab = use_context::<Lab>().expect("ExportsPanel sits inside the lab's context");
    let error = use_state(|| None::<String>);
    let on_metrics = {
        let lab = lab.clone();
        Callback::from(move |_: MouseEvent| {
            let text = serde_json::to_string(&*lab.frame.metrics).unwrap_or_default();
            crate::download::save("loglab-metrics.json", "application/json", &text);
        })
    };
    let on_series = {
        let lab = lab.clone();
        Callback::from(move |_: MouseEvent| {
            let mut csv = String::from("plot,t_ms,value\n");
            for (k, points) in lab.frame.plots.iter().enumerate() {
                for (t, v) in points {
                    csv += &format!("{},{t},{v}\n", PLOTS[k].0);
                }
            }
            crate::download::save("loglab-series.csv", "text/csv", &csv);
        })
    };
    let png = |name: &'static str, selector: &'static str| {
        let error = error.clone();
        Callback::from(move |_: MouseEvent| {
            if crate::download::save_canvas_png(name, selector).is_none() {
                error.set(Some(format!("{name}: show that panel first")));
            }
        })
    };
    let on_logwrites = {
        let (lab, error) = (lab.clone(), error.clone());
        Callback::from(move |_: MouseEvent| match lab.logwrites_to_now() {
            Ok(bytes) => {
                crate::download::save_bytes("loglab.logwrites", "application/octet-stream", &bytes);
            }
            Err(e) => error.set(Some(e)),
        })
    };
    html! {
        <div class="panel" data-testid="exports" style="margin-top:14px">
            <h2>{ "exports" }</h2>
            <p class="what">{ "The run up to this moment, to keep or to take elsewhere: the metrics loglab run --json prints, the plots' series, \
                the charts as pictures, and every log-device request with its data as a dm-log-writes stream (what xfstests' replay-log reads)." }</p>
            <div class="controls">
                <button class="small secondary" data-testid="export-metrics" onclick={on_metrics}>{ "metrics (JSON)" }</button>
                <button class="small secondary" data-testid="export-series" onclick={on_series}>{ "plot series (CSV)" }</button>
                <button class="small secondary" data-testid="export-plot-png" onclick={png("loglab-plot.png", "[data-testid=\"plots\"] canvas")}>{ "plot (PNG)" }</button>
                <button class="small secondary" data-testid="export-timeline-png" onclick={png("loglab-timeline.png", "[data-testid=\"timeline\"] canvas")}>{ "flush timeline (PNG)" }</button>
                <button class="small secondary" data-testid="export-logwrites" onclick={on_logwrites}>{ "dm-log-writes" }</button>
            </div>
            if let Some(e) = &*error { <p class="error">{ e.clone() }</p> }
        </div>
    }
}
