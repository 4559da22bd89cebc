//! `--metrics-file PATH`: the run so far in Prometheus text format,
//! rewritten atomically (temporary file + rename, through `safefs`) every
//! stats period, for node_exporter's textfile collector. A scraper sees
//! the previous file or the new one, never half of one.
//!
//! [`WithMetrics`] wraps the command's observer: it asks the engine for a
//! snapshot after every interval (on the main thread, a copy of the
//! histograms: the measuring threads are not involved) and forwards
//! everything else, so the display and checkpoints behave as without it.

use rtshield_measure::{IntervalStats, Measurement, Observer, ResultContext};
use rtshield_results::to_openmetrics;
use rtshield_safefs::{DirPolicy, SafeDir};
use rtshield_vocab::InputError;
use std::path::Path;

/// The metrics file, its directory opened (and checked) once.
pub(crate) struct MetricsFile {
    dir: SafeDir,
    name: String,
    shown: String,
    failed: bool,
}

impl MetricsFile {
    /// Open the directory of `path` now, so a bad path is refused before
    /// the measurement starts (exit 2).
    pub(crate) fn open(path: &Path, policy: DirPolicy) -> anyhow::Result<MetricsFile> {
        // The path layer's one cut: `FILE/` names no file (refused, as
        // `--json FILE/` is), `..` refused.
        let (dir, name) = rtshield_safefs::open_file_dir(path, policy)
            .map_err(|e| anyhow::Error::from(InputError::new(format!("--metrics-file: {e}"))))?;
        Ok(MetricsFile {
            dir,
            name,
            shown: path.display().to_string(),
            failed: false,
        })
    }

    /// Write the metrics of `m`. A failure is said once on stderr and
    /// never stops the measurement; the next period tries again.
    pub(crate) fn write(&mut self, m: &Measurement) {
        let ctx = ResultContext {
            command: Vec::new(),
            config: None,
            label: None,
            tags: Default::default(),
            programs: Vec::new(),
            warnings: Vec::new(),
            sysinfo: Default::default(),
            limits: Default::default(),
            drift: Default::default(),
        };
        let res = m.to_result(&ctx);
        match self.dir.write(&self.name, to_openmetrics(&res).as_bytes()) {
            Ok(()) => self.failed = false,
            Err(e) if !self.failed => {
                rtshield_text::errln!("rtshield: warning: --metrics-file {}: {e}", self.shown);
                self.failed = true;
            }
            Err(_) => {}
        }
    }
}

/// An observer that also writes the metrics file every interval.
pub(crate) struct WithMetrics<'a> {
    inner: &'a mut dyn Observer,
    file: &'a mut MetricsFile,
    inner_wants: bool,
}

impl<'a> WithMetrics<'a> {
    pub(crate) fn new(inner: &'a mut dyn Observer, file: &'a mut MetricsFile) -> WithMetrics<'a> {
        WithMetrics {
            inner,
            file,
            inner_wants: false,
        }
    }
}

impl Observer for WithMetrics<'_> {
    fn interval(&mut self, s: &IntervalStats) -> bool {
        self.inner.interval(s)
    }

    fn wants_snapshot(&mut self, s: &IntervalStats) -> bool {
        self.inner_wants = self.inner.wants_snapshot(s);
        true
    }

    fn snapshot(&mut self, m: &Measurement) {
        self.file.write(m);
        if self.inner_wants {
            self.inner.snapshot(m);
        }
    }
}
