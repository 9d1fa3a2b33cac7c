//! `inline`: multi-block inlining of callables into their callers, on raw
//! CFG (the reference runs generic inlining only after `destructure_cfg`).
//!
//! For a call in block `B`: `B` is split after the call into a continuation
//! block; the callee's blocks are cloned in (arguments replaced by the call
//! operands: values, lvalues and resources alike; metadata, spill tags
//! included, kept); its allocas are hoisted into the caller's entry block;
//! each `return v` becomes `store %result, v; br ^continuation`, and the
//! call's uses read `%result` at the top of the continuation. The result
//! slot is an ordinary local, so the pass adds no Phi and keeps
//! `xir.raw.phi_free` input Phi-free; `mem2reg` promotes it later.
//!
//! Callees are inlined bottom-up over the call graph, so each callee is
//! already flat when cloned. A selected call to a recursive callable
//! (its call-graph SCC has a cycle) is refused before anything changes,
//! with one located diagnostic per such call. Externals are never inlined.
//!
//! Options: `only` (callee names; empty = every callable),
//! `max_callee_insts` (0 = no limit) and `skip_recursive` (leave calls into
//! recursive callables alone instead of refusing them: how `-O2` runs it,
//! so that a recursive kernel still gets the backend's own diagnostic).
//!
//! - Consumes: `xir.raw`.
//! - Produces: the same dialect.
//! - Preserves: nothing (CFGs and the call graph change).

use rustc_hash::FxHashMap;
use serde::Deserialize;
use xir::analysis::CallGraph;
use xir::pass::{OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Block, Diagnostic, FuncId, FunctionKind, Inst, InstData, Metadata, Module, Opcode, TypeTable, Value};

use super::util;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Inline only calls to these callables (empty: every callable).
    pub only: Vec<String>,
    /// Skip callees with more instructions than this (0: no limit).
    pub max_callee_insts: usize,
    /// Leave calls to recursive callables in place instead of refusing them.
    pub skip_recursive: bool,
}

const INFO: PassInfo = PassInfo {
    name: "inline",
    doc: "Inline callables into their callers (raw CFG, multi-block); refuses recursion",
    consumes: &["xir.raw"],
    produces: Produces::Same,
    eliminates: &["call"],
    preserves: &[],
};

const OPTIONS: &[OptionDoc] = &[
    OptionDoc { name: "only", ty: "[string]", default: "[]", doc: "Callee names to inline (empty: all callables)" },
    OptionDoc { name: "max_callee_insts", ty: "usize", default: "0", doc: "Largest callee inlined (0: no limit)" },
    OptionDoc {
        name: "skip_recursive",
        ty: "bool",
        default: "false",
        doc: "Leave calls to recursive callables in place (false: refuse them)",
    },
];

pub struct Inline {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(Inline { opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Inline {
    fn selected(&self, m: &Module, cg: &CallGraph, g: FuncId) -> bool {
        let f = m.func(g);
        f.kind == FunctionKind::Callable
            && !(self.opts.skip_recursive && cg.is_recursive(g))
            && f.body().is_some()
            && (self.opts.only.is_empty() || self.opts.only.contains(&f.name))
            && (self.opts.max_callee_insts == 0 || f.inst_count() <= self.opts.max_callee_insts)
    }
}

fn callee_of(m: &Module, fid: FuncId, i: Inst) -> Option<FuncId> {
    let d = m.func(fid).inst(i);
    match (d.opcode, d.operands.first()) {
        (Opcode::Call, Some(Value::Func(g))) => Some(*g),
        _ => None,
    }
}

impl Pass for Inline {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let cg = CallGraph::compute(module);
        // Preflight: no selected call may target a recursive callable.
        let mut diags: Vec<Diagnostic> = Vec::new();
        for fid in module.func_ids() {
            let f = module.func(fid);
            for (b, i) in f.all_insts() {
                let Some(g) = callee_of(module, fid, i) else { continue };
                if self.selected(module, &cg, g) && cg.is_recursive(g) {
                    diags.push(
                        Diagnostic::error(
                            "inline-recursion",
                            format!("call to recursive callable `@{}` cannot be inlined", module.func(g).name),
                        )
                        .in_function(&f.name)
                        .at_block(b)
                        .at_inst(i)
                        .with_span(f.inst_span(i)),
                    );
                }
            }
        }
        if !diags.is_empty() {
            let mut e = PassError::new(INFO.name, format!("{} call(s) to recursive callables", diags.len()));
            e.diagnostics = diags;
            return Err(e);
        }
        let mut inlined = 0usize;
        // Callees before callers: each callee is flat when it is cloned.
        for scc in &cg.sccs {
            for &fid in scc {
                if module.func(fid).body().is_none() {
                    continue;
                }
                loop {
                    let f = module.func(fid);
                    let site = f.all_insts().map(|p| p.1).find(|&i| {
                        callee_of(module, fid, i).is_some_and(|g| g != fid && self.selected(module, &cg, g))
                    });
                    let Some(call) = site else { break };
                    inline_call(module, fid, call);
                    inlined += 1;
                }
            }
        }
        let mut out = PassOutcome::changed(inlined > 0);
        out.stats.push(("inlined_calls".into(), inlined.to_string()));
        Ok(out)
    }
}

/// Inline the call `call` of function `fid` (the callee has a body and is
/// not `fid` itself).
pub fn inline_call(m: &mut Module, fid: FuncId, call: Inst) {
    let g = callee_of(m, fid, call).expect("a call to a function");
    let callee = m.func(g).clone();
    let f = m.func_mut(fid);
    let b = f.parent(call).expect("call is placed");
    let entry = f.body().expect("caller has a body");
    let args: Vec<Value> = f.inst(call).operands[1..].to_vec();
    let ret_ty = f.inst(call).ty;

    // Split: everything after the call moves to the continuation block.
    let cont = f.add_block();
    let mut at = f.cursor().at_inst(call);
    at.next_inst();
    at.split_block(cont);

    // Result slot, read at the top of the continuation.
    let slot = if ret_ty != TypeTable::VOID && f.has_uses(Value::Inst(call)) {
        let md = util::name_like(f.inst_md(call));
        let a = util::entry_alloca(f, ret_ty, md.clone()).expect("caller has a body");
        let load = util::make(f, Opcode::Load, ret_ty, &[Value::Inst(a)], md);
        f.insert_inst(cont, 0, load);
        f.replace_all_uses(Value::Inst(call), Value::Inst(load));
        Some(a)
    } else {
        None
    };
    f.remove_inst(call);

    // Clone the callee's blocks and instructions.
    let bmap: FxHashMap<Block, Block> = callee.blocks().iter().map(|&cb| (cb, f.add_block())).collect();
    let mut imap: FxHashMap<Inst, Inst> = FxHashMap::default();
    let cinsts: Vec<(Block, Inst)> = callee.all_insts().collect();
    for &(_, ci) in &cinsts {
        let d = callee.inst_data(ci);
        imap.insert(ci, f.create_inst(d));
    }
    let map_value = |v: Value| match v {
        Value::Arg(k) => args[k as usize],
        Value::Inst(i) => Value::Inst(imap[&i]),
        other => other,
    };
    let mut hoisted = 0;
    for &(cb, ci) in &cinsts {
        let ni = imap[&ci];
        let d = callee.inst(ci);
        if d.opcode == Opcode::Return {
            let nb = bmap[&cb];
            if let (Some(a), Some(&v)) = (slot, d.operands.first()) {
                let st =
                    util::make(f, Opcode::Store, TypeTable::VOID, &[Value::Inst(a), map_value(v)], Metadata::default());
                let at = f.block(nb).insts().len();
                f.insert_inst(nb, at, st);
            }
            let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
            br.blocks.push(cont);
            br.span = callee.inst_span(ci);
            f.append_inst(nb, br);
            continue;
        }
        let ops: smallvec::SmallVec<[Value; 3]> = d.operands.iter().map(|&v| map_value(v)).collect();
        let blocks: smallvec::SmallVec<[Block; 3]> = d.blocks.iter().map(|cb| bmap[cb]).collect();
        f.set_operands(ni, ops);
        f.set_block_operands(ni, blocks);
        if d.has(xir::Trait::Alloca) {
            f.insert_inst(entry, hoisted, ni);
            hoisted += 1;
        } else {
            let nb = bmap[&cb];
            let at = f.block(nb).insts().len();
            f.insert_inst(nb, at, ni);
        }
    }

    // The call's block jumps into the clone of the callee's entry.
    let callee_entry = bmap[&callee.body().expect("callee has a body")];
    let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
    br.blocks.push(callee_entry);
    f.append_inst(b, br);

    // Layout: caller blocks up to `b`, the clone, the continuation, the rest.
    let mut layout: Vec<Block> = Vec::new();
    let clones: Vec<Block> = callee.blocks().iter().map(|cb| bmap[cb]).collect();
    for &x in f.blocks() {
        if x == cont || clones.contains(&x) {
            continue;
        }
        layout.push(x);
        if x == b {
            layout.extend(clones.iter().copied());
            layout.push(cont);
        }
    }
    f.set_layout(layout);
}
