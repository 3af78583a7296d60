//! What each device request was issued for: the device carries an opaque `u64` tag and
//! hands it back on completion, so the simulator knows whom to wake.

use crate::units::TaskId;

/// A request's purpose, packed into the device's tag as `kind << 56 | value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IoTag {
    /// A log record write of iclog `i` (one or two requests when it wraps).
    Iclog(usize),
    /// The data-device flush a record of iclog `i` waits for before it goes out.
    IclogDataFlush(usize),
    /// Metadata writeback by xfsaild of items `first..first + count` (an inode cluster's run).
    Meta { first: u32, count: u32 },
    /// v5.14's up-front data-device flush of push worker `k`.
    PushFlush(u32),
    /// fsync's file data write or data-device flush by a writer.
    Data(TaskId),
    /// A writer's metadata read inside its transaction.
    Read(TaskId),
    /// Nobody waits for it (the unmount flush).
    None,
}

const SHIFT: u32 = 56;
const VALUE_MASK: u64 = (1 << SHIFT) - 1;

impl IoTag {
    pub(crate) fn pack(self) -> u64 {
        let (kind, v) = match self {
            IoTag::None => (0, 0),
            IoTag::Iclog(i) => (1, i as u64),
            IoTag::IclogDataFlush(i) => (2, i as u64),
            IoTag::Meta { first, count } => (3, first as u64 | (count.max(1) as u64 - 1) << 32),
            IoTag::PushFlush(k) => (4, k as u64),
            IoTag::Data(w) => (5, w as u64),
            IoTag::Read(w) => (6, w as u64),
        };
        kind << SHIFT | v
    }

    pub(crate) fn unpack(tag: u64) -> IoTag {
        let v = tag & VALUE_MASK;
        match tag >> SHIFT {
            1 => IoTag::Iclog(v as usize),
            2 => IoTag::IclogDataFlush(v as usize),
            3 => IoTag::Meta { first: v as u32, count: (v >> 32) as u32 + 1 },
            4 => IoTag::PushFlush(v as u32),
            5 => IoTag::Data(v as TaskId),
            6 => IoTag::Read(v as TaskId),
            _ => IoTag::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_keep_their_values() {
        for t in [
            IoTag::Iclog(7),
            IoTag::IclogDataFlush(0),
            IoTag::Meta { first: 123_456, count: 32 },
            IoTag::PushFlush(3),
            IoTag::Data(4095),
        ] {
            assert_eq!(IoTag::unpack(t.pack()), t);
        }
        assert_eq!(IoTag::Data(2).pack(), 5 << 56 | 2, "export tooling reads file data by this value");
        assert_eq!(IoTag::unpack(0), IoTag::None);
    }
}
