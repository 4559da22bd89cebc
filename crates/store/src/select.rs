//! Selectors: which stored runs a command is about.
//!
//! `kernel ~ 6.18 and load = hell`, `isolation=none`, `host=pi3-a kernel~6.6`:
//! conditions joined by `and` (or simply by spaces), each `KEY OP VALUE` with
//! `OP` one of `=` (equal), `!=` (not equal), `~` (contains) and `!~` (does
//! not contain). Keys are the run's fields ([`FIELDS`]) or any tag.

use crate::record::RunSummary;
use std::fmt;

/// The fields every run has, besides its tags.
pub const FIELDS: &[&str] = &[
    "id",
    "uuid",
    "host",
    "machine_id",
    "kernel",
    "kernel_version",
    "preempt",
    "arch",
    "cpu_model",
    "tool",
    "label",
    "started",
    "end",
    "mode",
    "isolation",
    "load",
    "campaign",
    "cell",
    "repeat",
];

/// The operator of one selector condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `=`: the value equals the text (an absent key equals the empty text).
    Eq,
    /// `!=`: the value differs (an absent key differs from everything).
    Ne,
    /// `~`: the value contains the text.
    Contains,
    /// `!~`: the value does not contain the text (true for an absent key).
    NotContains,
}

/// One condition `KEY OP VALUE` of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cond {
    /// A field of [`FIELDS`] or a tag name.
    pub key: String,
    /// How the run's value is compared.
    pub op: Op,
    /// The text compared with, unquoted.
    pub value: String,
}

/// A conjunction of conditions; empty selects every run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    /// The conditions, all of which a run must meet.
    pub conds: Vec<Cond>,
    text: String,
}

/// A selector that does not parse; `col` is 1-based in the selector text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectError {
    /// 1-based column in the selector text where the problem is.
    pub col: usize,
    /// What is wrong and what was expected.
    pub msg: String,
}

impl fmt::Display for SelectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.col, self.msg)
    }
}

impl std::error::Error for SelectError {}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.text.trim().is_empty() {
            f.write_str("all runs")
        } else {
            f.write_str(self.text.trim())
        }
    }
}

impl Selector {
    /// Parse a selector.
    pub fn parse(text: &str) -> Result<Selector, SelectError> {
        let mut conds = Vec::new();
        let b = text.as_bytes();
        let mut i = 0;
        let skip_ws = |i: &mut usize| {
            while *i < b.len() && b[*i].is_ascii_whitespace() {
                *i += 1;
            }
        };
        loop {
            skip_ws(&mut i);
            if i >= b.len() {
                break;
            }
            // Optional `and` between conditions.
            if !conds.is_empty()
                && text[i..].starts_with("and")
                && text[i + 3..].starts_with(|c: char| c.is_ascii_whitespace())
            {
                i += 3;
                skip_ws(&mut i);
            }
            let kstart = i;
            while i < b.len() && crate::is_key_byte(b[i]) {
                i += 1;
            }
            if i == kstart {
                return Err(SelectError {
                    col: i + 1,
                    msg: "expected a key (host, kernel, isolation, load, … or a tag)".into(),
                });
            }
            let key = text[kstart..i].to_string();
            skip_ws(&mut i);
            let op = if text[i..].starts_with("!=") {
                i += 2;
                Op::Ne
            } else if text[i..].starts_with("!~") {
                i += 2;
                Op::NotContains
            } else if text[i..].starts_with('=') {
                i += 1;
                Op::Eq
            } else if text[i..].starts_with('~') {
                i += 1;
                Op::Contains
            } else {
                return Err(SelectError {
                    col: i + 1,
                    msg: format!("expected =, !=, ~ or !~ after `{key}`"),
                });
            };
            skip_ws(&mut i);
            let value = if i < b.len() && (b[i] == b'\'' || b[i] == b'"') {
                let q = b[i];
                let start = i + 1;
                let end = text[start..].find(q as char).ok_or(SelectError {
                    col: i + 1,
                    msg: "unterminated quoted value".into(),
                })?;
                i = start + end + 1;
                text[start..start + end].to_string()
            } else {
                let start = i;
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                text[start..i].to_string()
            };
            if value.is_empty() && op != Op::Eq && op != Op::Ne {
                return Err(SelectError {
                    col: i + 1,
                    msg: format!("expected a value after `{key}`"),
                });
            }
            conds.push(Cond { key, op, value });
        }
        Ok(Selector {
            conds,
            text: text.to_string(),
        })
    }

    /// Every run.
    pub fn all() -> Selector {
        Selector::default()
    }

    /// Whether `run` matches every condition. A key the run lacks matches
    /// `!=` and `!~` only.
    pub fn matches(&self, run: &RunSummary) -> bool {
        self.conds.iter().all(|c| {
            let v = run.field(&c.key);
            match (c.op, v) {
                (Op::Eq, Some(v)) => v == c.value,
                (Op::Ne, Some(v)) => v != c.value,
                (Op::Contains, Some(v)) => v.contains(&c.value),
                (Op::NotContains, Some(v)) => !v.contains(&c.value),
                (Op::Eq, None) => c.value.is_empty(),
                (Op::Ne, None) | (Op::NotContains, None) => true,
                (Op::Contains, None) => false,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_spaces_and_quotes() {
        let s = Selector::parse("kernel ~ 6.18 and load = hell host!='pi 3'").unwrap();
        assert_eq!(
            s.conds,
            vec![
                Cond {
                    key: "kernel".into(),
                    op: Op::Contains,
                    value: "6.18".into()
                },
                Cond {
                    key: "load".into(),
                    op: Op::Eq,
                    value: "hell".into()
                },
                Cond {
                    key: "host".into(),
                    op: Op::Ne,
                    value: "pi 3".into()
                },
            ]
        );
        assert!(Selector::parse("").unwrap().conds.is_empty());
    }

    #[test]
    fn errors_name_the_column() {
        let e = Selector::parse("kernel 6.18").unwrap_err();
        assert_eq!(e.col, 8);
        let e = Selector::parse("load = hell and =x").unwrap_err();
        assert_eq!(e.col, 17);
        let e = Selector::parse("host='abc").unwrap_err();
        assert!(e.msg.contains("unterminated"));
    }
}
