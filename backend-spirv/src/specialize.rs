//! `callable_specialization`: the SPIR-V callable ABI policy (the hook in
//! `spirv-legalize`). A callable parameter can stay a SPIR-V function
//! parameter only when it is a value or a Function-storage pointer. Call
//! sites that pass a resource (buffer, byte buffer, ...) the callee uses, or
//! a pointer into shared (`Workgroup`) memory, are inlined, to a fixed point
//! (inlining one layer can expose another). Generic passes stay
//! target-neutral: this policy lives in the backend.
//!
//! A resource formal that is genuinely unused (fixed-point argument usage
//! says neither read nor written, and it only reaches dead `gep`s and other
//! such formals) forces no inlining: once the fixed point is reached it is
//! deleted from the callee's signature and from every call, since SPIR-V
//! has no parameter type for a descriptor. A callable whose address is taken
//! keeps its signature, so its resource call sites are still inlined.
//!
//! - Consumes: `xir.raw` (runs after `destructure_cfg`, so multi-block
//!   inlining only splices raw branches).
//! - Produces: the same dialect (`xir.raw`; a value-returning callee's
//!   returns meet in a Phi of the continuation block).
//! - Preserves: nothing (the CFG and call graph change).
//!
//! The whole batch is preflighted before any function changes: a selected
//! call into a recursive cycle or an external declaration fails the pass.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use xir::analysis::ArgumentUsage;
use xir::pass::{options_from_ron, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{ArgKind, Block, FuncId, FunctionKind, Inst, InstData, Module, Opcode, TypeTable, Value};

use crate::plan::features::{atomic_space, AtomicSpace};

static INFO: PassInfo = PassInfo {
    name: "callable_specialization",
    doc: "Inline call sites whose callable uses resource arguments or takes shared-memory pointers (SPIR-V callable ABI); delete unused resource arguments.",
    consumes: &["xir.raw"],
    produces: Produces::Same,
    preserves: &[],
    eliminates: &["call"],
};

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {}

struct CallableSpecialization;

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO.clone(),
        options: &[],
        create: |v| {
            let _o: Options = options_from_ron(v)?;
            Ok(Box::new(CallableSpecialization))
        },
    }
}

impl Pass for CallableSpecialization {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let n = specialize_module(module).map_err(|e| {
            let mut pe = PassError::new("callable_specialization", e.to_string());
            if let Some((fid, i)) = e.site() {
                let f = module.func(fid);
                pe.diagnostics.push(xir::verify::inst_diag(f, i, xir::diag::Rule::SpirvHandoffCall, e.to_string()));
            }
            pe
        })?;
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("inlined_call_sites".into(), n.to_string()));
        Ok(out)
    }
}

/// Per function and argument: a resource formal that needs no
/// specialization because it is never used (see the module doc).
pub struct Unused {
    droppable: Vec<Vec<bool>>,
}

impl Unused {
    /// The greatest set of resource formals of callables (with a body,
    /// address not taken) that argument usage calls unused and whose every
    /// use is a dead `gep` chain or a call operand at another such formal.
    pub fn compute(m: &Module) -> Unused {
        let usage = ArgumentUsage::compute(m);
        let mut taken = vec![false; m.functions.len()];
        for fid in m.func_ids() {
            let f = m.func(fid);
            for (_, i) in f.all_insts() {
                let d = f.inst(i);
                for (k, &v) in d.operands.iter().enumerate() {
                    if let Value::Func(g) = v {
                        if !(d.opcode == Opcode::Call && k == 0) {
                            taken[g.index()] = true;
                        }
                    }
                }
            }
        }
        let mut droppable: Vec<Vec<bool>> = m
            .func_ids()
            .map(|fid| {
                let f = m.func(fid);
                let candidate = matches!(f.kind, FunctionKind::Callable) && f.body().is_some() && !taken[fid.index()];
                (0..f.args.len())
                    .map(|k| candidate && f.args[k].kind == ArgKind::Resource && !usage.get(fid, k).is_used())
                    .collect()
            })
            .collect();
        // Drop candidates with another use until none changes (usage
        // only shrinks the set, so this terminates).
        loop {
            let mut changed = false;
            for fid in m.func_ids() {
                for k in 0..droppable[fid.index()].len() {
                    if droppable[fid.index()][k] && !only_dead_uses(m, fid, Value::Arg(k as u32), &droppable) {
                        droppable[fid.index()][k] = false;
                        changed = true;
                    }
                }
            }
            if !changed {
                return Unused { droppable };
            }
        }
    }

    /// Whether argument `k` of `g` is an unused resource formal.
    pub fn is_droppable(&self, g: FuncId, k: usize) -> bool {
        self.droppable.get(g.index()).and_then(|a| a.get(k)).copied().unwrap_or(false)
    }
}

/// Whether every use of `v` in `fid` is a call operand at a droppable
/// formal, or the base of a `gep` whose result has only such uses.
fn only_dead_uses(m: &Module, fid: FuncId, v: Value, droppable: &[Vec<bool>]) -> bool {
    let f = m.func(fid);
    let mut work = vec![v];
    while let Some(v) = work.pop() {
        for u in f.uses(v) {
            let d = f.inst(u.user);
            match (d.opcode, u.index) {
                (Opcode::Gep, 0) => work.push(Value::Inst(u.user)),
                (Opcode::Call, k) if k >= 1 => {
                    let Some(Value::Func(g)) = d.operands.first().copied() else { return false };
                    let ok = droppable.get(g.index()).and_then(|a| a.get(k as usize - 1)).copied().unwrap_or(false);
                    if !ok {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }
    true
}

/// Whether call `i` of `caller` must be inlined for SPIR-V, given the
/// unused resource formals `unused`.
pub fn needs_specialization(m: &Module, unused: &Unused, caller: FuncId, i: Inst) -> bool {
    let f = m.func(caller);
    let d = f.inst(i);
    let Some(Value::Func(g)) = d.operands.first().copied() else { return false };
    let callee = m.func(g);
    d.operands[1..].iter().zip(&callee.args).enumerate().any(|(k, (&a, formal))| match formal.kind {
        ArgKind::Resource => !unused.is_droppable(g, k),
        ArgKind::Reference => atomic_space(f, a) == AtomicSpace::Shared,
        ArgKind::Value => false,
    })
}

fn selected_sites(m: &Module) -> Vec<(FuncId, Inst)> {
    let unused = Unused::compute(m);
    let mut out = Vec::new();
    for fid in m.func_ids() {
        let f = m.func(fid);
        for (_, i) in f.all_insts() {
            if f.opcode(i) == Opcode::Call && needs_specialization(m, &unused, fid, i) {
                out.push((fid, i));
            }
        }
    }
    out
}

/// Why a call site cannot be specialized; `site` is the call, when known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecializeError {
    #[error("@{caller} calls external @{callee} with a resource argument; nothing to inline")]
    ExternalCallee { caller: String, callee: String, site: (FuncId, Inst) },
    #[error("@{callee} is recursive; its call sites taking resources or shared pointers cannot be inlined")]
    Recursive { callee: String, site: (FuncId, Inst) },
    #[error("callable specialization did not reach a fixed point (recursion through resource arguments?)")]
    NoFixedPoint,
    /// The call is not one `inline_call` can inline (an internal fault of
    /// the caller: no callee, not placed, a callee without a body).
    #[error("{message}")]
    Malformed { message: &'static str, site: (FuncId, Inst) },
}

impl SpecializeError {
    /// The call site the error is about.
    pub fn site(&self) -> Option<(FuncId, Inst)> {
        match self {
            SpecializeError::ExternalCallee { site, .. }
            | SpecializeError::Recursive { site, .. }
            | SpecializeError::Malformed { site, .. } => Some(*site),
            SpecializeError::NoFixedPoint => None,
        }
    }
}

/// Inline every selected call site to a fixed point, then delete the
/// unused resource formals; returns how many call sites were inlined.
pub fn specialize_module(m: &mut Module) -> Result<usize, SpecializeError> {
    let mut n = 0;
    loop {
        let sites = selected_sites(m);
        if sites.is_empty() {
            drop_unused_resources(m);
            return Ok(n);
        }
        // Preflight the batch: no external callee, no self-inlining.
        for &(fid, i) in &sites {
            let Some(Value::Func(g)) = m.func(fid).inst(i).operands.first().copied() else { continue };
            if m.func(g).is_external() {
                let (caller, callee) = (m.func(fid).name.clone(), m.func(g).name.clone());
                return Err(SpecializeError::ExternalCallee { caller, callee, site: (fid, i) });
            }
            if reaches(m, g, g) {
                return Err(SpecializeError::Recursive { callee: m.func(g).name.clone(), site: (fid, i) });
            }
        }
        if n > 10_000 {
            return Err(SpecializeError::NoFixedPoint);
        }
        // Sites are re-selected after each inline: ids in a caller change.
        let (fid, i) = sites[0];
        inline_call(m, fid, i)?;
        n += 1;
    }
}

/// Delete every unused resource formal: the call operands passed to it,
/// the dead `gep`s on it, then the formal itself.
fn drop_unused_resources(m: &mut Module) {
    let unused = Unused::compute(m);
    let fids: Vec<FuncId> = m.func_ids().collect();
    for &fid in &fids {
        let f = m.func_mut(fid);
        let calls: Vec<Inst> = f.all_insts().map(|(_, i)| i).filter(|&i| f.opcode(i) == Opcode::Call).collect();
        for i in calls {
            let ops = &f.inst(i).operands;
            let Some(Value::Func(g)) = ops.first().copied() else { continue };
            if !(1..ops.len()).any(|k| unused.is_droppable(g, k - 1)) {
                continue;
            }
            let kept = ops.iter().enumerate().filter(|&(k, _)| k == 0 || !unused.is_droppable(g, k - 1));
            let kept = kept.map(|(_, &v)| v).collect();
            f.set_operands(i, kept);
        }
    }
    for &fid in &fids {
        let f = m.func_mut(fid);
        let dropped: Vec<usize> = (0..f.args.len()).filter(|&k| unused.is_droppable(fid, k)).collect();
        if dropped.is_empty() {
            continue;
        }
        // Only dead geps use them now; delete those, users first.
        let mut dead = Vec::new();
        let mut work: Vec<Value> = dropped.iter().map(|&k| Value::Arg(k as u32)).collect();
        while let Some(v) = work.pop() {
            for u in f.uses(v) {
                dead.push(u.user);
                work.push(Value::Inst(u.user));
            }
        }
        for &i in dead.iter().rev() {
            f.remove_inst(i);
        }
        f.retain_args(|k| !dropped.contains(&k));
    }
}

/// Whether `to` is reachable from `from` through at least one call.
fn reaches(m: &Module, from: FuncId, to: FuncId) -> bool {
    let mut seen = vec![false; m.functions.len()];
    let mut work = vec![from];
    while let Some(f) = work.pop() {
        let func = m.func(f);
        for (_, i) in func.all_insts() {
            let d = func.inst(i);
            if d.opcode != Opcode::Call {
                continue;
            }
            if let Some(Value::Func(g)) = d.operands.first().copied() {
                if g == to {
                    return true;
                }
                if g.index() < seen.len() && !seen[g.index()] {
                    seen[g.index()] = true;
                    work.push(g);
                }
            }
        }
    }
    false
}

/// Inline call `call` of `caller` (raw CFG).
pub fn inline_call(m: &mut Module, caller: FuncId, call: Inst) -> Result<(), SpecializeError> {
    let malformed = |message| SpecializeError::Malformed { message, site: (caller, call) };
    let d = m.func(caller).inst_data(call);
    let Some(Value::Func(g)) = d.operands.first().copied() else { return Err(malformed("call without callee")) };
    let callee = m.func(g).clone();
    let actuals: Vec<Value> = d.operands[1..].to_vec();
    let f = m.func_mut(caller);
    let b = f.parent(call).ok_or(malformed("call is not placed"))?;
    // Continuation block: everything after the call; Phis of the old
    // successors now come from it.
    let cont = f.add_block();
    let mut at = f.cursor().at_inst(call);
    at.next_inst();
    at.split_block(cont);
    // Clone the callee's blocks and instructions.
    let mut bmap: FxHashMap<Block, Block> = FxHashMap::default();
    for &cb in callee.blocks() {
        bmap.insert(cb, f.add_block());
    }
    let mut imap: FxHashMap<Inst, Inst> = FxHashMap::default();
    let mut placed: Vec<(Block, Inst)> = Vec::new();
    let mut returns: Vec<(Block, Option<Value>)> = Vec::new();
    for &cb in callee.blocks() {
        for &ci in callee.block(cb).insts() {
            let cd = callee.inst(ci);
            if cd.opcode == Opcode::Return {
                returns.push((bmap[&cb], cd.operands.first().copied()));
                continue;
            }
            let ni = f.create_inst(callee.inst_data(ci));
            imap.insert(ci, ni);
            placed.push((bmap[&cb], ni));
        }
    }
    let map_v = |v: Value| -> Value {
        match v {
            Value::Arg(k) => actuals[k as usize],
            Value::Inst(i) => Value::Inst(imap[&i]),
            other => other,
        }
    };
    for &(_, ni) in &placed {
        // Not placed yet: the operands join their use lists when placed.
        let nd = f.inst(ni);
        let ops: SmallVec<[Value; 3]> = nd.operands.iter().map(|&v| map_v(v)).collect();
        let blocks: SmallVec<[Block; 3]> = nd.blocks.iter().map(|bb| bmap[bb]).collect();
        f.set_operands(ni, ops);
        f.set_block_operands(ni, blocks);
    }
    for (nb, ni) in placed {
        let pos = f.block(nb).insts().len();
        f.insert_inst(nb, pos, ni);
    }
    // Returns become branches to the continuation; a returned value meets in a Phi.
    let result = if d.ty != TypeTable::VOID {
        let mut phi = InstData::new(Opcode::Phi, d.ty);
        for (rb, v) in &returns {
            phi.operands.push(map_v(v.ok_or(malformed("value-returning callee returns nothing"))?));
            phi.blocks.push(*rb);
        }
        let pi = f.create_inst(phi);
        f.insert_inst(cont, 0, pi);
        Some(Value::Inst(pi))
    } else {
        None
    };
    for (rb, _) in returns {
        let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
        br.blocks.push(cont);
        f.append_inst(rb, br);
    }
    if let Some(r) = result {
        f.replace_all_uses(Value::Inst(call), r);
    }
    f.remove_inst(call);
    let entry = callee.body().ok_or(malformed("callee has no body"))?;
    let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
    br.blocks.push(bmap[&entry]);
    f.append_inst(b, br);
    Ok(())
}
