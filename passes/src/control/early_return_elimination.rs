//! `early_return_elimination`: a function whose returns sit inside
//! branches or loops gets a single exit at the end of its body region.
//!
//! The body is wrapped in a one-shot `simple_loop` whose merge is the new
//! exit block (`%r = load slot; return %r`). A return outside every user
//! loop stores its value and branches to that merge (a break of the
//! wrapper). A return inside a loop also sets a flag and breaks its
//! innermost loop; each loop that (transitively) contains a return gets a
//! new merge that tests the flag and either breaks on outwards (to the next
//! loop's new merge, or the exit) or falls through to the old merge. Phis of
//! an old merge move to the new one (the added return paths bring
//! `undef`); values that no longer dominate a use after the rewrite are
//! demoted to slots.
//!
//! Blocks the structured walk never reaches (orphans) are left alone.
//!
//! - Consumes: `xir.structured`, `xir.structured.lowered`.
//! - Produces: the same dialect.
//! - Preserves: `call_graph`.

use serde::{Deserialize, Serialize};
use xir::analysis::{Cfg, LexicalScopes};
use xir::pass::{
    options_from_ron, AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces,
};
use xir::{Block, FuncId, Function, Inst, InstData, Metadata, Module, Opcode, TypeTable, Value};

use super::ssa_repair::repair_dominance;
use super::util::{br, defined_functions, set_terminator, term};

/// No options.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {}

static INFO: PassInfo = PassInfo {
    name: "early_return_elimination",
    doc: "Turn returns inside branches and loops into structured exits (flag + breaks) to one final return.",
    consumes: &["xir.structured", "xir.structured.lowered"],
    produces: Produces::Same,
    preserves: &[AnalysisKind::CallGraph],
    eliminates: &[],
};

pub struct EarlyReturnElimination {
    _options: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO.clone(),
        options: &[],
        create: |v| Ok(Box::new(EarlyReturnElimination { _options: options_from_ron(v)? })),
    }
}

fn inst(f: &mut Function, b: Block, op: Opcode, ty: xir::TypeId, operands: &[Value], name: Option<&str>) -> Value {
    let mut d = InstData::new(op, ty);
    d.operands.extend(operands.iter().copied());
    if let Some(n) = name {
        d.md = Metadata::named(n);
    }
    Value::Inst(f.insert_before_terminator(b, d))
}

/// Rewrite one function; `Ok(false)` when it already has a single exit.
fn eliminate(m: &mut Module, fid: FuncId, r: &LexicalScopes) -> Result<bool, PassError> {
    let f0 = m.func(fid);
    let returns: Vec<Block> = f0
        .blocks()
        .iter()
        .copied()
        .filter(|&b| r.visited(b) && f0.terminator(b).is_some_and(|t| f0.inst(t).opcode == Opcode::Return))
        .collect();
    if returns.is_empty() || (returns.len() == 1 && r.innermost(returns[0]).is_none()) {
        return Ok(false);
    }
    let ret_ty = f0.ret;
    let in_loop: Vec<Option<usize>> = returns.iter().map(|&b| r.innermost_loop(b)).collect();
    let mut marked = vec![false; r.constructs.len()];
    for l in in_loop.iter().flatten() {
        let mut cur = Some(*l);
        while let Some(c) = cur {
            marked[c] = true;
            cur = r.enclosing_loop(c);
        }
    }
    let any_loop = marked.iter().any(|&x| x);
    let cfg0 = Cfg::compute(f0);
    let mut f = f0.clone();
    let (fls, tru) = (m.const_bool(false), m.const_bool(true));
    let old_entry = f.body().expect("function with returns has a body");
    let e0 = f.add_block();
    let exit = f.add_block();
    f.set_body(e0);
    // Slots.
    let slot = (ret_ty != TypeTable::VOID).then(|| {
        let mut d = InstData::new(Opcode::Alloca, ret_ty);
        d.md = Metadata::named("early_return.value");
        Value::Inst(f.append_inst(e0, d))
    });
    let flag = any_loop.then(|| {
        let mut d = InstData::new(Opcode::Alloca, TypeTable::BOOL);
        d.md = Metadata::named("early_return.flag");
        let fl = Value::Inst(f.append_inst(e0, d));
        f.append_inst(e0, term(Opcode::Store, &[fl, fls], &[]));
        fl
    });
    f.append_inst(e0, term(Opcode::SimpleLoop, &[], &[old_entry, exit]));
    match slot {
        Some(s) => {
            let v = inst(&mut f, exit, Opcode::Load, ret_ty, &[s], Some("early_return.result"));
            f.append_inst(exit, term(Opcode::Return, &[v], &[]));
        }
        None => {
            f.append_inst(exit, term(Opcode::Return, &[], &[]));
        }
    }
    // New merges of marked loops.
    let mut new_merge: Vec<Option<Block>> = vec![None; r.constructs.len()];
    for (c, &mk) in marked.iter().enumerate() {
        if mk {
            new_merge[c] = Some(f.add_block());
        }
    }
    let outward = |c: usize| r.enclosing_loop(c).and_then(|p| new_merge[p]).unwrap_or(exit);
    let mut moved_phis: Vec<(Block, Inst)> = Vec::new();
    for (c, &mk) in marked.iter().enumerate() {
        if !mk {
            continue;
        }
        let k = &r.constructs[c];
        let nm = new_merge[c].expect("marked");
        let old = k.merge;
        // Transfers from inside the loop to its merge go to the new merge.
        for b in cfg0.preds(old).to_vec() {
            if b == k.header || !r.inside(b, c) {
                continue;
            }
            if let Some(t) = f.terminator(b) {
                f.retarget(t, old, nm);
            }
        }
        let ht = f.terminator(k.header).expect("loop header has its terminator");
        let mpos = f.inst(ht).blocks.iter().position(|&x| x == old).expect("merge role");
        f.set_block_operand(ht, mpos, nm);
        // Phis of the old merge move to the new one.
        for i in f.block(old).insts().to_vec() {
            if f.opcode(i) == Opcode::Phi {
                f.move_inst(i, nm, f.block(nm).insts().len());
                moved_phis.push((nm, i));
            }
        }
        let fv = inst(&mut f, nm, Opcode::Load, TypeTable::BOOL, &[flag.expect("loops marked")], None);
        let tramp = f.add_block();
        f.append_inst(tramp, br(outward(c)));
        f.append_inst(nm, term(Opcode::If, &[fv], &[tramp, old, old]));
    }
    // The returns themselves.
    for (k, &b) in returns.iter().enumerate() {
        let t = f.terminator(b).expect("return");
        let val = f.inst(t).operands.first().copied();
        if let (Some(s), Some(v)) = (slot, val) {
            f.insert_before_terminator(b, term(Opcode::Store, &[s, v], &[]));
        }
        let target = match in_loop[k] {
            Some(l) => {
                f.insert_before_terminator(b, term(Opcode::Store, &[flag.expect("loop"), tru], &[]));
                new_merge[l].expect("marked")
            }
            None => exit,
        };
        set_terminator(&mut f, b, br(target));
    }
    // Moved Phis take `undef` from the new predecessors.
    let cfg = Cfg::compute(&f);
    for (nm, phi) in moved_phis {
        let ty = f.inst(phi).ty;
        let mut have: Vec<Block> = f.inst(phi).blocks.to_vec();
        for &p in cfg.preds(nm) {
            if let Some(k) = have.iter().position(|&x| x == p) {
                have.remove(k);
            } else {
                f.push_incoming(phi, Value::Undef(ty), p);
            }
        }
    }
    if let Err(e) = repair_dominance(&m.types, &mut f) {
        let mut err = PassError::new("early_return_elimination", e.message.clone());
        err.diagnostics
            .push(xir::Diagnostic::error("early_return_elimination", e.message).in_function(&f.name).at_inst(e.inst));
        return Err(err);
    }
    *m.func_mut(fid) = f;
    Ok(true)
}

impl Pass for EarlyReturnElimination {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut n = 0;
        for fid in defined_functions(module) {
            let scopes = cx.analyses.lexical_scopes(module, fid);
            n += eliminate(module, fid, &scopes)? as usize;
        }
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("functions".into(), n.to_string()));
        Ok(out)
    }
}
