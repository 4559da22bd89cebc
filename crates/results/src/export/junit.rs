//! `junit.xml`: JUnit XML as CI servers (Jenkins, GitLab, …) read it: one
//! test suite per run, one test case per measuring thread, failed when the
//! run's verdict ([`crate::Verdict`]) says the thread failed a limit, or
//! when it measured nothing.
//!
//! One document valid under both common schemas, Jenkins xunit's
//! `junit-10.xsd` and Ant's `JUnit.xsd` (their intersection): a
//! `<testsuites>` root without attributes; one `<testsuite>` with `package`
//! and `id`, a `timestamp` without time zone (`YYYY-MM-DDTHH:MM:SS`, UTC),
//! and its children in Ant's order (`properties`, `testcase`…,
//! `system-out`, `system-err`); `<testcase>` with `name`, `classname` and
//! `time` only, holding at most a `<failure>`. The thread's figures are
//! suite properties named `thread<N>.<figure>` (neither schema allows
//! properties in a test case) and a text summary in `<system-out>`.

use super::Exporter;
use crate::unknown::or;
use crate::{effective_verdict, Limits, RunResult, ThreadResult, Verdict, PERCENTILES};
use rtshield_text::{markup_attribute as esc, markup_text as esc_text};
use std::fmt::Write as _;

/// The name of the JUnit file.
pub const JUNIT_FILE: &str = "junit.xml";

/// The JUnit exporter; `limits` are given at export time and replace the
/// recorded ones of the same kind (`export --max-latency`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Junit {
    /// Export-time limits.
    pub limits: Limits,
}

impl Exporter for Junit {
    fn name(&self) -> &'static str {
        "junit"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        vec![(JUNIT_FILE.into(), to_junit(res, &self.limits))]
    }
}

/// Why thread `t` fails, if it does: the verdict's failures, or no sample.
fn failure(t: &ThreadResult, verdict: Option<&Verdict>) -> Option<String> {
    let failed: Vec<String> = verdict
        .and_then(|v| v.thread(t.index))
        .map(|tv| tv.failures.iter().map(|f| f.message()).collect())
        .unwrap_or_default();
    if !failed.is_empty() {
        return Some(failed.join("; "));
    }
    (t.samples == Some(0)).then(|| "no sample measured".into())
}

fn prop(s: &mut String, k: &str, v: &str) {
    let _ = writeln!(
        s,
        "      <property name=\"{}\" value=\"{}\"/>",
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

/// Ant's `timestamp` (`YYYY-MM-DDTHH:MM:SS`, no zone) of an RFC 3339 time,
/// in UTC; None when `started` is not one.
fn ant_timestamp(started: &str) -> Option<String> {
    let t = super::cyclictest_json::parse_rfc3339(started)?;
    let (y, m, d) = super::cyclictest_json::civil_from_days(t.div_euclid(86400));
    let s = t.rem_euclid(86400);
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        s / 3600,
        s % 3600 / 60,
        s % 60
    ))
}

/// The thread's figures as `thread<N>.<name>` properties (ns); a figure
/// the source did not record has none.
fn thread_props(s: &mut String, t: &ThreadResult) {
    let k = |name: &str| format!("thread{}.{name}", t.index);
    prop(s, &k("cpu"), &t.cpu.map_or("-".into(), |c| c.to_string()));
    if t.policy.is_some() || t.priority.is_some() {
        let policy = format!("{} {}", or(t.policy, "?"), or(t.priority, "?"));
        prop(s, &k("policy"), &policy);
    }
    for (name, v) in [("period_ns", t.period_ns), ("samples", t.samples)] {
        if let Some(v) = v {
            prop(s, &k(name), &v.to_string());
        }
    }
    // Unknown (a thread that measured nothing): no property.
    if let Some(v) = t.min_ns {
        prop(s, &k("min_ns"), &v.to_string());
    }
    if let Some(v) = t.avg_ns {
        prop(s, &k("avg_ns"), &format!("{v:.1}"));
    }
    if let Some(v) = t.max_ns {
        prop(s, &k("max_ns"), &v.to_string());
    }
    for p in PERCENTILES {
        if let Some(v) = t.percentiles.get(*p) {
            prop(s, &k(&format!("p{p}_ns")), &v.to_string());
        }
    }
    for (name, v) in [
        ("overruns", t.overruns),
        ("missed_periods", t.missed_periods),
        ("lost", t.lost),
    ] {
        if let Some(v) = v {
            prop(s, &k(name), &v.to_string());
        }
    }
}

/// The file's text; `extra`: limits given at export time.
pub fn to_junit(res: &RunResult, extra: &Limits) -> String {
    let verdict = effective_verdict(res, *extra);
    let si = &res.sysinfo;
    let host = si.hostname.as_deref().unwrap_or("unknown");
    let kernel = si.kernel_release.as_deref().unwrap_or("unknown");
    let n = res.threads.len();
    let failures = res
        .threads
        .iter()
        .filter(|t| failure(t, verdict.as_ref()).is_some())
        .count();
    // Unknown duration (an import of a `-h` text): no `time` attribute
    // (Jenkins reads the file; Ant's schema wants one, but never a 0).
    let time = res
        .duration_s
        .map(|d| format!(" time=\"{:.3}\"", d.max(0.0)))
        .unwrap_or_default();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    let _ = write!(
        s,
        "  <testsuite name=\"{}\" package=\"rtshield.latency\" id=\"0\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\"{time}",
        esc(&format!("rtshield latency {host} {kernel}")),
    );
    if let Some(ts) = res.started_at.as_deref().and_then(ant_timestamp) {
        let _ = write!(s, " timestamp=\"{ts}\"");
    }
    let _ = writeln!(s, " hostname=\"{}\">", esc(host));
    s.push_str("    <properties>\n");
    let o = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    prop(&mut s, "tool", &res.tool);
    // An unknown value: no property.
    let known = |s: &mut String, k: &str, v: &Option<String>| {
        if let Some(v) = v {
            prop(s, k, v);
        }
    };
    known(&mut s, "started_at", &res.started_at);
    prop(&mut s, "kernel", kernel);
    prop(&mut s, "kernel_version", &o(&si.kernel_version));
    prop(&mut s, "preempt", &o(&si.preempt_model));
    prop(&mut s, "arch", &si.arch);
    known(&mut s, "mode", &res.settings.mode);
    known(&mut s, "end_reason", &res.end_reason);
    if let Some(v) = &verdict {
        if let Some(l) = v.limits.max_latency_ns {
            prop(&mut s, "max_latency_ns", &l.to_string());
        }
        prop(&mut s, "verdict", if v.passed { "pass" } else { "fail" });
    }
    for (k, v) in &res.tags {
        prop(&mut s, &format!("tag.{k}"), v);
    }
    for t in &res.threads {
        thread_props(&mut s, t);
    }
    s.push_str("    </properties>\n");
    let mut out = String::new();
    for t in &res.threads {
        let _ = write!(
            s,
            "    <testcase name=\"{}\" classname=\"rtshield.latency\"{time}",
            esc(&thread_name(t))
        );
        let summary = summary(t);
        let _ = writeln!(out, "{summary}");
        match failure(t, verdict.as_ref()) {
            Some(why) => {
                let _ = writeln!(
                    s,
                    ">\n      <failure type=\"latency\" message=\"{}\">{}</failure>\n    </testcase>",
                    esc(&why),
                    esc_text(&summary)
                );
            }
            None => s.push_str("/>\n"),
        }
    }
    let _ = writeln!(s, "    <system-out>\n{}    </system-out>", esc_text(&out));
    s.push_str("    <system-err/>\n  </testsuite>\n</testsuites>\n");
    s
}

/// `thread 0 (cpu 1): 10 samples, min 2100 ns, avg 20650.0 ns, max 150400 ns`.
fn summary(t: &ThreadResult) -> String {
    if t.samples == Some(0) {
        return format!("{}: no sample", thread_name(t));
    }
    format!(
        "{}: {} samples, min {} ns, avg {} ns, max {} ns",
        thread_name(t),
        or(t.samples, "?"),
        or(t.min_ns, "?"),
        or(t.avg_ns.map(|a| format!("{a:.1}")), "?"),
        or(t.max_ns, "?")
    )
}
