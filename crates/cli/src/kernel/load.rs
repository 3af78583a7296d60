//! The model's workloads as real system calls: one thread per writer, each in its own
//! directory, for the scenario's duration in wall-clock time.

use super::rig::STOP;
use hdrhistogram::Histogram;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use xlog::{format_size, Scenario, WorkloadKind};

/// Bytes each append or overwrite writes (the model's data write: one 4 KiB block).
const WRITE: usize = 4096;
/// Files a dir-remove writer creates before the run, to remove during it.
const PRECREATE: usize = 3000;
/// Create-remove keeps this many of a writer's files; older ones are removed.
const KEEP: u64 = 64;
/// Most writer threads a kernel run starts.
pub const MAX_THREADS: u32 = 4096;

/// What the threads did.
pub struct Done {
    pub ops: u64,
    pub fsyncs: u64,
    pub seconds: f64,
    /// With a recorder: what each returned fsync (or O_DSYNC write) promised, in order.
    pub durable: Vec<Durable>,
    /// Each operation's wall-clock time (its system calls, fsync included), in ns: the
    /// model's `latency_ns` counts the same span of its transactions.
    pub latency_ns: Histogram<u64>,
    /// CPU time the writer threads used (`CLOCK_THREAD_CPUTIME_ID`: user and system, their
    /// system calls' own work; kernel threads' not), in ns.
    pub writer_cpu_ns: u64,
    /// The whole machine's CPU time not idle over the run, in ns (`/proc/stat`): the writers',
    /// kernel threads', interrupts'.
    pub busy_cpu_ns: u64,
}

/// What one writer thread did: operations, fsyncs, what they promised, their latencies, and
/// its CPU time.
type WriterDone = (u64, u64, Vec<Durable>, Histogram<u64>, u64);

/// CPU time the calling thread has used, in ns.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a pointer to a timespec we own.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The machine's non-idle CPU time so far, in ns (`/proc/stat`'s first line, in USER_HZ).
fn busy_cpu_ns() -> u64 {
    let stat = fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> =
        stat.lines().next().unwrap_or("").split_whitespace().skip(1).filter_map(|v| v.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
    let busy: u64 = f.iter().take(8).enumerate().filter(|&(i, _)| i != 3 && i != 4).map(|(_, v)| v).sum();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    busy * 1_000_000_000 / hz
}

fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

/// A promise a returned fsync made: `path` (under the mount) exists with at least `min_size`
/// bytes of the workload's pattern. `after` is how many requests the recorder had seen when
/// it returned: a crash state holding that prefix of the stream must keep it.
#[derive(Clone, Debug)]
pub struct Durable {
    pub after: u64,
    pub path: String,
    pub min_size: u64,
}

/// The byte every data write repeats (the crash check reads it back).
pub const PATTERN: u8 = 0xa5;

/// What one writer does each operation, in the model's words.
pub fn describe(s: &Scenario) -> String {
    let sync = if s.fsync { " + fsync" } else { "" };
    match s.workload {
        WorkloadKind::FsmarkCreate => format!("create an empty file{sync}"),
        WorkloadKind::FsyncHeavy => format!("append {} to the writer's file{sync}", format_size(s.append_size.0)),
        WorkloadKind::SyncAppend => format!("append {} to an O_DSYNC file", format_size(s.append_size.0)),
        WorkloadKind::BtreeChurn => format!("write 4 KiB at a random offset of a sparse file{sync}"),
        WorkloadKind::DirRemove => format!("remove one of {PRECREATE} files created before the run"),
        WorkloadKind::CreateRemove => format!("create a file, remove the one created {KEEP} before it"),
        WorkloadKind::RtAlloc => "realtime allocation (not run on the kernel)".into(),
    }
}

struct Writer {
    dir: PathBuf,
    file: Option<File>,
    n: u64,
    rng: u64,
    fsync: bool,
    /// What each append writes (`append_size` bytes of the pattern).
    append: Vec<u8>,
}

/// Creates each writer's directory (and, for dir-remove, its files) before tracing starts.
pub fn prepare(s: &Scenario, mnt: &Path) -> Result<(), String> {
    if s.writers == 0 || s.writers > MAX_THREADS {
        return Err(format!("writers: {} threads on the kernel (allowed: 1 to {MAX_THREADS})", s.writers));
    }
    for t in 0..s.writers {
        let dir = mnt.join(format!("w{t}"));
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if s.workload == WorkloadKind::DirRemove {
            for n in 0..PRECREATE {
                File::create(dir.join(format!("f{n}"))).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
        }
    }
    // Everything prepared reaches the log before the measured run starts.
    sync_everything();
    Ok(())
}

fn sync_everything() {
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
}

/// Runs the writers for the scenario's duration; the first error ends the run.
pub fn run(s: &Scenario, mnt: &Path, recorded: Option<Arc<AtomicU64>>) -> Result<Done, String> {
    let secs = Duration::from_nanos(s.duration.0);
    let gate = Arc::new(Barrier::new(s.writers as usize + 1));
    let mut handles = Vec::new();
    for t in 0..s.writers {
        let fsync = s.fsync && (s.fsync_writers == 0 || t < s.fsync_writers);
        let w = Writer {
            dir: mnt.join(format!("w{t}")),
            file: None,
            n: 0,
            rng: (s.seed ^ (t as u64 + 1)).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            fsync,
            append: vec![PATTERN; s.append_size.0 as usize],
        };
        let (kind, gate, recorded) = (s.workload, Arc::clone(&gate), recorded.clone());
        let h = std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(move || -> Result<WriterDone, String> {
                let mut w = w;
                gate.wait();
                let cpu0 = thread_cpu_ns();
                let end = Instant::now() + secs;
                let (mut fsyncs, mut durable, mut lat) = (0, Vec::new(), latency_histogram());
                while Instant::now() < end && !STOP.load(Ordering::Relaxed) {
                    let t0 = Instant::now();
                    let step = w.op(kind)?;
                    lat.saturating_record(t0.elapsed().as_nanos().max(1) as u64);
                    match step {
                        Step::Did { fsynced } => {
                            fsyncs += fsynced as u64;
                            if let (true, Some(c)) = (fsynced, &recorded) {
                                durable.push(w.promise(kind, c.load(Ordering::SeqCst), t));
                            }
                        }
                        Step::Exhausted => break,
                    }
                }
                Ok((w.n, fsyncs, durable, lat, thread_cpu_ns().saturating_sub(cpu0)))
            })
            .map_err(|e| format!("writer thread {t}: {e}"))?;
        handles.push(h);
    }
    let (start, busy0) = (Instant::now(), busy_cpu_ns());
    gate.wait();
    let (mut ops, mut fsyncs, mut first_err, mut durable, mut writer_cpu_ns) = (0, 0, None, Vec::new(), 0);
    let mut latency_ns = latency_histogram();
    for h in handles {
        match h.join() {
            Ok(Ok((n, f, d, lat, cpu))) => {
                ops += n;
                writer_cpu_ns += cpu;
                fsyncs += f;
                durable.extend(d);
                latency_ns.add(&lat).map_err(|e| format!("latency histogram: {e}"))?;
            }
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert("a writer thread panicked".to_string());
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let busy_cpu_ns = busy_cpu_ns().saturating_sub(busy0);
    durable.sort_by_key(|d| d.after);
    first_err.map_or(Ok(Done { ops, fsyncs, seconds, durable, latency_ns, writer_cpu_ns, busy_cpu_ns }), Err)
}

enum Step {
    Did { fsynced: bool },
    Exhausted,
}

impl Writer {
    /// What the fsync that just returned promised (the op counter has moved past it).
    fn promise(&self, kind: WorkloadKind, after: u64, t: u32) -> Durable {
        let n = self.n - 1;
        let (file, min_size) = match kind {
            WorkloadKind::FsyncHeavy | WorkloadKind::SyncAppend => {
                ("data".to_string(), (n + 1) * self.append.len() as u64)
            }
            WorkloadKind::FsmarkCreate => (format!("f{n}"), 0),
            // A random overwrite: only that the file exists.
            _ => ("data".to_string(), 0),
        };
        Durable { after, path: format!("w{t}/{file}"), min_size }
    }

    fn next_rand(&mut self) -> u64 {
        // xorshift64*: only spreads offsets; the run itself is not deterministic anyway.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn open_own(&mut self, flags: i32) -> Result<&mut File, String> {
        if self.file.is_none() {
            let p = self.dir.join("data");
            let f = OpenOptions::new()
                .create(true)
                .append(flags == 0)
                .write(true)
                .custom_flags(flags)
                .open(&p)
                .map_err(|e| format!("{}: {e}", p.display()))?;
            self.file = Some(f);
        }
        Ok(self.file.as_mut().expect("opened"))
    }

    fn op(&mut self, kind: WorkloadKind) -> Result<Step, String> {
        let err = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
        let fsync = self.fsync;
        let n = self.n;
        let mut fsynced = false;
        match kind {
            WorkloadKind::FsmarkCreate | WorkloadKind::CreateRemove => {
                let p = self.dir.join(format!("f{n}"));
                let f = File::create(&p).map_err(|e| err(&p, e))?;
                if fsync && kind == WorkloadKind::FsmarkCreate {
                    f.sync_all().map_err(|e| err(&p, e))?;
                    fsynced = true;
                }
                if kind == WorkloadKind::CreateRemove && n >= KEEP {
                    let old = self.dir.join(format!("f{}", n - KEEP));
                    fs::remove_file(&old).map_err(|e| err(&old, e))?;
                }
            }
            WorkloadKind::FsyncHeavy | WorkloadKind::SyncAppend => {
                let dsync = if kind == WorkloadKind::SyncAppend { libc::O_DSYNC } else { 0 };
                let p = self.dir.join("data");
                let append = std::mem::take(&mut self.append);
                let f = self.open_own(dsync)?;
                let wrote =
                    if dsync != 0 { f.write_all_at(&append, n * append.len() as u64) } else { f.write_all(&append) };
                // O_DSYNC: the write returned once it was durable; otherwise an fsync if asked.
                let synced = wrote.and_then(|()| match (dsync != 0, fsync) {
                    (true, _) => Ok(true),
                    (false, true) => f.sync_all().map(|()| true),
                    (false, false) => Ok(false),
                });
                self.append = append;
                fsynced = synced.map_err(|e| err(&p, e))?;
            }
            WorkloadKind::BtreeChurn => {
                let p = self.dir.join("data");
                let off = (self.next_rand() % (1 << 18)) * WRITE as u64;
                let f = self.open_own(libc::O_CREAT)?;
                f.write_all_at(&[0x5a; WRITE], off).map_err(|e| err(&p, e))?;
                if fsync {
                    f.sync_data().map_err(|e| err(&p, e))?;
                    fsynced = true;
                }
            }
            WorkloadKind::DirRemove => {
                if n as usize >= PRECREATE {
                    return Ok(Step::Exhausted);
                }
                let p = self.dir.join(format!("f{n}"));
                fs::remove_file(&p).map_err(|e| err(&p, e))?;
            }
            WorkloadKind::RtAlloc => return Ok(Step::Exhausted),
        }
        self.n += 1;
        Ok(Step::Did { fsynced })
    }
}
