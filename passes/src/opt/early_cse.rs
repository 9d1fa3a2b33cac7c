//! `early_cse`: common-subexpression elimination of pure instructions by
//! dominance. Walking the dominator tree from the entry with a scoped table,
//! an instruction equal to one in a dominating position (same opcode, result
//! type, payload and operands; the operands of `commutative` opcodes in a
//! canonical order) is replaced by it and deleted.
//!
//! Only instructions that are `pure`, not `convergent` (their value depends
//! on which threads run them together), have no block operands and produce a
//! value are candidates. Addresses (`gep`, `lvalue` results) are candidates
//! too: an address is a pure function of its root and indices; the
//! `cse_addresses: false` option leaves them alone. Unreachable blocks are
//! not visited.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops`.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Block, FuncId, Inst, Module, Opcode, Payload, TypeId, TypeTable, Value};
use xir_spec::Trait;

const INFO: PassInfo = PassInfo {
    name: "early_cse",
    doc: "Replace pure instructions by an equal dominating one (commutative operands canonicalized)",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["@pure"],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Also merge equal addresses (`gep` and other `lvalue` results).
    pub cse_addresses: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { cse_addresses: true }
    }
}

const OPTIONS: &[xir::pass::OptionDoc] = &[xir::pass::OptionDoc {
    name: "cse_addresses",
    ty: "bool",
    default: "true",
    doc: "Also merge equal addresses (gep and other lvalue results)",
}];

pub struct EarlyCse {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(EarlyCse { opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for EarlyCse {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut removed = 0;
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            let dom = cx.analyses.dominators(module, fid);
            let entry = module.func(fid).body().expect("has a body");
            removed += cse_function(module, fid, entry, &dom, &self.opts, false);
        }
        let mut out = PassOutcome::changed(removed > 0);
        out.stats.push(("removed".into(), removed.to_string()));
        Ok(out)
    }
}

/// Opcode, type, operands, payload; for Phis (gvn only) also the block and
/// the incoming blocks.
type Key = (Opcode, TypeId, SmallVec<[Value; 3]>, Payload, Option<(Block, SmallVec<[Block; 3]>)>);

fn key(m: &Module, fid: FuncId, i: Inst, opts: &Options, phis: bool) -> Option<Key> {
    let f = m.func(fid);
    let d = f.inst(i);
    if d.opcode == Opcode::Phi {
        let b = f.parent(i)?;
        return phis.then(|| (d.opcode, d.ty, d.operands.clone(), f.payload(i).clone(), Some((b, d.blocks.clone()))));
    }
    let spec = xir_spec::spec().op(d.opcode);
    if !spec.has(Trait::Pure)
        || spec.has(Trait::Convergent)
        || (spec.has(Trait::Lvalue) && !opts.cse_addresses)
        || spec.has(Trait::Alloca)
        || !d.blocks.is_empty()
        || d.ty == TypeTable::VOID
    {
        return None;
    }
    let mut ops = d.operands.clone();
    if spec.has(Trait::Commutative) && ops.len() == 2 && ops[1] < ops[0] {
        ops.swap(0, 1);
    }
    Some((d.opcode, d.ty, ops, f.payload(i).clone(), None))
}

/// Dedup along the dominator tree; returns the number of instructions removed.
///
/// With `phis`, Phis of one block with the same incomings are merged too
/// (the `gvn` pass).
pub(crate) fn cse_function(
    m: &mut Module,
    fid: FuncId,
    entry: Block,
    dom: &xir::analysis::DomTree,
    opts: &Options,
    phis: bool,
) -> usize {
    let mut table: FxHashMap<Key, Value> = FxHashMap::default();
    // Removed once at the end: `remove_insts` costs O(function) per call, so
    // one call per block made this pass quadratic on long functions.
    let mut dead = Vec::new();
    // (block, keys inserted by it, children visited?)
    let mut stack: Vec<(Block, Vec<Key>, bool)> = vec![(entry, Vec::new(), false)];
    while let Some((b, inserted, visited)) = stack.pop() {
        if visited {
            for k in inserted {
                table.remove(&k);
            }
            continue;
        }
        let mut mine = Vec::new();
        let insts = m.func(fid).block(b).insts().to_vec();
        for i in insts {
            let Some(k) = key(m, fid, i, opts, phis) else { continue };
            match table.get(&k) {
                Some(&v) => {
                    if super::util::replace_uses_keeping_phis_acyclic(m.func_mut(fid), Value::Inst(i), v) {
                        dead.push(i);
                    }
                }
                None => {
                    table.insert(k.clone(), Value::Inst(i));
                    mine.push(k);
                }
            }
        }
        stack.push((b, mine, true));
        for &c in dom.children(b) {
            stack.push((c, Vec::new(), false));
        }
    }
    m.func_mut(fid).remove_insts(&dead);
    dead.len()
}
