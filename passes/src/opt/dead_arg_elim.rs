//! `dead_arg_elim`: delete the arguments a callable never uses, and the
//! matching operands of every call to it. Only callables whose every
//! reference is the callee operand of a `call` are changed (kernels keep
//! their ABI, external functions have no body to look at, and a function
//! used as a value elsewhere keeps its signature). Values that only fed the
//! deleted operands are left to `dce`; arguments that become unused in the
//! callers are found by the next run (`O2` iterates).
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops`, `call_graph`
//!   (no call is added or removed).

use rustc_hash::FxHashMap;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{FuncId, FunctionKind, Inst, Module, Opcode, Value};

const INFO: PassInfo = PassInfo {
    name: "dead_arg_elim",
    doc: "Delete unused arguments of callables and the matching call operands",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &[],
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::Loops,
        AnalysisKind::CallGraph,
    ],
};

#[derive(Default)]
pub struct DeadArgElim;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<DeadArgElim>(INFO)
}

impl Pass for DeadArgElim {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        // Call sites of every function; functions referenced otherwise are pinned.
        let mut sites: FxHashMap<FuncId, Vec<(FuncId, Inst)>> = FxHashMap::default();
        let mut pinned: Vec<FuncId> = Vec::new();
        for caller in module.func_ids() {
            let f = module.func(caller);
            for (_, i) in f.all_insts() {
                let d = f.inst(i);
                for (k, &v) in d.operands.iter().enumerate() {
                    if let Value::Func(callee) = v {
                        if d.opcode == Opcode::Call && k == 0 {
                            sites.entry(callee).or_default().push((caller, i));
                        } else {
                            pinned.push(callee);
                        }
                    }
                }
            }
        }
        let mut removed = 0;
        let funcs: Vec<FuncId> = module.func_ids().collect();
        for fid in funcs {
            let f = module.func(fid);
            if !matches!(f.kind, FunctionKind::Callable) || f.body().is_none() || pinned.contains(&fid) {
                continue;
            }
            let dead: Vec<usize> = (0..f.args.len()).filter(|&k| !f.has_uses(Value::Arg(k as u32))).collect();
            if dead.is_empty() {
                continue;
            }
            // Every call must pass exactly the declared arguments.
            let calls = sites.get(&fid).cloned().unwrap_or_default();
            let arity = f.args.len();
            if calls.iter().any(|&(c, i)| module.func(c).inst(i).operands.len() != arity + 1) {
                continue;
            }
            remove_args(module, fid, &dead, &calls);
            removed += dead.len();
        }
        let mut out = PassOutcome::changed(removed > 0);
        out.stats.push(("removed_args".into(), removed.to_string()));
        Ok(out)
    }
}

fn remove_args(m: &mut Module, fid: FuncId, dead: &[usize], calls: &[(FuncId, Inst)]) {
    m.func_mut(fid).retain_args(|k| !dead.contains(&k));
    for &(caller, call) in calls {
        let f = m.func_mut(caller);
        let ops = &f.inst(call).operands;
        let kept =
            ops.iter().enumerate().filter(|&(k, _)| k == 0 || !dead.contains(&(k - 1))).map(|(_, &v)| v).collect();
        f.set_operands(call, kept);
    }
}
