//! `promote_ref_arg`: turn read-only reference arguments of callables into
//! value arguments; each call site loads the lvalue it passed, once, right
//! before the call. This is step 2 of the reference's legalization: fewer
//! Function-storage pointers cross callable boundaries.
//!
//! A reference parameter `k` of callable `f` is promoted when
//! - its type is plain data;
//! - the fixed-point `ArgumentUsage` says `f` (and all it calls with it)
//!   never writes it;
//! - every use is the address of a `load`, or the same argument passed on to
//!   a parameter that is itself promoted (decided as a greatest fixed point,
//!   so recursion is fine). A GEP into it keeps it a reference;
//! - `f` writes no memory except its own local allocas, directly or through
//!   callees (no buffer writes, atomics, barriers or externals). Otherwise a
//!   write through another alias could change what `f` reads, and a value
//!   snapshot taken at the call would differ.
//!
//! Kernels and externals keep their signatures.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`
//!   (only loads are added and removed).

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use xir::analysis::arg_usage::usage_with;
use xir::analysis::{CallGraph, Usage};
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{ArgKind, FuncId, Function, FunctionKind, Inst, Metadata, Module, Opcode, Trait, Use, Value};

use super::util;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {}

const INFO: PassInfo = PassInfo {
    name: "promote_ref_arg",
    doc: "Pass read-only reference arguments of callables by value",
    consumes: &["xir"],
    produces: Produces::Same,
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

pub struct PromoteRefArg {
    _opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: &[],
        create: |v| Ok(Box::new(PromoteRefArg { _opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for PromoteRefArg {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let promoted = promotable_params(module);
        let n = promoted.len();
        if n > 0 {
            rewrite(module, &promoted);
        }
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("promoted".into(), n.to_string()));
        Ok(out)
    }
}

/// Whether the address `v` of `f` derives (through GEPs) from a local alloca.
fn local_address(f: &Function, mut v: Value) -> bool {
    loop {
        let Some(i) = v.as_inst() else { return false };
        let d = f.inst(i);
        match d.opcode {
            Opcode::Alloca => return true,
            Opcode::Gep => v = d.operands[0],
            _ => return false,
        }
    }
}

/// Functions that may write memory another function can see (least fixed
/// point over the call graph, callees first).
fn foreign_writers(m: &Module, cg: &CallGraph) -> Vec<bool> {
    let mut w = vec![false; m.functions.len()];
    for scc in &cg.sccs {
        loop {
            let mut changed = false;
            for &fid in scc {
                if w[fid.index()] {
                    continue;
                }
                let f = m.func(fid);
                // A sequential sweep of the instruction table (`any` does not
                // depend on the order).
                let writes = f.is_external()
                    || f.live_opcodes_by_id().any(|(i, op)| match op {
                        Opcode::Store => !local_address(f, f.inst(i).operands[0]),
                        Opcode::Call => match f.inst(i).operands.first() {
                            Some(Value::Func(g)) => w.get(g.index()).copied().unwrap_or(true),
                            _ => true,
                        },
                        _ => {
                            let o = xir_spec::spec().op(op);
                            o.has(Trait::MemoryWrite) || o.has(Trait::Atomic) || o.has(Trait::Barrier)
                        }
                    });
                if writes {
                    w[fid.index()] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
    w
}

/// The fixed-point argument usage (as `ArgumentUsage`) of every callable,
/// callees first. Kernels cannot be called, so their bodies, usually most
/// of the module, are not walked: their entries stay empty, and a call of
/// a kernel or an external counts as reading and writing every argument.
fn callee_arg_usage(m: &Module, cg: &CallGraph) -> Vec<Vec<Usage>> {
    let mut usage: Vec<Vec<Usage>> = m.functions.iter().map(|f| vec![Usage::NONE; f.args.len()]).collect();
    for scc in &cg.sccs {
        loop {
            let mut changed = false;
            for &fid in scc {
                let f = m.func(fid);
                if f.kind != FunctionKind::Callable || f.body().is_none() {
                    continue;
                }
                let new = usage_with(f, |g, k| {
                    let callee = m.functions.get(g.index())?;
                    if callee.kind == FunctionKind::Callable && callee.body().is_some() {
                        usage[g.index()].get(k).copied()
                    } else {
                        None
                    }
                });
                if new != usage[fid.index()] {
                    usage[fid.index()] = new;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
    usage
}

/// The `(callable, parameter)` pairs to promote.
pub fn promotable_params(m: &Module) -> FxHashSet<(FuncId, usize)> {
    let cg = CallGraph::compute(m);
    let usage = callee_arg_usage(m, &cg);
    let writers = foreign_writers(m, &cg);
    let mut cand: FxHashSet<(FuncId, usize)> = FxHashSet::default();
    for fid in m.func_ids() {
        let f = m.func(fid);
        if f.kind != FunctionKind::Callable || f.body().is_none() || writers[fid.index()] {
            continue;
        }
        for (k, a) in f.args.iter().enumerate() {
            if a.kind == ArgKind::Reference && m.types.is_data(a.ty) && !usage[fid.index()][k].write {
                cand.insert((fid, k));
            }
        }
    }
    // Greatest fixed point: drop parameters with a use other than a load
    // address or a pass-through to a parameter still promoted.
    loop {
        let drop: Vec<(FuncId, usize)> = cand
            .iter()
            .copied()
            .filter(|&(fid, k)| {
                let f = m.func(fid);
                !f.uses(Value::Arg(k as u32)).iter().all(|u| {
                    let d = f.inst(u.user);
                    match d.opcode {
                        Opcode::Load => u.index == 0,
                        Opcode::Call if u.index >= 1 => match d.operands[0] {
                            Value::Func(g) => cand.contains(&(g, u.index as usize - 1)),
                            _ => false,
                        },
                        _ => false,
                    }
                })
            })
            .collect();
        if drop.is_empty() {
            return cand;
        }
        for p in drop {
            cand.remove(&p);
        }
    }
}

/// Rewrite call sites and callee bodies for the chosen parameters.
pub fn rewrite(m: &mut Module, promoted: &FxHashSet<(FuncId, usize)>) {
    for fid in util::defined_functions(m) {
        let f = m.func_mut(fid);
        // Calls in id order (one sequential sweep of the table): each call's
        // loads go right before it whatever order the calls are visited in.
        let calls: Vec<Inst> = f.live_opcodes_by_id().filter(|&(_, op)| op == Opcode::Call).map(|p| p.0).collect();
        // Retargets are batched per passed value: one pass over each use
        // list instead of a scan per call site (which was quadratic when a
        // kernel passes one local to many calls). The loads are placed in
        // one rebuild per block, not a position scan per call.
        let mut retarget: FxHashMap<Value, Vec<(Use, Value)>> = FxHashMap::default();
        let mut loads: Vec<(Inst, Inst)> = Vec::new();
        for c in calls {
            let Value::Func(g) = f.inst(c).operands[0] else { continue };
            for slot in 1..f.inst(c).operands.len() {
                if !promoted.contains(&(g, slot - 1)) {
                    continue;
                }
                let o = f.inst(c).operands[slot];
                if let Value::Arg(a) = o {
                    if promoted.contains(&(fid, a as usize)) {
                        continue; // passed on as the (now value) argument
                    }
                }
                let Some(ty) = util::local_type(f, o) else { continue };
                let load = util::make(f, Opcode::Load, ty, &[o], Metadata::default());
                loads.push((c, load));
                retarget.entry(o).or_default().push((Use { user: c, index: slot as u32 }, Value::Inst(load)));
            }
        }
        f.insert_before_each(&loads);
        for (old, repl) in retarget {
            f.replace_uses(old, &repl);
        }
    }
    for &(fid, k) in promoted {
        let f = m.func_mut(fid);
        let loads: Vec<Inst> =
            f.uses(Value::Arg(k as u32)).iter().filter(|u| f.opcode(u.user) == Opcode::Load).map(|u| u.user).collect();
        for &l in &loads {
            f.replace_all_uses(Value::Inst(l), Value::Arg(k as u32));
        }
        f.remove_insts(&loads);
        f.args[k].kind = ArgKind::Value;
    }
}

#[cfg(test)]
mod tests {
    use super::{promotable_params, rewrite};
    use xir::interp::{run_kernel, Inputs};
    use xir::{ArgKind, Module, Opcode};

    // `@get` only reads its reference; `@bump` writes its own.
    const SRC: &str = r#"
callable @get(%r: ref u32, %k: u32) -> u32 {
^entry:
  %v = load %r : u32
  %s = add %v, %k : u32
  return %s
}

callable @bump(%r: ref u32) -> void {
^entry:
  %v = load %r : u32
  %n = add %v, u32 1 : u32
  store %r, %n
  return
}

kernel @k(%out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = alloca : u32
  store %x, %t
  %a = call @get, %x, u32 1 : u32
  call @bump, %x
  %b = call @get, %x, u32 2 : u32
  %c = call @get, %x, %a : u32
  %ab = add %a, %b : u32
  %abc = add %ab, %c : u32
  buffer.write %out, %t, %abc
  return
}
"#;

    fn ops(m: &Module, f: &str, op: Opcode) -> usize {
        let f = m.func(m.find_function(f).expect("function"));
        f.all_insts().filter(|&(_, i)| f.opcode(i) == op).count()
    }

    // Check that the read-only parameter becomes a value, that each of the
    // three calls in one block gets its own load placed right before it
    // (so the call after `@bump` sees the new value), that the written one
    // stays a reference, and that the results do not change.
    #[test]
    fn promotes_read_only_reference_at_every_call() {
        let mut m = xir::text::parse_module(SRC, "promote.xir").expect("parses");
        let inputs =
            Inputs::from_json(r#"{"dispatch": [4, 1, 1], "args": {"out": {"fill": 0, "len": 4}}}"#).expect("inputs");
        let k = m.find_function("k").expect("kernel");
        let before = run_kernel(&m, k, &inputs).expect("runs before");
        let promoted = promotable_params(&m);
        let get = m.find_function("get").expect("get");
        assert_eq!(promoted.iter().copied().collect::<Vec<_>>(), vec![(get, 0)]);
        rewrite(&mut m, &promoted);
        let diags = xir::verify::verify_module(&m);
        let text = xir::text::print_module(&m);
        assert!(diags.is_empty(), "{}\n{text}", xir::diag::render(&diags));
        assert_eq!(m.func(get).args[0].kind, ArgKind::Value, "{text}");
        let bump = m.find_function("bump").expect("bump");
        assert_eq!(m.func(bump).args[0].kind, ArgKind::Reference, "{text}");
        assert_eq!((ops(&m, "get", Opcode::Load), ops(&m, "k", Opcode::Load)), (0, 3), "{text}");
        let kf = m.func(k);
        let body = kf.block(kf.body().expect("body")).insts();
        for (n, &i) in body.iter().enumerate() {
            let d = kf.inst(i);
            if d.opcode == Opcode::Call && d.operands[0] == xir::Value::Func(get) {
                let prev = kf.inst(body[n - 1]);
                assert_eq!(prev.opcode, Opcode::Load, "{text}");
                assert_eq!(d.operands[1], xir::Value::Inst(body[n - 1]), "{text}");
            }
        }
        let after = run_kernel(&m, k, &inputs).expect("runs after");
        assert_eq!(before.buffers, after.buffers);
        // a = t + 1, b = (t + 1) + 2, c = (t + 1) + a.
        let expect: Vec<String> = (0..4).map(|t| (3 * (t + 1) + 2 + (t + 1)).to_string()).collect();
        assert_eq!(after.buffers["out"].to_string(), format!("[{}]", expect.join(",")), "{text}");
    }
}
