//! The text table: one column per balancer, one row per figure, grouped as
//! the ARTiS argument goes (placement, fairness, efficiency, migrations,
//! RT0 latency).

use crate::engine::MIG_KIND_NAMES;
use crate::SimOutcome;
use rtshield_scenario::{fmt_ns, LatencySummary};
use std::fmt::Write as _;

fn secs(ns: f64) -> String {
    fmt_ns(ns)
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

fn latency_on(r: &SimOutcome, cpu: u32) -> Option<&LatencySummary> {
    r.report.rt0_latency.iter().find(|l| l.cpu == cpu)
}

/// Wake-ups that waited at all: the samples outside the histogram's
/// first bucket (upper bound 0 ns).
fn delayed(l: &LatencySummary) -> u64 {
    let zero = l
        .histogram
        .first()
        .filter(|b| b[0] == 0)
        .map_or(0, |b| b[1]);
    l.samples - zero
}

/// One line of the comparison: its label and one cell per run (none for
/// a section heading).
type Row = (String, Vec<String>);

/// What every section of the comparison needs.
struct Runs<'a> {
    runs: &'a [SimOutcome],
    first: &'a SimOutcome,
    /// CPUs of the first run.
    n: usize,
    /// Which of them are RT CPUs.
    rt: Vec<bool>,
}

impl Runs<'_> {
    fn cpu_label(&self, c: usize) -> String {
        if self.rt[c] {
            format!("  cpu{c} (RT)")
        } else {
            format!("  cpu{c}")
        }
    }

    /// No value in any run (a section heading).
    fn blank(&self) -> Vec<String> {
        vec![String::new(); self.runs.len()]
    }

    fn head(&self, title: &str) -> Row {
        (title.to_string(), self.blank())
    }
}

/// Render runs of the same scenario side by side.
pub fn render(runs: &[SimOutcome]) -> String {
    let Some(first) = runs.first() else {
        return String::new();
    };
    let n = first.report.ncpus;
    let rt: Vec<bool> = {
        let set = rtshield_vocab::CpuSet::parse_list(&first.report.rt_cpus).unwrap_or_default();
        (0..n).map(|c| set.contains(c as u32)).collect()
    };
    let ctx = Runs { runs, first, n, rt };
    let mut rows: Vec<Row> = Vec::new();
    placement_rows(&ctx, &mut rows);
    fairness_rows(&ctx, &mut rows);
    efficiency_rows(&ctx, &mut rows);
    migration_rows(&ctx, &mut rows);
    latency_rows(&ctx, &mut rows);
    let mut o = layout(&ctx, &rows);
    warnings(runs, &mut o);
    o
}

/// Normal tasks per CPU while all ran: how the balancer placed them.
fn placement_rows(ctx: &Runs, rows: &mut Vec<Row>) {
    let runs = ctx.runs;
    rows.push(ctx.head("normal tasks per CPU (mean, until the first finished)"));
    for c in 0..ctx.n {
        rows.push((
            ctx.cpu_label(c),
            runs.iter()
                .map(|r| {
                    format!(
                        "{:.2}",
                        r.extra.normal_tasks_mean.get(c).copied().unwrap_or(0.0)
                    )
                })
                .collect(),
        ));
    }
    rows.push((
        "  ratio".into(),
        runs.iter()
            .map(|r| {
                r.extra
                    .normal_tasks_mean
                    .iter()
                    .map(|v| format!("{v:.0}"))
                    .collect::<Vec<_>>()
                    .join(":")
            })
            .collect(),
    ));
    rows.push((
        "  window".into(),
        runs.iter()
            .map(|r| secs(r.extra.placement_window_ns as f64))
            .collect(),
    ));
}

/// Wall time per group: fairness.
fn fairness_rows(ctx: &Runs, rows: &mut Vec<Row>) {
    let (runs, first) = (ctx.runs, ctx.first);
    rows.push((
        "fairness: wall time per group (mean ± stddev)".into(),
        ctx.blank(),
    ));
    for (gi, g) in first.report.groups.iter().enumerate() {
        rows.push((
            format!("  {} ({} tasks)", g.name, g.tasks),
            runs.iter()
                .map(|r| {
                    r.report
                        .groups
                        .get(gi)
                        .map(|g| format!("{} ± {}", secs(g.wall_mean_ns), secs(g.wall_std_ns)))
                        .unwrap_or_default()
                })
                .collect(),
        ));
        rows.push((
            "    min .. max".into(),
            runs.iter()
                .map(|r| {
                    r.report
                        .groups
                        .get(gi)
                        .map(|g| {
                            format!(
                                "{} .. {}",
                                secs(g.wall_min_ns as f64),
                                secs(g.wall_max_ns as f64)
                            )
                        })
                        .unwrap_or_default()
                })
                .collect(),
        ));
    }
}

/// Makespan, idle time while tasks waited, per-CPU idle and RT shares.
fn efficiency_rows(ctx: &Runs, rows: &mut Vec<Row>) {
    let runs = ctx.runs;
    rows.push(("efficiency".into(), ctx.blank()));
    rows.push((
        "  makespan".into(),
        runs.iter()
            .map(|r| secs(r.report.run.makespan_ns as f64))
            .collect(),
    ));
    rows.push((
        "  idle while tasks waited".into(),
        runs.iter()
            .map(|r| secs(r.report.run.idle_while_waiting_ns as f64))
            .collect(),
    ));
    for c in 0..ctx.n {
        rows.push((
            format!("{} idle / RT %", ctx.cpu_label(c)),
            runs.iter()
                .map(|r| {
                    let cpu = &r.report.cpus[c];
                    format!(
                        "{:.1} / {:.1}",
                        cpu.idle_share * 100.0,
                        cpu.rt_share * 100.0
                    )
                })
                .collect(),
        ));
    }
}

/// Migrations by kind, and masking sections on RT CPUs.
fn migration_rows(ctx: &Runs, rows: &mut Vec<Row>) {
    let runs = ctx.runs;
    rows.push(("migrations".into(), ctx.blank()));
    for k in MIG_KIND_NAMES {
        rows.push((
            format!("  {k}"),
            runs.iter()
                .map(|r| {
                    r.report
                        .migrations_by_kind
                        .get(k)
                        .copied()
                        .unwrap_or(0)
                        .to_string()
                })
                .collect(),
        ));
    }
    rows.push((
        "  masking sections on RT CPUs".into(),
        runs.iter()
            .map(|r| r.extra.masking_sections_on_rt_by_non_rt0.to_string())
            .collect(),
    ));
}

/// RT0 wake-up latency per CPU.
fn latency_rows(ctx: &Runs, rows: &mut Vec<Row>) {
    let (runs, first) = (ctx.runs, ctx.first);
    rows.push((
        "RT0 wake-up latency, µs (avg / p99 / max)".into(),
        ctx.blank(),
    ));
    let lat_cpus: Vec<u32> = {
        let mut v: Vec<u32> = runs
            .iter()
            .flat_map(|r| r.report.rt0_latency.iter().map(|l| l.cpu))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    for c in lat_cpus {
        let of = |r| latency_on(r, c);
        // One cell per run, "-" where that run has no RT0 task on `c`.
        let cells = |f: &dyn Fn(&LatencySummary) -> String| -> Vec<String> {
            runs.iter()
                .map(|r| of(r).map_or_else(|| "-".into(), f))
                .collect()
        };
        rows.push((
            format!(
                "{} ({} wake-ups)",
                ctx.cpu_label(c as usize),
                of(first).map_or(0, |l| l.samples)
            ),
            cells(&|l| {
                let q = |v: Option<f64>| v.map_or("?".into(), us);
                format!(
                    "{} / {} / {}",
                    q(l.avg_ns),
                    q(l.p99_ns.map(|v| v as f64)),
                    q(l.max_ns.map(|v| v as f64))
                )
            }),
        ));
        // Rare delays vanish in the average and the p99: count them.
        rows.push((
            "    delayed wake-ups".into(),
            cells(&|l| delayed(l).to_string()),
        ));
    }
}

/// The title line, the balancers' header and the rows, aligned.
fn layout(ctx: &Runs, rows: &[Row]) -> String {
    let (runs, first) = (ctx.runs, ctx.first);
    // Section headings (rows without values) may overhang the first column.
    let w0 = rows
        .iter()
        .filter(|(_, v)| v.iter().any(|x| !x.is_empty()))
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..runs.len())
        .map(|i| {
            rows.iter()
                .map(|(_, v)| v[i].chars().count())
                .chain(std::iter::once(runs[i].report.balancer.len()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut o = String::new();
    let r0 = &first.report;
    let _ = writeln!(
        o,
        "{}: {} CPUs{}, tick {}, seed {}, {} tasks",
        r0.scenario,
        r0.ncpus,
        if r0.rt_cpus.is_empty() {
            String::new()
        } else {
            format!(" (RT CPUs {})", r0.rt_cpus)
        },
        fmt_ns(first.extra.tick_ns as f64),
        r0.seed.unwrap_or(0),
        r0.tasks.len()
    );
    let _ = write!(o, "{:w0$}", "");
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(o, "  {:>w$}", r.report.balancer, w = widths[i]);
    }
    o.push('\n');
    for (k, vals) in rows {
        o.push_str(k);
        if vals.iter().any(|v| !v.is_empty()) {
            o.push_str(&" ".repeat(w0.saturating_sub(k.chars().count())));
            for (i, v) in vals.iter().enumerate() {
                let _ = write!(o, "  {:>w$}", v, w = widths[i]);
            }
        }
        o.push('\n');
    }
    o
}

/// Each run's warnings; the same warning from every run once.
fn warnings(runs: &[SimOutcome], o: &mut String) {
    // The same warning from every run is printed once.
    let mut seen: Vec<&str> = Vec::new();
    for r in runs {
        for w in &r.report.warnings {
            if seen.contains(&w.as_str()) {
                continue;
            }
            seen.push(w);
            let all = runs.iter().all(|x| x.report.warnings.contains(w));
            if all {
                let _ = writeln!(o, "warning: {w}");
            } else {
                let _ = writeln!(o, "warning ({}): {w}", r.report.balancer);
            }
        }
    }
}
