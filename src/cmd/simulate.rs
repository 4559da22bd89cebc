//! `rtshield simulate`: run a scenario file through the deterministic SMP
//! simulator under one balancer, or several side by side (`--compare`).

use crate::cli::Global;
use rtshield_safefs::SafeDir;
use rtshield_scenario::{fmt_ns, render_balance};
use rtshield_sim::{
    render_comparison, render_gantt_svg, trace_to_csv, BalancerKind, Placement, SimConfig,
    SimOutcome,
};
use rtshield_text::{errln, out, outln};
use rtshield_vocab::parse_duration_ns;
use rtshield_vocab::{CpuSet, InputError};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Scenario file (lollobrigida format, the ARTiS thesis's annex B).
    pub(crate) file: PathBuf,
    /// Number of simulated CPUs.
    #[arg(long, default_value_t = 4)]
    pub(crate) cpus: usize,
    /// ARTiS RT CPUs (list: 1-3, or mask: 0xe). Other balancers only use it to label rows.
    #[arg(long, value_name = "LIST", default_value = "")]
    pub(crate) rt_cpus: String,
    /// Balancer: linux26, ule, artis, artis-2005.
    #[arg(long, default_value = "linux26", conflicts_with = "compare")]
    pub(crate) balancer: String,
    /// Run several balancers on the same input and seed; one column each (e.g. linux26,ule,artis).
    #[arg(long, value_name = "A,B,...")]
    pub(crate) compare: Option<String>,
    /// Seed of the random generator (start jitter, random placement).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Stop after this much simulated time (default: the scenario's `timeout`, else when every task has finished).
    #[arg(long, value_name = "D")]
    pub(crate) duration: Option<String>,
    /// Scheduler tick.
    #[arg(long, value_name = "D", default_value = "1ms")]
    pub(crate) tick: String,
    /// ARTiS K (thesis §3.2.3, 2..100).
    #[arg(long, default_value_t = 100)]
    pub(crate) artis_k: u64,
    /// ARTiS C: a duration or a number of ticks (`2ticks`).
    #[arg(long, value_name = "D", default_value = "2ticks")]
    pub(crate) artis_c: String,
    /// Length of one interrupt-masking section.
    #[arg(long, value_name = "D", default_value = "5us")]
    pub(crate) mask_len: String,
    /// Delay of a migration through an ARTiS FIFO (IPI, fetch, cache refill).
    #[arg(long, value_name = "D", default_value = "20us")]
    pub(crate) migration_cost: String,
    /// Time a locking balancer holds both run-queues (delays wake-ups on both CPUs).
    #[arg(long, value_name = "D", default_value = "10us")]
    pub(crate) lock_cost: String,
    /// Time a CPU spends pushing into or draining an ARTiS FIFO.
    #[arg(long, value_name = "D", default_value = "1us")]
    pub(crate) fifo_cost: String,
    /// Tasks that ran less than this ago are cache-hot (a busy balancer leaves them).
    #[arg(long, value_name = "D", default_value = "10ms")]
    pub(crate) cache_decay: String,
    /// Iterations per µs (overrides the scenario's loops_per_us; default 0.1).
    #[arg(long, value_name = "F")]
    pub(crate) loops_per_us: Option<f64>,
    /// Initial placement: spread, random, first.
    #[arg(long, default_value = "spread")]
    pub(crate) placement: String,
    /// Random start offset of each task, uniform in [0, D).
    #[arg(long, value_name = "D", default_value = "10us")]
    pub(crate) start_jitter: String,
    /// Write the report(s) as JSON (an array with --compare).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Write FILE (and --out DIR) even if its directory is owned by another user or
    /// writable by others without the sticky bit.
    #[arg(long)]
    pub(crate) force_unsafe_dir: bool,
    /// Write the event trace as CSV (with --compare: one file per balancer, FILE-NAME.csv).
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: Option<PathBuf>,
    /// Write a Gantt chart (SVG, one row per CPU); one per balancer with --compare.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) gantt: Option<PathBuf>,
    /// Refuse the run (exit 2) once it needs more than N events (1000..=10^11). The
    /// default allows one simulated hour of 128 CPUs running 1000 tasks.
    #[arg(long, value_name = "N", default_value_t = rtshield_sim::DEFAULT_MAX_EVENTS)]
    pub(crate) max_events: u64,
    /// Print the wall time and events per second to stderr.
    #[arg(long)]
    pub(crate) timing: bool,
}

fn bad(msg: impl Into<String>) -> anyhow::Error {
    InputError::new(msg.into()).into()
}

fn dur(opt: &str, s: &str) -> anyhow::Result<u64> {
    parse_duration_ns(s, None).map_err(|e| bad(format!("--{opt}: {e}")))
}

/// `2ticks`, `2 ticks`, `1tick`, or a duration.
fn dur_or_ticks(opt: &str, s: &str, tick_ns: u64) -> anyhow::Result<u64> {
    let t = s.trim();
    for suffix in ["ticks", "tick"] {
        if let Some(num) = t.strip_suffix(suffix) {
            let n: u64 = num
                .trim()
                .parse()
                .map_err(|_| bad(format!("--{opt}: '{s}' is not a number of ticks")))?;
            return n
                .checked_mul(tick_ns)
                .ok_or_else(|| bad(format!("--{opt}: {s} is too long")));
        }
    }
    dur(opt, s)
}

/// `trace.csv` + `artis` → `trace-artis.csv`.
fn per_balancer(path: &Path, name: &str, many: bool) -> PathBuf {
    if !many {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = match path.extension() {
        Some(ext) => format!("{stem}-{name}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{name}"),
    };
    path.with_file_name(file)
}

fn config(a: &Args) -> anyhow::Result<(SimConfig, Vec<BalancerKind>)> {
    let names = a.compare.clone().unwrap_or_else(|| a.balancer.clone());
    let mut kinds = Vec::new();
    for n in names.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let k = BalancerKind::parse(n).ok_or_else(|| {
            bad(format!(
                "unknown balancer '{n}' (expected linux26, ule, artis or artis-2005)"
            ))
        })?;
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    if kinds.is_empty() {
        return Err(bad("--compare needs at least one balancer name"));
    }
    let mut cfg = SimConfig::new(a.cpus, kinds[0]);
    cfg.rt_cpus = if a.rt_cpus.trim().is_empty() {
        CpuSet::new()
    } else {
        CpuSet::parse(&a.rt_cpus).map_err(|e| bad(format!("--rt-cpus: {e}")))?
    };
    cfg.seed = a.seed;
    cfg.tick_ns = dur("tick", &a.tick)?;
    cfg.duration_ns = a
        .duration
        .as_deref()
        .map(|d| dur("duration", d))
        .transpose()?;
    cfg.artis_k = a.artis_k;
    cfg.artis_c_ns = dur_or_ticks("artis-c", &a.artis_c, cfg.tick_ns)?;
    cfg.mask_len_ns = dur("mask-len", &a.mask_len)?;
    cfg.migration_cost_ns = dur("migration-cost", &a.migration_cost)?;
    cfg.lock_cost_ns = dur("lock-cost", &a.lock_cost)?;
    cfg.fifo_cost_ns = dur("fifo-cost", &a.fifo_cost)?;
    cfg.cache_decay_ns = dur("cache-decay", &a.cache_decay)?;
    cfg.start_jitter_ns = dur("start-jitter", &a.start_jitter)?;
    cfg.placement = Placement::parse(&a.placement).ok_or_else(|| {
        bad(format!(
            "--placement: unknown '{}' (expected spread, random or first)",
            a.placement
        ))
    })?;
    if let Some(l) = a.loops_per_us {
        // Range checked by validate() below.
        cfg.loops_per_us = l;
    }
    // Range checked by validate() below.
    cfg.max_events = a.max_events;
    cfg.record_trace = a.trace.is_some();
    cfg.record_segments = a.gantt.is_some();
    for &k in &kinds {
        let mut c = cfg.clone();
        c.balancer = k;
        c.validate().map_err(|e| bad(e.to_string()))?;
    }
    Ok((cfg, kinds))
}

pub(crate) fn run(args: Args, _g: &Global) -> anyhow::Result<i32> {
    let (cfg, kinds) = config(&args)?;
    let mut scenario = super::scenario::read_scenario(&args.file, None)?;
    if let Some(l) = args.loops_per_us {
        scenario.globals.loops_per_us = Some(l);
    }
    let many = kinds.len() > 1 || args.compare.is_some();
    // Through safefs: root never writes through a link or into a
    // directory another user controls.
    let pol = super::scenario::policy(args.force_unsafe_dir);
    use rtshield_run::refusal;
    // Every output's directory opened and checked before anything is
    // simulated (a long simulation's files are never refused after it,
    // adversary round 5, F14's class), and written through later.
    let open = |p: Option<PathBuf>, opt: &str| -> anyhow::Result<Option<(SafeDir, String)>> {
        p.map(|p| rtshield_safefs::open_file_dir(&p, pol).map_err(|e| refusal(e.for_option(opt))))
            .transpose()
    };
    let mut outs = Vec::new();
    for &k in &kinds {
        let at = |p: &Option<PathBuf>| p.as_ref().map(|p| per_balancer(p, k.name(), many));
        outs.push((
            open(at(&args.trace), "--trace")?,
            open(at(&args.gantt), "--gantt")?,
        ));
    }
    let json_out = open(args.json.clone(), "--json")?;
    let mut runs: Vec<SimOutcome> = Vec::new();
    for (&k, (trace_out, gantt_out)) in kinds.iter().zip(&outs) {
        let mut c = cfg.clone();
        c.balancer = k;
        // The scenario's own timeout bounds the simulated time unless --duration says otherwise.
        c.duration_ns = c.duration_ns.or(scenario.globals.timeout_ns);
        let started = std::time::Instant::now();
        let out = rtshield_sim::simulate(&scenario, &c).map_err(|e| bad(e.to_string()))?;
        let wall = started.elapsed().as_secs_f64();
        if args.timing {
            errln!(
                "{}: simulated {} in {:.3} s wall, {} events ({:.0} events/s)",
                k,
                fmt_ns(out.extra.simulated_ns as f64),
                wall,
                out.extra.events,
                out.extra.events as f64 / wall.max(1e-9)
            );
        }
        if let (Some((dir, name)), Some(rows)) = (trace_out, &out.trace) {
            dir.write(name, trace_to_csv(rows).as_bytes())
                .map_err(|e| refusal(e.for_option("--trace")))?;
        }
        if let (Some((dir, name)), Some(segs)) = (gantt_out, &out.segments) {
            let rt: Vec<bool> = (0..c.ncpus).map(|i| c.is_rt_cpu(i)).collect();
            let title = format!(
                "{} — {} on {} CPUs (RT: {}), seed {}",
                out.report.scenario,
                k,
                c.ncpus,
                if out.report.rt_cpus.is_empty() {
                    "none"
                } else {
                    &out.report.rt_cpus
                },
                c.seed
            );
            let svg = render_gantt_svg(segs, c.ncpus, &rt, out.extra.simulated_ns, &title);
            dir.write(name, svg.as_bytes())
                .map_err(|e| refusal(e.for_option("--gantt")))?;
        }
        runs.push(out);
    }
    if let Some((dir, name)) = &json_out {
        let text = if many {
            let v: Vec<serde_json::Value> = runs.iter().map(|r| r.to_json_value()).collect();
            let mut s = serde_json::to_string_pretty(&v)?;
            s.push('\n');
            s
        } else {
            runs[0].to_json()
        };
        dir.write(name, text.as_bytes())
            .map_err(|e| refusal(e.for_option("--json")))?;
    }
    if many {
        out!("{}", render_comparison(&runs));
    } else {
        out!("{}", render_balance(&runs[0].report));
        outln!();
        out!("{}", render_comparison(&runs));
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_balancer_names() {
        let p = Path::new("/tmp/x/trace.csv");
        assert_eq!(
            per_balancer(p, "artis", false),
            PathBuf::from("/tmp/x/trace.csv")
        );
        assert_eq!(
            per_balancer(p, "artis", true),
            PathBuf::from("/tmp/x/trace-artis.csv")
        );
        assert_eq!(
            per_balancer(Path::new("g"), "ule", true),
            PathBuf::from("g-ule")
        );
    }

    #[test]
    fn ticks_or_durations() {
        assert_eq!(dur_or_ticks("c", "2ticks", 1_000_000).unwrap(), 2_000_000);
        assert_eq!(dur_or_ticks("c", "3 tick", 4_000_000).unwrap(), 12_000_000);
        assert_eq!(dur_or_ticks("c", "500us", 1_000_000).unwrap(), 500_000);
        assert!(dur_or_ticks("c", "xticks", 1).is_err());
    }
}
