//! `fix_self_referential`: break every cycle of Phis that reach themselves
//! through Phi incomings alone (`%x = phi [%a, ^e], [%x, ^l]`, or
//! `%x = phi [.., %y]` with `%y = phi [.., %x]`), the last step of the
//! legalization (the `no_self_referential_values` invariant of
//! `xir.restructured.audited`). Such cycles are what `mem2reg` makes of a
//! variable a loop leaves unchanged on some path; downstream Phi planning
//! wants every loop-carried Phi value to be produced by a real instruction.
//!
//! First the redundant Phi components are removed (as in `phi_cleanup`:
//! a cycle fed by one outside value is that value). Each remaining cycle is
//! cut on the back edges of a depth-first walk of the Phi graph: the
//! incoming `[%q, ^l]` becomes `[%c, ^l]` with an identity copy `%c` of `%q`
//! placed before `^l`'s terminator (`%q` is live there, so `%c` is
//! dominated correctly). The copy is `select bool true, %q, %q` for scalars
//! and vectors (it passes an undefined `%q` through unchanged, which loop
//! variables not yet assigned legitimately are), and
//! `insert %q, (extract %q, 0), 0` for matrices and aggregates.
//!
//! - Consumes: `xir.restructured.unspilled` (after `audit_reg2mem_spills`).
//! - Produces: `xir.restructured.audited`.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`.

use rustc_hash::FxHashSet;
use serde::Deserialize;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Block, FuncId, Inst, InstData, Module, Opcode, Type, TypeId, Value};

use super::{phi_cleanup, util};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {}

const INFO: PassInfo = PassInfo {
    name: "fix_self_referential",
    doc: "Break Phi cycles with identity copies so no Phi reaches itself through Phis alone",
    consumes: &["xir.restructured.unspilled"],
    produces: Produces::Dialect("xir.restructured.audited"),
    eliminates: &["phi"],
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
        AnalysisKind::CallGraph,
    ],
};

pub struct FixSelfReferential {
    _opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: &[],
        create: |v| Ok(Box::new(FixSelfReferential { _opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for FixSelfReferential {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut removed, mut copies) = (0, 0);
        for fid in util::defined_functions(module) {
            let (r, c) = fix_function(module, fid);
            removed += r;
            copies += c;
        }
        let mut out = PassOutcome::changed(removed + copies > 0);
        out.stats.push(("redundant_phis".into(), removed.to_string()));
        out.stats.push(("copies".into(), copies.to_string()));
        Ok(out)
    }
}

/// Break the Phi cycles of one function: (redundant Phis removed, copies).
pub fn fix_function(m: &mut Module, fid: FuncId) -> (usize, usize) {
    // One search for the Phis (in layout order, which the cycle search
    // below wants) serves both steps; the cleanup only removes Phis.
    let mut phis: Vec<Inst> = m.func(fid).select_in_layout_order(|op| op == Opcode::Phi);
    let removed = phi_cleanup::remove_redundant_phis_among(m.func_mut(fid), &phis);
    let f = m.func(fid);
    if removed > 0 {
        phis.retain(|&p| f.is_live(p));
    }
    let is_phi = |v: Value| v.as_inst().filter(|&i| f.opcode(i) == Opcode::Phi);

    // Iterative DFS; an edge to a Phi on the current path is a back edge.
    // Per instruction id: 0 = unvisited, 1 = on the path, 2 = done.
    let mut state: Vec<u8> = vec![0; f.inst_capacity()];
    let mut cut: Vec<(Inst, usize)> = Vec::new();
    // Most searches stay at their root: its record and its operands'
    // table entries are what is read.
    let mut walk = f.walk(&phis, xir::reads::OperandOpcodes);
    while let Some(root) = walk.next(f) {
        if state[root.index()] != 0 {
            continue;
        }
        let mut stack: Vec<(Inst, usize)> = vec![(root, 0)];
        state[root.index()] = 1;
        while let Some(&mut (p, ref mut k)) = stack.last_mut() {
            let ops = &f.inst(p).operands;
            if *k >= ops.len() {
                state[p.index()] = 2;
                stack.pop();
                continue;
            }
            let slot = *k;
            *k += 1;
            let Some(q) = is_phi(ops[slot]) else { continue };
            match state[q.index()] {
                1 => cut.push((p, slot)),
                0 => {
                    state[q.index()] = 1;
                    stack.push((q, 0));
                }
                _ => {}
            }
        }
    }

    let mut copies = 0;
    let mut made: FxHashSet<(Inst, usize)> = FxHashSet::default();
    for (p, slot) in cut {
        if !made.insert((p, slot)) {
            continue;
        }
        let f = m.func(fid);
        let q = f.inst(p).operands[slot];
        let pred: Block = f.inst(p).blocks[slot];
        let ty = f.inst(p).ty;
        let c = identity_copy(m, fid, q, ty, pred);
        // Every incoming from the same predecessor must carry the same value
        // (a conditional branch with both edges into this block gives two).
        let same_edge: Vec<usize> = {
            let d = m.func(fid).inst(p);
            (0..d.operands.len()).filter(|&s| d.blocks[s] == pred && d.operands[s] == q).collect()
        };
        for s in same_edge {
            m.func_mut(fid).set_operand(p, s, c);
            made.insert((p, s));
        }
        copies += 1;
    }
    (removed, copies)
}

/// Emit an identity copy of `v` (of type `ty`) before `b`'s terminator.
fn identity_copy(m: &mut Module, fid: FuncId, v: Value, ty: TypeId, b: Block) -> Value {
    let scalar_or_vector =
        matches!(m.types.get(ty), Type::Bool | Type::Int { .. } | Type::Float(_) | Type::Vector { .. });
    let member_ty = match m.types.get(ty).clone() {
        Type::Array { elem, .. } => elem,
        Type::Matrix { elem, dim } => m.types.vector(elem, dim),
        Type::Struct { fields, .. } => fields.first().copied().unwrap_or(ty),
        _ => ty,
    };
    let zero = m.const_u32(0);
    let yes = m.const_bool(true);
    let f = m.func_mut(fid);
    let mut mk = |op: Opcode, ty: TypeId, ops: &[Value]| {
        let mut d = InstData::new(op, ty);
        d.operands = ops.iter().copied().collect();
        Value::Inst(f.insert_before_terminator(b, d))
    };
    if scalar_or_vector {
        mk(Opcode::Select, ty, &[yes, v, v])
    } else {
        let e = mk(Opcode::Extract, member_ty, &[v, zero]);
        mk(Opcode::Insert, ty, &[v, e, zero])
    }
}
