//! Test and bench support (issue 26): `rtshield measure`'s collecting
//! side, from the rings to the files, fed by emulated measuring threads
//! ([`rtshield_measure::emulate`]): the engine's main side with the
//! `timeline.csv` observer `measure` uses, then the result files written
//! by the pipeline's [`ResultWriter`]. `bench/collect-scale.sh` measures
//! the main thread's CPU through it. Not part of the supported API.

use crate::pipeline::{open_output, to_result, Missing, ResultWriter};
use crate::timeline::WithTimeline;
use rtshield_measure::emulate::Source;
use rtshield_measure::{MeasureSpec, Measurement, Observer, ResultContext};
use rtshield_results::ExportManager;
use rtshield_safefs::DirPolicy;
use rtshield_sys::Root;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

/// What [`collect_and_write`] did.
pub struct Collected {
    /// The engine's outcome.
    pub measurement: Measurement,
    /// Result files not written where asked.
    pub missing: Vec<Missing>,
}

/// Run the main side of `spec` with `produce` driving one emulated
/// thread per thread of `spec` ([`rtshield_measure::emulate::collect`]),
/// `inner` behind the timeline observer, then write every result format
/// into `out` (created if missing, the `--out` rules).
pub fn collect_and_write<F>(
    spec: &MeasureSpec,
    out: &Path,
    stop: &AtomicBool,
    inner: &mut dyn Observer,
    produce: F,
) -> anyhow::Result<Collected>
where
    F: for<'a> FnOnce(Vec<Source<'a>>) + Send,
{
    let dir = open_output(Some(out), "", DirPolicy::Strict)?;
    let root = Root::host();
    let mut timeline = WithTimeline::new(inner, &dir, &root, false, None);
    let measurement = rtshield_measure::emulate::collect(spec, stop, &mut timeline, produce);
    drop(timeline);
    let measurement = measurement?;
    let result = to_result(&measurement, &ResultContext::default());
    let mut w = ResultWriter::new();
    w.write(&ExportManager::all(), &result, Some(Rc::new(dir)), out);
    let missing = w.finish();
    Ok(Collected {
        measurement,
        missing,
    })
}
