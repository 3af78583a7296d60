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
    /// The link's other keys (schema 2): what it was made with and how it was shown.
    pub link: LinkKeys,
}

/// What a link says besides its scenario and moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkKeys {
    /// The trace hash at the link's moment (`h`) and the model version it was made with (`m`).
    pub hash: Option<String>,
    pub model: Option<u32>,
    /// The panels shown (`panels`), the speed of Play (`speed`), compare's settings (`cmp`).
    pub panels: Option<Vec<String>>,
    pub speed: Option<Ns>,
    pub compare: Vec<(String, String)>,
    /// `embed=1`: the chosen panels without the editor, for an iframe in a course page.
    pub embed: bool,
    /// The lesson the link opens (`lesson=`), and the lessons the student passed (`done=`).
    pub lesson: Option<String>,
    pub done: Vec<String>,
    /// An assignment (`assign=` lessons, `seeds=LO-HI`), and the teacher's page (`teacher=1`).
    pub assign: Option<(String, String)>,
    pub teacher: bool,
}

impl Default for Opened {
    fn default() -> Self {
        Opened::default_scenario(None)
    }
}

impl Opened {
    fn default_scenario(error: Option<String>) -> Opened {
        let scenario = find_preset(DEFAULT_PRESET).unwrap_or_default();
        Opened { scenario, preset: DEFAULT_PRESET.into(), at: None, error, crash: None, link: LinkKeys::default() }
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
    // `?lesson=ID` alone (or with `seed=` and `done=`) opens the lesson's own link for that seed.
    if let (Some(id), None) = (decoded.extra("lesson"), decoded.preset.as_ref()) {
        return match loglab_lessons::find(id).and_then(|l| l.link(decoded.scenario.seed)) {
            Ok(q) => {
                let done = decoded.extra("done").map(|v| format!("&done={v}")).unwrap_or_default();
                open(&format!("{q}{done}"))
            }
            Err(e) => Opened::default_scenario(Some(format!(
                "This link could not be opened ({e}); showing the default scenario."
            ))),
        };
    }
    let at = match decoded.at() {
        Ok(at) => at,
        Err(e) => {
            return Opened::default_scenario(Some(format!(
                "This link could not be opened ({e}); showing the default scenario."
            )))
        }
    };
    let crash = match CrashLink::of(&decoded) {
        Ok(c) => c,
        Err(e) => {
            return Opened::default_scenario(Some(format!(
                "This link could not be opened ({e}); showing the default scenario."
            )))
        }
    };
    let link = LinkKeys {
        hash: decoded.hash().map(str::to_string),
        model: decoded.model(),
        panels: decoded.panels().map(|p| p.into_iter().map(str::to_string).collect()),
        speed: decoded.speed(),
        compare: decoded.compare().into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        embed: decoded.embed(),
        lesson: decoded.extra("lesson").map(str::to_string),
        assign: decoded.extra("assign").map(|a| (a.to_string(), decoded.extra("seeds").unwrap_or("1-100").to_string())),
        teacher: decoded.extra("teacher") == Some("1"),
        done: decoded
            .extra("done")
            .map(|v| v.split(',').filter(|x| !x.is_empty()).map(str::to_string).collect())
            .unwrap_or_default(),
    };
    // A teacher's page or an assignment names no scenario: the lab under it opens the default preset.
    if decoded.preset.is_none() && (link.teacher || link.assign.is_some()) && decoded.scenario == Scenario::default() {
        let mut o = Opened::default_scenario(None);
        o.link = link;
        return o;
    }
    Opened { preset: decoded.preset.unwrap_or_default(), scenario: decoded.scenario, at, error: None, crash, link }
}

/// The full lab's link to what an embedded view shows (its query without `embed`).
pub fn full_lab_query(o: &Opened) -> String {
    let q = link_query(o);
    if q.is_empty() {
        "./".into()
    } else {
        q
    }
}

/// Opens a scenario someone chose in the lab (a preset, an edited setting): no link keys.
pub fn chosen(scenario: Scenario, preset: String) -> Opened {
    Opened { scenario, preset, at: None, error: None, crash: None, link: LinkKeys::default() }
}

/// The query of a link to this moment of the lab: the scenario, `at` (now), the link schema,
/// the model version and the trace hash at `at`, the panels shown, the speed, and compare's
/// settings when a comparison runs.
pub fn moment_query(o: &Opened, at: Ns, hash: &str, shown: &[&str], speed: Ns, compare: &[(String, String)]) -> String {
    let mut extra: Vec<(&str, String)> = vec![
        ("at", xlog::format_duration(at)),
        ("v", url::LINK_VERSION.to_string()),
        ("m", xlog::MODEL_VERSION.to_string()),
        ("h", hash.to_string()),
        ("panels", shown.join(",")),
        ("speed", xlog::format_duration(speed)),
    ];
    if !compare.is_empty() {
        extra.push(("cmp", compare.iter().map(|(k, v)| format!("{k}:{v}")).collect::<Vec<_>>().join(",")));
    }
    let preset = (!o.preset.is_empty()).then_some(o.preset.as_str());
    url::encode_with(&o.scenario, preset, &extra).unwrap_or_else(|_| link_query(o))
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
    fn a_moment_link_reopens_its_keys() {
        let o = open("?preset=fsmark-create&writers=4");
        let q = moment_query(
            &o,
            150_000_000,
            "0123456789abcdef",
            &["ring", "cil"],
            1_000_000,
            &[("flush".into(), "legacy".into())],
        );
        let back = open(&q);
        assert_eq!(back.error, None, "{q}");
        assert_eq!((back.scenario.clone(), back.at), (o.scenario.clone(), Some(150_000_000)));
        assert_eq!(back.link.hash.as_deref(), Some("0123456789abcdef"));
        assert_eq!(back.link.model, Some(xlog::MODEL_VERSION));
        assert_eq!(back.link.panels, Some(vec!["ring".to_string(), "cil".to_string()]));
        assert_eq!(back.link.speed, Some(1_000_000));
        assert_eq!(back.link.compare, vec![("flush".to_string(), "legacy".to_string())]);
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
