//! The PNG shows what the numbers say: a histogram with known counts is
//! rendered and its pixel rows checked against the plot's own mapping
//! (no curve pixel below the axis or the count-1 line, the peak at the
//! height of its count on the log scale).

//!
//! (A unit-test module: the plot's coordinate mapping is crate-private.)

use crate::load::Run;
use crate::plot::{self, latency_rgb, HEIGHT, WIDTH};
use crate::series;
use crate::synth::synth_run_result;
use rtshield_results::thread_from_histogram;
use rtshield_results::Histogram;
use std::path::PathBuf;

/// 1001 one-µs buckets (`--histo-size 1000us`): a peak of 100000 at 20 µs,
/// a body from 10 to 60 µs, then isolated spikes with alternating counts
/// 1 and 300 in adjacent buckets (the sharp turns that misdrew).
fn spiky(buckets: u64) -> Run {
    let mut counts = Vec::new();
    for b in 10..=60u64 {
        let c = if b == 20 {
            100_000
        } else {
            1000 / (1 + b.abs_diff(20))
        };
        counts.push([b, c]);
    }
    for b in 61..=buckets * 9 / 10 {
        if b % 7 < 4 {
            counts.push([b, if b % 2 == 0 { 1 } else { 300 }]);
        }
    }
    let n: u64 = counts.iter().map(|c| c[1]).sum();
    let last = counts.last().unwrap()[0] as i64;
    let h = Histogram {
        resolution_ns: 1000,
        buckets: buckets + 1,
        counts,
        overflow: 0,
        underflow: 0,
    };
    let mut r = synth_run_result("spiky", 1, &[1], 10, 10.0, 0.0, 100);
    r.threads = vec![thread_from_histogram(
        0,
        Some(1),
        Some(1_000_000),
        n,
        Some(10_000),
        Some(last * 1000 + 500),
        Some(21_000.0),
        h,
    )];
    Run {
        label: "spiky".into(),
        path: PathBuf::from("spiky"),
        result: r,
        timeline: None,
    }
}

fn px(buf: &[u8], x: i32, y: i32) -> (u8, u8, u8) {
    let i = ((y as u32 * WIDTH + x as u32) * 3) as usize;
    (buf[i], buf[i + 1], buf[i + 2])
}

fn check(buckets: u64) {
    use plotters::coord::CoordTranslate;
    let runs = vec![spiky(buckets)];
    let s = series::build(&runs);
    let color = s[0].color;
    // Whole histogram on the axis: the default end is past the last bucket.
    let (buf, coord) = latency_rgb(&s, "t", None).unwrap();
    let x_end = plot::x_range(&s, None);
    let last_bucket = s[0].points.last().unwrap().0;
    assert!(x_end > last_bucket && x_end < last_bucket * 1.2, "{x_end}");
    let axis_y = coord.translate(&(0.0, 0.8)).1;
    let one_y = coord.translate(&(0.0, 1.0)).1;
    let (peak_x, peak_y) = coord.translate(&(20.0, 100_000.0));
    let max_x = coord.translate(&(s[0].max_us().unwrap(), 1.0)).0;
    let plot_right = (WIDTH - 330) as i32;
    let mut top_at_peak = i32::MAX;
    let mut curve_pixels = 0;
    for y in 0..HEIGHT as i32 {
        for x in 0..plot_right {
            if px(&buf, x, y) != color {
                continue;
            }
            curve_pixels += 1;
            // The maximum's bar stands on the axis, 4 px wide.
            let on_max_bar = (x - max_x).abs() <= 3;
            assert!(y <= axis_y, "pixel ({x},{y}) below the axis row {axis_y}");
            assert!(
                on_max_bar || y <= one_y + 2,
                "pixel ({x},{y}) below the count-1 row {one_y}"
            );
            assert!(
                y >= peak_y - 2,
                "pixel ({x},{y}) above the peak row {peak_y}"
            );
            if (x - peak_x).abs() <= 1 {
                top_at_peak = top_at_peak.min(y);
            }
        }
    }
    assert!(curve_pixels > 500, "the curve is drawn ({curve_pixels} px)");
    assert!(
        (top_at_peak - peak_y).abs() <= 2,
        "peak drawn at row {top_at_peak}, its count is at row {peak_y}"
    );
}

#[test]
fn png_curve_stays_between_axis_and_peak_1000us() {
    check(1000);
}

#[test]
fn png_curve_stays_between_axis_and_peak_2000us() {
    check(2000);
}

/// Two runs with the same overflow count: two markers side by side, not
/// one on top of the other.
#[test]
fn overflow_markers_do_not_hide_each_other() {
    let mut a = spiky(100);
    let mut b = spiky(100);
    for r in [&mut a, &mut b] {
        r.result.threads[0].histogram.as_mut().unwrap().overflow = 5;
    }
    b.label = "other".into();
    let runs = vec![a, b];
    let s = series::build(&runs);
    let svg = plot::latency_svg(&s, "t", None).unwrap();
    let marker_x = |color: (u8, u8, u8)| -> f64 {
        let hex = format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2);
        let l = svg
            .lines()
            .find(|l| l.starts_with("<polygon") && l.contains(&hex))
            .unwrap_or_else(|| panic!("no marker of {hex}"));
        let pts = l.split("points=\"").nth(1).unwrap();
        let xs: Vec<f64> = pts[..pts.find('"').unwrap()]
            .split_whitespace()
            .map(|p| p.split(',').next().unwrap().parse().unwrap())
            .collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    let (xa, xb) = (marker_x(s[0].color), marker_x(s[1].color));
    assert!((xa - xb).abs() >= 10.0, "markers at {xa} and {xb}");
}

/// `--x-max` cuts the axis; buckets past it join the marker's count and
/// the legend says how many.
#[test]
fn x_max_overrides_the_axis() {
    let runs = vec![spiky(1000)];
    let s = series::build(&runs);
    assert_eq!(plot::x_range(&s, Some(50.0)), 50.0);
    let past: u64 = s[0].points.iter().filter(|p| p.0 > 50.0).map(|p| p.1).sum();
    assert_eq!(s[0].beyond(50.0), past);
    let svg = plot::latency_svg(&s, "t", Some(50.0)).unwrap();
    assert!(svg.contains(&format!("{past} past the axis")), "legend");
}
