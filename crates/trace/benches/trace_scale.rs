//! Tracing at scale (issue 26), run by `bench/trace-scale.sh`: a
//! synthesized trace of CPUS CPUs, each with one measuring thread waking
//! every PERIOD (6 events per wake-up: the thread arms its timer and
//! switches to idle; the timer expires, wakes the thread, the CPU switches
//! back to it), fed to what `measure --split` and `--trace-on` do with it:
//!
//! - `parse`: every line through `parse_line` (what the `--split` drain
//!   does with `trace_pipe`'s text);
//! - `pair`: what the `--split` drain does every 20 ms: the engine's
//!   samples of that stretch queued to their thread's `Pairer`, the
//!   stretch's records handed out by `PairerSet` (each to the pairers of
//!   its CPU), every sample whose trace is in resolved; and, for
//!   comparison, the same with every record handed to every pairer (what
//!   the drain did before the per-CPU dispatch, `pair_all`);
//! - `analyse`: `analyse_until` of SPIKES wake-ups spread over the trace,
//!   on the records of the whole trace (the `--split` drain keeps the last
//!   2 s for this).
//!
//! ```text
//! cargo bench -p rtshield-trace --bench trace_scale -- --cpus 128 --period-us 100 --ms 200
//! ```
//!
//! Prints one `key=value` line: events, text bytes, the CPU time of each
//! step per event and per second of traced time, the memory of the parsed
//! records, and the time per analysed spike.

use rtshield_trace::{analyse_until, parse_line, EngineSample, Paired, Pairer, PairerSet, Record};
use std::fmt::Write as _;

struct Args {
    cpus: u32,
    period_ns: u64,
    ms: u64,
    spikes: usize,
}

fn args() -> Args {
    let mut a = Args {
        cpus: 128,
        period_ns: 100_000,
        ms: 200,
        spikes: 20,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().expect("a value after the option");
        match k.as_str() {
            "--cpus" => a.cpus = v().parse().expect("--cpus N"),
            "--period-us" => a.period_ns = v().parse::<u64>().expect("--period-us US") * 1000,
            "--ms" => a.ms = v().parse().expect("--ms MS"),
            "--spikes" => a.spikes = v().parse().expect("--spikes N"),
            // `cargo bench` adds --bench.
            _ => {}
        }
    }
    a
}

/// `s.micro` as ftrace prints it.
fn ts(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}

/// What [`synthesize`] makes: the text, its line count, the spikes
/// (CPU, expected time) and each CPU's engine samples.
type Synth = (String, usize, Vec<(u32, u64)>, Vec<Vec<EngineSample>>);

/// The trace text, in time order over all CPUs (as `trace_pipe` merges
/// them): per wake-up of thread `10000+cpu` expected at `t`, latency
/// 3-12 µs (every 1000th wake-up 150 µs late: a spike); and the samples
/// the engine measured of them.
fn synthesize(a: &Args) -> Synth {
    let start = 1_000_000_000_000u64; // 1000 s after boot
    let wakeups = a.ms * 1_000_000 / a.period_ns;
    let mut lines: Vec<(u64, String)> = Vec::new();
    let mut text = String::new();
    let mut spikes = Vec::new();
    let mut samples = vec![Vec::new(); a.cpus as usize];
    let mut n = 0;
    for k in 1..=wakeups {
        lines.clear();
        for c in 0..a.cpus {
            let pid = 10_000 + c;
            let t = start + k * a.period_ns;
            let lat = if (k + c as u64) % 1000 == 0 {
                spikes.push((c, t));
                150_000
            } else {
                3_000 + (k * 7 + c as u64 * 13) % 9_000
            };
            samples[c as usize].push(EngineSample {
                expected_ns: t,
                latency_ns: Some(lat as i64),
            });
            let prev = t - a.period_ns + 2_000;
            let timer = format!("{:016x}", 0xffff_0000_0000u64 + c as u64 * 64);
            let me = format!("m{c}-{pid} [{c:03}] d..1.");
            let idle = format!("<idle>-0 [{c:03}] d.h3.");
            lines.push((prev, format!("{me} {}: hrtimer_start: hrtimer={timer} function=hrtimer_wakeup expires={t} softexpires={t} mode=ABS was_armed=0", ts(prev))));
            lines.push((prev + 1_000, format!("{me} {}: sched_switch: prev_comm=m{c} prev_pid={pid} prev_prio=1 prev_state=S ==> next_comm=swapper/{c} next_pid=0 next_prio=120", ts(prev + 1_000))));
            let e = t + lat / 3;
            lines.push((e, format!("{idle} {}: hrtimer_expire_entry: hrtimer={timer} function=hrtimer_wakeup now={e}", ts(e))));
            lines.push((
                e + 1_000,
                format!(
                    "{idle} {}: sched_waking: comm=m{c} pid={pid} prio=1 target_cpu={c:03}",
                    ts(e + 1_000)
                ),
            ));
            lines.push((
                e + 2_000,
                format!(
                    "{idle} {}: sched_wakeup: comm=m{c} pid={pid} prio=1 target_cpu={c:03}",
                    ts(e + 2_000)
                ),
            ));
            let sw = t + lat;
            lines.push((sw, format!("<idle>-0 [{c:03}] d..2. {}: sched_switch: prev_comm=swapper/{c} prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=m{c} next_pid={pid} next_prio=1", ts(sw))));
        }
        lines.sort_by_key(|l| l.0);
        for (_, l) in &lines {
            let _ = writeln!(text, "{l}");
            n += 1;
        }
    }
    (text, n, spikes, samples)
}

/// The `--split` drain over `records` with one pairer per CPU's thread:
/// every 20 ms of trace, the samples expected by then queued, the
/// records handed out (by CPU, or with `to_all` to every pairer), the
/// resolved answers taken; at the end, the rest. Returns the samples split.
fn drain(records: &[Record], samples: &[Vec<EngineSample>], to_all: bool) -> u64 {
    const DRAIN_NS: u64 = 20_000_000;
    let n = samples.len();
    let mut set = PairerSet::new(n);
    for c in 0..n as u32 {
        set.set(c as usize, Pairer::new(10_000 + c, c));
    }
    let mut next_sample = vec![0; n];
    let mut out: Vec<Paired> = Vec::new();
    let mut split = 0;
    let mut resolve = |set: &mut PairerSet, out: &mut Vec<Paired>| {
        for t in 0..n {
            out.clear();
            set.get_mut(t).expect("a pairer per thread").resolved(out);
            split += out.iter().filter(|(_, r)| r.is_ok()).count() as u64;
        }
    };
    let mut i = 0;
    while i < records.len() {
        let end = records[i].ts_ns + DRAIN_NS;
        // The engine's samples reach the drain before their trace is read.
        for (t, ss) in samples.iter().enumerate() {
            let p = set.get_mut(t).expect("a pairer per thread");
            while next_sample[t] < ss.len() && ss[next_sample[t]].expected_ns < end {
                p.sample(ss[next_sample[t]]);
                next_sample[t] += 1;
            }
        }
        while i < records.len() && records[i].ts_ns < end {
            if to_all {
                for t in 0..n {
                    set.get_mut(t)
                        .expect("a pairer per thread")
                        .feed(&records[i]);
                }
            } else {
                set.feed(&records[i]);
            }
            i += 1;
        }
        resolve(&mut set, &mut out);
    }
    set.finish();
    resolve(&mut set, &mut out);
    split
}

/// CPU time of this thread so far, ns (`/proc/thread-self/schedstat`,
/// updated at each tick and switch: a few ms of error on a step that
/// takes a second). CPU, not wall time: the machine is shared.
struct Cpu(u64);

impl Cpu {
    fn now() -> Cpu {
        let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
        Cpu(s
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    fn elapsed(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(Cpu::now().0.saturating_sub(self.0))
    }
}

/// This process's resident and peak memory, kB (`/proc/self/status`).
fn rss_kb(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let a = args();
    let (text, events, spikes, samples) = synthesize(&a);
    let traced_s = a.ms as f64 / 1000.0;

    let rss0 = rss_kb("VmRSS:");
    let t = Cpu::now();
    let records: Vec<Record> = text.lines().filter_map(|l| parse_line(l).ok()).collect();
    let parse_s = t.elapsed().as_secs_f64();
    let records_kb = rss_kb("VmRSS:").saturating_sub(rss0);
    assert_eq!(records.len(), events, "every synthesized line parses");

    // What `--split` does: each record to the pairers of its CPU
    // (`PairerSet`, as crates/run/src/tracing.rs uses it).
    let t = Cpu::now();
    let splits = drain(&records, &samples, false);
    let split_s = t.elapsed().as_secs_f64();
    // Before the per-CPU dispatch: every record to every pairer.
    let t = Cpu::now();
    let splits_all = drain(&records, &samples, true);
    let split_all_s = t.elapsed().as_secs_f64();
    assert_eq!(splits, splits_all, "the dispatch changes no answer");

    let step = (spikes.len() / a.spikes.max(1)).max(1);
    let chosen: Vec<(u32, u64)> = spikes
        .iter()
        .step_by(step)
        .take(a.spikes)
        .copied()
        .collect();
    let t = Cpu::now();
    let mut explained = 0;
    for &(c, at) in &chosen {
        if analyse_until(&records, c, 10_000 + c, at, None).is_ok() {
            explained += 1;
        }
    }
    let analyse_s = t.elapsed().as_secs_f64();
    let per = |s: f64| s * 1e9 / events as f64;
    println!(
        "cpus={} period_us={} traced_ms={} events={} events_per_s={:.0} text_mb={:.1} \
         parse_ns_per_event={:.0} parse_cpu_per_traced_s={:.2} \
         split_ns_per_event={:.0} split_cpu_per_traced_s={:.2} \
         split_all_ns_per_event={:.0} split_all_cpu_per_traced_s={:.2} splits={} wakeups={} \
         records_mb={:.0} records_bytes_per_event={:.0} peak_rss_mb={:.0} \
         spikes_analysed={} explained={} analyse_ms_per_spike={:.1}",
        a.cpus,
        a.period_ns / 1000,
        a.ms,
        events,
        events as f64 / traced_s,
        text.len() as f64 / 1e6,
        per(parse_s),
        parse_s / traced_s,
        per(split_s),
        split_s / traced_s,
        per(split_all_s),
        split_all_s / traced_s,
        splits,
        events / 6,
        records_kb as f64 / 1024.0,
        records_kb as f64 * 1024.0 / events as f64,
        rss_kb("VmHWM:") as f64 / 1024.0,
        chosen.len(),
        explained,
        analyse_s * 1e3 / chosen.len().max(1) as f64,
    );
}
