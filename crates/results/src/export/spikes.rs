//! `spikes.json` and `spikes.txt`: the late wake-ups explained from kernel
//! trace events (`--trace-on`, docs/trace.md), and `trace.txt`, the trace
//! buffer kept by `--trace-stop`. Written only for runs that traced.

use super::Exporter;
use crate::{RunResult, TraceResult};
use rtshield_text::terminal::file_text;
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
            // A thread name is any bytes its owner chose: the kernel's
            // text keeps them raw, this file shows them escaped.
            v.push((TRACE_TXT.into(), file_text(raw).into_owned()));
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
    // People `cat` this file (the terminal points to it): thread names
    // and reasons get the terminal's rule (docs/security.md).
    file_text(&s).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adversary round 3, C10: a thread named with terminal escapes
    /// reached spikes.txt raw (the terminal's copy was escaped).
    #[test]
    fn spikes_txt_and_trace_txt_show_thread_names_escaped() {
        let comm = "\x1b]0;PWN\x07\x1b[2J";
        let t: TraceResult = serde_json::from_value(serde_json::json!({
            "on_latency_ns": 300000, "stop": true, "split": false, "buffer_kb": 2048,
            "unavailable": null, "spikes_seen": 1, "spikes_not_analysed": 0,
            "spikes": [{
                "cpu": 1, "pid": 100, "comm": comm,
                "expected_ns": 1000, "timer_expiry_ns": 1500, "wakeup_ns": 2000,
                "switch_in_ns": 1901000, "latency_ns": 1900000,
                "irq_latency_ns": 500, "thread_latency_ns": 1899000,
                "irqs": [], "threads": [],
                "unaccounted_ns": 0,
                "verdict": format!("blocked 1.9 ms by thread `{comm}` (pid 7, nice 0)")
            }]
        }))
        .unwrap();
        let mut t = t;
        // Not in results.json: set as the live run does.
        t.raw = Some(format!("  {comm}-7  [001] d..2. 1.0: sched_switch\n"));
        let mut r = crate::example::example_result();
        r.trace = Some(t);
        let files = Spikes.files(&r);
        assert!(files.iter().any(|(n, _)| n == SPIKES_TXT));
        assert!(files.iter().any(|(n, _)| n == TRACE_TXT));
        for (name, text) in files.iter().filter(|(n, _)| n.ends_with(".txt")) {
            assert!(
                !text.contains('\x1b') && !text.contains('\x07'),
                "{name}: {text:?}"
            );
            assert!(text.contains("\\x1b]0;PWN\\x07\\x1b[2J"), "{name}: {text}");
        }
    }
}
