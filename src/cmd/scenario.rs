//! `rtshield scenario`: run a lollobrigida scenario on the real kernel.

use crate::cli::Global;
use rtshield_safefs::InputTrust;
use rtshield_scenario::parse_bytes;
use rtshield_scenario::Scenario;
use rtshield_scenario::{fmt_ns, render_balance, table_with_text_cols};
use rtshield_scenario_run::{Plan, PlanOptions, RunOptions};
use rtshield_text::excerpt::{withhold, Quote};
use rtshield_text::{errln, out, outln};
use rtshield_vocab::Dur;
use rtshield_vocab::InputError;
use std::path::{Path, PathBuf};

/// Largest scenario file read (bytes). A scenario holds at most
/// `MAX_TASKS` (10 000) tasks; written out in full, as annex B does, that
/// is about 1.5 MB.
pub(crate) const SCENARIO_FILE_LIMIT: u64 = 4 << 20;

/// Read a scenario file (a regular file of at most
/// [`SCENARIO_FILE_LIMIT`] bytes, never a FIFO or device) and parse it.
/// Shared by `scenario` and `simulate`. `trust`: `None` for `simulate`,
/// which runs nothing (the file is a data input: no link followed, the
/// rule of a directory others control); `Some` for `scenario`, whose
/// tasks root runs: as root, a file another user could change is a
/// trusted input (round 5 (A), F07).
pub(crate) fn read_scenario(path: &Path, trust: Option<InputTrust>) -> anyhow::Result<Scenario> {
    let read =
        |e: rtshield_safefs::SafeError| InputError::new(format!("cannot read scenario: {e}"));
    let (bytes, public) = match trust {
        None => rtshield_safefs::read_input_public(path, SCENARIO_FILE_LIMIT).map_err(read)?,
        Some(t) => {
            let input =
                rtshield_safefs::read_trusted_input(path, SCENARIO_FILE_LIMIT, t, "its tasks")
                    .map_err(read)?;
            if let Some(w) = &input.warning {
                errln!("rtshield: warning: {w}");
            }
            (input.bytes, input.public)
        }
    };
    let name = path.display().to_string();
    // An error quotes the file only if every user may read it.
    let quote = if public {
        Quote::Allowed
    } else {
        Quote::Withheld
    };
    parse_bytes(&bytes, &name).map_err(|e| InputError::new(withhold(&e.0, &name, quote)).into())
}

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Scenario file (lollobrigida format: `{ … }` task blocks, see examples/scenarios/).
    pub(crate) file: PathBuf,
    /// Write the report as JSON (schema rtshield.balance/1) to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Write FILE (and --out DIR) even if its directory is owned by another user or
    /// writable by others without the sticky bit; as root, also run a scenario file
    /// another user could change (refused otherwise).
    #[arg(long)]
    pub(crate) force_unsafe_dir: bool,
    /// Write DIR/balance.json and DIR/balance.txt.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Stop the run after D (e.g. 30s); unfinished tasks are reported as such. Overrides the file's `timeout`.
    #[arg(long, value_name = "D")]
    pub(crate) timeout: Option<Dur>,
    /// Parse and plan only: show the tasks as they would run (masks trimmed), run nothing.
    #[arg(long)]
    pub(crate) check: bool,
    /// Run real-time tasks that never sleep and could take every CPU (a FIFO/RR 99 one on every CPU, or one per CPU): they can starve the machine.
    #[arg(long)]
    pub(crate) force: bool,
    /// Multiply every task's `loop` by F (e.g. 0.01 for a short demo); sloop, sleep and irq_period are kept.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub(crate) scale: f64,
    /// Iterations per microsecond (overrides the file's `loops_per_us`; default: one spin step, measured).
    #[arg(long, value_name = "X", conflicts_with = "rt_share")]
    pub(crate) loops_per_us: Option<f64>,
    /// Size the work so that every sleeping real-time task takes SHARE of its CPU
    /// (0.001..0.999, or `annex`: 10/11, what annex B of the ARTiS thesis assumes):
    /// sets loops_per_us from the tasks' sloop and sleep, and prints it.
    #[arg(long, value_name = "SHARE", value_parser = parse_share)]
    pub(crate) rt_share: Option<f64>,
}

/// `--rt-share`: a fraction, or `annex`.
fn parse_share(s: &str) -> Result<f64, String> {
    if s.eq_ignore_ascii_case("annex") {
        return Ok(rtshield_scenario::ANNEX_B_RT_SHARE);
    }
    let (lo, hi) = rtshield_scenario::RT_SHARE_RANGE;
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!(
            "expected a share between {lo} and {hi} or `annex`, got `{s}`"
        )),
    }
}

pub(crate) fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let root = g.root();
    // Options first, with the same ranges as the file's keys (docs/ranges.md).
    if let Some(l) = args.loops_per_us {
        if !(l.is_finite() && (1e-3..=1e6).contains(&l)) {
            return Err(InputError::new(format!(
                "--loops-per-us must be a number between 0.001 and 1000000, got {l:?}"
            ))
            .into());
        }
    }
    if let Some(t) = args.timeout {
        if t.ns() == 0 || t.ns() > rtshield_scenario::MAX_SLEEP_NS {
            return Err(
                InputError::new(format!("--timeout {t}: must be > 0 and at most 1h")).into(),
            );
        }
    }
    let trust = if args.check {
        InputTrust::Warn
    } else if args.force_unsafe_dir {
        InputTrust::Accept
    } else {
        InputTrust::Refuse
    };
    let scenario = read_scenario(&args.file, Some(trust))?;
    let loops_per_us = match args.rt_share {
        Some(share) => {
            let l = scenario
                .rt_share_loops_per_us(share)
                .map_err(|e| InputError::new(format!("--rt-share {share:.3}: {e}")))?;
            eprintln!(
                "rtshield scenario: --rt-share {share:.3}: loops_per_us = {l:.4} (each sleeping real-time task works {:.1} % of the time)",
                share * 100.0
            );
            Some(l)
        }
        None => args.loops_per_us,
    };
    let online = rtshield_sys::usable_cpus(&root);
    let plan = rtshield_scenario_run::plan(
        &scenario,
        &online,
        PlanOptions {
            scale: args.scale,
            force: args.force,
            loops_per_us: loops_per_us.or(scenario.globals.loops_per_us),
        },
    )?;

    if args.check {
        print_check(&scenario, &plan, &online);
        return Ok(0);
    }

    // The outputs are opened and checked before the run (adversary round
    // 5, F14: a directory that would be refused was refused after it, the
    // report lost), and written through the descriptors after it.
    let pol = policy(args.force_unsafe_dir);
    use rtshield_run::refusal;
    let json_out = match &args.json {
        Some(p) => Some(
            rtshield_safefs::open_file_dir(p, pol).map_err(|e| refusal(e.for_option("--json")))?,
        ),
        None => None,
    };
    let out_dir = match &args.out {
        Some(d) => Some(
            rtshield_safefs::SafeDir::open_or_create(d, 0o755, pol)
                .map_err(|e| refusal(e.for_option("--out")))?,
        ),
        None => None,
    };
    for n in &plan.notes {
        errln!("rtshield scenario: {n}");
    }
    // Catch SIGINT/SIGTERM from here on: the results are written anyway.
    let interrupt = rtshield_signals::install(rtshield_signals::Second::Waits);
    errln!(
        "rtshield scenario: {} tasks from {}, calibrating the busy loop…",
        plan.tasks.len(),
        scenario.source
    );
    let outcome = rtshield_scenario_run::run(
        &scenario,
        &plan,
        &online,
        &RunOptions {
            root,
            timeout_ns: args.timeout.map(|d| d.ns()),
            loops_per_us,
            interrupt: Some(interrupt),
        },
    )?;

    let text = render_balance(&outcome.report);
    out!("{text}");
    let json = serde_json::to_string_pretty(&outcome.report)? + "\n";
    // Through safefs: root never writes through a link or into a
    // directory another user controls.
    if let Some((dir, name)) = &json_out {
        dir.write(name, json.as_bytes())
            .map_err(|e| refusal(e.for_option("--json")))?;
    }
    if let Some(dir) = &out_dir {
        // balance.txt is read with `cat`: the terminal's rule (security.md).
        let text = rtshield_text::terminal::file_text(&text).into_owned();
        for (name, body) in [("balance.json", &json), ("balance.txt", &text)] {
            dir.write(name, body.as_bytes()).map_err(refusal)?;
        }
    }
    if outcome.interrupted {
        let by = rtshield_signals::received()
            .and_then(rtshield_signals::name)
            .unwrap_or("a stop signal");
        errln!(
            "rtshield scenario: interrupted by {by}; results written for the tasks as they were"
        );
        return Ok(1);
    }
    if outcome.timed_out {
        errln!(
            "rtshield scenario: timeout: {} task(s) unfinished",
            outcome.report.run.unfinished
        );
        return Ok(1);
    }
    Ok(0)
}

/// `--force-unsafe-dir` as a directory policy (`scenario` and `simulate`).
pub(crate) fn policy(force: bool) -> rtshield_safefs::DirPolicy {
    if force {
        rtshield_safefs::DirPolicy::AllowUnsafe
    } else {
        rtshield_safefs::DirPolicy::Strict
    }
}

/// `--check`: the tasks as they would run, one row each, and the notes.
fn print_check(scenario: &Scenario, plan: &Plan, online: &rtshield_vocab::CpuSet) {
    outln!(
        "{}: {} tasks, {} groups; CPUs present: {}",
        scenario.source,
        plan.tasks.len(),
        plan.tasks
            .iter()
            .map(|t| t.spec.group.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        online.to_list()
    );
    let header: Vec<String> = [
        "TASK",
        "GROUP",
        "POLICY",
        "MASK",
        "LOOP",
        "SLOOP",
        "SLEEP",
        "IRQ_PERIOD",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = plan
        .tasks
        .iter()
        .map(|t| {
            let s = &t.spec;
            let policy = if s.policy.is_rt() {
                format!("{}:{}", s.policy, s.priority)
            } else if s.nice != 0 {
                format!("{} nice {}", s.policy, s.nice)
            } else {
                s.policy.to_string()
            };
            vec![
                s.name.clone(),
                s.group.clone(),
                policy,
                t.mask.to_list(),
                t.loops.to_string(),
                s.sloop.map_or("-".into(), |x| x.to_string()),
                if s.sloop.is_some() {
                    fmt_ns(s.sleep_ns as f64)
                } else {
                    "-".into()
                },
                s.irq_period.map_or("-".into(), |x| x.to_string()),
            ]
        })
        .collect();
    out!("{}", table_with_text_cols(&header, &rows, 4));
    for n in &plan.notes {
        outln!("note: {n}");
    }
}
