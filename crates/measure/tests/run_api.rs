//! `rtshield_measure::run` as the other commands use it: SCHED_OTHER,
//! unpinned, so it runs anywhere without privileges.

use rtshield_measure::*;
use rtshield_vocab::Policy;
use std::sync::atomic::AtomicBool;

fn spec(samples: u64) -> MeasureSpec {
    let mut s = MeasureSpec::new(&[0], 1_000_000);
    for t in &mut s.threads {
        t.cpu = None;
        t.policy = Policy::Other;
        t.priority = 0;
    }
    s.samples = Some(samples);
    s.stats_period_ns = 20_000_000;
    s.memlock = false;
    s.cpu_dma_latency = false;
    s
}

#[derive(Default)]
struct Recorder {
    calls: u32,
    /// (partial, end reason, samples, samples the histogram holds + lost)
    snapshots: Vec<(bool, String, u64, u64)>,
    stop_after: Option<u32>,
}

impl Observer for Recorder {
    fn interval(&mut self, _s: &IntervalStats) -> bool {
        self.calls += 1;
        match self.stop_after {
            Some(n) => self.calls < n,
            None => true,
        }
    }
    fn wants_snapshot(&mut self, _s: &IntervalStats) -> bool {
        self.snapshots.len() < 10
    }
    fn snapshot(&mut self, m: &Measurement) {
        let r = m.to_result(&ResultContext::default());
        let t = &r.threads[0];
        let h = t
            .histogram
            .as_ref()
            .expect("a measured thread has a histogram");
        let held = h.counts.iter().map(|c| c[1]).sum::<u64>() + h.overflow + h.underflow;
        let n = |v: Option<u64>| v.expect("a measured thread counts it");
        self.snapshots.push((
            m.partial,
            r.end_reason.clone().unwrap_or_default(),
            n(t.samples),
            held + n(t.lost),
        ));
    }
}

#[test]
fn runs_to_the_sample_count_with_snapshots() {
    let stop = AtomicBool::new(false);
    let mut obs = Recorder::default();
    // 0.5 s at 1 ms against a 20 ms stats period: even a main thread
    // starved for a while by a loaded machine gets one period in.
    let m = run(&spec(500), &stop, &mut obs).unwrap();
    assert_eq!(m.end, EndReason::Samples);
    assert!(!m.partial);
    let t = &m.threads[0];
    assert_eq!(t.exact.lat.count, 500);
    assert_eq!(t.policy, Policy::Other);
    assert!(t.fallback.is_none());
    assert_eq!(t.hist.samples + t.exact.lost, 500);
    // A snapshot mid-run is a complete, smaller result.
    assert!(!obs.snapshots.is_empty());
    for (partial, end, samples, held) in &obs.snapshots {
        assert!(*partial);
        assert_eq!(end, "running");
        assert!(*samples <= 500);
        // A checkpoint's histogram holds exactly the samples it counts,
        // even while the measuring thread keeps pushing.
        assert_eq!(held, samples, "{:?}", obs.snapshots);
    }
    let r = m.to_result(&ResultContext {
        label: Some("x".into()),
        ..Default::default()
    });
    assert_eq!(r.end_reason.as_deref(), Some("samples"));
    assert_eq!(r.threads[0].samples, Some(500));
    assert_eq!(r.settings.histo_buckets, Some(1001));
    assert_eq!(r.threads[0].requested_policy, None);
}

#[test]
fn observer_can_stop_the_run() {
    let stop = AtomicBool::new(false);
    let mut obs = Recorder {
        stop_after: Some(1),
        ..Default::default()
    };
    let m = run(&spec(100_000), &stop, &mut obs).unwrap();
    assert_eq!(m.end, EndReason::Stop);
    assert!(m.threads[0].exact.lat.count < 100_000);
}

#[test]
fn stop_flag_ends_the_run() {
    let stop = AtomicBool::new(true);
    let m = run(&spec(100_000), &stop, &mut NoObserver).unwrap();
    assert_eq!(m.end, EndReason::Stop);
    assert!(m.threads[0].exact.lat.count < 100_000);
}

#[test]
fn bad_specs_are_input_errors() {
    let stop = AtomicBool::new(false);
    let mut s = spec(10);
    s.threads[0].period_ns = 0;
    let e = run(&s, &stop, &mut NoObserver).unwrap_err();
    assert!(e.is::<rtshield_vocab::InputError>(), "{e}");
    assert!(e.to_string().contains("period must be > 0"));

    let mut s = spec(10);
    s.threads[0].policy = Policy::Fifo;
    s.threads[0].priority = 100;
    let e = run(&s, &stop, &mut NoObserver).unwrap_err();
    assert!(e.to_string().contains("priority 100 out of range"), "{e}");

    let mut s = spec(10);
    s.threads[0].cpu = Some(4000);
    let e = run(&s, &stop, &mut NoObserver).unwrap_err();
    assert!(
        e.to_string()
            .contains("CPU 4000 is not online or not allowed"),
        "{e}"
    );

    let mut s = spec(10);
    s.threads.clear();
    assert!(run(&s, &stop, &mut NoObserver).is_err());
}

/// An open descriptor of this process on /dev/cpu_dma_latency.
fn dma_fd_open() -> bool {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .any(|e| {
            std::fs::read_link(e.path())
                .is_ok_and(|t| t == std::path::Path::new("/dev/cpu_dma_latency"))
        })
}

fn locked_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmLck:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// What the main thread (the observer runs on it) looks like mid-run.
#[derive(Default)]
struct MainThreadProbe {
    seen: Vec<(rtshield_vocab::CpuSet, i32, i32, bool)>,
}

impl Observer for MainThreadProbe {
    fn interval(&mut self, _s: &IntervalStats) -> bool {
        let aff = rtshield_sys::get_affinity(0).unwrap();
        // SAFETY: reading the calling thread's policy.
        let pol = unsafe { libc::sched_getscheduler(0) } & !libc::SCHED_RESET_ON_FORK;
        let mut param = libc::sched_param { sched_priority: -1 };
        // SAFETY: param is a valid out-pointer.
        unsafe { libc::sched_getparam(0, &mut param) };
        self.seen
            .push((aff, pol, param.sched_priority, dma_fd_open()));
        true
    }
}

#[test]
fn main_thread_is_placed_for_the_run_then_everything_is_put_back() {
    use rtshield_testkit::{require, require_root};
    if !require_root("FIFO measuring thread, mlockall and /dev/cpu_dma_latency") {
        return;
    }
    let online = rtshield_sys::get_affinity(0).unwrap();
    if !require(online.len() >= 2, "needs two CPUs") {
        return;
    }
    let cpu = online.last().unwrap();
    // A thread of its own: affinity and policy are per thread, and the
    // other tests run beside this one.
    std::thread::spawn(move || {
        // SAFETY: reading the calling thread's policy.
        let policy_before = unsafe { libc::sched_getscheduler(0) };
        let mut s = MeasureSpec::new(&[cpu], 1_000_000);
        s.threads[0].priority = 10;
        s.samples = Some(300);
        s.stats_period_ns = 20_000_000;
        let mut probe = MainThreadProbe::default();
        let m = run(&s, &AtomicBool::new(false), &mut probe).unwrap();
        assert_eq!(m.threads[0].exact.lat.count, 300);
        assert_eq!(m.threads[0].cpu, Some(cpu));
        assert!(!probe.seen.is_empty());
        for (aff, pol, prio, dma) in &probe.seen {
            // Off the measured CPU, on all the others.
            assert!(!aff.contains(cpu), "main thread on CPU {cpu}: {aff:?}");
            assert_eq!(aff.len(), online.len() - 1);
            // SCHED_FIFO 1 (below the measuring thread) when FIFO is permitted.
            if m.threads[0].policy == Policy::Fifo {
                assert_eq!((*pol, *prio), (libc::SCHED_FIFO, 1));
            }
            assert_eq!(*dma, m.cpu_dma_latency.is_some());
        }
        // Put back: affinity, policy, /dev/cpu_dma_latency closed, memory
        // unlocked.
        assert_eq!(rtshield_sys::get_affinity(0).unwrap(), online);
        assert_eq!(unsafe { libc::sched_getscheduler(0) }, policy_before);
        assert!(!dma_fd_open());
        assert_eq!(locked_kb(), 0);
    })
    .join()
    .unwrap();
}
