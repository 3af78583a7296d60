//! Sweeps: the scenario over a grid of one or two settings (the source thread 000 table: log size by
//! device), each run in a Web Worker; a table, a chart of one metric against the first setting
//! (a line per value of the second), and CSV and JSON downloads (`loglab sweep --json`'s rows).

use crate::canvas::use_canvas;
use crate::driver::Lab;
use crate::palette;
use crate::workers::{self, Pool};
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use serde_json::Value;
use std::rc::Rc;
use web_sys::HtmlCanvasElement;
use xlog::sweep::grid;
use xlog::SET_KEYS;
use yew::prelude::*;

/// The metrics the table shows (`loglab sweep`'s default columns).
const COLUMNS: &[&str] = xlog::sweep::DEFAULT_COLUMNS;
/// What the chart can show: the table's columns and the source thread 000 table's bandwidth.
const CHARTABLE: &[&str] = &[
    "latency_ms_p995",
    "data_mb_s",
    "bandwidth_mb_s",
    "grant_head_waits",
    "tx_per_sec",
    "latency_ms_p50",
    "latency_ms_p99",
    "cil_throttle_waits",
    "cache_flushes",
];
const CSS_W: f64 = 640.0;
const CSS_H: f64 = 220.0;
const LINE_COLOURS: &[&str] = &[
    palette::BLUE,
    palette::VERMILLION,
    palette::BLUISH_GREEN,
    palette::ORANGE,
    palette::REDDISH_PURPLE,
    palette::SKY_BLUE,
];

/// The sweep asked for and its rows so far (`None` until a run answers).
#[derive(Clone, Default, PartialEq)]
struct Sweep {
    vary: Vec<(String, Vec<String>)>,
    rows: Vec<Vec<(String, String)>>,
    results: Vec<Option<Value>>,
    workers: usize,
    error: Option<String>,
}

impl Sweep {
    fn done(&self) -> usize {
        self.results.iter().filter(|r| r.is_some()).count()
    }
    /// The rows so far, as `loglab sweep --json` prints them (each from the core's `SweepRow`).
    fn json(&self) -> String {
        let rows: Vec<&Value> = self.results.iter().flatten().filter(|v| v.is_object()).collect();
        serde_json::to_string(&rows).unwrap_or_default()
    }
    fn csv(&self) -> String {
        let Some(first) = self.results.iter().flatten().next().and_then(Value::as_object) else { return String::new() };
        let keys: Vec<&String> = self.vary.iter().map(|(k, _)| k).collect();
        let metrics: Vec<&String> = first.keys().filter(|k| !keys.contains(k)).collect();
        let mut out = keys.iter().chain(metrics.iter()).map(|s| s.as_str()).collect::<Vec<_>>().join(",") + "\n";
        for row in self.results.iter().flatten().filter_map(Value::as_object) {
            let cells: Vec<String> = keys
                .iter()
                .chain(metrics.iter())
                .map(|k| row.get(*k).map_or(String::new(), |v| v.to_string().trim_matches('"').to_string()))
                .collect();
            out += &(cells.join(",") + "\n");
        }
        out
    }
}

/// A table cell: `…` until its run answers, then as `loglab sweep` prints it.
fn cell_text(result: Option<&Value>, column: &str) -> String {
    let Some(v) = result else { return "…".into() };
    let done = v.get("transactions").and_then(Value::as_u64).unwrap_or(0);
    metric(v, column).map_or("…".into(), |x| xlog::sweep::cell_text(column, x, done))
}

fn metric(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

/// Source thread 000's published values on this chart, as (line, x, value): a sweep of `log_size`
/// by `device` over the source thread's logs and devices, charting a metric the source thread's table has.
fn thread_points(s: &Sweep, y: &str) -> Vec<(usize, usize, f64)> {
    let (Some((k1, xs)), Some((k2, lines))) = (s.vary.first(), s.vary.get(1)) else { return Vec::new() };
    if k1 != "log_size" || k2 != "device" {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (li, dev) in lines.iter().enumerate() {
        for (xi, x) in xs.iter().enumerate() {
            let Ok(bytes) = xlog::parse_size("log_size", x) else { continue };
            if let Some(v) = xlog::source_threads::thread000(dev, bytes, y) {
                out.push((li, xi, v));
            }
        }
    }
    out
}

fn draw(canvas: &HtmlCanvasElement, scale: f64, s: &Sweep, y: &str) -> Option<()> {
    let root = CanvasBackend::with_canvas_object(canvas.clone())?.into_drawing_area();
    root.fill(&WHITE).ok()?;
    let (k1, xs) = s.vary.first()?;
    let lines: Vec<String> = s.vary.get(1).map_or(vec![String::new()], |(_, v)| v.clone());
    let seed = thread_points(s, y);
    let model_max = s.results.iter().flatten().filter_map(|r| metric(r, y)).fold(0.0f64, f64::max);
    let ymax = seed.iter().map(|p| p.2).fold(model_max, f64::max).max(1e-9) * 1.1;
    let font = ("sans-serif", 12.0 * scale).into_font();
    let mut chart = ChartBuilder::on(&root)
        .margin(8.0 * scale)
        .x_label_area_size(34.0 * scale)
        .y_label_area_size(60.0 * scale)
        .build_cartesian_2d(-0.3f64..(xs.len() as f64 - 0.7).max(0.7), 0.0..ymax)
        .ok()?;
    let labels = xs.clone();
    chart
        .configure_mesh()
        .x_labels(xs.len().max(2))
        .x_label_formatter(&|v| {
            labels
                .get(v.round().max(0.0) as usize)
                .filter(|_| (v - v.round()).abs() < 0.01)
                .cloned()
                .unwrap_or_default()
        })
        .y_label_formatter(&|v| crate::components::plots::compact(*v))
        .x_desc(k1.as_str())
        .y_desc(y)
        .label_style(font.clone())
        .axis_desc_style(font.clone())
        .draw()
        .ok()?;
    // One line per value of the second setting (the legend is HTML, under the chart).
    for li in 0..lines.len() {
        let (r, g, b) = palette::rgb(LINE_COLOURS[li % LINE_COLOURS.len()]);
        let colour = RGBColor(r, g, b);
        let pts: Vec<(f64, f64)> = (0..xs.len())
            .filter_map(|xi| {
                let i = xi * lines.len() + li;
                s.results.get(i)?.as_ref().and_then(|v| metric(v, y)).map(|m| (xi as f64, m))
            })
            .collect();
        chart.draw_series(LineSeries::new(pts, colour.stroke_width((2.0 * scale) as u32))).ok()?;
        // The source thread's own numbers: hollow rings of the line's colour, unjoined.
        let rings = seed.iter().filter(|p| p.0 == li).map(|&(_, xi, v)| {
            Circle::new((xi as f64, v), (5.0 * scale) as i32, colour.stroke_width((2.0 * scale) as u32))
        });
        chart.draw_series(rings).ok()?;
    }
    root.present().ok()
}

#[function_component(SweepPanel)]
pub fn sweep_panel() -> Html {
    let lab = use_context::<Lab>().expect("SweepPanel sits inside the lab's context");
    let k1 = use_state(|| "log_size".to_string());
    let v1 = use_state(|| "2MiB,4MiB,8MiB".to_string());
    let k2 = use_state(|| "flush".to_string());
    let v2 = use_state(|| "legacy,upstream".to_string());
    let y = use_state(|| "latency_ms_p995".to_string());
    let sweep = use_state(|| None::<Rc<Sweep>>);
    let acc = use_mut_ref(Sweep::default);
    let pool = use_mut_ref(|| None::<Pool>);
    let text = |h: &UseStateHandle<String>| {
        let h = h.clone();
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            h.set(input.value());
        })
    };
    let pick = |h: &UseStateHandle<String>| {
        let h = h.clone();
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            h.set(sel.value());
        })
    };
    let on_run = {
        let (lab, k1, v1, k2, v2, sweep, acc, pool) =
            (lab.clone(), k1.clone(), v1.clone(), k2.clone(), v2.clone(), sweep.clone(), acc.clone(), pool.clone());
        Callback::from(move |_: MouseEvent| {
            let mut vary = vec![((*k1).clone(), xlog::sweep::values(&v1))];
            if !k2.is_empty() {
                vary.push(((*k2).clone(), xlog::sweep::values(&v2)));
            }
            let fail = |e: String| sweep.set(Some(Rc::new(Sweep { error: Some(e), ..Sweep::default() })));
            if let Some((k, _)) = vary.iter().find(|(_, v)| v.is_empty()) {
                return fail(format!("{k}: no values (give them separated by commas)"));
            }
            let rows = grid(&vary);
            // Every row validated before any runs, as the CLI does (the same core code).
            let scenarios = match xlog::sweep::cell_scenarios(&lab.state.opened.scenario, &rows) {
                Ok(s) => s,
                Err(e) => return fail(e),
            };
            let jobs: Vec<String> = rows
                .iter()
                .zip(scenarios)
                .map(|(cell, scenario)| {
                    serde_json::to_string(&crate::sweep_job::SweepJob { cell: cell.clone(), scenario })
                        .unwrap_or_default()
                })
                .collect();
            *acc.borrow_mut() = Sweep { results: vec![None; rows.len()], vary, rows, ..Sweep::default() };
            let (sw, acc2) = (sweep.clone(), acc.clone());
            let on_result = Callback::from(move |(i, answer): (usize, String)| {
                let v: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
                {
                    let mut a = acc2.borrow_mut();
                    match v.get("error").and_then(Value::as_str) {
                        Some(e) => a.error = Some(e.to_string()),
                        None if i < a.results.len() => a.results[i] = Some(v),
                        None => {}
                    }
                }
                sw.set(Some(Rc::new(acc2.borrow().clone())));
            });
            match workers::run("loglab_sweep_run", jobs, on_result) {
                Ok((p, n)) => {
                    *pool.borrow_mut() = Some(p);
                    acc.borrow_mut().workers = n;
                    sweep.set(Some(Rc::new(acc.borrow().clone())));
                }
                Err(e) => fail(e),
            }
        })
    };
    let on_cancel = {
        let (pool, sweep) = (pool.clone(), sweep.clone());
        Callback::from(move |_: MouseEvent| {
            pool.borrow_mut().take();
            if let Some(s) = (*sweep).clone() {
                let mut s = (*s).clone();
                s.error = Some(format!("cancelled after {} of {} runs", s.done(), s.rows.len()));
                sweep.set(Some(Rc::new(s)));
            }
        })
    };
    let finished = sweep.as_ref().is_some_and(|s| s.error.is_some() || s.done() == s.rows.len());
    if finished && pool.borrow().is_some() {
        pool.borrow_mut().take();
    }
    let canvas = {
        let (s, y) = ((*sweep).clone(), (*y).clone());
        use_canvas((CSS_W, CSS_H), (s.clone(), y.clone()), move |c, scale| {
            if let Some(s) = &s {
                draw(c, scale, s, &y);
            }
        })
    };
    let save = |kind: &'static str| {
        let sweep = sweep.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(s) = sweep.as_ref() {
                match kind {
                    "csv" => crate::download::save("loglab-sweep.csv", "text/csv", &s.csv()),
                    _ => crate::download::save("loglab-sweep.json", "application/json", &s.json()),
                };
            }
        })
    };
    let key_select = |h: &UseStateHandle<String>, id: &'static str, optional: bool| {
        html! {
            <select data-testid={id} onchange={pick(h)}>
                if optional { <option value="" selected={h.is_empty()}>{ "(none)" }</option> }
                { for SET_KEYS.iter().map(|k| html! { <option value={*k} selected={*k == h.as_str()}>{ *k }</option> }) }
            </select>
        }
    };
    html! {
        <div class="panel sweep" data-testid="sweep" style="margin-top:14px"
            data-done={sweep.as_ref().map(|s| s.done().to_string())} data-total={sweep.as_ref().map(|s| s.rows.len().to_string())}>
            <h2>{ "sweep" }</h2>
            <p class="what">{ "The scenario over a grid of settings, each run to the end in a Web Worker (one per core): the source thread 000 table, \
                log size against device, is log_size = 10MiB,20MiB,40MiB,80MiB,160MiB by device = hdd-x4,nvme-x4. The same rows as loglab sweep --json." }</p>
            <div class="controls">
                { key_select(&k1, "sweep-key1", false) }
                <input data-testid="sweep-values1" value={(*v1).clone()} oninput={text(&v1)} aria-label="first setting's values" />
            </div>
            <div class="controls" style="margin-top:4px">
                { key_select(&k2, "sweep-key2", true) }
                <input data-testid="sweep-values2" value={(*v2).clone()} oninput={text(&v2)} aria-label="second setting's values" />
            </div>
            <div class="controls" style="margin-top:6px">
                <button class="small" data-testid="sweep-run" onclick={on_run}>{ "Run sweep" }</button>
                if pool.borrow().is_some() { <button class="small secondary" data-testid="sweep-cancel" onclick={on_cancel}>{ "Cancel" }</button> }
                if finished {
                    <button class="small secondary" data-testid="sweep-csv" onclick={save("csv")}>{ "CSV" }</button>
                    <button class="small secondary" data-testid="sweep-json" onclick={save("json")}>{ "JSON" }</button>
                }
            </div>
            { match sweep.as_ref() {
                None => html! { <p class="muted">{ "Choose one or two settings and their values, then Run sweep." }</p> },
                Some(s) => html! {
                    <>
                        <progress max={s.rows.len().to_string()} value={s.done().to_string()} style="width:100%" />
                        <p class={if s.error.is_some() { "error" } else { "muted" }}>{ match &s.error {
                            Some(e) => e.clone(),
                            None => format!("{} of {} runs on {} workers", s.done(), s.rows.len(), s.workers),
                        } }</p>
                        <table class="stats diff" data-testid="sweep-table">
                            <tr>
                                { for s.vary.iter().map(|(k, _)| html! { <th>{ k.clone() }</th> }) }
                                { for COLUMNS.iter().map(|c| html! { <th>{ *c }</th> }) }
                            </tr>
                            { for s.rows.iter().enumerate().map(|(i, r)| html! {
                                <tr>
                                    { for r.iter().map(|(_, v)| html! { <td>{ v.clone() }</td> }) }
                                    { for COLUMNS.iter().map(|c| html! { <td>{ cell_text(s.results[i].as_ref(), c) }</td> }) }
                                </tr>
                            }) }
                        </table>
                        <div class="controls" style="margin-top:6px">
                            <label>{ "chart: " }
                                <select data-testid="sweep-metric" onchange={pick(&y)}>
                                    { for CHARTABLE.iter().map(|c| html! { <option value={*c} selected={*c == y.as_str()}>{ *c }</option> }) }
                                </select>
                            </label>
                        </div>
                    </>
                },
            } }
            if let Some((k2, vals)) = sweep.as_ref().and_then(|s| s.vary.get(1).cloned()) {
                <div class="legend">
                    { for vals.iter().enumerate().map(|(i, v)| html! {
                        <span style={format!("--c:{}", LINE_COLOURS[i % LINE_COLOURS.len()])}>{ format!("{k2}={v}") }</span>
                    }) }
                    if sweep.as_ref().is_some_and(|s| !thread_points(s, &y).is_empty()) {
                        <em data-testid="sweep-seed">{ "lines: the model; rings: what source thread 000 published for the same logs and devices" }</em>
                    }
                </div>
            }
            <canvas ref={canvas} role="img" aria-label={format!("{} against {}", *y, *k1)}
                style={format!("width:100%;max-width:{CSS_W}px;aspect-ratio:{CSS_W}/{CSS_H};display:{}", if sweep.is_some() { "block" } else { "none" })} />
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::cell_text;
    use serde_json::json;

    #[test]
    fn a_run_with_nothing_completed_says_so_in_its_latency_cells() {
        let none = json!({"transactions": 0, "tx_per_sec": 0.0, "latency_ms_p50": 0.0});
        let some = json!({"transactions": 12, "tx_per_sec": 6.0, "latency_ms_p50": 1.25});
        assert_eq!(cell_text(Some(&none), "latency_ms_p50"), "none completed");
        assert_eq!(cell_text(Some(&none), "tx_per_sec"), "0");
        assert_eq!(cell_text(Some(&some), "latency_ms_p50"), "1.25");
        assert_eq!(cell_text(None, "latency_ms_p50"), "…");
    }
}
