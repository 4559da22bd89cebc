//! The workspace's layering rules, checked on the source tree:
//!
//! - only `crates/sys` (and the dev-only test kit, `crates/testkit`) names
//!   kernel files: no other non-test source under `crates/*/src` or `src/`
//!   holds a string literal starting with `/proc/` or `/sys/` (the sys
//!   readers and `sys::kpath` are the way in);
//! - `run`, `campaign` and the binary do not read cgroup files themselves:
//!   they call none of the sys cgroup readers (`Hierarchy::detect`,
//!   `find_cpuset`, `mounts`, `cpus`, `effective_cpus`, `cpuset_of_self`)
//!   and name no cgroup control file; `rtshield-isolation` answers them;
//! - no crate but the binary and `xtask` depends on `clap`;
//! - `rtshield-testkit` is only ever a dev-dependency, and the fake kernel
//!   (`rtshield-fake-kernel`) reaches the binary only through its optional
//!   `fake-kernel` feature, which nothing enables by default;
//! - every crate that writes through the safe-file layer depends on
//!   `rtshield-safefs` itself;
//! - `audit` does not depend on `partition` (what both need about
//!   partitions lives in `isolation`);
//! - every library crate (each `crates/*/src/lib.rs` and the binary's
//!   `src/lib.rs`) has `#![deny(missing_docs)]`;
//! - no function over 120 lines outside test code: every manifest inherits
//!   the workspace lints (`[lints] workspace = true`), which warn
//!   `clippy::too_many_lines` at clippy.toml's threshold of 120 (CI runs
//!   clippy with `-D warnings`), and no non-test source allows that lint;
//! - a crate whose manifest turns doc-tests off (`[lib] doctest = false`,
//!   which saves rustdoc's seconds per crate in every test run) has no
//!   Rust code block in a doc comment, which would then silently never
//!   run;
//! - at most one integration test binary per crate (each `tests/*.rs` and
//!   `tests/*/main.rs` is one, or each `[[test]]` with `autotests =
//!   false`, where every `tests/*.rs` must then be a module of the test
//!   root, so that none is silently left uncompiled).
//!
//! Each rule is a function over (path, text) pairs, so the self-tests below
//! plant a violation and check that it is caught.
//!
//! Self-contained: a small lexer finds string literals (normal and raw),
//! skips comments and char literals, and leaves out items marked
//! `#[cfg(test)]` (test modules may build fake trees with literal paths);
//! a line reader finds the dependencies of each `Cargo.toml`.

use std::fs;
use std::path::{Path, PathBuf};

/// A string literal found in source: its line and content (undecoded).
#[derive(Debug, PartialEq)]
struct Lit {
    line: usize,
    text: String,
}

/// What a source file holds outside `#[cfg(test)]` items: its string
/// literals, and its code with comments, literal contents and test items
/// blanked (same length and lines as the source).
struct Scanned {
    lits: Vec<Lit>,
    code: String,
}

/// Scan `src` (see [`Scanned`]).
// One pass of a small lexer (comments, strings, raw strings, chars,
// `#[cfg(test)]` items): its cases read best side by side.
#[allow(clippy::too_many_lines)]
fn scan(src: &str) -> Scanned {
    let b = src.as_bytes();
    // `code`: the source with comments and literal contents blanked, same
    // length, so offsets agree; `lits`: (offset, line, content).
    let mut code = b.to_vec();
    let mut lits: Vec<(usize, Lit)> = vec![];
    let mut i = 0;
    let mut line = 1;
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut code[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
            blank(&mut code, i, end);
            i = end;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            let start = i;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            blank(&mut code, start, i);
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // Raw string r"..." / r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let body = j + 1;
            let end = src[body..].find(&close).map_or(b.len(), |n| body + n);
            lits.push((
                i,
                Lit {
                    line,
                    text: src[body..end].to_string(),
                },
            ));
            line += src[body..end].matches('\n').count();
            blank(&mut code, body, end);
            i = (end + close.len()).min(b.len());
        } else if c == b'"' {
            let start = i + 1;
            let mut j = start;
            let first_line = line;
            while j < b.len() && b[j] != b'"' {
                if b[j] == b'\\' {
                    j += 1;
                }
                if j < b.len() && b[j] == b'\n' {
                    line += 1;
                }
                j += 1;
            }
            let end = j.min(b.len());
            lits.push((
                i,
                Lit {
                    line: first_line,
                    text: src[start..end].to_string(),
                },
            ));
            blank(&mut code, start, end);
            i = end + 1;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '"', '{') or a lifetime ('a).
            let close = if b.get(i + 1) == Some(&b'\\') {
                src[i + 2..].find('\'').map(|n| i + 2 + n)
            } else {
                let ch_len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch_len) == Some(&b'\'')).then_some(i + 1 + ch_len)
            };
            match close {
                Some(e) => {
                    blank(&mut code, i + 1, e);
                    i = e + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    // Byte ranges of `#[cfg(test)]` items: up to the `;` or the matching `}`.
    let code = String::from_utf8_lossy(&code).into_owned();
    let squeezed: Vec<(usize, char)> = code
        .char_indices()
        .filter(|(_, c)| !c.is_whitespace())
        .collect();
    let flat: String = squeezed.iter().map(|(_, c)| *c).collect();
    let mut skip: Vec<(usize, usize)> = vec![];
    let mut from = 0;
    while let Some(n) = flat[from..].find("#[cfg(test)]") {
        let at = from + n;
        let start = squeezed[at].0;
        let rest = &code[start..];
        let open = rest.find('{');
        let semi = rest.find(';');
        let end = match (open, semi) {
            (Some(o), s) if s.is_none_or(|s| o < s) => {
                let mut depth = 0;
                let mut end = code.len();
                for (k, ch) in rest[o..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = start + o + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (_, Some(s)) => start + s + 1,
            _ => code.len(),
        };
        skip.push((start, end));
        from = at + "#[cfg(test)]".len();
    }
    let in_test = |off: usize| skip.iter().any(|&(s, e)| off >= s && off < e);
    let mut code = code.into_bytes();
    for &(s, e) in &skip {
        for c in &mut code[s..e.min(src.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    }
    Scanned {
        lits: lits
            .into_iter()
            .filter(|(off, _)| !in_test(*off))
            .map(|(_, l)| l)
            .collect(),
        code: String::from_utf8_lossy(&code).into_owned(),
    }
}

fn is_kernel_path(s: &str) -> bool {
    s.starts_with("/proc/") || s.starts_with("/sys/")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file's path relative to the workspace (`crates/run/src/lib.rs`) and
/// its text.
type Files = Vec<(String, String)>;

/// Every non-test source file: `src/` and each `crates/*/src`.
fn sources() -> Files {
    let ws = workspace();
    let mut paths = vec![];
    rust_files(&ws.join("src"), &mut paths);
    for c in fs::read_dir(ws.join("crates")).expect("crates/").flatten() {
        rust_files(&c.path().join("src"), &mut paths);
    }
    assert!(paths.len() > 20, "the walk found too few files: {paths:?}");
    paths
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&ws)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The root `Cargo.toml` and each `crates/*/Cargo.toml`.
fn manifests() -> Files {
    let ws = workspace();
    let mut out = vec![(
        "Cargo.toml".to_string(),
        fs::read_to_string(ws.join("Cargo.toml")).unwrap(),
    )];
    for c in fs::read_dir(ws.join("crates")).expect("crates/").flatten() {
        if let Ok(t) = fs::read_to_string(c.path().join("Cargo.toml")) {
            let name = c.file_name().to_string_lossy().into_owned();
            out.push((format!("crates/{name}/Cargo.toml"), t));
        }
    }
    out.sort();
    out
}

/// The line of byte offset `off` in `text` (1-based).
fn line_of(text: &str, off: usize) -> usize {
    text[..off].matches('\n').count() + 1
}

/// Rule 1: kernel path literals outside `crates/sys` and `crates/testkit`.
fn kernel_path_violations(files: &[(String, String)]) -> Vec<String> {
    let mut bad = vec![];
    for (rel, src) in files {
        if rel.starts_with("crates/sys/") || rel.starts_with("crates/testkit/") {
            continue;
        }
        for l in scan(src).lits {
            if is_kernel_path(&l.text) {
                bad.push(format!("{rel}:{}: \"{}\"", l.line, l.text));
            }
        }
    }
    bad
}

/// The sys cgroup readers (called as `x.name(` or `Type::name(`) and the
/// cgroup control files `run`, `campaign` and the binary must not touch.
const CGROUP_READERS: &[&str] = &[
    "Hierarchy::detect",
    "find_cpuset(",
    "cgroup::mounts(",
    ".cpus(",
    "effective_cpus(",
    "cpuset_of_self(",
];
/// A path to a cgroup control file being built (`{dir}/cgroup.procs`);
/// messages that name a file without a path are not reads.
const CGROUP_FILES: &[&str] = &["/cgroup.procs", "/cgroup.controllers", "/cpuset.", "/tasks"];

/// Rule 2: cgroup reads in `run`, `campaign` or the binary.
fn cgroup_read_violations(files: &[(String, String)]) -> Vec<String> {
    let mut bad = vec![];
    let watched = ["crates/run/src/", "crates/campaign/src/", "src/"];
    for (rel, src) in files {
        if !watched.iter().any(|w| rel.starts_with(w)) {
            continue;
        }
        let s = scan(src);
        for r in CGROUP_READERS {
            for (off, _) in s.code.match_indices(r) {
                bad.push(format!("{rel}:{}: calls {r}", line_of(src, off)));
            }
        }
        for l in &s.lits {
            if let Some(f) = CGROUP_FILES.iter().find(|f| l.text.contains(*f)) {
                bad.push(format!("{rel}:{}: names the cgroup file {f}", l.line));
            }
        }
    }
    bad
}

/// One dependency line of a manifest: its section (`dependencies`,
/// `dev-dependencies`, `workspace.dependencies`, `features`, ...), the
/// dependency's name and the rest of the line.
struct Dep {
    section: String,
    name: String,
    rest: String,
}

/// Every `name = ...` / `name.workspace = ...` line, with its section.
fn deps(toml: &str) -> Vec<Dep> {
    let mut section = String::new();
    let mut out = vec![];
    for line in toml.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(h) = line.strip_prefix('[') {
            section = h.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        let Some((key, rest)) = line.split_once('=') else {
            continue;
        };
        let name = key.trim().split('.').next().unwrap_or("").trim_matches('"');
        out.push(Dep {
            section: section.clone(),
            name: name.to_string(),
            rest: rest.trim().to_string(),
        });
    }
    out
}

/// Whether a manifest section lists dependencies a build links (not
/// dev-dependencies, not the workspace's table of versions).
fn links(section: &str) -> bool {
    (section.ends_with("dependencies") || section.contains("dependencies."))
        && !section.contains("dev-dependencies")
        && !section.starts_with("workspace")
}

/// Rule 3: `clap` anywhere but the binary and xtask.
fn clap_violations(manifests: &[(String, String)]) -> Vec<String> {
    let allowed = ["Cargo.toml", "crates/xtask/Cargo.toml"];
    let mut bad = vec![];
    for (rel, toml) in manifests
        .iter()
        .filter(|(r, _)| !allowed.contains(&r.as_str()))
    {
        for d in deps(toml) {
            if d.name.starts_with("clap") && d.section.contains("dependencies") {
                bad.push(format!("{rel}: [{}] {}", d.section, d.name));
            }
        }
    }
    bad
}

/// Rule 4: the test kit only as a dev-dependency; the fake kernel only in
/// the test kit and as the binary's optional, non-default feature.
fn dev_only_violations(manifests: &[(String, String)]) -> Vec<String> {
    let mut bad = vec![];
    for (rel, toml) in manifests {
        let ds = deps(toml);
        for d in ds.iter().filter(|d| links(&d.section)) {
            let fake_ok = match rel.as_str() {
                "crates/testkit/Cargo.toml" => true,
                "Cargo.toml" => d.rest.contains("optional = true"),
                _ => false,
            };
            if d.name == "rtshield-testkit" || (d.name == "rtshield-fake-kernel" && !fake_ok) {
                bad.push(format!("{rel}: [{}] {} = {}", d.section, d.name, d.rest));
            }
        }
        for d in ds
            .iter()
            .filter(|d| d.section == "features" && d.name == "default")
        {
            if d.rest.contains("fake-kernel") {
                bad.push(format!("{rel}: the fake kernel is a default feature"));
            }
        }
    }
    bad
}

/// Rule 5: a crate whose sources use the safe-file layer lists
/// `rtshield-safefs` among its own dependencies.
fn safefs_violations(files: &[(String, String)], manifests: &[(String, String)]) -> Vec<String> {
    let mut bad = vec![];
    for (rel, toml) in manifests {
        let dir = rel.trim_end_matches("Cargo.toml");
        if dir == "crates/safefs/" {
            continue;
        }
        let src = if dir.is_empty() {
            "src/".to_string()
        } else {
            format!("{dir}src/")
        };
        let writes = files.iter().any(|(f, text)| {
            f.starts_with(&src)
                && ["SafeDir", "DirPolicy", "safefs::"]
                    .iter()
                    .any(|w| scan(text).code.contains(w))
        });
        let direct = deps(toml)
            .iter()
            .any(|d| links(&d.section) && d.name == "rtshield-safefs");
        if writes && !direct {
            bad.push(format!(
                "{rel}: uses the safe-file layer without depending on rtshield-safefs"
            ));
        }
    }
    bad
}

/// The text of `#![NAME(...)]` inner attributes in `code` (comments and
/// literals already blanked), whitespace removed: `deny(missing_docs)`.
fn inner_attrs(code: &str) -> Vec<String> {
    let flat: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = vec![];
    let mut from = 0;
    while let Some(n) = flat[from..].find("#![") {
        let start = from + n + 3;
        let Some(len) = flat[start..].find(")]") else {
            break;
        };
        out.push(flat[start..=start + len].to_string());
        from = start + len;
    }
    out
}

/// Rule 7: a library crate's root without `#![deny(missing_docs)]`.
fn missing_docs_violations(files: &[(String, String)]) -> Vec<String> {
    let mut bad = vec![];
    for (rel, src) in files {
        let lib_root = rel == "src/lib.rs"
            || (rel.starts_with("crates/")
                && rel.ends_with("/src/lib.rs")
                && rel.matches('/').count() == 3);
        if !lib_root {
            continue;
        }
        let denied = inner_attrs(&scan(src).code).iter().any(|a| {
            a.strip_prefix("deny(").is_some_and(|l| {
                l.trim_end_matches(')')
                    .split(',')
                    .any(|n| n == "missing_docs")
            })
        });
        if !denied {
            bad.push(format!("{rel}: no #![deny(missing_docs)]"));
        }
    }
    bad
}

/// Rule 8: a manifest that does not inherit the workspace lints, a
/// workspace without `too_many_lines` warned, or a clippy.toml whose
/// threshold is not 120.
fn lint_violations(manifests: &[(String, String)], clippy_toml: &str) -> Vec<String> {
    let mut bad = vec![];
    for (rel, toml) in manifests {
        let inherits = deps(toml)
            .iter()
            .any(|d| d.section == "lints" && d.name == "workspace" && d.rest == "true");
        if !inherits {
            bad.push(format!("{rel}: no `[lints] workspace = true`"));
        }
        if rel == "Cargo.toml" {
            let warned = deps(toml).iter().any(|d| {
                d.section == "workspace.lints.clippy"
                    && d.name == "too_many_lines"
                    && matches!(d.rest.trim_matches('"'), "warn" | "deny")
            });
            if !warned {
                bad.push(
                    "Cargo.toml: [workspace.lints.clippy] does not warn too_many_lines".into(),
                );
            }
        }
    }
    let threshold = deps(clippy_toml)
        .into_iter()
        .find(|d| d.name == "too-many-lines-threshold")
        .map(|d| d.rest);
    if threshold.as_deref() != Some("120") {
        bad.push(format!(
            "clippy.toml: too-many-lines-threshold is {threshold:?}, not 120"
        ));
    }
    bad
}

/// The `(line, info string)` of each Rust code block in a file's doc
/// comments (`///`, `//!`): one rustdoc runs as a doc-test (a fence with
/// no language, or `rust` or a doc-test attribute such as `no_run`).
fn rust_doc_blocks(src: &str) -> Vec<(usize, String)> {
    let mut out = vec![];
    let mut open = false;
    for (i, line) in src.lines().enumerate() {
        let t = line.trim_start();
        let Some(doc) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) else {
            continue;
        };
        let Some(info) = doc.trim().strip_prefix("```") else {
            continue;
        };
        if open {
            open = false;
            continue;
        }
        open = true;
        let info = info.trim();
        let rust = info.is_empty()
            || info.split(',').map(str::trim).any(|w| {
                matches!(
                    w,
                    "rust" | "no_run" | "should_panic" | "compile_fail" | "ignore" | "test_harness"
                ) || w.starts_with("edition")
            });
        if rust {
            out.push((i + 1, info.to_string()));
        }
    }
    out
}

/// Rule 10: a crate with `[lib] doctest = false` whose sources hold a
/// doc-test.
fn doctest_violations(files: &[(String, String)], manifests: &[(String, String)]) -> Vec<String> {
    let mut bad = vec![];
    for (rel, toml) in manifests {
        let off = deps(toml)
            .iter()
            .any(|d| d.section == "lib" && d.name == "doctest" && d.rest == "false");
        if !off {
            continue;
        }
        let src_dir = format!("{}src/", rel.trim_end_matches("Cargo.toml"));
        for (f, text) in files.iter().filter(|(f, _)| f.starts_with(&src_dir)) {
            for (line, info) in rust_doc_blocks(text) {
                bad.push(format!(
                    "{f}:{line}: a doc-test (```{info}) in a crate whose {rel} says \
                     `doctest = false`: it would never run (remove that line, or fence the block as `text`)"
                ));
            }
        }
    }
    bad
}

/// Rule 9: `too_many_lines` allowed outside test code (test items are
/// blanked by [`scan`]; integration tests are not among the sources).
fn long_function_allow_violations(files: &[(String, String)]) -> Vec<String> {
    let mut bad = vec![];
    for (rel, src) in files {
        let code = scan(src).code;
        let flat: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        if flat.contains("clippy::too_many_lines") {
            bad.push(format!(
                "{rel}: allows clippy::too_many_lines outside test code"
            ));
        }
    }
    bad
}

/// One crate's integration tests: its manifest, and the `tests/` entries
/// as (path relative to `tests/`, text) — `*.rs` files and `*/main.rs`.
struct TestDir {
    manifest: (String, String),
    entries: Vec<(String, String)>,
}

/// Every crate's [`TestDir`] (the binary's is `Cargo.toml`'s).
fn test_dirs() -> Vec<TestDir> {
    let ws = workspace();
    manifests()
        .into_iter()
        .map(|(rel, toml)| {
            let dir = ws.join(rel.trim_end_matches("Cargo.toml")).join("tests");
            let mut entries = vec![];
            for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                if p.is_file() && name.ends_with(".rs") {
                    entries.push((name, fs::read_to_string(&p).unwrap()));
                } else if let Ok(t) = fs::read_to_string(p.join("main.rs")) {
                    entries.push((format!("{name}/main.rs"), t));
                }
            }
            entries.sort();
            TestDir {
                manifest: (rel, toml),
                entries,
            }
        })
        .collect()
}

/// Rule 10: more than one integration test binary in a crate, or, with
/// `autotests = false`, a `tests/*.rs` file no test root declares.
fn test_binary_violations(dirs: &[TestDir]) -> Vec<String> {
    let mut bad = vec![];
    for d in dirs {
        let (rel, toml) = &d.manifest;
        let manual = toml.lines().any(|l| {
            let l = l.split('#').next().unwrap_or("").replace(' ', "");
            l == "autotests=false"
        });
        let roots: Vec<String> = if manual {
            let mut roots = vec![];
            let mut in_test = false;
            for l in toml.lines().map(str::trim) {
                if l.starts_with('[') {
                    in_test = l == "[[test]]";
                } else if let Some(p) = in_test.then(|| l.strip_prefix("path")).flatten() {
                    let p = p.trim_start_matches([' ', '=']).trim().trim_matches('"');
                    roots.push(p.trim_start_matches("tests/").to_string());
                }
            }
            roots
        } else {
            d.entries.iter().map(|(n, _)| n.clone()).collect()
        };
        if roots.len() > 1 {
            bad.push(format!(
                "{rel}: {} integration test binaries ({}): make them modules of one",
                roots.len(),
                roots.join(", ")
            ));
        }
        if manual {
            let declared = |name: &str| {
                let m = name.trim_end_matches(".rs");
                d.entries.iter().any(|(n, t)| {
                    roots.contains(n)
                        && scan(t).code.split(';').any(|stmt| {
                            let w: Vec<&str> = stmt.split_whitespace().collect();
                            w.ends_with(&["mod", m])
                        })
                })
            };
            for (n, _) in d
                .entries
                .iter()
                .filter(|(n, _)| !roots.contains(n) && !n.contains('/'))
            {
                if !declared(n) {
                    bad.push(format!("{rel}: tests/{n} is in no test binary (autotests = false): declare it `mod {};` in the test root", n.trim_end_matches(".rs")));
                }
            }
        }
    }
    bad
}

#[test]
fn the_scanner_finds_literals_outside_tests_only() {
    let src = r####"
// "/proc/in a comment"
/* "/sys/in a block /* nested */ comment" */
fn f() -> char { let _x = '"'; let _y = '{'; read("/proc/stat") }
fn g<'a>(s: &'a str) -> &'a str { r#"/sys/raw "quoted""# }
#[cfg(test)]
fn helper() { let _ = "/proc/test-helper"; let _ = '}'; }
#[cfg(test)]
mod tests {
    fn t() { let _ = "/sys/test"; if true { let _ = "{"; } }
}
const AFTER: &str = "/sys/after";
"####;
    let s = scan(src);
    let found: Vec<(usize, String)> = s
        .lits
        .into_iter()
        .filter(|l| is_kernel_path(&l.text))
        .map(|l| (l.line, l.text))
        .collect();
    assert_eq!(
        found,
        vec![
            (4, "/proc/stat".to_string()),
            (5, "/sys/raw \"quoted\"".to_string()),
            (12, "/sys/after".to_string()),
        ]
    );
    // The code keeps its lines, loses comments, literals and test items.
    assert_eq!(s.code.len(), src.len());
    assert!(s.code.contains("fn f() -> char") && s.code.contains("const AFTER"));
    assert!(!s.code.contains("helper") && !s.code.contains("in a comment"));
}

#[test]
fn only_sys_and_the_test_kit_name_kernel_files() {
    let bad = kernel_path_violations(&sources());
    assert!(
        bad.is_empty(),
        "kernel paths outside crates/sys (use a reader of rtshield_sys or rtshield_sys::kpath):\n{}",
        bad.join("\n")
    );
}

#[test]
fn run_campaign_and_the_binary_read_no_cgroup_file() {
    let bad = cgroup_read_violations(&sources());
    assert!(
        bad.is_empty(),
        "cgroup reads outside isolation/partition/audit (ask rtshield_isolation::Partitions):\n{}",
        bad.join("\n")
    );
}

#[test]
fn only_the_binary_and_xtask_depend_on_clap() {
    let bad = clap_violations(&manifests());
    assert!(
        bad.is_empty(),
        "clap outside the binary:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_test_kit_and_the_fake_kernel_stay_out_of_shipped_builds() {
    let m = manifests();
    assert!(m.iter().any(|(r, _)| r == "crates/testkit/Cargo.toml"));
    let bad = dev_only_violations(&m);
    assert!(
        bad.is_empty(),
        "test-only crates linked by a build:\n{}",
        bad.join("\n")
    );
}

#[test]
fn writers_depend_on_the_safe_file_layer_directly() {
    let bad = safefs_violations(&sources(), &manifests());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn audit_does_not_depend_on_partition() {
    let toml = fs::read_to_string(workspace().join("crates/audit/Cargo.toml")).unwrap();
    let deps: Vec<&str> = toml
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter(|l| l.contains("rtshield-partition"))
        .collect();
    assert!(
        deps.is_empty(),
        "crates/audit/Cargo.toml depends on rtshield-partition: {deps:?}"
    );
    // And its sources do not reach for it either.
    let mut files = vec![];
    rust_files(&workspace().join("crates/audit"), &mut files);
    for f in files {
        let src = fs::read_to_string(&f).unwrap();
        assert!(
            !src.contains("rtshield_partition"),
            "{} uses rtshield_partition",
            f.display()
        );
    }
}

#[test]
fn every_library_crate_denies_missing_docs() {
    let bad = missing_docs_violations(&sources());
    assert!(
        bad.is_empty(),
        "undocumented items may creep in:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_function_over_120_lines_outside_tests() {
    let clippy = fs::read_to_string(workspace().join("clippy.toml")).expect("clippy.toml");
    let mut bad = lint_violations(&manifests(), &clippy);
    bad.extend(long_function_allow_violations(&sources()));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn crates_without_doctests_hold_no_doc_test() {
    let m = manifests();
    assert!(
        m.iter()
            .filter(|(_, t)| t.contains("doctest = false"))
            .count()
            > 10,
        "the rule reads no manifest with doctest = false"
    );
    let bad = doctest_violations(&sources(), &m);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn one_integration_test_binary_per_crate() {
    let dirs = test_dirs();
    assert!(dirs
        .iter()
        .any(|d| d.manifest.0 == "Cargo.toml" && d.entries.len() > 10));
    let bad = test_binary_violations(&dirs);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Each rule catches a planted violation (and lets the same text pass
/// where it is allowed): a rule that cannot fail checks nothing.
#[test]
fn planted_violations_are_caught() {
    let f = |rel: &str, text: &str| vec![(rel.to_string(), text.to_string())];
    let kernel = "fn f() -> String { read(\"/proc/stat\") }\n";
    assert_eq!(
        kernel_path_violations(&f("crates/run/src/x.rs", kernel)).len(),
        1
    );
    assert!(kernel_path_violations(&f("crates/sys/src/x.rs", kernel)).is_empty());
    assert!(kernel_path_violations(&f("crates/testkit/src/x.rs", kernel)).is_empty());

    let reads = "fn f(r: &Root) { let h = Hierarchy::detect(r); let c = h.cpus(r, \"/x\"); }\n";
    assert_eq!(
        cgroup_read_violations(&f("crates/run/src/x.rs", reads)).len(),
        2
    );
    assert_eq!(cgroup_read_violations(&f("src/cmd/x.rs", reads)).len(), 2);
    assert!(cgroup_read_violations(&f("crates/isolation/src/x.rs", reads)).is_empty());
    let file = "fn f() -> String { format!(\"{d}/cgroup.procs\") }\n// find_cpuset( in a comment\n";
    assert_eq!(
        cgroup_read_violations(&f("crates/campaign/src/x.rs", file)).len(),
        1
    );

    let clap = "[package]\nname = \"x\"\n\n[dependencies]\nclap.workspace = true\n";
    assert_eq!(clap_violations(&f("crates/run/Cargo.toml", clap)).len(), 1);
    assert!(clap_violations(&f("crates/xtask/Cargo.toml", clap)).is_empty());

    let kit = "[dependencies]\nrtshield-testkit.workspace = true\n";
    assert_eq!(
        dev_only_violations(&f("crates/run/Cargo.toml", kit)).len(),
        1
    );
    let dev_kit = "[dev-dependencies]\nrtshield-testkit.workspace = true\n";
    assert!(dev_only_violations(&f("crates/run/Cargo.toml", dev_kit)).is_empty());
    let fake = "[dependencies]\nrtshield-fake-kernel.workspace = true\n";
    assert_eq!(dev_only_violations(&f("Cargo.toml", fake)).len(), 1);
    let optional = "[dependencies]\nrtshield-fake-kernel = { workspace = true, optional = true }\n\
                    [features]\ndefault = [\"fake-kernel\"]\n";
    assert_eq!(dev_only_violations(&f("Cargo.toml", optional)).len(), 1);

    let writer = f("crates/report/src/x.rs", "fn f(d: &SafeDir) {}\n");
    let without = f(
        "crates/report/Cargo.toml",
        "[dependencies]\nrtshield-sys.workspace = true\n",
    );
    assert_eq!(safefs_violations(&writer, &without).len(), 1);
    let with = f(
        "crates/report/Cargo.toml",
        "[dependencies]\nrtshield-safefs.workspace = true\n",
    );
    assert!(safefs_violations(&writer, &with).is_empty());

    let documented = "//! The crate.\n#![deny(missing_docs)]\n#![warn(unreachable_pub)]\n";
    let lax = "//! The crate, `#![deny(missing_docs)]` in its doc only.\n// #![deny(missing_docs)]\n#![warn(unreachable_pub, missing_docs)]\n";
    assert!(missing_docs_violations(&f("crates/run/src/lib.rs", documented)).is_empty());
    assert!(
        missing_docs_violations(&f("src/lib.rs", "#![deny(unsafe_code, missing_docs)]\n"))
            .is_empty()
    );
    assert_eq!(
        missing_docs_violations(&f("crates/run/src/lib.rs", lax)).len(),
        1
    );
    assert_eq!(missing_docs_violations(&f("src/lib.rs", lax)).len(), 1);
    assert!(missing_docs_violations(&f("crates/run/src/x/lib.rs", lax)).is_empty());

    let member = "[package]\nname = \"x\"\n\n[lints]\nworkspace = true\n";
    let root = "[workspace.lints.clippy]\ntoo_many_lines = \"warn\"\n[lints]\nworkspace = true\n";
    let threshold = "too-many-lines-threshold = 120\n";
    let mut good = f("crates/run/Cargo.toml", member);
    good.extend(f("Cargo.toml", root));
    assert!(lint_violations(&good, threshold).is_empty());
    let no_lints = f("crates/run/Cargo.toml", "[package]\nname = \"x\"\n");
    assert_eq!(lint_violations(&no_lints, threshold).len(), 1);
    let quiet_root = f("Cargo.toml", "[lints]\nworkspace = true\n");
    assert_eq!(lint_violations(&quiet_root, threshold).len(), 1);
    assert_eq!(
        lint_violations(&good, "too-many-lines-threshold = 200\n").len(),
        1
    );
    let allow = "#[allow(clippy::too_many_lines)]\nfn long() {}\n";
    assert_eq!(
        long_function_allow_violations(&f("crates/run/src/x.rs", allow)).len(),
        1
    );
    let in_test = "#[cfg(test)]\nmod tests {\n    #![allow(clippy::too_many_lines)]\n}\n// clippy::too_many_lines\n";
    assert!(long_function_allow_violations(&f("crates/run/src/x.rs", in_test)).is_empty());

    let dir = |rel: &str, toml: &str, entries: &[(&str, &str)]| TestDir {
        manifest: (rel.to_string(), toml.to_string()),
        entries: entries
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect(),
    };
    let one = dir("crates/run/Cargo.toml", "", &[("run/main.rs", "mod a;")]);
    let two = dir(
        "crates/run/Cargo.toml",
        "",
        &[("a.rs", ""), ("run/main.rs", "mod b;")],
    );
    assert!(test_binary_violations(&[one]).is_empty());
    assert_eq!(test_binary_violations(&[two]).len(), 1);
    let manual = "autotests = false\n[[test]]\nname = \"integration\"\npath = \"tests/tests.rs\"\n";
    let all_in = dir(
        "Cargo.toml",
        manual,
        &[
            ("a.rs", ""),
            ("tests.rs", "mod util;\nmod a;\n"),
            ("util.rs", ""),
        ],
    );
    assert!(test_binary_violations(&[all_in]).is_empty());
    let forgotten = dir(
        "Cargo.toml",
        manual,
        &[
            ("a.rs", ""),
            ("tests.rs", "// mod a;\nmod util;\n"),
            ("util.rs", ""),
        ],
    );
    assert_eq!(test_binary_violations(&[forgotten]).len(), 1);
    let two_roots = format!("{manual}[[test]]\nname = \"b\"\npath = \"tests/b.rs\"\n");
    let two_manual = dir("Cargo.toml", &two_roots, &[("b.rs", ""), ("tests.rs", "")]);
    assert_eq!(test_binary_violations(&[two_manual]).len(), 1);
}

/// Rule 10 catches a planted doc-test, and only where doc-tests are off.
#[test]
fn a_planted_doc_test_is_caught() {
    let f = |rel: &str, text: &str| vec![(rel.to_string(), text.to_string())];
    let off = f(
        "crates/run/Cargo.toml",
        "[package]\nname = \"x\"\n[lib]\ndoctest = false\n",
    );
    let on = f("crates/run/Cargo.toml", "[package]\nname = \"x\"\n");
    let doctest = f(
        "crates/run/src/x.rs",
        "//! ```toml\n//! a = 1\n//! ```\n/// ```\n/// f();\n/// ```\nfn f() {}\n",
    );
    let text_only = f("crates/run/src/x.rs", "/// ```text\n/// f();\n/// ```\n");
    assert_eq!(doctest_violations(&doctest, &off).len(), 1);
    assert!(doctest_violations(&doctest, &on).is_empty());
    assert!(doctest_violations(&text_only, &off).is_empty());
    assert_eq!(
        doctest_violations(&f("crates/run/src/y.rs", "    //! ```no_run\n"), &off).len(),
        1
    );
}
