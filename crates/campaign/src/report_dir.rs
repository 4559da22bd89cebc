//! `DIR/report`, the campaign's report directory, holds only what the
//! campaign wrote there: `summary.md`, `report.html` and `runs/*.json` listed in its
//! manifest, and the `plots/` and `load-*/` report directories (each with
//! `rtshield report`'s own manifest, [`rtshield_report::check_out_dir`]).
//! Anything else (root's own notes, the summary of another experiment)
//! is refused before a cell is measured, as `report -o` refuses a
//! directory with files it did not write (adversary round 3, C14).

use rtshield_run::refusal;
use rtshield_safefs::{temp_target, DirPolicy, SafeDir};
use rtshield_vocab::InputError;

/// The list of files the campaign wrote into `DIR/report`.
pub(crate) const MANIFEST: &str = ".rtshield-campaign-report";

/// The report directory's name in the campaign's `--out`.
pub(crate) const REPORT: &str = "report";

/// Largest manifest read (a campaign stores a few thousand runs at most).
const MANIFEST_LIMIT: u64 = 4 << 20;

/// Whether the campaign writes `n` (a manifest line): `summary.md`,
/// `report.html`, or `runs/NAME` with a file-name-safe NAME.
fn is_campaign_file(n: &str) -> bool {
    n == "summary.md"
        || n == "report.html"
        || n.strip_prefix("runs/").is_some_and(|f| {
            !f.is_empty()
                && !f.starts_with('.')
                && f.len() <= 200
                && f.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        })
}

/// The names the manifest of `rdir` lists (none without one).
fn read_manifest(rdir: &SafeDir) -> Vec<String> {
    if !rdir.entry(MANIFEST).is_some_and(|e| e.is_file) {
        return Vec::new();
    }
    rdir.read(MANIFEST, MANIFEST_LIMIT)
        .map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .filter(|l| is_campaign_file(l))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The manifest's text for `names`.
pub(crate) fn manifest_text(names: &[String]) -> String {
    let mut t = String::from(
        "# Files written by `rtshield campaign` in its report directory: the\n\
         # next campaign report into it replaces them.\n",
    );
    for n in names {
        t.push_str(n);
        t.push('\n');
    }
    t
}

/// Whether `name` in a directory whose listed files are `listed` (with
/// `prefix`) may be replaced: a listed regular file, or the leftover
/// temporary file of one.
fn ours(listed: &[String], prefix: &str, name: &str, is_file: bool) -> bool {
    let has = |n: &str| listed.iter().any(|l| *l == format!("{prefix}{n}"));
    is_file && (has(name) || temp_target(name).is_some_and(has))
}

/// Check `out/report` (see the module): `Ok` with the files the earlier
/// campaign report listed (none when there is no report directory yet),
/// an [`InputError`] naming the foreign entries otherwise.
pub(crate) fn check(out: &SafeDir) -> anyhow::Result<Vec<String>> {
    let shown = out.path().join(REPORT);
    let Some(e) = out.entry(REPORT) else {
        return Ok(Vec::new());
    };
    if !e.is_dir {
        return Err(InputError::new(format!(
            "{}: exists and is not a directory",
            shown.display()
        ))
        .into());
    }
    let rdir = out
        .open_subdir(REPORT, DirPolicy::Strict)
        .map_err(refusal)?;
    let listed = read_manifest(&rdir);
    let mut foreign = Vec::new();
    for name in rdir.list().map_err(refusal)? {
        let e = rdir.entry(&name);
        let (is_file, is_dir) = (e.is_some_and(|e| e.is_file), e.is_some_and(|e| e.is_dir));
        if (name == MANIFEST && is_file) || ours(&listed, "", &name, is_file) {
            continue;
        }
        if name == "runs" && is_dir {
            let runs = rdir
                .open_subdir("runs", DirPolicy::Strict)
                .map_err(refusal)?;
            for n in runs.list().map_err(refusal)? {
                if !ours(
                    &listed,
                    "runs/",
                    &n,
                    runs.entry(&n).is_some_and(|e| e.is_file),
                ) {
                    foreign.push(format!("runs/{n}"));
                }
            }
            continue;
        }
        if is_dir && (name == "plots" || name.starts_with("load-")) {
            // A report directory: `rtshield report`'s own check.
            rtshield_report::check_out_dir(&shown.join(&name), DirPolicy::Strict)?;
            continue;
        }
        foreign.push(if is_dir { format!("{name}/") } else { name });
    }
    if !foreign.is_empty() {
        foreign.sort();
        let more = foreign.len().saturating_sub(5);
        let mut list = foreign.into_iter().take(5).collect::<Vec<_>>().join(", ");
        if more > 0 {
            list.push_str(&format!(" and {more} more"));
        }
        return Err(InputError::new(format!(
            "{}: holds files `rtshield campaign` did not write ({list}); the campaign's \
             report replaces its files there, so give a new or empty --out DIR (or the \
             directory of an earlier run of this campaign)",
            shown.display()
        ))
        .into());
    }
    Ok(listed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_files_in_the_report_directory_are_refused() {
        // No tempfile in this crate's dependencies: a private directory of
        // this process, removed at the end.
        let d = std::env::temp_dir().join(format!(
            "rtshield-campaign-report-dir-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir(&d).unwrap();
        let _clean = Clean(d.clone());
        let out = SafeDir::open(&d, DirPolicy::AllowUnsafe).unwrap();
        assert_eq!(check(&out).unwrap(), Vec::<String>::new(), "no report yet");
        let r = d.join("report");
        std::fs::create_dir_all(r.join("runs")).unwrap();
        std::fs::write(r.join("summary.md"), "MY THESIS SUMMARY").unwrap();
        std::fs::write(r.join("runs/run-1.json"), "MY RUN NOTES").unwrap();
        let e = input_error(check(&out).unwrap_err());
        assert!(
            e.contains("runs/run-1.json") && e.contains("summary.md"),
            "{e}"
        );
        // Listed by the manifest of an earlier campaign report: replaced.
        std::fs::write(
            r.join(MANIFEST),
            manifest_text(&["summary.md".into(), "runs/run-1.json".into()]),
        )
        .unwrap();
        assert_eq!(check(&out).unwrap().len(), 2);
        std::fs::write(r.join("notes.txt"), "mine").unwrap();
        let e = input_error(check(&out).unwrap_err());
        assert!(e.contains("(notes.txt)"), "{e}");
    }

    struct Clean(std::path::PathBuf);
    impl Drop for Clean {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn input_error(e: anyhow::Error) -> String {
        e.downcast_ref::<InputError>()
            .unwrap_or_else(|| panic!("not an input error: {e:#}"))
            .to_string()
    }

    #[test]
    fn only_the_campaigns_own_names_count_in_a_manifest() {
        assert!(is_campaign_file("summary.md"));
        assert!(is_campaign_file("runs/run-12.json"));
        assert!(is_campaign_file("runs/load-idle-none.json"));
        for bad in [
            "runs/",
            "runs/../x",
            "runs/.x",
            "notes.txt",
            "runs/a/b",
            "plots",
        ] {
            assert!(!is_campaign_file(bad), "{bad}");
        }
    }
}
