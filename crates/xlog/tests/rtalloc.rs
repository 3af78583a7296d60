//! The realtime summary cache (source thread 004): same extents with the cache off and on, far fewer
//! summary block reads with it on a fragmented device. Near-allocations keep one minlen per
//! run: with mixed minlens the 5.0–6.6 cache can choose differently (see the unit test
//! `a_larger_minlen_search_lifts_the_cache_past_unread_levels`).

use proptest::prelude::*;
use xlog::rtalloc::{fragmented_run, RtAlloc, RtGeometry};

#[test]
fn fragmented_device_reads_a_tenth_of_the_summary_blocks_with_the_cache() {
    let (off, a) = fragmented_run(false, 7, 8000);
    let (on, b) = fragmented_run(true, 7, 8000);
    assert_eq!(a, b, "the cache must not change which extents are chosen");
    assert!(a.iter().filter(|x| x.is_some()).count() > 7600);
    assert!(on.cache_is_lower_bound());
    assert!(
        on.summary_reads() * 10 <= off.summary_reads(),
        "summary reads: {} with the cache, {} without",
        on.summary_reads(),
        off.summary_reads()
    );
}

#[derive(Clone, Debug)]
enum Op {
    Near { target: u64, maxlen: u64 },
    Size { minlen: u64, maxlen: u64 },
    Free { pick: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..1 << 18, 0u64..64).prop_map(|(target, extra)| Op::Near { target, maxlen: 4 + extra }),
        1 => (1u64..8, 0u64..32).prop_map(|(minlen, extra)| Op::Size { minlen, maxlen: minlen + extra }),
        1 => (0usize..1000).prop_map(|pick| Op::Free { pick }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn same_extents_with_the_cache_off_and_on(minlen in 1u64..5, ops in prop::collection::vec(op(), 1..300)) {
        let geo = RtGeometry { rextents: 1 << 18, blocksize: 512 };
        let mut off = RtAlloc::new(geo, false);
        let mut on = RtAlloc::new(geo, true);
        let mut live = Vec::new();
        for o in &ops {
            match *o {
                Op::Near { target, maxlen } => {
                    let a = off.allocate_near(target, minlen, maxlen);
                    let b = on.allocate_near(target, minlen, maxlen);
                    prop_assert_eq!(a, b);
                    if let Some(x) = a { live.push(x); }
                }
                Op::Size { minlen, maxlen } => {
                    let a = off.allocate_size(minlen, maxlen);
                    prop_assert_eq!(a, on.allocate_size(minlen, maxlen));
                    if let Some(x) = a { live.push(x); }
                }
                Op::Free { pick } if !live.is_empty() => {
                    let (s, l) = live.swap_remove(pick % live.len());
                    off.free_range(s, l);
                    on.free_range(s, l);
                }
                Op::Free { .. } => {}
            }
            prop_assert_eq!(off.free_runs(), on.free_runs());
        }
        prop_assert!(on.summary_reads() <= off.summary_reads());
    }
}
