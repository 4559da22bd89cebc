//! Every run is stored at its end (`--no-store` opts out): the result
//! files stay the primary record, the store is the index `runs` works on.
//! A store that cannot be opened or written is a warning, never a lost
//! measurement: the files are already written.

use rtshield_isolation::{Isolation, Partitions, Placement};
use rtshield_measure::ThreadSpec;
use rtshield_results::RunResult;
use std::collections::BTreeMap;
use std::path::Path;

/// Environment variable that turns storing off (as `--no-store`).
pub(crate) const NO_STORE_ENV: &str = "RTSHIELD_NO_STORE";

/// The tags every run carries besides the user's `--tag`s: a fresh UUID
/// (the run's identity in every store it reaches), the isolation of the
/// CPUs it measures (`isolation_detected`, and `isolation` unless the user
/// tagged it: see [`rtshield_isolation::Isolation::tag`], derived from
/// where its measuring threads run, `threads`), and `load` (`idle` or the
/// load's name) unless the user tagged it. So `runs compare
/// 'isolation=none' 'isolation=partition'` works on plain runs too.
pub(crate) fn run_tags(
    root: &rtshield_sys::Root,
    load: &str,
    user: &[(String, String)],
    threads: &[Placement],
) -> BTreeMap<String, String> {
    let mut t = BTreeMap::new();
    t.insert(
        rtshield_store::TAG_UUID.to_string(),
        rtshield_store::new_uuid(),
    );
    let detected = Isolation::detect(root).tag(root, threads);
    t.insert("isolation_detected".to_string(), detected.clone());
    t.insert("isolation".to_string(), detected);
    t.insert("load".to_string(), load.to_string());
    for (k, v) in user {
        t.insert(k.clone(), v.clone());
    }
    t
}

/// Where the measuring threads of a `measure` run: each thread's CPU, and
/// the cgroup whose tasks file it joins itself (`--partition`), else the
/// cpuset cgroup this process is in now, which its threads inherit.
pub(crate) fn placements(root: &rtshield_sys::Root, threads: &[ThreadSpec]) -> Vec<Placement> {
    let own = Partitions::discover(root).own_cgroup(root);
    threads
        .iter()
        .map(|t| Placement {
            cpu: t.cpu,
            cgroup: match &t.cgroup_tasks {
                Some(f) => f.rsplit_once('/').map(|(dir, _)| dir.to_string()),
                None => own.clone(),
            },
        })
        .collect()
}

/// Where the timer threads of a configuration run, as the runner places
/// them (it refuses to start when a stanza names a partition that is not
/// there, so each name resolves to the directory it joins): on cgroup v1
/// each timer in its own stanza's `cgroup`, else main's; on v2 every
/// thread in the timers' partition, else main's; without either, the
/// cpuset cgroup this process is in now.
pub(crate) fn config_placements(
    root: &rtshield_sys::Root,
    cfg: &rtshield_config::Config,
) -> Vec<Placement> {
    let found = Partitions::discover(root);
    let v2 = found.hierarchy().is_some_and(|h| h.is_v2());
    let timers_cg = cfg.timers.iter().find_map(|t| t.cgroup);
    let own = found.own_cgroup(root);
    cfg.timers
        .iter()
        .map(|t| {
            let named = if v2 { timers_cg } else { t.cgroup }.or(cfg.main.cgroup);
            Placement {
                cpu: t.cpu,
                cgroup: match named {
                    Some(g) => crate::runner::partition_dir(root, g).map(|(_, dir)| dir),
                    None => own.clone(),
                },
            }
        })
        .collect()
}

/// The `load` tag of a configuration run: `idle` without programs, else
/// the built-in loads' and commands' names joined by `+`.
pub(crate) fn config_load(cfg: &rtshield_config::Config) -> String {
    let mut names: Vec<String> = cfg
        .programs
        .iter()
        .map(|p| match &p.action {
            rtshield_config::Action::Builtin { kind, .. } => kind.name().to_string(),
            rtshield_config::Action::Command(argv) => argv
                .first()
                .map(|a| a.rsplit('/').next().unwrap_or(a).to_string())
                .unwrap_or_else(|| "command".into()),
        })
        .collect();
    names.dedup();
    if names.is_empty() {
        "idle".into()
    } else {
        names.join("+")
    }
}

/// Parse `--tag KEY=VALUE`.
pub fn parse_tag(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected KEY=VALUE"))?;
    if !rtshield_store::is_tag_key(k) {
        return Err(format!(
            "`{k}`: a tag key is 1 to 64 letters, digits, `_`, `-` or `.`"
        ));
    }
    if rtshield_store::RESERVED_TAGS.contains(&k) {
        return Err(format!(
            "`{k}` is set by rtshield (reserved: {}; a campaign sets its own)",
            rtshield_store::RESERVED_TAGS.join(", ")
        ));
    }
    if v.len() > 1024 || v.contains('\0') {
        return Err(format!(
            "tag `{k}`: the value is at most 1024 bytes, without NUL"
        ));
    }
    Ok((k.to_string(), v.to_string()))
}

/// Store `runs` (result directory, result) unless `no_store` (`measure`,
/// `run`, `noise`); prints one line per run, or a warning.
pub fn store_runs(spec: Option<&str>, no_store: bool, runs: &[(&Path, &RunResult)]) {
    if no_store || std::env::var_os(NO_STORE_ENV).is_some_and(|v| !v.is_empty() && v != "0") {
        return;
    }
    let mut st = match rtshield_store::open(spec) {
        Ok(s) => s,
        Err(e) => {
            rtshield_text::errln!("rtshield: warning: the run is not in the results store ({e}); the files are; `rtshield runs import` adds them later");
            return;
        }
    };
    for (dir, r) in runs {
        let src = dir.join("results.json").display().to_string();
        match st.put(r, Some(&src)) {
            Ok(rtshield_store::Put::Conflict { id, uuid }) => rtshield_text::errln!(
                "rtshield: warning: {} not stored: {} already holds a different run with its UUID {uuid} (run {id})",
                dir.display(),
                st.location()
            ),
            Ok(p) => rtshield_text::outln!(
                "stored as run {} ({}) in {}",
                p.id(),
                p.uuid(),
                st.location()
            ),
            Err(e) => rtshield_text::errln!(
                "rtshield: warning: {} not stored ({e}); `rtshield runs import {}` adds it later",
                dir.display(),
                dir.display()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_parse_and_refuse() {
        assert_eq!(
            parse_tag("board=pi3-a").unwrap(),
            ("board".into(), "pi3-a".into())
        );
        assert_eq!(parse_tag("note=a=b").unwrap().1, "a=b");
        assert!(parse_tag("noequals").is_err());
        assert!(parse_tag("=x").is_err());
        assert!(parse_tag("a b=x").is_err());
        assert!(parse_tag("uuid=x").is_err());
        // Adversary round 5, F13: the keys a campaign knows its runs by.
        for k in [
            "campaign_id",
            "cell",
            "repeat",
            "step",
            "campaign",
            "kernel_id",
            "imported_from",
        ] {
            let e = parse_tag(&format!("{k}=x")).unwrap_err();
            assert!(e.contains("is set by rtshield"), "{k}: {e}");
        }
        assert!(parse_tag("load=hell").is_ok() && parse_tag("isolation=none").is_ok());
    }
}
