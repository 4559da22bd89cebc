//! Commands that run rtshield from a test, in an environment the test
//! owns. Every command gets a private, empty home ([`isolate`]): `HOME`
//! and the XDG directories point into a fresh 0700 directory of its own,
//! `RTSHIELD_STORE` is removed and `RTSHIELD_NO_STORE=1` set, so a run
//! never reaches the user's results store (`~/.local/share/rtshield`) or
//! configuration, whatever the test forgets. A test that wants a store
//! gives `--store` or sets the variables after.
//!
//! The child also dies with the test (`PR_SET_PDEATHSIG(SIGKILL)`): a
//! killed test leaves no measurement running; what the killed rtshield
//! leaves in the kernel is the reaper's ([`crate::reaper`]).

use crate::reaper::{self, Object, Registration};
use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The variables that name a user's files, all pointed into the private
/// home (relative to it).
pub const HOME_VARS: &[(&str, &str)] = &[
    ("HOME", ""),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_STATE_HOME", ".local/state"),
];

/// This process's directory of private homes
/// (`$TMPDIR/rtshield-test-home-<pid>`), registered for the reaper and
/// removed at exit.
fn homes() -> &'static Path {
    static HOMES: OnceLock<(PathBuf, Registration)> = OnceLock::new();
    &HOMES
        .get_or_init(|| {
            let d = std::env::temp_dir().join(format!("rtshield-test-home-{}", std::process::id()));
            let r = reaper::register(Object::Dir(d.clone()));
            // A directory of a dead process with our pid: the reaper
            // removes it, but not while that registration is ours.
            let _ = std::fs::remove_dir_all(&d);
            crate::reaper::private_dir(&d)
                .unwrap_or_else(|e| panic!("private test home {}: {e}", d.display()));
            // SAFETY: registering a plain `extern "C" fn` without state.
            unsafe { libc::atexit(remove_homes_at_exit) };
            (d, r)
        })
        .0
}

/// At exit (statics are never dropped): the homes. Their registry entry,
/// naming a directory now gone, is dropped by the next reaper. (A forked
/// child has another pid, hence another directory name.)
extern "C" fn remove_homes_at_exit() {
    let d = std::env::temp_dir().join(format!("rtshield-test-home-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(d);
}

/// A fresh private home for one command (`<homes>/<n>`, 0700, empty).
pub fn private_home() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let d = homes().join(N.fetch_add(1, Ordering::Relaxed).to_string());
    crate::reaper::private_dir(&d)
        .unwrap_or_else(|e| panic!("private test home {}: {e}", d.display()));
    d
}

/// Give `c` a private home, no store, and death with the test (see the
/// module documentation). Returns `c`, to chain.
pub fn isolate(c: &mut Command) -> &mut Command {
    reaper::reap_once();
    let home = private_home();
    for (var, rel) in HOME_VARS {
        c.env(var, home.join(rel));
    }
    c.env("RTSHIELD_NO_STORE", "1").env_remove("RTSHIELD_STORE");
    // SAFETY: prctl is async-signal-safe; nothing else runs in the child.
    unsafe {
        c.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            Ok(())
        })
    };
    c
}

/// The rtshield binary `exe`, isolated ([`isolate`]).
pub fn rtshield(exe: impl AsRef<OsStr>) -> Command {
    let mut c = Command::new(exe);
    isolate(&mut c);
    c
}

/// rtshield run through a wrapper (`ip netns exec NS`, `setpriv ...`):
/// `wrapper[0] wrapper[1..] exe`, isolated (the wrapper passes the
/// environment on).
pub fn wrapped(exe: impl AsRef<OsStr>, wrapper: &[&str]) -> Command {
    let mut c = Command::new(wrapper[0]);
    c.args(&wrapper[1..]).arg(exe);
    isolate(&mut c);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_gets_its_own_empty_home_and_no_store() {
        let mut a = Command::new("env");
        isolate(&mut a);
        let out = String::from_utf8(a.output().unwrap().stdout).unwrap();
        let var = |k: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .map(PathBuf::from)
        };
        let home = var("HOME").unwrap();
        assert!(home.starts_with(homes()), "{out}");
        assert_eq!(var("XDG_DATA_HOME"), Some(home.join(".local/share")));
        assert_eq!(var("RTSHIELD_NO_STORE").as_deref(), Some(Path::new("1")));
        assert_eq!(var("RTSHIELD_STORE"), None);
        let mut b = Command::new("true");
        isolate(&mut b);
        let other = b
            .get_envs()
            .find(|(k, _)| *k == "HOME")
            .and_then(|(_, v)| v)
            .map(PathBuf::from)
            .unwrap();
        assert_ne!(home, other, "two commands share a home");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&home).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn a_wrapper_runs_the_binary_with_the_same_environment() {
        let c = wrapped("/bin/echo", &["env", "-u", "NOTHING"]);
        assert_eq!(c.get_program(), "env");
        let args: Vec<_> = c.get_args().collect();
        assert_eq!(args, ["-u", "NOTHING", "/bin/echo"]);
        assert!(c.get_envs().any(|(k, _)| k == "XDG_DATA_HOME"));
    }
}
