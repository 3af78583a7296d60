//! mkfs log sizing: the minimum log size from the transaction reservation table
//! (`xfs_log_calc_minimum_size`) and three `calculate_log_size` algorithms, with every clamp
//! and a list of the decisions taken. The oracle is `mkfs.xfs -N` from xfsprogs 6.1.
//!
//! Simplification: v5 (crc=1) filesystems only, internal log, no realtime section, nrext64=0,
//! no `-l size`/`-l agnum`, and the log never lands in AG 0 (mkfs refuses agcount < 2).

use serde::Serialize;

// The log format's constants, widened to the u64 arithmetic mkfs uses.
const BBSIZE: u64 = crate::units::BBSIZE as u64;
const XFS_MIN_LOG_BLOCKS: u64 = 512;
const XFS_MAX_LOG_BLOCKS: u64 = 1024 * 1024;
use crate::format::{XFS_MAX_LOG_BYTES, XFS_MIN_LOG_BYTES};
const XFS_MIN_LOG_FACTOR: u64 = 3;
const XFS_DFL_LOG_FACTOR: u64 = 5;
const XFS_AG_MIN_BYTES: u64 = 1 << 24;
const XFS_AG_MAX_BYTES: u64 = (1 << 40) - 1;
const XLOG_MAX_RECORD_BSIZE: u64 = crate::format::XLOG_MAX_RECORD_BSIZE as u64;
const XLOG_HEADER_CYCLE_SIZE: u64 = crate::format::XLOG_HEADER_CYCLE_SIZE as u64;
/// `-l su` larger than this is refused (and an inherited data stripe unit is cut to 32 KiB).
const XLOG_MAX_LSU: u64 = 256 * 1024;

/// Which `calculate_log_size` to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SizingAlgo {
    /// xfsprogs ≤ 5.14: tiny / small / 2048:1 tiers.
    Pre2022,
    /// The 2022 patch as posted: 2048:1, 64 MiB floor, filesystems under 512 MB get the minimum.
    PostedPatch,
    /// What shipped in xfsprogs 5.15 and is in 6.1: the same with a 300 MB threshold.
    Xfsprogs61,
}

impl SizingAlgo {
    pub const ALL: [SizingAlgo; 3] = [SizingAlgo::Pre2022, SizingAlgo::PostedPatch, SizingAlgo::Xfsprogs61];
    pub fn as_str(self) -> &'static str {
        match self {
            SizingAlgo::Pre2022 => "pre-2022",
            SizingAlgo::PostedPatch => "seed-patch",
            SizingAlgo::Xfsprogs61 => "xfsprogs-6.1",
        }
    }
    pub fn parse(s: &str) -> Result<Vec<SizingAlgo>, String> {
        match s {
            "all" => Ok(Self::ALL.to_vec()),
            _ => Self::ALL.iter().copied().find(|a| a.as_str() == s).map(|a| vec![a]).ok_or_else(|| {
                format!("--algo: '{s}' is not an algorithm (allowed: pre-2022, seed-patch, xfsprogs-6.1, all)")
            }),
        }
    }
}

/// What `mkfs.xfs` is told about the data device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SizingInput {
    pub fs_bytes: u64,
    pub block_size: u64,
    pub sector_size: u64,
    pub inode_size: u64,
    pub agcount: Option<u64>,
    /// Data stripe unit in bytes and width in units (`-d su=,sw=`).
    pub dsu: u64,
    pub dsw: u64,
    /// Log stripe unit in bytes (`-l su=`).
    pub lsu: u64,
    pub reflink: bool,
    pub rmapbt: bool,
    pub finobt: bool,
}

impl Default for SizingInput {
    fn default() -> Self {
        SizingInput {
            fs_bytes: 220 << 30,
            block_size: 4096,
            sector_size: 512,
            inode_size: 512,
            agcount: None,
            dsu: 0,
            dsw: 0,
            lsu: 0,
            reflink: true,
            rmapbt: false,
            finobt: true,
        }
    }
}

/// The AG and stripe geometry mkfs settles on before it sizes the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgGeometry {
    pub dblocks: u64,
    pub agcount: u64,
    pub agblocks: u64,
    pub agblklog: u32,
    pub dsunit: u64,
    pub dswidth: u64,
    /// Log stripe unit in fs blocks (0: none).
    pub lsunit: u64,
    /// `sb_logsunit` in bytes (1 when there is no log stripe unit on a v2 log).
    pub logsunit: u64,
}

/// The largest reservation and how it turns into the minimum log size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MinLog {
    pub max_trans: &'static str,
    pub logres: u64,
    pub logcount: u64,
    pub unit_res: u64,
    pub min_log_blocks: u64,
}

/// Values the kernel derives from the log size (shown beside the sizing).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Derived {
    pub log_bytes: u64,
    pub cil_space_limit_bytes: u64,
    pub cil_blocking_limit_bytes: u64,
    pub tail_push_threshold_blocks: u64,
    pub logbsize: u64,
    pub logbufs: u64,
    pub iclog_header_bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SizingReport {
    pub algo: &'static str,
    pub log_blocks: u64,
    pub min_log_blocks: u64,
    pub steps: Vec<String>,
    pub geometry: AgGeometry,
    pub min_log: MinLog,
    pub derived: Derived,
}

fn log2_roundup(v: u64) -> u32 {
    if v <= 1 {
        0
    } else {
        64 - (v - 1).leading_zeros()
    }
}

fn div_up(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

fn round_up(a: u64, b: u64) -> u64 {
    div_up(a, b) * b
}

/// `xfs_btree_compute_maxlevels`: height of a tree of `records` at minimum fill.
fn btree_maxlevels(mnr: [u64; 2], records: u64) -> u64 {
    let mut blocks = div_up(records, mnr[0]);
    let mut level = 1;
    while blocks > 1 {
        blocks = div_up(blocks, mnr[1]);
        level += 1;
    }
    level
}

/// Per-geometry btree heights and sizes the reservation table needs.
struct Mount {
    bs: u64,
    sect: u64,
    isize: u64,
    reflink: bool,
    rmapbt: bool,
    finobt: bool,
    alloc_maxlevels: u64,
    alloc_contig: u64,
    inobt_maxlevels: u64,
    rmap_maxlevels: u64,
    refc_maxlevels: u64,
    bm_maxlevels: [u64; 2],
    dir_fsbcount: u64,
    inode_cluster_size: u64,
    ialloc_blks: u64,
    logsunit: u64,
}

const SBLOCK_CRC_LEN: u64 = 56;
const LBLOCK_CRC_LEN: u64 = 72;
const DATA_FORK: usize = 0;
const ATTR_FORK: usize = 1;
const XFS_DA_NODE_MAXDEPTH: u64 = 5;

impl Mount {
    fn new(inp: &SizingInput, geo: &AgGeometry) -> Mount {
        let bs = inp.block_size;
        let sblen = bs - SBLOCK_CRC_LEN;
        let alloc_mxr = [sblen / 8, sblen / 12];
        let alloc_mnr = [alloc_mxr[0] / 2, alloc_mxr[1] / 2];
        let inobt_mnr = [sblen / 16 / 2, sblen / 8 / 2];
        let refc_mnr = [sblen / 12 / 2, sblen / 8 / 2];
        let rmap_mnr = [sblen / 24 / 2, sblen / 44 / 2];
        let inopblog = (bs / inp.inode_size).trailing_zeros();
        let inodes = (1u64 << (geo.agblklog + inopblog)) >> 6;
        let bmbt_mnr = (bs - LBLOCK_CRC_LEN) / 16 / 2;
        // xfs_bmap_compute_maxlevels: the root lives in the inode (3 data / 2 attr pointers).
        let bm = |maxleafents: u64, rootrecs: u64| {
            let mut blocks = div_up(maxleafents, bmbt_mnr);
            let mut level = 1;
            while blocks > 1 {
                blocks = if blocks <= rootrecs { 1 } else { div_up(blocks, bmbt_mnr) };
                level += 1;
            }
            level
        };
        // v5 inode clusters scale with the inode size; at least one block.
        let cluster_raw = 8192 * inp.inode_size / 256;
        let inode_cluster_size = (cluster_raw / bs).max(1) * bs;
        Mount {
            bs,
            sect: inp.sector_size,
            isize: inp.inode_size,
            reflink: inp.reflink,
            rmapbt: inp.rmapbt,
            finobt: inp.finobt,
            alloc_maxlevels: btree_maxlevels(alloc_mnr, geo.agblocks.div_ceil(2)),
            alloc_contig: alloc_mxr[0] - alloc_mnr[0],
            inobt_maxlevels: btree_maxlevels(inobt_mnr, inodes),
            rmap_maxlevels: btree_maxlevels(rmap_mnr, geo.agblocks),
            refc_maxlevels: btree_maxlevels(refc_mnr, geo.agblocks),
            bm_maxlevels: [bm((1 << 31) - 1, 3), bm((1 << 15) - 1, 2)],
            dir_fsbcount: bs.max(4096) / bs,
            inode_cluster_size,
            ialloc_blks: (64u64.max(bs / inp.inode_size) * inp.inode_size / bs).max(1),
            logsunit: geo.logsunit,
        }
    }
}

/// One row of `struct xfs_trans_resv`.
#[derive(Clone, Copy, Debug)]
struct Res {
    name: &'static str,
    logres: u64,
    logcount: u64,
}

fn buf_res(n: u64, size: u64) -> u64 {
    // round_up(op header 12 + xfs_buf_log_format 88, 128)
    n * (size + 128)
}

/// The reservation table (`xfs_trans_resv_calc`) as `xfs_log_calc_trans_resv_for_minlogblocks`
/// sees it: rmap height 9 with reflink, early-reflink log counts, refcount splits folded back.
fn minlog_table(m: &Mount) -> Vec<Res> {
    let bs = m.bs;
    let sect = m.sect;
    let rmap_levels = if m.rmapbt && m.reflink { 9 } else { m.rmap_maxlevels };
    let allocfree = |k: u64| {
        let mut b = k * 2 * (2 * m.alloc_maxlevels - 1);
        if m.rmapbt {
            b += k * (2 * rmap_levels - 1);
        }
        b
    };
    let refc_blocks = |k: u64| k * (2 * m.refc_maxlevels - 1);
    let inode_res = |n: u64| n * (4 * 12 + 56 + m.isize + 2 * LBLOCK_CRC_LEN);
    let inobt_res = buf_res(m.inobt_maxlevels, bs) + buf_res(allocfree(1), bs);
    let finobt_res = if m.finobt { inobt_res } else { 0 };
    let dquot = 6 * (24 + 104);
    let daenter_1b = m.dir_fsbcount;
    let nextentadd = |b: u64, w: usize| div_up(b, m.alloc_contig) * (m.bm_maxlevels[w] - 1);
    let daenter_dbs = |w: usize| XFS_DA_NODE_MAXDEPTH + if w == DATA_FORK { 2 } else { 0 };
    let daenter_1b_w = |w: usize| if w == DATA_FORK { daenter_1b } else { 1 };
    let daenter_blocks = |w: usize| daenter_1b_w(w) * daenter_dbs(w);
    let daenter_bmap1b = |w: usize| nextentadd(daenter_1b_w(w), w);
    let daenter_bmaps = |w: usize| daenter_dbs(w) * daenter_bmap1b(w);
    let dirop_log_count = daenter_blocks(DATA_FORK) + daenter_bmaps(DATA_FORK) + 1;
    let iunlink_remove = buf_res(1, sect) + 2 * m.inode_cluster_size;
    let iunlink_add = buf_res(1, sect) + m.inode_cluster_size;
    let bm_data = m.bm_maxlevels[DATA_FORK];
    let bm_attr = m.bm_maxlevels[ATTR_FORK];

    let refc_adj = |k: u64| if m.reflink { buf_res(refc_blocks(k), bs) } else { 0 };
    let write = {
        let t1 = inode_res(1) + buf_res(bm_data, bs) + buf_res(3, sect) + buf_res(allocfree(2), bs) + refc_adj(2);
        let t3 = buf_res(5, sect) + buf_res(allocfree(2), bs) + refc_adj(2);
        dquot + t1.max(t3)
    };
    let itruncate = {
        let t1 = inode_res(1) + buf_res(bm_data + 1, bs);
        let t2 = buf_res(9, sect) + buf_res(allocfree(4), bs) + refc_adj(4);
        dquot + t1.max(t2)
    };
    let rename =
        dquot + (inode_res(5) + buf_res(2 * dirop_log_count, bs)).max(buf_res(7, sect) + buf_res(allocfree(3), bs));
    let link = dquot
        + iunlink_remove
        + (inode_res(2) + buf_res(dirop_log_count, bs)).max(buf_res(3, sect) + buf_res(allocfree(1), bs));
    let remove = dquot
        + iunlink_add
        + (inode_res(2) + buf_res(dirop_log_count, bs)).max(buf_res(4, sect) + buf_res(allocfree(2), bs));
    let create_modify = inode_res(2) + buf_res(1, sect) + bs + buf_res(dirop_log_count, bs) + finobt_res;
    // v5 inode chunks are initialised with ordered buffers: only the allocation btrees.
    let icreate_alloc = buf_res(2, sect) + sect + buf_res(allocfree(1), bs) + inobt_res + finobt_res;
    let icreate = dquot + icreate_alloc.max(create_modify);
    let create_tmpfile = dquot + icreate_alloc + iunlink_add;
    let symlink = icreate + buf_res(1, 1024);
    let ifree = dquot
        + inode_res(1)
        + buf_res(3, sect)
        + iunlink_remove
        + buf_res(allocfree(1), bs)
        + buf_res(m.ialloc_blks, 0)
        + inobt_res
        + finobt_res;
    let ichange = dquot + inode_res(1) + buf_res(1, sect);
    let growdata = buf_res(3, sect) + buf_res(allocfree(1), bs);
    let addafork = dquot
        + inode_res(1)
        + buf_res(2, sect)
        + buf_res(1, m.dir_fsbcount * bs)
        + buf_res(daenter_bmap1b(DATA_FORK) + 1, bs)
        + buf_res(allocfree(1), bs);
    let writeid = inode_res(1);
    let attrinval = (inode_res(1) + buf_res(bm_attr, bs)).max(buf_res(9, sect) + buf_res(allocfree(4), bs));
    let attrsetm = dquot + inode_res(1) + buf_res(1, sect) + buf_res(XFS_DA_NODE_MAXDEPTH, bs);
    let attrsetrt = buf_res(1, sect) + buf_res(bm_attr, bs);
    let attrrm = dquot
        + (inode_res(1) + buf_res(XFS_DA_NODE_MAXDEPTH, bs) + bs * bm_attr + buf_res(bm_data, 0))
            .max(buf_res(5, sect) + buf_res(allocfree(2), bs));
    let clearagi = buf_res(1, sect);
    let growrtalloc = buf_res(2, sect) + buf_res(bm_data, bs) + inode_res(1) + buf_res(allocfree(1), bs);
    let growrtzero = buf_res(1, bs);
    let growrtfree = buf_res(1, sect) + inode_res(2) + buf_res(1, bs) + buf_res(1, 0);
    let qm_setqlim = buf_res(1, 104);
    let qm_dqalloc = write + buf_res(1, bs - 1);
    let sb = buf_res(1, sect);
    let fsyncts = inode_res(1);

    // Early reflink overestimated log counts; early non-reflink rmap ignored them.
    let (wcount, tcount) = if m.reflink { (8, 8) } else { (2, 2) };
    let r = |name, logres, logcount| Res { name, logres, logcount };
    vec![
        r("tr_write", write, wcount),
        r("tr_itruncate", itruncate, tcount),
        r("tr_rename", rename, 2),
        r("tr_link", link, 2),
        r("tr_remove", remove, 2),
        r("tr_symlink", symlink, 3),
        r("tr_create", icreate, 2),
        r("tr_create_tmpfile", create_tmpfile, 2),
        r("tr_mkdir", icreate, 3),
        r("tr_ifree", ifree, 2),
        r("tr_ichange", ichange, 0),
        r("tr_growdata", growdata, 2),
        r("tr_addafork", addafork, 2),
        r("tr_writeid", writeid, 0),
        r("tr_attrinval", attrinval, 1),
        r("tr_attrsetm", attrsetm, 3),
        r("tr_attrsetrt", attrsetrt, 0),
        r("tr_attrrm", attrrm, 3),
        r("tr_clearagi", clearagi, 0),
        r("tr_growrtalloc", growrtalloc, 2),
        r("tr_growrtzero", growrtzero, 0),
        r("tr_growrtfree", growrtfree, 0),
        r("tr_qm_setqlim", qm_setqlim, 1),
        r("tr_qm_dqalloc", qm_dqalloc, wcount),
        r("tr_sb", sb, 1),
        r("tr_fsyncts", fsyncts, 0),
    ]
}

/// `xfs_log_calc_max_attrsetm_res`: setting the largest local attribute value.
fn attrset_bound(m: &Mount, table: &[Res]) -> u64 {
    let get = |n: &str| table.iter().find(|r| r.name == n).map_or(0, |r| r.logres);
    let bs = m.bs;
    let size = (bs / 2 + bs / 4) - 256 - 1;
    let bm_attr = m.bm_maxlevels[ATTR_FORK];
    let daenter_space = XFS_DA_NODE_MAXDEPTH + XFS_DA_NODE_MAXDEPTH * div_up(1, m.alloc_contig) * (bm_attr - 1);
    let nblks = daenter_space + div_up(size, bs) + div_up(size, m.alloc_contig) * (bm_attr - 1);
    get("tr_attrsetm") + get("tr_attrsetrt") * nblks
}

/// mkfs's `xfs_log_calc_unit_res`: worst-case headers, as if iclogs were 256 KiB.
fn mkfs_unit_res(m: &Mount, logres: u64) -> u64 {
    let hsize = XLOG_MAX_RECORD_BSIZE / XLOG_HEADER_CYCLE_SIZE * BBSIZE;
    let space = XLOG_MAX_RECORD_BSIZE - hsize;
    let mut unit = logres + 12 + 16 + 12;
    let mut n = div_up(unit, space);
    unit += 12 * n;
    while n == 0 || div_up(unit, space) > n {
        unit += 12;
        n += 1;
    }
    unit += hsize * n + hsize;
    unit += 2 * if m.logsunit > 1 { m.logsunit } else { BBSIZE };
    unit
}

/// `xfs_log_calc_minimum_size`.
fn minimum_log(m: &Mount) -> MinLog {
    let table = minlog_table(m);
    let mut best = table[0];
    let mut space = 0;
    for r in &table {
        let v = if r.logcount > 1 { r.logres * r.logcount } else { r.logres };
        if v > space {
            space = v;
            best = *r;
        }
    }
    let attr = attrset_bound(m, &table);
    if attr > space {
        best = Res { name: "attrset bound", logres: attr, logcount: 3 };
    }
    let unit = mkfs_unit_res(m, best.logres);
    let max_logres = if best.logcount > 1 { unit * best.logcount } else { unit };
    let lsunit_bb = if m.logsunit > 1 { m.logsunit / BBSIZE } else { 0 };
    let bb = div_up(max_logres, BBSIZE);
    // Without a stripe unit this adds 2 * BBSIZE basic blocks (512 KiB): frozen since 2013.
    let min_bb = if lsunit_bb > 0 { round_up(bb, lsunit_bb) + 2 * lsunit_bb } else { bb + 2 * BBSIZE };
    let min_bb = min_bb * XFS_MIN_LOG_FACTOR;
    MinLog {
        max_trans: best.name,
        logres: best.logres,
        logcount: best.logcount,
        unit_res: unit,
        min_log_blocks: div_up(min_bb * BBSIZE, m.bs),
    }
}

fn validate_input(inp: &SizingInput) -> Result<(), String> {
    let pow2 = |v: u64| v.is_power_of_two();
    if !pow2(inp.block_size) || !(1024..=65536).contains(&inp.block_size) {
        return Err(format!("block_size: {} is not a power of two from 1024 to 65536", inp.block_size));
    }
    if !pow2(inp.sector_size) || !(512..=32768).contains(&inp.sector_size) {
        return Err(format!("sector_size: {} is not a power of two from 512 to 32768", inp.sector_size));
    }
    if inp.sector_size > inp.block_size {
        return Err(format!("block size {} cannot be smaller than sector size {}", inp.block_size, inp.sector_size));
    }
    if !pow2(inp.inode_size) || !(512..=2048).contains(&inp.inode_size) || inp.inode_size > inp.block_size / 2 {
        return Err(format!(
            "inode_size: {} must be a power of two from 512 to 2048 and at most half the block size",
            inp.inode_size
        ));
    }
    if !inp.dsu.is_multiple_of(inp.block_size) || (inp.dsu == 0) != (inp.dsw == 0) {
        return Err(format!(
            "dsu/dsw: {} bytes x {} must both be set, with dsu a multiple of the block size {}",
            inp.dsu, inp.dsw, inp.block_size
        ));
    }
    if inp.lsu > XLOG_MAX_LSU {
        let v = if inp.lsu.is_multiple_of(1024) { format!("{}k", inp.lsu / 1024) } else { inp.lsu.to_string() };
        return Err(format!("Invalid value {v} for -l su option. Value is too large."));
    }
    if !inp.lsu.is_multiple_of(inp.block_size) {
        return Err(format!("lsu: {} must be a multiple of the block size {}", inp.lsu, inp.block_size));
    }
    Ok(())
}

/// `calc_default_ag_geometry` + `align_ag_geometry`, and the refusals of `validate_supported`.
pub fn ag_geometry(inp: &SizingInput, steps: &mut Vec<String>) -> Result<AgGeometry, String> {
    validate_input(inp)?;
    let bs = inp.block_size;
    let blog = bs.trailing_zeros();
    let mut dblocks = inp.fs_bytes / bs;
    if inp.fs_bytes < 300 << 20 {
        return Err("Filesystem must be larger than 300MB.".into());
    }
    let ag_min = XFS_AG_MIN_BYTES >> blog;
    let ag_max = XFS_AG_MAX_BYTES >> blog;
    let dsunit = inp.dsu / bs;
    let dswidth = dsunit * inp.dsw;
    let (mut agsize, mut agcount);
    if let Some(n) = inp.agcount {
        if n == 0 {
            return Err("agcount: 0 is not allowed (at least 2)".into());
        }
        agsize = dblocks / n + u64::from(!dblocks.is_multiple_of(n));
        agcount = n;
        steps.push(format!("agcount {n} given: agsize {agsize} blocks"));
    } else {
        let tb = |n: u64| n << (40 - blog);
        let gb = |n: u64| n << (30 - blog);
        let mb = |n: u64| n << (20 - blog);
        let multidisk = dsunit != 0;
        let blocks = if dblocks >= tb(32) || (!multidisk && dblocks >= tb(4)) {
            ag_max
        } else {
            let shift: u32 = if !multidisk && dblocks >= mb(128) {
                2
            } else {
                let steps_down =
                    [dblocks <= gb(512), dblocks <= gb(8), dblocks < mb(128), dblocks < mb(64), dblocks < mb(32)];
                let s = 5 - steps_down.iter().filter(|c| **c).count() as i32;
                s.max(0) as u32
            };
            let mut b = dblocks >> shift;
            if dblocks & ((1u64 << shift) - 1) != 0 && b < ag_max {
                b += 1;
            }
            b
        };
        agsize = blocks;
        agcount = dblocks / agsize + u64::from(!dblocks.is_multiple_of(agsize));
        steps.push(format!(
            "default AG geometry ({}): {agcount} AGs of {agsize} blocks",
            if multidisk { "striped device" } else { "single disk" }
        ));
    }
    if dsunit != 0 {
        if agsize % dsunit != 0 {
            let mut t = round_up(agsize, dsunit);
            if t > ag_max {
                t = agsize / dsunit * dsunit;
            }
            agsize = t;
            if inp.agcount.is_none() {
                agcount = dblocks / agsize + u64::from(!dblocks.is_multiple_of(agsize));
            }
            steps.push(format!("AG size aligned to the stripe unit ({dsunit} blocks): {agsize}"));
        }
        if dswidth != 0 && agsize % dswidth == 0 && agcount > 1 {
            let mut t = agsize - dsunit;
            if t < ag_min {
                t = agsize + dsunit;
            }
            if inp.agcount.is_none() {
                agsize = t;
                agcount = dblocks / agsize + u64::from(!dblocks.is_multiple_of(agsize));
                steps.push(format!(
                    "AG size was a multiple of the stripe width: one stripe unit off, {agcount} AGs of {agsize} blocks"
                ));
            }
        }
    }
    if !dblocks.is_multiple_of(agsize) && dblocks % agsize < ag_min {
        dblocks = (agcount - 1) * agsize;
        agcount -= 1;
        steps.push(format!("last AG under {ag_min} blocks dropped: {agcount} AGs, {dblocks} data blocks"));
    }
    if agsize < ag_min {
        return Err(format!("agsize ({agsize} blocks) too small, need at least {ag_min} blocks"));
    }
    if agsize > ag_max {
        return Err(format!("agsize ({agsize} blocks) too big, maximum is {ag_max} blocks"));
    }
    if agcount < 2 {
        return Err("Filesystem must have at least 2 superblocks for redundancy!".into());
    }
    // The log stripe unit: -l su, else one block on 4K sectors, else the data stripe unit.
    // (mkfs 6.1 measured: 4K sectors win over the data stripe; the 6.19 source tries dsunit first.)
    let mut lsunit = if inp.lsu > 0 {
        inp.lsu / bs
    } else if inp.sector_size > 512 {
        1
    } else {
        dsunit
    };
    if lsunit * bs > XLOG_MAX_LSU {
        lsunit = (32 * 1024 / bs).max(1);
        steps.push(format!(
            "log stripe unit ({} bytes) is too large (maximum is 256KiB): adjusted to 32KiB",
            dsunit * bs
        ));
    }
    Ok(AgGeometry {
        dblocks,
        agcount,
        agblocks: agsize,
        agblklog: log2_roundup(agsize),
        dsunit,
        dswidth,
        lsunit,
        logsunit: if lsunit > 0 { lsunit * bs } else { 1 },
    })
}

/// First free block of an AG after the headers and btree roots (`xfs_prealloc_blocks`).
fn prealloc_blocks(inp: &SizingInput) -> u64 {
    let agfl_block = 3 * inp.sector_size / inp.block_size;
    let mut next = agfl_block + 4; // bno, cnt, inobt, then the next free block
    if inp.finobt {
        next += 1;
    }
    if inp.rmapbt {
        next += 1;
    }
    if inp.reflink {
        next += 1;
    }
    next
}

/// `xfs_alloc_ag_max_usable`.
fn ag_max_usable(inp: &SizingInput, agblocks: u64) -> u64 {
    let headers = div_up(4 * inp.sector_size, inp.block_size);
    agblocks - (headers + 4 + 3 + u64::from(inp.finobt) + u64::from(inp.rmapbt) + u64::from(inp.reflink))
}

/// Size the internal log with one algorithm.
pub fn size_log(inp: &SizingInput, algo: SizingAlgo) -> Result<SizingReport, String> {
    let mut steps = Vec::new();
    let geo = ag_geometry(inp, &mut steps)?;
    let m = Mount::new(inp, &geo);
    let min = minimum_log(&m);
    let bs = inp.block_size;
    let blog = bs.trailing_zeros();
    let mb = |n: u64| n << (20 - blog);
    let gb = |n: u64| n << (30 - blog);
    steps.push(format!(
        "largest reservation {} ({} bytes x {}), unit {} bytes: minimum log {} blocks",
        min.max_trans, min.logres, min.logcount, min.unit_res, min.min_log_blocks
    ));
    let mut min_logblocks = min.min_log_blocks.max(XFS_MIN_LOG_BLOCKS);
    if min_logblocks > min.min_log_blocks {
        steps.push(format!("raised to XFS_MIN_LOG_BLOCKS: {min_logblocks}"));
    }
    if geo.dblocks >= gb(1) {
        let floor = XFS_MIN_LOG_BYTES >> blog;
        if floor > min_logblocks {
            min_logblocks = floor;
            steps.push(format!("filesystem ≥ 1 GiB: minimum raised to 10 MiB ({floor} blocks)"));
        }
    }
    let max_logblocks = ag_max_usable(inp, geo.agblocks) - 1;
    if max_logblocks < min_logblocks {
        return Err(format!(
            "max log size {max_logblocks} smaller than min log size {min_logblocks}, filesystem is too small"
        ));
    }
    let ratio = (geo.dblocks * bs / 2048) >> blog;
    let mut logblocks = match algo {
        SizingAlgo::Pre2022 => {
            if geo.dblocks < gb(1) {
                steps.push("under 1 GiB: the minimum".into());
                min_logblocks
            } else if geo.dblocks < gb(16) {
                let v = (XFS_MIN_LOG_BYTES >> blog).min(min_logblocks * XFS_DFL_LOG_FACTOR);
                steps.push(format!("1-16 GiB: min(10 MiB, 5 x minimum) = {v}"));
                v
            } else {
                steps.push(format!("16 GiB or more: 2048:1 ratio = {ratio}"));
                ratio
            }
        }
        SizingAlgo::PostedPatch | SizingAlgo::Xfsprogs61 => {
            let (tiny, label) = if algo == SizingAlgo::PostedPatch { (mb(512), "512 MB") } else { (mb(300), "300 MB") };
            steps.push(format!("2048:1 ratio = {ratio}"));
            let mut v = ratio.max(mb(64));
            if v > ratio {
                steps.push(format!("64 MiB floor: {v}"));
            }
            if geo.dblocks < tiny {
                v = min_logblocks;
                steps.push(format!("under {label}: the minimum, {v}"));
            }
            v
        }
    };
    if logblocks < min_logblocks {
        logblocks = min_logblocks;
        steps.push(format!("raised to the minimum: {logblocks}"));
    }
    if logblocks > max_logblocks {
        logblocks = max_logblocks;
        steps.push(format!("clamped to the AG's usable space - 1: {logblocks}"));
    }
    if logblocks > XFS_MAX_LOG_BLOCKS {
        logblocks = XFS_MAX_LOG_BLOCKS;
        steps.push(format!("clamped to XFS_MAX_LOG_BLOCKS: {logblocks}"));
    }
    if logblocks << blog > XFS_MAX_LOG_BYTES {
        logblocks = XFS_MAX_LOG_BYTES >> blog;
        steps.push(format!("clamped to XFS_MAX_LOG_BYTES (2 GiB - 10 MiB): {logblocks}"));
    }
    if algo == SizingAlgo::Xfsprogs61 && logblocks < mb(64) {
        return Err("Log size must be at least 64MB.".into());
    }
    // Stripe alignment of the internal log (align_internal_log).
    let sunit = geo.lsunit;
    if sunit > 1 {
        let agbno = prealloc_blocks(inp);
        let logagno = geo.agcount / 2;
        let fsbno = (logagno << geo.agblklog) + agbno;
        let start = round_up(fsbno, sunit);
        let start_agbno = start - (logagno << geo.agblklog);
        let mut t = round_up(logblocks, sunit);
        if t > XFS_MAX_LOG_BLOCKS || t << blog > XFS_MAX_LOG_BYTES || t > max_logblocks {
            t = logblocks / sunit * sunit;
        }
        if t != logblocks {
            steps.push(format!("rounded to the log stripe unit ({sunit} blocks): {t}"));
        }
        logblocks = t;
        if start_agbno + logblocks > geo.agblocks {
            logblocks -= sunit;
            steps.push(format!("log end ran past the AG: one stripe unit off, {logblocks}"));
        }
        if start_agbno + logblocks > geo.agblocks {
            return Err("Due to stripe alignment, the internal log start and end are not in the same AG".into());
        }
    }
    if logblocks > geo.agblocks - prealloc_blocks(inp) {
        return Err(format!("internal log size {logblocks} too large, must fit in allocation group"));
    }
    let log_bytes = logblocks << blog;
    let logbsize = if geo.lsunit * bs > 32 * 1024 { geo.lsunit * bs } else { 32 * 1024 };
    let derived = Derived {
        log_bytes,
        cil_space_limit_bytes: (log_bytes / 8).min(32 << 20),
        cil_blocking_limit_bytes: 2 * (log_bytes / 8).min(32 << 20),
        tail_push_threshold_blocks: (log_bytes / BBSIZE / 4).max(256),
        logbsize,
        logbufs: 8,
        iclog_header_bytes: div_up(logbsize, XLOG_HEADER_CYCLE_SIZE) * BBSIZE,
    };
    Ok(SizingReport {
        algo: algo.as_str(),
        log_blocks: logblocks,
        // What mkfs reports as "minimum size is N blocks": the raw minimum, at least 512 blocks.
        min_log_blocks: min.min_log_blocks.max(XFS_MIN_LOG_BLOCKS),
        steps,
        geometry: geo,
        min_log: min,
        derived,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sz(fs: u64) -> SizingInput {
        SizingInput { fs_bytes: fs, ..SizingInput::default() }
    }

    #[test]
    fn facts_sheet_rows() {
        // (fs size, raw minimum, 6.1 log blocks) from the facts sheet, measured with mkfs 6.1.
        for (fs, min, new) in [
            (300u64 << 20, 1368, 16384),
            (1 << 30, 1566, 16384),
            (10 << 30, 1986, 16384),
            (220 << 30, 2580, 28160),
            (1 << 40, 2580, 131072),
        ] {
            let r = size_log(&sz(fs), SizingAlgo::Xfsprogs61).unwrap();
            assert_eq!(r.min_log.min_log_blocks, min, "min at {fs}");
            assert_eq!(r.log_blocks, new, "log at {fs}");
        }
        let old = size_log(&sz(100 << 30), SizingAlgo::Pre2022).unwrap();
        assert_eq!(old.log_blocks, 12800);
    }

    #[test]
    fn posted_patch_threshold_differs_from_shipped() {
        let r = size_log(&sz(400 << 20), SizingAlgo::PostedPatch).unwrap();
        let s = size_log(&sz(400 << 20), SizingAlgo::Xfsprogs61).unwrap();
        assert!(r.log_blocks < s.log_blocks, "{} vs {}", r.log_blocks, s.log_blocks);
        assert_eq!(s.log_blocks, 16384);
    }

    #[test]
    fn refusals_name_the_problem() {
        assert!(size_log(&sz(299 << 20), SizingAlgo::Xfsprogs61).unwrap_err().contains("300MB"));
        let one = SizingInput { agcount: Some(1), ..sz(1 << 30) };
        assert!(size_log(&one, SizingAlgo::Xfsprogs61).unwrap_err().contains("2 superblocks"));
    }
}
