//! The workspace's layering rules, checked on the source tree:
//!
//! - only `crates/sys` names kernel files: no other non-test source under
//!   `crates/*/src` or `src/` holds a string literal starting with `/proc/`
//!   or `/sys/` (the sys readers and `sys::kpath` are the way in);
//! - `audit` does not depend on `partition` (the types both need live in
//!   `sys`).
//!
//! Self-contained: a small lexer finds string literals (normal and raw),
//! skips comments and char literals, and leaves out items marked
//! `#[cfg(test)]` (test modules may build fake trees with literal paths).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Files allowed to hold kernel path literals, each with its reason.
const ALLOWED: &[(&str, &str)] = &[(
    "crates/partition/src/fake.rs",
    "test fixture: builds fake /proc and /sys trees; compiled only with the \
         `testing` feature, which only dev-dependencies enable",
)];

/// A string literal found in source: its line and content (undecoded).
#[derive(Debug, PartialEq)]
struct Lit {
    line: usize,
    text: String,
}

/// String literals of `src` outside `#[cfg(test)]` items.
fn non_test_literals(src: &str) -> Vec<Lit> {
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
    lits.into_iter()
        .filter(|(off, _)| !skip.iter().any(|&(s, e)| *off >= s && *off < e))
        .map(|(_, l)| l)
        .collect()
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
    let found: Vec<(usize, String)> = non_test_literals(src)
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
}

#[test]
fn only_sys_names_kernel_files() {
    let ws = workspace();
    let mut files = vec![];
    rust_files(&ws.join("src"), &mut files);
    let crates = fs::read_dir(ws.join("crates")).expect("crates/");
    for c in crates.flatten() {
        if c.file_name() != "sys" {
            rust_files(&c.path().join("src"), &mut files);
        }
    }
    assert!(files.len() > 20, "the walk found too few files: {files:?}");
    let allowed: BTreeMap<&str, &str> = ALLOWED.iter().copied().collect();
    let mut bad = vec![];
    for f in &files {
        let rel = f
            .strip_prefix(&ws)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if allowed.contains_key(rel.as_str()) {
            continue;
        }
        let src = fs::read_to_string(f).unwrap();
        for l in non_test_literals(&src) {
            if is_kernel_path(&l.text) {
                bad.push(format!("{rel}:{}: \"{}\"", l.line, l.text));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "kernel paths outside crates/sys (use a reader of rtshield_sys or rtshield_sys::kpath):\n{}",
        bad.join("\n")
    );
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
