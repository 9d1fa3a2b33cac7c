//! Block merging: a block whose only predecessor ends in a `br` to it is
//! appended to that predecessor (its Phis become their one incoming value),
//! so the straight-line chains that loop removal and branch collapsing
//! leave become one block.

use xir::{Block, FuncId, Function, Module, Opcode, Value};

use crate::Run;

pub(crate) fn merge_blocks(m: &mut Module, f: FuncId, run: &mut Run) -> bool {
    let mut changed = false;
    let mut k = 0;
    while let Some(&a) = m.func(f).blocks().get(k) {
        let Some(b) = mergeable(m.func(f), a) else {
            k += 1;
            continue;
        };
        if run.spent() {
            return changed;
        }
        if run.attempt(m, |c| {
            merge(c.func_mut(f), a, b);
            true
        }) {
            changed = true;
        } else {
            k += 1;
        }
    }
    changed
}

/// The block `a` may absorb: the target of its `br`, not the entry, whose
/// only predecessor is `a`.
fn mergeable(func: &Function, a: Block) -> Option<Block> {
    let t = func.terminator(a)?;
    if func.opcode(t) != Opcode::Br {
        return None;
    }
    let b = func.inst(t).blocks[0];
    if b == a || Some(b) == func.body() {
        return None;
    }
    let preds: usize = func.blocks().iter().map(|&p| func.successors(p).iter().filter(|&&s| s == b).count()).sum();
    (preds == 1).then_some(b)
}

fn merge(func: &mut Function, a: Block, b: Block) {
    let t = func.terminator(a).expect("checked by mergeable");
    func.remove_inst(t);
    for i in func.block(b).insts().to_vec() {
        if func.opcode(i) == Opcode::Phi {
            let v = func.inst(i).operands.first().copied();
            if let Some(v) = v {
                func.replace_all_uses(Value::Inst(i), v);
            }
            func.remove_inst(i);
            continue;
        }
        let pos = func.block(a).insts().len();
        func.move_inst(i, a, pos);
    }
    // Whatever named `b` (successors' Phis, structured roles) names `a`.
    let named: Vec<_> = func.all_insts().map(|(_, i)| i).filter(|&i| func.inst(i).blocks.contains(&b)).collect();
    for i in named {
        func.retarget(i, b, a);
    }
    func.remove_block(b);
}
