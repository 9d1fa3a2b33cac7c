//! Dominance repair after a control-flow rewrite. Rewrites such as loop-exit
//! dispatch or early-return flags add static paths that are never taken at
//! run time, so a value may no longer dominate a use it always reached
//! before. Each such value is demoted: a slot in the entry block, a store
//! right after the definition, and a load in front of each use it no
//! longer dominates (for a Phi, at the end of the incoming block). The
//! original program wrote the value before every such use, so the load
//! reads exactly what the use saw.

use xir::analysis::{Cfg, DomTree};
use xir::{Block, Function, Inst, InstData, Metadata, Opcode, TypeTable, Value};

/// A value that would need a slot but cannot live in memory.
#[derive(Debug)]
pub struct NotDemotable {
    pub inst: Inst,
    pub message: String,
}

/// Demote every value whose definition does not dominate all its uses.
/// Returns how many values were demoted.
pub fn repair_dominance(types: &TypeTable, f: &mut Function) -> Result<usize, NotDemotable> {
    let cfg = Cfg::compute(f);
    let dom = DomTree::from_cfg(&cfg);
    let mut pos = vec![usize::MAX; f.inst_capacity()];
    for &b in f.blocks() {
        for (k, &i) in f.block(b).insts.iter().enumerate() {
            pos[i.index()] = k;
        }
    }
    // (definition, user, operand index)
    let mut bad: Vec<(Inst, Inst, usize)> = Vec::new();
    for &ub in &cfg.rpo {
        for &u in &f.block(ub).insts {
            let d = f.inst(u);
            let is_phi = d.opcode == Opcode::Phi;
            for (k, v) in d.operands.iter().enumerate() {
                let Value::Inst(def) = *v else { continue };
                let Some(db) = f.inst(def).parent else { continue };
                let (at_block, at_pos) = if is_phi { (d.blocks[k], usize::MAX) } else { (ub, pos[u.index()]) };
                let ok = if db == at_block {
                    pos[def.index()] < at_pos || (is_phi && !cfg.is_reachable(at_block))
                } else {
                    dom.dominates(db, at_block) || !cfg.is_reachable(db) && !cfg.is_reachable(at_block)
                };
                if !ok && cfg.is_reachable(at_block) {
                    bad.push((def, u, k));
                }
            }
        }
    }
    if bad.is_empty() {
        return Ok(0);
    }
    let entry = f.body().expect("function with uses has a body");
    bad.sort_by_key(|b| b.0);
    let mut defs: Vec<Inst> = bad.iter().map(|b| b.0).collect();
    defs.dedup();
    for &def in &defs {
        let ty = f.inst(def).ty;
        if !types.is_data(ty) || f.is_lvalue(Value::Inst(def)) {
            return Err(NotDemotable {
                inst: def,
                message: format!("{def} no longer dominates its uses and its type cannot be kept in a local slot"),
            });
        }
    }
    for &def in &defs {
        let ty = f.inst(def).ty;
        let mut a = InstData::new(Opcode::Alloca, ty);
        a.md = Metadata::named(format!("{}.slot", f.inst(def).md.name.as_deref().unwrap_or("v")));
        let slot = f.create_inst(a);
        f.insert_inst(entry, 0, slot);
        let db = f.inst(def).parent.expect("placed");
        let mut at = f.position(def).expect("placed") + 1;
        if f.inst(def).opcode == Opcode::Phi {
            while f.block(db).insts.get(at).is_some_and(|&i| f.inst(i).opcode == Opcode::Phi) {
                at += 1;
            }
        }
        let mut st = InstData::new(Opcode::Store, TypeTable::VOID);
        st.operands.extend([Value::Inst(slot), Value::Inst(def)]);
        let st = f.create_inst(st);
        f.insert_inst(db, at, st);
        let first = bad.partition_point(|b| b.0 < def);
        let last = bad.partition_point(|b| b.0 <= def);
        for &(d, user, k) in &bad[first..last] {
            let mut ld = InstData::new(Opcode::Load, ty);
            ld.operands.push(Value::Inst(slot));
            let ld = f.create_inst(ld);
            let ud = f.inst(user);
            if ud.opcode == Opcode::Phi {
                let pred: Block = ud.blocks[k];
                let n = f.block(pred).insts.len();
                let p = if f.terminator(pred).is_some() { n - 1 } else { n };
                f.insert_inst(pred, p, ld);
            } else {
                let ub = ud.parent.expect("placed");
                let p = f.position(user).expect("placed");
                f.insert_inst(ub, p, ld);
            }
            debug_assert_eq!(f.inst(user).operands[k], Value::Inst(d));
            f.set_operand(user, k, Value::Inst(ld));
        }
    }
    Ok(defs.len())
}
