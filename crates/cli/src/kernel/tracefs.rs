//! A private tracefs instance: chosen events, each with a filter, recorded into a ring buffer
//! of its own, so a run neither sees nor disturbs anyone else's tracing. Removed on drop.

use std::fs;
use std::path::PathBuf;

pub const TRACEFS: &str = "/sys/kernel/tracing";

pub struct Instance {
    path: Option<PathBuf>,
}

impl Instance {
    /// Creates `instances/<name>` with `buffer_kb` per CPU and turns on each `group/event`
    /// with its filter.
    pub fn start(name: &str, buffer_kb: u32, events: &[(String, String)]) -> Result<Instance, String> {
        let path = PathBuf::from(TRACEFS).join("instances").join(name);
        fs::create_dir(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let inst = Instance { path: Some(path.clone()) };
        let w = |rel: &str, v: &str| fs::write(path.join(rel), v).map_err(|e| format!("{}/{rel}: {e}", path.display()));
        w("buffer_size_kb", &buffer_kb.to_string())?;
        for (event, filter) in events {
            w(&format!("events/{event}/filter"), filter)?;
            w(&format!("events/{event}/enable"), "1")?;
        }
        w("trace", "")?;
        w("tracing_on", "1")?;
        Ok(inst)
    }

    /// Stops recording; returns the trace text and how many events the buffers dropped.
    pub fn stop(&self) -> Result<(String, u64), String> {
        let path = self.path.as_ref().ok_or("the trace instance is gone")?;
        let _ = fs::write(path.join("tracing_on"), "0");
        let text = fs::read_to_string(path.join("trace")).map_err(|e| format!("{}/trace: {e}", path.display()))?;
        let lost = fs::read_dir(path.join("per_cpu"))
            .map(|cpus| {
                cpus.flatten()
                    .filter_map(|c| fs::read_to_string(c.path().join("stats")).ok())
                    .map(|st| {
                        st.lines().filter_map(|l| l.strip_prefix("overrun: ")?.trim().parse::<u64>().ok()).sum::<u64>()
                    })
                    .sum()
            })
            .unwrap_or(0);
        Ok((text, lost))
    }

    /// Stops and removes the instance, saying why if it cannot be removed.
    pub fn remove(mut self) -> Result<(), String> {
        self.take_down()
    }

    fn take_down(&mut self) -> Result<(), String> {
        let Some(path) = self.path.take() else { return Ok(()) };
        let _ = fs::write(path.join("tracing_on"), "0");
        fs::remove_dir(&path).map_err(|e| format!("{}: {e}", path.display()))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.take_down();
    }
}

/// The value after `key` in a trace line's fields, as printed (a trailing comma dropped).
pub fn field<'a>(fields: &[&'a str], key: &str) -> Option<&'a str> {
    let i = fields.iter().position(|x| *x == key)?;
    fields.get(i + 1).map(|v| v.trim_end_matches(','))
}
