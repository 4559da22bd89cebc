//! `rtshield audit [CPUS] [--watch 10s] [--json]`.

use crate::cli::Global;
use rtshield_audit::{audit, render_audit, AuditOptions};
use rtshield_text::out;
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
}

pub(crate) fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let cpus = args
        .cpus
        .as_deref()
        .map(CpuSet::parse)
        .transpose()
        .map_err(|e| InputError::new(e.to_string()))?;
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
