//! The typed configuration and the pass that turns stanzas into it,
//! checking every value (with its line and column) before anything starts.

use crate::keys::{self, Section};
use crate::syntax::{self, display_name, Entry, Errs, Pos, Stanza};
use rtshield_sys::programs::{parse_size, Builtin, Output, Termination};
use rtshield_sys::sched::Policy;
use rtshield_sys::units::{format_duration_ns, parse_duration_ns};
use rtshield_sys::{CpuSet, InputError};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub use rtshield_sys::mode::Mode;

/// Result file formats (`stats.format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    Txt,
    Csv,
    Json,
    Cyclictest,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Cyclictest => "cyclictest",
        }
    }
}

/// What `stats.cpu_load` shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CpuLoadShow {
    #[default]
    None,
    /// Every CPU and the total.
    All,
    /// The total only.
    Total,
    /// These CPUs and the total.
    Cpus(CpuSet),
}

/// The rt or nrt partition of `rtshield partition`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partition {
    Rt,
    Nrt,
}

impl Partition {
    pub fn name(self) -> &'static str {
        match self {
            Partition::Rt => "rt",
            Partition::Nrt => "nrt",
        }
    }
}

/// Load/rest phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cycle {
    pub on_ns: u64,
    pub off_ns: u64,
}

/// Scheduling of a thread or program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sched {
    pub policy: Policy,
    pub priority: i32,
}

impl Default for Sched {
    fn default() -> Self {
        Sched {
            policy: Policy::Other,
            priority: 0,
        }
    }
}

/// The `main` stanza.
#[derive(Debug, Clone, PartialEq)]
pub struct Main {
    pub cpu_affinity: Option<CpuSet>,
    pub sched: Option<Sched>,
    pub cgroup: Option<Partition>,
    pub mode: Mode,
    pub period_ns: u64,
    pub duration_ns: Option<u64>,
    pub histo_size_ns: u64,
    pub resolution_ns: u64,
    pub stats_period_ns: u64,
    pub formats: Vec<Format>,
    pub cpu_load: CpuLoadShow,
    /// 0 = off.
    pub checkpoint_ns: u64,
    pub rotate_ns: Option<u64>,
    pub memlock: bool,
    pub cpu_dma_latency: bool,
    pub dbg_level: u32,
    pub start_delay_ns: u64,
    pub load_cycle: Option<Cycle>,
    /// `trace.*` keys (docs/trace.md).
    pub trace: Trace,
}

/// Kernel tracing of the measuring threads: `trace.on_latency`,
/// `trace.stop`, `trace.split`, `trace.buffer_kb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trace {
    pub on_latency_ns: Option<u64>,
    pub stop: bool,
    pub split: bool,
    pub buffer_kb: u32,
}

impl Default for Trace {
    fn default() -> Self {
        Trace {
            on_latency_ns: None,
            stop: false,
            split: false,
            buffer_kb: TRACE_BUFFER_KB_DEFAULT,
        }
    }
}

impl Trace {
    /// Whether any tracing is asked for.
    pub fn wanted(&self) -> bool {
        self.on_latency_ns.is_some() || self.split
    }
}

/// `trace.on_latency` / `--trace-on` range (docs/ranges.md).
pub const TRACE_LATENCY_MIN_NS: u64 = 1_000;
pub const TRACE_LATENCY_MAX_NS: u64 = 1_000_000_000;
/// `trace.buffer_kb` / `--trace-buffer-kb` range and default (per CPU).
pub const TRACE_BUFFER_KB_MIN: u32 = 1;
pub const TRACE_BUFFER_KB_MAX: u32 = 1_048_576;
pub const TRACE_BUFFER_KB_DEFAULT: u32 = 256;

impl Default for Main {
    fn default() -> Self {
        Main {
            cpu_affinity: None,
            sched: None,
            cgroup: None,
            mode: Mode::Nanosleep,
            period_ns: 1_000_000,
            duration_ns: None,
            histo_size_ns: 1_000_000,
            resolution_ns: 1_000,
            stats_period_ns: 1_000_000_000,
            formats: vec![Format::Txt, Format::Csv, Format::Json, Format::Cyclictest],
            cpu_load: CpuLoadShow::None,
            checkpoint_ns: 60_000_000_000,
            rotate_ns: None,
            memlock: false,
            cpu_dma_latency: false,
            dbg_level: 0,
            start_delay_ns: 0,
            load_cycle: None,
            trace: Trace::default(),
        }
    }
}

/// A `timer_thread[N]` stanza: one measuring thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Timer {
    pub index: u32,
    pub cpu: Option<u32>,
    pub sched: Sched,
    pub cgroup: Option<Partition>,
    pub period_ns: u64,
    pub duration_ns: Option<u64>,
    pub samples: Option<u64>,
    pub histo_size_ns: u64,
    pub resolution_ns: u64,
    pub filename: String,
}

/// What a program runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Command(Vec<String>),
    Builtin {
        kind: Builtin,
        size: Option<u64>,
        workers: u32,
    },
}

/// A `program[N]` stanza.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub index: u32,
    pub action: Action,
    pub cpu_affinity: Option<CpuSet>,
    pub sched: Option<Sched>,
    pub cgroup: Option<Partition>,
    pub stdout: Output,
    pub stderr: Output,
    pub on_ok: Termination,
    pub on_ko: Termination,
    pub start_delay_ns: u64,
    pub load_cycle: Option<Cycle>,
}

/// A whole configuration file, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The file name as given (for messages).
    pub file: String,
    /// The file's text (embedded in results).
    pub text: String,
    pub main: Main,
    pub timers: Vec<Timer>,
    pub programs: Vec<Program>,
    /// Things accepted but worth knowing (CPU folding, unequal histograms...).
    pub warnings: Vec<String>,
}

/// Facts about the machine the configuration is checked against.
#[derive(Debug, Clone)]
pub struct Machine {
    /// Online CPUs (`/sys/devices/system/cpu/online`).
    pub online: CpuSet,
    /// Map CPUs that do not exist onto online ones (`cpu % count`), for
    /// trying a configuration written for a bigger machine.
    pub fold_cpus: bool,
}

impl Config {
    /// The run's duration: `lifetime.duration` of main or the longest timer.
    pub fn duration_ns(&self) -> Option<u64> {
        self.timers
            .iter()
            .filter_map(|t| t.duration_ns)
            .chain(self.main.duration_ns)
            .max()
    }
}

/// Documented ranges (docs/ranges.md).
const MAX_PERIOD_NS: u64 = 3_600_000_000_000;
const MAX_DURATION_NS: u64 = 365 * 86_400_000_000_000;
/// `stats.period` and `measure --stats-period`: 10 ms .. 1 h.
pub const STATS_PERIOD_MIN_NS: u64 = 10_000_000;
pub const STATS_PERIOD_MAX_NS: u64 = 3_600_000_000_000;
/// `start.delay`: at most a day.
pub const START_DELAY_MAX_NS: u64 = 86_400_000_000_000;
/// Each `load.cycle` phase: 100 ms .. 1 day.
pub const CYCLE_PHASE_MIN_NS: u64 = 100_000_000;
pub const CYCLE_PHASE_MAX_NS: u64 = 86_400_000_000_000;
/// `lifetime.samples`, like `measure --samples`: 1 .. 10^12.
pub const MAX_SAMPLES: i64 = 1_000_000_000_000;
const MAX_HISTO_SIZE_NS: u64 = 1_000_000_000;
const MAX_RESOLUTION_NS: u64 = 1_000_000;

/// Files of the output directory a `stats.filename` must not take.
pub const RESERVED_FILES: &[&str] = &[
    "results.json",
    "results.csv",
    "histogram.txt",
    "timeline.csv",
    "spikes.json",
    "spikes.txt",
    "trace.txt",
];

/// Parse and check a configuration. `file` names it in error messages.
pub fn parse(file: &str, text: &str, machine: &Machine) -> Result<Config, InputError> {
    let stanzas = syntax::parse(file, text)?;
    let e = Errs { file };
    let mut cfg = Config {
        file: file.to_string(),
        text: text.to_string(),
        main: Main::default(),
        timers: Vec::new(),
        programs: Vec::new(),
        warnings: Vec::new(),
    };
    let mut seen: BTreeMap<String, Pos> = BTreeMap::new();
    // (CPU in the file, CPU measured here) of each timer thread.
    let mut measured: Vec<(u32, u32)> = Vec::new();
    // main first: its values are the defaults of the others; timers before
    // programs: `--fold-cpus` must know the measured CPUs to keep loads off them.
    let mut order: Vec<&Stanza> = stanzas.iter().filter(|s| s.name == "main").collect();
    order.extend(stanzas.iter().filter(|s| s.name == "timer_thread"));
    order.extend(
        stanzas
            .iter()
            .filter(|s| s.name != "main" && s.name != "timer_thread"),
    );
    for st in order {
        let name = display_name(st);
        if let Some(first) = seen.get(&name) {
            let what = if st.index.is_some() {
                "duplicate index"
            } else {
                "duplicate stanza"
            };
            return Err(e.at(
                st.at,
                format!("{what}: '{name}' is already defined at line {}", first.line),
            ));
        }
        seen.insert(name.clone(), st.at);
        let mut cx = Cx {
            e: &e,
            machine,
            warnings: &mut cfg.warnings,
            measured: if st.name == "program" {
                measured.clone()
            } else {
                Vec::new()
            },
        };
        match (st.name.as_str(), st.index) {
            ("main", None) => cfg.main = cx.main(st)?,
            ("main", Some(_)) => return Err(e.at(st.at, "'main' takes no index (expected 'main')")),
            ("timer_thread", Some(i)) => {
                let t = cx.timer(st, i, &cfg.main)?;
                let at = st
                    .entries
                    .iter()
                    .find(|en| en.key == "stats.filename")
                    .map_or(st.at, |en| en.value_at);
                if RESERVED_FILES.contains(&t.filename.as_str()) {
                    return Err(e.at(
                        at,
                        format!("'{}' is a file rtshield writes itself (expected another stats.filename)", t.filename),
                    ));
                }
                if let Some(other) = cfg.timers.iter().find(|o| o.filename == t.filename) {
                    return Err(e.at(
                        at,
                        format!(
                            "timer_thread[{}] writes '{}' too (expected a different stats.filename per thread)",
                            other.index, t.filename
                        ),
                    ));
                }
                if let Some(cpu) = t.cpu {
                    let asked = st
                        .entries
                        .iter()
                        .find(|en| en.key == "cpu_affinity")
                        .and_then(|en| CpuSet::parse(&en.value).ok())
                        .and_then(|c| c.first())
                        .unwrap_or(cpu);
                    measured.push((asked, cpu));
                }
                cfg.timers.push(t);
            }
            ("program", Some(i)) => {
                let p = cx.program(st, i, &cfg.main)?;
                cfg.programs.push(p);
            }
            ("timer_thread" | "program", None) => {
                return Err(e.at(
                    st.at,
                    format!(
                        "'{}' needs an index (expected {}[0], {}[1], ...)",
                        st.name, st.name, st.name
                    ),
                ))
            }
            (other, _) => {
                return Err(e.at(
                    st.at,
                    format!(
                        "unknown stanza '{other}' (expected main, timer_thread[N] or program[N])"
                    ),
                ))
            }
        }
    }
    if cfg.timers.is_empty() {
        return Err(InputError::new(format!(
            "{file}: no timer_thread[N] stanza: nothing to measure (expected at least timer_thread[0] {{ ... }})"
        )));
    }
    cfg.timers.sort_by_key(|t| t.index);
    cfg.programs.sort_by_key(|p| p.index);
    Ok(cfg)
}

/// Checking context for one stanza.
struct Cx<'a> {
    e: &'a Errs<'a>,
    machine: &'a Machine,
    warnings: &'a mut Vec<String>,
    /// (CPU in the file, CPU measured here) of each timer thread, for
    /// programs: with `--fold-cpus` a load is never folded onto a measured CPU.
    measured: Vec<(u32, u32)>,
}

/// Entries of a stanza by key, refusing unknown and duplicate keys.
fn entries<'s>(
    e: &Errs,
    st: &'s Stanza,
    section: Section,
) -> Result<BTreeMap<&'s str, &'s Entry>, InputError> {
    let mut m: BTreeMap<&str, &Entry> = BTreeMap::new();
    for en in &st.entries {
        if keys::lookup(section, &en.key).is_none() {
            let elsewhere = keys::KEYS.iter().find(|k| k.key == en.key);
            let msg = match elsewhere {
                Some(k) => format!(
                    "key '{}' is not allowed in {} (it belongs in {}); expected one of: {}",
                    en.key,
                    display_name(st),
                    k.sections
                        .iter()
                        .map(|s| s.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                    keys::names_in(section)
                ),
                None => format!(
                    "unknown key '{}' in {} (expected one of: {})",
                    en.key,
                    display_name(st),
                    keys::names_in(section)
                ),
            };
            return Err(e.at(en.key_at, msg));
        }
        if let Some(first) = m.get(en.key.as_str()) {
            return Err(e.at(
                en.key_at,
                format!(
                    "duplicate key '{}' (already set at line {})",
                    en.key, first.key_at.line
                ),
            ));
        }
        m.insert(&en.key, en);
    }
    Ok(m)
}

impl Cx<'_> {
    fn bad(&self, en: &Entry, what: impl std::fmt::Display) -> InputError {
        let form = keys::KEYS
            .iter()
            .find(|k| k.key == en.key)
            .map_or("", |k| k.form);
        self.e.at(
            en.value_at,
            format!("{what} for '{}' (expected {form})", en.key),
        )
    }

    fn need_value<'v>(&self, en: &'v Entry) -> Result<&'v str, InputError> {
        if en.value.is_empty() {
            return Err(self.bad(en, "missing value"));
        }
        Ok(&en.value)
    }

    fn duration(&self, en: &Entry, default_unit: Option<&str>) -> Result<u64, InputError> {
        let v = self.need_value(en)?;
        parse_duration_ns(v, default_unit).map_err(|err| self.bad(en, err))
    }

    fn positive_duration(&self, en: &Entry, default_unit: Option<&str>) -> Result<u64, InputError> {
        let d = self.duration(en, default_unit)?;
        if d == 0 {
            return Err(self.bad(en, "a zero duration"));
        }
        Ok(d)
    }

    /// A duration within `min_ns..=max_ns` (the documented range, docs/ranges.md).
    fn duration_in(
        &self,
        en: &Entry,
        default_unit: Option<&str>,
        min_ns: u64,
        max_ns: u64,
    ) -> Result<u64, InputError> {
        let d = self.positive_duration(en, default_unit)?;
        if !(min_ns..=max_ns).contains(&d) {
            return Err(self.bad(
                en,
                format!(
                    "{} outside {}..{}",
                    format_duration_ns(d),
                    format_duration_ns(min_ns),
                    format_duration_ns(max_ns)
                ),
            ));
        }
        Ok(d)
    }

    /// A histogram resolution: a whole number of nanoseconds, at most 1ms.
    fn resolution(&self, en: &Entry) -> Result<u64, InputError> {
        if en.value.contains('.') {
            return Err(self.bad(en, format!("a fractional resolution '{}'", en.value)));
        }
        self.duration_in(en, Some("ns"), 1, MAX_RESOLUTION_NS)
    }

    /// A duration of at least `min_ns` (`what` names the bound in the message).
    /// `start.delay`: 0 .. 1 day.
    fn start_delay(&self, en: &Entry) -> Result<u64, InputError> {
        let d = self.duration(en, None)?;
        if d > START_DELAY_MAX_NS {
            return Err(self.bad(
                en,
                format!(
                    "{} is more than the {} maximum",
                    format_duration_ns(d),
                    format_duration_ns(START_DELAY_MAX_NS)
                ),
            ));
        }
        Ok(d)
    }

    fn off_or_duration(&self, en: &Entry) -> Result<Option<u64>, InputError> {
        match en.value.to_ascii_lowercase().as_str() {
            "off" | "none" | "no" => Ok(None),
            "0" => Err(self.bad(en, "0 (write 'off' to disable)")),
            _ => self.positive_duration(en, None).map(Some),
        }
    }

    fn int<T: std::str::FromStr>(&self, en: &Entry, lo: i64, hi: i64) -> Result<T, InputError> {
        let v = self.need_value(en)?;
        match v.parse::<i64>() {
            Ok(n) if (lo..=hi).contains(&n) => v
                .parse::<T>()
                .map_err(|_| self.bad(en, format!("invalid number '{v}'"))),
            Ok(n) => Err(self.bad(en, format!("{n} is out of range {lo}..{hi}"))),
            Err(_) => Err(self.bad(en, format!("invalid number '{v}'"))),
        }
    }

    fn flag(&self, en: &Entry) -> Result<bool, InputError> {
        match en.value.to_ascii_lowercase().as_str() {
            "" | "on" | "yes" | "true" | "1" => Ok(true),
            "off" | "no" | "false" | "0" => Ok(false),
            v => Err(self.bad(en, format!("invalid switch '{v}'"))),
        }
    }

    fn cpus(&mut self, en: &Entry) -> Result<CpuSet, InputError> {
        let v = self.need_value(en)?;
        let set = CpuSet::parse(v).map_err(|err| self.bad(en, err))?;
        if set.is_empty() {
            return Err(self.bad(en, "an empty CPU list"));
        }
        let online = &self.machine.online;
        let missing = set.difference(online);
        if missing.is_empty() && !self.machine.fold_cpus {
            return Ok(set);
        }
        if !missing.is_empty() && (!self.machine.fold_cpus || online.is_empty()) {
            let (word, verb) = if missing.len() == 1 {
                ("CPU", "does")
            } else {
                ("CPUs", "do")
            };
            let list = missing.to_list();
            return Err(self.e.at(
                en.value_at,
                format!(
                    "{word} {list} of '{}' {verb} not exist on this machine (online CPUs: {}; use --fold-cpus to map them onto these)",
                    en.key,
                    online.to_list()
                ),
            ));
        }
        // A load folded onto a measured CPU (or a timer folded onto the
        // load's CPUs) would measure the load, not the machine: every CPU a
        // timer was folded onto is kept out of a program's set, unless the
        // file itself put that timer on one of the program's CPUs.
        let avoid: CpuSet = self
            .measured
            .iter()
            .filter(|(asked, _)| !set.contains(*asked))
            .map(|&(_, here)| here)
            .collect();
        let ons: Vec<u32> = online.difference(&avoid).iter().collect();
        if ons.is_empty() {
            return Err(self.e.at(
                en.value_at,
                format!(
                    "cannot fold '{}' {}: every online CPU ({}) is measured by a timer thread, and a load is never folded onto a measured CPU",
                    en.key,
                    set.to_list(),
                    online.to_list()
                ),
            ));
        }
        let folded: CpuSet = set
            .iter()
            .filter(|c| !avoid.contains(*c))
            .map(|c| {
                if online.contains(c) {
                    c
                } else {
                    ons[c as usize % ons.len()]
                }
            })
            .collect();
        let folded = if folded.is_empty() {
            // Every CPU of the set was measured: the first other one.
            CpuSet::single(ons[0])
        } else {
            folded
        };
        if folded == set {
            return Ok(set);
        }
        self.warnings.push(format!(
            "{}:{}:{}: {} {} folded onto {} (this machine has CPUs {}{})",
            self.e.file,
            en.value_at.line,
            en.value_at.col,
            en.key,
            set.to_list(),
            folded.to_list(),
            online.to_list(),
            if avoid.is_empty() {
                String::new()
            } else {
                format!("; CPU {} measured, kept free of loads", avoid.to_list())
            }
        ));
        Ok(folded)
    }

    fn policy(&self, en: &Entry) -> Result<Policy, InputError> {
        let v = self.need_value(en)?;
        match Policy::parse(v) {
            Some(Policy::Deadline) => Err(self.bad(en, "SCHED_DEADLINE is not supported here")),
            Some(p) => Ok(p),
            None => Err(self.bad(en, format!("unknown policy '{v}'"))),
        }
    }

    /// `sched.policy` and `sched.priority` together.
    fn sched(&self, m: &BTreeMap<&str, &Entry>) -> Result<Option<Sched>, InputError> {
        let pol = m
            .get("sched.policy")
            .map(|en| self.policy(en))
            .transpose()?;
        let prio: Option<i32> = m
            .get("sched.priority")
            .map(|en| self.int(en, 0, 99))
            .transpose()?;
        Ok(match (pol, prio) {
            (None, None) => None,
            (None, Some(0)) => Some(Sched::default()),
            (None, Some(p)) => Some(Sched {
                policy: Policy::Fifo,
                priority: p,
            }),
            (Some(pol), p) => {
                let p = p.unwrap_or(if pol.is_rt() { 1 } else { 0 });
                if pol.is_rt() && p == 0 {
                    return Err(self.bad(m["sched.priority"], "priority 0 with a real-time policy"));
                }
                if !pol.is_rt() && p != 0 {
                    return Err(self.bad(
                        m["sched.priority"],
                        format!(
                            "priority {p} needs sched.policy FIFO or RR, not {}",
                            pol.name().to_uppercase()
                        ),
                    ));
                }
                Some(Sched {
                    policy: pol,
                    priority: p,
                })
            }
        })
    }

    fn cgroup(&self, en: &Entry) -> Result<Partition, InputError> {
        match en.value.to_ascii_lowercase().as_str() {
            "rt" => Ok(Partition::Rt),
            "nrt" => Ok(Partition::Nrt),
            v => Err(self.bad(en, format!("unknown partition '{v}'"))),
        }
    }

    fn cycle(&self, en: &Entry) -> Result<Option<Cycle>, InputError> {
        let v = self.need_value(en)?;
        if matches!(v.to_ascii_lowercase().as_str(), "off" | "none" | "no") {
            return Ok(None);
        }
        // Two durations; a unit may be a word of its own: `5 min 30 s`.
        let toks: Vec<&str> = v.split_whitespace().collect();
        let mut durs = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let starts_digit = toks[i].starts_with(|c: char| c.is_ascii_digit() || c == '.');
            let has_unit = toks[i].contains(|c: char| c.is_ascii_alphabetic());
            let item = if starts_digit && !has_unit && i + 1 < toks.len() {
                i += 2;
                format!("{} {}", toks[i - 2], toks[i - 1])
            } else {
                i += 1;
                toks[i - 1].to_string()
            };
            let d = parse_duration_ns(&item, None).map_err(|err| self.bad(en, err))?;
            durs.push(d);
        }
        let phase_ok = |d: &u64| (CYCLE_PHASE_MIN_NS..=CYCLE_PHASE_MAX_NS).contains(d);
        match durs.as_slice() {
            [on, off] if phase_ok(on) && phase_ok(off) => Ok(Some(Cycle {
                on_ns: *on,
                off_ns: *off,
            })),
            [_, _] => Err(self.bad(
                en,
                format!(
                    "a phase outside {}..{}",
                    format_duration_ns(CYCLE_PHASE_MIN_NS),
                    format_duration_ns(CYCLE_PHASE_MAX_NS)
                ),
            )),
            _ => Err(self.bad(en, format!("{} duration(s) instead of two", durs.len()))),
        }
    }

    fn output(&self, en: &Entry) -> Result<Output, InputError> {
        let v = self.need_value(en)?;
        let words = syntax::split_words(v).map_err(|(_, m)| self.bad(en, m))?;
        match words.as_slice() {
            [w] if w == "/dev/null" || w.eq_ignore_ascii_case("null") => Ok(Output::Null),
            [w] if matches!(
                w.to_ascii_lowercase().as_str(),
                "inherit" | "-" | "stdout" | "stderr" | "tty"
            ) =>
            {
                Ok(Output::Inherit)
            }
            [w] => Ok(Output::File(PathBuf::from(w))),
            _ => Err(self.bad(en, "several words (quote a file name with spaces)")),
        }
    }

    fn termination(&self, en: &Entry) -> Result<Termination, InputError> {
        let v = self.need_value(en)?;
        Termination::parse(v)
            .ok_or_else(|| self.bad(en, format!("unknown termination policy '{v}'")))
    }

    fn main(&mut self, st: &Stanza) -> Result<Main, InputError> {
        let m = entries(self.e, st, Section::Main)?;
        let mut out = Main::default();
        for (&k, &en) in &m {
            match k {
                "cpu_affinity" => out.cpu_affinity = Some(self.cpus(en)?),
                "sched.policy" | "sched.priority" => {}
                "cgroup" => out.cgroup = Some(self.cgroup(en)?),
                "mode" => {
                    let v = self.need_value(en)?;
                    out.mode = Mode::parse(v)
                        .ok_or_else(|| self.bad(en, format!("unknown mode '{v}'")))?;
                }
                "period" => out.period_ns = self.duration_in(en, None, 1_000, MAX_PERIOD_NS)?,
                "lifetime.duration" => {
                    out.duration_ns = Some(self.duration_in(en, None, 1, MAX_DURATION_NS)?)
                }
                "stats.histo_size" => {
                    out.histo_size_ns = self.duration_in(en, Some("us"), 1, MAX_HISTO_SIZE_NS)?
                }
                "histo.resolution" => out.resolution_ns = self.resolution(en)?,
                "stats.period" => {
                    out.stats_period_ns =
                        self.duration_in(en, None, STATS_PERIOD_MIN_NS, STATS_PERIOD_MAX_NS)?
                }
                "stats.format" => out.formats = self.formats(en)?,
                "stats.cpu_load" => out.cpu_load = self.cpu_load(en)?,
                "stats.checkpoint" => {
                    out.checkpoint_ns = self.off_or_duration(en)?.unwrap_or(0);
                    if out.checkpoint_ns > 0 && out.checkpoint_ns < 100_000_000 {
                        return Err(self.bad(en, "an interval below the 100ms minimum"));
                    }
                }
                "stats.rotate" => {
                    out.rotate_ns = self.off_or_duration(en)?;
                    if let Some(r) = out.rotate_ns {
                        if !(1_000_000_000..=MAX_DURATION_NS).contains(&r) {
                            return Err(
                                self.bad(en, format!("{} outside 1s..365d", format_duration_ns(r)))
                            );
                        }
                    }
                }
                "memlock" => out.memlock = self.flag(en)?,
                "cpu_dma_latency" => out.cpu_dma_latency = self.flag(en)?,
                "dbg_level" => out.dbg_level = self.int(en, 0, 9)?,
                "start.delay" => out.start_delay_ns = self.start_delay(en)?,
                "load.cycle" => out.load_cycle = self.cycle(en)?,
                "trace.on_latency" => {
                    out.trace.on_latency_ns = Some(self.duration_in(
                        en,
                        None,
                        TRACE_LATENCY_MIN_NS,
                        TRACE_LATENCY_MAX_NS,
                    )?)
                }
                "trace.stop" => out.trace.stop = self.flag(en)?,
                "trace.split" => out.trace.split = self.flag(en)?,
                "trace.buffer_kb" => {
                    out.trace.buffer_kb = self.int(
                        en,
                        i64::from(TRACE_BUFFER_KB_MIN),
                        i64::from(TRACE_BUFFER_KB_MAX),
                    )?
                }
                _ => unreachable!("key table and match disagree on {k}"),
            }
        }
        if let Some(en) = m.get("trace.stop") {
            if out.trace.stop && out.trace.on_latency_ns.is_none() {
                return Err(self.bad(en, "trace.stop without trace.on_latency"));
            }
        }
        out.sched = self.sched(&m)?;
        if let Some(en) = m.get("histo.resolution").or(m.get("stats.histo_size")) {
            if out.resolution_ns > out.histo_size_ns {
                return Err(self.bad(en, "a resolution coarser than stats.histo_size"));
            }
            if out.histo_size_ns / out.resolution_ns > 10_000_000 {
                return Err(self.bad(en, "more than 10 million histogram buckets"));
            }
        }
        Ok(out)
    }

    fn formats(&self, en: &Entry) -> Result<Vec<Format>, InputError> {
        let v = self.need_value(en)?;
        let mut out = Vec::new();
        for w in v
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| !w.is_empty())
        {
            let f = match w.to_ascii_lowercase().as_str() {
                "txt" | "text" => Format::Txt,
                "csv" => Format::Csv,
                "json" => Format::Json,
                "cyclictest" | "hist" => Format::Cyclictest,
                _ => return Err(self.bad(en, format!("unknown format '{w}'"))),
            };
            if !out.contains(&f) {
                out.push(f);
            }
        }
        out.sort();
        Ok(out)
    }

    fn cpu_load(&mut self, en: &Entry) -> Result<CpuLoadShow, InputError> {
        match en.value.to_ascii_lowercase().as_str() {
            "" | "all" | "on" => Ok(CpuLoadShow::All),
            "total" | "global" => Ok(CpuLoadShow::Total),
            "none" | "off" => Ok(CpuLoadShow::None),
            v if v.starts_with(|c: char| c.is_ascii_digit()) => {
                Ok(CpuLoadShow::Cpus(self.cpus(en)?))
            }
            v => Err(self.bad(en, format!("unknown value '{v}'"))),
        }
    }

    fn timer(&mut self, st: &Stanza, index: u32, main: &Main) -> Result<Timer, InputError> {
        let m = entries(self.e, st, Section::Timer)?;
        let mut t = Timer {
            index,
            cpu: None,
            sched: Sched::default(),
            cgroup: None,
            period_ns: main.period_ns,
            duration_ns: None,
            samples: None,
            histo_size_ns: main.histo_size_ns,
            resolution_ns: main.resolution_ns,
            filename: format!("timer_thread{index:02}.txt"),
        };
        for (&k, &en) in &m {
            match k {
                "cpu_affinity" => {
                    let set = self.cpus(en)?;
                    if set.len() != 1 {
                        return Err(self.bad(
                            en,
                            format!("{} CPUs (a timer thread measures one CPU)", set.len()),
                        ));
                    }
                    t.cpu = set.first();
                }
                "sched.policy" | "sched.priority" => {}
                "cgroup" => t.cgroup = Some(self.cgroup(en)?),
                "period" => t.period_ns = self.duration_in(en, None, 1_000, MAX_PERIOD_NS)?,
                "lifetime.duration" => {
                    t.duration_ns = Some(self.duration_in(en, None, 1, MAX_DURATION_NS)?)
                }
                "lifetime.samples" => t.samples = Some(self.int(en, 1, MAX_SAMPLES)?),
                "stats.histo_size" => {
                    t.histo_size_ns = self.duration_in(en, Some("us"), 1, MAX_HISTO_SIZE_NS)?
                }
                "histo.resolution" => t.resolution_ns = self.resolution(en)?,
                "stats.filename" => {
                    let v = self.need_value(en)?;
                    let w = syntax::split_words(v).map_err(|(_, msg)| self.bad(en, msg))?;
                    match w.as_slice() {
                        [f] if !f.contains('/')
                            && f != "."
                            && f != ".."
                            && !f.contains('\0')
                            && f.len() <= 255 =>
                        {
                            t.filename = f.clone()
                        }
                        [f] if f.contains('\0') || f.len() > 255 => {
                            return Err(self.bad(
                                en,
                                "a name the file system cannot hold (NUL byte or over 255 bytes)",
                            ))
                        }
                        [_] => {
                            return Err(self.bad(
                                en,
                                "a path (give a plain file name; --out chooses the directory)",
                            ))
                        }
                        _ => return Err(self.bad(en, "several words")),
                    }
                }
                _ => unreachable!("key table and match disagree on {k}"),
            }
        }
        if let Some(s) = self.sched(&m)? {
            t.sched = s;
        }
        if t.resolution_ns > t.histo_size_ns {
            let en = m
                .get("histo.resolution")
                .or(m.get("stats.histo_size"))
                .copied();
            if let Some(en) = en {
                return Err(self.bad(en, "a histogram smaller than its resolution"));
            }
        }
        Ok(t)
    }

    fn program(&mut self, st: &Stanza, index: u32, main: &Main) -> Result<Program, InputError> {
        let m = entries(self.e, st, Section::Program)?;
        let action = match (m.get("cmdline"), m.get("load")) {
            (Some(c), Some(l)) => {
                let (first, second) = if c.key_at.line < l.key_at.line {
                    (c, l)
                } else {
                    (l, c)
                };
                return Err(self.e.at(
                    second.key_at,
                    format!(
                        "'{}' and '{}' (line {}) in one program (expected one of cmdline or load)",
                        second.key, first.key, first.key_at.line
                    ),
                ));
            }
            (None, None) => {
                return Err(self.e.at(
                    st.at,
                    format!(
                        "{} has neither 'cmdline' nor 'load' (expected one of them)",
                        display_name(st)
                    ),
                ))
            }
            (Some(c), None) => {
                let v = self.need_value(c)?;
                let words = syntax::split_words(v).map_err(|(off, msg)| {
                    self.e.at(
                        Pos {
                            line: c.value_at.line,
                            col: c.value_at.col + v[..off].chars().count(),
                        },
                        format!("{msg} in 'cmdline'"),
                    )
                })?;
                if words.first().is_none_or(|w| w.is_empty()) {
                    return Err(self.bad(c, "an empty command"));
                }
                Action::Command(words)
            }
            (None, Some(l)) => {
                let v = self.need_value(l)?;
                let kind = Builtin::parse(v).ok_or_else(|| {
                    self.e.at(
                        l.value_at,
                        format!(
                            "unknown built-in load '{v}' (expected one of {})",
                            Builtin::names()
                        ),
                    )
                })?;
                let size = m
                    .get("load.size")
                    .map(|en| {
                        let v = self.need_value(en)?;
                        if kind.size_is_threads() {
                            // timers/syncio: a thread count, not bytes.
                            let max = rtshield_sys::programs::LOAD_THREADS_MAX as i64;
                            return self.int::<u64>(en, 1, max);
                        }
                        parse_size(v).map_err(|err| self.e.at(en.value_at, err))
                    })
                    .transpose()?;
                let workers = m
                    .get("load.workers")
                    .map(|en| self.int(en, 1, 64))
                    .transpose()?
                    .unwrap_or(1);
                Action::Builtin {
                    kind,
                    size,
                    workers,
                }
            }
        };
        if matches!(action, Action::Command(_)) {
            for k in ["load.size", "load.workers"] {
                if let Some(en) = m.get(k) {
                    return Err(self.e.at(
                        en.key_at,
                        format!("'{k}' only applies to a built-in 'load'"),
                    ));
                }
            }
        }
        let mut p = Program {
            index,
            action,
            cpu_affinity: None,
            sched: None,
            cgroup: None,
            stdout: Output::Inherit,
            stderr: Output::Inherit,
            on_ok: Termination::Ignore,
            on_ko: Termination::Ignore,
            start_delay_ns: 0,
            load_cycle: main.load_cycle,
        };
        for (&k, &en) in &m {
            match k {
                "cmdline" | "load" | "load.size" | "load.workers" | "sched.policy"
                | "sched.priority" => {}
                "cpu_affinity" => p.cpu_affinity = Some(self.cpus(en)?),
                "cgroup" => p.cgroup = Some(self.cgroup(en)?),
                "output.out" => p.stdout = self.output(en)?,
                "output.err" => p.stderr = self.output(en)?,
                "termination.ok" => p.on_ok = self.termination(en)?,
                "termination.ko" => p.on_ko = self.termination(en)?,
                "start.delay" => p.start_delay_ns = self.start_delay(en)?,
                "load.cycle" => p.load_cycle = self.cycle(en)?,
                _ => unreachable!("key table and match disagree on {k}"),
            }
        }
        // Programs never inherit the real-time main thread: SCHED_OTHER
        // unless set, and said so by `--check`.
        p.sched = Some(self.sched(&m)?.unwrap_or_default());
        if let (Action::Builtin { .. }, Some(s)) = (&p.action, p.sched) {
            if s.policy.is_rt() {
                let en = m
                    .get("sched.policy")
                    .or(m.get("sched.priority"))
                    .copied()
                    .expect("sched came from a key");
                return Err(self.bad(
                    en,
                    "a real-time policy for a built-in load (they busy-loop: use OTHER, BATCH or IDLE)",
                ));
            }
        }
        Ok(p)
    }
}
