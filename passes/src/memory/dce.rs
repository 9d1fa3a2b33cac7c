//! `dce`: dead code elimination, iterated to a fixed point per function.
//!
//! - **Static branch folding**: `cond_br`, `br_indexed` (and, unless
//!   `fold_structured: false`, `if`, `switch` and the `cond_br` that ends a
//!   loop's prepare block) on a constant become `br` to the chosen target;
//!   Phis of the targets no longer reached drop the incoming from this
//!   block. A structured loop's prepare block must end in `br` to its body
//!   or a `cond_br` (the SPIR-V backend's form), so a loop that never runs
//!   keeps its `cond_br false` when structured code is not folded.
//! - **Dead instructions**: mark-and-sweep from every instruction that must
//!   stay (terminators, side effects, memory writes, calls); pure
//!   computations, Phis and loads not reached from those are deleted (cycles
//!   of dead Phis included).
//! - **Dead allocas**: a local `alloca` used only as the address of stores
//!   (directly or through GEPs) is deleted with those stores.
//! - **Unreachable blocks**: a block is kept when it is the entry or is named
//!   by the terminator of a kept block — as a successor or as a structured
//!   role (merge, update, continue/break target). In raw CFG this is plain
//!   reachability; in structured dialects it keeps every role block and so
//!   block identity of disconnected merges. Other blocks are true orphans
//!   and are removed; uses of their values become `undef`.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: nothing (the call graph only when no call was deleted, so
//!   nothing is claimed).

use rustc_hash::FxHashSet;
use serde::Deserialize;
use xir::analysis::FlatLists;
use xir::pass::{OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Block, FuncId, Function, Inst, InstData, Module, Opcode, TypeTable, Value};

use super::util;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Also fold structured `if` / `switch`, and a loop prepare block's
    /// `cond_br`, on constants into `br`.
    pub fold_structured: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { fold_structured: true }
    }
}

const INFO: PassInfo = PassInfo {
    name: "dce",
    doc: "Delete dead instructions, dead allocas and orphan blocks; fold constant branches",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &[],
    preserves: &[],
};

const OPTIONS: &[OptionDoc] = &[OptionDoc {
    name: "fold_structured",
    ty: "bool",
    default: "true",
    doc: "Also fold structured if/switch, and a loop prepare's cond_br, on constants into br",
}];

pub struct Dce {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl { info: INFO, options: OPTIONS, create: |v| Ok(Box::new(Dce { opts: xir::pass::options_from_ron(v)? })) }
}

impl Pass for Dce {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut total = DceStats::default();
        for f in util::defined_functions(module) {
            let s = dce_function(module, f, &self.opts);
            total.folded += s.folded;
            total.insts += s.insts;
            total.allocas += s.allocas;
            total.blocks += s.blocks;
        }
        let mut out = PassOutcome::changed(total.folded + total.insts + total.allocas + total.blocks > 0);
        out.stats.push(("folded_branches".into(), total.folded.to_string()));
        out.stats.push(("dead_insts".into(), total.insts.to_string()));
        out.stats.push(("dead_allocas".into(), total.allocas.to_string()));
        out.stats.push(("removed_blocks".into(), total.blocks.to_string()));
        Ok(out)
    }
}

/// What `dce_function` removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DceStats {
    pub folded: usize,
    pub insts: usize,
    pub allocas: usize,
    pub blocks: usize,
}

/// Run every DCE step on one function until nothing changes.
pub fn dce_function(m: &mut Module, fid: FuncId, opts: &Options) -> DceStats {
    let mut st = DceStats::default();
    if m.func(fid).body().is_none() {
        return st;
    }
    // The control flow is final after one fold and one orphan removal: no
    // later step changes a terminator or makes a selector constant (dead
    // allocas and dead instructions are never terminators). Only those two
    // steps feed each other (a dead load leaves its slot with stores only),
    // so only they repeat.
    st.folded = fold_branches(m, fid, opts);
    st.blocks = remove_orphan_blocks(m.func_mut(fid));
    loop {
        let f = m.func_mut(fid);
        let allocas = remove_dead_allocas(f);
        let insts = sweep_dead_insts(f);
        st.allocas += allocas;
        st.insts += insts;
        if allocas + insts == 0 {
            debug_assert_eq!(fold_branches(m, fid, opts), 0, "dce: a fold after the control flow was final");
            debug_assert_eq!(
                remove_orphan_blocks(m.func_mut(fid)),
                0,
                "dce: an orphan after the control flow was final"
            );
            return st;
        }
    }
}

/// The chosen successor of a terminator whose selector is a constant.
fn constant_target(m: &Module, f: &Function, t: Inst, opts: &Options) -> Option<Block> {
    let d = f.inst(t);
    match d.opcode {
        Opcode::CondBr | Opcode::If => {
            if d.opcode == Opcode::If && !opts.fold_structured {
                return None;
            }
            let c = m.const_bits(d.operands[0])?;
            Some(if c & 1 == 1 { d.blocks[0] } else { d.blocks[1] })
        }
        Opcode::Switch | Opcode::BrIndexed => {
            if d.opcode == Opcode::Switch && !opts.fold_structured {
                return None;
            }
            let sel = d.operands[0];
            let bits = m.const_bits(sel)?;
            let w = m.types.scalar_bits(f.value_type(m, sel));
            let mask = if w >= 64 || w == 0 { u64::MAX } else { (1u64 << w) - 1 };
            // switch: [merge, default, cases..]; br_indexed: [default, cases..]
            let first = if d.opcode == Opcode::Switch { 1 } else { 0 };
            let pos = f.cases(t).iter().position(|&c| c & mask == bits & mask);
            Some(match pos {
                Some(k) => d.blocks[first + 1 + k],
                None => d.blocks[first],
            })
        }
        _ => None,
    }
}

fn fold_branches(m: &mut Module, fid: FuncId, opts: &Options) -> usize {
    let mut n = 0;
    let blocks: Vec<Block> = m.func(fid).blocks().to_vec();
    let keep = if opts.fold_structured { FxHashSet::default() } else { loop_prepares(m.func(fid), &blocks) };
    // A conditional terminator's record is read (for its selector).
    let mut walk = m.func(fid).walk(&blocks, xir::reads::Terminator);
    while let Some(b) = walk.next(m.func(fid)) {
        let f = m.func(fid);
        // Only conditional terminators can fold; the others are recognized
        // from the dense table without reading their records.
        let Some((t, op)) = f.terminator_by_table(b) else { continue };
        if !matches!(op, Opcode::CondBr | Opcode::If | Opcode::Switch | Opcode::BrIndexed) || keep.contains(&b) {
            continue;
        }
        let Some(target) = constant_target(m, f, t, opts) else { continue };
        let old_succs = f.successors(b);
        let f = m.func_mut(fid);
        let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
        br.blocks.push(target);
        br.md = f.inst_md(t).to_metadata();
        br.span = f.inst_span(t);
        f.remove_inst(t);
        f.append_inst(b, br);
        let mut done: Vec<Block> = Vec::new();
        for s in old_succs {
            if !done.contains(&s) {
                done.push(s);
                util::set_edge_count(f, b, s, usize::from(s == target));
            }
        }
        n += 1;
    }
    n
}

/// The prepare blocks of the structured loops among `blocks`.
fn loop_prepares(f: &Function, blocks: &[Block]) -> FxHashSet<Block> {
    blocks
        .iter()
        .filter_map(|&b| f.terminator(b))
        .filter(|&t| f.opcode(t) == Opcode::Loop)
        .map(|t| f.inst(t).blocks[0])
        .collect()
}

/// Blocks named by terminators, transitively from the entry, as a dense
/// flag per block id.
///
/// The named blocks of every owned block are read first in one walk of the
/// layout (terminator records in order, prefetched ahead), into a flat
/// table; the search from the entry then runs over that table. Searching
/// the records themselves visited them in search order, a cache miss per
/// block on large functions.
fn kept_blocks(f: &Function) -> Vec<bool> {
    let n = f.block_capacity();
    let mut keep = vec![false; n];
    let Some(entry) = f.body() else { return keep };
    let mut pairs: Vec<(usize, Block)> = Vec::with_capacity(f.blocks().len() * 2);
    for (b, t) in f.terminators_in_layout() {
        if let Some(t) = t {
            pairs.extend(f.inst(t).blocks.iter().map(|&s| (b.index(), s)));
        }
    }
    // Only owned blocks are followed: a block outside the layout is never
    // kept, so it names nothing here.
    let owned = f.owned_flags();
    pairs.retain(|&(_, s)| owned.get(s.index()).copied().unwrap_or(false));
    let named = FlatLists::from_pairs(n, pairs.iter().copied());
    drop(pairs);
    let mut work = vec![entry];
    keep[entry.index()] = true;
    while let Some(b) = work.pop() {
        for &s in named.get(b.index()) {
            if !keep[s.index()] {
                keep[s.index()] = true;
                work.push(s);
            }
        }
    }
    keep
}

fn remove_orphan_blocks(f: &mut Function) -> usize {
    let keep_flags = kept_blocks(f);
    let keep = |b: &Block| keep_flags[b.index()];
    let dead: Vec<Block> = f.blocks().iter().copied().filter(|b| !keep(b)).collect();
    if dead.is_empty() {
        return 0;
    }
    let dead_set: FxHashSet<Block> = dead.iter().copied().collect();
    // Phis of kept blocks forget removed predecessors.
    let kept: Vec<Block> = f.blocks().iter().copied().filter(keep).collect();
    for &b in &kept {
        for phi in util::phis_of(f, b) {
            let inc: Vec<_> = util::phi_incomings(f, phi).into_iter().filter(|p| !dead_set.contains(&p.1)).collect();
            util::set_phi_incomings(f, phi, &inc);
        }
    }
    // Values of removed blocks still used by kept code become undef.
    for &b in &dead {
        for i in f.block(b).insts().to_vec() {
            let users: Vec<_> = f.uses(Value::Inst(i)).to_vec();
            let ty = f.inst(i).ty;
            for u in users {
                if f.parent(u.user).is_some_and(|p| keep(&p)) {
                    f.set_operand(u.user, u.index as usize, Value::Undef(ty));
                }
            }
        }
    }
    let insts: Vec<Inst> = dead.iter().flat_map(|&b| f.block(b).insts().to_vec()).collect();
    f.remove_insts(&insts);
    f.set_layout(kept.clone());
    // A Phi left without incomings is undefined.
    for &b in &kept {
        for phi in util::phis_of(f, b) {
            if f.inst(phi).operands.is_empty() {
                let ty = f.inst(phi).ty;
                f.replace_all_uses(Value::Inst(phi), Value::Undef(ty));
                f.remove_inst(phi);
            }
        }
    }
    dead.len()
}

/// Whether every use of the address `a` (through GEPs) only writes it.
fn write_only(f: &Function, a: Inst, sink: &mut Vec<Inst>) -> bool {
    for u in f.uses(Value::Inst(a)) {
        let d = f.inst(u.user);
        match d.opcode {
            Opcode::Store if u.index == 0 => sink.push(u.user),
            Opcode::Gep if u.index == 0 => {
                sink.push(u.user);
                if !write_only(f, u.user, sink) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

/// Every write-only alloca goes with its stores and GEPs in one batch
/// removal (one per alloca rebuilt a flag table of the whole function each
/// time). An alloca that becomes write-only only once another's stores are
/// gone is taken by the next round of `dce_function`'s fixed point.
fn remove_dead_allocas(f: &mut Function) -> usize {
    let allocas: Vec<Inst> = f.live_opcodes_by_id().filter(|&(_, op)| op == Opcode::Alloca).map(|p| p.0).collect();
    let mut n = 0;
    let mut dead = Vec::new();
    for a in allocas {
        let start = dead.len();
        if !write_only(f, a, &mut dead) {
            dead.truncate(start);
            continue;
        }
        dead.push(a);
        n += 1;
    }
    f.remove_insts(&dead);
    n
}

/// Mark from the roots, sweep the rest.
///
/// Marking is one descending sweep of the instruction table: a live
/// instruction (a root, or marked by a user with a higher id) marks its
/// operands. Operands are mostly created before their users, so most marks
/// land ahead of the sweep; an operand at or above the sweep's position (a
/// Phi's back edge, an instruction a pass created later than its users) goes
/// to a worklist drained at once. The marked set is the same as a depth-first
/// walk's, but the records are read in table order (streamed, where a
/// depth-first walk jumps) and each live record once.
fn sweep_dead_insts(f: &mut Function) -> usize {
    let n = f.inst_capacity();
    let mut live = vec![false; n];
    // Placed in a block of the layout: the roots and the candidates.
    let mut owned = vec![false; n];
    for (i, op) in f.live_opcodes_by_id() {
        owned[i.index()] = true;
        if !util::removable_if_dead_op(op) {
            live[i.index()] = true;
        }
    }
    let mut work: Vec<Inst> = Vec::new();
    // Records are read in descending id order (a stream the hardware does
    // not follow on its own).
    let mut walk = f.walk_ids_descending(xir::reads::Record);
    while let Some(root) = walk.next(f) {
        let k = root.index();
        if !live[k] {
            continue;
        }
        work.push(Inst::new(k));
        while let Some(i) = work.pop() {
            for &v in &f.inst(i).operands {
                if let Value::Inst(d) = v {
                    let x = d.index();
                    if x < n && !live[x] && f.is_live(d) {
                        live[x] = true;
                        // Below the sweep: its turn comes; at or above it:
                        // already passed, so now.
                        if x >= k {
                            work.push(d);
                        }
                    }
                }
            }
        }
    }
    let dead: Vec<Inst> = (0..n).filter(|&k| owned[k] && !live[k]).map(Inst::new).collect();
    f.remove_insts(&dead);
    dead.len()
}
