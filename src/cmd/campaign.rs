//! `rtshield campaign FILE`: arguments and printing only.

use crate::cli::Global;
use rtshield_safefs::{DirPolicy, InputTrust};
use rtshield_text::excerpt::{withhold, Quote};
use rtshield_text::{errln, out, outln};
use rtshield_vocab::InputError;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
The file is TOML: name, cpus, duration and/or samples, repeat, pool (axes merged in the report), [measure], [axes] (isolation = none|partition|isolcpus|existing,
load = idle|cpu|memory|io|syscall|fork|net|hell|timers|syncio|\"cmd:COMMAND\", and any of period, priority, policy, mode,
histo_size, resolution as lists), [partition] (parent, with), [[exclude]], [[include]]. See docs/manual/campaign.md.

Examples:
  rtshield campaign examples/campaigns/isolation.toml --dry-run
  rtshield campaign examples/campaigns/isolation.toml
  rtshield campaign examples/campaigns/isolation.toml --resume     # after Ctrl-C or a crash")]
pub(crate) struct Args {
    /// The campaign file.
    pub(crate) file: PathBuf,
    /// List the runs, their order and the total time; run nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Skip the runs of this campaign already in the store.
    #[arg(long)]
    pub(crate) resume: bool,
    /// The results store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db].
    #[arg(long, value_name = "PATH|URL")]
    pub(crate) store: Option<String>,
    /// Directory for the runs and the report [default: ./rtshield-results/campaign-NAME-<UTC timestamp>/].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Write into --out even if other users can write there; as root, also take a
    /// campaign FILE another user could change (refused otherwise).
    #[arg(long)]
    pub(crate) force_unsafe_dir: bool,
    /// Show each run's own output.
    #[arg(short, long)]
    pub(crate) verbose: bool,
}

pub(crate) fn run(args: Args, _g: &Global) -> anyhow::Result<i32> {
    let name = args.file.display().to_string();
    // As root, a campaign file another user could change is refused: it
    // chooses the loads, isolation and outputs root runs (round 5 (A), F07).
    let trust = if args.dry_run {
        InputTrust::Warn
    } else if args.force_unsafe_dir {
        InputTrust::Accept
    } else {
        InputTrust::Refuse
    };
    let input = rtshield_safefs::read_trusted_input(
        &args.file,
        1 << 20,
        trust,
        "its loads, isolation, runs and outputs",
    )
    .map_err(|e| InputError::new(e.to_string()))?;
    if let Some(w) = &input.warning {
        errln!("rtshield: warning: {w}");
    }
    let text = rtshield_text::decode_utf8(input.bytes)
        .map_err(|e| InputError::at(&name, e.line, e.col, e))?;
    // An error quotes the file only if every user may read it.
    let quote = if input.public {
        Quote::Allowed
    } else {
        Quote::Withheld
    };
    let c = rtshield_campaign::parse_checked(&text, &name)
        .map_err(|e| InputError::new(withhold(&e.0, &name, quote)))?;
    if args.dry_run {
        out!("{}", rtshield_campaign::plan_text(&c));
        return Ok(0);
    }
    let store = open_store(args.store.as_deref())?;
    let out = open_out(&args, &c.name)?;
    let out_path = out.path().to_path_buf();
    outln!(
        "campaign {}: {} runs, measuring time {}; results in {}/",
        c.name,
        c.steps().len(),
        rtshield_vocab::format_duration_ns(c.total_ns()),
        out_path.display()
    );
    let exe = std::env::current_exe()?;
    let total = c.steps().len();
    // Time left: the measured pace of the runs made so far (each run's
    // duration plus its start and stop), else the file's duration.
    let started = std::time::Instant::now();
    let mut made = 0u64;
    let per_run = c.total_ns() / (total.max(1) as u64);
    let mut progress = |i: usize,
                        n: usize,
                        st: &rtshield_campaign::Step,
                        cell: &rtshield_campaign::Cell,
                        what: &str| {
        if !what.starts_with("already") && !what.starts_with("skipped") {
            made += 1;
        }
        let left = (n - i - 1) as u64;
        let pace = (started.elapsed().as_nanos() as u64)
            .checked_div(made)
            .unwrap_or(per_run);
        let secs = pace.saturating_mul(left) / 1_000_000_000;
        outln!(
            "[{:>3}/{total}] {} repeat {}: {what}  (about {} left)",
            i + 1,
            cell.id,
            st.repeat,
            rtshield_vocab::format_duration_ns(secs.saturating_mul(1_000_000_000))
        );
    };
    let o = rtshield_campaign::run(
        &c,
        rtshield_campaign::Options {
            exe,
            out,
            store,
            resume: args.resume,
            verbose: args.verbose,
        },
        &mut progress,
    )?;
    Ok(print_outcome(&o, &args.file))
}

/// Print how the campaign ended and return the exit status: 128 + the
/// signal that stopped it, 1 when its partition could not be undone,
/// [`rtshield_results::EXIT_LIMIT_EXCEEDED`] when a run failed its limit.
fn print_outcome(o: &rtshield_campaign::Outcome, file: &std::path::Path) -> i32 {
    outln!(
        "{} stored, {} already stored, {} skipped",
        o.stored,
        o.skipped_done,
        o.skipped.len()
    );
    for (cell, why) in &o.skipped {
        outln!("skipped {cell}: {why}");
    }
    if let Some(sig) = o.stopped_by {
        let name = rtshield_signals::end_reason(sig);
        match &o.undo_failed {
            None => outln!("stopped by {name} (signal {sig}); no partition left behind. Continue with: rtshield campaign {} --resume", file.display()),
            Some(e) => outln!("stopped by {name} (signal {sig}); the partition is LEFT: {e}"),
        }
        return 128 + sig;
    }
    if let Some(e) = &o.undo_failed {
        if let Some(r) = &o.report {
            outln!(
                "report: {}/report.html, {}/summary.md",
                r.display(),
                r.display()
            );
        }
        outln!("stopped: the partition is LEFT: {e}");
        outln!(
            "then continue with: rtshield campaign {} --resume",
            file.display()
        );
        return 1;
    }
    if let Some(r) = &o.report {
        outln!(
            "report: {}/report.html, {}/summary.md",
            r.display(),
            r.display()
        );
    }
    if o.failed > 0 {
        outln!(
            "FAIL: {} run(s) exceeded their max_latency (exit status {}; the verdicts are in their results.json)",
            o.failed,
            rtshield_results::EXIT_LIMIT_EXCEEDED
        );
        return rtshield_results::EXIT_LIMIT_EXCEEDED;
    }
    0
}

/// The campaign's store: it needs one (`--resume` reads it), so a store
/// that is not the caller's own is refused, exit 2, before anything runs.
fn open_store(spec: Option<&str>) -> anyhow::Result<Box<dyn rtshield_store::Store>> {
    rtshield_store::open(spec).map_err(|e| -> anyhow::Error {
        if e.bad_input {
            InputError::new(e.msg).into()
        } else {
            anyhow::anyhow!("{e}")
        }
    })
}

/// `--out DIR`, else a fresh `rtshield-results/campaign-NAME-<stamp>`,
/// through the path layer; a refusal names the option, exit 2.
fn open_out(args: &Args, name: &str) -> anyhow::Result<rtshield_safefs::SafeDir> {
    let policy = if args.force_unsafe_dir {
        DirPolicy::AllowUnsafe
    } else {
        DirPolicy::Strict
    };
    let stamp = rtshield_measure::stamp_utc(std::time::SystemTime::now());
    rtshield_safefs::output_dir(
        args.out.as_deref(),
        std::path::Path::new("rtshield-results"),
        &format!("campaign-{name}-{stamp}"),
        policy,
    )
    .map_err(|e| -> anyhow::Error {
        let e = if args.out.is_some() {
            e.for_option("--out")
        } else {
            e
        };
        if e.is_refusal() {
            InputError::new(e.to_string()).into()
        } else {
            e.into()
        }
    })
}
