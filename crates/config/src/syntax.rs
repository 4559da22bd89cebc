//! The systress file syntax, without meaning: stanzas (`main`,
//! `timer_thread[N]`, `program[N]`), braces, `key value` lines and `#`
//! comments, each with its line and column for error messages.
//!
//! The format is line-based: a brace counts only when it stands alone on
//! its line (or ends a stanza header), so values may contain braces, as in
//! `cmdline find / -type d -exec /bin/ls {} ; -print`.

use rtshield_text::excerpt::quote;
use rtshield_vocab::InputError;

/// A 1-based position in the file (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    pub line: usize,
    pub col: usize,
}

/// `key value` inside a stanza.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub key: String,
    pub key_at: Pos,
    /// Everything after the key, comment removed, trimmed (may be empty).
    pub value: String,
    pub value_at: Pos,
}

/// `name[index] { entries }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stanza {
    pub name: String,
    pub index: Option<u32>,
    pub at: Pos,
    pub entries: Vec<Entry>,
}

/// Error builder bound to a file name.
#[derive(Debug, Clone)]
pub(crate) struct Errs<'a> {
    pub file: &'a str,
}

impl Errs<'_> {
    pub(crate) fn at(&self, p: Pos, msg: impl std::fmt::Display) -> InputError {
        InputError::at(self.file, p.line, p.col, msg)
    }
}

/// Cut a `#` comment, unless the `#` is inside quotes.
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') => escaped = true,
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Column (1-based, in characters) of byte offset `off` in `line`.
fn col_of(line: &str, off: usize) -> usize {
    line[..off].chars().count() + 1
}

/// A header `name` or `name[N]`, possibly followed by `{`.
/// Returns (name, index, has_brace) or an error message and column offset.
fn parse_header(t: &str) -> Result<(String, Option<u32>, bool), (usize, String)> {
    let (head, brace) = match t.strip_suffix('{') {
        Some(h) => (h.trim_end(), true),
        None => (t, false),
    };
    let name_end = head
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(head.len());
    let name = &head[..name_end];
    if name.is_empty() {
        return Err((
            0,
            format!(
                "expected a stanza name, found '{}' (expected main, timer_thread[N] or program[N])",
                quote(t)
            ),
        ));
    }
    let rest = &head[name_end..];
    if rest.is_empty() {
        return Ok((name.to_string(), None, brace));
    }
    let Some(inner) = rest.strip_prefix('[') else {
        return Err((
            name_end,
            format!(
                "unexpected '{}' after '{}' (expected '{{' or [N])",
                quote(rest.trim()),
                quote(name)
            ),
        ));
    };
    let Some(close) = inner.find(']') else {
        return Err((
            name_end,
            format!(
                "missing ']' in '{}' (expected {}[N])",
                quote(head),
                quote(name)
            ),
        ));
    };
    let num = inner[..close].trim();
    let idx: u32 = num.parse().map_err(|_| {
        (
            name_end + 1,
            format!(
                "invalid index '{}' (expected a number: {name}[0], {name}[1], ...)",
                quote(num),
                name = quote(name)
            ),
        )
    })?;
    if !inner[close + 1..].trim().is_empty() {
        return Err((
            name_end + 1 + close + 1,
            format!(
                "unexpected '{}' after '{}[{idx}]' (expected '{{')",
                quote(inner[close + 1..].trim()),
                quote(name)
            ),
        ));
    }
    Ok((name.to_string(), Some(idx), brace))
}

/// Whether a line inside a stanza looks like the header of another stanza
/// (the usual sign of a forgotten `}`).
fn looks_like_header(t: &str) -> bool {
    let t = t.trim_end_matches('{').trim();
    let Some(open) = t.find('[') else {
        return false;
    };
    t.ends_with(']')
        && t[..open]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !t[..open].is_empty()
        && !t.contains(char::is_whitespace)
}

enum State {
    Outside,
    /// Header seen, `{` expected.
    Brace(Stanza),
    Inside(Stanza, Pos),
}

/// Split a file into stanzas. Only syntax is checked here.
pub(crate) fn parse(file: &str, text: &str) -> Result<Vec<Stanza>, InputError> {
    let e = Errs { file };
    let mut out = Vec::new();
    let mut state = State::Outside;
    for (ln, raw) in text.lines().enumerate() {
        let line = ln + 1;
        let body = strip_comment(raw);
        let trimmed = body.trim();
        if trimmed.is_empty() {
            continue;
        }
        let lead = body.len() - body.trim_start().len();
        let at = Pos {
            line,
            col: col_of(body, lead),
        };
        state = match state {
            State::Outside => {
                if trimmed == "}" {
                    return Err(e.at(at, "'}' without a matching '{'"));
                }
                if trimmed == "{" {
                    return Err(e.at(at, "'{' without a stanza name before it (expected main, timer_thread[N] or program[N])"));
                }
                let (name, index, brace) = parse_header(trimmed).map_err(|(off, m)| {
                    e.at(
                        Pos {
                            line,
                            col: col_of(body, lead + off),
                        },
                        m,
                    )
                })?;
                let st = Stanza {
                    name,
                    index,
                    at,
                    entries: Vec::new(),
                };
                if brace {
                    let bpos = Pos {
                        line,
                        col: col_of(body, body.trim_end().len() - 1),
                    };
                    State::Inside(st, bpos)
                } else {
                    State::Brace(st)
                }
            }
            State::Brace(st) => {
                if trimmed != "{" {
                    return Err(e.at(
                        at,
                        format!(
                            "expected '{{' to open the '{}' stanza, found '{}'",
                            display_name(&st),
                            quote(trimmed)
                        ),
                    ));
                }
                State::Inside(st, at)
            }
            State::Inside(mut st, open) => {
                if trimmed == "}" {
                    out.push(st);
                    State::Outside
                } else if trimmed == "{" {
                    return Err(e.at(
                        at,
                        format!("unexpected '{{' inside the '{}' stanza", display_name(&st)),
                    ));
                } else if looks_like_header(trimmed)
                    || trimmed.starts_with("main") && trimmed.trim_end_matches('{').trim() == "main"
                {
                    return Err(e.at(
                        open,
                        format!(
                            "missing '}}': the '{}' stanza opened here is not closed before '{trimmed}' at line {line}",
                            display_name(&st)
                        ),
                    ));
                } else {
                    let key_end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
                    let key = &trimmed[..key_end];
                    let rest = &trimmed[key_end..];
                    let value = rest.trim();
                    let voff = lead + key_end + (rest.len() - rest.trim_start().len());
                    st.entries.push(Entry {
                        key: key.to_string(),
                        key_at: at,
                        value: value.to_string(),
                        value_at: Pos {
                            line,
                            col: col_of(body, voff.min(body.len())),
                        },
                    });
                    State::Inside(st, open)
                }
            }
        };
    }
    match state {
        State::Outside => Ok(out),
        State::Brace(st) => Err(e.at(
            st.at,
            format!(
                "expected '{{' after '{}', found the end of the file",
                display_name(&st)
            ),
        )),
        State::Inside(st, open) => Err(e.at(
            open,
            format!(
                "missing '}}': the '{}' stanza opened here is not closed at the end of the file",
                display_name(&st)
            ),
        )),
    }
}

pub(crate) fn display_name(st: &Stanza) -> String {
    match st.index {
        Some(i) => format!("{}[{i}]", st.name),
        None => st.name.clone(),
    }
}

/// Split a command line into words like a shell would, without running
/// one: `"..."` and `'...'` group words, `\` escapes the next character;
/// `{}` and `;` are ordinary words. Returns the byte offset of an
/// unterminated quote on error.
pub(crate) fn split_words(s: &str) -> Result<Vec<String>, (usize, String)> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<(char, usize)> = None;
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some((q, _)), c) if c == q => quote = None,
            (Some(('"', _)), '\\') => match chars.next() {
                Some((_, n)) if matches!(n, '"' | '\\' | '$' | '`') => cur.push(n),
                Some((_, n)) => {
                    cur.push('\\');
                    cur.push(n);
                }
                None => return Err((i, "a backslash ends the line".into())),
            },
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some((c, i));
                in_word = true;
            }
            (None, '\\') => match chars.next() {
                Some((_, n)) => {
                    cur.push(n);
                    in_word = true;
                }
                None => return Err((i, "a backslash ends the line".into())),
            },
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if let Some((q, at)) = quote {
        return Err((
            at,
            format!("unterminated {q} quote (expected a closing {q})"),
        ));
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stanzas_entries_and_positions() {
        let t = "# c\nmain\n{\n  cpu_affinity 0-6   # x\n  memlock\n}\n\ntimer_thread[0] {\n\tstats.period 2 s\n}\n";
        let s = parse("f", t).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "main");
        assert_eq!(s[0].at, Pos { line: 2, col: 1 });
        let e = &s[0].entries[0];
        assert_eq!((e.key.as_str(), e.value.as_str()), ("cpu_affinity", "0-6"));
        assert_eq!(e.key_at, Pos { line: 4, col: 3 });
        assert_eq!(e.value_at, Pos { line: 4, col: 16 });
        assert_eq!(s[0].entries[1].value, "");
        assert_eq!((s[1].name.as_str(), s[1].index), ("timer_thread", Some(0)));
        assert_eq!(s[1].entries[0].key_at, Pos { line: 9, col: 2 });
    }

    #[test]
    fn braces_inside_values_and_hashes_inside_quotes() {
        let t = "program[0]\n{\n  cmdline find / -exec /bin/ls {} ; -print\n  cmdline sh -c \"echo '#' | cat\" # real comment\n}\n";
        let s = parse("f", t).unwrap();
        assert_eq!(s[0].entries[0].value, "find / -exec /bin/ls {} ; -print");
        assert_eq!(s[0].entries[1].value, "sh -c \"echo '#' | cat\"");
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let cases: &[(&str, &str)] = &[
            ("main\n{\n  a 1\n", "f:2:1: missing '}'"),
            (
                "main\n{\n a 1\ntimer_thread[0]\n{\n}\n",
                "f:2:1: missing '}'",
            ),
            (
                "main\n  a 1\n",
                "f:2:3: expected '{' to open the 'main' stanza",
            ),
            ("}\n", "f:1:1: '}' without"),
            ("main {\n}\n  }\n", "f:3:3: '}' without"),
            ("timer_thread[x]\n{\n}\n", "f:1:14: invalid index 'x'"),
            ("timer_thread[1\n{\n}\n", "f:1:13: missing ']'"),
            ("main\n", "f:1:1: expected '{' after 'main'"),
            ("main foo\n{\n}\n", "f:1:5: unexpected 'foo'"),
            ("{\n}\n", "f:1:1: '{' without a stanza name"),
        ];
        for (t, want) in cases {
            let e = parse("f", t).unwrap_err().to_string();
            assert!(e.starts_with(want), "{t:?}: got {e}, want {want}");
        }
    }

    #[test]
    fn words_like_a_shell() {
        assert_eq!(
            split_words(r#"sh -c "find / -type d -print0 | tar --null -cvzf - -T -""#).unwrap(),
            [
                "sh",
                "-c",
                "find / -type d -print0 | tar --null -cvzf - -T -"
            ]
        );
        assert_eq!(
            split_words("find / -type d -exec /bin/ls {} ; -print").unwrap(),
            ["find", "/", "-type", "d", "-exec", "/bin/ls", "{}", ";", "-print"]
        );
        assert_eq!(
            split_words(r#"a 'b c' "d\"e" f\ g """#).unwrap(),
            ["a", "b c", "d\"e", "f g", ""]
        );
        assert_eq!(split_words("echo \"oops").unwrap_err().0, 5);
    }

    proptest::proptest! {
        #[test]
        fn split_never_panics_and_round_trips_plain_words(
            s in "\\PC{0,60}",
            words in proptest::collection::vec("[a-zA-Z0-9_/.{};=-]{1,8}", 0..8),
        ) {
            let _ = split_words(&s);
            let _ = parse("p", &s);
            proptest::prop_assert_eq!(split_words(&words.join(" ")).unwrap(), words);
        }
    }
}
