//! CRC32C (Castagnoli) for record checksums: the `crc32c` crate natively (the CPU's CRC
//! instruction); in the browser, sixteen CRC registers in the lanes of a wasm SIMD vector
//! run over sixteen parts of a buffer and are joined by multiplying in GF(2).
//!
//! Why: wasm has no CRC or carry-less multiply instruction, and a table-driven CRC pays a
//! table load per byte (the crate's fallback spent 12% of the browser's benchmark, three
//! interleaved slice-by-8 chains 9%). Nibble tables fit a 16-byte shuffle, so one step of all
//! sixteen lanes is eight shuffles. The joining is zlib's `crc32_combine` arithmetic
//! (`multmodp`, `x2nmodp`) for the Castagnoli polynomial; short buffers and tails take a
//! slice-by-8 chain.
// Natively only the tests run the software CRC.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

/// The reflected Castagnoli polynomial.
const POLY: u32 = 0x82F6_3B78;

/// `TABLES[k][b]`: the CRC register after byte `b` then `k` zero bytes (slice-by-8).
const TABLES: [[u32; 256]; 8] = tables();

const fn tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut j = 1;
    while j < 8 {
        let mut i = 0;
        while i < 256 {
            let c = t[j - 1][i];
            t[j][i] = (c >> 8) ^ t[0][(c & 0xff) as usize];
            i += 1;
        }
        j += 1;
    }
    t
}

/// `X2N[k]`: x^(2^k) modulo the polynomial (reflected), for shifting a register by zeros.
const X2N: [u32; 32] = x2n();

const fn multmodp(a: u32, mut b: u32) -> u32 {
    let (mut m, mut p) = (1u32 << 31, 0u32);
    while m != 0 {
        if a & m != 0 {
            p ^= b;
        }
        m >>= 1;
        b = if b & 1 != 0 { (b >> 1) ^ POLY } else { b >> 1 };
    }
    p
}

const fn x2n() -> [u32; 32] {
    let mut t = [0u32; 32];
    let mut p = 1u32 << 30; // x^1
    let mut k = 0;
    while k < 32 {
        t[k] = p;
        p = multmodp(p, p);
        k += 1;
    }
    t
}

/// The register `r` after `n` zero bytes: r * x^(8n).
fn shift_zero_bytes(r: u32, n: usize) -> u32 {
    let (mut p, mut n, mut k) = (1u32 << 31, n as u64, 3);
    while n != 0 {
        if n & 1 != 0 {
            p = multmodp(X2N[k & 31], p);
        }
        n >>= 1;
        k += 1;
    }
    multmodp(p, r)
}

#[inline(always)]
fn word8(r: u32, w: &[u8]) -> u32 {
    let x = u64::from_le_bytes(w.try_into().expect("8 bytes")) ^ r as u64;
    let t = |k: usize, s: u32| TABLES[k][(x >> s) as u8 as usize];
    t(7, 0) ^ t(6, 8) ^ t(5, 16) ^ t(4, 24) ^ t(3, 32) ^ t(2, 40) ^ t(1, 48) ^ t(0, 56)
}

fn bytes(r: u32, data: &[u8]) -> u32 {
    data.iter().fold(r, |r, &b| TABLES[0][((r ^ b as u32) & 0xff) as usize] ^ (r >> 8))
}

/// The register after `data`, from register `r` (no conditioning): slice-by-8.
fn register(r: u32, data: &[u8]) -> u32 {
    let words = data.chunks_exact(8);
    let tail = words.remainder();
    bytes(words.fold(r, word8), tail)
}

/// Sixteen CRC registers side by side, one per lane of a 128-bit vector, kept as four byte
/// planes (`p[k]` holds byte `k` of every lane's register). One step takes one byte per lane:
/// the byte table is split into a low- and a high-nibble table (the CRC is linear), and each
/// nibble table's bytes fit a 16-entry vector shuffle, so a step is 8 shuffles for 16 bytes
/// where the scalar CRC does 16 table loads.
trait Lanes: Copy {
    fn load(b: &[u8]) -> Self;
    fn splat(b: u8) -> Self;
    fn from_bytes(b: [u8; 16]) -> Self;
    fn to_bytes(self) -> [u8; 16];
    fn xor(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    fn shr4(self) -> Self;
    /// `out[i] = self[idx[i]]`, indices below 16.
    fn swizzle(self, idx: Self) -> Self;
    /// Interleave the low (`HI` false) or high halves of `a` and `b` in units of `W` bytes.
    fn unpack<const W: usize, const HI: bool>(a: Self, b: Self) -> Self;
}

/// The portable lanes: the tests check the algorithm with these natively.
impl Lanes for [u8; 16] {
    fn load(b: &[u8]) -> Self {
        b[..16].try_into().expect("16 bytes")
    }
    fn splat(b: u8) -> Self {
        [b; 16]
    }
    fn from_bytes(b: [u8; 16]) -> Self {
        b
    }
    fn to_bytes(self) -> [u8; 16] {
        self
    }
    fn xor(self, o: Self) -> Self {
        std::array::from_fn(|i| self[i] ^ o[i])
    }
    fn and(self, o: Self) -> Self {
        std::array::from_fn(|i| self[i] & o[i])
    }
    fn shr4(self) -> Self {
        self.map(|b| b >> 4)
    }
    fn swizzle(self, idx: Self) -> Self {
        idx.map(|i| self[i as usize])
    }
    fn unpack<const W: usize, const HI: bool>(a: Self, b: Self) -> Self {
        let base = if HI { 8 } else { 0 };
        std::array::from_fn(|i| {
            let (unit, within) = (i / W, i % W);
            let src = if unit % 2 == 0 { &a } else { &b };
            src[base + unit / 2 * W + within]
        })
    }
}

#[cfg(target_arch = "wasm32")]
mod v128_lanes {
    use core::arch::wasm32::*;

    #[derive(Clone, Copy)]
    pub struct V(pub v128);

    impl super::Lanes for V {
        #[inline(always)]
        fn load(b: &[u8]) -> Self {
            assert!(b.len() >= 16);
            // SAFETY: 16 bytes are in bounds (checked); v128_load has no alignment need.
            V(unsafe { v128_load(b.as_ptr().cast()) })
        }
        #[inline(always)]
        fn splat(b: u8) -> Self {
            V(u8x16_splat(b))
        }
        #[inline(always)]
        fn from_bytes(b: [u8; 16]) -> Self {
            Self::load(&b)
        }
        #[inline(always)]
        fn to_bytes(self) -> [u8; 16] {
            let mut out = [0u8; 16];
            // SAFETY: `out` is 16 writable bytes.
            unsafe { v128_store(out.as_mut_ptr().cast(), self.0) };
            out
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            V(v128_xor(self.0, o.0))
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            V(v128_and(self.0, o.0))
        }
        #[inline(always)]
        fn shr4(self) -> Self {
            V(u8x16_shr(self.0, 4))
        }
        #[inline(always)]
        fn swizzle(self, idx: Self) -> Self {
            V(u8x16_swizzle(self.0, idx.0))
        }
        #[inline(always)]
        fn unpack<const W: usize, const HI: bool>(a: Self, b: Self) -> Self {
            let (a, b) = (a.0, b.0);
            V(match (W, HI) {
                (1, false) => u8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(a, b),
                (1, true) => u8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(a, b),
                (2, false) => u16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(a, b),
                (2, true) => u16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(a, b),
                (4, false) => u32x4_shuffle::<0, 4, 1, 5>(a, b),
                (4, true) => u32x4_shuffle::<2, 6, 3, 7>(a, b),
                (8, false) => u64x2_shuffle::<0, 2>(a, b),
                _ => u64x2_shuffle::<1, 3>(a, b),
            })
        }
    }

    /// The register after `data` from `r`, sixteen lanes at a time (simd128).
    #[target_feature(enable = "simd128")]
    pub fn register16(r: u32, data: &[u8]) -> u32 {
        super::register16::<V>(r, data)
    }
}

/// Nibble tables: `NIB[k][n]` is byte `k % 4` of `TABLES[0][n]` (k < 4) or of
/// `TABLES[0][n << 4]` (k >= 4): the low and high nibble's share of a byte step.
const NIB: [[u8; 16]; 8] = nibble_tables();

const fn nibble_tables() -> [[u8; 16]; 8] {
    let mut t = [[0u8; 16]; 8];
    let mut k = 0;
    while k < 8 {
        let mut n = 0;
        while n < 16 {
            let index = if k < 4 { n } else { n << 4 };
            t[k][n] = (TABLES[0][index] >> (8 * (k % 4))) as u8;
            n += 1;
        }
        k += 1;
    }
    t
}

/// Rows `r[i]` (lane `i`'s next 16 bytes) to columns (byte `j` of every lane): four rounds of
/// interleaving, in units of 1, 2, 4 and 8 bytes. Written out so that every vector stays in
/// a register (an indexed loop over an array spills them to memory in wasm).
#[inline(always)]
fn transpose<V: Lanes>(r: [V; 16]) -> [V; 16] {
    // Pairs rows 2i and 2i+1 of the previous round's order; the low halves go to the first
    // eight outputs. After four rounds, output o is column bit-reversed(o).
    macro_rules! round {
        ($w:literal, $x:ident) => {{
            let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] = $x;
            [
                V::unpack::<$w, false>(x0, x1),
                V::unpack::<$w, false>(x2, x3),
                V::unpack::<$w, false>(x4, x5),
                V::unpack::<$w, false>(x6, x7),
                V::unpack::<$w, false>(x8, x9),
                V::unpack::<$w, false>(x10, x11),
                V::unpack::<$w, false>(x12, x13),
                V::unpack::<$w, false>(x14, x15),
                V::unpack::<$w, true>(x0, x1),
                V::unpack::<$w, true>(x2, x3),
                V::unpack::<$w, true>(x4, x5),
                V::unpack::<$w, true>(x6, x7),
                V::unpack::<$w, true>(x8, x9),
                V::unpack::<$w, true>(x10, x11),
                V::unpack::<$w, true>(x12, x13),
                V::unpack::<$w, true>(x14, x15),
            ]
        }};
    }
    let a = round!(1, r);
    let b = round!(2, a);
    let c = round!(4, b);
    round!(8, c)
}

/// The register after `data` from `r`: sixteen lanes over sixteen equal parts, joined, then
/// the tail.
#[inline(always)]
fn register16<V: Lanes>(r: u32, data: &[u8]) -> u32 {
    let lane = data.len() / 256 * 16;
    if lane < 64 {
        return register(r, data);
    }
    let nib: [V; 8] = NIB.map(V::from_bytes);
    let low = V::splat(0x0f);
    let plane = |k: usize| {
        let mut b = [0u8; 16];
        b[0] = (r >> (8 * k)) as u8;
        V::from_bytes(b)
    };
    let (mut p0, mut p1, mut p2, mut p3) = (plane(0), plane(1), plane(2), plane(3));
    for block in (0..lane).step_by(16) {
        let row = |i: usize| V::load(&data[i * lane + block..]);
        let rows = [
            row(0),
            row(1),
            row(2),
            row(3),
            row(4),
            row(5),
            row(6),
            row(7),
            row(8),
            row(9),
            row(10),
            row(11),
            row(12),
            row(13),
            row(14),
            row(15),
        ];
        let [c0, c8, c4, c12, c2, c10, c6, c14, c1, c9, c5, c13, c3, c11, c7, c15] = transpose(rows);
        macro_rules! steps {
            ($($col:ident),*) => {$({
                let x = p0.xor($col);
                let (lo, hi) = (x.and(low), x.shr4());
                let step = |k: usize| nib[k].swizzle(lo).xor(nib[k + 4].swizzle(hi));
                (p0, p1, p2, p3) = (p1.xor(step(0)), p2.xor(step(1)), p3.xor(step(2)), step(3));
            })*};
        }
        steps!(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15);
    }
    let p = [p0, p1, p2, p3];
    let b = p.map(V::to_bytes);
    let reg = |i: usize| u32::from_le_bytes([b[0][i], b[1][i], b[2][i], b[3][i]]);
    let shift = shift_zero_bytes(1 << 31, lane); // x^(8 lane)
    let joined = (1..16).fold(reg(0), |acc, i| multmodp(shift, acc) ^ reg(i));
    register(joined, &data[16 * lane..])
}

/// CRC32C of `data` continuing from the CRC `crc` of what came before (`crc32c_append`).
pub fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "wasm32")]
    // simd128 makes the lab's wasm need a browser with wasm SIMD (Chrome 91, Firefox 89,
    // Safari 16.4 and later).
    return !v128_lanes::register16(!crc, data);
    #[cfg(not(target_arch = "wasm32"))]
    crc32c::crc32c_append(crc, data)
}

pub fn crc32c(data: &[u8]) -> u32 {
    crc32c_append(0, data)
}

/// Whether this build's CRC (SIMD in the browser, hardware natively) equals the portable
/// software CRC on buffers of many lengths: the browser's e2e suite asks, since the unit tests
/// run natively only.
pub fn self_check() -> bool {
    let data = noise(0x9E37_79B9_7F4A_7C15, 40_000);
    [0, 1, 255, 1023, 1024, 1025, 4096, 4111, 29_999, 32_768, 39_990].iter().all(|&len| {
        let d = &data[len % 7..len % 7 + len];
        crc32c_append(len as u32, d) == !register(!(len as u32), d)
    })
}

/// `n` bytes of xorshift noise: test data no table or lane split lines up with.
fn noise(mut x: u64, n: usize) -> Vec<u8> {
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The browser's CRC equals the crate's (hardware here) on every length, split point and
    /// starting CRC, long buffers included: the slice-by-8 chain, and the sixteen lanes with
    /// their join and tail.
    #[test]
    fn the_software_crcs_equal_the_crc32c_crate() {
        let data = noise(0x2545_f491_4f6c_dd1d, 70_016);
        let software = |crc: u32, d: &[u8]| !register(!crc, d);
        assert_eq!(software(0, b"123456789"), 0xE306_9283);
        for len in (0..700).chain([4095, 4096, 4097, 32_768, 65_536, 69_999]) {
            for start in [0usize, 1, 7] {
                let d = &data[start..start + len];
                let seed = (len as u32).wrapping_mul(0x9E37_79B9);
                assert_eq!(software(seed, d), crc32c::crc32c_append(seed, d), "len {len} start {start}");
            }
        }
        assert_eq!(crc32c(&data), crc32c::crc32c(&data));
        let sixteen = |crc: u32, d: &[u8]| !register16::<[u8; 16]>(!crc, d);
        for len in (0..300).map(|l| l * 233).chain([1023, 1024, 1025, 4096, 32_768, 65_536, 69_999]) {
            for start in [0usize, 1, 5] {
                let d = &data[start..start + len];
                let seed = (len as u32).wrapping_mul(0x9E37_79B9);
                assert_eq!(sixteen(seed, d), crc32c::crc32c_append(seed, d), "16 lanes: len {len} start {start}");
            }
        }
    }
}
