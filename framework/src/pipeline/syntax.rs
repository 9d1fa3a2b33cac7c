//! A positioned reading of RON text. `ron` itself checks the syntax (its
//! `SpannedError` locates syntax errors), but its `Value` forgets where things
//! were written; the pipeline checker must point at the exact step, option or
//! field it complains about. This small reader keeps a byte offset on every
//! node and field name, and keeps struct and variant names (`Pass`,
//! `FixedPoint`) that `ron::Value` drops.

/// A value with the byte range it was read from.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    pub start: usize,
    pub end: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    Str(String),
    /// A number, as written.
    Num(String),
    Bool(bool),
    Char(char),
    /// A bare identifier: a unit variant, `None`, a unit struct name.
    Ident(String),
    /// `Name(field: value, ...)` or `(field: value, ...)`.
    Struct {
        name: Option<String>,
        fields: Vec<Field>,
    },
    /// `Name(value, ...)`, `(value, ...)` or `()`.
    Tuple {
        name: Option<String>,
        items: Vec<Node>,
    },
    List(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    /// Offset of the field name.
    pub at: usize,
    pub value: Node,
}

impl Node {
    /// A short description of what kind of value this is, for messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            NodeKind::Str(s) => format!("the string {s:?}"),
            NodeKind::Num(n) => format!("the number {n}"),
            NodeKind::Bool(b) => format!("the boolean {b}"),
            NodeKind::Char(c) => format!("the character {c:?}"),
            NodeKind::Ident(i) => format!("`{i}`"),
            NodeKind::Struct { name: Some(n), .. } | NodeKind::Tuple { name: Some(n), .. } => format!("`{n}(...)`"),
            NodeKind::Struct { name: None, .. } => "a struct".into(),
            NodeKind::Tuple { name: None, items } if items.is_empty() => "`()`".into(),
            NodeKind::Tuple { name: None, .. } => "a tuple".into(),
            NodeKind::List(_) => "a list".into(),
            NodeKind::Map(_) => "a map".into(),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The name written before the parentheses, if any.
    pub fn type_name(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Struct { name, .. } | NodeKind::Tuple { name, .. } => name.as_deref(),
            NodeKind::Ident(n) => Some(n),
            _ => None,
        }
    }
}

/// Read one RON value (after optional `#![enable(...)]` attributes).
pub fn parse(text: &str) -> Result<Node, (usize, String)> {
    let mut r = Reader { s: text.as_bytes(), text, pos: 0 };
    r.skip_ws()?;
    while r.peek() == Some(b'#') {
        // `#![enable(...)]`: skip to the closing bracket.
        while let Some(c) = r.peek() {
            r.pos += 1;
            if c == b']' {
                break;
            }
        }
        r.skip_ws()?;
    }
    let v = r.value()?;
    r.skip_ws()?;
    if r.pos < r.s.len() {
        return Err((r.pos, "trailing characters after the value".into()));
    }
    Ok(v)
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    (line, before[line_start..].chars().count() + 1)
}

/// The line starts of one text, so that every `line:col` a loader asks for
/// is a binary search instead of a scan from the text's start: a pipeline
/// locates every step, and rescanning cost `xir-opt` 0.3 M instructions a
/// start (the shipped `spirv` pipeline and its includes, 45 positions).
pub struct LineIndex {
    /// Byte offset of each line's first character; `starts[0] == 0`.
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        LineIndex { starts: std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect() }
    }

    /// What [`line_col`] answers for `text` (the text this index was built from).
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s <= offset);
        (line, text[self.starts[line - 1]..offset].chars().count() + 1)
    }
}

struct Reader<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
}

type R<T> = Result<T, (usize, String)>;

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) -> R<()> {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_whitespace() => self.pos += 1,
                Some(b'/') if self.s.get(self.pos + 1) == Some(&b'/') => {
                    while let Some(c) = self.peek() {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some(b'/') if self.s.get(self.pos + 1) == Some(&b'*') => {
                    let start = self.pos;
                    self.pos += 2;
                    let mut depth = 1;
                    while depth > 0 {
                        match (self.peek(), self.s.get(self.pos + 1)) {
                            (None, _) => return Err((start, "unterminated block comment".into())),
                            (Some(b'*'), Some(b'/')) => {
                                depth -= 1;
                                self.pos += 2;
                            }
                            (Some(b'/'), Some(b'*')) => {
                                depth += 1;
                                self.pos += 2;
                            }
                            _ => self.pos += 1,
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn expect(&mut self, c: u8) -> R<()> {
        self.skip_ws()?;
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err((self.pos, format!("expected `{}`", c as char)))
        }
    }

    fn ident(&mut self) -> Option<String> {
        let start = self.pos;
        if self.text[start..].starts_with("r#") {
            self.pos += 2;
        }
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'_' || (c >= 0x80) {
                self.pos += 1;
            } else {
                break;
            }
        }
        (self.pos > start).then(|| self.text[start..self.pos].trim_start_matches("r#").to_string())
    }

    fn value(&mut self) -> R<Node> {
        self.skip_ws()?;
        let start = self.pos;
        let kind = match self.peek() {
            None => return Err((start, "expected a value".into())),
            Some(b'"') => NodeKind::Str(self.string()?),
            Some(b'r') if matches!(self.s.get(self.pos + 1), Some(b'"') | Some(b'#')) && self.raw_string_ahead() => {
                NodeKind::Str(self.raw_string()?)
            }
            Some(b'\'') => {
                self.pos += 1;
                let c = self.escaped_char(b'\'')?;
                self.expect(b'\'')?;
                NodeKind::Char(c)
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws()?;
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        break;
                    }
                    items.push(self.value()?);
                    self.comma_or(b']')?;
                }
                NodeKind::List(items)
            }
            Some(b'{') => {
                self.pos += 1;
                let mut entries = Vec::new();
                loop {
                    self.skip_ws()?;
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        break;
                    }
                    let k = self.value()?;
                    self.expect(b':')?;
                    let v = self.value()?;
                    entries.push((k, v));
                    self.comma_or(b'}')?;
                }
                NodeKind::Map(entries)
            }
            Some(b'(') => self.parens(None)?,
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' || c == b'.' => {
                while let Some(c) = self.peek() {
                    if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'+' | b'-') {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                NodeKind::Num(self.text[start..self.pos].to_string())
            }
            Some(_) => {
                let Some(name) = self.ident() else {
                    return Err((
                        start,
                        format!("unexpected character `{}`", self.text[start..].chars().next().unwrap_or(' ')),
                    ));
                };
                let save = self.pos;
                self.skip_ws()?;
                match name.as_str() {
                    "true" => NodeKind::Bool(true),
                    "false" => NodeKind::Bool(false),
                    "inf" | "NaN" => NodeKind::Num(name),
                    _ if self.peek() == Some(b'(') => self.parens(Some(name))?,
                    _ => {
                        self.pos = save;
                        NodeKind::Ident(name)
                    }
                }
            }
        };
        Ok(Node { kind, start, end: self.pos })
    }

    fn comma_or(&mut self, close: u8) -> R<()> {
        self.skip_ws()?;
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(())
            }
            Some(c) if c == close => Ok(()),
            _ => Err((self.pos, format!("expected `,` or `{}`", close as char))),
        }
    }

    /// After an optional name, at `(`: a struct body if the first item is
    /// `ident :`, a tuple otherwise.
    fn parens(&mut self, name: Option<String>) -> R<NodeKind> {
        self.expect(b'(')?;
        self.skip_ws()?;
        let save = self.pos;
        let is_struct = match self.ident() {
            Some(_) => {
                self.skip_ws()?;
                let colon = self.peek() == Some(b':') && self.s.get(self.pos + 1) != Some(&b':');
                self.pos = save;
                colon
            }
            None => false,
        };
        if is_struct {
            let mut fields = Vec::new();
            loop {
                self.skip_ws()?;
                if self.peek() == Some(b')') {
                    self.pos += 1;
                    break;
                }
                let at = self.pos;
                let Some(fname) = self.ident() else { return Err((at, "expected a field name".into())) };
                self.expect(b':')?;
                let value = self.value()?;
                fields.push(Field { name: fname, at, value });
                self.comma_or(b')')?;
            }
            Ok(NodeKind::Struct { name, fields })
        } else {
            let mut items = Vec::new();
            loop {
                self.skip_ws()?;
                if self.peek() == Some(b')') {
                    self.pos += 1;
                    break;
                }
                items.push(self.value()?);
                self.comma_or(b')')?;
            }
            Ok(NodeKind::Tuple { name, items })
        }
    }

    fn string(&mut self) -> R<String> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            // The characters up to the next quote or escape, copied at once
            // (both are ASCII, so the run ends on a character boundary).
            let run =
                self.s[self.pos..].iter().position(|&c| c == b'"' || c == b'\\').unwrap_or(self.s.len() - self.pos);
            out.push_str(&self.text[self.pos..self.pos + run]);
            self.pos += run;
            match self.peek() {
                None => return Err((start, "unterminated string".into())),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(_) => out.push(self.escaped_char(b'"')?),
            }
        }
    }

    fn escaped_char(&mut self, quote: u8) -> R<char> {
        let at = self.pos;
        let c = self.text[self.pos..].chars().next().ok_or_else(|| (at, "unexpected end of input".to_string()))?;
        self.pos += c.len_utf8();
        if c != '\\' {
            if c as u32 == quote as u32 && quote == b'\'' {
                return Err((at, "empty character literal".into()));
            }
            return Ok(c);
        }
        let e = self.peek().ok_or_else(|| (at, "unterminated escape".to_string()))?;
        self.pos += 1;
        Ok(match e {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'0' => '\0',
            b'\\' => '\\',
            b'"' => '"',
            b'\'' => '\'',
            b'x' => {
                let hex = self.text.get(self.pos..self.pos + 2).ok_or_else(|| (at, "bad `\\x` escape".to_string()))?;
                self.pos += 2;
                u8::from_str_radix(hex, 16).map_err(|_| (at, "bad `\\x` escape".to_string()))? as char
            }
            b'u' => {
                self.expect(b'{')?;
                let end = self.text[self.pos..].find('}').ok_or_else(|| (at, "bad `\\u` escape".to_string()))?;
                let hex = &self.text[self.pos..self.pos + end];
                self.pos += end + 1;
                u32::from_str_radix(hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| (at, "bad `\\u` escape".to_string()))?
            }
            _ => return Err((at, format!("unknown escape `\\{}`", e as char))),
        })
    }

    fn raw_string_ahead(&self) -> bool {
        let rest = &self.s[self.pos + 1..];
        let hashes = rest.iter().take_while(|&&c| c == b'#').count();
        rest.get(hashes) == Some(&b'"')
    }

    fn raw_string(&mut self) -> R<String> {
        let start = self.pos;
        self.pos += 1;
        let hashes = self.s[self.pos..].iter().take_while(|&&c| c == b'#').count();
        self.pos += hashes + 1;
        let close = format!("\"{}", "#".repeat(hashes));
        let end = self.text[self.pos..].find(&close).ok_or_else(|| (start, "unterminated raw string".to_string()))?;
        let s = self.text[self.pos..self.pos + end].to_string();
        self.pos += end + close.len();
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_named_structs_tuples_and_positions() {
        let text =
            "// c\nPipeline(\n  name: \"a\",\n  steps: [Pass(\"dce\"), FixedPoint(max_iterations: 2, steps: [])],\n)";
        let n = parse(text).unwrap();
        let NodeKind::Struct { name, fields } = &n.kind else { panic!("{n:?}") };
        assert_eq!(name.as_deref(), Some("Pipeline"));
        assert_eq!(fields[1].name, "steps");
        assert_eq!(line_col(text, fields[1].at), (4, 3));
        let NodeKind::List(steps) = &fields[1].value.kind else { panic!() };
        assert_eq!(steps[0].type_name(), Some("Pass"));
        assert!(matches!(&steps[0].kind, NodeKind::Tuple { items, .. } if items[0].as_str() == Some("dce")));
        assert_eq!(steps[1].type_name(), Some("FixedPoint"));
        assert_eq!(line_col(text, steps[1].start), (4, 24));
    }

    #[test]
    fn strings_escapes_and_raw_strings() {
        let n = parse(r##"["a\"b\u{41}", r#"x"y"#, 'c', -1.5e3, true, None, Some(1), {"k": 2}]"##).unwrap();
        let NodeKind::List(v) = n.kind else { panic!() };
        assert_eq!(v[0].as_str(), Some("a\"bA"));
        assert_eq!(v[1].as_str(), Some("x\"y"));
        assert_eq!(v[2].kind, NodeKind::Char('c'));
        assert_eq!(v[3].kind, NodeKind::Num("-1.5e3".into()));
        assert_eq!(v[5].kind, NodeKind::Ident("None".into()));
        assert_eq!(v[6].type_name(), Some("Some"));
        assert!(matches!(v[7].kind, NodeKind::Map(ref m) if m.len() == 1));
        // Runs of plain characters (multi-byte ones too) around escapes.
        let n = parse("\"h\u{e9}llo\\t w\u{f6}rld \\\"\u{20ac}\\\"\"").unwrap();
        assert_eq!(n.as_str(), Some("h\u{e9}llo\t w\u{f6}rld \"\u{20ac}\""));
        assert_eq!(parse("\"abc").unwrap_err(), (0, "unterminated string".to_string()));
    }

    #[test]
    fn columns_count_characters() {
        assert_eq!(line_col("ab\n\u{e9}x", 5), (2, 2));
    }

    #[test]
    fn line_index_answers_as_line_col_does() {
        for text in ["", "\n", "ab\n\u{e9}x\n\n  y", "no newline", "x\n"] {
            let index = LineIndex::new(text);
            for offset in (0..=text.len() + 2).filter(|&o| o >= text.len() || text.is_char_boundary(o)) {
                assert_eq!(index.line_col(text, offset), line_col(text, offset), "{text:?} at {offset}");
            }
        }
        assert_eq!(LineIndex::new("ab\n\u{e9}x").line_col("ab\n\u{e9}x", 5), (2, 2));
    }
}
