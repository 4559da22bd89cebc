//! Reading the report's inputs: a run directory, an rtshield
//! `results.json`, cyclictest `--json` output or cyclictest `-h` text.
//! Everything is read and checked before a single output byte is written.

use crate::timeline::Timeline;
use rtshield_results::InputFormat as Format;
use rtshield_results::RunResult;
use rtshield_text::excerpt::{withhold, Quote};
use rtshield_vocab::InputError;
use std::path::{Path, PathBuf};

/// One input of the report.
#[derive(Debug, Clone)]
pub struct Run {
    /// Unique label used in legends and table headers.
    pub label: String,
    /// The file actually read.
    pub path: PathBuf,
    pub result: RunResult,
    /// Per-interval statistics (`timeline.csv` beside the results).
    pub timeline: Option<Timeline>,
}

/// What the inputs of one report (or one `runs import`) may still read,
/// in bytes, over all of them: [`rtshield_limits::INPUT_TOTAL_MAX_BYTES`].
/// Each file takes its size before it is read (inputs are read in
/// parallel: the sum, not each file, is what memory holds), and what it
/// turned out to hold beyond that after (a file that grew meanwhile).
#[derive(Debug, Default)]
pub struct InputBudget {
    used: std::sync::atomic::AtomicU64,
}

impl InputBudget {
    /// A budget of [`rtshield_limits::INPUT_TOTAL_MAX_BYTES`].
    pub fn new() -> InputBudget {
        InputBudget::default()
    }

    /// Take `n` bytes for `file`, or refuse (exit 2) when the inputs
    /// together would pass the bound.
    fn take(&self, n: u64, file: &Path) -> Result<(), InputError> {
        use std::sync::atomic::Ordering;
        let max = rtshield_limits::INPUT_TOTAL_MAX_BYTES;
        let before = self.used.fetch_add(n, Ordering::Relaxed);
        if before.saturating_add(n) > max {
            return Err(InputError::new(format!(
                "{}: the inputs read so far and this file hold more than {} MiB together, \
                 the most one report or import reads (result files and their timeline.csv; \
                 docs/ranges.md): give fewer runs at a time",
                file.display(),
                max >> 20
            )));
        }
        Ok(())
    }

    /// The size `file` has now, taken (0 when it cannot be seen: the
    /// read that follows says why).
    fn take_file(&self, file: &Path) -> Result<u64, InputError> {
        let n = std::fs::symlink_metadata(file).map_or(0, |m| m.len());
        self.take(n, file)?;
        Ok(n)
    }

    /// After reading `got` bytes of a file that was `took` bytes.
    fn settle(&self, took: u64, got: usize, file: &Path) -> Result<(), InputError> {
        let got = got as u64;
        if got > took {
            self.take(got - took, file)?;
        }
        Ok(())
    }
}

/// The files reading input `p` may read: its results file and the
/// `timeline.csv` beside it.
fn input_files(p: &Path) -> Vec<PathBuf> {
    let dir = if p.is_dir() {
        p.to_path_buf()
    } else {
        p.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let file = if p.is_dir() {
        p.join("results.json")
    } else {
        p.to_path_buf()
    };
    vec![file, dir.join("timeline.csv")]
}

/// Load every input; `names` overrides the labels of the first inputs.
pub(crate) fn load_all(inputs: &[PathBuf], names: &[String]) -> anyhow::Result<Vec<Run>> {
    if inputs.is_empty() {
        return Err(InputError::new("no RESULT given").into());
    }
    if names.len() > inputs.len() {
        return Err(InputError::new(format!(
            "{} --name labels for {} results",
            names.len(),
            inputs.len()
        ))
        .into());
    }
    let most = rtshield_limits::REPORT_MAX_CURVES;
    let too_many = |n: usize, what: &str| {
        InputError::new(format!(
            "{n} {what}: a report shows at most {most} curves (one per measuring thread; docs/ranges.md); report fewer runs at a time"
        ))
    };
    // Every input is at least one curve: refused before anything is read.
    if inputs.len() > most {
        return Err(too_many(inputs.len(), "results given").into());
    }
    // Day-long timelines are the bulk of the work: read inputs in parallel,
    // keep their order, report the first failing input in argument order.
    // What the files hold now, summed before any is read: a report of
    // too much is refused at once (and the reads stay within the bound
    // even if the files grow meanwhile).
    let budget = InputBudget::new();
    for p in inputs {
        for f in input_files(p) {
            budget.take_file(&f)?;
        }
    }
    let budget = InputBudget::new();
    let loaded =
        crate::map_in_parallel(inputs, "a reader thread panicked", |p| load_one(p, &budget));
    let mut runs = Vec::new();
    for (i, r) in loaded.into_iter().enumerate() {
        let mut run = r?;
        if let Some(n) = names.get(i) {
            run.label = n.clone();
        }
        runs.push(run);
    }
    let curves: usize = runs.iter().map(|r| r.result.threads.len()).sum();
    if curves > most {
        return Err(too_many(curves, "measuring threads in the results given").into());
    }
    unique_labels(&mut runs);
    Ok(runs)
}

/// Read one RESULT as `rtshield report` does (a run directory, an
/// rtshield `results.json`, cyclictest `--json` or `-h` output, a systress
/// text file or the torture article's log): the file actually read and
/// the run, checked (`runs import` stores what a report would show).
/// `budget` is shared by every file of one import.
pub fn read_result(p: &Path, budget: &InputBudget) -> anyhow::Result<(PathBuf, RunResult)> {
    let run = load_one(p, budget)?;
    Ok((run.path, run.result))
}

/// Runs already in memory (from the store), as `(label, where it came
/// from, results)`.
pub(crate) fn from_memory(runs: Vec<(String, String, RunResult)>) -> anyhow::Result<Vec<Run>> {
    if runs.is_empty() {
        return Err(InputError::new("no run given").into());
    }
    let mut out = Vec::new();
    for (label, source, mut result) in runs {
        if result.threads.is_empty() {
            return Err(
                InputError::new(format!("{label}: the run has no measuring thread")).into(),
            );
        }
        result.label = Some(label.clone());
        out.push(Run {
            label,
            path: PathBuf::from(source),
            result,
            timeline: None,
        });
    }
    unique_labels(&mut out);
    Ok(out)
}

/// Read one RESULT (directory or file).
pub(crate) fn load_one(p: &Path, budget: &InputBudget) -> anyhow::Result<Run> {
    let shown = p.display().to_string();
    let meta = std::fs::metadata(p)
        .map_err(|e| InputError::new(format!("{shown}: cannot read result: {e}")))?;
    let (file, dir) = if meta.is_dir() {
        let f = p.join("results.json");
        if !f.is_file() {
            return Err(InputError::new(format!(
                "{shown}: is a directory without results.json (give the results directory of `rtshield measure`/`run`, or a result file)"
            ))
            .into());
        }
        (f, Some(p.to_path_buf()))
    } else {
        (p.to_path_buf(), p.parent().map(Path::to_path_buf))
    };
    let fname = file.display().to_string();
    // A regular file only, bounded: a FIFO or device is refused without
    // blocking; and all the inputs together too (F20).
    let took = budget.take_file(&file)?;
    let (bytes, public) = rtshield_safefs::read_input_public(&file, rtshield_safefs::INPUT_LIMIT)
        .map_err(|e| InputError::new(format!("cannot read: {e}")))?;
    budget.settle(took, bytes.len(), &file)?;
    let text =
        rtshield_text::decode_utf8(bytes).map_err(|e| InputError::at(&fname, e.line, e.col, e))?;
    let format = rtshield_results::sniff(&text);
    let mut log_timeline = None;
    let parsed = (|| -> anyhow::Result<RunResult> {
        Ok(match format {
            // One reader for results.json: the one `measure` writes with.
            Format::Rtshield => rtshield_results::parse_json(&text, &file)?,
            Format::CyclictestJson => rtshield_results::read_cyclictest_json(&text, &fname)?,
            Format::CyclictestHist => rtshield_results::read_cyclictest_hist(&text, &fname)?,
            Format::SystressTxt => rtshield_results::read_systress_txt(&text, &fname)?,
            Format::FluctuationLog => {
                let log = rtshield_results::read_fluctuation_log(&text, &fname)?;
                log_timeline = Some(Timeline::from_fluctuation_log(&log));
                log.result
            }
        })
    })();
    // The readers quote what they found; a file not every user may read
    // (a link planted to a root-only file) gives its position only
    // (docs/security.md, "errors quote only world-readable files").
    let mut result = parsed.map_err(|e| -> anyhow::Error {
        if public {
            e
        } else {
            InputError::new(withhold(&e.to_string(), &fname, Quote::Withheld)).into()
        }
    })?;
    if result.threads.is_empty() {
        return Err(InputError::new(format!("{fname}: the run has no measuring thread")).into());
    }
    // Every reader checks its numbers; this holds for any format added
    // later too: nothing out of range reaches a renderer or the store.
    rtshield_results::check_result(&result)
        .map_err(|m| InputError::new(format!("{fname}: {m} (docs/ranges.md)")))?;
    // Only rtshield run directories carry a timeline; a cyclictest file
    // lying in some directory must not pick up a stranger's timeline.csv.
    let timeline = match (&dir, format) {
        (Some(d), Format::Rtshield) => {
            let tp = d.join("timeline.csv");
            match std::fs::metadata(&tp) {
                // A run directory with a manifest: only the timeline its
                // run wrote (round 5 (A), F17).
                Ok(m) if m.is_file() && !written_by_the_run(d, &tp, m.len()) => None,
                Ok(m) if m.is_file() => {
                    budget.take(m.len(), &tp)?;
                    let (tl, got) = Timeline::read(&tp)?;
                    budget.settle(m.len(), got, &tp)?;
                    Some(tl)
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                // A FIFO, directory or device (or an unreadable entry) is
                // not read, and the report says so rather than silently
                // showing no timeline.
                other => {
                    let why = match other {
                        Ok(m) => format!("not a regular file ({})", file_kind(&m)),
                        Err(e) => e.to_string(),
                    };
                    rtshield_text::errln!(
                        "rtshield: warning: {}: {why}; the run's timeline is left out of the report",
                        tp.display()
                    );
                    None
                }
            }
        }
        _ => log_timeline,
    };
    let label = result
        .label
        .clone()
        .filter(|l| !l.trim().is_empty())
        .unwrap_or_else(|| default_label(p, meta.is_dir()));
    result.label = Some(label.clone());
    Ok(Run {
        label,
        path: file,
        result,
        timeline,
    })
}

/// What a file that is not a regular one is, in words.
fn file_kind(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "another kind of file"
    }
}

/// Directory name for a run directory, file stem otherwise; `results`
/// (the usual file name) falls back to the parent directory's name.
fn default_label(p: &Path, is_dir: bool) -> String {
    let name = |q: &Path| q.file_name().map(|n| n.to_string_lossy().into_owned());
    let stem = |q: &Path| q.file_stem().map(|n| n.to_string_lossy().into_owned());
    let canon = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if is_dir {
        return name(&canon).unwrap_or_else(|| "run".into());
    }
    match stem(&canon) {
        Some(s) if s == "results" => canon
            .parent()
            .and_then(name)
            .unwrap_or_else(|| "results".into()),
        Some(s) => s,
        None => "run".into(),
    }
}

/// Same label twice (two `results.json` from directories called alike):
/// suffix `-2`, `-3`… so legends and table columns stay distinct.
fn unique_labels(runs: &mut [Run]) {
    let mut seen: Vec<String> = Vec::new();
    for r in runs.iter_mut() {
        let mut l = r.label.clone();
        let mut k = 2;
        while seen.contains(&l) {
            l = format!("{}-{k}", r.label);
            k += 1;
        }
        seen.push(l.clone());
        r.label = l;
    }
}

/// Whether the file `path` of the run directory `dir` is one its run
/// wrote, as it wrote it: always, without a manifest (an older rtshield's
/// directory); else it must be listed with its size. A file that is not
/// is left out with a warning (round 5 (A), F17).
fn written_by_the_run(dir: &Path, path: &Path, size: u64) -> bool {
    let Some(listed) = rtshield_results::run_files::listed(dir) else {
        return true;
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match rtshield_results::run_files::check_listed(&listed, &name, size) {
        Ok(()) => true,
        Err(why) => {
            rtshield_text::errln!(
                "rtshield: warning: {}: {why}; left out of the report",
                path.display()
            );
            false
        }
    }
}
