//! The partition state file (rtshield's own format, read by `partition`
//! and `audit`): everything `create` is about to change, written (fsync +
//! rename) before the change is made, so `undo` can always put it back.

use crate::cgroup::Hierarchy;
use crate::Root;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Write};

pub const STATE_DIR: &str = "/run/rtshield";
pub const STATE_VERSION: u32 = 1;

/// Which family a changed file belongs to (for `--skip`/`--with` and reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Knob {
    Cgroup,
    Irq,
    Workqueue,
    Sysctl,
    RtThrottle,
}

/// One file `create` changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub knob: Knob,
    pub path: String,
    /// Exact content before the change; `None` for files inside a cgroup
    /// directory `create` makes (they vanish with it).
    pub old: Option<String>,
    pub new: String,
    /// What `undo` writes when it is not `old` itself (v2
    /// `cgroup.subtree_control` takes `-cpuset`, not the old list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<String>,
}

/// A task `create` moved, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskMove {
    pub tid: u32,
    pub name: String,
    pub from: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Saved, changes under way (a killed create stays here).
    Applying,
    Complete,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub version: u32,
    pub phase: Phase,
    /// Seconds since the epoch.
    pub created_unix: u64,
    pub hierarchy: Hierarchy,
    pub parent: String,
    pub rt_dir: String,
    pub nrt_dir: String,
    pub rt_cpus: String,
    pub nrt_cpus: String,
    /// Cgroup directories made by `create` (removed by `undo`).
    pub dirs: Vec<String>,
    pub files: Vec<FileChange>,
    pub tasks: Vec<TaskMove>,
    /// Knob files the kernel refused to change (path → reason), kept so
    /// `audit` can explain why an IRQ still fires on an rt CPU.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub refused: std::collections::BTreeMap<String, String>,
}

/// Where the state of a partition of `parent` lives: one file per parent,
/// `partition.json` for the hierarchy's root.
pub fn state_path(h: &Hierarchy, parent: &str) -> String {
    if parent == h.mount {
        format!("{STATE_DIR}/partition.json")
    } else {
        let rel = parent[h.mount.len()..].trim_matches('/');
        let safe: String = rel
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("{STATE_DIR}/partition-{safe}.json")
    }
}

impl State {
    pub fn load(root: &Root, path: &str) -> io::Result<Option<State>> {
        match fs::read_to_string(root.path(path)) {
            Ok(s) => serde_json::from_str(&s).map(Some).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{path}: corrupt state file: {e}"),
                )
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io::Error::new(e.kind(), format!("{path}: {e}"))),
        }
    }

    /// Write atomically and durably: temp file, fsync, rename, fsync dir.
    /// A crash leaves either the old or the new state, never half of one.
    pub fn save(&self, root: &Root, path: &str) -> io::Result<()> {
        let p = root.path(path);
        let dir = p.parent().expect("state path has a parent");
        fs::create_dir_all(dir)?;
        let tmp = p.with_extension("json.tmp");
        let mut f = fs::File::create(&tmp)?;
        f.write_all(serde_json::to_string_pretty(self)?.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, &p)?;
        fs::File::open(dir)?.sync_all()?;
        Ok(())
    }

    pub fn remove(root: &Root, path: &str) -> io::Result<()> {
        match fs::remove_file(root.path(path)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}
