//! `rtshield sysinfo`.

use crate::cli::Global;
use rtshield_sys::SysInfo;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let root = g.root();
    let si = SysInfo::collect(&root, root.is_host());
    if args.json {
        println!("{}", serde_json::to_string_pretty(&si)?);
    } else {
        print!("{}", si.render_text());
    }
    Ok(0)
}
