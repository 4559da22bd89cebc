//! `rtshield stat [--interval 1s] [--count N] [--pids …] [--json]`.

use crate::cli::Global;
use rtshield_audit::stat::{render, Sampler};
use rtshield_sys::units::Dur;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Time between samples (`1s`, `200ms`).
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub interval: Dur,
    /// Stop after N samples (default: until interrupted).
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Only these processes' threads (comma-separated PIDs).
    #[arg(long, value_delimiter = ',', value_name = "PID,…")]
    pub pids: Option<Vec<u32>>,
    /// How many threads to list per sample, busiest first (0 = every one that switched).
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub top: usize,
    /// One JSON object per sample and line (JSON Lines).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    if args.interval.ns() == 0 {
        return Err(rtshield_sys::InputError::new("--interval must be more than 0").into());
    }
    let root = g.root();
    for p in args.pids.iter().flatten() {
        if !rtshield_sys::task::exists(&root, *p) {
            return Err(rtshield_sys::InputError::new(format!("--pids: no process {p}")).into());
        }
    }
    let mut s = Sampler::new(root, args.pids, args.top);
    let mut n = 0;
    while !matches!(args.count, Some(c) if n >= c) {
        std::thread::sleep(args.interval.as_std());
        let sample = s.sample();
        if args.json {
            println!("{}", serde_json::to_string(&sample)?);
        } else {
            println!("{}", render(&sample));
        }
        n += 1;
    }
    Ok(0)
}
