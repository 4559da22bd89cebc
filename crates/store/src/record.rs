//! What the store keeps of a run: the whole result (lossless, histograms
//! included) and a summary row that lists and selectors work on.

use rtshield_results::RunResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One measuring thread, as `runs list`/`show` print it (ns). `None`:
/// the source did not record it (NULL in the SQL tables).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadSummary {
    /// The CPU it measured, `None` when not pinned.
    pub cpu: Option<u32>,
    /// Wake-ups measured.
    pub samples: Option<u64>,
    /// Smallest latency, ns; `None` when the thread measured nothing.
    pub min_ns: Option<i64>,
    /// Mean latency, ns; `None` when the thread measured nothing.
    pub avg_ns: Option<f64>,
    /// Largest latency, ns; `None` when the thread measured nothing.
    pub max_ns: Option<i64>,
    /// Exact percentiles by key ("50", "99.9", …), as in `results.json`.
    pub percentiles: BTreeMap<String, i64>,
    /// Percentiles only known to be at least this (ns): beyond the
    /// histogram.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentile_bounds: BTreeMap<String, i64>,
    /// Wake-ups later than the following period.
    pub overruns: Option<u64>,
    /// Periods skipped because of overruns.
    pub missed_periods: Option<u64>,
    /// Samples the thread's ring could not take.
    pub lost: Option<u64>,
}

/// A stored run without its histograms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Local row number (differs between stores; the UUID does not).
    pub id: i64,
    /// The run's identity: its `uuid` tag, else derived from its content (the same run imported twice is one run).
    pub uuid: String,
    /// Host name of the measured machine (`?` when unknown).
    pub host: String,
    /// `/etc/machine-id` of the measured machine; empty when unknown.
    pub machine_id: String,
    /// Kernel release (`uname -r`), `?` when unknown.
    pub kernel: String,
    /// Kernel build string (`uname -v`), `?` when unknown.
    pub kernel_version: String,
    /// Preemption model (`PREEMPT_RT`, `PREEMPT_DYNAMIC` ...), `?` when unknown.
    pub preempt: String,
    /// Machine architecture (`x86_64`, `aarch64` ...).
    pub arch: String,
    /// CPU model name, `?` when unknown.
    pub cpu_model: String,
    /// The tool and version that measured (`rtshield 0.1.0`, `cyclictest` for imports).
    pub tool: String,
    /// The run's label, empty when it has none.
    pub label: String,
    /// Start time as the run's file wrote it (RFC 3339 UTC for
    /// rtshield's runs); `None` when it does not say.
    pub started: Option<String>,
    /// Wall time measured, seconds; `None` when the source records none.
    pub duration_s: Option<f64>,
    /// Why the run ended (`duration`, `sigint`, ...: `results.json`'s
    /// `end_reason`); `None` when the source does not say.
    pub end: Option<String>,
    /// Measuring method (`nanosleep`, `posix-timer`, `interval`); `None`
    /// when the source does not say.
    pub mode: Option<String>,
    /// The run's tags; `isolation` falls back to `isolation_detected` when the run has no `isolation` tag.
    pub tags: BTreeMap<String, String>,
    /// One summary per measuring thread, in index order.
    pub threads: Vec<ThreadSummary>,
}

/// Tag keys the store knows by name.
pub const TAG_UUID: &str = "uuid";

/// The tag `runs import` and `runs push` put on every run they store (the
/// file or store it came from), whatever the file says: a run measured
/// here (`measure`, `run`, a campaign's cell) never has it. Anyone can
/// write any tag into a results.json, a campaign's too: this one is what
/// tells a campaign which stored runs it measured itself.
pub const TAG_IMPORTED_FROM: &str = "imported_from";

/// Tag keys only rtshield sets, refused by `--tag` (exit 2): the run's
/// identity, the import mark, and the keys by which a campaign knows its
/// runs (adversary round 5, F13: a colleague's `measure --tag
/// campaign_id=… --tag cell=… --tag repeat=…` stored straight into a
/// shared store was taken by `campaign --resume` as the cell's run). A
/// campaign does not trust them alone: it counts only the runs its own
/// record lists (crates/campaign, `ledger`).
pub const RESERVED_TAGS: &[&str] = &[
    TAG_UUID,
    TAG_IMPORTED_FROM,
    "campaign",
    "campaign_id",
    "cell",
    "repeat",
    "step",
    "kernel_id",
];

/// `r` as `runs import`/`runs push` store it: marked
/// [`TAG_IMPORTED_FROM`] `from` (any value the file had is replaced), its
/// identity kept (the `uuid` tag set to [`run_uuid`] first, so the mark
/// does not change a content-derived UUID).
pub fn mark_imported(r: &mut RunResult, from: &str) {
    let uuid = run_uuid(r);
    r.tags.insert(TAG_UUID.into(), uuid);
    r.tags.insert(TAG_IMPORTED_FROM.into(), from.into());
}

/// `r` as `runs push` stores it: a run the source store had imported
/// keeps the file or store it first came from (the source store is the
/// caller's own, so its mark is trusted and more telling than the store's
/// name); a run measured there is marked [`TAG_IMPORTED_FROM`] `from`
/// (`STORE#ID`), like an import: a campaign counts only the runs it
/// stored itself.
pub fn mark_pushed(r: &mut RunResult, from: &str) {
    if !r.tags.contains_key(TAG_IMPORTED_FROM) {
        mark_imported(r, from);
    }
}

/// A byte of a tag or field name: a letter, a digit, `_`, `.` or `-`.
pub fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-'
}

/// A tag name (`--tag KEY=…`, `--group-by KEY`): 1 to 64 [`is_key_byte`]s.
pub fn is_tag_key(k: &str) -> bool {
    !k.is_empty() && k.len() <= 64 && k.bytes().all(is_key_byte)
}

impl RunSummary {
    /// The summary of `r`; `id` is filled in by the store.
    pub fn of(r: &RunResult) -> RunSummary {
        let s = &r.sysinfo;
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "?".into());
        RunSummary {
            id: 0,
            uuid: run_uuid(r),
            host: opt(&s.hostname),
            machine_id: s.machine_id.clone(),
            kernel: opt(&s.kernel_release),
            kernel_version: opt(&s.kernel_version),
            preempt: opt(&s.preempt_model),
            arch: s.arch.clone(),
            cpu_model: opt(&s.cpu_model),
            tool: r.tool.clone(),
            label: r.label.clone().unwrap_or_default(),
            started: r.started_at.clone(),
            duration_s: r.duration_s,
            end: r.end_reason.clone(),
            mode: r.settings.mode.clone(),
            tags: summary_tags(r),
            threads: r
                .threads
                .iter()
                .map(|t| ThreadSummary {
                    cpu: t.cpu,
                    samples: t.samples,
                    min_ns: t.min_ns,
                    avg_ns: t.avg_ns,
                    max_ns: t.max_ns,
                    percentiles: t.percentiles.clone(),
                    percentile_bounds: t
                        .percentile_bounds
                        .iter()
                        .map(|(k, b)| (k.clone(), b.at_least_ns))
                        .collect(),
                    overruns: t.overruns,
                    missed_periods: t.missed_periods,
                    lost: t.lost,
                })
                .collect(),
        }
    }

    /// Whether the run came in by `runs import` or `runs push`
    /// ([`mark_imported`]) rather than being measured here.
    pub fn is_imported(&self) -> bool {
        self.tags.contains_key(TAG_IMPORTED_FROM)
    }

    /// The value of a selector key: a field, else a tag; None when the
    /// run does not have it (a tag not set, a field not recorded).
    pub fn field(&self, key: &str) -> Option<String> {
        let v = match key {
            "id" => self.id.to_string(),
            "uuid" => self.uuid.clone(),
            "host" => self.host.clone(),
            "machine_id" => self.machine_id.clone(),
            "kernel" => self.kernel.clone(),
            "kernel_version" => self.kernel_version.clone(),
            "preempt" => self.preempt.clone(),
            "arch" => self.arch.clone(),
            "cpu_model" => self.cpu_model.clone(),
            "tool" => self.tool.clone(),
            "label" => self.label.clone(),
            "started" => return self.started.clone(),
            "end" => return self.end.clone(),
            "mode" => return self.mode.clone(),
            // Runs stored before tags existed: say "?" rather than guess
            // (`isolation` falls back to `isolation_detected` when stored).
            _ => return self.tags.get(key).cloned(),
        };
        Some(v)
    }

    /// The worst value of percentile `key` over the threads (ns), when
    /// every thread knows it exactly (one unknown or bounded thread makes
    /// the worst unknown).
    pub fn worst_percentile(&self, key: &str) -> Option<i64> {
        self.threads
            .iter()
            .map(|t| t.percentiles.get(key).copied())
            .collect::<Option<Vec<i64>>>()?
            .into_iter()
            .max()
    }

    /// The worst maximum over the threads (ns); a thread that measured
    /// nothing adds no sample (as SQL's `max` skips NULL); unknown when
    /// no thread measured anything.
    pub fn worst_max(&self) -> Option<i64> {
        self.threads.iter().filter_map(|t| t.max_ns).max()
    }

    /// Samples over all threads; unknown when a thread's count is.
    pub fn samples(&self) -> Option<u64> {
        self.threads.iter().map(|t| t.samples).sum()
    }
}

/// The run's tags, with `isolation` from `isolation_detected` when a run
/// (older, or imported from elsewhere) has only the latter: selectors,
/// groups and lists then agree without the SQL knowing about fallbacks.
fn summary_tags(r: &RunResult) -> BTreeMap<String, String> {
    let mut t = r.tags.clone();
    if !t.contains_key("isolation") {
        if let Some(d) = r.tags.get("isolation_detected") {
            t.insert("isolation".into(), d.clone());
        }
    }
    t
}

/// The run's UUID: the `uuid` tag written by rtshield when it stored the
/// run, else one derived from the result's content, so importing or
/// pushing the same run twice always gives the same identity.
pub fn run_uuid(r: &RunResult) -> String {
    if let Some(u) = r.tags.get(TAG_UUID) {
        return u.clone();
    }
    let text = serde_json::to_vec(r).unwrap_or_default();
    // Version 8 (custom): tools that parse UUIDs accept it.
    uuid::Uuid::new_v8(fnv1a128(&text).to_be_bytes()).to_string()
}

/// The run's content identity: SHA-256 (hex) of its result as every
/// reader sees it (written and read back: what the store returns), without
/// the [`TAG_IMPORTED_FROM`] mark (the same run imported from two places,
/// or measured here and imported later, is the same content). Two runs
/// are the same run only when their UUID and this agree (adversary round
/// 5, F03: a forged results.json reusing the UUID of root's
/// world-readable run made root's own import say "already stored").
/// Unlike [`run_uuid`]'s FNV, a hash nobody can make collide on purpose.
pub fn content_digest(r: &RunResult) -> String {
    use sha2::Digest as _;
    let back = serde_json::to_string(r)
        .ok()
        .and_then(|t| rtshield_results::from_stored_json(&t).ok());
    let mut c = back.unwrap_or_else(|| r.clone());
    c.tags.remove(TAG_IMPORTED_FROM);
    let text = serde_json::to_vec(&c).unwrap_or_default();
    sha2::Sha256::digest(&text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `stored` (a row's result text) is the run `r` (the same
/// [`content_digest`]). A row that does not read back is not `r`.
pub(crate) fn same_content(stored: &str, r: &RunResult) -> bool {
    rtshield_results::from_stored_json(stored)
        .is_ok_and(|back| content_digest(&with_uuid(&back)) == content_digest(&with_uuid(r)))
}

/// `r` with its `uuid` tag, set to [`run_uuid`] when it has none, as
/// [`mark_imported`] sets it: a run stored without the tag (`noise`, whose
/// UUID comes from its content) and the same run imported from its file
/// (tagged by the import) are the same content, not a conflict.
fn with_uuid(r: &RunResult) -> std::borrow::Cow<'_, RunResult> {
    if r.tags.contains_key(TAG_UUID) {
        return std::borrow::Cow::Borrowed(r);
    }
    let mut c = r.clone();
    c.tags.insert(TAG_UUID.into(), run_uuid(r));
    std::borrow::Cow::Owned(c)
}

/// A new random UUID (version 4) for a run being stored for the first time.
pub fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// FNV-1a, 128 bits: an identity for content, not a security hash.
fn fnv1a128(data: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h = OFFSET;
    for &x in data {
        h ^= x as u128;
        h = h.wrapping_mul(PRIME);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_is_stable_and_tag_wins() {
        let mut r = rtshield_results::example_result();
        let a = run_uuid(&r);
        assert_eq!(a, run_uuid(&r.clone()));
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "8");
        r.duration_s = r.duration_s.map(|d| d + 1.0);
        assert_ne!(a, run_uuid(&r));
        r.tags.insert("uuid".into(), "x-y".into());
        assert_eq!(run_uuid(&r), "x-y");
        let n = new_uuid();
        assert_eq!(&n[14..15], "4");
        assert_ne!(n, new_uuid());
    }
}
