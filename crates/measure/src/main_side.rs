//! The main thread's side of a measurement: what the process holds for
//! the run ([`Setup`]), the sample rings, and the loop that drains them
//! into the histograms every 20 ms and tells the observer every stats
//! period ([`MainSide`]), with consistent mid-run snapshots (checkpoints).
//! `engine` starts the measuring threads and hands their rings to it.

use crate::engine::{thread_results, AffinityGuard, Ready, DRAIN_EVERY};
use crate::hotloop::{now_ns, Live, Sample};
use crate::spike::SpikeMark;
use crate::stats::{Accum, ThreadHistograms};
use crate::{
    rt, signals, EndReason, IntervalStats, MeasureSpec, Measurement, Observer, SampleTime,
    ThreadStats,
};
use rtshield_sys::set_affinity;
use rtshield_vocab::CpuSet;
use std::sync::atomic::{
    AtomicBool,
    Ordering::{Acquire, Relaxed},
};
use std::time::Duration;

/// What the process holds for a run, given back when dropped: the main
/// thread off the measured CPUs, locked memory, `/dev/cpu_dma_latency`,
/// the main thread's raised priority.
pub(crate) struct Setup {
    _affinity: AffinityGuard,
    pub(crate) memlock: Option<rt::MemLock>,
    pub(crate) dma: Option<rt::DmaLatency>,
    _main_prio: Option<rt::RaisedPriority>,
}

impl Setup {
    /// Take what `spec` asks for; what is refused becomes a warning.
    pub(crate) fn hold(spec: &MeasureSpec, online: &CpuSet, warnings: &mut Vec<String>) -> Setup {
        // The main thread stays off the measured CPUs when another CPU exists.
        let measured: CpuSet = spec.threads.iter().filter_map(|t| t.cpu).collect();
        let housekeeping = online.difference(&measured);
        let affinity = if !measured.is_empty() && !housekeeping.is_empty() {
            let g = AffinityGuard(Some(online.clone()));
            if let Err(e) = set_affinity(0, &housekeeping) {
                warnings.push(format!(
                    "could not keep the main thread off the measured CPUs: {e}"
                ));
            }
            g
        } else {
            AffinityGuard(None)
        };
        let memlock = if spec.memlock {
            match rt::MemLock::lock() {
                Ok(m) => Some(m),
                Err(e) => {
                    warnings.push(format!(
                        "mlockall refused ({e}): memory is not locked, page faults may add latency"
                    ));
                    None
                }
            }
        } else {
            None
        };
        let dma = if spec.cpu_dma_latency {
            match rt::DmaLatency::hold(0) {
                Ok(d) => Some(d),
                Err(e) => {
                    warnings.push(format!(
                        "could not hold {} at 0 ({e}): CPUs may enter deep idle states",
                        rt::DmaLatency::PATH
                    ));
                    None
                }
            }
        } else {
            None
        };
        // Keep the ring drain ahead of a CPU load on the housekeeping CPUs,
        // below every measuring thread (only when they are real-time).
        let min_rt = spec
            .threads
            .iter()
            .filter(|t| t.policy.is_rt())
            .map(|t| t.priority)
            .min();
        let main_prio = match min_rt {
            Some(p) if p > 1 => rt::RaisedPriority::raise(1).ok(),
            _ => None,
        };
        Setup {
            _affinity: affinity,
            memlock,
            dma,
            _main_prio: main_prio,
        }
    }
}

/// One sample ring per thread: room for 10 s of samples (the main thread
/// drains every 20 ms; 10 s covers a main thread starved by a load), 1.5
/// MiB to 24 MiB per thread (24-byte samples). Not locked memory: every slot touched now.
pub(crate) fn rings(
    spec: &MeasureSpec,
    memlocked: bool,
) -> (Vec<rtrb::Producer<Sample>>, Vec<rtrb::Consumer<Sample>>) {
    let mut rings = Vec::with_capacity(spec.threads.len());
    let mut producers = Vec::with_capacity(spec.threads.len());
    for t in &spec.threads {
        let per_s = 1_000_000_000 / t.period_ns.max(1);
        let (mut p, mut c) =
            rtrb::RingBuffer::<Sample>::new((per_s * 10).clamp(1 << 16, 1 << 20) as usize);
        if !memlocked {
            // Not locked (so not populated by MCL_FUTURE): touch every slot
            // now, or the loop's first pass takes a page fault every 256
            // samples.
            for _ in 0..p.buffer().capacity() {
                let _ = p.push(Sample::default());
                let _ = c.pop();
            }
        }
        producers.push(p);
        rings.push(c);
    }
    (producers, rings)
}

/// What a mid-run snapshot adds to the main side's figures.
pub(crate) struct SnapshotInfo<'a> {
    pub(crate) started_at: &'a str,
    pub(crate) warnings: &'a [String],
    pub(crate) dma: Option<i32>,
    pub(crate) memlocked: bool,
    pub(crate) caller_rt_runtime_us: Option<i64>,
}

/// The main thread's side of a run: the rings it drains into the
/// histograms, and what it tells the observer.
pub(crate) struct MainSide<'a> {
    pub(crate) spec: &'a MeasureSpec,
    pub(crate) ready: Vec<Option<Ready>>,
    pub(crate) tids: Vec<i32>,
    pub(crate) lives: &'a [Live],
    pub(crate) rings: Vec<rtrb::Consumer<Sample>>,
    pub(crate) hists: Vec<ThreadHistograms>,
    pub(crate) ival: Vec<IvalAcc>,
    pub(crate) mark_rx: Vec<rtrb::Consumer<SpikeMark>>,
    pub(crate) marks: Vec<SpikeMark>,
    /// `--split`: per thread, the times of the samples drained since the
    /// observer last had them (`None` without `--split`).
    pub(crate) times: Option<Vec<Vec<SampleTime>>>,
    pub(crate) inner_stop: &'a AtomicBool,
    pub(crate) trace_stopped: &'a AtomicBool,
    pub(crate) t0: i64,
}

impl MainSide<'_> {
    /// Drain every 20 ms and call `obs` every stats period until the
    /// threads are done, `stop` is set, the observer or `--trace-stop`
    /// stops the run. Returns why it ended so far ([`EndReason::Stop`]
    /// when the threads ended by themselves: decided by the caller).
    pub(crate) fn watch(
        &mut self,
        obs: &mut dyn Observer,
        stop: &AtomicBool,
        snap: &SnapshotInfo,
    ) -> EndReason {
        let mut last_report = now_ns();
        loop {
            std::thread::sleep(DRAIN_EVERY);
            self.drain();
            self.take_marks(obs);
            if self.trace_stopped.load(Relaxed) {
                // --trace-stop: a thread stopped the trace and the run.
                self.inner_stop.store(true, Relaxed);
                return EndReason::Stop;
            }
            let all_done = self.lives.iter().all(|l| l.done.load(Relaxed));
            if stop.load(Relaxed) {
                self.inner_stop.store(true, Relaxed);
                return signals::signal_received().map_or(EndReason::Stop, EndReason::Signal);
            }
            let now = now_ns();
            if all_done {
                return EndReason::Stop;
            }
            let cut = obs.cut_due((now - self.t0) as u64);
            if cut || (now - last_report) as u64 >= self.spec.stats_period_ns {
                last_report = now;
                let s = self.interval_stats((now - self.t0) as u64);
                if !obs.interval(&s) {
                    self.inner_stop.store(true, Relaxed);
                    return EndReason::Stop;
                }
                if obs.wants_snapshot(&s) {
                    obs.snapshot(&self.snapshot((now - self.t0) as u64, snap));
                }
            }
        }
    }

    /// Every ring into its thread's histograms.
    pub(crate) fn drain(&mut self) {
        drain(
            &mut self.rings,
            &mut self.hists,
            &mut self.ival,
            self.times.as_deref_mut(),
            self.spec,
        );
    }

    /// The spike marks queued since the last call, to the observer.
    pub(crate) fn take_marks(&mut self, obs: &mut dyn Observer) {
        self.marks.clear();
        for c in self.mark_rx.iter_mut() {
            while let Ok(m) = c.pop() {
                self.marks.push(m);
            }
        }
        let times = self.times.as_deref().unwrap_or(&[]);
        obs.drained(&self.marks, &self.tids, times);
        for t in self.times.iter_mut().flatten() {
            t.clear();
        }
    }

    /// The figures of this stats period.
    pub(crate) fn interval_stats(&mut self, elapsed: u64) -> IntervalStats {
        interval_stats(self.spec, &self.ready, self.lives, &mut self.ival, elapsed)
    }

    /// The run so far, figures and histograms agreeing (a checkpoint).
    pub(crate) fn snapshot(&mut self, elapsed: u64, info: &SnapshotInfo) -> Measurement {
        let exact = consistent_figures(
            self.lives,
            &mut self.rings,
            &mut self.hists,
            &mut self.ival,
            self.times.as_deref_mut(),
            self.spec,
        );
        // The figures were read after `elapsed` (and the read may wait for
        // the rings): samples woken since are in them. The snapshot's time
        // must cover every period they account for, or a run resumed from
        // this checkpoint measures those periods again (a loaded machine
        // delayed the main thread past the +2 periods of rounding that
        // `run_longrun::kill_9_then_resume_counts_no_sample_twice` allows).
        let elapsed = elapsed.max((now_ns() - self.t0).max(0) as u64);
        Snapshot {
            spec: self.spec,
            ready: &self.ready,
            exact,
            hists: &self.hists,
            started_at: info.started_at,
            elapsed,
            warnings: info.warnings,
            dma: info.dma,
            memlocked: info.memlocked,
        }
        .measurement(info.caller_rt_runtime_us)
    }
}

/// What a mid-run snapshot is made of (all owned by `run`).
struct Snapshot<'a> {
    spec: &'a MeasureSpec,
    ready: &'a [Option<Ready>],
    /// The measuring threads' figures, matching `hists` sample for sample.
    exact: Vec<Accum>,
    hists: &'a [ThreadHistograms],
    started_at: &'a str,
    elapsed: u64,
    warnings: &'a [String],
    dma: Option<i32>,
    memlocked: bool,
}

impl Snapshot<'_> {
    fn measurement(&self, caller_rt_runtime_us: Option<i64>) -> Measurement {
        let exact = self.exact.clone();
        let mut warnings = self.warnings.to_vec();
        let threads = thread_results(
            self.spec,
            self.ready,
            exact,
            self.hists.to_vec(),
            caller_rt_runtime_us,
            &mut warnings,
        );
        Measurement {
            spec: self.spec.clone(),
            started_at: self.started_at.to_string(),
            elapsed_ns: self.elapsed,
            end: EndReason::Running,
            threads,
            warnings,
            cpu_dma_latency: self.dma,
            memlocked: self.memlocked,
            partial: true,
            trace: None,
        }
    }
}

/// Interval figures accumulated on the main thread from the rings.
pub(crate) type IvalAcc = rtshield_results::MinMaxSum;

/// The live atomics of every thread, `count` first (Acquire): the other
/// figures are at least that fresh.
pub(crate) fn read_live(lives: &[Live]) -> Vec<Accum> {
    lives
        .iter()
        .map(|l| Accum {
            lat: rtshield_results::MinMaxSum {
                count: l.count.load(Acquire),
                min: l.min.load(Relaxed),
                max: l.max.load(Relaxed),
                sum: l.sum.load(Relaxed) as i128,
            },
            cur: l.cur.load(Relaxed),
            overruns: l.overruns.load(Relaxed),
            missed: l.missed.load(Relaxed),
            lost: l.lost.load(Relaxed),
            spikes: 0,
        })
        .collect()
}

/// Figures and histograms that agree for a checkpoint: read the figures,
/// then take from each ring exactly the samples they count (a sample is
/// pushed before its count is published, so they are there). The drain
/// may also have run ahead of a count not yet published: then read again,
/// a few microseconds later (bounded; the measuring thread publishes right
/// after it pushes).
fn consistent_figures(
    lives: &[Live],
    rings: &mut [rtrb::Consumer<Sample>],
    hists: &mut [ThreadHistograms],
    ival: &mut [IvalAcc],
    mut times: Option<&mut [Vec<SampleTime>]>,
    spec: &MeasureSpec,
) -> Vec<Accum> {
    let mut exact = read_live(lives);
    for _ in 0..200 {
        for (i, c) in rings.iter_mut().enumerate() {
            let want = exact[i].lat.count.saturating_sub(exact[i].lost);
            let k = want.saturating_sub(hists[i].samples).min(c.slots() as u64) as usize;
            let to = Taken {
                hist: &mut hists[i],
                ival: &mut ival[i],
                times: times.as_deref_mut().map(|t| &mut t[i]),
            };
            take(c, k, to, spec, i);
        }
        let agree = exact
            .iter()
            .zip(hists.iter())
            .all(|(a, h)| a.lat.count.saturating_sub(a.lost) == h.samples);
        if agree {
            break;
        }
        std::thread::sleep(Duration::from_micros(50));
        exact = read_live(lives);
    }
    exact
}

/// Where one thread's samples go when taken from its ring.
struct Taken<'a> {
    hist: &'a mut ThreadHistograms,
    ival: &'a mut IvalAcc,
    /// `--split`: the samples' times, for the observer.
    times: Option<&'a mut Vec<SampleTime>>,
}

/// Move `k` samples from thread `i`'s ring into its histograms (and their
/// times into `to.times`, when kept).
fn take(c: &mut rtrb::Consumer<Sample>, k: usize, to: Taken, spec: &MeasureSpec, i: usize) {
    if k == 0 {
        return;
    }
    let period = spec.threads[i].period_ns;
    let is_latency = !spec.mode.is_interval();
    let Taken {
        hist,
        ival,
        mut times,
    } = to;
    if let Ok(chunk) = c.read_chunk(k) {
        let (a, b) = chunk.as_slices();
        for s in a.iter().chain(b) {
            hist.record(s.value, s.missed, period);
            ival.add(s.value);
            if let Some(t) = times.as_deref_mut() {
                t.push(SampleTime {
                    expected_ns: s.expected,
                    latency_ns: is_latency.then_some(s.value),
                });
            }
        }
        chunk.commit_all();
    }
}

fn drain(
    rings: &mut [rtrb::Consumer<Sample>],
    hists: &mut [ThreadHistograms],
    ival: &mut [IvalAcc],
    mut times: Option<&mut [Vec<SampleTime>]>,
    spec: &MeasureSpec,
) {
    for (i, c) in rings.iter_mut().enumerate() {
        let k = c.slots();
        let to = Taken {
            hist: &mut hists[i],
            ival: &mut ival[i],
            times: times.as_deref_mut().map(|t| &mut t[i]),
        };
        take(c, k, to, spec, i);
    }
}

fn interval_stats(
    spec: &MeasureSpec,
    ready: &[Option<Ready>],
    lives: &[Live],
    ival: &mut [IvalAcc],
    elapsed: u64,
) -> IntervalStats {
    let threads = spec
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let l = &lives[i];
            let count = l.count.load(Acquire);
            let v = std::mem::take(&mut ival[i]);
            let r = ready[i].as_ref();
            ThreadStats {
                index: t.index,
                tid: r.map_or(0, |r| r.tid),
                cpu: r.and_then(|r| r.cpu),
                policy: r.map(|r| r.policy),
                samples: count,
                min_ns: if count == 0 { 0 } else { l.min.load(Relaxed) },
                max_ns: if count == 0 { 0 } else { l.max.load(Relaxed) },
                cur_ns: l.cur.load(Relaxed),
                avg_ns: if count == 0 {
                    0.0
                } else {
                    l.sum.load(Relaxed) as f64 / count as f64
                },
                ival_samples: v.count,
                ival_min_ns: v.min().unwrap_or(0),
                ival_max_ns: v.max().unwrap_or(0),
                ival_avg_ns: v.mean().unwrap_or(0.0),
                overruns: l.overruns.load(Relaxed),
                missed_periods: l.missed.load(Relaxed),
                lost: l.lost.load(Relaxed),
                done: l.done.load(Relaxed),
            }
        })
        .collect();
    IntervalStats {
        elapsed_ns: elapsed,
        duration_ns: spec.duration_ns,
        samples_target: spec.samples,
        resolution_ns: spec.resolution_ns,
        mode: Some(spec.mode),
        threads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hotloop::{hand_over, hot_loop, LoopConfig, Waiter};
    use crate::Mode;

    fn loop_cfg(period_ns: u64, samples: u64) -> LoopConfig {
        LoopConfig {
            mode: Mode::Nanosleep,
            period_ns,
            start_ns: now_ns(),
            end_ns: None,
            samples: Some(samples),
        }
    }

    /// Issue 26: the collecting path (N measuring loops, the rings `run`
    /// sizes, the main side's drain) loses no sample when the ring has room,
    /// whatever the interleaving: every sample reaches its thread's histogram
    /// and interval figures once. Not timed: the rings hold 65536+ samples and
    /// each loop takes 2000, so no scheduling delay can make them overflow.
    #[test]
    fn concurrent_threads_and_the_drain_lose_no_sample() {
        const N: usize = 4;
        const K: u64 = 2_000;
        let period = 100_000;
        let cpus: Vec<u32> = (0..N as u32).collect();
        let spec = MeasureSpec::new(&cpus, period);
        let (producers, mut rings) = rings(&spec, true);
        let mut hists: Vec<ThreadHistograms> = (0..N)
            .map(|_| ThreadHistograms::new(spec.histo_size_ns, spec.resolution_ns))
            .collect();
        let mut ival = vec![IvalAcc::default(); N];
        let lives: Vec<Live> = (0..N).map(|_| Live::default()).collect();
        let stop = AtomicBool::new(false);
        let accs: Vec<Accum> = std::thread::scope(|s| {
            let handles: Vec<_> = producers
                .into_iter()
                .zip(&lives)
                .map(|(mut p, live)| {
                    let stop = &stop;
                    s.spawn(move || {
                        hot_loop(&loop_cfg(period, K), &Waiter::Nanosleep, &mut p, live, stop)
                    })
                })
                .collect();
            // Drain while they run, as MainSide::watch does.
            while !handles.iter().all(|h| h.is_finished()) {
                drain(&mut rings, &mut hists, &mut ival, None, &spec);
                std::thread::sleep(Duration::from_millis(1));
            }
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        drain(&mut rings, &mut hists, &mut ival, None, &spec);
        for i in 0..N {
            let a = &accs[i];
            assert_eq!(a.lat.count, K, "thread {i}");
            assert_eq!(a.lost, 0, "thread {i}");
            assert_eq!(
                hists[i].samples, K,
                "thread {i}: every sample in the histogram"
            );
            assert_eq!(ival[i].count, K, "thread {i}");
            assert_eq!(ival[i].sum, a.lat.sum, "thread {i}: the same samples");
            assert_eq!(ival[i].max, a.lat.max, "thread {i}");
            assert_eq!(lives[i].lost.load(Relaxed), 0);
        }
    }

    /// A ring that overflows (nobody drains a 64-slot ring during 200
    /// samples): the loss is counted on the measuring side and published,
    /// the drain finds exactly what fit, and the run's warnings say so.
    #[test]
    fn an_overflowing_ring_counts_and_reports_the_lost_samples() {
        let spec = MeasureSpec::new(&[0], 50_000);
        let (mut p, c) = rtrb::RingBuffer::<Sample>::new(64);
        let mut rings = vec![c];
        let mut hists = vec![ThreadHistograms::new(
            spec.histo_size_ns,
            spec.resolution_ns,
        )];
        let mut ival = vec![IvalAcc::default()];
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let a = hot_loop(
            &loop_cfg(50_000, 200),
            &Waiter::Nanosleep,
            &mut p,
            &live,
            &stop,
        );
        drain(&mut rings, &mut hists, &mut ival, None, &spec);
        assert_eq!(a.lat.count, 200);
        assert_eq!(a.lost, 136);
        assert_eq!(
            live.lost.load(Relaxed),
            136,
            "published for the live display"
        );
        assert_eq!(hists[0].samples, 64);
        assert_eq!(hists[0].samples + a.lost, a.lat.count);
        let ready = vec![Some(Ready {
            index: 0,
            tid: 1,
            cpu: Some(0),
            policy: spec.threads[0].policy,
            refused: None,
            fatal: None,
        })];
        let mut warnings = Vec::new();
        let t = thread_results(&spec, &ready, vec![a], hists, None, &mut warnings);
        assert_eq!(t[0].exact.lost, 136);
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("136 samples") && w.contains("lost")),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_snapshot_s_time_covers_every_sample_in_it() {
        // A checkpoint whose samples outrun its time makes `run --resume`
        // measure those periods twice: the figures are read after the
        // time the caller took, so the snapshot's time is taken after them.
        let spec = MeasureSpec::new(&[0], 1_000_000);
        let (mut producers, rings) = rings(&spec, true);
        let lives = vec![Live::default()];
        let flags = (AtomicBool::new(false), AtomicBool::new(false));
        let t0 = now_ns();
        let mut acc = Accum::default();
        std::thread::sleep(Duration::from_millis(5));
        // A sample woken 5 ms into the run, after the caller's stale time.
        let woke = now_ns();
        hand_over(&mut acc, &mut producers[0], &lives[0], 10_000, 0, woke);
        let mut main = MainSide {
            spec: &spec,
            ready: vec![Some(Ready {
                index: 0,
                tid: 1,
                cpu: Some(0),
                policy: spec.threads[0].policy,
                refused: None,
                fatal: None,
            })],
            tids: vec![1],
            lives: &lives,
            rings,
            hists: vec![ThreadHistograms::new(
                spec.histo_size_ns,
                spec.resolution_ns,
            )],
            ival: vec![IvalAcc::default()],
            mark_rx: Vec::new(),
            marks: Vec::new(),
            times: None,
            inner_stop: &flags.0,
            trace_stopped: &flags.1,
            t0,
        };
        let info = SnapshotInfo {
            started_at: "",
            warnings: &[],
            dma: None,
            memlocked: true,
            caller_rt_runtime_us: None,
        };
        let m = main.snapshot(1_000, &info);
        assert_eq!(main.hists[0].samples, 1, "the sample is in the snapshot");
        assert!(
            m.elapsed_ns >= (woke - t0) as u64,
            "snapshot time {} ns before its sample at {} ns",
            m.elapsed_ns,
            woke - t0
        );
    }
}
