//! `loglab run` and `loglab trace`: one scenario, its metrics and its events.

use crate::ScenarioArgs;
use std::io::{BufWriter, Write};
use std::path::Path;
use xlog::moment::Moment;
use xlog::{
    format_duration, parse_duration, trace_cmd_header, writer_comm, Scenario, Sim, TraceCmdPrinter, REPORT_GROUPS,
};

/// The command name writer tasks get in traces: what ran the source threads' workloads.
pub fn run(args: &ScenarioArgs, as_json: bool, trace: Option<&Path>, until: Option<&str>) -> Result<(), String> {
    let (s, link) = args.load_with_link()?;
    let until = until
        .map(|u| {
            let t = parse_duration("--until", u)?;
            if t > s.duration.0 {
                return Err(format!(
                    "--until: {} is past the scenario's duration (allowed: 0 to {})",
                    format_duration(t),
                    format_duration(s.duration.0)
                ));
            }
            Ok(t)
        })
        .transpose()?;
    if let Some(path) = trace {
        let format = if path.extension().is_some_and(|e| e == "json") { "json" } else { "trace-cmd" };
        let f = std::fs::File::create(path).map_err(|e| format!("--trace {}: {e}", path.display()))?;
        let mut out = BufWriter::new(f);
        write_trace(&s, format, &[], None, &mut out).map_err(|e| format!("--trace {}: {e}", path.display()))?;
        out.flush().map_err(|e| format!("--trace {}: {e}", path.display()))?;
    }
    let mut sim = Sim::new(&s)?;
    // The lab's `at=`: the events up to that instant, nothing after.
    Moment::until(until).run(&mut sim);
    let m = sim.metrics();
    let v = serde_json::to_value(&m).map_err(|e| e.to_string())?;
    if as_json {
        crate::print_json(&v);
    } else {
        print_report(&v);
        println!("reproduce: {}", args.link_of(&s, link.as_ref()));
    }
    Ok(())
}

/// The metrics in sections, with units, as `fio` and `iostat` users read them.
fn print_report(v: &serde_json::Value) {
    for (i, (title, keys)) in REPORT_GROUPS.iter().enumerate() {
        if i > 0 {
            println!();
        }
        println!("{title}");
        for (key, unit) in *keys {
            let text = match &v[*key] {
                serde_json::Value::Number(n) if n.is_f64() => format!("{:.3}", n.as_f64().unwrap_or(0.0)),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            println!("{}", format!("  {key:<30} {text:>16} {unit}").trim_end());
        }
    }
}

pub fn trace(s: &Scenario, format: &str, events: &[String], until: Option<&str>) -> Result<(), String> {
    let until = until.map(|u| parse_duration("--until", u)).transpose()?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match write_trace(s, format, events, until, &mut out).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("trace: {e}")),
    }
}

fn check_format(format: &str) -> Result<(), String> {
    match format {
        "trace-cmd" | "trace-cmd-6.18" | "json" => Ok(()),
        _ => Err(format!("--format: '{format}' is not a trace format (allowed: trace-cmd, trace-cmd-6.18, json)")),
    }
}

/// Writes a run's events. trace-cmd text needs the entry count in its header: small traces
/// are held, big ones are counted and the (deterministic) run is done a second time.
fn write_trace(
    s: &Scenario,
    format: &str,
    only: &[String],
    until: Option<u64>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    check_format(format).map_err(std::io::Error::other)?;
    let keep = |name: &str| only.is_empty() || only.iter().any(|e| e == name);
    let comm = writer_comm(s);
    let each = |f: &mut dyn FnMut(&xlog::TraceEvent, String) -> std::io::Result<()>| -> std::io::Result<()> {
        let sim = Sim::new(s).map_err(std::io::Error::other)?;
        let mut p = TraceCmdPrinter::new(comm);
        if format == "trace-cmd-6.18" {
            p = p.kernel_6_18(s.log_size.0);
        }
        // --until: the events `run --until` runs (those at or before it), no wind-down.
        xlog::moment::trace_lines(sim, Moment::until(until), p, keep, f)
    };
    if format == "json" {
        writeln!(out, "[")?;
        let mut first = true;
        each(&mut |ev, _| {
            if !first {
                writeln!(out, ",")?;
            }
            first = false;
            write!(out, "{}", serde_json::to_string(ev).map_err(std::io::Error::other)?)
        })?;
        writeln!(out, "\n]")?;
        return Ok(());
    }
    // Hold the lines while they fit in memory; past that, count now and print on a second run.
    const HOLD_BYTES: usize = 256 << 20;
    let mut held: Vec<String> = Vec::new();
    let (mut n, mut bytes, mut overflow) = (0u64, 0usize, false);
    each(&mut |_, line| {
        n += 1;
        if !overflow {
            bytes += line.len() + 1;
            if bytes > HOLD_BYTES {
                overflow = true;
                held = Vec::new();
            } else {
                held.push(line);
            }
        }
        Ok(())
    })?;
    write!(out, "{}", trace_cmd_header(n))?;
    if !overflow {
        for l in held {
            writeln!(out, "{l}")?;
        }
        return Ok(());
    }
    each(&mut |_, line| writeln!(out, "{line}"))
}
