//! Numbers the source threads publish, as data: what the lab sets beside the model's (never
//! an input to the model).

/// Source thread 000's tables: 200 writers appending synchronously on a 220 GB, 44-AG filesystem,
/// by log size, on 4 hard disks and on 4 NVMe drives.
pub const THREAD000: &[Thread000Row] = &[
    Thread000Row { device: "hdd-x4", log_mib: 10, p995_ms: 520.0, bw_mb_s: 243.0, grant_head_waits: 1875 },
    Thread000Row { device: "hdd-x4", log_mib: 20, p995_ms: 220.0, bw_mb_s: 308.0, grant_head_waits: 540 },
    Thread000Row { device: "hdd-x4", log_mib: 40, p995_ms: 140.0, bw_mb_s: 360.0, grant_head_waits: 6 },
    Thread000Row { device: "hdd-x4", log_mib: 80, p995_ms: 92.0, bw_mb_s: 363.0, grant_head_waits: 0 },
    Thread000Row { device: "hdd-x4", log_mib: 160, p995_ms: 86.0, bw_mb_s: 364.0, grant_head_waits: 0 },
    Thread000Row { device: "nvme-x4", log_mib: 10, p995_ms: 201.0, bw_mb_s: 409.0, grant_head_waits: 898 },
    Thread000Row { device: "nvme-x4", log_mib: 20, p995_ms: 177.0, bw_mb_s: 488.0, grant_head_waits: 144 },
    Thread000Row { device: "nvme-x4", log_mib: 40, p995_ms: 122.0, bw_mb_s: 550.0, grant_head_waits: 0 },
    Thread000Row { device: "nvme-x4", log_mib: 80, p995_ms: 120.0, bw_mb_s: 549.0, grant_head_waits: 0 },
    Thread000Row { device: "nvme-x4", log_mib: 160, p995_ms: 121.0, bw_mb_s: 545.0, grant_head_waits: 0 },
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thread000Row {
    pub device: &'static str,
    pub log_mib: u64,
    pub p995_ms: f64,
    pub bw_mb_s: f64,
    pub grant_head_waits: u64,
}

/// Source thread 000's value of `metric` (a `--json` key) for `device` and a log of `log_bytes`, if
/// the seed publishes one.
pub fn thread000(device: &str, log_bytes: u64, metric: &str) -> Option<f64> {
    let row = THREAD000.iter().find(|r| r.device == device && r.log_mib << 20 == log_bytes)?;
    match metric {
        "latency_ms_p995" => Some(row.p995_ms),
        "data_mb_s" => Some(row.bw_mb_s),
        "grant_head_waits" => Some(row.grant_head_waits as f64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_table_answers_by_device_log_and_metric() {
        assert_eq!(thread000("hdd-x4", 10 << 20, "latency_ms_p995"), Some(520.0));
        assert_eq!(thread000("nvme-x4", 40 << 20, "data_mb_s"), Some(550.0));
        assert_eq!(thread000("nvme-x4", 64 << 20, "data_mb_s"), None, "not a row of the seed");
        assert_eq!(thread000("hdd-x4", 10 << 20, "tx_per_sec"), None, "not published");
        // The shape the lab teaches: the waits fall to zero as the log grows, on both.
        for dev in ["hdd-x4", "nvme-x4"] {
            let w: Vec<u64> = THREAD000.iter().filter(|r| r.device == dev).map(|r| r.grant_head_waits).collect();
            assert!(w.windows(2).all(|p| p[0] >= p[1]) && w[4] == 0, "{dev}: {w:?}");
        }
    }
}
