//! What a scenario file describes: tasks with amounts of work, sleeps,
//! interrupt-masking periods, policies and CPU masks.

use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;
use serde::{Deserialize, Serialize};

/// A parsed scenario file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    /// Where it came from (for messages and reports).
    pub source: String,
    /// The global section (calibration, timeout).
    pub globals: Globals,
    /// Tasks after expanding repetitions (`#N`, `count`), in file order.
    pub tasks: Vec<TaskSpec>,
}

/// The scenario's global section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Globals {
    /// Busy-loop iterations per microsecond; `None` = calibrate at start.
    pub loops_per_us: Option<f64>,
    /// Run timeout in ns.
    pub timeout_ns: Option<u64>,
}

/// One task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSpec {
    /// Unique id, 0-based, in file order.
    pub id: usize,
    /// Its name, with `#N` appended to repetitions.
    pub name: String,
    /// Group for fairness statistics (same properties = same group by default).
    pub group: String,
    /// Total busy-loop iterations (the amount of work).
    pub loops: u64,
    /// Iterations between two sleeps (`None`: never sleeps).
    pub sloop: Option<u64>,
    /// Sleep length in ns.
    pub sleep_ns: u64,
    /// Iterations between two interrupt-masking system calls (`None`: never).
    pub irq_period: Option<u64>,
    /// Its scheduling policy.
    pub policy: Policy,
    /// Its real-time priority (1..99 with FIFO/RR, 0 otherwise).
    pub priority: i32,
    /// Its nice value (-20..19), for the fair policies.
    pub nice: i32,
    /// Allowed CPUs (`None`: all).
    pub cpu_mask: Option<CpuSet>,
    /// Line of the task's opening brace, for messages.
    pub line: usize,
}

impl TaskSpec {
    /// ARTiS's RT0: the highest FIFO priority, bound to its CPU(s).
    pub fn is_rt0(&self) -> bool {
        self.policy == Policy::Fifo && self.priority == 99
    }

    /// Whether it runs at a real-time policy (FIFO or RR).
    pub fn is_rt(&self) -> bool {
        self.policy.is_rt()
    }
}

/// The share of a CPU the ARTiS thesis's annex B assumes its RT tasks take
/// ("the RT tasks take most of the power of the CPU"): 50 ms of work per
/// 5 ms of sleep at the simulator's default `loops_per_us` 0.1, i.e. 10/11.
pub const ANNEX_B_RT_SHARE: f64 = 10.0 / 11.0;

/// Smallest and largest target share `rt_share_loops_per_us` takes.
pub const RT_SHARE_RANGE: (f64, f64) = (0.001, 0.999);

impl Scenario {
    /// The `loops_per_us` at which every real-time task that sleeps takes
    /// `share` of its CPU: working `sloop / loops_per_us` µs then sleeping
    /// `sleep` gives share = work / (work + sleep), so loops_per_us =
    /// sloop × (1 − share) / (share × sleep µs). Refused (a sentence) when
    /// `share` is outside [`RT_SHARE_RANGE`], no RT task sleeps, the RT
    /// tasks' `sloop`/`sleep` disagree (one `loops_per_us` cannot size
    /// them all), or the result is outside `loops_per_us`'s range.
    pub fn rt_share_loops_per_us(&self, share: f64) -> Result<f64, String> {
        let (lo, hi) = RT_SHARE_RANGE;
        if !(share.is_finite() && (lo..=hi).contains(&share)) {
            return Err(format!("a share between {lo} and {hi}, got {share}"));
        }
        let mut want: Option<(f64, &TaskSpec)> = None;
        for t in self.tasks.iter().filter(|t| t.is_rt()) {
            let Some(sloop) = t.sloop.filter(|_| t.sleep_ns > 0) else {
                continue;
            };
            let sleep_us = t.sleep_ns as f64 / 1000.0;
            let l = sloop as f64 * (1.0 - share) / (share * sleep_us);
            match want {
                None => want = Some((l, t)),
                Some((w, first)) if (l - w).abs() > w * 1e-9 => {
                    return Err(format!(
                        "the real-time tasks {} (line {}) and {} (line {}) have different sloop/sleep: one loops_per_us cannot give both the same share",
                        first.name, first.line, t.name, t.line
                    ))
                }
                Some(_) => {}
            }
        }
        let (l, _) = want.ok_or("no real-time task sleeps (sloop and sleep): nothing to size")?;
        if !(1e-3..=1e6).contains(&l) {
            return Err(format!(
                "it needs loops_per_us = {l}, outside 0.001 .. 1000000"
            ));
        }
        Ok(l)
    }
}
