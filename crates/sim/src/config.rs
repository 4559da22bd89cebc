//! What the simulated machine looks like and which knobs the model exposes.

use rtshield_vocab::CpuSet;
use serde::Serialize;

/// The load balancers the simulator knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum BalancerKind {
    /// Linux 2.6.4's O(1) balancer (the ARTiS thesis §2.2).
    Linux26,
    /// FreeBSD ULE as summarised in the ARTiS thesis §2.2.6.
    Ule,
    /// The ARTiS balancer as specified by the thesis (the ARTiS thesis, ch. 3).
    Artis,
    /// The ARTiS patch posted to LKML on 2005-05-03 (against 2.6.11).
    Artis2005,
}

impl BalancerKind {
    /// Every balancer, in the order `--compare` lists them.
    pub const ALL: [BalancerKind; 4] = [
        BalancerKind::Linux26,
        BalancerKind::Ule,
        BalancerKind::Artis,
        BalancerKind::Artis2005,
    ];

    /// A balancer by `--balancer` name (`linux26`/`linux`/`o1`, `ule`, `artis`,
    /// `artis-2005`), case-insensitive; `None` for any other.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "linux26" | "linux" | "o1" => BalancerKind::Linux26,
            "ule" => BalancerKind::Ule,
            "artis" => BalancerKind::Artis,
            "artis-2005" | "artis2005" => BalancerKind::Artis2005,
            _ => return None,
        })
    }

    /// The name reports and `--balancer` use.
    pub fn name(self) -> &'static str {
        match self {
            BalancerKind::Linux26 => "linux26",
            BalancerKind::Ule => "ule",
            BalancerKind::Artis => "artis",
            BalancerKind::Artis2005 => "artis-2005",
        }
    }

    /// Does this balancer treat RT CPUs specially (forced migrations, FIFOs)?
    /// A property of the name, for callers choosing `--rt-cpus`; the engine
    /// never asks (the balancer itself acts on RT CPUs or not).
    pub fn is_artis(self) -> bool {
        matches!(self, BalancerKind::Artis | BalancerKind::Artis2005)
    }
}

impl std::fmt::Display for BalancerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where tasks start (before any balancing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Placement {
    /// Each task on the allowed CPU with the fewest tasks so far (ties: lowest
    /// CPU): a balanced start, like fork-time balancing.
    Spread,
    /// Each task on a random allowed CPU (seeded).
    Random,
    /// Every task on its first allowed CPU, as when one parent forks them all
    /// on a kernel without fork balancing: the balancer has everything to do.
    First,
}

impl Placement {
    /// A placement by `--placement` name (`spread` or `rr`, `random`, `first`),
    /// case-insensitive; `None` for any other.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "spread" | "rr" => Placement::Spread,
            "random" => Placement::Random,
            "first" => Placement::First,
            _ => return None,
        })
    }
}

/// Everything that parameterises one simulation run.
#[derive(Debug, Clone, Serialize)]
pub struct SimConfig {
    /// CPUs of the simulated machine (1..=1024).
    pub ncpus: usize,
    /// ARTiS RT CPUs. Only the ARTiS balancers act on it; for the others it
    /// only labels migrations and latency rows.
    pub rt_cpus: CpuSet,
    /// The load balancer simulated.
    pub balancer: BalancerKind,
    /// Seed of every random choice (placement, start jitter): same seed, same run.
    pub seed: u64,
    /// Scheduler tick (HZ = 1 s / tick).
    pub tick_ns: u64,
    /// Stop after this much simulated time even if tasks remain (they are
    /// reported unfinished). `None`: run until every task finished.
    pub duration_ns: Option<u64>,
    /// Busy-loop iterations per microsecond, to turn `loop`, `sloop` and
    /// `irq_period` into time.
    pub loops_per_us: f64,
    /// Length of one interrupt-masking section.
    pub mask_len_ns: u64,
    /// Delay between a task leaving one CPU through an ARTiS FIFO and being
    /// runnable on the other (IPI, fetch, cache refill).
    pub migration_cost_ns: u64,
    /// Time a balancer holds the run-queue locks of both CPUs when it moves
    /// tasks with the standard (locking) mechanism.
    pub lock_cost_ns: u64,
    /// Time a CPU spends with preemption off to push into or drain an ARTiS
    /// lock-free FIFO.
    pub fifo_cost_ns: u64,
    /// A task that ran less than this long ago is cache-hot: a busy CPU's
    /// balancer leaves it where it is.
    pub cache_decay_ns: u64,
    /// Busy-CPU balance period (Linux 2.6: 200 ms).
    pub busy_balance_ns: u64,
    /// ULE's push period (twice a second).
    pub ule_push_ns: u64,
    /// ARTiS: how often NRT CPUs send RT tasks back to RT CPUs (thesis:
    /// about 20 times a second).
    pub artis_return_ns: u64,
    /// ARTiS prediction constants (thesis §3.2.3): K (2..100) and C.
    pub artis_k: u64,
    /// ARTiS prediction constant C, ns (0..1 s).
    pub artis_c_ns: u64,
    /// Where tasks start.
    pub placement: Placement,
    /// Random start offset of each task, uniform in [0, start_jitter).
    pub start_jitter_ns: u64,
    /// Record a CSV-able event trace.
    pub record_trace: bool,
    /// Record per-CPU run segments (for the Gantt chart and the invariant tests).
    pub record_segments: bool,
    /// The most events the run may handle (`--max-events`); beyond it the run is
    /// refused rather than left spinning.
    pub max_events: u64,
    /// The most events the run may handle while it keeps them
    /// ([`SimConfig::record_trace`], [`SimConfig::record_segments`]):
    /// `rtshield_limits::SIM_MAX_TRACE_EVENTS` (the binary never changes
    /// it; tests make it small).
    pub kept_events_max: u64,
}

/// Default iterations per µs when the scenario does not say: 0.1, i.e. one
/// lollobrigida iteration = 10 µs. With it, annex B's RT tasks compute 50 ms
/// and sleep 5 ms (RT share 0.91), which is what the annex's comment assumes
/// when it predicts 10:1:1:1.
pub(crate) const DEFAULT_LOOPS_PER_US: f64 = 0.1;

/// The longest simulated time (1 h): a run stops there even without
/// `--duration`, so no input makes the simulator spin for hours of wall time.
pub(crate) const MAX_SIM_NS: u64 = 3_600_000_000_000;
/// Default `--max-events`: one simulated hour of 128 CPUs running 1 000 tasks
/// (`bench/sim-speed.sh`'s large case) needs about 120-150 million events
/// (extrapolated from 3 simulated minutes, docs/scale.md); this leaves room for
/// busier scenarios of that size while still refusing a runaway input.
pub const DEFAULT_MAX_EVENTS: u64 = 500_000_000;
/// Accepted `--max-events`: at least enough for a small run, at most what a few
/// hours of wall time process (about 5-10 million events per second).
pub const MAX_EVENTS_RANGE: (u64, u64) = (1_000, 100_000_000_000);
/// Accepted `loops_per_us` (`--loops-per-us`, the scenario key).
pub(crate) const LOOPS_PER_US_RANGE: (f64, f64) = (1e-3, 1e6);

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// `lo..=hi` or an error naming the option, with the bounds in words.
fn in_range(opt: &str, v: u64, lo: u64, hi: u64, words: &str) -> Result<(), SimError> {
    if v < lo || v > hi {
        return Err(SimError::Config(format!(
            "{opt} {} is out of range ({words})",
            rtshield_vocab::format_duration_ns(v)
        )));
    }
    Ok(())
}

impl SimConfig {
    /// A `ncpus`-CPU machine under `balancer` with the defaults `rtshield simulate`
    /// documents (1 ms tick, seed 1, spread placement, no RT CPU).
    pub fn new(ncpus: usize, balancer: BalancerKind) -> Self {
        SimConfig {
            ncpus,
            rt_cpus: CpuSet::new(),
            balancer,
            seed: 1,
            tick_ns: 1_000_000,
            duration_ns: None,
            loops_per_us: DEFAULT_LOOPS_PER_US,
            mask_len_ns: 5_000,
            migration_cost_ns: 20_000,
            lock_cost_ns: 10_000,
            fifo_cost_ns: 1_000,
            cache_decay_ns: 10_000_000,
            busy_balance_ns: 200_000_000,
            ule_push_ns: 500_000_000,
            artis_return_ns: 50_000_000,
            artis_k: 100,
            artis_c_ns: 2_000_000,
            placement: Placement::Spread,
            start_jitter_ns: 10_000,
            record_trace: false,
            record_segments: false,
            max_events: DEFAULT_MAX_EVENTS,
            kept_events_max: rtshield_limits::SIM_MAX_TRACE_EVENTS,
        }
    }

    /// A period in ticks (at least one).
    pub fn ticks(&self, ns: u64) -> u64 {
        (ns / self.tick_ns).max(1)
    }

    /// Whether `cpu` is one of the ARTiS RT CPUs.
    pub fn is_rt_cpu(&self, cpu: usize) -> bool {
        self.rt_cpus.contains(cpu as u32)
    }

    /// Every value in its range (the error names the option and the range), and the
    /// balancer's own checks.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.ncpus == 0 || self.ncpus > 1024 {
            return Err(SimError::Config(format!(
                "--cpus {} is out of range (1..=1024)",
                self.ncpus
            )));
        }
        in_range("--tick", self.tick_ns, 100_000, 100 * MS, "100us..100ms")?;
        if let Some(d) = self.duration_ns {
            in_range("--duration", d, 1, MAX_SIM_NS, "> 0, at most 1h")?;
        }
        let (lo, hi) = MAX_EVENTS_RANGE;
        if !(lo..=hi).contains(&self.max_events) {
            return Err(SimError::Config(format!(
                "--max-events {} is out of range ({lo}..={hi})",
                self.max_events
            )));
        }
        let (lo, hi) = LOOPS_PER_US_RANGE;
        if !(self.loops_per_us.is_finite() && (lo..=hi).contains(&self.loops_per_us)) {
            return Err(SimError::Config(format!(
                "--loops-per-us {:?} is out of range ({lo}..{hi})",
                self.loops_per_us
            )));
        }
        if !(2..=100).contains(&self.artis_k) {
            return Err(SimError::Config(format!(
                "--artis-k {} is out of range (2..100)",
                self.artis_k
            )));
        }
        in_range("--artis-c", self.artis_c_ns, 0, S, "0..1s")?;
        in_range("--mask-len", self.mask_len_ns, 0, S, "0..1s")?;
        in_range("--migration-cost", self.migration_cost_ns, 0, S, "0..1s")?;
        in_range("--lock-cost", self.lock_cost_ns, 0, S, "0..1s")?;
        in_range("--fifo-cost", self.fifo_cost_ns, 0, S, "0..1s")?;
        in_range("--cache-decay", self.cache_decay_ns, 0, 3600 * S, "0..1h")?;
        in_range("--start-jitter", self.start_jitter_ns, 0, S, "0..1s")?;
        if let Some(last) = self.rt_cpus.last() {
            if last as usize >= self.ncpus {
                return Err(SimError::Config(format!(
                    "--rt-cpus {} names CPU {last} but the machine has {} CPUs (0-{})",
                    self.rt_cpus.to_list(),
                    self.ncpus,
                    self.ncpus - 1
                )));
            }
        }
        crate::balancer::build(self)
            .check_config(self)
            .map_err(SimError::Config)
    }
}

/// A scenario or configuration the simulator cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A setting out of range or one the balancer cannot work with (the message names the option).
    #[error("{0}")]
    Config(String),
    /// A task-level problem; `line` is the task's line in the scenario file.
    #[error("{source_name}:{line}:1: {msg}")]
    Task {
        /// The scenario's source (file name).
        source_name: String,
        /// The task's line in it.
        line: usize,
        /// What is wrong with the task.
        msg: String,
    },
}
