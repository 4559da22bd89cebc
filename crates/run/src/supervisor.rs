//! The programs' supervisor thread of `rtshield run`: it starts the
//! programs and built-in loads (each in its partition), polls them every
//! 50 ms (respawns, load/rest phases) whatever the stats period, and tells
//! the main thread what happened through [`Shared`].

use crate::runner::partition_procs_file;
use crate::runner::Supervised;
use anyhow::Context;
use rtshield_config::Cycle;
use rtshield_load::Event;
use rtshield_load::{ProcSpec, ProcStats, Supervisor};
use rtshield_sys::Root;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the supervisor thread tells the main thread.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Messages to print (program exits, phase changes).
    pub(crate) messages: Vec<String>,
    /// A program with policy STOP ended.
    pub(crate) stop: Option<String>,
    /// `load`, `rest`, or `load` when there is no cycle.
    pub(crate) phase: String,
    /// The measurement's start (set by the observer at its first drain):
    /// the load/rest schedule counts from it, so phases and timeline rows
    /// share one clock. Until then the first phase holds.
    pub(crate) anchor: Option<Instant>,
    pub(crate) stats: Vec<(String, ProcStats)>,
}

/// The supervisor thread; stopped (programs shut down) when dropped.
pub(crate) struct SupThread {
    pub(crate) shared: Arc<Mutex<Shared>>,
    done: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl SupThread {
    /// Start the programs from a dedicated thread that lives for the whole
    /// run: it polls every 50 ms (respawns, phases) whatever the stats
    /// period, and the children's death signal is tied to it.
    pub(crate) fn start(
        procs: Vec<Supervised>,
        exe: PathBuf,
        root: Root,
        dbg: u32,
    ) -> anyhow::Result<SupThread> {
        let cycles: Vec<Option<Cycle>> = procs.iter().map(|p| p.1).collect();
        let on0: Vec<bool> = cycles
            .iter()
            .map(|c| c.is_none_or(|c| c.loaded_at(0)))
            .collect();
        let shared = Arc::new(Mutex::new(Shared {
            phase: phase_name(&cycles, &on0).into(),
            ..Default::default()
        }));
        let done = Arc::new(AtomicBool::new(false));
        let specs: Vec<ProcSpec> = procs
            .into_iter()
            .map(|(mut spec, _, group)| {
                // The shim joins the partition before starting the program.
                spec.cgroup_procs = group
                    .and_then(|g| partition_procs_file(&root, g))
                    .map(|f| root.path(f));
                spec
            })
            .collect();
        let mut sup = Supervisor::new(specs)
            .map_err(output_refusal)?
            .with_launcher(exe)
            .reap_all_children(true);
        let (sh, dn) = (shared.clone(), done.clone());
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<anyhow::Result<()>>();
        let handle = std::thread::Builder::new()
            .name("rtshield-sup".into())
            .spawn(move || {
                let mut on = on0;
                let handle_events = |evs: Vec<Event>, sh: &Mutex<Shared>| {
                    let mut s = sh.lock().unwrap_or_else(|p| p.into_inner());
                    for e in evs {
                        match e {
                            Event::Exited {
                                label,
                                pid,
                                ok,
                                how,
                            } => {
                                if dbg >= 1 {
                                    s.messages.push(format!(
                                        "{label}: pid {pid} ended ({how}{})",
                                        if ok { "" } else { ", failure" }
                                    ));
                                }
                            }
                            Event::SpawnFailed { error, .. } => s.messages.push(error),
                            Event::Stop { label, how } => {
                                s.messages.push(format!(
                                    "{label} ended ({how}) and its policy is STOP: ending the run"
                                ));
                                s.stop.get_or_insert(label);
                            }
                        }
                    }
                };
                let evs = sup.start_except(&|i| !on[i]);
                let _ = ready_tx.send(Ok(()));
                handle_events(evs, &sh);
                while !dn.load(Ordering::Relaxed) {
                    let anchor = sh.lock().unwrap_or_else(|p| p.into_inner()).anchor;
                    // Poll every 50 ms, but wake at the next switch (not up
                    // to 50 ms after it).
                    let nap = anchor.map_or(Duration::from_millis(50), |a| {
                        let t = a.elapsed().as_nanos() as u64;
                        let next = cycles.iter().flatten().map(|c| c.next_switch_ns(t)).min();
                        next.map_or(Duration::from_millis(50), |n| {
                            Duration::from_nanos((n - t).clamp(1_000_000, 50_000_000))
                        })
                    });
                    std::thread::sleep(nap);
                    let mut evs = sup.poll();
                    // Load/rest phases, per distinct cycle, on the
                    // measurement's clock.
                    let t = anchor.map_or(0, |a| a.elapsed().as_nanos() as u64);
                    for (i, c) in cycles.iter().enumerate() {
                        let Some(c) = c else { continue };
                        let want = c.loaded_at(t);
                        if want != on[i] {
                            on[i] = want;
                            if want {
                                evs.extend(sup.resume_where(&|j| j == i));
                            } else {
                                sup.pause_where(&|j| j == i);
                            }
                        }
                    }
                    let any_cycle = cycles.iter().any(Option::is_some);
                    let phase = phase_name(&cycles, &on);
                    {
                        let mut s = sh.lock().unwrap_or_else(|p| p.into_inner());
                        if s.phase != phase {
                            if dbg >= 2 || any_cycle {
                                s.messages
                                    .push(format!("[{:.1}s] {phase} phase", t as f64 / 1e9));
                            }
                            s.phase = phase.into();
                        }
                        s.stats = sup.stats_by_label();
                    }
                    handle_events(evs, &sh);
                }
                sup.shutdown();
                let mut s = sh.lock().unwrap_or_else(|p| p.into_inner());
                s.stats = sup.stats_by_label();
            })
            .context("cannot start the supervisor thread")?;
        ready_rx
            .recv()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the supervisor thread died")))?;
        Ok(SupThread {
            shared,
            done,
            handle: Some(handle),
        })
    }

    /// Shut the programs down and join the thread.
    pub(crate) fn stop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// `load` when a cycled program runs (or there is no cycle), else `rest`.
fn phase_name(cycles: &[Option<Cycle>], on: &[bool]) -> &'static str {
    let any_cycle = cycles.iter().any(Option::is_some);
    if !any_cycle || cycles.iter().zip(on).any(|(c, o)| c.is_some() && *o) {
        "load"
    } else {
        "rest"
    }
}

impl Drop for SupThread {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An output file refused by the path layer (a link, `..`, a directory
/// others control) is the caller's input: exit 2.
fn output_refusal(e: std::io::Error) -> anyhow::Error {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::InvalidInput => {
            rtshield_vocab::InputError::new(e.to_string()).into()
        }
        _ => e.into(),
    }
}
