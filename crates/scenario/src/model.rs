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
