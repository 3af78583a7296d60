//! xlog: a deterministic model of the XFS journal. The UI and the CLI see only this facade.

mod agi;
mod ail;
mod changes;
mod cil;
mod cpupool;
mod crash;
pub mod crc;
mod device;
mod format;
mod geometry;
mod grant;
mod iclog;
mod layout;
mod links;
mod log;
pub mod logscan;
pub mod logwrites;
mod metrics;
pub mod moment;
mod oracle;
mod presets;
mod profile;
mod recovery;
pub mod rtalloc;
mod scenario;
mod sectors;
mod shard;
mod sim;
pub mod sizing;
pub mod source_threads;
pub mod sweep;
mod trace;
mod tracefmt;
mod units;
pub mod url;
mod workqueue;

pub use changes::{model_changes, model_changes_between, ModelChange, MODEL_VERSION};
pub use cil::{format_item, shadow_size, xlog_cil_blocking_space_limit, xlog_cil_space_limit, Cil, ItemKind};
pub use crash::{
    check_chosen_state, explore as explore_crash_states, explore_events as explore_crash_events,
    explore_only as explore_crash_state, merge_points as merge_crash_points, writes_at_risk, AtRisk, ChosenState,
    CrashExample, CrashLink, CrashPlan, CrashPoints, CrashReport, PointDone, PointReport, EXHAUSTIVE_MAX,
};
pub use device::{DevIo, DeviceProfile, DeviceStats, IoKind, IoReq, ReqFlags};
pub use geometry::Geometry;
pub use grant::{xlog_calc_unit_res, GrantHead, Ticket};
pub use iclog::{icl_flags_str, IclogState};
pub use links::{check_link, compare_hashes, compare_link, link_moment_hash, LinkCheck};
pub use log::Xlog;
pub use metrics::{Metrics, REPORT_GROUPS};
pub use oracle::{Invariant, ALL_INVARIANTS};
pub use presets::{bench_scenario, find as find_preset, find_preset_entry, PlayHint, Preset, DEFAULT_PRESET, PRESETS};
pub use profile::profile;
pub use recovery::{
    log_item_name, recover, recover_log_region, CommittedTrans, Fate, Image, Layer, RecoveryReport, RegionRecovery,
    SharedLog, Survivors,
};
pub use scenario::{
    AgiLock, AilPush, CilSpace, CommitOrdering, CpuModel, CrashModel, DeviceBug, DeviceClass, Directory, Duration,
    FlushPolicy, ForceFlush, FsyncOp, HostFlush, RsumCache, SataFua, Scenario, Setting, ShadowRound, Size,
    StartRecordOrder, TailUpdate, Throttle, TxWorkAt, UnitResRoundoff, WorkloadKind, Xfsaild, SET_KEYS,
};
pub use sectors::SectorMap;
pub use shard::{Shard, SHARDS_MAX};
pub use sim::{
    AilView, CheckpointPanel, CheckpointRecord, CilView, Command, CommittingPanel, CpuTask, CpusView, DevicePanel,
    FlashErase, FoldedItem, GrantHeadPanel, History, IclogPanel, IclogView, IclogsView, IoPurpose, IoSpan, LinkShare,
    LogSpaceView, Milestone, PushState, RtView, Sim, TasksView, View, Watch, WriterState, BRANCH_KEYS, FOLD_BATCH,
    VIEW_LIST_MAX,
};
pub use trace::{GrantEvent, GrantView, IclogEvent, TicketView, TraceEvent, TraceKind};
pub use tracefmt::{trace_cmd_header, trace_cmd_text, writer_comm, TraceCmdPrinter};
pub use units::{
    format_duration, format_size, parse_duration, parse_size, Lsn, Ns, TaskId, BBSIZE, NS_PER_MS, NS_PER_SEC, NS_PER_US,
};
