//! Markdown (GitHub's tables, CommonMark text).
//!
//! A table row is one line and its cells end at an unescaped `|`; so in a
//! cell a newline (and every other control character) is shown escaped as
//! on the terminal (`\n`, `\x1b`), `|` is written `\|` and `\` is written
//! `\\` (else `a\|` would escape the cell's own end). Raw HTML and links
//! are what a Markdown renderer turns into active content: `<` and `[` are
//! backslash-escaped (a renderer shows them as they are), and so is a
//! backquote, which would otherwise open a code span. `&` is escaped too:
//! a character reference (`&#x202e;`) would become the character it names
//! once rendered, a bidirectional control among them. Those controls and
//! the other invisible format characters are shown escaped (`\u{202e}`).

use crate::terminal::{is_control, push_escaped};

/// A string for a table cell; also safe as inline text on a line of its
/// own.
pub fn cell(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            // `&`: `&#x202e;` would be a bidirectional control once
            // rendered (round 5 (A), F09).
            '\\' | '|' | '<' | '[' | '`' | '&' => {
                o.push('\\');
                o.push(c);
            }
            c if is_control(c) => push_escaped(&mut o, c),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::cell;
    use crate::hostile::hostile;
    use crate::terminal::is_control;

    /// Round 5 (A), F09: no bidirectional control, raw or as a character
    /// reference, and no invisible character reaches a rendered cell.
    #[test]
    fn f09_bidi_controls_and_references_stay_visible() {
        assert_eq!(
            cell("a\u{202e}b&#x202e;c\u{2067}d\u{200b}e"),
            "a\\u{202e}b\\&#x202e;c\\u{2067}d\\u{200b}e"
        );
    }

    #[test]
    fn a_bar_stays_in_its_cell() {
        assert_eq!(cell("a|b"), "a\\|b");
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a\\|b"), "a\\\\\\|b");
        assert_eq!(
            cell("x\n| injected | row |\n\x1b]0;T\x07"),
            "x\\n\\| injected \\| row \\|\\n\\x1b]0;T\\x07"
        );
        assert_eq!(
            cell("</script>[x](javascript:1)`c`"),
            "\\</script>\\[x](javascript:1)\\`c\\`"
        );
    }

    /// The cells of a GitHub table row, split as cmark-gfm does: a
    /// backslash escapes the next character, an unescaped `|` ends a cell.
    fn split_row(line: &str) -> Vec<String> {
        let mut cells = vec![String::new()];
        let mut it = line.chars();
        while let Some(c) = it.next() {
            match c {
                '\\' => {
                    let last = cells.last_mut().unwrap();
                    last.push('\\');
                    if let Some(n) = it.next() {
                        last.push(n);
                    }
                }
                '|' => cells.push(String::new()),
                c => cells.last_mut().unwrap().push(c),
            }
        }
        cells
    }

    proptest::proptest! {
        #[test]
        fn one_row_stays_one_row_of_its_cells(a in hostile(), b in hostile()) {
            let row = format!("| {} | {} |", cell(&a), cell(&b));
            proptest::prop_assert!(!row.contains(['\n', '\r']));
            proptest::prop_assert!(!row.chars().any(is_control));
            // `| a | b |` splits into "", a, b, "".
            proptest::prop_assert_eq!(split_row(&row).len(), 4, "{}", row);
            // No tag and no link can start in a cell.
            for t in [cell(&a), cell(&b)] {
                for (i, _) in t.match_indices(['<', '[', '`', '&']) {
                    let backslashes = t[..i].chars().rev().take_while(|&c| c == '\\').count();
                    proptest::prop_assert!(backslashes % 2 == 1, "{t}");
                }
            }
        }
    }
}
