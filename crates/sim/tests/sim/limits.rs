//! The simulator's ranges (docs/ranges.md): every configuration value out of
//! range is refused naming its option, and no scenario makes it run longer
//! than 1 h of simulated time (before these checks, `--start-jitter 106752d`
//! spun for hours and `loop = 18446744073709551615` overflowed).
use rtshield_scenario::parse_str;
use rtshield_sim::{simulate, BalancerKind, SimConfig};

fn refused(c: &SimConfig, needle: &str) {
    let e = c.validate().expect_err(needle).to_string();
    assert!(e.contains(needle), "{needle} not named: {e}");
}

type Setter = Box<dyn Fn(&mut SimConfig)>;

#[test]
fn configuration_values_out_of_range_name_their_option() {
    let base = SimConfig::new(4, BalancerKind::Artis);
    base.validate().unwrap();
    let cases: Vec<(&str, Setter)> = vec![
        ("--artis-k 0", Box::new(|c| c.artis_k = 0)),
        ("--artis-k 101", Box::new(|c| c.artis_k = 101)),
        ("--tick", Box::new(|c| c.tick_ns = 1)),
        ("--tick", Box::new(|c| c.tick_ns = 1_000_000_000)),
        ("--duration", Box::new(|c| c.duration_ns = Some(0))),
        ("--duration", Box::new(|c| c.duration_ns = Some(u64::MAX))),
        ("--start-jitter", Box::new(|c| c.start_jitter_ns = u64::MAX)),
        (
            "--migration-cost",
            Box::new(|c| c.migration_cost_ns = 2_000_000_000),
        ),
        ("--lock-cost", Box::new(|c| c.lock_cost_ns = 2_000_000_000)),
        ("--fifo-cost", Box::new(|c| c.fifo_cost_ns = 2_000_000_000)),
        ("--mask-len", Box::new(|c| c.mask_len_ns = 2_000_000_000)),
        ("--artis-c", Box::new(|c| c.artis_c_ns = 2_000_000_000)),
        ("--cache-decay", Box::new(|c| c.cache_decay_ns = u64::MAX)),
        ("--loops-per-us", Box::new(|c| c.loops_per_us = 1e308)),
        ("--loops-per-us", Box::new(|c| c.loops_per_us = 0.0)),
        ("--cpus", Box::new(|c| c.ncpus = 0)),
        ("--max-events 0", Box::new(|c| c.max_events = 0)),
        ("--max-events 999", Box::new(|c| c.max_events = 999)),
        ("--max-events", Box::new(|c| c.max_events = u64::MAX)),
    ];
    for (needle, set) in cases {
        let mut c = base.clone();
        set(&mut c);
        refused(&c, needle);
    }
}

/// A task that sleeps an hour a thousand times stops at the 1 h limit,
/// reported unfinished with a warning, instead of simulating 41 days.
#[test]
fn simulated_time_stops_at_one_hour() {
    let sc = parse_str("{\nloop = 1000\nsloop = 1\nsleep = 1h\n}\n", "s.scn").unwrap();
    let mut c = SimConfig::new(1, BalancerKind::Linux26);
    c.tick_ns = 100_000_000;
    let out = simulate(&sc, &c).unwrap();
    assert_eq!(out.report.run.makespan_ns, 3_600_000_000_000);
    assert_eq!(out.report.run.unfinished, 1);
    assert!(
        out.report
            .warnings
            .iter()
            .any(|w| w.contains("limit of 1h")),
        "{:?}",
        out.report.warnings
    );
}

/// Work beyond 1 h, and sleeps or masking calls closer than 1 µs of work,
/// are refused with the task's position.
#[test]
fn task_work_out_of_range_is_refused_with_its_line() {
    let c = SimConfig::new(2, BalancerKind::Linux26);
    for (text, needle) in [
        (
            "{\nloop = 1000000000000\n}\n",
            "t.scn:1:1: task 'other.1': loop",
        ),
        (
            "loops_per_us = 1000\n{\nloop = 1000000\nirq_period = 1\n}\n",
            "t.scn:2:1: task 'other.1': irq_period",
        ),
        (
            "loops_per_us = 1000\n{\nloop = 1000000\nsloop = 10\nsleep = 1ms\n}\n",
            "t.scn:2:1: task 'other.1': sloop",
        ),
    ] {
        let sc = parse_str(text, "t.scn").unwrap();
        let e = simulate(&sc, &c).expect_err(needle).to_string();
        assert!(e.starts_with(needle), "{e}");
    }
}

/// The event limit is `--max-events`: a run needing more is refused with an
/// error naming the option (it used to be a fixed 50 million, which stopped one
/// simulated hour of 128 CPUs x 1000 tasks after about 20 minutes), and the
/// same run within a larger limit completes.
#[test]
fn the_event_limit_is_an_option_and_its_error_names_it() {
    let sc = parse_str("{\nloop = 100000\nsloop = 1\nsleep = 100\n}\n", "s.scn").unwrap();
    let mut c = SimConfig::new(1, BalancerKind::Linux26);
    c.duration_ns = Some(1_000_000_000);
    assert_eq!(c.max_events, rtshield_sim::DEFAULT_MAX_EVENTS);
    c.max_events = 1_000;
    let e = simulate(&sc, &c).expect_err("over the limit").to_string();
    assert!(
        e.contains("--max-events") && e.contains("1000 events"),
        "{e}"
    );
    c.max_events = 1_000_000;
    let out = simulate(&sc, &c).unwrap();
    assert!(out.extra.events > 1_000 && out.extra.events <= 1_000_000);
}

/// Adversary round 5, F16: `simulate --trace` (and `--gantt`) kept every
/// event in memory and the default `--max-events` (500 million) was its
/// only bound: a 90-byte scenario reached ~60-75 GB. A run that keeps its
/// events is refused past `kept_events_max` (5 million in the binary,
/// docs/ranges.md), naming both options; the same run without them goes
/// on to `--max-events`.
#[test]
fn f16_a_run_that_keeps_its_events_is_bounded_on_its_own() {
    assert_eq!(
        SimConfig::new(1, BalancerKind::Linux26).kept_events_max,
        rtshield_limits::SIM_MAX_TRACE_EVENTS
    );
    let s = parse_str(
        "{\n  name = a\n  sched = other\n  loop = 300000000\n  sloop = 1\n  sleep = 1us\n  count = 8\n}\n",
        "pp.scn",
    )
    .unwrap();
    for (trace, gantt) in [(true, false), (false, true)] {
        let mut c = SimConfig::new(2, BalancerKind::Linux26);
        c.duration_ns = Some(50_000_000);
        c.record_trace = trace;
        c.record_segments = gantt;
        c.kept_events_max = 2_000;
        let e = simulate(&s, &c).map(|_| ()).unwrap_err().to_string();
        assert!(
            e.contains("more than 2000 events") && e.contains("--trace"),
            "{e}"
        );
        c.record_trace = false;
        c.record_segments = false;
        simulate(&s, &c).unwrap();
    }
}
