//! The file formats, checked line by line on a fixed result.

use rtshield_results::example_result;
use rtshield_results::*;
use std::path::Path;

#[test]
fn systress_txt_has_the_systress_article_layout() {
    let r = example_result();
    let s = to_systress_txt(&r, &r.threads[0]);
    let lines: Vec<&str> = s.lines().collect();
    // Every bucket 0..=100, two right-aligned columns of 8.
    assert_eq!(lines[0], "       0        0");
    assert_eq!(lines[2], "       2        1");
    assert_eq!(lines[3], "       3        3");
    assert_eq!(lines[20], "      20        1");
    assert_eq!(lines[100], "     100        0");
    assert_eq!(lines[101], "");
    // The file ends with the systress article's SUMMARY block, column for column.
    let n = lines.len();
    assert_eq!(lines[n - 5], "#                            SUMMARY");
    assert_eq!(lines[n - 4], "#");
    assert_eq!(
        lines[n - 3],
        "# Index    TID  Samples  L_min  L_max  L_avg  Samples_H  L_avg_H  L_med_H  L_std_H  L_mode_H"
    );
    assert_eq!(lines[n - 2], "#");
    // min 2.1 -> 2, max 150.4 -> 150, avg 20.65 -> 21, Samples_H 9,
    // avg_H 5.67 -> 6, med 4, std 5.21 -> 5, mode 3.
    assert_eq!(
        lines[n - 1],
        "#      0  4242       10      2    150     21          9        6        4        5         3"
    );
    assert_eq!(lines[n - 1].len(), lines[n - 3].len());
    // Provenance sits between histogram and summary, as comments.
    assert!(s.contains("# kernel: 6.18.0 x86_64"));
    assert!(s.contains("overflow 1 underflow 0"));
    assert!(lines[102..n - 5].iter().all(|l| l.starts_with('#')));
}

#[test]
fn cyclictest_histogram_format() {
    let r = example_result();
    let s = to_cyclictest_hist(&r);
    let lines: Vec<&str> = s.lines().collect();
    let h = lines.iter().position(|l| *l == "# Histogram").unwrap();
    assert!(lines[..h].iter().all(|l| l.starts_with('#')));
    assert_eq!(lines[h + 1], "000000 000000");
    assert_eq!(lines[h + 4], "000003 000003");
    // A 100 us histogram: rows 0..99, as `cyclictest -h 100` (issue 22 #11).
    assert_eq!(lines[h + 100], "000099 000000");
    let rest = &lines[h + 101..];
    assert_eq!(rest[0], "# Total: 000000009");
    assert_eq!(rest[1], "# Min Latencies: 00002");
    assert_eq!(rest[2], "# Avg Latencies: 00020");
    assert_eq!(rest[3], "# Max Latencies: 00150");
    assert_eq!(rest[4], "# Histogram Overflows: 00001");
    assert_eq!(rest[5], "# Histogram Overflow at cycle number:");
    // The 150.4 us sample is the 10th: cycle number 9 (0-based).
    assert_eq!(rest[6], "# Thread 0: 00009");
    // cyclictest ends its histogram with an empty line.
    assert_eq!(rest.len(), 8);
    assert_eq!(rest[7], "");
    assert!(s.ends_with("# Thread 0: 00009\n\n"));
}

#[test]
fn cyclictest_histogram_tail_byte_for_byte() {
    // The end of what `cyclictest -q -h 50` printed on this machine, for a
    // thread without overflow (cyclictest then lists no cycle numbers).
    let mut r = example_result();
    let t = &mut r.threads[0];
    let h = t.histogram.as_mut().unwrap();
    h.overflow = 0;
    // `-h 50` is a 50 us histogram: rtshield's buckets 0..=50.
    h.buckets = 51;
    h.counts = vec![[14, 3], [49, 1509]];
    t.overflow_cycles = Some(vec![]);
    t.min_ns = Some(14_200);
    t.avg_ns = Some(39_999.0);
    t.max_ns = Some(49_100);
    let s = to_cyclictest_hist(&r);
    let tail = &s[s.find("000048 ").unwrap()..];
    assert_eq!(
        tail,
        "000048 000000\n000049 001509\n# Total: 000001512\n# Min Latencies: 00014\n\
         # Avg Latencies: 00039\n# Max Latencies: 00049\n# Histogram Overflows: 00000\n\
         # Histogram Overflow at cycle number:\n# Thread 0:\n\n"
    );
}

#[test]
fn systress_summary_reproduces_the_systress_article() {
    // The timer_thread00.txt of the systress article §4.3.4 ends with:
    //   #      0 13029    60000      2    100     17      55431       16       17        3        17
    let mut r = example_result();
    let t = &mut r.threads[0];
    t.tid = Some(13029);
    t.samples = Some(60000);
    t.min_ns = Some(2_000);
    t.max_ns = Some(100_000);
    t.avg_ns = Some(17_000.0);
    t.hist_stats = Some(HistStats {
        samples: 55431,
        avg_ns: 16_000.0,
        median_ns: 17_000,
        std_ns: 3_000.0,
        mode_ns: 17_000,
    });
    let s = to_systress_txt(&r, &r.threads[0]);
    let tail: Vec<&str> = s.lines().rev().take(5).collect();
    assert_eq!(
        tail,
        [
            "#      0 13029    60000      2    100     17      55431       16       17        3        17",
            "#",
            "# Index    TID  Samples  L_min  L_max  L_avg  Samples_H  L_avg_H  L_med_H  L_std_H  L_mode_H",
            "#",
            "#                            SUMMARY",
        ]
    );
}

#[test]
fn cyclictest_histogram_two_threads_tab_separated() {
    let mut r = example_result();
    let mut t = r.threads[0].clone();
    t.index = 1;
    t.histogram.as_mut().unwrap().counts = vec![[0, 7]];
    // Cycle numbers not recorded (an import): all overflows are "others".
    t.overflow_cycles = None;
    r.threads.push(t);
    let s = to_cyclictest_hist(&r);
    assert!(s.contains("\n000000 000000\t000007\n"));
    assert!(s.contains("\n# Total: 000000009 000000007\n"));
    assert!(s.contains("\n# Thread 0: 00009\n"));
    assert!(s.contains("\n# Thread 1: # 00001 others\n"));
}

#[test]
fn csv_one_row_per_thread() {
    let r = example_result();
    let s = to_csv(&r);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 2);
    let head: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(head.len(), row.len());
    let col = |name: &str| row[head.iter().position(|h| *h == name).unwrap()];
    assert_eq!(col("samples"), "10");
    assert_eq!(col("max_ns"), "150400");
    assert_eq!(col("overflow"), "1");
    // Ten samples support p50 and p90 only: p99.9 is "not enough
    // samples", an empty cell (it used to repeat the maximum).
    assert_eq!(col("p90_ns"), "20911");
    assert_eq!(col("p99.9_ns"), "");
    assert_eq!(col("median_h_ns"), "4000");
    assert_eq!(col("kernel_release"), "6.18.0");
    assert_eq!(col("command"), "rtshield measure --cpus 1");
}

#[test]
fn csv_quotes_fields_with_commas() {
    let mut r = example_result();
    r.warnings = vec!["a, \"b\"".into()];
    let s = to_csv(&r);
    assert!(s.trim_end().ends_with("\"a, \"\"b\"\"\""));
}

#[test]
fn write_all_then_read_back() {
    let d = tempfile::tempdir().unwrap();
    let r = example_result();
    write_all(&r, d.path()).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "histogram.txt",
            "results.csv",
            "results.json",
            "timer_thread00.txt"
        ]
    );
    assert_eq!(file_names(&r).len(), 4);
    let back = read_json(d.path().join(JSON_FILE)).unwrap();
    assert_eq!(back, r);
    // Rewriting (a checkpoint) replaces the files and leaves no temp file.
    write_all(&r, d.path()).unwrap();
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 4);
}

fn err_of(text: &str) -> String {
    parse_json(text, Path::new("x/results.json"))
        .unwrap_err()
        .to_string()
}

#[test]
fn read_errors_name_file_line_column() {
    let e = err_of("{\n  \"schema\": \"rtshield.results/1\",\n  oops\n}");
    assert!(e.starts_with("x/results.json:3:3: not valid JSON"), "{e}");
    let e = err_of("{\"tool\": \"x\"}");
    assert!(
        e.starts_with("x/results.json:1:1: not an rtshield results file"),
        "{e}"
    );
    let e = err_of("{\"schema\": \"rtshield.results/3\"}");
    assert!(e.contains("major version 3"), "{e}");
    let e = err_of("{\"schema\": \"cyclictest\"}");
    assert!(e.contains("unknown schema \"cyclictest\""), "{e}");
    let e = err_of("{\"schema\": \"rtshield.results/1\"}");
    assert!(
        e.starts_with("x/results.json:1:") && e.contains("missing field"),
        "{e}"
    );
    let e = read_json("/nonexistent/results.json").unwrap_err();
    assert!(matches!(e, ReadError::Io { .. }));
    assert!(e
        .to_string()
        .starts_with("cannot read /nonexistent/results.json"));
}

#[test]
fn invalid_is_an_input_error_in_the_chain() {
    let e = parse_json("[", Path::new("f.json")).unwrap_err();
    let src = std::error::Error::source(&e).unwrap();
    assert!(src.is::<rtshield_vocab::InputError>());
}

#[test]
fn minor_additions_are_accepted() {
    let mut v = serde_json::to_value(example_result()).unwrap();
    v["schema"] = "rtshield.results/2.3".into();
    v["future_field"] = 7.into();
    let r = parse_json(&v.to_string(), Path::new("f")).unwrap();
    assert_eq!(r.threads[0].samples, Some(10));
}

proptest::proptest! {
    #[test]
    fn parse_never_panics(s in ".*") {
        let _ = parse_json(&s, Path::new("p"));
    }

    #[test]
    fn parse_never_panics_on_jsonish(s in "\\{\"schema\": \"rtshield.results/[0-9.]{0,4}\"[ ,:a-z0-9\"\\[\\]{}]{0,40}") {
        let _ = parse_json(&s, Path::new("p"));
    }
}

#[test]
fn temperatures_at_start_and_end_are_in_every_result_file() {
    use rtshield_sys::ThermalZone;
    let mut r = example_result();
    let zone = |t: f64| ThermalZone {
        zone: 0,
        kind: "cpu-thermal".into(),
        temp_c: t,
    };
    r.sysinfo.thermal = vec![zone(61.852)];
    r.sysinfo.thermal_end = vec![zone(70.05)];
    let want = "# temperature: start cpu-thermal 61.9 C; end cpu-thermal 70.0 C";
    // The systress txt: a comment line between histogram and SUMMARY.
    let s = to_systress_txt(&r, &r.threads[0]);
    let lines: Vec<&str> = s.lines().collect();
    let at = lines.iter().position(|l| *l == want).expect(&s);
    assert!(at > 101 && at < lines.len() - 5, "{s}");
    // results.json carries both lists.
    let j: serde_json::Value = serde_json::to_value(&r).unwrap();
    assert_eq!(j["sysinfo"]["thermal"][0]["temp_c"], 61.852);
    assert_eq!(j["sysinfo"]["thermal_end"][0]["temp_c"], 70.05);
    // Without a thermal zone: no line at all.
    let plain = to_systress_txt(&example_result(), &example_result().threads[0]);
    assert!(!plain.contains("temperature"), "{plain}");
    // An older results.json without the fields still reads.
    let mut old = serde_json::to_value(example_result()).unwrap();
    for k in [
        "cpufreq",
        "cpuidle",
        "cpuidle_driver",
        "thermal",
        "thermal_end",
    ] {
        old["sysinfo"].as_object_mut().unwrap().remove(k);
    }
    let back: RunResult = serde_json::from_value(old).unwrap();
    assert!(back.sysinfo.thermal.is_empty());
}

/// Tools written elsewhere read `histogram.txt` unchanged: the OSADL
/// latency plot's shell steps (mklatencyplot.bash: drop `#` and empty
/// lines, spaces to tabs, `cut -f1,N` per core; the maximum from the
/// `Max Latencies` line through `tr`/`sort -n`/`tail`/`sed s/^0*//`),
/// rteval's cyclictest parser (skips `#` lines but reads `# Max
/// Latencies: `; `line.split()`, `int(vals[0])`, one `int` per core,
/// at least 1 + cores fields) and numpy's `loadtxt` (`#` comments, the
/// same number of whitespace-separated numbers on every row). The shell
/// steps run for real when bash and coreutils are there; the two Python
/// readers are re-stated in Python and run when python3 is there (numpy
/// itself when it is installed).
#[test]
#[allow(clippy::too_many_lines)] // three readers re-stated, one after the other
fn histogram_txt_reads_in_osadl_rteval_and_numpy() {
    let mut r = example_result();
    let mut t = r.threads[0].clone();
    t.index = 1;
    t.cpu = Some(3);
    t.max_ns = Some(87_000);
    t.histogram.as_mut().unwrap().counts = vec![[0, 7], [40, 2]];
    r.threads.push(t);
    r.warnings.push("a warning # with a hash".into());
    let text = to_cyclictest_hist(&r);
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("histogram.txt");
    std::fs::write(&f, &text).unwrap();
    // What every reader must find: bucket, count per thread, for the
    // rows of `cyclictest -h N` (0..N-1, N = 100 us: buckets 0..=100).
    let want: Vec<(u64, u64, u64)> = (0..r.threads[0].histogram.as_ref().unwrap().buckets - 1)
        .map(|b| {
            let c = |t: usize| {
                r.threads[t]
                    .histogram
                    .as_ref()
                    .unwrap()
                    .counts
                    .iter()
                    .find(|c| c[0] == b)
                    .map_or(0, |c| c[1])
            };
            (b, c(0), c(1))
        })
        .collect();

    // The layout they all rely on, checked here without any tool.
    let data: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(data.len(), want.len());
    for (l, w) in data.iter().zip(&want) {
        let v: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
        assert_eq!(v, [w.0, w.1, w.2], "{l}");
    }
    assert!(text.lines().any(|l| l == "# Max Latencies: 00150 00087"));

    let have = |cmd: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {cmd}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if ["bash", "grep", "tr", "cut", "sort", "tail", "sed"]
        .iter()
        .all(|c| have(c))
    {
        let script = r#"set -e
cd "$1"
grep -v -e "^#" -e "^$" histogram.txt | tr " " "\t" >histogram
for i in 1 2; do column=`expr $i + 1`; cut -f1,$column histogram >histogram$i; done
max=`grep "Max Latencies" histogram.txt | tr " " "\n" | sort -n | tail -1 | sed s/^0*//`
echo "$max"
"#;
        let o = std::process::Command::new("bash")
            .args(["-c", script, "osadl"])
            .arg(d.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "150");
        for (core, col) in [(1, 1usize), (2, 2)] {
            let h = std::fs::read_to_string(d.path().join(format!("histogram{core}"))).unwrap();
            let rows: Vec<(u64, u64)> = h
                .lines()
                .map(|l| {
                    let (a, b) = l
                        .split_once('\t')
                        .unwrap_or_else(|| panic!("no tab: {l:?}"));
                    (a.parse().unwrap(), b.parse().unwrap())
                })
                .collect();
            let w: Vec<(u64, u64)> = want
                .iter()
                .map(|w| (w.0, if col == 1 { w.1 } else { w.2 }))
                .collect();
            assert_eq!(rows, w, "histogram{core}");
        }
    }

    if have(rtshield_testkit::python3()) {
        let py = r#"
import sys
path, ncores = sys.argv[1], 2
# rteval's cyclictest parser, restated.
buckets = {c: {} for c in range(ncores)}
maxes = None
for line in open(path):
    if line.startswith('#'):
        if line.startswith('# Max Latencies: '):
            maxes = [int(v) for v in line.split(':')[1].split()]
        continue
    vals = line.split()
    if not vals:
        continue
    index = int(vals[0])
    assert len(vals) >= 1 + ncores, line
    for c in range(ncores):
        buckets[c][index] = buckets[c].get(index, 0) + int(vals[c + 1])
print("rteval", maxes, sum(k * v for k, v in buckets[0].items()), sum(buckets[1].values()))
# numpy.loadtxt when installed; else its rule: '#' starts a comment,
# blank lines skipped, every row the same number of float fields.
try:
    import numpy
    a = numpy.loadtxt(path)
    print("loadtxt", a.shape[0], a.shape[1], int(a[:, 1].sum()), int(a[:, 2].sum()))
except ImportError:
    rows = []
    for line in open(path):
        line = line.split('#', 1)[0].strip()
        if line:
            rows.append([float(x) for x in line.split()])
    assert len({len(r) for r in rows}) == 1
    print("loadtxt", len(rows), len(rows[0]), int(sum(r[1] for r in rows)), int(sum(r[2] for r in rows)))
"#;
        let o = std::process::Command::new(rtshield_testkit::python3())
            .args(["-c", py])
            .arg(&f)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        let weighted: u64 = want.iter().map(|w| w.0 * w.1).sum();
        let n1: u64 = want.iter().map(|w| w.2).sum();
        let n0: u64 = want.iter().map(|w| w.1).sum();
        assert!(
            out.contains(&format!("rteval [150, 87] {weighted} {n1}\n")),
            "{out}"
        );
        assert!(
            out.contains(&format!("loadtxt {} 3 {n0} {n1}\n", want.len())),
            "{out}"
        );
    }
}

#[test]
fn a_results_file_read_back_has_its_program_commands_redacted() {
    // Adversary round 2, B8: a file written before program commands were
    // redacted goes no further (report, export, `runs import`) in clear.
    let mut r = example_result();
    r.programs.push(ProgramResult {
        index: 0,
        command: "sh -c true postgres://rt:DBSECRET@db.lab/rt sslpassword=KEYSECRET".into(),
        cpus: None,
        spawns: 1,
        exits_ok: 1,
        exits_ko: 0,
    });
    let back = parse_json(&to_json(&r), Path::new("r.json")).unwrap();
    let c = &back.programs[0].command;
    assert_eq!(
        c, "sh -c true postgres://rt:***@db.lab/rt sslpassword=***",
        "{c}"
    );
}
