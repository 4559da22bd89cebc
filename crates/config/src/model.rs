//! The typed configuration and the pass that turns stanzas into it,
//! checking every value (with its line and column) before anything starts.
//! The value checks are in `check` (one function per kind of value), the
//! stanzas' keys in `stanzas`; the ranges come from `rtshield-limits`.

use crate::check::Cx;
use crate::syntax::{self, display_name, Errs, Pos, Stanza};
use rtshield_vocab::Policy;
use rtshield_vocab::{Builtin, Output, Termination};
use rtshield_vocab::{CpuSet, InputError};
use std::collections::BTreeMap;

pub use rtshield_vocab::Mode;

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
            buffer_kb: rtshield_limits::TRACE_BUFFER_KB_DEFAULT,
        }
    }
}

impl Trace {
    /// Whether any tracing is asked for.
    pub fn wanted(&self) -> bool {
        self.on_latency_ns.is_some() || self.split
    }
}

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
                add_timer(&e, st, t, &mut cfg, &mut measured)?;
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

/// Add a checked `timer_thread[N]` to `cfg`: its `stats.filename` must be
/// its own, and its CPU is noted (as written, as measured) for `--fold-cpus`.
fn add_timer(
    e: &Errs,
    st: &Stanza,
    t: Timer,
    cfg: &mut Config,
    measured: &mut Vec<(u32, u32)>,
) -> Result<(), InputError> {
    let at = st
        .entries
        .iter()
        .find(|en| en.key == "stats.filename")
        .map_or(st.at, |en| en.value_at);
    if RESERVED_FILES.contains(&t.filename.as_str()) {
        return Err(e.at(
            at,
            format!(
                "'{}' is a file rtshield writes itself (expected another stats.filename)",
                t.filename
            ),
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
    Ok(())
}
