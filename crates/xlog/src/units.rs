//! Fixed-width units shared by every module: virtual time, LSNs, grant-head values, sizes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Virtual time in nanoseconds. The model never reads a wall clock.
pub type Ns = u64;

/// A simulated task: writers are 0..writers, kernel threads have fixed ids (`sim::tasks`).
pub type TaskId = u32;

pub const NS_PER_US: Ns = 1_000;
pub const NS_PER_MS: Ns = 1_000_000;
pub const NS_PER_SEC: Ns = 1_000_000_000;

/// `BBSIZE`: the 512-byte basic block every log offset is counted in.
pub const BBSIZE: u32 = 512;

/// `BTOBB`: bytes to basic blocks, rounding up.
pub const fn btobb(bytes: u64) -> u64 {
    bytes.div_ceil(BBSIZE as u64)
}

/// `XLOG_HEADER_MAGIC_NUM`: never a valid cycle number.
pub const XLOG_HEADER_MAGIC_NUM: u32 = 0xFEED_BABE;

/// Log sequence number: `(cycle << 32) | block`, block counted in 512-byte units.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Lsn(pub u64);

impl Lsn {
    pub const ZERO: Lsn = Lsn(0);
    pub const fn new(cycle: u32, block: u32) -> Lsn {
        Lsn(((cycle as u64) << 32) | block as u64)
    }
    /// `CYCLE_LSN`
    pub const fn cycle(self) -> u32 {
        (self.0 >> 32) as u32
    }
    /// `BLOCK_LSN`
    pub const fn block(self) -> u32 {
        self.0 as u32
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// Blocks written since 0:0 in a log of `log_bb` blocks: LSN distances across wraps.
    pub const fn linear(self, log_bb: u32) -> u64 {
        self.cycle() as u64 * log_bb as u64 + self.block() as u64
    }
}

impl fmt::Debug for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.cycle(), self.block())
    }
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.cycle(), self.block())
    }
}

/// Next cycle number, skipping the header magic as the kernel does.
pub const fn next_cycle(cycle: u32) -> u32 {
    let c = cycle.wrapping_add(1);
    if c == XLOG_HEADER_MAGIC_NUM {
        c + 1
    } else {
        c
    }
}

/// Parses "64MiB", "220GiB", "4096", "32k" into bytes.
pub fn parse_size(field: &str, text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        format!("{field}: '{text}' is not a size (use a number with an optional KiB/MiB/GiB/TiB suffix)")
    })?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("{field}: '{text}' has an unknown unit '{unit}' (allowed: B, KiB, MiB, GiB, TiB)")),
    };
    n.checked_mul(mult).ok_or_else(|| format!("{field}: '{text}' is too large"))
}

/// Formats bytes with the largest binary unit that divides them exactly.
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}")
}

/// Parses "10s", "250ms", "30us", "5000ns", "1.5s" into nanoseconds.
pub fn parse_duration(field: &str, text: &str) -> Result<Ns, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || format!("{field}: '{text}' is not a duration (e.g. 10s, 250ms, 50us)");
    let mult: u64 = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => NS_PER_US,
        "ms" => NS_PER_MS,
        "s" | "" => NS_PER_SEC,
        "min" => 60 * NS_PER_SEC,
        _ => return Err(bad()),
    };
    // Integer arithmetic on the two halves keeps native and wasm identical.
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    if whole.is_empty() && frac.is_empty() {
        return Err(bad());
    }
    let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
    let mut ns = whole.checked_mul(mult).ok_or_else(bad)?;
    let mut scale = mult;
    for d in frac.chars() {
        scale /= 10;
        ns = ns.checked_add(d.to_digit(10).ok_or_else(bad)? as u64 * scale).ok_or_else(bad)?;
    }
    Ok(ns)
}

pub fn format_duration(ns: Ns) -> String {
    if ns.is_multiple_of(NS_PER_SEC) {
        format!("{}s", ns / NS_PER_SEC)
    } else if ns.is_multiple_of(NS_PER_MS) {
        format!("{}ms", ns / NS_PER_MS)
    } else if ns.is_multiple_of(NS_PER_US) {
        format!("{}us", ns / NS_PER_US)
    } else {
        format!("{ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsn_packs_cycle_and_block() {
        let l = Lsn::new(75, 10448);
        assert_eq!(l.cycle(), 75);
        assert_eq!(l.block(), 10448);
        assert!(Lsn::new(2, 0) > Lsn::new(1, 9999));
    }

    #[test]
    fn cycle_skips_magic() {
        assert_eq!(next_cycle(XLOG_HEADER_MAGIC_NUM - 1), XLOG_HEADER_MAGIC_NUM + 1);
    }

    #[test]
    fn sizes_and_durations_parse() {
        assert_eq!(parse_size("log_size", "64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("fs_size", "220GiB").unwrap(), 220 << 30);
        assert!(parse_size("fs_size", "22OGiB").unwrap_err().contains("fs_size"));
        assert_eq!(parse_duration("duration", "1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("duration", "250ms").unwrap(), 250_000_000);
        assert!(parse_duration("duration", "ten").is_err());
        // Found by the link fuzzer: the whole part fits u64, the fraction takes it over.
        assert_eq!(parse_duration("duration", "18446744073.709551615s").unwrap(), u64::MAX);
        assert!(parse_duration("at", "18446744073.709551616s").unwrap_err().contains("at"));
        assert_eq!(format_size(64 << 20), "64MiB");
        assert_eq!(format_duration(250 * NS_PER_MS), "250ms");
    }
}
