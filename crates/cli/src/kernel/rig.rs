//! The real machine: an XFS filesystem made from a scenario's geometry on loop devices over
//! sparse files, mounted, with a private tracefs instance recording its log. Everything it
//! makes is undone by `Drop`: on success, on error and after Ctrl-C.

use super::readers;
use super::threads;
use super::tracefs::{self, TRACEFS};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use xlog::Scenario;

/// Set by Ctrl-C: the workload stops, then the rig is taken down as on any other exit.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// The tracepoints a run records (`xfs:` events carry the data device, `block:` the log's).
pub const XFS_EVENTS: [&str; 4] = ["xlog_iclog_sync", "xfs_log_cil_wait", "xfs_log_grant_sleep", "xfs_log_force"];
pub const PUSH_WORK_EVENTS: [&str; 3] = ["workqueue_queue_work", "workqueue_execute_start", "workqueue_execute_end"];

/// A kernel function's address from `/proc/kallsyms` (None when absent or hidden as 0).
fn kallsyms_addr(name: &str) -> Option<u64> {
    let syms = fs::read_to_string("/proc/kallsyms").ok()?;
    let line = syms.lines().find(|l| l.split_whitespace().nth(2) == Some(name))?;
    u64::from_str_radix(line.split_whitespace().next()?, 16).ok().filter(|&a| a != 0)
}

/// What the machine lacks for a kernel run, in one line; `None` if it has everything.
pub fn missing() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (mkfs on loop devices, mount, tracefs)".into());
    }
    for tool in ["mkfs.xfs", "losetup", "mount", "umount"] {
        if which(tool).is_none() {
            return Some(format!("needs {tool} (Debian: xfsprogs, mount)"));
        }
    }
    if !fs::read_to_string("/proc/filesystems").is_ok_and(|f| f.lines().any(|l| l.trim_end().ends_with("xfs"))) {
        return Some("needs a kernel with XFS (not in /proc/filesystems)".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("needs loop devices (/dev/loop-control)".into());
    }
    if !Path::new(TRACEFS).join("events/xfs").exists() {
        // As root, tracefs can be mounted where the kernel expects it.
        let _ = Command::new("mount").args(["-t", "tracefs", "nodev", TRACEFS]).status();
        if !Path::new(TRACEFS).join("events/xfs").exists() {
            return Some(format!("needs tracefs with xfs events at {TRACEFS}"));
        }
    }
    None
}

fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(tool))
        .find(|p| p.exists())
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let shown = format!("{cmd:?}").replace('"', "");
    let out = cmd.output().map_err(|e| format!("{shown}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{shown} failed: {}", err.lines().next().unwrap_or("").trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Attaches `img` to a free loop device; returns `/dev/loopN`.
pub fn losetup(img: &Path) -> Result<String, String> {
    run(Command::new("losetup").args(["-f", "--show"]).arg(img))
}

/// `logbsize` and `logbufs` the kernel accepts (xfs_fs_parse_param / xfs_finish_flags).
fn mount_options(s: &Scenario) -> Result<String, String> {
    let bsize = s.iclog_size.0;
    if !(16 << 10..=256 << 10).contains(&bsize) || !bsize.is_power_of_two() {
        return Err(format!(
            "iclog_size: {} is not a logbsize the kernel takes (allowed: 16KiB, 32KiB, 64KiB, 128KiB, 256KiB)",
            xlog::format_size(bsize)
        ));
    }
    if !(2..=8).contains(&s.iclog_count) {
        return Err(format!("iclog_count: {} is not a logbufs the kernel takes (allowed: 2 to 8)", s.iclog_count));
    }
    Ok(format!("logbsize={}k,logbufs={}", bsize >> 10, s.iclog_count))
}

/// A mounted filesystem and its tracing, torn down on drop.
pub struct Rig {
    pub dir: PathBuf,
    pub mnt: PathBuf,
    /// `loopN` of the data device (the `/sys/fs/xfs/<name>` of the mount) and of an external log.
    pub data_loop: String,
    pub log_loop: Option<String>,
    pub mkfs_args: Vec<String>,
    pub mount_opts: String,
    instance: Option<tracefs::Instance>,
    mounted: bool,
    loops: Vec<String>,
    /// The data device's block stream, when recorded (`Rig::new(.., record: true)`).
    pub recording: Option<super::recorder::Recording>,
}

impl Rig {
    /// Makes the filesystem the scenario describes and mounts it (no tracing yet).
    /// `record`: back the data device by the block-stream recorder, as slow as these delays.
    pub fn new(s: &Scenario, workdir: &Path, record: Option<super::recorder::Setup>) -> Result<Rig, String> {
        if s.workload == xlog::WorkloadKind::RtAlloc {
            return Err("workload: rt-alloc needs a realtime device, which a kernel run does not build".into());
        }
        let opts = mount_options(s)?;
        let dir = workdir.join(format!("loglab-kernel-{}", std::process::id()));
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut rig = Rig {
            mnt: dir.join("mnt"),
            dir,
            data_loop: String::new(),
            log_loop: None,
            mkfs_args: Vec::new(),
            mount_opts: opts,
            instance: None,
            mounted: false,
            loops: Vec::new(),
            recording: None,
        };
        if let Some(setup) = record {
            if s.external_log {
                return Err("external_log: a recorded run records the data device only; use an internal log".into());
            }
            let r = super::recorder::Recording::start(
                &rig.dir.join("rec"),
                &rig.dir.join("backing.img"),
                s.fs_size.0,
                setup,
            )?;
            rig.recording = Some(r);
        }
        rig.build(s)?;
        Ok(rig)
    }

    fn attach(&mut self, name: &str, bytes: u64) -> Result<String, String> {
        let img = match (&self.recording, name) {
            (Some(r), "data.img") => r.disk.clone(),
            _ => {
                let img = self.dir.join(name);
                let f = fs::File::create(&img).map_err(|e| format!("{}: {e}", img.display()))?;
                f.set_len(bytes).map_err(|e| format!("{}: {e}", img.display()))?;
                img
            }
        };
        // Direct I/O: the loop device passes every write and flush to the file, not the page cache.
        let dev = run(Command::new("losetup").args(["-f", "--show", "--direct-io=on"]).arg(&img))?;
        let name = dev.trim_start_matches("/dev/").to_string();
        self.loops.push(name.clone());
        // Without direct I/O the loop device would write through the page cache, and the
        // recorder would see writeback, not the filesystem's requests.
        let dio = fs::read_to_string(format!("/sys/block/{name}/loop/dio")).unwrap_or_default();
        if self.recording.is_some() && dio.trim() != "1" {
            return Err(format!("{dev}: the loop device did not take direct I/O over the recorder"));
        }
        Ok(name)
    }

    fn build(&mut self, s: &Scenario) -> Result<(), String> {
        let data = self.attach("data.img", s.fs_size.0)?;
        let mut args: Vec<String> = vec!["-f".into(), "-q".into()];
        if s.agcount > 0 {
            args.extend(["-d".into(), format!("agcount={}", s.agcount)]);
        }
        let mut log = format!("size={}", s.log_size.0);
        if s.lsu.0 > 0 {
            log.push_str(&format!(",su={}", s.lsu.0));
        }
        if s.external_log {
            // The log device a little larger than the log: mkfs puts the log at its start.
            let l = self.attach("log.img", s.log_size.0 + (1 << 20))?;
            log.push_str(&format!(",logdev=/dev/{l}"));
            self.mount_opts.push_str(&format!(",logdev=/dev/{l}"));
            self.log_loop = Some(l);
        }
        args.extend(["-l".into(), log, format!("/dev/{data}")]);
        let mut mkfs = Command::new("mkfs.xfs");
        mkfs.args(&args);
        // xfsprogs refuses logs under 64 MiB and filesystems under 300 MB unless it is run by
        // fstests; the source threads' small logs need exactly that allowance.
        if s.log_size.0 < 64 << 20 || s.fs_size.0 < 300 << 20 {
            mkfs.envs([("TEST_DIR", "/nonexistent"), ("TEST_DEV", "/nonexistent"), ("QA_CHECK_FS", "xfs")]);
        }
        run(&mut mkfs)?;
        self.mkfs_args = args;
        fs::create_dir_all(&self.mnt).map_err(|e| format!("{}: {e}", self.mnt.display()))?;
        run(Command::new("mount")
            .args(["-t", "xfs", "-o", &self.mount_opts])
            .arg(format!("/dev/{data}"))
            .arg(&self.mnt))?;
        self.mounted = true;
        self.data_loop = data;
        Ok(())
    }

    pub fn dev_t(loopname: &str) -> Result<u64, String> {
        let p = format!("/sys/block/{loopname}/dev");
        let t = fs::read_to_string(&p).map_err(|e| format!("{p}: {e}"))?;
        let (ma, mi) = t.trim().split_once(':').ok_or_else(|| format!("{p}: not MAJ:MIN"))?;
        let (ma, mi): (u64, u64) = (ma.parse().map_err(|_| p.clone())?, mi.parse().map_err(|_| p.clone())?);
        // The kernel's dev_t in trace records: MKDEV(major, minor) = major << 20 | minor.
        Ok(ma << 20 | mi)
    }

    /// Starts recording this filesystem's log events and its log device's requests;
    /// `appends`: and each synced append's timestamp update and commits (`appends::append_pairs`).
    pub fn trace_start(&mut self, appends: bool) -> Result<(), String> {
        let data_dev = Self::dev_t(&self.data_loop)?;
        let log_dev = Self::dev_t(self.log_loop.as_deref().unwrap_or(&self.data_loop))?;
        let mut events: Vec<(String, String)> =
            XFS_EVENTS.iter().map(|e| (format!("xfs/{e}"), format!("dev == {data_dev}"))).collect();
        for e in ["block_rq_issue", "block_rq_complete"] {
            events.push((format!("block/{e}"), format!("dev == {log_dev}")));
        }
        // The CIL push work's queueing, start and end (every mount's: the parser keeps this
        // one's by its workqueue). Without a readable kallsyms there is no address to match.
        if kallsyms_addr("xlog_cil_push_work").is_some() {
            // The other log work too (iclog and I/O completion, the log worker): each one's CPU.
            let works: Vec<String> = threads::LOG_WORK
                .iter()
                .filter_map(|(_, f, _)| kallsyms_addr(f))
                .map(|a| format!("function == 0x{a:x}"))
                .collect();
            for e in PUSH_WORK_EVENTS {
                events.push((format!("workqueue/{e}"), works.join(" || ")));
            }
            // The workers' and xfsaild's scheduling: where their time goes (on a CPU,
            // runnable, asleep).
            let sw = r#"prev_comm ~ "kworker*" || next_comm ~ "kworker*" || prev_comm ~ "xfsaild*" || next_comm ~ "xfsaild*""#;
            events.push(("sched/sched_switch".into(), sw.into()));
            events.push(("sched/sched_waking".into(), r#"comm ~ "kworker*" || comm ~ "xfsaild*""#.into()));
            // What the threads did, to divide their CPU by: items xfsaild pushed, extents
            // converted at I/O completion.
            for e in ["xfs_ail_push", "xfs_unwritten_convert"] {
                events.push((format!("xfs/{e}"), format!("dev == {data_dev}")));
            }
            // Which checkpoints an append's two transactions went into.
            if appends {
                for e in ["xfs_update_time", "xfs_setfilesize", "xfs_trans_commit"] {
                    events.push((format!("xfs/{e}"), format!("dev == {data_dev}")));
                }
            }
        }
        let name = format!("loglab-{}", std::process::id());
        self.instance = Some(tracefs::Instance::start(&name, 65536, &events)?);
        Ok(())
    }

    /// Stops recording; returns the trace text and how many events the buffer lost.
    pub fn trace_stop(&mut self) -> Result<(String, u64), String> {
        self.instance.as_ref().ok_or("trace_stop before trace_start")?.stop()
    }

    /// Where the internal log lies in the data device: (byte offset, bytes), from its superblock.
    pub fn log_range(&self) -> Result<(u64, u64), String> {
        let p = format!("/dev/{}", self.data_loop);
        let mut f = fs::File::open(&p).map_err(|e| format!("{p}: {e}"))?;
        let sb = crate::xfs_image::read_sb(&mut f).map_err(|e| format!("{p}: {e}"))?;
        Ok((sb.log_offset(), sb.log_bytes()))
    }

    /// `syncfs`: forces the log, so the CIL's last contents reach it (`xfs_fs_sync_fs`).
    pub fn syncfs(&self) -> Result<(), String> {
        use std::os::fd::AsRawFd;
        let d = fs::File::open(&self.mnt).map_err(|e| format!("{}: {e}", self.mnt.display()))?;
        // SAFETY: syncfs takes a valid open descriptor and touches no memory of ours.
        if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
            return Err(format!("syncfs {}: {}", self.mnt.display(), std::io::Error::last_os_error()));
        }
        Ok(())
    }

    pub fn stats(&self) -> Result<String, String> {
        let p = format!("/sys/fs/xfs/{}/stats/stats", self.data_loop);
        fs::read_to_string(&p).map_err(|e| format!("{p}: {e}"))
    }

    /// Shuts the log down as a crash does (`xfs_io -x -c shutdown`: what the iclogs and the CIL
    /// still hold is lost), unmounts, and lets each recovery read what reached the image: the
    /// model's (`loglab recover --image`), `xfs_logprint -t`, the kernel's own (a mount), then
    /// `xfs_repair -n`.
    pub fn crash_and_recover(&mut self) -> Result<serde_json::Value, String> {
        use serde_json::{json, Value};
        run(Command::new("xfs_io").args(["-x", "-c", "shutdown"]).arg(&self.mnt))?;
        run(Command::new("umount").arg(&self.mnt))?;
        self.mounted = false;
        let img = self.dir.join("data.img");
        let logdev = self.log_loop.as_ref().map(|l| format!("/dev/{l}"));
        let mut model: Value = if self.log_loop.is_some() {
            json!({ "skipped": "an external log: recover --image reads internal logs" })
        } else {
            readers::model_recover(&img)
        };
        let logprint = readers::logprint(&img, logdev.as_deref());
        let agree = readers::agree(&model, &logprint);
        // The kernel's recovery: mount replays the log; then a check of the result.
        let data = format!("/dev/{}", self.data_loop);
        let (mounted, kernel_recovery, matches) = super::replay::mount_traced(&self.data_loop, &mut model, || {
            run(Command::new("mount").args(["-t", "xfs", "-o", &self.mount_opts]).arg(&data).arg(&self.mnt))
        })?;
        let kernel_mount = match &mounted {
            Ok(_) => {
                self.mounted = true;
                run(Command::new("umount").arg(&self.mnt))?;
                self.mounted = false;
                "recovered".to_string()
            }
            Err(e) => format!("failed: {e}"),
        };
        let repair = readers::repair_n(&data, logdev.as_deref());
        Ok(json!({
            "model": model,
            "xfs_logprint": logprint,
            "model_agrees_with_xfs_logprint": agree,
            "kernel_mount": kernel_mount,
            "kernel_recovery": kernel_recovery,
            "model_recovery_matches_kernel": matches,
            "xfs_repair_n": repair,
        }))
    }

    /// Unmounts (which writes the unmount record) and detaches everything now, reporting errors.
    pub fn finish(mut self) -> Result<(), String> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<(), String> {
        let mut first_err = None;
        if let Some(inst) = self.instance.take() {
            if let Err(e) = inst.remove() {
                first_err.get_or_insert(e);
            }
        }
        if self.mounted {
            match run(Command::new("umount").arg(&self.mnt)) {
                Ok(_) => self.mounted = false,
                Err(e) => {
                    // Busy (a stray reader): detach lazily rather than leave it mounted.
                    let _ = run(Command::new("umount").arg("-l").arg(&self.mnt));
                    self.mounted = false;
                    first_err.get_or_insert(e);
                }
            }
        }
        for l in std::mem::take(&mut self.loops) {
            if let Err(e) = run(Command::new("losetup").args(["-d", &format!("/dev/{l}")])) {
                first_err.get_or_insert(e);
            }
        }
        if self.recording.is_some() {
            // The loop device lets go of the recorder's file asynchronously after `losetup -d`.
            for _ in 0..50 {
                if !self.loops_over_recorder() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        if let Some(r) = &mut self.recording {
            if let Err(e) = r.stop() {
                first_err.get_or_insert(e);
            }
        }
        let _ = fs::remove_dir_all(&self.dir);
        first_err.map_or(Ok(()), Err)
    }
}

impl Rig {
    fn loops_over_recorder(&self) -> bool {
        let out = Command::new("losetup").arg("-a").output().map(|o| o.stdout).unwrap_or_default();
        let rec = self.dir.join("rec").display().to_string();
        String::from_utf8_lossy(&out).contains(&rec)
    }

    /// Unmounts and detaches everything but keeps the recording: the stream and the fsyncs it
    /// covers are what crash states are built from.
    pub fn finish_recorded(mut self) -> Result<super::recorder::Stream, String> {
        let stream = self.recording.as_ref().map(|r| r.take()).unwrap_or_default();
        self.teardown()?;
        Ok(stream)
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("loglab: cleanup: {e}");
        }
    }
}

/// Ctrl-C stops the workload; the rig's normal teardown runs after it.
pub fn on_interrupt() {
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            eprintln!("loglab: interrupted again; still cleaning up");
        } else {
            eprintln!("loglab: interrupted; stopping the workload and cleaning up");
        }
    });
}
