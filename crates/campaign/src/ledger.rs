//! A campaign's own record of the runs it measured: each run's UUID and
//! content digest (`rtshield_store::content_digest`), kept where only the
//! caller can write (`$XDG_DATA_HOME/rtshield/campaigns/FINGERPRINT.runs`,
//! else under `$HOME/.local/share`, a directory 0700, the file 0600).
//!
//! Why: the store may be a lab's shared PostgreSQL server, where anyone
//! with its credentials can store a run carrying the campaign's tags
//! (`measure --tag campaign_id=… --tag cell=…`, or a row inserted by
//! hand). Tags only name a run; this record says which runs this
//! campaign measured, and their digest says the stored row is still that
//! run. `--resume` and the report count a stored run only when both agree
//! (adversary round 5, F13; round 3's C15 marked imports only).

use rtshield_results::RunResult;
use rtshield_safefs::SafeDir;
use rtshield_vocab::InputError;
use std::collections::BTreeMap;
use std::path::Path;

/// The record's largest size read (a line is ~110 bytes).
const LIMIT: u64 = 64 << 20;
const HEADER: &str = "# rtshield campaign runs (uuid sha256), written by rtshield; do not edit\n";

/// The runs one campaign (one fingerprint) measured: UUID -> digest.
pub(crate) struct Ledger {
    dir: SafeDir,
    name: String,
    runs: BTreeMap<String, String>,
}

impl Ledger {
    /// The record of campaign `fingerprint` in the caller's data
    /// directory (created 0700 if missing). Refused (exit 2) without an
    /// absolute `XDG_DATA_HOME` or `HOME`, or when the directory is not the
    /// caller's own and private.
    pub(crate) fn open(fingerprint: &str) -> anyhow::Result<Ledger> {
        let (home, from) = rtshield_store::data_home().ok_or_else(|| {
            InputError::new(
                "no place for the campaign's record of its runs: neither XDG_DATA_HOME nor \
                 HOME is an absolute directory",
            )
        })?;
        let path = home.join("rtshield").join("campaigns");
        let dir = SafeDir::open_private_or_create(&path).map_err(|e| {
            InputError::new(format!(
                "{from}: the campaign's record of its runs ({}): {e}",
                path.display()
            ))
        })?;
        Ledger::in_dir(dir, fingerprint)
    }

    /// The record of campaign `fingerprint` in `dir` (private, checked).
    pub(crate) fn in_dir(dir: SafeDir, fingerprint: &str) -> anyhow::Result<Ledger> {
        let name = format!("{fingerprint}.runs");
        rtshield_safefs::check_name(&name)?;
        let runs = match dir.read_private(&name, LIMIT) {
            Ok(bytes) => parse(&bytes, &dir.display_path(&name))?,
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => BTreeMap::new(),
            Err(e) => return Err(e.into()),
        };
        Ok(Ledger { dir, name, runs })
    }

    /// Record `r` (as stored) as measured by this campaign; the file is
    /// replaced atomically, mode 0600.
    pub(crate) fn add(&mut self, r: &RunResult) -> anyhow::Result<()> {
        self.runs.insert(
            rtshield_store::run_uuid(r),
            rtshield_store::content_digest(r),
        );
        let runs = &self.runs;
        self.dir.write_with_mode(&self.name, 0o600, |w| {
            w.write_all(HEADER.as_bytes())?;
            for (u, d) in runs {
                writeln!(w, "{u} {d}")?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Whether the campaign measured a run of this UUID.
    pub(crate) fn knows(&self, uuid: &str) -> bool {
        self.runs.contains_key(uuid)
    }

    /// Whether `r` (read back from a store) is a run this campaign
    /// measured, unchanged: its UUID recorded with its content digest.
    pub(crate) fn holds(&self, r: &RunResult) -> bool {
        self.runs
            .get(&rtshield_store::run_uuid(r))
            .is_some_and(|d| *d == rtshield_store::content_digest(r))
    }
}

fn parse(bytes: &[u8], shown: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let bad = |n: usize| {
        InputError::new(format!(
            "{}:{n}: not a line of the campaign's record (`UUID SHA256`); it is rtshield's own \
             file: remove it to measure the campaign again",
            shown.display()
        ))
    };
    let text = std::str::from_utf8(bytes).map_err(|_| bad(1))?;
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (u, d) = line.split_once(' ').ok_or_else(|| bad(i + 1))?;
        let hex = |s: &str| s.bytes().all(|b| b.is_ascii_hexdigit());
        if !rtshield_store::is_tag_key(u) || d.len() != 64 || !hex(d) {
            return Err(bad(i + 1).into());
        }
        out.insert(u.to_string(), d.to_string());
    }
    Ok(out)
}
