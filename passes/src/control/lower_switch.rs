//! `lower_switch`: a structured `switch` becomes a chain of `if`s, one per
//! distinct case target (its literals or-ed together), the default last:
//!
//! ```text
//! switch %v, merge ^m, default ^d, case 0 ^a, case 2 ^a, case 1 ^b
//! ==> if (%v == 0 | %v == 2) ^a else { if (%v == 1) ^b else ^d }
//! ```
//!
//! The first `if` merges at `^m`, each nested one at a fresh block that
//! branches on to the enclosing merge, and each arm's top-level transfer to
//! `^m` (`br` or `break`) is retargeted to its own `if`'s merge. A switch is
//! left alone (and counted as skipped) when an arm reaches `^m` from inside
//! a nested construct, when arms flow into each other, or when the merge
//! or an arm starts with Phis. The reference keeps switches native; this
//! pass exists for experiments and is not in `spirv-legalize`.
//!
//! - Consumes: `xir.structured`, `xir.structured.lowered`,
//!   `xir.restructured`.
//! - Produces: the same dialect.
//! - Preserves: `call_graph`.

use serde::{Deserialize, Serialize};
use xir::analysis::{Cfg, LexicalScopes};
use xir::pass::{
    options_from_ron, AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces,
};
use xir::{Block, Function, InstData, Module, Opcode, Trait, TypeTable, Value};

use super::util::{br, defined_functions, set_terminator, term};

/// No options.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {}

static INFO: PassInfo = PassInfo {
    name: "lower_switch",
    doc: "Lower structured switches to chains of ifs (experiments; not part of spirv-legalize).",
    consumes: &["xir.structured", "xir.structured.lowered", "xir.restructured"],
    produces: Produces::Same,
    preserves: &[AnalysisKind::CallGraph],
    eliminates: &["switch"],
};

pub struct LowerSwitch {
    _options: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO.clone(),
        options: &[],
        create: |v| Ok(Box::new(LowerSwitch { _options: options_from_ron(v)? })),
    }
}

/// The top-level blocks of the arm starting at `entry` that transfer to
/// `merge`; `None` if the arm reaches `merge` from a nested construct,
/// reaches another arm, or loops.
fn arm_exits(
    f: &Function,
    r: &LexicalScopes,
    sw: usize,
    entry: Block,
    merge: Block,
    arms: &[Block],
) -> Option<Vec<Block>> {
    let mut out = Vec::new();
    let mut cur = entry;
    let mut steps = 0;
    loop {
        steps += 1;
        if steps > f.block_capacity() || r.innermost(cur) != Some(sw) {
            return None;
        }
        let t = f.terminator(cur)?;
        let d = f.inst(t);
        let next = match d.opcode {
            Opcode::Br | Opcode::Break => d.blocks[0],
            _ if d.has(Trait::Structured) => d.merge_block()?,
            _ => return Some(out),
        };
        if next == merge {
            out.push(cur);
            return Some(out);
        }
        if arms.contains(&next) && next != entry {
            return None;
        }
        cur = next;
    }
}

fn has_phis(f: &Function, b: Block) -> bool {
    f.block(b).insts().iter().any(|&i| f.opcode(i) == Opcode::Phi)
}

/// Lower every lowerable switch of `f`: `(lowered, skipped)`.
pub fn lower_function(m: &mut Module, fid: xir::FuncId, r: &LexicalScopes) -> (usize, usize) {
    let (mut lowered, mut skipped) = (0, 0);
    let cfg = Cfg::compute(m.func(fid));
    for (ci, c) in r.constructs.iter().enumerate() {
        let f = m.func(fid);
        let d = f.inst(c.term);
        if d.opcode != Opcode::Switch {
            continue;
        }
        let (a, merge, v) = (c.header, c.merge, d.operands[0]);
        let default = d.blocks[1];
        // Distinct non-default targets with their literals, in order.
        let mut targets: Vec<(Block, Vec<u64>)> = Vec::new();
        for (k, &lit) in f.cases(c.term).iter().enumerate() {
            let t = d.blocks[2 + k];
            if t == default {
                continue;
            }
            match targets.iter_mut().find(|p| p.0 == t) {
                Some(p) => p.1.push(lit),
                None => targets.push((t, vec![lit])),
            }
        }
        let arms: Vec<Block> = targets.iter().map(|p| p.0).chain([default]).collect();
        let mut exits = Vec::new();
        let mut ok = !has_phis(f, merge) && arms.iter().all(|&b| b == merge || !has_phis(f, b));
        for &arm in &arms {
            if !ok {
                break;
            }
            match if arm == merge { Some(Vec::new()) } else { arm_exits(f, r, ci, arm, merge, &arms) } {
                Some(e) => exits.push(e),
                None => ok = false,
            }
        }
        // No other block of the switch (at any depth) may reach the merge.
        ok = ok && cfg.preds(merge).iter().all(|&b| b == a || !r.inside(b, ci) || exits.iter().any(|e| e.contains(&b)));
        if !ok {
            skipped += 1;
            continue;
        }
        let ty = f.value_type(m, v);
        let lits: Vec<Vec<Value>> =
            targets.iter().map(|p| p.1.iter().map(|&x| m.const_scalar(ty, x)).collect()).collect();
        let f = m.func_mut(fid);
        // Headers and merges of the chain: level 0 is the switch's block.
        let levels = targets.len();
        let mut headers = vec![a];
        let mut merges = vec![merge];
        for j in 1..levels {
            headers.push(f.add_block());
            let mb = f.add_block();
            set_terminator(f, mb, br(merges[j - 1]));
            merges.push(mb);
        }
        if levels == 0 {
            set_terminator(f, a, br(default));
            lowered += 1;
            continue;
        }
        for j in 0..levels {
            let h = headers[j];
            let mut cond: Option<Value> = None;
            for &lit in &lits[j] {
                let e = binop(f, h, Opcode::Eq, TypeTable::BOOL, v, lit);
                cond = Some(match cond {
                    None => e,
                    Some(c) => binop(f, h, Opcode::BitOr, TypeTable::BOOL, c, e),
                });
            }
            let mg = merges[j];
            let arm = |b: Block| if b == merge { mg } else { b };
            let t = arm(targets[j].0);
            let e = if j + 1 < levels { headers[j + 1] } else { arm(default) };
            set_terminator(f, h, term(Opcode::If, &[cond.expect("a target has a literal")], &[t, e, mg]));
        }
        // Each arm's top-level exits go to its own level's merge.
        for (k, ex) in exits.iter().enumerate() {
            let mg = merges[k.min(levels - 1)];
            for &b in ex {
                set_terminator(f, b, br(mg));
            }
        }
        lowered += 1;
    }
    (lowered, skipped)
}

/// `lhs op rhs` appended to block `b` (which has no terminator yet, or
/// before its terminator).
fn binop(f: &mut Function, b: Block, op: Opcode, ty: xir::TypeId, lhs: Value, rhs: Value) -> Value {
    let mut d = InstData::new(op, ty);
    d.operands.extend([lhs, rhs]);
    Value::Inst(f.insert_before_terminator(b, d))
}

impl Pass for LowerSwitch {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut lowered, mut skipped) = (0, 0);
        for fid in defined_functions(module) {
            let scopes = cx.analyses.lexical_scopes(module, fid);
            let (l, s) = lower_function(module, fid, &scopes);
            lowered += l;
            skipped += s;
        }
        let mut out = PassOutcome::changed(lowered > 0);
        out.stats.push(("lowered".into(), lowered.to_string()));
        out.stats.push(("skipped".into(), skipped.to_string()));
        Ok(out)
    }
}
