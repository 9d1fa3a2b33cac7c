//! `autodiff`: reverse-mode differentiation of `autodiff.scope` regions
//! (semantics: docs/autodiff.md; the interpreter runs the same scopes in
//! forward mode, independently, and the tests hold the two together).
//!
//! For each scope: check its shape (`xir::autodiff`), inline the calls
//! before its backward (`calls.rs`), expand its loops (`expand.rs`), plan
//! (activity: which
//! values and variables carry gradients; refuse what cannot be
//! differentiated, with its location), then write the reverse sweep at the
//! backward's position and replace every intrinsic by ordinary code
//! (`reverse.rs`). Derivatives come from `passes/rules/derivatives.ron`
//! (`rules.rs`), instantiated by `emit.rs`. Every scope of the module is
//! planned before any is changed.
//!
//! - Consumes: `xir.structured` (memory form inside scopes: no Phi).
//! - Produces: the same dialect, without autodiff instructions.
//! - Preserves: nothing (blocks and variables are added).

mod calls;
mod emit;
mod expand;
mod plan;
mod reverse;
pub mod rules;

use serde::{Deserialize, Serialize};
use xir::pass::{OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Diagnostic, FuncId, Module};

const INFO: PassInfo = PassInfo {
    name: "autodiff",
    doc: "Reverse-mode differentiation of every autodiff scope into ordinary XIR",
    consumes: &["xir.structured"],
    produces: Produces::Same,
    eliminates: &[
        "autodiff.scope",
        "autodiff.requires_gradient",
        "autodiff.gradient",
        "autodiff.gradient_marker",
        "autodiff.accumulate_gradient",
        "autodiff.backward",
        "autodiff.detach",
    ],
    preserves: &[],
};

const OPTIONS: &[OptionDoc] = &[OptionDoc {
    name: "max_unrolled_iterations",
    ty: "u64",
    default: "256",
    doc: "The most iterations a loop before a backward may run; the pass expands such loops privately",
}];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    pub max_unrolled_iterations: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_unrolled_iterations: 256 }
    }
}

pub struct Autodiff {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(Autodiff { opts: xir::pass::options_from_ron(v)? })),
    }
}

fn refused(diags: Vec<Diagnostic>) -> PassError {
    let mut e = PassError::new(INFO.name, format!("{} autodiff scope(s) cannot be differentiated", diags.len()));
    e.diagnostics = diags;
    e
}

impl Pass for Autodiff {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        // Find and check every scope.
        let mut scopes: Vec<(FuncId, xir::Block, xir::Inst)> = Vec::new();
        let mut diags = Vec::new();
        for fid in module.func_ids() {
            match xir::autodiff::check_scopes(module, module.func(fid)) {
                Err(ds) => diags.extend(ds),
                Ok(shapes) => scopes.extend(shapes.iter().map(|s| (fid, s.header, s.scope))),
            }
        }
        if !diags.is_empty() {
            return Err(refused(diags));
        }
        if scopes.is_empty() {
            return Ok(PassOutcome::changed(false));
        }
        // Inlining calls and expanding loops change the module before every
        // plan is known: keep the input to restore on a refusal.
        let before = module.clone();
        let cg = xir::analysis::CallGraph::compute(module);
        let (mut inlined, mut expanded) = (0, 0);
        let mut unexpanded = Vec::new();
        for &(fid, header, scope) in &scopes {
            match calls::inline_tape_calls(module, &cg, fid, header, scope) {
                Ok(n) => inlined += n,
                Err(d) => {
                    diags.push(*d);
                    unexpanded.push(scope);
                    continue;
                }
            }
            loop {
                let f = module.func(fid);
                let shape = xir::autodiff::scope_shape(module, f, header, scope).map_err(|d| refused(vec![*d]))?;
                let Some(t) = expand::innermost_tape_loop(f, &shape) else { break };
                match expand::trip_count(module, f, t, self.opts.max_unrolled_iterations) {
                    Ok(n) => {
                        expand::expand(module, fid, t, n);
                        expanded += 1;
                    }
                    Err((i, why)) => {
                        diags.push(*plan::located(f, i, why));
                        unexpanded.push(scope);
                        break;
                    }
                }
            }
        }
        for &(fid, header, scope) in scopes.iter().filter(|s| !unexpanded.contains(&s.2)) {
            let f = module.func(fid);
            match xir::autodiff::scope_shape(module, f, header, scope).and_then(|s| plan::plan_scope(module, f, s)) {
                Ok(_) => {}
                Err(d) => diags.push(*d),
            }
        }
        if !diags.is_empty() {
            *module = before;
            return Err(refused(diags));
        }
        // Each scope is planned again on the function as it is when its
        // turn comes (an earlier scope of the same function moved code).
        for &(fid, header, scope) in &scopes {
            let f = module.func(fid);
            let shape = xir::autodiff::scope_shape(module, f, header, scope).map_err(|d| refused(vec![*d]))?;
            let p = plan::plan_scope(module, f, shape).map_err(|d| refused(vec![*d]))?;
            reverse::differentiate(module, fid, &p);
        }
        let mut out = PassOutcome::changed(true);
        out.stats.push(("scopes".into(), scopes.len().to_string()));
        out.stats.push(("calls_inlined".into(), inlined.to_string()));
        out.stats.push(("loops_expanded".into(), expanded.to_string()));
        Ok(out)
    }
}
