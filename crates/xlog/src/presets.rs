//! Named scenarios: the presets `loglab presets` lists and the lab opens.

use crate::scenario::{Duration, Scenario, Size, WorkloadKind};
use crate::units::{NS_PER_SEC, NS_PER_US};

pub struct Preset {
    pub name: &'static str,
    pub about: &'static str,
    build: fn() -> Scenario,
}

impl Preset {
    pub fn scenario(&self) -> Scenario {
        (self.build)()
    }
}

pub const DEFAULT_PRESET: &str = "fsync-heavy";

pub static PRESETS: &[Preset] = &[
    Preset {
        name: "fsync-heavy",
        about: "16 writers, small transactions, each followed by an fsync (dbench-like)",
        build: || Scenario { workload: WorkloadKind::FsyncHeavy, writers: 16, fsync: true, ..Scenario::default() },
    },
    Preset {
        name: "fsmark-create",
        about: "concurrent file creates (tr_create) with no fsync, 8 x 32KiB iclogs",
        build: || Scenario {
            workload: WorkloadKind::FsmarkCreate,
            writers: 16,
            fsync: false,
            tx_logres: 214_000,
            tx_logcount: 2,
            tx_items: 4,
            tx_chunks: 4,
            think: Duration(5 * NS_PER_US),
            ..Scenario::default()
        },
    },
    Preset {
        name: "small-crash",
        about: "4 fsync writers on a 2MiB log: small enough for exhaustive crash exploration",
        build: || Scenario {
            workload: WorkloadKind::FsyncHeavy,
            writers: 4,
            fsync: true,
            log_size: Size(2 << 20),
            fs_size: Size(64 << 20),
            tx_logres: 20_000,
            tx_logcount: 2,
            duration: Duration(NS_PER_SEC),
            ..Scenario::default()
        },
    },
];

pub fn find(name: &str) -> Result<Scenario, String> {
    PRESETS.iter().find(|p| p.name == name).map(Preset::scenario).ok_or_else(|| {
        let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        format!("unknown preset '{name}' (available: {})", names.join(", "))
    })
}
