//! `div_rem_pairs`: when both `div a, b` and `mod a, b` of the same integer
//! operands are computed and the division dominates the remainder, the
//! remainder becomes `a - (a / b) * b`, reusing the quotient. GPUs have no
//! integer divide instruction — a division or remainder is a long emulated
//! sequence — so one division plus a multiply and a subtract is cheaper
//! than two. (It adds one instruction to the SPIR-V, so `O2`, which is
//! measured by instruction count, does not include it.)
//!
//! Exact for every input under the interpreter's rules: truncating division
//! and remainder; a zero divisor and `MIN / -1` already trap at the
//! dominating division.
//! Floats are left alone (`mod` is `fmod`, not `a - trunc(a / b) * b`).
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops`.

use rustc_hash::FxHashMap;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Block, FuncId, Inst, InstData, Module, Opcode, TypeId, Value};

const INFO: PassInfo = PassInfo {
    name: "div_rem_pairs",
    doc: "Rewrite an integer mod whose div dominates it as a - (a / b) * b",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["mod"],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

#[derive(Default)]
pub struct DivRemPairs;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<DivRemPairs>(INFO)
}

impl Pass for DivRemPairs {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut pairs = 0;
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            let dom = cx.analyses.dominators(module, fid);
            let entry = module.func(fid).body().expect("has a body");
            pairs += pair_function(module, fid, entry, &dom);
        }
        let mut out = PassOutcome::changed(pairs > 0);
        out.stats.push(("pairs".into(), pairs.to_string()));
        Ok(out)
    }
}

type Key = (TypeId, Value, Value);

fn pair_function(m: &mut Module, fid: FuncId, entry: Block, dom: &xir::analysis::DomTree) -> usize {
    let mut divs: FxHashMap<Key, Inst> = FxHashMap::default();
    let mut n = 0;
    let mut stack: Vec<(Block, Vec<Key>, bool)> = vec![(entry, Vec::new(), false)];
    while let Some((b, inserted, visited)) = stack.pop() {
        if visited {
            for k in inserted {
                divs.remove(&k);
            }
            continue;
        }
        let mut mine = Vec::new();
        for i in m.func(fid).block(b).insts().to_vec() {
            let f = m.func(fid);
            let d = f.inst(i);
            if !matches!(d.opcode, Opcode::Div | Opcode::Mod) || !m.types.is_int(d.ty) || d.operands.len() != 2 {
                continue;
            }
            let key = (d.ty, d.operands[0], d.operands[1]);
            if d.opcode == Opcode::Div {
                if let std::collections::hash_map::Entry::Vacant(e) = divs.entry(key) {
                    e.insert(i);
                    mine.push(key);
                }
                continue;
            }
            let Some(&q) = divs.get(&key) else { continue };
            let (ty, a, bv) = key;
            let span = f.inst_span(i);
            let md = f.inst_md(i).to_metadata();
            let f = m.func_mut(fid);
            let mut mul = InstData::new(Opcode::Mul, ty);
            mul.operands.extend([Value::Inst(q), bv]);
            mul.span = span;
            let mul = f.create_inst(mul);
            let pos = f.position(i).expect("a block instruction");
            f.insert_inst(b, pos, mul);
            let mut sub = InstData::new(Opcode::Sub, ty);
            sub.operands.extend([a, Value::Inst(mul)]);
            sub.span = span;
            sub.md = md;
            let sub = f.create_inst(sub);
            f.insert_inst(b, pos + 1, sub);
            f.replace_all_uses(Value::Inst(i), Value::Inst(sub));
            f.remove_inst(i);
            n += 1;
        }
        stack.push((b, mine, true));
        for &c in dom.children(b) {
            stack.push((c, Vec::new(), false));
        }
    }
    n
}
