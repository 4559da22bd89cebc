//! One curve per run and measuring thread (`run:cpuN`), with the numbers
//! the plots and tables show, taken from the result file as written.

use crate::load::Run;
use rtshield_results::ThreadResult;

/// A fixed palette (Tableau 10, then darker variants) so the same inputs
/// always get the same colours, distinguishable on white.
pub(crate) const PALETTE: &[(u8, u8, u8)] = &[
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
    (17, 66, 100),
    (160, 80, 0),
    (20, 90, 20),
    (120, 20, 20),
    (80, 50, 110),
    (80, 50, 40),
    (150, 60, 120),
    (60, 60, 60),
    (110, 110, 20),
    (10, 110, 120),
];

#[derive(Debug, Clone)]
pub(crate) struct Series<'a> {
    /// Index of the run in the report's inputs.
    pub run: usize,
    pub label: String,
    /// File-name-safe version of `label`.
    pub slug: String,
    pub color: (u8, u8, u8),
    pub thread: &'a ThreadResult,
    /// Non-zero buckets: (lower edge in µs, count).
    pub points: Vec<(f64, u64)>,
    /// Runs of adjacent buckets, as index ranges into `points`. A zero
    /// count has no place on a log axis: the curve breaks there instead
    /// of being drawn across the gap (OSADL plots do the same), and a
    /// bucket with empty neighbours on both sides is a lone dot.
    pub segments: Vec<std::ops::Range<usize>>,
    /// Where the histogram ends (start of the overflow), in µs; 0
    /// without a histogram.
    pub hist_end_us: f64,
    /// The thread's resolution (its histogram's, else the run's), ns.
    pub res_ns: u64,
}

impl Series<'_> {
    pub(crate) fn css_color(&self) -> String {
        let (r, g, b) = self.color;
        format!("#{r:02x}{g:02x}{b:02x}")
    }
    /// The maximum, µs; unknown for a thread that measured nothing.
    pub(crate) fn max_us(&self) -> Option<f64> {
        self.thread.max_ns.map(|m| m as f64 / 1000.0)
    }
    /// Samples beyond the histogram (0 without one: see
    /// [`Series::has_histogram`]).
    pub(crate) fn overflow(&self) -> u64 {
        self.thread.histogram.as_ref().map_or(0, |h| h.overflow)
    }
    /// Whether the source kept a histogram (cyclictest `--json` without
    /// `-h` did not: no bucket, no overflow count).
    pub(crate) fn has_histogram(&self) -> bool {
        self.thread.histogram.is_some()
    }
    /// Samples the plot cannot show on an axis ending at `x_end` µs: the
    /// overflow, and the buckets starting past the axis end.
    pub(crate) fn beyond(&self, x_end: f64) -> u64 {
        self.overflow()
            + self
                .points
                .iter()
                .filter(|p| p.0 > x_end)
                .map(|p| p.1)
                .sum::<u64>()
    }
    /// `max 8380 µs`, plus ` (beyond axis)` when the plot's x axis (ending
    /// at `x_end` µs) cannot show it. Floored like the table's value.
    pub(crate) fn max_note(&self, x_end: f64) -> String {
        let beyond = if self.max_us().is_some_and(|m| m > x_end) {
            " (beyond axis)"
        } else {
            ""
        };
        format!(
            "max {} µs{beyond}",
            self.thread
                .max_ns
                .map_or("?".into(), |m| fmt_us(m as f64, self.res_ns))
        )
    }
    /// `181 overflow ≥ 401 µs` when samples fell beyond the histogram,
    /// `no histogram` when the source kept none, and `12 past the axis`
    /// when buckets lie beyond the axis end.
    pub(crate) fn overflow_note(&self, x_end: f64) -> Option<String> {
        if !self.has_histogram() {
            return Some("no histogram".into());
        }
        let past = self.beyond(x_end) - self.overflow();
        let mut parts = Vec::new();
        if self.overflow() > 0 {
            parts.push(format!(
                "{} overflow ≥ {} µs",
                self.overflow(),
                self.hist_end_us
            ));
        }
        if past > 0 {
            parts.push(format!("{past} past the axis"));
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
    /// The legend's text after the label, the same in every output:
    /// `max 8380 µs (beyond axis) · 181 overflow ≥ 401 µs`.
    pub(crate) fn note(&self, x_end: f64) -> String {
        match self.overflow_note(x_end) {
            Some(o) => format!("{} · {o}", self.max_note(x_end)),
            None => self.max_note(x_end),
        }
    }
}

/// `run:cpuN` for a thread pinned to CPU N, `run:tI` otherwise.
pub(crate) fn thread_label(run: &str, t: &ThreadResult) -> String {
    match t.cpu {
        Some(c) => format!("{run}:cpu{c}"),
        None => format!("{run}:t{}", t.index),
    }
}

pub(crate) fn build(runs: &[Run]) -> Vec<Series<'_>> {
    let mut out = Vec::new();
    let mut slugs = Slugs::default();
    for (ri, run) in runs.iter().enumerate() {
        for t in &run.result.threads {
            let res_ns = t.resolution_ns(run.result.settings.resolution_ns);
            let h = t.histogram.clone().unwrap_or_default();
            let res_us = res_ns as f64 / 1000.0;
            let label = thread_label(&run.label, t);
            let slug = slugs.unique(&label);
            // Defensive: the schema stores non-zero buckets only.
            let nonzero: Vec<[u64; 2]> = h.counts.iter().filter(|c| c[1] > 0).copied().collect();
            out.push(Series {
                run: ri,
                color: PALETTE[out.len() % PALETTE.len()],
                label,
                slug,
                thread: t,
                points: nonzero
                    .iter()
                    .map(|c| (c[0] as f64 * res_us, c[1]))
                    .collect(),
                segments: adjacent_runs(&nonzero),
                hist_end_us: h.buckets as f64 * res_us,
                res_ns,
            });
        }
    }
    out
}

/// Index ranges of `counts` whose bucket numbers follow each other.
pub(crate) fn adjacent_runs(counts: &[[u64; 2]]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=counts.len() {
        if i == counts.len() || counts[i][0] != counts[i - 1][0] + 1 {
            out.push(start..i);
            start = i;
        }
    }
    out
}

/// The slugs given so far to one kind of file (`latency-SLUG.dat`,
/// `timeline-SLUG.dat`, `timeline-SLUG.png`): two labels with the same
/// slug (`lab/run`, `lab?run`) get `SLUG` and `SLUG-2`, never one file
/// for both curves (round-2 finding B3).
#[derive(Default)]
pub(crate) struct Slugs(Vec<String>);

impl Slugs {
    /// The slug of `label`, made unique among those given before.
    pub(crate) fn unique(&mut self, label: &str) -> String {
        let base = slugify(label);
        let mut slug = base.clone();
        let mut k = 2;
        while self.0.contains(&slug) {
            slug = format!("{base}-{k}");
            k += 1;
        }
        self.0.push(slug.clone());
        slug
    }
}

/// The longest slug: `timeline-SLUG.png` stays far below the 255 bytes
/// of a file name, whatever the label's length.
pub(crate) const SLUG_MAX: usize = 120;

/// Letters, digits, `-`, `_`, `.`; anything else becomes `_`; at most
/// [`SLUG_MAX`] characters.
pub(crate) fn slugify(s: &str) -> String {
    let t: String = s
        .chars()
        .take(SLUG_MAX)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if t.is_empty() || t.starts_with('.') {
        format!("_{t}")
    } else {
        t
    }
}

/// Latency in µs for display: whole µs at µs resolution, floored like the
/// histogram buckets (and `measure`'s own tables: 8380.6 µs is in bucket
/// 8380), ns digits at finer resolutions.
pub(crate) fn fmt_us(ns: f64, res_ns: u64) -> String {
    let us = ns / 1000.0;
    if res_ns >= 1000 {
        format!("{:.0}", us.floor())
    } else {
        format!("{us:.3}")
    }
}

/// Averages and deviations get one more digit than the resolution.
pub(crate) fn fmt_us_frac(ns: f64, res_ns: u64) -> String {
    let us = ns / 1000.0;
    if res_ns >= 1000 {
        format!("{us:.2}")
    } else {
        format!("{us:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slugify("idle run:cpu1"), "idle_run_cpu1");
        assert_eq!(slugify("../x"), "_.._x");
        assert_eq!(slugify(""), "_");
        // A 5 MB label makes a file name, not an error (e-5mb-label).
        assert_eq!(slugify(&"L".repeat(5_000_000)), "L".repeat(SLUG_MAX));
    }

    #[test]
    fn curves_break_at_empty_buckets() {
        assert!(adjacent_runs(&[]).is_empty());
        assert_eq!(adjacent_runs(&[[4, 1]]), vec![0..1]);
        // 10 11 12 | 15 | 17 18
        let c = [[10, 2], [11, 5], [12, 2], [15, 1], [17, 3], [18, 1]];
        assert_eq!(adjacent_runs(&c), vec![0..3, 3..4, 4..6]);
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_us(12_000.0, 1000), "12");
        assert_eq!(fmt_us(12_999.0, 1000), "12");
        assert_eq!(fmt_us(12_345.0, 1), "12.345");
        assert_eq!(fmt_us_frac(12_345.0, 1000), "12.35");
    }
}
