//! [`Watcher`]: a [`Watch`] on its own thread, every stats period, off
//! the measured CPUs.

use crate::watch::{Watch, WatchSpec};
use rtshield_results::{Drift, DriftEvent, DriftWatch};
use rtshield_sys as sched;
use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the thread shares: the events not yet taken by the run's
/// observer, and all of them.
#[derive(Default)]
struct Shared {
    fresh: Vec<DriftEvent>,
    all: Vec<DriftEvent>,
    /// How the watch ran, as of its last tick.
    info: Option<DriftWatch>,
    /// Set at the start: where the thread runs, its period, its time 0.
    ran_on: Option<String>,
    period_ns: u64,
    mono_zero_ns: u64,
}

/// The drift watch running beside a measurement. Its clock is the run's:
/// time 0 is [`Watcher::start`], CLOCK_MONOTONIC then is recorded
/// (`drift_watch.mono_zero_ns`) so trace timestamps can be placed on it.
pub struct Watcher {
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<Watch>>,
    shared: Arc<Mutex<Shared>>,
}

/// CLOCK_MONOTONIC now, ns (the clock of the measuring threads and of
/// kernel trace timestamps; `Instant` is it too, but opaque).
fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The events a [`Watcher`] saw that nobody took yet.
#[derive(Clone)]
pub struct Feed(Arc<Mutex<Shared>>);

impl Feed {
    /// The events seen since the last call, in the order seen.
    pub fn take_new(&self) -> Vec<DriftEvent> {
        std::mem::take(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()).fresh)
    }

    /// The drift so far (for a rotation part's or a checkpoint's result):
    /// every event seen, how the watch ran as of its last tick.
    pub fn so_far(&self) -> Drift {
        let g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut info = g.info.clone().unwrap_or_default();
        stamp(&g, &mut info);
        Drift {
            drift: Some(g.all.clone()),
            drift_watch: Some(info),
        }
    }
}

/// What the watcher knows and the watch does not: where it ran, how
/// often, its time 0.
fn stamp(g: &Shared, info: &mut DriftWatch) {
    info.ran_on = g.ran_on.clone();
    info.period_ns = g.period_ns;
    info.mono_zero_ns = Some(g.mono_zero_ns);
}

impl Watcher {
    /// Read the baseline and start the thread: it ticks every `period`
    /// (at least 100 ms) on the online CPUs outside `spec.cpus` (when
    /// there are some) at SCHED_OTHER, until [`Watcher::finish`].
    pub fn start(spec: WatchSpec, period: Duration) -> Watcher {
        let period = period.max(Duration::from_millis(100));
        let online = rtshield_sys::online_cpus(&spec.root).unwrap_or_default();
        let housekeeping: CpuSet = online.difference(&spec.cpus);
        let ran_on = (!housekeeping.is_empty()).then(|| housekeeping.to_list());
        let mono_zero_ns = mono_ns();
        let zero = Instant::now();
        let shared = Arc::new(Mutex::new(Shared {
            ran_on,
            period_ns: period.as_nanos() as u64,
            mono_zero_ns,
            ..Shared::default()
        }));
        let (stop, rx) = mpsc::channel::<()>();
        let sh = shared.clone();
        let thread = std::thread::Builder::new()
            .name("rtshield-drift".into())
            .spawn(move || {
                // Off the measured CPUs, below any real-time thread: the
                // watch reads files, it never competes with the measurement.
                if !housekeeping.is_empty() {
                    let _ = sched::set_affinity(0, &housekeeping);
                }
                let _ = sched::set_scheduler(0, Policy::Other, 0);
                let mut w = Watch::new(spec, zero.elapsed().as_nanos() as u64);
                // The baseline is read: `so_far` says so (ticks 1).
                let info = w.info();
                sh.lock().unwrap_or_else(|p| p.into_inner()).info = Some(info);
                // A message or a dropped sender (the run ended): stop.
                while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(period) {
                    let ev = w.tick(zero.elapsed().as_nanos() as u64);
                    let info = w.info();
                    let mut g = sh.lock().unwrap_or_else(|p| p.into_inner());
                    g.all.extend(ev.iter().cloned());
                    g.fresh.extend(ev);
                    g.info = Some(info);
                }
                w
            })
            .ok();
        Watcher {
            stop,
            thread,
            shared,
        }
    }

    /// The events seen since the last call (for `timeline.csv` and live
    /// output).
    pub fn take_new(&self) -> Vec<DriftEvent> {
        self.feed().take_new()
    }

    /// A handle on the fresh events, for the run's observer (which cannot
    /// hold the watcher: the result is built from [`Watcher::finish`]).
    pub fn feed(&self) -> Feed {
        Feed(self.shared.clone())
    }

    /// The drift so far (see [`Feed::so_far`]).
    pub fn so_far(&self) -> Drift {
        self.feed().so_far()
    }

    /// Stop the thread (at once: it does not wait for its next tick) and
    /// give the run's drift: every event, how the watch ran. Without a
    /// thread (it could not be started) the drift is unknown (absent).
    pub fn finish(mut self) -> Drift {
        let _ = self.stop.send(());
        let Some(w) = self.thread.take().and_then(|t| t.join().ok()) else {
            return Drift::default();
        };
        let mut info = w.info();
        let mut g = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        stamp(&g, &mut info);
        let all = std::mem::take(&mut g.all);
        Drift {
            drift: Some(all),
            drift_watch: Some(info),
        }
    }
}
