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
//! by a jump once inlined: both are refused at the call, and the caller
//! restores the module.

use xir::analysis::CallGraph;
use xir::autodiff::ScopeShape;
use xir::{Block, FuncId, Function, Inst, Module, Opcode, Value};

use super::plan::located;
use crate::memory::inline::inline_call;

/// A call of the scope `shape` that runs before its backward, to a callee
/// with a body, if any (the first in layout order).
fn tape_call(m: &Module, f: &Function, shape: &ScopeShape) -> Option<(Inst, FuncId)> {
    let kb = shape.level_of(f.parent(shape.backward)?)?;
    let before = |b: Block, k: usize, i: Inst| k < kb || (b == shape.top_level[kb] && !shape.after_backward(f, b, i));
    shape.blocks.iter().filter(|&&(_, k)| k <= kb).find_map(|&(b, k)| {
        f.block(b).insts().iter().copied().filter(|&i| i != shape.backward && before(b, k, i)).find_map(|i| {
            let d = f.inst(i);
            match (d.opcode, d.operands.first()) {
                (Opcode::Call, Some(&Value::Func(g))) if m.func(g).body().is_some() => Some((i, g)),
                _ => None,
            }
        })
    })
}

/// Inline every call before the backward of the scope ending `header` in
/// function `fid`, callees' own calls included; returns how many were
/// inlined, or the refusal of the first call that cannot be.
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
        let Some((call, g)) = tape_call(m, f, &shape) else {
            return Ok(inlined);
        };
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
        let returns = callee.all_insts().filter(|&(_, i)| callee.opcode(i) == Opcode::Return).count();
        if returns > 1 {
            return Err(located(
                f,
                call,
                format!(
                    "`@{}` returns from {returns} places; the pass inlines callees before the backward, and needs one `return`",
                    callee.name
                ),
            ));
        }
        inline_call(m, fid, call);
        inlined += 1;
    }
}
