//! The request of one measurement (`rtshield measure`, `demo`, a campaign
//! cell), and the one function that checks it: [`MeasureRequest::validate`].
//!
//! A request is plain data, as asked: built by the command line from its
//! options, or by a campaign from a cell (and then sent to the child that
//! measures it as JSON). [`MeasureRequest::validate`] holds every range of
//! a measurement (the numbers are `rtshield-limits`', shared with the
//! systress and campaign parsers) and turns the request into a [`Plan`]: the
//! engine's [`MeasureSpec`], the built-in load, the output settings. A
//! refusal ([`Refusal`]) names the [`Setting`] it refuses, so that each
//! caller says where the value came from: the command line prints the
//! option (`--period 500ns: must be at least 1us`), a campaign the place in
//! its file.
//!
//! Why the request lives in `run`, not in `measure`: it describes a whole
//! measure command (output directory, `--json` copy, built-in load, results
//! store, partition, tags), of which the engine's spec is one part, and
//! `run` is the crate that carries all of it out ([`crate::measure`]).

use rtshield_limits as limits;
use rtshield_load::{LoadArg, LoadSpec};
use rtshield_measure::{MeasureSpec, Mode, TraceSpec};
use rtshield_safefs::DirPolicy;
use rtshield_vocab::format_duration_ns;
use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One measurement, as asked (nothing checked yet: see
/// [`MeasureRequest::validate`]). Durations are in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureRequest {
    /// CPUs to measure on, one thread each, as written (`1`, `2-3`, `0x8`);
    /// None: the last CPU this process may run on.
    pub cpus: Option<String>,
    /// Period of each measuring thread.
    pub period_ns: u64,
    /// Real-time priority (1..99 for fifo/rr).
    pub priority: i32,
    /// Scheduling policy of the measuring threads.
    pub policy: Policy,
    /// How long to measure (None: until the samples are done, or Ctrl-C).
    pub duration_ns: Option<u64>,
    /// Stop each thread after this many samples.
    pub samples: Option<u64>,
    /// How the thread waits.
    #[serde(with = "mode_name")]
    pub mode: Mode,
    /// What wakes the thread (`nanosleep` or `posix`), combined with `mode`.
    pub timer: Option<String>,
    /// Largest latency kept in the histogram (None: the mode's default).
    pub histo_size_ns: Option<u64>,
    /// Histogram and display unit, as written: `us` or `ns`.
    pub resolution: String,
    /// Refresh of the live table.
    pub stats_period_ns: u64,
    /// Output directory (None: a fresh `rtshield-results/<UTC timestamp>`).
    pub out: Option<PathBuf>,
    /// Also write the results to this file.
    pub json: Option<PathBuf>,
    /// What that file holds.
    pub json_format: JsonFormat,
    /// Rewrite this file with the latency so far every stats period.
    pub metrics_file: Option<PathBuf>,
    /// Write into unsafe directories anyway (`--force-unsafe-dir`).
    pub force_unsafe_dir: bool,
    /// Exit with status 3 when a thread's maximum exceeds this.
    pub max_latency_ns: Option<u64>,
    /// No live display, only the summary.
    pub quiet: bool,
    /// Lock memory (mlockall) for the run.
    pub memlock: bool,
    /// Hold `/dev/cpu_dma_latency` at 0 for the run.
    pub cpu_dma_latency: bool,
    /// Built-in load to run beside the measurement.
    #[serde(with = "load_name")]
    pub load: Option<LoadArg>,
    /// CPUs of the load, as written (None: every allowed CPU not measured).
    pub load_cpus: Option<String>,
    /// Measure inside an rt/nrt partition (cgroup v1).
    pub partition: Option<PartitionRequest>,
    /// Label of the run in reports (None: the output directory's name).
    pub label: Option<String>,
    /// The user's tags (`--tag KEY=VALUE`).
    pub tags: Vec<(String, String)>,
    /// Give the run its identity tags (a UUID, the isolation found): every
    /// run but the demo's, which is an example, not an experiment.
    pub identify: bool,
    /// The results store (`--store`; None: the default one).
    pub store: Option<String>,
    /// Do not store the run.
    pub no_store: bool,
    /// Kernel tracing.
    pub trace: TraceRequest,
    /// The command line recorded in the results: the process's own, or the
    /// equivalent `rtshield measure ...` of a campaign cell.
    pub command: Vec<String>,
}

/// `--partition [--partition-parent P]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionRequest {
    /// The rt/nrt sets under this parent cgroup (None: found as `run`'s
    /// `cgroup rt|nrt` is).
    pub parent: Option<String>,
}

/// Kernel tracing (docs/trace.md), as asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceRequest {
    /// Explain every wake-up later than this (`--trace-on`).
    pub on_latency_ns: Option<u64>,
    /// Stop at the first such wake-up (`--trace-stop`).
    pub stop: bool,
    /// IRQ vs thread latency of every wake-up (`--split`).
    pub split: bool,
    /// Per-CPU trace buffer, KiB (None: the default).
    pub buffer_kb: Option<u32>,
}

/// What the `--json FILE` copy holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JsonFormat {
    /// results.json.
    #[default]
    Rtshield,
    /// The keys of `cyclictest --json` 2.x.
    Cyclictest,
}

/// The setting a refusal is about: each caller knows where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// `--cpus`.
    Cpus,
    /// `--period`.
    Period,
    /// `--prio`.
    Priority,
    /// `--policy`.
    Policy,
    /// `--duration`.
    Duration,
    /// `--samples`.
    Samples,
    /// `--mode`.
    Mode,
    /// `--timer`.
    Timer,
    /// `--histo-size`.
    HistoSize,
    /// `--resolution`.
    Resolution,
    /// `--stats-period`.
    StatsPeriod,
    /// `--max-latency`.
    MaxLatency,
    /// `--trace-on`.
    TraceOn,
    /// `--trace-stop`.
    TraceStop,
    /// `--trace-buffer-kb`.
    TraceBufferKb,
    /// `--load`.
    Load,
    /// `--load-cpus`.
    LoadCpus,
    /// `--tag`.
    Tag,
}

impl Setting {
    /// The `rtshield measure` option that sets it.
    pub fn option(self) -> &'static str {
        match self {
            Setting::Cpus => "--cpus",
            Setting::Period => "--period",
            Setting::Priority => "--prio",
            Setting::Policy => "--policy",
            Setting::Duration => "--duration",
            Setting::Samples => "--samples",
            Setting::Mode => "--mode",
            Setting::Timer => "--timer",
            Setting::HistoSize => "--histo-size",
            Setting::Resolution => "--resolution",
            Setting::StatsPeriod => "--stats-period",
            Setting::MaxLatency => "--max-latency",
            Setting::TraceOn => "--trace-on",
            Setting::TraceStop => "--trace-stop",
            Setting::TraceBufferKb => "--trace-buffer-kb",
            Setting::Load => "--load",
            Setting::LoadCpus => "--load-cpus",
            Setting::Tag => "--tag",
        }
    }
}

/// A value the request refuses: which setting, and why, worded as
/// `rtshield measure` words it (`--period 500ns: must be at least 1us`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The setting refused.
    pub setting: Setting,
    message: String,
}

impl Refusal {
    /// `OPTION VALUE: why`.
    pub fn value(setting: Setting, value: impl std::fmt::Display, why: &str) -> Refusal {
        Refusal {
            setting,
            message: format!("{} {value}: {why}", setting.option()),
        }
    }

    /// `OPTION: why` (no single value to show).
    pub fn whole(setting: Setting, why: &str) -> Refusal {
        Refusal {
            setting,
            message: format!("{}: {why}", setting.option()),
        }
    }

    /// `OPTION needs OTHER`.
    pub fn needs(setting: Setting, other: &str) -> Refusal {
        Refusal {
            setting,
            message: format!("{} needs {other}", setting.option()),
        }
    }

    /// A value that is not of the option's kind at all, in the words of the
    /// command line's parser: `invalid value 'V' for '--period <DUR>': why`.
    pub fn unparsable(setting: Setting, value_name: &str, value: &str, why: &str) -> Refusal {
        Refusal {
            setting,
            message: format!(
                "invalid value '{value}' for '{} <{value_name}>': {why}",
                setting.option()
            ),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Refusal {}

impl From<Refusal> for rtshield_vocab::InputError {
    fn from(r: Refusal) -> Self {
        rtshield_vocab::InputError::new(r.to_string())
    }
}

/// A checked request: what [`crate::measure`] carries out.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The engine's spec.
    pub spec: MeasureSpec,
    /// The built-in load, on its CPUs.
    pub load: Option<LoadSpec>,
    /// How unsafe output directories are treated.
    pub policy: DirPolicy,
    /// The request, for everything passed through as asked.
    pub request: MeasureRequest,
}

impl Plan {
    /// The `load` tag: `idle`, or the built-in load's name.
    pub fn load_name(&self) -> &'static str {
        self.load.as_ref().map_or("idle", |l| l.kind.name())
    }
}

impl MeasureRequest {
    /// The defaults of `rtshield measure` (nothing asked but the period).
    pub fn new(period_ns: u64) -> MeasureRequest {
        MeasureRequest {
            cpus: None,
            period_ns,
            priority: 98,
            policy: Policy::Fifo,
            duration_ns: None,
            samples: None,
            mode: Mode::Nanosleep,
            timer: None,
            histo_size_ns: None,
            resolution: "us".into(),
            stats_period_ns: 1_000_000_000,
            out: None,
            json: None,
            json_format: JsonFormat::Rtshield,
            metrics_file: None,
            force_unsafe_dir: false,
            max_latency_ns: None,
            quiet: false,
            memlock: true,
            cpu_dma_latency: true,
            load: None,
            load_cpus: None,
            partition: None,
            label: None,
            tags: Vec::new(),
            identify: true,
            store: None,
            no_store: false,
            trace: TraceRequest::default(),
            command: Vec::new(),
        }
    }

    /// Check every value against its range (docs/ranges.md), in the order
    /// `rtshield measure` always has (the first refusal is the one said),
    /// on the CPUs this process may run on.
    pub fn validate(&self) -> Result<Plan, Refusal> {
        // The affinity mask (which `taskset` or a cpuset may have
        // narrowed), not the machine's online CPUs.
        let allowed = rtshield_sys::allowed_cpus().unwrap_or_else(|_| CpuSet::single(0));
        self.validate_on(&allowed)
    }

    /// [`MeasureRequest::validate`] with `allowed` as this process's CPUs.
    pub fn validate_on(&self, allowed: &CpuSet) -> Result<Plan, Refusal> {
        let cpus = self.measured_cpus(allowed)?;
        let (resolution_ns, mode) = self.timing()?;
        let cpu_list: Vec<u32> = cpus.iter().collect();
        let mut spec = MeasureSpec::new(&cpu_list, self.period_ns);
        for t in &mut spec.threads {
            t.policy = self.policy;
            t.priority = self.priority;
        }
        spec.mode = mode;
        spec.duration_ns = self.duration_ns;
        spec.samples = self.samples;
        spec.histo_size_ns = self.histo_size(mode, resolution_ns)?;
        spec.resolution_ns = resolution_ns;
        spec.stats_period_ns = self.stats_period_ns;
        spec.memlock = self.memlock;
        spec.cpu_dma_latency = self.cpu_dma_latency;
        self.check_output()?;
        spec.trace = self.trace_spec()?;
        let load = self.load_spec(allowed, &cpus)?;
        for (k, v) in &self.tags {
            crate::store::parse_tag(&format!("{k}={v}"))
                .map_err(|e| Refusal::value(Setting::Tag, format!("{k}={v}"), &e))?;
        }
        Ok(Plan {
            spec,
            load,
            policy: if self.force_unsafe_dir {
                DirPolicy::AllowUnsafe
            } else {
                DirPolicy::Strict
            },
            request: self.clone(),
        })
    }

    /// The CPUs to measure on, each one this process may use (unless the
    /// threads go to a partition, whose rt set decides).
    fn measured_cpus(&self, allowed: &CpuSet) -> Result<CpuSet, Refusal> {
        let cpus = match &self.cpus {
            Some(s) => parse_cpus(Setting::Cpus, s)?,
            None => CpuSet::single(allowed.last().unwrap_or(0)),
        };
        if let Some(bad) = cpus
            .iter()
            .find(|c| self.partition.is_none() && !allowed.contains(*c))
        {
            return Err(Refusal::whole(
                Setting::Cpus,
                &format!(
                    "CPU {bad} is not available (allowed to this process: {})",
                    allowed.to_list()
                ),
            ));
        }
        Ok(cpus)
    }

    /// Period, resolution, priority, policy, samples, duration and mode:
    /// (resolution in ns, the mode with `timer`).
    fn timing(&self) -> Result<(u64, Mode), Refusal> {
        let period = self.period_ns;
        let shown = format_duration_ns(period);
        if period < limits::PERIOD_NS.min {
            return Err(Refusal::value(
                Setting::Period,
                &shown,
                "must be at least 1us",
            ));
        }
        let resolution_ns = match self.resolution.trim() {
            "us" | "µs" => 1_000,
            "ns" => 1,
            other => {
                return Err(Refusal::value(
                    Setting::Resolution,
                    other,
                    "expected us or ns",
                ))
            }
        };
        if self.policy.is_rt() && !limits::RT_PRIORITY.contains(self.priority) {
            return Err(Refusal::value(
                Setting::Priority,
                self.priority,
                &format!("must be within 1..99 for {}", self.policy),
            ));
        }
        if !matches!(self.policy, Policy::Fifo | Policy::Rr | Policy::Other) {
            return Err(Refusal::value(
                Setting::Policy,
                self.policy,
                "expected fifo, rr or other",
            ));
        }
        if period > limits::PERIOD_NS.max {
            return Err(Refusal::value(
                Setting::Period,
                &shown,
                "must be at most 1h",
            ));
        }
        if self.samples == Some(0) {
            return Err(Refusal::value(Setting::Samples, 0, "must be at least 1"));
        }
        if let Some(n) = self.samples.filter(|n| *n > limits::SAMPLES.max) {
            return Err(Refusal::value(
                Setting::Samples,
                n,
                &format!("must be at most {}", limits::SAMPLES.max),
            ));
        }
        if let Some(d) = self
            .duration_ns
            .filter(|d| !limits::DURATION_NS.contains(*d))
        {
            return Err(Refusal::value(
                Setting::Duration,
                format_duration_ns(d),
                "must be > 0 and at most 365d",
            ));
        }
        Ok((resolution_ns, self.mode()?))
    }

    /// `mode` combined with `timer`: `interval` + `posix` is the torture
    /// article's method (interval between a timer's signals).
    pub fn mode(&self) -> Result<Mode, Refusal> {
        let posix = match self.timer.as_deref().map(str::trim) {
            None => return Ok(self.mode),
            Some("posix" | "posix-timer") => true,
            Some("nanosleep" | "clock_nanosleep") => false,
            Some(other) => {
                return Err(Refusal::value(
                    Setting::Timer,
                    other,
                    "expected nanosleep or posix",
                ))
            }
        };
        Ok(match (self.mode, posix) {
            (Mode::Interval | Mode::IntervalPosix, true) => Mode::IntervalPosix,
            (Mode::Interval | Mode::IntervalPosix, false) => Mode::Interval,
            (Mode::Nanosleep | Mode::PosixTimer, true) => Mode::PosixTimer,
            (Mode::Nanosleep | Mode::PosixTimer, false) => Mode::Nanosleep,
        })
    }

    /// The histogram's size: as asked, else 1 ms (in interval mode at
    /// least twice the period); at most 10 million buckets.
    fn histo_size(&self, mode: Mode, resolution_ns: u64) -> Result<u64, Refusal> {
        let default = if mode.is_interval() {
            (2 * self.period_ns).max(1_000_000)
        } else {
            1_000_000
        };
        let size = self.histo_size_ns.unwrap_or(default);
        if limits::too_many_buckets(size, resolution_ns) {
            return Err(Refusal::value(
                Setting::HistoSize,
                format_duration_ns(size),
                &format!(
                    "more than 10 million buckets at {} resolution",
                    self.resolution
                ),
            ));
        }
        if let Some(h) = self
            .histo_size_ns
            .filter(|h| !limits::HISTO_SIZE_NS.contains(*h))
        {
            return Err(Refusal::value(
                Setting::HistoSize,
                format_duration_ns(h),
                "must be > 0 and at most 1s",
            ));
        }
        Ok(size)
    }

    /// The stats period (as the `stats.period` key) and `--max-latency`
    /// (as `export --max-latency`).
    fn check_output(&self) -> Result<(), Refusal> {
        let sp = self.stats_period_ns;
        if !limits::STATS_PERIOD_NS.contains(sp) {
            return Err(Refusal::value(
                Setting::StatsPeriod,
                format_duration_ns(sp),
                "must be between 10ms and 1h",
            ));
        }
        if let Some(l) = self
            .max_latency_ns
            .filter(|l| !limits::MAX_LATENCY_NS.contains(*l))
        {
            return Err(Refusal::value(
                Setting::MaxLatency,
                format_duration_ns(l),
                "must be more than 0 and at most 1h",
            ));
        }
        Ok(())
    }

    /// The engine's tracing request (None: not asked).
    fn trace_spec(&self) -> Result<Option<TraceSpec>, Refusal> {
        let t = &self.trace;
        if let Some(d) = t.on_latency_ns {
            if !limits::TRACE_LATENCY_NS.contains(d) {
                return Err(Refusal::value(
                    Setting::TraceOn,
                    format_duration_ns(d),
                    "must be within 1us..1s",
                ));
            }
        }
        if t.stop && t.on_latency_ns.is_none() {
            return Err(Refusal::needs(Setting::TraceStop, "--trace-on DUR"));
        }
        if let Some(kb) = t.buffer_kb {
            let r = limits::TRACE_BUFFER_KB;
            if !r.contains(kb) {
                return Err(Refusal::value(
                    Setting::TraceBufferKb,
                    kb,
                    &format!("must be within {}..{}", r.min, r.max),
                ));
            }
            if t.on_latency_ns.is_none() && !t.split {
                return Err(Refusal::needs(
                    Setting::TraceBufferKb,
                    "--trace-on DUR or --split",
                ));
            }
        }
        Ok((t.on_latency_ns.is_some() || t.split).then_some(TraceSpec {
            on_latency_ns: t.on_latency_ns,
            stop: t.stop,
            split: t.split,
            buffer_kb: t.buffer_kb,
        }))
    }

    /// The built-in load on its CPUs: as asked, else every allowed CPU not
    /// measured (all of them when every one is measured).
    fn load_spec(&self, allowed: &CpuSet, measured: &CpuSet) -> Result<Option<LoadSpec>, Refusal> {
        let Some(LoadArg { kind, peer }) = self.load else {
            if self.load_cpus.is_some() {
                return Err(Refusal::needs(Setting::LoadCpus, "--load NAME"));
            }
            return Ok(None);
        };
        let cpus = match &self.load_cpus {
            Some(s) => parse_cpus(Setting::LoadCpus, s)?,
            None => {
                let rest = allowed.difference(measured);
                if rest.is_empty() {
                    allowed.clone()
                } else {
                    rest
                }
            }
        };
        let mut spec = LoadSpec::new(kind, Some(cpus));
        spec.peer = peer;
        Ok(Some(spec))
    }
}

/// A CPU list option: parsed, and not empty.
fn parse_cpus(setting: Setting, s: &str) -> Result<CpuSet, Refusal> {
    let set = CpuSet::parse(s).map_err(|e| Refusal::value(setting, s, &e.to_string()))?;
    if set.is_empty() {
        return Err(Refusal::value(setting, s, "empty CPU list"));
    }
    Ok(set)
}

/// [`Mode`] in JSON: its name (`nanosleep`, `interval-posix`...).
mod mode_name {
    use rtshield_measure::Mode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(m: &Mode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(m.name())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Mode, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A built-in load in JSON: as `--load` takes it (`hell`, `net:peer=ADDR`).
mod load_name {
    use rtshield_load::LoadArg;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(l: &Option<LoadArg>, s: S) -> Result<S::Ok, S::Error> {
        match l {
            Some(l) => s.serialize_some(&l.to_string()),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<LoadArg>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|n| n.parse().map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(r: &MeasureRequest) -> String {
        r.validate_on(&CpuSet::parse("0-3").unwrap())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn refusals_name_the_option_and_the_value() {
        let mut r = MeasureRequest::new(500);
        assert_eq!(refused(&r), "--period 500ns: must be at least 1us");
        r.period_ns = 1_000_000;
        r.priority = 0;
        assert_eq!(refused(&r), "--prio 0: must be within 1..99 for fifo");
        r.priority = 98;
        r.cpus = Some("7".into());
        assert_eq!(
            refused(&r),
            "--cpus: CPU 7 is not available (allowed to this process: 0-3)"
        );
        r.cpus = None;
        r.load_cpus = Some("0".into());
        assert_eq!(refused(&r), "--load-cpus needs --load NAME");
        r.load_cpus = None;
        r.resolution = "ns".into();
        r.histo_size_ns = Some(1_000_000_000);
        assert_eq!(
            refused(&r),
            "--histo-size 1s: more than 10 million buckets at ns resolution"
        );
        let e = r.validate_on(&CpuSet::single(0)).unwrap_err();
        assert_eq!(e.setting, Setting::HistoSize);
    }

    #[test]
    fn a_valid_request_becomes_the_engines_spec_and_survives_json() {
        let mut r = MeasureRequest::new(200_000);
        r.cpus = Some("1".into());
        r.mode = Mode::Interval;
        r.timer = Some("posix".into());
        r.load = Some("net:peer=192.0.2.7".parse().unwrap());
        r.partition = Some(PartitionRequest {
            parent: Some("/".into()),
        });
        let p = r.validate_on(&CpuSet::parse("0-1").unwrap()).unwrap();
        assert_eq!(p.spec.mode, Mode::IntervalPosix);
        assert_eq!(p.spec.histo_size_ns, 1_000_000);
        assert_eq!(p.load.as_ref().unwrap().cpus, Some(CpuSet::single(0)));
        assert_eq!(p.load_name(), "net");
        let json = serde_json::to_string(&r).unwrap();
        let back: MeasureRequest = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
