//! The realtime allocator's bitmap and summary (source thread 004, facts sheet §4), kernels 5.0–6.6:
//! rsum[level][bitmap block] stored row-major, `xfs_rtany_summary` scanning levels upward,
//! and the per-bitmap-block minimum-level cache (a loose lower bound, tightened on read and
//! update). Summary block reads (buffer gets) are counted; the extents chosen do not depend on
//! the cache.
//!
//! Simplifications: the allocator keeps no transaction; a "read" is a summary buffer get,
//! counted when an access needs a different summary block than the one held (the pre-6.7
//! code carries the current summary buffer across calls within one allocation).

use serde::Serialize;

/// Realtime geometry: `rextents` extents, `blocksize`-byte bitmap and summary blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RtGeometry {
    pub rextents: u64,
    pub blocksize: u32,
}

impl RtGeometry {
    /// Extents one bitmap block covers (`blocksize * NBBY`).
    pub fn extents_per_bmblock(&self) -> u64 {
        self.blocksize as u64 * 8
    }
    pub fn rbmblocks(&self) -> u64 {
        self.rextents.div_ceil(self.extents_per_bmblock())
    }
    /// `m_rsumlevels = rextslog + 1`.
    pub fn levels(&self) -> u32 {
        highbit(self.rextents) + 1
    }
    /// Summary file size in blocks: `roundup(4 * levels * rbmblocks, blocksize)`.
    pub fn summary_blocks(&self) -> u64 {
        (4 * self.levels() as u64 * self.rbmblocks()).div_ceil(self.blocksize as u64)
    }
}

/// floor(log2(v)); 0 for 0 and 1.
pub fn highbit(v: u64) -> u32 {
    if v == 0 {
        0
    } else {
        63 - v.leading_zeros()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RtAlloc {
    geo: RtGeometry,
    /// One bit per extent, 1 = free.
    #[serde(skip)]
    bitmap: Vec<u64>,
    /// `XFS_SUMOFFS(log, bbno) = log * rbmblocks + bbno`.
    #[serde(skip)]
    summary: Vec<u32>,
    /// `m_rsum_cache`: for each bitmap block, a level at or below the lowest nonzero one.
    #[serde(skip)]
    cache: Option<Vec<u8>>,
    /// Summary block currently held (the buffer carried between summary accesses).
    held: Option<u64>,
    summary_reads: u64,
    bitmap_reads: u64,
    free_extents: u64,
}

impl RtAlloc {
    pub fn geo(&self) -> RtGeometry {
        self.geo
    }
    /// Summary and bitmap blocks read so far (`xfs_rtget_summary`, `xfs_rtbuf_get`).
    pub fn summary_reads(&self) -> u64 {
        self.summary_reads
    }
    pub fn bitmap_reads(&self) -> u64 {
        self.bitmap_reads
    }
    /// Free extents (rt extents, not runs).
    pub fn free_extents(&self) -> u64 {
        self.free_extents
    }

    /// A fully free realtime device, with or without the summary cache.
    pub fn new(geo: RtGeometry, cache: bool) -> RtAlloc {
        let words = geo.rextents.div_ceil(64) as usize;
        let mut bitmap = vec![u64::MAX; words];
        let tail = geo.rextents % 64;
        if tail != 0 {
            bitmap[words - 1] = (1u64 << tail) - 1;
        }
        let rbm = geo.rbmblocks() as usize;
        let mut a = RtAlloc {
            geo,
            bitmap,
            summary: vec![0; geo.levels() as usize * rbm],
            cache: cache.then(|| vec![0; rbm]),
            held: None,
            summary_reads: 0,
            bitmap_reads: 0,
            free_extents: 0,
        };
        // mkfs frees the whole device as one extent.
        let len = geo.rextents;
        let o = a.sumoffs(highbit(len), 0);
        a.summary[o] += 1;
        a.free_extents = len;
        a
    }

    fn sumoffs(&self, log: u32, bbno: u64) -> usize {
        (log as u64 * self.geo.rbmblocks() + bbno) as usize
    }

    fn bbno(&self, rtx: u64) -> u64 {
        rtx / self.geo.extents_per_bmblock()
    }

    /// Touches the summary block holding `(log, bbno)`: a buffer get unless it is held.
    fn touch(&mut self, log: u32, bbno: u64) {
        let block = self.sumoffs(log, bbno) as u64 * 4 / self.geo.blocksize as u64;
        if self.held != Some(block) {
            self.held = Some(block);
            self.summary_reads += 1;
        }
    }

    /// The end of one allocation or free: the held buffer is released with the transaction.
    fn release(&mut self) {
        self.held = None;
    }

    pub fn is_free(&self, rtx: u64) -> bool {
        self.bitmap[(rtx / 64) as usize] >> (rtx % 64) & 1 == 1
    }

    fn set_range(&mut self, start: u64, len: u64, free: bool) {
        let mut x = start;
        let end = start + len;
        while x < end {
            let (w, b) = ((x / 64) as usize, x % 64);
            let n = (64 - b).min(end - x);
            let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << b };
            if free {
                self.bitmap[w] |= mask;
            } else {
                self.bitmap[w] &= !mask;
            }
            x += n;
        }
    }

    /// `xfs_rtfind_back`: the first extent of the run of `rtx`'s state that ends at `rtx`.
    fn find_back(&self, rtx: u64, limit: u64) -> u64 {
        let want = self.is_free(rtx);
        let mut x = rtx;
        while x > limit {
            let (w, b) = ((x - 1) / 64, (x - 1) % 64);
            let word = if want { !self.bitmap[w as usize] } else { self.bitmap[w as usize] };
            // Bits at or below b that differ from `want`.
            let masked = word & (u64::MAX >> (63 - b));
            if masked != 0 {
                let hi = 63 - masked.leading_zeros() as u64;
                return (w * 64 + hi + 1).max(limit);
            }
            x = w * 64;
        }
        limit
    }

    /// `xfs_rtfind_forw`: the last extent of the run of `rtx`'s state that starts at `rtx`.
    fn find_forw(&self, rtx: u64, limit: u64) -> u64 {
        let want = self.is_free(rtx);
        let mut x = rtx;
        while x <= limit {
            let (w, b) = (x / 64, x % 64);
            let word = if want { !self.bitmap[w as usize] } else { self.bitmap[w as usize] };
            let masked = word & (u64::MAX << b);
            if masked != 0 {
                let lo = masked.trailing_zeros() as u64;
                return (w * 64 + lo - 1).min(limit);
            }
            x = (w + 1) * 64;
        }
        limit
    }

    /// `xfs_rtget_summary`, tightening the cache when the counter is zero at its level.
    pub fn get_summary(&mut self, log: u32, bbno: u64) -> u32 {
        self.touch(log, bbno);
        self.summary[self.sumoffs(log, bbno)]
    }

    /// `xfs_rtmodify_summary` with the cache maintenance of kernels 5.0–6.6.
    fn modify_summary(&mut self, log: u32, bbno: u64, delta: i32) {
        self.touch(log, bbno);
        let o = self.sumoffs(log, bbno);
        let v = (self.summary[o] as i64 + delta as i64).max(0) as u32;
        self.summary[o] = v;
        if let Some(c) = &mut self.cache {
            let slot = &mut c[bbno as usize];
            if v == 0 && log as u8 == *slot {
                *slot += 1;
            }
            if v != 0 && (log as u8) < *slot {
                *slot = log as u8;
            }
        }
    }

    /// `xfs_rtany_summary`: is there a free extent of level `low..=high` starting in `bbno`?
    /// Scans upward from max(low, cache); records the first level found (or high + 1).
    pub fn any_summary(&mut self, low: u32, high: u32, bbno: u64) -> bool {
        let start = match &self.cache {
            Some(c) => low.max(c[bbno as usize] as u32),
            None => low,
        };
        let mut found = None;
        for log in start..=high {
            if self.get_summary(log, bbno) != 0 {
                found = Some(log);
                break;
            }
        }
        if let Some(c) = &mut self.cache {
            let v = found.unwrap_or(high + 1) as u8;
            if v > c[bbno as usize] {
                c[bbno as usize] = v;
            }
        }
        found.is_some()
    }

    /// `xfs_rtallocate_range`: mark `[start, start+len)` in use and fix up the summary.
    pub fn allocate_range(&mut self, start: u64, len: u64) {
        let end = start + len - 1;
        let pre = self.find_back(start, 0);
        let post = self.find_forw(end, self.geo.rextents - 1);
        self.modify_summary(highbit(post + 1 - pre), self.bbno(pre), -1);
        if pre < start {
            self.modify_summary(highbit(start - pre), self.bbno(pre), 1);
        }
        if post > end {
            self.modify_summary(highbit(post - end), self.bbno(end + 1), 1);
        }
        self.set_range(start, len, false);
        self.free_extents -= len;
    }

    /// `xfs_rtfree_range`: free `[start, start+len)` and merge with free neighbours.
    pub fn free_range(&mut self, start: u64, len: u64) {
        let end = start + len - 1;
        self.set_range(start, len, true);
        let pre = self.find_back(start, 0);
        let post = self.find_forw(end, self.geo.rextents - 1);
        if pre < start {
            self.modify_summary(highbit(start - pre), self.bbno(pre), -1);
        }
        if post > end {
            self.modify_summary(highbit(post - end), self.bbno(end + 1), -1);
        }
        self.modify_summary(highbit(post + 1 - pre), self.bbno(pre), 1);
        self.free_extents += len;
        self.release();
    }

    /// `xfs_rtallocate_extent_block`: the first run of `maxlen` in bitmap block `bbno`, else
    /// the longest run of at least `minlen` (trimmed to `prod`).
    fn extent_block(&mut self, bbno: u64, minlen: u64, maxlen: u64, prod: u64) -> Option<(u64, u64)> {
        self.bitmap_reads += 1;
        let per = self.geo.extents_per_bmblock();
        let first = bbno * per;
        let last = ((bbno + 1) * per).min(self.geo.rextents) - 1;
        let mut best: Option<(u64, u64)> = None;
        let mut x = first;
        while x <= last {
            if self.is_free(x) {
                let run_end = self.find_forw(x, self.geo.rextents - 1);
                let avail = run_end - x + 1;
                if avail >= maxlen {
                    self.allocate_range(x, maxlen);
                    return Some((x, maxlen));
                }
                if minlen < maxlen && avail >= minlen && best.is_none_or(|b| avail > b.1) {
                    best = Some((x, avail));
                }
                x = run_end + 1;
            } else {
                x = self.find_forw(x, last) + 1;
            }
        }
        let (start, mut len) = best?;
        if prod > 1 {
            len -= len % prod;
        }
        if len < minlen {
            return None;
        }
        self.allocate_range(start, len);
        Some((start, len))
    }

    /// `xfs_rtallocate_extent_near`: exact at `start`, then bitmap blocks bbno, +1, -1, +2, ...
    /// that the summary says hold an extent of at least `minlen`.
    pub fn allocate_near(&mut self, start: u64, minlen: u64, maxlen: u64) -> Option<(u64, u64)> {
        let start = start.min(self.geo.rextents - 1);
        let out = self.near(start, minlen, maxlen);
        self.release();
        out
    }

    fn near(&mut self, start: u64, minlen: u64, maxlen: u64) -> Option<(u64, u64)> {
        // Exact: free at `start` for at least minlen.
        if self.is_free(start) {
            let end = self.find_forw(start, (start + maxlen - 1).min(self.geo.rextents - 1));
            let avail = end - start + 1;
            if avail >= minlen {
                self.allocate_range(start, avail);
                return Some((start, avail));
            }
        }
        let bbno = self.bbno(start) as i64;
        let nblocks = self.geo.rbmblocks() as i64;
        let high = self.geo.levels() - 1;
        let low = highbit(minlen);
        let mut i: i64 = 0;
        loop {
            if self.any_summary(low, high, (bbno + i) as u64) {
                if i >= 0 {
                    if let Some(r) = self.extent_block((bbno + i) as u64, minlen, maxlen, 1) {
                        return Some(r);
                    }
                } else {
                    // An extent counted at bbno+i may start there and run forward: try the
                    // blocks between it and the start that hold no extent of their own first.
                    for j in (i + 1..=-1).rev() {
                        if self.any_summary(low, high, (bbno + j) as u64) {
                            continue;
                        }
                        if let Some(r) = self.extent_block((bbno + j) as u64, minlen, maxlen, 1) {
                            return Some(r);
                        }
                    }
                    if let Some(r) = self.extent_block((bbno + i) as u64, minlen, maxlen, 1) {
                        return Some(r);
                    }
                }
            }
            // Loop control of xfs_rtallocate_extent_near: +1, -1, +2, -2 ... within the device.
            if i > 0 && bbno - i >= 0 {
                i = -i;
            } else if i > 0 && bbno + i < nblocks - 1 {
                i += 1;
            } else if i <= 0 && bbno - i < nblocks - 1 {
                i = 1 - i;
            } else if i <= 0 && bbno + i > 0 {
                i -= 1;
            } else {
                return None;
            }
        }
    }

    /// `xfs_rtallocate_extent_size` (no locality hint): for each level from highbit(maxlen)
    /// up, every bitmap block whose summary says it holds such an extent; then smaller
    /// levels down to highbit(minlen) with the length bounded by the level.
    pub fn allocate_size(&mut self, minlen: u64, maxlen: u64) -> Option<(u64, u64)> {
        let out = self.size(minlen, maxlen);
        self.release();
        out
    }

    fn size(&mut self, minlen: u64, maxlen: u64) -> Option<(u64, u64)> {
        let nblocks = self.geo.rbmblocks();
        let levels = self.geo.levels();
        for l in highbit(maxlen)..levels {
            for i in 0..nblocks {
                if self.get_summary(l, i) == 0 {
                    continue;
                }
                if let Some(r) = self.extent_block(i, minlen, maxlen, 1) {
                    return Some(r);
                }
            }
        }
        if minlen >= maxlen {
            return None;
        }
        for l in (highbit(minlen)..=highbit(maxlen - 1).min(levels - 1)).rev() {
            let lo = minlen.max(1 << l);
            let hi = maxlen.min((2u64 << l) - 1);
            for i in 0..nblocks {
                if self.get_summary(l, i) == 0 {
                    continue;
                }
                if let Some(r) = self.extent_block(i, lo, hi, 1) {
                    return Some(r);
                }
            }
        }
        None
    }

    /// The summary counters for a picture `cols` columns wide: each column a run of bitmap
    /// blocks, per level the sum of its counters; and per column the lowest cached level
    /// (`None` without the cache).
    pub fn summary_columns(&self, cols: usize) -> (u64, Vec<Vec<u32>>, Option<Vec<u8>>) {
        let rbm = self.geo.rbmblocks();
        let per = rbm.div_ceil(cols.max(1) as u64).max(1);
        let n = rbm.div_ceil(per) as usize;
        let levels = self.geo.levels();
        let mut grid = vec![vec![0u32; levels as usize]; n];
        for l in 0..levels {
            for b in 0..rbm {
                let c = &mut grid[(b / per) as usize][l as usize];
                *c = c.saturating_add(self.summary[self.sumoffs(l, b)]);
            }
        }
        let cache = self.cache.as_ref().map(|c| {
            (0..n)
                .map(|k| c[k * per as usize..((k + 1) * per as usize).min(c.len())].iter().copied().min().unwrap_or(0))
                .collect()
        });
        (per, grid, cache)
    }

    /// Sum of all summary counters: the number of free extents (runs) on the device.
    pub fn free_runs(&self) -> u64 {
        self.summary.iter().map(|&c| c as u64).sum()
    }

    /// Whether the cache is a lower bound: no nonzero counter below it (for tests; a search
    /// with a larger minlen can break it, as in the kernel).
    pub fn cache_is_lower_bound(&self) -> bool {
        let Some(c) = &self.cache else { return true };
        let rbm = self.geo.rbmblocks();
        (0..rbm)
            .all(|b| (0..c[b as usize] as u32).all(|l| l >= self.geo.levels() || self.summary[self.sumoffs(l, b)] == 0))
    }
}

/// The `rt-alloc-fragmented` shape: an 8 TiB realtime device with 64 KiB extents (so each
/// summary level of a bitmap block sits in its own summary block), nearly full with short
/// free runs left in a few bitmap blocks, then near-allocations at random targets with
/// frees mixed in.
/// Returns the allocations made, in order.
pub fn fragmented_run(cache: bool, seed: u64, allocs: u32) -> (RtAlloc, Vec<Option<(u64, u64)>>) {
    use rand_core::{RngCore, SeedableRng};
    let mut a = fragmented(cache, seed);
    let geo = a.geo;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed ^ 0x5eed);
    let mut out = Vec::with_capacity(allocs as usize);
    let mut live: Vec<(u64, u64)> = Vec::new();
    for _ in 0..allocs {
        let target = rng.next_u64() % geo.rextents;
        let maxlen = 1 + rng.next_u64() % 16;
        let r = a.allocate_near(target, 1, maxlen);
        if let Some(x) = r {
            live.push(x);
        }
        out.push(r);
        if live.len() > 64 {
            let (s, l) = live.swap_remove((rng.next_u64() % live.len() as u64) as usize);
            a.free_range(s, l);
        }
    }
    (a, out)
}

/// The fragmented device alone (reads counted from zero).
pub fn fragmented(cache: bool, seed: u64) -> RtAlloc {
    use rand_core::{RngCore, SeedableRng};
    let geo = RtGeometry { rextents: (8u64 << 40) / (64 << 10), blocksize: 4096 };
    let mut a = RtAlloc::new(geo, cache);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    // Fill the device, then punch short free runs into one bitmap block in sixteen: most
    // blocks are full, so a near search walks past them checking every summary level.
    a.allocate_range(0, geo.rextents);
    a.release();
    let per = geo.extents_per_bmblock();
    for bb in 0..geo.rbmblocks() {
        if rng.next_u32() % 16 != 0 {
            continue;
        }
        for _ in 0..24 {
            let s = bb * per + rng.next_u64() % (per - 16);
            let len = 1 + rng.next_u64() % 15;
            if (s..s + len).all(|x| !a.is_free(x)) {
                a.free_range(s, len);
            }
        }
    }
    a.summary_reads = 0;
    a.bitmap_reads = 0;
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_matches_mkfs_for_100gib() {
        // [run] 100 GiB rt, 4 KiB blocks, rextsize 1: 800 bitmap blocks, 25 levels, 20 summary blocks.
        let g = RtGeometry { rextents: 26_214_400, blocksize: 4096 };
        assert_eq!(g.rbmblocks(), 800);
        assert_eq!(g.levels(), 25);
        assert_eq!(g.summary_blocks(), 20);
    }

    #[test]
    fn summary_counts_free_runs_by_level() {
        let g = RtGeometry { rextents: 1 << 20, blocksize: 4096 };
        let mut a = RtAlloc::new(g, true);
        a.allocate_range(100, 50);
        // Free runs: [0,100) and [150, 2^20).
        assert_eq!(a.free_runs(), 2);
        assert_eq!(a.get_summary(highbit(100), 0), 1);
        a.free_range(100, 50);
        assert_eq!(a.free_runs(), 1);
        assert_eq!(a.get_summary(20, 0), 1);
        assert!(a.cache_is_lower_bound());
    }

    #[test]
    fn size_allocation_takes_the_first_block_with_a_big_enough_extent() {
        let g = RtGeometry { rextents: 1 << 16, blocksize: 512 };
        let mut a = RtAlloc::new(g, true);
        a.allocate_range(0, 1 << 16);
        a.release();
        a.free_range(5000, 3);
        a.free_range(9000, 40);
        // 16 extents: only the 40-extent run (level 5) has them.
        assert_eq!(a.allocate_size(16, 16), Some((9000, 16)));
        // 8 to 30: the leftover 24 at 9016 (level 4) is the first block with level >= 4.
        assert_eq!(a.allocate_size(8, 30), Some((9016, 24)));
        // Only the 3-extent run is left.
        assert_eq!(a.allocate_size(2, 8), Some((5000, 3)));
        assert!(a.cache_is_lower_bound());
    }

    /// Kernels 5.0–6.6: `xfs_rtany_summary(low, ...)` with low above the cached level raises
    /// the cache to the level it found, past levels it never read. A later search with a
    /// smaller minlen then skips that block's small free extents, which the search without
    /// the cache allocates: the extents chosen differ. (6.7's inverted cache scans downward
    /// from the top level and has no such gap.)
    #[test]
    fn a_larger_minlen_search_lifts_the_cache_past_unread_levels() {
        let g = RtGeometry { rextents: 1 << 14, blocksize: 512 }; // 4096 extents per block
        let run = |cache: bool| {
            let mut a = RtAlloc::new(g, cache);
            a.allocate_range(0, 1 << 14);
            a.release();
            a.free_range(100, 2); // level 1 in block 0
            a.free_range(1000, 8); // level 3 in block 0
            a.free_range(3 * 4096 + 5, 2); // level 1 in block 3
            let first = a.allocate_near(50, 8, 8); // takes the 8 at 1000; cache[0] -> 3
            let bound = a.cache_is_lower_bound();
            // From full block 1 the search visits 1, 2, 0, 3.
            let second = a.allocate_near(4096 + 100, 1, 2);
            (first, second, bound)
        };
        let (f0, s0, _) = run(false);
        let (f1, s1, bound) = run(true);
        assert_eq!(f0, Some((1000, 8)));
        assert_eq!(f0, f1);
        assert!(!bound, "the cache claims no extents below level 3 in block 0, but one of 2 is there");
        assert_eq!(s0, Some((100, 2)), "without the cache: the 2 extents in block 0");
        assert_eq!(s1, Some((3 * 4096 + 5, 2)), "with it: block 0 is skipped, block 3 is next");
    }

    #[test]
    fn near_allocation_prefers_the_target() {
        let g = RtGeometry { rextents: 1 << 20, blocksize: 4096 };
        let mut a = RtAlloc::new(g, false);
        assert_eq!(a.allocate_near(5000, 1, 8), Some((5000, 8)));
        // 5000 is taken now: the next near 5000 comes from its bitmap block.
        let (s, l) = a.allocate_near(5000, 1, 8).unwrap();
        assert!(l == 8 && a.bbno(s) == 0, "{s} {l}");
    }

    #[test]
    fn summary_columns_keep_every_counter_and_the_lowest_cached_level() {
        let a = fragmented(true, 7);
        let (per, grid, cache) = a.summary_columns(100);
        assert_eq!(grid.len() as u64, a.geo.rbmblocks().div_ceil(per));
        assert_eq!(grid.iter().flatten().map(|&c| c as u64).sum::<u64>(), a.free_runs(), "no counter lost");
        assert!(grid.iter().all(|col| col.len() == a.geo.levels() as usize));
        let cache = cache.expect("the cache is on");
        // The cache bounds each column from below: no counters under the lowest cached level.
        for (col, &lo) in grid.iter().zip(&cache) {
            assert!(col[..(lo as usize).min(col.len())].iter().all(|&c| c == 0));
        }
        assert!(fragmented(false, 7).summary_columns(100).2.is_none());
    }
}
