//! The `#` lines rtshield writes above its text files, read back.

use crate::ThreadResult;
use rtshield_sys::SysInfo;
use std::collections::BTreeMap;

/// What rtshield writes as `#` comments above its text files (see
/// `export::provenance` and the per-thread line): enough to read the
/// numbers right and to say where they come from.
#[derive(Debug, Clone, Default)]
pub(super) struct Provenance {
    /// `rtshield 0.1.0` when the file is rtshield's.
    pub(super) tool: Option<String>,
    pub(super) started: Option<String>,
    pub(super) command: Vec<String>,
    pub(super) sysinfo: SysInfo,
    pub(super) mode: Option<String>,
    pub(super) resolution_ns: Option<u64>,
    /// `# thread N: …` lines, in order.
    pub(super) threads: Vec<ThreadLine>,
    /// `# percentiles (us): p50=3 …` in resolution units.
    pub(super) percentiles: BTreeMap<String, u64>,
}

/// `# thread 0: tid 4242 cpu 1 policy FIFO priority 98 period 200000 ns;
/// overflow 1 underflow 0 overruns 0 missed_periods 0 lost 0`.
#[derive(Debug, Clone, Default)]
pub(super) struct ThreadLine {
    pub(super) tid: Option<i32>,
    pub(super) cpu: Option<u32>,
    pub(super) policy: Option<String>,
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
            policy: get("policy").map(str::to_string),
            priority: get("priority").and_then(|v| v.parse().ok()),
            period_ns: num("period"),
            underflow: num("underflow"),
            overruns: num("overruns"),
            missed: num("missed_periods"),
            lost: num("lost"),
        }
    }

    /// Fill `t` with what the line says; what it lacks is unknown.
    pub(super) fn apply(&self, t: &mut ThreadResult) {
        let mut unknown = |f: &str, known: bool| {
            if !known {
                t.unknown.push(f.to_string());
            }
        };
        unknown("tid", self.tid.is_some());
        unknown("policy", self.policy.is_some());
        unknown("priority", self.priority.is_some());
        unknown("overruns", self.overruns.is_some());
        unknown("missed_periods", self.missed.is_some());
        unknown("lost", self.lost.is_some());
        t.tid = self.tid.unwrap_or(0);
        t.cpu = self.cpu.or(t.cpu);
        if let Some(p) = &self.policy {
            t.policy = p.clone();
        }
        t.priority = self.priority.unwrap_or(0);
        t.period_ns = self.period_ns.unwrap_or(t.period_ns);
        t.overruns = self.overruns.unwrap_or(0);
        t.missed_periods = self.missed.unwrap_or(0);
        t.lost = self.lost.unwrap_or(0);
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
                    let version = rest.split_whitespace().next().unwrap_or("?");
                    p.tool = Some(format!("rtshield {version}"));
                    p.started = rest
                        .split(", started ")
                        .nth(1)
                        .and_then(|r| r.split(',').next())
                        .map(str::to_string);
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
                    if let Some(m) = kv.strip_prefix("mode=") {
                        p.mode = Some(m.to_string());
                    } else if let Some(r) = kv.strip_prefix("resolution=") {
                        p.resolution_ns = r.trim_end_matches("ns").parse().ok().filter(|r| *r > 0);
                    }
                }
            } else if let Some(rest) = l.strip_prefix("thread ") {
                if rest.contains("tid ") {
                    p.threads.push(ThreadLine::parse(rest));
                }
            } else if let Some(rest) = l.strip_prefix("percentiles") {
                for kv in rest.split_whitespace() {
                    if let Some((k, v)) = kv.strip_prefix('p').and_then(|x| x.split_once('=')) {
                        if let Ok(v) = v.parse() {
                            p.percentiles.insert(k.to_string(), v);
                        }
                    }
                }
            }
        }
        p
    }
}
