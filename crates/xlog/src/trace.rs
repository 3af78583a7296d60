//! Typed trace events: what `Sim::step` reports, hashed for determinism checks.

use crate::grant::GrantHead;
use crate::iclog::IclogState;
use crate::units::{Lsn, Ns};
use serde::Serialize;
use std::hash::{Hash, Hasher};

/// A ticket as the `xfs_loggrant_class` tracepoints print it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct TicketView {
    pub ocnt: u32,
    pub cnt: u32,
    pub curr_res: i64,
    pub unit_res: i64,
    pub flags: u32,
}

/// Log state as the grant tracepoints print it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct GrantView {
    pub reserveq_active: bool,
    pub writeq_active: bool,
    pub reserve: GrantHead,
    pub write: GrantHead,
    pub curr_cycle: u32,
    pub curr_block: u32,
    pub tail: Lsn,
}

impl Hash for GrantHead {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.cycle.hash(h);
        self.bytes.hash(h);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum GrantEvent {
    Reserve,
    ReserveExit,
    Sleep,
    Wake,
    WakeUp,
    Ungrant,
    UngrantExit,
    CilWait,
}

impl GrantEvent {
    pub fn name(self) -> &'static str {
        match self {
            GrantEvent::Reserve => "xfs_log_reserve",
            GrantEvent::ReserveExit => "xfs_log_reserve_exit",
            GrantEvent::Sleep => "xfs_log_grant_sleep",
            GrantEvent::Wake => "xfs_log_grant_wake",
            GrantEvent::WakeUp => "xfs_log_grant_wake_up",
            GrantEvent::Ungrant => "xfs_log_ticket_ungrant",
            GrantEvent::UngrantExit => "xfs_log_ticket_ungrant_exit",
            GrantEvent::CilWait => "xfs_log_cil_wait",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum IclogEvent {
    GetSpace,
    Switch,
    Release,
    Sync,
    Write,
    SyncDone,
    Callback,
    Clean,
    Activate,
    Force,
    WaitOn,
}

impl IclogEvent {
    pub fn name(self) -> &'static str {
        match self {
            IclogEvent::GetSpace => "xlog_iclog_get_space",
            IclogEvent::Switch => "xlog_iclog_switch",
            IclogEvent::Release => "xlog_iclog_release",
            IclogEvent::Sync => "xlog_iclog_sync",
            IclogEvent::Write => "xlog_iclog_write",
            IclogEvent::SyncDone => "xlog_iclog_sync_done",
            IclogEvent::Callback => "xlog_iclog_callback",
            IclogEvent::Clean => "xlog_iclog_clean",
            IclogEvent::Activate => "xlog_iclog_activate",
            IclogEvent::Force => "xlog_iclog_force",
            IclogEvent::WaitOn => "xlog_iclog_wait_on",
        }
    }

    /// The kernel function that fires it (the `caller %pS` field).
    pub fn caller(self) -> &'static str {
        match self {
            IclogEvent::GetSpace => "xlog_state_get_iclog_space",
            IclogEvent::Switch => "xlog_state_switch_iclogs",
            IclogEvent::Release => "xlog_state_release_iclog",
            IclogEvent::Sync => "xlog_state_release_iclog",
            IclogEvent::Write => "xlog_sync",
            IclogEvent::SyncDone => "xlog_ioend_work",
            IclogEvent::Callback => "xlog_state_do_iclog_callbacks",
            IclogEvent::Clean => "xlog_state_do_callback",
            IclogEvent::Activate => "xlog_state_clean_iclog",
            IclogEvent::Force => "xfs_log_force_seq",
            IclogEvent::WaitOn => "xlog_wait_on_iclog",
        }
    }
}

impl Hash for IclogState {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (*self as u8).hash(h);
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum TraceKind {
    Grant {
        event: GrantEvent,
        ticket: TicketView,
        log: GrantView,
    },
    Iclog {
        event: IclogEvent,
        iclog: u32,
        state: IclogState,
        refcnt: u32,
        offset: u32,
        lsn: Lsn,
        flags: u32,
    },
    AilInsert {
        item: u32,
        inode: bool,
        old: Lsn,
        new: Lsn,
    },
    AilDelete {
        item: u32,
        inode: bool,
        lsn: Lsn,
    },
    AilPush {
        item: u32,
        inode: bool,
        lsn: Lsn,
    },
    AilPinned {
        item: u32,
        inode: bool,
        lsn: Lsn,
    },
    AssignTail {
        new: Lsn,
        old: Lsn,
        last_sync: Lsn,
    },
    LogForce {
        lsn: Lsn,
    },
    CilPush {
        seq: u64,
    },
    DevSubmit {
        dev: u8,
        id: u64,
        sector: u64,
        bytes: u32,
        preflush: bool,
        fua: bool,
        flush: bool,
        read: bool,
    },
    DevComplete {
        dev: u8,
        id: u64,
    },
    TxCommit {
        ckpt: u32,
        start: Lsn,
        commit: Lsn,
    },
    CheckpointDone {
        ckpt: u32,
        start: Lsn,
    },
    ForceDone {
        ckpt: u32,
    },
    // New kinds go last: the trace hash covers the variant index, so older hashes still hold.
    /// A push found tasks on `xc_push_wait` (the throttle queue depth) and woke them, or not.
    CilPushWake {
        depth: u32,
        woken: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct TraceEvent {
    pub t_ns: Ns,
    /// The task that caused it (writer index; kernel threads have their own ids).
    pub task: u32,
    pub kind: TraceKind,
}

/// A word-at-a-time multiplicative hash (FxHash's mixing), with `usize`/`isize` widened so
/// native and wasm32 hash the same. Not for adversarial input: only determinism checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceHasher(pub u64);

impl Default for TraceHasher {
    fn default() -> Self {
        TraceHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl TraceHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for TraceHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.mix(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.mix(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }
    fn write_i64(&mut self, n: i64) {
        self.mix(n as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }
    fn write_isize(&mut self, n: isize) {
        self.mix(n as i64 as u64);
    }
}
