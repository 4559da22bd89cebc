//! The balance report: one shape for the real-kernel runner
//! (`rtshield scenario`) and the simulator (`rtshield simulate`), so the
//! two can be put side by side. Schema `rtshield.balance/1`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SCHEMA: &str = "rtshield.balance/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BalanceReport {
    pub schema: String,
    /// `kernel` or `simulation`.
    pub source: String,
    /// Balancer name for simulations (`linux26`, `ule`, `artis`, ...), the
    /// kernel release for real runs.
    pub balancer: String,
    pub scenario: String,
    pub ncpus: usize,
    /// RT CPUs (ARTiS), kernel list format; empty for non-ARTiS.
    #[serde(default)]
    pub rt_cpus: String,
    #[serde(default)]
    pub seed: Option<u64>,
    pub tasks: Vec<TaskReport>,
    pub groups: Vec<GroupReport>,
    pub cpus: Vec<CpuReport>,
    pub run: RunSummary,
    /// Migrations by kind (simulator: `nrt->nrt`, `rt->nrt forced`, ...).
    #[serde(default)]
    pub migrations_by_kind: BTreeMap<String, u64>,
    /// Per CPU, RT0 wake-up latency statistics (simulator).
    #[serde(default)]
    pub rt0_latency: Vec<LatencySummary>,
    #[serde(default)]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskReport {
    pub id: usize,
    pub name: String,
    pub group: String,
    pub policy: String,
    pub priority: i32,
    pub cpu_mask: String,
    pub finished: bool,
    pub wall_ns: u64,
    pub cpu_ns: u64,
    /// Share of the task's CPU time spent on each CPU (sums to 1 when it ran).
    pub cpu_share: Vec<f64>,
    /// CPU changes the task observed itself (or the simulator counted).
    pub migrations: u64,
    /// `se.nr_migrations` from /proc (kernel runs only).
    #[serde(default)]
    pub kernel_migrations: Option<u64>,
    #[serde(default)]
    pub voluntary_switches: Option<u64>,
    #[serde(default)]
    pub involuntary_switches: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupReport {
    pub name: String,
    pub tasks: usize,
    pub wall_mean_ns: f64,
    /// Population standard deviation of wall times (fairness: low is fair).
    pub wall_std_ns: f64,
    pub wall_min_ns: u64,
    pub wall_max_ns: u64,
    /// Mean of the tasks' per-CPU shares (locality).
    pub cpu_share_mean: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuReport {
    pub cpu: u32,
    pub idle_share: f64,
    pub busy_share: f64,
    pub rt_share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub makespan_ns: u64,
    /// CPU time left idle while some task was still waiting to run.
    pub idle_while_waiting_ns: u64,
    #[serde(default)]
    pub start_skew_ns: Option<u64>,
    #[serde(default)]
    pub unfinished: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub cpu: u32,
    pub samples: u64,
    pub min_ns: u64,
    pub avg_ns: f64,
    pub max_ns: u64,
    pub p99_ns: u64,
    /// `[upper bound ns, count]`, non-zero buckets.
    #[serde(default)]
    pub histogram: Vec<[u64; 2]>,
}
