//! Plots over virtual time (plotters on a canvas, sharp on HiDPI screens): one metric at a
//! time, chosen from a menu, from the whole run so far.

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

fn draw(canvas: &HtmlCanvasElement, points: &[(f64, f64)], label: &str) -> Option<()> {
    let scale = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).max(1.0);
    canvas.set_width((CSS_W * scale) as u32);
    canvas.set_height((CSS_H * scale) as u32);
    let root = CanvasBackend::with_canvas_object(canvas.clone())?.into_drawing_area();
    root.fill(&WHITE).ok()?;
    let pts = decimate(points, (CSS_W * scale / 2.0) as usize);
    let (x0, x1) = (pts.first().map_or(0.0, |p| p.0), pts.last().map_or(1.0, |p| p.0).max(1e-3));
    let ymax = pts.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-9) * 1.1;
    let font = ("sans-serif", 12.0 * scale).into_font();
    let mut chart = ChartBuilder::on(&root)
        .margin(8.0 * scale)
        .x_label_area_size(28.0 * scale)
        .y_label_area_size(56.0 * scale)
        .build_cartesian_2d(x0..x1, 0.0..ymax)
        .ok()?;
    chart
        .configure_mesh()
        .x_desc("virtual time (ms)")
        .y_desc(label)
        .label_style(font.clone())
        .axis_desc_style(font)
        .light_line_style(RGBColor(238, 240, 236))
        .draw()
        .ok()?;
    chart.draw_series(LineSeries::new(pts, RGBColor(47, 125, 109).stroke_width((1.5 * scale) as u32))).ok()?;
    root.present().ok()
}

#[function_component(Plots)]
pub fn plots(p: &PlotsProps) -> Html {
    let canvas = use_node_ref();
    let which = use_state(|| 0usize);
    {
        let (canvas, series, k) = (canvas.clone(), p.series.clone(), *which);
        use_effect_with((series.clone(), k), move |_| {
            if let (Some(c), Some(points)) = (canvas.cast::<HtmlCanvasElement>(), series.get(k)) {
                draw(&c, points, PLOTS[k].0);
            }
        });
    }
    let on_pick = {
        let which = which.clone();
        Callback::from(move |e: Event| {
            let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(k) = sel.value().parse::<usize>() {
                which.set(k.min(PLOTS.len() - 1));
            }
        })
    };
    let last = p.series.get(*which).and_then(|s| s.last()).map_or(0.0, |x| x.1);
    html! {
        <div class="panel" data-testid="plots" style="margin-top:14px">
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
        </div>
    }
}
