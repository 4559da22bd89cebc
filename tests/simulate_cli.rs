//! `rtshield simulate` end to end.

use crate::util::*;
use std::path::{Path, PathBuf};

/// Annex B with every `loop` divided by 10 (same shape, 10x shorter).
fn annex_b_small(dir: &Path) -> PathBuf {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/scenarios/annex-b.scn"
    ))
    .expect("annex B example");
    let small = src
        .replace("loop = 10000000", "loop = 1000000")
        .replace("loop = 110000000", "loop = 11000000");
    let p = dir.join("annex-b-small.scn");
    std::fs::write(&p, small).unwrap();
    p
}

#[test]
fn compare_on_annex_b_shows_the_thesis_ratios() {
    let dir = tempfile::tempdir().unwrap();
    let scn = annex_b_small(dir.path());
    let json = dir.path().join("out.json");
    let o = rtshield(&[
        "simulate",
        scn.to_str().unwrap(),
        "--cpus",
        "4",
        "--rt-cpus",
        "1-3",
        "--compare",
        "linux26,ule,artis",
        "--json",
        json.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let header = out.lines().nth(1).unwrap();
    assert!(
        header.contains("linux26") && header.contains("ule") && header.contains("artis"),
        "{out}"
    );
    let ratio = out
        .lines()
        .find(|l| l.trim_start().starts_with("ratio"))
        .unwrap();
    let cols: Vec<&str> = ratio.split_whitespace().collect();
    assert_eq!(cols, ["ratio", "4:3:3:3", "4:3:3:3", "10:1:1:1"], "{out}");
    for needle in [
        "fairness",
        "idle while tasks waited",
        "rt->nrt forced",
        "RT0 wake-up latency",
        "cpu1 (RT)",
    ] {
        assert!(out.contains(needle), "missing {needle}:\n{out}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[2]["balancer"], "artis");
    assert_eq!(runs[2]["source"], "simulation");
    assert_eq!(runs[2]["rt_cpus"], "1-3");
    assert_eq!(runs[2]["tasks"].as_array().unwrap().len(), 16);
    assert_eq!(runs[2]["rt0_latency"].as_array().unwrap().len(), 3);
}

/// The shipped masking example (`examples/scenarios/irq-mix.scn`): linux26
/// lets normal tasks mask interrupts on the RT CPUs, ARTiS never does.
#[test]
fn irq_mix_example_shows_the_latency_half() {
    let o = rtshield(&[
        "simulate",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/scenarios/irq-mix.scn"
        ),
        "--cpus",
        "4",
        "--rt-cpus",
        "1-3",
        "--compare",
        "linux26,artis",
        "--mask-len",
        "23us",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let row = |name: &str| -> Vec<u64> {
        let l = out
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row:\n{out}"));
        l[name.len() + 2..]
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let on_rt = row("masking sections on RT CPUs");
    assert!(on_rt[0] > 1_000, "{out}");
    assert_eq!(on_rt[1], 0, "{out}");
    assert!(row("rt->nrt forced")[1] >= 1, "{out}");
    // RT0 wake-ups delayed by a section: some under linux26, none under ARTiS.
    let delayed: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("delayed wake-ups"))
        .collect();
    assert_eq!(delayed.len(), 3, "{out}");
    let total: (u64, u64) = delayed.iter().fold((0, 0), |acc, l| {
        let v: Vec<u64> = l
            .split_whitespace()
            .skip(2)
            .map(|x| x.parse().unwrap())
            .collect();
        (acc.0 + v[0], acc.1 + v[1])
    });
    assert!(total.0 > 10, "{out}");
    assert_eq!(total.1, 0, "{out}");
}

#[test]
fn same_seed_same_bytes_and_files_per_balancer() {
    let dir = tempfile::tempdir().unwrap();
    let scn = annex_b_small(dir.path());
    let run = |tag: &str| {
        let json = dir.path().join(format!("{tag}.json"));
        let trace = dir.path().join(format!("{tag}.csv"));
        let gantt = dir.path().join(format!("{tag}.svg"));
        let o = rtshield(&[
            "simulate",
            scn.to_str().unwrap(),
            "--rt-cpus",
            "1-3",
            "--balancer",
            "artis",
            "--seed",
            "42",
            "--placement",
            "random",
            "--json",
            json.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--gantt",
            gantt.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        (
            std::fs::read(&json).unwrap(),
            std::fs::read_to_string(&trace).unwrap(),
            std::fs::read_to_string(&gantt).unwrap(),
            text(&o).0,
        )
    };
    let a = run("a");
    let b = run("b");
    assert_eq!(a.0, b.0, "JSON differs between two identical runs");
    assert_eq!(a.1, b.1);
    assert!(a.1.starts_with("time_ns,cpu,task,event,detail\n"));
    assert!(a.1.lines().count() > 100);
    assert!(a.2.starts_with("<svg") && a.2.contains("cpu3 (RT)"));
    // A single run prints the shared report, then the simulator table.
    assert!(a.3.contains("simulation, balancer artis"), "{}", a.3);

    // --compare with --trace/--gantt: one file per balancer.
    let t = dir.path().join("t.csv");
    let g = dir.path().join("g.svg");
    let o = rtshield(&[
        "simulate",
        scn.to_str().unwrap(),
        "--rt-cpus",
        "1-3",
        "--compare",
        "linux26,artis-2005",
        "--trace",
        t.to_str().unwrap(),
        "--gantt",
        g.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    for f in [
        "t-linux26.csv",
        "t-artis-2005.csv",
        "g-linux26.svg",
        "g-artis-2005.svg",
    ] {
        assert!(dir.path().join(f).exists(), "{f} missing");
    }
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let scn = annex_b_small(dir.path());
    let s = scn.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--balancer", "cfs"], "unknown balancer 'cfs'"),
        (
            vec!["--compare", "linux26,bogus"],
            "unknown balancer 'bogus'",
        ),
        (
            vec!["--rt-cpus", "1-7"],
            "names CPU 7 but the machine has 4 CPUs",
        ),
        (
            vec!["--rt-cpus", "0-3", "--balancer", "artis"],
            "needs at least one NRT CPU",
        ),
        (vec!["--duration", "ten"], "--duration"),
        (vec!["--artis-c", "xticks"], "--artis-c"),
        (vec!["--placement", "middle"], "--placement"),
        (vec!["--loops-per-us", "0"], "--loops-per-us"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["simulate", s];
        args.extend(extra.iter().copied());
        let o = rtshield(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains(needle),
            "{extra:?}: expected '{needle}' in: {err}"
        );
    }
}

#[test]
fn scenario_problems_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    // A masking task that may only run on RT CPUs: ARTiS cannot migrate it.
    let p = dir.path().join("rt-only.scn");
    std::fs::write(
        &p,
        "{\nloop = 1000\n}\n\n{\nloop = 1000\nirq_period = 10\ncpu_mask = 0x6\n}\n",
    )
    .unwrap();
    let o = rtshield(&[
        "simulate",
        p.to_str().unwrap(),
        "--rt-cpus",
        "1-2",
        "--balancer",
        "artis",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("rt-only.scn:5:1:") && err.contains("no NRT CPU"),
        "{err}"
    );
    // The same file is fine for linux26.
    let o = rtshield(&["simulate", p.to_str().unwrap(), "--rt-cpus", "1-2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);

    // A mask with no CPU on the simulated machine.
    let p = dir.path().join("far.scn");
    std::fs::write(&p, "# far away\n{\nloop = 1000\ncpu_mask = 0x10\n}\n").unwrap();
    let o = rtshield(&["simulate", p.to_str().unwrap(), "--cpus", "4"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("far.scn:2:1:") && err.contains("no CPU on this 4-CPU machine"),
        "{err}"
    );

    // Parse errors come from the shared parser, with line and column.
    let p = dir.path().join("typo.scn");
    std::fs::write(&p, "{\nloop = lots\n}\n").unwrap();
    let o = rtshield(&["simulate", p.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("typo.scn:2:"), "{err}");

    let o = rtshield(&["simulate", "/nonexistent/x.scn"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn duration_stops_the_run_and_reports_unfinished_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let scn = annex_b_small(dir.path());
    let json = dir.path().join("o.json");
    let o = rtshield(&[
        "simulate",
        scn.to_str().unwrap(),
        "--duration",
        "2s",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["run"]["unfinished"], 16);
    assert_eq!(v["run"]["makespan_ns"], 2_000_000_000u64);
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("had not finished")));
}

#[test]
fn the_scenario_timeout_bounds_the_simulated_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.scn");
    std::fs::write(&p, "timeout = 3s\n{\nloop = 100000000\n}\n").unwrap();
    let json = dir.path().join("o.json");
    let o = rtshield(&[
        "simulate",
        p.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["run"]["makespan_ns"], 3_000_000_000u64);
    assert_eq!(v["run"]["unfinished"], 1);
    // --duration wins over the file's timeout.
    let o = rtshield(&[
        "simulate",
        p.to_str().unwrap(),
        "--duration",
        "1s",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["run"]["makespan_ns"], 1_000_000_000u64);
}
