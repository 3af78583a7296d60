//! Keyboard shortcuts for the whole page: every control works without a mouse.

use crate::driver::Lab;
use gloo_events::{EventListener, EventListenerOptions};
use wasm_bindgen::JsCast;
use xlog::Milestone;
use yew::prelude::*;

/// (key, what it does), as the help lists them.
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Space", "play or pause"),
    ("p", "play"),
    ("s", "pause"),
    ("n", "step"),
    ("b", "step back"),
    ("+", "faster"),
    ("-", "slower"),
    ("f", "to next flush"),
    ("c", "to next checkpoint"),
    ("i", "to next iclog change"),
    ("t", "to next throttle wait"),
    ("?", "this help"),
    ("Esc", "close the help"),
];

/// Listens for the shortcuts on the document while the component lives. Keys typed into a
/// form field are left to the field.
#[hook]
pub fn use_shortcuts(lab: Lab) {
    // The listener lives across renders; it reads the latest lab from this cell.
    let latest = use_mut_ref(|| lab.clone());
    *latest.borrow_mut() = lab;
    let lab = latest;
    use_effect_with((), move |_| {
        let doc = web_sys::window().and_then(|w| w.document());
        let listener = doc.map(|doc| {
            // Not passive: the space bar must not scroll the page as well.
            EventListener::new_with_options(&doc, "keydown", EventListenerOptions::enable_prevent_default(), move |e| {
                let Some(e) = e.dyn_ref::<web_sys::KeyboardEvent>() else { return };
                if crate::panic_panel::panicked() {
                    return;
                }
                let in_field = e
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                    .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA"));
                if in_field || e.ctrl_key() || e.meta_key() || e.alt_key() {
                    return;
                }
                let lab = lab.borrow().clone();
                match e.key().as_str() {
                    " " => lab.toggle(),
                    "p" => lab.play(),
                    "s" => lab.pause(),
                    "n" => lab.step(),
                    "b" => lab.step_back(),
                    "+" | "=" => lab.faster(),
                    "-" => lab.slower(),
                    "f" => drop(lab.step_to(Milestone::Flush)),
                    "c" => drop(lab.step_to(Milestone::Checkpoint)),
                    "i" => drop(lab.step_to(Milestone::IclogState)),
                    "t" => drop(lab.step_to(Milestone::ThrottleWait)),
                    "?" => lab.toggle_help(),
                    "Escape" => lab.close_help(),
                    _ => return,
                }
                e.prevent_default();
            })
        });
        move || drop(listener)
    });
}
