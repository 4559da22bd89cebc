//! gnuplot scripts and data files.
//!
//! A string from data (a label, a phase name, a title) goes into a
//! gnuplot script only as a **single-quoted** string ([`single_quoted`]):
//! gnuplot runs the command in backquotes (`` `touch /tmp/x` ``) and
//! expands `@macro` inside double-quoted strings and bare words, never
//! inside single quotes, where the only special character is `'` itself
//! (written `''`). A single-quoted string has no escapes, so a control
//! character cannot be written in one: it is shown escaped as on the
//! terminal (`\x1b`, `\n`); a newline would otherwise end the command and
//! start another.
//!
//! In a comment (`# …`, in the script or in a data file), [`comment`]
//! keeps the comment on its line: controls escaped, and a trailing `\`
//! (which would continue the comment onto the next line, swallowing the
//! next command) followed by a space.

use crate::terminal::{is_control, push_escaped};

/// `s` as a gnuplot single-quoted string, quotes included: `'it''s'`.
pub fn single_quoted(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('\'');
    for c in s.chars() {
        match c {
            '\'' => o.push_str("''"),
            c if is_control(c) => push_escaped(&mut o, c),
            c => o.push(c),
        }
    }
    o.push('\'');
    o
}

/// `s` for the text of a `#` comment line (the `#` not included).
pub fn comment(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 1);
    for c in s.chars() {
        if is_control(c) {
            push_escaped(&mut o, c);
        } else {
            o.push(c);
        }
    }
    if o.ends_with('\\') {
        o.push(' ');
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostile::hostile;

    #[test]
    fn quotes_are_doubled_and_controls_shown() {
        assert_eq!(single_quoted("it's"), "'it''s'");
        assert_eq!(
            single_quoted("a`touch /tmp/x`@m\"b\\"),
            "'a`touch /tmp/x`@m\"b\\'"
        );
        assert_eq!(single_quoted("a\nplot 1\x1b"), "'a\\nplot 1\\x1b'");
        assert_eq!(comment("x\nsystem('id')"), "x\\nsystem('id')");
        assert_eq!(comment("ends with \\"), "ends with \\ ");
    }

    /// What gnuplot reads back from a single-quoted string: `''` is one
    /// `'`, and the string ends at the first lone `'`.
    fn read_back(q: &str) -> Option<(String, &str)> {
        let body = q.strip_prefix('\'')?;
        let mut out = String::new();
        let mut it = body.char_indices().peekable();
        while let Some((i, c)) = it.next() {
            if c == '\'' {
                if it.peek().map(|&(_, n)| n) == Some('\'') {
                    it.next();
                    out.push('\'');
                } else {
                    return Some((out, &body[i + 1..]));
                }
            } else {
                out.push(c);
            }
        }
        None
    }

    proptest::proptest! {
        #[test]
        fn a_quoted_string_is_one_string_on_one_line(s in hostile()) {
            let q = single_quoted(&s);
            proptest::prop_assert!(!q.chars().any(is_control), "{q:?}");
            let (back, rest) = read_back(&q).expect("the string is closed");
            // Nothing after the closing quote: the string cannot end early.
            proptest::prop_assert_eq!(rest, "");
            // Without controls, the text is the input.
            if !s.chars().any(is_control) {
                proptest::prop_assert_eq!(back, s.clone());
            }
            let c = comment(&s);
            proptest::prop_assert!(!c.chars().any(is_control));
            proptest::prop_assert!(!c.ends_with('\\'));
        }
    }
}
