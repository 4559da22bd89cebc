//! Library-level tests of the report: numbers carried by every output
//! against the input statistics, determinism, errors, atomic output.

use rtshield_report::{
    generate, synth_run_result, synth_timeline_csv, write_synth_run_dir, Format, Options, MANIFEST,
};
use rtshield_results::thread_from_histogram;
use rtshield_results::{Histogram, RunResult};
use rtshield_testkit::input_error;
use std::path::{Path, PathBuf};

/// A run with a hand-checkable histogram: 2×10 µs, 5×11 µs, 2×12 µs,
/// 1×15 µs, plus 1 overflow (max 120 µs) beyond 100 buckets.
fn small_run(label: &str, cpu: u32) -> RunResult {
    let mut r = synth_run_result(label, 1, &[cpu], 10, 10.0, 0.0, 100);
    let h = Histogram {
        resolution_ns: 1000,
        buckets: 100,
        counts: vec![[10, 2], [11, 5], [12, 2], [15, 1]],
        overflow: 1,
        underflow: 0,
    };
    let mut t = thread_from_histogram(
        0,
        Some(cpu),
        Some(200_000),
        11,
        Some(10_200),
        Some(120_000),
        Some(21_000.0),
        h,
    );
    t.overruns = Some(3);
    t.percentiles.insert("99".into(), 119_000);
    r.threads = vec![t];
    r
}

fn opts(inputs: Vec<PathBuf>, out: &Path) -> Options {
    Options {
        inputs,
        names: vec![],
        out_dir: out.to_path_buf(),
        formats: Format::ALL.to_vec(),
        title: "Test report".into(),
        policy: rtshield_safefs::DirPolicy::Strict,
        x_max_us: None,
    }
}

fn two_runs(d: &Path) -> Vec<PathBuf> {
    let a = d.join("idle");
    let b = d.join("loaded");
    write_synth_run_dir(&a, &small_run("idle", 1), None).unwrap();
    let loaded = synth_run_result("loaded", 7, &[2, 3], 5000, 12.0, 0.5, 100);
    write_synth_run_dir(&b, &loaded, Some(&synth_timeline_csv(3, 40, &[2, 3]))).unwrap();
    vec![a, b]
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn summary_carries_the_input_statistics() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rep");
    let o = generate(&opts(two_runs(d.path()), &out)).unwrap();
    assert_eq!(o.curves, 3);
    let csv = read(&out.join("summary.csv"));
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows[0],
        ["metric", "idle:cpu1", "loaded:cpu2", "loaded:cpu3"]
    );
    let cell = |name: &str| {
        rows.iter()
            .find(|r| r[0] == name)
            .unwrap_or_else(|| panic!("{name}"))[1]
    };
    assert_eq!(cell("samples"), "11");
    assert_eq!(cell("min (µs)"), "10"); // 10.2 µs shown at µs resolution
    assert_eq!(cell("avg (µs)"), "21.00");
    assert_eq!(cell("L_med_H (µs)"), "11"); // 6th of 10 in-histogram samples
    assert_eq!(cell("L_mode_H (µs)"), "11");
    assert_eq!(cell("Samples_H"), "10");
    // std over 10,10,11×5,12,12,15: mean 11.4, var 18.4/10 = 1.84
    assert_eq!(cell("L_std_H (µs)"), "1.36");
    // 11 samples: a p99 needs 100.
    assert_eq!(cell("p99 (µs)"), "not enough samples");
    // 5000 samples at most: no column has the 10⁴ a p99.99 needs.
    assert!(!rows.iter().any(|r| r[0] == "p99.99 (µs)"));
    assert_eq!(cell("max (µs)"), "120");
    assert_eq!(cell("overflows"), "1");
    assert_eq!(cell("overruns"), "3");
    // Provenance that differs: the load tag; the kernel is the same.
    assert_eq!(
        rows.iter().find(|r| r[0] == "load").unwrap()[1..],
        ["none", "cpu", "cpu"]
    );
    assert!(!rows.iter().any(|r| r[0] == "kernel"));

    // The other threads' cells are their own numbers.
    let r: RunResult = serde_json::from_str(&read(&d.path().join("loaded/results.json"))).unwrap();
    let t = &r.threads[1];
    let col = |name: &str| rows.iter().find(|r| r[0] == name).unwrap()[3].to_string();
    assert_eq!(col("samples"), t.samples.unwrap().to_string());
    assert_eq!(col("max (µs)"), (t.max_ns.unwrap() / 1000).to_string());
    assert_eq!(
        col("overflows"),
        t.histogram.as_ref().unwrap().overflow.to_string()
    );
    // Exact, or (its rank among the overflow) only a bound.
    let want = match t.pct("99.9") {
        rtshield_results::Pct::Exact(v) => (v / 1000).to_string(),
        rtshield_results::Pct::AtLeast(v, _) => format!("≥{}", v / 1000),
        other => panic!("{other:?}"),
    };
    assert_eq!(col("p99.9 (µs)"), want);

    let md = read(&out.join("summary.md"));
    assert!(
        md.contains("| | idle:cpu1 | loaded:cpu2 | loaded:cpu3 |"),
        "{md}"
    );
    assert!(md.contains("| max (µs) | 120 |"), "{md}");
}

/// Adversary round 3, C3: a title (`--title`) or a label holding
/// controls XML 1.0 forbids (ESC, BEL: a campaign's load name reaches the
/// title) went raw into the SVG files, which no XML parser then reads.
/// Every SVG written parses with python3's XML parser.
#[test]
fn svg_files_are_well_formed_xml_whatever_the_title_and_labels() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let hostile = "T\x1b]0;X\x07 \u{1}<b>&amp;\"'\u{ffff}";
    write_synth_run_dir(&a, &small_run(hostile, 1), None).unwrap();
    let out = d.path().join("rep");
    let mut o = opts(vec![a], &out);
    o.title = hostile.into();
    o.names = vec![format!("{hostile}\u{2}")];
    o.formats = vec![Format::Svg];
    generate(&o).unwrap();
    for f in ["latency.svg", "percentiles.svg"] {
        let p = out.join(f);
        let st = std::process::Command::new("python3")
            .args([
                "-c",
                "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])",
            ])
            .arg(&p)
            .status()
            .expect("python3 runs");
        assert!(st.success(), "{f} is not well-formed XML: {}", read(&p));
        assert!(read(&p).contains("T\u{FFFD}]0;X\u{FFFD}"), "{f}");
    }
}

/// The systress article's SUMMARY has `L_avg_H` (the mean inside the
/// histogram) between `Samples_H` and `L_med_H`; so do report's tables.
#[test]
fn summary_has_l_avg_h_between_samples_h_and_l_med_h() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rep");
    generate(&opts(two_runs(d.path()), &out)).unwrap();
    let csv = read(&out.join("summary.csv"));
    let names: Vec<&str> = csv.lines().map(|l| l.split(',').next().unwrap()).collect();
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap_or(usize::MAX);
    assert_eq!(at("L_avg_H (µs)"), at("Samples_H") + 1, "{csv}");
    assert_eq!(at("L_med_H (µs)"), at("L_avg_H (µs)") + 1, "{csv}");
    // 10,10,11×5,12,12,15 inside the histogram: mean 11.4.
    assert!(
        csv.lines().any(|l| l.starts_with("L_avg_H (µs),11.40,")),
        "{csv}"
    );
    assert!(read(&out.join("summary.md")).contains("| L_avg_H (µs) | 11.40 |"));
    assert!(read(&out.join("report.html")).contains("L_avg_H (µs)"));
}

#[test]
fn svg_has_one_curve_per_thread_with_its_points() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rep");
    generate(&opts(two_runs(d.path()), &out)).unwrap();
    let svg = read(&out.join("latency.svg"));
    assert!(svg.starts_with("<svg width=\"1200\" height=\"800\""));
    for label in ["idle:cpu1", "loaded:cpu2", "loaded:cpu3"] {
        assert!(svg.contains(label), "legend entry {label}");
    }
    // Curve of idle:cpu1 (first palette colour), buckets 10 11 12 _ _ 15:
    // a line through the three adjacent buckets, none across the empty
    // 13 and 14 (no count to draw on a log axis), and bucket 15 a dot.
    let idle: Vec<&str> = svg.lines().filter(|l| l.contains("\"#1F77B4\"")).collect();
    let lines: Vec<Vec<(f64, f64)>> = idle
        .iter()
        .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\""))
        .map(|l| {
            let pts = l.split("points=\"").nth(1).unwrap();
            pts[..pts.find('"').unwrap()]
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect();
    assert_eq!(lines.len(), 1, "{idle:#?}");
    let l = &lines[0];
    assert_eq!(l.len(), 3, "buckets 10, 11, 12");
    assert_eq!(l[0].1, l[2].1, "2 samples in buckets 10 and 12");
    assert!(l[1].1 < l[0].1, "5 samples in bucket 11 are higher up");
    let dots: Vec<f64> = idle
        .iter()
        .filter(|l| l.starts_with("<circle"))
        .map(|l| {
            let i = l.find("cx=\"").unwrap() + 4;
            l[i..i + l[i..].find('"').unwrap()].parse().unwrap()
        })
        .collect();
    assert_eq!(dots.len(), 1, "bucket 15 alone: {idle:#?}");
    let per_us = l[1].0 - l[0].0;
    assert!(
        (dots[0] - (l[0].0 + 5.0 * per_us)).abs() <= 2.0,
        "dot at 15 µs"
    );
    // The legend in plain words: max beyond the axis (which ends at the
    // 100 µs histogram end), overflow count.
    assert!(
        svg.contains("\nmax 120 µs (beyond axis)\n"),
        "max in the legend"
    );
    assert!(
        svg.contains("\n1 overflow ≥ 100 µs\n"),
        "overflow in the legend"
    );
    assert!(!svg.contains('→'), "no arrow glyph");
}

#[test]
fn html_embeds_the_histograms_and_is_self_contained() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rep");
    generate(&opts(two_runs(d.path()), &out)).unwrap();
    let html = read(&out.join("report.html"));
    let start = html.find("id=\"rts-data\">").unwrap() + "id=\"rts-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    let s = data["series"].as_array().unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!(s[0]["label"], "idle:cpu1");
    assert_eq!(
        s[0]["points"],
        serde_json::json!([[10.0, 2], [11.0, 5], [12.0, 2], [15.0, 1]])
    );
    assert_eq!(s[0]["overflow"], 1);
    assert_eq!(s[0]["max_us"], 120.0);
    assert_eq!(s[0]["segments"], serde_json::json!([[0, 3], [3, 4]]));
    assert_eq!(
        s[0]["note"],
        "max 120 µs (beyond axis) · 1 overflow ≥ 100 µs"
    );
    // The script draws on the axes the PNG uses: the last bucket of the
    // loaded run (99 µs) + 5 %, to two digits.
    assert_eq!(data["xmax"], 110.0);
    assert!(html.contains("<table class=\"summary\">"));
    assert!(html.contains("data:image/png;base64,"), "timeline inlined");
    assert!(html.contains("sysinfo kernel_release"), "sysinfo shown");
    assert!(html.contains("stats.period = 5 s"), "config shown");
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "no network"
    );
}

#[test]
fn outputs_are_deterministic() {
    let d = tempfile::tempdir().unwrap();
    let inputs = two_runs(d.path());
    generate(&opts(inputs.clone(), &d.path().join("a"))).unwrap();
    generate(&opts(inputs, &d.path().join("b"))).unwrap();
    let mut names: Vec<_> = std::fs::read_dir(d.path().join("a"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    for n in names {
        let a = std::fs::read(d.path().join("a").join(&n)).unwrap();
        let b = std::fs::read(d.path().join("b").join(&n)).unwrap();
        assert!(a == b, "{n:?} differs between two runs");
    }
}

#[test]
fn timeline_png_and_gnuplot_files() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rep");
    let o = generate(&opts(two_runs(d.path()), &out)).unwrap();
    assert!(
        o.files.contains(&"timeline.png".to_string()),
        "{:?}",
        o.files
    );
    let png = std::fs::read(out.join("timeline.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let gp = read(&out.join("plot.gp"));
    assert!(gp.contains("set logscale y"));
    for f in [
        "latency-idle_cpu1.dat",
        "latency-loaded_cpu2.dat",
        "latency-loaded_cpu3.dat",
    ] {
        assert!(gp.contains(f), "plot.gp uses {f}");
        assert!(out.join(f).is_file(), "{f} written");
    }
    let dat = read(&out.join("latency-idle_cpu1.dat"));
    let rows: Vec<&str> = dat.lines().filter(|l| !l.starts_with('#')).collect();
    // A blank line breaks gnuplot's line at the empty buckets 13 and 14.
    assert_eq!(rows, ["10 2", "11 5", "12 2", "", "15 1"]);
    assert!(
        gp.contains("title 'idle:cpu1: max 120 us (beyond axis), 1 overflow >= 100 us'"),
        "{gp}"
    );
    assert!(gp.contains("set xrange [0:110]"), "{gp}");
    let tl = read(&out.join("timeline-loaded_cpu2.dat"));
    assert_eq!(tl.lines().filter(|l| !l.starts_with('#')).count(), 40);
    assert!(read(&out.join("timeline.gp")).contains("timeline-loaded_cpu3.dat"));
}

#[test]
fn gnuplot_script_runs_when_gnuplot_is_installed() {
    if !rtshield_testkit::require_tool("gnuplot", "--version") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rep");
    let mut o = opts(two_runs(d.path()), &out);
    o.formats = vec![Format::Gnuplot];
    generate(&o).unwrap();
    let st = std::process::Command::new("gnuplot")
        .current_dir(&out)
        .args([
            "-e",
            "set terminal svg size 600,400; set output 'gp.svg'",
            "plot.gp",
        ])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert!(read(&out.join("gp.svg")).contains("idle:cpu1"));
}

#[test]
fn formats_select_outputs() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rep");
    let mut o = opts(two_runs(d.path()), &out);
    o.formats = vec![Format::Md, Format::Csv];
    let r = generate(&o).unwrap();
    assert_eq!(r.files, ["summary.csv", "summary.md"]);
}

#[test]
fn names_override_and_duplicates_are_suffixed() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("x/results.json");
    let b = d.path().join("y/results.json");
    let mut r = small_run("same", 1);
    write_synth_run_dir(a.parent().unwrap(), &r, None).unwrap();
    r.threads[0].cpu = Some(1);
    write_synth_run_dir(b.parent().unwrap(), &r, None).unwrap();
    let out = d.path().join("rep");
    let o = generate(&opts(vec![a.clone(), b.clone()], &out)).unwrap();
    assert_eq!(o.table.columns, ["same:cpu1", "same-2:cpu1"]);
    let mut op = opts(vec![a.clone(), b.clone()], &out);
    op.names = vec!["before".into(), "after".into()];
    assert_eq!(
        generate(&op).unwrap().table.columns,
        ["before:cpu1", "after:cpu1"]
    );
    op.names = vec!["a".into(), "b".into(), "c".into()];
    let e = generate(&op).unwrap_err().to_string();
    assert!(e.contains("3 --name labels for 2 results"), "{e}");
}

#[test]
fn bad_inputs_name_the_file_and_write_nothing() {
    let d = tempfile::tempdir().unwrap();
    let good = two_runs(d.path());
    let out = d.path().join("rep");

    // Missing file.
    let missing = d.path().join("nope.json");
    let e = generate(&opts(vec![good[0].clone(), missing.clone()], &out)).unwrap_err();
    assert!(
        input_error(&e).contains(&missing.display().to_string()),
        "{e}"
    );
    assert!(!out.exists(), "no report after an error");

    // Truncated JSON.
    let text = read(&good[0].join("results.json"));
    let cut = d.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let e = generate(&opts(vec![good[0].clone(), cut.clone()], &out)).unwrap_err();
    let msg = input_error(&e);
    assert!(msg.starts_with(&format!("{}:", cut.display())), "{msg}");
    assert!(msg.contains("EOF while parsing"), "{msg}");

    // Unknown schema version.
    let v2 = d.path().join("v2.json");
    std::fs::write(
        &v2,
        text.replace("rtshield.results/2", "rtshield.results/3"),
    )
    .unwrap();
    let e = generate(&opts(vec![v2.clone()], &out)).unwrap_err();
    let msg = input_error(&e);
    assert!(
        msg.contains(&v2.display().to_string())
            && msg.contains("\"rtshield.results/3\" has major version 3"),
        "{msg}"
    );

    // A directory without results.json.
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let msg = input_error(&generate(&opts(vec![empty.clone()], &out)).unwrap_err());
    assert!(msg.contains("without results.json"), "{msg}");

    // A bad timeline.csv beside a good results.json.
    let bad_tl = d.path().join("badtl");
    write_synth_run_dir(
        &bad_tl,
        &small_run("b", 1),
        Some("t_s,max_us\n5,12\n10,oops\n"),
    )
    .unwrap();
    let msg = input_error(&generate(&opts(vec![bad_tl.clone()], &out)).unwrap_err());
    assert!(
        msg.starts_with(&format!(
            "{}:3:4: `oops`",
            bad_tl.join("timeline.csv").display()
        )),
        "{msg}"
    );

    assert!(!out.exists(), "still no report");
    // No temporary directory left behind either.
    let leftovers: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty());
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// An earlier report with more curves: its data files do not survive into
/// the new report, which holds exactly its own files and the manifest.
#[test]
fn rewriting_a_report_leaves_only_the_new_files() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rep");
    let inputs = two_runs(d.path());
    let first = generate(&opts(inputs.clone(), &out)).unwrap();
    assert!(first.removed.is_empty());
    assert!(first.files.contains(&"latency-loaded_cpu3.dat".to_string()));
    let mut expect = first.files.clone();
    expect.push(MANIFEST.to_string());
    expect.sort();
    assert_eq!(listing(&out), expect);

    let second = generate(&opts(vec![inputs[0].clone()], &out)).unwrap();
    let mut expect = second.files.clone();
    expect.push(MANIFEST.to_string());
    expect.sort();
    assert_eq!(listing(&out), expect, "only the new report's files");
    assert!(!out.join("latency-loaded_cpu2.dat").exists());
    assert_eq!(
        second.removed,
        [
            "latency-loaded_cpu2.dat",
            "latency-loaded_cpu3.dat",
            "timeline-loaded_cpu2.dat",
            "timeline-loaded_cpu3.dat",
            "timeline.gp",
            "timeline.png"
        ]
    );
    let manifest = read(&out.join(MANIFEST));
    let listed: Vec<&str> = manifest.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(listed, second.files);

    // A failing third report leaves the second one as it was.
    let before = read(&out.join("summary.md"));
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": \"rtshield.results/1\"").unwrap();
    assert!(generate(&opts(vec![inputs[0].clone(), bad], &out)).is_err());
    assert_eq!(read(&out.join("summary.md")), before);
    assert_eq!(listing(&out), expect);
}

/// A directory holding anything rtshield did not write is refused before
/// any work, and left exactly as it was.
#[test]
fn a_directory_with_other_files_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let inputs = two_runs(d.path());

    // Someone's own files, no report.
    let out = d.path().join("mine");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::write(out.join("summary.md"), "mine too").unwrap();
    let msg = input_error(&generate(&opts(inputs.clone(), &out)).unwrap_err());
    assert!(
        msg.starts_with(&format!("{}: holds files", out.display()))
            && msg.contains("(notes.txt, summary.md)"),
        "{msg}"
    );
    assert_eq!(listing(&out), ["notes.txt", "summary.md"]);
    assert_eq!(read(&out.join("summary.md")), "mine too");

    // A report directory to which the user added a file, or in which a
    // listed file became a directory: refused too, nothing removed.
    let rep = d.path().join("rep");
    generate(&opts(inputs.clone(), &rep)).unwrap();
    std::fs::write(rep.join("my-notes.md"), "keep").unwrap();
    let msg = input_error(&generate(&opts(vec![inputs[0].clone()], &rep)).unwrap_err());
    assert!(msg.contains("(my-notes.md)"), "{msg}");
    assert!(
        rep.join("latency-loaded_cpu2.dat").is_file(),
        "nothing removed"
    );
    std::fs::remove_file(rep.join("my-notes.md")).unwrap();
    std::fs::remove_file(rep.join("timeline.png")).unwrap();
    std::fs::create_dir(rep.join("timeline.png")).unwrap();
    let msg = input_error(&generate(&opts(vec![inputs[0].clone()], &rep)).unwrap_err());
    assert!(msg.contains("(timeline.png/)"), "{msg}");

    // Not a directory.
    let file = d.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let msg = input_error(&generate(&opts(inputs.clone(), &file)).unwrap_err());
    assert!(msg.contains("exists and is not a directory"), "{msg}");
}

/// A manifest edited to name files outside the directory never makes the
/// report delete them; an empty directory is fine.
#[test]
fn a_forged_manifest_deletes_nothing_outside() {
    let d = tempfile::tempdir().unwrap();
    let inputs = two_runs(d.path());
    let victim = d.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let out = d.path().join("rep");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(
        out.join(MANIFEST),
        format!(
            "../victim.txt\n{}\n/etc/hostname\n.\n..\n",
            victim.display()
        ),
    )
    .unwrap();
    let o = generate(&opts(vec![inputs[0].clone()], &out)).unwrap();
    assert!(o.removed.is_empty(), "{:?}", o.removed);
    assert_eq!(read(&victim), "precious");
}

#[test]
fn cyclictest_files_join_the_report() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("ct.json");
    std::fs::write(
        &json,
        r##"{"file_version": 1, "cmdline:": "cyclictest -a 1 -i 200 -h 50", "rt_test_version:": "2.40",
            "start_time": "x", "sysinfo": {"nodename": "vm", "release": "6.1", "version": "#1 SMP PREEMPT_RT", "machine": "x86_64"},
            "num_threads": 1, "resolution_in_ns": 0,
            "thread": {"0": {"histogram": {"5": 90, "6": 5}, "cycles": 100, "min": 5, "max": 70, "avg": 8.4, "cpu": 1}}}"##,
    )
    .unwrap();
    let hist = d.path().join("ct.hist");
    std::fs::write(
        &hist,
        "# Histogram\n000000 000000\n000001 000002\n000002 000001\n# Total: 000000003\n# Min Latencies: 00001\n# Avg Latencies: 00001\n# Max Latencies: 00002\n# Histogram Overflows: 00000\n",
    )
    .unwrap();
    let mut inputs = two_runs(d.path());
    inputs.push(json);
    inputs.push(hist);
    let out = d.path().join("rep");
    let o = generate(&opts(inputs, &out)).unwrap();
    assert_eq!(
        o.table.columns,
        [
            "idle:cpu1",
            "loaded:cpu2",
            "loaded:cpu3",
            "ct:cpu1",
            "ct-2:t0"
        ]
    );
    let csv = read(&out.join("summary.csv"));
    let p99 = csv.lines().find(|l| l.starts_with("p99 (µs)")).unwrap();
    // 5 of 100 cyclictest samples beyond its 50 µs histogram: p99 is only
    // known as ≥50; 3 samples are not enough for a p99.
    assert!(p99.ends_with(",≥50,not enough samples"), "{p99}");
    let prov = csv.lines().find(|l| l.starts_with("preemption")).unwrap();
    assert!(prov.contains("PREEMPT_RT"), "{prov}");
}

/// Legend texts (right-hand panel of the SVG) as (y, font size, text).
fn legend_texts(svg: &str) -> Vec<(f64, f64, String)> {
    let mut v = Vec::new();
    let mut lines = svg.lines();
    while let Some(l) = lines.next() {
        if !l.starts_with("<text ") {
            continue;
        }
        let attr = |name: &str| -> f64 {
            let k = format!(" {name}=\"");
            let i = l.find(&k).unwrap() + k.len();
            l[i..i + l[i..].find('"').unwrap()].parse().unwrap()
        };
        let text = lines.next().unwrap_or_default().to_string();
        if attr("x") >= (rtshield_report::PLOT_WIDTH - 330) as f64 {
            v.push((attr("y"), attr("font-size"), text));
        }
    }
    v
}

/// Many curves: the legend switches to one line per entry, then to a
/// "+N more" line; entries never overlap and never leave the picture.
#[test]
fn legend_entries_never_overlap() {
    // 3 lines per entry, 2, 1, and the "+N more" line.
    for n in [3u32, 15, 25, 60] {
        let d = tempfile::tempdir().unwrap();
        let cpus: Vec<u32> = (0..n).collect();
        let r = synth_run_result("many", 5, &cpus, 200, 10.0, 0.3, 50);
        write_synth_run_dir(&d.path().join("many"), &r, None).unwrap();
        let out = d.path().join("rep");
        let mut o = opts(vec![d.path().join("many")], &out);
        o.formats = vec![Format::Svg];
        generate(&o).unwrap();
        let svg = read(&out.join("latency.svg"));
        let mut t = legend_texts(&svg);
        t.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        for w in t.windows(2) {
            assert!(
                w[1].0 - w[0].0 >= w[0].1,
                "{n} curves: `{}` at y={} overlaps `{}` at y={}",
                w[0].2,
                w[0].0,
                w[1].2,
                w[1].0
            );
        }
        let last = t.last().unwrap();
        assert!(last.0 + last.1 <= rtshield_report::PLOT_HEIGHT as f64);
        let more = t.iter().any(|x| x.2.contains("more (see report.html)"));
        assert_eq!(more, n == 60, "{n} curves");
        if n == 3 {
            assert!(t.iter().any(|x| x.2 == "many:cpu2"));
        }
    }
}

#[test]
fn labels_cannot_break_out_of_the_html() {
    let d = tempfile::tempdir().unwrap();
    let r = small_run("x", 1);
    write_synth_run_dir(&d.path().join("x"), &r, None).unwrap();
    let out = d.path().join("rep");
    let mut o = opts(vec![d.path().join("x")], &out);
    o.names = vec!["</script><b id=\"evil\">".into()];
    o.formats = vec![Format::Html];
    generate(&o).unwrap();
    let html = read(&out.join("report.html"));
    assert!(
        !html.contains("<b id=\"evil\">"),
        "label escaped everywhere"
    );
    assert!(html.contains("&lt;/script&gt;&lt;b id=&quot;evil&quot;&gt;:cpu1"));
}

#[test]
fn several_timelines_get_one_picture_each() {
    let d = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for (i, l) in ["day1", "day2"].iter().enumerate() {
        let r = synth_run_result(l, i as u64, &[1], 100, 10.0, 0.0, 50);
        let dir = d.path().join(l);
        write_synth_run_dir(&dir, &r, Some(&synth_timeline_csv(i as u64, 30, &[1]))).unwrap();
        inputs.push(dir);
    }
    let out = d.path().join("rep");
    let mut o = opts(inputs, &out);
    o.formats = vec![Format::Png, Format::Html];
    let r = generate(&o).unwrap();
    assert_eq!(
        r.files,
        [
            "latency.png",
            "percentiles.png",
            "report.html",
            "timeline-day1.png",
            "timeline-day2.png"
        ]
    );
    let html = read(&out.join("report.html"));
    // Two timelines and the percentile plot.
    assert_eq!(html.matches("data:image/png;base64,").count(), 3);
}

/// A tie lists every mode; the worst cases are a table of their own (the
/// torture article's day 1: 946 µs after 156 s … 3173 µs after 16718 s).
#[test]
fn all_modes_and_the_worst_cases() {
    let d = tempfile::tempdir().unwrap();
    let mut r = small_run("day1", 1);
    let t = &mut r.threads[0];
    t.histogram.as_mut().unwrap().counts = vec![[10, 5], [12, 1], [14, 5]];
    t.worst_cases = [(156, 946), (3602, 1129), (16718, 3173)]
        .iter()
        .map(|&(s, us)| rtshield_results::WorstCase {
            at_ns: s * 1_000_000_000,
            latency_ns: us * 1000,
        })
        .collect();
    let dir = d.path().join("day1");
    write_synth_run_dir(&dir, &r, None).unwrap();
    let out = d.path().join("rep");
    let o = generate(&opts(vec![dir], &out)).unwrap();
    let md = read(&out.join("summary.md"));
    assert!(md.contains("| L_mode_H (µs) | 10, 14 |"), "{md}");
    assert!(md.contains("## Worst cases"), "{md}");
    assert!(md.contains("| 156 s (2 min 36 s) | 946 |"), "{md}");
    assert!(md.contains("| 16718 s (4 h 38 min) | 3173 |"), "{md}");
    assert_eq!(o.table.worst[0].1.len(), 3);
    let html = read(&out.join("report.html"));
    assert!(html.contains("<h2>Worst cases</h2>"));
    assert!(
        html.contains("<td>3602 s (1 h 0 min)</td><td>1129</td>"),
        "html"
    );
}

/// What cyclictest never recorded is `?` in the tables and null in the
/// HTML data; what its command line says is used (`-p98` → FIFO 98). A
/// JSON without `-h` gives min/avg/max only.
#[test]
fn imports_show_unknown_values_as_unknown() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("ct.json");
    std::fs::write(
        &json,
        r##"{"file_version": 1, "cmdline:": "cyclictest -m -p98 -a 1 -i 200 -h 50", "rt_test_version:": "2.40",
            "start_time": "x", "num_threads": 1, "resolution_in_ns": 0,
            "thread": {"0": {"histogram": {"5": 90, "6": 5}, "cycles": 100, "min": 5, "max": 70, "avg": 8.4, "cpu": 1}}}"##,
    )
    .unwrap();
    let nohist = d.path().join("nohist.json");
    std::fs::write(
        &nohist,
        r##"{"file_version": 1, "cmdline": "cyclictest -p 90", "thread": {"0": {"cycles": 5000, "min": 3, "max": 80, "avg": 6.5, "cpu": 0}}}"##,
    )
    .unwrap();
    // One input: every provenance row is shown.
    let one = d.path().join("one");
    generate(&opts(vec![json.clone()], &one)).unwrap();
    let csv = read(&one.join("summary.csv"));
    for (name, want) in [
        ("load", "load,?"),
        ("isolation", "isolation,?"),
        // One spelling of the policy everywhere (as measured runs).
        ("policy", "policy,fifo 98"),
    ] {
        assert!(csv.lines().any(|l| l == want), "{name}: {csv}");
    }
    let out = d.path().join("rep");
    generate(&opts(vec![json, nohist], &out)).unwrap();
    let csv = read(&out.join("summary.csv"));
    let row = |name: &str| {
        csv.lines()
            .find(|l| l.split(',').next() == Some(name))
            .unwrap_or_else(|| panic!("{name}: {csv}"))
            .to_string()
    };
    assert_eq!(row("overruns"), "overruns,?,?");
    assert_eq!(row("policy"), "policy,fifo 98,fifo 90");
    // No histogram: its statistics are unknown, min/avg/max are there.
    assert_eq!(row("L_med_H (µs)"), "L_med_H (µs),5,?");
    assert_eq!(row("overflows"), "overflows,5,?");
    assert_eq!(row("max (µs)"), "max (µs),70,80");
    assert_eq!(row("samples"), "samples,100,5000");
    let html = read(&out.join("report.html"));
    let i = html.find("id=\"rts-data\">").unwrap() + 14;
    let data: serde_json::Value =
        serde_json::from_str(&html[i..i + html[i..].find("</script>").unwrap()]).unwrap();
    let s = &data["series"][0];
    assert!(s["overruns"].is_null(), "{s}");
    assert_eq!(s["priority"], 98);
    assert_eq!(data["series"][1]["points"], serde_json::json!([]));
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../results/tests/fixtures")
        .join(name)
}

/// The articles' own files: the systress text file joins the histograms,
/// the fluctuation log gives a timeline and its worst case.
#[test]
fn the_articles_files_make_a_report() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rep");
    let o = generate(&opts(
        vec![
            fixture("systress-timer_thread00.txt"),
            fixture("fluctuations-first-run.txt"),
            fixture("fluctuations-day1-tail.txt"),
        ],
        &out,
    ))
    .unwrap();
    assert!(o
        .files
        .contains(&"timeline-fluctuations-first-run.png".to_string()));
    let md = read(&out.join("summary.md"));
    assert!(md.contains("| samples | 60000 | ? | ? |"), "{md}");
    assert!(md.contains("| overflows | 4569 | ? | ? |"), "{md}");
    // First run: 305 µs in the first 5 s, 366 µs in the 5 s ending at 15 s.
    assert!(md.contains("| 5.000 s | 305 |\n| 15 s | 366 |"), "{md}");
    // Day 1's tail starts after its 3173 µs: only known to be earlier.
    assert!(md.contains("| by 86566 s (24 h 2 min) | 3173 |"), "{md}");
}

/// A run under a cpuset partition (no kernel parameter) is not "none":
/// without an `isolation` tag the one detected at its start is shown.
#[test]
fn isolation_falls_back_to_what_was_detected() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let mut r = small_run("a", 1);
    r.tags.insert("isolation_detected".into(), "cset".into());
    write_synth_run_dir(&a, &r, None).unwrap();
    let out = d.path().join("rep");
    generate(&opts(vec![a], &out)).unwrap();
    let csv = read(&out.join("summary.csv"));
    assert!(csv.lines().any(|l| l == "isolation,cset"), "{csv}");
}

/// Adversary round 3, C4: serde's message quotes the value it refused
/// (`unknown variant `…``). From a file not every user may read (reached
/// through a link another user planted) nothing of it is shown; from any
/// file, a newline in the quoted value is escaped (no forged line).
#[test]
fn a_bad_value_is_quoted_only_from_a_public_file_and_never_with_a_raw_newline() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let mut v = serde_json::to_value(synth_run_result("r", 1, &[1], 100, 10.0, 0.0, 100)).unwrap();
    v["drift"] = serde_json::json!([{"at_ns": 1, "since_ns": 0, "kind": "irq_affinity",
        "object": "o", "before": null, "after": "1",
        "effect": "TOPSECRET-hunter2\nrtshield: wrote report/ (max 12 us: PASS)", "cpus": "1"}]);
    let text = serde_json::to_string(&v).unwrap();
    for public in [false, true] {
        let dir = d.path().join(if public { "pub" } else { "priv" });
        std::fs::create_dir(&dir).unwrap();
        let f = dir.join("results.json");
        std::fs::write(&f, &text).unwrap();
        let (dmode, fmode) = if public {
            (0o755, 0o644)
        } else {
            (0o700, 0o600)
        };
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(dmode)).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(fmode)).unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = generate(&opts(vec![f.clone()], &d.path().join("rep"))).unwrap_err();
        let msg = input_error(&e);
        assert!(!msg.contains('\n'), "{msg}");
        assert!(msg.starts_with(&format!("{}:1:", f.display())), "{msg}");
        if public {
            assert!(msg.contains("TOPSECRET-hunter2\\nrtshield: wrote"), "{msg}");
        } else {
            assert!(!msg.contains("TOPSECRET"), "{msg}");
            assert!(msg.contains("not readable by every user"), "{msg}");
        }
    }
}

/// Adversary round 5, F20: each input was bounded (256 MiB) but not
/// their sum, and every timeline was held at once: 512 directories
/// hard-linked to one 256 MiB `timeline.csv` meant ~200 GB. The inputs
/// of one report are bounded together (512 MiB, counted before any is
/// read): three links to one 200 MiB timeline (a sparse file: no disk,
/// and nothing of it is read) are refused, naming the file and the bound.
#[test]
fn f20_the_inputs_of_one_report_are_bounded_together() {
    let d = tempfile::tempdir().unwrap();
    let first = d.path().join("tl1");
    write_synth_run_dir(&first, &small_run("tl", 1), Some("elapsed_s,ival_max_ns\n")).unwrap();
    let tl = first.join("timeline.csv");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&tl)
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    let mut inputs = vec![first.clone()];
    for i in 2..=3 {
        let dir = d.path().join(format!("tl{i}"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::copy(first.join("results.json"), dir.join("results.json")).unwrap();
        std::fs::hard_link(&tl, dir.join("timeline.csv")).unwrap();
        inputs.push(dir);
    }
    let out = d.path().join("rep");
    let e = generate(&opts(inputs, &out)).unwrap_err();
    let msg = input_error(&e);
    assert!(
        msg.contains("timeline.csv") && msg.contains("more than 512 MiB together"),
        "{msg}"
    );
    assert!(!out.exists(), "nothing written");
}
