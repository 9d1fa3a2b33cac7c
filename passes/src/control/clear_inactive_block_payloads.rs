//! `clear_inactive_block_payloads`: after `restructure_cfg` every executed
//! transfer is explicit, so a block outside ordinary all-edge reachability
//! from the entry never runs. Such blocks are either true orphans (no
//! construct names them) or disconnected role blocks (an unreachable merge
//! or update). Both get their payload replaced by a lone `unreachable`;
//! the blocks themselves stay, so every construct keeps its roles and block
//! identity is preserved. A value defined there and still used elsewhere
//! (only possible from other dead code) is replaced by `undef` first.
//!
//! - Consumes: `xir.restructured` (and its refinements).
//! - Produces: the same dialect.
//! - Preserves: `call_graph`, `dominators`, `loops` (the CFG of reachable
//!   blocks is unchanged).

use serde::{Deserialize, Serialize};
use xir::analysis::Cfg;
use xir::pass::{
    options_from_ron, AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces,
};
use xir::{Module, Opcode, Value};

use super::util::{defined_functions, set_terminator, unreachable};

/// No options.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {}

static INFO: PassInfo = PassInfo {
    name: "clear_inactive_block_payloads",
    doc: "Replace the payload of blocks outside all-edge reachability (orphans, dead roles) with `unreachable`, keeping the blocks.",
    consumes: &["xir.restructured"],
    produces: Produces::Same,
    preserves: &[AnalysisKind::CallGraph, AnalysisKind::Dominators, AnalysisKind::Loops],
    eliminates: &[],
};

pub struct ClearInactiveBlockPayloads {
    _options: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO.clone(),
        options: &[],
        create: |v| Ok(Box::new(ClearInactiveBlockPayloads { _options: options_from_ron(v)? })),
    }
}

/// Clear every inactive block of `m`; returns how many were cleared.
pub fn clear_module(m: &mut Module) -> usize {
    let mut cleared = 0;
    for fid in defined_functions(m) {
        let f = m.func_mut(fid);
        let cfg = Cfg::compute(f);
        let dead: Vec<_> = f.blocks().iter().copied().filter(|&b| !cfg.is_reachable(b)).collect();
        for &b in &dead {
            let insts = f.block(b).insts().to_vec();
            let already = insts.len() == 1 && f.opcode(insts[0]) == Opcode::Unreachable;
            if already {
                continue;
            }
            for &i in insts.iter().rev() {
                let ty = f.inst(i).ty;
                if f.has_uses(Value::Inst(i)) {
                    f.replace_all_uses(Value::Inst(i), Value::Undef(ty));
                }
                f.remove_inst(i);
            }
            set_terminator(f, b, unreachable("inactive block"));
            cleared += 1;
        }
    }
    cleared
}

impl Pass for ClearInactiveBlockPayloads {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let n = clear_module(module);
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("cleared_blocks".into(), n.to_string()));
        Ok(out)
    }
}
