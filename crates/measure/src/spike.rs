//! Spikes: a wake-up later than the trace threshold is flagged by the
//! measuring thread ([`Spiker::fire`], at most one `write(2)`, no
//! allocation) for the analysis on the main thread.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// A wake-up later than the trace threshold, flagged by the measuring
/// thread for the analysis on the main thread (plain data, through a
/// preallocated ring).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpikeMark {
    /// The thread's place in `spec.threads`.
    pub thread: u32,
    /// The thread's id.
    pub tid: i32,
    /// The CPU it is pinned to (-1: not pinned).
    pub cpu: i32,
    /// The theoretical wake-up (CLOCK_MONOTONIC ns).
    pub expected_ns: i64,
    /// How late it woke up, ns.
    pub latency_ns: i64,
}

/// What a measuring thread does on a spike (a wake-up later than
/// `threshold_ns`): one `write(2)` to `fd`, opened before the loop. With
/// `stop` unset, `fd` is the trace instance's `trace_marker` and the thread
/// writes a marker line naming the expected wake-up; with `stop` set, `fd`
/// is its `tracing_on` and the first spike writes `0` (the trace keeps the
/// spike, like cyclictest `-b`) and ends the run.
#[derive(Debug, Clone, Copy)]
pub struct SpikeTrigger {
    /// A wake-up later than this is a spike, ns.
    pub threshold_ns: i64,
    /// `trace_marker` (or `tracing_on` with `stop`), opened before the loop.
    pub fd: std::os::unix::io::RawFd,
    /// Stop tracing and the run at the first spike.
    pub stop: bool,
}

/// Spike marks a thread can queue before the main thread takes them (every
/// 20 ms); a spike that finds the queue full is counted, not marked.
pub(crate) const MARK_RING: usize = 1024;

/// The measuring thread's side of a [`SpikeTrigger`].
pub(crate) struct Spiker<'a> {
    /// What to do on a spike.
    pub trigger: SpikeTrigger,
    /// The thread's place in `spec.threads`.
    pub thread: u32,
    /// The thread's id.
    pub tid: i32,
    /// Its CPU (-1: not pinned).
    pub cpu: i32,
    /// Where the marks go to the main thread.
    pub marks: &'a mut rtrb::Producer<SpikeMark>,
    /// Shared by the threads of a run: tracing was stopped (`stop` mode).
    pub stopped: &'a AtomicBool,
    /// The run's stop flag, set in `stop` mode.
    pub end_run: &'a AtomicBool,
    /// The marker line is formatted here (no allocation).
    pub buf: [u8; 128],
}

impl Spiker<'_> {
    /// Handle a spike; true when the loop must end (`stop` mode). At most
    /// one `write(2)`; no allocation, no lock.
    #[cold]
    #[inline(never)]
    pub(crate) fn fire(&mut self, expected_ns: i64, latency_ns: i64) -> bool {
        let mark = SpikeMark {
            thread: self.thread,
            tid: self.tid,
            cpu: self.cpu,
            expected_ns,
            latency_ns,
        };
        if self.trigger.stop {
            if !self.stopped.swap(true, Relaxed) {
                // SAFETY: fd is the open tracing_on file; one byte of a static.
                unsafe { libc::write(self.trigger.fd, b"0".as_ptr().cast(), 1) };
                let _ = self.marks.push(mark);
            }
            self.end_run.store(true, Relaxed);
            return true;
        }
        if self.marks.push(mark).is_ok() {
            let n = format_marker(&mut self.buf, &mark);
            // SAFETY: fd is the open trace_marker file; buf[..n] is initialised.
            unsafe { libc::write(self.trigger.fd, self.buf.as_ptr().cast(), n) };
        }
        false
    }
}

/// `rtshield spike thread=T tid=P cpu=C expected=E latency=L` into `buf`
/// (128 bytes hold it with every number at its widest); returns its length.
pub(crate) fn format_marker(buf: &mut [u8; 128], m: &SpikeMark) -> usize {
    fn put(buf: &mut [u8; 128], at: &mut usize, bytes: &[u8]) {
        for &b in bytes {
            if *at < buf.len() {
                buf[*at] = b;
                *at += 1;
            }
        }
    }
    fn num(buf: &mut [u8; 128], at: &mut usize, v: i64) {
        let mut digits = [0u8; 20];
        let mut n = v.unsigned_abs();
        let mut k = 0;
        loop {
            digits[k] = b'0' + (n % 10) as u8;
            n /= 10;
            k += 1;
            if n == 0 {
                break;
            }
        }
        if v < 0 {
            put(buf, at, b"-");
        }
        while k > 0 {
            k -= 1;
            put(buf, at, &digits[k..k + 1]);
        }
    }
    let mut at = 0;
    put(buf, &mut at, b"rtshield spike thread=");
    num(buf, &mut at, i64::from(m.thread));
    put(buf, &mut at, b" tid=");
    num(buf, &mut at, i64::from(m.tid));
    put(buf, &mut at, b" cpu=");
    num(buf, &mut at, i64::from(m.cpu));
    put(buf, &mut at, b" expected=");
    num(buf, &mut at, m.expected_ns);
    put(buf, &mut at, b" latency=");
    num(buf, &mut at, m.latency_ns);
    put(buf, &mut at, b"\n");
    at
}
