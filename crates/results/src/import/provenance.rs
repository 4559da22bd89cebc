//! The `#` lines rtshield writes above its text files, read back.

use crate::{PercentileBound, ThreadResult, BEYOND_HISTOGRAM};
use rtshield_sys::SysInfo;
use rtshield_vocab::Policy;
use std::collections::BTreeMap;

/// What rtshield writes as `#` comments above its text files (see
/// `export::provenance` and the per-thread line): enough to read the
/// numbers right and to say where they come from.
#[derive(Debug, Clone, Default)]
pub(super) struct Provenance {
    /// `rtshield 0.1.0` when the file is rtshield's.
    pub(super) tool: Option<String>,
    pub(super) started: Option<String>,
    /// `…, 5.017 s, …` on the first line: the run's measured duration.
    pub(super) duration_s: Option<f64>,
    /// `…, ended by duration`.
    pub(super) end_reason: Option<String>,
    pub(super) command: Vec<String>,
    pub(super) sysinfo: SysInfo,
    pub(super) mode: Option<String>,
    pub(super) resolution_ns: Option<u64>,
    pub(super) memlock: Option<bool>,
    /// `# thread N: …` lines, in order.
    pub(super) threads: Vec<ThreadLine>,
    /// `# percentiles (us): p50=3 … p99.99>=1000 …` in resolution units:
    /// exact values, and bounds.
    pub(super) percentiles: BTreeMap<String, u64>,
    pub(super) bounds: BTreeMap<String, u64>,
}

/// `# thread 0: tid 4242 cpu 1 policy FIFO priority 98 period 200000 ns;
/// overflow 1 underflow 0 overruns 0 missed_periods 0 lost 0`.
#[derive(Debug, Clone, Default)]
pub(super) struct ThreadLine {
    pub(super) tid: Option<i32>,
    pub(super) cpu: Option<u32>,
    pub(super) policy: Option<Policy>,
    pub(super) priority: Option<i32>,
    pub(super) period_ns: Option<u64>,
    pub(super) underflow: Option<u64>,
    pub(super) overruns: Option<u64>,
    pub(super) missed: Option<u64>,
    pub(super) lost: Option<u64>,
}

impl ThreadLine {
    fn parse(rest: &str) -> ThreadLine {
        let words: Vec<&str> = rest
            .split_whitespace()
            .map(|w| w.trim_end_matches([';', ',']))
            .collect();
        let get = |k: &str| {
            words
                .iter()
                .position(|w| *w == k)
                .and_then(|i| words.get(i + 1))
                .copied()
        };
        let num = |k: &str| get(k).and_then(|v| v.parse::<u64>().ok());
        ThreadLine {
            tid: get("tid").and_then(|v| v.parse().ok()),
            cpu: get("cpu").and_then(|v| v.parse().ok()),
            policy: get("policy").and_then(Policy::parse),
            priority: get("priority").and_then(|v| v.parse().ok()),
            period_ns: num("period"),
            underflow: num("underflow"),
            overruns: num("overruns"),
            missed: num("missed_periods"),
            lost: num("lost"),
        }
    }

    /// Fill `t` with what the line says; what it lacks (or writes as
    /// `?`) is unknown.
    pub(super) fn apply(&self, t: &mut ThreadResult) {
        t.tid = self.tid;
        t.cpu = self.cpu.or(t.cpu);
        t.policy = self.policy;
        t.priority = self.priority;
        t.period_ns = self.period_ns.or(t.period_ns);
        t.overruns = self.overruns;
        t.missed_periods = self.missed;
        t.lost = self.lost;
    }
}

impl Provenance {
    pub(super) fn parse(text: &str) -> Provenance {
        let mut p = Provenance::default();
        for line in text.lines().filter(|l| l.starts_with('#')) {
            let l = line[1..].trim();
            if let Some(rest) = l.strip_prefix("rtshield ") {
                // `rtshield 0.1.0 (rtshield.results/1), started T, 1.0 s, ended by X`
                if rest.contains("(rtshield.results/") && p.tool.is_none() {
                    p.first_line(rest);
                }
            } else if let Some(c) = l.strip_prefix("command:") {
                p.command = c.split_whitespace().map(str::to_string).collect();
            } else if let Some(k) = l.strip_prefix("kernel:") {
                let mut w = k.split_whitespace();
                p.sysinfo.kernel_release = w.next().filter(|v| *v != "?").map(str::to_string);
                p.sysinfo.arch = w.next().unwrap_or_default().to_string();
                for kv in w {
                    if let Some(v) = kv.strip_prefix("preempt=").filter(|v| *v != "?") {
                        p.sysinfo.preempt_mode = Some(v.to_string());
                    }
                }
            } else if let Some(c) = l.strip_prefix("cmdline:") {
                p.sysinfo.cmdline = Some(c.trim().to_string());
            } else if let Some(st) = l.strip_prefix("settings:") {
                for kv in st.split_whitespace() {
                    if let Some(m) = kv.strip_prefix("mode=").filter(|m| *m != "?") {
                        p.mode = Some(m.to_string());
                    } else if let Some(r) = kv.strip_prefix("resolution=") {
                        p.resolution_ns = r
                            .trim_end_matches("ns")
                            .parse()
                            .ok()
                            .filter(|r| (1..=crate::MAX_RESOLUTION_NS).contains(r));
                    } else if let Some(m) = kv.strip_prefix("memlock=") {
                        p.memlock = m.parse().ok();
                    }
                }
            } else if let Some(rest) = l.strip_prefix("thread ") {
                if rest.contains("tid ") {
                    p.threads.push(ThreadLine::parse(rest));
                }
            } else if let Some(rest) = l.strip_prefix("percentiles") {
                for kv in rest.split_whitespace() {
                    let Some(kv) = kv.strip_prefix('p') else {
                        continue;
                    };
                    if let Some((k, v)) = kv.split_once(">=") {
                        if let Ok(v) = v.parse() {
                            p.bounds.insert(k.to_string(), v);
                        }
                    } else if let Some((k, v)) = kv.split_once('=') {
                        if let Ok(v) = v.parse() {
                            p.percentiles.insert(k.to_string(), v);
                        }
                    }
                }
            }
        }
        p
    }

    /// `rtshield 0.1.0 (rtshield.results/2), started T, 5.017 s, ended by
    /// duration` (`rest`: after `rtshield `); `?` is unknown.
    fn first_line(&mut self, rest: &str) {
        let version = rest.split_whitespace().next().unwrap_or("?");
        self.tool = Some(format!("rtshield {version}"));
        let mut parts = rest.split(", ").skip(1);
        for part in parts.by_ref() {
            if let Some(t) = part.strip_prefix("started ") {
                self.started = Some(t.to_string()).filter(|t| t != "?");
            } else if let Some(d) = part.strip_suffix(" s") {
                self.duration_s = d.parse().ok().filter(|d: &f64| d.is_finite() && *d >= 0.0);
            } else if let Some(e) = part.strip_prefix("ended by ") {
                self.end_reason = Some(e.trim().to_string()).filter(|e| e != "?");
            }
        }
    }

    /// The `# percentiles` line's values (resolution units) into `t`, in
    /// ns: what rtshield measured, finer than the histogram.
    pub(super) fn apply_percentiles(&self, t: &mut ThreadResult, res: u64) {
        for (k, v) in &self.percentiles {
            t.percentile_bounds.remove(k);
            t.percentiles.insert(k.clone(), ns(*v, res));
        }
        for (k, v) in &self.bounds {
            t.percentiles.remove(k);
            t.percentile_bounds.insert(
                k.clone(),
                PercentileBound {
                    at_least_ns: ns(*v, res),
                    reason: BEYOND_HISTOGRAM.to_string(),
                },
            );
        }
    }
}

/// `v` resolution units in ns, saturating (a comment line of the file
/// cannot make the reader overflow).
fn ns(v: u64, res: u64) -> i64 {
    i64::try_from(v.saturating_mul(res)).unwrap_or(i64::MAX)
}
