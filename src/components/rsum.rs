//! The realtime summary (source thread 004): rsum[level][bitmap block] as a heat map, the minimum-level
//! cache over it, and the summary reads the allocator pays, with the cache off and on.

use crate::canvas::{context_2d, use_canvas};
use crate::driver::Lab;
use crate::palette;
use std::rc::Rc;
use xlog::RtView;
use yew::prelude::*;

const WIDTH: f64 = 640.0;
const ROW_H: f64 = 7.0;
const LEFT: f64 = 26.0;

fn draw(ctx: &web_sys::CanvasRenderingContext2d, v: &RtView) {
    let h = v.levels as f64 * ROW_H + 14.0;
    ctx.set_fill_style_str(palette::CANVAS_BG);
    ctx.fill_rect(0.0, 0.0, WIDTH, h);
    let cols = v.grid.len().max(1) as f64;
    let cw = (WIDTH - LEFT) / cols;
    let max = v.grid.iter().flatten().copied().max().unwrap_or(0).max(1) as f64;
    let y_of = |level: u32| (v.levels - 1 - level) as f64 * ROW_H;
    ctx.set_font("9px system-ui, sans-serif");
    ctx.set_fill_style_str(palette::MUTED_TEXT);
    for l in (0..v.levels).step_by(4) {
        let _ = ctx.fill_text(&l.to_string(), 2.0, y_of(l) + ROW_H);
    }
    for (c, col) in v.grid.iter().enumerate() {
        let x = LEFT + c as f64 * cw;
        for (l, &n) in col.iter().enumerate() {
            if n == 0 {
                continue;
            }
            // Log scale: one free run must show as clearly as thousands are darker.
            let a = 0.25 + 0.75 * ((n as f64 + 1.0).log2() / (max + 1.0).log2());
            ctx.set_fill_style_str(&format!("rgba(0,114,178,{a:.3})"));
            ctx.fill_rect(x, y_of(l as u32), cw.max(1.0), ROW_H - 1.0);
        }
    }
    if let Some(cache) = &v.cache {
        ctx.set_fill_style_str(palette::VERMILLION);
        for (c, &lo) in cache.iter().enumerate() {
            if (lo as u32) < v.levels {
                ctx.fill_rect(LEFT + c as f64 * cw, y_of(lo as u32) + ROW_H - 1.5, cw.max(1.0), 1.5);
            }
        }
    }
    ctx.set_fill_style_str(palette::MUTED_TEXT);
    let _ = ctx.fill_text(&format!("bitmap blocks 0 … {} →", v.rbmblocks - 1), LEFT, h - 2.0);
}

#[derive(Properties, PartialEq)]
pub struct RsumProps {
    pub rt: Option<Rc<RtView>>,
}

#[function_component(RsumPanel)]
pub fn rsum_panel(p: &RsumProps) -> Html {
    let lab = use_context::<Lab>().expect("RsumPanel sits inside the lab's context");
    let height = p.rt.as_ref().map_or(20.0, |v| v.levels as f64 * ROW_H + 14.0);
    let canvas = {
        let rt = p.rt.clone();
        use_canvas((WIDTH, height), rt.clone(), move |c, scale| {
            if let (Some(ctx), Some(v)) = (context_2d(c, scale), rt.as_ref()) {
                draw(&ctx, v);
            }
        })
    };
    let Some(v) = &p.rt else {
        return html! {
            <div class="panel" data-testid="rsum" style="margin-top:14px">
                <h2>{ "realtime summary" }</h2>
                <p class="muted">{ "This scenario has no realtime device: open the rt-alloc-fragmented preset (source thread 004)." }</p>
            </div>
        };
    };
    let cache_on = v.cache.is_some();
    let other = if cache_on { "off" } else { "on" };
    let on_compare = {
        let lab = lab.clone();
        Callback::from(move |_: MouseEvent| {
            if lab.compare_with("rsum_cache", other).is_ok() && !lab.state.shows(crate::state::Panel::Compare) {
                lab.toggle_panel(crate::state::Panel::Compare);
            }
        })
    };
    let b_reads = lab
        .frame
        .compare
        .as_ref()
        .filter(|c| c.label.starts_with("rsum_cache="))
        .map(|c| (c.label.clone(), c.metrics.rsum_reads));
    html! {
        <div class="panel" data-testid="rsum" style="margin-top:14px" data-summary-reads={v.summary_reads.to_string()}
            data-cache={if cache_on { "on" } else { "off" }}>
            <h2>{ "realtime summary (rsum)" }</h2>
            <p class="what">{ "The realtime allocator keeps, per bitmap block and per size class (level = log2 of a free run's length), how many \
                free runs start there. Searching for space reads these counters level by level, block by block; the minimum-level cache \
                (m_rsum_cache, red ticks) remembers the lowest level with anything in each block, so the search skips the empty levels below." }</p>
            <canvas ref={canvas} role="img" aria-label={format!("rsum heat map: {} levels by {} bitmap blocks, {} free runs", v.levels, v.rbmblocks, v.free_runs)}
                style={format!("width:100%;max-width:{WIDTH}px;height:{height}px;display:block")} />
            <div class="legend">
                <span style={format!("--c:{}", palette::BLUE)}>{ format!("free runs (log scale; {} in all, {} free extents)", v.free_runs, v.free_extents) }</span>
                if cache_on { <span style={format!("--c:{}", palette::VERMILLION)}>{ "lowest level the cache allows" }</span> }
                <span style="--c:transparent">{ format!("levels 0–{} (bottom to top); {} bitmap blocks per column", v.levels - 1, v.blocks_per_column) }</span>
            </div>
            <table class="stats">
                <tr><td>{ format!("summary reads (rsum_cache {})", if cache_on { "on" } else { "off" }) }</td><td data-testid="rsum-reads">{ v.summary_reads }</td></tr>
                <tr><td>{ "bitmap reads" }</td><td>{ v.bitmap_reads }</td></tr>
                if let Some((label, reads)) = &b_reads {
                    <tr><td>{ format!("summary reads with {label} (compare, same clock)") }</td><td data-testid="rsum-reads-b">{ *reads }</td></tr>
                }
            </table>
            <button class="small secondary" data-testid="rsum-compare" onclick={on_compare}>{ format!("Compare with the cache {other}") }</button>
        </div>
    }
}
