//! A block-stream recorder without device-mapper: a one-file FUSE filesystem (the `fuser`
//! crate, pure Rust; Debian's fuse3 provides `fusermount3`) whose file backs a loop device
//! opened with direct I/O. Every write the real XFS issues reaches `write` here, and every
//! cache flush (a PREFLUSH, or the post-flush the block layer adds for FUA, since a loop device
//! has no FUA) reaches `fsync`, in the order the loop device completed them: what
//! dm-log-writes records. Requests are served one at a time, so a write's reply (its
//! completion) comes before any later request is seen.
//!
//! Why FUSE and not another way: this kernel has no dm-log-writes, no nbd or ublk module, and
//! FUSE works; `fuser` needs no C library, so the CLI still builds from crates.io alone.

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner, MountOption,
    OpenFlags, ReplyAttr, ReplyData, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request, WriteFlags,
};
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

/// The one file the filesystem holds.
pub const DISK: &str = "disk";
const DISK_INO: INodeNo = INodeNo(2);
/// The most write data a recording keeps in memory.
pub const MAX_RECORDED: u64 = 2 << 30;

/// One completed request, in completion order.
#[derive(Clone, Debug)]
pub enum Io {
    Write { offset: u64, data: Vec<u8> },
    Flush,
}

/// What the recorder saw, shared with the caller.
#[derive(Default)]
pub struct Stream {
    pub ios: Vec<Io>,
    pub bytes: u64,
    /// Set when the recording outgrew `MAX_RECORDED` (the run's writes then fail with EIO).
    pub overflow: bool,
}

struct Recorder {
    backing: File,
    size: u64,
    stream: Arc<Mutex<Stream>>,
    /// Requests recorded so far: a workload thread reads it when an fsync returns.
    count: Arc<AtomicU64>,
    delays: Delays,
    keep_data: bool,
    /// Delays apply once armed: mkfs and mount run at full speed, the workload on the slow device.
    armed: Arc<AtomicBool>,
}

/// How a recorder serves the loop device over it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Setup {
    pub delays: Delays,
    /// Keep each write's data (crash states are built from it), or only count the requests.
    pub keep_data: bool,
}

/// How slow the recorded device is. Requests are served one at a time, so a delay holds up
/// the requests queued behind it too, as a device with a queue depth of one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Delays {
    /// A cache flush: a slow-flushing device (a disk) lets the kernel issue later writes
    /// while a flush is still in progress.
    pub flush: Duration,
    /// Each write request: a slow log device, so the kernel's log I/O, not its CPU work,
    /// limits how fast checkpoints leave the CIL.
    pub write: Duration,
}

impl Recorder {
    fn attr(&self, ino: INodeNo) -> FileAttr {
        let (kind, perm, size, nlink) = if ino == DISK_INO {
            (FileType::RegularFile, 0o600, self.size, 1)
        } else {
            (FileType::Directory, 0o700, 0, 2)
        };
        FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind,
            perm,
            nlink,
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        }
    }

    fn record(&self, io: Io) -> bool {
        let mut s = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        if let Io::Write { data, .. } = &io {
            if s.bytes + data.len() as u64 > MAX_RECORDED {
                s.overflow = true;
                return false;
            }
            s.bytes += data.len() as u64;
        }
        s.ios.push(io);
        self.count.fetch_add(1, Ordering::SeqCst);
        true
    }
}

const TTL: Duration = Duration::from_secs(3600);

impl Filesystem for Recorder {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if parent == INodeNo::ROOT && name == DISK {
            reply.entry(&TTL, &self.attr(DISK_INO), Generation(0));
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        if ino == INodeNo::ROOT || ino == DISK_INO {
            reply.attr(&TTL, &self.attr(ino));
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if ino == DISK_INO {
            // Direct I/O: no FUSE page cache between the loop device and this recorder.
            reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let n = (size as u64).min(self.size.saturating_sub(offset)) as usize;
        let mut buf = vec![0u8; n];
        match self.backing.read_exact_at(&mut buf, offset) {
            Ok(()) => reply.data(&buf),
            Err(_) => reply.error(Errno::EIO),
        }
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if !self.delays.write.is_zero() && self.armed.load(Ordering::Relaxed) {
            std::thread::sleep(self.delays.write);
        }
        if offset + data.len() as u64 > self.size || self.backing.write_all_at(data, offset).is_err() {
            return reply.error(Errno::EIO);
        }
        let kept = if self.keep_data { data.to_vec() } else { Vec::new() };
        if !self.record(Io::Write { offset, data: kept }) {
            return reply.error(Errno::EIO);
        }
        reply.written(data.len() as u32);
    }

    fn fsync(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        if !self.delays.flush.is_zero() && self.armed.load(Ordering::Relaxed) {
            std::thread::sleep(self.delays.flush);
        }
        self.record(Io::Flush);
        reply.ok();
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock_owner: LockOwner, reply: ReplyEmpty) {
        // close(2), not a cache flush.
        reply.ok();
    }
}

/// A mounted recorder; unmounted on drop.
pub struct Recording {
    session: Option<fuser::BackgroundSession>,
    pub disk: PathBuf,
    pub stream: Arc<Mutex<Stream>>,
    pub count: Arc<AtomicU64>,
    armed: Arc<AtomicBool>,
}

impl Recording {
    /// From now on the device is as slow as its delays say.
    pub fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    /// Full speed again: what the run left in the CIL is written out at unmount without delay.
    pub fn disarm(&self) {
        self.armed.store(false, Ordering::SeqCst);
    }

    /// Mounts a recorder at `mnt` over a sparse `backing` file of `size` bytes.
    pub fn start(mnt: &Path, backing: &Path, size: u64, setup: Setup) -> Result<Recording, String> {
        let f = std::fs::OpenOptions::new().create(true).truncate(true).read(true).write(true).open(backing);
        let f = f.map_err(|e| format!("{}: {e}", backing.display()))?;
        f.set_len(size).map_err(|e| format!("{}: {e}", backing.display()))?;
        std::fs::create_dir_all(mnt).map_err(|e| format!("{}: {e}", mnt.display()))?;
        let stream = Arc::new(Mutex::new(Stream::default()));
        let count = Arc::new(AtomicU64::new(0));
        let armed = Arc::new(AtomicBool::new(false));
        let fs = Recorder {
            backing: f,
            size,
            stream: Arc::clone(&stream),
            count: Arc::clone(&count),
            delays: setup.delays,
            keep_data: setup.keep_data,
            armed: Arc::clone(&armed),
        };
        let mut config = Config::default();
        config.mount_options = vec![MountOption::FSName("loglab-recorder".into())];
        let session =
            fuser::spawn_mount(fs, mnt, &config).map_err(|e| format!("FUSE mount at {}: {e}", mnt.display()))?;
        Ok(Recording { session: Some(session), disk: mnt.join(DISK), stream, count, armed })
    }

    pub fn stop(&mut self) -> Result<(), String> {
        match self.session.take() {
            Some(s) => s.umount_and_join().map_err(|e| format!("FUSE unmount: {e}")),
            None => Ok(()),
        }
    }

    /// The recorded requests, taken out of the recorder.
    pub fn take(&self) -> Stream {
        std::mem::take(&mut *self.stream.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("loglab: cleanup: {e}");
        }
    }
}
