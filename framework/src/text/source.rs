//! Reading a source file (XIR text, JSON, an inputs file, a RON pipeline)
//! into a string: the one size cap and UTF-8 check the drivers and the
//! pipeline loader share, so a bad byte is reported at its `line:col` like
//! every other diagnostic, and `/dev/zero` is refused instead of filling
//! memory.

use std::io::Read;
use std::path::Path;

use crate::ir::Span;

/// The largest source file read: 256 MiB, far above any kernel, inputs file
/// or pipeline the project meets (the corpus's largest is under 1 MiB).
pub const MAX_SOURCE_BYTES: u64 = 256 << 20;

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Why a source could not be read (a phrase for "cannot read FILE: ..."),
/// `span` locating a byte that is not UTF-8.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceError {
    pub message: String,
    pub span: Option<Span>,
}

/// Read `r` to its end as UTF-8 text of at most [`MAX_SOURCE_BYTES`]. A
/// leading byte-order mark (what some editors write first) is dropped, as
/// rustc drops it: no reader (XIR, JSON, WGSL, GLSL, RON) takes one, and
/// positions then count from the first character an editor shows.
pub fn read_source(r: impl Read) -> Result<String, SourceError> {
    let plain = |message: String| SourceError { message, span: None };
    let mut bytes = Vec::new();
    r.take(MAX_SOURCE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| plain(e.to_string()))?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(plain(format!("larger than the {} MiB limit on source files", MAX_SOURCE_BYTES >> 20)));
    }
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // The prefix before the first bad byte is valid UTF-8.
        let before = std::str::from_utf8(&bytes[..bad]).unwrap_or_default();
        let line_start = before.rfind('\n').map_or(0, |k| k + 1);
        let span =
            Span::with_len(before.matches('\n').count() as u32 + 1, before[line_start..].chars().count() as u32 + 1, 1);
        SourceError { message: format!("not UTF-8: invalid byte 0x{:02x}", bytes[bad]), span: Some(span) }
    })
}

/// Read the file at `path` (see [`read_source`]).
pub fn read_source_file(path: &Path) -> Result<String, SourceError> {
    let file = std::fs::File::open(path).map_err(|e| SourceError { message: e.to_string(), span: None })?;
    read_source(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_byte_is_located_by_line_and_character_column() {
        let e = read_source(&b"kernel\n  \xc3\xa9x\xff rest"[..]).unwrap_err();
        assert_eq!(
            e,
            SourceError { message: "not UTF-8: invalid byte 0xff".into(), span: Some(Span::with_len(2, 5, 1)) }
        );
        assert_eq!(read_source(&b"ok\n"[..]), Ok("ok\n".to_string()));
    }

    #[test]
    fn a_leading_byte_order_mark_is_dropped() {
        assert_eq!(read_source(&b"\xef\xbb\xbfkernel\n"[..]), Ok("kernel\n".to_string()));
        // Only a leading one: elsewhere it is text like any character.
        assert_eq!(read_source(&b"a\xef\xbb\xbf"[..]), Ok("a\u{feff}".to_string()));
        // A bad byte after it is located in the text an editor shows.
        let e = read_source(&b"\xef\xbb\xbfab\xff"[..]).unwrap_err();
        assert_eq!(e.span, Some(Span::with_len(1, 3, 1)));
    }

    #[test]
    fn input_past_the_cap_is_refused() {
        let e = read_source(std::io::repeat(b' ')).unwrap_err();
        assert_eq!(e, SourceError { message: "larger than the 256 MiB limit on source files".into(), span: None });
    }
}
