//! Work off the main thread: one module Web Worker per core, each loading the lab's own wasm
//! module (`static/crash-worker.js`) and calling one of its exports on each job it is sent.
//! Jobs go to whichever worker is free, so the page stays responsive and the cores share the
//! work. The crash heat map and sweeps use it.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};
use yew::Callback;

/// Running workers; dropping the pool terminates them (Cancel).
pub struct Pool {
    workers: Vec<Worker>,
    _handlers: Vec<Closure<dyn FnMut(MessageEvent)>>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        for w in &self.workers {
            w.terminate();
        }
    }
}

/// The lab's module and wasm URLs, as Trunk preloads them (the workers load the same ones).
fn module_urls() -> Option<(String, String)> {
    let doc = web_sys::window()?.document()?;
    let href = |sel: &str| doc.query_selector(sel).ok().flatten().and_then(|e| e.get_attribute("href"));
    let base = doc.base_uri().ok().flatten()?;
    let abs = |h: String| web_sys::Url::new_with_base(&h, &base).map(|u| u.href()).ok();
    Some((abs(href("link[rel=modulepreload]")?)?, abs(href("link[rel=preload][as=fetch]")?)?))
}

/// Cores to use: `navigator.hardwareConcurrency`, at most 8.
pub fn cores() -> usize {
    web_sys::window().map_or(2.0, |w| w.navigator().hardware_concurrency()).clamp(1.0, 8.0) as usize
}

/// Runs `export(job)` for every job on up to `cores()` workers; `on_result((index, answer))`
/// is called as each job finishes. Returns the pool (keep it alive) and how many workers run.
pub fn run(
    export: &'static str,
    jobs: Vec<String>,
    on_result: Callback<(usize, String)>,
) -> Result<(Pool, usize), String> {
    let urls = Rc::new(module_urls().ok_or("the lab's module URLs are not in the page")?);
    let n = cores().min(jobs.len().max(1));
    let queue: Rc<RefCell<VecDeque<(usize, String)>>> = Rc::new(RefCell::new(jobs.into_iter().enumerate().collect()));
    let post = move |w: &Worker, urls: &(String, String), (id, job): (usize, String)| {
        let msg = js_sys::Object::new();
        let set = |k: &str, v: JsValue| js_sys::Reflect::set(&msg, &k.into(), &v);
        let _ = (
            set("module", urls.0.as_str().into()),
            set("wasm", urls.1.as_str().into()),
            set("fn", export.into()),
            set("job", job.into()),
            set("id", (id as f64).into()),
        );
        let _ = w.post_message(&msg);
    };
    let opts = WorkerOptions::new();
    opts.set_type(WorkerType::Module);
    let mut workers = Vec::new();
    let mut handlers = Vec::new();
    for _ in 0..n {
        let w = Worker::new_with_options("static/crash-worker.js", &opts)
            .map_err(|e| format!("Web Worker: {}", e.as_string().unwrap_or_else(|| "could not start".into())))?;
        let (queue2, urls2, w2, on_result) = (queue.clone(), urls.clone(), w.clone(), on_result.clone());
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let data = e.data();
            let get = |k: &str| js_sys::Reflect::get(&data, &k.into()).ok();
            let id = get("id").and_then(|v| v.as_f64()).unwrap_or(0.0) as usize;
            let answer = get("result").and_then(|v| v.as_string()).unwrap_or_default();
            let next = queue2.borrow_mut().pop_front();
            if let Some(job) = next {
                post(&w2, &urls2, job);
            }
            on_result.emit((id, answer));
        });
        w.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let first = queue.borrow_mut().pop_front();
        if let Some(job) = first {
            post(&w, &urls, job);
        }
        workers.push(w);
        handlers.push(on_message);
    }
    Ok((Pool { workers, _handlers: handlers }, n))
}
