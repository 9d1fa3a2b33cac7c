//! Calls before a scope's backward: the `autodiff` pass differentiates
//! through a callee by inlining it privately into the scope before it
//! expands loops and plans (docs/autodiff.md, "The `autodiff` pass"), with
//! the `inline` pass's own `inline_call`, so that the callee's code is
//! replayed backwards like the scope's: value arguments become the call's
//! operands, reference arguments the caller's addresses, and the result a
//! local variable the activity analysis follows like any other.
//!
//! Calls after the backward are left alone (nothing is differentiated
//! there), and so are calls to externals (no body: the plan refuses one on
//! a gradient path). A call to a recursive callable cannot be inlined, and
//! a callee that returns from more than one place would leave a construct
//! by a jump once inlined (one that never returns would not rejoin the
//! scope): both are refused at the call; a scope in the callee is refused
//! where it is, nested. The caller restores the module.

use xir::analysis::CallGraph;
use xir::autodiff::ScopeShape;
use xir::{Block, FuncId, Function, Inst, Module, Opcode, Value};

use super::plan::located;
use crate::memory::inline::inline_call;

/// The calls of the scope `shape` that run before its backward, to
/// callees with a body, in layout order.
fn tape_calls(m: &Module, f: &Function, shape: &ScopeShape) -> Vec<(Inst, FuncId)> {
    let Some(kb) = f.parent(shape.backward).and_then(|b| shape.level_of(b)) else { return Vec::new() };
    let bb = shape.top_level[kb];
    let mut calls = Vec::new();
    for &(b, _) in shape.blocks.iter().filter(|&&(b, k)| k < kb || b == bb) {
        let insts = f.block(b).insts();
        let before = if b == bb { insts.iter().position(|&i| i == shape.backward).unwrap_or(0) } else { insts.len() };
        for &i in &insts[..before] {
            let d = f.inst(i);
            if let (Opcode::Call, Some(&Value::Func(g))) = (d.opcode, d.operands.first()) {
                if m.func(g).body().is_some() {
                    calls.push((i, g));
                }
            }
        }
    }
    calls
}

/// Inline every call before the backward of the scope ending `header` in
/// function `fid`, callees' own calls included; returns how many were
/// inlined, or the refusal of the first call that cannot be. The calls of
/// one shape are inlined together (inlining one leaves the others where
/// they are), and the shape is computed again only for the calls the
/// inlined code brought: one round per level of calls, not one per call.
pub fn inline_tape_calls(
    m: &mut Module,
    cg: &CallGraph,
    fid: FuncId,
    header: Block,
    scope: Inst,
) -> Result<usize, Box<xir::Diagnostic>> {
    let mut inlined = 0;
    loop {
        let f = m.func(fid);
        let shape = xir::autodiff::scope_shape(m, f, header, scope)?;
        let calls = tape_calls(m, f, &shape);
        if calls.is_empty() {
            return Ok(inlined);
        }
        for &(call, g) in &calls {
            let callee = m.func(g);
            if cg.is_recursive(g) {
                return Err(located(
                    f,
                    call,
                    format!(
                        "a call to the recursive `@{}` before the backward: the pass differentiates a callee by inlining it",
                        callee.name
                    ),
                ));
            }
            // A scope in the callee would be nested once inlined: refused
            // where it is, as the interpreter refuses it when it starts.
            if let Some((_, i)) = callee.all_insts().find(|&(_, i)| callee.opcode(i) == Opcode::AutodiffScope) {
                return Err(located(callee, i, xir::autodiff::NESTED_SCOPE.into()));
            }
            let returns = callee.all_insts().filter(|&(_, i)| callee.opcode(i) == Opcode::Return).count();
            if returns != 1 {
                return Err(located(
                    f,
                    call,
                    format!(
                        "`@{}` has {returns} `return`s; the pass inlines callees before the backward, and needs exactly one",
                        callee.name
                    ),
                ));
            }
        }
        for (call, _) in calls {
            inline_call(m, fid, call);
            inlined += 1;
        }
    }
}
