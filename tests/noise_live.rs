//! Live (root, CPU 1): `rtshield noise --trace` names the test's own
//! SCHED_FIFO 99 thread, busy 2 ms on the measured CPU, as the THREAD
//! cause of the gap it made, with its tid; gaps without a kernel event are
//! unexplained and never blamed on a thread that did not run in them (the
//! test's thread is never named outside its life, nor at FIFO 99 outside
//! its bursts; CFS tasks do run beside the SCHED_FIFO spinner: the
//! kernel's fair server gives them a share), and every thread named as the
//! cause of a gap, or among the offenders, was switched in on CPU 1 then
//! (by a trace of the test's own: a second private instance recording
//! only `sched_switch`, read after the run); the
//! trace instance is gone afterwards, also after SIGINT. No timing is
//! asserted (this VM stalls by itself). Run them as
//! `flock /tmp/rtshield-live.lock cargo test --test integration noise_live::`.

use crate::util::*;
use rtshield_sys::{gettid, set_affinity, set_scheduler};
use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const BUSY_NAME: &str = "rtsh-noise2ms";

/// The test's own trace of CPU 1's context switches, independent of the
/// one `rtshield noise` reads: a private instance (registered with the
/// reaper before it is made) on a tracefs mount of the test's own.
struct Switches {
    dir: std::path::PathBuf,
    // Dropped in this order: the instance, then the mount.
    _reg: rtshield_testkit::Registration,
    _mount: rtshield_testkit::TracefsMount,
}

impl Switches {
    fn start() -> Switches {
        let mount = rtshield_testkit::TracefsMount::mount();
        // `rtshield-<pid>-…`: the reaper's to remove, never taken for a
        // dead rtshield process's by rtshield's own clean-up.
        let name = format!("rtshield-{}-switches", std::process::id());
        let reg =
            rtshield_testkit::register(rtshield_testkit::KernelObject::TraceInstance(name.clone()));
        let dir = mount.path().join("instances").join(&name);
        std::fs::create_dir(&dir).unwrap();
        let put = |f: &str, v: &str| std::fs::write(dir.join(f), v).unwrap();
        put("tracing_cpumask", "2");
        put("buffer_size_kb", "16384");
        put("trace_clock", "mono");
        put("events/sched/sched_switch/enable", "1");
        put("tracing_on", "1");
        Switches {
            dir,
            _reg: reg,
            _mount: mount,
        }
    }

    /// Stop, and every switch on CPU 1 as (time ns, next pid); with the
    /// time from which the trace is whole (an overwritten start is lost).
    fn stop(self) -> (u64, Vec<(u64, u32)>) {
        std::fs::write(self.dir.join("tracing_on"), "0").unwrap();
        let text = std::fs::read_to_string(self.dir.join("trace")).unwrap();
        let recs = rtshield_trace::parse(&text).unwrap();
        let sw: Vec<(u64, u32)> = recs
            .iter()
            .filter(|r| r.cpu == 1)
            .filter_map(|r| match &r.event {
                rtshield_trace::Event::SchedSwitch { next_pid, .. } => Some((r.ts_ns, *next_pid)),
                _ => None,
            })
            .collect();
        let from = recs.first().map_or(u64::MAX, |r| r.ts_ns);
        let _ = std::fs::remove_dir(&self.dir);
        (from, sw)
    }
}

/// Every thread `rtshield noise` names was switched in on CPU 1 where it
/// says: in each of the longest gaps naming it (a context counts only if
/// it starts in the gap, the trace's microsecond slack aside), and during
/// the run for each offender. Gaps before the test's trace is whole are
/// not checked.
fn threads_named_did_run(c: &Value, (from, sw): &(u64, Vec<(u64, u32)>)) {
    assert!(!sw.is_empty(), "the test's trace saw no switch on CPU 1");
    let mut checked = 0;
    for g in c["longest"].as_array().unwrap() {
        let s = g["start_ns"].as_u64().unwrap();
        let e = s + g["len_ns"].as_u64().unwrap();
        if s < *from + 1_000 {
            continue;
        }
        for pid in thread_pids(g) {
            checked += 1;
            assert!(
                sw.iter()
                    .any(|&(t, p)| u64::from(p) == pid && t + 1_000 > s && t <= e),
                "thread {pid} named for a gap it was not switched in during: {g}"
            );
        }
    }
    for f in c["offenders"].as_array().unwrap() {
        if f["source"]["kind"] == "thread" {
            let pid = f["source"]["pid"].as_u64().unwrap();
            checked += 1;
            assert!(
                sw.iter().any(|&(_, p)| u64::from(p) == pid),
                "offender {pid} never switched in on CPU 1: {f}"
            );
        }
    }
    eprintln!("{checked} thread causes checked against the test's own trace");
}

fn cannot_run() -> bool {
    !require_root("tracefs instances and SCHED_FIFO")
        || !require_cpus_0_and_1("live noise on CPU 1")
}

/// One at a time: each spins on CPU 1 and puts its own threads there.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `rtshield noise --cpus 1 --trace --prio 10 ... --json FILE`, started.
fn noise(json: &Path, extra: &[&str]) -> Kill {
    let child = command()
        .args(["noise", "--cpus", "1", "--trace", "--prio", "10", "-q"])
        .args(["--runtime", "950ms", "--period", "1s", "--json"])
        .arg(json)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Kill(child)
}

/// Wait until the child's spinning thread exists and its instance records.
fn wait_spinning(pid: u32) {
    wait_until(
        Duration::from_secs(20),
        "the spinner and the instance",
        || {
            let spinning = std::fs::read_dir(format!("/proc/{pid}/task"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.trim() == "rtshield-n1")
                });
            spinning && rtshield_testkit::instance_records(pid)
        },
    );
}

fn instance_gone(pid: u32) -> bool {
    !rtshield_testkit::instance_exists(pid)
}

fn finish(k: &mut Kill) -> std::process::Output {
    poll(Duration::from_secs(60), "noise ends", || {
        k.0.try_wait().unwrap()
    });
    let out = k.0.stdout.take().map(|mut s| {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut s, &mut v).unwrap();
        v
    });
    let err = k.0.stderr.take().map(|mut s| {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut s, &mut v).unwrap();
        v
    });
    std::process::Output {
        status: k.0.wait().unwrap(),
        stdout: out.unwrap_or_default(),
        stderr: err.unwrap_or_default(),
    }
}

/// The test's busy thread: its tid, when it existed, and its bursts
/// (CLOCK_MONOTONIC ns).
struct Busy {
    tid: u64,
    /// From before its creation to after its end: it may run on CPU 1
    /// (at SCHED_OTHER) while it sets itself up and exits.
    life: (u64, u64),
    /// Each 2 ms burst at SCHED_FIFO 99.
    bursts: Vec<(u64, u64)>,
}

/// A thread named BUSY_NAME on CPU 1 at SCHED_FIFO 99: `bursts` times,
/// sleep `gap` then busy-wait 2 ms (bounded: wall clock).
fn busy_bursts(bursts: usize, gap: Duration) -> Busy {
    let born = now_ns();
    let (tid, spans) = std::thread::Builder::new()
        .name(BUSY_NAME.into())
        .spawn(move || {
            set_affinity(0, &CpuSet::single(1)).expect("pin to CPU 1");
            set_scheduler(0, Policy::Fifo, 99).expect("SCHED_FIFO 99");
            let mut spans = Vec::new();
            for _ in 0..bursts {
                std::thread::sleep(gap);
                let from = now_ns();
                let end = Instant::now() + Duration::from_millis(2);
                while Instant::now() < end {
                    std::hint::spin_loop();
                }
                spans.push((from, now_ns()));
            }
            let _ = set_scheduler(0, Policy::Other, 0);
            (gettid(), spans)
        })
        .unwrap()
        .join()
        .unwrap();
    Busy {
        tid: tid as u64,
        life: (born, now_ns()),
        bursts: spans,
    }
}

fn cpu1(run: &Value) -> &Value {
    assert_eq!(run["kind"], "noise", "{run}");
    let c = &run["noise"]["cpus"][0];
    assert_eq!(c["cpu"], 1, "{run}");
    c
}

/// Thread pids named among a gap's causes.
fn thread_pids(gap: &Value) -> Vec<u64> {
    gap["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["source"]["kind"] == "thread")
        .map(|c| c["source"]["pid"].as_u64().unwrap())
        .collect()
}

fn overlaps(gap: &Value, spans: &[(u64, u64)]) -> bool {
    let s = gap["start_ns"].as_u64().unwrap();
    let e = s + gap["len_ns"].as_u64().unwrap();
    spans.iter().any(|&(a, b)| a < e && s < b)
}

/// The kernel prio each cause naming thread `tid` was traced with.
fn prios_of(gap: &Value, tid: u64) -> Vec<i64> {
    gap["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["source"]["kind"] == "thread" && c["source"]["pid"] == tid)
        .map(|c| c["source"]["kernel_prio"].as_i64().unwrap())
        .collect()
}

/// Gaps with no cause are unexplained; the busy thread is never named for
/// a gap outside its life, nor at FIFO 99 (kernel prio 0) outside its
/// bursts (it sleeps at FIFO 99 between them).
fn check_gaps(c: &Value, busy: &Busy) {
    for g in c["longest"].as_array().unwrap() {
        if g["causes"].as_array().unwrap().is_empty() {
            assert_eq!(g["class"], "unexplained", "{g}");
            assert_eq!(g["unexplained_ns"], g["len_ns"], "{g}");
        }
        let prios = prios_of(g, busy.tid);
        if !prios.is_empty() {
            assert!(
                overlaps(g, &[busy.life]),
                "thread {} blamed outside its life: {g}",
                busy.tid
            );
        }
        if prios.contains(&0) {
            assert!(
                overlaps(g, &busy.bursts),
                "thread {} blamed at FIFO 99 outside its bursts: {g}",
                busy.tid
            );
        }
    }
}

#[test]
fn a_fifo_thread_busy_for_2_ms_is_named_with_its_tid() {
    if cannot_run() {
        return;
    }
    let _turn = one_at_a_time();
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("noise.json");
    let switches = Switches::start();
    let mut k = noise(&file, &["--duration", "4s"]);
    let pid = k.0.id();
    wait_spinning(pid);
    // Three bursts 300 ms apart: the spinner sleeps 50 ms of each second,
    // so at least two land while it spins.
    let busy = busy_bursts(3, Duration::from_millis(300));
    let o = finish(&mut k);
    let trace = switches.stop();
    assert!(o.status.success(), "{}", describe(&o));
    assert!(instance_gone(pid), "instance rtshield-{pid} left behind");
    let run = json(&file);
    let c = cpu1(&run);
    let tid = busy.tid;
    // The gap it made: class thread, the test's thread its main cause,
    // by tid and name.
    let ours: Vec<&Value> = c["longest"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| overlaps(g, &busy.bursts) && prios_of(g, tid).contains(&0))
        .collect();
    assert!(
        !ours.is_empty(),
        "no gap names {BUSY_NAME} (tid {tid}): {}",
        c["longest"]
    );
    for g in &ours {
        assert_eq!(g["class"], "thread", "{g}");
        let top = &g["causes"][0]["source"];
        assert_eq!(
            (top["pid"].as_u64(), top["name"].as_str()),
            (Some(tid), Some(BUSY_NAME)),
            "{g}"
        );
        assert_eq!(top["kernel_prio"], 0, "FIFO 99 is kernel prio 0: {g}");
    }
    // Among the offenders too, with its priority as a person sets it.
    let off = c["offenders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"]["pid"] == tid)
        .unwrap_or_else(|| panic!("{BUSY_NAME} not among the offenders: {}", c["offenders"]));
    let prio = off["priority"].as_str().unwrap();
    assert!(prio == "FIFO 99" || prio == "RT 99", "{off}");
    assert!(c["classes"]["THREAD"].as_u64().unwrap() >= 1);
    check_gaps(c, &busy);
    threads_named_did_run(c, &trace);
    // The summary table has the osnoise columns and the thread.
    let table = String::from_utf8_lossy(&o.stdout);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "CPU",
            "RUNTIME",
            "NOISE",
            "%AVAIL",
            "MAX-SINGLE",
            "HW",
            "NMI",
            "IRQ",
            "SIRQ",
            "THREAD"
        ],
        "{table}"
    );
}

#[test]
fn gaps_without_a_kernel_event_are_unexplained_and_blame_no_thread() {
    if cannot_run() {
        return;
    }
    let _turn = one_at_a_time();
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("noise.json");
    // A 100 ns threshold: besides interrupts, gaps of a few hundred ns with
    // no kernel event at all (cache and TLB misses, the hypervisor) are
    // caught on any machine. The test's FIFO 99 thread runs once, first:
    // it must not be blamed for any later gap.
    let switches = Switches::start();
    let mut k = noise(&file, &["--duration", "2s", "--threshold", "100ns"]);
    let pid = k.0.id();
    wait_spinning(pid);
    let busy = busy_bursts(1, Duration::from_millis(100));
    let o = finish(&mut k);
    let trace = switches.stop();
    assert!(o.status.success(), "{}", describe(&o));
    assert!(instance_gone(pid));
    let run = json(&file);
    let c = cpu1(&run);
    let unexplained = c["by_class"]["unexplained"].as_u64().unwrap_or(0);
    assert!(
        unexplained >= 1,
        "no gap without a kernel event: {}",
        c["by_class"]
    );
    assert!(c["unexplained_ns"].as_u64().unwrap() > 0);
    assert_eq!(c["classes"]["HW"].as_u64(), Some(unexplained));
    check_gaps(c, &busy);
    threads_named_did_run(c, &trace);
    // The rtshield process's main thread stays off CPU 1: never a cause.
    for g in c["longest"].as_array().unwrap() {
        for p in thread_pids(g) {
            assert_ne!(
                p, pid as u64,
                "the rtshield process itself (pid) blamed: {g}"
            );
        }
    }
}

#[test]
fn sigint_removes_the_instance_and_still_reports() {
    if cannot_run() {
        return;
    }
    let _turn = one_at_a_time();
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("noise.json");
    let mut k = noise(&file, &[]);
    let pid = k.0.id();
    wait_spinning(pid);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: the child is ours.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let o = finish(&mut k);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(
        instance_gone(pid),
        "instance rtshield-{pid} left behind after SIGINT"
    );
    let run = json(&file);
    assert_eq!(run["end_reason"], "sigint");
    assert!(cpu1(&run)["runtime_ns"].as_u64().unwrap() > 0);
}
