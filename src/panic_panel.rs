//! When the lab panics: an error panel with the scenario's link to report and a button that
//! restarts the model on the same scenario, without reloading the page.
//!
//! A panic in wasm aborts the call it happened in, and the Rust state it left (borrowed cells,
//! Yew's scheduler) cannot be trusted again. So the panel is built with plain DOM calls, and
//! Restart starts a fresh instance of the app (a new module instance, fresh wasm memory) in a
//! new host element; the address bar already holds the scenario, so nothing the user made is lost.

use std::cell::{Cell, RefCell};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = "
export function restart_app() {
  // The app's own module and wasm, as Trunk preloads them; a query makes a fresh instance.
  const js = document.querySelector('link[rel=modulepreload]');
  const wasm = document.querySelector('link[rel=preload][as=fetch]');
  if (!js || !wasm) { location.reload(); return; }
  const url = new URL(js.href);
  url.searchParams.set('restart', String(Date.now()));
  import(url.href).then((m) => m.default({ module_or_path: wasm.href }));
}")]
extern "C" {
    fn restart_app();
}

thread_local! {
    /// The address of the scenario on screen, kept current (the address bar follows it late).
    static LINK: RefCell<String> = const { RefCell::new(String::new()) };
    static PANICKED: Cell<bool> = const { Cell::new(false) };
    /// Set from the page (tests): the next frame panics, as a model bug would.
    static INJECTED: Cell<bool> = const { Cell::new(false) };
}

/// The element the app renders into (a fresh one after a restart).
pub const HOST_ID: &str = "app";
const PANEL_ID: &str = "panic-panel";

/// Remembers the link of the scenario shown, for the panel and for a restart.
pub fn set_link(query: &str) {
    let Some(w) = web_sys::window() else { return };
    let loc = w.location();
    let link = format!("{}{}{query}", loc.origin().unwrap_or_default(), loc.pathname().unwrap_or_default());
    LINK.with(|l| {
        if let Ok(mut l) = l.try_borrow_mut() {
            *l = link;
        }
    });
}

/// True once this instance has panicked: its loops stop touching state.
pub fn panicked() -> bool {
    PANICKED.with(Cell::get)
}

/// Makes the next animation frame panic inside the model step (for the e2e test of this panel).
#[wasm_bindgen]
pub fn loglab_inject_panic() {
    INJECTED.with(|i| i.set(true));
}

/// Panics if a panic was injected (called where the model steps).
pub fn injected_panic_point() {
    if INJECTED.with(|i| i.replace(false)) {
        panic!("injected panic (loglab_inject_panic): a stand-in for a model bug");
    }
}

/// Installs the hook; the app renders into the returned host element.
pub fn install() -> Option<web_sys::Element> {
    // Through Yew, so that its renderer does not replace the hook with its own.
    yew::set_custom_panic_hook(Box::new(|info| {
        web_sys::console::error_1(&format!("Log Lab panicked: {info}").into());
        if !PANICKED.with(|p| p.replace(true)) {
            show_panel(&info.to_string());
        }
    }));
    let doc = web_sys::window()?.document()?;
    let host = doc.create_element("div").ok()?;
    host.set_id(HOST_ID);
    doc.body()?.append_child(&host).ok()?;
    Some(host)
}

fn show_panel(message: &str) -> Option<()> {
    let w = web_sys::window()?;
    let doc = w.document()?;
    let link = LINK.with(|l| l.try_borrow().map(|l| l.clone()).unwrap_or_default());
    let link = if link.is_empty() { w.location().href().unwrap_or_default() } else { link };
    let panel = doc.create_element("div").ok()?;
    panel.set_id(PANEL_ID);
    panel.set_class_name("panic-panel");
    panel.set_attribute("role", "alertdialog").ok()?;
    panel.set_attribute("data-testid", "panic").ok()?;
    let add = |tag: &str, text: &str, class: &str| -> Option<web_sys::Element> {
        let e = doc.create_element(tag).ok()?;
        // Text only: a message or link can never become markup.
        e.set_text_content(Some(text));
        if !class.is_empty() {
            e.set_class_name(class);
        }
        panel.append_child(&e).ok()?;
        Some(e)
    };
    add("h2", "The model stopped: Log Lab hit a bug", "")?;
    add("p", "Your scenario is safe. Restart runs it again from the start, on this page. To report the bug, send this link and the message:", "")?;
    add("code", &link, "panic-link")?.set_attribute("data-testid", "panic-link").ok()?;
    add("pre", message, "panic-message")?;
    let button = add("button", "Restart the model", "")?;
    button.set_attribute("data-testid", "panic-restart").ok()?;
    let on_click = Closure::<dyn Fn()>::new(move || restart(&link));
    button.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref()).ok()?;
    // The panel lives until the page restarts; so does its handler.
    on_click.forget();
    doc.body()?.append_child(&panel).ok()?;
    if let Ok(b) = button.dyn_into::<web_sys::HtmlElement>() {
        let _ = b.focus();
    }
    Some(())
}

/// Puts the scenario's link in the address bar, clears this instance's page and starts a
/// fresh instance of the app, which opens that link.
fn restart(link: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(link));
    }
    for id in [HOST_ID, PANEL_ID] {
        if let Some(e) = doc.get_element_by_id(id) {
            e.remove();
        }
    }
    restart_app();
}
