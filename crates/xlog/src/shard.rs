//! A deterministic share of an exploration's work items (crash points, sweep cells) for
//! one of N processes: `--shard K/N`, K from 1, item `i` to shard `i mod N`.
//!
//! Items are dealt round robin rather than in contiguous blocks: a crash point late in a run
//! costs more (a longer run to reach it, a bigger log to recover) than an early one, so
//! dealing spreads the cost evenly over the shards.

use std::fmt;

/// Shard `k` of `n` (1 <= k <= n).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shard {
    k: u32,
    n: u32,
}

/// Most shards one exploration may be dealt to.
pub const SHARDS_MAX: u32 = 1_000_000;

impl Shard {
    /// The whole: one shard of one.
    pub const ALL: Shard = Shard { k: 1, n: 1 };

    pub fn new(k: u32, n: u32) -> Result<Shard, String> {
        if n == 0 || n > SHARDS_MAX {
            return Err(format!("--shard: N is {n}, out of range (allowed: 1 to {SHARDS_MAX})"));
        }
        if k == 0 || k > n {
            return Err(format!("--shard: K is {k}, out of range for N = {n} (allowed: 1 to {n}; K counts from 1)"));
        }
        Ok(Shard { k, n })
    }

    /// Parses `K/N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let shown: String = text.chars().take(40).collect();
        let bad = || format!("--shard: '{shown}' is not K/N (two whole numbers, 1 <= K <= N, e.g. 2/8)");
        let (k, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let num = |s: &str| -> Result<u32, String> {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            // More digits than fit are out of range, not malformed.
            Ok(s.parse::<u32>().unwrap_or(u32::MAX))
        };
        Shard::new(num(k)?, num(n)?)
    }

    /// K, from 1.
    pub fn k(self) -> u32 {
        self.k
    }

    /// N.
    pub fn n(self) -> u32 {
        self.n
    }

    /// Whether item `i` (from 0) is this shard's.
    pub fn owns(self, i: u64) -> bool {
        i % self.n as u64 == (self.k - 1) as u64
    }

    /// How many of `total` items are this shard's.
    pub fn count_of(self, total: u64) -> u64 {
        let (n, k) = (self.n as u64, (self.k - 1) as u64);
        total / n + u64::from(total % n > k)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_deal_every_item_to_exactly_one() {
        for n in 1..=7u32 {
            for total in 0..30u64 {
                let mut seen = vec![0; total as usize];
                for k in 1..=n {
                    let s = Shard::new(k, n).unwrap();
                    let mine: Vec<u64> = (0..total).filter(|&i| s.owns(i)).collect();
                    assert_eq!(mine.len() as u64, s.count_of(total), "{s} of {total}");
                    for i in mine {
                        seen[i as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&c| c == 1), "n {n} total {total}: {seen:?}");
            }
        }
    }

    #[test]
    fn bad_shards_are_named() {
        assert_eq!(Shard::parse("2/8"), Ok(Shard { k: 2, n: 8 }));
        assert_eq!(Shard::parse("1/1"), Ok(Shard::ALL));
        assert_eq!(Shard::parse("2/8").unwrap().to_string(), "2/8");
        let e = Shard::parse("0/4").unwrap_err();
        assert!(e.contains("K is 0") && e.contains("1 to 4"), "{e}");
        let e = Shard::parse("5/4").unwrap_err();
        assert!(e.contains("K is 5") && e.contains("1 to 4"), "{e}");
        for bad in ["a/b", "3", "", "1/", "/4", "-1/4", "1.5/4", "1/4/2"] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.starts_with("--shard: '") && e.contains("is not K/N"), "{bad}: {e}");
        }
        assert!(Shard::parse("1/0").unwrap_err().contains("N is 0"));
        assert!(Shard::parse("1/99999999999999999999").unwrap_err().contains("out of range"));
        // A long value is not echoed whole.
        assert!(Shard::parse(&"9".repeat(9000)).unwrap_err().len() < 200);
        assert!(Shard::parse(&"x".repeat(9000)).unwrap_err().len() < 200);
    }
}
