//! Loop removal: a `loop` or `simple_loop` is tried away whole (its header
//! branches to the merge), else its body is made to run once (the header
//! branches into it, back edges and `break`s go to the merge, `continue`s
//! to the update as plain branches), so the body's blocks become straight
//! line code for block merging.

use xir::{Block, FuncId, Inst, InstData, Module, Opcode, TypeTable};

use crate::{drop_unreachable, Run};

pub(crate) fn remove_loops(m: &mut Module, f: FuncId, run: &mut Run) -> bool {
    let mut changed = false;
    let mut k = 0;
    while let Some(&b) = m.func(f).blocks().get(k) {
        k += 1;
        let Some(t) = m.func(f).terminator(b) else { continue };
        let core = m.func(f).inst(t).clone();
        let (entry, back, update, merge) = match core.opcode {
            // prepare, body, update, merge: run from prepare, which is entered once.
            Opcode::Loop => (core.blocks[0], core.blocks[0], Some(core.blocks[2]), core.blocks[3]),
            // body, merge.
            Opcode::SimpleLoop => (core.blocks[0], core.blocks[0], None, core.blocks[1]),
            _ => continue,
        };
        if run.spent() {
            return changed;
        }
        let removed = run.attempt(m, |c| {
            branch(c.func_mut(f), t, merge);
            true
        }) || run.attempt(m, |c| {
            once(c.func_mut(f), t, entry, back, update, merge);
            true
        });
        if removed {
            changed = true;
            k = 0;
        }
    }
    changed
}

/// Replace terminator `t` by `br target`, dropping what is no longer reached.
fn branch(func: &mut xir::Function, t: Inst, target: Block) {
    let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
    br.blocks.push(target);
    func.replace_inst(t, br);
    drop_unreachable(func);
}

fn once(func: &mut xir::Function, t: Inst, entry: Block, back: Block, update: Option<Block>, merge: Block) {
    let header = func.parent(t).expect("a placed terminator");
    let terms: Vec<(Block, Inst)> =
        func.blocks().iter().filter_map(|&b| Some((b, func.terminator(b)?))).filter(|&(_, i)| i != t).collect();
    for (b, i) in terms {
        let core = func.inst(i).clone();
        let plain = |func: &mut xir::Function, to: Block| {
            let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
            br.blocks.push(to);
            func.replace_inst(i, br);
        };
        match core.opcode {
            Opcode::Break if core.blocks[0] == merge => plain(func, merge),
            Opcode::Continue if Some(core.blocks[0]) == update => plain(func, core.blocks[0]),
            // A continue of a simple_loop re-enters the body: it leaves now.
            Opcode::Continue if core.blocks[0] == back && update.is_none() => plain(func, merge),
            // The loop's prepare decides nothing any more: into the body.
            Opcode::CondBr if b == entry && update.is_some() => plain(func, core.blocks[0]),
            _ if b != header => {
                func.retarget(i, back, merge);
            }
            _ => {}
        }
    }
    branch(func, t, entry);
}
