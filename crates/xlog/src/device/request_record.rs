//! The device's request record: what dm-log-writes would log, in order.

use super::request::IoReq;
use super::Device;

/// What a recording device saw, in order (for the dm-log-writes export).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DevIo {
    /// A request was submitted; `flush` if it was a flush or carried PREFLUSH.
    Submit {
        id: u64,
        flush: bool,
    },
    Complete(IoReq),
    /// A named point in the stream (a dm-log-writes mark).
    Mark(String),
}

impl Device {
    /// Starts keeping a record of requests (with their data).
    pub fn record(&mut self) {
        self.requests.get_or_insert_with(Vec::new);
    }

    /// A request record is being kept.
    pub fn recording(&self) -> bool {
        self.requests.is_some()
    }

    /// The request record (empty when none is kept).
    pub fn request_record(&self) -> &[DevIo] {
        self.requests.as_deref().unwrap_or(&[])
    }

    pub fn note(&mut self, e: DevIo) {
        if let Some(j) = &mut self.requests {
            j.push(e);
        }
    }
}
