//! `rtshield __load KIND` (internal): the worker process of a built-in
//! load, and `rtshield __load exec -- CMD...`, the shim that leads the process
//! group of a supervised program. Started only by rtshield's own supervisor, which
//! sets `RTSHIELD_LOAD_WORKER` to its pid; refused otherwise.

use crate::cli::Global;
use rtshield_load::{peer_worker_main, program_shim, started_by_supervisor, worker_main};
use rtshield_vocab::Builtin;
use rtshield_vocab::Policy;
use rtshield_vocab::{CpuSet, InputError};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Worker kind (cpu, memory, io, syscall, fork, net) or `exec`.
    pub(crate) kind: String,
    /// Bytes per worker (memory, io).
    #[arg(long)]
    pub(crate) size: Option<u64>,
    /// Private directory of an io worker (created and removed by the parent).
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// net: flood this peer (ICMP echo) instead of the loopback.
    #[arg(long)]
    pub(crate) peer: Option<std::net::Ipv4Addr>,
    /// exec: CPU affinity of the program.
    #[arg(long)]
    pub(crate) cpus: Option<String>,
    /// exec: join this cgroup (its cgroup.procs or tasks file) before starting the program.
    #[arg(long)]
    pub(crate) cgroup: Option<PathBuf>,
    /// exec: scheduling policy of the program.
    #[arg(long)]
    pub(crate) policy: Option<Policy>,
    /// exec: priority of the program.
    #[arg(long, default_value_t = 0)]
    pub(crate) prio: i32,
    /// exec: the program and its arguments (after `--`).
    #[arg(last = true)]
    pub(crate) cmd: Vec<String>,
}

pub(crate) fn run(args: Args, _g: &Global) -> anyhow::Result<i32> {
    if !started_by_supervisor() {
        return Err(InputError::new(
            "`__load` is internal: built-in loads are started by `rtshield run` or `rtshield measure --load`",
        )
        .into());
    }
    if args.kind == "exec" {
        let cpus = match &args.cpus {
            Some(s) => Some(CpuSet::parse(s).map_err(|e| InputError::new(e.to_string()))?),
            None => None,
        };
        let sched = args.policy.map(|p| (p, args.prio));
        return Ok(program_shim(
            cpus.as_ref(),
            sched,
            args.cgroup.as_deref(),
            &args.cmd,
        ));
    }
    let kind = Builtin::parse(&args.kind)
        .filter(|k| *k != Builtin::Hell)
        .ok_or_else(|| InputError::new(format!("unknown worker kind '{}'", args.kind)))?;
    if let (Builtin::Net, Some(peer)) = (kind, args.peer) {
        peer_worker_main(peer)?;
        return Ok(0);
    }
    worker_main(kind, args.size, args.dir.as_deref())?;
    Ok(0)
}
