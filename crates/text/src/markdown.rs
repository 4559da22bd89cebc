//! Markdown (GitHub's tables).

/// A string for a table cell: `|` escaped so it does not end the cell.
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_bar_stays_in_its_cell() {
        assert_eq!(super::cell("a|b"), "a\\|b");
        assert_eq!(super::cell("plain"), "plain");
    }
}
