//! `timeline.csv` during a run: the engine's [`IntervalStats`], the CPU
//! load and the host (uptime, load average, temperature) become rows of
//! the format `rtshield_results::timeline` owns, appended through a
//! [`SafeDir`].

use rtshield_drift::Feed;
use rtshield_load::{CpuLoad, CpuLoadMeter};
use rtshield_measure::{IntervalStats, Measurement, Observer};
use rtshield_results::{TimelineHost, TimelineRow, TimelineWriter};
use rtshield_safefs::{SafeDir, SafeError};
use rtshield_sys::Root;
use std::io;

pub(crate) struct Timeline {
    out: TimelineWriter,
    cpus: Vec<u32>,
    /// Where the host columns are read (None: left empty).
    root: Option<Root>,
    /// The drift watch's events, one `drift` cell per interval (None: the
    /// file has no such column).
    drift: Option<Feed>,
}

/// The machine now: `/proc/uptime`, `/proc/loadavg`, the hottest thermal
/// zone (each `None` when it cannot be read).
pub(crate) fn host_now(root: &Root) -> TimelineHost {
    TimelineHost {
        uptime_s: rtshield_sys::uptime_s(root),
        loadavg: rtshield_sys::LoadAvg::read(root).ok().map(|l| l.avg),
        temp_c: rtshield_sys::max_temp_c(&rtshield_sys::thermal_zones(root)),
    }
}

impl Timeline {
    /// Create `dir/timeline.csv` with a header naming one column per CPU.
    pub(crate) fn create(dir: &SafeDir, cpus: Vec<u32>) -> Result<Timeline, SafeError> {
        Ok(Timeline {
            out: TimelineWriter::create(dir, &cpus)?,
            cpus,
            root: None,
            drift: None,
        })
    }

    /// Create `dir/timeline.csv` with the `drift` column, filled at each
    /// interval from `feed` (the kinds of the events seen in it).
    pub(crate) fn create_watched(
        dir: &SafeDir,
        cpus: Vec<u32>,
        feed: Feed,
    ) -> Result<Timeline, SafeError> {
        Ok(Timeline {
            out: TimelineWriter::create_watched(dir, &cpus)?,
            cpus,
            root: None,
            drift: Some(feed),
        })
    }

    /// Create `dir/timeline.csv` with `header` and the lines `body` (the
    /// rows an interrupted run left, on resume).
    pub(crate) fn create_with(
        dir: &SafeDir,
        cpus: Vec<u32>,
        header: &str,
        body: &str,
    ) -> Result<Timeline, SafeError> {
        Ok(Timeline {
            out: TimelineWriter::create_with(dir, header, body)?,
            cpus,
            root: None,
            drift: None,
        })
    }

    /// Fill the host columns from `root` at every append.
    pub(crate) fn with_host(mut self, root: Root) -> Timeline {
        self.root = Some(root);
        self
    }

    /// Rows made elsewhere (resume's `down` rows), with the host now.
    pub(crate) fn append_rows(&mut self, rows: &[TimelineRow]) -> io::Result<()> {
        let host = self.root.as_ref().map(host_now).unwrap_or_default();
        self.out.append_host(rows, &host)
    }

    /// One row per thread; `offset_ns` is added to the segment's elapsed time.
    pub(crate) fn append(
        &mut self,
        s: &IntervalStats,
        offset_ns: u64,
        phase: &str,
        load: Option<&CpuLoad>,
    ) -> io::Result<()> {
        let elapsed_s = (s.elapsed_ns + offset_ns) as f64 / 1e9;
        let rows: Vec<TimelineRow> = s
            .threads
            .iter()
            .map(|t| TimelineRow {
                elapsed_s,
                phase,
                thread: t.index,
                cpu: t.cpu,
                samples: t.samples,
                ival_samples: t.ival_samples,
                ival_min_ns: t.ival_min_ns,
                ival_avg_ns: t.ival_avg_ns,
                ival_max_ns: t.ival_max_ns,
                max_max_ns: t.max_ns,
                overruns: t.overruns,
                lost: t.lost,
                load_total: load.map(|l| l.total),
                load_cpus: self
                    .cpus
                    .iter()
                    .map(|c| load.and_then(|l| l.per_cpu.get(c)).copied())
                    .collect(),
            })
            .collect();
        let host = self.root.as_ref().map(host_now).unwrap_or_default();
        let cell = self
            .drift
            .as_ref()
            .map(|f| rtshield_results::drift_timeline_cell(&f.take_new()))
            .unwrap_or_default();
        self.out.append_drift(&rows, &host, &cell)
    }
}

/// `rtshield measure`'s observer: `inner` (the live display) plus a row of
/// `timeline.csv` every stats period, phase `load` with a built-in load
/// and `none` without. A write failure is printed once and ends the
/// timeline, never the measurement.
pub(crate) struct WithTimeline<'a> {
    pub inner: &'a mut dyn Observer,
    pub timeline: Option<Timeline>,
    pub meter: Option<CpuLoadMeter>,
    pub phase: &'static str,
    /// `timeline.csv` could not be created or a row could not be written:
    /// the file in the output directory is not the timeline (empty or
    /// cut), and the summary must say so (adversary round 3, C7).
    pub failed: bool,
}

impl<'a> WithTimeline<'a> {
    /// `timeline.csv` in `dir`, with the host columns read from `root`
    /// and, with `drift`, the drift watch's column; a directory where it
    /// cannot be created gives no timeline (said).
    pub(crate) fn new(
        inner: &'a mut dyn Observer,
        dir: &SafeDir,
        root: &Root,
        loaded: bool,
        drift: Option<Feed>,
    ) -> WithTimeline<'a> {
        let cpus: Vec<u32> = rtshield_sys::StatSnapshot::read(root)
            .map(|s| s.cpus.keys().copied().collect())
            .unwrap_or_default();
        let made = match drift {
            Some(f) => Timeline::create_watched(dir, cpus, f),
            None => Timeline::create(dir, cpus),
        };
        let (timeline, failed) = match made {
            Ok(t) => (Some(t.with_host(root.clone())), false),
            Err(e) => {
                rtshield_text::errln!("rtshield: {e}; no timeline");
                (None, true)
            }
        };
        WithTimeline {
            inner,
            timeline,
            meter: CpuLoadMeter::new(root.clone()).ok(),
            phase: if loaded { "load" } else { "none" },
            failed,
        }
    }
}

impl Observer for WithTimeline<'_> {
    fn interval(&mut self, s: &IntervalStats) -> bool {
        let load = self.meter.as_mut().and_then(|m| m.sample().ok());
        if let Some(t) = &mut self.timeline {
            if let Err(e) = t.append(s, 0, self.phase, load.as_ref()) {
                rtshield_text::errln!("rtshield: timeline.csv: {e}; no more timeline rows");
                self.timeline = None;
                self.failed = true;
            }
        }
        self.inner.interval(s)
    }

    fn wants_snapshot(&mut self, s: &IntervalStats) -> bool {
        self.inner.wants_snapshot(s)
    }

    fn snapshot(&mut self, m: &Measurement) {
        self.inner.snapshot(m)
    }
}
