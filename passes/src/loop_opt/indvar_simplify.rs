//! `indvar_simplify`: canonicalize induction variables with scalar
//! evolution (`xir::analysis::scev`).
//!
//! 1. **One induction variable per stride family.** Among the header Phis
//!    of a loop that are add recurrences `{s,+,d}` with a constant step and
//!    the same type, one is the base: the canonical `{0,+,1}` when there is
//!    one, else the one with the smallest step. Every other recurrence
//!    `{t,+,r*d}` (its step an integer multiple of the base's) is replaced by
//!    the affine expression `t + r * (base - s)` computed after the header's
//!    Phis (exact modulo 2^width: `base - s = k*d` in iteration `k`); its
//!    Phi, and its increment when nothing else uses it, are removed. Only
//!    when the expression costs at most `max_expansion` instructions.
//! 2. **Exit values.** When the loop has a trip count (`TripCount`: one
//!    exit edge, an exit test against an invariant bound) and its exit block
//!    has that edge as its only predecessor, every use after the loop of a
//!    loop value that is a recurrence `{s,+,d}` is rewritten to
//!    `s + count * d`, computed at the top of the exit block (a constant
//!    when everything is constant; a symbolic count, a value of the
//!    counter's type, only scales recurrences of that type). Single-incoming
//!    Phis of the exit block (LCSSA-style copies) are folded first. The loop
//!    itself is left for `dce` to remove once nothing uses it.
//!
//! The CFG never changes: new instructions go into existing blocks, so the
//! pass runs on raw CFG and on structured SSA alike (on Phi-free IR it finds
//! nothing).
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`.

use serde::Deserialize;
use xir::analysis::scev::{self, InductionVar, Lin, Scev};
use xir::analysis::{Cfg, DomTree, LoopForest, LoopId};
use xir::pass::{AnalysisKind, OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Block, FuncId, Function, Inst, Module, Opcode, Trait, Value};

use super::expand::{expand_exit_value, expand_lin, lin_cost, Cursor};
use crate::opt::util::replace_uses_keeping_phis_acyclic;

const INFO: PassInfo = PassInfo {
    name: "indvar_simplify",
    doc: "Rewrite derived induction variables as affine expressions of one IV; compute exit values from trip counts",
    consumes: &["xir"],
    produces: Produces::Same,
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
    ],
    eliminates: &["phi"],
};

const OPTIONS: &[OptionDoc] = &[
    OptionDoc {
        name: "exit_values",
        ty: "bool",
        default: "true",
        doc: "Rewrite uses after the loop of recurrences as start + trip_count * step",
    },
    OptionDoc {
        name: "max_expansion",
        ty: "u32",
        default: "2",
        doc: "Most instructions spent to replace one derived induction variable",
    },
];

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    pub exit_values: bool,
    pub max_expansion: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { exit_values: true, max_expansion: 2 }
    }
}

pub struct IndvarSimplify {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(IndvarSimplify { opts: xir::pass::options_from_ron(v)? })),
    }
}

#[derive(Default)]
struct Stats {
    ivs_replaced: usize,
    exit_uses: usize,
    copies_folded: usize,
}

impl Pass for IndvarSimplify {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut st = Stats::default();
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            let cfg = cx.analyses.cfg(module, fid);
            let dom = cx.analyses.dominators(module, fid);
            let Ok(forest) = LoopForest::compute(&cfg, &dom) else { continue };
            // The CFG never changes, so neither do the loops' block lists.
            let blocks = forest.blocks_in_rpo(&cfg);
            let mut order: Vec<LoopId> = (0..forest.loops.len()).collect();
            order.sort_by_key(|&l| std::cmp::Reverse(forest.loops[l].depth));
            for l in order {
                // Each rewrite invalidates the evolution of the values it
                // touched; the CFG (and so the forest) stays.
                let mut rounds = 0;
                while rounds < 64 && self.simplify_loop(module, fid, &cfg, &dom, &forest, l, &blocks[l], &mut st) {
                    rounds += 1;
                }
            }
        }
        let mut out = PassOutcome::changed(st.ivs_replaced + st.exit_uses + st.copies_folded > 0);
        out.stats.push(("ivs_replaced".into(), st.ivs_replaced.to_string()));
        out.stats.push(("exit_uses_rewritten".into(), st.exit_uses.to_string()));
        out.stats.push(("exit_copies_folded".into(), st.copies_folded.to_string()));
        Ok(out)
    }
}

impl IndvarSimplify {
    /// One rewrite in loop `l`; whether anything changed.
    #[allow(clippy::too_many_arguments)]
    fn simplify_loop(
        &self,
        m: &mut Module,
        fid: FuncId,
        cfg: &Cfg,
        dom: &DomTree,
        forest: &LoopForest,
        l: LoopId,
        body: &[Block],
        st: &mut Stats,
    ) -> bool {
        // Only this loop's evolution: the rewrites below read nothing else.
        let se = scev::analyze_one(m, m.func(fid), cfg, dom, forest, l, body);
        let ev = &se;
        if let Some((iv, base, lin)) = self.pick_derived(m, &ev.ivs) {
            let header = ev.header;
            let f = m.func(fid);
            let phis = f.block(header).insts().iter().take_while(|&&i| f.opcode(i) == Opcode::Phi).count();
            let mut at = Cursor { block: header, pos: phis };
            let v = expand_lin(m, fid, &mut at, &lin);
            let f = m.func_mut(fid);
            let old = Value::Inst(iv.phi);
            if v == Value::Inst(base) {
                if !replace_uses_keeping_phis_acyclic(f, old, v) {
                    return false;
                }
            } else {
                f.replace_all_uses(old, v);
            }
            f.remove_inst(iv.phi);
            if let Value::Inst(n) = iv.next {
                if !f.has_uses(iv.next) && f.is_live(n) && f.inst(n).has(Trait::Pure) {
                    f.remove_inst(n);
                }
            }
            st.ivs_replaced += 1;
            return true;
        }
        if !self.opts.exit_values {
            return false;
        }
        let Some(trip) = ev.trip.clone() else { return false };
        let x = trip.exit;
        if cfg.preds(x) != [trip.exiting] {
            return false;
        }
        let in_loop = |_: &Function, b: Block| forest.contains(l, b);
        // Fold single-incoming Phis of the exit block into their value.
        let f = m.func_mut(fid);
        let copies: Vec<Inst> = f
            .block(x)
            .insts()
            .iter()
            .copied()
            .filter(|&i| f.opcode(i) == Opcode::Phi && f.inst(i).operands.len() == 1)
            .collect();
        let mut folded = false;
        for p in copies {
            let v = f.inst(p).operands[0];
            if v != Value::Inst(p) && replace_uses_keeping_phis_acyclic(f, Value::Inst(p), v) {
                f.remove_inst(p);
                st.copies_folded += 1;
                folded = true;
            }
        }
        if folded {
            return true;
        }
        // Loop values that are recurrences and are used after the loop.
        let f = m.func(fid);
        let found = body.iter().flat_map(|&b| f.block(b).insts().iter().copied()).find_map(|i| {
            let Scev::AddRec { start, step } = ev.get(m, f, forest, l, Value::Inst(i)) else { return None };
            // A symbolic count is a value of the counter's type: only
            // recurrences of that type can be scaled by it.
            if trip.constant().is_none() && start.ty != trip.count.ty {
                return None;
            }
            let outside: Vec<(Inst, usize)> = f
                .uses(Value::Inst(i))
                .iter()
                .filter(|u| {
                    let ud = f.inst(u.user);
                    let at = if ud.opcode == Opcode::Phi {
                        ud.blocks.get(u.index as usize).copied()
                    } else {
                        f.parent(u.user)
                    };
                    at.is_some_and(|a| !in_loop(f, a))
                })
                .map(|u| (u.user, u.index as usize))
                .collect();
            (!outside.is_empty()).then_some((start, step, outside))
        });
        let Some((start, step, uses)) = found else { return false };
        let f = m.func(fid);
        let phis = f.block(x).insts().iter().take_while(|&&i| f.opcode(i) == Opcode::Phi).count();
        let mut at = Cursor { block: x, pos: phis };
        let v = expand_exit_value(m, fid, &mut at, &start, &step, &trip);
        let f = m.func_mut(fid);
        let v_is_phi = v.as_inst().is_some_and(|i| f.opcode(i) == Opcode::Phi);
        let mut n = 0;
        for (user, k) in uses {
            if v_is_phi && f.opcode(user) == Opcode::Phi {
                continue;
            }
            f.set_operand(user, k, v);
            n += 1;
        }
        st.exit_uses += n;
        n > 0
    }

    /// A derived induction variable to replace: (it, the base Phi, its
    /// value as an affine expression of the base).
    fn pick_derived(&self, m: &Module, ivs: &[InductionVar]) -> Option<(InductionVar, Inst, Lin)> {
        let consts: Vec<&InductionVar> = ivs.iter().filter(|iv| iv.step.is_const()).collect();
        for a in &consts {
            let _ = m;
            // The base of `a`'s type: canonical if present, else smallest step.
            let family: Vec<&&InductionVar> = consts.iter().filter(|b| b.start.ty == a.start.ty).collect();
            let base = family
                .iter()
                .find(|b| b.start.is_zero() && b.step.as_const() == Some(1))
                .or_else(|| family.iter().min_by_key(|b| b.step.signed_const().map_or(u128::MAX, |d| d.unsigned_abs())))
                .copied()?;
            for b in &family {
                if b.phi == base.phi {
                    continue;
                }
                let (da, db) = (base.step.signed_const()?, b.step.signed_const()?);
                if da == 0 || db % da != 0 {
                    continue;
                }
                let r = (db / da) as u64;
                let atom = Lin::atom(base.start.ty, base.start.bits, base.start.signed, Value::Inst(base.phi));
                let lin = b.start.add(&atom.sub(&base.start).scale(r));
                if lin_cost(&lin) <= self.opts.max_expansion as usize {
                    return Some(((**b).clone(), base.phi, lin));
                }
            }
        }
        None
    }
}
