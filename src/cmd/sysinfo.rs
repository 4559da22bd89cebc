//! `rtshield sysinfo`.

use crate::cli::Global;
use rtshield_sys::SysInfo;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
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
        print!("{}", si.render_text());
        for l in &left {
            println!("{:<20} {}", "tracing leftover", l.describe());
        }
    }
    Ok(0)
}
