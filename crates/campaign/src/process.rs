//! The processes a campaign starts around its cells: `rtshield partition
//! create`/`undo` (the partition of a cell, always undone), the cell's
//! measuring child (told to stop on any stop signal, waited for, and
//! stopped by the kernel if the campaign dies), and an external `cmd:`
//! load (killed with its whole process group).

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

/// The signal that asked the campaign to stop (0: none): any of
/// `rtshield_signals::STOP_SIGNALS` (installed by [`crate::run`]).
pub(crate) fn stopped_by() -> i32 {
    rtshield_signals::received().unwrap_or(0)
}

/// A partition made for one cell; undone when dropped.
pub(crate) struct PartitionGuard<'a> {
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
    pub(crate) fn create(&mut self, cpus: &str, with: &[String]) -> anyhow::Result<ExitStatus> {
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

    /// `rtshield partition undo [--parent P]`, if made. The error says
    /// what is left and the command that finishes the undo.
    pub(crate) fn undo(&mut self) -> Result<(), String> {
        if !self.active {
            return Ok(());
        }
        self.active = false;
        let mut cmd = Command::new(self.exe);
        cmd.args(["partition", "undo"]);
        if let Some(p) = &self.parent {
            cmd.args(["--parent", p]);
        }
        let finish = format!("run `{}` to finish it", self.command());
        match cmd.stderr(Stdio::inherit()).output() {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => {
                // The undo's own account of what it could not restore.
                let text = String::from_utf8_lossy(&o.stdout);
                let left: Vec<&str> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| {
                        l.starts_with("rmdir ") || l.starts_with("task ") || l.starts_with('/')
                    })
                    .collect();
                Err(format!(
                    "`partition undo` exited with {}{}; {finish}",
                    o.status,
                    if left.is_empty() {
                        String::new()
                    } else {
                        format!(", left: {}", left.join("; "))
                    }
                ))
            }
            Err(e) => Err(format!("cannot run `partition undo`: {e}; {finish}")),
        }
    }

    /// The command that undoes this partition, to paste into a shell.
    pub(crate) fn command(&self) -> String {
        let mut words = vec![
            shell_word(&self.exe.display().to_string()),
            "partition".into(),
            "undo".into(),
        ];
        if let Some(p) = &self.parent {
            words.push("--parent".into());
            words.push(shell_word(p));
        }
        words.join(" ")
    }
}

/// `s` as one shell word: as is when it holds only characters no shell
/// treats specially, else single-quoted.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=+,@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

impl Drop for PartitionGuard<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.undo() {
            rtshield_text::errln!("rtshield: campaign: the partition of its cell is left: {e}");
        }
    }
}

/// Start `cmd` with `input` on its standard input (closed after it).
pub(crate) fn spawn_with_input(cmd: &mut Command, input: &[u8]) -> std::io::Result<Child> {
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

/// Have the kernel send the cell's child SIGTERM if the campaign dies
/// (even by SIGKILL), so it ends and writes its results instead of
/// measuring on, orphaned (and into a partition no one will undo).
pub(crate) fn stop_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid here, in the parent; between fork and exec the
    // closure only makes async-signal-safe calls (prctl, getppid, kill).
    let parent = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
            // The campaign died before the prctl: stop now.
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGTERM);
            }
            Ok(())
        });
    }
}

/// Wait for a cell's child; on a stop signal, pass it on once and keep
/// waiting: the child writes its results, then ends. (The child counts on
/// this: it ignores a second signal, which a Ctrl-C sent to the whole
/// terminal group plus this one would otherwise be.)
pub(crate) fn wait_child(mut child: Child) -> std::io::Result<ExitStatus> {
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
pub(crate) struct ExternalLoad(pub Child);

impl Drop for ExternalLoad {
    fn drop(&mut self) {
        // SAFETY: the group is the one we created for this child.
        unsafe { libc::kill(-(self.0.id() as libc::pid_t), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// Start an external load's command line with `/bin/sh -c`.
pub(crate) fn start_external(cmdline: &str) -> std::io::Result<ExternalLoad> {
    use std::os::unix::process::CommandExt;
    let child = Command::new("/bin/sh")
        .args(["-c", cmdline])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    Ok(ExternalLoad(child))
}

/// Ends every descendant of the campaign still running when dropped (the
/// campaign returned, maybe by an error in the middle of a cell, before
/// the cell's own sweep).
pub(crate) struct FinalSweep;

impl Drop for FinalSweep {
    fn drop(&mut self) {
        if let Some(s) = rtshield_load::end_descendants_summary() {
            rtshield_text::errln!("rtshield: campaign: {s}");
        }
    }
}
