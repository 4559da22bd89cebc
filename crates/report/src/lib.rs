//! rtshield-report: every rendering of results for people. Its one job is
//! to turn runs into pictures and tables: `rtshield report` (latency and
//! percentile plots in PNG and SVG, an HTML page, Markdown and CSV
//! summaries, gnuplot scripts, timelines, spike sections; [`generate`]),
//! the `rtshield runs` tables ([`list_table`], [`compare_table`] ...) and
//! a campaign's report in the articles' shape ([`campaign_summary_markdown`],
//! [`campaign_summary_html`] over a [`CampaignView`]).
//!
//! It may not measure, store or decide: it reads result files through
//! `rtshield-results`, gets stored runs and comparisons from
//! `rtshield-store` as values, and writes only into the one output
//! directory it is given.
//!
//! Flow: `load` reads and checks every input (rtshield results, cyclictest
//! JSON or histogram text, `timeline.csv`), `series` turns each measuring
//! thread into one curve, then every output is rendered in memory (`output`:
//! one [`Format`] per file behind one trait) and only then written — a bad
//! input never leaves half a report. The output directory holds one
//! report: a rewrite leaves only the new report's files, and a directory
//! with files rtshield did not write is refused (see [`check_out_dir`]).
//! All writes and removals go through one directory descriptor
//! ([`SafeDir`]); see docs/security.md.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod campaign;
mod gnuplot;
mod html;
mod load;
mod noise;
mod output;
mod plot;
mod runs;
mod series;
mod spikes;
/// Fixtures for tests and examples: never in the release binary.
#[cfg(any(test, feature = "testing"))]
mod synth;
mod table;
mod table11;
mod timeline;

pub use crate::campaign::{
    campaign_summary_html, campaign_summary_markdown, CampaignView, ColumnSet,
    KERNEL_TAG as CAMPAIGN_KERNEL_TAG,
};
pub use crate::load::{read_result, InputBudget};
pub use crate::noise::summary as noise_summary;
pub use crate::plot::{HEIGHT as PLOT_HEIGHT, WIDTH as PLOT_WIDTH};
pub use crate::runs::{compare_table, groups_table, import_text, list_table, runs_csv, show_text};
#[cfg(any(test, feature = "testing"))]
pub use crate::synth::{synth_run_result, synth_timeline_csv, write_synth_run_dir};
pub use crate::table::{Table, Worst};

use rtshield_safefs::temp_target;
use rtshield_safefs::{DirPolicy, SafeDir, SafeError};
use rtshield_vocab::InputError;
use std::path::{Path, PathBuf};

/// What to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    /// `latency.png`, `percentiles.png`, `timeline*.png`.
    Png,
    /// `latency.svg`, `percentiles.svg`.
    Svg,
    /// `report.html`.
    Html,
    /// `summary.md`.
    Md,
    /// `summary.csv`.
    Csv,
    /// `plot.gp` and its data files.
    Gnuplot,
}

impl Format {
    /// Every format, in the order their files are rendered (the default of `rtshield report`).
    pub const ALL: &'static [Format] = &[
        Format::Png,
        Format::Svg,
        Format::Html,
        Format::Md,
        Format::Csv,
        Format::Gnuplot,
    ];
}

/// What `rtshield report` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The RESULTs: run directories or result files (rtshield's, cyclictest's, systress text, the torture article's log), at least one.
    pub inputs: Vec<PathBuf>,
    /// Labels of the first inputs, in order (`--name`); the others are labelled from their paths.
    pub names: Vec<String>,
    /// The output directory (`-o`): created, or an earlier report's directory to replace.
    pub out_dir: PathBuf,
    /// The outputs to write (`--format`).
    pub formats: Vec<Format>,
    /// The title of the pictures, the page and the summary.
    pub title: String,
    /// Ownership/mode policy for an existing output directory
    /// (`--force-unsafe-dir` → [`DirPolicy::AllowUnsafe`]).
    pub policy: DirPolicy,
    /// End of the latency axis in µs (`--x-max`); default: a little past
    /// the largest latency inside the histograms.
    pub x_max_us: Option<f64>,
}

/// What [`generate`] did.
#[derive(Debug)]
pub struct Outcome {
    /// File names written into the output directory, sorted (besides
    /// the [`MANIFEST`]).
    pub files: Vec<String>,
    /// Files of an earlier report in the directory that this one does not
    /// write (e.g. the data file of a curve no longer compared): removed.
    pub removed: Vec<String>,
    /// The summary table (also printed by the command).
    pub table: table::Table,
    /// Curves drawn: one per measuring thread of every input.
    pub curves: usize,
}

/// Read the inputs and write the report.
pub fn generate(opts: &Options) -> anyhow::Result<Outcome> {
    // Refuse an output directory holding other files before any work.
    check_out_dir(&opts.out_dir, opts.policy)?;
    let runs = load::load_all(&opts.inputs, &opts.names)?;
    generate_runs(runs, opts)
}

/// [`generate`] over runs already in memory, as `(label, where it came
/// from, results)` (`runs report`, from the store): nothing is written to a temporary
/// file and read back, so nobody can swap what is reported.
/// `opts.inputs` and `opts.names` are not used.
pub fn generate_from(
    runs: Vec<(String, String, rtshield_results::RunResult)>,
    opts: &Options,
) -> anyhow::Result<Outcome> {
    check_out_dir(&opts.out_dir, opts.policy)?;
    let runs = load::from_memory(runs)?;
    generate_runs(runs, opts)
}

fn generate_runs(runs: Vec<load::Run>, opts: &Options) -> anyhow::Result<Outcome> {
    let files = render(&runs, &opts.formats, &opts.title, opts.x_max_us)?;
    let series = series::build(&runs);
    let table = table::build(&runs, &series);
    let w = write_report(&opts.out_dir, opts.policy, &files)?;
    Ok(Outcome {
        files: w.files,
        removed: w.removed,
        table,
        curves: series.len(),
    })
}

/// Render every requested output in memory: (file name, bytes).
pub fn render(
    runs: &[load::Run],
    formats: &[Format],
    title: &str,
    x_max: Option<f64>,
) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let want = |f: Format| formats.contains(&f);
    let series = series::build(runs);
    let table = table::build(runs, &series);
    let timelines = if want(Format::Png) || want(Format::Html) {
        timeline_pngs(runs, title)?
    } else {
        Vec::new()
    };
    let inputs = output::Rendered {
        runs,
        series: &series,
        table: &table,
        title,
        x_max,
        timelines: &timelines,
    };
    let mut out = Vec::new();
    for f in Format::ALL.iter().filter(|f| want(**f)) {
        out.extend(output::renderer(*f).files(&inputs)?);
    }
    out.extend(noise_files(runs, formats, title)?);
    Ok(out)
}

/// The noise runs' own outputs (`rtshield noise` results): `noise.txt`
/// (per-CPU table, details, top offenders with fixes, histogram text) and
/// the cause breakdown picture (`noise-causes.png`/`.svg` with those
/// formats). Nothing when no input is a noise run.
fn noise_files(
    runs: &[load::Run],
    formats: &[Format],
    title: &str,
) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    if !plot::has_noise(runs) {
        return Ok(out);
    }
    let mut text = String::new();
    for r in runs.iter().filter(|r| r.result.noise.is_some()) {
        text.push_str(&format!(
            "== {} ({})\n",
            rtshield_text::terminal::value(&r.label),
            rtshield_text::terminal::value(&r.path.display().to_string())
        ));
        text.push_str(&noise::summary(&r.result, 10, true));
        text.push('\n');
    }
    out.push(("noise.txt".to_string(), text.into_bytes()));
    // The report's title is about latency by default: the picture says
    // what it shows and whose runs.
    let _ = title;
    let labels: Vec<&str> = runs
        .iter()
        .filter(|r| r.result.noise.is_some())
        .map(|r| r.label.as_str())
        .collect();
    let pic_title = format!("Noise by cause — {}", labels.join(", "));
    if formats.contains(&Format::Png) {
        out.push((
            "noise-causes.png".to_string(),
            plot::noise_causes_png(runs, &pic_title)?,
        ));
    }
    if formats.contains(&Format::Svg) {
        out.push((
            "noise-causes.svg".to_string(),
            plot::noise_causes_svg(runs, &pic_title)?.into_bytes(),
        ));
    }
    Ok(out)
}

/// The timeline pictures: `timeline.png` for one run, `timeline-LABEL.png`
/// for several; one per run with a timeline, rendered in parallel, kept in
/// input order.
fn timeline_pngs(runs: &[load::Run], title: &str) -> anyhow::Result<Vec<output::TimelinePng>> {
    let with_tl: Vec<&load::Run> = runs
        .iter()
        .filter(|r| r.timeline.as_ref().is_some_and(|t| !t.is_empty()))
        .collect();
    let pngs = map_in_parallel(&with_tl, "a plotting thread panicked", |r| {
        let tl = r.timeline.as_ref().expect("filtered above");
        plot::timeline_png(tl, &format!("Per-interval maximum — {}", r.label))
    });
    let mut out = Vec::new();
    let mut slugs = series::Slugs::default();
    for (r, png) in with_tl.iter().zip(pngs) {
        let file = if with_tl.len() == 1 {
            "timeline.png".to_string()
        } else {
            format!("timeline-{}.png", slugs.unique(&r.label))
        };
        out.push(output::TimelinePng {
            file,
            caption: format!("{} — {}", title, r.label),
            png: png?,
        });
    }
    Ok(out)
}

/// `f` of every item, each on a thread of its own, in the items' order (a
/// panic in one is re-raised with `what`): day-long timelines are the
/// bulk of a report's work, reading and drawing them in parallel.
fn map_in_parallel<T: Sync, R: Send>(
    items: &[T],
    what: &str,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let f = &f;
    std::thread::scope(|sc| {
        let handles: Vec<_> = items.iter().map(|x| sc.spawn(move || f(x))).collect();
        handles.into_iter().map(|h| h.join().expect(what)).collect()
    })
}

/// The list of files a report wrote, kept in its output directory: what
/// the next report into that directory may replace or remove. Nothing
/// else is ever deleted, and only names [`is_report_file`] accepts count.
pub const MANIFEST: &str = ".rtshield-report";

/// Largest manifest read (a report lists a few dozen names).
const MANIFEST_LIMIT: u64 = 1 << 20;

/// Whether `n` is a name `rtshield report` itself writes: the fixed
/// outputs, or a per-curve `latency-SLUG.dat` / `timeline-SLUG.{dat,png}`
/// where SLUG is what [`series::slugify`] produces. A manifest naming
/// anything else (planted or edited) is not trusted for that name.
pub fn is_report_file(n: &str) -> bool {
    const FIXED: &[&str] = &[
        "latency.png",
        "latency.svg",
        "percentiles.png",
        "percentiles.svg",
        "report.html",
        "summary.md",
        "summary.csv",
        "plot.gp",
        "timeline.gp",
        "timeline.png",
        "noise.txt",
        "noise-causes.png",
        "noise-causes.svg",
    ];
    if FIXED.contains(&n) {
        return true;
    }
    let slug_ok = |s: &str| {
        !s.is_empty()
            && !s.starts_with('.')
            && s.len() <= 200
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    let per_curve = |prefix: &str, exts: &[&str]| {
        n.strip_prefix(prefix).is_some_and(|rest| {
            exts.iter()
                .any(|e| rest.strip_suffix(e).is_some_and(slug_ok))
        })
    };
    per_curve("latency-", &[".dat"]) || per_curve("timeline-", &[".dat", ".png"])
}

/// The report files a previous report listed in `dir`'s manifest (a
/// regular file, never read through a symlink).
fn read_manifest(dir: &SafeDir) -> Vec<String> {
    if !dir.entry(MANIFEST).is_some_and(|e| e.is_file) {
        return Vec::new();
    }
    dir.read(MANIFEST, MANIFEST_LIMIT)
        .map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .filter(|l| !l.starts_with('#'))
                .filter(|l| is_report_file(l))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn manifest_text(names: &[String]) -> String {
    let mut t = String::from(
        "# Files written by `rtshield report`: the next report into this\n\
         # directory replaces them (and removes those it no longer writes).\n",
    );
    for n in names {
        t.push_str(n);
        t.push('\n');
    }
    t
}

/// An opened output directory that passed [`check_out_dir`].
struct OutDir {
    dir: SafeDir,
    /// The earlier report's files (from its manifest).
    old: Vec<String>,
    /// Leftover temporary files of an interrupted earlier report.
    temps: Vec<String>,
}

fn refusal(e: SafeError) -> anyhow::Error {
    if e.is_refusal() {
        InputError::new(e.to_string()).into()
    } else {
        anyhow::Error::new(e)
    }
}

/// Open `dir` (never through a symlink) and check that it may receive a
/// report: it holds nothing but regular files that are report files
/// listed in the manifest of an earlier report (and that manifest, and
/// leftover temporary files of such files). `Ok(None)`: it does not
/// exist. Ownership and mode are checked against `policy`.
fn open_out_dir(dir: &Path, policy: DirPolicy) -> anyhow::Result<Option<OutDir>> {
    let shown = dir.display();
    // Through the path layer: a link anywhere in DIR (also hidden by a
    // trailing `/` or `/.`) or a `..` is refused, never followed.
    let d = match SafeDir::open(dir, policy) {
        Ok(d) => d,
        Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => return Ok(None),
        Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotADirectory) => {
            return Err(InputError::new(format!("{shown}: exists and is not a directory")).into())
        }
        Err(e) => return Err(refusal(e.for_option("-o"))),
    };
    let old = read_manifest(&d);
    let mut foreign = Vec::new();
    let mut temps = Vec::new();
    for name in d.list().map_err(refusal)? {
        let e = d.entry(&name);
        let is_file = e.is_some_and(|e| e.is_file);
        if is_file && (name == MANIFEST || old.contains(&name)) {
            continue;
        }
        if is_file && temp_target(&name).is_some_and(|t| t == MANIFEST || is_report_file(t)) {
            temps.push(name);
            continue;
        }
        let mark = if e.is_some_and(|e| e.is_dir) {
            "/"
        } else if e.is_some_and(|e| e.is_symlink) {
            "@"
        } else {
            ""
        };
        foreign.push(format!("{name}{mark}"));
    }
    if !foreign.is_empty() {
        foreign.sort();
        let more = foreign.len().saturating_sub(5);
        let mut list = foreign.into_iter().take(5).collect::<Vec<_>>().join(", ");
        if more > 0 {
            list.push_str(&format!(" and {more} more"));
        }
        return Err(InputError::new(format!(
            "{shown}: holds files `rtshield report` did not write ({list}); \
             a report replaces its whole directory, so give a new or empty -o DIR \
             (or the directory of an earlier report)"
        ))
        .into());
    }
    Ok(Some(OutDir { dir: d, old, temps }))
}

/// Check that `dir` may receive a report (see `generate`); returns the
/// earlier report's file names. Refusals are [`InputError`]s.
pub fn check_out_dir(dir: &Path, policy: DirPolicy) -> anyhow::Result<Vec<String>> {
    Ok(open_out_dir(dir, policy)?
        .map(|o| o.old)
        .unwrap_or_default())
}

/// What [`write_report`] did: files written and stale files removed.
struct Written {
    files: Vec<String>,
    removed: Vec<String>,
}

/// Write `files` (all rendered in memory already) into `dir`.
///
/// Every operation is relative to one directory descriptor, opened once
/// without following a symlink: swapping the path for a link afterwards
/// cannot redirect a write or a removal. A missing `dir` is created now
/// (with `mkdir`, so it is new and ours). Each file is written atomically
/// ([`SafeDir::write`]: unpredictable temporary name, `O_EXCL|O_NOFOLLOW`,
/// fsync, `renameat`). The manifest lists old and new files until the
/// earlier report's files this one does not write are removed (`unlinkat`,
/// never following a link, only report file names), so an interruption
/// never leaves a file the next report would not recognise.
fn write_report(
    dir: &Path,
    policy: DirPolicy,
    files: &[(String, Vec<u8>)],
) -> anyhow::Result<Written> {
    let mut names: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    names.sort();
    // Checked again now that everything is rendered: the directory may
    // have changed since `generate` started.
    let out = match open_out_dir(dir, policy)? {
        Some(o) => o,
        None => {
            // Missing parents are created through the path layer.
            match SafeDir::create_new_with_parents(dir, 0o755, policy) {
                Ok(d) => OutDir {
                    dir: d,
                    old: Vec::new(),
                    temps: Vec::new(),
                },
                // Created meanwhile by someone else: check it like any
                // existing directory.
                Err(e) if e.io_kind() == Some(std::io::ErrorKind::AlreadyExists) => {
                    open_out_dir(dir, policy)?
                        .ok_or_else(|| anyhow::anyhow!("{}: vanished", dir.display()))?
                }
                Err(e) => return Err(refusal(e)),
            }
        }
    };
    let d = &out.dir;
    let mut union = names.clone();
    union.extend(out.old.iter().filter(|o| !names.contains(o)).cloned());
    d.write(MANIFEST, manifest_text(&union).as_bytes())
        .map_err(refusal)?;
    for (name, bytes) in files {
        d.write(name, bytes).map_err(refusal)?;
    }
    let mut removed = Vec::new();
    for stale in out.old.iter().filter(|o| !names.contains(o)) {
        // Only a regular file: never a directory, and a symlink is not
        // followed by unlinkat anyway.
        if d.entry(stale).is_some_and(|e| e.is_file) {
            d.remove_file(stale).map_err(refusal)?;
            removed.push(stale.clone());
        }
    }
    for t in &out.temps {
        d.remove_file(t).map_err(refusal)?;
    }
    d.write(MANIFEST, manifest_text(&names).as_bytes())
        .map_err(refusal)?;
    Ok(Written {
        files: names,
        removed,
    })
}
