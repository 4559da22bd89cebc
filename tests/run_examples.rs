//! The systress article's configurations run as printed (CPUs folded onto this
//! machine's, shortened with --duration).

use crate::util::*;

#[test]
fn systress_article_examples_run_shortened() {
    let d = tempfile::tempdir().unwrap();
    for (cfg, txt) in [
        ("host.cfg", "timer_thread00.txt"),
        ("host2.cfg", "timer_thread00.txt"),
        ("rpi_isolcpus.cfg", "rpi_isolcpus.txt"),
        ("rpi_isolcpus_load.cfg", "rpi_isolcpus_load.txt"),
    ] {
        let out = d.path().join(cfg);
        let o = run(&[
            "run",
            "-q",
            "--fold-cpus",
            "--duration",
            "1500ms",
            example(cfg).to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let (so, se) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{cfg}: {so}{se}");
        let r = results(&out);
        assert_eq!(r["end_reason"], "duration", "{cfg}");
        assert!(r["threads"][0]["samples"].as_u64().unwrap() > 500, "{cfg}");
        assert!(r["config"].as_str().unwrap().contains("timer_thread[0]"));
        assert!(out.join(txt).exists(), "{cfg}: {txt} missing");
        assert!(
            so.contains(&format!(
                "Statistics for timer_thread[0] in '{}'",
                out.join(txt).display()
            )),
            "{so}"
        );
        let progs = r["programs"].as_array().unwrap();
        for p in progs {
            // Every program ran (ping may be missing on this machine: counted as failures).
            assert!(p["spawns"].as_u64().unwrap() >= 1, "{cfg}: {p}");
        }
    }
}
