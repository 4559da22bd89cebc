//! `rtshield sysinfo`.

use crate::cli::Global;
use rtshield_sys::SysInfo;
use rtshield_text::out;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let root = g.root();
    let si = SysInfo::collect(&root, root.is_host());
    if args.json {
        println!("{}", serde_json::to_string_pretty(&si)?);
    } else {
        out!("{}", si.render_text());
    }
    Ok(0)
}
