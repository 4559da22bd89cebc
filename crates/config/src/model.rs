//! The typed configuration and the pass that turns stanzas into it,
//! checking every value (with its line and column) before anything starts.
//! The value checks are in `check` (one function per kind of value), the
//! stanzas' keys in `stanzas`; the ranges come from `rtshield-limits`.

use crate::check::Cx;
use crate::syntax::{self, display_name, Errs, Pos, Stanza};
use rtshield_limits as limits;
use rtshield_vocab::Policy;
use rtshield_vocab::{Builtin, Output, Termination};
use rtshield_vocab::{CpuSet, InputError};
use std::collections::BTreeMap;

pub use rtshield_vocab::Mode;

/// Result file formats (`stats.format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    /// `txt`: the systress article's `timer_threadNN.txt`, one file per thread.
    Txt,
    /// `csv`: `results.csv`, one row per thread.
    Csv,
    /// `json`: `results.json` (written anyway: reports and checkpoints need it).
    Json,
    /// `cyclictest`: `histogram.txt` in cyclictest's `-h` layout.
    Cyclictest,
}

impl Format {
    /// The format as written after `stats.format`.
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
    /// Nothing (`none`, the default).
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
    /// `rt`: the shielded CPUs.
    Rt,
    /// `nrt`: the housekeeping CPUs.
    Nrt,
}

impl Partition {
    /// The partition as written after `cgroup`.
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
    /// Length of a load phase, ns (100 ms .. 1 day).
    pub on_ns: u64,
    /// Length of a rest phase, ns (100 ms .. 1 day).
    pub off_ns: u64,
    /// The cycle starts with the rest phase (`load.cycle rest 60 s load 5
    /// min`, the torture article's script); the bare `ON OFF` form starts
    /// with the load.
    pub rest_first: bool,
}

impl Cycle {
    /// Whether the load runs `t_ns` after the start of the measurement.
    pub fn loaded_at(&self, t_ns: u64) -> bool {
        let t = t_ns % (self.on_ns + self.off_ns);
        if self.rest_first {
            t >= self.off_ns
        } else {
            t < self.on_ns
        }
    }

    /// The next switch strictly after `t_ns` (ns since the start).
    pub fn next_switch_ns(&self, t_ns: u64) -> u64 {
        let len = self.on_ns + self.off_ns;
        let base = t_ns - t_ns % len;
        let first = if self.rest_first {
            self.off_ns
        } else {
            self.on_ns
        };
        if t_ns % len < first {
            base + first
        } else {
            base + len
        }
    }
}

/// Scheduling of a thread or program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sched {
    /// The scheduling policy (`sched.policy`).
    pub policy: Policy,
    /// Real-time priority, 1..=99 for FIFO/RR, 0 for the others.
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
    /// `cpu_affinity`: the CPUs the main thread runs on; `None` keeps the inherited set.
    pub cpu_affinity: Option<CpuSet>,
    /// `sched.*` of the main thread; `None` leaves it as started.
    pub sched: Option<Sched>,
    /// `cgroup`: the rt/nrt partition the main thread runs in; `None`: no partition.
    pub cgroup: Option<Partition>,
    /// How the measuring threads wait (`nanosleep`, `posix-timer`, `interval`).
    pub mode: Mode,
    /// `period`: the timer threads' default period, ns (at least 1 µs).
    pub period_ns: u64,
    /// `lifetime.duration`, ns; `None`: until a signal or the timers' own durations.
    pub duration_ns: Option<u64>,
    /// `stats.histo_size`: the timer threads' default histogram size, ns.
    pub histo_size_ns: u64,
    /// `histo.resolution`: the timer threads' default bucket width, ns.
    pub resolution_ns: u64,
    /// `stats.period`: display and `timeline.csv` interval, ns (10 ms .. 1 h).
    pub stats_period_ns: u64,
    /// `stats.format`: the result files to write, in order.
    pub formats: Vec<Format>,
    /// `stats.cpu_load`: which CPU loads to show and record.
    pub cpu_load: CpuLoadShow,
    /// 0 = off.
    pub checkpoint_ns: u64,
    /// `stats.rotate`: start a new numbered result directory this often, ns; `None`: never.
    pub rotate_ns: Option<u64>,
    /// `memlock`: `mlockall()` for the run.
    pub memlock: bool,
    /// `cpu_dma_latency`: hold `/dev/cpu_dma_latency` at 0 for the run.
    pub cpu_dma_latency: bool,
    /// `dbg_level`, 0..=9: 1 and more also print every program exit.
    pub dbg_level: u32,
    /// `start.delay`: how long the loads run before measuring starts, ns.
    pub start_delay_ns: u64,
    /// `load.cycle`: the programs' default load/rest phases; `None`: always loaded.
    pub load_cycle: Option<Cycle>,
    /// `trace.*` keys (docs/trace.md).
    pub trace: Trace,
}

/// Kernel tracing of the measuring threads: `trace.on_latency`,
/// `trace.stop`, `trace.split`, `trace.buffer_kb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Trace {
    /// `trace.on_latency`: explain wake-ups later than this, ns; `None`: no spike tracing.
    pub on_latency_ns: Option<u64>,
    /// `trace.stop`: stop the run at the first such wake-up, trace kept.
    pub stop: bool,
    /// `trace.split`: split every wake-up into IRQ and thread latency.
    pub split: bool,
    /// `trace.buffer_kb`: per-CPU trace buffer, KiB; None: sized from the
    /// period and the CPU count (docs/trace.md).
    pub buffer_kb: Option<u32>,
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
    /// The `N` of `timer_thread[N]` (the `NN` of its file name).
    pub index: u32,
    /// `cpu_affinity`: the one CPU it is pinned to; `None` keeps the inherited set.
    pub cpu: Option<u32>,
    /// `sched.*`: its policy and priority.
    pub sched: Sched,
    /// `cgroup`: the rt/nrt partition this measuring thread runs in; `None`: none of its own.
    pub cgroup: Option<Partition>,
    /// `period`, ns (main's when absent).
    pub period_ns: u64,
    /// `lifetime.duration`, ns (main's when absent).
    pub duration_ns: Option<u64>,
    /// `lifetime.samples`: stop after this many samples; `None`: unbounded.
    pub samples: Option<u64>,
    /// `stats.histo_size`, ns (main's when absent).
    pub histo_size_ns: u64,
    /// `histo.resolution`, ns (main's when absent).
    pub resolution_ns: u64,
    /// `stats.filename`: its systress text file in the output directory (never one of [`RESERVED_FILES`]).
    pub filename: String,
}

/// What a program runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `cmdline`: the argv to execute (split like a shell would, without expansion).
    Command(Vec<String>),
    /// `load`: a built-in load.
    Builtin {
        /// Which load (`cpu`, `memory`, `io` ...).
        kind: Builtin,
        /// `load.size`: bytes per worker (memory, io) or threads per worker (timers, syncio); `None`: the load's default.
        size: Option<u64>,
        /// `load.workers`: workers per CPU, 1..=64.
        workers: u32,
        /// `load net:peer=ADDR`: flood this remote peer, not the loopback.
        peer: Option<std::net::Ipv4Addr>,
    },
}

/// A `program[N]` stanza.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// The `N` of `program[N]`.
    pub index: u32,
    /// What it runs.
    pub action: Action,
    /// `cpu_affinity`: the CPUs it may use (a built-in load starts one worker per CPU); `None`: inherited.
    pub cpu_affinity: Option<CpuSet>,
    /// `sched.*`: its policy and priority; `None` leaves it as inherited.
    pub sched: Option<Sched>,
    /// `cgroup`: the rt/nrt partition the program runs in; `None`: none of its own.
    pub cgroup: Option<Partition>,
    /// `output.out`: where its standard output goes.
    pub stdout: Output,
    /// `output.err`: where its standard error goes.
    pub stderr: Output,
    /// `termination.ok`: what an exit with status 0 does.
    pub on_ok: Termination,
    /// `termination.ko`: what a failure (status, signal, failed start) does.
    pub on_ko: Termination,
    /// `start.delay`: wait this long before starting it, ns.
    pub start_delay_ns: u64,
    /// `load.cycle`: its load/rest phases (main's when absent); `None`: always on.
    pub load_cycle: Option<Cycle>,
}

/// A whole configuration file, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The file name as given (for messages).
    pub file: String,
    /// The file's text (embedded in results).
    pub text: String,
    /// The `main` stanza (defaults when the file has none).
    pub main: Main,
    /// The `timer_thread[N]` stanzas, by index.
    pub timers: Vec<Timer>,
    /// The `program[N]` stanzas, by index.
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
    let mut budget = Budget::default();
    for st in order {
        budget.stanza(&e, st, machine)?;
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
                budget.program(&e, st, &p, machine)?;
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

/// What a configuration may start (docs/ranges.md, `rtshield_limits`):
/// timer threads, programs, and the processes and threads of their
/// built-in loads, counted as the stanzas are read, so a file of 100 000
/// stanzas is refused at the first one too many (adversary round 5,
/// F12: 8193 timer threads took 18 GB; 100 000 `load cpu` programs were
/// all started).
#[derive(Default)]
struct Budget {
    timers: usize,
    programs: usize,
    processes: u64,
    threads: u64,
}

impl Budget {
    fn stanza(&mut self, e: &Errs, st: &Stanza, machine: &Machine) -> Result<(), InputError> {
        let (n, max, what) = match st.name.as_str() {
            "timer_thread" => {
                self.timers += 1;
                let max = limits::run_max_timer_threads(machine.online.len());
                (self.timers, max, "timer_thread")
            }
            "program" => {
                self.programs += 1;
                (self.programs, limits::RUN_MAX_PROGRAMS, "program")
            }
            _ => return Ok(()),
        };
        if n > max {
            return Err(e.at(
                st.at,
                format!(
                    "more than {max} {what}[N] stanzas in one configuration (at most {} \
                     timer threads, {} per online CPU, and {} programs; docs/ranges.md)",
                    limits::RUN_MAX_TIMER_THREADS,
                    limits::RUN_MAX_TIMER_THREADS_PER_CPU,
                    limits::RUN_MAX_PROGRAMS
                ),
            ));
        }
        Ok(())
    }

    /// The processes (one per command; a built-in load's workers: CPUs ×
    /// kinds × `load.workers`) and load threads `p` starts.
    fn program(
        &mut self,
        e: &Errs,
        st: &Stanza,
        p: &Program,
        machine: &Machine,
    ) -> Result<(), InputError> {
        let (procs, threads) = match &p.action {
            Action::Command(_) => (1u64, 0u64),
            Action::Builtin {
                kind,
                size,
                workers,
                ..
            } => {
                let cpus = p
                    .cpu_affinity
                    .as_ref()
                    .unwrap_or(&machine.online)
                    .len()
                    .max(1) as u64;
                let kinds = kind.expand();
                let per_cpu = u64::from(*workers) * kinds.len() as u64;
                let threads: u64 = kinds
                    .iter()
                    .filter(|k| k.size_is_threads())
                    .map(|k| size.or(k.default_size()).unwrap_or(1))
                    .sum::<u64>()
                    .saturating_mul(u64::from(*workers));
                (cpus.saturating_mul(per_cpu), cpus.saturating_mul(threads))
            }
        };
        self.processes = self.processes.saturating_add(procs);
        self.threads = self.threads.saturating_add(threads);
        if self.processes > limits::RUN_MAX_PROCESSES {
            return Err(e.at(
                st.at,
                format!(
                    "the programs up to this one start {} processes (a built-in load one per \
                     worker: CPUs x kinds x load.workers), more than the {} one configuration \
                     may start (docs/ranges.md)",
                    self.processes,
                    limits::RUN_MAX_PROCESSES
                ),
            ));
        }
        if self.threads > limits::RUN_MAX_LOAD_THREADS {
            return Err(e.at(
                st.at,
                format!(
                    "the thread loads up to this one start {} threads (load.size per worker), \
                     more than the {} one configuration may start (docs/ranges.md)",
                    self.threads,
                    limits::RUN_MAX_LOAD_THREADS
                ),
            ));
        }
        Ok(())
    }
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
