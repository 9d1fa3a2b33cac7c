//! Formatting: the printer's text of the parsed module (the one canonical
//! form, `print(parse(print(m))) == print(m)`). The printer keeps `//`
//! comments only where they sit directly above a function, block or
//! instruction, so a text with any other comment (a file test's header or
//! expected block, a trailing note) is not formatted: the answer is an
//! error naming the first comment that would be lost, never a silent loss.

use lsp_types::TextEdit;
use xir::text::tokens::TokenKind;

use crate::document::{Document, Language};

/// Why a document is not formatted.
#[derive(Debug, PartialEq, Eq)]
pub enum FormatRefusal {
    NotXir,
    DoesNotParse,
    /// The comment at this 1-based line would be dropped.
    WouldDropComment(u32),
}

impl std::fmt::Display for FormatRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatRefusal::NotXir => write!(f, "only XIR text is formatted"),
            FormatRefusal::DoesNotParse => write!(f, "the text does not parse; fix the errors first"),
            FormatRefusal::WouldDropComment(l) => {
                write!(f, "not formatted: the printer would drop the comment on line {l}")
            }
        }
    }
}

/// The edits that format `doc` (none when it is already formatted).
pub fn format(doc: &Document) -> Result<Vec<TextEdit>, FormatRefusal> {
    if doc.language != Language::Xir {
        return Err(FormatRefusal::NotXir);
    }
    let ix = doc.xir.as_ref().ok_or(FormatRefusal::DoesNotParse)?;
    let m = ix.module.as_ref().ok_or(FormatRefusal::DoesNotParse)?;
    let printed = xir::text::print_module(m);
    // Every comment must survive, in order.
    let printed_comments: Vec<(TokenKind, std::ops::Range<usize>)> =
        xir::text::tokens::tokens(&printed).into_iter().filter(|(k, _)| *k == TokenKind::Comment).collect();
    let body = |c: &str| {
        let c = c.strip_prefix("//").unwrap_or(c);
        c.strip_prefix(' ').unwrap_or(c).trim_end().to_string()
    };
    let mut kept = printed_comments.iter().map(|(_, r)| body(&printed[r.clone()]));
    for (kind, r) in &ix.tokens {
        if *kind == TokenKind::Comment {
            let c = body(&doc.text[r.clone()]);
            if !kept.by_ref().any(|p| p == c) {
                let line = doc.lines.position(&doc.text, r.start).line + 1;
                return Err(FormatRefusal::WouldDropComment(line));
            }
        }
    }
    if printed == doc.text {
        return Ok(Vec::new());
    }
    Ok(vec![TextEdit { range: doc.range(0..doc.text.len()), new_text: printed }])
}
