//! `rtshield run CONFIG`: run a systress configuration file. The options
//! become a [`ConfigRequest`]; `rtshield_run::run_config` does the rest and
//! tells [`TextPrinter`] what to print.

use crate::cli::Global;
use rtshield_config::Config;
use rtshield_measure::IntervalStats;
use rtshield_measure::{render_table, result_row, TABLE_HEADER};
use rtshield_results::RunResult;
use rtshield_run::RunOutcome;
use rtshield_run::{ConfigPrinter, ConfigRequest};
use rtshield_text::{errln, out, outln, terminal::lines};
use rtshield_vocab::{format_duration_ns, Dur};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The configuration file (systress format: main, timer_thread[N], program[N]).
    #[arg(value_name = "CONFIG", required_unless_present = "keys")]
    pub(crate) config: Option<PathBuf>,
    /// Only check the file and print the effective settings (defaults filled in); start nothing.
    #[arg(long)]
    pub(crate) check: bool,
    /// Output directory [default: ./rtshield-results/<config name>-<UTC timestamp>/]; DIR-1, DIR-2... with stats.rotate.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Write into --out even if it is owned by another user or writable by
    /// others without the sticky bit; as root, also take a CONFIG another user
    /// could change (refused otherwise: it chooses what root runs).
    #[arg(long)]
    pub(crate) force_unsafe_dir: bool,
    /// Measure this long, whatever lifetime.duration says (`30s`, `10min`, `1d`).
    #[arg(long, value_name = "DUR")]
    pub(crate) duration: Option<Dur>,
    /// Map CPUs this machine does not have onto its online CPUs (cpu % count), to try a configuration written for a bigger machine.
    #[arg(long)]
    pub(crate) fold_cpus: bool,
    /// No live display, only the final summary.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Label of the run in reports [default: the output directory name].
    #[arg(long)]
    pub(crate) label: Option<String>,
    /// Continue the run interrupted in DIR (kill -9, power cut) from its last checkpoint:
    /// same configuration, the time left, figures merged, the gap a `down` phase of the timeline.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub(crate) resume: Option<PathBuf>,
    /// Rewrite FILE atomically every stats period with the latency so far, in Prometheus text
    /// format (node_exporter's textfile collector).
    #[arg(long, value_name = "FILE")]
    pub(crate) metrics_file: Option<PathBuf>,
    /// Exit status 3 when any thread's maximum latency exceeds DUR (CI gate, as
    /// `measure --max-latency`); the limit and the verdict are recorded in results.json.
    #[arg(long, value_name = "DUR")]
    pub(crate) max_latency: Option<Dur>,
    /// Print the reference of every configuration key (Markdown) and exit.
    #[arg(long)]
    pub(crate) keys: bool,
    #[command(flatten)]
    pub(crate) store: super::StoreArgs,
}

pub(crate) fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    if args.keys {
        out!("{}", rtshield_config::markdown_table());
        return Ok(0);
    }
    let request = ConfigRequest {
        config: args.config.clone().expect("clap requires CONFIG"),
        check: args.check,
        out: args.out.clone(),
        force_unsafe_dir: args.force_unsafe_dir,
        duration_ns: args.duration.map(|d| d.ns()),
        fold_cpus: args.fold_cpus,
        quiet: args.quiet,
        label: args.label.clone(),
        resume: args.resume.clone(),
        metrics_file: args.metrics_file.clone(),
        tags: args.store.tags.clone(),
        store: args.store.store.clone(),
        no_store: args.store.no_store,
        // A password in a store URL never reaches a file (issue 21).
        command: rtshield_text::secret::redact_args(std::env::args()),
        max_latency_ns: args.max_latency.map(|d| d.ns()),
    };
    let mut printer = TextPrinter {
        quiet: args.quiet,
        tty: std::io::stdout().is_terminal(),
        drawn_lines: 0,
    };
    let code = rtshield_run::run_config(&request, &g.root(), &mut printer)?;
    if let (Some(l), rtshield_results::EXIT_LIMIT_EXCEEDED) = (args.max_latency, code) {
        outln!(
            "FAIL: a thread's maximum latency exceeds --max-latency {l} (exit status {code}; the verdict is in results.json)"
        );
    }
    Ok(code)
}

/// The text of `run CONFIG`: systress's live table and summary.
struct TextPrinter {
    quiet: bool,
    /// On a terminal the live table is redrawn in place.
    tty: bool,
    /// Lines of the table drawn last (to move up over them).
    drawn_lines: usize,
}

impl ConfigPrinter for TextPrinter {
    fn checked(&mut self, cfg: &Config, warnings: &[String], duration_ns: Option<u64>) {
        out!("{}", rtshield_config::render_effective(cfg));
        for w in warnings {
            errln!("rtshield: warning: {w}");
        }
        errln!(
            "{}: OK ({} timer thread(s), {} program(s), {})",
            cfg.file,
            cfg.timers.len(),
            cfg.programs.len(),
            match duration_ns {
                Some(d) => format!("runs {}", format_duration_ns(d)),
                None => "runs until Ctrl-C".into(),
            }
        );
    }

    fn warnings(&mut self, warnings: &[String]) {
        for w in warnings {
            errln!("rtshield: warning: {w}");
        }
    }

    fn resuming(&mut self, dir: &Path, measured_s: f64, gap_s: f64) {
        outln!(
            "resuming {} from its checkpoint at {measured_s:.1} s ({gap_s:.1} s down)",
            dir.display()
        );
    }

    fn interval(&mut self, s: &IntervalStats, cpu_load: Option<&str>, messages: &mut Vec<String>) {
        if self.quiet {
            return;
        }
        let mut text = render_table(s);
        if let Some(x) = cpu_load {
            text.push('\n');
            text.push_str(x);
        }
        // Thread labels and programs' messages come from the file and the
        // programs: shown through the terminal encoder, like every print.
        let text = lines(&text);
        let mut out = std::io::stdout().lock();
        if self.tty {
            if self.drawn_lines > 0 {
                let _ = write!(out, "\x1b[{}A\x1b[J", self.drawn_lines);
            }
            for m in messages.drain(..) {
                let _ = writeln!(out, "{}", lines(&m));
            }
            let left = s.duration_ns.map_or(String::new(), |d| {
                format!(
                    "  ({} left)",
                    // Whole seconds, rounded up: "0s left" only at the end.
                    format_duration_ns(
                        d.saturating_sub(s.elapsed_ns).div_ceil(1_000_000_000) * 1_000_000_000
                    )
                )
            });
            let head = format!("[{:.1} s]{left}\n", s.elapsed_ns as f64 / 1e9);
            let _ = write!(out, "{head}{text}");
            self.drawn_lines = text.lines().count() + 1;
        } else {
            for m in messages.drain(..) {
                let _ = writeln!(out, "{}", lines(&m));
            }
            let _ = writeln!(out, "[{:.1} s]", s.elapsed_ns as f64 / 1e9);
            let _ = write!(out, "{text}");
        }
        let _ = out.flush();
    }

    fn live_end(&mut self, messages: &mut Vec<String>) {
        if self.tty && !self.quiet {
            for m in messages.drain(..) {
                outln!("{m}");
            }
        }
    }

    fn summary(&mut self, cfg: &Config, outcome: &RunOutcome) {
        let parts = outcome.results.len();
        for (dir, res) in &outcome.results {
            print_summary(cfg, dir, res, parts > 1);
        }
        if parts > 1 {
            // rtshield's own parts: every duration is known.
            let total: f64 = outcome
                .results
                .iter()
                .map(|(_, r)| r.duration_s.unwrap_or(0.0))
                .sum();
            outln!(
                "\n{}",
                elapsed_line("Total elapsed time", total, &outcome.end_reason)
            );
        }
        if !outcome.stragglers.is_empty() {
            errln!(
                "rtshield: {} (they had left their program's process group)",
                rtshield_load::describe_ended(&outcome.stragglers)
            );
        }
    }

    fn files_missing(&mut self, count: usize) {
        outln!(
            "WARNING: {count} result file(s) are not where asked (see the messages above; exit status {})",
            rtshield_run::EXIT_FILES_MISSING
        );
    }
}

/// The systress end-of-run output: final table, where the files are, time.
fn print_summary(cfg: &Config, dir: &Path, res: &RunResult, one_of_parts: bool) {
    let r = res.settings.resolution_ns;
    outln!("\n{TABLE_HEADER}");
    for t in &res.threads {
        outln!("{}", result_row(t, r));
    }
    outln!();
    for p in &res.programs {
        outln!(
            "program[{}] {}: {} spawn(s), {} ok exit(s), {} failed",
            p.index,
            p.command,
            p.spawns,
            p.exits_ok,
            p.exits_ko
        );
    }
    for t in &res.threads {
        let name = cfg.timers.iter().find(|c| c.index == t.index).map_or_else(
            || rtshield_results::systress_file_name(t.index),
            |c| c.filename.clone(),
        );
        outln!(
            "Statistics for timer_thread[{}] in '{}'",
            t.index,
            dir.join(name).display()
        );
    }
    for w in &res.warnings {
        outln!("warning: {w}");
    }
    if let Some(t) = &res.trace {
        // The spikes themselves are in spikes.txt beside the results.
        outln!("trace: {}", rtshield_results::spikes_summary(t));
        for s in t.spikes.iter().take(5) {
            outln!("  thread tid {} CPU {}: {}", s.pid, s.cpu, s.verdict);
        }
    }
    let what = if one_of_parts {
        "Elapsed time of this part"
    } else {
        "Total elapsed time"
    };
    // rtshield's own run: its duration and end are known.
    let end = res.end_reason.as_deref().unwrap_or("?");
    outln!(
        "\n{}",
        elapsed_line(what, res.duration_s.unwrap_or(0.0), end)
    );
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
