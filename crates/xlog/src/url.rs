//! Shareable scenario links: the lab's address with the `--set` keys as query parameters,
//! e.g. `http://127.0.0.1:8080/?preset=fsmark-create&writers=32&log_size=32MiB`. A `preset`
//! key names the base; the other keys are the differences from it, in `SET_KEYS` order.

use crate::presets;
use crate::scenario::{Scenario, SET_KEYS};

/// Keys a link may carry besides the `--set` keys.
pub const EXTRA_KEYS: &[&str] = &["preset", "crash_event", "crash_state", "crash_budget"];

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
}
