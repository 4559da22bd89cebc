// Documented value ranges (docs/ranges.md): out-of-range CLI values are refused at
// parse time with exit 2 and the option named, before anything is started.
use crate::util::*;

fn refused(args: &[&str], option: &str) {
    let o = rtshield(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", describe(&o));
    let text = all_text(&o);
    assert!(text.contains(option), "{args:?}: option not named: {text}");
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
