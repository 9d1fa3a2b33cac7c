//! `destructure_cfg`: the explicit boundary from structured to raw CFG. Every
//! owned block is rewritten, disconnected role blocks and orphans included:
//!
//! | structured | raw |
//! |---|---|
//! | `if %c, true ^t, false ^f, merge ^m` | `cond_br %c, true ^t, false ^f` |
//! | `switch %v, merge ^m, default ^d, case k ^c...` | `br_indexed %v, default ^d, case k ^c...` |
//! | `loop prepare ^p, body ^b, update ^u, merge ^m` | `br target ^p` |
//! | `simple_loop body ^b, merge ^m` | `br target ^b` |
//! | `break` / `continue target ^x` | `br target ^x` |
//!
//! Each rewrite keeps the terminator's executed successors (in order), so
//! Phis stay valid and the CFG is unchanged; only the role information
//! (merges, updates) is dropped. Ray-query, autodiff and outline constructs
//! have no raw form: they must be lowered first, and the pass refuses the
//! module (before changing anything) when one is present.
//!
//! - Consumes: `xir.structured`, `xir.structured.lowered`.
//! - Produces: `xir.raw`.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`.

use serde::{Deserialize, Serialize};
use xir::pass::{
    options_from_ron, AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces,
};
use xir::verify::inst_diag;
use xir::{Block, FuncId, Function, Inst, InstData, Module, Opcode, Payload, Trait, TypeTable};

use super::util::{br, defined_functions, term};

/// No options.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {}

static INFO: PassInfo = PassInfo {
    name: "destructure_cfg",
    doc: "Structured control flow to raw branches, for every owned block; role information is dropped.",
    consumes: &["xir.structured", "xir.structured.lowered"],
    produces: Produces::Dialect("xir.raw"),
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
        AnalysisKind::CallGraph,
    ],
    eliminates: &["@structured", "@structured_jump"],
};

pub struct DestructureCfg {
    _options: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO.clone(),
        options: &[],
        create: |v| Ok(Box::new(DestructureCfg { _options: options_from_ron(v)? })),
    }
}

/// The raw replacement of a structured terminator; `None` if it has none
/// (already raw, or refused: see `refused`).
fn raw_form(f: &Function, t: Inst) -> Option<InstData> {
    let d = f.inst(t);
    let b = &d.blocks;
    Some(match d.opcode {
        Opcode::If => term(Opcode::CondBr, &d.operands, &b[..2]),
        Opcode::Switch => {
            let mut raw = term(Opcode::BrIndexed, &d.operands, &b[1..]);
            raw.payload = f.payload(t).clone();
            raw
        }
        Opcode::Loop | Opcode::SimpleLoop | Opcode::Break | Opcode::Continue => br(b[0]),
        _ => return None,
    })
}

/// The opcodes `raw_form` rewrites.
fn has_raw_form(op: Opcode) -> bool {
    use Opcode::*;
    matches!(op, If | Switch | Loop | SimpleLoop | Break | Continue)
}

/// Structured constructs without a raw form (lowered by earlier passes).
fn refused(op: Opcode) -> bool {
    !has_raw_form(op) && xir_spec::spec().op(op).has(Trait::Structured)
}

/// Destructure every function; refuses (changing nothing) if some construct
/// has no raw form. Returns the number of rewritten terminators.
///
/// The first sweep decides from the dense opcode table alone, in id order:
/// a block's terminator is its one placed instruction with a terminator
/// opcode (the verifier's rule), so the structured ones and their blocks
/// are found without reading any block record, and most blocks (ending in
/// `br` / `return`) are never touched. It checks that every construct has
/// a raw form and lists (block, terminator) pairs. The rewrite then visits
/// only those, asking for each terminator record a few entries ahead, and
/// reads each record once, right before replacing it.
pub fn destructure_module(m: &mut Module) -> Result<usize, PassError> {
    let mut diags = Vec::new();
    let mut todo: Vec<(FuncId, Vec<(Block, Inst)>)> = Vec::new();
    for fid in defined_functions(m) {
        let f = m.func(fid);
        let mut found = Vec::new();
        for (t, b, op) in f.live_placements_by_id() {
            if refused(op) {
                let msg = format!("`{op}` has no raw form; lower it before destructure_cfg");
                diags.push(inst_diag(f, t, "destructure_cfg", msg));
            } else if has_raw_form(op) {
                found.push((b, t));
            } else {
                debug_assert!(raw_form(f, t).is_none(), "has_raw_form misses `{op}`");
            }
        }
        todo.push((fid, found));
    }
    if !diags.is_empty() {
        let mut e = PassError::new("destructure_cfg", format!("{} construct(s) have no raw form", diags.len()));
        e.diagnostics = diags;
        return Err(e);
    }
    let mut n = 0;
    for (fid, found) in todo {
        let f = m.func_mut(fid);
        let mut walk = f.walk(&found, xir::reads::Record);
        while let Some((b, t)) = walk.next(f) {
            debug_assert_eq!(f.terminator(b), Some(t), "a structured opcode ends its block");
            let raw = raw_form(f, t).expect("has_raw_form opcodes have a raw form");
            debug_assert!(raw.ty == TypeTable::VOID && !matches!(raw.payload, Payload::Text(_)));
            f.replace_inst(t, raw);
            n += 1;
        }
    }
    Ok(n)
}

impl Pass for DestructureCfg {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let n = destructure_module(module)?;
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("rewritten".into(), n.to_string()));
        Ok(out)
    }
}
