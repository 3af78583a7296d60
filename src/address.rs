//! What the lab opens: the scenario its address names (`?preset=NAME&key=value…&at=5ms`),
//! or the default preset with a message naming what was wrong with the link.

use gloo_timers::callback::Timeout;
use std::rc::Rc;
use xlog::{find_preset, url, CrashLink, Ns, Scenario, DEFAULT_PRESET};
use yew::prelude::*;

/// The scenario a page load opens.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    pub scenario: Scenario,
    /// The preset the link is relative to ("" for a link without one).
    pub preset: String,
    /// Where to open paused (`at=`).
    pub at: Option<Ns>,
    /// Why the link could not be opened as written (the default scenario opened instead).
    pub error: Option<String>,
    /// The crash a link names (`crash_event`, `crash_state`, `crash_budget`): the lab opens
    /// paused at that event with the crash view on that state.
    pub crash: Option<CrashLink>,
}

impl Default for Opened {
    fn default() -> Self {
        Opened::default_scenario(None)
    }
}

impl Opened {
    fn default_scenario(error: Option<String>) -> Opened {
        let scenario = find_preset(DEFAULT_PRESET).unwrap_or_default();
        Opened { scenario, preset: DEFAULT_PRESET.into(), at: None, error, crash: None }
    }
}

/// Opens `search` (the address's query, `?…`, or empty).
pub fn open(search: &str) -> Opened {
    if search.trim_start_matches('?').is_empty() {
        return Opened::default_scenario(None);
    }
    let decoded = match url::decode(search) {
        Ok(d) => d,
        Err(e) => {
            return Opened::default_scenario(Some(format!(
                "This link could not be opened ({e}); showing the default scenario."
            )))
        }
    };
    let at = match decoded.at() {
        Ok(at) => at,
        Err(e) => {
            return Opened::default_scenario(Some(format!(
                "This link could not be opened ({e}); showing the default scenario."
            )))
        }
    };
    let crash = match CrashLink::parse(search) {
        Ok(c) => c,
        Err(e) => {
            return Opened::default_scenario(Some(format!(
                "This link could not be opened ({e}); showing the default scenario."
            )))
        }
    };
    Opened { preset: decoded.preset.unwrap_or_default(), scenario: decoded.scenario, at, error: None, crash }
}

/// The query of a link to what `o` shows (relative to its preset), or "" for the default.
pub fn link_query(o: &Opened) -> String {
    url::encode(&o.scenario, (!o.preset.is_empty()).then_some(o.preset.as_str())).unwrap_or_default()
}

/// Keeps the address bar on the scenario shown (`history.replaceState`, 300 ms after the last
/// change): a copied address reopens it. The page's first scenario leaves the address alone.
#[hook]
pub fn use_address_sync(opened: Rc<Opened>) {
    let first = use_mut_ref(|| opened.clone());
    let timer = use_mut_ref(|| None::<Timeout>);
    use_effect_with(opened, move |o| {
        if !Rc::ptr_eq(&first.borrow(), o) && o.error.is_none() {
            let q = link_query(o);
            *timer.borrow_mut() = Some(Timeout::new(300, move || replace_address(&q)));
        }
    });
}

fn replace_address(query: &str) {
    let Some(w) = web_sys::window() else { return };
    let path = w.location().pathname().unwrap_or_else(|_| "/".into());
    let target = format!("{path}{query}");
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&target));
    }
}

/// The query of the page's own address.
pub fn current_search() -> String {
    web_sys::window().and_then(|w| w.location().search().ok()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_address_opens_the_default_preset() {
        let o = open("");
        assert_eq!((o.preset.as_str(), o.error), (DEFAULT_PRESET, None));
    }

    #[test]
    fn a_link_opens_its_preset_overrides_and_time() {
        let o = open("?preset=fsmark-create&writers=4&at=5ms");
        assert_eq!(o.preset, "fsmark-create");
        assert_eq!(o.scenario.writers, 4);
        assert_eq!(o.at, Some(5_000_000));
        assert_eq!(o.error, None);
    }

    #[test]
    fn the_address_of_a_scenario_reopens_it() {
        let o = open("?preset=fsmark-create&writers=4");
        assert_eq!(link_query(&o), "?preset=fsmark-create&writers=4");
        assert_eq!(open(&link_query(&o)).scenario, o.scenario);
        let d = open("");
        assert_eq!(link_query(&d), format!("?preset={DEFAULT_PRESET}"));
    }

    #[test]
    fn a_crash_link_opens_its_crash() {
        let o = open("?preset=small-crash&crash_event=812&crash_state=3&crash_budget=64");
        assert_eq!(o.crash, Some(CrashLink { event: 812, state: Some(3), budget: Some(64) }));
        assert_eq!(o.error, None);
        let e = open("?preset=small-crash&crash_event=soon").error.unwrap();
        assert!(e.contains("crash_event") && e.contains("'soon'"), "{e}");
    }

    #[test]
    fn a_bad_link_names_key_and_value_and_opens_the_default() {
        let o = open("?preset=fsmark-create&writers=lots");
        let e = o.error.unwrap();
        assert!(e.contains("writers") && e.contains("'lots'"), "{e}");
        assert_eq!(o.preset, DEFAULT_PRESET);
        let e = open("?colour=%3Cscript%3E").error.unwrap();
        assert!(e.contains("unknown key 'colour'"), "{e}");
    }
}
