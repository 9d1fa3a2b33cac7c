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
//! - Consumes: `xir.raw`.
//! - Produces: `xir.raw.phi_free`.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`
//!   (no edge or call changes).

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use xir::analysis::FlatLists;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{
    Block, FuncId, Function, Inst, InstData, Metadata, Module, Opcode, SpillKind, Trait, TypeId, TypeTable, Value,
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
    let mut edits = Edits::default();

    // 1. Hoist allocas to the front of the entry block.
    let leading = f.block(entry).insts.iter().take_while(|&&i| f.inst(i).has(Trait::Alloca)).count();
    st.hoisted = allocas.len() - leading;
    if st.hoisted > 0 {
        let set: FxHashSet<Inst> = allocas.iter().copied().collect();
        let mut from: Vec<Block> = allocas.iter().filter_map(|&a| f.parent(a)).collect();
        from.sort();
        from.dedup();
        for b in from {
            f.block_mut(b).insts.retain(|i| !set.contains(i));
        }
        let mut list: xir::InstList = allocas.iter().copied().collect();
        list.extend(f.block(entry).insts.iter().copied());
        f.block_mut(entry).insts = list;
        for &a in &allocas {
            f.set_parent(a, Some(entry));
        }
    }

    // 2. Phis -> tagged slots. The predecessors' terminators are looked up
    // before any store is appended to those blocks (appending moves the
    // terminator off the end until `apply`).
    let mut term_of: Vec<Option<Inst>> = vec![None; f.block_capacity()];
    for &phi in &phis {
        for &pred in f.inst(phi).blocks.iter() {
            if let Some(x) = term_of.get_mut(pred.index()) {
                *x = f.terminator_by_table(pred).map(|(t, _)| t);
            }
        }
    }
    for &phi in &phis {
        let ty = f.inst(phi).ty;
        let mut md = util::name_like(f.inst_md(phi));
        md.spill = Some(SpillKind::Phi);
        let slot = edits.slot(f, entry, ty, md);
        for (v, pred) in util::phi_incomings(f, phi) {
            let v = match v {
                Value::Undef(t) => zeros.get(&t).copied().unwrap_or(v),
                v => v,
            };
            let st_i = util::make(f, Opcode::Store, TypeTable::VOID, &[Value::Inst(slot), v], Metadata::default());
            match term_of.get(pred.index()).copied().flatten() {
                Some(t) => edits.before(f, t, st_i),
                None => edits.back(f, pred, st_i),
            }
        }
        let md = util::name_like(f.inst_md(phi));
        let load = util::make(f, Opcode::Load, ty, &[Value::Inst(slot)], md);
        let home = f.parent(phi).expect("phi is placed");
        edits.front(f, home, load);
        f.replace_all_uses(Value::Inst(phi), Value::Inst(load));
        st.phis += 1;
    }
    f.remove_insts(&phis);

    // 3. GEPs used in another block are re-materialized next to the use
    //    (a worklist: the clone's base may itself be a foreign GEP).
    let mut work: Vec<Inst> = geps;
    while let Some(g) = work.pop() {
        let home = f.parent(g);
        let foreign: Vec<_> = f.uses(Value::Inst(g)).iter().copied().filter(|u| f.parent(u.user) != home).collect();
        for u in foreign {
            let d = f.inst_data(g);
            let clone = f.create_inst(d);
            edits.before(f, u.user, clone);
            f.set_operand(u.user, u.index as usize, Value::Inst(clone));
            work.push(clone);
        }
    }

    // 4. Cross-block data values -> tagged slots. Candidates in id order:
    // one sweep of the dense table and the use lists, no block record. Most
    // values are used only in their own block, and the use list (with the
    // users' blocks from the dense table) says so without reading the
    // value's record. Each value is demoted on its own (demoting one adds
    // no foreign use of another), so the order only numbers the slots.
    let crossing: Vec<(Inst, Block)> = f
        .live_placements_by_id()
        .filter(|&(d, home, _)| f.uses(Value::Inst(d)).iter().any(|u| f.parent(u.user) != Some(home)))
        .map(|(d, home, _)| (d, home))
        .collect();
    for (k, &(d, home)) in crossing.iter().enumerate() {
        if let Some((ahead, _)) = xir::prefetch_ahead(&crossing, k) {
            f.prefetch_inst(ahead);
        }
        let is_foreign = |u: &xir::Use| f.parent(u.user) != Some(home);
        let data = f.inst(d);
        if data.ty == TypeTable::VOID || data.has(Trait::Lvalue) || !types.is_data(data.ty) {
            continue;
        }
        let foreign: Vec<_> = f.uses(Value::Inst(d)).iter().copied().filter(is_foreign).collect();
        let ty = data.ty;
        let mut md = util::name_like(f.inst_md(d));
        md.spill = Some(SpillKind::CrossBlock);
        let slot = edits.slot(f, entry, ty, md);
        let store =
            util::make(f, Opcode::Store, TypeTable::VOID, &[Value::Inst(slot), Value::Inst(d)], Metadata::default());
        edits.after(f, d, store);
        let mut repl = Vec::with_capacity(foreign.len());
        for u in foreign {
            let md = util::name_like(f.inst_md(d));
            let load = util::make(f, Opcode::Load, ty, &[Value::Inst(slot)], md);
            edits.before(f, u.user, load);
            repl.push((u, Value::Inst(load)));
        }
        f.replace_uses(Value::Inst(d), &repl);
        st.cross_block += 1;
    }
    edits.apply(f);
    st.changed = st.hoisted + st.phis + st.cross_block > 0;
    st
}

/// Insertions collected during the pass and placed in one reordering per
/// block, so the pass stays linear on large blocks. A new instruction is
/// placed in its block at once (`Function::place_unlisted`: its parent and
/// operand uses, not the block's list) and put into the list, at its final
/// position, by `apply`. The placements are lists of pairs,
/// grouped by anchor in flat tables when applied (hash maps of lists, one
/// entry per anchor, were a random access and an allocation per inserted
/// load or store).
#[derive(Default)]
struct Edits {
    slots: Vec<Inst>,
    /// (anchor instruction id, instruction to place before / after it)
    before: Vec<(usize, Inst)>,
    after: Vec<(usize, Inst)>,
    /// (block id, instruction to place at its top / its end)
    front: Vec<(usize, Inst)>,
    back: Vec<(usize, Inst)>,
    blocks: Vec<Block>,
}

/// The placements of `Edits`, grouped.
struct Placements {
    before: FlatLists<Inst>,
    after: FlatLists<Inst>,
}

impl Edits {
    /// Places `i` in `b`; `apply` puts it into `b`'s list.
    fn append(&mut self, f: &mut Function, b: Block, i: Inst) {
        f.place_unlisted(b, i);
        self.blocks.push(b);
    }
    fn slot(&mut self, f: &mut Function, entry: Block, ty: TypeId, md: Metadata) -> Inst {
        let mut d = InstData::new(Opcode::Alloca, ty);
        d.md = md;
        let i = f.create_inst(d);
        self.append(f, entry, i);
        self.slots.push(i);
        i
    }
    fn before(&mut self, f: &mut Function, anchor: Inst, i: Inst) {
        let b = f.parent(anchor).expect("anchor is placed");
        self.append(f, b, i);
        self.before.push((anchor.index(), i));
    }
    fn after(&mut self, f: &mut Function, anchor: Inst, i: Inst) {
        let b = f.parent(anchor).expect("anchor is placed");
        self.append(f, b, i);
        self.after.push((anchor.index(), i));
    }
    /// Place `i` at the end of `b` (after earlier `back` instructions).
    fn back(&mut self, f: &mut Function, b: Block, i: Inst) {
        self.append(f, b, i);
        self.back.push((b.index(), i));
    }
    /// Place `i` at the top of `b` (after earlier `front` instructions).
    fn front(&mut self, f: &mut Function, b: Block, i: Inst) {
        self.append(f, b, i);
        self.front.push((b.index(), i));
    }
    fn apply(mut self, f: &mut Function) {
        let entry = f.body();
        let n = f.inst_capacity();
        let at = Placements {
            before: FlatLists::from_pairs(n, self.before.iter().copied()),
            after: FlatLists::from_pairs(n, self.after.iter().copied()),
        };
        let front = FlatLists::from_pairs(f.block_capacity(), self.front.iter().copied());
        let back = FlatLists::from_pairs(f.block_capacity(), self.back.iter().copied());
        self.blocks.sort();
        self.blocks.dedup();
        for (k, &b) in self.blocks.iter().enumerate() {
            if let Some(ahead) = xir::prefetch_ahead(&self.blocks, k) {
                f.prefetch_block(ahead);
            }
            let old = std::mem::take(&mut f.block_mut(b).insts);
            let mut list = xir::InstList::with_capacity(old.len());
            if Some(b) == entry {
                list.extend(self.slots.iter().copied());
            }
            for &i in front.get(b.index()) {
                at.emit(&mut list, i);
            }
            for &i in &old {
                at.emit(&mut list, i);
            }
            for &i in back.get(b.index()) {
                at.emit(&mut list, i);
            }
            f.block_mut(b).insts = list;
        }
    }
}

impl Placements {
    /// Push `i` with whatever goes before and after it (recursively: a
    /// re-materialized GEP has its own loads before it).
    fn emit(&self, list: &mut xir::InstList, i: Inst) {
        for &x in self.before.get(i.index()) {
            self.emit(list, x);
        }
        list.push(i);
        for &x in self.after.get(i.index()) {
            self.emit(list, x);
        }
    }
}
