//! Log geometry derived from a scenario (`xlog_alloc_log` values), with the checks that
//! span several fields, and the reservation arithmetic that depends on it.

use crate::format::{
    BLF_HDR, BUF_CHUNKS, FORK_MAX, INODE_CORE, INODE_FMT, OP_HDR, TRANS_HDR, XFS_BLF_CHUNK, XFS_MAX_LOG_BYTES,
    XLOG_HEADER_CYCLE_SIZE,
};
use crate::layout;
use crate::scenario::{Directory, Scenario, UnitResRoundoff, WorkloadKind, LOG_BYTES_MIN};
use crate::units::{format_size, BBSIZE};
use serde::Serialize;

/// Log geometry of a validated scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Geometry {
    /// `l_logBBsize`
    pub log_bb: u32,
    /// `l_logsize`
    pub log_bytes: u32,
    /// `l_iclog_size`
    pub iclog_size: u32,
    pub iclog_count: u32,
    /// `l_iclog_heads`, `l_iclog_hsize`
    pub iclog_heads: u32,
    pub iclog_hsize: u32,
    /// `l_iclog_roundoff`
    pub roundoff: u32,
    /// `ic_size`: data capacity of one iclog.
    pub ic_capacity: u32,
}

impl Scenario {
    /// This scenario with `key=value` settings applied in order, then checked as a whole: a
    /// sweep's cell, compare mode's second run, a lesson's variant run.
    pub fn with_settings<'a>(
        &self,
        settings: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Scenario, String> {
        let mut s = self.clone();
        for (k, v) in settings {
            s.set(k, v)?;
        }
        s.validate()?;
        Ok(s)
    }

    /// Checks every field, then the fields against each other, and derives the log geometry;
    /// the error names field, value and allowed range.
    pub fn validate(&self) -> Result<Geometry, String> {
        self.check_fields()?;
        Geometry::new(self)
    }
}

impl Geometry {
    /// The geometry of a scenario whose fields passed `Scenario::check_fields`.
    fn new(s: &Scenario) -> Result<Geometry, String> {
        let (ic, lsu, log) = (s.iclog_size.0, s.lsu.0, s.log_size.0);
        if lsu > ic {
            return Err(format!(
                "iclog_size: {} is smaller than lsu {} (logbuf size must be greater than or equal to log stripe size)",
                format_size(ic),
                format_size(lsu)
            ));
        }
        if !(LOG_BYTES_MIN..=XFS_MAX_LOG_BYTES).contains(&log) {
            return Err(format!(
                "log_size: {log} is out of range (allowed: {LOG_BYTES_MIN} to {XFS_MAX_LOG_BYTES}) bytes (2MiB to 2GiB-10MiB)"
            ));
        }
        if !s.external_log && log * 4 > s.fs_size.0 {
            return Err(format!(
                "log_size: {} does not fit an internal log in fs_size {} (at most a quarter of it)",
                format_size(log),
                format_size(s.fs_size.0)
            ));
        }
        let data_end = layout::log_start_sector(s) + log / BBSIZE as u64 + layout::data_area_bb(s);
        if !s.external_log && data_end > s.fs_size.0 / BBSIZE as u64 {
            return Err(format!(
                "append_size: {} x {} writers' files do not fit past the log in fs_size {}",
                format_size(s.append_size.0),
                s.writers,
                format_size(s.fs_size.0)
            ));
        }
        let per_writer = layout::items_per_writer(s);
        if per_writer < s.tx_items * 4 {
            return Err(format!(
                "fs_size: {} holds {per_writer} metadata blocks per writer, fewer than the {} that {} writers x tx_items {} need",
                format_size(s.fs_size.0),
                s.tx_items * 4,
                s.writers,
                s.tx_items
            ));
        }
        let iclog_size = ic as u32;
        let heads = iclog_size.div_ceil(XLOG_HEADER_CYCLE_SIZE);
        let hsize = heads * BBSIZE;
        let roundoff = if lsu > BBSIZE as u64 { lsu as u32 } else { BBSIZE };
        let geo = Geometry {
            log_bb: (log / BBSIZE as u64) as u32,
            log_bytes: log as u32,
            iclog_size,
            iclog_count: s.iclog_count,
            iclog_heads: heads,
            iclog_hsize: hsize,
            roundoff,
            ic_capacity: iclog_size - hsize,
        };
        // The log must hold at least two maximal transactions (XFS_MIN_LOG_FACTOR).
        let unit = xlog_calc_unit_res(&geo, s.tx_logres, s.unit_res_roundoff);
        let need = unit as u64 * s.tx_logcount as u64 * 3;
        if need > log {
            return Err(format!(
                "log_size: {} is smaller than the minimum {} for tx_logres {} x tx_logcount {} (3 maximal transactions)",
                format_size(log),
                need,
                s.tx_logres,
                s.tx_logcount
            ));
        }
        // The kernel computes tr_logres so that a transaction always fits it; one that does
        // not is shut down ("Transaction log reservation overrun", xlog_cil_insert_items).
        // The workloads here are knobs, so the check is ours: the largest item the model logs
        // (a buffer run of tx_chunks chunks, or an inode with one fork full and a small other:
        // what the workloads log) times tx_items,
        // its op headers and iclog splits, plus the CIL context's reservation the first commit
        // into a context pays, must fit the ticket's unit reservation.
        let item =
            (BLF_HDR + 4 + s.tx_chunks.max(1) * XFS_BLF_CHUNK).max(INODE_FMT + INODE_CORE + FORK_MAX + 64) + 4 * OP_HDR;
        // A create in `directory=blocks` logs up to 7 whole buffers (data, leaf, a split's new
        // leaf, node, free index, inobt, AGI) and two inodes; tx_items past 4 add hot buffers.
        let creates = matches!(s.workload, WorkloadKind::FsmarkCreate | WorkloadKind::CreateRemove)
            && s.directory == Directory::Blocks;
        let worst = if creates {
            let buf = BLF_HDR + 4 + BUF_CHUNKS * XFS_BLF_CHUNK + 2 * OP_HDR;
            let inode = INODE_FMT + INODE_CORE + 88 + 3 * OP_HDR;
            (7 * buf + 2 * inode) as u64 + item as u64 * s.tx_items.saturating_sub(4) as u64
        } else {
            item as u64 * s.tx_items as u64
        };
        let splits = worst.div_ceil(geo.ic_capacity as u64);
        let charged = worst
            + splits * (geo.iclog_hsize + OP_HDR) as u64
            + xlog_calc_unit_res(&geo, 0, s.unit_res_roundoff) as u64;
        if charged > unit as u64 {
            return Err(format!(
                "tx_logres: {} is too small for tx_items {} x tx_chunks {}: a transaction may log about {worst} bytes, \
                 which with its headers needs a unit reservation of {charged} bytes, more than the {unit} this one gets \
                 (the kernel would shut down on the overrun)",
                s.tx_logres, s.tx_items, s.tx_chunks
            ));
        }
        Ok(geo)
    }
}

/// `xfs_calc_inode_res(mp, 1)`: an inode logged in a transaction, with its op headers and
/// room for two bmap btree blocks in its data fork (512-byte v5 inodes, 72-byte CRC btree
/// block headers). It is the whole of `tr_fsyncts`, the timestamp update a write makes.
pub const XFS_CALC_INODE_RES: u32 = 4 * OP_HDR + INODE_FMT + 512 + 2 * 72;

/// `xlog_calc_unit_res` (5.15): the caller's bytes plus every header and roundoff it may cost.
/// `X1` reproduces the v1 series bug that lost the factor two on the roundoff.
pub fn xlog_calc_unit_res(geo: &Geometry, unit_bytes: u32, roundoff: UnitResRoundoff) -> u32 {
    xlog_calc_unit_res_hdrs(geo, unit_bytes, roundoff).0
}

/// `xlog_calc_unit_res` with its `niclogs`: the unit reservation and the record headers it
/// holds (a ticket's `t_iclog_hdrs`).
pub fn xlog_calc_unit_res_hdrs(geo: &Geometry, unit_bytes: u32, roundoff: UnitResRoundoff) -> (u32, u32) {
    let mut unit = unit_bytes;
    unit += OP_HDR + TRANS_HDR; // transaction header
    unit += OP_HDR; // start record
    let iclog_space = geo.ic_capacity;
    let mut num_headers = unit.div_ceil(iclog_space);
    unit += OP_HDR * num_headers; // one op header per split region
    while num_headers == 0 || unit.div_ceil(iclog_space) > num_headers {
        unit += OP_HDR;
        num_headers += 1;
    }
    unit += geo.iclog_hsize * num_headers; // record headers
    unit += geo.iclog_hsize; // commit record's header; padding subsumes its op header
    unit += match roundoff {
        UnitResRoundoff::X2 => 2 * geo.roundoff,
        UnitResRoundoff::X1 => geo.roundoff,
    };
    (unit, num_headers)
}

/// A validated geometry for leaf unit tests: `iclog_kib` iclogs, log stripe unit `lsu` bytes.
#[cfg(test)]
pub(crate) fn test_geometry(iclog_kib: u64, lsu: u64) -> Geometry {
    let s = Scenario {
        iclog_size: crate::scenario::Size(iclog_kib << 10),
        lsu: crate::scenario::Size(lsu),
        tx_logres: 20_000,
        ..Scenario::default()
    };
    s.validate().expect("a valid test geometry")
}

#[cfg(test)]
#[allow(clippy::field_reassign_with_default)] // tests change one knob at a time
mod tests {
    use super::*;
    use crate::scenario::Size;

    use crate::geometry::test_geometry as geo;

    #[test]
    fn a_transaction_larger_than_its_reservation_is_refused() {
        // Found by the scenario fuzz target: 46 items of 32 chunks overran a 109048-byte
        // reservation until the reserve grant head fell behind the tail.
        let s = Scenario { tx_items: 46, tx_chunks: 32, ..Scenario::default() };
        let e = s.validate().unwrap_err();
        assert!(e.starts_with("tx_logres: 109048 is too small for tx_items 46 x tx_chunks 32"), "{e}");
        assert!(Scenario { tx_logres: 400_000, ..s }.validate().is_ok(), "a big enough reservation fits");
    }

    #[test]
    fn default_is_valid() {
        let g = Scenario::default().validate().unwrap();
        assert_eq!(g.iclog_hsize, 512);
        assert_eq!(g.ic_capacity, 32 * 1024 - 512);
    }

    #[test]
    fn header_size_per_32k() {
        for (kib, hsize) in [(32, 512), (64, 1024), (128, 2048), (256, 4096)] {
            assert_eq!(geo(kib, 0).iclog_hsize, hsize);
        }
    }

    #[test]
    fn cross_field_errors_name_both_fields() {
        let mut s = Scenario::default();
        s.lsu = Size(64 << 10);
        assert!(s.validate().unwrap_err().starts_with("iclog_size: 32KiB is smaller than lsu 64KiB"));
        let mut s = Scenario::default();
        s.fs_size = Size(128 << 20);
        assert!(s.validate().unwrap_err().contains("does not fit an internal log in fs_size 128MiB"));
        let mut s = Scenario::default();
        s.log_size = Size(4 << 20);
        s.tx_logres = 1 << 20;
        assert!(s.validate().unwrap_err().contains("smaller than the minimum"));
    }

    #[test]
    fn cil_ticket_is_2100_bytes_on_32k_iclogs() {
        // Facts sheet §3.3 worked example: 40 -> 52 -> +512 -> +512 -> +1024.
        assert_eq!(xlog_calc_unit_res(&geo(32, 0), 0, UnitResRoundoff::X2), 2100);
    }

    #[test]
    fn one_x_bug_loses_one_roundoff() {
        let g = geo(256, 256 << 10);
        let two = xlog_calc_unit_res(&g, 100_000, UnitResRoundoff::X2);
        let one = xlog_calc_unit_res(&g, 100_000, UnitResRoundoff::X1);
        assert_eq!(two - one, 256 << 10);
    }

    #[test]
    fn unit_res_counts_split_headers() {
        // tr_write 109,048 on 32 KiB iclogs: 4 headers of 512 plus 4 op headers.
        let g = geo(32, 0);
        let u = xlog_calc_unit_res(&g, 109_048, UnitResRoundoff::X2);
        assert_eq!(u, 109_048 + 40 + 4 * 12 + 4 * 512 + 512 + 1024);
    }
}
