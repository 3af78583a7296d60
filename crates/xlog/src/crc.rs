//! CRC32C (Castagnoli) for record checksums: the `crc32c` crate natively (the CPU's CRC
//! instruction), and in the browser a software CRC that runs three table-driven chains over
//! three parts of a buffer at once and joins them by multiplying in GF(2).
//!
//! Why: wasm has no CRC or carry-less multiply instruction, and one slice-by-8 chain waits
//! on each table load before the next word (the crate's fallback spent 12% of the browser's
//! benchmark there). Three independent chains keep the loads overlapped. The joining is
//! zlib's `crc32_combine` arithmetic (`multmodp`, `x2nmodp`) for the Castagnoli polynomial.
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

/// The register after `data`, from register `r` (no conditioning).
fn register(r: u32, data: &[u8]) -> u32 {
    const LANES: usize = 3;
    let lane = data.len() / (8 * LANES) * 8;
    if lane < 64 {
        let words = data.chunks_exact(8);
        let tail = words.remainder();
        return bytes(words.fold(r, word8), tail);
    }
    let (a, rest) = data.split_at(lane);
    let (b, rest) = rest.split_at(lane);
    let (c, tail) = rest.split_at(lane);
    let (mut ra, mut rb, mut rc) = (r, 0, 0);
    for ((wa, wb), wc) in a.chunks_exact(8).zip(b.chunks_exact(8)).zip(c.chunks_exact(8)) {
        ra = word8(ra, wa);
        rb = word8(rb, wb);
        rc = word8(rc, wc);
    }
    // R(r, A||B) = R(r, A) * x^(8|B|) + R(0, B): the register is linear in its start.
    let joined = shift_zero_bytes(shift_zero_bytes(ra, lane) ^ rb, lane) ^ rc;
    register(joined, tail)
}

/// CRC32C of `data` continuing from the CRC `crc` of what came before (`crc32c_append`).
pub fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "wasm32")]
    return !register(!crc, data);
    #[cfg(not(target_arch = "wasm32"))]
    crc32c::crc32c_append(crc, data)
}

pub fn crc32c(data: &[u8]) -> u32 {
    crc32c_append(0, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The browser's CRC equals the crate's (hardware here) on every length, split point and
    /// starting CRC, long buffers included: three lanes, their join and the tail.
    #[test]
    fn the_three_lane_crc_equals_the_crc32c_crate() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let data: Vec<u8> = (0..70_016)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
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
    }
}
