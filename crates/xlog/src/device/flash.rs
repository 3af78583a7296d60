//! Flash: dies that program a page at a time, the FTL's erases, and a flush that drains the
//! cache into the dies.

use super::media::Flash;
use super::{transfer_ns, Device};
use crate::units::Ns;
use rand_core::RngCore;

/// A flash page: what a die programs at once.
pub(super) const FLASH_PAGE_BYTES: u64 = 16 << 10;

/// Program time of the three pages of a TLC wordline (lower, middle, upper), in quarters of
/// the profile's mean `program_ns`: each extra bit per cell needs finer program-verify steps.
const TLC_PROGRAM_QUARTERS: [u64; 3] = [2, 4, 6];

/// Flash with its erases modelled: bytes programmed so far, when each die's erase under way
/// ends, the die the next page goes to, and how many blocks have been erased.
#[derive(Clone, Debug)]
pub(super) struct FlashState {
    programmed: u64,
    /// The cache's writes from this `cseq` on are not yet programmed, and the last drain
    /// started ends here.
    programmed_mark: u64,
    drained_at: Ns,
    die_busy: Vec<Ns>,
    next_die: usize,
    erases: u64,
}

impl FlashState {
    /// `dies` is 0 where erases are not modelled.
    pub(super) fn new(dies: usize) -> FlashState {
        FlashState { programmed: 0, programmed_mark: 0, drained_at: 0, die_busy: vec![0; dies], next_die: 0, erases: 0 }
    }
}

impl Device {
    /// A write-through program on flash: which page of its wordline it lands on sets the time.
    pub(super) fn program_ns(&mut self, f: &Flash) -> Ns {
        let Some(program) = f.program_ns else { return 0 };
        let quarters = TLC_PROGRAM_QUARTERS[(self.rng.next_u64() % 3) as usize];
        program * quarters / 4
    }

    /// Flash: `bytes` programmed from `start` for `busy`: how much longer it takes because a
    /// die its pages need is erasing. Each block's worth programmed then starts an erase on
    /// the next die once this program is done.
    /// Model: no erase suspend; the FTL erases a block when it has filled one, not ahead.
    pub(super) fn program_dies(&mut self, start: Ns, bytes: u64, busy: Ns) -> Ns {
        let Some(erase) = self.profile.erase().copied() else { return 0 };
        let s = &mut self.flash;
        let dies = s.die_busy.len();
        if dies == 0 || bytes == 0 {
            return 0;
        }
        let pages = bytes.div_ceil(FLASH_PAGE_BYTES);
        let used = pages.min(dies as u64) as usize;
        let ready = (0..used).map(|i| s.die_busy[(s.next_die + i) % dies]).max().unwrap_or(0);
        let wait = ready.saturating_sub(start);
        s.next_die = (s.next_die + (pages % dies as u64) as usize) % dies;
        s.programmed += bytes;
        let done = start + wait + busy;
        while s.erases < s.programmed / erase.block_bytes.max(1) {
            let d = (s.erases % dies as u64) as usize;
            s.die_busy[d] = s.die_busy[d].max(done) + erase.erase_ns;
            s.erases += 1;
        }
        wait
    }

    /// A flush started at `start` on flash pays for every write cached since the last flush:
    /// the FTL commits their mappings (per extent) and programs their data.
    pub(super) fn flash_flush_ns(&mut self, start: Ns) -> Ns {
        if self.cache.is_empty() {
            return self.profile.flush_base_ns;
        }
        let p = &self.profile;
        let extents = self.cache.len() as u64;
        let busy =
            p.flush_base_ns + extents * p.flush_per_extent_ns + transfer_ns(self.cached_bytes, p.media_bytes_per_sec);
        if self.flash.die_busy.is_empty() {
            return busy;
        }
        // Flushes side by side drain one cache: the first programs what is new since the
        // last drain, and none completes before the drain it shares is done.
        let mark = std::mem::replace(&mut self.flash.programmed_mark, self.next_cseq);
        let fresh: u64 = self.cache.iter().rev().take_while(|w| w.cseq >= mark).map(|w| w.bytes).sum();
        let end = start + busy + self.program_dies(start, fresh, busy);
        self.flash.drained_at = self.flash.drained_at.max(end);
        self.flash.drained_at - start
    }

    /// Flash with its erases modelled, as of `now`: blocks erased so far (or begun), the dies
    /// erasing now, and how long the last of those still needs.
    pub fn erase_state(&self, now: Ns) -> Option<(u64, u32, Ns)> {
        let erase = self.profile.erase()?.erase_ns;
        let s = &self.flash;
        (!s.die_busy.is_empty()).then(|| {
            let erasing = s.die_busy.iter().filter(|&&end| end > now && end - erase <= now);
            let (n, left) = erasing.fold((0, 0), |(n, left), &end| (n + 1, left.max(end - now)));
            (s.erases, n, left)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::device::Device;
    use crate::profile::profile;
    use crate::scenario::{DeviceBug, DeviceClass};

    #[test]
    fn a_flash_page_takes_its_type_s_time() {
        // TLC program times: three page types, their mean the profile's.
        let mut f = Device::new(profile(DeviceClass::Nvme), DeviceBug::None, 1);
        let flash = *f.profile().flash().unwrap();
        let program = flash.program_ns.unwrap();
        let times: Vec<u64> = (0..3000).map(|_| f.program_ns(&flash)).collect();
        let kinds: std::collections::BTreeSet<u64> = times.iter().copied().collect();
        assert_eq!(kinds.len(), 3);
        let mean = times.iter().sum::<u64>() / times.len() as u64;
        assert!(mean.abs_diff(program) < program / 20, "{mean}");
    }
}
