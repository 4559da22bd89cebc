//! `rtshield demo`: the main job on a built-in example, no arguments:
//! measure on the last CPU for ~10 s while a CPU load runs on the others.

use crate::cli::Global;
use crate::cmd::measure;
use rtshield_load::Builtin;
use rtshield_sys::units::Dur;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// How long to measure.
    #[arg(long, default_value = "10s", value_name = "DUR")]
    pub duration: Dur,
    /// Where to write the results.
    #[arg(long, default_value = "rtshield-demo", value_name = "DIR")]
    pub out: PathBuf,
    /// No live display, only the final summary.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    // The CPUs this process may use (not every online CPU: taskset counts).
    let allowed = rtshield_sys::cpus::allowed()?;
    let last = allowed.last().unwrap_or(0);
    let others = allowed.difference(&rtshield_sys::CpuSet::single(last));
    println!(
        "rtshield demo: wake-up latency of a SCHED_FIFO thread on CPU {last} (period 200us) for {}, {}.",
        args.duration,
        if others.is_empty() {
            "with no load (this machine has a single CPU)".to_string()
        } else {
            format!("while a CPU load runs on CPU {}", others.to_list())
        }
    );
    println!("The same as: rtshield measure --cpus {last} --period 200us --prio 98 --duration {}{} --out {}\n",
        args.duration,
        if others.is_empty() { String::new() } else { format!(" --load cpu --load-cpus {}", others.to_list()) },
        args.out.display());
    let margs = measure::Args {
        cpus: Some(last.to_string()),
        period: Dur(200_000),
        prio: 98,
        policy: rtshield_sys::sched::Policy::Fifo,
        duration: Some(args.duration),
        samples: None,
        mode: rtshield_measure::Mode::Nanosleep,
        timer: None,
        histo_size: None,
        resolution: "us".into(),
        stats_period: Dur(1_000_000_000),
        out: Some(args.out.clone()),
        json: None,
        json_format: Default::default(),
        metrics_file: None,
        force_unsafe_dir: false,
        max_latency: None,
        quiet: args.quiet,
        no_memlock: false,
        no_dma_latency: false,
        load: (!others.is_empty()).then_some(rtshield_load::LoadArg {
            kind: Builtin::Cpu,
            peer: None,
        }),
        load_cpus: (!others.is_empty()).then(|| others.to_list()),
        // The demo's run is an example, not an experiment: not stored.
        store: super::StoreArgs {
            no_store: true,
            ..Default::default()
        },
        partition: false,
        partition_parent: None,
        label: Some("demo".into()),
        trace: Default::default(),
    };
    let mut plan = margs.plan()?;
    plan.tags.insert("demo".into(), "true".into());
    let code = measure::execute(&plan, g, "demo")?;
    println!(
        "\nNext: `rtshield report {}/results.json` to plot it, `rtshield audit {last}` to see what still disturbs CPU {last}.",
        args.out.display()
    );
    Ok(code)
}
