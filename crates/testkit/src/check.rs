//! The checks tests repeat: what a command printed, that it succeeded or
//! was refused as bad input, that an error is an input error, whether a
//! process is still alive; and the two file helpers every fake-tree test
//! needs.

use rtshield_vocab::InputError;
use std::path::Path;
use std::process::Output;

/// stdout then stderr, as one string (for `contains` checks).
pub fn all_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// stdout and stderr.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Status, stdout and stderr, for assertion messages.
pub fn describe(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// stdout of a command that must succeed (and print UTF-8).
#[track_caller]
pub fn ok(o: Output) -> String {
    assert!(o.status.success(), "rtshield failed: {}", describe(&o));
    String::from_utf8(o.stdout).expect("stdout is UTF-8")
}

/// A refusal of bad input: exit status 2 and `needle` (the option, key or
/// file named) in stderr. Returns stderr.
#[track_caller]
pub fn refused(o: &Output, needle: &str) -> String {
    assert_eq!(o.status.code(), Some(2), "not refused: {}", describe(o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains(needle),
        "{needle:?} not named: {}",
        describe(o)
    );
    err
}

/// The message of the [`InputError`] (exit 2) in `e`'s chain; panics when
/// there is none.
#[track_caller]
pub fn input_error(e: &anyhow::Error) -> String {
    e.chain()
        .find_map(|c| c.downcast_ref::<InputError>())
        .unwrap_or_else(|| panic!("not an input error: {e:#}"))
        .to_string()
}

/// A JSON file, parsed.
#[track_caller]
pub fn json(p: &Path) -> serde_json::Value {
    let t = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The text of the file at `rel` under `base` (fake trees: a leading `/`
/// is ignored, so a kernel path names the file); panics when unreadable.
#[track_caller]
pub fn file_text(base: &Path, rel: &str) -> String {
    let f = base.join(rel.trim_start_matches('/'));
    std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()))
}

/// Write `text` at `rel` under `base`, creating the directories (fake
/// trees: a leading `/` is ignored).
#[track_caller]
pub fn put(base: &Path, rel: &str, text: &str) {
    let f = base.join(rel.trim_start_matches('/'));
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(f, text).unwrap();
}

/// Whether process `pid` is alive and not a zombie (a zombie is dead for
/// a test that waits for a process to end).
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| rtshield_sys::ProcStat::parse(&s))
        .is_some_and(|st| st.state != 'Z')
}
