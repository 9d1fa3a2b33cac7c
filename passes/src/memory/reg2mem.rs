//! `reg2mem`: demote every Phi and every value used outside its defining
//! block to a function-local slot, so that `restructure_cfg` may move blocks
//! freely. It is the temporary boundary adapter of the SPIR-V legalization
//! (the reference's step 7), undone by `mem2reg` right after restructuring.
//!
//! The algorithm is the classic translation out of SSA through memory
//! (Cytron et al., TOPLAS 1991, section 7, with the copies made through a
//! slot; LLVM's `reg2mem` demotes the same way): one slot per Phi, stored at
//! the end of each predecessor and loaded at the Phi; one slot per value
//! that crosses a block boundary, stored after the definition and loaded
//! before each foreign use. All insertions go into one batch of the core's
//! rewriter, placed in one rebuild per block.
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
//! - Consumes: `xir.raw`.
//! - Produces: `xir.raw.phi_free`.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`
//!   (no edge or call changes).

use rustc_hash::FxHashMap;
use serde::Deserialize;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{
    reads, Block, FuncId, Inst, InstData, Metadata, Module, Opcode, Rewriter, SpillKind, Trait, TypeId, TypeTable,
    Value,
};

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
    if m.func(fid).body().is_none() {
        return st;
    }
    // One walk collects what steps 1-3 work on (the allocas, Phis and
    // GEPs, each in program order; steps 1 and 2 create none of the others'
    // kinds) and the types of undef Phi incomings: undef incomings are
    // stored as zero (a refinement of undef), since the slot is loaded
    // unconditionally and a load of nothing is an error.
    let (allocas, phis, geps, undef_tys) = {
        let f = m.func(fid);
        let (mut allocas, mut phis, mut geps, mut undef_tys) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        // Opcodes from the dense table: only the blocks holding one of
        // these are walked, and only Phi records are read.
        let wanted = |op: Opcode| matches!(op, Opcode::Phi | Opcode::Gep) || xir_spec::spec().op(op).has(Trait::Alloca);
        for i in f.select_in_layout_order(wanted) {
            let op = f.opcode(i);
            match op {
                Opcode::Phi => {
                    phis.push(i);
                    undef_tys.extend(f.inst(i).operands.iter().filter_map(|o| {
                        if let Value::Undef(t) = o {
                            Some(*t)
                        } else {
                            None
                        }
                    }));
                }
                Opcode::Gep => geps.push(i),
                _ if xir_spec::spec().op(op).has(Trait::Alloca) => allocas.push(i),
                _ => {}
            }
        }
        undef_tys.sort();
        undef_tys.dedup();
        (allocas, phis, geps, undef_tys)
    };
    let zeros: FxHashMap<TypeId, Value> =
        undef_tys.into_iter().filter_map(|t| util::zero_const(m, t).map(|z| (t, z))).collect();
    let (types, f) = util::split(m, fid);
    let entry = f.body().expect("checked above");

    // 1. Hoist allocas to the front of the entry block.
    let leading = f.block(entry).insts().iter().take_while(|&&i| f.inst(i).has(Trait::Alloca)).count();
    st.hoisted = allocas.len() - leading;
    if st.hoisted > 0 {
        f.move_to_top(entry, &allocas);
    }

    // Steps 2-4 insert many loads and stores (and slots at the top of the
    // entry block): one batch, placed in one rebuild per block.
    let mut rw = f.rewriter();
    let slot = |rw: &mut Rewriter, ty: TypeId, md: Metadata| {
        let mut d = InstData::new(Opcode::Alloca, ty);
        d.md = md;
        rw.insert_at_top(entry, d)
    };

    // 2. Phis -> tagged slots. The predecessors' terminators are looked up
    // before any store is placed in those blocks.
    let mut term_of: Vec<Option<Inst>> = vec![None; rw.block_capacity()];
    for &phi in &phis {
        for &pred in rw.inst(phi).blocks.iter() {
            if let Some(x) = term_of.get_mut(pred.index()) {
                *x = rw.terminator_by_table(pred).map(|(t, _)| t);
            }
        }
    }
    for &phi in &phis {
        let ty = rw.inst(phi).ty;
        let mut md = util::name_like(rw.inst_md(phi));
        md.spill = Some(SpillKind::Phi);
        let slot = slot(&mut rw, ty, md);
        for (v, pred) in util::phi_incomings(&rw, phi) {
            let v = match v {
                Value::Undef(t) => zeros.get(&t).copied().unwrap_or(v),
                v => v,
            };
            let store = util::data(Opcode::Store, TypeTable::VOID, &[Value::Inst(slot), v], Metadata::default());
            match term_of.get(pred.index()).copied().flatten() {
                Some(t) => rw.insert_before(t, store),
                None => rw.insert_at_bottom(pred, store),
            };
        }
        let md = util::name_like(rw.inst_md(phi));
        let load = util::data(Opcode::Load, ty, &[Value::Inst(slot)], md);
        let home = rw.parent(phi).expect("phi is placed");
        let load = rw.insert_at_top(home, load);
        rw.func().replace_all_uses(Value::Inst(phi), Value::Inst(load));
        st.phis += 1;
    }
    rw.func().remove_insts(&phis);

    // 3. GEPs used in another block are re-materialized next to the use
    //    (a worklist: the clone's base may itself be a foreign GEP).
    let mut work: Vec<Inst> = geps;
    while let Some(g) = work.pop() {
        let home = rw.parent(g);
        let foreign: Vec<_> = rw.uses(Value::Inst(g)).iter().copied().filter(|u| rw.parent(u.user) != home).collect();
        for u in foreign {
            let clone = rw.insert_before(u.user, rw.inst_data(g));
            rw.func().set_operand(u.user, u.index as usize, Value::Inst(clone));
            work.push(clone);
        }
    }

    // 4. Cross-block data values -> tagged slots. Candidates in id order:
    // one sweep of the dense table and the use lists, no block record. Most
    // values are used only in their own block, and the use list (with the
    // users' blocks from the dense table) says so without reading the
    // value's record. Each value is demoted on its own (demoting one adds
    // no foreign use of another), so the order only numbers the slots.
    let crossing: Vec<(Inst, Block)> = rw
        .live_placements_by_id()
        .filter(|&(d, home, _)| rw.uses(Value::Inst(d)).iter().any(|u| rw.parent(u.user) != Some(home)))
        .map(|(d, home, _)| (d, home))
        .collect();
    let mut walk = rw.walk(&crossing, reads::Record);
    while let Some((d, home)) = walk.next(&rw) {
        let data = rw.inst(d);
        if data.ty == TypeTable::VOID || data.has(Trait::Lvalue) || !types.is_data(data.ty) {
            continue;
        }
        let ty = data.ty;
        let foreign: Vec<_> =
            rw.uses(Value::Inst(d)).iter().copied().filter(|u| rw.parent(u.user) != Some(home)).collect();
        let mut md = util::name_like(rw.inst_md(d));
        md.spill = Some(SpillKind::CrossBlock);
        let slot = slot(&mut rw, ty, md);
        let store =
            util::data(Opcode::Store, TypeTable::VOID, &[Value::Inst(slot), Value::Inst(d)], Metadata::default());
        rw.insert_after(d, store);
        let mut repl = Vec::with_capacity(foreign.len());
        for u in foreign {
            let md = util::name_like(rw.inst_md(d));
            let load = rw.insert_before(u.user, util::data(Opcode::Load, ty, &[Value::Inst(slot)], md));
            repl.push((u, Value::Inst(load)));
        }
        rw.func().replace_uses(Value::Inst(d), &repl);
        st.cross_block += 1;
    }
    rw.commit();
    st.changed = st.hoisted + st.phis + st.cross_block > 0;
    st
}
