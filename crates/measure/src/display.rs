//! The live display: the systress article's systress table, refreshed every stats
//! period under a progress bar on a terminal, as plain lines otherwise.

use crate::{IntervalStats, Observer, ThreadStats};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// The systress table header (the systress article): `Index TID Samples L_min L_max L_cur L_avg`.
pub const TABLE_HEADER: &str = "Index     TID  Samples    L_min    L_max    L_cur    L_avg";

/// A latency in display units (floor, like the histogram buckets).
pub fn display_units(ns: i64, res: u64) -> i64 {
    ns.div_euclid(res.max(1) as i64)
}

/// An average in display units, rounded.
pub fn display_units_avg(ns: f64, res: u64) -> i64 {
    (ns / res.max(1) as f64).round() as i64
}

/// One row of the systress table.
pub fn table_row(t: &ThreadStats, res: u64) -> String {
    // Before the first sample the figures are placeholders: `?`.
    let some = t.samples > 0;
    row(
        t.index,
        Some(t.tid),
        Some(t.samples),
        [some.then_some(t.min_ns), some.then_some(t.max_ns)],
        some.then_some(t.cur_ns),
        some.then_some(t.avg_ns),
        res,
    )
}

/// The same row for a finished thread read from a result file (`?`
/// where the file does not say: an import's unknown TID, sample count or
/// last sample is never shown as 0).
pub fn result_row(t: &rtshield_results::ThreadResult, res: u64) -> String {
    row(
        t.index,
        t.tid,
        t.samples,
        [t.min_ns, t.max_ns],
        t.cur_ns,
        t.avg_ns,
        res,
    )
}

fn row(
    index: u32,
    tid: Option<i32>,
    samples: Option<u64>,
    [min, max]: [Option<i64>; 2],
    cur: Option<i64>,
    avg: Option<f64>,
    res: u64,
) -> String {
    use rtshield_results::or_unknown as q;
    format!(
        "{:>5} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}",
        index,
        q(tid, "?"),
        q(samples, "?"),
        q(min.map(|v| display_units(v, res)), "?"),
        q(max.map(|v| display_units(v, res)), "?"),
        q(cur.map(|c| display_units(c, res)), "?"),
        q(avg.map(|a| display_units_avg(a, res)), "?")
    )
}

/// The systress live table, one row per thread, in µs (or ns with ns
/// resolution), ending with a newline.
pub fn render_table(s: &IntervalStats) -> String {
    let mut out = String::from(TABLE_HEADER);
    out.push('\n');
    for t in &s.threads {
        out.push_str(&table_row(t, s.resolution_ns));
        out.push('\n');
    }
    out
}

enum Target {
    Quiet,
    Bar(ProgressBar),
    Plain { header_done: bool },
}

/// The [`Observer`] of `rtshield measure`/`demo`: progress bar plus table
/// on a terminal, plain lines otherwise, nothing with `quiet`.
pub struct LiveDisplay {
    target: Target,
    footer: Option<Footer>,
}

/// Extra lines under the table each period (e.g. `run`'s per-CPU load).
pub type Footer = Box<dyn FnMut(&IntervalStats) -> Option<String> + Send>;

impl LiveDisplay {
    /// A display on standard output: a progress bar over the table on a terminal, plain lines otherwise, nothing when `quiet`.
    pub fn new(quiet: bool) -> LiveDisplay {
        let target = if quiet {
            Target::Quiet
        } else if std::io::stdout().is_terminal() {
            let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stdout());
            Target::Bar(pb)
        } else {
            Target::Plain { header_done: false }
        };
        LiveDisplay {
            target,
            footer: None,
        }
    }

    /// Show `f`'s text under the table every period (`None`: nothing).
    pub fn set_footer(&mut self, f: Footer) {
        self.footer = Some(f);
    }

    /// Remove the bar (the caller prints the final summary).
    pub fn finish(&mut self) {
        if let Target::Bar(pb) = &self.target {
            pb.finish_and_clear();
        }
    }
}

impl Drop for LiveDisplay {
    fn drop(&mut self) {
        self.finish();
    }
}

fn bar_style(with_total: bool) -> ProgressStyle {
    let t = if with_total {
        "{msg}\n[{bar:40}] {percent:>3}%  elapsed {elapsed}  left {eta}"
    } else {
        "{msg}\n{spinner} elapsed {elapsed}  (Ctrl-C to stop)"
    };
    ProgressStyle::with_template(t)
        .expect("static template")
        .progress_chars("=> ")
}

impl Observer for LiveDisplay {
    fn interval(&mut self, s: &IntervalStats) -> bool {
        let footer = match (&self.target, &mut self.footer) {
            (Target::Quiet, _) | (_, None) => None,
            (_, Some(f)) => f(s),
        };
        match &mut self.target {
            Target::Quiet => {}
            Target::Bar(pb) => {
                let mut table = render_table(s);
                if let Some(f) = &footer {
                    table.push('\n');
                    table.push_str(f);
                }
                let msg = table.trim_end().to_string();
                if let Some(d) = s.duration_ns {
                    if pb.length() != Some(d / 1_000_000) {
                        pb.set_style(bar_style(true));
                        pb.set_length(d / 1_000_000);
                    }
                    pb.set_position((s.elapsed_ns / 1_000_000).min(d / 1_000_000));
                } else if let Some(n) = s.samples_target {
                    if pb.length() != Some(n) {
                        pb.set_style(bar_style(true));
                        pb.set_length(n);
                    }
                    let done = s.threads.iter().map(|t| t.samples).min().unwrap_or(0);
                    pb.set_position(done.min(n));
                } else if pb.length().is_some() || pb.position() == 0 {
                    pb.set_style(bar_style(false));
                    pb.enable_steady_tick(Duration::from_millis(200));
                }
                pb.set_message(msg);
            }
            Target::Plain { header_done } => {
                use std::fmt::Write as _;
                let mut out = String::new();
                if !*header_done {
                    let _ = writeln!(out, "{:>8} {TABLE_HEADER}", "Time");
                    *header_done = true;
                }
                for t in &s.threads {
                    let _ = writeln!(
                        out,
                        "{:>7.1}s {}",
                        s.elapsed_ns as f64 / 1e9,
                        table_row(t, s.resolution_ns)
                    );
                }
                if let Some(f) = &footer {
                    let _ = writeln!(out, "{}", f.trim_end());
                }
                // A reader that went away (`| head`) must not end the
                // measurement: the lines are dropped, the run goes on and
                // still writes its files.
                let mut so = std::io::stdout().lock();
                let _ = std::io::Write::write_all(&mut so, out.as_bytes())
                    .and_then(|()| std::io::Write::flush(&mut so));
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_systress_article_layout() {
        let s = IntervalStats {
            resolution_ns: 1000,
            threads: vec![ThreadStats {
                index: 0,
                tid: 256845,
                samples: 59992,
                min_ns: 3_400,
                max_ns: 4_230_999,
                cur_ns: 6_000,
                avg_ns: 6_400.0,
                ..Default::default()
            }],
            ..Default::default()
        };
        // The systress article: "    0  256845    59992        3     4230        6        6"
        assert_eq!(
            render_table(&s),
            "Index     TID  Samples    L_min    L_max    L_cur    L_avg\n    0  256845    59992        3     4230        6        6\n"
        );
    }

    #[test]
    fn ns_resolution_shows_ns() {
        let t = ThreadStats {
            samples: 3,
            min_ns: 1234,
            max_ns: 5678,
            avg_ns: 2000.4,
            ..Default::default()
        };
        assert!(table_row(&t, 1).ends_with("1234     5678        0     2000"));
    }

    /// Issue 22: before the first sample the live table says `?`, not 0.
    #[test]
    fn a_thread_without_samples_shows_unknown() {
        let t = ThreadStats::default();
        assert_eq!(
            table_row(&t, 1000),
            "    0       0        0        ?        ?        ?        ?"
        );
    }
}
