//! The lab's one colour palette. Data colours come from Okabe and Ito's colour-blind-safe set
//! (distinct under protanopia, deuteranopia and tritanopia); every colour also has its name as
//! text next to it (legends, labels, tooltips), so nothing is told by colour alone.

use xlog::{IclogState, IoKind, IoPurpose, IoSpan, WriterState};

pub const ORANGE: &str = "#e69f00";
pub const SKY_BLUE: &str = "#56b4e9";
pub const BLUISH_GREEN: &str = "#009e73";
pub const YELLOW: &str = "#f0e442";
pub const BLUE: &str = "#0072b2";
pub const VERMILLION: &str = "#d55e00";
pub const REDDISH_PURPLE: &str = "#cc79a7";
pub const INK: &str = "#1d2428";
pub const GREY: &str = "#8a9096";
pub const LIGHT_GREY: &str = "#d7dad4";
pub const TRACK: &str = "#eef0ec";
pub const CANVAS_BG: &str = "#fbfbf9";
pub const MUTED_TEXT: &str = "#65707a";
/// Marks that matter most (PREFLUSH/FUA ticks, flags, alarms): darker than any fill.
pub const MARK: &str = "#a23b00";

/// `(r, g, b)` of a `#rrggbb` palette colour, for plotters.
pub fn rgb(hex: &str) -> (u8, u8, u8) {
    if hex.len() != 7 || !hex.starts_with('#') {
        return (0, 0, 0);
    }
    let h = |i: usize| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
    (h(1), h(3), h(5))
}

/// The iclog states in ring order of life: the ring's legend lists them so.
pub const ICLOG_STATES: [IclogState; 6] = [
    IclogState::Active,
    IclogState::WantSync,
    IclogState::Syncing,
    IclogState::DoneSync,
    IclogState::Callback,
    IclogState::Dirty,
];

/// Each iclog state (the ring, its legend and the narration).
pub fn iclog_state(state: IclogState) -> &'static str {
    match state {
        IclogState::Active => SKY_BLUE,
        IclogState::WantSync => YELLOW,
        IclogState::Syncing => ORANGE,
        IclogState::DoneSync => REDDISH_PURPLE,
        IclogState::Callback => BLUE,
        IclogState::Dirty => GREY,
    }
}

/// What a writer task waits for (the log counters' squares and the tasks panel).
pub fn writer(s: &WriterState) -> &'static str {
    match s {
        WriterState::Thinking
        | WriterState::TxWork
        | WriterState::Copying
        | WriterState::WritebackDone
        | WriterState::Stopped => LIGHT_GREY,
        WriterState::GrantWait => VERMILLION,
        WriterState::Throttled => YELLOW,
        WriterState::CommitWait | WriterState::PushFlushWait => BLUISH_GREEN,
        WriterState::PrevWait { .. } | WriterState::ForceWait { .. } => BLUE,
        WriterState::DataWrite | WriterState::DataFlush => REDDISH_PURPLE,
        WriterState::MetaRead { .. } => ORANGE,
        WriterState::AgiWait => SKY_BLUE,
    }
}

/// A request on the flush timeline, by what it is for.
pub fn request(s: &IoSpan) -> &'static str {
    match (s.kind, s.purpose) {
        (IoKind::Flush, _) => VERMILLION,
        (_, IoPurpose::Log { .. }) if !s.checkpoints.is_empty() => BLUE,
        (_, IoPurpose::Log { .. }) => SKY_BLUE,
        (_, IoPurpose::LogDataFlush { .. } | IoPurpose::PushFlush { .. } | IoPurpose::Flush) => VERMILLION,
        (_, IoPurpose::Metadata { .. }) => ORANGE,
        (_, IoPurpose::FileData { .. }) => REDDISH_PURPLE,
        (_, IoPurpose::MetaRead { .. }) => LIGHT_GREY,
    }
}

/// The timeline's legend: (colour, what it is), in the order the text names them.
pub const REQUEST_LEGEND: &[(&str, &str)] = &[
    (SKY_BLUE, "log record"),
    (BLUE, "log record with a commit record"),
    (ORANGE, "metadata writeback (xfsaild)"),
    (REDDISH_PURPLE, "fsync data"),
    (VERMILLION, "cache flush"),
    (LIGHT_GREY, "metadata read (a block not in memory)"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_iclog_state_has_its_own_colour() {
        let mut c: Vec<_> = ICLOG_STATES.iter().map(|&s| iclog_state(s)).collect();
        c.sort();
        c.dedup();
        assert_eq!(c.len(), ICLOG_STATES.len());
    }

    /// A bar the timeline draws in a colour its legend does not name is a bar no one can read.
    #[test]
    fn every_request_colour_is_in_the_timeline_legend() {
        use xlog::Lsn;
        let purposes = [
            IoPurpose::Log { iclog: 0, lsn: Lsn::new(1, 0) },
            IoPurpose::LogDataFlush { iclog: 0 },
            IoPurpose::PushFlush { worker: 0 },
            IoPurpose::Metadata { item: 0 },
            IoPurpose::FileData { task: 0 },
            IoPurpose::MetaRead { task: 0 },
            IoPurpose::Flush,
        ];
        // No wildcard: a new purpose or kind fails to compile until it is listed above.
        for p in purposes {
            match p {
                IoPurpose::Log { .. }
                | IoPurpose::LogDataFlush { .. }
                | IoPurpose::PushFlush { .. }
                | IoPurpose::Metadata { .. }
                | IoPurpose::FileData { .. }
                | IoPurpose::MetaRead { .. }
                | IoPurpose::Flush => {}
            }
        }
        let kinds = [IoKind::Write { preflush: true, fua: true }, IoKind::Flush, IoKind::Read];
        for k in kinds {
            match k {
                IoKind::Write { .. } | IoKind::Flush | IoKind::Read => {}
            }
        }
        for purpose in purposes {
            for kind in kinds {
                for checkpoints in [vec![], vec![1]] {
                    let s = IoSpan {
                        dev: 0,
                        id: 0,
                        kind,
                        sector: 0,
                        bytes: 512,
                        submit_ns: 0,
                        done_ns: 1,
                        purpose,
                        checkpoints,
                        flush_window: None,
                    };
                    let c = request(&s);
                    assert!(
                        REQUEST_LEGEND.iter().any(|&(l, _)| l == c),
                        "{purpose:?} {kind:?}: {c} is not in the legend"
                    );
                }
            }
        }
    }

    #[test]
    fn rgb_reads_the_hex() {
        assert_eq!(rgb(BLUE), (0x00, 0x72, 0xb2));
        assert_eq!(rgb("bad"), (0, 0, 0));
    }
}
