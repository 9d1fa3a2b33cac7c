//! `unused_callable_removal`: delete callables and external declarations
//! that no kernel can reach. Reachability follows every `@fn` operand (the
//! callee of `call`, and any other function reference), from every kernel.
//! A module without kernels is a library and is left unchanged.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: nothing (per-function analyses are keyed by `FuncId`, which
//!   renumbers).

use serde::Deserialize;
use xir::pass::{Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{FuncId, Module, Value};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {}

const INFO: PassInfo = PassInfo {
    name: "unused_callable_removal",
    doc: "Remove callables and externals not reachable from any kernel",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &[],
    preserves: &[],
};

pub struct UnusedCallableRemoval {
    _opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: &[],
        create: |v| Ok(Box::new(UnusedCallableRemoval { _opts: xir::pass::options_from_ron(v)? })),
    }
}

/// Functions reachable from the kernels (kernels included).
pub fn reachable_from_kernels(m: &Module) -> Vec<bool> {
    let mut keep = vec![false; m.functions.len()];
    let mut work: Vec<FuncId> = m.func_ids().filter(|&f| m.func(f).is_kernel()).collect();
    for &k in &work {
        keep[k.index()] = true;
    }
    // Only opcodes with an operand of class `function` can name a function
    // (the verifier's operand classes keep `@f` out of every other slot), so
    // the sweep reads the dense opcode table and only their records.
    let names_function: Vec<bool> = xir_spec::spec()
        .ops()
        .iter()
        .map(|o| o.spec.operands.iter().chain(&o.spec.variadic).any(|s| s.class == "function"))
        .collect();
    while let Some(fid) = work.pop() {
        // A sequential sweep of the instruction table: the reached set does
        // not depend on the order.
        let f = m.func(fid);
        for (i, _) in f.live_opcodes_by_id().filter(|&(_, op)| names_function[op.index()]) {
            for v in &f.inst(i).operands {
                if let Value::Func(g) = *v {
                    if g.index() < keep.len() && !keep[g.index()] {
                        keep[g.index()] = true;
                        work.push(g);
                    }
                }
            }
        }
    }
    keep
}

impl Pass for UnusedCallableRemoval {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        if !module.functions.iter().any(|f| f.is_kernel()) {
            let mut out = PassOutcome::changed(false);
            out.stats.push(("skipped".into(), "no kernel in module".into()));
            return Ok(out);
        }
        let keep = reachable_from_kernels(module);
        let removed: Vec<String> =
            module.functions.iter().zip(&keep).filter(|(_, &k)| !k).map(|(f, _)| f.name.clone()).collect();
        if removed.is_empty() {
            return Ok(PassOutcome::changed(false));
        }
        if !module.retain_functions(|fid, _| keep[fid.index()]) {
            // Unreachable by construction: every kept function only refers to kept ones.
            return Err(PassError::new(INFO.name, "a kept function refers to a removed one"));
        }
        let mut out = PassOutcome::changed(true);
        out.stats.push(("removed".into(), removed.join(", ")));
        Ok(out)
    }
}
