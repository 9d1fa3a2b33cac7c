//! Type simplification: a local array (`alloca` of `array<T, N>`) that is
//! only indexed by constants shrinks to the elements those indices reach
//! (`array<T, k + 1>` for the largest index `k`), so a reduced module holds
//! no storage the failure does not touch. Each shrink is a candidate like
//! any other: kept only if the module still verifies and fails the same way.

use xir::{FuncId, Inst, Module, Opcode, Type, Value};

use crate::Run;

pub(crate) fn shrink_arrays(m: &mut Module, f: FuncId, run: &mut Run) -> bool {
    let mut changed = false;
    let allocas: Vec<Inst> =
        m.func(f).all_insts().map(|(_, i)| i).filter(|&i| m.func(f).opcode(i) == Opcode::Alloca).collect();
    for a in allocas {
        if run.spent() {
            break;
        }
        let Some((elem, len, used)) = constant_indexed_array(m, f, a) else { continue };
        if used >= len {
            continue;
        }
        changed |= run.attempt(m, |c| {
            let ty = c.types.array(elem, used);
            let mut d = c.func(f).inst_data(a);
            d.core.ty = ty;
            c.func_mut(f).replace_inst(a, d);
            true
        });
    }
    changed
}

/// For an `alloca` of an array used only as the base of `gep`s whose first
/// index is a constant: its element type, its length, and one more than the
/// largest index used (at least 1).
fn constant_indexed_array(m: &Module, f: FuncId, a: Inst) -> Option<(xir::TypeId, u64, u64)> {
    let func = m.func(f);
    let Type::Array { elem, len } = *m.types.get(func.inst(a).ty) else { return None };
    let mut used = 1;
    for u in func.uses(Value::Inst(a)) {
        let d = func.inst(u.user);
        if d.opcode != Opcode::Gep || u.index != 0 {
            return None;
        }
        let k = m.const_bits(*d.operands.get(1)?)?;
        used = used.max(k.checked_add(1)?);
    }
    Some((elem, len, used))
}
