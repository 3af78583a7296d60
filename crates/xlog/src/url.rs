//! Shareable scenario links: the lab's address with the `--set` keys as query parameters,
//! e.g. `http://127.0.0.1:8080/?preset=fsmark-create&writers=32&log_size=32MiB`. A `preset`
//! key names the base; the other keys are the differences from it, in `SET_KEYS` order.
//!
//! Links are kept working as the model changes: a link may record its schema (`v`), the model
//! version it was made with (`m`) and the trace hash at its moment (`h`). A link of an older
//! schema migrates step by step (`migrate`); one of a newer schema is refused with a message.

use crate::changes::MODEL_VERSION;
use crate::presets;
use crate::scenario::{Scenario, SET_KEYS};
use crate::units::{format_duration, parse_duration, Ns, NS_PER_MS, NS_PER_US};

/// The link schema this model writes. 1: the scenario keys, `preset`, `at` and the crash
/// keys (a link without `v` is version 1). 2: adds `v`, `m`, `h`, `panels`, `cmp`, `lesson`,
/// `step`, `speed`, `embed` and `done` (the lessons a student passed); a version 1 link reads
/// the same under it.
pub const LINK_VERSION: u32 = 2;

/// The longest link read (a browser keeps longer ones, but no scenario needs them).
pub const LINK_MAX_BYTES: usize = 8192;

/// Keys a link may carry besides the `--set` keys: the base preset, a crash point to replay,
/// `at` (the virtual time the lab opens paused at), and since schema 2 the schema, model
/// version and trace hash (`v`, `m`, `h`), the panels shown, compare settings, a lesson and
/// its step, the speed of Play and the embedded view.
pub const EXTRA_KEYS: &[&str] = &[
    "preset",
    "crash_event",
    "crash_state",
    "crash_budget",
    "at",
    "v",
    "m",
    "h",
    "panels",
    "cmp",
    "lesson",
    "step",
    "speed",
    "embed",
    "done",
    "assign",
    "seeds",
    "teacher",
];

/// The lab's panels as links name them (`panels=ring,cil,tasks`).
pub const PANELS: &[&str] = &[
    "ring", "logspace", "devices", "timeline", "plots", "journal", "cil", "ail", "tasks", "crash", "sizing", "trace",
    "compare", "rsum", "sweep", "exports",
];

/// Other names a link may give a panel, as (alias, its name in `PANELS`): the log counters
/// panel is `journal` in links (every link made so far) and `counters` after its label.
pub const PANEL_ALIASES: &[(&str, &str)] = &[("counters", "journal")];

/// A panel's name in `PANELS`, from that name or an alias (None: not a panel).
pub fn panel_name(name: &str) -> Option<&'static str> {
    PANELS
        .iter()
        .find(|&&p| p == name)
        .or_else(|| PANEL_ALIASES.iter().find(|(a, _)| *a == name).map(|(_, p)| p))
        .copied()
}

/// The speeds of Play, in virtual time per animation frame (`speed=1ms`).
pub const SPEEDS: &[Ns] = &[NS_PER_US, 10 * NS_PER_US, 100 * NS_PER_US, NS_PER_MS, 10 * NS_PER_MS, 100 * NS_PER_MS];

/// A value as an error message shows it: never more than 40 characters of it.
fn shown(v: &str) -> String {
    if v.chars().count() <= 40 {
        v.to_string()
    } else {
        format!("{}… ({} characters)", v.chars().take(32).collect::<String>(), v.chars().count())
    }
}

/// The longest value each key takes.
fn value_max(key: &str) -> usize {
    match key {
        "panels" | "done" | "assign" => 256,
        "cmp" => 1024,
        "h" => 16,
        _ => 64,
    }
}

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

/// As `encode`, with non-scenario keys after the scenario's (each checked as `decode` checks it).
pub fn encode_with(s: &Scenario, preset: Option<&str>, extra: &[(&str, String)]) -> Result<String, String> {
    let mut q = encode(s, preset)?;
    for (k, v) in extra {
        if !EXTRA_KEYS.contains(k) || *k == "preset" {
            return Err(format!("url: unknown key '{}' (allowed: {})", shown(k), EXTRA_KEYS[1..].join(", ")));
        }
        q.push(if q.is_empty() { '?' } else { '&' });
        q += &form_urlencoded::Serializer::new(String::new()).append_pair(k, v).finish();
    }
    decode(&q)?;
    Ok(q)
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

    /// The link schema it was written in (1 when it names none).
    pub fn version(&self) -> u32 {
        self.extra("v").and_then(|v| v.parse().ok()).unwrap_or(1)
    }

    /// The model version the link was made with, when it says (`m`).
    pub fn model(&self) -> Option<u32> {
        self.extra("m").and_then(|v| v.parse().ok())
    }

    /// The trace hash at the link's moment (`h`): at `at`, or at the end of the run.
    pub fn hash(&self) -> Option<&str> {
        self.extra("h")
    }

    /// The panels the link shows (`panels`), when it names them.
    pub fn panels(&self) -> Option<Vec<&str>> {
        self.extra("panels").map(|v| v.split(',').filter(|p| !p.is_empty()).collect())
    }

    /// Compare mode's changed settings (`cmp=flush:legacy,log_size:32MiB`), in order.
    pub fn compare(&self) -> Vec<(&str, &str)> {
        self.extra("cmp").map(|v| v.split(',').filter_map(|kv| kv.split_once(':')).collect()).unwrap_or_default()
    }

    /// The speed of Play (`speed`), one of `SPEEDS`.
    pub fn speed(&self) -> Option<Ns> {
        self.extra("speed").and_then(|v| parse_duration("speed", v).ok())
    }

    /// The embedded view (`embed=1`): the panels without the editor.
    pub fn embed(&self) -> bool {
        self.extra("embed") == Some("1")
    }
}

/// Checks one non-scenario key's value against the decoded scenario.
fn check_extra(k: &str, v: &str, s: &Scenario) -> Result<(), String> {
    let whole = |max: u64| -> Result<u64, String> {
        let n: u64 = v.parse().map_err(|_| format!("url: {k}: '{}' is not a whole number", shown(v)))?;
        if n > max {
            return Err(format!("url: {k}: {n} is out of range (allowed: 0 to {max})"));
        }
        Ok(n)
    };
    let wrong: Option<String> = match k {
        "v" => match whole(u32::MAX as u64)? {
            0 => Some(format!("url: v: 0 is out of range (allowed: 1 to {LINK_VERSION})")),
            n if n > LINK_VERSION as u64 => Some(format!(
                "url: v: this link is schema version {n}, newer than this lab's {LINK_VERSION}: open it in a newer Log Lab"
            )),
            _ => None,
        },
        "m" => (whole(u32::MAX as u64)? == 0)
            .then(|| format!("url: m: 0 is out of range (model versions count from 1; this one is {MODEL_VERSION})")),
        "h" => (v.len() != 16 || !v.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
            .then(|| format!("url: h: '{}' is not a trace hash (16 lowercase hex digits)", shown(v))),
        "crash_event" | "crash_state" | "crash_budget" => whole(u64::MAX).err(),
        "step" => whole(1000).err(),
        "embed" => (v != "0" && v != "1").then(|| format!("url: embed: '{}' is not 0 or 1", shown(v))),
        "speed" => {
            let ns = parse_duration("speed", v).map_err(|e| format!("url: {e}"))?;
            let allowed: Vec<String> = SPEEDS.iter().map(|&x| format_duration(x)).collect();
            (!SPEEDS.contains(&ns))
                .then(|| format!("url: speed: '{}' is not a speed of Play (allowed: {})", shown(v), allowed.join(", ")))
        }
        "lesson" => (v.is_empty() || !v.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'))
            .then(|| format!("url: lesson: '{}' is not a lesson id (lowercase letters, digits and -)", shown(v))),
        "assign" => (!v.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b','))
            .then(|| format!("url: assign: '{}' is not a list of lesson ids", shown(v))),
        "seeds" => {
            let ok = v.split_once('-').is_some_and(|(a, b)| matches!((a.parse::<u64>(), b.parse::<u64>()), (Ok(a), Ok(b)) if a <= b));
            (!ok).then(|| format!("url: seeds: '{}' is not LO-HI (two whole numbers, LO <= HI)", shown(v)))
        }
        "teacher" => (v != "0" && v != "1").then(|| format!("url: teacher: '{}' is not 0 or 1", shown(v))),
        "done" => (!v.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b','))
            .then(|| format!("url: done: '{}' is not a list of lesson ids", shown(v))),
        "panels" => v
            .split(',')
            .find(|p| !p.is_empty() && panel_name(p).is_none())
            .map(|p| format!("url: panels: '{}' is not a panel (allowed: {})", shown(p), PANELS.join(", "))),
        "cmp" => {
            let mut b = s.clone();
            for kv in v.split(',').filter(|kv| !kv.is_empty()) {
                let (key, val) =
                    kv.split_once(':').ok_or_else(|| format!("url: cmp: '{}' is not key:value", shown(kv)))?;
                if !SET_KEYS.contains(&key) {
                    return Err(format!("url: cmp: unknown key '{}' (allowed: {})", shown(key), SET_KEYS.join(", ")));
                }
                b.set(key, val).map_err(|e| format!("url: cmp: {e}"))?;
            }
            b.validate().map_err(|e| format!("url: cmp: {e}")).err()
        }
        _ => None,
    };
    wrong.map_or(Ok(()), Err)
}

/// A link's keys as schema `n + 1` reads them, from schema `n + 1`'s keys: one step per schema.
type Migration = fn(Vec<(String, String)>) -> Vec<(String, String)>;

const MIGRATIONS: [Migration; LINK_VERSION as usize - 1] = [
    // 1 -> 2 only added keys: a version 1 link means the same under 2.
    |pairs| pairs,
];

/// Brings a link's keys from schema `from` to `LINK_VERSION`, one schema at a time.
fn migrate(mut pairs: Vec<(String, String)>, from: u32) -> Vec<(String, String)> {
    for step in &MIGRATIONS[(from.max(1) - 1) as usize..] {
        pairs = step(pairs);
    }
    pairs
}

/// Reads a link (a whole URL, or just its query). Unknown keys, bad values, links over
/// `LINK_MAX_BYTES` and links of a newer schema are errors naming what is wrong.
pub fn decode(url: &str) -> Result<Decoded, String> {
    if url.len() > LINK_MAX_BYTES {
        return Err(format!("url: the link is {} bytes long (at most {LINK_MAX_BYTES})", url.len()));
    }
    let query = match url.split_once('?') {
        Some((_, q)) => q,
        None if url.contains('=') => url,
        // A link without a query is the lab's default scenario; anything else is a mistake.
        None if url.is_empty() || url.starts_with("http://") || url.starts_with("https://") || url.starts_with('/') => {
            ""
        }
        None => {
            return Err(format!(
                "url: '{}' is neither a link nor a query (expected http://host/?key=value&...)",
                shown(url)
            ))
        }
    };
    let query = query.split('#').next().unwrap_or("");
    let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    for (k, v) in &pairs {
        let max = value_max(k);
        if v.chars().count() > max {
            return Err(format!(
                "url: {}: the value is {} characters long (at most {max})",
                shown(k),
                v.chars().count()
            ));
        }
    }
    let version = match pairs.iter().find(|(k, _)| k == "v") {
        Some((k, v)) => {
            check_extra(k, v, &Scenario::default())?;
            v.parse().unwrap_or(1)
        }
        None => 1,
    };
    let pairs = migrate(pairs, version);
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
                "url: unknown key '{}' (allowed: {}, {})",
                shown(k),
                EXTRA_KEYS.join(", "),
                SET_KEYS.join(", ")
            ));
        }
    }
    s.validate().map_err(|e| format!("url: {e}"))?;
    for (k, v) in &extra {
        check_extra(k, v, &s)?;
    }
    let d = Decoded { scenario: s, preset, extra };
    d.at()?;
    Ok(d)
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
        // Every path that reads a link checks its moment: `loglab run --url` too.
        let e = decode("?duration=1s&at=2s").unwrap_err();
        assert!(e.contains("at: 2s is past the scenario's duration (allowed: 0 to 1s)"), "{e}");
        assert!(decode("?at=soon").unwrap_err().contains("at: 'soon' is not a duration"));
        assert!(decode("?preset=small-crash&at=-5ms").unwrap_err().contains("at: '-5ms' is not a duration"));
    }

    #[test]
    fn every_key_of_schema_2_reads_back_and_bad_values_are_named() {
        let s = presets::find("fsmark-create").unwrap();
        let extra = [
            ("at", "150ms".to_string()),
            ("v", "2".to_string()),
            ("m", "1".to_string()),
            ("h", "0123456789abcdef".to_string()),
            ("panels", "ring,cil,tasks".to_string()),
            ("cmp", "flush:legacy,log_size:32MiB".to_string()),
            ("lesson", "iclog-life".to_string()),
            ("step", "2".to_string()),
            ("speed", "1ms".to_string()),
            ("embed", "1".to_string()),
        ];
        let q = encode_with(&s, Some("fsmark-create"), &extra).unwrap();
        let d = decode(&q).unwrap();
        assert_eq!(d.scenario, s);
        assert_eq!((d.version(), d.model(), d.hash()), (2, Some(1), Some("0123456789abcdef")));
        assert_eq!(d.panels(), Some(vec!["ring", "cil", "tasks"]));
        assert_eq!(d.compare(), vec![("flush", "legacy"), ("log_size", "32MiB")]);
        assert_eq!(
            (d.speed(), d.embed(), d.extra("lesson"), d.extra("step")),
            (Some(NS_PER_MS), true, Some("iclog-life"), Some("2"))
        );
        assert_eq!(decode("?preset=small-crash").unwrap().version(), 1, "no v: schema 1");
        for (link, needle) in [
            ("?v=3", "schema version 3, newer than this lab's 2"),
            ("?v=0", "v: 0 is out of range"),
            ("?m=0", "m: 0 is out of range"),
            ("?h=xyz", "h: 'xyz' is not a trace hash"),
            ("?panels=ring,kitchen", "panels: 'kitchen' is not a panel"),
            ("?panels=counter", "panels: 'counter' is not a panel"),
            ("?cmp=flush:sideways", "cmp: "),
            ("?cmp=colour:red", "cmp: unknown key 'colour'"),
            ("?cmp=flush", "cmp: 'flush' is not key:value"),
            ("?cmp=log_size:1KiB", "cmp: "),
            ("?lesson=Bad%20Id", "lesson: 'Bad Id' is not a lesson id"),
            ("?step=1001", "step: 1001 is out of range"),
            ("?speed=3ms", "speed: '3ms' is not a speed of Play"),
            ("?embed=yes", "embed: 'yes' is not 0 or 1"),
            ("?crash_event=-1", "crash_event: '-1' is not a whole number"),
        ] {
            let e = decode(link).unwrap_err();
            assert!(e.starts_with("url: ") && e.contains(needle), "{link}: {e}");
        }
        assert!(encode_with(&s, None, &[("colour", "red".into())]).unwrap_err().contains("unknown key 'colour'"));
        assert!(encode_with(&s, None, &[("speed", "3ms".into())]).is_err());
    }

    #[test]
    fn long_links_and_values_are_refused_without_being_echoed() {
        let digits = "9".repeat(9000);
        let e = decode(&format!("?preset=small-crash&writers={digits}")).unwrap_err();
        assert!(e.contains("the link is 9") && e.contains("bytes long (at most 8192)"), "{e}");
        assert!(e.len() < 200, "{e}");
        let e = decode(&format!("?writers={}", &digits[..2000])).unwrap_err();
        assert_eq!(e, "url: writers: the value is 2000 characters long (at most 64)");
        let e = decode(&format!("?{}=1", "k".repeat(500))).unwrap_err();
        assert!(!e.contains(&"k".repeat(100)) && e.contains("(500 characters)"), "{e}");
        let e = decode(&"x".repeat(5000)).unwrap_err();
        assert!(e.len() < 200 && e.contains("is neither a link nor a query"), "{e}");
    }

    /// Links written by each schema keep opening: `tests/links/v1.txt` holds links as the lab
    /// and the CLI wrote them before schema 2 (every preset, overrides, `at`, crash links).
    #[test]
    fn the_link_corpus_of_every_schema_opens() {
        for (version, corpus) in
            [(1, include_str!("../tests/links/v1.txt")), (2, include_str!("../tests/links/v2.txt"))]
        {
            let links: Vec<&str> = corpus.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
            assert!(links.len() >= 10, "schema {version} corpus");
            for link in links {
                let d = decode(link).unwrap_or_else(|e| panic!("schema {version}: {link}: {e}"));
                assert_eq!(d.version(), version, "{link}");
            }
        }
        assert_eq!(MIGRATIONS.len() as u32, LINK_VERSION - 1);
    }
}
