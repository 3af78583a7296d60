//! The devices panel: each block device's volatile cache against its stable media, and the
//! requests in flight with their PREFLUSH and FUA marks.

use std::rc::Rc;
use xlog::{DevicePanel, FlashErase, IoKind, LinkShare};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct DevicesProps {
    pub devices: Rc<Vec<DevicePanel>>,
}

fn kind(k: &IoKind) -> &'static str {
    match k {
        IoKind::Write { preflush: true, fua: true } => "write PREFLUSH|FUA",
        IoKind::Write { preflush: true, fua: false } => "write PREFLUSH",
        IoKind::Write { preflush: false, fua: true } => "write FUA",
        IoKind::Write { .. } => "write",
        IoKind::Flush => "cache flush",
        IoKind::Read => "read",
    }
}

/// A host stall, in words: under way (every request in flight waits it out), or the rate
/// stalls come at now.
fn stall_text(left: Option<u64>, writeback: bool) -> String {
    let rate = if writeback {
        "about one per 54 ms while metadata is being written back, as now"
    } else {
        "about one per 0.65 s while no metadata is being written back, as now"
    };
    match left {
        Some(ns) => format!(
            "stalling now, {:.1} ms more: nothing completes until it ends, requests in flight and those issued meanwhile wait ({rate})",
            ns as f64 / 1e6
        ),
        None => format!("none under way; {rate}"),
    }
}

/// A flash drive's block erases, in words: what a flush or FUA write issued now may wait for.
fn erase_text(e: &FlashErase) -> String {
    let so_far = format!(
        "{} block{} of {} MiB erased so far, one for every {} MiB programmed, {:.1} ms each on one of its {} dies in turn",
        e.erased,
        if e.erased == 1 { "" } else { "s" },
        e.block_bytes >> 20,
        e.block_bytes >> 20,
        e.erase_ns as f64 / 1e6,
        e.dies
    );
    match e.erasing {
        0 => format!("none under way; {so_far}"),
        n => format!(
            "{n} die{} erasing, {:.1} ms more: a cache flush or FUA write whose pages need {} waits for it ({so_far})",
            if n == 1 { "" } else { "s" },
            e.left_ns as f64 / 1e6,
            if n == 1 { "that die" } else { "one of them" }
        ),
    }
}

/// A disk's actuator(s), in words: what a read or a write-through write issued now waits for.
fn actuator_text(busy: &[u64]) -> String {
    let ms = |ns: u64| if ns == 0 { "idle".to_string() } else { format!("{:.1} ms", ns as f64 / 1e6) };
    match busy {
        [0] => {
            "idle: a read or write-through write starts at once; writes into the cache never wait for it (NCQ)".into()
        }
        [one] => format!(
            "busy for {} more with the reads and write-through writes queued for it; writes into the cache do not wait for it (NCQ)",
            ms(*one)
        ),
        disks => format!(
            "{}: still queued on each disk's heads (reads and write-through writes); writes into the cache do not wait for them (NCQ)",
            disks.iter().enumerate().map(|(i, &ns)| format!("disk {i} {}", ms(ns))).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// A SATA drive's cache flush, in words: libata does not queue it beside other commands.
fn flush_hold_text(left: Option<u64>) -> String {
    match left {
        Some(ns) => format!(
            "a cache flush holds the queue for {:.1} ms more: no read or write reaches the drive until it is done (SATA: FLUSH CACHE is not queued)",
            ns as f64 / 1e6
        ),
        None => "none now; a cache flush waits for the commands in flight, then holds every new one until it is done (SATA: FLUSH CACHE is not queued)".into(),
    }
}

/// The link a device with one hardware queue shares among its writes, in words.
fn link_text(l: &LinkShare) -> String {
    let rate = l.bytes_per_sec / 1_000_000;
    match l.moving {
        0 => format!("idle: a write sent now moves its data at {rate} MB/s"),
        n => format!(
            "{n} write{} moving their data, {:.1} ms of it left at {rate} MB/s: a write sent now shares the link with them (one hardware queue)",
            if n == 1 { "" } else { "s" },
            l.backlog_ns as f64 / 1e6
        ),
    }
}

/// A disk's background destaging, in words: what a cache flush issued now would wait for.
fn destage_text(waiting: u64, bytes: u64, busy_ns: u64) -> String {
    let writes = |n: u64| format!("{n} write{}", if n == 1 { "" } else { "s" });
    match (busy_ns, waiting) {
        (0, 0) => "none: a cache flush now waits only for its own command".into(),
        (0, n) => format!("{} ({} KiB), about to be written out", writes(n), bytes / 1024),
        (busy, 0) => format!("the disk is writing its cache out for another {:.1} ms; a cache flush waits for that", busy as f64 / 1e6),
        (busy, n) => format!(
            "the disk is writing its cache out for another {:.1} ms, then {} more ({} KiB); a cache flush waits for all of it",
            busy as f64 / 1e6,
            writes(n),
            bytes / 1024
        ),
    }
}

#[function_component(DevicesPanel)]
pub fn devices_panel(p: &DevicesProps) -> Html {
    html! {
        <div class="panel" data-testid="devices" style="margin-top:14px">
            <h2>{ "devices" }</h2>
            <p class="what">{ "A completed write sits in the drive's volatile cache until a cache flush (or its own FUA) makes it stable; \
                a crash keeps only stable media and whatever part of the cache happens to survive. A disk also writes its cache to the platters \
                in the background, so a flush waits only for what it has not yet written; without a flush nothing promises that, so the crash \
                explorer still counts every unflushed write as at risk." }</p>
            { for p.devices.iter().map(|d| html! {
                <div class="device">
                    <h3>{ format!("{} device — {}{}", d.role, d.profile, if d.volatile_cache { "" } else { " (no volatile cache: flushes elided)" }) }</h3>
                    <table class="stats">
                        <tr><td>{ "in the volatile cache" }</td><td data-key={format!("{}-cached", d.role)}>{ format!("{} writes, {} KiB", d.cached_writes, d.cached_bytes / 1024) }</td></tr>
                        if let Some((left, writeback)) = d.host_stall {
                            <tr class={classes!(left.is_some().then_some("alert"))}><td>{ "host stalls (this machine's disk)" }</td>
                                <td data-key={format!("{}-stall", d.role)}>{ stall_text(left, writeback) }</td></tr>
                        }
                        if let Some(e) = &d.flash_erase {
                            <tr class={classes!((e.erasing > 0).then_some("alert"))}><td>{ "block erases (flash)" }</td>
                                <td data-key={format!("{}-erase", d.role)}>{ erase_text(e) }</td></tr>
                        }
                        if let Some(left) = d.flush_hold {
                            <tr class={classes!(left.is_some().then_some("alert"))}><td>{ "cache flush (SATA)" }</td>
                                <td data-key={format!("{}-flush-hold", d.role)}>{ flush_hold_text(left) }</td></tr>
                        }
                        if let Some(l) = &d.link {
                            <tr><td>{ "link (one queue)" }</td><td data-key={format!("{}-link", d.role)}>{ link_text(l) }</td></tr>
                        }
                        if let Some(busy) = &d.actuators {
                            <tr><td>{ "actuator (heads)" }</td><td data-key={format!("{}-actuator", d.role)}>{ actuator_text(busy) }</td></tr>
                        }
                        if let Some((n, bytes, busy)) = d.destage {
                            <tr><td>{ "not yet on the platters" }</td><td data-key={format!("{}-destage", d.role)}>{ destage_text(n, bytes, busy) }</td></tr>
                        }
                        <tr><td>{ "writes / cache flushes / FUA writes / elided" }</td>
                            <td>{ format!("{} / {} / {} / {}", d.stats.writes, d.stats.flushes, d.stats.fua_writes, d.stats.flushes_elided) }</td></tr>
                    </table>
                    <ul class="inflight" aria-label={format!("{} requests in flight", d.inflight.len())}>
                        { for d.inflight.iter().take(8).map(|r| html! {
                            <li>{ format!("#{} {} sector {} ({} KiB)", r.id, kind(&r.kind), r.sector, r.bytes / 1024) }</li>
                        }) }
                        if d.inflight.len() > 8 { <li>{ format!("… {} more", d.inflight.len() - 8) }</li> }
                        if d.inflight.is_empty() { <li class="muted">{ "nothing in flight" }</li> }
                    </ul>
                </div>
            }) }
        </div>
    }
}
