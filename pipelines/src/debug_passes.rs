//! Test aids registered as `debug.*` passes. They exist so that the pass
//! manager's failure paths (verifier failure, panic, false `preserves`
//! claim, reproducers) can be exercised end to end through `xir-opt`; no
//! shipped pipeline uses them.
//!
//! - `debug.break_ir` — Consumes `xir`; Produces same; Preserves nothing.
//!   Deletes the terminator of a function's entry block, which the verifier
//!   rejects.
//! - `debug.panic` — Consumes `xir`; Produces same; Preserves everything.
//!   Panics; with option `opcode`, only when some function holds an
//!   instruction of that opcode (so `xir-reduce` has something to keep).
//! - `debug.false_preserves` — Consumes `xir`; Produces same; claims to
//!   preserve the CFG and dominators but splits the entry block.
//! - `debug.miscompile` — Consumes `xir`; Produces same; Preserves
//!   everything. Turns the first `add` (layout order, first function that
//!   has one) into a `sub`: a wrong result that verifies, for
//!   `xir-reduce --mismatch`.

use serde::Deserialize;
use xir::pass::{
    options_from_ron, AnalysisKind, OptionDoc, OptionsError, Pass, PassContext, PassDecl, PassError, PassInfo,
    PassOutcome, PassRegistry, Produces,
};
use xir::{FuncId, InstData, Module, Opcode, TypeTable};

pub fn register(reg: &mut PassRegistry) {
    reg.register(PassDecl { info: BREAK_INFO, options: BREAK_OPTIONS, create: create_break });
    reg.register(PassDecl { info: PANIC_INFO, options: PANIC_OPTIONS, create: create_panic });
    reg.register(PassDecl { info: FALSE_INFO, options: &[], create: |_| Ok(Box::new(FalsePreserves)) });
    reg.register(PassDecl { info: MISCOMPILE_INFO, options: &[], create: |_| Ok(Box::new(Miscompile)) });
}

const BREAK_INFO: PassInfo = PassInfo {
    name: "debug.break_ir",
    doc: "Test aid: delete the terminator of a function's entry block (the verifier rejects the result).",
    consumes: &["xir"],
    produces: Produces::Same,
    preserves: &[],
    eliminates: &[],
};

const BREAK_OPTIONS: &[OptionDoc] = &[OptionDoc {
    name: "function",
    ty: "string",
    default: "\"\"",
    doc: "name of the function to break; empty = the first function with a body",
}];

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct BreakOptions {
    function: String,
}

struct BreakIr(BreakOptions);

fn create_break(v: Option<&ron::Value>) -> Result<Box<dyn Pass>, OptionsError> {
    Ok(Box::new(BreakIr(options_from_ron(v)?)))
}

impl Pass for BreakIr {
    fn info(&self) -> &PassInfo {
        &BREAK_INFO
    }
    fn run(&self, m: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let target = m.func_ids().find(|&f| {
            let func = m.func(f);
            func.body().is_some() && (self.0.function.is_empty() || func.name == self.0.function)
        });
        let Some(f) = target else {
            return Err(PassError::new("debug.break_ir", format!("no function `{}` with a body", self.0.function)));
        };
        let func = m.func_mut(f);
        let entry = func.body().expect("chosen for having a body");
        match func.terminator(entry) {
            Some(t) => {
                func.remove_inst(t);
                Ok(PassOutcome::changed(true))
            }
            None => Ok(PassOutcome::changed(false)),
        }
    }
}

const PANIC_INFO: PassInfo = PassInfo {
    name: "debug.panic",
    doc: "Test aid: panic (exercises the pass manager's panic handling and reproducer).",
    consumes: &["xir"],
    produces: Produces::Same,
    preserves: AnalysisKind::ALL,
    eliminates: &[],
};

const PANIC_OPTIONS: &[OptionDoc] = &[OptionDoc {
    name: "opcode",
    ty: "string",
    default: "\"\"",
    doc: "panic only when some instruction has this opcode; empty = always",
}];

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct PanicOptions {
    opcode: String,
}

struct PanicPass(PanicOptions);

fn create_panic(v: Option<&ron::Value>) -> Result<Box<dyn Pass>, OptionsError> {
    Ok(Box::new(PanicPass(options_from_ron(v)?)))
}

impl Pass for PanicPass {
    fn info(&self) -> &PassInfo {
        &PANIC_INFO
    }
    fn run(&self, m: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let want = &self.0.opcode;
        let holds = |f: FuncId| {
            let func = m.func(f);
            func.blocks().iter().any(|&b| func.block(b).insts().iter().any(|&i| func.opcode(i).name() == want))
        };
        if want.is_empty() || m.func_ids().any(holds) {
            panic!("debug.panic: deliberate panic (test aid)")
        }
        Ok(PassOutcome::changed(false))
    }
}

const FALSE_INFO: PassInfo = PassInfo {
    name: "debug.false_preserves",
    doc: "Test aid: split the entry block while claiming to preserve the CFG and dominators.",
    consumes: &["xir"],
    produces: Produces::Same,
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators],
    eliminates: &[],
};

struct FalsePreserves;

impl Pass for FalsePreserves {
    fn info(&self) -> &PassInfo {
        &FALSE_INFO
    }
    fn run(&self, m: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let Some(f) = m.func_ids().find(|&f: &FuncId| m.func(f).body().is_some()) else {
            return Ok(PassOutcome::changed(false));
        };
        let func = m.func_mut(f);
        let entry = func.body().expect("has a body");
        let tail = func.add_block();
        let insts = func.block(entry).insts().to_vec();
        for (pos, i) in insts.into_iter().enumerate() {
            func.move_inst(i, tail, pos);
        }
        let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
        br.blocks.push(tail);
        func.append_inst(entry, br);
        Ok(PassOutcome::changed(true))
    }
}

const MISCOMPILE_INFO: PassInfo = PassInfo {
    name: "debug.miscompile",
    doc: "Test aid: turn the first `add` into a `sub` (a planted miscompilation that verifies).",
    consumes: &["xir"],
    produces: Produces::Same,
    preserves: AnalysisKind::ALL,
    eliminates: &[],
};

struct Miscompile;

impl Pass for Miscompile {
    fn info(&self) -> &PassInfo {
        &MISCOMPILE_INFO
    }
    fn run(&self, m: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        for f in m.func_ids().collect::<Vec<_>>() {
            let func = m.func_mut(f);
            let Some((_, add)) = func.all_insts().find(|&(_, i)| func.opcode(i) == Opcode::Add) else { continue };
            let mut sub = func.inst_data(add);
            sub.opcode = Opcode::Sub;
            func.replace_inst(add, sub);
            return Ok(PassOutcome::changed(true));
        }
        Ok(PassOutcome::changed(false))
    }
}
