//! The two entry points and their printers: a refused request prints
//! nothing and changes nothing; `run --check` goes through the printer.

use rtshield_config::Config;
use rtshield_measure::IntervalStats;
use rtshield_run::RunOutcome;
use rtshield_run::{ConfigPrinter, ConfigRequest, MeasureRequest, Plan, Printer, Summary};
use rtshield_sys::{Root, SysInfo};
use rtshield_vocab::InputError;
use std::path::Path;

/// What a printer was asked to show, in order.
#[derive(Default)]
struct Recorder(Vec<String>);

impl Printer for Recorder {
    fn header(&mut self, _plan: &Plan, _sysinfo: &SysInfo) {
        self.0.push("header".into());
    }
    fn interval(&mut self, _s: &IntervalStats) -> bool {
        self.0.push("interval".into());
        true
    }
    fn live_end(&mut self) {
        self.0.push("live_end".into());
    }
    fn summary(&mut self, _s: &Summary<'_>) {
        self.0.push("summary".into());
    }
}

impl ConfigPrinter for Recorder {
    fn checked(&mut self, cfg: &Config, warnings: &[String], duration_ns: Option<u64>) {
        self.0.push(format!(
            "checked {} timers, {} warnings, {duration_ns:?}",
            cfg.timers.len(),
            warnings.len()
        ));
    }
    fn warnings(&mut self, _w: &[String]) {
        self.0.push("warnings".into());
    }
    fn resuming(&mut self, _dir: &Path, _measured_s: f64, _gap_s: f64) {
        self.0.push("resuming".into());
    }
    fn interval(&mut self, _s: &IntervalStats, _l: Option<&str>, _m: &mut Vec<String>) {
        self.0.push("interval".into());
    }
    fn live_end(&mut self, _m: &mut Vec<String>) {
        self.0.push("live_end".into());
    }
    fn summary(&mut self, _cfg: &Config, _o: &RunOutcome) {
        self.0.push("summary".into());
    }
    fn files_missing(&mut self, _n: usize) {
        self.0.push("files_missing".into());
    }
}

#[test]
fn a_refused_request_is_an_input_error_before_anything_is_printed_or_made() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let mut r = MeasureRequest::new(500);
    r.out = Some(out.clone());
    r.no_store = true;
    let mut p = Recorder::default();
    let e = rtshield_run::measure(&r, &Root::host(), &mut p).unwrap_err();
    assert!(e.is::<InputError>(), "{e:#}");
    assert_eq!(e.to_string(), "--period 500ns: must be at least 1us");
    assert!(p.0.is_empty(), "{:?}", p.0);
    assert!(!out.exists());
}

#[test]
fn run_check_goes_through_the_printer_and_runs_nothing() {
    let d = tempfile::tempdir().unwrap();
    let cfg = d.path().join("c.cfg");
    std::fs::write(
        &cfg,
        "timer_thread[0] {\n  period 1 ms\n  lifetime.duration 2 s\n}\n",
    )
    .unwrap();
    let req = ConfigRequest {
        config: cfg,
        check: true,
        out: Some(d.path().join("out")),
        ..Default::default()
    };
    let mut p = Recorder::default();
    let code = rtshield_run::run_config(&req, &Root::host(), &mut p).unwrap();
    assert_eq!(code, 0);
    assert_eq!(p.0, ["checked 1 timers, 0 warnings, Some(2000000000)"]);
    assert!(!d.path().join("out").exists());
}
