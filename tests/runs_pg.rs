//! `rtshield runs` on a real PostgreSQL server: a private one per test
//! (initdb in a temporary directory, a Unix socket only, no TCP port),
//! stopped when the test ends, even when it fails.

use crate::util::{describe, ok, poll, require, wait_until};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

pub(crate) const PASSWORD: &str = "rt-test-pw";
pub(crate) const USER: &str = "rtshield";

/// The server's programs (Debian puts them in /usr/lib/postgresql/N/bin).
fn pg_bindir() -> Option<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    dirs.sort();
    dirs.pop().map(|(_, b)| b)
}

/// A private PostgreSQL server. initdb refuses to run as root, so as
/// root the server runs as the `postgres` system user (in a directory it
/// owns); otherwise as the caller.
pub(crate) struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    running: bool,
}

impl PgServer {
    /// A started server, or `None` (with a SKIP line) where PostgreSQL is
    /// not installed; under RTSHIELD_REQUIRE_ROOT=1 a missing server fails.
    pub(crate) fn start() -> Option<PgServer> {
        Self::start_with("", |_| {})
    }

    /// [`Self::start`] with more server options (`-c key=value ...`) and a
    /// `setup` run on the new data directory before the server starts.
    pub(crate) fn start_with(extra: &str, setup: impl FnOnce(&PgServer)) -> Option<PgServer> {
        let bin = pg_bindir();
        if !require(
            bin.is_some(),
            "PostgreSQL server programs are not installed (apt-get install postgresql)",
        ) {
            return None;
        }
        let bin = bin.unwrap();
        let dir = tempfile::Builder::new()
            .prefix("rtshield-pg")
            .tempdir()
            .unwrap();
        let s = PgServer {
            dir,
            bin,
            running: false,
        };
        if rtshield_sys::is_root() {
            let pw = postgres_ids();
            if !require(pw.is_some(), "no `postgres` system user to run the server") {
                return None;
            }
            let (uid, gid) = pw.unwrap();
            let c = std::ffi::CString::new(s.dir.path().to_str().unwrap()).unwrap();
            // SAFETY: a valid C string; chown of a directory this test made.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), uid, gid) }, 0);
        }
        let pwfile = s.dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        s.chown_to_server(&pwfile);
        let mut s = s;
        let out = s
            .pg_cmd("initdb")
            .args(["-D", s.data().to_str().unwrap()])
            .args(["-U", USER, "--pwfile", pwfile.to_str().unwrap()])
            .args(["--auth-local=scram-sha-256", "--auth-host=scram-sha-256"])
            .args(["--no-sync", "--locale=C.UTF-8", "-E", "UTF8"])
            .output()
            .unwrap();
        assert!(out.status.success(), "initdb: {}", describe(&out));
        setup(&s);
        let opts = format!(
            "-k {} -c listen_addresses='' -c fsync=off -c max_connections=40 {extra}",
            s.dir.path().display()
        );
        let log = s.dir.path().join("log");
        let out = s
            .pg_cmd("pg_ctl")
            .args([
                "-D",
                s.data().to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
            ])
            .args(["-w", "-t", "60", "-o", &opts, "start"])
            .output()
            .unwrap();
        // From here on Drop stops it, whatever happens.
        s.running = true;
        assert!(
            out.status.success(),
            "pg_ctl start: {}\nlog: {}",
            describe(&out),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Some(s)
    }

    pub(crate) fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub(crate) fn chown_to_server(&self, p: &Path) {
        if let (true, Some((uid, gid))) = (rtshield_sys::is_root(), postgres_ids()) {
            let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
            // SAFETY: a valid C string; a file this test made.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), uid, gid) }, 0);
        }
    }

    /// A server program, run as the server's user.
    fn pg_cmd(&self, prog: &str) -> Command {
        let exe = self.bin.join(prog);
        let mut c = if rtshield_sys::is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        c.stdin(Stdio::null());
        c
    }

    /// The URL of database `postgres` on the socket.
    fn url(&self) -> String {
        let sock = self.dir.path().to_str().unwrap().replace('/', "%2F");
        format!("postgresql://{USER}@{sock}/postgres")
    }

    fn stop(&mut self) {
        if !self.running {
            return;
        }
        self.running = false;
        let _ = self
            .pg_cmd("pg_ctl")
            .args(["-D", self.data().to_str().unwrap()])
            .args(["-m", "immediate", "-w", "-t", "60", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// A client for checks the test makes itself.
    fn client(&self) -> postgres::Client {
        let mut cfg = postgres::Config::new();
        cfg.host_path(self.dir.path())
            .user(USER)
            .password(PASSWORD)
            .dbname("postgres");
        cfg.connect(postgres::NoTls).unwrap()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn postgres_ids() -> Option<(u32, u32)> {
    let name = std::ffi::CString::new("postgres").unwrap();
    // SAFETY: getpwnam returns static storage or NULL; read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    // SAFETY: non-null, valid until the next getpw* call.
    Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

fn runs(store: &str, args: &[&str]) -> Command {
    let mut c = crate::util::command();
    c.arg("runs")
        .arg("--store")
        .arg(store)
        .args(args)
        .env_remove("RTSHIELD_STORE")
        .env_remove("PGPASSFILE")
        .env("PGPASSWORD", PASSWORD);
    c
}

/// `rtshield measure` (SCHED_OTHER, 50 samples) storing into `store`.
fn measure(store: &str, out: &Path) -> Output {
    crate::util::command()
        .args(["measure", "--policy", "other", "--samples", "50", "-q"])
        .args([
            "--no-dma-latency",
            "--no-memlock",
            "--tag",
            "board=pi3-a",
            "--out",
        ])
        .arg(out)
        .env("RTSHIELD_STORE", store)
        .env_remove("RTSHIELD_NO_STORE")
        .env("PGPASSWORD", PASSWORD)
        .output()
        .unwrap()
}

/// `n` distinct results.json files in `dir`, made from a real run: host
/// `host-{h}`, kernel `6.{k}` where `(h, k)` cycles over 2 × 2 values.
fn make_runs(dir: &Path, prefix: &str, n: usize) -> Vec<PathBuf> {
    let base: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/report/real/idle/results.json"),
        )
        .unwrap(),
    )
    .unwrap();
    std::fs::create_dir_all(dir).unwrap();
    (0..n)
        .map(|i| {
            let mut r = base.clone();
            r["tags"]["uuid"] = format!("{prefix}-{i:05}").into();
            r["tags"]["repeat"] = i.to_string().into();
            r["sysinfo"]["hostname"] = format!("host-{}", i % 2).into();
            r["sysinfo"]["kernel_release"] = format!("6.{}", 6 + 6 * ((i / 2) % 2)).into();
            // Different figures per run, so comparisons have something to do.
            let t = &mut r["threads"][0];
            t["max_ns"] = (t["max_ns"].as_i64().unwrap() + 1000 * i as i64).into();
            let p = dir.join(format!("{prefix}-{i:05}.json"));
            std::fs::write(&p, serde_json::to_string(&r).unwrap()).unwrap();
            p
        })
        .collect()
}

/// A local SQLite store holding `n` runs.
fn local_store(dir: &Path, prefix: &str, n: usize) -> String {
    let files = make_runs(&dir.join(format!("{prefix}-files")), prefix, n);
    let db = dir.join(format!("{prefix}.db")).display().to_string();
    let mut c = runs(&db, &["import"]);
    c.args(&files);
    let out = ok(c.output().unwrap());
    assert!(out.contains(&format!("{n} stored")), "{out}");
    db
}

fn count(c: &mut postgres::Client) -> i64 {
    c.query_one("SELECT count(*) FROM runs", &[])
        .unwrap()
        .get(0)
}

#[test]
fn concurrent_pushes_store_every_run_exactly_once() {
    let Some(pg) = PgServer::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let url = pg.url();
    let stores: Vec<String> = (0..8)
        .map(|i| local_store(d.path(), &format!("board{i}"), 50))
        .collect();
    // Twice: the first round also races on creating the schema; the second
    // finds every run there.
    for round in 0..2 {
        let children: Vec<_> = stores
            .iter()
            .map(|s| {
                runs(s, &["push", "--to", &url])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for ch in children {
            let out = ok(ch.wait_with_output().unwrap());
            let want = if round == 0 {
                "50 pushed, 0 already there"
            } else {
                "0 pushed, 50 already there"
            };
            assert!(out.contains(want), "round {round}: {out}");
        }
    }
    let mut c = pg.client();
    assert_eq!(count(&mut c), 400);
    let uuids: BTreeSet<String> = c
        .query("SELECT uuid FROM runs", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(uuids.len(), 400, "no run stored twice");
    let threads: i64 = c
        .query_one("SELECT count(*) FROM threads", &[])
        .unwrap()
        .get(0);
    assert_eq!(threads, 400);
    // The listing through the CLI agrees.
    let out = ok(runs(&url, &["list", "--json"]).output().unwrap());
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 400);
}

#[test]
fn a_killed_push_leaves_whole_runs_and_resumes() {
    let Some(pg) = PgServer::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let url = pg.url();
    // Enough runs that the push is still going when the test stops it.
    let n = 1000;
    let local = local_store(d.path(), "k", n);
    let mut c = pg.client();
    let mut child = crate::util::Kill(
        runs(&local, &["push", "--to", &url])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // As soon as some runs are there (the schema exists once the first
    // run is), the tags table is locked: the push then waits in the
    // middle of a run (its row inserted, its tags not), and is killed
    // there, so the kill really interrupts it.
    poll(Duration::from_secs(60), "the first pushed runs", || {
        let has = c
            .query_one("SELECT to_regclass('runs')::text", &[])
            .unwrap()
            .get::<_, Option<String>>(0)
            .is_some();
        (has && count(&mut c) > 0).then_some(())
    });
    let mut locker = pg.client();
    let mut lock = locker.transaction().unwrap();
    lock.batch_execute("LOCK TABLE tags IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let blocked = poll(
        Duration::from_secs(60),
        "the push waiting for the lock",
        || {
            if matches!(child.0.try_wait(), Ok(Some(_))) {
                return Some(false);
            }
            let waiting: i64 = c
                .query_one("SELECT count(*) FROM pg_locks WHERE NOT granted", &[])
                .unwrap()
                .get(0);
            (waiting > 0).then_some(true)
        },
    );
    assert!(blocked, "the push ended before it was stopped: raise n");
    // SAFETY: kill(2) of the child this test started.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGKILL) };
    let _ = child.0.wait();
    lock.rollback().unwrap();
    // The killed client's server process ends its transaction (rolled
    // back) once the lock lets it go on and it finds the client gone.
    wait_until(
        Duration::from_secs(60),
        "the killed push's session gone",
        || {
            let n: i64 = c
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'rtshield'",
                    &[],
                )
                .unwrap()
                .get(0);
            n == 0
        },
    );
    let partial = count(&mut c);
    eprintln!("killed after {partial} of {n} runs");
    assert!(partial > 0 && partial < n as i64, "{partial} of {n}");
    // No half run: every stored run has its thread and its tags (its two
    // and the `imported_from` mark the local import gave it).
    let half: i64 = c
        .query_one(
            "SELECT count(*) FROM runs r WHERE
               (SELECT count(*) FROM threads t WHERE t.run_id = r.id) <> 1
            OR (SELECT count(*) FROM tags g WHERE g.run_id = r.id) <> 3",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(half, 0, "a run was stored without its threads or tags");
    let out = ok(runs(&local, &["push", "--to", &url]).output().unwrap());
    assert!(
        out.contains(&format!(
            "{} pushed, {partial} already there",
            n as i64 - partial
        )),
        "{out}"
    );
    assert_eq!(count(&mut c), n as i64);
    let distinct: i64 = c
        .query_one("SELECT count(DISTINCT uuid) FROM runs", &[])
        .unwrap()
        .get(0);
    assert_eq!(distinct, n as i64);
}

#[test]
fn compare_and_group_by_print_the_same_on_both_backends() {
    let Some(pg) = PgServer::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let url = pg.url();
    let local = local_store(d.path(), "cmp", 12);
    ok(runs(&local, &["push", "--to", &url]).output().unwrap());
    for args in [
        &[
            "compare",
            "host=host-0 kernel~6.6",
            "host=host-0 kernel~6.12",
        ][..],
        &[
            "compare",
            "kernel=6.6",
            "kernel=6.12",
            "--stat",
            "p50,p99.9,max",
        ][..],
        &["compare", "repeat=1", "repeat=3", "--json"][..],
    ] {
        let a = ok(runs(&local, args).output().unwrap());
        let b = ok(runs(&url, args).output().unwrap());
        assert_eq!(a, b, "runs compare {args:?}");
        assert!(a.contains("B/A") || a.contains("\"ratio\""), "{a}");
    }
    let strip_last = |s: String| s.lines().rev().skip(1).collect::<Vec<_>>().join("\n");
    let a = ok(runs(&local, &["list", "--group-by", "host,kernel"])
        .output()
        .unwrap());
    let b = ok(runs(&url, &["list", "--group-by", "host,kernel"])
        .output()
        .unwrap());
    assert_eq!(strip_last(a.clone()), strip_last(b), "group-by tables");
    assert!(a.contains("4 groups, 12 runs"), "{a}");
    let g: serde_json::Value = serde_json::from_str(&ok(runs(
        &url,
        &[
            "list",
            "--group-by",
            "host,kernel",
            "--where",
            "host=host-1",
            "--json",
        ],
    )
    .output()
    .unwrap()))
    .unwrap();
    let g = g.as_array().unwrap();
    assert_eq!(g.len(), 2);
    assert_eq!(g[0]["keys"], serde_json::json!(["host-1", "6.12"]));
    assert_eq!(g[0]["runs"], 3);
    // RTSHIELD_STORE=postgres://…: a measurement is stored straight there.
    let o = measure(&url, &d.path().join("m"));
    assert!(ok(o).contains("stored as run 13"));
    let out = ok(runs(&url, &["list", "--where", "board=pi3-a", "--json"])
        .output()
        .unwrap());
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["threads"][0]["samples"], 50);
    // The selected runs' JSON is the same too (the ids included: pushed in order).
    let a = ok(runs(
        &local,
        &["list", "--json", "--where", "kernel~6.1 host~host-"],
    )
    .output()
    .unwrap());
    let b = ok(runs(
        &url,
        &["list", "--json", "--where", "kernel~6.1 host~host-"],
    )
    .output()
    .unwrap());
    assert_eq!(a, b);
}

#[test]
fn a_server_that_is_down_is_a_clear_error_and_local_runs_stay() {
    let Some(mut pg) = PgServer::start() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let url = pg.url();
    let local = local_store(d.path(), "down", 3);
    // The password file works as libpq's: 0600, else ignored.
    let pass = d.path().join("pgpass");
    std::fs::write(&pass, format!("*:*:*:{USER}:{PASSWORD}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = runs(&local, &["push", "--to", &url])
        .env_remove("PGPASSWORD")
        .env("PGPASSFILE", &pass)
        .output()
        .unwrap();
    assert!(ok(o).contains("3 pushed"));
    std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = runs(&url, &["list"])
        .env_remove("PGPASSWORD")
        .env("PGPASSFILE", &pass)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("group or world access"),
        "{}",
        describe(&o)
    );

    // A schema newer than this rtshield is refused, not written into.
    let mut c = pg.client();
    c.execute(
        "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
        &[],
    )
    .unwrap();
    let o = runs(&local, &["push", "--to", &url]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("schema version 99 is newer"),
        "{}",
        describe(&o)
    );
    c.execute(
        "UPDATE meta SET value = $1 WHERE key = 'schema_version'",
        &[&rtshield_store::SCHEMA_VERSION.to_string()],
    )
    .unwrap();
    drop(c);

    pg.stop();
    let before = std::fs::read(&local).unwrap();
    let o = runs(&local, &["push", "--to", &url]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot connect"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
    // A measurement whose store is down keeps its files and says so.
    let out = d.path().join("m");
    let o = measure(&url, &out);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(out.join("results.json").is_file());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not in the results store") && err.contains("cannot connect"),
        "{err}"
    );
    let o = runs(&url, &["list"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot connect"));
    // The local store is untouched and still answers.
    assert_eq!(std::fs::read(&local).unwrap(), before);
    let out = ok(runs(&local, &["list"]).output().unwrap());
    assert!(out.contains("3 runs in"), "{out}");
}

#[test]
fn a_url_that_does_not_parse_and_a_bad_group_key_are_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let local = local_store(d.path(), "u", 1);
    for (store, args, needle) in [
        (
            "postgres://u@h:99999999/x",
            vec!["list"],
            "not a PostgreSQL URL",
        ),
        (
            local.as_str(),
            vec!["push", "--to", "postgresql://u@h/x?bogus=1"],
            "not a PostgreSQL URL",
        ),
        (
            local.as_str(),
            vec!["list", "--group-by", "host,ker nel"],
            "--group-by: `ker nel` is not a key",
        ),
    ] {
        let o = runs(store, &args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{}",
            describe(&o)
        );
    }
}

/// A version-2 store (as the previous rtshield created it: no machine_id
/// column) is migrated by the first rtshield that opens it, once, under the
/// advisory lock, even when several connect at once; the machine ids are
/// backfilled from the stored results.
#[test]
fn a_version_2_store_is_migrated_once_by_concurrent_clients() {
    let Some(pg) = PgServer::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let url = pg.url();
    let files = make_runs(&d.path().join("files"), "m", 4);
    let id = "0123456789abcdef0123456789abcdef";
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    r["sysinfo"]["machine_id"] = id.into();
    std::fs::write(&files[0], serde_json::to_string(&r).unwrap()).unwrap();
    let mut c = runs(&url, &["import"]);
    c.args(&files);
    ok(c.output().unwrap());
    // Back to version 2: the schema the previous rtshield created.
    let mut c = pg.client();
    c.batch_execute(
        "DROP INDEX runs_machine_id; ALTER TABLE runs DROP COLUMN machine_id;
         UPDATE meta SET value = '2' WHERE key = 'schema_version'",
    )
    .unwrap();
    let sel = format!("machine_id={id}");
    let kids: Vec<_> = (0..4)
        .map(|_| {
            runs(&url, &["list", "--json", "--where", &sel])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for k in kids {
        let out = ok(k.wait_with_output().unwrap());
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 1, "{out}");
        assert_eq!(v[0]["machine_id"], id);
    }
    let v: String = c
        .query_one("SELECT value FROM meta WHERE key = 'schema_version'", &[])
        .unwrap()
        .get(0);
    assert_eq!(v, rtshield_store::SCHEMA_VERSION.to_string());
    let empty: i64 = c
        .query_one("SELECT count(*) FROM runs WHERE machine_id = ''", &[])
        .unwrap()
        .get(0);
    assert_eq!(empty, 3);
}

/// Adversary round 5, F10 and F03 in a lab's shared store. A row another
/// lab member inserts by hand is input like a file: `samples = -1` in one
/// summary broke `runs list`, `show` and `export` for the whole store, and
/// 9·10^18 was shown as it was; now each bad row is left out with a
/// warning naming it and the others are listed and exported. And a run
/// pushed under the UUID of a different run already there is a conflict
/// (exit 1), never "already there".
#[test]
fn f10_f03_bad_rows_are_left_out_and_a_uuid_conflict_is_reported() {
    let Some(pg) = PgServer::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let url = pg.url();
    let store = local_store(d.path(), "lab", 3);
    ok(runs(&store, &["push", "--to", &url]).output().unwrap());
    let mut c = pg.client();
    c.batch_execute(
        "INSERT INTO runs (uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool,
            label, started, duration_s, end_reason, mode, source, stored_at, summary, result,
            machine_id)
         SELECT 'evil-uuid-1', host, kernel, kernel_version, preempt, arch, cpu_model, tool,
            'evil', started, duration_s, end_reason, mode, source, stored_at,
            '[[{\"cpu\":1,\"samples\":9000000000000000000,\"min_ns\":0,\"avg_ns\":1e308,\"max_ns\":9000000000000000000,\"percentiles\":{},\"overruns\":0,\"missed_periods\":0,\"lost\":0}],{\"uuid\":\"evil-uuid-1\"}]',
            result, machine_id FROM runs WHERE uuid = 'lab-00000';
         UPDATE runs SET summary = regexp_replace(summary, '\"samples\":[0-9]+', '\"samples\":-1')
            WHERE uuid = 'lab-00001';",
    )
    .unwrap();
    let o = runs(&url, &["list", "--json"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let list: serde_json::Value = serde_json::from_str(&ok(o)).unwrap();
    let uuids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uuid"].as_str().unwrap())
        .collect();
    assert_eq!(uuids, ["lab-00000", "lab-00002"], "{err}");
    assert!(
        err.contains("left out") && err.contains("is out of range"),
        "{err}"
    );
    assert!(err.contains("invalid value: integer `-1`"), "{err}");
    let out = ok(runs(&url, &["export", "host ~ host"]).output().unwrap());
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // A local run under the UUID of a different run in the shared store.
    let files = make_runs(&d.path().join("other"), "lab", 1);
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    r["threads"][0]["max_ns"] = 5_000.into();
    std::fs::write(&files[0], r.to_string()).unwrap();
    let db = d.path().join("other.db").display().to_string();
    ok(runs(&db, &["import"]).arg(&files[0]).output().unwrap());
    let o = runs(&db, &["push", "--to", &url]).output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("0 pushed, 0 already there, 1 in conflict"),
        "{out}"
    );
    assert!(err.contains("a different run with UUID lab-00000"), "{err}");
}

/// Issue 22: a thread that measured nothing has NULL figures in
/// PostgreSQL too, and a version-4 database (min/avg/max NOT NULL, 0 for
/// such a thread) is migrated to NULL.
#[test]
fn a_thread_without_samples_is_null_and_a_version_4_store_forgets_its_zeros() {
    let Some(pg) = PgServer::start() else { return };
    let d = tempfile::tempdir().unwrap();
    let url = pg.url();
    let run = crate::unknown_values::run_with_an_empty_thread(d.path(), true);
    ok(runs(&url, &["import"])
        .arg(run.join("results.json"))
        .output()
        .unwrap());
    let mut c = pg.client();
    let figures = |c: &mut postgres::Client| {
        let r = c
            .query_one(
                "SELECT min_ns, avg_ns, max_ns FROM threads WHERE idx = 1",
                &[],
            )
            .unwrap();
        (
            r.get::<_, Option<i64>>(0),
            r.get::<_, Option<f64>>(1),
            r.get::<_, Option<i64>>(2),
        )
    };
    assert_eq!(figures(&mut c), (None, None, None));
    // Back to version 4: the zeros and the NOT NULL an older rtshield had.
    c.batch_execute(
        "UPDATE threads SET min_ns = 0, avg_ns = 0, max_ns = 0 WHERE idx = 1;
         ALTER TABLE threads ALTER COLUMN min_ns SET NOT NULL,
             ALTER COLUMN avg_ns SET NOT NULL, ALTER COLUMN max_ns SET NOT NULL;
         UPDATE meta SET value = '4' WHERE key = 'schema_version'",
    )
    .unwrap();
    assert_eq!(figures(&mut c), (Some(0), Some(0.0), Some(0)));
    let out = ok(runs(&url, &["show", "1"]).output().unwrap());
    assert!(out.contains("      ?"), "{out}");
    assert_eq!(figures(&mut c), (None, None, None));
    let v: String = c
        .query_one("SELECT value FROM meta WHERE key = 'schema_version'", &[])
        .unwrap()
        .get(0);
    assert_eq!(v, rtshield_store::SCHEMA_VERSION.to_string());
}
