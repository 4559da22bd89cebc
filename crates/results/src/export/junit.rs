//! `junit.xml`: JUnit XML as CI servers (Jenkins, GitLab, …) read it: one
//! test suite per run, one test case per measuring thread, failed when the
//! thread's maximum exceeds the limit (`--max-latency`; without a limit
//! every thread that measured passes). The figures are `<property>`s of
//! the test case, in ns.

use super::Exporter;
use crate::unknown::or;
use crate::{RunResult, ThreadResult, PERCENTILES};
// Attribute escaping for text too: newlines stay `&#10;` everywhere.
use rtshield_text::markup::attribute as esc;
use std::fmt::Write as _;

pub const JUNIT_FILE: &str = "junit.xml";

/// The JUnit exporter; `max_latency_ns` is the pass/fail limit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Junit {
    pub max_latency_ns: Option<u64>,
}

impl Exporter for Junit {
    fn name(&self) -> &'static str {
        "junit"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        vec![(JUNIT_FILE.into(), to_junit(res, self.max_latency_ns))]
    }
}

/// Why thread `t` fails, if it does.
fn failure(t: &ThreadResult, limit: Option<u64>) -> Option<String> {
    if t.samples == Some(0) {
        return Some("no sample measured".into());
    }
    let l = limit?;
    (t.max_ns > l as i64).then(|| {
        format!(
            "maximum latency {:.1} us exceeds the limit {:.1} us",
            t.max_ns as f64 / 1000.0,
            l as f64 / 1000.0
        )
    })
}

fn prop(s: &mut String, indent: &str, k: &str, v: &str) {
    let _ = writeln!(
        s,
        "{indent}<property name=\"{}\" value=\"{}\"/>",
        esc(k),
        esc(v)
    );
}

fn thread_name(t: &ThreadResult) -> String {
    match t.cpu {
        Some(c) => format!("thread {} (cpu {c})", t.index),
        None => format!("thread {}", t.index),
    }
}

/// The file's text.
pub fn to_junit(res: &RunResult, limit: Option<u64>) -> String {
    let si = &res.sysinfo;
    let host = si.hostname.as_deref().unwrap_or("unknown");
    let kernel = si.kernel_release.as_deref().unwrap_or("unknown");
    let n = res.threads.len();
    let failures = res
        .threads
        .iter()
        .filter(|t| failure(t, limit).is_some())
        .count();
    let time = format!("{:.3}", res.duration_s.unwrap_or(0.0).max(0.0));
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"rtshield\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" time=\"{time}\">"
    );
    let _ = writeln!(
        s,
        "  <testsuite name=\"{}\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\" time=\"{time}\" timestamp=\"{}\" hostname=\"{}\">",
        esc(&format!("rtshield latency {host} {kernel}")),
        esc(res.started_at.as_deref().unwrap_or_default()),
        esc(host)
    );
    s.push_str("    <properties>\n");
    let o = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    prop(&mut s, "      ", "tool", &res.tool);
    prop(&mut s, "      ", "kernel", kernel);
    prop(&mut s, "      ", "kernel_version", &o(&si.kernel_version));
    prop(&mut s, "      ", "preempt", &o(&si.preempt_model));
    prop(&mut s, "      ", "arch", &si.arch);
    // An unknown value: no property.
    if let Some(m) = &res.settings.mode {
        prop(&mut s, "      ", "mode", m);
    }
    if let Some(e) = &res.end_reason {
        prop(&mut s, "      ", "end_reason", e);
    }
    if let Some(l) = limit {
        prop(&mut s, "      ", "max_latency_ns", &l.to_string());
    }
    for (k, v) in &res.tags {
        prop(&mut s, "      ", &format!("tag.{k}"), v);
    }
    s.push_str("    </properties>\n");
    for t in &res.threads {
        let _ = writeln!(
            s,
            "    <testcase classname=\"rtshield.latency\" name=\"{}\" time=\"{time}\">",
            esc(&thread_name(t))
        );
        s.push_str("      <properties>\n");
        let ind = "        ";
        prop(
            &mut s,
            ind,
            "cpu",
            &t.cpu.map_or("-".into(), |c| c.to_string()),
        );
        if t.policy.is_some() || t.priority.is_some() {
            let policy = format!("{} {}", or(t.policy, "?"), or(t.priority, "?"));
            prop(&mut s, ind, "policy", &policy);
        }
        let known = |s: &mut String, k: &str, v: Option<u64>| {
            if let Some(v) = v {
                prop(s, ind, k, &v.to_string());
            }
        };
        known(&mut s, "period_ns", t.period_ns);
        known(&mut s, "samples", t.samples);
        prop(&mut s, ind, "min_ns", &t.min_ns.to_string());
        prop(&mut s, ind, "avg_ns", &format!("{:.1}", t.avg_ns));
        prop(&mut s, ind, "max_ns", &t.max_ns.to_string());
        for k in PERCENTILES {
            if let Some(v) = t.percentiles.get(*k) {
                prop(&mut s, ind, &format!("p{k}_ns"), &v.to_string());
            }
        }
        known(&mut s, "overruns", t.overruns);
        known(&mut s, "missed_periods", t.missed_periods);
        known(&mut s, "lost", t.lost);
        s.push_str("      </properties>\n");
        if let Some(why) = failure(t, limit) {
            let _ = writeln!(
                s,
                "      <failure type=\"latency\" message=\"{}\">{}</failure>",
                esc(&why),
                esc(&format!(
                    "{}: {} samples, min {} ns, avg {:.1} ns, max {} ns",
                    thread_name(t),
                    or(t.samples, "?"),
                    t.min_ns,
                    t.avg_ns,
                    t.max_ns
                ))
            );
        }
        s.push_str("    </testcase>\n");
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}
