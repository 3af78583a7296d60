//! Workloads (SPEC.md §9): which items a writer's next transaction dirties, and how.

use super::dir::BlockSource;
use super::dir::Dir;
use super::log_item::Item;
use crate::ail::Ail;
use crate::cil::ItemKind;
use crate::format::{BUF_CHUNKS, FORK_MAX, INODE_CORE, INODE_FMT, OP_HDR};
use crate::geometry::Geometry;
use crate::layout::{self, MAX_ITEMS, SHARED_ITEMS};
use crate::rtalloc::RtAlloc;
use crate::scenario::{Directory, RsumCache, Scenario, WorkloadKind};
use crate::units::TaskId;
use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;

/// Inodes a run creates before it reuses them (`alloc_item`): twice what the whole log
/// holds as inode items. After that many creates (each logging an inode of its own) the log
/// has wrapped twice, so the tail has passed the reused inode: it was written back and left
/// the AIL, and logging it again is logging a new inode.
fn inode_cap(geo: &Geometry) -> u32 {
    let inode_item = INODE_FMT + INODE_CORE + 2 * OP_HDR;
    (2 * (geo.log_bytes / inode_item)).max(4096)
}

/// The literal area of a 512-byte v5 inode, and the bmap btree root a directory's data fork
/// becomes once its extents overflow it (`dsize` 88 in `xfs_logprint`).
const INODE_LITERAL: u32 = 512 - INODE_CORE;
const BMBT_ROOT: u32 = 88;

/// `allocsize`: a file smaller than it gets no speculative preallocation
/// (`xfs_iomap_prealloc_size`; the mount's `m_allocsize_blks`, 64 KiB by default).
const ALLOCSIZE: u64 = 64 << 10;

/// Appends of `append` bytes that start below `allocsize` (none for appends of `allocsize` or
/// more).
fn appends_below_allocsize(append: u64) -> u64 {
    if append >= ALLOCSIZE {
        0
    } else {
        ALLOCSIZE.div_ceil(append.max(1))
    }
}

/// How a writer's first `n` appends of `append` bytes allocated: (under `allocsize`, past it).
/// Under it an append allocates when it reaches a 4 KiB block the file does not have. Past it
/// XFS preallocates beyond EOF as much again as the file holds (`xfs_iomap_prealloc_size`: the
/// file's size, doubling), so the file allocates when its appends reach `allocsize`'s count
/// times a power of two; appends of `allocsize` or more are past it from the first, and
/// allocate at the 1st, 2nd, 4th, 8th... append.
/// Model: the preallocation's cap (8 GiB, or a share of the free space) is never reached.
fn appends_allocating(n: u64, append: u64) -> (u64, u64) {
    let small = appends_below_allocsize(append);
    if small == 0 {
        return (0, if n == 0 { 0 } else { n.ilog2() as u64 + 1 });
    }
    let m = n.min(small);
    let under = m.min((m * append).div_ceil(4096));
    let past = if n <= small { 0 } else { ((n - 1) / small).ilog2() as u64 + 1 };
    (under, past)
}

/// Whether a writer's `tx`th append (from 0) of `append` bytes allocates.
pub(super) fn append_allocates(tx: u64, append: u64) -> bool {
    let count = |n| {
        let (under, past) = appends_allocating(n, append);
        under + past
    };
    count(tx + 1) > count(tx)
}

/// The bmap btree leaf a file's extents live in once they overflow the inode (72-byte v5
/// block header, 16-byte records, 251 to a leaf): a conversion changes its last records, and
/// the leaf's logged range grows from its header to them until it is written back.
fn bmbt_leaf_dirty(extents: u32) -> u32 {
    const HDR: u32 = 72;
    let records = (extents - 1) % ((4096 - HDR) / 16) + 1;
    let last = ((HDR + 16 * records - 1) / crate::format::XFS_BLF_CHUNK).min(BUF_CHUNKS - 1);
    if last == BUF_CHUNKS - 1 {
        u32::MAX
    } else {
        (1 << (last + 1)) - 1
    }
}

/// One change per buffer: the chunks a transaction dirties in it, ORed.
fn merge_bits(mut v: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    v.sort_by_key(|&(id, _)| id);
    v.dedup_by(|b, a| {
        let same = a.0 == b.0;
        if same {
            a.1 |= b.1;
        }
        same
    });
    v
}

/// Inode allocation (`xfs_dialloc`): creates take fresh items past the writers' pools up to
/// a cap, then reuse the oldest created inode (see `inode_cap`).
#[derive(Clone, Debug)]
pub(crate) struct InodeAlloc {
    /// The first item a create allocated, the most the run creates, how many creates reused
    /// one, and the next created item to try to reuse.
    first_created: u32,
    cap: u32,
    reused: u64,
    reuse_cursor: u64,
}

impl InodeAlloc {
    /// `nitems` items exist before the first create.
    pub fn new(nitems: u32, geo: &Geometry) -> InodeAlloc {
        InodeAlloc { first_created: nitems, cap: nitems.saturating_add(inode_cap(geo)), reused: 0, reuse_cursor: 0 }
    }
    /// Creates that reused an inode.
    pub fn reused(&self) -> u64 {
        self.reused
    }
}

/// The realtime files of the rt-alloc workload: the allocator (boxed: its bitmap is
/// megabytes), each writer's last extent end (the locality hint of its next allocation), and
/// the extents still allocated.
#[derive(Clone, Debug, Default)]
pub(crate) struct RtFiles {
    alloc: Option<Box<RtAlloc>>,
    hint: Vec<u64>,
    live: Vec<(u64, u64)>,
}

impl RtFiles {
    /// The rt-alloc workload's fragmented device, each writer's hint drawn from `rng`; none
    /// for other workloads.
    pub fn for_scenario(s: &Scenario, rng: &mut Pcg64Mcg) -> RtFiles {
        if s.workload != WorkloadKind::RtAlloc {
            return RtFiles::default();
        }
        let rt = crate::rtalloc::fragmented(s.rsum_cache == RsumCache::On, s.seed);
        let n = rt.geo().rextents;
        RtFiles {
            hint: (0..s.writers).map(|_| rng.next_u64() % n).collect(),
            alloc: Some(Box::new(rt)),
            live: Vec::new(),
        }
    }
    pub fn alloc(&self) -> Option<&RtAlloc> {
        self.alloc.as_deref()
    }
}

/// The items a writer works on: its directory's inode, the inobt leaf, then its hot blocks;
/// and the directory a create workload makes its files in.
#[derive(Clone, Debug)]
pub(crate) struct WriterPool {
    items: Vec<u32>,
    next_item: usize,
    dir: Dir,
}

impl WriterPool {
    pub fn new(items: Vec<u32>) -> WriterPool {
        WriterPool { items, next_item: 0, dir: Dir::default() }
    }
    pub fn dir(&self) -> &Dir {
        &self.dir
    }
    /// The next of its `hot` items, round robin.
    fn next_hot_item(&mut self, hot: usize) -> u32 {
        let hot = hot.min(self.items.len()).max(1);
        let id = self.items[self.next_item % hot];
        self.next_item += 1;
        id
    }
    /// Its directory, taken out to add an entry (made on the pool's blocks `2..hot` first).
    fn take_dir(&mut self, hot: usize) -> Dir {
        if self.dir.is_new() && hot > 2 {
            self.dir = Dir::new(self.items[2..hot].to_vec());
        }
        std::mem::take(&mut self.dir)
    }
}

/// What a writer's next transaction changes is built from: the parts of the simulation it
/// reads and draws from, borrowed for one transaction.
pub(super) struct TxBuilder<'a> {
    pub scenario: &'a Scenario,
    /// The writer, its transactions so far, its pool, and whether this transaction is an
    /// O_DSYNC append's timestamp update.
    pub w: TaskId,
    pub tx: u64,
    pub pool: &'a mut WriterPool,
    pub timestamp: bool,
    pub rng: &'a mut Pcg64Mcg,
    pub items: &'a mut Vec<Item>,
    pub ail: &'a Ail,
    pub ialloc: &'a mut InodeAlloc,
    /// The file system's AGs (`mkfs_agcount`), counted once for the run.
    pub agcount: u32,
    pub rt: &'a mut RtFiles,
}

impl BlockSource for TxBuilder<'_> {
    fn new_block(&mut self) -> Option<u32> {
        self.new_item(ItemKind::Buf { dirty: 0 })
    }
}

impl TxBuilder<'_> {
    /// A run of `n` dirty chunks at a random place in a 4 KiB buffer.
    fn chunk_run(&mut self, n: u32) -> u32 {
        let n = n.clamp(1, BUF_CHUNKS);
        let mask = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        let shift = self.rng.next_u32() % (BUF_CHUNKS - n + 1);
        mask << shift
    }

    /// Whether another writer's file is in this writer's AG, so that their allocations under
    /// `allocsize` interleave and each makes an extent of its own; a file alone in its AG
    /// grows in place there.
    /// Model: writer `w`'s directory, and its file, is in AG `w mod agcount`.
    fn shares_its_ag(&self) -> bool {
        let (ags, writers) = (self.agcount, self.scenario.writers);
        writers / ags + u32::from(self.w % ags < writers % ags) > 1
    }

    fn hot_item(&mut self) -> u32 {
        self.pool.next_hot_item(self.scenario.tx_items as usize * 4)
    }

    /// A new metadata item of `kind` while the metadata area has room and the run is under
    /// its cap (`inode_cap`).
    fn new_item(&mut self, kind: ItemKind) -> Option<u32> {
        let id = self.items.len() as u32;
        if id as u64 >= layout::items_below(layout::meta_area_end(self.scenario))
            || id >= MAX_ITEMS.min(self.ialloc.cap)
        {
            return None;
        }
        self.items.push(Item::new(id, kind));
        Some(id)
    }

    /// A new inode for a create: a fresh item while the metadata area has room, up to
    /// `inode_cap` of them; past the cap, the oldest created inode again, round robin.
    /// Model: a finite inode table reused oldest first once it is clean (see `inode_cap`),
    /// which bounds a long run's memory. When the metadata area itself is full (a small
    /// filesystem), there is none: creates relog inodes from the writer's own pool.
    fn alloc_item(&mut self) -> Option<u32> {
        let end = layout::meta_area_end(self.scenario);
        let id = self.items.len() as u32;
        if id as u64 >= layout::items_below(end) {
            return None; // the area is full: no inode table to reuse either
        }
        if let Some(id) = self.new_item(ItemKind::Inode { data_fork: 0, attr_fork: 0 }) {
            return Some(id);
        }
        // Directory blocks are created items too: skip them.
        let created = (id - self.ialloc.first_created) as u64;
        for _ in 0..created {
            let cand = self.ialloc.first_created + (self.ialloc.reuse_cursor % created) as u32;
            self.ialloc.reuse_cursor += 1;
            let it = &self.items[cand as usize];
            if !it.kind().is_inode() {
                continue;
            }
            self.ialloc.reused += 1;
            debug_assert!(
                self.ail.lsn(cand).is_none() && it.pinned() == 0 && it.flushing().is_none(),
                "inode {cand} reused while still in the log"
            );
            return Some(cand);
        }
        None
    }

    /// A buffer change whose dirty chunks add to those it has been logged with since it was
    /// last written back: the buf log item keeps its dirty map until writeback frees it.
    fn buf_change(&self, id: u32, bits: u32) -> ItemKind {
        let it = &self.items[id as usize];
        let held = match it.kind() {
            ItemKind::Buf { dirty } if it.pinned() > 0 || self.ail.lsn(id).is_some() => dirty,
            _ => 0,
        };
        ItemKind::Buf { dirty: held | bits }
    }

    /// `xfs_rtallocate_extent_near` at the writer's hint; old extents are freed to keep the
    /// device's fragmentation steady. Every eighth allocation starts a new file at a random
    /// place (the storage-service pattern of source thread 004: many files, spread out).
    fn rt_allocate(&mut self, w: TaskId) {
        let maxlen = 1 + self.rng.next_u64() % 16;
        let pick = self.rng.next_u64();
        let RtFiles { alloc: Some(rt), hint, live } = &mut *self.rt else { return };
        let hint = &mut hint[w as usize];
        if pick.is_multiple_of(8) {
            *hint = (pick >> 3) % rt.geo().rextents;
        }
        if let Some((s, l)) = rt.allocate_near(*hint, 1, maxlen) {
            *hint = (s + l) % rt.geo().rextents;
            live.push((s, l));
        }
        if live.len() > 64 {
            let (s, l) = live.swap_remove((pick % live.len() as u64) as usize);
            rt.free_range(s, l);
        }
    }

    /// fsmark create (`xfs_create`): the new inode, the entry `f<n>` in the writer's
    /// directory (data, leaf, free index and node blocks, and the directory inode), the AGI
    /// and the inobt record of the inode's chunk.
    /// Model: the inode chunk allocation every 64 creates (an icreate item, the free space
    /// btrees, under 1 byte per create in the kernel's log) is not logged.
    fn create_changes(&mut self, w: TaskId, out: &mut Vec<(u32, ItemKind)>) {
        if self.scenario.directory == Directory::Chunk {
            return self.create_changes_chunk(w, out);
        }
        let (n, chunks) = (self.scenario.tx_items, self.scenario.tx_chunks);
        let (tx, pool_len) = (self.tx, self.pool.items.len());
        let hot = (n as usize * 4).min(pool_len).max(1);
        self.new_inode(hot, out);
        // The writer's pool: its directory's inode, the inobt leaf, then the directory's
        // first blocks.
        let mut dir = self.pool.take_dir(hot);
        let name = format!("f{tx}");
        let mut dirty = Vec::with_capacity(8);
        let added = dir.add(name.as_bytes(), self, &mut dirty);
        let blocks = dir.block_count() as u32;
        self.pool.dir = dir;
        if added {
            let pool = &self.pool.items;
            // Its data fork: an extent per block, or a bmap btree root once they overflow
            // the inode's literal area (88 bytes logged, as the kernel does).
            let data_fork = if blocks * 16 <= INODE_LITERAL { blocks * 16 } else { BMBT_ROOT };
            out.push((pool[0], ItemKind::Inode { data_fork, attr_fork: 0 }));
        }
        // xfs_ialloc_log_agi (agi_freecount), then the record of this inode's chunk
        // (16 bytes per 64 inodes after the btree block header).
        out.push((w % SHARED_ITEMS, ItemKind::Buf { dirty: 1 }));
        if pool_len > 1 {
            let inobt = self.pool.items[1];
            let rec = 56 + 16 * ((tx / 64) % 252) as u32;
            dirty.push((inobt, 1 << (rec / 128)));
        }
        for (id, bits) in merge_bits(dirty) {
            out.push((id, self.buf_change(id, bits)));
        }
        for _ in 4..n {
            let id = self.hot_item();
            let dirty = self.chunk_run(chunks);
            out.push((id, ItemKind::Buf { dirty }));
        }
    }

    /// The create's new inode (`alloc_item`). Once the area is full, an inode from the part
    /// of the pool past `hot` is relogged instead: `hot_item` never logs those as buffers,
    /// so one block is never both an inode and a buffer.
    fn new_inode(&mut self, hot: usize, out: &mut Vec<(u32, ItemKind)>) {
        let (tx, pool_len) = (self.tx, self.pool.items.len());
        let fresh = match self.alloc_item() {
            Some(id) => Some(id),
            None if pool_len > hot => Some(self.pool.items[hot + tx as usize % (pool_len - hot)]),
            None => None,
        };
        if let Some(fresh) = fresh {
            out.push((fresh, ItemKind::Inode { data_fork: 0, attr_fork: 0 }));
        }
    }

    /// `directory=chunk`: a directory block entry (one chunk), a fresh inode, its cluster
    /// buffer, the AGI.
    fn create_changes_chunk(&mut self, w: TaskId, out: &mut Vec<(u32, ItemKind)>) {
        let (n, chunks) = (self.scenario.tx_items, self.scenario.tx_chunks);
        let (tx, pool_len, dir) = (self.tx, self.pool.items.len(), self.pool.items[0]);
        let dir_chunk = 1u32 << (tx % BUF_CHUNKS as u64);
        out.push((dir, ItemKind::Buf { dirty: dir_chunk }));
        let hot = (n as usize * 4).min(pool_len).max(1);
        self.new_inode(hot, out);
        out.push((w % SHARED_ITEMS, ItemKind::Buf { dirty: 1 }));
        for _ in 3..n {
            let id = self.hot_item();
            let dirty = self.chunk_run(chunks);
            out.push((id, ItemKind::Buf { dirty }));
        }
    }

    /// Entry removal: an inode's attribute fork shrinks step by step, and of every eight
    /// directory blocks logged whole, two empty out and are marked stale in the same context
    /// (header only). Both make CIL space used go backwards; the working set stays fixed.
    fn remove_changes(&mut self, w: TaskId, out: &mut Vec<(u32, ItemKind)>) {
        let (tx, pool_len) = (self.tx, self.pool.items.len());
        let pool = |s: &TxBuilder, i: usize| s.pool.items[i];
        let steps = 8u64;
        let attr_fork = FORK_MAX - (tx % steps) as u32 * (FORK_MAX / steps as u32);
        let half = (pool_len / 2).max(1);
        let inode = pool(self, (tx / steps) as usize % half);
        out.push((inode, ItemKind::Inode { data_fork: 64, attr_fork }));
        let (cycle, step) = (tx / 8, tx % 8);
        let (slot, dirty) = if step < 6 { (cycle * 6 + step, u32::MAX) } else { (cycle * 6 + step - 6, 0) };
        let block = pool(self, (half + slot as usize % half).min(pool_len - 1));
        out.push((block, ItemKind::Buf { dirty }));
        out.push((w % SHARED_ITEMS, ItemKind::Buf { dirty: 1 }));
    }

    /// The items the writer's next transaction changes, with their new contents.
    pub(super) fn changes(&mut self) -> Vec<(u32, ItemKind)> {
        let w = self.w;
        let n = self.scenario.tx_items;
        let chunks = self.scenario.tx_chunks;
        let tx = self.tx;
        let pool_len = self.pool.items.len();
        let pool = |s: &TxBuilder, i: usize| s.pool.items[i];
        let ag_header = w % SHARED_ITEMS;
        let mut out = Vec::with_capacity(n as usize + 2);
        match self.scenario.workload {
            WorkloadKind::FsyncHeavy if !self.scenario.appends() => {
                for _ in 0..n {
                    let id = self.hot_item();
                    let dirty = self.chunk_run(chunks);
                    out.push((id, ItemKind::Buf { dirty }));
                }
            }
            WorkloadKind::SyncAppend | WorkloadKind::FsyncHeavy => {
                // The append's I/O completion converts its part of the preallocated extent to
                // written (`xfs_iomap_write_unwritten`): the inode, its size and its extents
                // (the written ones and the unwritten rest). Only an append that outgrows
                // the speculative preallocation allocates: the AGF and bmap btree buffers.
                // Its timestamp update, before the data is written, logs the same inode (its
                // fields stay dirty until writeback) with the extents the file has so far.
                // Past the inode's literal area the extents move to a bmap btree: the inode
                // logs its root, and the conversion the leaf it changes.
                let timestamp = self.timestamp;
                let append = self.scenario.append_size.0;
                // Model: each doubling of the preallocation is an extent of its own.
                let (under, past) = appends_allocating(tx + !timestamp as u64, append);
                let under = if under > 1 && !self.shares_its_ag() { 1 } else { under };
                let extents = (under + past) as u32 + 1;
                let btree = 16 * extents > INODE_LITERAL;
                let data_fork = if btree { BMBT_ROOT } else { 16 * extents };
                out.push((pool(self, 0), ItemKind::Inode { data_fork, attr_fork: 0 }));
                if btree && !timestamp {
                    let leaf = pool(self, 1.min(pool_len - 1));
                    out.push((leaf, self.buf_change(leaf, bmbt_leaf_dirty(extents))));
                }
                if timestamp || !append_allocates(tx, append) {
                    return out;
                }
                out.push((ag_header, ItemKind::Buf { dirty: 1 }));
                for _ in 2..n.max(2) {
                    let i = 1 + (self.rng.next_u32() as usize % (pool_len - 1).max(1));
                    let id = pool(self, i);
                    let dirty = self.chunk_run(chunks);
                    out.push((id, ItemKind::Buf { dirty }));
                }
            }
            WorkloadKind::FsmarkCreate => self.create_changes(w, &mut out),
            // Half the writers create files, half remove entries (a fixed working set).
            WorkloadKind::CreateRemove if w.is_multiple_of(2) => self.create_changes(w, &mut out),
            WorkloadKind::BtreeChurn => {
                // A btree block whose dirty range grows one chunk per transaction, then the
                // next block; plus the AGF.
                let grown = (tx % BUF_CHUNKS as u64) as u32 + 1;
                let block = pool(self, (tx / BUF_CHUNKS as u64) as usize % pool_len);
                let dirty = if grown == 32 { u32::MAX } else { (1u32 << grown) - 1 };
                out.push((block, ItemKind::Buf { dirty }));
                out.push((ag_header, ItemKind::Buf { dirty: 1 }));
            }
            WorkloadKind::RtAlloc => {
                // A realtime file grows by one extent allocated near its last one: the inode,
                // plus an rt bitmap and an rt summary block (stand-ins from the writer's pool).
                self.rt_allocate(w);
                let data_fork = (16 * (tx as u32 + 1)).min(FORK_MAX);
                out.push((pool(self, 0), ItemKind::Inode { data_fork, attr_fork: 0 }));
                for k in 1..3 {
                    let id = pool(self, k.min(pool_len - 1));
                    let dirty = self.chunk_run(1);
                    out.push((id, ItemKind::Buf { dirty }));
                }
            }
            WorkloadKind::DirRemove | WorkloadKind::CreateRemove => self.remove_changes(w, &mut out),
        }
        // One change per item: the first one is kept. Model: the kernel ORs a buffer's dirty
        // ranges within a transaction; the workloads rarely touch an item twice in one.
        // A few changes (`tx_items` is at most 64): scanning those kept beats building a set.
        let mut kept = 0;
        for i in 0..out.len() {
            if !out[..kept].iter().any(|c| c.0 == out[i].0) {
                out[kept] = out[i];
                kept += 1;
            }
        }
        out.truncate(kept);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends under `allocsize` each allocate; past it the preallocation doubles. A
    /// `sync-append` append (128 KiB) is past it from the first, so its rule is the doubling
    /// alone.
    #[test]
    fn small_appends_allocate_until_the_file_reaches_allocsize_then_the_preallocation_doubles() {
        let allocating = |append: u64| (0..40).filter(|&tx| append_allocates(tx, append)).collect::<Vec<_>>();
        assert_eq!(allocating(128 << 10), [0, 1, 3, 7, 15, 31]);
        let many = |append: u64| (0..300).filter(|&tx| append_allocates(tx, append)).collect::<Vec<_>>();
        assert_eq!(many(4096), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 32, 64, 128, 256]);
        // A 24 KiB append at 48 KiB starts under allocsize; 512-byte appends fill a block in 8.
        assert_eq!(allocating(24 << 10), [0, 1, 2, 3, 6, 12, 24]);
        assert_eq!(allocating(512)[..3], [0, 8, 16]);
        // The kernel's 4 KiB appenders allocated about 21 times in 510 appends.
        assert_eq!(appends_allocating(510, 4096), (16, 5));
    }

    /// A leaf's logged range runs from its header to its last record: 22 records end at byte
    /// 424, in the fourth 128-byte chunk.
    #[test]
    fn a_bmbt_leaf_logs_from_its_header_to_its_last_record() {
        assert_eq!(bmbt_leaf_dirty(22), 0b1111);
        assert_eq!(bmbt_leaf_dirty(1), 0b1);
        assert_eq!(bmbt_leaf_dirty(251), u32::MAX);
        assert_eq!(bmbt_leaf_dirty(252), 0b1, "a new leaf");
    }
}
