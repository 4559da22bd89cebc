//! Top-level argument parsing and dispatch.

use crate::cmd;
use clap::{Parser, Subcommand};
use rtshield_sys::Root;
use rtshield_vocab::InputError;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "rtshield",
    version,
    about = "Shield CPUs for real-time work, audit them, measure wake-up latency under load, report it, and study load balancing.",
    propagate_version = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every subcommand understands.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct Global {
    /// Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees).
    #[arg(long, global = true, value_name = "DIR", env = "RTSHIELD_SYSROOT")]
    pub(crate) sysroot: Option<PathBuf>,
}

impl Global {
    pub(crate) fn root(&self) -> Root {
        self.sysroot.as_ref().map_or_else(Root::host, Root::new)
    }

    /// Refuse a `--sysroot` (or `RTSHIELD_SYSROOT`, which `sudo -E` passes
    /// from another user) that someone else could have made or could
    /// change: root writes kernel values below it, following its links.
    /// It must be an existing directory whose every component is owned by
    /// root or the caller and writable by no one else.
    pub(crate) fn check(&self) -> Result<(), InputError> {
        let Some(s) = &self.sysroot else {
            return Ok(());
        };
        let why = match rtshield_safefs::trusted_path(s) {
            Err(why) => why,
            Ok(()) if !s.is_dir() => "not a directory".into(),
            Ok(()) => return Ok(()),
        };
        Err(InputError::new(format!(
            "--sysroot/RTSHIELD_SYSROOT {}: refusing this tree: {why} (root writes below it: \
             it must be yours or root's, and writable by no one else)",
            s.display()
        )))
    }
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Measure on the last CPU for ~10 s with a CPU load on the others; the main job on a built-in example.
    Demo(cmd::demo::Args),
    /// Measure wake-up latency of periodic real-time threads (cyclictest-like).
    Measure(Box<cmd::measure::Args>),
    /// Run a systress configuration file: timer threads, load programs, statistics.
    Run(cmd::run::Args),
    /// Describe the system: kernel, preemption model, HZ, timers, isolation, cgroups, RT limits.
    Sysinfo(cmd::sysinfo::Args),
    /// Shield CPUs: create, undo, inspect cpuset partitions (cgroup v1 and v2).
    #[command(subcommand)]
    Partition(cmd::partition::Command),
    /// partrt's command line (`partrt [-r NAME] [-n NAME] create|undo|run|move|list …`) for scripts written for partrt; also what rtshield does when started as `partrt`.
    Partrt(cmd::partrt::Args),
    /// What can still disturb a CPU, and how to fix it.
    Audit(cmd::audit::Args),
    /// vmstat/pidstat-like sampling: interrupts, context switches, run queue.
    Stat(cmd::stat::Args),
    /// Plots and tables from one or more result files.
    Report(cmd::report::Args),
    /// A result in a format CI systems read: cyclictest-json, junit, openmetrics, kcidb.
    Export(cmd::export::Args),
    /// OS noise on busy-polling CPUs (oslat/osnoise-like): every gap in a spinning thread's clock reads; causes with --trace.
    Noise(cmd::noise::Args),
    /// Run a matrix of measurements (isolation x load x settings), store every run, write one report.
    Campaign(cmd::campaign::Args),
    /// The results store: list, show, compare, import, export and report stored runs.
    Runs(cmd::runs::Args),
    /// Run a load-balancing scenario (lollobrigida format) on the real kernel.
    Scenario(cmd::scenario::Args),
    /// Simulate a scenario under the linux26, ule or ARTiS balancers.
    Simulate(Box<cmd::simulate::Args>),
    /// Internal: one measure request as JSON on stdin (a campaign's cell; started by campaign, not by users).
    #[command(name = "__measure", hide = true)]
    MeasureRequest,
    /// Internal: the worker process of a built-in load (started by measure/run, not by users).
    #[command(name = "__load", hide = true)]
    LoadWorker(cmd::load_worker::Args),
}

/// The whole command line as clap describes it (for the manual pages and
/// shell completions of `xtask`).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// Parse, run, and turn errors into exit codes: 2 for bad input (like
/// clap's usage errors), 1 for everything else, 141 when stdout was closed
/// under us (`rtshield stat | head`), as for any Unix filter, and 129 when
/// the terminal hung up (SIGHUP) before the final summary was printed
/// (the results are written by then).
///
/// SIGPIPE stays ignored (Rust's default) rather than killing the process:
/// a measurement or a supervised run whose reader went away must still
/// write its files and reap its children. The print that fails panics; the
/// panic is caught here, silently.
pub fn main() -> i32 {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_broken_pipe(info.payload()) && !is_hung_up(info.payload()) {
            default_hook(info);
        }
    }));
    match std::panic::catch_unwind(dispatch) {
        Ok(code) => code,
        Err(p) if is_broken_pipe(&*p) => 141,
        // The terminal hung up (SIGHUP, a dropped ssh session): the
        // results were written before the summary that failed to print;
        // the status says why it ended, as a shell would.
        Err(p) if is_hung_up(&*p) => 128 + rtshield_signals::SIGHUP,
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// Whether a panic comes from printing to a terminal that hung up (EIO)
/// after SIGHUP asked the command to stop.
fn is_hung_up(payload: &(dyn std::any::Any + Send)) -> bool {
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    msg.contains("os error 5") && rtshield_signals::received() == Some(rtshield_signals::SIGHUP)
}

/// Whether a panic comes from printing to a closed pipe.
fn is_broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    msg.contains("Broken pipe") || msg.contains("os error 32")
}

/// The command line; started under the name `partrt` (a link to the
/// binary), rtshield is `rtshield partrt …`, for scripts written for partrt.
fn arguments() -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let called = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .is_some_and(|n| n == "partrt");
    if called {
        args.insert(1, "partrt".into());
    }
    args
}

fn dispatch() -> i32 {
    let cli = Cli::try_parse_from(arguments()).unwrap_or_else(|e| usage_error(e));
    let g = cli.global.clone();
    if let Err(e) = g.check() {
        rtshield_text::errln!("rtshield: error: {e}");
        return 2;
    }
    let res = match cli.command {
        Command::Demo(a) => cmd::demo::run(a, &g),
        Command::Measure(a) => cmd::measure::run(*a, &g),
        Command::MeasureRequest => cmd::measure::run_request(&g),
        Command::Run(a) => cmd::run::run(a, &g),
        Command::Sysinfo(a) => cmd::sysinfo::run(a, &g),
        Command::Partition(c) => cmd::partition::run(c, &g),
        Command::Partrt(a) => cmd::partrt::run(a, &g),
        Command::Audit(a) => cmd::audit::run(a, &g),
        Command::Stat(a) => cmd::stat::run(a, &g),
        Command::Report(a) => cmd::report::run(a, &g),
        Command::Export(a) => cmd::export::run(a, &g),
        Command::Runs(a) => cmd::runs::run(a, &g),
        Command::Campaign(a) => cmd::campaign::run(a, &g),
        Command::Noise(a) => cmd::noise::run(a, &g),
        Command::Scenario(a) => cmd::scenario::run(a, &g),
        Command::Simulate(a) => cmd::simulate::run(*a, &g),
        Command::LoadWorker(a) => cmd::load_worker::run(a, &g),
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            // Messages quote paths, values and files: through the terminal
            // encoder (controls escaped, long tokens cut), like every print.
            eprintln!(
                "rtshield: error: {}",
                rtshield_text::terminal::message(&render(&e))
            );
            if e.chain().any(|c| c.is::<InputError>()) {
                2
            } else {
                1
            }
        }
    }
}

/// A usage error (or `--help`, `--version`) as clap prints it, unless it
/// quotes a value holding a control character or a long token (a value
/// from `RTSHIELD_STORE`, a pasted argument): then without colours,
/// through the terminal encoder.
fn usage_error(e: clap::Error) -> ! {
    let plain = e.render().to_string();
    match rtshield_text::terminal::lines(&plain) {
        std::borrow::Cow::Borrowed(_) => e.exit(),
        std::borrow::Cow::Owned(safe) => {
            eprint!("{safe}");
            std::process::exit(e.exit_code())
        }
    }
}

/// `outer: inner: root cause`, without repeating a cause already in the message.
fn render(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for c in e.chain() {
        let s = c.to_string();
        if !out.contains(&s) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&s);
        }
    }
    out
}
