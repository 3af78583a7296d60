//! Shareable scenario links: the lab's address with the `--set` keys as query parameters,
//! e.g. `http://127.0.0.1:8080/?preset=fsmark-create&writers=32&log_size=32MiB`. A `preset`
//! key names the base; the other keys are the differences from it, in `SET_KEYS` order.

use crate::presets;
use crate::scenario::{Scenario, SET_KEYS};
use crate::units::{format_duration, parse_duration, Ns};

/// Keys a link may carry besides the `--set` keys: the base preset, a crash point to replay,
/// and `at`, the virtual time the lab opens paused at.
pub const EXTRA_KEYS: &[&str] = &["preset", "crash_event", "crash_state", "crash_budget", "at"];

/// The query of a link to `s` (`?preset=…&key=value…`, or empty for the default scenario),
/// relative to `preset` when one is named (it must exist). The caller puts its origin first.
pub fn encode(s: &Scenario, preset: Option<&str>) -> Result<String, String> {
    let base = match preset {
        Some(p) => presets::find(p)?,
        None => Scenario::default(),
    };
    let mut q = form_urlencoded::Serializer::new(String::new());
    if let Some(p) = preset {
        q.append_pair("preset", p);
    }
    for (k, v) in s.diff(&base) {
        q.append_pair(k, &v);
    }
    let q = q.finish();
    Ok(if q.is_empty() { String::new() } else { format!("?{q}") })
}

/// What a link holds: its scenario plus any non-scenario keys (a crash point to replay).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub scenario: Scenario,
    pub preset: Option<String>,
    pub extra: Vec<(String, String)>,
}

impl Decoded {
    /// The value of a non-scenario key, if the link has it.
    pub fn extra(&self, key: &str) -> Option<&str> {
        self.extra.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// `at=<duration>`: where the lab opens, paused; within the scenario's duration.
    pub fn at(&self) -> Result<Option<Ns>, String> {
        let Some(v) = self.extra("at") else { return Ok(None) };
        let at = parse_duration("at", v).map_err(|e| format!("url: {e}"))?;
        let d = self.scenario.duration.0;
        if at > d {
            return Err(format!(
                "url: at: {} is past the scenario's duration (allowed: 0 to {})",
                format_duration(at),
                format_duration(d)
            ));
        }
        Ok(Some(at))
    }
}

/// Reads a link (a whole URL, or just its query). Unknown keys are errors naming the key.
pub fn decode(url: &str) -> Result<Decoded, String> {
    let query = match url.split_once('?') {
        Some((_, q)) => q,
        None if url.contains('=') => url,
        // A link without a query is the lab's default scenario; anything else is a mistake.
        None if url.is_empty() || url.starts_with("http://") || url.starts_with("https://") || url.starts_with('/') => {
            ""
        }
        None => {
            return Err(format!("url: '{url}' is neither a link nor a query (expected http://host/?key=value&...)"))
        }
    };
    let query = query.split('#').next().unwrap_or("");
    let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let preset = pairs.iter().find(|(k, _)| k == "preset").map(|(_, v)| v.clone());
    let mut s = match &preset {
        Some(p) => presets::find(p)?,
        None => Scenario::default(),
    };
    let mut extra = Vec::new();
    for (k, v) in &pairs {
        if k == "preset" {
            continue;
        }
        if EXTRA_KEYS.contains(&k.as_str()) {
            extra.push((k.clone(), v.clone()));
        } else if SET_KEYS.contains(&k.as_str()) {
            s.set(k, v).map_err(|e| format!("url: {e}"))?;
        } else {
            return Err(format!(
                "url: unknown key '{k}' (allowed: {}, {})",
                EXTRA_KEYS.join(", "),
                SET_KEYS.join(", ")
            ));
        }
    }
    s.validate().map_err(|e| format!("url: {e}"))?;
    Ok(Decoded { scenario: s, preset, extra })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_round_trip_through_presets_and_overrides() {
        let mut s = presets::find("fsmark-create").unwrap();
        s.set("writers", "32").unwrap();
        s.set("log_size", "32MiB").unwrap();
        let u = encode(&s, Some("fsmark-create")).unwrap();
        assert_eq!(u, "?preset=fsmark-create&writers=32&log_size=32MiB");
        assert_eq!(decode(&u).unwrap().scenario, s);
        let plain = encode(&s, None).unwrap();
        assert_eq!(decode(&format!("http://127.0.0.1:8080/{plain}")).unwrap().scenario, s);
        assert_eq!(encode(&Scenario::default(), None).unwrap(), "");
    }

    #[test]
    fn bad_links_name_the_key() {
        assert!(decode("?writers=abc").unwrap_err().contains("writers"));
        assert!(decode("?colour=red").unwrap_err().contains("'colour'"));
        assert!(decode("?preset=nope").unwrap_err().contains("nope"));
        assert!(decode("garbage").unwrap_err().contains("'garbage' is neither a link nor a query"));
        assert_eq!(decode("http://127.0.0.1:8080/").unwrap().scenario, Scenario::default());
    }

    #[test]
    fn at_opens_within_the_run() {
        assert_eq!(decode("?preset=small-crash&at=5ms").unwrap().at(), Ok(Some(5_000_000)));
        assert_eq!(decode("?writers=4").unwrap().at(), Ok(None));
        let e = decode("?duration=1s&at=2s").unwrap().at().unwrap_err();
        assert!(e.contains("at: 2s is past the scenario's duration (allowed: 0 to 1s)"), "{e}");
        assert!(decode("?at=soon").unwrap().at().unwrap_err().contains("at: 'soon' is not a duration"));
    }
}
