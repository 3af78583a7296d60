//! Grant heads, tickets and reservations: `xlog_calc_unit_res`, `xlog_space_left`, tail-push targets.

use crate::geometry::Geometry;
use crate::units::{btobb, next_cycle, Lsn, BBSIZE};

/// The reservation arithmetic is geometry's: validating a scenario needs it too.
pub use crate::geometry::{xlog_calc_unit_res, xlog_calc_unit_res_hdrs};
use serde::Serialize;

/// A grant head value: `(cycle << 32) | bytes`, bytes being a byte offset in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GrantHead {
    pub cycle: u32,
    pub bytes: u32,
}

impl GrantHead {
    pub const START: GrantHead = GrantHead { cycle: 1, bytes: 0 };

    /// `xlog_grant_add_space`
    pub fn add(&mut self, log_bytes: u32, bytes: u32) {
        let tmp = log_bytes - self.bytes;
        if tmp > bytes {
            self.bytes += bytes;
        } else {
            self.bytes = bytes - tmp;
            self.cycle = next_cycle(self.cycle);
        }
    }

    /// `xlog_grant_sub_space`
    pub fn sub(&mut self, log_bytes: u32, bytes: u32) {
        if self.bytes >= bytes {
            self.bytes -= bytes;
        } else {
            self.bytes = log_bytes - (bytes - self.bytes);
            self.cycle -= 1;
        }
    }
}

/// `xlog_space_left`: free bytes between a grant head and the tail.
pub fn xlog_space_left(log_bytes: u32, head: GrantHead, tail: Lsn) -> u32 {
    let tail_bytes = tail.block() * BBSIZE;
    let tail_cycle = tail.cycle();
    if tail_cycle == head.cycle && head.bytes >= tail_bytes {
        log_bytes - (head.bytes - tail_bytes)
    } else if tail_cycle + 1 < head.cycle {
        0
    } else if tail_cycle < head.cycle {
        // The head can pass the tail: `xlog_sync` adds an iclog's roundoff to both heads
        // without a space check when no ticket pays it. The kernel's int then goes negative
        // and every caller finds no room, as with 0.
        tail_bytes.saturating_sub(head.bytes)
    } else {
        // "xlog_space_left: head behind tail": a model bug, as ASSERT(0) is in a debug
        // kernel; a release kernel (and release build) reports the whole log free.
        debug_assert!(false, "xlog_space_left: head {head:?} behind tail {tail}");
        log_bytes
    }
}

/// Free blocks below which a reservation of `need_bytes` pushes the AIL: 25% of the log, at
/// least 256 blocks, at least what it needs.
pub fn xlog_grant_push_threshold_bb(geo: &Geometry, need_bytes: u32) -> u32 {
    (btobb(need_bytes as u64) as u32).max(geo.log_bb / 4).max(256)
}

/// `xlog_grant_push_threshold`: the AIL target that keeps 25% (and 256 blocks) free,
/// clamped to the last synced LSN. `None` when no push is needed.
///
/// ```text
///  block 0                         log_bb
///  |----tail====live====head------|      target = tail + threshold, wrapping:
///  |==head---------------tail=====|      past log_bb -> block - log_bb, cycle + 1
/// ```
pub fn xlog_grant_push_threshold(
    geo: &Geometry,
    reserve_head: GrantHead,
    tail: Lsn,
    last_sync: Lsn,
    need_bytes: u32,
) -> Option<Lsn> {
    let free_blocks = xlog_space_left(geo.log_bytes, reserve_head, tail) / BBSIZE;
    let threshold = xlog_grant_push_threshold_bb(geo, need_bytes);
    if free_blocks >= threshold {
        return None;
    }
    let mut cycle = tail.cycle();
    let mut block = tail.block() + threshold;
    if block >= geo.log_bb {
        block -= geo.log_bb;
        cycle = next_cycle(cycle);
    }
    let target = Lsn::new(cycle, block);
    Some(target.min(last_sync))
}

/// `xlog_lsn_sub`: the log bytes from `low` to `high`, at most one cycle apart.
pub fn xlog_lsn_sub(geo: &Geometry, high: Lsn, low: Lsn) -> u64 {
    if high.cycle() == low.cycle() {
        (high.block() - low.block()) as u64 * BBSIZE as u64
    } else {
        geo.log_bytes as u64 - (low.block() - high.block()) as u64 * BBSIZE as u64
    }
}

/// `xfs_ail_calc_push_target` (6.11+) for background pushing: when the AIL spans more than
/// three quarters of the physical log (its newest LSN less its oldest), the target is the
/// oldest LSN plus a quarter of the log, at most the newest; else `None` (keep the old one).
pub fn xfs_ail_calc_push_target(geo: &Geometry, min: Lsn, max: Lsn) -> Option<Lsn> {
    if geo.log_bytes as u64 - xlog_lsn_sub(geo, max, min) >= (geo.log_bytes >> 2) as u64 {
        return None;
    }
    let mut cycle = min.cycle();
    let mut block = min.block() + (geo.log_bb >> 2);
    if block >= geo.log_bb {
        block -= geo.log_bb;
        cycle = next_cycle(cycle);
    }
    Some(Lsn::new(cycle, block).min(max))
}

/// `XLOG_TIC_PERM_RESERV`
pub const XLOG_TIC_PERM_RESERV: u32 = 0x1;

/// `struct xlog_ticket`: what a transaction (or the CIL context) may still write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ticket {
    tid: u32,
    unit_res: i64,
    curr_res: i64,
    cnt: u32,
    ocnt: u32,
    flags: u32,
    /// `t_iclog_hdrs`: record headers the unit reservation holds (`xlog_calc_unit_res`).
    iclog_hdrs: u32,
}

impl Ticket {
    /// `xlog_ticket_alloc`
    pub fn new(tid: u32, unit_res: u32, cnt: u32, permanent: bool) -> Ticket {
        Ticket {
            tid,
            unit_res: unit_res as i64,
            curr_res: unit_res as i64,
            cnt,
            ocnt: cnt,
            flags: if permanent { XLOG_TIC_PERM_RESERV } else { 0 },
            iclog_hdrs: 1,
        }
    }

    /// A ticket whose unit reservation holds `n` record headers.
    pub fn with_iclog_hdrs(mut self, n: u32) -> Ticket {
        self.iclog_hdrs = n;
        self
    }

    pub fn tid(&self) -> u32 {
        self.tid
    }
    /// `t_unit_res`.
    pub fn unit_res(&self) -> i64 {
        self.unit_res
    }
    /// `t_curr_res`: what is left of the current unit (negative: overrun).
    pub fn curr_res(&self) -> i64 {
        self.curr_res
    }
    /// `t_cnt` and `t_ocnt`: units left, and the count it was allocated with.
    pub fn cnt(&self) -> u32 {
        self.cnt
    }
    pub fn ocnt(&self) -> u32 {
        self.ocnt
    }
    pub fn flags(&self) -> u32 {
        self.flags
    }
    pub fn iclog_hdrs(&self) -> u32 {
        self.iclog_hdrs
    }

    /// Formatted bytes charged against the current unit (`t_curr_res -= len`).
    pub fn charge(&mut self, bytes: i64) {
        self.curr_res -= bytes;
    }
    /// Reservation moved in from another ticket (`t_curr_res += stolen`).
    pub fn add_res(&mut self, bytes: i64) {
        self.curr_res += bytes;
    }
    /// The whole current reservation taken out (the CIL context steals it, or it is given
    /// back): answers it, leaving none.
    pub fn take_res(&mut self) -> i64 {
        std::mem::take(&mut self.curr_res)
    }
    /// `t_curr_res` set to `bytes` (a context ticket that holds only what it stole).
    pub fn set_res(&mut self, bytes: i64) {
        self.curr_res = bytes;
    }
    /// The unit and what is left of it both grow by `bytes` (a split transaction's record
    /// header reservation, `xlog_cil_insert_items`).
    pub fn grow_unit(&mut self, bytes: i64) {
        self.unit_res += bytes;
        self.curr_res += bytes;
    }

    pub fn permanent(&self) -> bool {
        self.flags & XLOG_TIC_PERM_RESERV != 0
    }

    /// `xlog_ticket_reservation` on the reserve head.
    pub fn reserve_need(&self) -> u32 {
        if self.permanent() {
            (self.unit_res * self.cnt as i64) as u32
        } else {
            self.unit_res as u32
        }
    }

    /// `xfs_log_ticket_ungrant`: bytes to give back to both heads.
    pub fn ungrant_bytes(&mut self) -> u32 {
        if self.cnt > 0 {
            self.cnt -= 1;
        }
        let mut bytes = self.curr_res.max(0);
        if self.cnt > 0 {
            bytes += self.unit_res * self.cnt as i64;
        }
        bytes as u32
    }
}

#[cfg(test)]
#[allow(clippy::field_reassign_with_default)] // tests change one knob at a time
mod tests {
    use super::*;
    use crate::geometry::test_geometry as geo;

    #[test]
    fn grant_head_wraps_and_space_left_follows() {
        let mut h = GrantHead::START;
        h.add(1000, 900);
        assert_eq!(h, GrantHead { cycle: 1, bytes: 900 });
        h.add(1000, 200);
        assert_eq!(h, GrantHead { cycle: 2, bytes: 100 });
        h.sub(1000, 200);
        assert_eq!(h, GrantHead { cycle: 1, bytes: 900 });
        // tail at block 1 (512 bytes) cycle 1, head at 900 cycle 1: 1000 - 388 free.
        assert_eq!(xlog_space_left(1000, h, Lsn::new(1, 1)), 612);
        h.add(1000, 200);
        assert_eq!(xlog_space_left(1000, h, Lsn::new(1, 1)), 412);
        assert_eq!(xlog_space_left(1000, GrantHead { cycle: 3, bytes: 0 }, Lsn::new(1, 1)), 0);
        // A roundoff added without a check took the head 192 bytes past the tail: no room
        // (the kernel's free bytes go negative), not a whole log's worth.
        assert_eq!(xlog_space_left(1000, GrantHead { cycle: 2, bytes: 512 + 192 }, Lsn::new(1, 1)), 0);
    }

    #[test]
    fn push_threshold_clamps_to_last_sync() {
        let g = geo(32, 0);
        let full = GrantHead { cycle: 1, bytes: g.log_bytes - 4096 };
        let t = xlog_grant_push_threshold(&g, full, Lsn::new(1, 0), Lsn::new(1, 100), 0);
        assert_eq!(t, Some(Lsn::new(1, 100)));
        assert_eq!(xlog_grant_push_threshold(&g, GrantHead::START, Lsn::new(1, 0), Lsn::new(1, 0), 0), None);
    }

    #[test]
    fn ail_target_pushes_a_quarter_past_the_tail_once_the_ail_spans_three_quarters() {
        let g = geo(32, 0);
        let q = g.log_bb / 4;
        // Spanning exactly three quarters leaves a quarter free: no background push.
        assert_eq!(xfs_ail_calc_push_target(&g, Lsn::new(1, 10), Lsn::new(1, 10 + 3 * q)), None);
        let t = xfs_ail_calc_push_target(&g, Lsn::new(1, 10), Lsn::new(1, 11 + 3 * q));
        assert_eq!(t, Some(Lsn::new(1, 10 + q)));
        // Across the wrap: the span counts both ends, and the target wraps into the next cycle.
        let min = Lsn::new(4, g.log_bb - 100);
        let t = xfs_ail_calc_push_target(&g, min, Lsn::new(5, 3 * q));
        assert_eq!(t, Some(Lsn::new(5, q - 100)));
        assert_eq!(xfs_ail_calc_push_target(&g, min, Lsn::new(5, 3 * q - 200)), None);
    }
}
