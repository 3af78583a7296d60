//! A create's directory (`xfs_dir2_node_addname`): the entry goes into the last data block,
//! its hash into a hash-ordered leaf block that splits when full, and the free index and the
//! da btree node follow. Each writer creates `f<n>` in a directory of its own, as the kernel
//! load does, so what a create logs grows with the directory, as it does in the kernel.
//!
//! Model: node form from the first entry (the kernel passes through shortform, block and
//! leaf form in the first few hundred entries); one da node level (enough for `DIR_CAP`).

/// Entries a directory holds before the writer moves on to a new one (`fs_mark -N`); the
/// new one reuses the old one's blocks, which bounds a long run's memory.
pub const DIR_CAP: u32 = 1 << 16;
/// `xfs_dir3_data_hdr`, `xfs_dir3_leaf_hdr`, `xfs_da3_node_hdr`, `xfs_dir3_free_hdr`: 64 bytes each.
const HDR: u32 = 64;
const BLOCK: u32 = 4096;
const CHUNK: u32 = 128;
/// `xfs_dir2_leaf_entry` (hash, address) and `xfs_da_node_entry` (hash, before): 8 bytes.
const ENT: u32 = 8;
/// Entries a node-form leaf block holds (`xfs_dir3_leaf_max_ents`).
const LEAF_MAX: usize = ((BLOCK - HDR) / ENT) as usize;

/// `xfs_da_hashname`: the directory name hash.
pub fn xfs_da_hashname(name: &[u8]) -> u32 {
    let mut hash = 0u32;
    let mut n = name;
    while n.len() >= 4 {
        hash = (n[0] as u32) << 21 ^ (n[1] as u32) << 14 ^ (n[2] as u32) << 7 ^ n[3] as u32 ^ hash.rotate_left(7 * 4);
        n = &n[4..];
    }
    match n.len() {
        3 => (n[0] as u32) << 14 ^ (n[1] as u32) << 7 ^ n[2] as u32 ^ hash.rotate_left(7 * 3),
        2 => (n[0] as u32) << 7 ^ n[1] as u32 ^ hash.rotate_left(7 * 2),
        1 => n[0] as u32 ^ hash.rotate_left(7),
        _ => hash,
    }
}

/// `xfs_dir2_data_entsize` with file types (v5): inumber, namelen, name, ftype, tag, 8-aligned.
pub fn xfs_dir2_data_entsize(namelen: u32) -> u32 {
    (8 + 1 + namelen + 1 + 2).next_multiple_of(8)
}

/// The 128-byte chunks (`XFS_BLF_CHUNK`) covering bytes `[start, end)` of a block.
fn chunks(start: u32, end: u32) -> u32 {
    if end <= start {
        return 0;
    }
    let (a, b) = (start / CHUNK, (end - 1) / CHUNK);
    let hi = if b >= 31 { u32::MAX } else { (1u32 << (b + 1)) - 1 };
    hi & !((1u32 << a) - 1)
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Leaf {
    id: u32,
    /// The leaf's entries' hashes, in order.
    hashes: Vec<u32>,
}

/// Where a directory's blocks come from: the writer's earlier ones first, then new ones.
pub(crate) trait BlockSource {
    fn new_block(&mut self) -> Option<u32>;
}

/// One writer's directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Dir {
    /// Every block this writer's directories have had, in the order they were first used.
    blocks: Vec<u32>,
    /// How many of `blocks` the current directory uses.
    used: usize,
    entries: u32,
    /// The current (last) data block, its index, and bytes used in it.
    data: Option<u32>,
    data_index: u32,
    data_used: u32,
    leaves: Vec<Leaf>,
    node: u32,
    free: u32,
    /// Directories this writer has filled and left.
    rotations: u32,
}

impl Dir {
    /// A directory whose first blocks are `initial` (the writer's own pool).
    pub fn new(initial: Vec<u32>) -> Dir {
        Dir { blocks: initial, ..Dir::default() }
    }

    /// No directory yet: no blocks given or used.
    pub fn is_new(&self) -> bool {
        self.blocks.is_empty() && self.data.is_none()
    }

    /// Memory a copy of this directory takes: its hashes and block lists.
    pub fn approx_bytes(&self) -> u64 {
        (self.blocks.len() * 4 + self.leaves.iter().map(|l| 32 + l.hashes.len() * 4).sum::<usize>()) as u64
    }

    /// Blocks of the current directory.
    pub fn block_count(&self) -> usize {
        self.used
    }

    fn block(&mut self, src: &mut dyn BlockSource) -> Option<u32> {
        if self.used == self.blocks.len() {
            let id = src.new_block()?;
            self.blocks.push(id);
        }
        self.used += 1;
        Some(self.blocks[self.used - 1])
    }

    /// Start over in a new directory (the old one is full, or no block is left for it).
    fn restart(&mut self, src: &mut dyn BlockSource, out: &mut Vec<(u32, u32)>) -> bool {
        if self.entries > 0 {
            self.rotations += 1;
        }
        self.used = 0;
        self.entries = 0;
        self.leaves.clear();
        let (Some(data), Some(leaf), Some(node), Some(free)) =
            (self.block(src), self.block(src), self.block(src), self.block(src))
        else {
            return false;
        };
        self.data = Some(data);
        self.data_index = 0;
        self.data_used = HDR;
        self.leaves.push(Leaf { id: leaf, hashes: Vec::new() });
        self.node = node;
        self.free = free;
        // xfs_dir3_data_init, the leaf and node headers, the free index with one best.
        for id in [data, leaf, node] {
            out.push((id, 1));
        }
        out.push((free, chunks(0, HDR + 2)));
        true
    }

    /// Add entry `name`: the blocks it dirties, as (item, chunk bitmap), possibly with an
    /// item twice. False if the directory has no blocks at all.
    pub fn add(&mut self, name: &[u8], src: &mut dyn BlockSource, out: &mut Vec<(u32, u32)>) -> bool {
        if (self.data.is_none() || self.entries >= DIR_CAP) && !self.restart(src, out) {
            return false;
        }
        let size = xfs_dir2_data_entsize(name.len() as u32);
        if self.data_used + size > BLOCK {
            // xfs_dir2_grow_inode + xfs_dir3_data_init; the free index gains a best.
            match self.block(src) {
                Some(id) => {
                    self.data = Some(id);
                    self.data_index += 1;
                    self.data_used = HDR;
                    out.push((self.free, 1));
                }
                None => {
                    if !self.restart(src, out) {
                        return false;
                    }
                }
            }
        }
        self.add_data(size, out);
        self.add_leaf(xfs_da_hashname(name), src, out);
        self.entries += 1;
        true
    }

    /// `xfs_dir2_data_use_free` at the start of the block's free space: the header's
    /// bestfree, the entry, the new unused header after it and its tag at the block's end.
    fn add_data(&mut self, size: u32, out: &mut Vec<(u32, u32)>) {
        let data = self.data.expect("directory has a data block");
        let off = self.data_used;
        let end = off + size;
        let mut bits = 1 | chunks(off, end);
        if end < BLOCK {
            bits |= chunks(end, end + 4) | chunks(BLOCK - 2, BLOCK);
        }
        out.push((data, bits));
        self.data_used = end;
        // xfs_dir2_free_log_bests: the data block's best free changed.
        let b = HDR + 2 * self.data_index;
        out.push((self.free, chunks(b, b + 2)));
    }

    /// `xfs_dir2_leafn_add` into the leaf whose hash range holds `hash`, splitting it first
    /// if it is full (`xfs_dir2_leafn_split`); the node's hash for a leaf whose last hash
    /// changed is fixed up (`xfs_da3_fixhashpath`).
    fn add_leaf(&mut self, hash: u32, src: &mut dyn BlockSource, out: &mut Vec<(u32, u32)>) {
        let mut li = self.leaves.partition_point(|l| l.hashes.last().is_some_and(|&h| h < hash));
        li = li.min(self.leaves.len() - 1);
        if self.leaves[li].hashes.len() >= LEAF_MAX {
            // Without a block for the split, the hash goes in anyway (an over-full leaf).
            if let Some(id) = self.block(src) {
                // xfs_dir2_leafn_rebalance: the upper half moves to the new block.
                let left = &mut self.leaves[li];
                let moved = left.hashes.split_off(LEAF_MAX / 2);
                out.push((left.id, 1));
                out.push((id, chunks(0, HDR + ENT * moved.len() as u32)));
                self.leaves.insert(li + 1, Leaf { id, hashes: moved });
                // xfs_da3_node_add after the old leaf's entry, which fixhashpath updates.
                let first = HDR + ENT * li as u32;
                out.push((self.node, 1 | chunks(first, HDR + ENT * self.leaves.len() as u32)));
                if self.leaves[li].hashes.last().is_some_and(|&h| h < hash) {
                    li += 1;
                }
            }
        }
        let leaf = &mut self.leaves[li];
        let idx = leaf.hashes.partition_point(|&h| h < hash);
        let last = idx == leaf.hashes.len();
        leaf.hashes.insert(idx, hash);
        let end = (HDR + ENT * leaf.hashes.len() as u32).min(BLOCK);
        out.push((leaf.id, 1 | chunks((HDR + ENT * idx as u32).min(BLOCK - 1), end)));
        if last {
            let e = HDR + ENT * li as u32;
            out.push((self.node, chunks(e, e + ENT)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fresh(u32);
    impl BlockSource for Fresh {
        fn new_block(&mut self) -> Option<u32> {
            self.0 += 1;
            Some(self.0)
        }
    }

    #[test]
    fn hash_and_entry_sizes_follow_the_kernel() {
        // xfs_da_hashname of "a" is 'a'; of "ab", 'a' << 7 ^ 'b'.
        assert_eq!(xfs_da_hashname(b"a"), 0x61);
        assert_eq!(xfs_da_hashname(b"ab"), 0x61 << 7 ^ 0x62);
        assert_eq!(xfs_da_hashname(b"abcd"), 0x61 << 21 ^ 0x62 << 14 ^ 0x63 << 7 ^ 0x64);
        // "f123" takes 16 bytes, "f1234" 24 (12 + namelen, 8-aligned).
        assert_eq!(xfs_dir2_data_entsize(4), 16);
        assert_eq!(xfs_dir2_data_entsize(5), 24);
        assert_eq!(chunks(0, 64), 1);
        assert_eq!(chunks(120, 136), 0b11);
        assert_eq!(chunks(4094, 4096), 1 << 31);
    }

    #[test]
    fn a_growing_directory_fills_data_blocks_and_splits_leaves() {
        let mut d = Dir::new(vec![]);
        let mut src = Fresh(100);
        let mut out = Vec::new();
        for n in 0..20_000u32 {
            out.clear();
            assert!(d.add(format!("f{n}").as_bytes(), &mut src, &mut out));
        }
        assert_eq!(d.entries, 20_000);
        // 4032 usable bytes per data block: 252 names of 16 bytes, then 168 of 24.
        let data_blocks = d.data_index + 1;
        assert!((105..=125).contains(&data_blocks), "{data_blocks}");
        // Leaves split in halves: between half and all of LEAF_MAX entries each.
        assert!(d.leaves.iter().all(|l| l.hashes.len() >= LEAF_MAX / 2 && l.hashes.len() <= LEAF_MAX));
        assert!(d.leaves.windows(2).all(|w| w[0].hashes.last() <= w[1].hashes.first()));
        let total: usize = d.leaves.iter().map(|l| l.hashes.len()).sum();
        assert_eq!(total, 20_000);
    }

    #[test]
    fn a_full_directory_starts_over_in_its_own_blocks() {
        let mut d = Dir::new(vec![1, 2, 3, 4]);
        let mut src = Fresh(100);
        let mut out = Vec::new();
        for n in 0..DIR_CAP {
            assert!(d.add(format!("f{n}").as_bytes(), &mut src, &mut out));
        }
        let blocks = d.blocks.clone();
        assert!(blocks.len() > 300, "{}", blocks.len());
        assert_eq!(d.rotations, 0);
        // The next directory takes the same names into the same blocks: nothing new.
        for n in 0..DIR_CAP {
            assert!(d.add(format!("f{n}").as_bytes(), &mut src, &mut out));
        }
        assert_eq!(d.rotations, 1);
        assert_eq!(d.blocks, blocks);
    }
}
