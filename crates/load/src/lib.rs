//! rtshield-load: everything that puts load beside a measurement.
//!
//! Its one job: start, supervise and stop the processes that run beside a
//! measurement, and account for them:
//!
//! - built-in loads ([`rtshield_vocab::Builtin`]: cpu, memory, io,
//!   syscall, fork, net, hell, timers, syncio), each run as worker
//!   processes `rtshield __load KIND` (one per CPU, pinned), so a load can
//!   be killed, reaped and accounted for like any program ([`start`],
//!   [`worker_main`]);
//! - the [`Supervisor`] that runs `program[N]` command lines and those
//!   workers in their own process groups, with RESPAWN/STOP/IGNORE;
//! - finding and killing every descendant at the end of a run
//!   ([`kill_all_descendants`]);
//! - per-CPU load from `/proc/stat` deltas ([`CpuLoadMeter`]).
//!
//! What it may not do: measure latency, touch the measuring threads, or
//! send a load anywhere but this machine and the one `net:peer=` names.
//!
//! Quick use (what `measure --load hell --load-cpus 0` does):
//!
//! ```no_run
//! use rtshield_load::LoadSpec;
//! use rtshield_vocab::Builtin;
//! let loads = rtshield_load::start(&[LoadSpec::new(
//!     Builtin::Hell,
//!     Some(rtshield_vocab::CpuSet::parse("0").unwrap()),
//! )])?;
//! // ... measure ...
//! let stats = loads.stop(); // every worker killed and reaped
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! Built-in loads are only ever started by rtshield itself: the worker
//! entry point refuses to run unless its parent is an rtshield that set
//! the `RTSHIELD_LOAD_WORKER` variable.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod builtin;
mod cpuload;
mod reaper;
mod supervise;
mod worker;

pub use builtin::{LoadArg, LoadSpec};
pub use cpuload::{CpuLoad, CpuLoadMeter};
pub use reaper::{
    descendants, describe_ended, end_descendants, end_descendants_summary, kill_all_descendants,
    Ended, END_GRACE,
};
pub use supervise::{become_subreaper, Event, ProcSpec, ProcStats, Supervisor};
pub use worker::{peer_worker_main, program_shim, started_by_supervisor, worker_main};

use anyhow::Context;
use rtshield_vocab::{Builtin, CpuSet, Output, Termination};
use std::path::PathBuf;

/// Set by the supervisor in a worker's environment; `__load` refuses to
/// start without it (a load is not something a user starts by hand).
pub(crate) const WORKER_ENV: &str = "RTSHIELD_LOAD_WORKER";
/// The hidden subcommand that runs a worker.
pub(crate) const WORKER_SUBCOMMAND: &str = "__load";

/// The executable that understands `__load`: the running rtshield itself,
/// always. (No variable may name another one: under `sudo -E` it would be
/// another user's program run as root.)
pub fn worker_exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe().context("cannot find the rtshield executable for load workers")
}

/// The supervised processes one load spec expands into: for each CPU of
/// `spec.cpus` (or each CPU this process may run on, unpinned, when
/// `None`), `workers_per_cpu` workers of each kind (`hell` = six kinds).
/// Workers are respawned (with back-off) if they die.
pub fn proc_specs(label: &str, spec: &LoadSpec) -> anyhow::Result<Vec<ProcSpec>> {
    let exe = worker_exe()?;
    let slots: Vec<Option<u32>> = match &spec.cpus {
        Some(c) if c.is_empty() => anyhow::bail!("{label}: empty CPU set for load {}", spec.kind),
        Some(c) => c.iter().map(Some).collect(),
        None => {
            // One worker per CPU this process may use.
            let n = rtshield_sys::allowed_cpus()
                .map(|s| s.len())
                .unwrap_or(1)
                .max(1);
            vec![None; n]
        }
    };
    let mut out = Vec::new();
    for cpu in slots {
        for kind in spec.kind.expand() {
            for _ in 0..spec.workers_per_cpu.max(1) {
                let mut argv = vec![
                    exe.to_string_lossy().into_owned(),
                    WORKER_SUBCOMMAND.to_string(),
                    kind.name().to_string(),
                ];
                if let Some(sz) = spec.size.or(kind.default_size()) {
                    argv.push("--size".into());
                    argv.push(sz.to_string());
                }
                let mut cleanup_dir = None;
                if let (Builtin::Net, Some(peer)) = (kind, spec.peer) {
                    argv.push("--peer".into());
                    argv.push(peer.to_string());
                }
                if kind.needs_dir() {
                    let d = io_dir()?;
                    argv.push("--dir".into());
                    argv.push(d.path().to_string_lossy().into_owned());
                    cleanup_dir = Some(d);
                }
                let mut p = ProcSpec::new(label, argv);
                p.cpus = cpu.map(CpuSet::single);
                p.stdout = Output::Null;
                p.stderr = Output::Inherit;
                p.on_ok = Termination::Respawn;
                p.on_ko = Termination::Respawn;
                p.cleanup_dir = cleanup_dir;
                p.env_worker = true;
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// A fresh private directory for one io worker (removed by the
/// supervisor): `rtshield-io-<16 hex digits>`, mode 0700, made with `mkdir`
/// under `$TMPDIR` only if it passes the path rules (under `sudo -E` it may
/// be another user's), else `/tmp`, else `/dev/shm`. The worker opens it
/// again and refuses it unless it is still private.
/// The io loads' private directories: `rtshield-io-<16 hex>`.
const IO_DIR_PREFIX: &str = "rtshield-io-";

fn io_dir() -> anyhow::Result<std::sync::Arc<rtshield_safefs::PrivateDir>> {
    static SAID: std::sync::Once = std::sync::Once::new();
    let parents = rtshield_safefs::temp_parents();
    SAID.call_once(|| {
        for why in &parents.skipped {
            eprintln!("rtshield: io load: {why}");
        }
    });
    let mut last = None;
    for p in parents.dirs {
        // The directories of io loads whose rtshield died (SIGKILL, the
        // OOM killer: up to 64 GiB per worker) go first: each has an owner
        // record its live rtshield holds locked (F11).
        for gone in rtshield_safefs::reap_dead(&p, IO_DIR_PREFIX) {
            eprintln!(
                "rtshield: io load: removed {}, left by an rtshield that is gone",
                p.display_path(&gone).display()
            );
        }
        match rtshield_safefs::PrivateDir::create_owned_in(p, IO_DIR_PREFIX) {
            Ok(d) => return Ok(std::sync::Arc::new(d)),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => anyhow::anyhow!("io load: {e}"),
        None => anyhow::anyhow!(
            "io load: no directory for its files ({})",
            parents.skipped.join("; ")
        ),
    })
}

/// Built-in loads running beside a measurement. Dropping it (or
/// [`stop`](Self::stop)) kills and reaps every process it started and
/// removes the io loads' temp dirs.
#[derive(Debug)]
pub struct RunningLoads {
    sup: Supervisor,
}

/// Start built-in loads, from the calling thread (use the main thread: the
/// workers die with the thread that started them).
pub fn start(specs: &[LoadSpec]) -> anyhow::Result<RunningLoads> {
    let mut procs = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        procs.extend(proc_specs(&format!("load[{i}] {}", s.kind), s)?);
    }
    let mut sup = Supervisor::new(procs)?.with_launcher(worker_exe()?);
    for e in sup.start() {
        if let Event::SpawnFailed { error, .. } = e {
            anyhow::bail!(error);
        }
    }
    Ok(RunningLoads { sup })
}

impl RunningLoads {
    /// Respawn workers that died (optional; call now and then on long runs).
    pub fn poll(&mut self) {
        self.sup.poll();
    }

    /// Pids of the running workers.
    pub fn pids(&self) -> Vec<i32> {
        self.sup.running_pids()
    }

    /// Kill and reap everything; spawn/exit counts per load.
    pub fn stop(mut self) -> Vec<(String, ProcStats)> {
        self.sup.shutdown();
        self.sup.stats_by_label()
    }
}
