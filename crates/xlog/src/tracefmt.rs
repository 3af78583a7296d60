//! Trace events printed as `trace-cmd show` prints the kernel's tracepoints (facts sheet §8),
//! so that awk pipelines written for real traces work on ours. Events the kernel has no
//! tracepoint for (CIL push start, checkpoint done) print as `loglab_*` events.

use crate::grant::XLOG_TIC_PERM_RESERV;
use crate::iclog::icl_flags_str;
use crate::scenario::{Scenario, WorkloadKind};
use crate::sim::tasks::{TASK_IOEND, TASK_LOG_WORKER, TASK_PUSH_BASE, TASK_XFSAILD};
use crate::trace::{GrantEvent, TraceEvent, TraceKind};
use crate::units::{Lsn, NS_PER_SEC};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Block device numbers: the data device and an external log device.
const DEVS: [(u32, u32); 2] = [(8, 16), (8, 32)];
/// Simulated CPUs: tasks are spread over them by id.
const NCPUS: u32 = 4;

/// The header `trace-cmd show` prints before the events.
pub fn trace_cmd_header(entries: u64) -> String {
    format!(
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: {entries}/{entries}   #P:{NCPUS}\n#\n\
         #                              _-----=> irqs-off\n\
         #                             / _----=> need-resched\n\
         #                            | / _---=> hardirq/softirq\n\
         #                            || / _--=> preempt-depth\n\
         #                            ||| /     delay\n\
         #           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n\
         #              | |       |   ||||       |         |\n"
    )
}

/// `comm` and pid of a model task, named like the kernel threads that do that work.
fn task_name(task: u32, writer_comm: &str) -> (String, u32) {
    match task {
        TASK_XFSAILD => ("xfsaild/sdb".into(), 412),
        TASK_LOG_WORKER => ("kworker/0:1H".into(), 97),
        TASK_IOEND => ("kworker/1:1H".into(), 98),
        t if t >= TASK_PUSH_BASE => (format!("kworker/u8:{}", t - TASK_PUSH_BASE), 200 + t - TASK_PUSH_BASE),
        w => (writer_comm.to_string(), 2000 + w),
    }
}

fn lsn_slash(l: Lsn) -> String {
    format!("{}/{}", l.cycle(), l.block())
}

fn lip(item: u32) -> String {
    // %p prints a hashed pointer; ours is stable per item.
    format!("{:016x}", 0x0000_0000_1000_0000u64 + item as u64 * 0x1c0)
}

/// `__print_flags(t_flags, "|", XLOG_TIC_FLAGS)` as the 5.4–5.7 kernels of the source thread 003 trace
/// print it: every ticket carries XLOG_TIC_INITED there. Newer kernels print an empty field
/// for the CIL ticket, which moves the grant reserve cycle from awk's $23 to $22.
fn tic_flags(flags: u32) -> String {
    if flags & XLOG_TIC_PERM_RESERV != 0 {
        "XLOG_TIC_INITED|XLOG_TIC_PERM_RESERV".into()
    } else {
        "XLOG_TIC_INITED".into()
    }
}

/// Formats one simulation's events; remembers submitted requests so completions can be printed.
#[derive(Clone, Debug, Default)]
pub struct TraceCmdPrinter {
    writer_comm: String,
    requests: BTreeMap<(u8, u64), (u64, u32, String)>,
    /// Events as this machine's 6.18 kernel prints them (see `kernel_6_18`), for a log of
    /// this many bytes.
    kernel_6_18: Option<u64>,
}

impl TraceCmdPrinter {
    /// `writer_comm` names the writer tasks (e.g. `fs_mark`, `xfs_io`).
    pub fn new(writer_comm: &str) -> TraceCmdPrinter {
        TraceCmdPrinter {
            writer_comm: writer_comm.chars().take(15).collect(),
            requests: BTreeMap::new(),
            kernel_6_18: None,
        }
    }

    /// Events as 6.18 prints them: block events carry the I/O priority before the command name
    /// (`be,0,4`; `none,0,0` for a flush), a flush request is `FF`, and `xfs_log_assign_tail_lsn`
    /// says `head lsn` where 5.x said `last sync`. The default is the seed traces' 5.x format,
    /// whose awk columns course material counts.
    ///
    /// The grant events follow 6.11's "grant heads track byte counts, not LSNs": a ticket
    /// address, `tail space`, and each grant head as the bytes from the tail to it, with no
    /// cycle. Model: the kernel's `tail space` runs from the tail to the AIL's head LSN; the
    /// model prints the bytes from the tail to the log's current head block.
    pub fn kernel_6_18(mut self, log_bytes: u64) -> TraceCmdPrinter {
        self.kernel_6_18 = Some(log_bytes);
        self
    }

    /// One `trace-cmd show` line, or `None` for events with no text form.
    pub fn line(&mut self, ev: &TraceEvent) -> Option<String> {
        self.line_if(ev, |_| true)
    }

    /// The line only if `keep(event name)`; skipped events cost no formatting.
    pub fn line_if(&mut self, ev: &TraceEvent, keep: impl Fn(&str) -> bool) -> Option<String> {
        if let TraceKind::DevSubmit { dev, id, sector, bytes, preflush, fua, flush, read } = ev.kind {
            // Remembered even when not printed: its completion may be wanted.
            self.requests.insert((dev, id), (sector, bytes / 512, rwbs(preflush, fua, flush, read)));
        }
        if !keep(event_name(&ev.kind)) {
            return None;
        }
        let (event, body) = self.body(ev)?;
        let (comm, pid) = task_name(ev.task, &self.writer_comm);
        let cpu = ev.task % NCPUS;
        let secs = ev.t_ns / NS_PER_SEC;
        let usecs = (ev.t_ns % NS_PER_SEC) / 1000;
        Some(format!("{comm:>16}-{pid:<5} [{cpu:03}] ...1 {secs:>5}.{usecs:06}: {event}: {body}"))
    }

    fn body(&mut self, ev: &TraceEvent) -> Option<(&'static str, String)> {
        let dev = |d: u8| DEVS[(d as usize).min(1)];
        let (maj, min) = dev(0);
        let devs = format!("dev {maj}:{min}");
        Some(match &ev.kind {
            TraceKind::Grant { event, ticket: t, log } if self.kernel_6_18.is_some() => {
                let log_bytes = self.kernel_6_18.unwrap_or(0);
                let tail = (log.tail.cycle() as u64, log.tail.block() as u64 * 512);
                // Bytes from the tail to a head (cycle, byte offset) one cycle ahead at most.
                let from_tail = |cycle: u64, bytes: u64| {
                    if cycle > tail.0 {
                        (log_bytes - tail.1) + bytes
                    } else {
                        bytes.saturating_sub(tail.1)
                    }
                };
                let perm = if t.flags & XLOG_TIC_PERM_RESERV != 0 { "XLOG_TIC_PERM_RESERV" } else { "" };
                // xfs_log_cil_wait traces the CIL context's ticket: one address for every
                // waiter, and since 6.x's per-CPU space accounting its reservation reaches the
                // ticket only at push time, so 6.18 prints t_curr_res 0 (seen on this kernel).
                let (tic, curr_res) =
                    if *event == GrantEvent::CilWait { (0xc11c_0000, 0) } else { (ev.task, t.curr_res) };
                (
                    event.name(),
                    format!(
                        "{devs} tic 0xffff8880{:08x} t_ocnt {} t_cnt {} t_curr_res {} t_unit_res {} t_flags {perm} \
                         reserveq {} writeq {} tail space {} grant_reserve_bytes {} grant_write_bytes {} \
                         curr_cycle {} curr_block {} tail_cycle {} tail_block {}",
                        tic,
                        t.ocnt,
                        t.cnt,
                        curr_res,
                        t.unit_res,
                        if log.reserveq_active { "active" } else { "empty" },
                        if log.writeq_active { "active" } else { "empty" },
                        from_tail(log.curr_cycle as u64, log.curr_block as u64 * 512),
                        from_tail(log.reserve.cycle as u64, log.reserve.bytes as u64),
                        from_tail(log.write.cycle as u64, log.write.bytes as u64),
                        log.curr_cycle,
                        log.curr_block,
                        log.tail.cycle(),
                        log.tail.block()
                    ),
                )
            }
            TraceKind::Grant { event, ticket: t, log } => (
                event.name(),
                format!(
                    "{devs} t_ocnt {} t_cnt {} t_curr_res {} t_unit_res {} t_flags {} reserveq {} writeq {} \
                     grant_reserve_cycle {} grant_reserve_bytes {} grant_write_cycle {} grant_write_bytes {} \
                     curr_cycle {} curr_block {} tail_cycle {} tail_block {}",
                    t.ocnt,
                    t.cnt,
                    t.curr_res,
                    t.unit_res,
                    tic_flags(t.flags),
                    if log.reserveq_active { "active" } else { "empty" },
                    if log.writeq_active { "active" } else { "empty" },
                    log.reserve.cycle,
                    log.reserve.bytes,
                    log.write.cycle,
                    log.write.bytes,
                    log.curr_cycle,
                    log.curr_block,
                    log.tail.cycle(),
                    log.tail.block()
                ),
            ),
            TraceKind::Iclog { event, state, refcnt, offset, lsn, flags, .. } => (
                event.name(),
                format!(
                    "{devs} state {} refcnt {refcnt} offset {offset} lsn 0x{:x} flags {} caller {}+0x0/0x0",
                    state.kernel_name(),
                    lsn.0,
                    icl_flags_str(*flags),
                    event.caller()
                ),
            ),
            TraceKind::AilInsert { item, inode, old, new } => (
                "xfs_ail_insert",
                format!(
                    "{devs} lip {} old lsn {} new lsn {} type {} flags IN_AIL",
                    lip(*item),
                    lsn_slash(*old),
                    lsn_slash(*new),
                    li_type(*inode)
                ),
            ),
            TraceKind::AilDelete { item, inode, lsn } => (
                "xfs_ail_delete",
                format!(
                    "{devs} lip {} old lsn {} new lsn 0/0 type {} flags IN_AIL",
                    lip(*item),
                    lsn_slash(*lsn),
                    li_type(*inode)
                ),
            ),
            TraceKind::AilPush { item, inode, lsn } => (
                "xfs_ail_push",
                format!("{devs} lip {} lsn {} type {} flags IN_AIL", lip(*item), lsn_slash(*lsn), li_type(*inode)),
            ),
            TraceKind::AilPinned { item, inode, lsn } => (
                "xfs_ail_pinned",
                format!("{devs} lip {} lsn {} type {} flags IN_AIL", lip(*item), lsn_slash(*lsn), li_type(*inode)),
            ),
            TraceKind::AssignTail { new, old, last_sync } => (
                "xfs_log_assign_tail_lsn",
                format!(
                    // 6.10 moved l_last_sync_lsn into the AIL as its head LSN, and renamed the field.
                    "{devs} new tail lsn {}, old lsn {}, {} {}",
                    lsn_slash(*new),
                    lsn_slash(*old),
                    if self.kernel_6_18.is_some() { "head lsn" } else { "last sync" },
                    lsn_slash(*last_sync)
                ),
            ),
            TraceKind::LogForce { lsn } => {
                ("xfs_log_force", format!("{devs} lsn 0x{:x} caller xfs_log_force_seq+0x0/0x0", lsn.0))
            }
            TraceKind::CilPush { seq } => ("loglab_cil_push", format!("{devs} sequence {seq}")),
            TraceKind::CilPushWake { depth, woken } => {
                ("loglab_cil_push_wake", format!("{devs} push_waiters {depth} woken {}", *woken as u8))
            }
            TraceKind::TxCommit { ckpt, start, commit } => (
                "loglab_checkpoint_commit",
                format!("{devs} checkpoint {ckpt} start lsn {} commit lsn {}", lsn_slash(*start), lsn_slash(*commit)),
            ),
            TraceKind::CheckpointDone { ckpt, start } => {
                ("loglab_checkpoint_done", format!("{devs} checkpoint {ckpt} start lsn {}", lsn_slash(*start)))
            }
            TraceKind::ForceDone { ckpt } => ("loglab_force_done", format!("{devs} checkpoint {ckpt}")),
            TraceKind::DevSubmit { dev: d, id, sector, bytes, .. } => {
                let (maj, min) = dev(*d);
                let (_, nr, rwbs) = &self.requests[&(*d, *id)];
                let (comm, _) = task_name(ev.task, &self.writer_comm);
                let (rwbs, prio) = self.block_style(rwbs);
                ("block_rq_issue", format!("{maj},{min} {rwbs} {bytes} () {sector} + {nr} {prio}[{comm}]"))
            }
            TraceKind::DevComplete { dev: d, id } => {
                let (sector, nr, rwbs) = self.requests.remove(&(*d, *id))?;
                let (maj, min) = dev(*d);
                let (rwbs, prio) = self.block_style(&rwbs);
                ("block_rq_complete", format!("{maj},{min} {rwbs} () {sector} + {nr} {prio}[0]"))
            }
        })
    }
}

/// rwbs as blktrace prints it: F (preflush) W (write) F (FUA) S (sync); a bare flush is "FN",
/// a metadata read "RM".
impl TraceCmdPrinter {
    /// rwbs and the I/O priority field (with its trailing space) in this printer's style.
    fn block_style(&self, rwbs: &str) -> (String, &'static str) {
        match (self.kernel_6_18.is_some(), rwbs) {
            (false, r) => (r.to_string(), ""),
            (true, "FN") => ("FF".to_string(), "none,0,0 "),
            (true, r) => (r.to_string(), "be,0,4 "),
        }
    }
}

fn rwbs(preflush: bool, fua: bool, flush: bool, read: bool) -> String {
    if read {
        "RM".to_string()
    } else if flush {
        "FN".to_string()
    } else {
        format!("{}W{}S", if preflush { "F" } else { "" }, if fua { "F" } else { "" })
    }
}

/// The event name a trace line carries.
pub fn event_name(kind: &TraceKind) -> &'static str {
    match kind {
        TraceKind::Grant { event, .. } => event.name(),
        TraceKind::Iclog { event, .. } => event.name(),
        TraceKind::AilInsert { .. } => "xfs_ail_insert",
        TraceKind::AilDelete { .. } => "xfs_ail_delete",
        TraceKind::AilPush { .. } => "xfs_ail_push",
        TraceKind::AilPinned { .. } => "xfs_ail_pinned",
        TraceKind::AssignTail { .. } => "xfs_log_assign_tail_lsn",
        TraceKind::LogForce { .. } => "xfs_log_force",
        TraceKind::CilPush { .. } => "loglab_cil_push",
        TraceKind::CilPushWake { .. } => "loglab_cil_push_wake",
        TraceKind::TxCommit { .. } => "loglab_checkpoint_commit",
        TraceKind::CheckpointDone { .. } => "loglab_checkpoint_done",
        TraceKind::ForceDone { .. } => "loglab_force_done",
        TraceKind::DevSubmit { .. } => "block_rq_issue",
        TraceKind::DevComplete { .. } => "block_rq_complete",
    }
}

fn li_type(inode: bool) -> &'static str {
    if inode {
        "XFS_LI_INODE"
    } else {
        "XFS_LI_BUF"
    }
}

/// A whole run's trace in trace-cmd text (header included).
/// The command name the workload's writer tasks run under in a trace (what the source threads ran).
pub fn writer_comm(s: &Scenario) -> &'static str {
    match s.workload {
        WorkloadKind::SyncAppend => "xfs_io",
        WorkloadKind::FsmarkCreate => "fs_mark",
        WorkloadKind::FsyncHeavy => "dbench",
        WorkloadKind::BtreeChurn => "fsstress",
        WorkloadKind::DirRemove => "rm",
        WorkloadKind::RtAlloc => "rtwrite",
        WorkloadKind::CreateRemove => "fs_mark",
    }
}

pub fn trace_cmd_text(events: &[TraceEvent], writer_comm: &str) -> String {
    let mut p = TraceCmdPrinter::new(writer_comm);
    let lines: Vec<String> = events.iter().filter_map(|e| p.line(e)).collect();
    let mut out = trace_cmd_header(lines.len() as u64);
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grant::GrantHead;
    use crate::iclog::IclogState;
    use crate::trace::{GrantView, IclogEvent, TicketView};

    #[test]
    fn the_seed_003_line_comes_out_field_for_field() {
        // The values of the xfs_log_cil_wait line quoted in source thread 003.
        let ev = TraceEvent {
            t_ns: 309_285_959_000,
            task: 158,
            kind: TraceKind::Grant {
                event: GrantEvent::CilWait,
                ticket: TicketView { ocnt: 1, cnt: 1, curr_res: 67956, unit_res: 67956, flags: 0 },
                log: GrantView {
                    reserveq_active: false,
                    writeq_active: false,
                    reserve: GrantHead { cycle: 75, bytes: 12_878_480 },
                    write: GrantHead { cycle: 75, bytes: 12_878_480 },
                    curr_cycle: 75,
                    curr_block: 10448,
                    tail: Lsn::new(75, 3560),
                },
            },
        };
        let line = TraceCmdPrinter::new("xfs_io").line(&ev).unwrap();
        assert_eq!(
            line,
            "          xfs_io-2158  [002] ...1   309.285959: xfs_log_cil_wait: dev 8:16 t_ocnt 1 t_cnt 1 \
             t_curr_res 67956 t_unit_res 67956 t_flags XLOG_TIC_INITED reserveq empty writeq empty \
             grant_reserve_cycle 75 grant_reserve_bytes 12878480 grant_write_cycle 75 grant_write_bytes 12878480 \
             curr_cycle 75 curr_block 10448 tail_cycle 75 tail_block 3560"
        );
        // awk '/^ / {print $23}' picks the grant reserve cycle.
        assert!(line.starts_with(' '));
        assert_eq!(line.split_whitespace().nth(22), Some("75"));
    }

    #[test]
    fn iclog_ail_and_block_lines() {
        let mut p = TraceCmdPrinter::new("fs_mark");
        let at = |kind| TraceEvent { t_ns: 1_500_000, task: TASK_IOEND, kind };
        let ic = p
            .line(&at(TraceKind::Iclog {
                event: IclogEvent::Sync,
                iclog: 3,
                state: IclogState::WantSync,
                refcnt: 0,
                offset: 4096,
                lsn: Lsn::new(2, 64),
                flags: 3,
            }))
            .unwrap();
        assert!(ic.ends_with(
            "xlog_iclog_sync: dev 8:16 state XLOG_STATE_WANT_SYNC refcnt 0 offset 4096 lsn 0x200000040 \
             flags XLOG_ICL_NEED_FLUSH|XLOG_ICL_NEED_FUA caller xlog_state_release_iclog+0x0/0x0"
        ));
        let ail =
            p.line(&at(TraceKind::AilInsert { item: 1, inode: true, old: Lsn::ZERO, new: Lsn::new(2, 64) })).unwrap();
        assert!(
            ail.contains("xfs_ail_insert: dev 8:16 lip 00000000100001c0 old lsn 0/0 new lsn 2/64 type XFS_LI_INODE")
        );
        let sub = TraceKind::DevSubmit {
            dev: 0,
            id: 9,
            sector: 2048,
            bytes: 4096,
            preflush: true,
            fua: true,
            flush: false,
            read: false,
        };
        assert!(p.line(&at(sub)).unwrap().ends_with("block_rq_issue: 8,16 FWFS 4096 () 2048 + 8 [kworker/1:1H]"));
        assert!(p
            .line(&at(TraceKind::DevComplete { dev: 0, id: 9 }))
            .unwrap()
            .ends_with("block_rq_complete: 8,16 FWFS () 2048 + 8 [0]"));
        let tail = p
            .line(&at(TraceKind::AssignTail { new: Lsn::new(2, 8), old: Lsn::new(1, 900), last_sync: Lsn::new(2, 64) }))
            .unwrap();
        assert!(tail.ends_with("xfs_log_assign_tail_lsn: dev 8:16 new tail lsn 2/8, old lsn 1/900, last sync 2/64"));
    }
}
