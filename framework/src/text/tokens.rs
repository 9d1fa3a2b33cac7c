//! The lexer's tokens as byte ranges, for editors: a language server colours
//! them (semantic tokens) and indexes the `%value`, `^block` and `@function`
//! names they carry (definitions, references) even in text that does not
//! parse. Lexical errors come back as [`TokenKind::Bad`] tokens covering what
//! the lexer skipped, so every byte of the input is accounted for and the
//! walk always ends.

use std::ops::Range;

use super::lexer::{Lexer, Tok};

/// What a token is; its text is `src[range]` (sigils and quotes included).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// Keywords, opcodes, type kinds, block roles.
    Ident,
    /// `%name`.
    Local,
    /// `@name` or `@"quoted"`.
    Global,
    /// `$name`.
    Reg,
    /// `^name`.
    Label,
    Number,
    Str,
    /// `!loc`, `!spill`.
    Meta,
    /// `// ...` up to the end of the line.
    Comment,
    /// `->`.
    Arrow,
    /// One of `( ) { } [ ] < > , : =`.
    Punct,
    /// Text the lexer rejected.
    Bad,
}

/// Every token of `src` in order, with its byte range.
pub fn tokens(src: &str) -> Vec<(TokenKind, Range<usize>)> {
    let mut lex = Lexer::new(src);
    let mut out = Vec::new();
    loop {
        let before = lex.offset();
        match lex.next_token() {
            Ok(t) => {
                let kind = match t.tok {
                    Tok::Eof => return out,
                    Tok::Ident(_) => TokenKind::Ident,
                    Tok::Local(_) => TokenKind::Local,
                    Tok::Global(_) => TokenKind::Global,
                    Tok::Reg(_) => TokenKind::Reg,
                    Tok::Label(_) => TokenKind::Label,
                    Tok::Number(_) => TokenKind::Number,
                    Tok::Str(_) => TokenKind::Str,
                    Tok::Meta(_) => TokenKind::Meta,
                    Tok::Comment(_) => TokenKind::Comment,
                    Tok::Arrow => TokenKind::Arrow,
                    Tok::Punct(_) => TokenKind::Punct,
                    Tok::Bad(_) => TokenKind::Bad,
                };
                out.push((kind, t.pos..t.pos + t.span.len as usize));
            }
            Err(_) => {
                // The lexer moved past what it rejected (at least one
                // character): that, less the leading whitespace, is the token.
                let after = lex.offset();
                let skipped = &src[before..after];
                let start = before + (skipped.len() - skipped.trim_start().len());
                if after <= before {
                    return out;
                }
                out.push((TokenKind::Bad, start.min(after)..after));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_cover_names_with_their_sigils_and_bad_text() {
        let src = "%x = add %a, @\"f g\" ^bb1 # $dispatch_id";
        let got: Vec<(TokenKind, &str)> = tokens(src).into_iter().map(|(k, r)| (k, &src[r])).collect();
        assert_eq!(
            got,
            vec![
                (TokenKind::Local, "%x"),
                (TokenKind::Punct, "="),
                (TokenKind::Ident, "add"),
                (TokenKind::Local, "%a"),
                (TokenKind::Punct, ","),
                (TokenKind::Global, "@\"f g\""),
                (TokenKind::Label, "^bb1"),
                (TokenKind::Bad, "#"),
                (TokenKind::Reg, "$dispatch_id"),
            ]
        );
    }

    #[test]
    fn an_unterminated_string_is_one_bad_token_and_the_walk_ends() {
        let src = "print \"abc\n%y";
        let got: Vec<(TokenKind, &str)> = tokens(src).into_iter().map(|(k, r)| (k, &src[r])).collect();
        assert_eq!(got[0], (TokenKind::Ident, "print"));
        assert_eq!(got[1].0, TokenKind::Bad);
        assert_eq!(got.last(), Some(&(TokenKind::Local, "%y")));
    }
}
