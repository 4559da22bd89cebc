//! `rtshield demo`: the main job on a built-in example, no arguments:
//! measure on the last CPU for ~10 s while a CPU load runs on the others.

use crate::cli::Global;
use crate::cmd::measure::TextPrinter;
use rtshield_load::LoadArg;
use rtshield_run::MeasureRequest;
use rtshield_text::outln;
use rtshield_vocab::Builtin;
use rtshield_vocab::Dur;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// How long to measure.
    #[arg(long, default_value = "10s", value_name = "DUR")]
    pub(crate) duration: Dur,
    /// Where to write the results.
    #[arg(long, default_value = "rtshield-demo", value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// No live display, only the final summary.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

pub(crate) fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    // The CPUs this process may use (not every online CPU: taskset counts).
    let allowed = rtshield_sys::allowed_cpus()?;
    let last = allowed.last().unwrap_or(0);
    let others = allowed.difference(&rtshield_vocab::CpuSet::single(last));
    outln!(
        "rtshield demo: wake-up latency of a SCHED_FIFO thread on CPU {last} (period 200us) for {}, {}.",
        args.duration,
        if others.is_empty() {
            "with no load (this machine has a single CPU)".to_string()
        } else {
            format!("while a CPU load runs on CPU {}", others.to_list())
        }
    );
    outln!("The same as: rtshield measure --cpus {last} --period 200us --prio 98 --duration {}{} --out {}\n",
        args.duration,
        if others.is_empty() { String::new() } else { format!(" --load cpu --load-cpus {}", others.to_list()) },
        args.out.display());
    let request = MeasureRequest {
        cpus: Some(last.to_string()),
        duration_ns: Some(args.duration.ns()),
        out: Some(args.out.clone()),
        quiet: args.quiet,
        load: (!others.is_empty()).then_some(LoadArg {
            kind: Builtin::Cpu,
            peer: None,
        }),
        load_cpus: (!others.is_empty()).then(|| others.to_list()),
        label: Some("demo".into()),
        // The demo's run is an example, not an experiment: no identity,
        // not stored.
        tags: vec![("demo".into(), "true".into())],
        identify: false,
        no_store: true,
        // A password in a store URL never reaches a file (issue 21).
        command: rtshield_text::secret::redact_args(std::env::args()),
        ..MeasureRequest::new(200_000)
    };
    let code = rtshield_run::measure(
        &request,
        &g.root(),
        &mut TextPrinter::new("demo", args.quiet),
    )?;
    outln!(
        "\nNext: `rtshield report {}/results.json` to plot it, `rtshield audit {last}` to see what still disturbs CPU {last}.",
        args.out.display()
    );
    Ok(code)
}
