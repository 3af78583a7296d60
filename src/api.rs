//! `window.loglab`: the lab's JavaScript API, for course pages that embed the lab and for
//! scripts: `load`, `seek`, `step`, `play`, `pause`, `now`, `hash`, `metrics`, `view`, `link`
//! and `on`. It drives the lab through the same intents a person uses, so the page on screen
//! follows; it reads the simulation only through the lab's views.

use crate::address::{self, Opened};
use crate::driver::Lab;
use serde::Serialize;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

thread_local! {
    /// The lab page on screen (a new scenario mounts a new page; every render updates it).
    static CURRENT: RefCell<Option<Lab>> = const { RefCell::new(None) };
    /// `on(event, callback)` registrations, in order.
    static LISTENERS: RefCell<Vec<(String, js_sys::Function)>> = const { RefCell::new(Vec::new()) };
}

/// The events `on` accepts.
pub const EVENTS: &[&str] = &["frame", "load"];

/// Makes `lab` the page the API drives.
pub fn set_current(lab: &Lab) {
    CURRENT.with(|c| *c.borrow_mut() = Some(lab.clone()));
}

/// Calls the `on(event, …)` callbacks with `detail`.
pub fn emit(event: &str, detail: &JsValue) {
    let listeners: Vec<js_sys::Function> =
        LISTENERS.with(|l| l.borrow().iter().filter(|(e, _)| e == event).map(|(_, f)| f.clone()).collect());
    for f in listeners {
        // A listener's exception is the listener's: the lab goes on.
        let _ = f.call1(&JsValue::NULL, detail);
    }
}

fn with_lab<R>(f: impl FnOnce(&Lab) -> R) -> Result<R, JsValue> {
    CURRENT.with(|c| c.borrow().as_ref().map(f)).ok_or_else(|| JsValue::from_str("loglab: the lab is not ready yet"))
}

/// Plain JS objects and arrays (not Maps), as `loglab run --json` writes them.
fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// What `load` accepts: a link (a whole URL or its query), or `{preset, set: {key: value}}`.
fn scenario_of(arg: &JsValue) -> Result<Opened, String> {
    if let Some(text) = arg.as_string() {
        let query = text.find('?').map_or(text.as_str(), |i| &text[i..]);
        let o = address::open(query);
        return match o.error {
            Some(e) => Err(e),
            None => Ok(o),
        };
    }
    let get = |k: &str| js_sys::Reflect::get(arg, &k.into()).ok().filter(|v| !v.is_undefined() && !v.is_null());
    let preset = get("preset").and_then(|p| p.as_string()).unwrap_or_else(|| xlog::DEFAULT_PRESET.to_string());
    let mut s = xlog::find_preset(&preset)?;
    if let Some(set) = get("set") {
        let obj: js_sys::Object = set.clone().unchecked_into();
        let keys = js_sys::Object::keys(&obj);
        for k in keys.iter() {
            let key = k.as_string().unwrap_or_default();
            let v = js_sys::Reflect::get(&set, &k).unwrap_or(JsValue::UNDEFINED);
            let value = v.as_string().or_else(|| v.as_f64().map(|n| n.to_string())).unwrap_or_default();
            s.set(&key, &value)?;
        }
    }
    s.validate()?;
    Ok(address::chosen(s, preset))
}

/// A time: `"150ms"`, or nanoseconds as a number.
fn time_of(arg: &JsValue) -> Result<xlog::Ns, String> {
    if let Some(t) = arg.as_string() {
        return xlog::parse_duration("t", &t);
    }
    match arg.as_f64() {
        Some(n) if n >= 0.0 && n.is_finite() => Ok(n as xlog::Ns),
        _ => Err("t: give a duration (\"150ms\") or nanoseconds (a number from 0)".into()),
    }
}

fn err(e: String) -> JsValue {
    JsValue::from_str(&format!("loglab: {e}"))
}

fn method(obj: &js_sys::Object, name: &str, f: JsValue) {
    let _ = js_sys::Reflect::set(obj, &name.into(), &f);
}

/// Installs `window.loglab` (once per page load; the closures live as long as the page).
pub fn install() {
    let Some(window) = web_sys::window() else { return };
    let api = js_sys::Object::new();
    let load = Closure::<dyn Fn(JsValue) -> Result<(), JsValue>>::new(|arg: JsValue| {
        let o = scenario_of(&arg).map_err(err)?;
        with_lab(|lab| lab.set_scenario(o))
    });
    let seek = Closure::<dyn Fn(JsValue) -> Result<f64, JsValue>>::new(|arg: JsValue| {
        let t = time_of(&arg).map_err(err)?;
        with_lab(|lab| {
            lab.seek(t);
            lab.now() as f64
        })
    });
    let step = Closure::<dyn Fn(JsValue) -> Result<f64, JsValue>>::new(|n: JsValue| {
        let n = n.as_f64().unwrap_or(1.0).clamp(0.0, 1e9) as u64;
        with_lab(|lab| lab.step_events(n) as f64)
    });
    let play = Closure::<dyn Fn() -> Result<(), JsValue>>::new(|| with_lab(Lab::play));
    let pause = Closure::<dyn Fn() -> Result<(), JsValue>>::new(|| with_lab(Lab::pause));
    let now = Closure::<dyn Fn() -> Result<f64, JsValue>>::new(|| with_lab(|lab| lab.now() as f64));
    let hash = Closure::<dyn Fn() -> Result<String, JsValue>>::new(|| with_lab(Lab::trace_hash));
    let metrics = Closure::<dyn Fn() -> Result<JsValue, JsValue>>::new(|| with_lab(|lab| to_js(&lab.metrics_now()))?);
    let view = Closure::<dyn Fn() -> Result<JsValue, JsValue>>::new(|| with_lab(|lab| to_js(&*lab.frame.view))?);
    let link = Closure::<dyn Fn() -> Result<String, JsValue>>::new(|| {
        let w = web_sys::window().ok_or_else(|| JsValue::from_str("no window"))?;
        let loc = w.location();
        let base = format!("{}{}", loc.origin().unwrap_or_default(), loc.pathname().unwrap_or_else(|_| "/".into()));
        with_lab(|lab| format!("{base}{}", lab.moment_query()))
    });
    let on = Closure::<dyn Fn(String, js_sys::Function) -> Result<(), JsValue>>::new(
        |event: String, f: js_sys::Function| {
            if !EVENTS.contains(&event.as_str()) {
                return Err(err(format!("on: '{event}' is not an event (allowed: {})", EVENTS.join(", "))));
            }
            LISTENERS.with(|l| l.borrow_mut().push((event, f)));
            Ok(())
        },
    );
    for (name, f) in [
        ("load", load.into_js_value()),
        ("seek", seek.into_js_value()),
        ("step", step.into_js_value()),
        ("play", play.into_js_value()),
        ("pause", pause.into_js_value()),
        ("now", now.into_js_value()),
        ("hash", hash.into_js_value()),
        ("metrics", metrics.into_js_value()),
        ("view", view.into_js_value()),
        ("link", link.into_js_value()),
        ("on", on.into_js_value()),
    ] {
        method(&api, name, f);
    }
    let _ = js_sys::Reflect::set(&api, &"modelVersion".into(), &(xlog::MODEL_VERSION as f64).into());
    let _ = js_sys::Reflect::set(&window, &"loglab".into(), &api);
}
