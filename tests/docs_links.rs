//! Every relative link in README.md and docs/ resolves: the file exists and,
//! for `FILE#anchor` or `#anchor`, the anchor is the GitHub slug of one of
//! that file's headings. Self-contained: no dependency beyond std.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// Inline links and images `[text](target)` / `![alt](target)` outside code
/// fences and code spans, with their 1-based line numbers.
fn links(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence = false;
    for (i, line) in md.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let text = strip_code_spans(line);
        let b = text.as_bytes();
        let mut k = 0;
        while let Some(p) = text[k..].find("](") {
            let start = k + p + 2;
            // The target ends at the matching `)` (targets here hold no parentheses
            // but a title or a space would end it too).
            let mut end = start;
            while end < b.len() && b[end] != b')' && b[end] != b' ' {
                end += 1;
            }
            if end < b.len() {
                out.push((i + 1, text[start..end].to_string()));
            }
            k = end.max(start);
        }
    }
    out
}

/// The line with every `code span` blanked out, so `a](b)` inside one is no link.
fn strip_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut inside = false;
    for c in line.chars() {
        if c == '`' {
            inside = !inside;
            out.push(' ');
        } else {
            out.push(if inside { ' ' } else { c });
        }
    }
    out
}

/// GitHub's heading anchor: lower case, punctuation dropped except `-` and
/// `_`, each space a `-`.
fn slug(heading: &str) -> String {
    let mut s = String::new();
    for c in heading.trim().chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            s.extend(c.to_lowercase());
        } else if c == ' ' {
            s.push('-');
        }
    }
    s
}

/// Anchors of a Markdown file's ATX headings (outside code fences), with
/// GitHub's `-1`, `-2` suffixes for repeated headings.
fn anchors(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut fence = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let hashes = line.bytes().take_while(|&c| c == b'#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(&line[hashes + 1..]);
            let n = seen.entry(base.clone()).or_insert(0);
            out.push(if *n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            });
            *n += 1;
        }
    }
    out
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Problems with the links of `file` (relative to `root`), given a way to read
/// a file of the tree (`None`: it does not exist).
fn check(
    root: &Path,
    file: &Path,
    md: &str,
    read: &dyn Fn(&Path) -> Option<String>,
) -> Vec<String> {
    let mut bad = Vec::new();
    let dir = file.parent().unwrap_or(Path::new(""));
    for (line, target) in links(md) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let resolved = if path.is_empty() {
            file.to_path_buf()
        } else {
            normalize(&dir.join(path))
        };
        let at = format!("{}:{line}: link `{target}`", file.display());
        if resolved.starts_with("..") || resolved.is_absolute() {
            bad.push(format!("{at} leaves the repository"));
            continue;
        }
        let Some(content) = read(&root.join(&resolved)) else {
            bad.push(format!("{at}: {} does not exist", resolved.display()));
            continue;
        };
        if let Some(a) = anchor {
            if resolved.extension().and_then(|e| e.to_str()) != Some("md") {
                bad.push(format!("{at}: anchor on a file that is not Markdown"));
            } else if !anchors(&content).iter().any(|h| h == a) {
                bad.push(format!(
                    "{at}: no heading of {} has the anchor #{a}",
                    resolved.display()
                ));
            }
        }
    }
    bad
}

fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("README.md")];
    let mut stack = vec![PathBuf::from("docs")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(root.join(&d)).unwrap() {
            let e = e.unwrap();
            let rel = d.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                stack.push(rel);
            } else if rel.extension().is_some_and(|x| x == "md") {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// Reads a file, or says it is there (directories and pictures: any content).
fn read_tree(p: &Path) -> Option<String> {
    if p.is_dir() {
        return Some(String::new());
    }
    let bytes = std::fs::read(p).ok()?;
    Some(String::from_utf8(bytes).unwrap_or_default())
}

#[test]
fn every_relative_link_in_readme_and_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = markdown_files(root);
    assert!(
        files.len() > 5,
        "README.md and docs/ should hold the manual: {files:?}"
    );
    let mut bad = Vec::new();
    let mut count = 0;
    for f in &files {
        let md = std::fs::read_to_string(root.join(f)).unwrap();
        count += links(&md).len();
        bad.extend(check(root, f, &md, &read_tree));
    }
    assert!(
        count > 20,
        "only {count} links found: is the parser broken?"
    );
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn readme_links_every_manual_page() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let targets: Vec<String> = links(&readme).into_iter().map(|(_, t)| t).collect();
    for page in markdown_files(root)
        .iter()
        .filter(|p| p.starts_with("docs"))
    {
        let p = page.to_str().unwrap();
        assert!(
            targets.iter().any(|t| t.split('#').next() == Some(p)),
            "README.md does not link {p}"
        );
    }
}

#[test]
fn slugs_follow_github() {
    assert_eq!(
        slug("`rtshield partition`: shield CPUs, and put everything back"),
        "rtshield-partition-shield-cpus-and-put-everything-back"
    );
    assert_eq!(
        slug("Proof on this machine: `bench/isolation-effect.sh`"),
        "proof-on-this-machine-benchisolation-effectsh"
    );
    assert_eq!(
        slug("`histogram.txt` — cyclictest `-h` format"),
        "histogramtxt--cyclictest--h-format"
    );
    assert_eq!(
        slug("The PREEMPT_RT impact article"),
        "the-preempt_rt-impact-article"
    );
    assert_eq!(
        anchors("# A\n## A\n```\n# not a heading\n```\n#nope\n"),
        ["a", "a-1"]
    );
}

#[test]
fn links_outside_code_are_found_and_broken_ones_reported() {
    let md = "see [a](a.md#x) and ![p](img/p.png)\n`[no](code.md)`\n```\n[no](fence.md)\n```\n[w](https://example.org) [b](b.md) [s](#top) [up](../x.md)\n# Top\n";
    let found: Vec<String> = links(md).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        found,
        [
            "a.md#x",
            "img/p.png",
            "https://example.org",
            "b.md",
            "#top",
            "../x.md"
        ]
    );
    // a.md exists without heading x, img/p.png exists, b.md does not.
    let read = |p: &Path| -> Option<String> {
        match p.to_str().unwrap() {
            "r/docs/a.md" => Some("# Y\n".into()),
            "r/docs/img/p.png" => Some(String::new()),
            "r/docs/f.md" => Some(md.into()),
            _ => None,
        }
    };
    let bad = check(Path::new("r"), Path::new("docs/f.md"), md, &read);
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(bad[0].contains("#x"), "{bad:#?}");
    assert!(bad[1].contains("docs/b.md does not exist"), "{bad:#?}");
    assert!(bad[2].contains("../x.md"), "{bad:#?}");
}

/// docs/sources.md's table of headline results (issue 25): one row per
/// source, each with a command and a result from this machine (no row
/// left "to fill").
#[test]
fn sources_table_has_every_source_with_a_command_and_a_result() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let md = std::fs::read_to_string(root.join("docs/sources.md")).unwrap();
    let head = "| source | headline result or figure | rtshield command that reproduces its shape | result on this machine | why it differs |";
    let at = md.find(head).expect("the headline table");
    let rows: Vec<&str> = md[at..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    for src in [
        "the systress article",
        "the torture article",
        "the partitioning article",
        "the PREEMPT_RT impact article",
        "the ARTiS thesis",
    ] {
        let row = rows
            .iter()
            .find(|r| r.starts_with(&format!("| {src} |")))
            .unwrap_or_else(|| panic!("no row for {src}"));
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_eq!(cells.len(), 5, "{row}");
        assert!(cells[2].contains("rtshield "), "{src}: no command");
        assert!(
            !cells[3].contains("to fill") && cells[3].chars().any(|c| c.is_ascii_digit()),
            "{src}: no result from this machine"
        );
    }
}
