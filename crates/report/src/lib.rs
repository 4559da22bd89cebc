//! rtshield-report: plots and tables from result files (`rtshield report`).
//!
//! Flow: [`load`] reads and checks every input (rtshield results, cyclictest
//! JSON or histogram text, `timeline.csv`), [`series`] turns each measuring
//! thread into one curve, then every output is rendered in memory and
//! written into a temporary directory that replaces the output files only
//! once everything succeeded — a bad input never leaves half a report. The
//! output directory holds one report: a rewrite leaves only the new
//! report's files, and a directory with files rtshield did not write is
//! refused (see [`check_out_dir`]).

pub mod gnuplot;
pub mod html;
pub mod load;
pub mod plot;
pub mod series;
/// Fixtures for tests and examples: never in the release binary.
#[cfg(any(test, feature = "testing"))]
pub mod synth;
pub mod table;
pub mod timeline;

use anyhow::Context;
use rtshield_sys::InputError;
use std::path::{Path, PathBuf};

/// What to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    /// `latency.png`, `timeline*.png`.
    Png,
    /// `latency.svg`.
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
    pub const ALL: &'static [Format] = &[
        Format::Png,
        Format::Svg,
        Format::Html,
        Format::Md,
        Format::Csv,
        Format::Gnuplot,
    ];
}

#[derive(Debug, Clone)]
pub struct Options {
    pub inputs: Vec<PathBuf>,
    pub names: Vec<String>,
    pub out_dir: PathBuf,
    pub formats: Vec<Format>,
    pub title: String,
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
    pub curves: usize,
}

/// Read the inputs and write the report.
pub fn generate(opts: &Options) -> anyhow::Result<Outcome> {
    // Refuse an output directory holding other files before any work.
    check_out_dir(&opts.out_dir)?;
    let runs = load::load_all(&opts.inputs, &opts.names)?;
    let files = render(&runs, &opts.formats, &opts.title)?;
    let series = series::build(&runs);
    let table = table::build(&runs, &series);
    let w = write_atomically(&opts.out_dir, &files)?;
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
) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let want = |f: Format| formats.contains(&f);
    let series = series::build(runs);
    let table = table::build(runs, &series);
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    if want(Format::Png) {
        out.push(("latency.png".into(), plot::latency_png(&series, title)?));
    }
    if want(Format::Svg) {
        out.push((
            "latency.svg".into(),
            plot::latency_svg(&series, title)?.into_bytes(),
        ));
    }
    // Timelines: `timeline.png` for one run, `timeline-LABEL.png` for several.
    let with_tl: Vec<&load::Run> = runs
        .iter()
        .filter(|r| r.timeline.as_ref().is_some_and(|t| !t.is_empty()))
        .collect();
    let mut timelines = Vec::new();
    if want(Format::Png) || want(Format::Html) {
        // One picture per run, rendered in parallel, kept in input order.
        let pngs: Vec<anyhow::Result<Vec<u8>>> = std::thread::scope(|sc| {
            let handles: Vec<_> = with_tl
                .iter()
                .map(|r| {
                    let tl = r.timeline.as_ref().expect("filtered above");
                    let t = format!("Per-interval maximum — {}", r.label);
                    sc.spawn(move || plot::timeline_png(tl, &t))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a plotting thread panicked"))
                .collect()
        });
        for (r, png) in with_tl.iter().zip(pngs) {
            let name = if with_tl.len() == 1 {
                "timeline.png".to_string()
            } else {
                format!("timeline-{}.png", series::slugify(&r.label))
            };
            timelines.push((name, format!("{} — {}", title, r.label), png?));
        }
    }
    if want(Format::Png) {
        for (name, _, png) in &timelines {
            out.push((name.clone(), png.clone()));
        }
    }
    if want(Format::Html) {
        let pics: Vec<(String, Vec<u8>)> = timelines.into_iter().map(|(_, c, p)| (c, p)).collect();
        let page = html::render(&html::Inputs {
            title,
            runs,
            series: &series,
            table: &table,
            timelines: &pics,
        });
        out.push(("report.html".into(), page.into_bytes()));
    }
    if want(Format::Md) {
        out.push(("summary.md".into(), table.to_markdown(title).into_bytes()));
    }
    if want(Format::Csv) {
        out.push(("summary.csv".into(), table.to_csv().into_bytes()));
    }
    if want(Format::Gnuplot) {
        for (n, c) in gnuplot::files(runs, &series, title) {
            out.push((n, c.into_bytes()));
        }
    }
    Ok(out)
}

/// The list of files a report wrote, kept in its output directory: what
/// the next report into that directory may replace or remove. Nothing
/// else is ever deleted.
pub const MANIFEST: &str = ".rtshield-report";

fn valid_name(n: &str) -> bool {
    !n.is_empty() && n != "." && n != ".." && n != MANIFEST && !n.contains(['/', '\0'])
}

/// The files a previous report listed in `dir`'s manifest.
fn read_manifest(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(MANIFEST))
        .map(|t| {
            t.lines()
                .filter(|l| !l.starts_with('#'))
                .filter(|l| valid_name(l))
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

/// Check that `dir` may receive a report: it does not exist, or it holds
/// nothing but regular files listed in the manifest of an earlier report
/// (and that manifest). Returns the earlier report's file names.
pub fn check_out_dir(dir: &Path) -> anyhow::Result<Vec<String>> {
    let shown = dir.display();
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(InputError::new(format!("{shown}: cannot use as output: {e}")).into())
        }
    };
    if !meta.is_dir() {
        return Err(InputError::new(format!("{shown}: exists and is not a directory")).into());
    }
    let old = read_manifest(dir);
    let mut foreign = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for e in entries {
        let e = e.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let is_file = e.file_type().is_ok_and(|t| t.is_file());
        let ours = is_file && (name == MANIFEST || old.contains(&name));
        if !ours {
            let dir_mark = if e.file_type().is_ok_and(|t| t.is_dir()) {
                "/"
            } else {
                ""
            };
            foreign.push(format!("{name}{dir_mark}"));
        }
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
    Ok(old)
}

/// What [`write_atomically`] did: files written and stale files removed.
struct Written {
    files: Vec<String>,
    removed: Vec<String>,
}

/// Write `files` into a fresh temporary directory beside `dir`, then move
/// them into place. A new `dir` is the renamed temporary directory. An
/// existing `dir` (an earlier report, see [`check_out_dir`]) gets the new
/// files renamed over the old ones (each rename is atomic), then loses the
/// earlier report's files this one did not write (an older report with
/// more curves), so it holds exactly the new report. The manifest lists
/// old and new files until then, so an interruption never leaves a file
/// the next report would not recognise. Any failure before the moves
/// leaves `dir` untouched.
fn write_atomically(dir: &Path, files: &[(String, Vec<u8>)]) -> anyhow::Result<Written> {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let base = dir
        .file_name()
        .map_or("report".into(), |n| n.to_string_lossy().into_owned());
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{base}.tmp-"))
        .tempdir_in(&parent)
        .with_context(|| {
            format!(
                "cannot create a temporary directory in {}",
                parent.display()
            )
        })?;
    let mut names: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    names.sort();
    let put = |name: &str, bytes: &[u8]| -> anyhow::Result<()> {
        let p = tmp.path().join(name);
        std::fs::write(&p, bytes).with_context(|| format!("cannot write {}", p.display()))
    };
    for (name, bytes) in files {
        put(name, bytes)?;
    }
    // Checked again now that everything is rendered: the directory may
    // have changed since `generate` started.
    let old = check_out_dir(dir)?;
    let replace = |name: &str| -> anyhow::Result<()> {
        let to = dir.join(name);
        std::fs::rename(tmp.path().join(name), &to)
            .with_context(|| format!("cannot replace {}", to.display()))
    };
    let mut removed = Vec::new();
    if !dir.exists() {
        put(MANIFEST, manifest_text(&names).as_bytes())?;
        let t = tmp.keep();
        if let Err(e) = std::fs::rename(&t, dir) {
            let _ = std::fs::remove_dir_all(&t);
            return Err(e)
                .with_context(|| format!("cannot move the report into {}", dir.display()));
        }
    } else {
        let mut union = names.clone();
        union.extend(old.iter().filter(|o| !names.contains(o)).cloned());
        put(MANIFEST, manifest_text(&union).as_bytes())?;
        replace(MANIFEST)?;
        for name in &names {
            replace(name)?;
        }
        for stale in old.iter().filter(|o| !names.contains(o)) {
            let p = dir.join(stale);
            // Only a regular file (never a directory or what a symlink
            // points to), and only one our manifest listed.
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
                std::fs::remove_file(&p)
                    .with_context(|| format!("cannot remove the stale {}", p.display()))?;
                removed.push(stale.clone());
            }
        }
        put(MANIFEST, manifest_text(&names).as_bytes())?;
        replace(MANIFEST)?;
    }
    Ok(Written {
        files: names,
        removed,
    })
}
