//! The names of a partition's two cpusets: `rt` and `nrt` unless `create`
//! was given others (partrt's global `-r NAME` / `-n NAME`, rtshield's
//! `--rt-name` / `--nrt-name`). The state file records the directories, so
//! every later command finds them there; `rt` and `nrt` keep naming the
//! two roles whatever the directories are called.

use crate::kernel::Kernel;
use rtshield_isolation::State;
use rtshield_sys::Hierarchy;
use rtshield_vocab::InputError;
use serde::Serialize;

/// The directory names of the shielded and the housekeeping cpuset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetNames {
    /// The shielded set's directory name (`rt`).
    pub rt: String,
    /// The housekeeping set's directory name (`nrt`).
    pub nrt: String,
}

impl Default for SetNames {
    fn default() -> Self {
        SetNames {
            rt: "rt".into(),
            nrt: "nrt".into(),
        }
    }
}

/// Longest name accepted (a cgroup directory name; the kernel allows 255
/// bytes, nobody needs more than this).
const MAX_LEN: usize = 64;

/// One cgroup directory name: letters, digits, `_`, `-` and `.` (not
/// first, so never `.`, `..` or a hidden name), and not a name the kernel
/// uses for the control files in the same directory.
fn check_one(option: &str, name: &str) -> Result<(), InputError> {
    let ok_chars = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    let control = [
        "cpuset.",
        "cgroup.",
        "tasks",
        "notify_on_release",
        "release_agent",
    ]
    .iter()
    .any(|c| name.starts_with(c));
    if name.is_empty()
        || name.len() > MAX_LEN
        || !ok_chars
        || name.starts_with('.')
        || name.starts_with('-')
        || control
    {
        return Err(InputError::new(format!(
            "{option} '{name}': a partition name is 1-{MAX_LEN} letters, digits, '_', '-' or '.' \
             (not first), one cgroup directory below the parent, and not a control file's name"
        )));
    }
    Ok(())
}

impl SetNames {
    /// Names given on the command line (`None`: the default), checked:
    /// each one directory name, and two different ones. `options` names the
    /// two options for the message (`["-r", "-n"]`).
    pub fn new(
        rt: Option<&str>,
        nrt: Option<&str>,
        options: [&str; 2],
    ) -> Result<SetNames, InputError> {
        let d = SetNames::default();
        let rt = rt.map_or(d.rt, str::to_string);
        let nrt = nrt.map_or(d.nrt, str::to_string);
        check_one(options[0], &rt)?;
        check_one(options[1], &nrt)?;
        if rt == nrt {
            return Err(InputError::new(format!(
                "{} and {}: both partitions would be named '{rt}'",
                options[0], options[1]
            )));
        }
        // `rt` and `nrt` always name their own role too.
        if rt == "nrt" || nrt == "rt" {
            return Err(InputError::new(format!(
                "{} '{rt}' / {} '{nrt}': `rt` names the shielded partition and `nrt` the other, \
                 whatever their directories are called; swapping them would confuse every later command",
                options[0], options[1]
            )));
        }
        Ok(SetNames { rt, nrt })
    }

    /// Whether `name` could name a partition's directory.
    pub(crate) fn valid(name: &str) -> bool {
        check_one("", name).is_ok()
    }

    /// The names a state file records (the last component of its two
    /// directories).
    pub(crate) fn of_state(s: &State) -> SetNames {
        let last = |d: &str| d.rsplit('/').next().unwrap_or(d).to_string();
        SetNames {
            rt: last(&s.rt_dir),
            nrt: last(&s.nrt_dir),
        }
    }

    /// The names under the partitioned cgroup `pdir`: its state file's when
    /// it has one the caller may read, else `rt` and `nrt`.
    pub(crate) fn under(k: &Kernel, h: &Hierarchy, pdir: &str) -> SetNames {
        match State::find(&k.root, h, pdir) {
            Ok((_, Some(s))) => SetNames::of_state(&s),
            _ => SetNames::default(),
        }
    }

    /// The role (`rt` or `nrt`) that `which` names: the role itself or the
    /// directory name; `None` for anything else.
    pub(crate) fn role(&self, which: &str) -> Option<&'static str> {
        if which == "rt" || which == self.rt {
            Some("rt")
        } else if which == "nrt" || which == self.nrt {
            Some("nrt")
        } else {
            None
        }
    }

    /// The directory name of `role` (`rt` or `nrt`).
    pub(crate) fn dir_name(&self, role: &str) -> &str {
        if role == "rt" {
            &self.rt
        } else {
            &self.nrt
        }
    }

    /// Whether these are the default names.
    pub fn is_default(&self) -> bool {
        *self == SetNames::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_directory_each_and_differ() {
        let o = ["-r", "-n"];
        assert_eq!(SetNames::new(None, None, o).unwrap(), SetNames::default());
        let n = SetNames::new(Some("rt1"), Some("nrt1"), o).unwrap();
        assert_eq!((n.rt.as_str(), n.nrt.as_str()), ("rt1", "nrt1"));
        for bad in [
            "",
            ".",
            "..",
            ".x",
            "a/b",
            "-r",
            "tasks",
            "cpuset.cpus",
            "a b",
            "é",
        ] {
            let e = SetNames::new(Some(bad), None, o).unwrap_err();
            assert!(e.to_string().starts_with(&format!("-r '{bad}'")), "{e}");
        }
        let e = SetNames::new(Some("x"), Some("x"), o).unwrap_err();
        assert!(e.to_string().contains("both partitions would be named 'x'"));
        assert!(SetNames::new(None, Some("rt"), o).is_err());
        assert!(SetNames::new(Some(&"a".repeat(65)), None, o).is_err());
        assert!(SetNames::new(Some("nrt"), Some("x"), o).is_err());
    }

    #[test]
    fn a_role_is_named_by_itself_or_by_its_directory() {
        let n = SetNames::new(Some("rt1"), Some("nrt1"), ["-r", "-n"]).unwrap();
        assert_eq!(n.role("rt"), Some("rt"));
        assert_eq!(n.role("rt1"), Some("rt"));
        assert_eq!(n.role("nrt1"), Some("nrt"));
        assert_eq!(n.role("nrt"), Some("nrt"));
        assert_eq!(n.role("rtx"), None);
        assert_eq!(n.dir_name("nrt"), "nrt1");
    }
}
