//! The collecting side at scale (issue 26), run by `bench/collect-scale.sh`:
//! `rtshield measure`'s main thread (the rings `run` sizes, the 20 ms
//! drain into the histograms, the interval figures, `timeline.csv`, the
//! result files) fed by N emulated measuring threads at N / period
//! samples per second, through the real rings
//! (`rtshield_run::emulated::collect_and_write`).
//!
//! ```text
//! cargo bench -p rtshield-run --bench collect_scale -- \
//!     --threads 128 --period-us 100 --seconds 20 --emulators 1 --out DIR
//! ```
//!
//! Prints one line of `key=value` figures: the samples, the lost ones,
//! the main thread's CPU (steady state between the first and the last
//! stats period, per sample *drained* and as a share of one CPU), the
//! largest backlog seen at a stats period (samples handed over but not
//! yet drained, and as milliseconds of samples), its set-up (ring
//! allocation and touching) and end (last drain, result files) CPU, and
//! the emulating threads' CPU.
//!
//! An emulating thread drives many sources: every millisecond it hands
//! each of its sources the samples of the periods due since the last
//! tick. The main thread drains every 20 ms, so it sees the rate of N
//! real threads; only the producers' pace within 1 ms differs.

use rtshield_measure::emulate::{thread_cpu_ns, Source};
use rtshield_measure::{now_ns, IntervalStats, MeasureSpec, Observer};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

struct Args {
    threads: u32,
    period_ns: u64,
    seconds: u64,
    emulators: usize,
    out: PathBuf,
}

fn args() -> Args {
    let mut a = Args {
        threads: 8,
        period_ns: 100_000,
        seconds: 10,
        emulators: 1,
        out: std::env::temp_dir().join("rtshield-collect-scale"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().expect("a value after the option");
        match k.as_str() {
            "--threads" => a.threads = v().parse().expect("--threads N"),
            "--period-us" => a.period_ns = v().parse::<u64>().expect("--period-us US") * 1000,
            "--seconds" => a.seconds = v().parse().expect("--seconds S"),
            "--emulators" => a.emulators = v().parse().expect("--emulators K"),
            "--out" => a.out = PathBuf::from(v()),
            // `cargo bench` adds --bench.
            _ => {}
        }
    }
    a
}

/// The main thread's CPU and the samples counted at each stats period.
#[derive(Default)]
struct Probe {
    /// (main-thread CPU ns, wall ns, samples drained so far) at each interval.
    points: Vec<(u64, i64, u64)>,
    drained: u64,
    /// Most samples handed over but not yet drained, at a stats period:
    /// the rings' backlog (a stats period follows a drain: about 0 when the
    /// main thread keeps up).
    max_backlog: u64,
}

impl Observer for Probe {
    fn interval(&mut self, s: &IntervalStats) -> bool {
        let handed: u64 = s.threads.iter().map(|t| t.samples).sum();
        self.drained += s.threads.iter().map(|t| t.ival_samples).sum::<u64>();
        self.max_backlog = self.max_backlog.max(handed.saturating_sub(self.drained));
        self.points.push((thread_cpu_ns(), now_ns(), self.drained));
        true
    }
}

/// A latency as a busy machine shows them: 2-20 µs, one in 10^5 a
/// 200 µs spike, one in 10^6 a 2 ms one (outside the 1 ms histogram).
fn latency(x: &mut u64) -> i64 {
    // xorshift64
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    match *x % 1_000_000 {
        0 => 2_000_000,
        1..=9 => 200_000,
        r => 2_000 + (r % 18_000) as i64,
    }
}

/// Drive `sources` at one sample per period each until `end` (wall ns).
fn emulate(mut sources: Vec<Source<'_>>, period: i64, start: i64, end: i64, cpu: &AtomicU64) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ sources.len() as u64;
    // Periods consumed per source (samples and the periods they skipped).
    let mut periods = vec![0i64; sources.len()];
    let mut tick = start;
    while tick < end && !sources.iter().any(|s| s.stopping()) {
        tick += 1_000_000;
        let now = now_ns();
        if tick > now {
            std::thread::sleep(Duration::from_nanos((tick - now) as u64));
        }
        let due = (tick.min(end) - start) / period;
        for (s, p) in sources.iter_mut().zip(periods.iter_mut()) {
            while *p < due {
                let v = latency(&mut x);
                let missed = (v / period) as u64;
                s.emit(v, missed);
                *p += 1 + missed as i64;
            }
        }
    }
    cpu.fetch_add(thread_cpu_ns(), Relaxed);
}

fn main() -> anyhow::Result<()> {
    let a = args();
    let cpus: Vec<u32> = (0..a.threads).collect();
    let mut spec = MeasureSpec::new(&cpus, a.period_ns);
    spec.duration_ns = Some(a.seconds * 1_000_000_000);
    let stop = AtomicBool::new(false);
    let mut probe = Probe::default();
    let emul_cpu = AtomicU64::new(0);
    let emulators = a.emulators.max(1);
    let period = a.period_ns as i64;
    let cpu0 = thread_cpu_ns();
    let wall0 = now_ns();
    let produce = |sources: Vec<Source<'_>>| {
        let start = now_ns();
        let end = start + (a.seconds * 1_000_000_000) as i64;
        let per = sources.len().div_ceil(emulators);
        let mut groups: Vec<Vec<Source<'_>>> = Vec::new();
        let mut rest = sources;
        while !rest.is_empty() {
            let tail = rest.split_off(per.min(rest.len()));
            groups.push(std::mem::replace(&mut rest, tail));
        }
        std::thread::scope(|s| {
            for g in groups {
                let emul_cpu = &emul_cpu;
                s.spawn(move || emulate(g, period, start, end, emul_cpu));
            }
        });
    };
    let c = rtshield_run::emulated::collect_and_write(&spec, &a.out, &stop, &mut probe, produce)?;
    let cpu_total = thread_cpu_ns() - cpu0;
    let wall_total = now_ns() - wall0;
    let m = &c.measurement;
    let samples: u64 = m.threads.iter().map(|t| t.exact.lat.count).sum();
    let lost: u64 = m.threads.iter().map(|t| t.exact.lost).sum();
    let in_hist: u64 = m.threads.iter().map(|t| t.hist.samples).sum();
    // Steady state: from the first stats period to the last full one
    // (the very last call follows the final drain).
    let pts = &probe.points;
    assert!(
        pts.len() >= 3,
        "run for at least 2 stats periods (--seconds 2)"
    );
    let (first, last) = (pts[0], pts[pts.len() - 2]);
    let cpu = last.0 - first.0;
    let wall = (last.1 - first.1).max(1) as u64;
    let n = (last.2 - first.2).max(1);
    let (setup_cpu, end_cpu) = (first.0 - cpu0, cpu_total - (last.0 - cpu0));
    println!(
        "threads={} period_us={} rate_per_s={} samples={} in_histograms={} lost={} \
         main_cpu_pct={:.2} main_ns_per_sample={:.1} main_start_cpu_ms={:.0} main_end_cpu_ms={:.0} \
         main_cpu_total_ms={:.0} wall_ms={:.0} emulators={} emulators_cpu_pct={:.1} files_missing={} \
         max_backlog={} max_backlog_ms={:.0}",
        a.threads,
        a.period_ns / 1000,
        a.threads as u64 * 1_000_000_000 / a.period_ns,
        samples,
        in_hist,
        lost,
        cpu as f64 * 100.0 / wall as f64,
        cpu as f64 / n as f64,
        setup_cpu as f64 / 1e6,
        end_cpu as f64 / 1e6,
        cpu_total as f64 / 1e6,
        wall_total as f64 / 1e6,
        emulators,
        emul_cpu.load(Relaxed) as f64 * 100.0 / wall_total as f64,
        c.missing.len(),
        probe.max_backlog,
        probe.max_backlog as f64 * 1e3 * a.period_ns as f64 / 1e9 / a.threads as f64,
    );
    Ok(())
}
