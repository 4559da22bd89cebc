//! gnuplot scripts.

/// A string for the inside of a double-quoted gnuplot string: backslash and
/// `"` escaped.
pub fn double_quoted(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_and_backslashes_are_escaped() {
        assert_eq!(super::double_quoted(r#"a"b\c"#), r#"a\"b\\c"#);
    }
}
