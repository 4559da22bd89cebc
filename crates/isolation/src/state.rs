//! The state file: everything `create` is about to change, written (fsync +
//! rename) before the change is made, so `undo` can always put it back.
//!
//! `undo` runs as root and writes what this file says, so the file and its
//! directory are private to root (0600 in a 0700 directory, checked on
//! every read) and every path in it is validated before the first write
//! (see `rtshield_partition::undo::validate`).

use rtshield_safefs::{DirPolicy, SafeDir, SafeError};
use rtshield_sys::Hierarchy;
use rtshield_sys::Root;
use rtshield_vocab::InputError;
use serde::{Deserialize, Serialize};
use std::io;

/// Where every state file lives (one per partition, [`state_path`]).
pub const STATE_DIR: &str = "/run/rtshield";
/// The version [`State::version`] records.
pub const STATE_VERSION: u32 = 1;

/// Which family a changed file belongs to (for `--skip`/`--with` and reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Knob {
    /// A cpuset file (`cpus`, `mems`, `cpu_exclusive`, ...) or a task move.
    Cgroup,
    /// An IRQ's affinity (`/proc/irq/N/smp_affinity_list`, the default).
    Irq,
    /// An unbound workqueue's CPU mask.
    Workqueue,
    /// A sysctl (timer migration, watchdog, vmstat interval, ...).
    Sysctl,
    /// The RT throttling sysctls (`sched_rt_runtime_us`).
    RtThrottle,
}

/// One file `create` changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The family it belongs to.
    pub knob: Knob,
    /// The kernel path (below the tree's root).
    pub path: String,
    /// Exact content before the change; `None` for files inside a cgroup
    /// directory `create` makes (they vanish with it).
    pub old: Option<String>,
    /// What `create` writes.
    pub new: String,
    /// What `undo` writes when it is not `old` itself (v2
    /// `cgroup.subtree_control` takes `-cpuset`, not the old list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<String>,
}

/// A task `create` moved, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskMove {
    /// Its thread (v1) or process (v2) id.
    pub tid: u32,
    /// Its name when it was moved (for reports).
    pub name: String,
    /// The cgroup directory it was in.
    pub from: String,
}

/// How far `create` got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Saved, changes under way (a killed create stays here).
    Applying,
    /// Every change made.
    Complete,
}

/// Everything one partition's `create` changed (or is about to).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// [`STATE_VERSION`] when written.
    pub version: u32,
    /// How far `create` got.
    pub phase: Phase,
    /// Seconds since the epoch.
    pub created_unix: u64,
    /// The cpuset hierarchy it was made in.
    pub hierarchy: Hierarchy,
    /// The parent cgroup directory (resolved `--parent`).
    pub parent: String,
    /// The shielded set's directory.
    pub rt_dir: String,
    /// The housekeeping set's directory.
    pub nrt_dir: String,
    /// The shielded CPUs (list syntax).
    pub rt_cpus: String,
    /// The housekeeping CPUs (list syntax).
    pub nrt_cpus: String,
    /// Cgroup directories made by `create` (removed by `undo`).
    pub dirs: Vec<String>,
    /// Every file changed, in the order written.
    pub files: Vec<FileChange>,
    /// Every task moved.
    pub tasks: Vec<TaskMove>,
    /// Knob files the kernel refused to change (path → reason), kept so
    /// `audit` can explain why an IRQ still fires on an rt CPU.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub refused: std::collections::BTreeMap<String, String>,
}

/// Largest state file read (a state lists a few thousand changes at most).
pub(crate) const STATE_LIMIT: u64 = 16 << 20;

/// Where the state of a partition of `parent` lives: one file per parent,
/// `partition.json` for the hierarchy's root, `partition-NAME.json` below
/// it, NAME being the path below the mount percent-encoded (letters,
/// digits and `-` kept, every other byte `%XX`). The encoding is
/// injective: `a-b`, `a_b` and `a/b` get three different files.
pub fn state_path(h: &Hierarchy, parent: &str) -> String {
    match rel_parent(h, parent) {
        None => format!("{STATE_DIR}/partition.json"),
        Some(rel) => format!("{STATE_DIR}/partition-{}.json", encode(rel)),
    }
}

/// The name versions before the injective encoding used (every
/// non-alphanumeric character became `_`; `a-b`, `a_b` and `a/b`
/// collided). Still read, but only for the parent recorded inside.
pub(crate) fn legacy_state_path(h: &Hierarchy, parent: &str) -> String {
    match rel_parent(h, parent) {
        None => format!("{STATE_DIR}/partition.json"),
        Some(rel) => {
            let safe: String = rel
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            format!("{STATE_DIR}/partition-{safe}.json")
        }
    }
}

fn rel_parent<'a>(h: &Hierarchy, parent: &'a str) -> Option<&'a str> {
    let rel = parent
        .strip_prefix(h.mount.as_str())
        .unwrap_or(parent)
        .trim_matches('/');
    (!rel.is_empty()).then_some(rel)
}

fn encode(rel: &str) -> String {
    let mut out = String::with_capacity(rel.len());
    for b in rel.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The inverse of [`encode`]; `None` for a name it cannot have made.
fn decode(enc: &str) -> Option<String> {
    let b = enc.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else if b[i].is_ascii_alphanumeric() || b[i] == b'-' {
            out.push(b[i]);
            i += 1;
        } else {
            return None;
        }
    }
    String::from_utf8(out).ok()
}

/// The `--parent`s named by the state files `names` (`None` for the
/// hierarchy's root), from the file names alone; a name this version
/// cannot have made (an older version's `_` encoding) names none.
pub(crate) fn parents(names: &[String]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for n in names {
        if n == "partition.json" {
            out.push(None);
        } else if let Some(enc) = n
            .strip_prefix("partition-")
            .and_then(|r| r.strip_suffix(".json"))
        {
            if let Some(p) = decode(enc) {
                out.push(Some(p));
            }
        }
    }
    out
}

/// The names of every state file in [`STATE_DIR`] (`partition*.json`),
/// whatever version named them.
pub(crate) fn state_files(root: &Root) -> Vec<String> {
    let mut names = root.read_dir_names(STATE_DIR).unwrap_or_default();
    names.retain(|n| n.starts_with("partition") && n.ends_with(".json"));
    names
}

/// `/run/rtshield/partition.json` → (`/run/rtshield`, `partition.json`).
fn split(path: &str) -> (&str, &str) {
    match path.rsplit_once('/') {
        Some(("", name)) => ("/", name),
        Some((dir, name)) => (dir, name),
        None => (".", path),
    }
}

/// A refusal (unsafe state file or directory, bad name, oversize or
/// corrupt file) is the user's input error: exit 2.
fn state_error(e: SafeError) -> anyhow::Error {
    let input = e.is_refusal()
        || matches!(
            e.io_kind(),
            Some(io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput)
        );
    if input {
        InputError::new(e.to_string()).into()
    } else {
        anyhow::Error::new(e)
    }
}

impl State {
    /// Read the state file `path` (below `root`). It must be a regular
    /// file (not a symlink) owned by root — or by the effective uid, which
    /// is root in production and the test's uid on fake trees — of mode
    /// 0600 or stricter, in a directory of mode 0700 with the same kind of
    /// owner (an older version's 0755 directory is tightened to 0700, a
    /// group/world-writable one refused; [`SafeDir::open_private`]).
    /// Anything else is refused ([`InputError`]): a planted state file
    /// would make `undo` write what it says as root. `Ok(None)`: no file.
    pub fn load(root: &Root, path: &str) -> anyhow::Result<Option<State>> {
        let (dir, name) = split(path);
        let d = match SafeDir::open_private(&root.path(dir)) {
            Ok(d) => d,
            Err(e) if e.io_kind() == Some(io::ErrorKind::NotFound) => return Ok(None),
            Err(e) => return Err(state_error(e)),
        };
        let bytes = match d.read_private(name, STATE_LIMIT) {
            Ok(b) => b,
            Err(e) if e.io_kind() == Some(io::ErrorKind::NotFound) => return Ok(None),
            Err(e) => return Err(state_error(e)),
        };
        serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            InputError::new(format!(
                "{path}:{}:{}: corrupt state file: {e}",
                e.line(),
                e.column()
            ))
            .into()
        })
    }

    /// The state of the partition of `parent`, and its file: the
    /// injectively named file, or a file of an older version's naming if
    /// it records exactly this parent. A state file that records another
    /// parent than its name says is refused.
    pub fn find(
        root: &Root,
        h: &Hierarchy,
        parent: &str,
    ) -> anyhow::Result<(String, Option<State>)> {
        let path = state_path(h, parent);
        if let Some(s) = State::load(root, &path)? {
            if s.parent != parent {
                return Err(InputError::new(format!(
                    "{path}: records the partition of {}, not of {parent}: refusing to use it",
                    s.parent
                ))
                .into());
            }
            return Ok((path, Some(s)));
        }
        let old = legacy_state_path(h, parent);
        if old != path {
            if let Some(s) = State::load(root, &old)? {
                if s.parent == parent {
                    return Ok((old, Some(s)));
                }
            }
        }
        Ok((path, None))
    }

    /// Write atomically and durably through [`SafeDir`]: an unpredictable
    /// temporary name (`O_EXCL|O_NOFOLLOW`), mode 0600, fsync, `renameat`,
    /// directory fsync. A crash leaves either the old or the new state.
    pub fn save(&self, root: &Root, path: &str) -> io::Result<()> {
        let (dir, name) = split(path);
        let d = SafeDir::open_private_or_create(&root.path(dir))?;
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        d.write_with_mode(name, 0o600, |w| w.write_all(text.as_bytes()))?;
        Ok(())
    }

    /// Remove the state file `path` (a missing file or directory is not
    /// an error; a symlink is removed, never followed).
    pub fn remove(root: &Root, path: &str) -> io::Result<()> {
        let (dir, name) = split(path);
        match SafeDir::open(&root.path(dir), DirPolicy::AllowUnsafe) {
            Ok(d) => Ok(d.remove_file(name)?),
            Err(e) if e.io_kind() == Some(io::ErrorKind::NotFound) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtshield_sys::CgroupKind;

    #[test]
    fn names_are_injective_and_legacy_names_kept() {
        let h = Hierarchy {
            kind: CgroupKind::V2,
            mount: "/sys/fs/cgroup".into(),
        };
        let p = |r: &str| state_path(&h, &h.resolve(Some(r)));
        assert_eq!(p(""), "/run/rtshield/partition.json");
        for parent in ["a-b", "a_b", "a/b", "lab/x%y"] {
            assert_eq!(decode(&encode(parent)).as_deref(), Some(parent));
        }
        assert_eq!(decode("a_b"), None);
        assert_eq!(p("demo"), "/run/rtshield/partition-demo.json");
        assert_eq!(p("a-b"), "/run/rtshield/partition-a-b.json");
        assert_eq!(p("a_b"), "/run/rtshield/partition-a%5Fb.json");
        assert_eq!(p("a/b"), "/run/rtshield/partition-a%2Fb.json");
        assert_eq!(p("a%2Fb"), "/run/rtshield/partition-a%252Fb.json");
        let l = |r: &str| legacy_state_path(&h, &h.resolve(Some(r)));
        assert_eq!(l("a-b"), l("a_b"));
        assert_eq!(l("a/b"), "/run/rtshield/partition-a_b.json");
    }
}
