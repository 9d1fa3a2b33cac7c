//! Pipelines: RON files naming passes, options and order, checked against
//! the pass contracts and the dialects of the spec before any IR is touched,
//! and the pass manager that runs them with instrumentation.
//!
//! - `syntax`: a positioned RON reader (every diagnostic has `line:col`);
//! - `model`: the file's header and steps as written;
//! - `load`: resolution of passes, options and includes into `Step`s;
//! - `check`: the dialect-flow check and the pipeline lint;
//! - `manager`: `PassManager`, which runs a loaded `Pipeline` over a module;
//! - `instrument`: timing table, IR printing and diffs;
//! - `repro`: crash / verifier-failure reproducers.
//!
//! The file format is documented in `pipelines/README.md`.

mod check;
mod instrument;
mod load;
mod manager;
mod model;
mod repro;
pub mod syntax;

use std::{fmt, sync::Arc};

pub use check::check_flow;
pub use instrument::TimingRow;
pub use load::{LoadFailure, Loader, PipelineSource, ResolveError, MAX_NESTING};
pub use manager::{panic_message, FailureKind, PassManager, RunError, RunOptions, RunReport};
pub use repro::Reproducer;

use crate::diag::{Diagnostic, Fix, Label, Rule, Severity};
use crate::ir::Span;
use crate::pass::Pass;

/// A place in a pipeline file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: Arc<str>,
    pub line: usize,
    pub col: usize,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// A load-time diagnostic: `file.ron:line:col: error: message`, with its
/// rule (`pipeline`, or `pipeline-lint` for lint findings), the length of
/// the text it points at, and suggested fixes (the nearest registered name
/// for an unknown pass, hook or option). [`PipelineDiag::to_diagnostic`]
/// gives it to the shared renderers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineDiag {
    pub severity: Severity,
    pub rule: Rule,
    pub loc: Loc,
    /// Bytes the finding covers from `loc` (0: a point).
    pub len: usize,
    pub message: String,
    pub fixes: Vec<Fix>,
    /// Secondary places (the pipeline option that named a file the
    /// finding is in).
    pub labels: Vec<Label>,
}

impl PipelineDiag {
    pub fn new(severity: Severity, loc: Loc, message: impl Into<String>) -> Self {
        let rule = if severity == Severity::Error { Rule::Pipeline } else { Rule::PipelineLint };
        PipelineDiag { severity, rule, loc, len: 0, message: message.into(), fixes: Vec::new(), labels: Vec::new() }
    }

    /// The same finding as a [`Diagnostic`] (file, span, fixes, labels).
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::error(self.rule, self.message.clone())
            .with_file(self.loc.file.to_string())
            .with_span(Some(Span::with_len(self.loc.line as u32, self.loc.col as u32, self.len as u32)));
        d.severity = self.severity;
        d.fixes.clone_from(&self.fixes);
        d.labels.clone_from(&self.labels);
        d
    }
}

impl fmt::Display for PipelineDiag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.loc, self.severity.name(), self.message)
    }
}

/// Collects diagnostics for one file, turning byte offsets into `line:col`.
pub(crate) struct Diags {
    pub file: Arc<str>,
    pub text: Arc<str>,
    pub list: Vec<PipelineDiag>,
    lines: syntax::LineIndex,
}

impl Diags {
    pub fn new(file: Arc<str>, text: Arc<str>) -> Self {
        let lines = syntax::LineIndex::new(&text);
        Diags { file, text, list: Vec::new(), lines }
    }
    pub fn loc(&self, offset: usize) -> Loc {
        let (line, col) = self.lines.line_col(&self.text, offset);
        Loc { file: self.file.clone(), line, col }
    }
    pub fn error(&mut self, offset: usize, message: impl Into<String>) {
        let loc = self.loc(offset);
        self.list.push(PipelineDiag::new(Severity::Error, loc, message));
    }
    /// An error at the name `name` written at `offset` (a string literal,
    /// which the error covers with its quotes, or a bare name), with
    /// `suggestion` as its fix (replacing the name alone) when there is one.
    pub fn error_at_name(&mut self, offset: usize, name: &str, message: String, suggestion: Option<&str>) {
        let quoted = self.text[offset.min(self.text.len())..].starts_with('"');
        let mut d = PipelineDiag::new(Severity::Error, self.loc(offset), message);
        d.len = name.len() + if quoted { 2 } else { 0 };
        if let Some(s) = suggestion {
            let at = self.loc(offset + quoted as usize);
            d.fixes.push(Fix {
                file: Some(self.file.to_string()),
                span: Span::with_len(at.line as u32, at.col as u32, name.len() as u32),
                replacement: s.to_string(),
                message: format!("did you mean `{s}`?"),
            });
        }
        self.list.push(d);
    }
    /// An error inside a file that a pass option at `option_at` names (a
    /// rules file): located in that file, with the option as a label; at
    /// the option itself when the file has no position to give (it could
    /// not be read).
    pub fn error_in_named_file(&mut self, option_at: usize, option: &str, error: &crate::pass::FileError) {
        let Some(span) = error.span else {
            self.error(option_at, format!("option `{option}`: {error}"));
            return;
        };
        let at = self.loc(option_at);
        let loc = Loc { file: error.file.as_str().into(), line: span.line as usize, col: span.col as usize };
        let mut d = PipelineDiag::new(Severity::Error, loc, error.message.clone());
        d.len = span.len as usize;
        d.labels.push(Label {
            file: Some(self.file.to_string()),
            span: Span::with_len(at.line as u32, at.col as u32, 0),
            message: format!("the file named by option `{option}` here"),
        });
        self.list.push(d);
    }
    pub fn error_count(&self) -> usize {
        self.list.iter().filter(|d| d.severity == Severity::Error).count()
    }
}

/// A loaded, checked pipeline, ready for `PassManager`.
pub struct Pipeline {
    pub name: String,
    pub doc: Option<String>,
    /// The file it was loaded from, as given.
    pub file: Arc<str>,
    /// Input and declared output dialect names.
    pub input: String,
    pub output: String,
    /// Where the input and output dialects are declared (dialect
    /// diagnostics point there as the place the dialect was required).
    pub input_at: Loc,
    pub output_at: Loc,
    pub steps: Vec<Step>,
    /// Lint findings (steps that can never fire, invariants re-established
    /// for nothing, unbound hooks).
    pub warnings: Vec<PipelineDiag>,
}

/// One resolved step.
pub enum Step {
    Pass(PassStep),
    /// The steps of another pipeline file, spliced in place.
    Include {
        target: String,
        input: String,
        output: String,
        steps: Vec<Step>,
        loc: Loc,
    },
    /// Runs only when the opt level is at least `min_level`.
    OptGroup {
        min_level: u8,
        steps: Vec<Step>,
        loc: Loc,
    },
    /// Runs its steps until none changes the IR, at most `max_iterations` times.
    FixedPoint {
        max_iterations: u32,
        steps: Vec<Step>,
        loc: Loc,
    },
    /// An extension point; `bound` is the pass the registry bound to it
    /// (an unbound hook is a no-op that keeps the dialect).
    Hook {
        name: String,
        bound: Option<PassStep>,
        loc: Loc,
    },
}

/// A configured pass at one position of the pipeline.
pub struct PassStep {
    /// Registered pass name.
    pub name: String,
    pub pass: Box<dyn Pass>,
    /// The options as written in the file (RON), for reproducers.
    pub options: Option<String>,
    pub loc: Loc,
    /// Pre-order number of this pass step in the whole pipeline.
    pub id: usize,
}

impl Step {
    pub fn loc(&self) -> &Loc {
        match self {
            Step::Pass(p) => &p.loc,
            Step::Include { loc, .. }
            | Step::OptGroup { loc, .. }
            | Step::FixedPoint { loc, .. }
            | Step::Hook { loc, .. } => loc,
        }
    }
}

impl Pipeline {
    /// Every pass step, in pre-order (bound hooks included).
    pub fn pass_steps(&self) -> Vec<&PassStep> {
        fn walk<'a>(steps: &'a [Step], out: &mut Vec<&'a PassStep>) {
            for s in steps {
                match s {
                    Step::Pass(p) | Step::Hook { bound: Some(p), .. } => out.push(p),
                    Step::Hook { bound: None, .. } => {}
                    Step::Include { steps, .. } | Step::OptGroup { steps, .. } | Step::FixedPoint { steps, .. } => {
                        walk(steps, out)
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.steps, &mut out);
        out
    }
}

/// The candidate nearest to `name` by edit distance, if it is close enough
/// to be a plausible typo.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = name.chars().count();
    let limit = (len / 3).max(2);
    candidates
        .into_iter()
        // The length difference bounds the distance from below: a huge name
        // costs no quadratic comparisons.
        .filter(|c| len.abs_diff(c.chars().count()) <= limit)
        .map(|c| (edit_distance(name, c), c))
        // Rewriting every character is not a typo (`-` is not a slip for `O1`).
        .filter(|&(d, _)| d <= limit && d < len)
        .min_by_key(|&(d, c)| (d, c))
        .map(|(_, c)| c)
}

/// `name` as a message quotes it: whole up to 64 characters, else its first
/// 64 and its length, so a huge token cannot flood the diagnostics.
pub fn excerpt(name: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 64;
    match name.char_indices().nth(MAX) {
        None => name.into(),
        Some((end, _)) => format!("{}... ({} bytes)", &name[..end], name.len()).into(),
    }
}

/// Levenshtein distance over characters (a dozen lines; not worth a dependency).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_pick_the_nearest_plausible_name() {
        assert_eq!(edit_distance("mem2rag", "mem2reg"), 1);
        assert_eq!(suggest("mem2rag", ["reg2mem", "mem2reg", "dce"]), Some("mem2reg"));
        assert_eq!(suggest("completely_else", ["dce", "gvn"]), None);
        // A short name is a typo of another only where a character survives.
        assert_eq!(suggest("O3", ["O1", "O2"]), Some("O1"));
        assert_eq!(suggest("-", ["O1", "O2"]), None);
        assert_eq!(suggest("x", ["O1"]), None);
    }

    #[test]
    fn huge_names_are_cut_and_cost_no_distance() {
        assert_eq!(excerpt("mem2reg"), "mem2reg");
        let huge = "x".repeat(4 << 20);
        assert_eq!(excerpt(&huge), format!("{}... (4194304 bytes)", "x".repeat(64)));
        let t = std::time::Instant::now();
        assert_eq!(suggest(&huge, ["dce", "gvn"]), None);
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
    }
}
