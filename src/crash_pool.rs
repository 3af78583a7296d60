//! Crash points explored off the main thread: one module Web Worker per core, each loading the
//! lab's own wasm module (`static/crash-worker.js`); jobs of a few points go to whichever
//! worker is free, so the page stays responsive and the work spreads over the cores.

use crate::crash_job::{Job, PointResult};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};
use yew::Callback;

/// Points per job: small enough for a smooth progress bar, large enough that re-running the
/// scenario from the start for each job stays a small share of the work.
const POINTS_PER_JOB: usize = 4;

/// Where the exploration stands (what the heat map draws).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub total: usize,
    /// Results so far, ordered by event.
    pub points: Vec<PointResult>,
    pub workers: usize,
    pub error: Option<String>,
}

impl Progress {
    pub fn finished(&self) -> bool {
        self.error.is_some() || self.points.len() >= self.total
    }
}

struct Shared {
    pending: VecDeque<Vec<u64>>,
    progress: Progress,
}

/// A running exploration; dropping it terminates the workers (Cancel).
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

/// The lab's module and wasm URLs, as Trunk preloads them (the worker loads the same ones).
fn module_urls() -> Option<(String, String)> {
    let doc = web_sys::window()?.document()?;
    let href = |sel: &str| doc.query_selector(sel).ok().flatten().and_then(|e| e.get_attribute("href"));
    let base = doc.base_uri().ok().flatten()?;
    let abs = |h: String| web_sys::Url::new_with_base(&h, &base).map(|u| u.href()).ok();
    Some((abs(href("link[rel=modulepreload]")?)?, abs(href("link[rel=preload][as=fetch]")?)?))
}

fn post(worker: &Worker, urls: &(String, String), job: &str) {
    let msg = js_sys::Object::new();
    let set = |k: &str, v: &str| js_sys::Reflect::set(&msg, &k.into(), &v.into());
    let _ = (set("module", &urls.0), set("wasm", &urls.1), set("job", job));
    let _ = worker.post_message(&msg);
}

/// Starts exploring `events` of `scenario`, `budget` states each; `update` gets the progress
/// after every finished job.
pub fn start(
    scenario: &xlog::Scenario,
    events: Vec<u64>,
    budget: u32,
    update: Callback<Progress>,
) -> Result<Pool, String> {
    let urls = module_urls().ok_or("the lab's module URLs are not in the page")?;
    let cores = web_sys::window().map_or(2.0, |w| w.navigator().hardware_concurrency());
    let jobs: VecDeque<Vec<u64>> = events.chunks(POINTS_PER_JOB).map(<[u64]>::to_vec).collect();
    let n = (cores as usize).clamp(1, 8).min(jobs.len().max(1));
    let shared = Rc::new(RefCell::new(Shared {
        pending: jobs,
        progress: Progress { total: events.len(), workers: n, ..Progress::default() },
    }));
    let scenario = Rc::new(scenario.clone());
    let job_text = {
        let scenario = scenario.clone();
        move |events: Vec<u64>| {
            serde_json::to_string(&Job { scenario: (*scenario).clone(), events, budget }).unwrap_or_default()
        }
    };
    let opts = WorkerOptions::new();
    opts.set_type(WorkerType::Module);
    let mut workers = Vec::new();
    let mut handlers = Vec::new();
    for _ in 0..n {
        let w = Worker::new_with_options("static/crash-worker.js", &opts).map_err(|e| format!("Web Worker: {e:?}"))?;
        let (mine, update, urls2, job_text2, w2) =
            (shared.clone(), update.clone(), urls.clone(), job_text.clone(), w.clone());
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let text =
                js_sys::Reflect::get(&e.data(), &"result".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
            let next = {
                let mut s = mine.borrow_mut();
                match serde_json::from_str::<Vec<PointResult>>(&text) {
                    Ok(points) => {
                        s.progress.points.extend(points);
                        s.progress.points.sort_by_key(|p| p.event);
                    }
                    Err(_) => {
                        let why = serde_json::from_str::<serde_json::Value>(&text)
                            .ok()
                            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
                            .unwrap_or_else(|| "a crash worker failed".into());
                        s.progress.error = Some(why);
                        s.pending.clear();
                    }
                }
                s.pending.pop_front()
            };
            if let Some(events) = next {
                post(&w2, &urls2, &job_text2(events));
            }
            update.emit(mine.borrow().progress.clone());
        });
        w.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        if let Some(events) = shared.borrow_mut().pending.pop_front() {
            post(&w, &urls, &job_text(events));
        }
        workers.push(w);
        handlers.push(on_message);
    }
    update.emit(shared.borrow().progress.clone());
    Ok(Pool { workers, _handlers: handlers })
}
