//! The model's version and its change log (`docs/model-changes.md`): a link records the
//! version it was made with, and the lab names what changed since when its trace moved.

/// Raised by every commit that changes any preset's trace, with a line in
/// `docs/model-changes.md` (the golden preset hashes test holds this to the traces).
pub const MODEL_VERSION: u32 = 7;

/// The change log, compiled in: the lab has no files to read.
const CHANGES: &str = include_str!("../../../docs/model-changes.md");

/// One line of `docs/model-changes.md`: the version a change made, and what and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelChange {
    pub version: u32,
    pub text: &'static str,
}

/// Every line of the change log, oldest first.
pub fn model_changes() -> Vec<ModelChange> {
    CHANGES
        .lines()
        .filter_map(|l| {
            let (n, text) = l.strip_prefix("- ")?.split_once(": ")?;
            Some(ModelChange { version: n.parse().ok()?, text })
        })
        .collect()
}

/// The changes a link made with model `from` has not seen at model `to`: versions in
/// `(from, to]` (none when `from >= to`).
pub fn model_changes_between(from: u32, to: u32) -> Vec<ModelChange> {
    model_changes().into_iter().filter(|c| c.version > from && c.version <= to).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_version_has_exactly_one_line_in_order() {
        let versions: Vec<u32> = model_changes().iter().map(|c| c.version).collect();
        assert_eq!(versions, (1..=MODEL_VERSION).collect::<Vec<_>>(), "docs/model-changes.md");
        assert!(model_changes().iter().all(|c| c.text.len() > 20));
        assert_eq!(model_changes_between(1, MODEL_VERSION).len() as u32, MODEL_VERSION - 1);
        assert!(model_changes_between(MODEL_VERSION, MODEL_VERSION).is_empty());
        assert!(model_changes_between(MODEL_VERSION + 3, 1).is_empty());
    }
}
