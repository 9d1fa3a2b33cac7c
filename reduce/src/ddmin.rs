//! Instruction deletion, ddmin-style: chunks of halving size, back to front
//! so users go before their definitions; terminators stay (the branch and
//! loop reductions own control flow).

use xir::{FuncId, Inst, Module};

use crate::Run;

/// The instructions of `f` that may be deleted: all but terminators.
fn deletable(m: &Module, f: FuncId) -> Vec<Inst> {
    let func = m.func(f);
    let mut out = Vec::new();
    for &b in func.blocks() {
        let term = func.terminator(b);
        out.extend(func.block(b).insts().iter().copied().filter(|&i| Some(i) != term));
    }
    out
}

pub(crate) fn delete_insts(m: &mut Module, f: FuncId, run: &mut Run) -> bool {
    let mut changed = false;
    let mut items = deletable(m, f);
    let mut size = items.len().div_ceil(2).max(1);
    while !items.is_empty() {
        let mut end = items.len();
        while end > 0 {
            if run.spent() {
                return changed;
            }
            let start = end.saturating_sub(size);
            let chunk: Vec<Inst> = items[start..end].to_vec();
            if run.attempt(m, |c| {
                c.func_mut(f).remove_insts(&chunk);
                true
            }) {
                items.drain(start..end);
                changed = true;
            }
            end = start;
        }
        if size == 1 {
            break;
        }
        size = size.div_ceil(2);
    }
    changed
}
