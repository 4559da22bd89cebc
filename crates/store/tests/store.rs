//! The store: round trip, idempotence, migration, selectors, and the
//! comparison statistics on synthetic runs with known answers.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtshield_results::{example_result, Histogram, RunResult};
use rtshield_store::{compare, default_stats, Method, Selector, SqliteStore, Store, Verdict};

/// A run of `n` samples: 10 µs + Exp(3 µs), and with probability 1/1000
/// a tail of Exp(`tail_us`); 1 µs buckets, 1000 buckets.
fn synth(seed: u64, n: u64, tail_us: f64, tags: &[(&str, &str)]) -> RunResult {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut counts = vec![0u64; 1000];
    let (mut min, mut max, mut sum, mut overflow) = (i64::MAX, 0i64, 0f64, 0u64);
    for _ in 0..n {
        let e = |rng: &mut ChaCha8Rng, m: f64| -m * (1.0 - rng.random::<f64>()).ln();
        let mut us = 10.0 + e(&mut rng, 3.0);
        if rng.random::<f64>() < 0.001 {
            us += e(&mut rng, tail_us);
        }
        let ns = (us * 1000.0) as i64;
        min = min.min(ns);
        max = max.max(ns);
        sum += ns as f64;
        let b = (ns / 1000) as usize;
        if b < counts.len() {
            counts[b] += 1;
        } else {
            overflow += 1;
        }
    }
    let h = Histogram {
        resolution_ns: 1000,
        buckets: 1000,
        counts: counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| [i as u64, c])
            .collect(),
        overflow,
        underflow: 0,
    };
    let mut r = example_result();
    let t = rtshield_results::thread_from_histogram(
        0,
        Some(1),
        Some(200_000),
        n,
        Some(min),
        Some(max),
        Some(sum / n as f64),
        h,
    );
    r.threads = vec![t];
    r.started_at = Some(format!("2026-11-22T00:00:{:02}Z", seed % 60));
    r.duration_s = Some(seed as f64);
    for (k, v) in tags {
        r.tags.insert(k.to_string(), v.to_string());
    }
    r
}

#[test]
fn round_trip_is_lossless_and_idempotent() {
    let mut s = SqliteStore::memory().unwrap();
    let a = synth(1, 5000, 50.0, &[("isolation", "none"), ("load", "hell")]);
    let p1 = s.put(&a, Some("dir/a")).unwrap();
    let p2 = s.put(&a, None).unwrap();
    assert!(matches!(p1, rtshield_store::Put::Stored { .. }));
    assert!(matches!(p2, rtshield_store::Put::AlreadyStored { .. }));
    assert_eq!(p1.uuid(), p2.uuid());
    let list = s.list(&Selector::all()).unwrap();
    assert_eq!(list.len(), 1);
    let back = s.results(&[list[0].id]).unwrap();
    assert_eq!(
        back[0], a,
        "stored result equals results.json field by field"
    );
    // The summary agrees with the result.
    let t = &a.threads[0];
    assert_eq!(list[0].threads[0].max_ns, t.max_ns);
    assert_eq!(list[0].threads[0].percentiles, t.percentiles);
    assert_eq!(list[0].field("load").as_deref(), Some("hell"));
}

#[test]
fn file_store_survives_reopen_and_refuses_symlink() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("runs.db");
    {
        let mut s = SqliteStore::open(&p).unwrap();
        s.put(&synth(2, 100, 50.0, &[]), None).unwrap();
    }
    let mut s = SqliteStore::open(&p).unwrap();
    assert_eq!(s.list(&Selector::all()).unwrap().len(), 1);
    assert_eq!(s.version().unwrap(), rtshield_store::SCHEMA_VERSION);
    std::os::unix::fs::symlink(&p, d.path().join("link.db")).unwrap();
    assert!(SqliteStore::open(&d.path().join("link.db")).is_err());
}

#[test]
fn a_version_1_store_is_migrated_with_its_runs() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("v1.db");
    let r = synth(3, 1000, 50.0, &[("load", "cpu")]);
    {
        let c = rusqlite_conn(&p);
        c.execute_batch(&rtshield_store::sqlite_schema(1)).unwrap();
        c.execute(
            "INSERT INTO runs (uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool,
               label, started, duration_s, end_reason, mode, source, stored_at, summary, result)
             VALUES ('u-1','h','6.1','v','p','x86_64','c','t','l','s',1.0,'duration','nanosleep',NULL,0,
               '[[],{}]', ?1)",
            [serde_json::to_string(&r).unwrap()],
        )
        .unwrap();
    }
    let mut s = SqliteStore::open(&p).unwrap();
    assert_eq!(s.version().unwrap(), rtshield_store::SCHEMA_VERSION);
    let sel = Selector::parse("load = cpu").unwrap();
    // Tags are backfilled into the new table (and the summary row keeps
    // what version 1 had).
    let n: i64 = rusqlite_conn(&p)
        .query_row(
            "SELECT count(*) FROM tags WHERE key='load' AND value='cpu'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
    let n: i64 = rusqlite_conn(&p)
        .query_row("SELECT count(*) FROM threads", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(s.results(&[1]).unwrap()[0], r);
    let picked = s.list(&sel).unwrap();
    assert_eq!(picked.len(), 1);
    assert_eq!(
        picked[0].threads.len(),
        1,
        "summary rebuilt from the result"
    );
}

/// A version-2 database (as the previous rtshield wrote it) gains the
/// machine id column, backfilled from the stored results.
#[test]
fn a_version_2_store_is_migrated_with_its_machine_ids() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("v2.db");
    let mut with_id = synth(4, 1000, 50.0, &[("board", "a")]);
    with_id.sysinfo.machine_id = "0123456789abcdef0123456789abcdef".into();
    let without = synth(5, 1000, 50.0, &[("board", "b")]);
    {
        let c = rusqlite_conn(&p);
        c.execute_batch(&rtshield_store::sqlite_schema(2)).unwrap();
        for (i, r) in [&with_id, &without].iter().enumerate() {
            c.execute(
                "INSERT INTO runs (uuid, host, kernel, kernel_version, preempt, arch, cpu_model,
                   tool, label, started, duration_s, end_reason, mode, source, stored_at, summary,
                   result)
                 VALUES (?1,'h','6.1','v','p','x86_64','c','t','l','s',1.0,'duration','nanosleep',
                   NULL,0,'[[],{}]', ?2)",
                [format!("u-{i}"), serde_json::to_string(r).unwrap()],
            )
            .unwrap();
        }
    }
    let mut s = SqliteStore::open(&p).unwrap();
    assert_eq!(s.version().unwrap(), rtshield_store::SCHEMA_VERSION);
    let all = s.list(&Selector::all()).unwrap();
    assert_eq!(all[0].machine_id, "0123456789abcdef0123456789abcdef");
    assert_eq!(all[1].machine_id, "");
    let sel = Selector::parse("machine_id = 0123456789abcdef0123456789abcdef").unwrap();
    assert_eq!(s.list(&sel).unwrap().len(), 1);
    // Reopening does not migrate again; new runs carry their id.
    drop(s);
    let mut s = SqliteStore::open(&p).unwrap();
    let mut r = synth(6, 1000, 50.0, &[]);
    r.sysinfo.machine_id = "fedcba9876543210fedcba9876543210".into();
    s.put(&r, None).unwrap();
    let sel = Selector::parse("machine_id ~ fedcba").unwrap();
    assert_eq!(s.list(&sel).unwrap().len(), 1);
    assert_eq!(s.results(&[3]).unwrap()[0], r);
}

fn rusqlite_conn(p: &std::path::Path) -> rusqlite::Connection {
    rusqlite::Connection::open(p).unwrap()
}

#[test]
fn selectors_pick_runs() {
    let mut s = SqliteStore::memory().unwrap();
    for (i, (iso, load)) in [
        ("none", "idle"),
        ("partition", "idle"),
        ("none", "hell"),
        ("partition", "hell"),
    ]
    .iter()
    .enumerate()
    {
        s.put(
            &synth(
                10 + i as u64,
                100,
                50.0,
                &[("isolation", iso), ("load", load)],
            ),
            None,
        )
        .unwrap();
    }
    s.put(&synth(99, 100, 50.0, &[]), None).unwrap();
    let mut n = |q: &str| s_list(&mut s, q);
    // A run without the tag: matches only != and !~.
    assert_eq!(n("isolation != none"), 3);
    assert_eq!(n("isolation !~ non"), 3);
    assert_eq!(n("isolation ="), 1);
    assert!(Selector::parse("host ~ ").is_err());
    assert_eq!(n("isolation=none"), 2);
    assert_eq!(n("isolation=none and load=hell"), 1);
    assert_eq!(n("load != hell"), 3);
    assert_eq!(n("load ~ el"), 2);
    assert_eq!(n("campaign = x"), 0);
    assert_eq!(n(""), 5);
    let one = s.find("2").unwrap();
    assert_eq!(one.field("isolation").as_deref(), Some("partition"));
    assert!(s.find("999").is_err());
}

fn s_list(s: &mut SqliteStore, q: &str) -> usize {
    s.list(&Selector::parse(q).unwrap()).unwrap().len()
}

/// Over 100 seeded trials of the sides `sides(trial)` gives, compared
/// with `method`: each default statistic must be "no significant
/// difference" in at least 95 (`what` prefixes the printed counts).
fn assert_same_in_95_of_100(
    what: &str,
    method: Method,
    sides: impl Fn(u64) -> (Vec<RunResult>, Vec<RunResult>),
) {
    let stats = default_stats();
    let mut same = vec![0; stats.len()];
    for trial in 0..100u64 {
        let (a, b) = sides(trial);
        let c = compare(&a, &b, &stats, trial);
        assert_eq!(c.method, method);
        for (k, row) in c.rows.iter().enumerate() {
            if row.verdict == Verdict::Same {
                same[k] += 1;
            }
        }
    }
    eprintln!("{what}no significant difference per statistic: {same:?}");
    for (k, s) in stats.iter().enumerate() {
        assert!(
            same[k] >= 95,
            "{}: no significant difference in only {}/100",
            s.name(),
            same[k]
        );
    }
}

#[test]
fn same_distribution_is_no_significant_difference_in_95_of_100_trials() {
    assert_same_in_95_of_100("", Method::Samples, |trial| {
        (
            vec![synth(1000 + trial, 20_000, 50.0, &[])],
            vec![synth(5000 + trial, 20_000, 50.0, &[])],
        )
    });
}

/// The over-runs bootstrap (the repeats are resampled) at its minimum of
/// 3 runs a side: two sides drawn from one distribution are "no
/// significant difference" in at least 95 of 100 seeded trials.
#[test]
fn same_distribution_over_runs_is_no_significant_difference_in_95_of_100_trials() {
    assert_same_in_95_of_100("over runs, ", Method::Runs, |trial| {
        let side = |from: u64| -> Vec<RunResult> {
            (0..3)
                .map(|i| synth(from + trial * 8 + i, 20_000, 50.0, &[]))
                .collect()
        };
        (side(10_000), side(20_000))
    });
}

/// The over-runs bootstrap with 3 runs a side (its minimum): a tail twice
/// as long is B worse on the tail statistics, not on the body.
#[test]
fn a_doubled_tail_is_b_worse_over_three_runs_a_side() {
    let stats = default_stats();
    let a: Vec<_> = (0..3).map(|i| synth(500 + i, 50_000, 40.0, &[])).collect();
    let b: Vec<_> = (0..3).map(|i| synth(600 + i, 50_000, 80.0, &[])).collect();
    let c = compare(&a, &b, &stats, 11);
    assert_eq!(c.method, Method::Runs);
    let row = |n: &str| c.rows.iter().find(|r| r.stat == n).unwrap().clone();
    assert_eq!(row("p99.99").verdict, Verdict::Worse, "{:?}", row("p99.99"));
    assert_eq!(row("max").verdict, Verdict::Worse, "{:?}", row("max"));
    assert_eq!(row("p50").verdict, Verdict::Same, "{:?}", row("p50"));
}

#[test]
fn a_doubled_tail_is_b_worse_over_runs() {
    let stats = default_stats();
    let a: Vec<_> = (0..4).map(|i| synth(100 + i, 50_000, 40.0, &[])).collect();
    // Same body, tail twice as long: p99.99 and max must come out worse,
    // the body must not.
    let b: Vec<_> = (0..4).map(|i| synth(200 + i, 50_000, 80.0, &[])).collect();
    let c = compare(&a, &b, &stats, 7);
    assert_eq!(c.method, Method::Runs);
    let row = |n: &str| c.rows.iter().find(|r| r.stat == n).unwrap();
    assert_eq!(row("p99.99").verdict, Verdict::Worse, "{:?}", row("p99.99"));
    assert_eq!(row("max").verdict, Verdict::Worse, "{:?}", row("max"));
    assert_eq!(row("p50").verdict, Verdict::Same, "{:?}", row("p50"));
    assert!(row("p99.99").ratio > 1.3);
    // And the other way round it is better.
    let c = compare(&b, &a, &stats, 7);
    assert_eq!(
        c.rows.iter().find(|r| r.stat == "p99.99").unwrap().verdict,
        Verdict::Better
    );
}

#[test]
fn a_doubled_tail_is_b_worse_within_single_runs() {
    // One run a side: the samples inside the histograms are resampled.
    let a = [synth(300, 200_000, 40.0, &[])];
    let b = [synth(400, 200_000, 80.0, &[])];
    let c = compare(&a, &b, &default_stats(), 7);
    assert_eq!(c.method, Method::Samples);
    let row = |n: &str| c.rows.iter().find(|r| r.stat == n).unwrap().clone();
    assert_eq!(row("p99.99").verdict, Verdict::Worse, "{:?}", row("p99.99"));
    assert_eq!(row("p50").verdict, Verdict::Same, "{:?}", row("p50"));
}

#[test]
fn compare_is_deterministic() {
    let a = [synth(1, 5000, 50.0, &[])];
    let b = [synth(2, 5000, 50.0, &[])];
    assert_eq!(
        compare(&a, &b, &default_stats(), 3),
        compare(&a, &b, &default_stats(), 3)
    );
}

#[test]
fn statistics_beyond_the_histogram_get_no_verdict_and_one_bucket_is_no_difference() {
    let with_overflow = |seed: u64, max_ns: i64| {
        let mut r = synth(seed, 20_000, 40.0, &[]);
        let t = &mut r.threads[0];
        // 10 samples above the histogram, known only at the maximum.
        t.histogram.as_mut().unwrap().overflow = 10;
        t.samples = t.samples.map(|n| n + 10);
        t.max_ns = Some(max_ns);
        r
    };
    let a = [with_overflow(1, 5_000_000)];
    let b = [with_overflow(2, 9_000_000)];
    let c = compare(&a, &b, &default_stats(), 0);
    let row = |n: &str| c.rows.iter().find(|r| r.stat == n).unwrap().clone();
    // n = 20 010: p99.99 is the 20 009th sample, among the 10 overflows.
    assert_eq!(
        row("p99.99").verdict,
        Verdict::Beyond,
        "{:?}",
        row("p99.99")
    );
    assert_eq!(row("max").verdict, Verdict::Beyond);
    assert_eq!((row("max").a_ns, row("max").b_ns), (5_000_000, 9_000_000));
    // Same body: p50 is at most one 1 µs bucket apart.
    assert!((row("p50").b_ns - row("p50").a_ns).abs() <= 1000);
    assert_eq!(row("p50").verdict, Verdict::Same);
}

/// Several processes opening a store that does not exist yet (a campaign
/// storing while `runs list` polls the same file) all succeed, and the
/// schema is created once. Threads with their own connections race the
/// same way processes do; 20 rounds make a lost race very likely to show.
#[test]
fn opening_a_new_store_at_once_from_many_connections() {
    let d = tempfile::tempdir().unwrap();
    for round in 0..20 {
        let p = d.path().join(format!("race-{round}.db"));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(6));
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let (p, b) = (p.clone(), barrier.clone());
                std::thread::spawn(move || {
                    b.wait();
                    SqliteStore::open(&p).map(|s| s.version().unwrap())
                })
            })
            .collect();
        for h in handles {
            let v = h.join().unwrap();
            assert!(v.is_ok(), "round {round}: {}", v.err().unwrap());
            assert_eq!(v.unwrap(), rtshield_store::SCHEMA_VERSION);
        }
    }
}

/// Issue 22's round trip through the store, for imports that leave values
/// unknown (real cyclictest 2.40 files, see tests/unknown_values.rs): the
/// stored result reads back equal, and the summary columns are NULL
/// (None) where the file said nothing, never 0; a file (re-)opened from
/// disk gives the same.
#[test]
fn imports_round_trip_with_their_unknown_values() {
    let fx = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/report");
    let read = |f: &str| std::fs::read_to_string(fx.join(f)).unwrap();
    let runs = [
        rtshield_results::read_cyclictest_json(&read("cyclictest-no-h.json"), "a").unwrap(),
        rtshield_results::read_cyclictest_json(&read("cyclictest-h1000.json"), "b").unwrap(),
        rtshield_results::read_cyclictest_hist(&read("cyclictest-h1000.hist"), "c").unwrap(),
    ];
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("runs.db");
    {
        let mut s = SqliteStore::open(&p).unwrap();
        for r in &runs {
            s.put(r, None).unwrap();
        }
    }
    let mut s = SqliteStore::open(&p).unwrap();
    let list = s.list(&Selector::all()).unwrap();
    assert_eq!(list.len(), 3);
    let back = s
        .results(&list.iter().map(|r| r.id).collect::<Vec<_>>())
        .unwrap();
    for (r, sum) in runs.iter().zip(&list) {
        let b = back
            .iter()
            .find(|b| b.threads == r.threads)
            .expect("stored as read");
        assert_eq!(b, r);
        let st = sum.threads[0].clone();
        assert_eq!(
            (st.overruns, st.missed_periods, st.lost),
            (None, None, None)
        );
        assert_eq!(st.samples, r.threads[0].samples);
    }
    // No histogram: no percentile at all; the `-h` text: no time.
    let no_h = list
        .iter()
        .find(|x| x.duration_s == Some(2.0) && x.threads[0].samples == Some(9923));
    assert!(no_h.expect("the no-h run").threads[0]
        .percentiles
        .is_empty());
    let hist = list
        .iter()
        .find(|x| x.started.is_none())
        .expect("the -h text");
    assert_eq!(
        (hist.duration_s, hist.end.as_deref(), hist.mode.as_deref()),
        (None, None, None)
    );
}

/// Adversary round 5, F03: a forged results.json reusing the UUID of
/// root's (world-readable) run, imported first, made root's own import
/// say "already stored" and kept the forged figures. The same UUID is
/// the same run only with the same content: anything else is a
/// conflict, whichever comes first, and the same run imported again
/// (from another path) is still "already stored".
#[test]
fn f03_a_uuid_with_other_content_is_a_conflict_never_already_stored() {
    use rtshield_store::Put;
    let mut real = synth(
        3,
        2000,
        50.0,
        &[("uuid", "db70c0de-0000-4000-8000-000000000001")],
    );
    real.tags.insert("load".into(), "idle".into());
    let mut forged = real.clone();
    forged.threads[0].max_ns = Some(5_000);
    forged.label = Some("colleague-run".into());
    for (first, second) in [(&forged, &real), (&real, &forged)] {
        let mut s = SqliteStore::memory().unwrap();
        assert!(matches!(
            s.put(first, Some("a")).unwrap(),
            Put::Stored { .. }
        ));
        let p = s.put(second, Some("b")).unwrap();
        assert!(matches!(p, Put::Conflict { .. }), "{p:?}");
        assert_eq!(s.list(&Selector::all()).unwrap().len(), 1);
    }
    let mut s = SqliteStore::memory().unwrap();
    s.put(&real, None).unwrap();
    let mut again = real.clone();
    rtshield_store::mark_imported(&mut again, "/elsewhere/results.json");
    assert!(matches!(
        s.put(&again, None).unwrap(),
        Put::AlreadyStored { .. }
    ));
    assert_ne!(
        rtshield_store::content_digest(&real),
        rtshield_store::content_digest(&forged)
    );
}

/// A run stored without a `uuid` tag (as `rtshield noise` stores one: its
/// UUID comes from its content) and then imported from its own file (the
/// import sets the tag, so its mark does not change that UUID) is the same
/// run: "already stored", not a conflict.
#[test]
fn a_run_stored_without_its_uuid_tag_is_already_stored_when_imported() {
    use rtshield_store::Put;
    let real = synth(5, 2000, 50.0, &[]);
    assert!(!real.tags.contains_key("uuid"));
    let mut s = SqliteStore::memory().unwrap();
    assert!(matches!(
        s.put(&real, Some("a")).unwrap(),
        Put::Stored { .. }
    ));
    let mut again = real.clone();
    rtshield_store::mark_imported(&mut again, "/here/results.json");
    let p = s.put(&again, None).unwrap();
    assert!(matches!(p, Put::AlreadyStored { .. }), "{p:?}");
    let mut forged = again.clone();
    forged.threads[0].max_ns = forged.threads[0].max_ns.map(|m| m + 1);
    let p = s.put(&forged, None).unwrap();
    assert!(matches!(p, Put::Conflict { .. }), "{p:?}");
}

/// Adversary round 5, F10: a row another lab member writes straight into
/// a shared store was not range-checked on read: `samples = -1` in one
/// summary broke `runs list`, `show`, `export` for the whole store, and
/// 9·10^18 ns was shown as it was. Every row read is checked as a
/// results file is: a bad one is left out (a warning names it), the
/// others are listed; a bad lossless result is left out of a selection's
/// results the same way.
#[test]
fn f10_a_bad_row_is_left_out_and_never_breaks_the_listing() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("st").join("runs.db");
    let mut s = SqliteStore::open(&p).unwrap();
    for seed in 1..=4 {
        s.put(&synth(seed, 1000, 50.0, &[]), None).unwrap();
    }
    drop(s);
    let c = rusqlite_conn(&p);
    c.execute_batch(
        "UPDATE runs SET summary = replace(summary, '\"samples\":1000', '\"samples\":-1') WHERE id = 1;
         UPDATE runs SET summary = replace(summary, '\"samples\":1000', '\"samples\":9000000000000000000') WHERE id = 2;
         UPDATE runs SET duration_s = 'not a number' WHERE id = 3;",
    )
    .unwrap();
    drop(c);
    let mut s = SqliteStore::open(&p).unwrap();
    let list = s.list(&Selector::all()).unwrap();
    assert_eq!(list.iter().map(|r| r.id).collect::<Vec<_>>(), vec![4]);
    // The lossless result of run 4 made unreadable: left out of a
    // selection's results, the store still works.
    drop(s);
    let c = rusqlite_conn(&p);
    c.execute(
        "UPDATE runs SET result = '{\"schema\": 5}' WHERE id = 4",
        [],
    )
    .unwrap();
    drop(c);
    let mut s = SqliteStore::open(&p).unwrap();
    let sums = s.list(&Selector::all()).unwrap();
    let (kept, full) = s.readable_results(sums).unwrap();
    assert!(kept.is_empty() && full.is_empty());
    let e = s.results(&[4]).unwrap_err();
    assert!(
        e.bad_row && e.msg.starts_with("run 4: stored result unreadable"),
        "{e}"
    );
}

/// A run with a thread that measured nothing (samples 0).
fn with_an_empty_thread(seed: u64) -> RunResult {
    let mut r = synth(seed, 1000, 50.0, &[]);
    let mut t = r.threads[0].clone();
    t.index = 1;
    t.cpu = Some(2);
    t.samples = Some(0);
    t.histogram.as_mut().unwrap().counts.clear();
    t.histogram.as_mut().unwrap().overflow = 0;
    t.hist_stats = None;
    t.percentiles.clear();
    t.percentile_bounds.clear();
    (t.min_ns, t.max_ns, t.avg_ns, t.cur_ns) = (None, None, None, None);
    r.threads.push(t);
    r
}

/// The thread row's (min, avg, max) of thread `idx` of run 1, as SQL has them.
fn thread_row(p: &std::path::Path, idx: i64) -> (Option<i64>, Option<f64>, Option<i64>) {
    rusqlite_conn(p)
        .query_row(
            "SELECT min_ns, avg_ns, max_ns FROM threads WHERE run_id = 1 AND idx = ?1",
            [idx],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
}

/// Issue 22: a thread that measured nothing is stored with NULL figures
/// (never 0), and its summary says unknown.
#[test]
fn a_thread_without_samples_is_stored_as_null() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("runs.db");
    let r = with_an_empty_thread(7);
    let mut s = SqliteStore::open(&p).unwrap();
    s.put(&r, None).unwrap();
    assert_eq!(thread_row(&p, 1), (None, None, None));
    assert!(thread_row(&p, 0).2.is_some());
    let list = s.list(&Selector::all()).unwrap();
    let ts = &list[0].threads;
    assert_eq!(
        (ts[1].min_ns, ts[1].avg_ns, ts[1].max_ns),
        (None, None, None)
    );
    assert_eq!(list[0].worst_max(), r.threads[0].max_ns);
    assert_eq!(s.results(&[1]).unwrap()[0], r);
}

/// A version-4 store (min/avg/max NOT NULL: a thread without samples
/// stored as 0, as its result held) is migrated: the placeholders become
/// NULL in the rows, the summary and the result.
#[test]
fn a_version_4_store_forgets_the_zeros_of_a_thread_without_samples() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("v4.db");
    let mut old = with_an_empty_thread(8);
    (old.threads[1].min_ns, old.threads[1].max_ns) = (Some(0), Some(0));
    old.threads[1].avg_ns = Some(0.0);
    {
        let c = rusqlite_conn(&p);
        c.execute_batch(&rtshield_store::sqlite_schema(4)).unwrap();
        c.execute(
            "INSERT INTO runs (uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool,
               label, started, duration_s, end_reason, mode, source, stored_at, summary, result)
             VALUES ('u-4','h','6.1','v','p','x86_64','c','t','l','s',1.0,'duration','nanosleep',
               NULL,0,'[[],{}]', ?1)",
            [serde_json::to_string(&old).unwrap()],
        )
        .unwrap();
        c.execute(
            "INSERT INTO threads (run_id, idx, cpu, samples, min_ns, avg_ns, max_ns)
             VALUES (1, 1, 2, 0, 0, 0.0, 0)",
            [],
        )
        .unwrap();
    }
    let mut s = SqliteStore::open(&p).unwrap();
    assert_eq!(s.version().unwrap(), rtshield_store::SCHEMA_VERSION);
    assert_eq!(thread_row(&p, 1), (None, None, None));
    let t = &s.list(&Selector::all()).unwrap()[0].threads[1];
    assert_eq!((t.min_ns, t.avg_ns, t.max_ns), (None, None, None));
    let back = &s.results(&[1]).unwrap()[0].threads[1];
    assert_eq!((back.min_ns, back.avg_ns, back.max_ns), (None, None, None));
}
