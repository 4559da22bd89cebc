//! Test and bench support (issue 26): the collecting side of a run (the
//! rings `run` sizes, the main thread's 20 ms drain into the histograms,
//! the interval figures, the observer, the final [`Measurement`]) fed by
//! emulated measuring threads instead of real ones, so that the main
//! thread's cost can be measured at the sample rate of 128 measuring
//! threads on a machine that has 2 CPUs.
//!
//! An emulated thread is a [`Source`]: it owns the real SPSC ring producer
//! of one measuring thread and hands each sample over with the hot loop's
//! own function (`hotloop::hand_over`: exact figures, ring push, a full
//! ring counted as lost, live publication). Only the sleep and the clock
//! read are missing: the caller decides the values and the pace. One OS
//! thread may drive many sources (a 2-CPU machine cannot run 128 threads
//! waking every 100 µs).
//!
//! Not part of the supported API (hidden from the documentation).

use crate::engine::{Ended, Ready};
use crate::hotloop::{hand_over, now_ns, Live, Sample};
use crate::main_side::{read_live, rings, IvalAcc, MainSide, SnapshotInfo};
use crate::spike::{SpikeMark, MARK_RING};
use crate::stats::{Accum, ThreadHistograms};
use crate::{EndReason, MeasureSpec, Measurement, Observer};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// One emulated measuring thread: the producer end of its ring.
pub struct Source<'a> {
    tx: rtrb::Producer<Sample>,
    live: &'a Live,
    acc: Accum,
    stop: &'a AtomicBool,
}

impl Source<'_> {
    /// Hand one sample over as the hot loop does: `value_ns` (latency),
    /// `missed` periods skipped just before it.
    #[inline]
    pub fn emit(&mut self, value_ns: i64, missed: u64) {
        // No trace is paired with an emulated sample (`--split` is the
        // only reader of the expected wake-up time).
        hand_over(&mut self.acc, &mut self.tx, self.live, value_ns, missed, 0);
    }

    /// Samples this source could not push (its ring was full).
    pub fn lost(&self) -> u64 {
        self.acc.lost
    }

    /// Samples handed over so far (pushed or lost).
    pub fn count(&self) -> u64 {
        self.acc.lat.count
    }

    /// The main side asks the measuring threads to stop (the observer
    /// said stop, or the caller's stop flag was seen).
    pub fn stopping(&self) -> bool {
        self.stop.load(Relaxed)
    }
}

impl Drop for Source<'_> {
    /// A dropped source is a measuring thread that left its loop.
    fn drop(&mut self) {
        self.live.done.store(true, Relaxed);
    }
}

/// Run the main side of `spec` (one ring per thread of `spec`, sized as
/// `run` sizes them) on the calling thread, with `obs` as the observer,
/// while `produce` (on a thread of its own) drives one [`Source`] per
/// thread of `spec`. The run ends when every source is dropped, or when
/// `stop` is set or `obs` says stop (then [`Source::stopping`] turns
/// true). Nothing is pinned, locked or raised in priority.
pub fn collect<F>(
    spec: &MeasureSpec,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
    produce: F,
) -> anyhow::Result<Measurement>
where
    F: for<'a> FnOnce(Vec<Source<'a>>) + Send,
{
    let n = spec.threads.len();
    let lives: Vec<Live> = (0..n).map(|_| Live::default()).collect();
    let inner_stop = AtomicBool::new(false);
    let trace_stopped = AtomicBool::new(false);
    let (producers, rings) = rings(spec, false);
    let hists: Vec<ThreadHistograms> = (0..n)
        .map(|_| ThreadHistograms::new(spec.histo_size_ns, spec.resolution_ns))
        .collect();
    let started_at = crate::rfc3339_utc(std::time::SystemTime::now());
    let warnings = Vec::new();
    let ready = spec
        .threads
        .iter()
        .enumerate()
        .map(|(index, t)| {
            Some(Ready {
                index,
                tid: 0,
                cpu: t.cpu,
                policy: t.policy,
                refused: None,
                fatal: None,
            })
        })
        .collect();
    let t0 = now_ns();
    let sources: Vec<Source<'_>> = producers
        .into_iter()
        .zip(&lives)
        .map(|(tx, live)| Source {
            tx,
            live,
            acc: Accum::default(),
            stop: &inner_stop,
        })
        .collect();
    let ended = std::thread::scope(|scope| -> anyhow::Result<Ended> {
        let producer = std::thread::Builder::new()
            .name("rtshield-emul".into())
            .spawn_scoped(scope, move || produce(sources))?;
        let mut main = MainSide {
            spec,
            tids: vec![0; n],
            ready,
            lives: &lives,
            rings,
            hists,
            ival: vec![IvalAcc::default(); n],
            mark_rx: Vec::new(),
            marks: Vec::<SpikeMark>::with_capacity(MARK_RING),
            inner_stop: &inner_stop,
            trace_stopped: &trace_stopped,
            t0,
            // No `--split`: emulated samples are never paired with a trace.
            times: None,
        };
        let snap = SnapshotInfo {
            started_at: &started_at,
            warnings: &warnings,
            dma: None,
            memlocked: false,
            caller_rt_runtime_us: None,
        };
        let end = main.watch(obs, stop, &snap);
        inner_stop.store(true, Relaxed);
        producer
            .join()
            .map_err(|_| anyhow::anyhow!("the emulated threads panicked"))?;
        main.drain();
        main.take_marks(obs);
        let elapsed = (now_ns() - t0) as u64;
        obs.interval(&main.interval_stats(elapsed));
        Ok(Ended {
            ready: main.ready,
            exact: read_live(&lives),
            end: if end == EndReason::Stop && !stop.load(Relaxed) {
                EndReason::Duration
            } else {
                end
            },
            elapsed,
            hists: main.hists,
        })
    })?;
    Ok(ended.measurement(spec, started_at, warnings, None, None, false))
}

/// CPU time of the calling thread, ns (`CLOCK_THREAD_CPUTIME_ID`): what
/// the bench charges to the main side.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoObserver;

    /// Issue 26, the scaled-up path: 32 emulated measuring threads (4 OS
    /// threads of 8 rings each, handing samples over as fast as they can,
    /// far above the 320 000 samples/s of 32 threads at 100 µs) while the
    /// main side drains every 20 ms and calls the observer: every sample
    /// reaches its thread's histograms, none is lost, the exact figures and
    /// the histograms agree. Not timed: each ring holds 100 000 samples and
    /// each thread hands over 20 000, so no scheduling can overflow one.
    #[test]
    fn thirty_two_emulated_threads_lose_no_sample_through_the_main_side() {
        const N: u32 = 32;
        const K: u64 = 20_000;
        let cpus: Vec<u32> = (0..N).collect();
        let spec = MeasureSpec::new(&cpus, 100_000);
        let stop = AtomicBool::new(false);
        let m = collect(&spec, &stop, &mut NoObserver, |mut sources| {
            std::thread::scope(|s| {
                while !sources.is_empty() {
                    let rest = sources.split_off(8.min(sources.len()));
                    let mut mine = std::mem::replace(&mut sources, rest);
                    s.spawn(move || {
                        for k in 0..K {
                            for (i, src) in mine.iter_mut().enumerate() {
                                // A 2 ms wake-up now and then: 19 missed periods.
                                let v = if k % 5000 == 4999 {
                                    2_000_000
                                } else {
                                    1_000 + i as i64
                                };
                                src.emit(v, if v > 100_000 { 19 } else { 0 });
                            }
                        }
                    });
                }
            });
        })
        .unwrap();
        assert_eq!(m.threads.len(), N as usize);
        for (i, t) in m.threads.iter().enumerate() {
            assert_eq!(t.exact.lat.count, K, "thread {i}");
            assert_eq!(t.exact.lost, 0, "thread {i}");
            assert_eq!(
                t.hist.samples, K,
                "thread {i}: every sample in the histograms"
            );
            assert_eq!(t.hist.overflow, K / 5000, "thread {i}: the 2 ms samples");
            assert_eq!(t.hist.max_ns, 2_000_000, "thread {i}");
            assert_eq!(
                t.hist.hdr.len(),
                K,
                "thread {i}: the percentiles see them all"
            );
            assert_eq!(t.hist.corrected_samples, K + 19 * (K / 5000), "thread {i}");
            assert_eq!(
                t.exact.missed, 0,
                "emit does not count overruns, the loop does"
            );
        }
        assert!(
            m.warnings.iter().all(|w| !w.contains("lost")),
            "{:?}",
            m.warnings
        );
    }
}
