//! Store benchmark: ingest N synthetic runs (1 000-bucket histograms), one
//! transaction per run as `measure` stores them, then time `list` with a
//! selector and a `compare`. Prints the figures and the store size per run.
//!
//! cargo run --release -p rtshield-store --example store_bench -- DB N

use rtshield_results::{example_result, Histogram};
use rtshield_store::{compare, default_stats, Selector, SqliteStore, Store};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let db = args.next().expect("usage: store_bench DB N");
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let _ = std::fs::remove_file(&db);
    let mut st = SqliteStore::open(std::path::Path::new(&db)).unwrap();
    let template = example_result();
    let t0 = Instant::now();
    for i in 0..n {
        let mut r = template.clone();
        r.started_at = Some(format!("run-{i}"));
        r.tags
            .insert("isolation".into(), ["none", "partition"][i % 2].into());
        r.tags
            .insert("load".into(), ["idle", "hell"][(i / 2) % 2].into());
        // 500 campaigns of 20 runs: compare picks one campaign's cells.
        r.tags.insert("campaign".into(), format!("c{}", i / 20));
        for t in &mut r.threads {
            t.histogram = Some(Histogram {
                resolution_ns: 1000,
                buckets: 1000,
                counts: (0..1000u64)
                    .map(|b| [b, 1 + (b * 7919 + i as u64) % 97])
                    .collect(),
                overflow: 0,
                underflow: 0,
            });
        }
        st.put(&r, None).unwrap();
    }
    let ingest = t0.elapsed().as_secs_f64();
    drop(st);
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0)
        + std::fs::metadata(format!("{db}-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
    let mut st = SqliteStore::open(std::path::Path::new(&db)).unwrap();
    let t1 = Instant::now();
    let sel = Selector::parse("isolation = none and load = hell").unwrap();
    let picked = st.list(&sel).unwrap();
    let list = t1.elapsed().as_secs_f64();
    let t2 = Instant::now();
    let ids = |st: &mut SqliteStore, q: &str| -> Vec<i64> {
        st.list(&Selector::parse(q).unwrap())
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect()
    };
    let a = ids(&mut st, "campaign = c7 and isolation = none");
    let b = ids(&mut st, "campaign = c7 and isolation = partition");
    let ra = st.results(&a).unwrap();
    let rb = st.results(&b).unwrap();
    let c = compare(&ra, &rb, &default_stats(), 0);
    let cmp = t2.elapsed().as_secs_f64();
    println!("runs                 {n}");
    println!(
        "ingest               {:.0} runs/s ({ingest:.2} s)",
        n as f64 / ingest
    );
    println!(
        "list with selector   {:.0} ms ({} runs selected)",
        list * 1000.0,
        picked.len()
    );
    println!(
        "compare {} vs {} runs {:.0} ms ({:?})",
        ra.len(),
        rb.len(),
        cmp * 1000.0,
        c.method
    );
    println!("store size per run   {} bytes", size / n as u64);
}
