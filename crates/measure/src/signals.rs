//! SIGINT/SIGTERM end a run early; the files are still written.
//!
//! The handler only stores into atomics (async-signal-safe). A second
//! signal while the first is being handled exits at once, for a user who
//! really wants out.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Once;

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();

extern "C" fn on_signal(sig: libc::c_int) {
    // The signal first: whoever sees STOP (the handler may run on any
    // thread that does not block it) must also see which signal it was.
    SIGNAL.store(sig, Ordering::SeqCst);
    if STOP.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(128 + sig) };
    }
}

/// Install the SIGINT/SIGTERM handlers (once) and return the flag they set.
pub fn install() -> &'static AtomicBool {
    INSTALL.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: a zeroed sigaction with a valid handler and an empty
            // mask; SA_RESTART so other syscalls are not disturbed.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
    &STOP
}

/// The signal that set the flag, if one did.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

static INSTALL_WAKE: Once = Once::new();

extern "C" fn on_wake(_sig: libc::c_int) {
    // Nothing to do: the point is that the interrupted wait returns EINTR.
}

/// The signal the main thread sends a measuring thread to cut its current
/// wait short when the run stops (a period may be 10 s or 1 h long).
/// `SIGRTMIN + 1`: `SIGRTMIN` is the POSIX timer's own signal.
pub fn wake_signal() -> libc::c_int {
    libc::SIGRTMIN() + 1
}

/// Install the no-op handler of [`wake_signal`] (once), WITHOUT
/// `SA_RESTART`, so `clock_nanosleep` and `sigwaitinfo` return EINTR.
pub fn install_wake() {
    INSTALL_WAKE.call_once(|| {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_wake as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = 0;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(wake_signal(), &sa, std::ptr::null_mut());
        }
    });
}

/// Send [`wake_signal`] to thread `tid` of this process.
pub fn wake_thread(tid: i32) {
    if tid <= 0 {
        return;
    }
    // SAFETY: tgkill to a thread of our own process (tgid = getpid), whose
    // handler for this signal does nothing.
    unsafe {
        libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, wake_signal());
    }
}
