//! Whether a link still shows what it showed: its trace hash (`h`) against this model's at
//! the link's moment, and the model changes in between. The CLI (`loglab url check`) and the
//! lab's banner both ask this.

use crate::changes::{model_changes_between, ModelChange, MODEL_VERSION};
use crate::moment::Moment;
use crate::url::{decode, Decoded};

/// What a link with a trace hash finds at its moment under this model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkCheck {
    /// The link's hash (`h`).
    pub link_hash: String,
    /// This model's hash at the link's moment.
    pub hash: String,
    /// The model version the link names (`m`; 1 when it names none).
    pub link_model: u32,
    /// The changes since the link's model version, when the hash moved.
    pub changes: Vec<ModelChange>,
}

impl LinkCheck {
    pub fn holds(&self) -> bool {
        self.link_hash == self.hash
    }

    /// For a reader of the link: what it was made with, what runs now, and the changes since.
    pub fn message(&self) -> String {
        let what = if self.holds() || self.changes.is_empty() {
            String::new()
        } else {
            " What changed since: ".to_string()
                + &self.changes.iter().map(|c| format!("{}: {}", c.version, c.text)).collect::<Vec<_>>().join(" ")
        };
        self.summary() + &what
    }

    /// As `message`, without the list of changes (the lab lists them itself).
    pub fn summary(&self) -> String {
        if self.holds() {
            return format!("This link shows what it showed when it was made (trace hash {}).", self.hash);
        }
        if self.link_model == MODEL_VERSION {
            return format!(
                "This link's moment now has trace hash {} where the link recorded {}, though it names this model \
                 version ({MODEL_VERSION}): it was edited, or made by a build whose change was not recorded, so what \
                 you see may differ from what its author saw.",
                self.hash, self.link_hash
            );
        }
        let made = if self.link_model > MODEL_VERSION {
            format!("a newer model (version {}) than this lab's (version {MODEL_VERSION})", self.link_model)
        } else {
            format!("model version {}; this lab runs version {MODEL_VERSION}", self.link_model)
        };
        format!(
            "The model has changed since this link was made: it was made with {made}. Its moment now has trace hash {} \
             where the link recorded {}, so what you see may differ from what its author saw.",
            self.hash, self.link_hash
        )
    }
}

/// The trace hash of `d`'s scenario at its moment: at `at`, or at the end of the whole run.
pub fn link_moment_hash(d: &Decoded) -> Result<String, String> {
    crate::moment::trace_hash_at(&d.scenario, Moment::until(d.at()?))
}

/// Compares a decoded link's `h` with `hash`, this model's at the link's moment; None when
/// the link has no hash.
pub fn compare_link(d: &Decoded, hash: &str) -> Option<LinkCheck> {
    Some(compare_hashes(d.hash()?, d.model(), hash))
}

/// A link's hash and model version (`m`; none means 1) against `hash`, this model's at its moment.
pub fn compare_hashes(link_hash: &str, link_model: Option<u32>, hash: &str) -> LinkCheck {
    let link_model = link_model.unwrap_or(1);
    let changes = if link_hash == hash { Vec::new() } else { model_changes_between(link_model, MODEL_VERSION) };
    LinkCheck { link_hash: link_hash.to_string(), hash: hash.to_string(), link_model, changes }
}

/// Decodes `url` and checks its hash by running it to its moment; None when it has none.
pub fn check_link(url: &str) -> Result<Option<LinkCheck>, String> {
    let d = decode(url)?;
    if d.hash().is_none() {
        return Ok(None);
    }
    Ok(compare_link(&d, &link_moment_hash(&d)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Sim;

    #[test]
    fn a_link_hash_holds_until_the_trace_moves() {
        let base = "?preset=small-crash&at=5ms";
        let h = link_moment_hash(&decode(base).unwrap()).unwrap();
        let good = check_link(&format!("{base}&v=2&m={MODEL_VERSION}&h={h}")).unwrap().unwrap();
        assert!(good.holds() && good.changes.is_empty(), "{good:?}");
        // The lab at 5 ms and `loglab run --until 5ms` are the same run.
        let mut sim = Sim::new(&decode(base).unwrap().scenario).unwrap();
        sim.run_until(5_000_000);
        assert_eq!(h, format!("{:016x}", sim.trace_hash()));
        // A link made with model 1 whose hash moved names every change since.
        let moved = check_link(&format!("{base}&v=2&m=1&h=0123456789abcdef")).unwrap().unwrap();
        assert!(!moved.holds());
        assert_eq!(moved.changes, model_changes_between(1, MODEL_VERSION));
        let msg = moved.message();
        assert!(msg.contains("made with model version 1") && msg.contains("0123456789abcdef"), "{msg}");
        assert!(check_link(base).unwrap().is_none(), "no h, nothing to check");
        // Without `at`, the moment is the end of the run.
        let whole = link_moment_hash(&decode("?preset=small-crash").unwrap()).unwrap();
        let mut sim = Sim::new(&decode("?preset=small-crash").unwrap().scenario).unwrap();
        sim.run();
        assert_eq!(whole, sim.metrics().trace_hash);
    }
}
