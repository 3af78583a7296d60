//! The volatile write cache and the durability rules: what a completion makes stable.

use super::request::{stamp_in_place, CachedWrite, IoKind, IoReq};
use super::request_record::DevIo;
use super::Device;
use crate::scenario::DeviceBug;
use crate::sectors::SectorMap;
use crate::units::Ns;
use std::collections::VecDeque;

/// `Device::inflight_at` of a request no longer in flight.
const GONE: u32 = u32::MAX;

impl Device {
    /// Completes request `id`, applying the durability rules; returns the request. A write
    /// left in the volatile cache moves its data there: the returned request has none.
    pub fn complete(&mut self, id: u64) -> IoReq {
        let pos = std::mem::replace(self.inflight_slot(id), GONE);
        assert!(pos != GONE, "completing an in-flight request");
        let mut req = self.inflight.swap_remove(pos as usize);
        if let Some(moved) = self.inflight.get(pos as usize).map(|r| r.id) {
            *self.inflight_slot(moved) = pos;
        }
        while self.inflight_at.front() == Some(&GONE) {
            self.inflight_at.pop_front();
            self.inflight_base += 1;
        }
        if self.recording() {
            self.note(DevIo::Complete(req.clone()));
        }
        match req.kind {
            IoKind::Read => {}
            IoKind::Flush => self.flush_through(req.flush_mark),
            IoKind::Write { preflush, fua } => {
                // An emulated FUA's flush ran after the write: it covers what completed
                // before the write was submitted at least (the conservative mark).
                if preflush || (fua && !self.profile.fua) {
                    self.flush_through(req.flush_mark);
                }
                let stable = !self.profile.volatile_cache || (fua && self.bug != DeviceBug::FuaIgnored);
                if stable {
                    self.stable.write_record(req.sector, &req.data, req.bytes, req.crc);
                } else {
                    // A FUA write left in the cache breaks the device's own promise.
                    self.stats.semantics_violations += fua as u64;
                    self.cached_bytes += req.bytes;
                    self.cache.push_back(CachedWrite {
                        cseq: self.next_cseq,
                        req_id: req.id,
                        sector: req.sector,
                        data: std::mem::take(&mut req.data),
                        bytes: req.bytes,
                        crc: req.crc,
                    });
                    self.next_cseq += 1;
                }
            }
        }
        req
    }

    /// Makes every cached write with a completion sequence below `mark` stable.
    fn flush_through(&mut self, mark: u64) {
        if self.bug == DeviceBug::FlushIgnored {
            if self.cache.front().is_some_and(|w| w.cseq < mark) {
                self.stats.semantics_violations += 1;
            }
            return;
        }
        while let Some(w) = self.cache.front() {
            if w.cseq >= mark {
                break;
            }
            let w = self.cache.pop_front().expect("front exists");
            self.cached_bytes -= w.bytes;
            self.stable.write_record(w.sector, &w.data, w.bytes, w.crc);
        }
    }

    /// Stamps the CRCs of the log records this device holds (before recovery reads them):
    /// on stable media, and in the cache's and in-flight writes' own bytes, so a crash
    /// explorer reading them at point after point computes each once.
    pub fn settle_crcs(&mut self) {
        self.stable.settle();
        for w in &mut self.cache {
            stamp_in_place(&mut w.data, w.bytes, &mut w.crc);
        }
        for r in &mut self.inflight {
            stamp_in_place(&mut r.data, r.bytes, &mut r.crc);
        }
    }

    /// A request submitted at `now` and done at `done`: it gets the next id and goes in flight
    /// (and in the request record); returns (id, done).
    pub(super) fn issue(
        &mut self,
        now: Ns,
        done: Ns,
        kind: IoKind,
        sector: u64,
        (data, bytes): (Vec<u8>, u64),
        tag: u64,
    ) -> (u64, Ns) {
        let id = self.next_id;
        self.next_id += 1;
        let flush_mark = self.next_cseq;
        let (flush_window, crc) = (None, None);
        let req =
            IoReq { id, kind, sector, data, bytes, submit_ns: now, done_ns: done, flush_mark, tag, flush_window, crc };
        self.push_inflight(req);
        let flush = matches!(kind, IoKind::Flush | IoKind::Write { preflush: true, .. });
        self.note(DevIo::Submit { id, flush });
        (id, done)
    }

    /// Puts a submitted request in flight. Its index goes in `inflight_at`: completion is a
    /// lookup, not a scan (2000 writers).
    fn push_inflight(&mut self, req: IoReq) {
        if self.inflight_at.is_empty() {
            self.inflight_base = req.id;
        }
        let slot = (req.id - self.inflight_base) as usize;
        self.inflight_at.resize(self.inflight_at.len().max(slot + 1), GONE);
        self.inflight_at[slot] = self.inflight.len() as u32;
        self.inflight.push(req);
    }

    fn inflight_slot(&mut self, id: u64) -> &mut u32 {
        let slot = id.checked_sub(self.inflight_base).expect("a request id in the window");
        &mut self.inflight_at[slot as usize]
    }

    /// Stable media only: what survives any crash (the cache is `cached()`).
    pub fn stable(&self) -> &SectorMap {
        &self.stable
    }
    pub fn cached(&self) -> &VecDeque<CachedWrite> {
        &self.cache
    }
    pub fn inflight(&self) -> &[IoReq] {
        &self.inflight
    }
    pub fn cached_bytes(&self) -> u64 {
        self.cached_bytes
    }
    pub fn queue_len(&self) -> usize {
        self.inflight.len()
    }
    /// Completion sequence the next cached write will get.
    pub fn next_cseq(&self) -> u64 {
        self.next_cseq
    }
}
