// Numbers the docs quote from the code cannot drift: each entry below is
// a sentence of a doc written from the constant it quotes (a limit of
// crates/limits, a default, a ring or buffer size, a period), and the doc
// must hold it word for word. A change of the constant, or of the
// sentence, fails here until both agree. Public constants are read
// through their crate; a crate-private one from its source line (a small
// evaluator of integer constant expressions), so that no crate opens its
// internals for a test.
//
// Tables of measured figures (bench results) are facts of a dated run,
// not of the code: each names the date and the commit it was measured at
// (checked below), and is regenerated only by running its bench again.

use rtshield_limits as limits;
use std::collections::BTreeMap;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

// ------------------------------------------------------------- formatting

/// A duration as the docs write it: `1 µs`, `20 ms`, `1 h`, `365 days`.
fn dur(ns: u64) -> String {
    const UNITS: &[(u64, &str)] = &[
        (86_400_000_000_000, " days"),
        (3_600_000_000_000, " h"),
        (60_000_000_000, " min"),
        (1_000_000_000, " s"),
        (1_000_000, " ms"),
        (1_000, " µs"),
        (1, " ns"),
    ];
    let (div, unit) = UNITS
        .iter()
        .find(|(d, _)| ns % d == 0 && ns >= *d)
        .copied()
        .unwrap_or((1, " ns"));
    let n = ns / div;
    if unit == " days" && n == 1 {
        "1 day".into()
    } else {
        format!("{n}{unit}")
    }
}

/// `10^12` for a power of ten (the docs' way with big limits).
fn pow10(n: u64) -> String {
    let e = (n as f64).log10().round() as u32;
    assert_eq!(10u64.pow(e), n, "{n} is not a power of ten");
    format!("10^{e}")
}

/// `500 000 000`: thousands apart, as the docs write big counts.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

// ------------------------------------------------ crate-private constants

/// The value of `const NAME: ... = EXPR;` in the source file `rel`: EXPR
/// of integer literals (`1_000`, `1 << 18`), `*`, `<<`, `+`, other
/// constants of the same file, and `Duration::from_{secs,millis,micros}`
/// (in ns). A range `A..=B` gives its (A, B).
fn source_const(rel: &str, name: &str) -> (u64, Option<u64>) {
    let src = read(rel);
    let consts = const_exprs(&src);
    let expr = consts
        .get(name)
        .unwrap_or_else(|| panic!("{rel} defines no `const {name}`"));
    let eval = |e: &str| eval_expr(e, &consts, rel);
    match expr.split_once("..=") {
        Some((a, b)) => (eval(a), Some(eval(b))),
        None => (eval(expr), None),
    }
}

/// Every `const NAME: TYPE = EXPR;` of a file (EXPR on one or more lines).
fn const_exprs(src: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = src;
    while let Some(at) = rest.find("const ") {
        rest = &rest[at + 6..];
        let Some((name, after)) = rest.split_once(':') else {
            break;
        };
        let name = name.trim();
        if !name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            continue;
        }
        let (Some(eq), Some(end)) = (after.find('='), after.find(';')) else {
            break;
        };
        if eq < end {
            out.insert(name.to_string(), after[eq + 1..end].trim().to_string());
        }
    }
    out
}

fn eval_expr(e: &str, consts: &BTreeMap<String, String>, rel: &str) -> u64 {
    let e = e.trim();
    for (f, mult) in [
        ("Duration::from_secs(", 1_000_000_000),
        ("Duration::from_millis(", 1_000_000),
        ("Duration::from_micros(", 1_000),
    ] {
        if let Some(x) = e.strip_prefix(f).and_then(|x| x.strip_suffix(')')) {
            return eval_expr(x, consts, rel) * mult;
        }
    }
    if let Some(x) = e.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        return eval_expr(x, consts, rel);
    }
    // Lowest precedence first: `+`, then `<<`, then `*`.
    for op in ["+", "<<", "*"] {
        if let Some((a, b)) = e.rsplit_once(op) {
            let (a, b) = (eval_expr(a, consts, rel), eval_expr(b, consts, rel));
            return match op {
                "+" => a + b,
                "<<" => a << b,
                _ => a * b,
            };
        }
    }
    let lit: String = e.chars().filter(|&c| c != '_').collect();
    let num = ["u64", "usize", "u32", "i32"]
        .iter()
        .find_map(|t| lit.strip_suffix(t))
        .unwrap_or(&lit);
    if let Ok(n) = num.parse::<u64>() {
        return n;
    }
    match consts.get(e) {
        Some(x) => eval_expr(x, consts, rel),
        None => panic!("{rel}: cannot evaluate `{e}`"),
    }
}

#[test]
fn the_source_evaluator_reads_what_the_crates_write() {
    let src = "const A: u64 = 1_000;\npub(crate) const B: usize = 1 << 18;\n\
               const C: Duration = Duration::from_millis(20);\nconst D: u64 = 3 * A;\n\
               const R: RangeInclusive<u64> = 10_000_000..=365 * 86_400_000_000_000;\n";
    let c = const_exprs(src);
    assert_eq!(eval_expr(&c["A"], &c, "x"), 1000);
    assert_eq!(eval_expr(&c["B"], &c, "x"), 262_144);
    assert_eq!(eval_expr(&c["C"], &c, "x"), 20_000_000);
    assert_eq!(eval_expr(&c["D"], &c, "x"), 3000);
    assert_eq!(c["R"], "10_000_000..=365 * 86_400_000_000_000");
    assert_eq!(dur(20_000_000), "20 ms");
    assert_eq!(dur(365 * 86_400_000_000_000), "365 days");
    assert_eq!(dur(3_600_000_000_000), "1 h");
    assert_eq!(grouped(500_000_000), "500 000 000");
    assert_eq!(pow10(1_000_000_000_000), "10^12");
}

// ------------------------------------------------------------- the quotes

/// (doc, the text it must hold), each text written from the code.
fn quotes() -> Vec<(&'static str, String)> {
    let l = |r: limits::Range<u64>| format!("{} .. {}", dur(r.min), dur(r.max));
    let drain = source_const("crates/measure/src/engine.rs", "DRAIN_EVERY").0;
    let noise_drain = source_const("crates/noise/src/engine.rs", "DRAIN_EVERY").0;
    assert_eq!(
        drain, noise_drain,
        "measure and noise drain at the same pace (docs say one)"
    );
    let marks = source_const("crates/measure/src/spike.rs", "MARK_RING").0;
    let worst = source_const("crates/measure/src/stats.rs", "MAX_WORST_CASES").0;
    let spikes = source_const("crates/run/src/tracing.rs", "MAX_SPIKES").0;
    let publish = source_const("crates/noise/src/spin.rs", "PUBLISH_EVERY").0;
    let (nw_min, nw_max) = source_const("crates/noise/src/limits.rs", "WINDOW_NS");
    let (nd_min, nd_max) = source_const("crates/noise/src/limits.rs", "DURATION_NS");
    let (nt_min, nt_max) = source_const("crates/noise/src/limits.rs", "THRESHOLD_NS");
    let rt_runtime = source_const("crates/noise/src/limits.rs", "MAX_RT_RUNTIME_NS").0;
    let share = rtshield_noise::MAX_RT_SHARE_PCT;
    let input_mib = rtshield_safefs::INPUT_LIMIT >> 20;
    let buf_kb = limits::TRACE_BUFFER_KB_AUTO_MIN;
    let tb = limits::TRACE_BUFFER_KB;
    let max_events = rtshield_sim::DEFAULT_MAX_EVENTS;
    vec![
        // ranges.md: `measure` options and `run` keys (crates/limits).
        ("docs/ranges.md", format!("| `--period` | {} |", l(limits::PERIOD_NS))),
        ("docs/ranges.md", format!("| `--duration` | > 0, at most {} |", dur(limits::DURATION_NS.max))),
        ("docs/ranges.md", format!("| `--samples` | {} .. {} per thread |", limits::SAMPLES.min, pow10(limits::SAMPLES.max))),
        ("docs/ranges.md", format!("| `--histo-size` | > 0, at most {}, and at most {} million buckets", dur(limits::HISTO_SIZE_NS.max), limits::MAX_BUCKETS / 1_000_000)),
        ("docs/ranges.md", format!("| `--prio` | {}..{} with `fifo`/`rr` |", limits::RT_PRIORITY.min, limits::RT_PRIORITY.max)),
        ("docs/ranges.md", format!("| `--trace-on` | {} |", l(limits::TRACE_LATENCY_NS))),
        ("docs/ranges.md", format!("| `--trace-buffer-kb` | {} .. {} (KiB per CPU), only with `--trace-on` or `--split`", tb.min, tb.max)),
        ("docs/ranges.md", format!("| `--stats-period` | {} (as the `stats.period` key) |", l(limits::STATS_PERIOD_NS))),
        ("docs/ranges.md", format!("| `--max-latency` (also `run`) | > 0, at most {} ", dur(limits::MAX_LATENCY_NS.max))),
        ("docs/ranges.md", format!("| `period` | {} |", l(limits::PERIOD_NS))),
        ("docs/ranges.md", format!("| `lifetime.duration` | > 0, at most {} |", dur(limits::DURATION_NS.max))),
        ("docs/ranges.md", format!("| `stats.period` | {} |", l(limits::STATS_PERIOD_NS))),
        ("docs/ranges.md", format!("| `histo.resolution` | a whole number of nanoseconds, {}, ", l(limits::RESOLUTION_NS))),
        ("docs/ranges.md", format!("| `stats.checkpoint` | `off`, or at least {} ", dur(limits::CHECKPOINT_MIN_NS))),
        ("docs/ranges.md", format!("| `stats.rotate` | `off`, or {} ", l(limits::ROTATE_NS))),
        ("docs/ranges.md", format!("| `load.workers` | {}..{} per CPU |", limits::LOAD_WORKERS.min, limits::LOAD_WORKERS.max)),
        ("docs/ranges.md", format!("| `trace.buffer_kb` | {} .. {} (KiB per CPU)", tb.min, tb.max)),
        ("docs/ranges.md", format!("| `start.delay` | 0 .. {} ", dur(limits::START_DELAY_NS.max))),
        ("docs/ranges.md", format!("each {} (main and program[N]) |", l(limits::CYCLE_PHASE_NS))),
        ("docs/ranges.md", format!("| `dbg_level` | {} .. {} |", limits::DBG_LEVEL.min, limits::DBG_LEVEL.max)),
        ("docs/ranges.md", format!("| `load.size` | `memory`/`io`: a size, {}K .. {}G bytes per worker", limits::LOAD_SIZE_BYTES.min >> 10, limits::LOAD_SIZE_BYTES.max >> 30)),
        // The campaign file.
        ("docs/ranges.md", format!("| `duration` | required unless `samples` is given; {} .. {} days;", dur(limits::CAMPAIGN_DURATION_NS.min), limits::CAMPAIGN_DURATION_NS.max / 86_400_000_000_000)),
        ("docs/ranges.md", format!("| `repeat` | {} .. {} (default 1) |", limits::CAMPAIGN_REPEAT.min, limits::CAMPAIGN_REPEAT.max)),
        ("docs/ranges.md", format!("| `period`, `histo_size` | {} (a bare number is µs", l(limits::CAMPAIGN_PERIOD_NS))),
        ("docs/ranges.md", format!("| `priority` | an integer {} .. {} |", limits::PRIORITY.min, limits::PRIORITY.max)),
        ("docs/ranges.md", format!("| matrix | at most {} cells;", grouped(limits::CAMPAIGN_MAX_CELLS as u64))),
        ("docs/manual/campaign.md", format!("repeat = 2                # runs per cell, {} .. {}", limits::CAMPAIGN_REPEAT.min, limits::CAMPAIGN_REPEAT.max)),
        // `noise` (crates/noise/src/limits.rs).
        ("docs/ranges.md", format!("| `--duration` | {} .. {} |", dur(nd_min), dur(nd_max.unwrap()))),
        ("docs/ranges.md", format!("| `--threshold` | {} .. {} |", dur(nt_min), dur(nt_max.unwrap()))),
        ("docs/ranges.md", format!("| `--period`, `--runtime` | {} .. {} each;", dur(nw_min), dur(nw_max.unwrap()))),
        ("docs/ranges.md", format!("then `--runtime` at most {share} % of `--period` and at most {} |", dur(rt_runtime))),
        ("docs/manual/noise.md", format!("then runtime ≤ {share} % of the period and ≤ {} |", dur(rt_runtime))),
        ("docs/manual/noise.md", format!("published every {publish}")),
        ("docs/manual/noise.md", format!("an allowance of {} per run", dur(rtshield_trace::NoiseOptions::DEFAULT_OVERHEAD_NS))),
        // Files rtshield reads.
        ("docs/ranges.md", format!("read up to {input_mib} MiB (`rtshield_safefs::INPUT_LIMIT`)")),
        ("docs/ranges.md", format!("(regular files, {input_mib} MiB at most)")),
        ("README.md", format!("input files of at most {input_mib} MiB")),
        ("docs/security.md", format!("a file is read up to {input_mib} MiB")),
        ("docs/ranges.md", format!("| {} (`RESULT_MAX_THREADS`,", limits::RESULT_MAX_THREADS)),
        ("docs/security.md", format!("naming more than {} threads", limits::RESULT_MAX_THREADS)),
        ("docs/ranges.md", format!("| {} (`REPORT_MAX_CURVES`) |", limits::REPORT_MAX_CURVES)),
        ("docs/security.md", format!("a report of more than {} curves", limits::REPORT_MAX_CURVES)),
        ("docs/ranges.md", format!("| 0 ..= {} (`MAX_COUNT`:", pow10(rtshield_results::MAX_COUNT))),
        ("docs/ranges.md", format!("| {} characters (`MESSAGE_MAX`) |", rtshield_text::terminal::MESSAGE_MAX)),
        ("docs/ranges.md", format!("| {} characters (`EXCERPT_MAX`)", rtshield_text::excerpt::EXCERPT_MAX)),
        ("docs/ranges.md", format!("CPUs 0 .. {}, present on the machine", rtshield_vocab::MAX_CPU)),
        // The measuring engine and tracing.
        ("docs/trace.md", format!("(main thread, every {})", dur(drain))),
        ("docs/scale.md", format!("The main thread drains every {}", dur(drain))),
        ("docs/manual/measure.md", format!("the main thread drains it every {}", dur(drain))),
        ("docs/manual/noise.md", format!("(main thread, every {})", dur(noise_drain))),
        ("docs/architecture-run.md", format!("sets a flag it checks every\n{}.", dur(drain))),
        ("docs/trace.md", format!("thread's {marks}-slot ring full")),
        ("docs/proofs.md", format!("preallocated {marks}-slot SPSC ring")),
        ("docs/formats.md", format!("the latest {worst} kept")),
        ("docs/trace.md", format!("At most {spikes} spikes (`tracing::MAX_SPIKES`)")),
        ("docs/manual/measure.md", format!("At most {spikes} spikes are explained per run")),
        ("docs/scale.md", format!("  {buf_kb} KiB, and the buffers of all online CPUs at most 1/32 of RAM.")),
        ("docs/trace.md", format!("- **at least {buf_kb} KiB** (what 1 s of 1 ms periods needs)")),
        // simulate, runs compare, report.
        ("docs/ranges.md", format!("(default {})", grouped(max_events))),
        ("docs/manual/simulate.md", format!("default {}, enough", grouped(max_events))),
        ("docs/scale.md", format!("default {})", grouped(max_events))),
        ("docs/manual/runs.md", format!("bootstrap of {} resamples", grouped(rtshield_store::ITERATIONS as u64))),
        ("docs/manual/runs.md", format!("at least {} runs on each side", rtshield_store::MIN_RUNS)),
        ("docs/manual/report.md", format!("| `latency.png`, `latency.svg` | {}×{}.", rtshield_report::PLOT_WIDTH, rtshield_report::PLOT_HEIGHT)),
    ]
}

#[test]
fn the_docs_quote_the_codes_constants() {
    let mut docs = BTreeMap::new();
    let mut bad = vec![];
    let q = quotes();
    for (doc, want) in &q {
        let text = docs.entry(*doc).or_insert_with(|| read(doc));
        if !text.contains(want.as_str()) {
            bad.push(format!("{doc} should say: {want:?}"));
        }
    }
    assert!(q.len() > 50, "{} quotes", q.len());
    assert!(
        bad.is_empty(),
        "the docs disagree with the code (update the doc, or the sentence here if it was reworded):\n{}",
        bad.join("\n")
    );
}

// ------------------------------------------------------ measured tables

/// Markdown files of the docs.
fn doc_files() -> Vec<String> {
    let mut out = vec!["README.md".to_string()];
    for dir in ["docs", "docs/manual"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out.sort();
    out
}

/// A header that names measured quantities: latency percentiles, CPU and
/// wall time, rates, memory.
fn measured_header(h: &str) -> bool {
    let h = h.to_lowercase();
    [
        "p50",
        "p99",
        "median",
        "wall",
        "cpu/sample",
        "cpu (user)",
        "cpu time",
        "rss",
        "/s ",
        "/s|",
        "ns/sample",
        "per second",
        "| time |",
        "max (us)",
        "max µs",
    ]
    .iter()
    .any(|w| h.contains(w))
}

/// Whether `s` holds a date `YYYY-MM-DD`.
fn has_date(s: &str) -> bool {
    let b = s.as_bytes();
    (0..b.len().saturating_sub(9)).any(|i| {
        let d = |k: usize| b[i + k].is_ascii_digit();
        d(0) && d(1)
            && d(2)
            && d(3)
            && b[i + 4] == b'-'
            && d(5)
            && d(6)
            && b[i + 7] == b'-'
            && d(8)
            && d(9)
    })
}

/// Whether `s` names a commit: `commit` then 7 to 40 hex digits
/// (backquoted or not).
fn has_commit(s: &str) -> bool {
    s.match_indices("commit ").any(|(i, m)| {
        let rest = s[i + m.len()..].trim_start_matches('`');
        let n = rest.chars().take_while(|c| c.is_ascii_hexdigit()).count();
        (7..=40).contains(&n) && rest[..n].chars().any(|c| c.is_ascii_digit())
    })
}

/// Each table of measured figures in `text` that does not name its date
/// and commit in the lines above it (since the heading or the table
/// before). A table is measured when the line above it is
/// `<!-- measured -->`, or when its header names measured quantities
/// (percentiles, CPU or wall time, rates, memory) and the line above is
/// not `<!-- not measured -->`; tables of a generated block
/// (scripts/doc-numbers.sh) are checked by that script.
fn unnamed_measurements(doc: &str, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut bad = vec![];
    let (mut since, mut generated) = (0, false);
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with('#') {
            since = i;
        }
        if l.starts_with("<!-- generated by ") {
            generated = true;
        } else if l.starts_with("<!-- end generated") {
            generated = false;
        }
        let is_table = l.starts_with('|')
            && lines.get(i + 1).is_some_and(|s| {
                s.starts_with("|-") || s.starts_with("|:") || s.starts_with("| -")
            });
        if !is_table {
            i += 1;
            continue;
        }
        let above = lines[..i]
            .iter()
            .rev()
            .find(|s| !s.trim().is_empty())
            .copied()
            .unwrap_or("");
        let measured = above.trim() == "<!-- measured -->"
            || (measured_header(l) && above.trim() != "<!-- not measured -->" && !generated);
        let context = lines[since..i].join("\n");
        if measured && !(has_date(&context) && has_commit(&context)) {
            bad.push(format!(
                "{doc}:{}: a table of measurements that does not say when and at which commit it was measured \
                 (write both above it, e.g. \"Measured on 2026-11-25 at commit 1a2b3c4d (`bench/x.sh`)\"; \
                 `<!-- not measured -->` above a table that holds none): {l}",
                i + 1
            ));
        }
        while i < lines.len() && lines[i].starts_with('|') {
            i += 1;
        }
        since = i;
    }
    bad
}

#[test]
fn measured_tables_name_their_date_and_commit() {
    let mut bad = vec![];
    for doc in doc_files() {
        bad.extend(unnamed_measurements(&doc, &read(&doc)));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn an_unnamed_measurement_is_caught() {
    let table = "| run | p99 | wall |\n|---|---|---|\n| a | 5 µs | 3 s |\n";
    assert_eq!(
        unnamed_measurements("x.md", &format!("# T\n\nA run.\n\n{table}")).len(),
        1
    );
    let named = format!("# T\n\nMeasured on 2026-11-25 at commit `1a2b3c4d`.\n\n{table}");
    assert!(unnamed_measurements("x.md", &named).is_empty());
    // The provenance of one table does not cover the next one.
    assert_eq!(
        unnamed_measurements("x.md", &format!("{named}\nAnother run.\n\n{table}")).len(),
        1
    );
    let marked = "# T\n\n<!-- measured -->\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    assert_eq!(unnamed_measurements("x.md", marked).len(), 1);
    let exempt = format!("# T\n\n<!-- not measured -->\n{table}");
    assert!(unnamed_measurements("x.md", &exempt).is_empty());
    let generated =
        format!("<!-- generated by scripts/doc-numbers.sh: x -->\n{table}<!-- end generated -->\n");
    assert!(unnamed_measurements("x.md", &generated).is_empty());
    assert!(!has_commit("commit deadbeef") && has_commit("commit `1a2b3c4`"));
}
