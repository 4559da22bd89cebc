//! CSV (RFC 4180), written by the `csv` crate: a field is quoted only when
//! it holds a comma, a double quote, a carriage return or a newline; a
//! quote inside is doubled; records end with `\n`.
//!
//! A spreadsheet opening the file runs a cell that starts with `=`, `+`,
//! `-` or `@` as a formula (`=HYPERLINK(…)`, `=cmd|' /C calc'!A0`), and
//! some also after a tab or a carriage return. So, as OWASP recommends
//! ("CSV Injection"), [`cell`] prefixes such a cell with `'`, which the
//! spreadsheet shows as text — unless the whole cell is a plain number
//! (`-5`, `+1.5e3`), which a spreadsheet reads as a number and which must
//! stay one. [`table`] does this to every field. A program reading the
//! file sees the `'`: documented in docs/formats.md.

use crate::terminal::{is_control, push_escaped};
use std::borrow::Cow;

/// The characters that make a spreadsheet read a cell as a formula: the
/// four of OWASP's list, their full-width forms (which some spreadsheets
/// fold to them), and a leading tab or carriage return.
const FORMULA_START: [char; 10] = [
    '=', '+', '-', '@', '\u{ff1d}', '\u{ff0b}', '\u{ff0d}', '\u{ff20}', '\t', '\r',
];

/// What an importer may trim before it looks at a cell ("trim spaces"):
/// a cell of these, then a formula character, is a formula too.
const TRIMMED: [char; 4] = [' ', '\t', '\r', '\n'];

/// Whether `s` is a plain decimal number: an optional sign, digits with at
/// most one `.`, an optional exponent.
fn is_number(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = mantissa.chars().filter(char::is_ascii_digit).count();
    let ok_mantissa = digits > 0
        && mantissa.chars().all(|c| c.is_ascii_digit() || c == '.')
        && mantissa.matches('.').count() <= 1;
    let ok_exp = exp.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
    });
    ok_mantissa && ok_exp
}

/// A field as a spreadsheet must read it: `'` before a cell that would be
/// a formula (also after leading white space an importer may trim), and
/// every control character but tab, newline and carriage return (which
/// the quoting keeps inside the field), and every bidirectional or
/// invisible format character, shown escaped as on the terminal
/// (`\x00`, `\u{202e}`; round 5 (A), F09).
pub fn cell(s: &str) -> Cow<'_, str> {
    let keep = |c: char| matches!(c, '\t' | '\n' | '\r');
    let s: Cow<'_, str> = if s.chars().any(|c| is_control(c) && !keep(c)) {
        let mut o = String::with_capacity(s.len() + 8);
        for c in s.chars() {
            if is_control(c) && !keep(c) {
                push_escaped(&mut o, c);
            } else {
                o.push(c);
            }
        }
        Cow::Owned(o)
    } else {
        Cow::Borrowed(s)
    };
    let formula =
        s.starts_with(FORMULA_START) || s.trim_start_matches(TRIMMED).starts_with(FORMULA_START);
    if formula && !is_number(&s) {
        Cow::Owned(format!("'{s}"))
    } else {
        s
    }
}

/// Rows of fields as CSV text, every field through [`cell`].
pub fn table<R, F>(rows: impl IntoIterator<Item = R>) -> String
where
    R: IntoIterator<Item = F>,
    F: AsRef<str>,
{
    let mut w = ::csv::WriterBuilder::new()
        .flexible(true)
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for r in rows {
        // Writing into memory cannot fail.
        w.write_record(r.into_iter().map(|f| cell(f.as_ref()).into_owned()))
            .expect("CSV into memory");
    }
    let bytes = w.into_inner().expect("CSV into memory");
    // The fields were strings and the separators are ASCII.
    String::from_utf8(bytes).expect("CSV of strings is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::{cell, table};
    use crate::hostile::hostile;

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        let t = table([
            vec!["a", "b,c", "d\"e", ""],
            vec!["x\ny", "r\rs", "plain", "=1+2"],
        ]);
        assert_eq!(t, "a,\"b,c\",\"d\"\"e\",\n\"x\ny\",\"r\rs\",plain,'=1+2\n");
    }

    /// Round 5 (A), F09: controls, NUL, bidirectional and invisible
    /// characters, and formulas an importer finds after trimming.
    #[test]
    fn f09_controls_are_escaped_and_trimmed_formulas_neutralised() {
        assert_eq!(cell("a\0b\x1bc\u{85}d"), "a\\x00b\\x1bc\\u{85}d");
        assert_eq!(
            cell("x\u{202e}y\u{2066}z\u{200b}"),
            "x\\u{202e}y\\u{2066}z\\u{200b}"
        );
        for f in [" =1+1", "\n=1", " \t@SUM(1)", "\u{ff1d}1+1", "  -cmd"] {
            assert_eq!(cell(f), format!("'{f}"), "{f:?}");
        }
        // Kept inside the quoted field: a reader gets them back.
        assert_eq!(table([["a\nb", "c\rd"]]), "\"a\nb\",\"c\rd\"\n");
    }

    #[test]
    fn formulas_become_text_and_numbers_stay_numbers() {
        for f in [
            "=HYPERLINK(\"http://evil.example/\",\"x\")",
            "+cmd",
            "-1+1",
            "@SUM(1)",
            "\tx",
            "\r=1",
            "-",
            "+",
            "-e5",
            "1e",
        ] {
            if f.starts_with(super::FORMULA_START) {
                assert_eq!(cell(f), format!("'{f}"), "{f}");
            }
        }
        for n in ["-5", "+1.5e3", "-0.25", "-3E-7", "12", "-.5", "idle", ""] {
            assert_eq!(cell(n), n, "{n}");
        }
    }

    proptest::proptest! {
        #[test]
        fn every_record_has_its_fields(fields in proptest::collection::vec(".*", 1..6)) {
            // A leading "x": the reader drops a byte-order mark that
            // starts the text, a writer must not.
            let t = table([std::iter::once("x").chain(fields.iter().map(String::as_str))]);
            let mut r = ::csv::ReaderBuilder::new().has_headers(false).from_reader(t.as_bytes());
            let rec = r.records().next().unwrap().unwrap();
            let back: Vec<&str> = rec.iter().skip(1).collect();
            let want: Vec<String> = fields.iter().map(|f| cell(f).into_owned()).collect();
            proptest::prop_assert_eq!(back, want);
        }

        #[test]
        fn no_hostile_cell_is_a_formula(fields in proptest::collection::vec(hostile(), 1..6)) {
            // A leading "x", as above.
            let t = table([std::iter::once(&"x".to_string()).chain(&fields)]);
            let mut r = ::csv::ReaderBuilder::new().has_headers(false).from_reader(t.as_bytes());
            let recs: Vec<_> = r.records().collect::<Result<_, _>>().unwrap();
            // One record, whatever the fields hold.
            proptest::prop_assert_eq!(recs.len(), 1);
            proptest::prop_assert_eq!(recs[0].len(), fields.len() + 1);
            for (f, orig) in recs[0].iter().skip(1).zip(&fields) {
                let trimmed = f.trim_start_matches(super::TRIMMED);
                let formula = (f.starts_with(super::FORMULA_START)
                    || trimmed.starts_with(super::FORMULA_START))
                    && !super::is_number(f);
                proptest::prop_assert!(!formula, "{f:?}");
                // Nothing that reorders, hides or ends text but the
                // quoted tab, newline and carriage return.
                proptest::prop_assert!(
                    !f.chars().any(|c| crate::terminal::is_control(c) && !"\t\n\r".contains(c)),
                    "{f:?}"
                );
                // Only a leading `'` is added, controls escaped.
                let bare = f.strip_prefix('\'').unwrap_or(f);
                proptest::prop_assert_eq!(bare.chars().filter(|c| *c == '\n').count(),
                    orig.chars().filter(|c| *c == '\n').count());
            }
        }
    }
}
