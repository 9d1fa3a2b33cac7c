//! Branch collapsing: a branching terminator (`if`, `cond_br`, `switch`,
//! ...) becomes a `br` to one of its successors, and the blocks no longer
//! reached go.

use xir::{FuncId, InstData, Module, Opcode, TypeTable};

use crate::{drop_unreachable, Run};

pub(crate) fn collapse_branches(m: &mut Module, f: FuncId, run: &mut Run) -> bool {
    let mut changed = false;
    let mut k = 0;
    while let Some(&b) = m.func(f).blocks().get(k) {
        k += 1;
        let Some(t) = m.func(f).terminator(b) else { continue };
        let succs = m.func(f).successors(b);
        // A `br` is already one; loops are `loops`'s; a structured
        // selection with one successor still goes (its merge may be dead).
        let op = m.func(f).opcode(t);
        if succs.is_empty() || matches!(op, Opcode::Br | Opcode::Loop | Opcode::SimpleLoop) {
            continue;
        }
        for s in succs {
            if run.spent() {
                return changed;
            }
            let collapsed = run.attempt(m, |c| {
                let func = c.func_mut(f);
                let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
                br.blocks.push(s);
                func.replace_inst(t, br);
                drop_unreachable(func);
                true
            });
            if collapsed {
                changed = true;
                k = 0;
                break;
            }
        }
    }
    changed
}
