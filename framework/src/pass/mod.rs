//! The pass contract. A pass declares its name, a one-line doc, the dialects
//! it consumes, the dialect it produces (or that it keeps its input's), its
//! typed options, and the analyses it preserves. The registry holds every
//! pass; pipelines name passes and options in RON and are checked against
//! these declarations before any IR is touched.

mod context;
mod registry;

pub use context::{AnalysisCache, AnalysisKind, PassContext};
pub use registry::{options_from_ron, OptionDoc, PassDecl, PassRegistry};

use crate::ir::Module;

/// What dialect a pass leaves the IR in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Produces {
    /// The dialect the IR was in (cleanup passes such as DCE).
    Same,
    /// A named dialect of `dialects.ron`.
    Dialect(&'static str),
}

/// The static contract of a pass.
#[derive(Clone, Debug)]
pub struct PassInfo {
    pub name: &'static str,
    pub doc: &'static str,
    /// The IR must be in (a refinement of) one of these dialects.
    pub consumes: &'static [&'static str],
    pub produces: Produces,
    /// Analyses still valid after the pass ran (the rest are recomputed).
    pub preserves: &'static [AnalysisKind],
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct PassOutcome {
    pub changed: bool,
    /// Statistics and explanations (`("stop_reason", "iteration limit")`),
    /// shown by `--time-passes` and `--print-changed`.
    pub stats: Vec<(String, String)>,
}

impl PassOutcome {
    pub fn changed(changed: bool) -> Self {
        PassOutcome { changed, stats: Vec::new() }
    }
}

/// A pass refused or failed; the message says why (and where).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{pass}: {message}")]
pub struct PassError {
    pub pass: String,
    pub message: String,
    /// Located diagnostics, when the failure concerns specific IR.
    pub diagnostics: Vec<crate::Diagnostic>,
}

impl PassError {
    pub fn new(pass: &str, message: impl Into<String>) -> Self {
        PassError { pass: pass.to_string(), message: message.into(), diagnostics: Vec::new() }
    }
}

/// A configured pass instance.
pub trait Pass: Send + Sync {
    fn info(&self) -> &PassInfo;
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError>;
}
