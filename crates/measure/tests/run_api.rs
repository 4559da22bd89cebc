//! `rtshield_measure::run` as the other commands use it: SCHED_OTHER,
//! unpinned, so it runs anywhere without privileges.

use rtshield_measure::*;
use rtshield_sys::sched::Policy;
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
    snapshots: Vec<(bool, String, u64)>,
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
        self.snapshots.is_empty()
    }
    fn snapshot(&mut self, m: &Measurement) {
        let r = m.to_result(&ResultContext::default());
        self.snapshots
            .push((m.partial, r.end_reason.clone(), r.threads[0].samples));
    }
}

#[test]
fn runs_to_the_sample_count_with_snapshots() {
    let stop = AtomicBool::new(false);
    let mut obs = Recorder::default();
    let m = run(&spec(150), &stop, &mut obs).unwrap();
    assert_eq!(m.end, EndReason::Samples);
    assert!(!m.partial);
    let t = &m.threads[0];
    assert_eq!(t.exact.count, 150);
    assert_eq!(t.policy, Policy::Other);
    assert!(t.fallback.is_none());
    assert_eq!(t.hist.samples + t.exact.lost, 150);
    // A snapshot mid-run is a complete, smaller result.
    assert_eq!(obs.snapshots.len(), 1);
    let (partial, end, samples) = &obs.snapshots[0];
    assert!(*partial);
    assert_eq!(end, "running");
    assert!(*samples <= 150);
    let r = m.to_result(&ResultContext {
        label: Some("x".into()),
        ..Default::default()
    });
    assert_eq!(r.end_reason, "samples");
    assert_eq!(r.threads[0].samples, 150);
    assert_eq!(r.settings.histo_buckets, 1001);
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
    assert!(m.threads[0].exact.count < 100_000);
}

#[test]
fn stop_flag_ends_the_run() {
    let stop = AtomicBool::new(true);
    let m = run(&spec(100_000), &stop, &mut NoObserver).unwrap();
    assert_eq!(m.end, EndReason::Stop);
    assert!(m.threads[0].exact.count < 100_000);
}

#[test]
fn bad_specs_are_input_errors() {
    let stop = AtomicBool::new(false);
    let mut s = spec(10);
    s.threads[0].period_ns = 0;
    let e = run(&s, &stop, &mut NoObserver).unwrap_err();
    assert!(e.is::<rtshield_sys::InputError>(), "{e}");
    assert!(e.to_string().contains("period must be > 0"));

    let mut s = spec(10);
    s.threads[0].policy = Policy::Fifo;
    s.threads[0].priority = 100;
    let e = run(&s, &stop, &mut NoObserver).unwrap_err();
    assert!(e.to_string().contains("priority 100 out of range"), "{e}");

    let mut s = spec(10);
    s.threads[0].cpu = Some(4000);
    let e = run(&s, &stop, &mut NoObserver).unwrap_err();
    assert!(e.to_string().contains("CPU 4000 is not online or not allowed"), "{e}");

    let mut s = spec(10);
    s.threads.clear();
    assert!(run(&s, &stop, &mut NoObserver).is_err());
}
