//! The pieces of `run` that need no process: spec building, timeline rows,
//! result file selection, rotation names.

use crate::runner::{self, measure_spec, rotated_dir};
use crate::timeline::Timeline;
use rtshield_config::Machine;
use rtshield_load::CpuLoad;
use rtshield_measure::{IntervalStats, ThreadStats};
use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;
use std::path::Path;

fn cfg(text: &str) -> rtshield_config::Config {
    let m = Machine {
        online: CpuSet::parse("0-7").unwrap(),
        fold_cpus: false,
    };
    rtshield_config::parse("t.cfg", text, &m).unwrap()
}

#[test]
fn spec_from_a_config() {
    let c = cfg("main {\n mode interval\n memlock\n stats.period 5 s\n}\ntimer_thread[1] {\n cpu_affinity 3\n sched.priority 80\n period 100 us\n lifetime.duration 1 h\n stats.histo_size 50 us\n}\ntimer_thread[0] {\n cpu_affinity 2\n lifetime.duration 2 h\n stats.histo_size 20 us\n}\n");
    let (s, w) = measure_spec(&c, None);
    assert_eq!(s.threads.len(), 2);
    assert_eq!((s.threads[0].index, s.threads[0].cpu), (0, Some(2)));
    assert_eq!(s.threads[0].policy, Policy::Other);
    assert_eq!(
        (
            s.threads[1].policy,
            s.threads[1].priority,
            s.threads[1].period_ns
        ),
        (Policy::Fifo, 80, 100_000)
    );
    assert_eq!(s.mode, rtshield_measure::Mode::Interval);
    assert_eq!(
        s.duration_ns,
        Some(7_200_000_000_000),
        "the longest lifetime"
    );
    assert_eq!(s.histo_size_ns, 50_000, "the largest histogram");
    assert!(s.memlock && !s.cpu_dma_latency);
    assert_eq!(s.stats_period_ns, 5_000_000_000);
    assert_eq!(w.len(), 2, "{w:?}");
    let (s, _) = measure_spec(&c, Some(3_000_000_000));
    assert_eq!(s.duration_ns, Some(3_000_000_000), "--duration wins");
}

#[test]
fn timeline_rows() {
    let d = tempfile::tempdir().unwrap();
    let sd = rtshield_safefs::SafeDir::open(d.path(), rtshield_safefs::DirPolicy::Strict).unwrap();
    // The host columns come from a fake tree: uptime, load average, the
    // hottest of two thermal zones.
    let fake = tempfile::tempdir().unwrap();
    let put = |rel: &str, text: &str| {
        let p = fake.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    put("proc/uptime", "156.30 290.00\n");
    put("proc/loadavg", "2.50 1.25 0.50 3/120 4242\n");
    put("sys/class/thermal/thermal_zone0/temp", "46500\n");
    put("sys/class/thermal/thermal_zone1/temp", "48250\n");
    let mut t = Timeline::create(&sd, vec![0, 1])
        .unwrap()
        .with_host(rtshield_sys::Root::new(fake.path()));
    let s = IntervalStats {
        elapsed_ns: 5_000_000_000,
        resolution_ns: 1000,
        threads: vec![ThreadStats {
            index: 0,
            cpu: Some(1),
            samples: 50_000,
            max_ns: 305_000,
            ival_samples: 50_000,
            ival_min_ns: 30_000,
            ival_max_ns: 274_000,
            ival_avg_ns: 99_700.4,
            ..Default::default()
        }],
        ..Default::default()
    };
    let load = CpuLoad {
        per_cpu: [(0, 54.32), (1, 100.0)].into(),
        total: 77.16,
    };
    t.append(&s, 0, "rest", Some(&load)).unwrap();
    drop(t);
    let text = std::fs::read_to_string(d.path().join("timeline.csv")).unwrap();
    assert_eq!(
        text,
        "elapsed_s,phase,thread,cpu,samples,ival_samples,ival_min_ns,ival_avg_ns,ival_max_ns,max_max_ns,overruns,lost,load_total,load_cpu0,load_cpu1,uptime_s,loadavg1,loadavg5,loadavg15,temp_c\n\
         5.000,rest,0,1,50000,50000,30000,99700,274000,305000,0,0,77.2,54.3,100.0,156.30,2.50,1.25,0.50,48.2\n"
    );
}

#[test]
fn rotation_names() {
    assert_eq!(
        rotated_dir(Path::new("out/run"), None),
        Path::new("out/run")
    );
    assert_eq!(
        rotated_dir(Path::new("out/run"), Some(2)),
        Path::new("out/run-2")
    );
}

#[test]
fn result_files_follow_stats_format() {
    let c = cfg("main {\n stats.format txt\n}\ntimer_thread[0] {\n stats.filename rpi.txt\n}\n");
    let res = rtshield_results::example_result();
    let d = tempfile::tempdir().unwrap();
    runner::write_results(&res, &c, d.path()).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let want_txt: Vec<String> = res
        .threads
        .iter()
        .map(|t| {
            if t.index == 0 {
                "rpi.txt".to_string()
            } else {
                rtshield_results::systress_file_name(t.index)
            }
        })
        .collect();
    let mut want = vec!["results.json".to_string()];
    want.extend(want_txt);
    want.sort();
    assert_eq!(names, want);
    assert!(std::fs::read_to_string(d.path().join("rpi.txt"))
        .unwrap()
        .contains("SUMMARY"));
}

#[test]
fn programs_become_supervised_processes() {
    let c = cfg("main {\n load.cycle 5 min 30 s\n}\ntimer_thread[0] {\n}\nprogram[0] {\n cmdline sh -c \"exit 0\"\n cpu_affinity 1\n termination.ok RESPAWN\n start.delay 2 s\n}\nprogram[1] {\n load cpu\n cpu_affinity 2-3\n load.cycle off\n}\n");
    let p = runner::proc_specs(&c).unwrap();
    assert_eq!(p.len(), 3, "one command + one cpu worker per CPU");
    let (s0, c0, _) = &p[0];
    assert_eq!(s0.argv, ["sh", "-c", "exit 0"]);
    assert_eq!(
        s0.sched,
        Some((Policy::Other, 0)),
        "never inherit a real-time main thread"
    );
    assert_eq!(s0.start_delay, std::time::Duration::from_secs(2));
    assert_eq!(c0.unwrap().off_ns, 30_000_000_000);
    let (s1, c1, _) = &p[1];
    assert_eq!(s1.label, "program[1]");
    assert_eq!(s1.cpus, Some(CpuSet::single(2)));
    assert!(s1.argv.iter().any(|a| a == "__load") && s1.argv.iter().any(|a| a == "cpu"));
    assert_eq!(*c1, None);
    assert_eq!(p[2].0.cpus, Some(CpuSet::single(3)));
    let stats = vec![(
        "program[1]".to_string(),
        rtshield_load::ProcStats {
            spawns: 2,
            exits_ko: 1,
            ..Default::default()
        },
    )];
    let r = runner::program_results(&c, &stats);
    assert_eq!(r[0].command, "sh -c exit 0");
    assert_eq!((r[0].spawns, r[1].spawns, r[1].exits_ko), (0, 2, 1));
    assert_eq!(r[1].command, "builtin:cpu");
    assert_eq!(r[1].cpus.as_deref(), Some("2-3"));
}
