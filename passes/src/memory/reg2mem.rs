//! `reg2mem`: demote every Phi and every value used outside its defining
//! block to a function-local slot, so that `restructure_cfg` may move blocks
//! freely. It is the temporary boundary adapter of the SPIR-V legalization
//! (the reference's step 7), undone by `mem2reg` right after restructuring.
//!
//! - A Phi becomes a slot tagged `!spill(phi)`: each predecessor stores its
//!   incoming value before its terminator, and the Phi is replaced by a load
//!   at the top of its block (loads at the top keep the parallel-copy
//!   semantics of several Phis in one block).
//! - A value used in another block becomes a slot tagged
//!   `!spill(cross_block)`: stored right after its definition, reloaded right
//!   before each foreign use. Addresses (`gep`) are not data and cannot be
//!   stored: a GEP used in another block is re-materialized there instead.
//!   Values of non-data types (ray queries) are left in place.
//! - Every `alloca` and `alloca.shared` is hoisted to the entry block.
//!
//! Consumes: `xir.raw`. Produces: `xir.raw.phi_free`.
//! Preserves: CFG, dominators, frontiers, loops, call graph (no edge or
//! call changes).

use serde::Deserialize;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{FuncId, Inst, Metadata, Module, Opcode, SpillKind, Trait, TypeTable, Value};

use super::util;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {}

const INFO: PassInfo = PassInfo {
    name: "reg2mem",
    doc: "Demote Phis and cross-block values to tagged local slots; hoist allocas",
    consumes: &["xir.raw"],
    produces: Produces::Dialect("xir.raw.phi_free"),
    eliminates: &[],
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
        AnalysisKind::CallGraph,
    ],
};

pub struct Reg2Mem {
    _opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl { info: INFO, options: &[], create: |v| Ok(Box::new(Reg2Mem { _opts: xir::pass::options_from_ron(v)? })) }
}

impl Pass for Reg2Mem {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut out = PassOutcome::default();
        let (mut phis, mut cross) = (0usize, 0usize);
        for f in util::defined_functions(module) {
            let s = reg2mem_function(module, f);
            phis += s.phis;
            cross += s.cross_block;
            out.changed |= s.changed;
        }
        out.stats.push(("phi_slots".into(), phis.to_string()));
        out.stats.push(("cross_block_slots".into(), cross.to_string()));
        Ok(out)
    }
}

/// What `reg2mem_function` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reg2MemStats {
    pub changed: bool,
    pub phis: usize,
    pub cross_block: usize,
    pub hoisted: usize,
}

/// Demote one function.
pub fn reg2mem_function(m: &mut Module, fid: FuncId) -> Reg2MemStats {
    let mut st = Reg2MemStats::default();
    let (types, f) = util::split(m, fid);
    let Some(entry) = f.body() else { return st };

    // 1. Hoist allocas (after the allocas already leading the entry block).
    let allocas: Vec<Inst> = f.all_insts().filter(|&(_, i)| f.inst(i).has(Trait::Alloca)).map(|p| p.1).collect();
    let mut pos = 0;
    for a in allocas {
        if f.inst(a).parent == Some(entry) && f.position(a) == Some(pos) {
            pos += 1;
            continue;
        }
        f.move_inst(a, entry, pos);
        pos += 1;
        st.hoisted += 1;
    }

    // 2. Phis -> tagged slots.
    let phis: Vec<Inst> = f.all_insts().filter(|&(_, i)| f.inst(i).opcode == Opcode::Phi).map(|p| p.1).collect();
    for phi in phis {
        let ty = f.inst(phi).ty;
        let mut md = util::name_like(&f.inst(phi).md);
        md.spill = Some(SpillKind::Phi);
        let slot = util::entry_alloca(f, ty, md).expect("function has a body");
        for (v, pred) in util::phi_incomings(f, phi) {
            let st_i = util::make(f, Opcode::Store, TypeTable::VOID, &[Value::Inst(slot), v], Metadata::default());
            let n = f.block(pred).insts.len();
            let at = if f.terminator(pred).is_some() { n - 1 } else { n };
            f.insert_inst(pred, at, st_i);
        }
        let md = util::name_like(&f.inst(phi).md);
        let load = util::make(f, Opcode::Load, ty, &[Value::Inst(slot)], md);
        util::insert_before(f, phi, load);
        f.replace_all_uses(Value::Inst(phi), Value::Inst(load));
        f.remove_inst(phi);
        st.phis += 1;
    }

    // 3. GEPs used in another block are re-materialized next to the use
    //    (a worklist: the clone's base may itself be a foreign GEP).
    let mut work: Vec<Inst> = f.all_insts().filter(|&(_, i)| f.inst(i).opcode == Opcode::Gep).map(|p| p.1).collect();
    while let Some(g) = work.pop() {
        let home = f.inst(g).parent;
        let foreign: Vec<_> =
            f.uses(Value::Inst(g)).iter().copied().filter(|u| f.inst(u.user).parent != home).collect();
        for u in foreign {
            let d = f.inst(g).clone();
            let clone = f.create_inst(d);
            util::insert_before(f, u.user, clone);
            f.set_operand(u.user, u.index as usize, Value::Inst(clone));
            work.push(clone);
        }
    }

    // 4. Cross-block data values -> tagged slots.
    let defs: Vec<(xir::Block, Inst)> = f.all_insts().collect();
    for (home, d) in defs {
        let data = f.inst(d);
        if data.ty == TypeTable::VOID || data.has(Trait::Lvalue) || !types.is_data(data.ty) {
            continue;
        }
        let foreign: Vec<_> =
            f.uses(Value::Inst(d)).iter().copied().filter(|u| f.inst(u.user).parent != Some(home)).collect();
        if foreign.is_empty() {
            continue;
        }
        let ty = data.ty;
        let mut md = util::name_like(&data.md);
        md.spill = Some(SpillKind::CrossBlock);
        let slot = util::entry_alloca(f, ty, md).expect("function has a body");
        let store =
            util::make(f, Opcode::Store, TypeTable::VOID, &[Value::Inst(slot), Value::Inst(d)], Metadata::default());
        util::insert_after(f, d, store);
        for u in foreign {
            let md = util::name_like(&f.inst(d).md);
            let load = util::make(f, Opcode::Load, ty, &[Value::Inst(slot)], md);
            util::insert_before(f, u.user, load);
            f.set_operand(u.user, u.index as usize, Value::Inst(load));
        }
        st.cross_block += 1;
    }
    st.changed = st.hoisted + st.phis + st.cross_block > 0;
    st
}
