//! `spikes.json` and `spikes.txt`: the late wake-ups explained from kernel
//! trace events (`--trace-on`, docs/trace.md), and `trace.txt`, the trace
//! buffer kept by `--trace-stop`. Written only for runs that traced.

use super::Exporter;
use crate::{RunResult, TraceResult};
use rtshield_trace::{fmt_ns, render_text, SpikeFile};
use std::fmt::Write as _;

/// The explained spikes, machine-readable (schema in docs/trace.md).
pub const SPIKES_JSON: &str = "spikes.json";
/// The explained spikes, one block of text per spike.
pub const SPIKES_TXT: &str = "spikes.txt";
/// The raw trace buffer kept by `--trace-stop`.
pub const TRACE_TXT: &str = "trace.txt";

/// The spike files' exporter: writes nothing for a run that did not trace.
pub struct Spikes;

impl Exporter for Spikes {
    fn name(&self) -> &'static str {
        "spikes"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        let Some(t) = res.trace.as_ref().filter(|t| t.on_latency_ns.is_some()) else {
            return Vec::new();
        };
        let mut v = vec![
            (SPIKES_JSON.into(), to_spikes_json(t)),
            (SPIKES_TXT.into(), to_spikes_txt(t)),
        ];
        if let Some(raw) = &t.raw {
            v.push((TRACE_TXT.into(), raw.clone()));
        }
        v
    }
}

/// `spikes.json`, version 1 (schema in docs/trace.md).
pub fn to_spikes_json(t: &TraceResult) -> String {
    let mut s =
        serde_json::to_string_pretty(&SpikeFile::new(t.spikes.clone())).expect("spikes serialise");
    s.push('\n');
    s
}

/// The one-line summary of a traced run (end of `measure`, `run`, report).
pub fn spikes_summary(t: &TraceResult) -> String {
    if let Some(why) = &t.unavailable {
        return format!("no trace: {why}");
    }
    let Some(lat) = t.on_latency_ns else {
        return "tracing for --split only".into();
    };
    let mut s = format!(
        "{} wake-up{} later than {}, {} explained",
        t.spikes_seen,
        if t.spikes_seen == 1 { "" } else { "s" },
        fmt_ns(lat),
        t.spikes.len()
    );
    if t.spikes_not_analysed > 0 {
        let _ = write!(s, ", {} not analysed", t.spikes_not_analysed);
    }
    if !t.errors.is_empty() {
        let _ = write!(s, ", {} not explained", t.errors.len());
    }
    if let Some(st) = t.steal_ns {
        let _ = write!(s, "; VM steal time on the measured CPUs: {}", fmt_ns(st));
    }
    s
}

/// `spikes.txt`: the summary, then one block per spike
/// ([`rtshield_trace::render_text`]), then what could not be explained.
pub fn to_spikes_txt(t: &TraceResult) -> String {
    let mut s = format!("# {}\n", spikes_summary(t));
    if t.stop {
        s.push_str(
            "# --trace-stop: tracing stopped at the first spike; the buffer is in trace.txt\n",
        );
    }
    if !t.events_missing.is_empty() {
        let _ = writeln!(
            s,
            "# events not in this kernel: {}",
            t.events_missing.join(" ")
        );
    }
    s.push_str(&render_text(&t.spikes));
    for e in &t.errors {
        let _ = writeln!(s, "not explained: {e}");
    }
    s
}
