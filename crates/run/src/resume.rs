//! `rtshield run CONFIG --resume DIR` (SPEC §3.3): continue a run that was
//! interrupted (kill -9, power cut) from its last checkpoint.
//!
//! What the checkpoint in `DIR/results.json` holds is kept exactly once:
//! the resumed run measures only the time still to run, its figures are
//! added to the checkpoint's (`rtshield_results::merge_resumed`), and
//! `timeline.csv` keeps the rows up to the checkpoint (those written after
//! it describe samples the checkpoint does not hold), then one row per
//! thread with phase `down` at the end of the gap, then the new rows, on
//! one continuous time axis (the gap included).

use rtshield_config::Config;
use rtshield_results::RunResult;
use rtshield_results::{read_timeline, TimelineRow, TIMELINE_FILE};
use rtshield_safefs::{read_input, INPUT_LIMIT};
use rtshield_vocab::InputError;
use std::path::{Path, PathBuf};

/// Everything the runner needs to continue.
#[derive(Debug, Clone)]
pub(crate) struct Resume {
    /// The directory resumed (a rotation part `OUT-N` or a plain `OUT`).
    pub dir: PathBuf,
    /// Where further rotation parts go (`OUT` of `OUT-N`).
    pub out: PathBuf,
    /// The rotation part number (tag `part`), if any.
    pub part: Option<u32>,
    /// The last checkpoint.
    pub prev: RunResult,
    /// Seconds between the checkpoint and now (the `down` phase).
    pub gap_s: f64,
    /// `timeline.csv` lines up to the checkpoint (each ending in a newline).
    pub timeline_body: String,
    /// Timeline time of the last row kept (0 without a timeline).
    pub last_elapsed_s: f64,
}

impl Resume {
    /// Measured before the interruption (ns), in this part.
    pub(crate) fn measured_ns(&self) -> u64 {
        // A checkpoint is rtshield's own file: its duration is known.
        (self.prev.duration_s.unwrap_or(0.0) * 1e9) as u64
    }

    /// The `down` rows: one per thread at the end of the gap, with the
    /// checkpoint's totals and no sample of its own.
    pub(crate) fn down_rows(&self) -> Vec<TimelineRow<'static>> {
        let at = self.last_elapsed_s + self.gap_s;
        self.prev
            .threads
            .iter()
            .map(|t| TimelineRow {
                elapsed_s: at,
                phase: "down",
                thread: t.index,
                cpu: t.cpu,
                // A checkpoint is rtshield's own: every count is known.
                samples: t.samples.unwrap_or(0),
                ival_samples: 0,
                // No sample before the checkpoint: the writer leaves it empty.
                max_max_ns: t.max_ns.unwrap_or(0),
                overruns: t.overruns.unwrap_or(0),
                lost: t.lost.unwrap_or(0),
                ..Default::default()
            })
            .collect()
    }
}

fn refused(dir: &Path, why: impl std::fmt::Display) -> anyhow::Error {
    InputError::new(format!("--resume {}: {why}", dir.display())).into()
}

/// Read what `dir` holds and check it can be continued with `cfg`.
/// Refusals (nothing to resume, another configuration) are input errors.
pub(crate) fn prepare(dir: &Path, cfg: &Config) -> anyhow::Result<Resume> {
    let json = dir.join(rtshield_results::JSON_FILE);
    let prev = rtshield_results::read_json(&json).map_err(|e| refused(dir, e))?;
    // A checkpoint (kill -9, power cut), or a run stopped by Ctrl-C or
    // SIGTERM before its end: its final files are a checkpoint too.
    let end = prev.end_reason.as_deref().unwrap_or("?");
    if !matches!(
        end,
        "checkpoint" | "sigint" | "sigterm" | "sighup" | "sigquit"
    ) {
        return Err(refused(
            dir,
            format!("the run there ended normally (end_reason {end}): nothing to resume"),
        ));
    }
    if prev.config.as_deref() != Some(cfg.text.as_str()) {
        return Err(refused(
            dir,
            format!(
                "it was run with another configuration than {} (results.json `config` differs)",
                cfg.file
            ),
        ));
    }
    // The checkpoint was written when results.json last changed.
    let gap_s = std::fs::metadata(&json)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .map_or(0.0, |d| d.as_secs_f64());
    let part: Option<u32> = prev.tags.get("part").and_then(|p| p.parse().ok());
    let out = match part {
        Some(n) => {
            let s = dir.as_os_str().to_string_lossy();
            match s.strip_suffix(&format!("-{n}")) {
                Some(base) => PathBuf::from(base),
                None => {
                    return Err(refused(
                        dir,
                        format!("rotation part {n} should be a directory named OUT-{n}"),
                    ))
                }
            }
        }
        None => dir.to_path_buf(),
    };
    let (timeline_body, last_elapsed_s) = kept_rows(&dir.join(TIMELINE_FILE), &prev)?;
    Ok(Resume {
        dir: dir.to_path_buf(),
        out,
        part,
        prev,
        gap_s,
        timeline_body,
        last_elapsed_s,
    })
}

/// The timeline rows the checkpoint accounts for: a thread's row whose
/// `samples` is at most the checkpoint's count for that thread (later rows
/// describe samples that are lost). A missing timeline keeps nothing.
fn kept_rows(path: &Path, prev: &RunResult) -> anyhow::Result<(String, f64)> {
    let bytes = match read_input(path, INPUT_LIMIT) {
        Ok(b) => b,
        Err(_) if !path.exists() => return Ok((String::new(), 0.0)),
        Err(e) => return Err(anyhow::Error::new(e)),
    };
    let text = String::from_utf8_lossy(&bytes);
    let name = path.display().to_string();
    let (_, recs) = read_timeline(&text, &name)?;
    let mut body = String::new();
    let mut last = 0.0f64;
    for r in recs {
        let Some(t) = prev.threads.iter().find(|t| t.index == r.thread) else {
            continue;
        };
        if r.samples.is_some_and(|s| s <= t.samples.unwrap_or(0)) {
            body.push_str(&r.line);
            body.push('\n');
            last = last.max(r.elapsed_s);
        }
    }
    Ok((body, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_after_the_checkpoint_are_dropped() {
        let d = tempfile::tempdir().unwrap();
        let mut prev = rtshield_results::example_result();
        prev.threads[0].samples = Some(500);
        let p = d.path().join("timeline.csv");
        let h = rtshield_results::timeline_header_with_host(&[]);
        std::fs::write(
            &p,
            format!(
                "{h}\n0.250,load,0,1,250,250,1,2,3,3,0,0,,,,,,\n0.500,load,0,1,500,250,1,2,3,3,0,0,,,,,,\n0.750,load,0,1,750,250,1,2,3,3,0,0,,,,,,\n"
            ),
        )
        .unwrap();
        let (body, last) = kept_rows(&p, &prev).unwrap();
        assert_eq!(body.lines().count(), 2, "{body}");
        assert_eq!(last, 0.5);
        let (body, last) = kept_rows(&d.path().join("none.csv"), &prev).unwrap();
        assert_eq!((body.as_str(), last), ("", 0.0));
    }
}
