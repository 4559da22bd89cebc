//! Every result file format, behind one registry (in the spirit of
//! hyperfine's `Exporter`): each format is an [`Exporter`] in its own file,
//! and an [`ExportManager`] writes the selected ones. All writes go through
//! [`rtshield_safefs::SafeDir`] (temp file + fsync + rename + directory fsync);
//! a failed file does not stop the others.
//!
//! - [`json`] — `results.json` (always written; what `report` reads);
//! - [`csv`] — `results.csv`;
//! - [`cyclictest_hist`] — `histogram.txt`, cyclictest's `-h` text;
//! - [`systress_txt`] — `timer_threadNN.txt`, the systress article's format;
//! - [`timeline`] — `timeline.csv`, rows appended during a run;
//! - [`cyclictest_json`] — `cyclictest.json`, cyclictest's `--json` keys;
//! - [`junit`] — `junit.xml`, one test case per thread;
//! - [`openmetrics`] — `rtshield.prom`, Prometheus text exposition;
//! - [`kcidb`] — `kcidb.json`, KCIDB v5 test entries.
//!
//! The last four are the formats CI systems read: `rtshield export` writes
//! them from any result ([`by_name`]).
//! - [`spikes`] — `spikes.json`, `spikes.txt` (and `trace.txt`), written
//!   with every format selection when the run traced spikes.

mod csv;
mod cyclictest_hist;
mod cyclictest_json;
mod json;
mod junit;
mod kcidb;
mod openmetrics;
mod spikes;
mod systress_txt;
mod timeline;

use crate::unknown::or;
use crate::RunResult;
use rtshield_safefs::SafeDir;
use std::fmt::Write as _;

pub use self::csv::{csv_header, csv_split_header, to_csv, Csv, CSV_FILE};
pub use cyclictest_hist::{to_cyclictest_hist, CyclictestHist, HIST_FILE};
pub use cyclictest_json::{to_cyclictest_json, CyclictestJson, CYCLICTEST_JSON_FILE};
pub use json::{to_json, Json, JSON_FILE};
pub use junit::{to_junit, Junit, JUNIT_FILE};
pub use kcidb::{to_kcidb, Kcidb, KCIDB_FILE};
pub use openmetrics::{
    to_openmetrics, to_prometheus_text, OpenMetrics, PrometheusText, Timestamps, OPENMETRICS_FILE,
};
pub use spikes::{
    spikes_summary, to_spikes_json, to_spikes_txt, Spikes, SPIKES_JSON, SPIKES_TXT, TRACE_TXT,
};
pub use systress_txt::{systress_file_name, to_systress_txt, SystressTxt};
pub use timeline::{
    format_timeline_host, format_timeline_row, read_timeline, timeline_header,
    timeline_header_with_drift, timeline_header_with_host, TimelineHost, TimelineRecord,
    TimelineRow, TimelineWriter, TIMELINE_CPU, TIMELINE_DRIFT, TIMELINE_ELAPSED_S, TIMELINE_FILE,
    TIMELINE_HEADER, TIMELINE_IVAL_MAX_NS, TIMELINE_MAX_MAX_NS, TIMELINE_PHASE, TIMELINE_THREAD,
};

/// One result file format.
pub trait Exporter {
    /// The format's name (`stats.format` spelling).
    fn name(&self) -> &'static str;
    /// The files of `res` in this format: (file name, content).
    fn files(&self, res: &RunResult) -> Vec<(String, String)>;
}

/// A file that could not be written.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The file name (inside the directory written to).
    pub name: String,
    /// Its content, kept so the caller can retry or write it elsewhere.
    pub bytes: Vec<u8>,
    /// The error, naming the path once.
    pub error: String,
}

/// The formats to write, in order.
pub struct ExportManager {
    exporters: Vec<Box<dyn Exporter + Send + Sync>>,
}

impl ExportManager {
    /// JSON only (it is always written), and the spike files, which
    /// exist only for runs that traced spikes.
    pub fn new() -> ExportManager {
        ExportManager {
            exporters: vec![Box::new(Json), Box::new(spikes::Spikes)],
        }
    }
    /// Every format: `rtshield measure`'s files.
    pub fn all() -> ExportManager {
        ExportManager::new()
            .with(Csv)
            .with(CyclictestHist)
            .with(SystressTxt::default())
    }
    /// Add a format.
    pub fn with(mut self, e: impl Exporter + Send + Sync + 'static) -> ExportManager {
        self.exporters.push(Box::new(e));
        self
    }
    /// The names of the selected formats.
    pub fn names(&self) -> Vec<&'static str> {
        self.exporters.iter().map(|e| e.name()).collect()
    }
    /// Every (file name, content) of `res`, in order.
    pub fn render(&self, res: &RunResult) -> Vec<(String, String)> {
        // The last gate before a file: no password in any of them.
        let res = res.without_secrets();
        self.exporters.iter().flat_map(|e| e.files(&res)).collect()
    }
    /// The file names [`ExportManager::write`] writes for `res`.
    pub fn file_names(&self, res: &RunResult) -> Vec<String> {
        self.render(res).into_iter().map(|(n, _)| n).collect()
    }
    /// Write every file of `res` through `put`; a failure does not stop the
    /// other files. Returns the files that failed.
    pub fn write_with<F>(&self, res: &RunResult, mut put: F) -> Vec<Failure>
    where
        F: FnMut(&str, &[u8]) -> Result<(), String>,
    {
        let mut failed = Vec::new();
        for (name, text) in self.render(res) {
            if let Err(error) = put(&name, text.as_bytes()) {
                failed.push(Failure {
                    name,
                    bytes: text.into_bytes(),
                    error,
                });
            }
        }
        failed
    }
    /// Write every file of `res` into `dir`, each atomically.
    pub fn write(&self, res: &RunResult, dir: &SafeDir) -> Vec<Failure> {
        self.write_with(res, |name, bytes| {
            dir.write(name, bytes).map_err(|e| e.to_string())
        })
    }
}

/// Options of the CI formats.
#[derive(Debug, Clone, Default)]
pub struct CiOptions {
    /// Limits given at export time (`--max-latency`): cyclictest-json,
    /// junit and kcidb judge the run against them, in place of the recorded
    /// limits of the same kind ([`crate::effective_verdict`]).
    pub limits: crate::Limits,
    /// kcidb: the build the tests belong to.
    pub build_id: Option<String>,
    /// openmetrics: a timestamp on every sample (`--timestamps`).
    pub timestamps: Timestamps,
}

/// The names [`by_name`] knows.
pub const CI_FORMATS: &[&str] = &[
    "cyclictest-json",
    "junit",
    "openmetrics",
    "prometheus",
    "kcidb",
];

/// The exporter of a CI format by name (`rtshield export --format`),
/// or `json` (results.json itself).
pub fn by_name(name: &str, o: &CiOptions) -> Option<Box<dyn Exporter + Send + Sync>> {
    Some(match name {
        // results.json itself (not a CI format: every run has it).
        "json" => Box::new(Json),
        "cyclictest-json" => Box::new(CyclictestJson { limits: o.limits }),
        "junit" => Box::new(Junit { limits: o.limits }),
        "openmetrics" => Box::new(OpenMetrics {
            timestamps: o.timestamps,
        }),
        "prometheus" => Box::new(PrometheusText),
        "kcidb" => Box::new(Kcidb {
            limits: o.limits,
            build_id: o.build_id.clone(),
        }),
        _ => return None,
    })
}

/// Write one format's text to `path`, atomically in its directory.
pub fn write_text(
    text: &str,
    path: &std::path::Path,
    policy: rtshield_safefs::DirPolicy,
) -> Result<(), rtshield_safefs::SafeError> {
    rtshield_safefs::write_file(path, text.as_bytes(), policy)
}

impl Default for ExportManager {
    fn default() -> Self {
        ExportManager::new()
    }
}

/// Write every format of `res` into `dir` (created if needed): results.json,
/// results.csv, histogram.txt and one timer_threadNN.txt per thread.
pub fn write_all(res: &RunResult, dir: &std::path::Path) -> std::io::Result<()> {
    let d = SafeDir::open_or_create(dir, 0o755, rtshield_safefs::DirPolicy::Strict)
        .map_err(std::io::Error::other)?;
    match ExportManager::all().write(res, &d).into_iter().next() {
        None => Ok(()),
        Some(f) => Err(std::io::Error::other(f.error)),
    }
}

/// The files [`write_all`] writes for `res`, in order.
pub fn file_names(res: &RunResult) -> Vec<String> {
    ExportManager::all().file_names(res)
}

/// Write `results.json` alone to `path` (for `--json FILE`), atomically in
/// its directory.
pub fn write_json(
    res: &RunResult,
    path: &std::path::Path,
    policy: rtshield_safefs::DirPolicy,
) -> Result<(), rtshield_safefs::SafeError> {
    write_text(&to_json(res), path, policy)
}

/// A value in resolution units, floored like the histogram buckets.
pub(crate) fn units(ns: i64, res: u64) -> i64 {
    ns.div_euclid(res.max(1) as i64)
}

pub(crate) fn units_round(ns: f64, res: u64) -> i64 {
    (ns / res.max(1) as f64).round() as i64
}

/// `--split` figures of one thread as `#` comment lines (for the text
/// formats, next to the total): per part the samples, min/avg/max, the
/// percentiles and the non-zero buckets `index:count`, in resolution units.
/// A figure the split does not know is `?` (no sample split: min, avg,
/// max; a percentile the sample count cannot support: docs/formats.md).
pub(crate) fn split_lines(t: &crate::ThreadResult) -> String {
    let Some(sp) = &t.split else {
        return String::new();
    };
    let mut s = String::new();
    for (name, p) in [("irq", &sp.irq), ("thread", &sp.thread)] {
        let r = p.histogram.resolution_ns;
        let pct: Vec<String> = crate::PERCENTILES
            .iter()
            .map(|k| {
                let v = p.percentiles.get(*k).map(|v| units(*v, r));
                format!("p{k}={}", or(v, "?"))
            })
            .collect();
        let _ = writeln!(
            s,
            "# split thread {} {name} latency ({}ns units): samples {} min {} avg {} max {} {} overflow {} underflow {}",
            t.index,
            r,
            sp.samples,
            or(p.min_ns.map(|v| units(v, r)), "?"),
            or(p.avg_ns.map(|v| units_round(v, r)), "?"),
            or(p.max_ns.map(|v| units(v, r)), "?"),
            pct.join(" "),
            p.histogram.overflow,
            p.histogram.underflow
        );
        let buckets: Vec<String> = p
            .histogram
            .counts
            .iter()
            .map(|[b, c]| format!("{b}:{c}"))
            .collect();
        let _ = writeln!(
            s,
            "# split thread {} {name} histogram: {}",
            t.index,
            buckets.join(" ")
        );
    }
    s
}

/// Short provenance lines, each starting with `# `.
pub(crate) fn provenance(res: &RunResult) -> String {
    let si = &res.sysinfo;
    let mut s = String::new();
    // `?`: unknown (an import's file did not record it).
    let _ = writeln!(
        s,
        "# {} ({}), started {}, {} s, ended by {}",
        res.tool,
        crate::SCHEMA,
        or(res.started_at.as_ref(), "?"),
        or(res.duration_s.map(|d| format!("{d:.3}")), "?"),
        or(res.end_reason.as_ref(), "?")
    );
    if !res.command.is_empty() {
        let _ = writeln!(s, "# command: {}", res.command.join(" "));
    }
    let _ = writeln!(
        s,
        "# kernel: {} {} preempt={} hz={} clocksource={} cpus={} isolated={} model={}",
        si.kernel_release.as_deref().unwrap_or("?"),
        si.arch,
        si.preempt_mode
            .as_deref()
            .or(si.preempt_model.as_deref())
            .unwrap_or("?"),
        si.hz.map_or("?".into(), |h| h.to_string()),
        si.clocksource.as_deref().unwrap_or("?"),
        si.cpus_online.as_deref().unwrap_or("?"),
        si.cpus_isolated
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or("none"),
        si.cpu_model.as_deref().unwrap_or("?"),
    );
    if let Some(cl) = &si.cmdline {
        let _ = writeln!(s, "# cmdline: {cl}");
    }
    let st = &res.settings;
    let _ = writeln!(
        s,
        "# settings: mode={} resolution={}ns buckets={} memlock={} cpu_dma_latency={}",
        or(st.mode.as_ref(), "?"),
        st.resolution_ns,
        or(st.histo_buckets, "?"),
        or(st.memlock, "?"),
        st.cpu_dma_latency.map_or("off".into(), |v| v.to_string())
    );
    if let Some(t) = temperatures(si) {
        let _ = writeln!(s, "# {t}");
    }
    if let Some(cfg) = &res.config {
        let _ = writeln!(s, "# config:");
        for l in cfg.lines() {
            let _ = writeln!(s, "#   {l}");
        }
    }
    for w in &res.warnings {
        let _ = writeln!(s, "# WARNING: {w}");
    }
    s
}

/// `temperature: start cpu-thermal 61.9 C; end cpu-thermal 63.0 C` (the
/// torture article's log has a `temperature :` line), None when the
/// machine has no thermal zone.
pub(crate) fn temperatures(si: &rtshield_sys::SysInfo) -> Option<String> {
    if si.thermal.is_empty() && si.thermal_end.is_empty() {
        return None;
    }
    let list = |z: &[rtshield_sys::ThermalZone]| {
        if z.is_empty() {
            return "?".to_string();
        }
        z.iter()
            .map(|z| format!("{} {:.1} C", z.kind, z.temp_c))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(format!(
        "temperature: start {}; end {}",
        list(&si.thermal),
        list(&si.thermal_end)
    ))
}
