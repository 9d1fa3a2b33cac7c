//! Diagnostics shared by the parser, verifier, dialect checker, pipeline
//! loader, passes and backend: a typed [`Rule`] (the spec's names plus
//! `ir-spec/spec/rules.ron`, so every rule is data), a message, where it
//! happened (the function/block/instruction, and the text position when
//! the input came from text), secondary labels, notes and suggested fixes.
//!
//! Three renderers: [`render_human`] (rustc-like, with the source line and
//! a caret, through `codespan-reporting`), [`render_short`] (one line per
//! diagnostic, `file:line:col: error: [rule] message (in @f, ^bb3, inst7)`,
//! for tools and greps) and [`render_json`] (one JSON object per line;
//! docs/diagnostics.md gives the schema).

use std::collections::HashMap;
use std::fmt;

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;

use crate::ir::{Block, Inst, Span};
pub use xir_spec::Rule;

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// A secondary position with what it shows (the definition a use is not
/// dominated by, the earlier duplicate). `file: None` is the diagnostic's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub file: Option<String>,
    pub span: Span,
    pub message: String,
}

/// A suggested edit: replace the text at `span` (its `len` bytes) with
/// `replacement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub file: Option<String>,
    pub span: Span,
    pub replacement: String,
    pub message: String,
}

/// One finding. The primary label is `file` + `span` (kept as two fields,
/// so code that reads `d.span` or fills in `d.file` keeps working);
/// [`Diagnostic::primary`] gives it as a [`Label`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The rule that failed; `rule.name()` is its printed spelling
    /// (`ssa-dominance`, `dialect:xir.raw:opcode`, `parse`, ...).
    pub rule: Rule,
    pub message: String,
    /// Source file the input came from, when known.
    pub file: Option<String>,
    pub span: Option<Span>,
    /// Secondary labels.
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub fixes: Vec<Fix>,
    pub function: Option<String>,
    pub block: Option<Block>,
    pub inst: Option<Inst>,
}

impl Diagnostic {
    /// `rule` is a [`Rule`]; a spelling (`&str`) still converts, for callers
    /// that compose it, and must name a declared rule.
    pub fn error(rule: impl Into<Rule>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            rule: rule.into(),
            message: message.into(),
            file: None,
            span: None,
            labels: Vec::new(),
            notes: Vec::new(),
            fixes: Vec::new(),
            function: None,
            block: None,
            inst: None,
        }
    }
    pub fn warning(rule: impl Into<Rule>, message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Warning, ..Self::error(rule, message) }
    }
    pub fn in_function(mut self, name: &str) -> Self {
        self.function = Some(name.to_string());
        self
    }
    pub fn at_block(mut self, b: Block) -> Self {
        self.block = Some(b);
        self
    }
    pub fn at_inst(mut self, i: Inst) -> Self {
        self.inst = Some(i);
        self
    }
    pub fn with_span(mut self, span: Option<Span>) -> Self {
        if span.is_some() {
            self.span = span;
        }
        self
    }
    pub fn with_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
    /// A secondary label in the same file (none when `span` is unknown).
    pub fn with_label(mut self, span: Option<Span>, message: impl Into<String>) -> Self {
        if let Some(span) = span {
            self.labels.push(Label { file: None, span, message: message.into() });
        }
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
    /// A suggested replacement of the text at `span`.
    pub fn with_fix(mut self, span: Span, replacement: impl Into<String>, message: impl Into<String>) -> Self {
        self.fixes.push(Fix { file: None, span, replacement: replacement.into(), message: message.into() });
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
    /// The primary position as a label (message: the diagnostic's).
    pub fn primary(&self) -> Option<Label> {
        self.span.map(|span| Label { file: self.file.clone(), span, message: self.message.clone() })
    }
    /// `(in @f, ^bb3, inst7)`, or empty.
    fn context(&self) -> String {
        let mut at = Vec::new();
        if let Some(func) = &self.function {
            at.push(format!("@{func}"));
        }
        if let Some(b) = self.block {
            at.push(format!("{b}"));
        }
        if let Some(i) = self.inst {
            at.push(format!("{i}"));
        }
        if at.is_empty() {
            String::new()
        } else {
            format!(" (in {})", at.join(", "))
        }
    }
}

impl fmt::Display for Diagnostic {
    /// `file:line:col: error: [rule] message (in @f, ^bb3, inst7)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.as_deref().unwrap_or("<input>");
        match self.span {
            Some(s) => write!(f, "{file}:{}:{}: ", s.line, s.col)?,
            None => write!(f, "{file}: ")?,
        }
        write!(f, "{}: [{}] {}{}", self.severity.name(), self.rule, self.message, self.context())
    }
}

impl std::error::Error for Diagnostic {}

/// How the drivers print diagnostics (`--diagnostics=human|short|json`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Source line, caret, labels, notes and `help:` lines.
    #[default]
    Human,
    /// One line each: `file:line:col: error: [rule] message (in ...)`.
    Short,
    /// One JSON object per line.
    Json,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "human" => Ok(Format::Human),
            "short" => Ok(Format::Short),
            "json" => Ok(Format::Json),
            _ => Err(format!("unknown diagnostics format `{s}` (expected human, short or json)")),
        }
    }
}

/// The texts diagnostics point into, by the file name they carry. A file
/// not added is read from disk on first use (the drivers' inputs), unless
/// the set was made with [`Sources::in_memory`].
#[derive(Debug, Default)]
pub struct Sources {
    texts: std::cell::RefCell<HashMap<String, Option<std::rc::Rc<str>>>>,
    no_disk: bool,
}

impl Sources {
    /// Sources read from disk when a diagnostic names them.
    pub fn new() -> Self {
        Sources::default()
    }
    /// Only the texts added with [`Sources::add`].
    pub fn in_memory() -> Self {
        Sources { no_disk: true, ..Sources::default() }
    }
    pub fn add(&self, name: impl Into<String>, text: impl Into<std::rc::Rc<str>>) {
        self.texts.borrow_mut().insert(name.into(), Some(text.into()));
    }
    pub fn get(&self, name: &str) -> Option<std::rc::Rc<str>> {
        let mut texts = self.texts.borrow_mut();
        if let Some(t) = texts.get(name) {
            return t.clone();
        }
        let read =
            if self.no_disk { None } else { crate::text::source::read_source_file(std::path::Path::new(name)).ok() };
        let t: Option<std::rc::Rc<str>> = read.map(Into::into);
        texts.insert(name.to_string(), t.clone());
        t
    }
}

/// Render in `format`; `human` and `json` read source texts from `sources`.
pub fn render_as(format: Format, diags: &[Diagnostic], sources: &Sources) -> String {
    match format {
        Format::Human => render_human(diags, sources),
        Format::Short => render_short(diags),
        Format::Json => render_json(diags, sources),
    }
}

/// The short form, one line per diagnostic (notes and fixes follow as
/// indented `= note:` / `= help:` lines, so nothing is lost).
pub fn render_short(diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        out.push_str(&format!("{d}\n"));
        for n in &d.notes {
            out.push_str(&format!("  = note: {n}\n"));
        }
        for fix in &d.fixes {
            out.push_str(&format!("  = help: {}\n", fix.message));
        }
    }
    out
}

/// Today's name for [`render_short`].
pub fn render(diags: &[Diagnostic]) -> String {
    render_short(diags)
}

/// Byte range of `span` in `text` (its `line:col` located, `len` bytes,
/// clamped to the text and to character boundaries).
pub fn byte_range(text: &str, span: Span) -> Option<std::ops::Range<usize>> {
    let line_start =
        if span.line <= 1 { 0 } else { text.match_indices('\n').nth(span.line as usize - 2).map(|(i, _)| i + 1)? };
    let line_end = text[line_start..].find('\n').map_or(text.len(), |n| line_start + n);
    let line = &text[line_start..line_end];
    let col = span.col.max(1) as usize - 1;
    let start = line_start + line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
    let mut end = (start + span.len as usize).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    Some(start..end)
}

/// 1-based line and character column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() as u32 + 1)
}

/// End position (line, column just past the construct) of `span`: exact
/// with the source text, else assuming the construct is ASCII on one line.
fn end_of(span: Span, text: Option<&str>) -> (u32, u32) {
    match text.and_then(|t| byte_range(t, span).map(|r| line_col(t, r.end))) {
        Some(p) => p,
        None => (span.line, span.col + span.len),
    }
}

/// The rustc-like form: header, the source line with a caret under the
/// primary range, secondary labels, notes, and fixes as `help:` notes.
/// A diagnostic whose file is unknown or unreadable prints its header
/// (the short form) and its notes.
pub fn render_human(diags: &[Diagnostic], sources: &Sources) -> String {
    let mut out = String::new();
    let config = term::Config::default();
    for d in diags {
        let mut files = SimpleFiles::new();
        let mut ids: HashMap<String, (usize, std::rc::Rc<str>)> = HashMap::new();
        let mut file_id = |name: &Option<String>, files: &mut SimpleFiles<String, std::rc::Rc<str>>| {
            let name = name.as_ref().or(d.file.as_ref())?;
            if let Some((id, text)) = ids.get(name) {
                return Some((*id, text.clone()));
            }
            let text = sources.get(name)?;
            let id = files.add(name.clone(), text.clone());
            ids.insert(name.clone(), (id, text.clone()));
            Some((id, text))
        };
        let severity = match d.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
            Severity::Note => cs::Severity::Note,
        };
        let mut labels = Vec::new();
        let mut notes = Vec::new();
        let mut primary_ok = false;
        if let (Some(span), Some((id, text))) = (d.span, file_id(&d.file, &mut files)) {
            if let Some(r) = byte_range(&text, span) {
                labels.push(cs::Label::primary(id, r));
                primary_ok = true;
            }
        }
        if !primary_ok {
            // No source to show: keep the position in the header.
            let mut head = d.clone();
            head.notes.clear();
            head.fixes.clear();
            out.push_str(&format!("{head}\n"));
            for l in &d.labels {
                let file = l.file.as_deref().or(d.file.as_deref()).unwrap_or("<input>");
                out.push_str(&format!("  = note: {file}:{}:{}: {}\n", l.span.line, l.span.col, l.message));
            }
            for n in &d.notes {
                out.push_str(&format!("  = note: {n}\n"));
            }
            for f in &d.fixes {
                out.push_str(&format!("  = help: {}\n", f.message));
            }
            out.push('\n');
            continue;
        }
        for l in &d.labels {
            match file_id(&l.file, &mut files).and_then(|(id, text)| Some((id, byte_range(&text, l.span)?))) {
                Some((id, r)) => labels.push(cs::Label::secondary(id, r).with_message(l.message.clone())),
                None => notes.push(format!("{}:{}: {}", l.span.line, l.span.col, l.message)),
            }
        }
        notes.extend(d.notes.iter().cloned());
        notes.extend(d.fixes.iter().map(|f| format!("help: {}", f.message)));
        let context = d.context();
        if !context.is_empty() {
            notes.push(format!("in {}", &context[" (in ".len()..context.len() - 1]));
        }
        let cd = cs::Diagnostic::new(severity)
            .with_code(d.rule.name())
            .with_message(d.message.clone())
            .with_labels(labels)
            .with_notes(notes);
        match term::emit_into_string(&config, &files, &cd) {
            Ok(s) => out.push_str(&s),
            Err(_) => out.push_str(&format!("{d}\n")),
        }
    }
    out
}

/// One JSON object per diagnostic, one per line (docs/diagnostics.md).
/// Positions are 1-based; `end_line`/`end_column` lie just past the range.
pub fn render_json(diags: &[Diagnostic], sources: &Sources) -> String {
    use serde_json::{json, Value};
    let file_text = |name: Option<&str>| name.and_then(|n| sources.get(n));
    let pos = |span: Option<Span>, file: Option<&str>| -> Value {
        match span {
            Some(s) => {
                let (el, ec) = end_of(s, file_text(file).as_deref());
                json!({"line": s.line, "column": s.col, "end_line": el, "end_column": ec})
            }
            None => json!({"line": null, "column": null, "end_line": null, "end_column": null}),
        }
    };
    let mut out = String::new();
    for d in diags {
        let file = d.file.as_deref();
        let mut obj = json!({
            "rule": d.rule.name(),
            "severity": d.severity.name(),
            "message": d.message,
            "file": file,
            "function": d.function,
            "block": d.block.map(|b| b.to_string()),
            "inst": d.inst.map(|i| i.to_string()),
        });
        let merge = |obj: &mut Value, p: Value| {
            if let (Some(o), Value::Object(p)) = (obj.as_object_mut(), p) {
                o.extend(p);
            }
        };
        merge(&mut obj, pos(d.span, file));
        let labels: Vec<Value> = d
            .labels
            .iter()
            .map(|l| {
                let lf = l.file.as_deref().or(file);
                let mut v = json!({"file": lf, "message": l.message});
                merge(&mut v, pos(Some(l.span), lf));
                v
            })
            .collect();
        let fixes: Vec<Value> = d
            .fixes
            .iter()
            .map(|f| {
                let ff = f.file.as_deref().or(file);
                let mut v = json!({"file": ff, "message": f.message, "replacement": f.replacement});
                merge(&mut v, pos(Some(f.span), ff));
                v
            })
            .collect();
        merge(&mut obj, json!({"labels": labels, "notes": d.notes, "fixes": fixes}));
        out.push_str(&obj.to_string());
        out.push('\n');
    }
    out
}
