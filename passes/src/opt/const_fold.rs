//! `const_fold`: replace pure instructions whose operands are all scalar
//! constants by their value, computed with the interpreter's own arithmetic
//! (`xir::interp::fold_scalar`), so folding never changes a result the
//! interpreter gives. What the interpreter reports as an error (integer
//! division by zero, an op undefined on a type) is left alone, and so are
//! transcendental functions (devices compute them within an error bound,
//! folding would pin the host's value) unless `fold_transcendental` is on.
//! `select` on a constant condition becomes the chosen operand.
//!
//! Iterates over each function's blocks until nothing folds, so chains of
//! constants fold completely.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops` (terminators are
//!   never touched).

use serde::Deserialize;
use xir::pass::{AnalysisKind, OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{FuncId, Inst, Module, Opcode, Value};
use xir_spec::Trait;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Also fold transcendental functions (sin, exp, pow, ...) with the
    /// host's libm.
    pub fold_transcendental: bool,
}

const INFO: PassInfo = PassInfo {
    name: "const_fold",
    doc: "Fold pure scalar instructions on constants with the interpreter's exact arithmetic",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["@pure"],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

const OPTIONS: &[OptionDoc] = &[OptionDoc {
    name: "fold_transcendental",
    ty: "bool",
    default: "false",
    doc: "Also fold transcendental functions with the host's libm",
}];

pub struct ConstFold {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(ConstFold { opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for ConstFold {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut folded = 0;
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            folded += fold_function(module, fid, &self.opts);
        }
        let mut out = PassOutcome::changed(folded > 0);
        out.stats.push(("folded".into(), folded.to_string()));
        Ok(out)
    }
}

/// The value `i` folds to, if any.
fn fold_inst(m: &mut Module, fid: FuncId, i: Inst, opts: &Options) -> Option<Value> {
    let f = m.func(fid);
    let d = f.inst(i);
    let spec = xir_spec::spec().op(d.opcode);
    if !spec.has(Trait::Pure) || spec.has(Trait::Convergent) || d.operands.is_empty() || !d.blocks.is_empty() {
        return None;
    }
    if d.opcode == Opcode::Select {
        // A scalar condition picks a whole operand.
        let c = d.operands[0];
        if m.types.is_bool(f.value_type(m, c)) {
            let bits = m.const_bits(c)?;
            return Some(if bits & 1 == 1 { d.operands[1] } else { d.operands[2] });
        }
        return None;
    }
    if spec.has(Trait::Transcendental) && !opts.fold_transcendental {
        return None;
    }
    let bits: Option<Vec<u64>> = d.operands.iter().map(|&v| m.const_bits(v)).collect();
    let bits = bits?;
    let op_ty = f.value_type(m, d.operands[0]);
    let r = xir::interp::fold_scalar(&m.types, d.opcode, op_ty, d.ty, &bits)?;
    let ty = d.ty;
    Some(m.const_scalar(ty, r))
}

/// Fold every foldable instruction of `fid` until none is left; returns the
/// number folded.
pub fn fold_function(m: &mut Module, fid: FuncId, opts: &Options) -> usize {
    let mut total = 0;
    loop {
        let mut n = 0;
        let insts: Vec<Inst> = m.func(fid).all_insts().map(|(_, i)| i).collect();
        let mut dead = Vec::new();
        for i in insts {
            if let Some(v) = fold_inst(m, fid, i, opts) {
                if super::util::replace_uses_keeping_phis_acyclic(m.func_mut(fid), Value::Inst(i), v) {
                    dead.push(i);
                    n += 1;
                }
            }
        }
        m.func_mut(fid).remove_insts(&dead);
        total += n;
        if n == 0 {
            return total;
        }
    }
}
