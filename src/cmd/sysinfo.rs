//! `rtshield sysinfo`.

use crate::cli::Global;
use rtshield_sys::SysInfo;
use rtshield_text::{out, outln};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let root = g.root();
    let si = SysInfo::collect(&root, root.is_host());
    let left = rtshield_sys::tracing_leftovers(&root);
    if args.json {
        // The machine, and what other rtshield processes have in tracefs
        // (not part of the `sysinfo` block of result files).
        let mut j = serde_json::to_value(&si)?;
        j["tracing_leftovers"] = serde_json::to_value(&left)?;
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        out!("{}", si.render_text());
        for l in &left {
            outln!("{:<20} {}", "tracing leftover", l.describe());
        }
    }
    Ok(0)
}
