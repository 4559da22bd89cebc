//! `rtshield run CONFIG`: run a systress configuration file.

use crate::cli::Global;
use anyhow::Context;
use rtshield_config::{Action, Config, Machine};
use rtshield_measure::display::{result_row, TABLE_HEADER};
use rtshield_results::RunResult;
use rtshield_run::runner::{self, RunOptions};
use rtshield_sys::units::Dur;
use rtshield_sys::InputError;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The configuration file (systress format: main, timer_thread[N], program[N]).
    #[arg(value_name = "CONFIG", required_unless_present = "keys")]
    pub config: Option<PathBuf>,
    /// Only check the file and print the effective settings (defaults filled in); start nothing.
    #[arg(long)]
    pub check: bool,
    /// Output directory [default: ./rtshield-results/<config name>-<UTC timestamp>/]; DIR-1, DIR-2... with stats.rotate.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write into --out even if it is owned by another user or writable by
    /// others without the sticky bit.
    #[arg(long)]
    pub force_unsafe_dir: bool,
    /// Measure this long, whatever lifetime.duration says (`30s`, `10min`, `1d`).
    #[arg(long, value_name = "DUR")]
    pub duration: Option<Dur>,
    /// Map CPUs this machine does not have onto its online CPUs (cpu % count), to try a configuration written for a bigger machine.
    #[arg(long)]
    pub fold_cpus: bool,
    /// No live display, only the final summary.
    #[arg(long, short)]
    pub quiet: bool,
    /// Label of the run in reports [default: the output directory name].
    #[arg(long)]
    pub label: Option<String>,
    /// Continue the run interrupted in DIR (kill -9, power cut) from its last checkpoint:
    /// same configuration, the time left, figures merged, the gap a `down` phase of the timeline.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub resume: Option<PathBuf>,
    /// Rewrite FILE atomically every stats period with the latency so far, in Prometheus text
    /// format (node_exporter's textfile collector).
    #[arg(long, value_name = "FILE")]
    pub metrics_file: Option<PathBuf>,
    /// Print the reference of every configuration key (Markdown) and exit.
    #[arg(long)]
    pub keys: bool,
    #[command(flatten)]
    pub store: super::StoreArgs,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    if args.keys {
        print!("{}", rtshield_config::keys::markdown_table());
        return Ok(0);
    }
    let path = args.config.clone().expect("clap requires CONFIG");
    // Handlers first: a Ctrl-C from now on still ends in clean-up and files.
    let stop = rtshield_measure::signals::install();
    let root = g.root();
    let machine =
        Machine::from_root(&root, args.fold_cpus).context("cannot read the online CPUs")?;
    let cfg = rtshield_config::load(&path, &machine)?;
    if args.duration.map(|d| d.ns()) == Some(0) {
        return Err(InputError::new("--duration 0: must be > 0").into());
    }
    if args.check {
        print!("{}", rtshield_config::render::effective(&cfg));
        for w in check_warnings(&cfg) {
            eprintln!("rtshield: warning: {w}");
        }
        eprintln!(
            "{}: OK ({} timer thread(s), {} program(s), {})",
            cfg.file,
            cfg.timers.len(),
            cfg.programs.len(),
            match args.duration.map(|d| d.ns()).or(cfg.duration_ns()) {
                Some(d) => format!("runs {}", rtshield_sys::units::format_duration_ns(d)),
                None => "runs until Ctrl-C".into(),
            }
        );
        return Ok(0);
    }
    for w in check_warnings(&cfg) {
        eprintln!("rtshield: warning: {w}");
    }
    // Checked before anything starts: nothing to resume is bad input (exit 2).
    let resume = match &args.resume {
        Some(dir) => Some(rtshield_run::resume::prepare(dir, &cfg)?),
        None => None,
    };
    let stem = path
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().into_owned());
    let stamp = format!(
        "{stem}-{}",
        rtshield_measure::stamp_utc(std::time::SystemTime::now())
    );
    // Without --label: the output directory's name.
    let label = args.label.clone().or_else(|| match (&resume, &args.out) {
        // The resumed run keeps its label (rotation parts add -N to it).
        (Some(r), _) => r.out.file_name().map(|n| n.to_string_lossy().into_owned()),
        (None, Some(o)) => o.file_name().map(|n| n.to_string_lossy().into_owned()),
        (None, None) => Some(stamp.clone()),
    });
    let tags = rtshield_run::store::run_tags(
        &root,
        &rtshield_run::store::config_load(&cfg),
        &args.store.tags,
        &rtshield_run::store::config_placements(&root, &cfg),
    );
    let opts = RunOptions {
        out: args.out.clone(),
        stamp,
        policy: if args.force_unsafe_dir {
            rtshield_sys::DirPolicy::AllowUnsafe
        } else {
            rtshield_sys::DirPolicy::Strict
        },
        duration_ns: args.duration.map(|d| d.ns()),
        quiet: args.quiet,
        command: std::env::args().collect(),
        root,
        label,
        exe: rtshield_load::worker_exe()?,
        tags,
        metrics_file: args.metrics_file.clone(),
    };
    let outcome = match &resume {
        Some(r) => {
            println!(
                "resuming {} from its checkpoint at {:.1} s ({:.1} s down)",
                r.dir.display(),
                r.prev.duration_s,
                r.gap_s
            );
            runner::execute_resume(&cfg, &opts, stop, r)?
        }
        None => runner::execute(&cfg, &opts, stop)?,
    };
    let parts = outcome.results.len();
    for (dir, res) in &outcome.results {
        print_summary(&cfg, dir, res, parts > 1);
    }
    if parts > 1 {
        let total: f64 = outcome.results.iter().map(|(_, r)| r.duration_s).sum();
        println!(
            "\n{}",
            elapsed_line("Total elapsed time", total, &outcome.end_reason)
        );
    }
    if outcome.stragglers_killed > 0 {
        eprintln!(
            "rtshield: killed {} leftover process(es) that had left their program's process group",
            outcome.stragglers_killed
        );
    }
    if outcome.missing.is_empty() {
        let parts: Vec<(&std::path::Path, &rtshield_results::RunResult)> = outcome
            .results
            .iter()
            .map(|(d, r)| (d.as_path(), r))
            .collect();
        rtshield_run::store::store_runs(args.store.store.as_deref(), args.store.no_store, &parts);
    }
    if !outcome.missing.is_empty() {
        println!(
            "WARNING: {} result file(s) are not where asked (see the messages above; exit status {})",
            outcome.missing.len(),
            rtshield_run::pipeline::EXIT_FILES_MISSING
        );
        return Ok(rtshield_run::pipeline::EXIT_FILES_MISSING);
    }
    Ok(0)
}

/// Warnings worth giving before a run: folded CPUs, commands not found.
fn check_warnings(cfg: &Config) -> Vec<String> {
    let mut w = cfg.warnings.clone();
    for p in &cfg.programs {
        if let Action::Command(argv) = &p.action {
            if !in_path(&argv[0]) {
                w.push(format!(
                    "program[{}]: '{}' is not found in PATH; it will fail (and follow termination.ko)",
                    p.index, argv[0]
                ));
            }
        }
    }
    w
}

fn in_path(prog: &str) -> bool {
    if prog.contains('/') {
        return Path::new(prog).exists();
    }
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(prog).is_file()))
}

/// The systress end-of-run output: final table, where the files are, time.
fn print_summary(cfg: &Config, dir: &Path, res: &RunResult, one_of_parts: bool) {
    let r = res.settings.resolution_ns;
    println!("\n{TABLE_HEADER}");
    for t in &res.threads {
        println!("{}", result_row(t, r));
    }
    println!();
    for p in &res.programs {
        println!(
            "program[{}] {}: {} spawn(s), {} ok exit(s), {} failed",
            p.index, p.command, p.spawns, p.exits_ok, p.exits_ko
        );
    }
    for t in &res.threads {
        let name = cfg.timers.iter().find(|c| c.index == t.index).map_or_else(
            || rtshield_results::systress_file_name(t.index),
            |c| c.filename.clone(),
        );
        println!(
            "Statistics for timer_thread[{}] in '{}'",
            t.index,
            dir.join(name).display()
        );
    }
    for w in &res.warnings {
        println!("warning: {w}");
    }
    if let Some(t) = &res.trace {
        // The spikes themselves are in spikes.txt beside the results.
        println!("trace: {}", rtshield_results::export::spikes_summary(t));
        for s in t.spikes.iter().take(5) {
            println!("  thread tid {} CPU {}: {}", s.pid, s.cpu, s.verdict);
        }
    }
    let what = if one_of_parts {
        "Elapsed time of this part"
    } else {
        "Total elapsed time"
    };
    println!("\n{}", elapsed_line(what, res.duration_s, &res.end_reason));
}

/// systress's closing line: `Total elapsed time: 1 minutes, 2000 nanoseconds (end: duration)`.
fn elapsed_line(what: &str, secs: f64, end: &str) -> String {
    let ns = (secs * 1e9) as u64;
    format!(
        "{what}: {} minutes, {} nanoseconds (end: {end})",
        ns / 60_000_000_000,
        ns % 60_000_000_000
    )
}
