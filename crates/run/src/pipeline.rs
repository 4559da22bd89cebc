//! The one "measure and write" pipeline of `rtshield measure` and
//! `rtshield run`: open the output directory safely, run the engine, turn
//! the measurement into a [`RunResult`], write the selected formats, and
//! survive a full disk.
//!
//! A failed write never stops a measurement: the error is printed at once
//! (on stderr, even under `-q`) and recorded. Final result files that could
//! not be written are retried when the run ends, then written to a fallback
//! directory: a fresh private one (`rtshield-fallback-<16 hex digits>`,
//! mode 0700, made with `mkdir`) under `$TMPDIR` if it passes the path
//! rules, else `/tmp`, else `/dev/shm`, named in the error. The command
//! then exits with [`EXIT_FILES_MISSING`].

use rtshield_measure::{MeasureSpec, Measurement, Observer, ResultContext};
use rtshield_results::Failure;
use rtshield_results::{ExportManager, RunResult};
use rtshield_safefs::{output_dir, DirPolicy, SafeDir, SafeError};
use rtshield_vocab::InputError;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

/// Exit status: measured, but some result files are not in the requested
/// directory (see the messages on stderr for where they went).
pub const EXIT_FILES_MISSING: i32 = 4;

/// Open (or create) the output directory: `out` if given, else a fresh
/// `rtshield-results/STAMP[-N]`. A refusal (unsafe directory, bad name) is
/// an input error (exit 2).
pub(crate) fn open_output(
    out: Option<&Path>,
    stamp: &str,
    policy: DirPolicy,
) -> anyhow::Result<SafeDir> {
    let dir =
        output_dir(out, Path::new("rtshield-results"), stamp, policy).map_err(|e| match out {
            Some(_) => refusal(e.for_option("--out")),
            None => refusal(e),
        })?;
    // A directory used again: the earlier run's files go, what else is
    // there is not taken as this run's (round 5 (A), F17).
    let left = rtshield_results::run_files::begin(&dir);
    if !left.is_empty() {
        rtshield_text::errln!(
            "rtshield: warning: {} already holds {} that this run did not write (left as they \
             are; readers of the directory take only the files of {})",
            dir.path().display(),
            left.join(", "),
            rtshield_results::run_files::RUN_MANIFEST
        );
    }
    Ok(dir)
}

/// Write the run directory's manifest, last (round 5 (A), F17); a failure
/// is a warning (the results are written; readers then read the directory
/// as an older rtshield's).
pub(crate) fn write_manifest(dir: &SafeDir) {
    if let Err(e) = rtshield_results::run_files::finish(dir) {
        rtshield_text::errln!("rtshield: warning: {e}");
    }
}

/// A [`SafeError`] as an error: refusals are input errors (exit 2).
pub fn refusal(e: SafeError) -> anyhow::Error {
    if e.is_refusal() {
        InputError::new(e.to_string()).into()
    } else {
        anyhow::Error::new(e)
    }
}

/// Run the engine: the measuring step of the pipeline, shared so both
/// commands take the same path.
/// `root` is the caller's (`--sysroot`): the engine reads the RT limits
/// through it. With `spec.trace` set, kernel tracing runs around the
/// engine ([`crate::tracing`]) and the measurement carries its results.
pub(crate) fn measure(
    root: &rtshield_sys::Root,
    spec: &MeasureSpec,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
) -> anyhow::Result<Measurement> {
    match &spec.trace {
        Some(t) => crate::tracing::measure_traced(root, spec, t, stop, obs),
        None => rtshield_measure::run_at(root, spec, stop, obs),
    }
}

/// A final file still to be written.
struct Pending {
    dir_path: PathBuf,
    dir: Option<Rc<SafeDir>>,
    failure: Failure,
}

/// Where a file that could not be written in its directory ended up.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    /// Where it should have been.
    pub wanted: PathBuf,
    /// Where it was written instead, if anywhere.
    pub fallback: Option<PathBuf>,
}

/// Writes result files and keeps account of what failed.
pub(crate) struct ResultWriter {
    pending: Vec<Pending>,
    /// Every write error seen (checkpoints included), in order.
    pub errors: Vec<String>,
    /// Where the fallback directory may be made (tests point it
    /// elsewhere); `None`: [`rtshield_safefs::temp_parents`].
    fallback_parents: Option<Vec<PathBuf>>,
}

impl Default for ResultWriter {
    fn default() -> Self {
        ResultWriter::new()
    }
}

impl ResultWriter {
    pub(crate) fn new() -> ResultWriter {
        ResultWriter {
            pending: Vec::new(),
            errors: Vec::new(),
            fallback_parents: None,
        }
    }

    /// Use `parents` (in order) for the fallback directory (tests point it
    /// at a temporary directory).
    #[cfg(test)]
    pub(crate) fn with_fallback_parents(mut self, parents: Vec<PathBuf>) -> ResultWriter {
        self.fallback_parents = Some(parents);
        self
    }

    /// Print and record an error that loses no result file (e.g. the
    /// timeline could not be created).
    pub(crate) fn note(&mut self, msg: String) {
        self.report("", msg);
    }

    fn report(&mut self, what: &str, msg: String) {
        // Printed even under -q: a file that is not written must be seen.
        rtshield_text::errln!("rtshield: {what}{msg}");
        self.errors.push(format!("{what}{msg}"));
    }

    /// Write a checkpoint: failures are printed and recorded, not retried
    /// (the final results supersede it).
    pub(crate) fn checkpoint(&mut self, ex: &ExportManager, res: &RunResult, dir: &SafeDir) {
        for f in ex.write(res, dir) {
            self.report("checkpoint: ", f.error);
        }
    }

    /// Write the final files of `res` into `dir` (None: the directory could
    /// not be opened, at `dir_path`). Failures are printed, recorded and
    /// kept for [`ResultWriter::finish`].
    pub(crate) fn write(
        &mut self,
        ex: &ExportManager,
        res: &RunResult,
        dir: Option<Rc<SafeDir>>,
        dir_path: &Path,
    ) {
        self.write_with(ex, res, dir, dir_path, |d, name, bytes| {
            d.write(name, bytes).map_err(|e| e.to_string())
        })
    }

    /// [`ResultWriter::write`] through `put` (tests make it fail).
    pub(crate) fn write_with<F>(
        &mut self,
        ex: &ExportManager,
        res: &RunResult,
        dir: Option<Rc<SafeDir>>,
        dir_path: &Path,
        mut put: F,
    ) where
        F: FnMut(&SafeDir, &str, &[u8]) -> Result<(), String>,
    {
        let failures = match &dir {
            Some(d) => ex.write_with(res, |name, bytes| put(d, name, bytes)),
            None => ex.write_with(res, |name, _| {
                Err(format!(
                    "cannot write {}: the directory could not be opened",
                    dir_path.join(name).display()
                ))
            }),
        };
        for f in failures {
            self.report("", format!("{} (retried at the end)", f.error));
            self.pending.push(Pending {
                dir_path: dir_path.to_path_buf(),
                dir: dir.clone(),
                failure: f,
            });
        }
    }

    /// At the end of the run: retry every failed final file in its
    /// directory, then write what still fails to a fallback directory.
    /// Returns the files that are not where they were asked for.
    pub(crate) fn finish(&mut self) -> Vec<Missing> {
        let mut fallback: Option<SafeDir> = None;
        let mut missing = Vec::new();
        for p in std::mem::take(&mut self.pending) {
            let name = p.failure.name.clone();
            let wanted = p.dir_path.join(&name);
            if let Some(d) = &p.dir {
                if d.write(&name, &p.failure.bytes).is_ok() {
                    rtshield_text::errln!("rtshield: {} written on retry", wanted.display());
                    continue;
                }
            }
            if fallback.is_none() {
                fallback = self.fallback_dir();
            }
            // One subdirectory per requested directory (rotated parts).
            let sub = p
                .dir_path
                .file_name()
                .map_or("results".into(), |n| n.to_string_lossy().into_owned());
            let got = fallback.as_ref().and_then(|f| {
                let d = f.subdir(&sub, 0o755).ok()?;
                d.write(&name, &p.failure.bytes).ok()?;
                Some(d.display_path(&name))
            });
            match &got {
                Some(at) => self.report(
                    "",
                    format!("{}; written to {} instead", p.failure.error, at.display()),
                ),
                None => self.report(
                    "",
                    format!(
                        "{}; no fallback directory could be written either: {} is lost",
                        p.failure.error, name
                    ),
                ),
            }
            missing.push(Missing {
                wanted,
                fallback: got,
            });
        }
        missing
    }

    /// A fresh private directory `rtshield-fallback-<16 hex digits>` (mode
    /// 0700, made with `mkdir`: never one someone prepared) in the first
    /// parent that passes the path rules and where it can be made.
    fn fallback_dir(&mut self) -> Option<SafeDir> {
        let parents = match &self.fallback_parents {
            Some(ps) => ps
                .iter()
                .filter_map(|p| SafeDir::open(p, DirPolicy::Strict).ok())
                .collect(),
            None => {
                let t = rtshield_safefs::temp_parents();
                for why in &t.skipped {
                    self.report("fallback: ", why.clone());
                }
                t.dirs
            }
        };
        for parent in parents {
            if let Ok((d, _)) = parent.create_private_subdir("rtshield-fallback-") {
                return Some(d);
            }
        }
        None
    }
}

/// Build the result of a measurement: the one place `ProgramResult`s and
/// the context meet the engine's figures.
pub(crate) fn to_result(m: &Measurement, ctx: &ResultContext) -> RunResult {
    m.to_result(ctx)
}

/// What [`measure_and_write`] did.
pub(crate) struct Written {
    pub measurement: Measurement,
    pub result: RunResult,
    /// Files not written where asked (exit [`EXIT_FILES_MISSING`]).
    pub missing: Vec<Missing>,
    /// The `--json FILE` copy could not be written (printed already).
    pub json_failed: bool,
}

/// `rtshield measure`: start the built-in `load` if any, measure once,
/// stop the load (so its counts are final), then write every format of
/// `exports` into `dir` (retrying and falling back, see [`ResultWriter`]),
/// and the JSON alone to `json` (its directory, opened before the run, and
/// the file's name) if given. `context` gets the load's
/// program results.
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure_and_write(
    root: &rtshield_sys::Root,
    spec: &MeasureSpec,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
    load: Option<&rtshield_load::LoadSpec>,
    dir: SafeDir,
    exports: &ExportManager,
    context: impl FnOnce(Vec<rtshield_results::ProgramResult>) -> ResultContext,
    json: Option<(&SafeDir, &str)>,
) -> anyhow::Result<Written> {
    use anyhow::Context as _;
    let running = match load {
        Some(l) => {
            Some(rtshield_load::start(std::slice::from_ref(l)).context("cannot start the load")?)
        }
        None => None,
    };
    let m = measure(root, spec, stop, obs);
    let programs = match (running, load) {
        (Some(r), Some(l)) => load_results(l, r.stop()),
        _ => Vec::new(),
    };
    let mut ctx = context(programs);
    // The temperatures when the run ended, next to those at its start.
    ctx.sysinfo.thermal_end = rtshield_sys::thermal_zones(root);
    let m = m?;
    let result = to_result(&m, &ctx);
    let mut w = ResultWriter::new();
    let dir = Rc::new(dir);
    w.write(exports, &result, Some(dir.clone()), dir.path());
    let mut json_failed = false;
    if let Some((d, name)) = json {
        let text = rtshield_results::to_json(&result);
        if let Err(e) = d.write(name, text.as_bytes()) {
            w.note(format!("--json: {e}"));
            json_failed = true;
        }
    }
    let missing = w.finish();
    write_manifest(&dir);
    Ok(Written {
        measurement: m,
        result,
        missing,
        json_failed,
    })
}

/// One [`ProgramResult`] per worker of a built-in load (`measure --load`).
pub(crate) fn load_results(
    load: &rtshield_load::LoadSpec,
    stats: Vec<(String, rtshield_load::ProcStats)>,
) -> Vec<rtshield_results::ProgramResult> {
    stats
        .into_iter()
        .enumerate()
        .map(|(i, (_label, st))| rtshield_results::ProgramResult {
            index: i as u32,
            command: format!("builtin:{}", load.kind.name()),
            cpus: load.cpus.as_ref().map(|c| c.to_list()),
            spawns: st.spawns,
            exits_ok: st.exits_ok,
            exits_ko: st.exits_ko,
        })
        .collect()
}
