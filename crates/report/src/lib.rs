//! rtshield-report: plots and tables from result files (`rtshield report`).
//!
//! Flow: [`load`] reads and checks every input (rtshield results, cyclictest
//! JSON or histogram text, `timeline.csv`), [`series`] turns each measuring
//! thread into one curve, then every output is rendered in memory and
//! written into a temporary directory that replaces the output files only
//! once everything succeeded — a bad input never leaves half a report.

pub mod gnuplot;
pub mod html;
pub mod load;
pub mod plot;
pub mod series;
#[doc(hidden)]
pub mod synth;
pub mod table;
pub mod timeline;

use anyhow::Context;
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
    /// File names written into the output directory, sorted.
    pub files: Vec<String>,
    /// The summary table (also printed by the command).
    pub table: table::Table,
    pub curves: usize,
}

/// Read the inputs and write the report.
pub fn generate(opts: &Options) -> anyhow::Result<Outcome> {
    let runs = load::load_all(&opts.inputs, &opts.names)?;
    let files = render(&runs, &opts.formats, &opts.title)?;
    let series = series::build(&runs);
    let table = table::build(&runs, &series);
    let names = write_atomically(&opts.out_dir, &files)?;
    Ok(Outcome {
        files: names,
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

/// Write `files` into a fresh temporary directory beside `dir`, then move
/// them into place: rename the whole directory when `dir` does not exist,
/// else rename file by file over the old ones (each rename is atomic).
/// Any failure before the moves leaves `dir` untouched.
fn write_atomically(dir: &Path, files: &[(String, Vec<u8>)]) -> anyhow::Result<Vec<String>> {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!("{}: exists and is not a directory", dir.display());
    }
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
    for (name, bytes) in files {
        let p = tmp.path().join(name);
        std::fs::write(&p, bytes).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if !dir.exists() {
        let t = tmp.keep();
        std::fs::rename(&t, dir)
            .with_context(|| format!("cannot move the report into {}", dir.display()))?;
    } else {
        for (name, _) in files {
            let to = dir.join(name);
            std::fs::rename(tmp.path().join(name), &to)
                .with_context(|| format!("cannot replace {}", to.display()))?;
        }
    }
    let mut names: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    names.sort();
    Ok(names)
}
