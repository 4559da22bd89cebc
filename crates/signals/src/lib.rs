//! rtshield-signals: the stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT)
//! as a stop flag.
//!
//! Each of them ends a command the same way: Ctrl-C (SIGINT), `kill` or
//! systemd (SIGTERM), a dropped terminal or ssh session (SIGHUP) and
//! Ctrl-\\ (SIGQUIT) all let a measurement write its results.
//!
//! Every rtshield command that must end cleanly when asked to stop (a
//! measurement writes its files, a run reaps its programs, a campaign undoes
//! its partition, a scenario reports its tasks, a load worker leaves its
//! loop) learns it here, and only here: [`install`] sets up the handlers
//! once per process with `signal-hook`, whose handlers only store into
//! atomics (async-signal-safe), and returns the flag they set.
//!
//! Not here: the measuring engine's *wake* signal (`SIGRTMIN + 1`, which
//! must interrupt `clock_nanosleep` with EINTR, so it is installed without
//! `SA_RESTART`, which `signal-hook` always sets) and the program shim's
//! handlers (they act, they set no flag).
//!
//! What it may not do: decide what a stop means (each caller reads the flag
//! and ends in its own way), or handle any other signal.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The signals that ask a command to stop, each handled alike: SIGINT
/// (Ctrl-C), SIGTERM (`kill`, systemd), SIGHUP (the terminal or the ssh
/// session went away), SIGQUIT (Ctrl-\\; no core dump).
pub const STOP_SIGNALS: [i32; 4] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT];

/// The name of a stop signal (`SIGHUP`), `None` for any other.
pub fn name(sig: i32) -> Option<&'static str> {
    match sig {
        SIGINT => Some("SIGINT"),
        SIGTERM => Some("SIGTERM"),
        SIGHUP => Some("SIGHUP"),
        SIGQUIT => Some("SIGQUIT"),
        _ => None,
    }
}

/// How results name the signal that ended a run (`end_reason`):
/// `sigint`, `sigterm`, `sighup`, `sigquit`; `signal N` for any other.
pub fn end_reason(sig: i32) -> String {
    name(sig).map_or_else(|| format!("signal {sig}"), str::to_ascii_lowercase)
}

/// Block the stop signals in the calling thread (and the threads it
/// starts afterwards): their handler must run on the main thread, never
/// on a measured CPU, where it would cut a sleep short.
pub fn block_in_this_thread() {
    // SAFETY: a sigset filled by libc; only the calling thread's mask changes.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in STOP_SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// What a second stop signal does once the first has set the flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Second {
    /// Exit at once with status 128 + signal: for a user who really wants
    /// out of a measurement that is writing its files. Not for a process
    /// another rtshield started and signals itself (a campaign's cell):
    /// the terminal's Ctrl-C reaches both, and the parent passes it on, so
    /// the child sees two at once.
    Exits,
    /// Nothing more than the first: the command must still clean up (a
    /// campaign undoes its partition, a worker leaves its loop).
    Waits,
}

/// The flag and the last signal that set it, shared with the handlers.
struct Installed {
    stop: Arc<AtomicBool>,
    which: Arc<AtomicUsize>,
}

static INSTALLED: OnceLock<Installed> = OnceLock::new();

/// Install the handlers of [`STOP_SIGNALS`] (once per process: a later
/// call returns the same flag and keeps the first call's `second`) and
/// return the flag they set. Handlers are process-wide and stay installed.
pub fn install(second: Second) -> &'static AtomicBool {
    let installed = INSTALLED.get_or_init(|| {
        let stop = Arc::new(AtomicBool::new(false));
        let which = Arc::new(AtomicUsize::new(0));
        for sig in STOP_SIGNALS {
            // Actions run in the order they are registered: the signal's
            // number first, so whoever sees the flag also sees which one;
            // the exit test before the flag is set, so only a second
            // signal finds it set.
            signal_hook::flag::register_usize(sig, which.clone(), sig as usize)
                .expect("the stop signals can be handled");
            if second == Second::Exits {
                signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, stop.clone())
                    .expect("the stop signals can be handled");
            }
            signal_hook::flag::register(sig, stop.clone())
                .expect("the stop signals can be handled");
        }
        Installed { stop, which }
    });
    &installed.stop
}

/// The signal that set the flag (the last one received), if any.
pub fn received() -> Option<i32> {
    match INSTALLED.get()?.which.load(Ordering::SeqCst) {
        0 => None,
        s => i32::try_from(s).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_sets_the_flag_and_names_itself() {
        let stop = install(Second::Waits);
        assert!(!stop.load(Ordering::SeqCst));
        assert_eq!(received(), None);
        // Raise it in this process: the handler runs before raise returns.
        signal_hook::low_level::raise(SIGTERM).unwrap();
        assert!(stop.load(Ordering::SeqCst));
        assert_eq!(received(), Some(SIGTERM));
        // A second one with `Waits`: still here, the flag still set.
        signal_hook::low_level::raise(SIGINT).unwrap();
        assert!(stop.load(Ordering::SeqCst));
        assert_eq!(received(), Some(SIGINT));
        // Installing again gives the same flag.
        assert!(std::ptr::eq(stop, install(Second::Exits)));
    }
}
