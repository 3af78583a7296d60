//! The one way the lab draws on a canvas: a hook that sizes the canvas for the screen's pixel
//! ratio (sharp on HiDPI) and redraws it only when its inputs change. What is drawn comes from
//! pure functions (`drawing`, `series`) tested natively.

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

/// Device pixels per CSS pixel (at least 1).
pub fn pixel_ratio() -> f64 {
    web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).max(1.0)
}

/// The canvas's 2D context with one unit = one CSS pixel.
pub fn context_2d(canvas: &HtmlCanvasElement, scale: f64) -> Option<CanvasRenderingContext2d> {
    let ctx = canvas.get_context("2d").ok()??.dyn_into::<CanvasRenderingContext2d>().ok()?;
    ctx.set_transform(scale, 0.0, 0.0, scale, 0.0, 0.0).ok()?;
    Some(ctx)
}

/// A canvas of `css` = (width, height) CSS pixels, redrawn by `draw(canvas, scale)` whenever
/// `deps` change (and never otherwise). Returns the ref to put on the `<canvas>`.
#[hook]
pub fn use_canvas<D, F>(css: (f64, f64), deps: D, draw: F) -> NodeRef
where
    D: PartialEq + 'static,
    F: Fn(&HtmlCanvasElement, f64) + 'static,
{
    let node = use_node_ref();
    {
        let node = node.clone();
        use_effect_with((deps, css.0.to_bits(), css.1.to_bits()), move |_| {
            if let Some(c) = node.cast::<HtmlCanvasElement>() {
                let scale = pixel_ratio();
                let (w, h) = ((css.0 * scale).round() as u32, (css.1 * scale).round() as u32);
                if c.width() != w || c.height() != h {
                    c.set_width(w);
                    c.set_height(h);
                }
                draw(&c, scale);
            }
        });
    }
    node
}
