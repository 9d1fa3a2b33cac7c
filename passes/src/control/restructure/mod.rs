//! `restructure_cfg`: recover structured control flow (If / Switch / Loop
//! with unique merges, canonical break / continue targets) from any
//! reducible, Phi-free raw CFG.
//!
//! The algorithm is Ramsey's translation over the dominator tree ("Beyond
//! Relooper: recursive translation of unstructured control flow to
//! structured control flow", ICFP 2022): each block is emitted with the
//! blocks it dominates, those entered from several places after its own
//! branch, loops from the loop forest. Where a merge is not entered from
//! every pending transfer, the transfers store their target in a selector
//! slot and a guard dispatches on it (goto elimination, Erosa and Hendren,
//! "Taming control flow", ICCL 1994). `plan.rs` has the details.
//!
//! The whole plan for every function is computed first from immutable
//! analyses (loop forest, dominator tree, region stages; see `plan.rs`).
//! An irreducible CFG is rejected at that point, before anything changes,
//! with a diagnostic naming the blocks of the offending cycle and the
//! blocks where it is entered. Only then is each function rebuilt
//! (`emit.rs`) in a copy, its dominance repaired (`ssa_repair.rs`), and the
//! copies committed together.
//!
//! Blocks keep their identity and instructions; only terminators change,
//! and fresh blocks are added for loop headers, roles, merges, guards and
//! trampolines. Blocks the CFG never reaches get `unreachable` terminators.
//!
//! - Consumes: `xir.raw.phi_free`.
//! - Produces: `xir.restructured`.
//! - Preserves: `call_graph`.

mod emit;
mod plan;

use serde::{Deserialize, Serialize};
use xir::analysis::{Cfg, DomTree, LoopForest};
use xir::pass::{
    options_from_ron, AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces,
};
use xir::{Diagnostic, FuncId, Module};

use super::ssa_repair::{repair_dominance_in, undemotable_values_stay_local};
use super::util::{defined_functions, label};

/// No options.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {}

static INFO: PassInfo = PassInfo {
    name: "restructure_cfg",
    doc: "Recover If / Switch / Loop with unique merges from a reducible Phi-free raw CFG; rejects irreducible CFGs.",
    consumes: &["xir.raw.phi_free"],
    produces: Produces::Dialect("xir.restructured"),
    preserves: &[AnalysisKind::CallGraph],
    eliminates: &[],
};

pub struct RestructureCfg {
    _options: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO.clone(),
        options: &[],
        create: |v| Ok(Box::new(RestructureCfg { _options: options_from_ron(v)? })),
    }
}

const RULE: &str = "restructure_cfg";

/// Restructure every function of `m`. On error nothing has changed.
pub fn restructure_module(m: &mut Module) -> Result<RestructureStats, PassError> {
    let mut plans = Vec::new();
    let mut diags = Vec::new();
    for fid in defined_functions(m) {
        let f = m.func(fid);
        if let Some(&phi) = f.select_in_layout_order(|op| op == xir::Opcode::Phi).first() {
            let msg = "restructure_cfg needs Phi-free input (run reg2mem first)".to_string();
            diags.push(Diagnostic::error(RULE, msg).in_function(&f.name).at_inst(phi).with_span(f.inst_span(phi)));
            continue;
        }
        let cfg = Cfg::compute(f);
        let dom = DomTree::from_cfg(&cfg);
        let lf = match LoopForest::compute(&cfg, &dom) {
            Ok(lf) => lf,
            Err(irr) => {
                let names = |bs: &[xir::Block]| bs.iter().map(|&b| label(f, b)).collect::<Vec<_>>().join(", ");
                let msg = format!(
                    "irreducible control flow: the cycle {{{}}} is entered at {} (edge {} -> {})",
                    names(&irr.cycle),
                    names(&irr.entries),
                    label(f, irr.edge.0),
                    label(f, irr.edge.1)
                );
                let at = irr.entries.first().copied().unwrap_or(irr.edge.1);
                diags.push(Diagnostic::error(RULE, msg).in_function(&f.name).at_block(at).with_span(f.block(at).span));
                continue;
            }
        };
        match plan::plan_function(f, &cfg, &dom, &lf) {
            Ok(p) => plans.push((fid, p, lf.loops.len())),
            Err(e) => {
                let mut d = Diagnostic::error(RULE, e.to_string()).in_function(&f.name);
                if let Some(b) = e.block().filter(|&b| f.block_exists(b)) {
                    d = d.at_block(b).with_span(f.block(b).span);
                }
                diags.push(d);
            }
        }
    }
    if !diags.is_empty() {
        let mut e = PassError::new(RULE, diags.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("; "));
        e.diagnostics = diags;
        return Err(e);
    }
    // A function whose undemotable values stay in their blocks cannot fail
    // dominance repair (`undemotable_values_stay_local`): it is rebuilt in
    // place. The others are rebuilt in copies first, so that an error
    // leaves every function as it was; the in-place ones follow only then.
    let mut stats = RestructureStats::default();
    let (in_place, copied): (Vec<_>, Vec<_>) = plans
        .iter()
        .partition(|(fid, plan, _)| undemotable_values_stay_local(&m.types, m.func(*fid), plan.keeps_entry()));
    let mut done: Vec<(FuncId, xir::Function)> = Vec::with_capacity(copied.len());
    for &(fid, ref plan, nloops) in copied {
        let (f, result) = restructure_one(m, m.func(fid).clone(), plan, nloops, &mut stats);
        result?;
        done.push((fid, f));
    }
    for &(fid, ref plan, nloops) in in_place {
        let f = m.func(fid);
        let placeholder = xir::Function::new(String::new(), f.kind, f.ret);
        let f = std::mem::replace(m.func_mut(fid), placeholder);
        let (f, result) = restructure_one(m, f, plan, nloops, &mut stats);
        *m.func_mut(fid) = f;
        result.map_err(|mut e| {
            e.message = format!("internal error, the function was already rewritten: {}", e.message);
            e
        })?;
    }
    for (fid, f) in done {
        *m.func_mut(fid) = f;
    }
    stats.functions = plans.len();
    Ok(stats)
}

/// Emit one function's plan into `f` and repair its dominance; the
/// function comes back with the result, rewritten as far as it got.
fn restructure_one(
    m: &mut Module,
    f: xir::Function,
    plan: &plan::FnPlan,
    nloops: usize,
    stats: &mut RestructureStats,
) -> (xir::Function, Result<(), PassError>) {
    let before = f.block_capacity();
    let (mut f, cfg) = emit::Emitter::new(m, f, plan).run();
    stats.loops += nloops;
    stats.new_blocks += f.block_capacity() - before;
    let result = match repair_dominance_in(&m.types, &mut f, &cfg) {
        Ok(n) => {
            stats.demoted += n;
            // The loop headers and fresh merges were created at the end of
            // the block table, and removed blocks leave holes in it:
            // compacting it in layout order keeps every later block walk a
            // front-to-back read of the table.
            f.compact_blocks();
            Ok(())
        }
        Err(e) => {
            let d = Diagnostic::error(RULE, e.message.clone()).in_function(&f.name).at_inst(e.inst);
            let mut err = PassError::new(RULE, e.message);
            err.diagnostics.push(d);
            Err(err)
        }
    };
    (f, result)
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct RestructureStats {
    pub functions: usize,
    pub loops: usize,
    pub new_blocks: usize,
    /// Values demoted to slots because a new static path bypasses them.
    pub demoted: usize,
}

impl Pass for RestructureCfg {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let s = restructure_module(module)?;
        let mut out = PassOutcome::changed(s.functions > 0);
        out.stats.push(("loops".into(), s.loops.to_string()));
        out.stats.push(("new_blocks".into(), s.new_blocks.to_string()));
        out.stats.push(("demoted_values".into(), s.demoted.to_string()));
        Ok(out)
    }
}
