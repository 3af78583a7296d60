//! Log Lab's lessons: one data file each (`lessons/*.json`: text, scenario, task, check, hint,
//! reveal), whose answers the model computes when a student checks one, never written into
//! the lesson, so a lesson stays right when the model changes. A student's variant comes from
//! the seed in the link (the scenario's `seed`, which also seeds the run): different numbers,
//! the same idea. The CLI (`loglab lessons`) and the lab share this crate.

mod class;

pub use class::{class_table, Assignment, Cell, ClassTable, ResultCode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use xlog::{Ns, Scenario, Sim};

/// The lesson files, compiled in (the lab reads no files), in course order.
const FILES: &[&str] = &[
    include_str!("../../../lessons/01-iclog-life.json"),
    include_str!("../../../lessons/02-bigger-log.json"),
    include_str!("../../../lessons/03-mkfs-log-size.json"),
    include_str!("../../../lessons/04-stripe-roundoff.json"),
    include_str!("../../../lessons/05-commit-waits.json"),
    include_str!("../../../lessons/06-flushes-per-checkpoint.json"),
    include_str!("../../../lessons/07-brians-race.json"),
    include_str!("../../../lessons/08-external-log.json"),
    include_str!("../../../lessons/09-throttle-hang.json"),
    include_str!("../../../lessons/10-shadow-buffers.json"),
    include_str!("../../../lessons/11-volatile-cache.json"),
    include_str!("../../../lessons/12-throttle-32-64.json"),
    include_str!("../../../lessons/13-rsum-cache.json"),
    include_str!("../../../lessons/14-capstone.json"),
];

/// One lesson, as its data file says it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    pub id: String,
    pub title: String,
    /// The source thread it comes from (`000` to `004`, `../shared/seeds/`).
    pub thread: String,
    /// Raised whenever the lesson's task or check changes (result codes name it).
    pub version: u32,
    /// What the student reads first.
    pub text: String,
    /// The scenario, as a link query (`?preset=…&key=value…`).
    pub scenario: String,
    /// Every student runs the scenario's own seed (the lesson needs that run's event);
    /// otherwise the student's seed seeds the run too.
    #[serde(default)]
    pub keep_seed: bool,
    /// Settings that differ from student to student: `key` -> `[lo, hi]`, a whole number
    /// picked by the seed (a size key takes MiB).
    #[serde(default)]
    pub vary: BTreeMap<String, [u64; 2]>,
    /// What to do; `{key}` is replaced with the variant's value of `key`.
    pub task: String,
    pub check: Check,
    pub hint: String,
    /// The answer explained, naming the kernel function involved.
    pub reveal: String,
    /// The kernel function the reveal is about.
    pub kernel_function: String,
}

/// How an answer is judged; the expected value always comes from the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// A number: `metric` of the variant (run to `until`, or whole, with `set` applied),
    /// within `tolerance_pct` percent or `tolerance_abs` of it.
    Metric {
        metric: String,
        #[serde(default)]
        set: BTreeMap<String, String>,
        #[serde(default)]
        until: Option<String>,
        #[serde(default)]
        tolerance_pct: f64,
        #[serde(default)]
        tolerance_abs: f64,
    },
    /// A value for `key`: right when the variant with `key=answer` (and `set`) meets `when`;
    /// with `first`, only the first of `candidates` (in order) that meets it is right.
    Knob {
        key: String,
        #[serde(default)]
        set: BTreeMap<String, String>,
        candidates: Vec<String>,
        #[serde(default)]
        first: bool,
        when: Condition,
    },
    /// A crash point (an event number): right when crashing the variant there breaks
    /// `invariant` in one of `budget` states.
    Crash { invariant: String, budget: u32 },
    /// The state the ring head iclog at `at` enters next.
    NextState { at: String },
    /// The internal log mkfs.xfs (xfsprogs 6.1) makes for a filesystem of `fs_gib` GiB
    /// (varied), in 4 KiB blocks.
    MkfsLog { fs_gib: String },
}

/// What a knob's run must show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    /// `metric` of the whole run, compared with `value` by `op` (`eq`, `lt`, `gt`).
    Metric { metric: String, op: String, value: f64 },
    /// Every state of `points` evenly spread crash points (`budget` each) keeps every invariant.
    CrashClean { points: u32, budget: u32 },
}

/// A student's verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    pub correct: bool,
    /// What the model computed (shown after a wrong answer only as "too high/low").
    pub expected: String,
    pub message: String,
}

/// Every lesson, in course order. A file that does not read is a build-time mistake that the
/// crate's tests catch; here it is skipped rather than panicking in the browser.
pub fn lessons() -> Vec<Lesson> {
    FILES.iter().filter_map(|f| serde_json::from_str(f).ok()).collect()
}

pub fn find(id: &str) -> Result<Lesson, String> {
    lessons().into_iter().find(|l| l.id == id).ok_or_else(|| {
        let ids: Vec<String> = lessons().into_iter().map(|l| l.id).collect();
        format!("lesson: unknown lesson '{}' (available: {})", id.chars().take(40).collect::<String>(), ids.join(", "))
    })
}

fn pick(seed: u64, key: &str, [lo, hi]: [u64; 2]) -> u64 {
    // A different draw per key, the same for the same seed everywhere (no RNG state).
    let h = key.bytes().fold(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    lo + h % (hi - lo + 1)
}

impl Lesson {
    /// The variant's value of each varied key (as `--set` text).
    pub fn variant(&self, seed: u64) -> BTreeMap<String, String> {
        self.vary
            .iter()
            .map(|(k, &r)| {
                let v = pick(seed, k, r);
                let text = if k.ends_with("size") { format!("{v}MiB") } else { v.to_string() };
                (k.clone(), text)
            })
            .collect()
    }

    /// The student's scenario: the lesson's link with the variant's settings.
    pub fn scenario(&self, seed: u64) -> Result<Scenario, String> {
        let mut s = xlog::url::decode(&self.scenario)?.scenario;
        if !self.keep_seed {
            s.seed = seed;
        }
        for (k, v) in self.variant(seed) {
            if xlog::SET_KEYS.contains(&k.as_str()) {
                s.set(&k, &v)?;
            }
        }
        s.validate()?;
        Ok(s)
    }

    /// The link the lab opens for the student: the scenario with the variant and its seed,
    /// and the lesson (`lesson=ID&step=1`).
    pub fn link(&self, seed: u64) -> Result<String, String> {
        let d = xlog::url::decode(&self.scenario)?;
        let s = self.scenario(seed)?;
        let mut extra: Vec<(&str, String)> = d
            .extra
            .iter()
            .filter(|(k, _)| k != "lesson" && k != "step")
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        extra.push(("lesson", self.id.clone()));
        extra.push(("step", "1".to_string()));
        xlog::url::encode_with(&s, d.preset.as_deref(), &extra)
    }

    /// The task with the variant's values filled in.
    pub fn task_text(&self, seed: u64) -> String {
        let mut t = self.task.clone();
        for (k, v) in self.variant(seed) {
            t = t.replace(&format!("{{{k}}}"), &v);
        }
        if let Check::MkfsLog { fs_gib } = &self.check {
            t = t.replace("{fs_gib}", &self.fs_gib(fs_gib, seed).to_string());
        }
        t
    }

    fn fs_gib(&self, key: &str, seed: u64) -> u64 {
        self.vary.get(key).map_or(220, |&r| pick(seed, key, r))
    }

    /// The answer the model gives for this student's variant.
    pub fn expected(&self, seed: u64) -> Result<String, String> {
        let s = self.scenario(seed)?;
        match &self.check {
            Check::Metric { metric, set, until, .. } => Ok(fmt_num(metric_of(&s, set, until.as_deref(), metric)?)),
            Check::Knob { key, .. } => Ok(format!("a value of {key} that passes the check")),
            Check::Crash { invariant, .. } => Ok(format!("a crash point (event) where {invariant} breaks")),
            Check::NextState { at } => next_state(&s, xlog::parse_duration("at", at)?),
            Check::MkfsLog { fs_gib } => Ok(mkfs_log_blocks(self.fs_gib(fs_gib, seed))?.to_string()),
        }
    }

    /// An answer the model accepts for this variant (for teachers and the scripted student):
    /// the expected value, a passing knob value, or a crash point found by exploring the run
    /// up to its moment (`at`) as the crash panel does, 24 points.
    pub fn solve(&self, seed: u64) -> Result<String, String> {
        let s = self.scenario(seed)?;
        match &self.check {
            Check::Knob { key, set, candidates, when, .. } => {
                for c in candidates {
                    if knob_passes(&s, key, set, c, when)?.0 {
                        return Ok(c.clone());
                    }
                }
                Err(format!("lesson {}: no candidate value of {key} passes", self.id))
            }
            Check::Crash { invariant, budget } => {
                let at = xlog::url::decode(&self.scenario)?.at()?.unwrap_or(s.duration.0);
                let plan = xlog::CrashPlan::new_until(&s, xlog::CrashPoints::Even(24), *budget, at)?;
                let r = plan.explore(&mut |_, _| {})?;
                r.examples
                    .iter()
                    .find(|e| e.invariant.as_str() == invariant)
                    .map(|e| e.event.to_string())
                    .ok_or_else(|| format!("lesson {}: no crash point breaks {invariant}", self.id))
            }
            _ => self.expected(seed),
        }
    }

    /// Judges a student's answer for their variant.
    pub fn check(&self, seed: u64, answer: &str) -> Result<Verdict, String> {
        let answer = answer.trim();
        let shown: String = answer.chars().take(40).collect();
        if answer.is_empty() {
            return Err("answer: give an answer first".into());
        }
        let s = self.scenario(seed)?;
        let number = || -> Result<f64, String> {
            answer.replace([',', '_'], "").parse::<f64>().map_err(|_| format!("answer: '{shown}' is not a number"))
        };
        let verdict = |correct: bool, expected: String, message: String| Ok(Verdict { correct, expected, message });
        match &self.check {
            Check::Metric { metric, set, until, tolerance_pct, tolerance_abs } => {
                let got = number()?;
                let want = metric_of(&s, set, until.as_deref(), metric)?;
                let tol = tolerance_abs.max(want.abs() * tolerance_pct / 100.0);
                let ok = (got - want).abs() <= tol;
                let how = if ok {
                    format!("Right: the model says {}.", fmt_num(want))
                } else if got < want {
                    "Not quite: too low. Run the scenario and read the number again.".to_string()
                } else {
                    "Not quite: too high. Run the scenario and read the number again.".to_string()
                };
                verdict(ok, fmt_num(want), how)
            }
            Check::Knob { key, set, candidates, first, when } => {
                let (ok, what) = knob_passes(&s, key, set, answer, when)?;
                if ok && *first {
                    for c in candidates.iter().take_while(|c| c.as_str() != answer) {
                        if knob_passes(&s, key, set, c, when)?.0 {
                            let msg = format!("Close: with {key}={answer}, {what}; but an older value passes too.");
                            return verdict(false, String::new(), msg);
                        }
                    }
                }
                let msg = if ok {
                    format!("Right: with {key}={answer}, {what}.")
                } else {
                    format!("Not yet: with {key}={answer}, {what}.")
                };
                verdict(ok, String::new(), msg)
            }
            Check::Crash { invariant, budget } => {
                let event: u64 = answer.parse().map_err(|_| format!("answer: '{shown}' is not an event number"))?;
                let found = crash_breaks(&s, event, *budget)?;
                let ok = found.iter().any(|i| i == invariant);
                let msg = match (ok, found.is_empty()) {
                    (true, _) => format!("Right: a crash at event {event} breaks {invariant}."),
                    (false, true) => {
                        format!("Not here: every state of a crash at event {event} keeps every invariant.")
                    }
                    (false, false) => {
                        format!("Close: a crash at event {event} breaks {}, not {invariant}.", found.join(", "))
                    }
                };
                verdict(ok, String::new(), msg)
            }
            Check::NextState { at } => {
                let want = next_state(&s, xlog::parse_duration("at", at)?)?;
                let norm = |x: &str| x.to_ascii_uppercase().trim_start_matches("XLOG_STATE_").replace([' ', '-'], "_");
                let ok = norm(answer) == norm(&want);
                let msg = if ok {
                    format!("Right: it becomes {want}.")
                } else {
                    "Not quite: step to the next iclog state change and look.".to_string()
                };
                verdict(ok, want, msg)
            }
            Check::MkfsLog { fs_gib } => {
                let got = number()?;
                let want = mkfs_log_blocks(self.fs_gib(fs_gib, seed))?;
                let ok = got == want as f64;
                let msg = if ok {
                    format!("Right: {want} blocks of 4 KiB.")
                } else {
                    "Not quite: open the mkfs log sizing panel and follow its steps.".to_string()
                };
                verdict(ok, want.to_string(), msg)
            }
        }
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn metric_of(s: &Scenario, set: &BTreeMap<String, String>, until: Option<&str>, metric: &str) -> Result<f64, String> {
    let s = s.with_settings(set.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    let mut sim = Sim::new(&s)?;
    sim.set_keep_trace(false);
    match until {
        Some(u) => sim.run_until(xlog::parse_duration("until", u)?),
        None => sim.run(),
    }
    let m = serde_json::to_value(sim.metrics()).map_err(|e| e.to_string())?;
    match &m[metric] {
        serde_json::Value::Bool(b) => Ok(f64::from(u8::from(*b))),
        v => v.as_f64().ok_or_else(|| format!("lesson: '{metric}' is not a metric")),
    }
}

fn knob_passes(
    s: &Scenario,
    key: &str,
    set: &BTreeMap<String, String>,
    value: &str,
    when: &Condition,
) -> Result<(bool, String), String> {
    let mut k = s.with_settings(set.iter().map(|(a, b)| (a.as_str(), b.as_str())))?;
    k.set(key, value).map_err(|e| format!("answer: {e}"))?;
    k.validate().map_err(|e| format!("answer: {e}"))?;
    condition(&k, when)
}

fn condition(s: &Scenario, when: &Condition) -> Result<(bool, String), String> {
    match when {
        Condition::Metric { metric, op, value } => {
            let got = metric_of(s, &BTreeMap::new(), None, metric)?;
            let ok = match op.as_str() {
                "eq" => got == *value,
                "lt" => got < *value,
                "gt" => got > *value,
                _ => return Err(format!("lesson: op '{op}' is not eq, lt or gt")),
            };
            Ok((ok, format!("{metric} is {}", fmt_num(got))))
        }
        Condition::CrashClean { points, budget } => {
            let plan = xlog::CrashPlan::new(s, xlog::CrashPoints::Even(*points), *budget)?;
            let r = plan.explore(&mut |_, _| {})?;
            let broken: Vec<String> = r.violations.keys().map(|i| i.as_str().to_string()).collect();
            Ok((
                broken.is_empty(),
                if broken.is_empty() {
                    format!("all {} crash states of {points} crash points keep every invariant", r.crash_states)
                } else {
                    format!("crash states still break {}", broken.join(", "))
                },
            ))
        }
    }
}

/// The invariants some state of a crash at `event` breaks.
fn crash_breaks(s: &Scenario, event: u64, budget: u32) -> Result<Vec<String>, String> {
    let plan = xlog::CrashPlan::new(s, xlog::CrashPoints::One { event, state: None }, budget)?;
    let r = plan.explore(&mut |_, _| {})?;
    Ok(r.violations.keys().map(|i| i.as_str().to_string()).collect())
}

/// The state the ring head iclog at `at` enters next (`XLOG_STATE_…` without the prefix).
fn next_state(s: &Scenario, at: Ns) -> Result<String, String> {
    let mut sim = Sim::new(s)?;
    sim.set_keep_trace(false);
    sim.run_until(at);
    let v = sim.iclogs_view();
    let head = v.head as usize;
    let was = v.iclogs.get(head).map(|i| i.iclog.state).ok_or("lesson: no ring head iclog")?;
    for _ in 0..1_000_000 {
        if sim.step().is_none() {
            break;
        }
        let now = sim.iclogs_view().iclogs[head].iclog.state;
        if now != was {
            return Ok(now.kernel_name().trim_start_matches("XLOG_STATE_").to_string());
        }
    }
    Err("lesson: the ring head iclog does not change state before the run ends".into())
}

fn mkfs_log_blocks(fs_gib: u64) -> Result<u64, String> {
    let inp = xlog::sizing::SizingInput { fs_bytes: fs_gib << 30, ..Default::default() };
    Ok(xlog::sizing::size_log(&inp, xlog::sizing::SizingAlgo::Xfsprogs61)?.log_blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lesson_file_reads_and_its_scenario_opens() {
        assert_eq!(lessons().len(), FILES.len(), "a lesson file does not read");
        for f in FILES {
            serde_json::from_str::<Lesson>(f).unwrap_or_else(|e| panic!("{e}: {}", &f[..80.min(f.len())]));
        }
        let mut ids: Vec<String> = lessons().into_iter().map(|l| l.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), FILES.len(), "lesson ids are unique");
        for l in lessons() {
            for seed in [1, 2, 7] {
                l.scenario(seed).unwrap_or_else(|e| panic!("{}: {e}", l.id));
                xlog::url::decode(&l.link(seed).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", l.id));
                assert!(!l.task_text(seed).contains('{'), "{}: a {{key}} left in the task", l.id);
            }
            for field in [&l.text, &l.task, &l.hint, &l.reveal] {
                assert!(field.len() > 20, "{}", l.id);
            }
            assert!(l.reveal.contains(&l.kernel_function), "{}: the reveal names {}", l.id, l.kernel_function);
            assert!(["000", "001", "002", "003", "004"].contains(&l.thread.as_str()), "{}", l.id);
        }
    }

    #[test]
    fn variants_differ_by_seed_and_stay_in_range() {
        let l = find("bigger-log").unwrap();
        let values: std::collections::BTreeSet<String> = (0..20).map(|s| l.variant(s)["writers"].clone()).collect();
        assert!(values.len() > 3, "{values:?}");
        assert_eq!(l.variant(5), l.variant(5));
        assert!(find("nope").unwrap_err().contains("unknown lesson 'nope'"));
    }
}

#[cfg(test)]
mod mechanism {
    use super::*;

    /// Every lesson's scenario shows its mechanism within the lesson's time: a measured number
    /// is there to see (not zero), a knob's scenario as given fails its condition (the bug
    /// shows before the student fixes it), a crash point exists, and the contrast a lesson asks
    /// the student to try shows too.
    #[test]
    fn every_lessons_scenario_shows_its_mechanism() {
        for l in lessons() {
            for seed in [1, 5] {
                let s = l.scenario(seed).unwrap();
                match &l.check {
                    Check::Metric { metric, set, until, .. } => {
                        let got = metric_of(&s, set, until.as_deref(), metric).unwrap();
                        if l.id == "bigger-log" {
                            // The waits the 80 MiB log ends are there on the 10 MiB log.
                            let mut small = set.clone();
                            small.insert("log_size".into(), "10MiB".into());
                            let waits = metric_of(&s, &small, until.as_deref(), metric).unwrap();
                            assert!(waits > 10.0 * got.max(1.0), "{}: {waits} waits on 10 MiB against {got}", l.id);
                        } else {
                            assert!(got > 0.0, "{} seed {seed}: {metric} is 0", l.id);
                        }
                    }
                    Check::Knob { key, set, when, .. } => {
                        let given = s.get(key).unwrap();
                        let (ok, what) = knob_passes(&s, key, set, &given, when).unwrap();
                        assert!(
                            !ok,
                            "{} seed {seed}: the scenario as given ({key}={given}) already passes: {what}",
                            l.id
                        );
                    }
                    Check::Crash { .. } => {
                        l.solve(seed).unwrap_or_else(|e| panic!("{e}"));
                    }
                    Check::NextState { .. } | Check::MkfsLog { .. } => {
                        l.expected(seed).unwrap_or_else(|e| panic!("{}: {e}", l.id));
                    }
                }
                if l.keep_seed {
                    break; // every student runs the same scenario
                }
            }
        }
    }
}
