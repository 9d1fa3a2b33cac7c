//! Compilation queries: a function compiled with its callees' bodies, its
//! printed result, and a kernel's target code.
//!
//! The unit of compilation is a function's call-graph *closure* (the
//! function and everything it calls, transitively): interprocedural passes
//! (`promote_ref_arg`, the backend's `callable_specialization`, which
//! inlines a call that passes a resource) change callees and call sites
//! together, so a function cannot be compiled against extern signatures
//! alone, nor can a callable's own result be pasted into a caller's. Each
//! closure is assembled from the functions' memoized checks and texts,
//! compiled once per root (`linked`), and the target code is emitted from
//! that (`emitted`), memoized on it: an edit re-runs `linked` for the edited
//! function and the functions that reach it, and `emitted` only where the
//! compiled module changed.

use std::sync::Arc;

use super::{check_function, parse_function, shift_lines, Db, FunctionSource, IN_MODULE};
use crate::diag::{Diagnostic, Rule};
use crate::ir::{FuncId, Module};

/// Runs the session's pipeline on a linked module (a function's closure).
pub type FunctionCompiler = Arc<dyn Fn(&mut Module) -> Result<(), Vec<Diagnostic>> + Send + Sync>;

/// Emits a kernel of a compiled module as target code.
pub type KernelEmitter = Arc<dyn Fn(&Module, FuncId) -> Result<Emitted, Vec<Diagnostic>> + Send + Sync>;

/// A kernel's target code (the backend decides what the words mean).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Emitted {
    /// The binary module, as words.
    pub words: Vec<u32>,
    /// The packaged form a runtime loads (code plus interface).
    pub artifact: Vec<u8>,
}

/// A diagnostic about one function, its lines relative to the function's
/// first line (1); the session places it in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDiagnostic {
    /// The function whose text the position is in.
    pub function: String,
    /// The diagnostic, its lines relative to `function`.
    pub diagnostic: Diagnostic,
}

/// Why a function has no compiled result.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompileError {
    /// The function itself does not parse or verify (`check_function` has
    /// the diagnostics).
    #[error("@{0} has errors")]
    Invalid(String),
    /// A function it calls (transitively) does not parse or verify.
    #[error("@{callee}, which @{function} calls, has errors")]
    Callee {
        /// The function asked for.
        function: String,
        /// The callee with errors.
        callee: String,
    },
    /// The pipeline or the emitter failed.
    #[error("{}", .0.iter().map(|d| d.diagnostic.message.clone()).collect::<Vec<_>>().join("; "))]
    Failed(Vec<FunctionDiagnostic>),
    /// Emission was asked of a function that is not a kernel, or of a
    /// session without an emitter.
    #[error("@{0} is not a kernel, or the session has no emitter")]
    NotEmittable(String),
}

/// The functions `f` calls, as inputs (its references that are callees).
#[salsa::tracked(returns(ref))]
pub fn callee_sources(db: &dyn Db, f: FunctionSource) -> Vec<FunctionSource> {
    let names = super::callees(db, f);
    f.references(db)
        .iter()
        .filter(|slot| names.binary_search(slot.name(db)).is_ok())
        .filter_map(|slot| *slot.function(db))
        .collect()
}

/// `f` and every function it calls, transitively: callees first (post
/// order), `f` last.
#[salsa::tracked(returns(ref))]
pub fn closure(db: &dyn Db, f: FunctionSource) -> Vec<FunctionSource> {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut out = Vec::new();
    let mut stack = vec![(f, 0usize)];
    seen.insert(f);
    while let Some((g, next)) = stack.pop() {
        let callees = callee_sources(db, g);
        if let Some(&h) = callees.get(next) {
            stack.push((g, next + 1));
            if seen.insert(h) {
                stack.push((h, 0));
            }
        } else {
            out.push(g);
        }
    }
    out
}

/// A function compiled in its closure: the module after the pipeline and
/// the function in it (`None` when the pipeline removed it, as
/// `unused_callable_removal` does to a callable nothing calls).
#[derive(Clone, Debug, PartialEq)]
pub struct Linked {
    /// The closure after the pipeline.
    pub module: Module,
    /// The root function in `module`.
    pub func: Option<FuncId>,
}

/// Where each function of a linked text starts (0-based line) and its name.
struct LineMap(Vec<(u32, String)>);

impl LineMap {
    /// The function holding 1-based `line` of the linked text, and its first line.
    fn locate(&self, line: u32) -> Option<(&str, u32)> {
        let k = self.0.partition_point(|(start, _)| *start < line).checked_sub(1)?;
        Some((&self.0[k].1, self.0[k].0))
    }

    fn start_of(&self, name: &str) -> Option<u32> {
        self.0.iter().find(|(_, n)| n == name).map(|(s, _)| *s)
    }

    /// Attribute `d` to the function its span (or its `function`) is in;
    /// unlocated ones go to `root`.
    fn attribute(&self, mut d: Diagnostic, root: &str) -> FunctionDiagnostic {
        let at = d.span.filter(|_| d.file.as_deref().is_none_or(|f| f == IN_MODULE)).and_then(|s| self.locate(s.line));
        let (function, start) = match at {
            Some((name, start)) => (name.to_string(), start),
            None => {
                let name =
                    d.function.clone().filter(|n| self.start_of(n).is_some()).unwrap_or_else(|| root.to_string());
                (name.clone(), self.start_of(&name).unwrap_or(0))
            }
        };
        if d.span.is_some() && at.is_none() && d.file.as_deref().is_none_or(|f| f == IN_MODULE) {
            // A position outside every function: keep it at the top.
            d.span = d.span.map(|s| crate::ir::Span { line: 1, ..s });
        } else {
            shift_lines(&mut d, start as i64);
        }
        FunctionDiagnostic { function, diagnostic: d }
    }
}

/// `f` compiled with its closure by the session's pipeline.
#[salsa::tracked(returns(ref))]
pub fn linked(db: &dyn Db, f: FunctionSource) -> Result<Arc<Linked>, CompileError> {
    let _ = f.module(db).pipeline(db);
    let name = f.name(db).clone();
    let members = closure(db, f);
    let mut text = String::new();
    let mut lines = Vec::with_capacity(members.len());
    for &g in members {
        if check_function(db, g).iter().any(Diagnostic::is_error) || parse_function(db, g).func.is_none() {
            return Err(if g == f {
                CompileError::Invalid(name)
            } else {
                CompileError::Callee { function: name, callee: g.name(db).clone() }
            });
        }
        lines.push((text.bytes().filter(|&b| b == b'\n').count() as u32, g.name(db).clone()));
        text.push_str(g.text(db));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    let map = LineMap(lines);
    let mut module = match crate::text::parse_module(&text, IN_MODULE) {
        Ok(m) => m,
        Err(diags) => return Err(CompileError::Failed(diags.into_iter().map(|d| map.attribute(d, &name)).collect())),
    };
    if let Some(compile) = db.compiler() {
        if let Err(diags) = compile(&mut module) {
            let mut out: Vec<FunctionDiagnostic> = diags.into_iter().map(|d| map.attribute(d, &name)).collect();
            if out.is_empty() {
                out.push(FunctionDiagnostic {
                    function: name.clone(),
                    diagnostic: Diagnostic::error(Rule::Pass, format!("the pipeline failed on @{name}")),
                });
            }
            return Err(CompileError::Failed(out));
        }
    }
    let func = module.find_function(&name);
    Ok(Arc::new(Linked { module, func }))
}

/// The function after the session's pipeline, printed (empty when the
/// pipeline removed it).
#[salsa::tracked(returns(ref))]
pub fn compiled(db: &dyn Db, f: FunctionSource) -> Result<String, CompileError> {
    let l = linked(db, f).clone()?;
    Ok(l.func.map(|id| crate::text::print_function(&l.module, l.module.func(id))).unwrap_or_default())
}

/// A kernel's target code, emitted from its `linked` module (re-runs only
/// when that module changed).
#[salsa::tracked(returns(ref))]
pub fn emitted(db: &dyn Db, f: FunctionSource) -> Result<Arc<Emitted>, CompileError> {
    let l = linked(db, f).clone()?;
    let name = f.name(db);
    let (Some(id), Some(emit)) = (l.func, db.emitter()) else { return Err(CompileError::NotEmittable(name.clone())) };
    if !l.module.func(id).is_kernel() {
        return Err(CompileError::NotEmittable(name.clone()));
    }
    emit(&l.module, id).map(Arc::new).map_err(|diags| {
        // The emitter's positions are those of the linked text: re-derive
        // the map (the closure's texts are memoized inputs, this is cheap).
        let mut lines = Vec::new();
        let mut at = 0u32;
        for &g in closure(db, f) {
            lines.push((at, g.name(db).clone()));
            let t = g.text(db);
            at += t.bytes().filter(|&b| b == b'\n').count() as u32 + u32::from(!t.ends_with('\n'));
        }
        let map = LineMap(lines);
        CompileError::Failed(diags.into_iter().map(|d| map.attribute(d, name)).collect())
    })
}
