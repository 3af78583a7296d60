//! The per-mount counters in `/sys/fs/xfs/<dev>/stats/stats` (the `/proc/fs/xfs/stat` lines,
//! for one filesystem): what XFS itself counted, before and after a run.

/// The counters a run compares (`struct xfsstats`, fs/xfs/xfs_stats.h).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XfsStats {
    /// `trans`: xs_trans_sync, xs_trans_async, xs_trans_empty.
    pub trans_sync: u64,
    pub trans_async: u64,
    pub trans_empty: u64,
    /// `log`: xs_log_writes (iclog writes), xs_log_blocks (512-byte blocks written),
    /// xs_log_noiclogs, xs_log_force, xs_log_force_sleep.
    pub log_writes: u64,
    pub log_blocks: u64,
    pub log_noiclogs: u64,
    pub log_force: u64,
    pub log_force_sleep: u64,
    /// `push_ail`: xs_push_ail (xfsaild passes) and xs_push_ail_flush (log forces xfsaild made
    /// for pinned items), the 3rd and 10th fields; 0 where the line is missing.
    pub push_ail: u64,
    pub push_ail_flush: u64,
    /// ... and the items its passes met pinned (xs_push_ail_pinned, the 6th field).
    pub push_ail_pinned: u64,
    /// `buf`: xb_get_read, the 9th field: metadata buffers read from the disk (a cache miss).
    pub buf_reads: u64,
}

impl XfsStats {
    pub fn parse(text: &str) -> Result<XfsStats, String> {
        let line = |name: &str| -> Result<Vec<u64>, String> {
            let l = text
                .lines()
                .find(|l| l.split_whitespace().next() == Some(name))
                .ok_or_else(|| format!("xfs stats: no '{name}' line"))?;
            l.split_whitespace()
                .skip(1)
                .map(|v| v.parse().map_err(|_| format!("xfs stats: bad '{name}' line: {l}")))
                .collect()
        };
        let (t, g) = (line("trans")?, line("log")?);
        let p = line("push_ail").unwrap_or_default();
        let b = line("buf").unwrap_or_default();
        if t.len() < 3 || g.len() < 5 {
            return Err("xfs stats: short 'trans' or 'log' line".into());
        }
        Ok(XfsStats {
            trans_sync: t[0],
            trans_async: t[1],
            trans_empty: t[2],
            log_writes: g[0],
            log_blocks: g[1],
            log_noiclogs: g[2],
            log_force: g[3],
            log_force_sleep: g[4],
            push_ail: p.get(2).copied().unwrap_or(0),
            push_ail_flush: p.get(9).copied().unwrap_or(0),
            push_ail_pinned: p.get(5).copied().unwrap_or(0),
            buf_reads: b.get(8).copied().unwrap_or(0),
        })
    }

    /// What happened between `before` and `self`.
    pub fn since(&self, before: &XfsStats) -> XfsStats {
        XfsStats {
            trans_sync: self.trans_sync - before.trans_sync,
            trans_async: self.trans_async - before.trans_async,
            trans_empty: self.trans_empty - before.trans_empty,
            log_writes: self.log_writes - before.log_writes,
            log_blocks: self.log_blocks - before.log_blocks,
            log_noiclogs: self.log_noiclogs - before.log_noiclogs,
            log_force: self.log_force - before.log_force,
            log_force_sleep: self.log_force_sleep - before.log_force_sleep,
            push_ail: self.push_ail.saturating_sub(before.push_ail),
            push_ail_flush: self.push_ail_flush.saturating_sub(before.push_ail_flush),
            push_ail_pinned: self.push_ail_pinned.saturating_sub(before.push_ail_pinned),
            buf_reads: self.buf_reads.saturating_sub(before.buf_reads),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_trans_and_log_lines_as_6_18_prints_them() {
        let before =
            XfsStats::parse("extent_alloc 209 251 0 0\ntrans 0 1208 0\nlog 5 256 0 5 4\npush_ail 1 2\n").unwrap();
        let after = XfsStats::parse("trans 0 9339 0\nlog 15 4935 1 6 6\n").unwrap();
        let d = after.since(&before);
        assert_eq!((d.trans_async, d.log_writes, d.log_blocks, d.log_noiclogs, d.log_force), (8131, 10, 4679, 1, 1));
        assert!(XfsStats::parse("trans 1 2\nlog 1 2 3 4 5").is_err());
        // The push_ail line as 6.18 prints it (10 fields): passes third, log forces tenth.
        let p = |x: &str| XfsStats::parse(&format!("trans 0 0 0\nlog 0 0 0 0 0\n{x}")).unwrap();
        let d = p("push_ail 279328483 630922 164919 13091427 0 2494890 1510139 8392821 0 42336")
            .since(&p("push_ail 279255763 630252 164892 13086349 0 2494686 1509533 8388959 0 42334"));
        assert_eq!((d.push_ail, d.push_ail_flush, d.push_ail_pinned), (27, 2, 204));
        // The buf line as 6.18 prints it (9 fields): buffers read from the disk last.
        let d = p("buf 807291133 17677050 789623713 758152994 92409 17667320 5 0 397690")
            .since(&p("buf 807291033 17677050 789623713 758152994 92409 17667320 5 0 397680"));
        assert_eq!(d.buf_reads, 10);
        assert!(XfsStats::parse("log 1 2 3 4 5").unwrap_err().contains("'trans'"));
    }
}
