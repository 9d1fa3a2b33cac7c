//! Positions: byte offsets into a document's text, the framework's `Span`s
//! (1-based line, column in characters, length in bytes) and LSP positions
//! (0-based line, column in the negotiated encoding: UTF-16 code units by
//! default, UTF-8 bytes or UTF-32 characters when the client prefers them).
//! Every conversion clamps: a position past the end of a line or of the
//! text maps to that end, never to a panic, because clients send stale and
//! out-of-range positions.

use lsp_types::{Position, Range};
use xir::ir::Span;

/// How LSP columns count (`positionEncoding`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
            Encoding::Utf32 => "utf-32",
        }
    }

    /// The client's first preference we support (UTF-16 when it names none).
    pub fn negotiate(offered: &[String]) -> Encoding {
        offered
            .iter()
            .find_map(|e| match e.as_str() {
                "utf-8" => Some(Encoding::Utf8),
                "utf-16" => Some(Encoding::Utf16),
                "utf-32" => Some(Encoding::Utf32),
                _ => None,
            })
            .unwrap_or_default()
    }

    fn width(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
            Encoding::Utf32 => 1,
        }
    }
}

/// Line starts of one text, for conversions both ways.
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
    pub encoding: Encoding,
}

impl LineIndex {
    pub fn new(text: &str, encoding: Encoding) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts, len: text.len(), encoding }
    }

    /// The text of 0-based line `line` without its line break (empty past the end).
    pub fn line<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let Some(&start) = self.starts.get(line) else { return "" };
        let end = self.starts.get(line + 1).map_or(self.len, |&e| e - 1);
        let s = text.get(start..end.max(start)).unwrap_or("");
        s.strip_suffix('\r').unwrap_or(s)
    }

    /// The byte offset of `pos`, clamped to the line's end and the text's end.
    pub fn offset(&self, text: &str, pos: Position) -> usize {
        let line = pos.line as usize;
        if line >= self.starts.len() {
            return self.len;
        }
        let start = self.starts[line];
        let mut col = 0u32;
        for (i, c) in self.line(text, line).char_indices() {
            if col >= pos.character {
                return start + i;
            }
            col += self.encoding.width(c);
        }
        start + self.line(text, line).len()
    }

    /// The position of byte `offset` (clamped; inside a character: its end).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = offset.min(self.len);
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let mut col = 0u32;
        for (i, c) in self.line(text, line).char_indices() {
            if start + i >= offset {
                break;
            }
            col += self.encoding.width(c);
        }
        Position::new(line as u32, col)
    }

    pub fn range(&self, text: &str, r: std::ops::Range<usize>) -> Range {
        Range::new(self.position(text, r.start), self.position(text, r.end))
    }

    /// The byte range of a framework span (1-based line, column in
    /// characters, length in bytes), clamped to the text.
    pub fn span_bytes(&self, text: &str, span: Span) -> std::ops::Range<usize> {
        let line = (span.line.max(1) - 1) as usize;
        if line >= self.starts.len() {
            return self.len..self.len;
        }
        let line_text = self.line(text, line);
        let col = span.col.max(1) as usize - 1;
        let in_line = line_text.char_indices().nth(col).map_or(line_text.len(), |(i, _)| i);
        let start = self.starts[line] + in_line;
        let mut end = (start + span.len as usize).min(self.len);
        while !text.is_char_boundary(end) {
            end += 1;
        }
        start..end
    }

    pub fn span_range(&self, text: &str, span: Span) -> Range {
        self.range(text, self.span_bytes(text, span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_count_surrogate_pairs_twice() {
        // `é` is one UTF-16 unit and two bytes; `𝄞` two units and four bytes.
        let text = "a é𝄞 %x\nnext";
        let ix = LineIndex::new(text, Encoding::Utf16);
        let x = text.find("%x").unwrap();
        assert_eq!(ix.position(text, x), Position::new(0, 6));
        assert_eq!(ix.offset(text, Position::new(0, 6)), x);
        let ix8 = LineIndex::new(text, Encoding::Utf8);
        assert_eq!(ix8.position(text, x), Position::new(0, x as u32));
        let ix32 = LineIndex::new(text, Encoding::Utf32);
        assert_eq!(ix32.position(text, x), Position::new(0, 5));
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let text = "ab\ncd";
        let ix = LineIndex::new(text, Encoding::Utf16);
        assert_eq!(ix.offset(text, Position::new(0, 99)), 2);
        assert_eq!(ix.offset(text, Position::new(7, 0)), 5);
        assert_eq!(ix.position(text, 99), Position::new(1, 2));
        assert_eq!(ix.span_bytes(text, Span::with_len(9, 1, 3)), 5..5);
        assert_eq!(ix.span_bytes(text, Span::with_len(2, 2, 30)), 4..5);
    }
}
