//! Spec diagnostics, located in the RON file they come from.

use std::fmt;

/// An error in a spec file: `file:line:col: error: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: error: {}", self.file, self.line, self.col, self.message)
    }
}

impl std::error::Error for SpecError {}

impl SpecError {
    /// At the first occurrence of the quoted string `name`.
    pub fn at(src: &(String, String), name: &str, message: String) -> Self {
        Self::nth(src, name, 0, message)
    }

    /// At the `n`-th (0-based) occurrence of the quoted string `name`.
    pub fn nth(src: &(String, String), name: &str, n: usize, message: String) -> Self {
        let needle = format!("{name:?}");
        let offset = src.1.match_indices(&needle).nth(n).map(|(i, _)| i).unwrap_or(0);
        Self::at_offset(src, offset, message)
    }

    /// At the quoted string `item` inside the entry named `entry`.
    pub fn at_in_entry(src: &(String, String), entry: &str, item: &str, message: String) -> Self {
        let start = src.1.find(&format!("name: {entry:?}")).unwrap_or(0);
        let needle = format!("{item:?}");
        let offset = src.1[start..].find(&needle).map(|i| i + start).unwrap_or(start);
        Self::at_offset(src, offset, message)
    }

    /// The file as a whole (line 1, column 1).
    pub fn whole(src: &(String, String), message: String) -> Self {
        Self::at_offset(src, 0, message)
    }

    fn at_offset(src: &(String, String), offset: usize, message: String) -> Self {
        let before = &src.1[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rfind('\n').map(|i| offset - i).unwrap_or(offset + 1);
        SpecError { file: src.0.clone(), line, col, message }
    }
}
