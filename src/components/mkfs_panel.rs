//! mkfs log sizing: an editable geometry and the three versions of `calculate_log_size` side
//! by side, each as the path of decisions it took (what `loglab size` prints), with the limits
//! the kernel derives from the result. "Run this" opens a scenario with that log.

use crate::driver::Lab;
use xlog::sizing::{size_log, SizingAlgo, SizingInput};
use xlog::{format_size, parse_size, Size};
use yew::prelude::*;

/// What the user typed, kept as typed (a bad value stays in its field with its message).
#[derive(Clone, PartialEq)]
struct Form {
    fs_size: String,
    block_size: String,
    sector_size: String,
    agcount: String,
    dsu: String,
    dsw: String,
    lsu: String,
    reflink: bool,
    rmapbt: bool,
    finobt: bool,
}

impl Default for Form {
    fn default() -> Self {
        Form {
            fs_size: "220GiB".into(),
            block_size: "4096".into(),
            sector_size: "512".into(),
            agcount: String::new(),
            dsu: String::new(),
            dsw: String::new(),
            lsu: String::new(),
            reflink: true,
            rmapbt: false,
            finobt: true,
        }
    }
}

/// The text fields: (key, label, what mkfs calls it).
const FIELDS: &[(&str, &str, &str)] = &[
    ("fs_size", "filesystem size", "-d size="),
    ("block_size", "block size", "-b size="),
    ("sector_size", "sector size", "-s size="),
    ("agcount", "AG count (empty: mkfs decides)", "-d agcount="),
    ("dsu", "data stripe unit (empty: none)", "-d su="),
    ("dsw", "data stripe width, in units", "-d sw="),
    ("lsu", "log stripe unit (empty: none)", "-l su="),
];

impl Form {
    fn get(&self, key: &str) -> &str {
        match key {
            "fs_size" => &self.fs_size,
            "block_size" => &self.block_size,
            "sector_size" => &self.sector_size,
            "agcount" => &self.agcount,
            "dsu" => &self.dsu,
            "dsw" => &self.dsw,
            _ => &self.lsu,
        }
    }
    fn set(&mut self, key: &str, v: String) {
        match key {
            "fs_size" => self.fs_size = v,
            "block_size" => self.block_size = v,
            "sector_size" => self.sector_size = v,
            "agcount" => self.agcount = v,
            "dsu" => self.dsu = v,
            "dsw" => self.dsw = v,
            _ => self.lsu = v,
        }
    }

    /// The sizing input, or (field, message) for the first field that does not parse.
    fn input(&self) -> Result<SizingInput, (&'static str, String)> {
        let size = |k: &'static str, v: &str| parse_size(k, v.trim()).map_err(|e| (k, e));
        let opt_size = |k: &'static str, v: &str| if v.trim().is_empty() { Ok(0) } else { size(k, v) };
        let count = |k: &'static str, v: &str| -> Result<Option<u64>, (&'static str, String)> {
            let v = v.trim();
            if v.is_empty() {
                return Ok(None);
            }
            v.parse::<u64>().map(Some).map_err(|_| (k, format!("{k}: '{v}' is not a whole number")))
        };
        Ok(SizingInput {
            fs_bytes: size("fs_size", &self.fs_size)?,
            block_size: size("block_size", &self.block_size)?,
            sector_size: size("sector_size", &self.sector_size)?,
            inode_size: 512,
            agcount: count("agcount", &self.agcount)?,
            dsu: opt_size("dsu", &self.dsu)?,
            dsw: count("dsw", &self.dsw)?.unwrap_or(0),
            lsu: opt_size("lsu", &self.lsu)?,
            reflink: self.reflink,
            rmapbt: self.rmapbt,
            finobt: self.finobt,
        })
    }
}

#[function_component(MkfsPanel)]
pub fn sizing_panel() -> Html {
    let lab = use_context::<Lab>().expect("MkfsPanel sits inside the lab's context");
    let form = use_state(Form::default);
    let run_error = use_state(|| None::<String>);
    let parsed = form.input();
    let reports: Vec<(SizingAlgo, Result<xlog::sizing::SizingReport, String>)> = match &parsed {
        Ok(inp) => SizingAlgo::ALL.iter().map(|&a| (a, size_log(inp, a))).collect(),
        Err(_) => Vec::new(),
    };
    let field = |key: &'static str, label: &'static str, flag: &'static str| {
        let bad = matches!(&parsed, Err((k, _)) if *k == key);
        let on_input = {
            let form = form.clone();
            Callback::from(move |e: InputEvent| {
                let input: web_sys::HtmlInputElement = e.target_unchecked_into();
                let mut f = (*form).clone();
                f.set(key, input.value());
                form.set(f);
            })
        };
        html! {
            <label class={classes!("field", bad.then_some("bad"))}>
                <span>{ label }<span class="muted">{ format!(" ({flag})") }</span></span>
                <input data-testid={format!("size-{key}")} value={form.get(key).to_string()} oninput={on_input} />
                if let (true, Err((_, e))) = (bad, &parsed) { <span class="field-error">{ e.clone() }</span> }
            </label>
        }
    };
    let flag = |name: &'static str, on: bool, flip: fn(&mut Form)| {
        let form = form.clone();
        html! {
            <label><input type="checkbox" checked={on} data-testid={format!("size-{name}")}
                onchange={Callback::from(move |_: Event| { let mut f = (*form).clone(); flip(&mut f); form.set(f); })} />{ format!(" {name}") }</label>
        }
    };
    let run_this = |blocks: u64| {
        let (lab, run_error, parsed) = (lab.clone(), run_error.clone(), parsed.clone());
        Callback::from(move |_: MouseEvent| {
            let Ok(inp) = &parsed else { return };
            let mut s = lab.state.opened.scenario.clone();
            s.fs_size = Size(inp.fs_bytes);
            s.log_size = Size(blocks * inp.block_size);
            match s.validate() {
                Ok(_) => {
                    run_error.set(None);
                    let preset = lab.state.opened.preset.clone();
                    lab.set_scenario(crate::address::chosen(s, preset));
                }
                Err(e) => run_error.set(Some(format!("This log cannot run in the lab: {e}"))),
            }
        })
    };
    html! {
        <div class="panel sizing" data-testid="sizing" style="margin-top:14px">
            <h2>{ "mkfs log sizing" }</h2>
            <p class="what">{ "How mkfs.xfs picks the internal log's size (calculate_log_size) for a geometry, in three versions: before 2022, \
                the source thread's patch, and xfsprogs 6.1. Each lists the decisions it took; the minimum comes from the largest transaction \
                reservation. The same as loglab size." }</p>
            <div class="fields">
                { for FIELDS.iter().map(|&(k, l, f)| field(k, l, f)) }
            </div>
            <div class="controls" style="margin-top:6px">
                { flag("reflink", form.reflink, |f| f.reflink = !f.reflink) }
                { flag("rmapbt", form.rmapbt, |f| f.rmapbt = !f.rmapbt) }
                { flag("finobt", form.finobt, |f| f.finobt = !f.finobt) }
            </div>
            if let Some(e) = &*run_error { <p class="error" role="alert">{ e.clone() }</p> }
            <div class="algos">
                { for reports.iter().map(|(algo, r)| match r {
                    Ok(r) => {
                        let bytes = r.log_blocks * parsed.as_ref().map_or(4096, |i| i.block_size);
                        let d = &r.derived;
                        html! {
                            <div class="algo" data-algo={algo.as_str()} data-log-blocks={r.log_blocks.to_string()} data-min-log-blocks={r.min_log_blocks.to_string()}>
                                <h3>{ algo.as_str() }</h3>
                                <p class="big">{ format!("{} blocks ({})", r.log_blocks, format_size(bytes)) }</p>
                                <p class="muted">{ format!("minimum {} blocks", r.min_log_blocks) }</p>
                                <ol class="steps">{ for r.steps.iter().map(|s| html! { <li>{ s.clone() }</li> }) }</ol>
                                <p class="muted">{ format!("CIL push at {}, throttle at {}; AIL pushed below {} free blocks; iclogs {} x {}",
                                    format_size(d.cil_space_limit_bytes), format_size(d.cil_blocking_limit_bytes), d.tail_push_threshold_blocks,
                                    d.logbufs, format_size(d.logbsize)) }</p>
                                <button class="small secondary" data-testid={format!("size-run-{}", algo.as_str())} onclick={run_this(r.log_blocks)}>{ "Run this log" }</button>
                            </div>
                        }
                    }
                    Err(e) => html! {
                        <div class="algo" data-algo={algo.as_str()} data-error="true">
                            <h3>{ algo.as_str() }</h3>
                            <p class="error">{ e.clone() }</p>
                        </div>
                    },
                }) }
            </div>
        </div>
    }
}
