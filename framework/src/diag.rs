//! Diagnostics shared by the parser, verifier, dialect checker, pipeline
//! loader and passes: a rule name, a message, and where it happened — the
//! function/block/instruction, and the text position when the IR came from
//! text.

use std::fmt;

use crate::ir::{Block, Inst, Span};

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The rule that failed (`ssa-dominance`, `dialect:xir.raw`, `parse`, ...).
    pub rule: String,
    pub message: String,
    /// Source file the IR came from, when known.
    pub file: Option<String>,
    pub span: Option<Span>,
    pub function: Option<String>,
    pub block: Option<Block>,
    pub inst: Option<Inst>,
}

impl Diagnostic {
    pub fn error(rule: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            rule: rule.into(),
            message: message.into(),
            file: None,
            span: None,
            function: None,
            block: None,
            inst: None,
        }
    }
    pub fn warning(rule: impl Into<String>, message: impl Into<String>) -> Self {
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
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
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
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        write!(f, "{sev}: [{}] {}", self.rule, self.message)?;
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
        if !at.is_empty() {
            write!(f, " (in {})", at.join(", "))?;
        }
        Ok(())
    }
}

/// Render a list of diagnostics, one per line.
pub fn render(diags: &[Diagnostic]) -> String {
    diags.iter().map(|d| format!("{d}\n")).collect()
}
