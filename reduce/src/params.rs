//! Parameter removal: a parameter of a callable (not a kernel, whose
//! signature the inputs bind to) is dropped with the argument of every
//! call to it; its uses in the body become the zero constant (or `undef`)
//! of its type first.

use xir::{FuncId, Module, Opcode, Value};

use crate::values::zero;
use crate::Run;

pub(crate) fn remove_params(m: &mut Module, run: &mut Run) -> bool {
    let mut changed = false;
    let ids: Vec<FuncId> = m.func_ids().collect();
    for g in ids {
        if m.func(g).is_kernel() || m.func(g).is_external() {
            continue;
        }
        let mut k = 0;
        while k < m.func(g).args.len() {
            if run.spent() {
                return changed;
            }
            if run.attempt(m, |c| drop_param(c, g, k)) {
                changed = true;
            } else {
                k += 1;
            }
        }
    }
    changed
}

fn drop_param(m: &mut Module, g: FuncId, k: usize) -> bool {
    let arg = Value::Arg(k as u32);
    if m.func(g).has_uses(arg) {
        let ty = m.func(g).args[k].ty;
        let r = zero(m, ty).unwrap_or(Value::Undef(ty));
        m.func_mut(g).replace_all_uses(arg, r);
    }
    if m.func(g).has_uses(arg) {
        return false;
    }
    m.func_mut(g).retain_args(|j| j != k);
    for f in m.func_ids().collect::<Vec<_>>() {
        let func = m.func_mut(f);
        let calls: Vec<_> = func
            .all_insts()
            .map(|(_, i)| i)
            .filter(|&i| func.opcode(i) == Opcode::Call && func.inst(i).operands.first() == Some(&Value::Func(g)))
            .collect();
        for i in calls {
            let mut ops = func.inst(i).operands.clone();
            if ops.len() > k + 1 {
                ops.remove(k + 1);
                func.set_operands(i, ops);
            }
        }
    }
    true
}
