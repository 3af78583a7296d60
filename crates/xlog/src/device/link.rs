//! A device's link behind one hardware queue, which the writes in flight share.

use super::Device;
use crate::units::Ns;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The link: when the data of the writes sent on it so far has crossed it, and when each
/// still crossing it is done.
#[derive(Clone, Debug, Default)]
pub(super) struct LinkQueue {
    end: Ns,
    transfers: BinaryHeap<Reverse<Ns>>,
}

impl Device {
    /// Flash behind one hardware queue (AHCI's SATA link, a loop device): when a write whose
    /// command is done at `ready` has moved its data (`xfer` at the link's rate alone) over
    /// the link it shares with the writes whose data is still moving. The drive works on its
    /// queued commands side by side, so a small write is not held behind a large one, and a
    /// link with a backlog takes on no more than its rate. Model: a transfer already under
    /// way is not slowed by a later one; reads are let pass (rare here); NVMe's link is not
    /// shared (its queues are served round robin, and the push's copy per region, which
    /// would pace its iclogs, is not modelled). A write not `booked`, held for its PREFLUSH
    /// (starting later than those sent after it), meets the backlog and adds none.
    pub(super) fn link_share(&mut self, ready: Ns, xfer: Ns, booked: bool) -> Ns {
        let lq = &mut self.link;
        while lq.transfers.peek().is_some_and(|&Reverse(t)| t <= ready) {
            lq.transfers.pop();
        }
        let sharing = lq.transfers.len() as u64;
        let done = ready + xfer + lq.end.saturating_sub(ready).min(xfer.saturating_mul(sharing));
        if booked {
            lq.end = lq.end.max(ready) + xfer;
            lq.transfers.push(Reverse(done));
        }
        done
    }

    /// Flash behind one hardware queue, as of `now`: the writes still moving their data over
    /// its link, how long until the last of them is done with it, and the link's rate. None
    /// on other devices.
    pub fn link_state(&self, now: Ns) -> Option<(u64, Ns, u64)> {
        (self.profile.one_flush_queue && self.profile.ncq_disks().is_none()).then(|| {
            let moving = self.link.transfers.iter().filter(|&&Reverse(t)| t > now);
            let (n, last) = moving.fold((0, now), |(n, last), &Reverse(t)| (n + 1, last.max(t)));
            (n, last - now, self.link_rate())
        })
    }
}
