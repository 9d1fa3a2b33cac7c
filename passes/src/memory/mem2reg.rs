//! `mem2reg`: promote local slots to SSA values, placing pruned Phis on the
//! iterated dominance frontier of each slot's stores, restricted to blocks
//! where the slot is live on entry, then renaming over the dominator tree.
//! The algorithm is Cytron, Ferrante, Rosen, Wegman and Zadeck's
//! ("Efficiently computing static single assignment form and the control
//! dependence graph", TOPLAS 1991) with the liveness pruning of Choi,
//! Cytron and Ferrante ("Automatic construction of sparse data flow
//! evaluation graphs", POPL 1991). The steps below: find the promotable
//! slots and their accesses; place the Phis (iterated frontiers of the
//! stores, pruned by liveness); rename in dominator-tree preorder with an
//! undo log; fill the Phis' incomings; delete the accesses and the slots.
//!
//! A slot is promoted when `util::promotable` holds: a function-local
//! `alloca` of a data type, not annotated `// no_promote`, used only as the
//! address of loads and stores. So `alloca.shared`, aggregates reached through
//! `gep`, slots passed by reference to calls and annotated slots stay in
//! memory. Reg2mem spill slots are promoted like any other slot (that is the
//! point: `audit_reg2mem_spills` then checks none survived). The Phis created
//! carry the slot's name. A load before any store reads `undef`.
//!
//! Phis are placed at the top of their block with one incoming per CFG
//! edge (edges from unreachable predecessors give `undef`). Loads and stores in
//! unreachable blocks are replaced by `undef` and deleted.
//!
//! - Consumes: `xir.restructured`, `xir.raw` (the legalization use is after
//!   `restructure_cfg`).
//! - Produces: `xir.restructured.ssa`, `xir.raw` (one per consumed dialect:
//!   on raw input the output is raw with Phis).
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`.

use serde::Deserialize;
use xir::analysis::{Cfg, DomTree, FlatLists};
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{reads, Block, FuncId, Inst, InstData, Module, Opcode, Value};

use super::util;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {}

const INFO: PassInfo = PassInfo {
    name: "mem2reg",
    doc: "Promote local slots to SSA with pruned Phis (dominance frontiers + liveness)",
    consumes: &["xir.restructured", "xir.raw"],
    // On a restructured CFG it is the post-restructure boundary's SSA step;
    // on a raw CFG the Phis it creates keep the IR raw (not Phi-free).
    produces: Produces::PerConsumed(&["xir.restructured.ssa", "xir.raw"]),
    eliminates: &["alloca"],
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
        AnalysisKind::CallGraph,
    ],
};

pub struct Mem2Reg {
    _opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl { info: INFO, options: &[], create: |v| Ok(Box::new(Mem2Reg { _opts: xir::pass::options_from_ron(v)? })) }
}

impl Pass for Mem2Reg {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut out = PassOutcome::default();
        let (mut slots, mut phis) = (0usize, 0usize);
        for f in util::defined_functions(module) {
            let s = mem2reg_function(module, f);
            slots += s.promoted;
            phis += s.phis;
        }
        out.changed = slots > 0;
        out.stats.push(("promoted".into(), slots.to_string()));
        out.stats.push(("phis".into(), phis.to_string()));
        Ok(out)
    }
}

/// What `mem2reg_function` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mem2RegStats {
    pub promoted: usize,
    pub phis: usize,
}

/// Promote every promotable slot of one function.
pub fn mem2reg_function(m: &mut Module, fid: FuncId) -> Mem2RegStats {
    let (types, f) = util::split(m, fid);
    let mut st = Mem2RegStats::default();
    let Some(entry) = f.body() else { return st };

    // `promotable` reads each slot's record and its users' opcodes.
    let allocas = f.select_in_layout_order(|op| op == Opcode::Alloca);
    let mut vars: Vec<Inst> = Vec::new();
    let mut walk = f.walk(&allocas, reads::RecordAndUserOpcodes);
    while let Some(a) = walk.next(f) {
        if util::promotable(types, f, a) {
            vars.push(a);
        }
    }
    if vars.is_empty() {
        return st;
    }
    // Dense tables by id (instruction, block, variable) rather than hash
    // maps and sets: one lookup per load and store, and the per-variable
    // sets of the Phi placement reset in O(1) by stamping them with the
    // variable's number.
    // Every use of a promotable slot is a load or a store addressing it
    // (`util::promotable`), so its use list names exactly its accesses:
    // per instruction id, the variable it accesses and whether it stores.
    // The walks below then decide from this table, not from each load's
    // and store's record.
    const NONE: u32 = u32::MAX;
    const STORE: u32 = 1 << 31;
    let mut access_of: Vec<u32> = vec![NONE; f.inst_capacity()];
    let mut uses_of_vars = 0;
    let mut walk = f.walk(&vars, reads::UserOpcodes);
    while let Some(a) = walk.next(f) {
        let k = walk.position();
        uses_of_vars += f.uses(Value::Inst(a)).len();
        for u in f.uses(Value::Inst(a)) {
            let store = if f.opcode(u.user) == Opcode::Store { STORE } else { 0 };
            access_of[u.user.index()] = k as u32 | store;
        }
    }
    // A load (false) or store (true) of a promoted variable, and which.
    let access = |i: Inst| -> Option<(bool, usize)> {
        let a = access_of[i.index()];
        (a != NONE).then_some((a & STORE != 0, (a & !STORE) as usize))
    };
    let var_ty: Vec<_> = vars.iter().map(|&a| f.inst(a).ty).collect();
    let nv = vars.len();
    let nb = f.block_capacity();

    let cfg = Cfg::compute(f);
    let dom = DomTree::from_cfg(&cfg);
    let df = dom.frontier_table(&cfg);

    // Per variable: blocks with stores, blocks with an upward-exposed load.
    let mut def_blocks: Vec<Vec<Block>> = vec![Vec::new(); nv];
    let mut exposed: Vec<Vec<Block>> = vec![Vec::new(); nv];
    // Per variable, the RPO position + 1 of the last block that touched it.
    let mut seen: Vec<u32> = vec![0; nv];
    // Loads and stores of promoted variables in reachable blocks, per block
    // in order: the renaming walk below visits the blocks in dominator-tree
    // order and reads these lists instead of every instruction of the block
    // (and the record of every load) again. It retires exactly these.
    // At most one entry per use of a variable (their use lists hold exactly
    // its accesses), so the list is allocated once.
    let mut access_pairs: Vec<(usize, (Inst, bool, u32))> = Vec::with_capacity(uses_of_vars);
    // Only the block records are read here (accesses come from the table).
    let mut walk = f.walk(&cfg.rpo, reads::BlockList);
    while let Some(b) = walk.next(f) {
        let stamp = walk.position() as u32 + 1;
        for &i in f.block(b).insts() {
            let Some((is_store, v)) = access(i) else { continue };
            access_pairs.push((b.index(), (i, is_store, v as u32)));
            if std::mem::replace(&mut seen[v], stamp) != stamp {
                if is_store {
                    def_blocks[v].push(b);
                } else {
                    exposed[v].push(b);
                }
            } else if is_store && def_blocks[v].last() != Some(&b) {
                def_blocks[v].push(b);
            }
        }
    }

    let accesses = access_pairs.len();
    let block_accesses = FlatLists::from_pairs(nb, access_pairs.iter().copied());
    drop(access_pairs);

    // Phi placement: iterated frontier of the stores, pruned by liveness.
    // The per-block stamps sit together (one line per block visited, not
    // four tables), and the Phis are placed into their blocks afterwards,
    // all of a block's at once.
    #[derive(Clone, Copy, Default)]
    struct Marks {
        def: u32,
        live: u32,
        phi: u32,
        queued: u32,
    }
    let mut marks = vec![Marks::default(); nb];
    // (block, (variable, Phi, ordinal of the Phi)), in creation order.
    let mut placed: Vec<(usize, (usize, Inst, usize))> = Vec::new();
    // The metadata of each variable's Phis (its name), made once per
    // variable rather than read from the slot for every Phi.
    let phi_md: Vec<xir::Metadata> = vars.iter().map(|&a| util::name_like(f.inst_md(a))).collect();
    for v in 0..nv {
        if def_blocks[v].is_empty() {
            continue;
        }
        let stamp = v as u32 + 1;
        for &b in &def_blocks[v] {
            marks[b.index()].def = stamp;
        }
        let mut work: Vec<Block> = exposed[v].clone();
        while let Some(b) = work.pop() {
            if std::mem::replace(&mut marks[b.index()].live, stamp) == stamp {
                continue;
            }
            for &p in cfg.preds(b) {
                let mp = marks[p.index()];
                if mp.def != stamp && mp.live != stamp && cfg.is_reachable(p) {
                    work.push(p);
                }
            }
        }
        let mut work: Vec<Block> = def_blocks[v].clone();
        for &b in &work {
            marks[b.index()].queued = stamp;
        }
        while let Some(b) = work.pop() {
            for &y in df.get(b.index()) {
                let my = &mut marks[y.index()];
                if my.phi == stamp || my.live != stamp {
                    continue;
                }
                my.phi = stamp;
                let requeue = std::mem::replace(&mut my.queued, stamp) != stamp;
                let mut d = InstData::new(Opcode::Phi, var_ty[v]);
                d.md = phi_md[v].clone();
                let phi = f.create_inst(d);
                placed.push((y.index(), (v, phi, st.phis)));
                st.phis += 1;
                if requeue {
                    work.push(y);
                }
            }
        }
    }
    drop(marks);
    let block_phis = FlatLists::from_pairs(nb, placed.iter().copied());
    // The blocks that got Phis, in the order of their first Phi.
    let mut phi_blocks: Vec<Block> = Vec::new();
    for &(y, (_, phi, _)) in &placed {
        if block_phis.get(y).first().map(|p| p.1) == Some(phi) {
            phi_blocks.push(Block::new(y));
        }
    }
    drop(placed);
    // Each block's Phis go in front of it, the last created first (as
    // inserting each at the front would leave them), in one batch.
    let mut rw = f.rewriter();
    for &y in &phi_blocks {
        for &(_, phi, _) in block_phis.get(y.index()).iter().rev() {
            rw.place_at_top(y, phi);
        }
    }
    rw.commit();

    // Renaming over the dominator tree in preorder (children in order),
    // walked as a list that reads each block's loads and stores ahead. An
    // undo log restores the current definitions when the walk leaves a
    // subtree: entering a block first closes the open blocks that do not
    // dominate it.
    let order = {
        let mut order = Vec::with_capacity(cfg.rpo.len());
        let mut stack = vec![entry];
        while let Some(b) = stack.pop() {
            order.push(b);
            stack.extend(dom.children(b).iter().rev());
        }
        order
    };
    let mut cur: Vec<Option<Value>> = vec![None; nv];
    let mut undo: Vec<(usize, Option<Value>)> = Vec::new();
    // (Phi ordinal, (incoming value, from block)), grouped at the end.
    // At most one incoming per Phi and edge into its block.
    let edges_into_phis: usize = phi_blocks.iter().map(|&y| block_phis.get(y.index()).len() * cfg.preds(y).len()).sum();
    let mut incoming_pairs: Vec<(usize, (Value, Block))> = Vec::with_capacity(edges_into_phis);
    let mut dead: Vec<Inst> = Vec::with_capacity(accesses);
    // The dominators being walked, innermost last, with their undo marks.
    let mut open: Vec<(Block, usize)> = Vec::new();
    let accesses_of = |b: Block| block_accesses.get(b.index()).iter().map(|&(i, is_store, _)| (i, is_store));
    let mut walk = f.walk(&order, reads::Via(accesses_of, reads::Access));
    while let Some(b) = walk.next(f) {
        let parent = dom.idom(b);
        while let Some(&(top, mark)) = open.last() {
            if Some(top) == parent {
                break;
            }
            while undo.len() > mark {
                let (v, old) = undo.pop().expect("undo entry");
                cur[v] = old;
            }
            open.pop();
        }
        open.push((b, undo.len()));
        for &(v, phi, _) in block_phis.get(b.index()) {
            undo.push((v, cur[v]));
            cur[v] = Some(Value::Inst(phi));
        }
        for &(i, is_store, v) in block_accesses.get(b.index()) {
            let v = v as usize;
            if is_store {
                // Read now, not in the first walk: the stored value may be
                // a load replaced earlier in this walk.
                let val = f.inst(i).operands[1];
                undo.push((v, cur[v]));
                cur[v] = Some(val);
            } else {
                let val = cur[v].unwrap_or(Value::Undef(var_ty[v]));
                f.replace_all_uses(Value::Inst(i), val);
            }
            dead.push(i);
        }
        for &s in cfg.succs(b) {
            for &(v, _, k) in block_phis.get(s.index()) {
                let val = cur[v].unwrap_or(Value::Undef(var_ty[v]));
                incoming_pairs.push((k, (val, b)));
            }
        }
    }

    // Finish the Phis: edges from unreachable predecessors carry undef.
    let incomings = FlatLists::from_pairs(st.phis, incoming_pairs.iter().copied());
    drop(incoming_pairs);
    // In one list, walked reading each Phi's record and its incoming
    // values' use lists (attaching the incomings pushes a use onto each;
    // the values are scattered over the function).
    let finish: Vec<(Block, usize, Inst, usize)> = phi_blocks
        .iter()
        .flat_map(|&blk| block_phis.get(blk.index()).iter().map(move |&(v, phi, k)| (blk, v, phi, k)))
        .collect();
    let phi_of = |(_, _, phi, _): (Block, usize, Inst, usize)| Some(phi);
    let values_of = |(_, _, _, k): (Block, usize, Inst, usize)| incomings.get(k).iter().map(|&(v, _)| v);
    let mut walk = f.walk(&finish, (reads::Via(phi_of, reads::Record), reads::Via(values_of, reads::Uses)));
    while let Some((blk, v, phi, k)) = walk.next(f) {
        let mut inc = incomings.get(k).to_vec();
        for &p in cfg.preds(blk) {
            if !cfg.is_reachable(p) {
                inc.push((Value::Undef(var_ty[v]), p));
            }
        }
        f.set_phi_incomings(phi, &inc);
    }

    f.remove_insts(&dead);
    dead.clear();

    // Accesses in unreachable blocks, then the slots themselves.
    for &a in &vars {
        let uses: Vec<_> = f.uses(Value::Inst(a)).to_vec();
        for u in uses {
            let ty = f.inst(a).ty;
            if f.opcode(u.user) == Opcode::Load {
                f.replace_all_uses(Value::Inst(u.user), Value::Undef(ty));
            }
            dead.push(u.user);
        }
        dead.push(a);
        st.promoted += 1;
    }
    f.remove_insts(&dead);
    st
}
