//! Whether a path given through the environment (`RTSHIELD_SYSROOT`,
//! `RTSHIELD_STORE`, as `sudo -E` passes them) can be trusted by this
//! process: nobody but root and the caller can have put anything on it,
//! nor change it later.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// How many symbolic links a path may go through (as the kernel's 40).
const MAX_LINKS: usize = 40;

/// Why `path` cannot be trusted, if it cannot. Every existing component,
/// from `/` down — and, for a component that is a symbolic link, every
/// component of what it points to — must be owned by root or by the
/// effective uid (the caller). Directories above the last existing one
/// must be writable by no one else, unless sticky (`/tmp`: others may add
/// entries but not rename or remove the caller's). The last existing
/// component must be writable by no one else, sticky or not. `..` is
/// refused. A missing tail is allowed (a store created later); the
/// caller that needs `path` itself to exist checks that.
pub fn trusted_path(path: &Path) -> Result<(), String> {
    if path.components().any(|c| c == Component::ParentDir) {
        return Err("contains `..`".into());
    }
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?
            .join(path)
    };
    let mut links = 0;
    check_walk(&abs, &mut links)
}

/// Walk `abs` component by component with `lstat`, checking each; follow
/// a trusted link by checking its target the same way.
fn check_walk(abs: &Path, links: &mut usize) -> Result<(), String> {
    let me = rustix::process::geteuid().as_raw();
    let mut cur = PathBuf::from("/");
    let comps: Vec<_> = abs.components().collect();
    let mut last_existing: Option<(PathBuf, u32)> = None;
    for (i, c) in comps.iter().enumerate() {
        match c {
            Component::RootDir | Component::CurDir => continue,
            Component::Normal(n) => cur.push(n),
            _ => return Err(format!("{}: unexpected component", abs.display())),
        }
        let md = match std::fs::symlink_metadata(&cur) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(format!("{}: {e}", cur.display())),
        };
        let uid = md.uid();
        if uid != 0 && uid != me {
            return Err(format!(
                "{} is owned by uid {uid}, not by root or you (uid {me})",
                cur.display()
            ));
        }
        if md.file_type().is_symlink() {
            *links += 1;
            if *links > MAX_LINKS {
                return Err(format!("{}: too many symbolic links", abs.display()));
            }
            let target = std::fs::read_link(&cur).map_err(|e| format!("{}: {e}", cur.display()))?;
            // `cur`'s directory holds no link (a link restarts the walk),
            // so leading `..`s of a relative target climb real directories.
            let mut rest = cur.parent().unwrap_or(Path::new("/")).to_path_buf();
            let mut named = false;
            for t in target.components() {
                match t {
                    Component::RootDir => rest = PathBuf::from("/"),
                    Component::ParentDir if !named => {
                        rest.pop();
                    }
                    Component::ParentDir => {
                        return Err(format!(
                            "{}: a symbolic link whose target has `..` after a name",
                            cur.display()
                        ))
                    }
                    Component::Normal(n) => {
                        named = true;
                        rest.push(n);
                    }
                    _ => {}
                }
            }
            for c in &comps[i + 1..] {
                rest.push(c);
            }
            return check_walk(&rest, links);
        }
        last_existing = Some((cur.clone(), md.mode()));
        let writable_by_others = md.mode() & 0o022 != 0;
        let sticky = md.mode() & 0o1000 != 0;
        if writable_by_others && !sticky && md.is_dir() {
            return Err(format!(
                "{} is mode {:o}: others may replace what is below it",
                cur.display(),
                md.mode() & 0o7777
            ));
        }
    }
    if let Some((p, mode)) = last_existing {
        if mode & 0o022 != 0 {
            return Err(format!(
                "{} is mode {:o}: others may write into it",
                p.display(),
                mode & 0o7777
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn own_private_dirs_and_missing_tails_are_trusted() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(trusted_path(d.path()), Ok(()));
        assert_eq!(trusted_path(&d.path().join("not/yet")), Ok(()));
        // Through a link of ours to a dir of ours.
        std::fs::create_dir(d.path().join("real")).unwrap();
        std::os::unix::fs::symlink("real", d.path().join("link")).unwrap();
        assert_eq!(trusted_path(&d.path().join("link")), Ok(()));
    }

    #[test]
    fn writable_by_others_and_dotdot_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("tree");
        std::fs::create_dir(&t).unwrap();
        std::fs::set_permissions(&t, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = trusted_path(&t).unwrap_err();
        assert!(e.contains("mode 777"), "{e}");
        // Below it: anyone could have swapped what is there.
        let e = trusted_path(&t.join("sub")).unwrap_err();
        assert!(e.contains("mode 777"), "{e}");
        // Sticky (like /tmp): fine above, not as the last component.
        std::fs::set_permissions(&t, std::fs::Permissions::from_mode(0o1777)).unwrap();
        std::fs::create_dir(t.join("mine")).unwrap();
        assert_eq!(trusted_path(&t.join("mine")), Ok(()));
        assert!(trusted_path(&t).is_err());
        assert_eq!(
            trusted_path(&d.path().join("a/../b")),
            Err("contains `..`".into())
        );
        // A file others may write.
        let f = d.path().join("runs.db");
        std::fs::write(&f, "").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(trusted_path(&f).unwrap_err().contains("mode 666"));
    }
}
