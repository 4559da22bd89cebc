//! The balance report: one shape for the real-kernel runner
//! (`rtshield scenario`) and the simulator (`rtshield simulate`), so the
//! two can be put side by side. Schema `rtshield.balance/1`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `schema` value of every balance report this version writes.
pub const SCHEMA: &str = "rtshield.balance/1";

/// What one scenario run produced, real or simulated: per task, per group, per CPU and overall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BalanceReport {
    /// [`SCHEMA`] (`rtshield.balance/1`).
    pub schema: String,
    /// `kernel` or `simulation`.
    pub source: String,
    /// Balancer name for simulations (`linux26`, `ule`, `artis`, ...), the
    /// kernel release for real runs.
    pub balancer: String,
    /// The scenario's source (its file name).
    pub scenario: String,
    /// CPUs the run used.
    pub ncpus: usize,
    /// RT CPUs (ARTiS), kernel list format; empty for non-ARTiS.
    #[serde(default)]
    pub rt_cpus: String,
    /// The simulator's random seed; `None` for kernel runs.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Every task, in scenario order.
    pub tasks: Vec<TaskReport>,
    /// Every group, in order of first appearance.
    pub groups: Vec<GroupReport>,
    /// Every CPU, in CPU order.
    pub cpus: Vec<CpuReport>,
    /// Whole-run figures.
    pub run: RunSummary,
    /// Migrations by kind (simulator: `nrt->nrt`, `rt->nrt forced`, ...).
    #[serde(default)]
    pub migrations_by_kind: BTreeMap<String, u64>,
    /// Per CPU, RT0 wake-up latency statistics (simulator).
    #[serde(default)]
    pub rt0_latency: Vec<LatencySummary>,
    /// What made the run less trustworthy (a task unfinished at the timeout, a mask trimmed).
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One task's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskReport {
    /// Its id (scenario order, 0-based).
    pub id: usize,
    /// Its name.
    pub name: String,
    /// Its group.
    pub group: String,
    /// Its policy's name (`fifo`, `other`).
    pub policy: String,
    /// Its real-time priority.
    pub priority: i32,
    /// The CPUs it may use (list syntax; all CPUs when it had no mask).
    pub cpu_mask: String,
    /// It did all its work before the run ended.
    pub finished: bool,
    /// Start to end (or to the stop), ns.
    pub wall_ns: u64,
    /// CPU time it used, ns.
    pub cpu_ns: u64,
    /// Share of the task's CPU time spent on each CPU (sums to 1 when it ran).
    pub cpu_share: Vec<f64>,
    /// CPU changes the task observed itself (or the simulator counted).
    pub migrations: u64,
    /// `se.nr_migrations` from /proc (kernel runs only).
    #[serde(default)]
    pub kernel_migrations: Option<u64>,
    /// Context switches it asked for (`/proc`, kernel runs only).
    #[serde(default)]
    pub voluntary_switches: Option<u64>,
    /// Context switches it suffered (`/proc`, kernel runs only).
    #[serde(default)]
    pub involuntary_switches: Option<u64>,
}

/// Statistics over the tasks of one group (fairness and locality).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupReport {
    /// The group's name.
    pub name: String,
    /// How many tasks it has.
    pub tasks: usize,
    /// Mean wall time, ns.
    pub wall_mean_ns: f64,
    /// Population standard deviation of wall times (fairness: low is fair).
    pub wall_std_ns: f64,
    /// Shortest wall time, ns.
    pub wall_min_ns: u64,
    /// Longest wall time, ns.
    pub wall_max_ns: u64,
    /// Mean of the tasks' per-CPU shares (locality).
    pub cpu_share_mean: Vec<f64>,
}

/// How one CPU spent the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuReport {
    /// The CPU number.
    pub cpu: u32,
    /// Share of the run it was idle (0..1).
    pub idle_share: f64,
    /// Share of the run it was busy (0..1).
    pub busy_share: f64,
    /// Share of the run it ran real-time tasks (0..1).
    pub rt_share: f64,
}

/// Whole-run figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// From the first task's start to the last task's end (or the stop), ns.
    pub makespan_ns: u64,
    /// CPU time left idle while some task was still waiting to run.
    pub idle_while_waiting_ns: u64,
    /// Last task start minus first task start, ns (how far from simultaneous the tasks began).
    #[serde(default)]
    pub start_skew_ns: Option<u64>,
    /// Tasks that had not finished when the run ended.
    #[serde(default)]
    pub unfinished: usize,
}

/// RT0 wake-up latency on one CPU (simulator).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// The CPU.
    pub cpu: u32,
    /// Wake-ups measured.
    pub samples: u64,
    /// Shortest latency, ns; null without samples (unknown, never 0).
    pub min_ns: Option<u64>,
    /// Mean latency, ns; null without samples.
    pub avg_ns: Option<f64>,
    /// Longest latency, ns; null without samples.
    pub max_ns: Option<u64>,
    /// 99th percentile, ns (at most the maximum); null without samples.
    pub p99_ns: Option<u64>,
    /// `[upper bound ns, count]`, non-zero buckets.
    #[serde(default)]
    pub histogram: Vec<[u64; 2]>,
}

/// Per-group statistics over `tasks`, groups in order of first appearance.
///
/// Wall-time statistics use the population standard deviation (the group
/// is the whole population, not a sample of one). Unfinished tasks count
/// with the wall time they had when stopped. `cpu_share_mean` has `ncpus`
/// entries (shorter task vectors count as 0 on the missing CPUs).
pub fn group_reports(tasks: &[TaskReport], ncpus: usize) -> Vec<GroupReport> {
    let mut order: Vec<&str> = Vec::new();
    for t in tasks {
        if !order.contains(&t.group.as_str()) {
            order.push(&t.group);
        }
    }
    order
        .into_iter()
        .map(|g| {
            let members: Vec<&TaskReport> = tasks.iter().filter(|t| t.group == g).collect();
            let n = members.len() as f64;
            let mean = members.iter().map(|t| t.wall_ns as f64).sum::<f64>() / n;
            let var = members
                .iter()
                .map(|t| (t.wall_ns as f64 - mean).powi(2))
                .sum::<f64>()
                / n;
            let mut share = vec![0.0; ncpus];
            for t in &members {
                for (acc, s) in share.iter_mut().zip(&t.cpu_share) {
                    *acc += s;
                }
            }
            share.iter_mut().for_each(|s| *s /= n);
            GroupReport {
                name: g.to_string(),
                tasks: members.len(),
                wall_mean_ns: mean,
                wall_std_ns: var.sqrt(),
                wall_min_ns: members.iter().map(|t| t.wall_ns).min().unwrap_or(0),
                wall_max_ns: members.iter().map(|t| t.wall_ns).max().unwrap_or(0),
                cpu_share_mean: share,
            }
        })
        .collect()
}

/// A duration for people: `1.23 s`, `45.6 ms`, `789 µs`, `12 ns`.
pub fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    let (v, unit) = if a >= 1e9 {
        (ns / 1e9, "s")
    } else if a >= 1e6 {
        (ns / 1e6, "ms")
    } else if a >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        return format!("{ns:.0} ns");
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// Up to this many CPUs the tables get one column per CPU; beyond, a
/// compact "where" column lists the main CPUs.
const CPU_COLUMNS_MAX: usize = 8;

/// `3:61% 1:38%`: the CPUs holding at least 1 % of the time, largest first.
fn where_column(shares: &[f64]) -> String {
    let mut v: Vec<(usize, f64)> = shares
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, s)| *s >= 0.01)
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let shown: Vec<String> = v
        .iter()
        .take(4)
        .map(|(c, s)| format!("{c}:{:.0}%", s * 100.0))
        .collect();
    let mut out = shown.join(" ");
    if v.len() > 4 {
        out.push_str(&format!(" +{}", v.len() - 4));
    }
    if out.is_empty() {
        out.push('-');
    }
    out
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |x| x.to_string())
}

/// The text report shared by `rtshield scenario` and `rtshield simulate`:
/// header, per-task, per-group and per-CPU tables, the run summary, then
/// migrations by kind, RT0 latency and warnings when present.
pub fn render_text(r: &BalanceReport) -> String {
    let cols = CpuColumns {
        ncpus: r.ncpus,
        wide: r.ncpus > CPU_COLUMNS_MAX,
    };
    let mut out = header_text(r);
    tasks_text(r, &cols, &mut out);
    groups_text(r, &cols, &mut out);
    cpus_text(r, &mut out);
    extras_text(r, &mut out);
    out
}

/// The per-CPU columns of the task and group tables: one per CPU, or a
/// single `WHERE` column past [`CPU_COLUMNS_MAX`] CPUs.
struct CpuColumns {
    ncpus: usize,
    wide: bool,
}

impl CpuColumns {
    fn heads(&self, h: &mut Vec<String>) {
        if self.wide {
            h.push("WHERE".into());
        } else {
            h.extend((0..self.ncpus).map(|c| format!("CPU{c}")));
        }
    }

    fn cells(&self, row: &mut Vec<String>, shares: &[f64]) {
        if self.wide {
            row.push(where_column(shares));
        } else {
            row.extend((0..self.ncpus).map(|c| pct(shares.get(c).copied().unwrap_or(0.0))));
        }
    }
}

/// The title line and the run summary line.
fn header_text(r: &BalanceReport) -> String {
    let ncpus = r.ncpus;
    let mut out = String::new();
    let what = if r.source == "simulation" {
        format!("simulation, balancer {}", r.balancer)
    } else {
        format!("{}, {}", r.source, r.balancer)
    };
    out.push_str(&format!(
        "scenario {} ({what}; {} CPUs{}{})\n",
        r.scenario,
        ncpus,
        if r.rt_cpus.is_empty() {
            String::new()
        } else {
            format!(", RT CPUs {}", r.rt_cpus)
        },
        r.seed.map_or_else(String::new, |s| format!(", seed {s}")),
    ));
    let mut summary = format!(
        "makespan {}, idle while tasks waited {}",
        fmt_ns(r.run.makespan_ns as f64),
        fmt_ns(r.run.idle_while_waiting_ns as f64)
    );
    if let Some(s) = r.run.start_skew_ns {
        summary.push_str(&format!(", start skew {}", fmt_ns(s as f64)));
    }
    summary.push_str(&format!(", unfinished tasks {}\n", r.run.unfinished));
    out.push_str(&summary);

    out
}

/// The per-task table.
fn tasks_text(r: &BalanceReport, cols: &CpuColumns, out: &mut String) {
    // Tasks.
    out.push_str("\nTasks (share = where the task's CPU time was spent)\n");
    let mut h: Vec<String> = ["TASK", "GROUP", "POLICY", "MASK", "DONE", "WALL", "CPU"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    cols.heads(&mut h);
    h.extend(
        ["MIGR", "KMIGR", "VOL", "INVOL"]
            .iter()
            .map(|s| s.to_string()),
    );
    let rows: Vec<Vec<String>> = r
        .tasks
        .iter()
        .map(|t| {
            let pol = if t.priority > 0 {
                format!("{}:{}", t.policy, t.priority)
            } else {
                t.policy.clone()
            };
            let mut row = vec![
                t.name.clone(),
                t.group.clone(),
                pol,
                t.cpu_mask.clone(),
                if t.finished { "yes" } else { "NO" }.into(),
                fmt_ns(t.wall_ns as f64),
                fmt_ns(t.cpu_ns as f64),
            ];
            cols.cells(&mut row, &t.cpu_share);
            row.extend([
                t.migrations.to_string(),
                opt(t.kernel_migrations),
                opt(t.voluntary_switches),
                opt(t.involuntary_switches),
            ]);
            row
        })
        .collect();
    out.push_str(&table_with_text_cols(&h, &rows, 5));
}

/// The per-group table (fairness).
fn groups_text(r: &BalanceReport, cols: &CpuColumns, out: &mut String) {
    // Groups.
    out.push_str("\nGroups (fairness: a low stddev is fair; share = mean over the group)\n");
    let mut h: Vec<String> = ["GROUP", "TASKS", "MEAN", "STDDEV", "MIN", "MAX"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    cols.heads(&mut h);
    let rows: Vec<Vec<String>> = r
        .groups
        .iter()
        .map(|g| {
            let mut row = vec![
                g.name.clone(),
                g.tasks.to_string(),
                fmt_ns(g.wall_mean_ns),
                fmt_ns(g.wall_std_ns),
                fmt_ns(g.wall_min_ns as f64),
                fmt_ns(g.wall_max_ns as f64),
            ];
            cols.cells(&mut row, &g.cpu_share_mean);
            row
        })
        .collect();
    out.push_str(&table_with_text_cols(&h, &rows, 1));
}

/// The per-CPU table (efficiency).
fn cpus_text(r: &BalanceReport, out: &mut String) {
    // CPUs.
    out.push_str("\nCPUs (efficiency: idle share over the run)\n");
    let h: Vec<String> = ["CPU", "IDLE", "BUSY", "RT"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let rows: Vec<Vec<String>> = r
        .cpus
        .iter()
        .map(|c| {
            vec![
                c.cpu.to_string(),
                pct(c.idle_share),
                pct(c.busy_share),
                pct(c.rt_share),
            ]
        })
        .collect();
    out.push_str(&table_with_text_cols(&h, &rows, 1));
}

/// Migrations by kind, RT0 latency and warnings, each when present.
fn extras_text(r: &BalanceReport, out: &mut String) {
    if !r.migrations_by_kind.is_empty() {
        out.push_str("\nMigrations by kind\n");
        let rows: Vec<Vec<String>> = r
            .migrations_by_kind
            .iter()
            .map(|(k, v)| vec![k.clone(), v.to_string()])
            .collect();
        out.push_str(&table_with_text_cols(
            &["KIND".to_string(), "COUNT".to_string()],
            &rows,
            1,
        ));
    }

    if !r.rt0_latency.is_empty() {
        out.push_str("\nRT0 wake-up latency per CPU\n");
        let h: Vec<String> = ["CPU", "SAMPLES", "MIN", "AVG", "P99", "MAX"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let rows: Vec<Vec<String>> = r
            .rt0_latency
            .iter()
            .map(|l| {
                vec![
                    l.cpu.to_string(),
                    l.samples.to_string(),
                    l.min_ns.map_or("?".into(), |v| fmt_ns(v as f64)),
                    l.avg_ns.map_or("?".into(), fmt_ns),
                    l.p99_ns.map_or("?".into(), |v| fmt_ns(v as f64)),
                    l.max_ns.map_or("?".into(), |v| fmt_ns(v as f64)),
                ]
            })
            .collect();
        out.push_str(&table_with_text_cols(&h, &rows, 1));
    }

    if !r.warnings.is_empty() {
        out.push('\n');
        for w in &r.warnings {
            out.push_str(&format!("note: {w}\n"));
        }
    }
}

/// A plain text table: the first `text` columns left-aligned, the others
/// right-aligned, columns two spaces apart, no trailing blanks.
pub fn table_with_text_cols(header: &[String], rows: &[Vec<String>], text: usize) -> String {
    let ncol = header.len();
    let mut w = vec![0; ncol];
    for r in std::iter::once(header).chain(rows.iter().map(|r| r.as_slice())) {
        for (i, c) in r.iter().enumerate().take(ncol) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in std::iter::once(header).chain(rows.iter().map(|r| r.as_slice())) {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate().take(ncol) {
            let pad = " ".repeat(w[i] - c.chars().count());
            if i > 0 {
                line.push_str("  ");
            }
            if i < text {
                line.push_str(c);
                line.push_str(&pad);
            } else {
                line.push_str(&pad);
                line.push_str(c);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str, group: &str, wall_ns: u64, share: &[f64]) -> TaskReport {
        TaskReport {
            id: 0,
            name: name.into(),
            group: group.into(),
            policy: "other".into(),
            priority: 0,
            cpu_mask: "0-1".into(),
            finished: true,
            wall_ns,
            cpu_ns: wall_ns,
            cpu_share: share.to_vec(),
            migrations: 0,
            kernel_migrations: None,
            voluntary_switches: None,
            involuntary_switches: None,
        }
    }

    #[test]
    fn group_statistics_match_hand_computed_values() {
        // Group a: walls 2, 4, 4, 4, 5, 5, 7, 9 (ms): mean 5, population
        // variance (9+1+1+1+0+0+4+16)/8 = 4, stddev 2.
        let walls = [2, 4, 4, 4, 5, 5, 7, 9];
        let mut tasks: Vec<TaskReport> = walls
            .iter()
            .map(|w| task("a", "a", w * 1_000_000, &[1.0, 0.0]))
            .collect();
        // Group b, interleaved to check first-appearance order: one task at
        // 100% on CPU0, one split 50/50, one with a short share vector.
        tasks.insert(1, task("b1", "b", 10, &[1.0, 0.0]));
        tasks.push(task("b2", "b", 20, &[0.5, 0.5]));
        tasks.push(task("b3", "b", 30, &[0.0]));
        tasks.insert(0, task("c", "c", 7, &[]));
        let g = group_reports(&tasks, 2);
        let names: Vec<_> = g.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
        let a = &g[1];
        assert_eq!(a.tasks, 8);
        assert!((a.wall_mean_ns - 5e6).abs() < 1e-6);
        assert!((a.wall_std_ns - 2e6).abs() < 1e-6);
        assert_eq!((a.wall_min_ns, a.wall_max_ns), (2_000_000, 9_000_000));
        assert_eq!(a.cpu_share_mean, vec![1.0, 0.0]);
        let b = &g[2];
        // walls 10, 20, 30: mean 20, variance (100+0+100)/3.
        assert!((b.wall_mean_ns - 20.0).abs() < 1e-9);
        assert!((b.wall_std_ns - (200.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert!((b.cpu_share_mean[0] - 0.5).abs() < 1e-12);
        assert!((b.cpu_share_mean[1] - 0.5 / 3.0).abs() < 1e-12);
        let c = &g[0];
        assert_eq!((c.tasks, c.wall_std_ns), (1, 0.0));
        assert_eq!(c.cpu_share_mean, vec![0.0, 0.0]);
    }

    fn report(ncpus: usize) -> BalanceReport {
        let tasks = vec![
            task("other.1", "other", 1_500_000_000, &vec![0.5; ncpus]),
            task("fifo99.1", "fifo99", 2_000_000, &vec![0.0; ncpus]),
        ];
        BalanceReport {
            schema: SCHEMA.into(),
            source: "kernel".into(),
            balancer: "linux 6.1".into(),
            scenario: "x.scn".into(),
            ncpus,
            rt_cpus: String::new(),
            seed: None,
            groups: group_reports(&tasks, ncpus),
            tasks,
            cpus: (0..ncpus as u32)
                .map(|cpu| CpuReport {
                    cpu,
                    idle_share: 0.25,
                    busy_share: 0.75,
                    rt_share: 0.1,
                })
                .collect(),
            run: RunSummary {
                makespan_ns: 1_500_000_000,
                idle_while_waiting_ns: 0,
                start_skew_ns: Some(42_000),
                unfinished: 0,
            },
            migrations_by_kind: BTreeMap::from([("rt->nrt forced".to_string(), 3)]),
            rt0_latency: vec![],
            warnings: vec!["cpu_mask trimmed".into()],
        }
    }

    #[test]
    fn text_report_has_every_section() {
        let t = render_text(&report(2));
        assert!(
            t.starts_with("scenario x.scn (kernel, linux 6.1; 2 CPUs)\n"),
            "{t}"
        );
        assert!(t.contains("makespan 1.50 s, idle while tasks waited 0 ns, start skew 42.0 µs"));
        assert!(t.contains("CPU0   CPU1"), "{t}");
        assert!(
            t.contains("other.1   other   other   0-1   yes    1.50 s"),
            "{t}"
        );
        assert!(t.contains("rt->nrt forced      3"), "{t}");
        assert!(t.contains("note: cpu_mask trimmed"));
        assert!(!t.contains("RT0 wake-up"));
    }

    #[test]
    fn many_cpus_use_a_where_column() {
        let mut r = report(32);
        r.tasks[0].cpu_share = vec![0.0; 32];
        r.tasks[0].cpu_share[3] = 0.6;
        r.tasks[0].cpu_share[1] = 0.4;
        let t = render_text(&r);
        assert!(t.contains("WHERE"));
        assert!(t.contains("3:60% 1:40%"), "{t}");
        assert!(!t.contains("CPU31 "));
    }

    #[test]
    fn durations_for_people() {
        assert_eq!(fmt_ns(12.0), "12 ns");
        assert_eq!(fmt_ns(45_600.0), "45.6 µs");
        assert_eq!(fmt_ns(1_234_000_000.0), "1.23 s");
        assert_eq!(fmt_ns(123_000_000.0), "123 ms");
    }
}
