//! `audit_reg2mem_spills`: the post-restructure boundary check. After
//! `mem2reg`, no typed reg2mem spill provenance may remain anywhere: a
//! surviving `!spill(..)` slot means SSA recovery failed for it (for example
//! because something took its address), and the SPIR-V handoff would carry
//! avoidable memory traffic. The audit changes nothing; it fails with one
//! located diagnostic per marker (function, argument, block or instruction).
//! Untagged user allocas are fine and are not reported.
//!
//! - Consumes: `xir.restructured.ssa`.
//! - Produces: `xir.restructured.unspilled` (the same IR, now known to hold
//!   no spill marker).
//! - Preserves: everything (the IR is not modified).

use serde::Deserialize;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Diagnostic, Module};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {}

const INFO: PassInfo = PassInfo {
    name: "audit_reg2mem_spills",
    doc: "Fail if any reg2mem spill marker survived mem2reg",
    consumes: &["xir.restructured.ssa"],
    produces: Produces::Dialect("xir.restructured.unspilled"),
    eliminates: &[],
    preserves: AnalysisKind::ALL,
};

pub struct AuditReg2MemSpills {
    _opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: &[],
        create: |v| Ok(Box::new(AuditReg2MemSpills { _opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for AuditReg2MemSpills {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let diags = surviving_spills(module);
        if diags.is_empty() {
            return Ok(PassOutcome::changed(false));
        }
        let mut err = PassError::new(
            INFO.name,
            format!("{} reg2mem spill marker(s) survived mem2reg; SSA was not recovered for them", diags.len()),
        );
        err.diagnostics = diags;
        Err(err)
    }
}

/// One diagnostic per spill marker left in the module.
pub fn surviving_spills(m: &Module) -> Vec<Diagnostic> {
    const RULE: &str = "reg2mem-spill-survived";
    let mut out = Vec::new();
    for f in &m.functions {
        if let Some(k) = f.md.spill {
            out.push(
                Diagnostic::error(RULE, format!("function carries spill metadata `{}`", k.name()))
                    .in_function(&f.name)
                    .with_span(f.span),
            );
        }
        for (n, a) in f.args.iter().enumerate() {
            if let Some(k) = a.md.spill {
                out.push(
                    Diagnostic::error(RULE, format!("argument {n} carries spill metadata `{}`", k.name()))
                        .in_function(&f.name),
                );
            }
        }
        // Sweeps of the functions' sparse metadata tables (only entities
        // with more than a name; an owner's opcode and block come from the
        // dense table), not walks of every block and instruction record.
        for (b, md) in f.block_metadata() {
            if let Some(k) = md.spill {
                out.push(
                    Diagnostic::error(RULE, format!("block carries spill metadata `{}`", k.name()))
                        .in_function(&f.name)
                        .at_block(b)
                        .with_span(f.block(b).span),
                );
            }
        }
        for (i, md) in f.inst_metadata() {
            if let Some(k) = md.spill {
                let op = f.opcode(i);
                let what = match &md.name {
                    Some(n) => format!("`{op}` slot %{n}"),
                    None => format!("`{op}` slot"),
                };
                let uses = f.uses(xir::Value::Inst(i)).len();
                out.push(
                    Diagnostic::error(
                        RULE,
                        format!("{what} tagged `!spill({})` is still in memory ({uses} use(s))", k.name()),
                    )
                    .in_function(&f.name)
                    .at_block(f.parent(i).expect("a metadata owner of the sweep is placed"))
                    .at_inst(i)
                    .with_span(f.inst_span(i)),
                );
            }
        }
    }
    out
}
