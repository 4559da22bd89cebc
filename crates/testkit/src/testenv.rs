//! Preconditions of tests that need more than a build machine (root, a
//! cgroup v1 mount, two CPUs, an installed tool). Without the precondition
//! a test is skipped with a visible `SKIP` line, unless the environment
//! says the machine is meant to have it (`RTSHIELD_REQUIRE_ROOT=1`, set by
//! `.ci/run`): then a missing precondition fails the test, so a CI run can
//! never pass green by silently skipping its live tests.
//!
//! Used by tests only; nothing here touches the system.

/// The variable that turns every skip into a failure.
pub(crate) const REQUIRE_VAR: &str = "RTSHIELD_REQUIRE_ROOT";

/// Whether skips are failures (`RTSHIELD_REQUIRE_ROOT` set to anything but
/// empty or `0`).
pub(crate) fn strict() -> bool {
    std::env::var_os(REQUIRE_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// `true` when `met`; otherwise prints `SKIP: why` and returns `false`, or
/// panics under [`strict`].
#[track_caller]
pub fn require(met: bool, why: &str) -> bool {
    if met {
        return true;
    }
    if strict() {
        panic!("{REQUIRE_VAR} is set but this test cannot run: {why}");
    }
    eprintln!("SKIP: {why}");
    false
}

/// [`require`] that the process runs as root (effective uid 0).
#[track_caller]
pub fn require_root(why: &str) -> bool {
    require(rtshield_sys::is_root(), &format!("not root ({why})"))
}

/// [`require`] that `cmd --version` (or `arg`) starts: the tool is installed.
#[track_caller]
pub fn require_tool(cmd: &str, arg: &str) -> bool {
    let status = std::process::Command::new(cmd)
        .arg(arg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    require(started(&status), &format!("{cmd} is not installed"))
}

/// The Python interpreter tests run: the distribution's (`/usr/bin/python3`,
/// where `.ci/run` installs the modules the tests use) before whatever
/// `python3` comes first in `PATH` (a pyenv or virtualenv shim without them).
pub fn python3() -> &'static str {
    if std::path::Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// Whether a child was really started. Under qemu-user the failed `exec`
/// is not reported through std's close-on-exec pipe: the spawn "succeeds"
/// and the child exits 127 (the shell's "command not found"), so that code
/// counts as not started too.
fn started(status: &std::io::Result<std::process::ExitStatus>) -> bool {
    matches!(status, Ok(s) if s.code() != Some(127))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_met_precondition_always_runs() {
        assert!(require(true, "never printed"));
    }

    #[test]
    fn an_unmet_precondition_skips_or_fails_by_the_variable() {
        // The variable is read, not set: tests run in parallel threads.
        let r = std::panic::catch_unwind(|| require(false, "unmet on purpose"));
        if strict() {
            assert!(r.is_err(), "strict mode must fail");
        } else {
            assert_eq!(r.ok(), Some(false));
        }
    }

    #[test]
    fn exit_127_counts_as_not_started() {
        use std::os::unix::process::ExitStatusExt;
        // 127 << 8: a wait status of "exited with code 127".
        assert!(!started(&Ok(std::process::ExitStatus::from_raw(127 << 8))));
        assert!(started(&Ok(std::process::ExitStatus::from_raw(1 << 8))));
        assert!(!started(&Err(std::io::ErrorKind::NotFound.into())));
    }

    #[test]
    fn a_missing_tool_is_unmet() {
        let r = std::panic::catch_unwind(|| {
            require_tool("/nonexistent/rtshield-no-such-tool", "--version")
        });
        assert!(r.is_err() || r.ok() == Some(false));
    }
}
