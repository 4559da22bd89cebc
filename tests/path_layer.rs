//! Issue 21, "one path layer": every writing option of every subcommand,
//! given a path through links another user planted (the last component,
//! a middle one, hidden by a trailing `/` or `/.`, reached by `..`), and
//! while that user swaps a directory for a link: root's directory `VP`
//! behind the links never changes, and the option is refused (exit 2).
//!
//! As root (the suite's `RTSHIELD_REQUIRE_ROOT=1` run), the attacker's
//! directory and links belong to uid 2345, as in `bench/adversarial.sh`'s
//! p-* and r-* cases; without root they are the test's own, and only the
//! "nothing changed behind the links" half is asserted.

use crate::util::{command, describe};
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;

/// The attacker's uid (as root).
const ATTACKER: u32 = 2345;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `renameat2(RENAME_EXCHANGE)` of `a` and `b` in the directory `d`.
fn exchange(d: &std::fs::File, a: &std::ffi::CStr, b: &std::ffi::CStr) {
    use std::os::fd::AsRawFd;
    // SAFETY: a raw system call on an open directory and two C strings.
    unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            d.as_raw_fd(),
            a.as_ptr(),
            d.as_raw_fd(),
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        );
    }
}

/// Everything below `dir`: path -> (kind, mode, content).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (String, u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            let (kind, body) = if m.is_dir() {
                todo.push(p.clone());
                ("dir", Vec::new())
            } else if m.file_type().is_symlink() {
                (
                    "link",
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                )
            } else {
                ("file", std::fs::read(&p).unwrap())
            };
            out.insert(rel, (kind.to_string(), m.mode(), body));
        }
    }
    out
}

/// The test's world: root's files, the attacker's directory, inputs.
struct World {
    _t: tempfile::TempDir,
    work: PathBuf,
    att: PathBuf,
    lib: PathBuf,
    store: PathBuf,
}

impl World {
    fn new() -> World {
        let t = tempfile::tempdir().unwrap();
        let work = t.path().to_path_buf();
        std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o755)).unwrap();
        let att = work.join("att");
        std::fs::create_dir(&att).unwrap();
        give_away(&att);
        let lib = work.join("lib");
        std::fs::create_dir(&lib).unwrap();
        std::fs::write(
            lib.join("run1s.cfg"),
            "main\n{\n  stats.period 100 ms\n}\ntimer_thread[0]\n{\n  cpu_affinity 0\n  \
             sched.policy OTHER\n  period 1 ms\n  lifetime.duration 1 s\n}\n",
        )
        .unwrap();
        std::fs::write(
            lib.join("tiny.scn"),
            "loops_per_us = 1\ntimeout = 2s\n{\nname = w\nloop = 1000\ncount = 1\n}\n",
        )
        .unwrap();
        std::fs::write(
            lib.join("tiny.toml"),
            "name = \"adv\"\ncpus = \"0\"\nduration = \"1s\"\nrepeat = 1\n\n[measure]\n\
             period = \"1ms\"\npolicy = \"other\"\n\n[axes]\nload = [\"idle\"]\n\
             isolation = [\"none\"]\n",
        )
        .unwrap();
        let store = work.join("store/runs.db");
        let o = run(&[
            "runs",
            "import",
            &fixture("idle"),
            "--store",
            store.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", describe(&o));
        World {
            _t: t,
            work,
            att,
            lib,
            store,
        }
    }

    fn lib(&self, f: &str) -> String {
        self.lib.join(f).display().to_string()
    }

    /// Run root's rtshield writing to `path` through option `opt`.
    fn write_with(&self, opt: &str, case: &str, path: &str) -> Output {
        let o = self.work.join(format!("o-{case}"));
        let o = o.to_str().unwrap();
        let m = [
            "measure",
            "--duration",
            "1s",
            "--period",
            "1ms",
            "--policy",
            "other",
            "-q",
            "--no-memlock",
            "--no-dma-latency",
            "--cpus",
            "0",
        ];
        let with = |pre: &[&str], post: &[&str]| {
            let mut a: Vec<String> = pre.iter().map(|s| s.to_string()).collect();
            a.extend(post.iter().map(|s| s.to_string()));
            a
        };
        let store = self.store.to_str().unwrap();
        let camp_store = self.work.join(format!("camp-{case}.db"));
        let args: Vec<String> = match opt {
            "measure --out" => with(&m, &["--out", path]),
            "run --out" => with(&["run", "-q", &self.lib("run1s.cfg")], &["--out", path]),
            "demo --out" => with(&["demo", "--duration", "1s", "-q"], &["--out", path]),
            "report -o" => with(
                &["report", &fixture("idle")],
                &["-o", path, "--format", "md,csv"],
            ),
            "runs report -o" => with(&["runs", "report", "id=1", "--store", store], &["-o", path]),
            "scenario --out" => with(&["scenario", &self.lib("tiny.scn")], &["--out", path]),
            "campaign --out" => with(
                &[
                    "campaign",
                    &self.lib("tiny.toml"),
                    "--store",
                    camp_store.to_str().unwrap(),
                ],
                &["--out", path],
            ),
            "measure --json" => with(&m, &["--out", o, "--json", path]),
            "measure --metrics-file" => with(&m, &["--out", o, "--metrics-file", path]),
            "run --metrics-file" => with(
                &["run", "-q", &self.lib("run1s.cfg"), "--out", o],
                &["--metrics-file", path],
            ),
            "run output.out" => {
                let cfg = self.work.join(format!("{case}.cfg"));
                std::fs::write(
                    &cfg,
                    format!(
                        "main\n{{\n  stats.period 100 ms\n}}\ntimer_thread[0]\n{{\n  cpu_affinity 0\n  \
                         sched.policy OTHER\n  period 1 ms\n  lifetime.duration 1 s\n}}\n\
                         program[0]\n{{\n  cmdline /bin/echo adversary\n  output.out {path}\n  \
                         cpu_affinity 0\n}}\n"
                    ),
                )
                .unwrap();
                with(&["run", "-q", cfg.to_str().unwrap()], &["--out", o])
            }
            "export -o" => with(
                &["export", &fixture("idle"), "--format", "junit"],
                &["-o", path],
            ),
            "runs export -o" => with(&["runs", "export", "id=1", "--store", store], &["-o", path]),
            "stat --record" => with(
                &["stat", "--duration", "1s", "--interval", "500ms"],
                &["--record", path],
            ),
            "simulate --json" => with(&["simulate", &self.lib("tiny.scn")], &["--json", path]),
            "simulate --trace" => with(&["simulate", &self.lib("tiny.scn")], &["--trace", path]),
            "simulate --gantt" => with(&["simulate", &self.lib("tiny.scn")], &["--gantt", path]),
            "scenario --json" => with(&["scenario", &self.lib("tiny.scn")], &["--json", path]),
            "--store" => with(&["runs", "import", &fixture("idle")], &["--store", path]),
            _ => unreachable!("{opt}"),
        };
        command()
            .args(&args)
            .current_dir(&self.work)
            .output()
            .unwrap()
    }
}

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/report/real/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn run(args: &[&str]) -> Output {
    command().args(args).output().unwrap()
}

/// As root: the attacker's (uid 2345); a link is given away with lchown.
fn give_away(p: &Path) {
    if is_root() {
        std::os::unix::fs::lchown(p, Some(ATTACKER), Some(ATTACKER)).unwrap();
    }
}

fn plant_link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
    give_away(at);
}

const DIR_OPTS: &[&str] = &[
    "measure --out",
    "run --out",
    "demo --out",
    "report -o",
    "runs report -o",
    "scenario --out",
    "campaign --out",
];

/// (option, the file name it writes).
const FILE_OPTS: &[(&str, &str)] = &[
    ("measure --json", "results.json"),
    ("measure --metrics-file", "rtshield.prom"),
    ("run --metrics-file", "rtshield.prom"),
    ("run output.out", "program.out"),
    ("export -o", "junit.xml"),
    ("runs export -o", "runs.json"),
    ("stat --record", "stat.json"),
    ("simulate --json", "balance.json"),
    ("simulate --trace", "trace.csv"),
    ("simulate --gantt", "gantt.svg"),
    ("scenario --json", "balance.json"),
    ("--store", "runs.db"),
];

/// Plant one kind of link for case `case` and return the path given to
/// the option: `VP/sub` is the victim directory (holding `file` when
/// given), `VP/deep` where the `..` case's link points.
fn planted(w: &World, case: &str, kind: &str, vp: &Path, file: Option<&str>) -> String {
    let l = w.att.join(format!("{case}-l"));
    let f = file.map_or(String::new(), |f| format!("/{f}"));
    match kind {
        "final" => {
            match file {
                Some(f) => plant_link(&vp.join("sub").join(f), &l),
                None => plant_link(&vp.join("sub"), &l),
            }
            l.display().to_string()
        }
        "slash" | "parent" => {
            plant_link(&vp.join("sub"), &l);
            if file.is_some() {
                format!("{}{f}", l.display())
            } else {
                format!("{}/", l.display())
            }
        }
        "dot" => {
            plant_link(&vp.join("sub"), &l);
            if file.is_some() {
                format!("{}/.{f}", l.display())
            } else {
                format!("{}/.", l.display())
            }
        }
        "middle" => {
            plant_link(vp, &l);
            format!("{}/sub{f}", l.display())
        }
        "dotdot" => {
            plant_link(&vp.join("deep"), &l);
            format!("{}/../sub{f}", l.display())
        }
        _ => unreachable!(),
    }
}

/// One cell of the table: VP unchanged, and (as root) exit 2.
fn cell(w: &World, opt: &str, kind: &str, file: Option<&str>, failures: &mut Vec<String>) {
    let case = format!("{}-{kind}", opt.replace([' ', '-', '.'], "_"));
    let vp = w.work.join(format!("vp-{case}"));
    std::fs::create_dir_all(vp.join("sub")).unwrap();
    std::fs::create_dir_all(vp.join("deep")).unwrap();
    if opt.ends_with("report -o") {
        // An earlier report of root's (of another run): a report may
        // replace that one's files, so only the links can protect it (with
        // foreign files in it, a report refuses anyway, links or not).
        std::fs::remove_dir(vp.join("sub")).unwrap();
        let sub = vp.join("sub");
        let o = run(&[
            "report",
            &fixture("hell"),
            "-o",
            sub.to_str().unwrap(),
            "--format",
            "md,csv",
        ]);
        assert!(o.status.success(), "{}", describe(&o));
    } else {
        for name in [
            "results.json",
            "summary.md",
            "report.html",
            file.unwrap_or("x"),
        ] {
            if name != "runs.db" {
                std::fs::write(vp.join("sub").join(name), "precious").unwrap();
            }
        }
    }
    let path = planted(w, &case, kind, &vp, file);
    let before = snapshot(&vp);
    let o = w.write_with(opt, &case, &path);
    let after = snapshot(&vp);
    if before != after {
        let changed: Vec<_> = after
            .iter()
            .filter(|(k, v)| before.get(*k) != Some(v))
            .map(|(k, _)| k.display().to_string())
            .collect();
        failures.push(format!(
            "{opt} {kind} ({path}): root's directory changed: {changed:?}"
        ));
    } else if is_root() && o.status.code() != Some(2) {
        failures.push(format!(
            "{opt} {kind} ({path}): not refused: {}",
            describe(&o)
        ));
    }
}

#[test]
fn every_writing_option_refuses_planted_links() {
    let w = World::new();
    let mut failures = Vec::new();
    for opt in DIR_OPTS {
        for kind in ["final", "slash", "dot", "middle", "dotdot"] {
            cell(&w, opt, kind, None, &mut failures);
        }
    }
    for (opt, file) in FILE_OPTS {
        for kind in ["final", "parent", "dot", "middle", "dotdot"] {
            cell(&w, opt, kind, Some(file), &mut failures);
        }
    }
    assert!(
        failures.is_empty(),
        "{} broken:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The r-* cases: `ATT/x` (the attacker's directory, holding `sub`) and
/// `ATT/l` (a link to root's `VP`, which holds `sub` too) swap names
/// thousands of times a second while root writes to `ATT/x/sub[/FILE]`:
/// a check of the path followed by a use of the path would lose.
#[test]
fn a_directory_swapped_for_a_link_while_root_writes_redirects_nothing() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let w = World::new();
    let cases: &[(&str, Option<&str>, usize)] = &[
        ("export -o", Some("junit.xml"), 60),
        ("runs export -o", Some("runs.json"), 30),
        ("--store", Some("runs.db"), 30),
        ("report -o", None, 20),
        ("measure --out", None, 5),
    ];
    let mut failures = Vec::new();
    for (i, (opt, file, tries)) in cases.iter().enumerate() {
        let vp = w.work.join(format!("race-vp-{i}"));
        std::fs::create_dir_all(vp.join("sub")).unwrap();
        std::fs::write(vp.join("sub/results.json"), "precious").unwrap();
        let x = w.att.join(format!("race-{i}-x"));
        std::fs::create_dir_all(x.join("sub")).unwrap();
        give_away(&x);
        give_away(&x.join("sub"));
        plant_link(&vp, &w.att.join(format!("race-{i}-l")));
        let before = snapshot(&vp);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let d = std::fs::File::open(&w.att).unwrap();
                let a = std::ffi::CString::new(format!("race-{i}-x")).unwrap();
                let b = std::ffi::CString::new(format!("race-{i}-l")).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    exchange(&d, &a, &b);
                }
            });
            let target = match file {
                Some(f) => x.join("sub").join(f),
                None => x.join("sub"),
            };
            for n in 0..*tries {
                let o = w.write_with(opt, &format!("race-{i}-{n}"), target.to_str().unwrap());
                if snapshot(&vp) != before {
                    failures.push(format!(
                        "{opt}: root's directory changed after {} tries ({})",
                        n + 1,
                        describe(&o)
                    ));
                    break;
                }
            }
            stop.store(true, Ordering::Relaxed);
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Round-2 finding B6: the attacker owns `lab` (a lab share, their
/// directory under `/tmp`) and renamed root's earlier directory to the
/// name root now writes to. Every writing option refuses an existing
/// directory there (exit 2, naming `lab` and its owner), and root's files
/// in it are unchanged; a new directory under `lab` is still created and
/// written (it is root's own, held by descriptor).
#[test]
fn an_existing_directory_another_user_could_have_renamed_into_place_is_refused() {
    let w = World::new();
    let mut failures = Vec::new();
    let cases = DIR_OPTS
        .iter()
        .map(|o| (*o, None))
        .chain(FILE_OPTS.iter().map(|(o, f)| (*o, Some(*f))));
    for (i, (opt, file)) in cases.enumerate() {
        let lab = w.work.join(format!("lab-{i}"));
        let sub = lab.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        if opt.ends_with("report -o") {
            std::fs::remove_dir(&sub).unwrap();
            let o = run(&["report", &fixture("hell"), "-o", sub.to_str().unwrap()]);
            assert!(o.status.success(), "{}", describe(&o));
        } else {
            for name in ["results.json", "summary.md", file.unwrap_or("x")] {
                std::fs::write(sub.join(name), "precious").unwrap();
            }
        }
        give_away(&lab);
        let path = match file {
            Some(f) => sub.join(f),
            None => sub.clone(),
        };
        let before = snapshot(&lab);
        let o = w.write_with(opt, &format!("b6-{i}"), path.to_str().unwrap());
        if snapshot(&lab) != before {
            failures.push(format!("{opt}: root's directory changed: {}", describe(&o)));
        } else if is_root() {
            let text = describe(&o);
            // The option (a program's output: its stanza; the store: the
            // option and its value).
            let flag = match opt.rsplit(' ').next().unwrap_or(opt) {
                "output.out" => "program[0]: ".to_string(),
                "--store" => "--store ".to_string(),
                f => format!("{f}: "),
            };
            let named = text.contains(&format!("{}, is owned by uid {ATTACKER}", lab.display()))
                && text.contains(&flag);
            if o.status.code() != Some(2) || !named {
                failures.push(format!("{opt}: not refused as expected: {text}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // A new directory is not made there either (round 5 (A), F22: the
    // owner of `lab` could rename or replace it); and a relative path
    // (from a current directory below `lab`) is checked from `/` too.
    let lab = w.work.join("lab-new");
    std::fs::create_dir(&lab).unwrap();
    give_away(&lab);
    let new = lab.join("new");
    let o = run(&["report", &fixture("idle"), "-o", new.to_str().unwrap()]);
    if is_root() {
        assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
        assert!(
            describe(&o).contains("would be created in"),
            "{}",
            describe(&o)
        );
        assert!(!new.exists());
    }
    std::fs::create_dir_all(&new).unwrap();
    let o = command()
        .args(["report", &fixture("idle"), "-o", "new"])
        .current_dir(&lab)
        .output()
        .unwrap();
    if is_root() {
        assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    }
}
