//! Progress of a long exploration (crash points, sweep cells) on stderr: a bar on a terminal,
//! and otherwise, for a shard or a checkpointed run, a line at every tenth, so that its log
//! in a cluster or under nohup shows it too.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use xlog::Shard;

pub struct Progress {
    label: String,
    unit: &'static str,
    bar: OnceLock<ProgressBar>,
    /// Off a terminal: the last tenth printed, plus one (0: none yet).
    tenth: AtomicU64,
    terminal: bool,
    /// Off a terminal, print lines at all.
    lines: bool,
}

impl Progress {
    /// `unit` names what is counted ("crash points", "runs"); `lines`: off a terminal, print
    /// a line at every tenth (a shard's, a checkpointed run's) or nothing.
    pub fn new(shard: Shard, unit: &'static str, lines: bool) -> Progress {
        let label = if shard == Shard::ALL { String::new() } else { format!("shard {shard} ") };
        let terminal = std::io::stderr().is_terminal();
        Progress { label, unit, bar: OnceLock::new(), tenth: AtomicU64::new(0), terminal, lines }
    }

    pub fn set(&self, done: u64, total: u64) {
        if self.terminal {
            let bar = self.bar.get_or_init(|| {
                let pb = ProgressBar::new(total);
                let template = format!("{}{{elapsed_precise}} [{{bar:30}}] {{pos}}/{{len}} {}", self.label, self.unit);
                pb.set_style(ProgressStyle::with_template(&template).expect("valid template").progress_chars("=> "));
                pb
            });
            bar.set_length(total);
            bar.set_position(done);
            return;
        }
        if !self.lines {
            return;
        }
        let tenth = done * 10 / total.max(1) + 1;
        if self.tenth.fetch_max(tenth, Ordering::Relaxed) < tenth {
            eprintln!("loglab: {}{done}/{total} {}", self.label, self.unit);
        }
    }

    pub fn finish(&self) {
        if let Some(pb) = self.bar.get() {
            pb.finish_and_clear();
        }
    }
}
