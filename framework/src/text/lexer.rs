//! The XIR text lexer: turns source text into tokens with 1-based line and
//! column positions, on demand (the parser pulls one token at a time, so a
//! million-instruction file never holds a token vector). Comments are tokens
//! too, so the parser can attach them to the next function, block or
//! instruction. Every malformed input becomes a located error, never a panic.

use std::borrow::Cow;
use std::fmt;

use crate::ir::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok<'a> {
    /// Keywords, opcodes, type kinds, block roles: `[A-Za-z_][A-Za-z0-9_.]*`.
    Ident(&'a str),
    /// `%name` or `%7` (without the sigil).
    Local(&'a str),
    /// `@name` or `@"quoted name"` (without the sigil).
    Global(Cow<'a, str>),
    /// `$name`.
    Reg(&'a str),
    /// `^name`.
    Label(&'a str),
    /// A numeric literal as written: `-5`, `0xff`, `1.5e-3`, `-inf`.
    Number(&'a str),
    /// A string literal, escapes decoded.
    Str(String),
    /// `!loc`, `!spill` (the name after `!`).
    Meta(&'a str),
    /// `//` comment: the text after `//` and one optional space.
    Comment(&'a str),
    Arrow,
    Punct(char),
    Eof,
    /// A lexical error, carried as a token so the parser reports it where
    /// it expected something else.
    Bad(String),
}

impl fmt::Display for Tok<'_> {
    /// How a token is named in "expected X, found Y" messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Local(s) => write!(f, "`%{s}`"),
            Tok::Global(s) => write!(f, "`@{s}`"),
            Tok::Reg(s) => write!(f, "`${s}`"),
            Tok::Label(s) => write!(f, "`^{s}`"),
            Tok::Number(s) => write!(f, "`{s}`"),
            Tok::Str(_) => write!(f, "string literal"),
            Tok::Meta(s) => write!(f, "`!{s}`"),
            Tok::Comment(_) => write!(f, "comment"),
            Tok::Arrow => write!(f, "`->`"),
            Tok::Punct(c) => write!(f, "`{c}`"),
            Tok::Eof => write!(f, "end of input"),
            Tok::Bad(m) => write!(f, "invalid token ({m})"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Token<'a> {
    pub tok: Tok<'a>,
    pub span: Span,
    /// Byte offset of the first character (the span's `line:col`).
    pub pos: usize,
}

/// A lexical error: message and position.
#[derive(Clone, Debug)]
pub struct LexError {
    pub message: String,
    pub span: Span,
}

pub struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    col: u32,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.'
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        Lexer { src, pos: 0, line: 1, col: 1 }
    }

    /// Byte offset of the next character to read.
    pub fn offset(&self) -> usize {
        self.pos
    }

    fn peek_byte(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn byte_at(&self, off: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + off).copied()
    }

    /// Advance over one character (not byte), keeping line and column.
    fn bump(&mut self) -> Option<char> {
        let c = self.src[self.pos..].chars().next()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn here(&self) -> Span {
        Span::new(self.line, self.col)
    }

    fn eat_while(&mut self, pred: impl Fn(u8) -> bool) -> &'a str {
        let start = self.pos;
        while let Some(b) = self.peek_byte() {
            if !pred(b) {
                break;
            }
            self.pos += 1;
            self.col += 1;
        }
        &self.src[start..self.pos]
    }

    /// The next token. After an error the lexer has moved past the offending
    /// character, so the caller may continue (for error recovery).
    /// Each token's span covers its bytes; an error's covers what was
    /// consumed up to it (at least one byte when there is one).
    pub fn next_token(&mut self) -> Result<Token<'a>, LexError> {
        while let Some(b) = self.peek_byte() {
            if b.is_ascii_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
        let start = self.pos;
        let at = self.here();
        let len = |l: &Self| (l.pos - start) as u32;
        match self.token() {
            Ok(mut t) => {
                t.span.len = len(self);
                t.pos = start;
                Ok(t)
            }
            Err(mut e) => {
                if e.span == at {
                    let rest = self.src[start..].chars().next().map_or(0, char::len_utf8) as u32;
                    e.span.len = len(self).max(rest);
                }
                Err(e)
            }
        }
    }

    fn token(&mut self) -> Result<Token<'a>, LexError> {
        let span = self.here();
        let err = |message: String| LexError { message, span };
        let Some(b) = self.peek_byte() else { return Ok(Token { tok: Tok::Eof, span, pos: self.pos }) };
        let tok = match b {
            b'/' if self.byte_at(1) == Some(b'/') => {
                self.pos += 2;
                self.col += 2;
                if self.peek_byte() == Some(b' ') {
                    self.bump();
                }
                let start = self.pos;
                let end = self.src[start..].find('\n').map_or(self.src.len(), |n| start + n);
                // A CRLF file's `\r` ends the line, not the comment's text
                // (kept, it would be printed back before an LF).
                let text = self.src[start..end].strip_suffix('\r').unwrap_or(&self.src[start..end]);
                while self.pos < end {
                    self.bump();
                }
                Tok::Comment(text)
            }
            b'%' | b'$' | b'^' => {
                self.bump();
                let name = self.eat_while(is_name_char);
                if name.is_empty() {
                    return Err(err(format!("expected a name after `{}`", b as char)));
                }
                match b {
                    b'%' => Tok::Local(name),
                    b'$' => Tok::Reg(name),
                    _ => Tok::Label(name),
                }
            }
            b'@' => {
                self.bump();
                if self.peek_byte() == Some(b'"') {
                    Tok::Global(Cow::Owned(self.string()?))
                } else {
                    let name = self.eat_while(is_name_char);
                    if name.is_empty() {
                        return Err(err("expected a name after `@`".into()));
                    }
                    Tok::Global(Cow::Borrowed(name))
                }
            }
            b'!' => {
                self.bump();
                let name = self.eat_while(is_name_char);
                if name.is_empty() {
                    return Err(err("expected a metadata name after `!`".into()));
                }
                Tok::Meta(name)
            }
            b'"' => Tok::Str(self.string()?),
            b'-' if self.byte_at(1) == Some(b'>') => {
                self.pos += 2;
                self.col += 2;
                Tok::Arrow
            }
            b'-' | b'0'..=b'9' => {
                let start = self.pos;
                if b == b'-' {
                    self.pos += 1;
                    self.col += 1;
                    match self.peek_byte() {
                        Some(c) if c.is_ascii_alphanumeric() => {}
                        _ => return Err(err("expected a number after `-`".into())),
                    }
                }
                self.number_body();
                Tok::Number(&self.src[start..self.pos])
            }
            c if is_ident_start(c) => Tok::Ident(self.eat_while(is_name_char)),
            b'(' | b')' | b'{' | b'}' | b'[' | b']' | b'<' | b'>' | b',' | b':' | b'=' => {
                self.bump();
                Tok::Punct(b as char)
            }
            _ => {
                let c = self.bump().unwrap_or('?');
                return Err(err(format!("unexpected character `{}`", c.escape_debug())));
            }
        };
        Ok(Token { tok, span, pos: 0 })
    }

    /// Digits, letters, `_` and `.`, plus a sign right after a decimal
    /// exponent `e`. The parser validates the text.
    fn number_body(&mut self) {
        let start = self.pos;
        let hex = self.src[start..].starts_with("0x") || self.src[start..].starts_with("0X");
        while let Some(c) = self.peek_byte() {
            let prev = self.pos.checked_sub(1).and_then(|p| self.src.as_bytes().get(p).copied());
            let sign_ok = !hex && (c == b'+' || c == b'-') && matches!(prev, Some(b'e' | b'E')) && self.pos > start;
            if is_name_char(c) || sign_ok {
                self.pos += 1;
                self.col += 1;
            } else {
                break;
            }
        }
    }

    /// A string literal at the current `"`.
    fn string(&mut self) -> Result<String, LexError> {
        let open = self.here();
        self.bump();
        let mut out = String::new();
        loop {
            let at = self.here();
            let Some(c) = self.bump() else {
                return Err(LexError { message: "unterminated string literal".into(), span: open });
            };
            match c {
                '"' => return Ok(out),
                '\n' => return Err(LexError { message: "unterminated string literal".into(), span: open }),
                '\\' => {
                    let e = self.bump();
                    match e {
                        Some('"') => out.push('"'),
                        Some('\\') => out.push('\\'),
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('r') => out.push('\r'),
                        Some('u') => out.push(self.unicode_escape(at)?),
                        Some(other) => {
                            return Err(LexError {
                                message: format!("unknown escape `\\{}` in string literal", other.escape_debug()),
                                span: at,
                            })
                        }
                        None => return Err(LexError { message: "unterminated string literal".into(), span: open }),
                    }
                }
                c => out.push(c),
            }
        }
    }

    /// `{XXXX}` after `\u`.
    fn unicode_escape(&mut self, at: Span) -> Result<char, LexError> {
        let bad = |m: &str| LexError { message: m.to_string(), span: at };
        if self.peek_byte() != Some(b'{') {
            return Err(bad("expected `{` after `\\u`"));
        }
        self.bump();
        let digits = self.eat_while(|c| c.is_ascii_hexdigit());
        if self.peek_byte() != Some(b'}') {
            return Err(bad("expected `}` to close `\\u{...}`"));
        }
        self.bump();
        if digits.is_empty() || digits.len() > 6 {
            return Err(bad("expected 1 to 6 hex digits in `\\u{...}`"));
        }
        u32::from_str_radix(digits, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| bad("invalid unicode scalar value in `\\u{...}`"))
    }
}

/// Escape a string for printing so that the lexer reads it back exactly.
pub fn escape_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        let mut l = Lexer::new(s);
        let mut v = Vec::new();
        loop {
            let t = l.next_token().expect("lexes");
            if t.tok == Tok::Eof {
                return v;
            }
            v.push(t.tok);
        }
    }

    #[test]
    fn lexes_instruction() {
        let t = toks("%x = add %a, f32 -1.5e-3 : f32 // hi");
        assert_eq!(
            t,
            vec![
                Tok::Local("x"),
                Tok::Punct('='),
                Tok::Ident("add"),
                Tok::Local("a"),
                Tok::Punct(','),
                Tok::Ident("f32"),
                Tok::Number("-1.5e-3"),
                Tok::Punct(':'),
                Tok::Ident("f32"),
                Tok::Comment("hi"),
            ]
        );
    }

    #[test]
    fn a_comment_ends_before_a_crlf() {
        assert_eq!(toks("// hi\r\n%x"), vec![Tok::Comment("hi"), Tok::Local("x")]);
    }

    #[test]
    fn string_escapes_round_trip() {
        let s = "a\"b\\c\nd\te\u{1}\u{7f}é";
        let mut out = String::new();
        escape_str(s, &mut out);
        assert_eq!(toks(&out), vec![Tok::Str(s.to_string())]);
    }
}
