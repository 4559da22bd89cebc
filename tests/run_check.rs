//! `rtshield run --check` on the systress article's configurations and on bad ones.

use crate::util::*;

#[test]
fn systress_article_configs_pass_check_on_machines_of_their_size() {
    let host = fake_root("0-7");
    let rpi = fake_root("0-3");
    for (cfg, root) in [
        ("host.cfg", &host),
        ("host2.cfg", &host),
        ("rpi_isolcpus.cfg", &rpi),
        ("rpi_isolcpus_load.cfg", &rpi),
        ("rpi_cpuset.cfg", &rpi),
        ("rpi_cpuset_load.cfg", &rpi),
        ("torture.cfg", &rpi),
        ("local.cfg", &rpi),
        ("hell.cfg", &rpi),
    ] {
        let o = run(&[
            "--sysroot",
            root.path().to_str().unwrap(),
            "run",
            "--check",
            example(cfg).to_str().unwrap(),
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{cfg}: {err}");
        assert!(out.starts_with("# effective settings of"), "{out}");
        assert!(out.contains("timer_thread[0]\n{"), "{out}");
        assert!(err.contains(": OK ("), "{err}");
    }
}

#[test]
fn check_prints_defaults() {
    let root = fake_root("0-7");
    let o = run(&[
        "--sysroot",
        root.path().to_str().unwrap(),
        "run",
        "--check",
        example("host.cfg").to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(out.contains("  period 1ms\n"), "{out}");
    assert!(out.contains("  stats.checkpoint 1min\n"), "{out}");
    assert!(
        out.contains("  stats.filename timer_thread00.txt\n"),
        "{out}"
    );
    assert!(
        err.contains("1 timer thread(s), 0 program(s), runs 1min"),
        "{err}"
    );
}

#[test]
fn a_cpu_that_does_not_exist_is_exit_2_with_position() {
    let root = fake_root("0-3");
    let o = run(&[
        "--sysroot",
        root.path().to_str().unwrap(),
        "run",
        "--check",
        example("host.cfg").to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("host.cfg:6:16: CPUs 4-6 of 'cpu_affinity' do not exist on this machine (online CPUs: 0-3"),
        "{err}"
    );
    // --fold-cpus maps them and says so.
    let o = run(&[
        "--sysroot",
        root.path().to_str().unwrap(),
        "run",
        "--check",
        "--fold-cpus",
        example("host.cfg").to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("cpu_affinity 7 folded onto 3"), "{err}");
    assert!(out.contains("  cpu_affinity 3\n"), "{out}");
}

#[test]
fn bad_config_starts_nothing_and_exits_2() {
    let d = tempfile::tempdir().unwrap();
    let marker = d.path().join("started");
    // A valid program first, then an error: nothing may run. The program
    // would inherit stdout, so `output()` (which reads to end of file, i.e.
    // until every process holding the pipe is gone) would see its line and
    // the marker it touches before exiting: no need to wait and hope.
    let cfg = write_cfg(
        d.path(),
        "bad.cfg",
        &format!(
            "{}program[0]\n{{\n  cmdline sh -c \"echo program-started; touch {}\"\n}}\nprogram[1]\n{{\n  cmdline true\n  termination.ok SOMETIMES\n}}\n",
            timer("1 s"),
            marker.display()
        ),
    );
    let out = d.path().join("out");
    let o = run(&["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let (so, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.cfg:17:18: unknown termination policy 'SOMETIMES'"),
        "{err}"
    );
    assert!(err.contains("expected RESPAWN, STOP or IGNORE"), "{err}");
    assert!(
        !so.contains("program-started"),
        "a program was started: {so}"
    );
    assert!(!marker.exists(), "a program was started");
    assert!(!out.exists(), "an output directory was created");
}

#[test]
fn each_error_kind_from_the_command_line() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        (
            "main {\n  stats.periode 1 s\n}\n",
            "2:3: unknown key 'stats.periode'",
        ),
        (
            "main {\n  stats.period fast\n}\n",
            "2:16: invalid duration 'fast'",
        ),
        (
            "main {\n  stats.period 3 fortnights\n}\n",
            "unknown unit 'fortnights'",
        ),
        ("main {\n  memlock\n", "1:6: missing '}'"),
        (
            "timer_thread[0] {\n}\ntimer_thread[0] {\n}\n",
            "3:1: duplicate index",
        ),
        (
            "timer_thread[0] {\n cpu_affinity 4095\n}\n",
            "2:15: CPU 4095 of 'cpu_affinity' does not exist",
        ),
    ];
    for (i, (t, want)) in cases.iter().enumerate() {
        let full = if t.contains("timer_thread") {
            t.to_string()
        } else {
            format!("{t}{}", timer("1 s"))
        };
        let cfg = write_cfg(d.path(), &format!("e{i}.cfg"), &full);
        let o = run(&["run", "--check", cfg.to_str().unwrap()]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{t}: {err}");
        assert!(err.contains(&format!("e{i}.cfg:")), "{err}");
        assert!(err.contains(want), "{t}\ngot: {err}\nwant: {want}");
    }
}

#[test]
fn keys_reference_lists_every_key() {
    let o = run(&["run", "--keys"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    assert!(out.starts_with("| key | stanzas |"));
    assert!(out.contains("| `termination.ko` |"));
}

#[test]
fn load_worker_refuses_to_be_started_by_hand() {
    let o = run(&["__load", "cpu"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("internal"), "{err}");
}

#[test]
fn docs_key_reference_is_the_generated_one() {
    let o = run(&["run", "--keys"]);
    let (table, _) = text(&o);
    // The table must be a real one, so that an empty `--keys` cannot pass.
    assert!(table.contains("| `cpu_affinity` |"), "{table}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/config.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    assert!(
        doc.contains(&table),
        "docs/config.md is out of date: paste `rtshield run --keys` into its key reference"
    );
}

#[test]
fn run_check_refuses_a_timer_histogram_of_more_than_10_million_buckets() {
    // Adversary round 2, B7: `measure` refused this, `run` allocated 8 GB.
    let d = tempfile::tempdir().unwrap();
    let cfg = d.path().join("v.cfg");
    std::fs::write(
        &cfg,
        "timer_thread[0]\n{\n  cpu_affinity 0\n  sched.policy OTHER\n  histo.resolution 1 ns\n  stats.histo_size 1 s\n  lifetime.duration 1 s\n}\n",
    )
    .unwrap();
    let o = run(&["run", "--check", cfg.to_str().unwrap()]);
    let err = refused(&o, "more than 10 million histogram buckets");
    assert!(err.contains("v.cfg:6:"), "{err}");
}
