//! What the simulator can record besides the report: an event trace (CSV)
//! and the run segments of every CPU (Gantt chart, invariant tests).

use serde::Serialize;
use std::fmt::Write as _;

/// One event. `cpu`/`task` are `None` when not applicable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceRow {
    /// Simulated time, ns.
    pub time_ns: u64,
    /// The CPU it happened on.
    pub cpu: Option<usize>,
    /// The task it concerns (scenario order).
    pub task: Option<usize>,
    /// What happened (`wake`, `run`, `migrate`…).
    pub event: &'static str,
    /// `key=value` pairs separated by spaces (no comma, no quote).
    pub detail: String,
}

/// Header of the CSV trace.
pub(crate) const CSV_HEADER: &str = "time_ns,cpu,task,event,detail";

/// The trace as CSV text (header included). `detail` never contains commas
/// or quotes (the simulator writes `key=value` pairs separated by spaces).
pub fn to_csv(rows: &[TraceRow]) -> String {
    let mut s = String::with_capacity(rows.len() * 32 + 64);
    s.push_str(CSV_HEADER);
    s.push('\n');
    for r in rows {
        let _ = write!(s, "{},", r.time_ns);
        if let Some(c) = r.cpu {
            let _ = write!(s, "{c}");
        }
        s.push(',');
        if let Some(t) = r.task {
            let _ = write!(s, "{t}");
        }
        let _ = writeln!(s, ",{},{}", r.event, r.detail);
    }
    s
}

/// What a CPU was doing during a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SegmentKind {
    /// An RT0 task (FIFO 99) computing.
    Rt0,
    /// Another SCHED_FIFO/RR task computing.
    Rt,
    /// A normal task computing.
    Normal,
    /// Any task inside an interrupt-masking section.
    Masked,
}

/// `[start, end)` on `cpu`, task `task` running in state `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// The CPU.
    pub cpu: usize,
    /// The task running (scenario order).
    pub task: usize,
    /// Start, simulated ns.
    pub start: u64,
    /// End (excluded), simulated ns.
    pub end: u64,
    /// What the CPU was doing.
    pub kind: SegmentKind,
}
