//! The processes a campaign starts around its cells: `rtshield partition
//! create`/`undo` (the partition of a cell, always undone), the cell's
//! measuring child (told to stop on SIGINT/SIGTERM, waited for), and an
//! external `cmd:` load (killed with its whole process group).

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

/// The signal that asked the campaign to stop (0: none): SIGINT and
/// SIGTERM, through `rtshield-signals` (installed by [`crate::run`]).
pub fn stopped_by() -> i32 {
    rtshield_signals::received().unwrap_or(0)
}

/// A partition made for one cell; undone when dropped.
pub struct PartitionGuard<'a> {
    /// The rtshield binary.
    pub exe: &'a Path,
    /// The campaign's `[partition] parent`.
    pub parent: Option<String>,
    /// Made (or being made): to be undone.
    pub active: bool,
}

impl PartitionGuard<'_> {
    /// `rtshield partition create CPUS [--parent P] [--with W]...`: active
    /// before the child runs, so a create killed half-way is still undone
    /// (undo is idempotent).
    pub fn create(&mut self, cpus: &str, with: &[String]) -> anyhow::Result<ExitStatus> {
        let mut cmd = Command::new(self.exe);
        cmd.args(["partition", "create", cpus]);
        if let Some(p) = &self.parent {
            cmd.args(["--parent", p]);
        }
        for w in with {
            cmd.args(["--with", w]);
        }
        self.active = true;
        Ok(cmd.stdout(Stdio::null()).status()?)
    }

    /// `rtshield partition undo [--parent P]`, if made.
    pub fn undo(&mut self) -> Result<(), String> {
        if !self.active {
            return Ok(());
        }
        self.active = false;
        let mut cmd = Command::new(self.exe);
        cmd.args(["partition", "undo"]);
        if let Some(p) = &self.parent {
            cmd.args(["--parent", p]);
        }
        match cmd.stdout(Stdio::null()).status() {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(format!("`rtshield partition undo` exited with {s}")),
            Err(e) => Err(format!("cannot run rtshield partition undo: {e}")),
        }
    }
}

impl Drop for PartitionGuard<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.undo() {
            rtshield_text::errln!("rtshield: campaign: {e}: run `rtshield partition undo` by hand");
        }
    }
}

/// Start `cmd` with `input` on its standard input (closed after it).
pub fn spawn_with_input(cmd: &mut Command, input: &[u8]) -> std::io::Result<Child> {
    let mut child = cmd.stdin(Stdio::piped()).spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let written = stdin.write_all(input);
    drop(stdin);
    if let Err(e) = written {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    Ok(child)
}

/// Wait for a cell's child; on SIGINT/SIGTERM, pass the signal on once.
pub fn wait_child(mut child: Child) -> std::io::Result<ExitStatus> {
    let mut forwarded = false;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(s);
        }
        let sig = stopped_by();
        if sig != 0 && !forwarded {
            // The child may not have seen it (kill -TERM to us only):
            // pass on the same signal, so its end reason names it.
            // SAFETY: signalling our own child by pid.
            unsafe { libc::kill(child.id() as libc::pid_t, sig) };
            forwarded = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An external load (`cmd:…`) in its own process group, killed as a group.
pub struct ExternalLoad(pub Child);

impl Drop for ExternalLoad {
    fn drop(&mut self) {
        // SAFETY: the group is the one we created for this child.
        unsafe { libc::kill(-(self.0.id() as libc::pid_t), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// Start an external load's command line with `/bin/sh -c`.
pub fn start_external(cmdline: &str) -> std::io::Result<ExternalLoad> {
    use std::os::unix::process::CommandExt;
    let child = Command::new("/bin/sh")
        .args(["-c", cmdline])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    Ok(ExternalLoad(child))
}
