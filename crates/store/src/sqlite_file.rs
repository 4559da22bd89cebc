//! Where a SQLite store lives, checked, and how SQLite is made to open it
//! through the checked directory descriptor.
//!
//! SQLite opens its database and then, by name, the `-wal`, `-shm` and
//! `-journal` files beside it; it also turns the path into a full one by
//! reading every symbolic link on it (`unixFullPathname`). So a store root
//! opens must be root's own:
//!
//! - its directory is opened through the path layer (no link, no `..`)
//!   and must be owned by the caller and writable by nobody else (a sticky
//!   `/tmp` is not enough: another user could plant a `-wal` or a hot
//!   `-journal` there);
//! - the database and any `-wal`, `-shm`, `-journal` present must be
//!   regular files of the caller, writable by nobody else, with one link;
//!   a new database is created `O_EXCL|O_NOFOLLOW`, mode 0600;
//! - SQLite is given `/proc/self/fd/N/NAME`, N the directory descriptor:
//!   the kernel resolves it to the directory already checked, whatever the
//!   path now leads to. A VFS that is the unix one except for
//!   `xFullPathname` keeps SQLite from rewriting that name into the
//!   directory's textual path (which would be resolved again);
//! - after SQLite opened it, the database it holds must be the file that
//!   was checked (device and inode), and its companions pass the checks.

use crate::StoreError;
use rtshield_safefs::{DirPolicy, FileId, SafeDir, SafeError};
use rusqlite::ffi;
use std::ffi::{c_char, c_int, CStr};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::OnceLock;

/// The name our VFS is registered under.
const VFS_NAME: &CStr = c"rtshield-dirfd";

/// The companion files SQLite may create beside a database.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// A store's directory, checked and held open, and the database's name.
#[derive(Debug)]
pub(crate) struct StorePlace {
    dir: SafeDir,
    name: String,
    /// The database file as checked.
    id: FileId,
}

impl StorePlace {
    /// Check (and create if missing: directory 0700, database 0600) the
    /// store at `path`; `source` names where the path came from
    /// (`--store`, `RTSHIELD_STORE`, `HOME`...) for the messages.
    pub(crate) fn open(path: &Path, source: &str) -> Result<StorePlace, StoreError> {
        let refused = |e: SafeError| refusal(path, source, &e.why());
        let (dir_path, name) = rtshield_safefs::file_parts(path).map_err(refused)?;
        let dir = SafeDir::open_or_create(&dir_path, 0o700, DirPolicy::Strict).map_err(|e| {
            if e.is_refusal() {
                refused(e)
            } else {
                StoreError::new(format!("{source}: {e}"))
            }
        })?;
        let (uid, mode) = dir.owner_mode().map_err(refused)?;
        let me = rustix::process::geteuid().as_raw();
        if uid != me || mode & 0o022 != 0 {
            return Err(refusal(
                path,
                source,
                &format!(
                    "its directory {} is owned by uid {uid}, mode {mode:o}: a store must be in \
                     a directory only you (uid {me}) can write, since SQLite creates its -wal, \
                     -shm and -journal files there by name",
                    dir_path.display()
                ),
            ));
        }
        let id = match dir.own_file(&name).map_err(refused)? {
            Some(id) => id,
            None => {
                match dir.create_new_file(&name, 0o600, false) {
                    Ok(_) => {}
                    // Another rtshield created it meanwhile: checked below.
                    Err(e) if e.io_kind() == Some(std::io::ErrorKind::AlreadyExists) => {}
                    Err(e) => return Err(StoreError::new(format!("{source}: {e}"))),
                }
                dir.own_file(&name)
                    .map_err(refused)?
                    .ok_or_else(|| refusal(path, source, "it vanished while being created"))?
            }
        };
        let place = StorePlace { dir, name, id };
        place.check_companions(path, source)?;
        Ok(place)
    }

    /// Every `-wal`, `-shm`, `-journal` present passes [`SafeDir::own_file`].
    pub(crate) fn check_companions(&self, path: &Path, source: &str) -> Result<(), StoreError> {
        for suffix in COMPANIONS {
            let n = format!("{}{suffix}", self.name);
            self.dir
                .own_file(&n)
                .map_err(|e| refusal(path, source, &format!("{n}: {}", e.why())))?;
        }
        Ok(())
    }

    /// The name to give SQLite: the database in the held directory, by its
    /// descriptor. The `/proc/self/fd` entry must lead to that directory
    /// (a `/proc` that is not the kernel's is refused).
    pub(crate) fn sqlite_name(&self) -> Result<String, StoreError> {
        let fd = self.dir.fd().as_fd().as_raw_fd();
        let via = format!("{}/{fd}", rtshield_sys::kpath::SELF_FD);
        let d = self.dir.id().map_err(|e| StoreError::new(e.to_string()))?;
        match std::fs::metadata(&via) {
            Ok(m) if m.dev() == d.dev && m.ino() == d.ino => Ok(format!("{via}/{}", self.name)),
            _ => Err(StoreError::new(format!(
                "{}: cannot open the store: {via} does not lead to its directory (is /proc mounted?)",
                self.dir.display_path(&self.name).display()
            ))),
        }
    }

    /// After SQLite opened the database: it is the file checked, and the
    /// files SQLite made beside it are the caller's own.
    pub(crate) fn verify_after_open(&self, path: &Path, source: &str) -> Result<(), StoreError> {
        let now = self
            .dir
            .own_file(&self.name)
            .map_err(|e| refusal(path, source, &e.why()))?;
        if now != Some(self.id) {
            return Err(refusal(path, source, "it was replaced while being opened"));
        }
        self.check_companions(path, source)
    }
}

/// A refusal of the store at `path` (exit 2 where the caller maps it).
fn refusal(path: &Path, source: &str, why: &str) -> StoreError {
    StoreError::bad_input(format!(
        "{source} {}: refusing to open the store: {why}",
        path.display()
    ))
}

/// The unix VFS's own `xFullPathname`, called for every other name.
static UNIX_FULL_PATHNAME: OnceLock<FullPathname> = OnceLock::new();

type FullPathname =
    unsafe extern "C" fn(*mut ffi::sqlite3_vfs, *const c_char, c_int, *mut c_char) -> c_int;

/// `xFullPathname` that leaves a `/proc/self/fd/N/NAME` name as it is (the
/// unix VFS would replace the magic link by the text it reads from it).
unsafe extern "C" fn full_pathname(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n_out: c_int,
    out: *mut c_char,
) -> c_int {
    // SAFETY: SQLite passes a NUL-terminated name.
    let bytes = unsafe { CStr::from_ptr(name) }.to_bytes_with_nul();
    if bytes
        .strip_prefix(rtshield_sys::kpath::SELF_FD.as_bytes())
        .is_some_and(|rest| rest.starts_with(b"/"))
    {
        if bytes.len() > n_out.max(0) as usize {
            return ffi::SQLITE_CANTOPEN;
        }
        // SAFETY: `out` holds `n_out` bytes (checked above).
        unsafe { std::ptr::copy_nonoverlapping(name, out, bytes.len()) };
        return ffi::SQLITE_OK;
    }
    match UNIX_FULL_PATHNAME.get() {
        // SAFETY: the unix VFS's own function, with the arguments SQLite gave.
        Some(f) => unsafe { f(vfs, name, n_out, out) },
        None => ffi::SQLITE_ERROR,
    }
}

/// Register (once) the VFS SQLite opens stores through: the unix VFS with
/// [`full_pathname`] in place of its `xFullPathname`. Returns its name.
pub(crate) fn vfs() -> Result<&'static str, StoreError> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    let r = REGISTERED.get_or_init(|| {
        // SAFETY: sqlite3_vfs_find returns the registered unix VFS (static
        // for the life of the process); we copy it, change one function,
        // leak the copy (SQLite keeps a pointer to it) and register it
        // under another name, as SQLite's documentation describes for
        // shim VFSes.
        unsafe {
            if ffi::sqlite3_initialize() != ffi::SQLITE_OK {
                return Err("cannot initialise SQLite".into());
            }
            let unix = ffi::sqlite3_vfs_find(c"unix".as_ptr());
            if unix.is_null() {
                return Err("SQLite has no unix VFS".into());
            }
            let mut copy: ffi::sqlite3_vfs = std::ptr::read(unix);
            let Some(orig) = copy.xFullPathname else {
                return Err("SQLite's unix VFS has no xFullPathname".into());
            };
            let _ = UNIX_FULL_PATHNAME.set(orig);
            copy.xFullPathname = Some(full_pathname);
            copy.zName = VFS_NAME.as_ptr();
            copy.pNext = std::ptr::null_mut();
            let leaked: &'static mut ffi::sqlite3_vfs = Box::leak(Box::new(copy));
            if ffi::sqlite3_vfs_register(leaked, 0) != ffi::SQLITE_OK {
                return Err("cannot register SQLite's VFS".into());
            }
        }
        Ok(())
    });
    match r {
        Ok(()) => Ok(VFS_NAME.to_str().expect("ASCII")),
        Err(e) => Err(StoreError::new(e.clone())),
    }
}

#[cfg(test)]
mod tests {
    //! Issue 21 finding 5 (n05a/b/c) and the s-* cases: root opens only a
    //! store that is its own, through the directory it checked.
    use super::*;
    use crate::SqliteStore;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A fresh store at `dir/runs.db` with one marker row, closed.
    fn store_with(dir: &Path, marker: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        chmod(dir, 0o700);
        let db = dir.join("runs.db");
        drop(SqliteStore::open(&db).unwrap());
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("CREATE TABLE IF NOT EXISTS marker (m TEXT)")
            .unwrap();
        c.execute("INSERT INTO marker VALUES (?1)", [marker])
            .unwrap();
        db
    }

    fn marker(conn: &rusqlite::Connection) -> String {
        conn.query_row("SELECT m FROM marker", [], |r| r.get(0))
            .unwrap()
    }

    fn refused(r: Result<SqliteStore, StoreError>, what: &str) -> String {
        match r {
            Ok(_) => panic!("{what}: opened"),
            Err(e) => {
                assert!(e.bad_input, "{what}: not a refusal: {e}");
                e.msg
            }
        }
    }

    #[test]
    fn a_store_in_a_directory_others_can_write_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let sticky = t.path().join("sticky");
        std::fs::create_dir(&sticky).unwrap();
        chmod(&sticky, 0o1777);
        let m = refused(SqliteStore::open(&sticky.join("runs.db")), "sticky dir");
        assert!(m.contains("--store") && m.contains("only you"), "{m}");
        assert!(!sticky.join("runs.db").exists(), "nothing created there");
    }

    #[test]
    fn a_database_or_companion_that_is_not_ours_alone_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("st");
        let db = store_with(&dir, "root's");
        let victim = t.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        // The database writable by others.
        chmod(&db, 0o666);
        refused(SqliteStore::open(&db), "world-writable db");
        chmod(&db, 0o600);
        for suffix in COMPANIONS {
            let c = dir.join(format!("runs.db{suffix}"));
            // A hard link to another file (s-wal-hardlink).
            std::fs::hard_link(&victim, &c).unwrap();
            let m = refused(SqliteStore::open(&db), suffix);
            assert!(m.contains("hard links"), "{m}");
            std::fs::remove_file(&c).unwrap();
            // A symbolic link.
            std::os::unix::fs::symlink(&victim, &c).unwrap();
            refused(SqliteStore::open(&db), suffix);
            std::fs::remove_file(&c).unwrap();
            // Writable by others (s-shm-attacker-owned, n05b, s-journal-forged).
            std::fs::write(&c, "forged").unwrap();
            chmod(&c, 0o666);
            refused(SqliteStore::open(&db), suffix);
            // Another user's (as root only: giving a file away needs root).
            chmod(&c, 0o600);
            if std::os::unix::fs::chown(&c, Some(2345), None).is_ok() {
                let m = refused(SqliteStore::open(&db), suffix);
                assert!(m.contains("owned by uid 2345"), "{m}");
            }
            std::fs::remove_file(&c).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // And another user's database (n05a), as root.
        if std::os::unix::fs::chown(&db, Some(2345), None).is_ok() {
            let m = refused(SqliteStore::open(&db), "another user's db");
            assert!(m.contains("owned by uid 2345"), "{m}");
        }
    }

    #[test]
    fn sqlite_opens_the_checked_directory_even_if_the_path_moves() {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("a");
        let db = store_with(&a, "root's");
        let place = StorePlace::open(&db, "--store").unwrap();
        // The attacker moves the checked directory away and puts its own,
        // with its own runs.db, at the path (n05c, r-store).
        std::fs::rename(&a, t.path().join("moved")).unwrap();
        store_with(&a, "FORGED");
        let name = place.sqlite_name().unwrap();
        assert!(name.starts_with("/proc/self/fd/"), "{name}");
        let conn = rusqlite::Connection::open_with_flags_and_vfs(
            &name,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE,
            vfs().unwrap(),
        )
        .unwrap();
        assert_eq!(marker(&conn), "root's");
        // SQLite kept the name it was given (its -wal is beside it).
        let file: String = conn
            .query_row("PRAGMA database_list", [], |r| r.get(2))
            .unwrap();
        assert_eq!(file, name);
    }

    #[test]
    fn a_new_store_is_private() {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join("new/sub/runs.db");
        drop(SqliteStore::open(&db).unwrap());
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o7777;
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(&t.path().join("new/sub")), 0o700);
        // Reopened: fine (the -wal/-shm SQLite made are ours, 0600).
        drop(SqliteStore::open(&db).unwrap());
        for p in ["new/sub/../sub/runs.db", "new/sub/runs.db/"] {
            refused(SqliteStore::open(&t.path().join(p)), p);
        }
        std::os::unix::fs::symlink(t.path().join("new"), t.path().join("link")).unwrap();
        refused(
            SqliteStore::open(&t.path().join("link/sub/runs.db")),
            "link",
        );
    }

    /// Plant `bytes` as `db` + `suffix`, as another user would: owned by
    /// uid 2345 (as root), else writable by everyone.
    fn plant(db: &Path, suffix: &str, bytes: &[u8]) {
        let p = PathBuf::from(format!("{}{suffix}", db.display()));
        std::fs::write(&p, bytes).unwrap();
        chmod(&p, 0o666);
        let _ = std::os::unix::fs::chown(&p, Some(2345), Some(2345));
    }

    /// n05b: a real `-wal` forged from a copy of the store, which would
    /// rewrite every label, planted beside root's store.
    #[test]
    fn a_forged_wal_is_never_merged() {
        let t = tempfile::tempdir().unwrap();
        let db = store_with(&t.path().join("root"), "root's");
        let forge = t.path().join("forge");
        std::fs::create_dir(&forge).unwrap();
        std::fs::copy(&db, forge.join("c.db")).unwrap();
        let c = rusqlite::Connection::open(forge.join("c.db")).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; UPDATE marker SET m='FORGED';",
        )
        .unwrap();
        let wal = std::fs::read(forge.join("c.db-wal")).unwrap();
        assert!(!wal.is_empty());
        plant(&db, "-wal", &wal);
        let m = refused(SqliteStore::open(&db), "forged -wal");
        assert!(m.contains("runs.db-wal"), "{m}");
        // Nothing of it was merged: without it, the store is as it was.
        std::fs::remove_file(format!("{}-wal", db.display())).unwrap();
        drop(SqliteStore::open(&db).unwrap());
        assert_eq!(marker(&rusqlite::Connection::open(&db).unwrap()), "root's");
    }

    /// New finding 3 (s-journal-forged): a hot rollback journal forged
    /// from a copy of the store, planted beside it: never played back.
    #[test]
    fn a_forged_hot_journal_is_never_played_back() {
        let t = tempfile::tempdir().unwrap();
        let db = store_with(&t.path().join("root"), "root's");
        let forge = t.path().join("forge");
        std::fs::create_dir(&forge).unwrap();
        let copy = forge.join("c.db");
        std::fs::copy(&db, &copy).unwrap();
        let c = rusqlite::Connection::open(&copy).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode=DELETE; UPDATE marker SET m='FORGED'; PRAGMA cache_size=1; \
             BEGIN; UPDATE marker SET m='x'; DELETE FROM runs;",
        )
        .unwrap();
        for i in 0..200 {
            c.execute(
                "INSERT INTO marker VALUES (?1)",
                [format!("{i}{}", "y".repeat(2000))],
            )
            .unwrap();
        }
        let journal = std::fs::read(forge.join("c.db-journal")).unwrap();
        assert!(!journal.is_empty());
        plant(&db, "-journal", &journal);
        let m = refused(SqliteStore::open(&db), "forged -journal");
        assert!(m.contains("runs.db-journal"), "{m}");
        std::mem::forget(c);
    }

    /// New finding 4 (s-shm-attacker-owned): another user's `-shm` (the
    /// WAL index, shared memory the attacker could keep mapped).
    #[test]
    fn another_users_shm_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let db = store_with(&t.path().join("root"), "root's");
        plant(&db, "-shm", &[0u8; 32768]);
        let m = refused(SqliteStore::open(&db), "-shm");
        assert!(m.contains("runs.db-shm"), "{m}");
    }

    /// A directory swapped for a link to another place while root opens
    /// stores there again and again (r-store): never a store in the other
    /// place.
    #[test]
    fn a_directory_swapped_for_a_link_never_gets_a_store() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let t = tempfile::tempdir().unwrap();
        let att = t.path().join("att");
        let victim = t.path().join("victim");
        std::fs::create_dir_all(att.join("x/sub")).unwrap();
        std::fs::create_dir_all(victim.join("sub")).unwrap();
        std::os::unix::fs::symlink(&victim, att.join("l")).unwrap();
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let d = std::fs::File::open(&att).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    let _ = rustix::fs::renameat_with(
                        &d,
                        "x",
                        &d,
                        "l",
                        rustix::fs::RenameFlags::EXCHANGE,
                    );
                }
            });
            for _ in 0..200 {
                let _ = SqliteStore::open(&att.join("x/sub/runs.db"));
            }
            stop.store(true, Ordering::Relaxed);
        });
        assert_eq!(std::fs::read_dir(victim.join("sub")).unwrap().count(), 0);
    }
}
