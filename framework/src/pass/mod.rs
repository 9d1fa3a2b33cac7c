//! The pass contract. A pass declares its name, a one-line doc, the dialects
//! it consumes, the dialect it produces (or that it keeps its input's), its
//! typed options, and the analyses it preserves. The registry holds every
//! pass; pipelines name passes and options in RON and are checked against
//! these declarations before any IR is touched.

mod context;
mod registry;

pub use context::{AnalysisCache, AnalysisKind, PassContext};
pub use registry::{
    optional, options_from_ron, CreatePass, FileError, HookDecl, HookError, NoOptions, OptionDoc, OptionsError,
    PassDecl, PassRegistry,
};

use crate::ir::Module;
use xir_spec::{Opcode, Trait};

/// The opcodes an `eliminates` entry names: an opcode spelling or `@trait`.
pub fn eliminated_opcodes(entry: &str) -> Option<Vec<Opcode>> {
    if let Some(t) = entry.strip_prefix('@') {
        let t = Trait::from_name(t)?;
        return Some(xir_spec::spec().ops().iter().filter(|o| o.has(t)).map(|o| o.opcode).collect());
    }
    Opcode::from_name(entry).map(|op| vec![op])
}

/// What dialect a pass leaves the IR in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Produces {
    /// The dialect the IR was in (cleanup passes such as DCE).
    Same,
    /// A named dialect of `dialects.ron`.
    Dialect(&'static str),
    /// One dialect per entry of `consumes`, in the same order: IR that
    /// refines the i-th consumed dialect leaves in the i-th one here (for a
    /// pass valid at several points of the spine, e.g. mem2reg on a
    /// restructured or on a raw CFG). The first consumed dialect the input
    /// refines decides.
    PerConsumed(&'static [&'static str]),
}

impl Produces {
    /// Every dialect this may name (for validation and listings).
    pub fn named(&self) -> &[&'static str] {
        match self {
            Produces::Same => &[],
            Produces::Dialect(d) => std::slice::from_ref(d),
            Produces::PerConsumed(ds) => ds,
        }
    }
}

impl PassInfo {
    /// The dialect IR in `input` is in after this pass, or `None` when it
    /// keeps its dialect. `input` must refine one of `consumes` (the
    /// pipeline checker and the pass manager make sure of it); an unknown
    /// dialect name gives `None`.
    pub fn produced_from(&self, input: &str) -> Option<&'static str> {
        match self.produces {
            Produces::Same => None,
            Produces::Dialect(d) => Some(d),
            Produces::PerConsumed(ds) => {
                let spec = xir_spec::spec();
                let input = spec.dialect(input)?;
                let k = self.consumes.iter().position(|c| spec.dialect(c).is_some_and(|c| input.refines(c)))?;
                ds.get(k).copied()
            }
        }
    }
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
    /// Opcodes (spec spellings, or `@trait` groups as in `dialects.ron`) whose
    /// presence is the only thing this pass acts on. When the dialect a step
    /// receives allows none of them, the pipeline checker warns that the step
    /// can never change anything. Empty = the pass may act on any IR.
    pub eliminates: &'static [&'static str],
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
