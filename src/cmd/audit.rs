//! `rtshield audit [CPUS] [--watch 10s] [--json]`, and `--follow`: the
//! drift watch's events, live, until SIGINT/SIGTERM.

use crate::cli::Global;
use rtshield_audit::{audit, render_audit, AuditOptions};
use rtshield_text::{out, outln};
use rtshield_vocab::Dur;
use rtshield_vocab::{CpuSet, InputError};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// CPUs to audit (list or 0x mask). Default: the rt partition, else the
    /// isolated CPUs, else every online CPU.
    pub(crate) cpus: Option<String>,
    /// Count interrupts, IPIs, softirqs and context switches over this window
    /// (`10s`, `500ms`); `0s` uses the counts since boot.
    #[arg(long, value_name = "DURATION", default_value = "2s")]
    pub(crate) watch: Dur,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print every change to what shields CPUS (IRQ affinities, rt tasks,
    /// cpusets, workqueues, knobs, governors, idle states, hotplug) as it
    /// is seen, until Ctrl-C or SIGTERM (exit 0). The events `measure`
    /// and `run` record in results.json.
    #[arg(long, conflicts_with = "json")]
    pub(crate) follow: bool,
    /// With --follow: how often to look (`1s`, `200ms`; 100 ms to 1 h).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1s",
        requires = "follow",
        value_parser = parse_period
    )]
    pub(crate) period: Dur,
    /// With --follow: the `--parent` of the partition shielding CPUS
    /// (default: the partition covering them, if any).
    #[arg(long, value_name = "PARENT", requires = "follow", value_parser = super::parse_parent)]
    pub(crate) parent: Option<String>,
}

/// `--period`: the watch reads every file each time, so not more often
/// than every 100 ms; at most 1 h (a longer one would say nothing).
fn parse_period(s: &str) -> Result<Dur, String> {
    let d: Dur = s.parse().map_err(|e| format!("{e}"))?;
    if !(100_000_000..=3_600_000_000_000).contains(&d.as_std().as_nanos()) {
        return Err(format!("must be between 100ms and 1h, got {s}"));
    }
    Ok(d)
}

pub(crate) fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let cpus = args
        .cpus
        .as_deref()
        .map(CpuSet::parse)
        .transpose()
        .map_err(|e| InputError::new(e.to_string()))?;
    if args.follow {
        return follow(cpus, &args, g);
    }
    let a = audit(
        &g.root(),
        &AuditOptions {
            cpus,
            watch: args.watch.as_std(),
        },
    )?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&a)?);
    } else {
        out!("{}", render_audit(&a));
    }
    Ok(0)
}

/// `--follow`: the drift watch in the foreground, one line per event.
fn follow(cpus: Option<CpuSet>, args: &Args, g: &Global) -> anyhow::Result<i32> {
    use std::io::Write as _;
    let root = g.root();
    let cpus = match cpus {
        Some(c) => c,
        None => rtshield_sys::online_cpus(&root)?,
    };
    let period = args.period.as_std();
    if let Some(p) = &args.parent {
        // The one parent rule (`partition --parent`'s): below the
        // hierarchy, not its root (leave --parent out for that), existing.
        let found = rtshield_isolation::Partitions::discover(&root);
        let h = found
            .hierarchy_or_why()
            .map_err(|e| InputError::new(format!("--parent: no cpuset hierarchy: {e}")))?;
        rtshield_isolation::parent_dir(
            &root,
            h,
            "--parent",
            p,
            rtshield_isolation::RootParent::Refused,
            true,
        )?;
    }
    let stop = rtshield_measure::install_signals();
    let zero = std::time::Instant::now();
    let mut w = rtshield_drift::Watch::new(
        rtshield_drift::WatchSpec {
            root,
            cpus: cpus.clone(),
            parent: args.parent.clone(),
            own_pid: std::process::id(),
        },
        0,
    );
    outln!(
        "Following what shields CPU {} every {} (Ctrl-C stops); times since now.",
        cpus.to_list(),
        args.period
    );
    for u in &w.info().unwatched {
        outln!("not watched: {u}");
    }
    let _ = std::io::stdout().flush();
    let mut next = zero + period;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let now = std::time::Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(std::time::Duration::from_millis(50)));
            continue;
        }
        next += period;
        let mut out = std::io::stdout().lock();
        for e in w.tick(zero.elapsed().as_nanos() as u64) {
            writeln!(out, "{}", rtshield_text::terminal::lines(&e.line()))?;
        }
        out.flush()?;
    }
    Ok(0)
}
