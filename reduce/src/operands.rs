//! Variadic block operands: a `switch` case (its literal and its block) is
//! tried away, the blocks no longer reached going with it. (Call arguments
//! go with their parameters, `params`; a Phi's incomings follow the edges
//! that branch collapsing removes, and a Phi is replaced by one of them in
//! `values`.)

use xir::{FuncId, Module, Opcode, Payload};

use crate::{drop_unreachable, Run};

pub(crate) fn drop_switch_cases(m: &mut Module, f: FuncId, run: &mut Run) -> bool {
    let mut changed = false;
    let switches: Vec<_> =
        m.func(f).all_insts().map(|(_, i)| i).filter(|&i| m.func(f).opcode(i) == Opcode::Switch).collect();
    for s in switches {
        let mut k = 0;
        while m.func(f).is_live(s) && k < m.func(f).cases(s).len() {
            if run.spent() {
                return changed;
            }
            if run.attempt(m, |c| {
                let func = c.func_mut(f);
                let mut data = func.inst_data(s);
                let mut cases = data.cases().to_vec();
                cases.remove(k);
                // Blocks: merge, default, then one per case.
                data.blocks.remove(2 + k);
                data.payload = Payload::Cases(cases);
                func.replace_inst(s, data);
                drop_unreachable(func);
                true
            }) {
                changed = true;
            } else {
                k += 1;
            }
        }
    }
    changed
}
