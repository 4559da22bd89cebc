// Documented value ranges (docs/ranges.md): out-of-range CLI values are refused at
// parse time with exit 2 and the option named, before anything is started.
use crate::util::*;

/// `rtshield ARGS` is refused (exit 2) naming `option`.
fn refused(args: &[&str], option: &str) {
    crate::util::refused(&rtshield(args), option);
}

#[test]
fn measure_period_above_one_hour_is_refused() {
    refused(
        &["measure", "--period", "213503d", "--samples", "1"],
        "--period",
    );
    refused(
        &["measure", "--period", "61min", "--samples", "1"],
        "--period",
    );
}

#[test]
fn measure_duration_above_one_year_is_refused() {
    refused(&["measure", "--duration", "106752d"], "--duration");
    refused(&["measure", "--duration", "366d"], "--duration");
}

#[test]
fn measure_histo_size_zero_or_huge_is_refused() {
    refused(
        &["measure", "--histo-size", "0us", "--samples", "1"],
        "--histo-size",
    );
    refused(
        &["measure", "--histo-size", "2s", "--samples", "1"],
        "--histo-size",
    );
}

#[test]
fn measure_samples_out_of_range_is_refused() {
    refused(&["measure", "--samples", "0"], "--samples");
    refused(
        &["measure", "--samples", "18446744073709551615"],
        "--samples",
    );
}

/// Inputs must be regular files: a device or a FIFO is refused at once (exit 2),
/// never read until memory runs out or blocked on.
#[test]
fn report_and_run_check_refuse_devices_and_fifos() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let f = fifo.to_str().unwrap();
    for args in [
        vec!["report", "/dev/zero"],
        vec!["report", f],
        vec!["run", "--check", f],
    ] {
        let mut child = command()
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A bounded wait: a blocked or unbounded read is a failure, not a hang.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                child.wait().unwrap();
                panic!("{args:?} did not end");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", describe(&o));
    }
}
