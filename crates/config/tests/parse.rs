//! The configuration parser: the systress article's examples, every error path with
//! its FILE:LINE:COL, and a property test that it never panics.

use proptest::prelude::*;
use rtshield_config::{Action, CpuLoadShow, Machine, Mode};
use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;
use rtshield_vocab::{Builtin, Output, Termination};
use std::path::PathBuf;

fn machine(cpus: &str) -> Machine {
    Machine {
        online: CpuSet::parse(cpus).unwrap(),
        fold_cpus: false,
    }
}

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn parse(text: &str) -> Result<rtshield_config::Config, String> {
    rtshield_config::parse("t.cfg", text, &machine("0-7")).map_err(|e| e.to_string())
}

const TIMER: &str = "timer_thread[0]\n{\n  cpu_affinity 1\n}\n";

#[test]
fn host_cfg_as_printed_in_the_systress_article() {
    let c = rtshield_config::load(&example("host.cfg"), &machine("0-7")).unwrap();
    assert_eq!(c.main.cpu_affinity, Some(CpuSet::parse("0-6").unwrap()));
    assert_eq!(c.main.stats_period_ns, 1_500_000_000);
    let t = &c.timers[0];
    assert_eq!((t.index, t.cpu), (0, Some(7)));
    assert_eq!((t.sched.policy, t.sched.priority), (Policy::Fifo, 99));
    assert_eq!(t.duration_ns, Some(60_000_000_000));
    assert_eq!(t.histo_size_ns, 20_000);
    assert_eq!(t.period_ns, 1_000_000, "default period 1 ms");
    assert_eq!(t.filename, "timer_thread00.txt");
    assert!(c.programs.is_empty());
}

#[test]
fn host2_cfg_programs_bare_and_quoted() {
    let c = rtshield_config::load(&example("host2.cfg"), &machine("0-7")).unwrap();
    assert_eq!(c.main.cpu_load, CpuLoadShow::All);
    assert_eq!(c.programs.len(), 4);
    let p0 = &c.programs[0];
    assert_eq!(
        p0.action,
        Action::Command(
            ["find", "/", "-type", "d", "-exec", "/bin/ls", "{}", ";", "-print"]
                .map(String::from)
                .to_vec()
        )
    );
    assert_eq!(p0.sched.unwrap().policy, Policy::Other);
    assert_eq!(
        (p0.stdout.clone(), p0.stderr.clone()),
        (Output::Null, Output::Null)
    );
    assert_eq!(
        (p0.on_ok, p0.on_ko),
        (Termination::Respawn, Termination::Respawn)
    );
    let Action::Command(w) = &c.programs[2].action else {
        panic!()
    };
    assert_eq!(
        w,
        &[
            "sh",
            "-c",
            "find / -type d -print0 | tar --null -cvzf - -T -"
        ]
    );
    assert_eq!(
        c.programs[1].cpu_affinity,
        Some(CpuSet::parse("0-6").unwrap())
    );
}

#[test]
fn rpi_cfgs() {
    let c = rtshield_config::load(&example("rpi_isolcpus.cfg"), &machine("0-3")).unwrap();
    assert!(c.main.memlock);
    assert_eq!(c.main.formats, vec![rtshield_config::Format::Txt]);
    assert_eq!(c.main.stats_period_ns, 2_000_000_000);
    assert_eq!(c.timers[0].filename, "rpi_isolcpus.txt");
    assert_eq!(c.timers[0].histo_size_ns, 200_000);
    assert_eq!(c.duration_ns(), Some(600_000_000_000));
    // The cpuset variant: the same, main in nrt and the timer thread in rt.
    let cs = rtshield_config::load(&example("rpi_cpuset.cfg"), &machine("0-3")).unwrap();
    assert_eq!(cs.main.cgroup, Some(rtshield_config::Partition::Nrt));
    assert_eq!(cs.timers[0].cgroup, Some(rtshield_config::Partition::Rt));
    assert_eq!(cs.timers[0].filename, "rpi_cpuset.txt");
    assert_eq!(cs.timers[0].cpu, c.timers[0].cpu);
    assert_eq!(cs.main.cpu_affinity, c.main.cpu_affinity);
    let cl = rtshield_config::load(&example("rpi_cpuset_load.cfg"), &machine("0-3")).unwrap();
    assert_eq!(cl.timers[0].filename, "rpi_cpuset_load.txt");
    assert_eq!(cl.programs.len(), 4);
    assert!(cl.programs.iter().all(|p| p.cgroup.is_none()));
    let c = rtshield_config::load(&example("rpi_isolcpus_load.cfg"), &machine("0-3")).unwrap();
    assert_eq!(c.programs.len(), 4);
    assert_eq!(
        c.programs[3].action,
        Action::Builtin {
            kind: Builtin::Memory,
            size: Some(64 << 20),
            workers: 1,
            peer: None,
        }
    );
}

#[test]
fn own_examples() {
    let c = rtshield_config::load(&example("torture.cfg"), &machine("0-1")).unwrap();
    // The article's fluctuations-timer: interval between a POSIX timer's signals.
    assert_eq!(c.main.mode, Mode::IntervalPosix);
    let cy = c.main.load_cycle.unwrap();
    // As the article's script ran: rest 60 s first, then 5 min of load.
    assert_eq!(
        (cy.on_ns, cy.off_ns, cy.rest_first),
        (300_000_000_000, 60_000_000_000, true)
    );
    assert_eq!(
        c.programs[0].load_cycle,
        Some(cy),
        "main's cycle is the default"
    );
    assert_eq!(c.main.rotate_ns, Some(86_400_000_000_000));
    assert_eq!(c.timers[0].period_ns, 100_000);
    rtshield_config::load(&example("local.cfg"), &machine("0-1")).unwrap();
    let h = rtshield_config::load(&example("hell.cfg"), &machine("0-1")).unwrap();
    assert_eq!(
        h.programs[0].action,
        rtshield_config::Action::Builtin {
            kind: Builtin::Hell,
            size: None,
            workers: 1,
            peer: None,
        }
    );
    assert_eq!(h.programs[0].cpu_affinity, Some(CpuSet::single(0)));
    assert_eq!(h.timers[0].cpu, Some(1));
}

#[test]
fn folding_maps_missing_cpus_and_warns() {
    let m = Machine {
        online: CpuSet::parse("0-1").unwrap(),
        fold_cpus: true,
    };
    let c = rtshield_config::load(&example("host2.cfg"), &m).unwrap();
    assert_eq!(c.timers[0].cpu, Some(1), "7 % 2");
    assert_eq!(c.main.cpu_affinity, Some(CpuSet::parse("0-1").unwrap()));
    assert!(
        c.warnings.iter().any(|w| w.contains("folded")),
        "{:?}",
        c.warnings
    );
    // The loads (0-6 in the file) never land on the measured CPU 1.
    for p in &c.programs {
        if let Some(a) = &p.cpu_affinity {
            assert!(!a.contains(1), "program[{}] on {}", p.index, a.to_list());
        }
    }
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("CPU 1 measured, kept free of loads")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn folding_refuses_when_only_measured_cpus_are_left() {
    let m = Machine {
        online: CpuSet::parse("0").unwrap(),
        fold_cpus: true,
    };
    // The program stanza comes first in the file: timers are still seen first.
    let text = "program[0]\n{\n  load cpu\n  cpu_affinity 0-6\n}\ntimer_thread[0]\n{\n  cpu_affinity 7\n}\n";
    let e = rtshield_config::parse("f.cfg", text, &m)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("f.cfg:4:16:"), "{e}");
    assert!(
        e.contains("a load is never folded onto a measured CPU"),
        "{e}"
    );
    // A load the file itself puts on the measured CPU stays there.
    let m = Machine {
        online: CpuSet::parse("0-1").unwrap(),
        fold_cpus: true,
    };
    let text =
        "timer_thread[0]\n{\n  cpu_affinity 3\n}\nprogram[0]\n{\n  load cpu\n  cpu_affinity 3\n}\n";
    let c = rtshield_config::parse("f.cfg", text, &m).unwrap();
    assert_eq!(c.timers[0].cpu, Some(1));
    assert_eq!(
        c.programs[0].cpu_affinity,
        Some(CpuSet::parse("1").unwrap())
    );
}

#[test]
fn effective_settings_parse_back_to_the_same_config() {
    for (f, cpus) in [
        ("host.cfg", "0-7"),
        ("host2.cfg", "0-7"),
        ("rpi_isolcpus_load.cfg", "0-3"),
        ("torture.cfg", "0-1"),
    ] {
        let c = rtshield_config::load(&example(f), &machine(cpus)).unwrap();
        let text = rtshield_config::render_effective(&c);
        let back = rtshield_config::parse("eff.cfg", &text, &machine(cpus)).unwrap();
        assert_eq!(back.main, c.main, "{f}\n{text}");
        assert_eq!(back.timers, c.timers, "{f}");
        assert_eq!(back.programs, c.programs, "{f}");
    }
}

#[test]
fn a_net_peer_load_is_accepted_with_measures_checks() {
    // The torture article's ping -f, from this side (192.0.2.0/24 is a
    // documentation network: parsing sends nothing).
    let c = parse(&format!(
        "{TIMER}program[0] {{\n  load net:peer=192.0.2.10\n}}\n"
    ))
    .unwrap();
    assert_eq!(
        c.programs[0].action,
        Action::Builtin {
            kind: Builtin::Net,
            size: None,
            workers: 1,
            peer: Some(std::net::Ipv4Addr::new(192, 0, 2, 10)),
        }
    );
    assert!(rtshield_config::render_effective(&c).contains("  load net:peer=192.0.2.10\n"));
    for (v, why) in [
        ("net:peer=127.0.0.1", "not a single remote peer"),
        ("net:peer=example.org", "not an IPv4 address"),
        ("cpu:peer=192.0.2.10", "only net takes an option"),
    ] {
        let e = parse(&format!("{TIMER}program[0] {{\n  load {v}\n}}\n")).unwrap_err();
        assert!(e.starts_with("t.cfg:6:8:") && e.contains(why), "{v}: {e}");
    }
}

#[test]
fn a_load_cycle_names_its_phases_in_order() {
    let cycle = |v: &str| {
        parse(&format!("main {{\n load.cycle {v}\n}}\n{TIMER}"))
            .unwrap()
            .main
            .load_cycle
            .unwrap()
    };
    let rest_first = cycle("rest 60 s load 5 min");
    assert_eq!(
        (rest_first.on_ns, rest_first.off_ns, rest_first.rest_first),
        (300_000_000_000, 60_000_000_000, true)
    );
    assert!(!rest_first.loaded_at(0) && rest_first.loaded_at(60_000_000_000));
    assert_eq!(rest_first.next_switch_ns(0), 60_000_000_000);
    assert_eq!(rest_first.next_switch_ns(60_000_000_000), 360_000_000_000);
    // The bare form keeps meaning load first, so old files do not change.
    let bare = cycle("5 min 30 s");
    assert_eq!(bare, cycle("load 5 min rest 30 s"));
    assert!(!bare.rest_first && bare.loaded_at(0) && !bare.loaded_at(300_000_000_000));
    // The effective configuration says it back in the same order.
    let c = parse(&format!(
        "main {{\n load.cycle REST 1 min LOAD 5min\n}}\n{TIMER}"
    ))
    .unwrap();
    assert!(rtshield_config::render_effective(&c).contains("load.cycle rest 1min load 5min"));
}

#[test]
fn defaults_and_values_with_units() {
    let c = parse(&format!(
        "main {{\n stats.period 250ms\n stats.histo_size 50\n histo.resolution 100\n period 200 us\n load.cycle 5min 30s\n stats.checkpoint off\n stats.rotate 1 d\n stats.cpu_load 0-1\n}}\n{TIMER}"
    ))
    .unwrap();
    assert_eq!(c.main.stats_period_ns, 250_000_000);
    assert_eq!(c.main.histo_size_ns, 50_000, "bare histo_size is µs");
    assert_eq!(c.main.resolution_ns, 100, "bare resolution is ns");
    assert_eq!(
        c.timers[0].period_ns, 200_000,
        "main's period is the default"
    );
    assert_eq!(c.timers[0].histo_size_ns, 50_000);
    assert_eq!(c.main.checkpoint_ns, 0);
    assert_eq!(
        c.main.cpu_load,
        CpuLoadShow::Cpus(CpuSet::parse("0-1").unwrap())
    );
    let t = parse("timer_thread[3]\n{\n sched.priority 80\n}\n").unwrap();
    assert_eq!(
        t.timers[0].sched.policy,
        Policy::Fifo,
        "priority alone means FIFO"
    );
    assert_eq!(
        t.main.checkpoint_ns, 60_000_000_000,
        "checkpoint default 1 min"
    );
}

/// Every kind of bad input: the message starts with FILE:LINE:COL and says
/// what was expected.
#[test]
#[allow(clippy::too_many_lines)] // a table of cases
fn errors_name_file_line_column_and_expectation() {
    let cases: &[(&str, &str, &str)] = &[
        // unknown key
        (
            "main {\n  colour blue\n}\n",
            "t.cfg:2:3: unknown key 'colour'",
            "expected one of",
        ),
        // key in the wrong stanza
        (
            "main {\n  cmdline ls\n}\n",
            "t.cfg:2:3: key 'cmdline' is not allowed in main",
            "program[N]",
        ),
        // bad value
        (
            "main {\n  memlock maybe\n}\n",
            "t.cfg:2:11: invalid switch 'maybe'",
            "expected nothing, on or off",
        ),
        (
            "main {\n  dbg_level 12\n}\n",
            "t.cfg:2:13: 12 is out of range 0..9",
            "expected an integer",
        ),
        (
            "main {\n  mode turbo\n}\n",
            "t.cfg:2:8: unknown mode 'turbo'",
            "expected nanosleep",
        ),
        // bad unit
        (
            "main {\n  stats.period 2 parsecs\n}\n",
            "t.cfg:2:16: invalid duration '2 parsecs': unknown unit 'parsecs'",
            "expected a duration",
        ),
        (
            "main {\n  stats.period 2\n}\n",
            "t.cfg:2:16: invalid duration '2': missing unit",
            "ns, us, ms",
        ),
        // missing brace
        (
            "main\n{\n  memlock\n",
            "t.cfg:2:1: missing '}'",
            "not closed",
        ),
        (
            "main {\n  memlock\ntimer_thread[0]\n{\n}\n",
            "t.cfg:1:6: missing '}'",
            "before 'timer_thread[0]' at line 3",
        ),
        // duplicate index
        (
            "timer_thread[0] {\n}\ntimer_thread[0] {\n}\n",
            "t.cfg:3:1: duplicate index: 'timer_thread[0]' is already defined at line 1",
            "",
        ),
        ("main {\n}\nmain {\n}\n", "t.cfg:3:1: duplicate stanza", ""),
        (
            "main {\n  memlock\n  memlock off\n}\n",
            "t.cfg:3:3: duplicate key 'memlock' (already set at line 2)",
            "",
        ),
        // a CPU that does not exist
        (
            "timer_thread[0] {\n  cpu_affinity 9\n}\n",
            "t.cfg:2:16: CPU 9 of 'cpu_affinity' does not exist on this machine (online CPUs: 0-7",
            "--fold-cpus",
        ),
        (
            "main {\n  cpu_affinity 6-12\n}\n",
            "t.cfg:2:16: CPUs 8-12 of 'cpu_affinity' do not exist",
            "",
        ),
        (
            "main {\n  cpu_affinity 1-x\n}\n",
            "t.cfg:2:16: invalid CPU set '1-x'",
            "expected a CPU list",
        ),
        // timer with several CPUs
        (
            "timer_thread[0] {\n  cpu_affinity 1-2\n}\n",
            "t.cfg:2:16: 2 CPUs (a timer thread measures one CPU)",
            "",
        ),
        // policies
        (
            "timer_thread[0] {\n  sched.policy EDF\n}\n",
            "t.cfg:2:16: unknown policy 'EDF'",
            "expected OTHER, FIFO",
        ),
        (
            "timer_thread[0] {\n  sched.policy OTHER\n  sched.priority 5\n}\n",
            "t.cfg:3:18: priority 5 needs sched.policy FIFO or RR",
            "",
        ),
        (
            "timer_thread[0] {\n  sched.priority 100\n}\n",
            "t.cfg:2:18: 100 is out of range 0..99",
            "",
        ),
        // stanzas
        (
            "thread[0] {\n}\n",
            "t.cfg:1:1: unknown stanza 'thread'",
            "expected main, timer_thread[N] or program[N]",
        ),
        ("program {\n}\n", "t.cfg:1:1: 'program' needs an index", ""),
        ("main[2] {\n}\n", "t.cfg:1:1: 'main' takes no index", ""),
        // programs
        (
            "program[0] {\n  output.out /dev/null\n}\n",
            "t.cfg:1:1: program[0] has neither 'cmdline' nor 'load'",
            "",
        ),
        (
            "program[0] {\n  cmdline ls\n  load cpu\n}\n",
            "t.cfg:3:3: 'load' and 'cmdline' (line 2) in one program",
            "",
        ),
        (
            "program[0] {\n  cmdline sh -c \"echo\n}\n",
            "t.cfg:2:17: unterminated \" quote",
            "",
        ),
        (
            "program[0] {\n  load tornado\n}\n",
            "t.cfg:2:8: unknown built-in load 'tornado'",
            "cpu, memory, io, syscall, fork, net, hell, timers, syncio",
        ),
        (
            "program[0] {\n  load cpu\n  sched.policy FIFO\n  sched.priority 10\n}\n",
            "t.cfg:3:16: a real-time policy for a built-in load",
            "",
        ),
        (
            "program[0] {\n  load memory\n  load.size lots\n}\n",
            "t.cfg:3:13: invalid size 'lots'",
            "",
        ),
        // Issue 21 finding 7 (n07b): a size has an upper bound.
        (
            "program[0] {\n  load io\n  load.size 9000000G\n}\n",
            "t.cfg:3:13: load.size 9000000G: 9663676416000000 bytes is out of range 4096 .. 68719476736 bytes",
            "",
        ),
        (
            "program[0] {\n  load memory\n  load.size 65G\n}\n",
            "t.cfg:3:13: load.size 65G:",
            "",
        ),
        (
            "program[0] {\n  cmdline ls\n  termination.ok MAYBE\n}\n",
            "t.cfg:3:18: unknown termination policy 'MAYBE'",
            "RESPAWN, STOP or IGNORE",
        ),
        (
            "program[0] {\n  cmdline ls\n  load.size 1M\n}\n",
            "t.cfg:3:3: 'load.size' only applies",
            "",
        ),
        (
            "program[0] {\n  cmdline ls\n  load.cycle 5 min\n}\n",
            "t.cfg:3:14: 1 duration(s) instead of two",
            "",
        ),
        (
            "program[0] {\n  cmdline ls\n  load.cycle rest 5 s 30 s\n}\n",
            "t.cfg:3:14: name both phases",
            "rest 60 s load 5 min",
        ),
        (
            "program[0] {\n  cmdline ls\n  load.cycle rest 5 s rest 30 s\n}\n",
            "t.cfg:3:14: name both phases",
            "",
        ),
        (
            "program[0] {\n  cmdline ls\n  load.cycle load rest 5 s\n}\n",
            "t.cfg:3:14: 'rest' where a duration was expected",
            "",
        ),
        (
            "program[0] {\n  cmdline\n}\n",
            "missing value for 'cmdline'",
            "",
        ),
        (
            "timer_thread[0] {\n  stats.filename ../x.txt\n}\n",
            "t.cfg:2:18: a path",
            "",
        ),
    ];
    for (text, start, contains) in cases {
        let full = if text.contains("timer_thread") {
            text.to_string()
        } else {
            format!("{text}{TIMER}")
        };
        let e = parse(&full).expect_err(text);
        assert!(
            e.contains(start),
            "input:\n{text}\ngot:  {e}\nwant: {start}"
        );
        assert!(
            e.contains(contains),
            "input:\n{text}\ngot: {e}\nwant also: {contains}"
        );
    }
}

#[test]
fn no_timer_is_an_error() {
    let e = parse("main {\n}\n").unwrap_err();
    assert!(e.contains("no timer_thread[N] stanza"), "{e}");
}

#[test]
fn file_errors_are_input_errors() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("bad.cfg");
    std::fs::write(&p, b"main {\n \xff\n}\n").unwrap();
    let e = rtshield_config::load(&p, &machine("0-1")).unwrap_err();
    assert!(e.is::<rtshield_vocab::InputError>());
    assert!(
        e.to_string()
            .ends_with("bad.cfg:2:2: byte 0xff is not UTF-8 (the file must be UTF-8 text)"),
        "{e}"
    );
    let e = rtshield_config::load(&d.path().join("nope.cfg"), &machine("0-1")).unwrap_err();
    assert!(e.is::<rtshield_vocab::InputError>());
}

#[test]
fn machine_from_a_fake_root() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("sys/devices/system/cpu")).unwrap();
    std::fs::write(d.path().join("sys/devices/system/cpu/online"), "0-7\n").unwrap();
    let m = Machine::from_root(&rtshield_sys::Root::new(d.path()), false).unwrap();
    assert_eq!(m.online.to_list(), "0-7");
}

#[test]
fn key_table_is_complete() {
    let t = rtshield_config::markdown_table();
    for k in [
        "cpu_affinity",
        "sched.policy",
        "sched.priority",
        "lifetime.duration",
        "stats.period",
        "stats.histo_size",
        "stats.filename",
        "stats.format",
        "stats.cpu_load",
        "memlock",
        "dbg_level",
        "cmdline",
        "output.out",
        "output.err",
        "termination.ok",
        "termination.ko",
        "mode",
        "period",
        "histo.resolution",
        "cgroup",
        "start.delay",
        "load",
        "load.cycle",
        "stats.checkpoint",
        "stats.rotate",
    ] {
        assert!(t.contains(&format!("| `{k}` |")), "{k} missing");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Arbitrary text never panics the parser.
    #[test]
    fn never_panics_on_any_text(s in "\\PC{0,200}") {
        let _ = parse(&s);
    }

    /// Nor does text built from the format's own pieces, which reaches deeper.
    #[test]
    fn never_panics_on_config_like_text(parts in proptest::collection::vec(prop_oneof![
        Just("main".to_string()), Just("timer_thread[0]".to_string()), Just("program[1]".to_string()),
        Just("{".to_string()), Just("}".to_string()), Just("\n".to_string()), Just(" ".to_string()),
        Just("#".to_string()), Just("\"".to_string()), Just("cpu_affinity".to_string()),
        Just("sched.priority".to_string()), Just("load.cycle".to_string()), Just("cmdline".to_string()),
        Just("load".to_string()), Just("stats.cpu_load".to_string()), Just("1-3".to_string()),
        Just("5 min".to_string()), Just("hell".to_string()), Just("FIFO".to_string()), Just("99".to_string()),
        "[a-z0-9 .\\[\\]{}#\"'\\\\-]{0,8}",
    ], 0..60)) {
        let _ = parse(&parts.concat());
    }
}

#[test]
fn a_program_without_policy_runs_and_shows_as_sched_other() {
    let c = parse(&format!(
        "{TIMER}program[0] {{\n cmdline sleep 1\n}}\nprogram[1] {{\n cmdline sleep 1\n sched.policy FIFO\n sched.priority 10\n}}\n"
    ))
    .unwrap();
    assert_eq!(c.programs[0].sched.map(|s| s.policy), Some(Policy::Other));
    assert_eq!(c.programs[1].sched.map(|s| s.policy), Some(Policy::Fifo));
    let text = rtshield_config::render_effective(&c);
    let p0 = &text[text.find("program[0]").unwrap()..text.find("program[1]").unwrap()];
    assert!(p0.contains("sched.policy OTHER"), "{p0}");
}

/// Documented ranges (docs/ranges.md): values outside them are refused with the
/// position of the value, values at the bounds are accepted.
#[test]
fn values_outside_documented_ranges_are_refused_with_position() {
    let bad = [
        ("period 213503d", "period"),
        ("period 61min", "period"),
        ("lifetime.duration 106752d", "lifetime.duration"),
        ("stats.rotate 1 ns", "stats.rotate"),
        ("stats.rotate 0", "stats.rotate"),
        ("stats.checkpoint 0", "stats.checkpoint"),
        ("stats.histo_size 2s", "stats.histo_size"),
        ("histo.resolution 1.5", "histo.resolution"),
    ];
    for (line, key) in bad {
        let e = parse(&format!("main\n{{\n  {line}\n}}\n{TIMER}")).expect_err(line);
        assert!(e.starts_with("t.cfg:3:"), "{line}: no position: {e}");
        assert!(e.contains(key), "{line}: key not named: {e}");
    }
    for line in [
        "period 1h",
        "period 1us",
        "lifetime.duration 365d",
        "stats.rotate 1s",
        "stats.checkpoint off",
        "stats.histo_size 1s\n  histo.resolution 1000",
    ] {
        parse(&format!("main\n{{\n  {line}\n}}\n{TIMER}"))
            .unwrap_or_else(|e| panic!("{line}: {e}"));
    }
}

/// `stats.filename` must be a name the file system can create: refused at parse
/// time (so by `run --check`), with the position of the value.
#[test]
fn unwritable_stats_filenames_are_refused() {
    let long = "a".repeat(256);
    for name in [long.as_str(), "a\0b", "..", "x/y"] {
        let text = format!(
            "main\n{{\n}}\ntimer_thread[0]\n{{\n  cpu_affinity 1\n  stats.filename {name}\n}}\n"
        );
        let e = parse(&text).expect_err(name);
        assert!(e.starts_with("t.cfg:7:"), "{name:?}: {e}");
        assert!(e.contains("stats.filename"), "{name:?}: {e}");
    }
    let ok = "b".repeat(255);
    let text =
        format!("main\n{{\n}}\ntimer_thread[0]\n{{\n  cpu_affinity 1\n  stats.filename {ok}\n}}\n");
    parse(&text).unwrap();
}

#[test]
fn thread_storm_loads_take_a_thread_count() {
    let c = parse(&format!(
        "{TIMER}program[0]\n{{\n  load timers\n}}\nprogram[1]\n{{\n  load syncio\n  load.size 20\n}}\n"
    ))
    .unwrap();
    match &c.programs[0].action {
        Action::Builtin { kind, size, .. } => {
            assert_eq!(
                (*kind, *size),
                (Builtin::Timers, None),
                "default: 150 threads"
            );
        }
        a => panic!("{a:?}"),
    }
    match &c.programs[1].action {
        Action::Builtin { kind, size, .. } => {
            assert_eq!((*kind, *size), (Builtin::SyncIo, Some(20)))
        }
        a => panic!("{a:?}"),
    }
    let e = parse(&format!(
        "{TIMER}program[0]\n{{\n  load timers\n  load.size 2000\n}}\n"
    ))
    .unwrap_err();
    assert!(e.contains("2000 is out of range 1..1000"), "{e}");
    let e = parse(&format!(
        "{TIMER}program[0]\n{{\n  load syncio\n  load.size 64M\n}}\n"
    ))
    .unwrap_err();
    assert!(e.contains("invalid number '64M'"), "{e}");
}

#[test]
fn trace_keys_parse_with_ranges_and_positions() {
    let c = parse(&format!(
        "main {{\n  trace.on_latency 300 us\n  trace.stop\n  trace.split on\n  trace.buffer_kb 512\n}}\n{TIMER}"
    ))
    .unwrap();
    let t = c.main.trace;
    assert_eq!(t.on_latency_ns, Some(300_000));
    assert!(t.stop && t.split);
    assert_eq!(t.buffer_kb, Some(512));
    // Defaults: nothing traced, the buffer sized by the run.
    let d = parse(TIMER).unwrap().main.trace;
    assert_eq!(d, rtshield_config::Trace::default());
    assert!(!d.wanted());
    assert_eq!(d.buffer_kb, None);
    // --check prints them back, and they parse to the same.
    let text = rtshield_config::render_effective(&c);
    assert!(text.contains("  trace.on_latency 300us\n"), "{text}");
    let back = rtshield_config::parse("eff.cfg", &text, &machine("0-7")).unwrap();
    assert_eq!(back.main, c.main);
    // Bad values name FILE:LINE:COL.
    for (body, want) in [
        ("trace.on_latency 2 s", "t.cfg:2:20: 2s outside 1us..1s"),
        (
            "trace.on_latency 500ns",
            "t.cfg:2:20: 500ns outside 1us..1s",
        ),
        ("trace.on_latency", "t.cfg:2:"),
        ("trace.stop", "t.cfg:2:"),
        (
            "trace.buffer_kb 0",
            "t.cfg:2:19: 0 is out of range 1..1048576",
        ),
        (
            "trace.buffer_kb 2000000",
            "t.cfg:2:19: 2000000 is out of range 1..1048576",
        ),
        ("trace.split maybe", "t.cfg:2:15: invalid switch 'maybe'"),
    ] {
        let e = parse(&format!("main {{\n  {body}\n}}\n{TIMER}")).unwrap_err();
        assert!(e.starts_with(want), "{body}: {e}");
    }
    let e = parse(&format!("main {{\n  trace.stop\n}}\n{TIMER}")).unwrap_err();
    assert!(e.contains("trace.stop without trace.on_latency"), "{e}");
    let e = parse(&format!("timer_thread[1] {{\n  trace.split\n}}\n{TIMER}")).unwrap_err();
    assert!(e.contains("not allowed in timer_thread"), "{e}");
}

#[test]
fn a_timer_with_more_than_10_million_buckets_is_refused_at_its_key() {
    // Adversary round 2, B7: 1 s at 1 ns per bucket is 10^9 buckets (8 GB);
    // main's stanza was checked, a timer's own keys were not.
    let e = parse(
        "timer_thread[0]\n{\n  cpu_affinity 1\n  histo.resolution 1 ns\n  stats.histo_size 1 s\n}\n",
    )
    .unwrap_err();
    assert!(
        e.starts_with("t.cfg:5:") && e.contains("more than 10 million histogram buckets"),
        "{e}"
    );
    assert!(parse(
        "timer_thread[0]\n{\n  cpu_affinity 1\n  histo.resolution 100 ns\n  stats.histo_size 1 s\n}\n"
    )
    .is_ok());
}

/// Adversary round 5, F12: a configuration started whatever it named:
/// 8193 timer threads (18 GB; a results file no reader takes back) and
/// 100 000 `load cpu` programs (a fork bomb as root). Each is refused at
/// the first stanza too many, FILE:LINE:COL, before anything runs; so is
/// a built-in load of more worker processes or threads than a
/// configuration may start.
#[test]
fn f12_timer_threads_programs_and_load_workers_are_bounded() {
    let timers = |n: usize| -> String {
        (0..n)
            .map(|i| format!("timer_thread[{i}]\n{{\n  cpu_affinity 1\n}}\n"))
            .collect()
    };
    let big =
        |t: &str| rtshield_config::parse("t.cfg", t, &machine("0-127")).map_err(|e| e.to_string());
    let max = rtshield_limits::RUN_MAX_TIMER_THREADS;
    assert_eq!(big(&timers(max)).unwrap().timers.len(), max);
    let e = big(&timers(max + 1)).unwrap_err();
    let line = 4 * max + 1;
    assert!(
        e.starts_with(&format!("t.cfg:{line}:1: more than {max} timer_thread[N]")),
        "{e}"
    );
    // 16 per online CPU: 128 on 8 CPUs.
    assert_eq!(parse(&timers(128)).unwrap().timers.len(), 128);
    let e = parse(&timers(129)).unwrap_err();
    assert!(e.contains("more than 128 timer_thread[N]"), "{e}");
    let programs = |n: usize, body: &str| -> String {
        let mut s = TIMER.to_string();
        for i in 0..n {
            s.push_str(&format!("program[{i}]\n{{\n{body}}}\n"));
        }
        s
    };
    let max = rtshield_limits::RUN_MAX_PROGRAMS;
    let cpu = "  load cpu\n  cpu_affinity 0\n";
    assert_eq!(parse(&programs(max, cpu)).unwrap().programs.len(), max);
    let e = parse(&programs(max + 1, cpu)).unwrap_err();
    assert!(e.contains("more than 256 program[N] stanzas"), "{e}");
    // hell on 8 CPUs, 64 workers each: 8 x 6 x 64 = 3072 processes; two
    // of them are more than 4096.
    let hell = "  load hell\n  load.workers 64\n";
    parse(&programs(1, hell)).unwrap();
    let e = parse(&programs(2, hell)).unwrap_err();
    assert!(e.contains("6144 processes") && e.contains("4096"), "{e}");
    // timers: 1000 threads per worker, 64 workers per CPU, 8 CPUs.
    let e = parse(&programs(
        1,
        "  load timers\n  load.size 1000\n  load.workers 64\n",
    ))
    .unwrap_err();
    assert!(e.contains("512000 threads") && e.contains("65536"), "{e}");
}
