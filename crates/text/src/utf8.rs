//! Bytes to text: UTF-8 or a refusal that says where the first bad byte is.

use std::fmt;

/// Text that is not UTF-8: the line and column (in characters, 1-based) of
/// the first byte that is not, and that byte. The caller names the file:
/// `InputError::at(file, e.line, e.col, e)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotUtf8 {
    /// 1-based line of the bad byte.
    pub line: usize,
    /// 1-based column, in characters, of the bad byte.
    pub col: usize,
    /// The first byte that is not UTF-8.
    pub byte: u8,
}

impl fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "byte 0x{:02x} is not UTF-8 (the file must be UTF-8 text)",
            self.byte
        )
    }
}

impl std::error::Error for NotUtf8 {}

/// `bytes` as text, or where the first byte that is not UTF-8 stands.
pub fn decode(bytes: Vec<u8>) -> Result<String, NotUtf8> {
    String::from_utf8(bytes).map_err(|e| position(e.as_bytes(), e.utf8_error()))
}

/// [`decode`] without taking the bytes.
pub fn decode_str(bytes: &[u8]) -> Result<&str, NotUtf8> {
    std::str::from_utf8(bytes).map_err(|e| position(bytes, e))
}

fn position(bytes: &[u8], e: std::str::Utf8Error) -> NotUtf8 {
    let at = e.valid_up_to();
    let before = &bytes[..at];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    // Everything before `at` is valid UTF-8 (that is what valid_up_to says).
    let col = std::str::from_utf8(&before[line_start..]).map_or(0, |s| s.chars().count()) + 1;
    NotUtf8 {
        line,
        col,
        byte: bytes[at],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bad_byte_is_found_by_line_and_character() {
        let e = decode(b"main {\n \xff\n}\n".to_vec()).unwrap_err();
        assert_eq!((e.line, e.col, e.byte), (2, 2, 0xff));
        assert_eq!(
            e.to_string(),
            "byte 0xff is not UTF-8 (the file must be UTF-8 text)"
        );
        // Columns count characters, not bytes.
        let e = decode_str("é\nüü\u{fe}x".as_bytes()).unwrap();
        assert_eq!(e, "é\nüü\u{fe}x");
        let e = decode_str(b"a\n\xc3\xbc\xc3\xbc\xfe").unwrap_err();
        assert_eq!((e.line, e.col, e.byte), (2, 3, 0xfe));
        // A sequence cut at the end of the file.
        let e = decode_str(b"ab\xc3").unwrap_err();
        assert_eq!((e.line, e.col, e.byte), (1, 3, 0xc3));
        assert_eq!(decode(b"ok".to_vec()).unwrap(), "ok");
    }

    proptest::proptest! {
        #[test]
        fn valid_text_always_decodes_and_a_bad_byte_is_always_placed(s in ".*", at in 0usize..64) {
            proptest::prop_assert_eq!(decode(s.clone().into_bytes()).unwrap(), s.clone());
            let cut = s.char_indices().map(|(i, _)| i).nth(at).unwrap_or(s.len());
            let mut b = s.as_bytes()[..cut].to_vec();
            b.push(0xff);
            let e = decode_str(&b).unwrap_err();
            let head = &s[..cut];
            proptest::prop_assert_eq!(e.line, head.matches('\n').count() + 1);
            let last = head.rsplit('\n').next().unwrap_or("");
            proptest::prop_assert_eq!(e.col, last.chars().count() + 1);
        }
    }
}
