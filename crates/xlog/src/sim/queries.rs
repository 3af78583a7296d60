//! Read-only accessors: what the crash explorer, the CLI and the lab may read of a run.

use super::{History, Item, PushState, Sim, WriterState};
use crate::ail::Ail;
use crate::cil::Cil;
use crate::device::Device;
use crate::geometry::Geometry;
use crate::log::Xlog;
use crate::scenario::Scenario;
use crate::units::Ns;

impl Sim {
    pub fn writer_state(&self, w: u32) -> Option<WriterState> {
        self.writers.get(w as usize).map(|wr| wr.state)
    }
    pub fn pusher_state(&self, k: u32) -> Option<PushState> {
        self.pushers.get(k as usize).map(|p| p.state)
    }
    /// Events processed so far (cheap; `metrics()` computes quantiles).
    pub fn events(&self) -> u64 {
        self.counters.events
    }
    pub fn now(&self) -> Ns {
        self.now
    }
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    pub fn unit_res(&self) -> u32 {
        self.unit_res
    }
    pub fn history(&self) -> &History {
        &self.history
    }
    /// Creates that reused an inode past the run's inode cap (`alloc_item`).
    pub fn inodes_reused(&self) -> u64 {
        self.inodes_reused
    }
    /// Folds old checkpoints in batches of `batch` (`FOLD_BATCH` by default), or never with
    /// 0: tests compare crash verdicts with and without folding.
    pub fn set_history_fold(&mut self, batch: usize) {
        self.fold_batch = batch;
    }
    pub fn devices(&self) -> &[Device] {
        &self.devs
    }
    pub fn log_start_sector(&self) -> u64 {
        self.log_start
    }
    pub fn data_device(&self) -> usize {
        self.data_dev
    }
    pub fn items(&self) -> &[Item] {
        &self.items
    }
    pub fn xlog(&self) -> &Xlog {
        &self.log
    }
    pub fn ail(&self) -> &Ail {
        &self.ail
    }
    pub fn cil(&self) -> &Cil {
        &self.cil
    }
    pub fn uuid(&self) -> [u8; 16] {
        self.uuid
    }
    /// Device self-check failures (a broken flush or FUA rule) on any device.
    pub fn semantics_violations(&self) -> u64 {
        self.devs.iter().map(|d| d.stats().semantics_violations).sum()
    }
    /// Log writes that would have overwritten the live log past the tail.
    pub fn live_overwrites(&self) -> u64 {
        self.monitor.live_overwrites
    }
    /// fsyncs acknowledged before their data was stable (durability, at the ack).
    pub fn acked_unstable(&self) -> u64 {
        self.monitor.acked_unstable
    }
    /// Checkpoints that completed (items unpinned) before all their log blocks were stable.
    pub fn checkpoints_unstable_at_completion(&self) -> u64 {
        self.monitor.ckpt_unstable_at_completion
    }
    /// (events, virtual time) at which the live-overwrite, commit-implies-checkpoint and
    /// durability monitors first fired, in that order.
    pub fn first_monitor_violations(&self) -> [Option<(u64, Ns)>; 3] {
        self.monitor.first
    }
    /// Virtual time of the next queued event, if any.
    pub fn next_event_at(&self) -> Option<Ns> {
        self.queue.peek().map(|(t, _)| t)
    }

    pub fn is_hung(&self) -> bool {
        self.hung
    }
    pub fn trace_hash(&self) -> u64 {
        self.hash.0
    }
    pub fn finished(&self) -> bool {
        self.queue.peek().is_none_or(|(t, _)| t > self.scenario.duration.0) || self.hung
    }

    /// Roughly what a clone of this simulation holds that a clone does not share: items,
    /// iclog buffers, cached writes, the history and the device page tables. The pages
    /// themselves are shared until written (`device_page_buffers` tells them apart). The lab
    /// keeps its time-travel snapshots within a budget of both.
    pub fn approx_clone_bytes(&self) -> u64 {
        let items = self.items.len() as u64 * std::mem::size_of::<Item>() as u64;
        let iclogs = self.log.iclogs().iter().map(|ic| ic.data.len() as u64).sum::<u64>();
        let cache = self.devs.iter().map(|d| d.cached_bytes()).sum::<u64>();
        let history = self.history.checkpoints.iter().map(|c| 64 + c.items.len() as u64 * 16).sum::<u64>()
            + self.history.records.len() as u64 * 16
            + self.history.base.len() as u64 * 64;
        // A BTreeMap entry: key, Arc and presence bits, with node overhead.
        let page_tables = self.devs.iter().map(|d| d.stable().pages() as u64 * 48).sum::<u64>();
        let dirs = self.writers.iter().map(|w| w.dir.approx_bytes()).sum::<u64>();
        items + iclogs + cache + history + page_tables + dirs
    }

    /// Every stable device page's buffer address and size (see `SectorMap::page_buffers`).
    pub fn device_page_buffers(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.devs.iter().flat_map(|d| d.stable().page_buffers())
    }
}
