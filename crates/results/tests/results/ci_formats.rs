//! The formats CI systems read, each parsed back by a reader that shares
//! no code with the writer: Python's json and xml.etree (as LAVA's and
//! Jenkins' tooling would), and a strict line parser of the Prometheus
//! text format written here from the format's rules.

use rtshield_results::example_result;
use rtshield_results::{
    to_cyclictest_json, to_junit, to_kcidb, to_openmetrics, to_prometheus_text,
};
use rtshield_results::{Limits, RunResult, ThreadResult};
use std::collections::BTreeMap;
use std::process::Command;

/// Two threads: the example's, and a second one on CPU 3 with a larger
/// maximum, overruns and a sample below zero.
fn two_threads() -> RunResult {
    let mut r = example_result();
    r.sysinfo.hostname = Some("pi3-a".into());
    r.sysinfo.kernel_version = Some("#1 SMP PREEMPT_RT".into());
    r.sysinfo.preempt_model = Some("PREEMPT_RT".into());
    r.tags.insert("uuid".into(), "0b8e-42".into());
    // Enough samples for a p99.9 (1000; the example's ten support p90
    // at most), so every writer carries one.
    let t0 = &mut r.threads[0];
    t0.samples = Some(1000);
    t0.percentiles.insert("99".into(), 150_400);
    t0.percentiles.insert("99.9".into(), 150_400);
    let mut t: ThreadResult = r.threads[0].clone();
    t.index = 1;
    t.cpu = Some(3);
    t.max_ns = Some(1_250_000);
    t.overruns = Some(2);
    t.missed_periods = Some(5);
    let h = t.histogram.as_mut().unwrap();
    h.counts = vec![[1, 4], [7, 2], [99, 1]];
    h.underflow = 1;
    h.overflow = 2;
    t.samples = Some(10);
    // Not counted for this thread's samples: unknown (the linear histogram
    // then gives what it can).
    t.le_counts = None;
    t.overflow_cycles = None;
    r.threads.push(t);
    r
}

/// A limit given at export time.
fn limit(ns: u64) -> Limits {
    Limits {
        max_latency_ns: Some(ns),
    }
}

/// Run `script` with python3, the file as its argument; its stdout.
fn python(script: &str, file_text: &str) -> Option<String> {
    if !rtshield_testkit::require_tool(rtshield_testkit::python3(), "--version") {
        return None;
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("input");
    std::fs::write(&f, file_text).unwrap();
    let o = Command::new(rtshield_testkit::python3())
        .arg("-c")
        .arg(script)
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "python3 failed: {}\n--- file:\n{file_text}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(String::from_utf8(o.stdout).unwrap())
}

#[test]
fn cyclictest_json_has_cyclictests_keys_and_reads_like_lava() {
    let r = two_threads();
    let text = to_cyclictest_json(&r, &Limits::default());
    // The keys of a real `cyclictest --json` 2.40 file, exactly.
    let real: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/report/cyclictest-cpu1.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let ours: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&ours), keys(&real));
    assert_eq!(keys(&ours["sysinfo"]), keys(&real["sysinfo"]));
    assert_eq!(keys(&ours["thread"]["1"]), keys(&real["thread"]["0"]));
    // What LAVA's rt-tests parser does with it: per thread min/avg/max
    // lines, then the verdict from return_code (written independently).
    let lava = r#"
import json, sys
d = json.load(open(sys.argv[1]))
for i in range(int(d["num_threads"])):
    t = d["thread"][str(i)]
    for k in ("min", "avg", "max"):
        print("t%d-%s-latency pass %s us" % (i, k, t[k]))
print("cyclictest %s" % ("pass" if int(d["return_code"]) == 0 else "fail"))
h = d["thread"]["1"]["histogram"]
print("hist", sorted((int(k), v) for k, v in h.items()))
print("cpu", d["thread"]["1"]["cpu"], "node", d["thread"]["1"]["node"], "rt", d["sysinfo"]["realtime"])
"#;
    let Some(out) = python(lava, &text) else {
        return;
    };
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "t0-min-latency pass 2 us");
    assert_eq!(lines[1], "t0-avg-latency pass 20.65 us");
    assert_eq!(lines[2], "t0-max-latency pass 150 us");
    assert_eq!(lines[5], "t1-max-latency pass 1250 us");
    assert_eq!(lines[6], "cyclictest pass");
    assert_eq!(lines[7], "hist [(1, 4), (7, 2), (99, 1)]");
    assert_eq!(lines[8], "cpu 3 node 0 rt 1");
    // rtshield's own cyclictest reader takes it back.
    let back = rtshield_results::read_cyclictest_json(&text, "x").unwrap();
    assert_eq!(back.threads.len(), 2);
    assert_eq!(back.threads[1].max_ns, Some(1_250_000));
    assert_eq!(back.threads[1].cpu, Some(3));
    assert_eq!(back.sysinfo.hostname.as_deref(), Some("pi3-a"));
}

#[test]
fn junit_has_one_case_per_thread_failing_over_the_limit() {
    let r = two_threads();
    let reader = r#"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suite = root.find("testsuite")
print("suite", suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("hostname"))
props = {p.get("name"): p.get("value") for p in suite.find("properties")}
for k in ("kernel", "max_latency_ns", "tag.uuid"):
    if k in props:
        print("prop", k, props[k])
for i, case in enumerate(suite.findall("testcase")):
    f = case.find("failure")
    print("case", case.get("name"), "FAIL" if f is not None else "PASS",
          props["thread%d.max_ns" % i], props["thread%d.p99.9_ns" % i],
          props["thread%d.overruns" % i], f.get("message") if f is not None else "")
"#;
    let Some(out) = python(reader, &to_junit(&r, &limit(200_000))) else {
        return;
    };
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "suite rtshield latency pi3-a 6.18.0 2 1 pi3-a");
    assert!(lines.contains(&"prop kernel 6.18.0"), "{out}");
    assert!(lines.contains(&"prop max_latency_ns 200000"), "{out}");
    assert!(lines.contains(&"prop tag.uuid 0b8e-42"), "{out}");
    assert!(
        lines.contains(&"case thread 0 (cpu 1) PASS 150400 150400 0 "),
        "{out}"
    );
    assert!(
        lines.contains(
            &"case thread 1 (cpu 3) FAIL 1250000 150400 2 maximum latency 1250.0 us exceeds the limit 200.0 us"
        ),
        "{out}"
    );
    // Without a limit every thread that measured passes.
    let out = python(reader, &to_junit(&r, &Limits::default())).unwrap();
    assert!(
        out.starts_with("suite rtshield latency pi3-a 6.18.0 2 0 pi3-a"),
        "{out}"
    );
}

#[test]
fn kcidb_entries_follow_the_v5_schema() {
    let r = two_threads();
    let checker = r#"
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == {"major": 5, "minor": 0}, d["version"]
assert set(d) <= {"version", "checkouts", "builds", "tests", "issues", "incidents"}
allowed = {"build_id", "id", "origin", "environment", "path", "comment", "log_url",
           "log_excerpt", "status", "number", "waived", "start_time", "duration",
           "output_files", "misc"}
path_re = re.compile(r"^([a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*)?$")
for t in d["tests"]:
    assert set(t) <= allowed, set(t) - allowed
    for k in ("build_id", "id", "origin"):
        assert k in t, k
    assert re.match(r"^[a-z0-9_]+$", t["origin"])
    assert t["id"].startswith(t["origin"] + ":") and t["build_id"].startswith("rtshield:")
    assert path_re.match(t["path"]), t["path"]
    assert t["status"] in ("FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP")
    n = t["number"]
    assert set(n) <= {"value", "unit", "prefix"} and isinstance(n["value"], (int, float))
    assert n.get("prefix", "metric") in ("metric", "binary")
    assert set(t["environment"]) <= {"compatible", "comment", "misc"}
    def no_null(v):
        assert v is not None
        if isinstance(v, dict):
            for x in v.values(): no_null(x)
        if isinstance(v, list):
            for x in v: no_null(x)
    no_null(t)
ids = [t["id"] for t in d["tests"]]
assert len(ids) == len(set(ids)), "ids are unique"
by = {t["path"]: t for t in d["tests"]}
for p in ("rtshield.latency.t0.max", "rtshield.latency.t1.max", "rtshield.latency.t1.p99_9", "rtshield.latency.t1.overruns"):
    t = by[p]
    print(p, t["status"], repr(t["number"]["value"]), t["number"].get("unit", "-"))
"#;
    let Some(out) = python(checker, &to_kcidb(&r, &limit(200_000), None)) else {
        return;
    };
    assert_eq!(
        out,
        "rtshield.latency.t0.max PASS 0.0001504 s\n\
         rtshield.latency.t1.max FAIL 0.00125 s\n\
         rtshield.latency.t1.p99_9 DONE 0.0001504 s\n\
         rtshield.latency.t1.overruns DONE 2.0 -\n"
    );
}

/// One sample line of the Prometheus text format.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// A strict reader of OpenMetrics 1.0 text as rtshield writes it: the
/// metric and label name grammar, quoted and escaped label values, float
/// values, `# TYPE` before a family's samples, each family contiguous, a
/// counter family named without `_total` and its samples with it, the
/// file ending in `# EOF\n`. Returns the samples and the types.
// The format's rules in one place, in the order the format states them.
#[allow(clippy::too_many_lines)]
fn parse_prom(text: &str) -> (Vec<Sample>, BTreeMap<String, String>) {
    let is_name = |s: &str, colon: bool| {
        let mut c = s.chars();
        matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_' || (colon && f == ':'))
            && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || (colon && x == ':'))
    };
    assert!(text.ends_with("# EOF\n"), "ends with # EOF");
    let mut types = BTreeMap::new();
    let mut samples = Vec::new();
    let mut done_families: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    let family_of = |name: &str, types: &BTreeMap<String, String>| {
        for suf in ["_bucket", "_sum", "_count"] {
            if let Some(b) = name.strip_suffix(suf) {
                if types.get(b).map(String::as_str) == Some("histogram") {
                    return b.to_string();
                }
            }
        }
        // OpenMetrics: a counter family is named without `_total`.
        if let Some(b) = name.strip_suffix("_total") {
            if types.get(b).map(String::as_str) == Some("counter") {
                return b.to_string();
            }
        }
        name.to_string()
    };
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let at = format!("line {}: {line:?}", i + 1);
        if *line == "# EOF" {
            assert_eq!(i + 1, lines.len(), "# EOF is the last line");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            let mut p = rest.splitn(3, ' ');
            let kw = p.next().unwrap();
            let name = p.next().expect(&at);
            assert!(is_name(name, true), "{at}");
            match kw {
                "HELP" => assert!(p.next().is_some_and(|h| !h.is_empty()), "{at}"),
                "TYPE" => {
                    let t = p.next().expect(&at);
                    assert!(
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(&t),
                        "{at}"
                    );
                    assert!(
                        types.insert(name.to_string(), t.to_string()).is_none(),
                        "{at}: TYPE twice"
                    );
                    assert!(
                        !done_families.contains(&name.to_string()),
                        "{at}: TYPE after samples"
                    );
                }
                _ => panic!("{at}: unknown comment"),
            }
            continue;
        }
        // name{labels} value
        let (head, value) = line.rsplit_once(' ').expect(&at);
        let (name, labels) = match head.find('{') {
            Some(b) => {
                assert!(head.ends_with('}'), "{at}");
                (&head[..b], &head[b + 1..head.len() - 1])
            }
            None => (head, ""),
        };
        assert!(is_name(name, true), "{at}: metric name");
        let mut map = BTreeMap::new();
        let mut rest = labels;
        while !rest.is_empty() {
            let eq = rest.find("=\"").expect(&at);
            let ln = &rest[..eq];
            assert!(is_name(ln, false), "{at}: label name {ln:?}");
            let mut val = String::new();
            let mut chars = rest[eq + 2..].char_indices();
            let end = loop {
                let (j, c) = chars.next().expect(&at);
                match c {
                    '\\' => match chars.next().expect(&at).1 {
                        'n' => val.push('\n'),
                        '\\' => val.push('\\'),
                        '"' => val.push('"'),
                        o => panic!("{at}: bad escape \\{o}"),
                    },
                    '"' => break eq + 2 + j + 1,
                    '\n' => panic!("{at}"),
                    c => val.push(c),
                }
            };
            assert!(
                map.insert(ln.to_string(), val).is_none(),
                "{at}: label twice"
            );
            rest = &rest[end..];
            rest = rest.strip_prefix(',').unwrap_or(rest);
        }
        let v = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            v => v.parse::<f64>().expect(&at),
        };
        let fam = family_of(name, &types);
        assert!(types.contains_key(&fam), "{at}: no TYPE for {fam}");
        if current.as_deref() != Some(&fam) {
            assert!(
                !done_families.contains(&fam),
                "{at}: family {fam} not contiguous"
            );
            if let Some(c) = current.take() {
                done_families.push(c);
            }
            current = Some(fam.clone());
        }
        if types[&fam] == "counter" {
            assert_eq!(
                name,
                format!("{fam}_total"),
                "{at}: a counter's sample is its family's name + _total"
            );
        }
        samples.push(Sample {
            name: name.to_string(),
            labels: map,
            value: v,
        });
    }
    (samples, types)
}

#[test]
fn openmetrics_is_valid_text_exposition_with_consistent_histograms() {
    let r = two_threads();
    let text = to_openmetrics(&r);
    let (samples, types) = parse_prom(&text);
    assert_eq!(types["rtshield_latency_seconds"], "histogram");
    assert_eq!(types["rtshield_overruns"], "counter");
    for thread in ["0", "1"] {
        let of = |n: &str| {
            samples
                .iter()
                .filter(|s| s.name == n && s.labels["thread"] == thread)
                .collect::<Vec<_>>()
        };
        let buckets = of("rtshield_latency_seconds_bucket");
        // le ascending, counts cumulative, +Inf last and equal to _count.
        let les: Vec<f64> = buckets
            .iter()
            .map(|s| {
                let l = &s.labels["le"];
                if l == "+Inf" {
                    f64::INFINITY
                } else {
                    l.parse().unwrap()
                }
            })
            .collect();
        assert!(les.windows(2).all(|w| w[0] < w[1]), "{les:?}");
        assert!(buckets.windows(2).all(|w| w[0].value <= w[1].value));
        assert_eq!(*les.last().unwrap(), f64::INFINITY);
        let count = of("rtshield_latency_seconds_count")[0].value;
        assert_eq!(buckets.last().unwrap().value, count);
        assert!(of("rtshield_latency_seconds_sum")[0].value >= 0.0);
    }
    let get = |n: &str, thread: &str, le: Option<&str>| {
        samples
            .iter()
            .find(|s| {
                s.name == n
                    && s.labels["thread"] == thread
                    && le.is_none_or(|l| {
                        s.labels.get("le").and_then(|v| v.parse::<f64>().ok())
                            == l.parse::<f64>().ok()
                    })
            })
            .unwrap_or_else(|| panic!("{n} {thread} {le:?}"))
            .value
    };
    // Thread 0: 9 samples in [2, 20] µs buckets + 1 overflow.
    assert_eq!(
        get("rtshield_latency_seconds_bucket", "0", Some("5e-6")),
        0.0 + 1.0 + 3.0 + 1.0
    );
    assert_eq!(
        get("rtshield_latency_seconds_bucket", "0", Some("0.00005")),
        9.0
    );
    assert_eq!(get("rtshield_latency_seconds_count", "0", None), 10.0);
    // Thread 1: the sample below zero is in every bucket; 99 µs ≤ 100 µs.
    assert_eq!(
        get("rtshield_latency_seconds_bucket", "1", Some("0.000002")),
        1.0 + 4.0
    );
    assert_eq!(
        get("rtshield_latency_seconds_bucket", "1", Some("0.0001")),
        8.0
    );
    assert_eq!(get("rtshield_latency_seconds_count", "1", None), 10.0);
    assert_eq!(get("rtshield_overruns_total", "1", None), 2.0);
    assert_eq!(get("rtshield_missed_periods_total", "1", None), 5.0);
    assert_eq!(get("rtshield_latency_max_seconds", "1", None), 0.00125);
    let cpu1 = samples
        .iter()
        .find(|s| s.name == "rtshield_latency_max_seconds" && s.labels["thread"] == "1")
        .unwrap();
    assert_eq!(cpu1.labels["cpu"], "3");
}

/// Whether `python3 -c "import MODULE"` works.
fn has_python_module(module: &str) -> bool {
    Command::new(rtshield_testkit::python3())
        .args(["-c", &format!("import {module}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The Prometheus client library's parsers read the files too (the
/// families and their types): its strict OpenMetrics parser the
/// `openmetrics` export, its 0.0.4 text parser the `prometheus` one. CI
/// installs it (Debian's `python3-prometheus-client`, scripts/test.sh), so
/// under RTSHIELD_REQUIRE_ROOT a missing module fails; elsewhere it is a
/// SKIP and the strict reader above is the test.
#[test]
fn prometheus_client_reads_it() {
    if !rtshield_testkit::require(
        has_python_module("prometheus_client"),
        "python3 module prometheus_client is not installed (Debian: python3-prometheus-client)",
    ) {
        return;
    }
    for (parser, text) in [
        (
            "prometheus_client.openmetrics.parser",
            to_openmetrics(&two_threads()),
        ),
        (
            "prometheus_client.parser",
            to_prometheus_text(&two_threads()),
        ),
    ] {
        let script = format!(
            r#"
import sys
from {parser} import text_string_to_metric_families
for f in text_string_to_metric_families(open(sys.argv[1]).read()):
    print(f.name, f.type, len(f.samples))
"#
        );
        let out = python(&script, &text).unwrap();
        // Thread 0: 22 bounds, +Inf, _count, _sum. Thread 1 (no exact
        // counts): the 7 bounds up to its 100 us histogram and the 12 at or
        // above its 1.25 ms maximum, +Inf, _count, _sum.
        assert!(
            out.contains("rtshield_latency_seconds histogram 47\n"),
            "{parser}: {out}"
        );
        assert!(
            out.contains("rtshield_overruns counter 2\n"),
            "{parser}: {out}"
        );
    }
}

/// KernelCI's `kcidb-io` v5.0 JSON schema validates the file.
/// scripts/test.sh installs it (`pip:kcidb-io` in scripts/test-packages.txt,
/// on PYTHONPATH), so under RTSHIELD_REQUIRE_ROOT a missing module fails;
/// elsewhere it is a SKIP and the schema checker above is the test.
#[test]
fn kcidb_io_validates_it_where_installed() {
    if !rtshield_testkit::require(
        has_python_module("kcidb_io"),
        "python3 module kcidb_io is not installed (not packaged by Debian: \
         scripts/test.sh installs pip:kcidb-io from scripts/test-packages.txt)",
    ) {
        return;
    }
    let script = r#"
import json, sys, kcidb_io
kcidb_io.schema.V5_0.validate(json.load(open(sys.argv[1])))
print("valid")
"#;
    let r = two_threads();
    let out = python(script, &to_kcidb(&r, &limit(200_000), Some("kernelci:abc"))).unwrap();
    assert_eq!(out, "valid\n");
}

#[test]
fn the_strict_prometheus_reader_rejects_what_it_must() {
    for bad in [
        "x 1\n# EOF\n",                                           // no TYPE
        "# TYPE x gauge\nx{a=\"1} 1\n# EOF\n",                    // unterminated value
        "# TYPE x gauge\nx 1\n",                                  // no # EOF
        "# TYPE x gauge\nx 1\n# TYPE y gauge\ny 1\nx 2\n# EOF\n", // not contiguous
        "# TYPE x counter\nx 1\n# EOF\n",                         // counter without _total
        "# TYPE x_total counter\nx_total 1\n# EOF\n",             // a 0.0.4 counter family
        "# TYPE 1x gauge\n1x 1\n# EOF\n",                         // bad name
        "# TYPE x gauge\nx one\n# EOF\n",                         // bad value
    ] {
        let r = std::panic::catch_unwind(|| parse_prom(bad));
        assert!(r.is_err(), "accepted: {bad:?}");
    }
}

/// The `rtshield_latency_seconds` lines of thread `thread`: (le or the
/// suffix, value text).
fn histogram_lines(text: &str, thread: &str) -> Vec<(String, String)> {
    let sel = format!("thread=\"{thread}\"");
    text.lines()
        .filter(|l| l.starts_with("rtshield_latency_seconds_") && l.contains(&sel))
        .map(|l| {
            let (head, v) = l.rsplit_once(' ').unwrap();
            let key = match head.split("le=\"").nth(1) {
                Some(le) => le.trim_end_matches("\"}").to_string(),
                None => head.split('{').next().unwrap().to_string(),
            };
            (key, v.to_string())
        })
        .collect()
}

/// Issue 22 #6: every bucket at or above the maximum holds every sample,
/// the overflow included (the example's 150.4 us sample is past its 100 us
/// histogram: before, `le="0.0002"` held 9 of 10 and only `+Inf` had it).
#[test]
fn issue22_6_openmetrics_buckets_count_the_overflow_samples() {
    let mut r = example_result();
    let text = to_openmetrics(&r);
    let lines = histogram_lines(&text, "0");
    let get = |k: &str| lines.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
    assert_eq!(get("0.0002").as_deref(), Some("10"), "{text}");
    assert_eq!(get("0.00005").as_deref(), Some("9"), "{text}");
    assert_eq!(get("+Inf").as_deref(), Some("10"), "{text}");
    // Without exact counts (an older file): at or above the maximum all 10
    // samples; between the histogram's end (101 us) and the maximum the
    // count is unknown: no line.
    r.threads[0] = serde_json::from_value({
        let mut v = serde_json::to_value(&r.threads[0]).unwrap();
        v.as_object_mut().unwrap().remove("le_counts");
        v
    })
    .unwrap();
    let text = to_openmetrics(&r);
    let lines = histogram_lines(&text, "0");
    let get = |k: &str| lines.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
    assert_eq!(get("0.0002").as_deref(), Some("10"), "{text}");
    assert_eq!(get("0.0001").as_deref(), Some("9"), "{text}");
    assert_eq!(get("+Inf").as_deref(), Some("10"), "{text}");
    assert!(!text.contains("le=\"0.00015\""), "no bound between: {text}");
}

/// Consumer finding new 4: `_sum` is the exact sum of the samples in ns,
/// printed as an exact decimal, whatever float the mean went through (the
/// issue's run: 24970 samples summing to 504031722 ns; before, the export
/// wrote 0.5040317220000001 and `--metrics-file` 0.504031722).
#[test]
fn issue22_new4_openmetrics_sum_is_the_exact_ns_sum() {
    let mut r = example_result();
    let t = &mut r.threads[0];
    t.samples = Some(24970);
    let h = t.histogram.as_mut().unwrap();
    h.counts = vec![[20, 24970]];
    h.overflow = 0;
    t.avg_ns = Some(504_031_722.0 / 24970.0);
    // As read back from results.json, perhaps one unit in the last place off.
    let avg_read: f64 = serde_json::from_str(&serde_json::to_string(&t.avg_ns).unwrap()).unwrap();
    let avg = t.avg_ns.unwrap();
    for avg in [avg, avg_read, f64::from_bits(avg.to_bits() + 1)] {
        r.threads[0].avg_ns = Some(avg);
        let text = to_openmetrics(&r);
        let sum = histogram_lines(&text, "0")
            .into_iter()
            .find(|(k, _)| k == "rtshield_latency_seconds_sum")
            .unwrap()
            .1;
        assert_eq!(sum, "0.504031722", "avg {avg:?}");
    }
}
