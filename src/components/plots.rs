//! Plots over virtual time (plotters on a canvas, sharp on HiDPI screens): one metric at a
//! time, chosen from a menu, from the whole run so far.

use crate::canvas::use_canvas;
use crate::palette;
use crate::series::{decimate, PLOTS};
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use std::rc::Rc;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct PlotsProps {
    /// (time in ms, value) per plot, in `PLOTS` order.
    pub series: Rc<Vec<Vec<(f64, f64)>>>,
}

const CSS_W: f64 = 640.0;
const CSS_H: f64 = 200.0;

/// A tick label short enough for the axis: 16000 → "16k", 0.25 → "0.25".
pub fn compact(v: f64) -> String {
    match v.abs() {
        a if a >= 1e6 => format!("{:.1}M", v / 1e6),
        a if a >= 1e4 => format!("{:.0}k", v / 1e3),
        a if a >= 1e3 => format!("{:.1}k", v / 1e3),
        a if a >= 10.0 || a == 0.0 => format!("{v:.0}"),
        _ => format!("{v:.2}"),
    }
}

fn draw(canvas: &HtmlCanvasElement, scale: f64, points: &[(f64, f64)], label: &str) -> Option<()> {
    let root = CanvasBackend::with_canvas_object(canvas.clone())?.into_drawing_area();
    root.fill(&WHITE).ok()?;
    let pts = decimate(points, (CSS_W * scale / 2.0) as usize);
    let x0 = pts.first().map_or(0.0, |p| p.0);
    // Before the run has two samples, an axis of a millisecond from where it stands (a span of
    // nothing would label every tick alike).
    let x1 = if pts.len() < 2 { x0 + 1.0 } else { pts[pts.len() - 1].0.max(x0 + 1e-3) };
    let top = pts.iter().map(|p| p.1).fold(0.0f64, f64::max);
    // An all-zero series still gets a readable axis.
    let ymax = if top > 0.0 { top * 1.1 } else { 1.0 };
    let font = ("sans-serif", 12.0 * scale).into_font();
    // Enough decimals that neighbouring ticks differ (a run of a few ms is not "0 0 1 1").
    let decimals = match x1 - x0 {
        w if w >= 20.0 => 0,
        w if w >= 2.0 => 1,
        w if w >= 0.2 => 2,
        _ => 3,
    };
    let mut chart = ChartBuilder::on(&root)
        .margin(8.0 * scale)
        // Room for the last time label, centred on the axis's end.
        .margin_right(24.0 * scale)
        .x_label_area_size(36.0 * scale)
        .y_label_area_size(60.0 * scale)
        .build_cartesian_2d(x0..x1, 0.0..ymax)
        .ok()?;
    chart
        .configure_mesh()
        .x_desc("virtual time (ms)")
        .y_desc(label)
        .y_label_formatter(&|v| compact(*v))
        .x_label_formatter(&|v| format!("{:.*}", decimals, v))
        .label_style(font.clone())
        .axis_desc_style(font)
        .light_line_style(rgb(palette::TRACK))
        .draw()
        .ok()?;
    chart.draw_series(LineSeries::new(pts, rgb(palette::BLUE).stroke_width((1.5 * scale) as u32))).ok()?;
    root.present().ok()
}

fn rgb(hex: &str) -> RGBColor {
    let (r, g, b) = palette::rgb(hex);
    RGBColor(r, g, b)
}

#[function_component(Plots)]
pub fn plots(p: &PlotsProps) -> Html {
    let which = use_state(|| 0usize);
    let canvas = {
        let (series, k) = (p.series.clone(), *which);
        use_canvas((CSS_W, CSS_H), (series.clone(), k), move |c: &HtmlCanvasElement, scale| {
            if let Some(points) = series.get(k) {
                draw(c, scale, points, PLOTS[k].0);
            }
        })
    };
    let on_pick = {
        let which = which.clone();
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(k) = sel.value().parse::<usize>() {
                which.set(k.min(PLOTS.len() - 1));
            }
        })
    };
    let shown = p.series.get(*which);
    let last = shown.and_then(|s| s.last()).map_or(0.0, |x| x.1);
    let points = shown.map_or(0, |s| s.len());
    let ms = |x: Option<&(f64, f64)>| x.map(|x| format!("{:.3}", x.0));
    let (from_ms, to_ms) = (ms(shown.and_then(|s| s.first())), ms(shown.and_then(|s| s.last())));
    html! {
        <div class="panel" data-testid="plots" style="margin-top:14px" data-points={points.to_string()}
            data-from-ms={from_ms} data-to-ms={to_ms}>
            <h2>{ "over time" }</h2>
            <div class="controls">
                <select data-testid="plot-metric" onchange={on_pick} aria-label="metric to plot">
                    { for PLOTS.iter().enumerate().map(|(k, (label, _))| html! {
                        <option value={k.to_string()} selected={k == *which}>{ *label }</option>
                    }) }
                </select>
                <span class="muted" data-testid="plot-about">{ format!("{} — now {last:.2}", PLOTS[*which].1) }</span>
            </div>
            <canvas ref={canvas} role="img" aria-label={format!("{} over virtual time, now {last:.2}", PLOTS[*which].0)}
                style={format!("width:100%;max-width:{CSS_W}px;aspect-ratio:{CSS_W}/{CSS_H};display:block;margin-top:6px")} />
            if points < 2 {
                <p class="muted" data-testid="plot-empty">{ "The plot draws the run as it goes: press Play." }</p>
            }
        </div>
    }
}
