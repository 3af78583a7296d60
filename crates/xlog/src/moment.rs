//! A run from the start to a moment, as both front ends re-run one: `loglab run`, `trace` and
//! `export-logwrites` with `--until`, a link's hash, and the lab's trace and dm-log-writes
//! downloads at its `at=`.

use crate::logwrites::{self, Entry};
use crate::scenario::Scenario;
use crate::sim::Sim;
use crate::trace::TraceEvent;
use crate::tracefmt::{trace_cmd_header, TraceCmdPrinter};
use crate::units::Ns;

/// Where a run from the start stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// The whole run: `Sim::run` (to the duration, then the liveness check); a trace steps
    /// until no event is left.
    End,
    /// The events at or before this virtual time, with no wind-down (`--until`, a link's `at=`).
    Until(Ns),
    /// After this many events: the lab's now, where a frame may stop part way through an
    /// instant's events.
    Events(u64),
}

impl Moment {
    /// `--until` if given, else the whole run.
    pub fn until(at: Option<Ns>) -> Moment {
        at.map_or(Moment::End, Moment::Until)
    }

    /// `sim` is at this moment: its next event lies beyond it.
    pub fn reached(self, sim: &Sim) -> bool {
        match self {
            Moment::End => false,
            Moment::Until(u) => sim.is_hung() || sim.next_event_at().is_none_or(|t| t > u),
            Moment::Events(n) => sim.events() >= n,
        }
    }

    /// Runs `sim` to this moment, keeping no trace events on the way.
    pub fn run(self, sim: &mut Sim) {
        sim.set_keep_trace(false);
        match self {
            Moment::End => sim.run(),
            Moment::Until(t) => sim.run_until(t),
            Moment::Events(_) => while !self.reached(sim) && sim.step().is_some() {},
        }
    }

    /// Steps `sim` one instant toward this moment: that instant's events, or None once there.
    pub fn step(self, sim: &mut Sim) -> Option<&[TraceEvent]> {
        if self.reached(sim) {
            return None;
        }
        sim.step()
    }
}

/// Hands `f` every trace-cmd line `printer` writes for the events `keep` keeps (by name), with
/// its event, as `sim` (a new one: from the start) runs to `at`.
pub fn trace_lines<E>(
    mut sim: Sim,
    at: Moment,
    mut printer: TraceCmdPrinter,
    keep: impl Fn(&str) -> bool,
    mut f: impl FnMut(&TraceEvent, String) -> Result<(), E>,
) -> Result<(), E> {
    while let Some(evs) = at.step(&mut sim) {
        for ev in evs {
            if let Some(line) = printer.line_if(ev, &keep) {
                f(ev, line)?;
            }
        }
    }
    Ok(())
}

/// The trace-cmd text of a run of `s` to `at` (the header's entry count, then the lines).
pub fn trace_text(
    s: &Scenario,
    at: Moment,
    printer: TraceCmdPrinter,
    keep: impl Fn(&str) -> bool,
) -> Result<String, String> {
    let mut lines = Vec::new();
    trace_lines(Sim::new(s)?, at, printer, keep, |_, l| {
        lines.push(l);
        Ok::<(), String>(())
    })?;
    let mut text = trace_cmd_header(lines.len() as u64);
    for l in lines {
        text.push_str(&l);
        text.push('\n');
    }
    Ok(text)
}

/// A run's dm-log-writes stream: its log device's requests as dm-log-writes logs them (file
/// data without REQ_META), encoded, and the run that made them.
pub struct LogWrites {
    pub entries: Vec<Entry>,
    pub bytes: Vec<u8>,
    pub sim: Sim,
}

/// The dm-log-writes stream of a run of `s` from the start to `at`, every request recorded.
pub fn logwrites_to(s: &Scenario, at: Moment) -> Result<LogWrites, String> {
    let mut sim = Sim::new(s)?;
    sim.record_io();
    at.run(&mut sim);
    let entries = logwrites::entries(sim.devices()[0].request_record(), |tag| !Sim::is_file_data(tag));
    let bytes = logwrites::encode(&entries);
    Ok(LogWrites { entries, bytes, sim })
}

/// The trace hash of a run of `s` to `at`, as a link carries it.
pub fn trace_hash_at(s: &Scenario, at: Moment) -> Result<String, String> {
    let mut sim = Sim::new(s)?;
    at.run(&mut sim);
    Ok(format!("{:016x}", sim.trace_hash()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::NS_PER_MS;

    /// `--until` stops where `run --until` stops whether the run is stepped (a trace) or run
    /// (a hash, an export): the same events, none past the moment; the lab's moment counts
    /// events exactly; a trace's header counts its lines.
    #[test]
    fn each_moment_stops_the_same_way_however_the_run_gets_there() {
        let s = crate::presets::find("small-crash").unwrap();
        let at = Moment::Until(5 * NS_PER_MS);
        let mut run = Sim::new(&s).unwrap();
        at.run(&mut run);
        let mut stepped = Sim::new(&s).unwrap();
        while at.step(&mut stepped).is_some() {}
        assert!(run.events() > 100, "{}", run.events());
        assert_eq!((run.events(), run.trace_hash()), (stepped.events(), stepped.trace_hash()));
        assert!(stepped.next_event_at().is_some_and(|t| t > 5 * NS_PER_MS));
        assert_eq!(trace_hash_at(&s, at).unwrap(), format!("{:016x}", run.trace_hash()));

        let half = Moment::Events(run.events() / 2);
        let mut lab = Sim::new(&s).unwrap();
        half.run(&mut lab);
        assert_eq!(lab.events(), run.events() / 2);

        let text = trace_text(&s, at, TraceCmdPrinter::new("fsync"), |_| true).unwrap();
        let lines = text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).count();
        assert!(text.contains(&format!("entries-in-buffer/entries-written: {lines}/{lines}")), "{lines}");

        let early = logwrites_to(&s, at).unwrap();
        let whole = logwrites_to(&s, Moment::End).unwrap();
        assert!(!early.entries.is_empty() && early.entries.len() < whole.entries.len());
        assert_eq!(early.sim.events(), run.events());
    }
}
