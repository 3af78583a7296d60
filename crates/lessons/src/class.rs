//! Teacher mode without a server: an assignment (lessons and a seed range), each student's
//! seed from their name, the result code a student copies (which checks they passed, with the
//! lesson versions), and the class table a teacher gets by pasting the codes.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};

/// Lessons to do and the seeds their variants come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub lessons: Vec<String>,
    pub seeds: (u64, u64),
}

impl Assignment {
    /// From a link's `assign=a,b,c` and `seeds=LO-HI`.
    pub fn parse(lessons: &str, seeds: &str) -> Result<Assignment, String> {
        let known: Vec<String> = crate::lessons().into_iter().map(|l| l.id).collect();
        let ids: Vec<String> = lessons.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect();
        if ids.is_empty() {
            return Err("assign: name at least one lesson".into());
        }
        if let Some(bad) = ids.iter().find(|i| !known.contains(i)) {
            return Err(format!(
                "assign: unknown lesson '{}' (available: {})",
                bad.chars().take(40).collect::<String>(),
                known.join(", ")
            ));
        }
        let bad = || {
            format!(
                "seeds: '{}' is not LO-HI (two whole numbers, LO <= HI)",
                seeds.chars().take(40).collect::<String>()
            )
        };
        let (lo, hi) = seeds.split_once('-').ok_or_else(bad)?;
        let (lo, hi): (u64, u64) = (lo.trim().parse().map_err(|_| bad())?, hi.trim().parse().map_err(|_| bad())?);
        if lo > hi {
            return Err(bad());
        }
        Ok(Assignment { lessons: ids, seeds: (lo, hi) })
    }

    /// The assignment's link query.
    pub fn query(&self) -> String {
        format!("?assign={}&seeds={}-{}", self.lessons.join(","), self.seeds.0, self.seeds.1)
    }

    /// A student's seed: the same name always gets the same seed, names spread over the range.
    pub fn seed_for(&self, student: &str) -> u64 {
        let name = student.trim().to_lowercase();
        let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
        self.seeds.0 + h % (self.seeds.1 - self.seeds.0 + 1)
    }
}

/// What a student hands in: who, their seed, the assigned lessons and which they passed (with
/// the lesson version they passed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultCode {
    pub student: String,
    pub seed: u64,
    pub lessons: Vec<String>,
    pub passed: Vec<(String, u32)>,
}

const PREFIX: &str = "LL1-";

impl ResultCode {
    /// `LL1-<base64url JSON>-<CRC32C>`: one word to copy and paste; the checksum catches a
    /// code cut short or mistyped.
    pub fn encode(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        format!("{PREFIX}{}-{:08x}", URL_SAFE_NO_PAD.encode(&json), xlog::crc::crc32c(&json))
    }

    pub fn decode(code: &str) -> Result<ResultCode, String> {
        let code = code.trim();
        let shown: String = code.chars().take(24).collect();
        let body = code
            .strip_prefix(PREFIX)
            .ok_or_else(|| format!("'{shown}…' is not a Log Lab result code (they start {PREFIX})"))?;
        let (data, crc) = body.rsplit_once('-').ok_or_else(|| format!("'{shown}…' is cut short"))?;
        let json = URL_SAFE_NO_PAD.decode(data).map_err(|_| format!("'{shown}…' is damaged (not base64)"))?;
        if format!("{:08x}", xlog::crc::crc32c(&json)) != crc {
            return Err(format!("'{shown}…' is damaged (its checksum does not match)"));
        }
        serde_json::from_slice(&json).map_err(|e| format!("'{shown}…' does not read: {e}"))
    }
}

/// One cell of the class table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Cell {
    /// Passed the lesson's current version.
    Passed,
    /// Passed an older version of the lesson (its task or check changed since).
    PassedVersion(u32),
    NotPassed,
    /// Not in this student's assignment.
    NotAssigned,
}

/// The class table: one row per code (in the order pasted), one column per lesson any code
/// lists (in course order); codes that do not read are listed with why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassTable {
    pub lessons: Vec<String>,
    pub rows: Vec<(String, u64, Vec<Cell>)>,
    pub errors: Vec<String>,
}

pub fn class_table(codes: &str) -> ClassTable {
    let all = crate::lessons();
    let mut results = Vec::new();
    let mut errors = Vec::new();
    for code in codes.split_whitespace() {
        match ResultCode::decode(code) {
            Ok(r) => results.push(r),
            Err(e) => errors.push(e),
        }
    }
    let lessons: Vec<String> =
        all.iter().filter(|l| results.iter().any(|r| r.lessons.contains(&l.id))).map(|l| l.id.clone()).collect();
    let rows = results
        .iter()
        .map(|r| {
            let cells = lessons
                .iter()
                .map(|id| {
                    let current = all.iter().find(|l| &l.id == id).map_or(0, |l| l.version);
                    match r.passed.iter().find(|(p, _)| p == id) {
                        _ if !r.lessons.contains(id) => Cell::NotAssigned,
                        Some((_, v)) if *v == current => Cell::Passed,
                        Some((_, v)) => Cell::PassedVersion(*v),
                        None => Cell::NotPassed,
                    }
                })
                .collect();
            (r.student.clone(), r.seed, cells)
        })
        .collect();
    ClassTable { lessons, rows, errors }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assignment_gives_each_student_a_seed_and_codes_make_the_class_table() {
        let a = Assignment::parse("iclog-life,bigger-log", "100-140").unwrap();
        assert_eq!(a.query(), "?assign=iclog-life,bigger-log&seeds=100-140");
        let (s1, s2) = (a.seed_for("Ada"), a.seed_for("grace"));
        assert!((100..=140).contains(&s1) && (100..=140).contains(&s2));
        assert_eq!(a.seed_for(" ada "), s1, "the same name, the same seed");
        let ada = ResultCode {
            student: "Ada".into(),
            seed: s1,
            lessons: a.lessons.clone(),
            passed: vec![("iclog-life".into(), 1)],
        };
        let grace = ResultCode { student: "Grace".into(), seed: s2, lessons: a.lessons.clone(), passed: vec![] };
        let code = ada.encode();
        assert!(code.starts_with("LL1-"), "{code}");
        assert_eq!(ResultCode::decode(&code), Ok(ada.clone()));
        let mut broken = code.clone();
        broken.insert(10, 'x');
        assert!(ResultCode::decode(&broken).unwrap_err().contains("damaged"));
        let t = class_table(&format!("{code}\n{}\nnonsense", grace.encode()));
        assert_eq!(t.lessons, vec!["iclog-life", "bigger-log"]);
        assert_eq!(t.rows[0].2, vec![Cell::Passed, Cell::NotPassed]);
        assert_eq!(t.rows[1].2, vec![Cell::NotPassed, Cell::NotPassed]);
        assert_eq!(t.errors.len(), 1);
        assert!(Assignment::parse("iclog-life", "9-3").unwrap_err().contains("not LO-HI"));
        assert!(Assignment::parse("nope", "1-2").unwrap_err().contains("unknown lesson 'nope'"));
    }
}
