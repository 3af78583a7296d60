//! Why a task is blocked, as a chain of kernel objects from what it waits on to what holds
//! that up (e.g. reserve grant head ← tail pinned by AIL item X ← X's checkpoint waits for an
//! iclog's write). Read-only; the lab shows it for a selected task.

use super::tags::IoTag;
use super::tasks::{pusher_task, TASK_DIO, TASK_IOEND};
use super::{PushState, Sim, WriterState};
use crate::device::IoKind;
use crate::iclog::IclogState;
use crate::units::TaskId;

/// The chain for writer `w`, outermost wait first; empty when it is not blocked.
pub(super) fn why_blocked(sim: &Sim, w: TaskId) -> Vec<String> {
    let Some(wr) = sim.writers.get(w as usize) else { return Vec::new() };
    let mut why = Vec::new();
    match wr.state() {
        WriterState::Stopped => {}
        WriterState::Thinking | WriterState::TxWork | WriterState::Copying | WriterState::WritebackDone => {
            if let Some(ahead) = sim.cpus.runnable_ahead(w) {
                let work = match sim.scenario.appends() {
                    true => "other writers' appends",
                    false => "other writers' creates",
                };
                let running = match sim.pushers.iter().any(|p| p.cpu().is_some()) {
                    true => format!("{work} and the CIL push work"),
                    false => work.to_string(),
                };
                why.push(format!(
                    "waiting for a CPU: all {} run {running} (cpus), {ahead} tasks queued ahead",
                    sim.cpus.ncpus()
                ));
                why.push(format!("on the CPUs now: {}", super::view::cpu_holders(sim)));
                match wr.state() {
                    WriterState::TxWork => {
                        let held = wr.ticket().map_or(0, |t| t.reserve_need());
                        why.push(format!(
                            "inside its transaction: it holds its log reservation ({} KiB) while it waits",
                            held / 1024
                        ));
                    }
                    WriterState::Copying => why.push(
                        "its append's timestamp update is in the CIL; it copies the data into the page cache once it runs".into(),
                    ),
                    WriterState::WritebackDone => why.push(
                        "its append is written and its extent converted; its fsync forces the log once it runs".into(),
                    ),
                    _ => {}
                }
            }
        }
        WriterState::AgiWait => {
            let ag = sim.agi.ag_of(w);
            let holder = match sim.agi.holder(ag) {
                Some(h) if sim.cpus.runnable_ahead(h).is_some() => {
                    format!("writer {h} (itself waiting for a CPU)")
                }
                Some(h) => format!("writer {h}"),
                None => "nobody".into(),
            };
            why.push(format!(
                "xfs_buf_lock on AG {ag}'s AGI (xfs_dialloc): held by {holder} until its create commits; {} waiting",
                sim.agi.waiting(ag)
            ));
            let held = wr.ticket().map_or(0, |t| t.reserve_need());
            why.push(format!(
                "inside its transaction: it holds its log reservation ({} KiB) while it waits",
                held / 1024
            ));
        }
        WriterState::GrantWait => {
            let need = wr.ticket().map_or(0, |t| t.reserve_need());
            let ahead = sim.log.reserve_waiters().iter().take_while(|g| g.task != w).count();
            why.push(format!(
                "xlog_grant_head_wait on the reserve grant head: needs {} KiB, {} KiB free, {ahead} tasks ahead (FIFO)",
                need / 1024,
                sim.log.reserve_space_left() / 1024
            ));
            if sim.scenario.ail_push == crate::scenario::AilPush::Upstream {
                why.push(match sim.ail.max_lsn() {
                    Some(max) => format!(
                        "going to sleep it pushed the whole AIL (6.11+ xfs_ail_push_all): xfsaild writes back everything up to {max}"
                    ),
                    None => "going to sleep it pushed the AIL, which is empty: space comes back as log I/O completes".into(),
                });
            }
            why_tail(sim, &mut why);
        }
        WriterState::Throttled => {
            why.push(format!(
                "xc_push_wait: the CIL holds {} KiB, at or past its blocking limit; {} tasks throttled",
                sim.cil.ctx().space_used() / 1024,
                sim.cil.push_waiters().len()
            ));
            why_push(sim, &mut why);
        }
        WriterState::PushFlushWait => {
            why.push(
                "flush_workqueue: a synchronous log force waits for the CIL pushes already queued or running \
                 before it queues its own"
                    .to_string(),
            );
            why_push(sim, &mut why);
        }
        WriterState::CommitWait => {
            why.push(format!("xc_commit_wait: checkpoint {}'s commit record is not written yet", wr.seq()));
            why_push(sim, &mut why);
        }
        WriterState::PrevWait { iclog } => {
            why.push(format!(
                "ic_write_wait on iclog {iclog}: waiting for the previous iclog's write so more commits join this one"
            ));
            why_iclog(sim, iclog as usize, &mut why);
        }
        WriterState::ForceWait { iclog } => {
            why.push(format!("ic_force_wait on iclog {iclog}: the log force waits for its commit record on disk"));
            why_iclog(sim, iclog as usize, &mut why);
        }
        WriterState::MetaRead { left } => {
            why.push(format!("reading a metadata block with the reservation held ({left} more after this)"))
        }
        WriterState::DataWrite if wr.ioend_ran() => {
            why.push(format!("{}: the append is written; its I/O completion (xfs_end_io, cpu_model=kernel) runs on a CPU or waits for one before it logs the written extent", sync_kind(sim)));
            if let Some(ahead) = sim.cpus.runnable_ahead(w) {
                why.push(format!(
                    "waiting for a CPU: {ahead} tasks queued ahead; on the CPUs now: {}",
                    super::view::cpu_holders(sim)
                ));
            }
        }
        WriterState::DataWrite if sim.synced_append(w) => {
            why.push(format!(
                "{}: writing the append ({} KiB), whose I/O completion then logs the written extent \
                 (tr_write) before the log force",
                sync_kind(sim),
                sim.scenario.append_size.0 / 1024
            ));
            why_loop_completion(sim, IoTag::Data(w), &mut why);
        }
        WriterState::DataWrite => {
            why.push(format!("fsync: writing the file's data ({} KiB)", sim.scenario.append_size.0 / 1024))
        }
        WriterState::DataFlush => {
            why.push("fsync: waiting for the data device's cache flush".into());
            why_destage(sim, sim.data_dev, IoTag::Data(w), &mut why);
        }
    }
    why
}

/// On a disk, what a flush (request `tag`, in flight on `dev`) waits for: the media
/// writing out what the cache held when it started. Flash pays at the flush itself.
fn why_destage(sim: &Sim, dev: usize, tag: IoTag, why: &mut Vec<String>) {
    if !sim.devs[dev].rotating() {
        return;
    }
    let tag = tag.pack();
    let flushing = |r: &&crate::device::IoReq| {
        r.tag == tag && matches!(r.kind, IoKind::Flush | IoKind::Write { preflush: true, .. })
    };
    if let Some(r) = sim.devs[dev].inflight().iter().find(flushing) {
        let left = r.done_ns.saturating_sub(sim.now);
        why.push(format!(
            "its cache flush completes in {:.1} ms: the disk first writes what its cache held to the platters",
            left as f64 / 1e6
        ));
    }
}

/// A write the host disk has done whose loop-device completion waits for, or runs on, its CPU
/// (`cpu_model=kernel` on `vm-disk`).
fn why_loop_completion(sim: &Sim, tag: IoTag, why: &mut Vec<String>) {
    if !sim.dio.holds(tag.pack()) {
        return;
    }
    let cpu = sim.cpus.bound_cpu(TASK_DIO).unwrap_or(0);
    let state = match sim.dio.on_cpu().cpu() {
        Some(_) => "runs there now".to_string(),
        None => format!("waits for it, held by {}", super::view::cpu_holders_for(sim, TASK_DIO)),
    };
    why.push(format!(
        "the host disk has done it; the loop device's I/O completion (bound to CPU {cpu}, where the disk interrupts) {state}"
    ));
}

/// What holds the tail back: the oldest AIL item and why it is not written back yet.
fn why_tail(sim: &Sim, why: &mut Vec<String>) {
    let Some((lsn, id)) = sim.ail.oldest().next() else {
        why.push(format!("the tail ({}) waits for log I/O to complete (the AIL is empty)", sim.log.tail_lsn()));
        return;
    };
    let item = &sim.items[id as usize];
    let state = if item.pinned() > 0 {
        "pinned: a checkpoint holding it has not completed".to_string()
    } else if item.flushing().is_some() {
        "being written back by xfsaild".to_string()
    } else {
        format!("waiting for xfsaild (push target {})", sim.ail.target())
    };
    why.push(format!("the tail is at {lsn}, held by AIL item {id} ({state})"));
    if item.pinned() > 0 {
        if let Some(c) = sim.cil.committing().iter().find(|c| c.items().contains_key(&id)) {
            why.push(format!("checkpoint {} is being pushed (commit LSN {})", c.sequence(), c.commit_lsn()));
        }
    }
}

/// What the CIL push is doing.
fn why_push(sim: &Sim, why: &mut Vec<String>) {
    let busy: Vec<String> = sim
        .pushers
        .iter()
        .enumerate()
        .filter(|(_, p)| p.state() != PushState::Idle)
        .flat_map(|(k, p)| {
            let runnable = p.cpu_queued().then(|| {
                format!(
                    "push worker {k} is runnable, waiting for a CPU held by {}",
                    super::view::cpu_holders_for(sim, pusher_task(k as u32))
                )
            });
            std::iter::once(format!("push worker {k}: {}", p.state().describe())).chain(runnable)
        })
        .collect();
    if busy.is_empty() {
        why.push("no push worker is running: the push waits to be queued".into());
    } else {
        why.extend(busy);
    }
    if !sim.log.flush_waiters().is_empty() {
        why.push(format!(
            "l_flush_wait: no ACTIVE iclog at the ring head (iclog {} is {})",
            sim.log.l_iclog(),
            sim.log.head_iclog().state().kernel_name()
        ));
        if sim.kernel_threads_on_cpus() {
            why_iclog(sim, sim.log.l_iclog(), why);
        }
    }
}

/// Where an iclog is on its way to disk.
fn why_iclog(sim: &Sim, i: usize, why: &mut Vec<String>) {
    let ic = sim.log.iclog(i);
    if sim.ioend.running_iclog() == Some(i) {
        let cpu = sim.ioend.on_cpu().cpu().map_or(String::new(), |c| format!(" on CPU {c}"));
        return why.push(format!("the log's I/O completion runs iclog {i}'s callbacks{cpu}"));
    }
    if sim.ioend.waits(i) {
        let wait = match sim.ioend.on_cpu().runnable() {
            true => format!("waits for a CPU held by {}", super::view::cpu_holders_for(sim, TASK_IOEND)),
            false => format!("takes it in turn on CPU {}", sim.ioend.on_cpu().cpu().unwrap_or(0)),
        };
        return why.push(format!("iclog {i}'s write is done; the log's I/O completion work {wait}"));
    }
    let s = match ic.state() {
        IclogState::Active | IclogState::WantSync if ic.refcnt() > 0 => {
            format!("iclog {i} is {} with {} references still copying in", ic.state().kernel_name(), ic.refcnt())
        }
        IclogState::Syncing => {
            let s =
                format!("iclog {i} is being written at LSN {} ({})", ic.lsn(), crate::iclog::icl_flags_str(ic.flags()));
            why.push(s);
            why_destage(sim, 0, IoTag::Iclog(i), why);
            why_loop_completion(sim, IoTag::Iclog(i), why);
            return;
        }
        IclogState::DoneSync => format!("iclog {i}'s write is done; callbacks wait for an older iclog"),
        other => format!("iclog {i} is {}", other.kernel_name()),
    };
    why.push(s);
}

/// How a synced append is made durable: with O_DSYNC (`sync-append`), or by an fsync after it
/// (`fsync-heavy` with `fsync_op=append`).
fn sync_kind(sim: &Sim) -> &'static str {
    if sim.scenario.workload == crate::scenario::WorkloadKind::SyncAppend {
        "O_DSYNC write"
    } else {
        "fsync"
    }
}

#[cfg(test)]
mod tests {
    use crate::presets::find;
    use crate::sim::{Sim, WriterState};

    #[test]
    fn throttled_writers_are_told_about_the_cil_and_the_push() {
        let mut s = find("cil-throttle-32mb").unwrap();
        s.duration = crate::scenario::Duration(200 * crate::units::NS_PER_MS);
        let mut sim = Sim::new(&s).unwrap();
        sim.run_until(150 * crate::units::NS_PER_MS);
        let w =
            (0..s.writers).find(|&w| sim.writer_state(w) == Some(WriterState::Throttled)).expect("a throttled writer");
        let why = sim.why_blocked(w);
        assert!(why[0].starts_with("xc_push_wait: the CIL holds"), "{why:?}");
        assert!(why.len() >= 2, "{why:?}");
        let idle = (0..s.writers).find(|&w| sim.writer_state(w) == Some(WriterState::Thinking));
        if let Some(w) = idle {
            assert!(sim.why_blocked(w).is_empty());
        }
        assert!(sim.why_blocked(9999).is_empty());
    }

    #[test]
    fn a_writer_waiting_for_a_cpu_is_told_so() {
        let mut s = find("cil-throttle-rhythm").unwrap();
        s.cpus = 2;
        let mut sim = Sim::new(&s).unwrap();
        sim.run_until(10 * crate::units::NS_PER_MS);
        let queued: Vec<_> = (0..s.writers).filter_map(|w| sim.why_blocked(w).first().cloned()).collect();
        // 16 writers on 2 CPUs: most wait, each told its place in the queue.
        assert!(queued.len() >= 10, "{queued:?}");
        assert!(queued.iter().any(|m| m.starts_with("waiting for a CPU: all 2 run other writers' creates")
            && m.ends_with("(cpus), 0 tasks queued ahead")));
    }

    /// With `cpu_model=kernel` the kernel's threads hold CPUs too: a moment comes when xfsaild
    /// holds one, the CPU view says so, and a writer waiting for a CPU is told who holds them.
    /// A push worker waiting runnable is named, with the holders, in an fsync's chain.
    #[test]
    fn the_cpus_view_and_the_why_name_the_kernel_threads_on_the_cpus() {
        use crate::sim::CpuTask;
        let mut s = find("cil-throttle-rhythm").unwrap();
        s.cpus = 2;
        s.cpu_model = crate::scenario::CpuModel::Kernel;
        let mut sim = Sim::new(&s).unwrap();
        let mut told = None;
        while sim.now() < 2 * crate::units::NS_PER_SEC && told.is_none() {
            sim.step();
            let v = sim.cpus_view().expect("a pool of 2");
            assert_eq!((v.running.len(), v.runnable.len()), (2, v.runnable_total.min(crate::sim::VIEW_LIST_MAX)));
            if v.running.contains(&Some(CpuTask::Xfsaild)) {
                told = (0..s.writers)
                    .map(|w| sim.why_blocked(w))
                    .find(|why| why.first().is_some_and(|l| l.starts_with("waiting for a CPU")));
            }
        }
        let why = told.expect("xfsaild on a CPU while a writer waits for one, within 2 s");
        assert!(why[1].starts_with("on the CPUs now: ") && why[1].contains("xfsaild"), "{why:?}");

        let mut s = find("fsync-heavy").unwrap();
        s.cpus = 1;
        let mut sim = Sim::new(&s).unwrap();
        let mut line = None;
        while sim.now() < 2 * crate::units::NS_PER_SEC && line.is_none() {
            sim.step();
            if sim.events().is_multiple_of(32) {
                let mut lines = (0..s.writers).flat_map(|w| sim.why_blocked(w));
                line = lines.find(|l| l.contains("is runnable, waiting for a CPU"));
            }
        }
        let line = line.expect("a writer waits on a push worker that waits for the CPU");
        assert!(line.starts_with("push worker ") && line.contains("held by writer "), "{line}");
        s.cpus = 0;
        assert!(Sim::new(&s).unwrap().cpus_view().is_none());
    }

    /// With a run queue a CPU (`cpu_model=kernel`), a runnable push worker is told the task on
    /// its own queue's CPU and how many wait ahead of it there.
    #[test]
    fn a_runnable_push_worker_is_told_whose_cpu_queue_it_waits_on() {
        use crate::sim::CpuTask;
        let mut s = find("sync-append").unwrap();
        s.set("cpus", "2").unwrap();
        s.set("device", "vm-disk").unwrap();
        s.set("cpu_model", "kernel").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        let mut told = None;
        while sim.now() < 2 * crate::units::NS_PER_SEC && told.is_none() {
            sim.step();
            let v = sim.cpus_view().expect("a pool of 2");
            assert_eq!(v.queued.iter().sum::<usize>(), v.runnable_total, "{v:?}");
            if v.runnable.iter().any(|t| matches!(t, CpuTask::PushWorker(_))) {
                let mut lines = (0..s.writers).flat_map(|w| sim.why_blocked(w));
                told = lines.find(|l| l.contains("is runnable, waiting for a CPU")).map(|l| (l, v));
            }
        }
        let (line, v) = told.expect("a writer waits on a push worker queued for a CPU, within 2 s");
        let cpu: usize = line.split("(on CPU ").nth(1).and_then(|r| r.split(',').next()?.parse().ok()).expect(&line);
        let holder = v.running[cpu].as_ref().map_or("no task".to_string(), |t| t.to_string());
        assert!(line.contains(&format!("held by {holder} (on CPU {cpu}, whose queue it waits on: ")), "{line} {v:?}");
    }

    /// With `cpu_model=kernel` on `vm-disk`, an append whose data the host disk has written is
    /// told that its completion waits for (or runs on) the CPU the host disk interrupts.
    #[test]
    fn an_append_done_on_the_host_disk_is_told_its_completion_waits_for_its_cpu() {
        let mut s = find("sync-append").unwrap();
        for (k, v) in [("cpus", "2"), ("device", "vm-disk"), ("cpu_model", "kernel")] {
            s.set(k, v).unwrap();
        }
        let mut sim = Sim::new(&s).unwrap();
        let (mut waits, mut runs) = (None, None);
        let lead =
            "the host disk has done it; the loop device's I/O completion (bound to CPU 1, where the disk interrupts) ";
        while sim.now() < crate::units::NS_PER_SEC && (waits.is_none() || runs.is_none()) {
            sim.step();
            if sim.events().is_multiple_of(16) {
                for l in (0..s.writers).flat_map(|w| sim.why_blocked(w)).filter(|l| l.starts_with(lead)) {
                    match l.ends_with("runs there now") {
                        true => runs = Some(l),
                        false => waits = Some(l),
                    }
                }
            }
        }
        let waits = waits.expect("an append's completion waits for CPU 1 within 1 s");
        assert!(waits.contains("waits for it, held by "), "{waits}");
        assert!(runs.is_some(), "an append's completion runs on CPU 1 within 1 s");
        s.set("cpu_model", "writers").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        sim.run_until(200 * crate::units::NS_PER_MS);
        assert!((0..s.writers).flat_map(|w| sim.why_blocked(w)).all(|l| !l.starts_with(lead)));
    }

    #[test]
    fn a_fsync_waiting_on_a_disk_is_told_what_its_flush_waits_for() {
        let s = find("seed-log-size").unwrap();
        let mut sim = Sim::new(&s).unwrap();
        let mut told = false;
        for t in 1..=40 {
            sim.run_until(t * 25 * crate::units::NS_PER_MS);
            told |= (0..s.writers).any(|w| {
                let why = sim.why_blocked(w);
                why.iter().any(|l| l.starts_with("its cache flush completes in") && l.contains("to the platters"))
            });
        }
        assert!(told, "some fsync waits on a flush behind the disk's destaging in the first second");
    }

    #[test]
    fn a_reservation_asleep_on_a_full_log_is_told_it_pushed_the_whole_ail() {
        let mut s = find("cil-throttle-rhythm").unwrap();
        s.cpus = 2;
        s.ail_push = crate::scenario::AilPush::Upstream;
        let mut sim = Sim::new(&s).unwrap();
        // The first pinch on this 32 MiB log comes at about 0.86 s and lasts a few ms.
        let mut told = None;
        for t in 0..2000 {
            sim.run_until(800 * crate::units::NS_PER_MS + t * 100 * crate::units::NS_PER_US);
            told = (0..s.writers)
                .find_map(|w| (sim.writer_state(w) == Some(WriterState::GrantWait)).then(|| sim.why_blocked(w)));
            if told.is_some() {
                break;
            }
        }
        let why = told.expect("a writer sleeps on the grant head once the log is full");
        assert!(why[0].starts_with("xlog_grant_head_wait on the reserve grant head"), "{why:?}");
        assert!(why[1].starts_with("going to sleep it pushed the whole AIL (6.11+ xfs_ail_push_all)"), "{why:?}");
    }

    #[test]
    fn every_blocked_writer_gets_an_explanation() {
        for name in ["fsync-heavy", "seed-log-size", "fsmark-create"] {
            let mut s = find(name).unwrap();
            s.duration = crate::scenario::Duration(30 * crate::units::NS_PER_MS);
            let mut sim = Sim::new(&s).unwrap();
            for t in 1..=6 {
                sim.run_until(t * 5 * crate::units::NS_PER_MS);
                for w in 0..s.writers {
                    let blocked = sim.writer_state(w).is_some_and(|st| st.is_blocked());
                    assert_eq!(blocked, !sim.why_blocked(w).is_empty(), "{name} writer {w}");
                }
            }
        }
    }

    /// With `cpu_model=kernel` a chain that ends at an iclog whose completion runs its
    /// checkpoint's callbacks on a CPU says so.
    #[test]
    fn a_push_waiting_for_an_iclog_is_told_its_callbacks_run_on_a_cpu() {
        let mut s = find("cil-throttle-32mb").unwrap();
        for (k, v) in [("cpus", "2"), ("cpu_model", "kernel")] {
            s.set(k, v).unwrap();
        }
        s.duration = crate::scenario::Duration(2 * crate::units::NS_PER_SEC);
        let mut sim = Sim::new(&s).unwrap();
        let told = (1..20_000).find_map(|t| {
            sim.run_until(t * 100 * crate::units::NS_PER_US);
            (0..s.writers).map(|w| sim.why_blocked(w)).find(|why| {
                why.iter()
                    .any(|l| l.starts_with("the log's I/O completion runs iclog") && l.contains("callbacks on CPU"))
            })
        });
        let why = told.expect("a checkpoint's callbacks hold a CPU while a writer waits on the push");
        assert!(why.iter().any(|l| l.starts_with("l_flush_wait: no ACTIVE iclog")), "{why:?}");
    }
}
