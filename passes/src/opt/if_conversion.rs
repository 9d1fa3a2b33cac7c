//! `if_conversion`: turn small diamonds and triangles whose arms only
//! compute into straight-line code with `select`.
//!
//! A *diamond* is a header ending in `if %c, true ^t, false ^f, merge ^m`
//! (or, in a function without structured control flow, `cond_br %c, true
//! ^t, false ^f`) whose arms each have the header as only predecessor, end
//! with `br target ^m`, and are the only predecessors of `^m`. A *triangle*
//! has one arm only (`if %c, true ^t, false ^m, merge ^m`). The arms'
//! instructions move into the header, each Phi of `^m` becomes
//! `select %c, <true value>, <false value>`, the header ends in `br target
//! ^m`, the arms are deleted, and `^m` is merged into the header when
//! nothing else names it.
//!
//! Speculation must not change results, so an arm qualifies only when every
//! instruction is `pure`, not `convergent`, not an address, not fp8 (the
//! interpreter rejects fp8 arithmetic), has no operand that may be undefined
//! (an `undef` or a Phi with an `undef` incoming: arithmetic on it is an
//! error), divides integers only by a non-zero constant, and indexes
//! aggregates only by constants. Option `stores` (default on) also converts
//! diamonds whose arms store to the same local variables (`alloca`, at most
//! once each, no other memory access): each becomes one `store` of a
//! `select` — the stores are to distinct private variables, so their order
//! does not matter. Option `min_max` (default on) writes an integer select
//! of the two operands of its own comparison as `min` / `max`
//! (`x < y ? x : y` is `min(x, y)`; not for floats: NaN and signed zeros
//! differ). `max_speculated` (default 8) bounds the instructions hoisted per
//! conversion.
//!
//! Needs no raw CFG: structured `if`s are converted in every dialect and
//! keep the dialect's invariants (an `if` becomes a `br`, which every
//! structured dialect allows); raw `cond_br` diamonds are converted only in
//! functions with no structured terminator.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: nothing (the CFG changes).

use rustc_hash::FxHashMap;
use serde::Deserialize;
use xir::analysis::Cfg;
use xir::pass::{OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{
    Block, FloatFormat, FuncId, Function, Inst, InstData, Module, Opcode, Trait, Type, TypeId, TypeTable, Value,
};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Most instructions hoisted out of the arms per conversion.
    pub max_speculated: usize,
    /// Convert diamonds whose arms store to the same local variables.
    pub stores: bool,
    /// Integer selects of their comparison's operands become min / max.
    pub min_max: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_speculated: 8, stores: true, min_max: true }
    }
}

const INFO: PassInfo = PassInfo {
    name: "if_conversion",
    doc: "Turn small diamonds / triangles with side-effect-free arms into select (and integer min / max)",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["if", "cond_br"],
    preserves: &[],
};

const OPTIONS: &[OptionDoc] = &[
    OptionDoc {
        name: "max_speculated",
        ty: "usize",
        default: "8",
        doc: "instructions hoisted per conversion, at most",
    },
    OptionDoc {
        name: "stores",
        ty: "bool",
        default: "true",
        doc: "also convert diamonds whose arms store the same local variables",
    },
    OptionDoc {
        name: "min_max",
        ty: "bool",
        default: "true",
        doc: "integer selects of compared operands become min/max",
    },
];

pub struct IfConversion {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(IfConversion { opts: xir::pass::options_from_ron(v)? })),
    }
}

#[derive(Default)]
struct Stats {
    converted: usize,
    selects: usize,
    min_max: usize,
    stores: usize,
    merged: usize,
}

impl Pass for IfConversion {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut st = Stats::default();
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            // Inner diamonds first: a converted one can make its enclosing
            // arm straight-line, so repeat until nothing converts.
            while convert_one(module, fid, &self.opts, &mut st) {}
        }
        let mut out = PassOutcome::changed(st.converted > 0);
        out.stats.push(("converted".into(), st.converted.to_string()));
        out.stats.push(("selects".into(), st.selects.to_string()));
        out.stats.push(("min_max".into(), st.min_max.to_string()));
        out.stats.push(("stores".into(), st.stores.to_string()));
        out.stats.push(("merged_blocks".into(), st.merged.to_string()));
        Ok(out)
    }
}

/// A convertible shape.
struct Shape {
    head: Block,
    term: Inst,
    cond: Value,
    /// The arm taken when `cond` is true / false (`None`: the edge goes
    /// straight from the header to the merge).
    t: Option<Block>,
    e: Option<Block>,
    merge: Block,
}

/// Which instructions name each block (in `blocks` lists).
fn block_refs(f: &Function) -> FxHashMap<Block, Vec<Inst>> {
    let mut r: FxHashMap<Block, Vec<Inst>> = FxHashMap::default();
    for (_, i) in f.all_insts() {
        for &b in &f.inst(i).blocks {
            r.entry(b).or_default().push(i);
        }
    }
    r
}

/// The block an arm jumps to, when it ends in a plain `br`.
fn br_target(f: &Function, b: Block) -> Option<Block> {
    let t = f.terminator(b)?;
    let d = f.inst(t);
    (d.opcode == Opcode::Br).then(|| d.blocks[0])
}

fn shape_of(f: &Function, cfg: &Cfg, head: Block, structured_fn: bool) -> Option<Shape> {
    let term = f.terminator(head)?;
    let d = f.inst(term);
    let (cond, tt, ff) = match d.opcode {
        Opcode::If => (d.operands[0], d.blocks[0], d.blocks[1]),
        Opcode::CondBr if !structured_fn => (d.operands[0], d.blocks[0], d.blocks[1]),
        _ => return None,
    };
    if tt == ff || tt == head || ff == head {
        return None;
    }
    let arm_ok = |a: Block| cfg.preds(a) == [head];
    let (t, e, merge) = if br_target(f, tt) == Some(ff) && arm_ok(tt) {
        (Some(tt), None, ff)
    } else if br_target(f, ff) == Some(tt) && arm_ok(ff) {
        (None, Some(ff), tt)
    } else {
        let m = br_target(f, tt)?;
        if br_target(f, ff) != Some(m) || !arm_ok(tt) || !arm_ok(ff) {
            return None;
        }
        (Some(tt), Some(ff), m)
    };
    if d.opcode == Opcode::If && d.blocks[2] != merge {
        return None;
    }
    if Some(merge) == f.body() || merge == head {
        return None;
    }
    let mut want: Vec<Block> = [t.unwrap_or(head), e.unwrap_or(head)].to_vec();
    let mut got = cfg.preds(merge).to_vec();
    want.sort();
    got.sort();
    (want == got).then_some(Shape { head, term, cond, t, e, merge })
}

fn is_fp8(m: &Module, ty: TypeId) -> bool {
    matches!(m.types.get(m.types.scalar_of(ty)), Type::Float(FloatFormat::E4M3 | FloatFormat::E5M2))
}

/// An `undef`, or a Phi that may carry one: arithmetic on it is an error.
fn maybe_undef(f: &Function, v: Value) -> bool {
    match v {
        Value::Undef(_) => true,
        Value::Inst(i) if f.opcode(i) == Opcode::Phi => f.inst(i).operands.iter().any(|o| matches!(o, Value::Undef(_))),
        _ => false,
    }
}

/// Whether `i` may run although its arm would not have.
fn speculatable(m: &Module, f: &Function, i: Inst) -> bool {
    let d = f.inst(i);
    if !d.has(Trait::Pure) || d.has(Trait::Convergent) || d.has(Trait::Lvalue) || !d.blocks.is_empty() {
        return false;
    }
    if d.ty == TypeTable::VOID || is_fp8(m, d.ty) {
        return false;
    }
    if d.operands.iter().any(|&v| is_fp8(m, f.value_type(m, v)) || maybe_undef(f, v) || f.is_lvalue(v)) {
        return false;
    }
    let all_const = |vs: &[Value]| vs.iter().all(|v| v.as_const().is_some());
    match d.opcode {
        Opcode::Div | Opcode::Mod if m.types.is_int(m.types.scalar_of(d.ty)) => {
            m.const_int_value(d.operands[1]).is_some_and(|c| c != 0)
        }
        Opcode::Extract | Opcode::Shuffle => all_const(&d.operands[1..]),
        Opcode::Insert => all_const(&d.operands[2..]),
        _ => true,
    }
}

/// The stores of an arm (address, value) if the arm qualifies; `None`
/// otherwise. Every other instruction must be speculatable.
fn arm_stores(m: &Module, f: &Function, arm: Block, allow_stores: bool) -> Option<Vec<(Value, Value)>> {
    let mut stores = Vec::new();
    let insts = f.block(arm).insts();
    for &i in &insts[..insts.len() - 1] {
        let d = f.inst(i);
        if d.opcode == Opcode::Store && allow_stores {
            let (a, v) = (d.operands[0], d.operands[1]);
            let ai = a.as_inst()?;
            let ad = f.inst(ai);
            if ad.opcode != Opcode::Alloca
                || f.parent(ai) == Some(arm)
                || stores.iter().any(|s: &(Value, Value)| s.0 == a)
            {
                return None;
            }
            let ty = f.value_type(m, v);
            if !(m.types.is_scalar(ty) || matches!(m.types.get(ty), Type::Vector { .. })) {
                return None;
            }
            stores.push((a, v));
        } else if !speculatable(m, f, i) {
            return None;
        }
    }
    Some(stores)
}

fn count_hoisted(f: &Function, arm: Option<Block>) -> usize {
    arm.map(|a| {
        let insts = f.block(a).insts();
        insts[..insts.len() - 1].iter().filter(|&&i| f.opcode(i) != Opcode::Store).count()
    })
    .unwrap_or(0)
}

/// Find and convert one shape; false when none is left.
fn convert_one(m: &mut Module, fid: FuncId, opts: &Options, st: &mut Stats) -> bool {
    let f = m.func(fid);
    let structured_fn = f.all_insts().any(|(_, i)| f.inst(i).has(Trait::Structured));
    let refs = block_refs(f);
    let cfg = Cfg::compute(f);
    for &head in &cfg.rpo {
        let Some(s) = shape_of(f, &cfg, head, structured_fn) else { continue };
        // The arms may be named only by the branch and by Phis of the merge.
        let only_here = |a: Block| {
            refs.get(&a).is_none_or(|us| {
                us.iter().all(|&u| u == s.term || (f.opcode(u) == Opcode::Phi && f.parent(u) == Some(s.merge)))
            })
        };
        if !s.t.is_none_or(only_here) || !s.e.is_none_or(only_here) {
            continue;
        }
        let diamond = s.t.is_some() && s.e.is_some();
        let st_t = match s.t {
            Some(a) => arm_stores(m, f, a, opts.stores && diamond),
            None => Some(Vec::new()),
        };
        let st_e = match s.e {
            Some(a) => arm_stores(m, f, a, opts.stores && diamond),
            None => Some(Vec::new()),
        };
        let (Some(st_t), Some(st_e)) = (st_t, st_e) else { continue };
        // Both arms store the same variables (in any order).
        if st_t.len() != st_e.len() || st_t.iter().any(|(a, _)| !st_e.iter().any(|(b, _)| a == b)) {
            continue;
        }
        if count_hoisted(f, s.t) + count_hoisted(f, s.e) > opts.max_speculated {
            continue;
        }
        // Phis of the merge: incomings from both sides.
        let from_t = s.t.unwrap_or(head);
        let from_e = s.e.unwrap_or(head);
        let mut phis = Vec::new();
        let mut ok = true;
        for &i in f.block(s.merge).insts() {
            let d = f.inst(i);
            if d.opcode != Opcode::Phi {
                continue;
            }
            let pick = |b: Block| d.blocks.iter().position(|&x| x == b).map(|k| d.operands[k]);
            match (pick(from_t), pick(from_e), d.operands.len()) {
                (Some(a), Some(b), 2) => phis.push((i, a, b)),
                _ => ok = false,
            }
            let ty = d.ty;
            if !(m.types.is_scalar(ty) || matches!(m.types.get(ty), Type::Vector { .. })) {
                ok = false;
            }
        }
        if !ok {
            continue;
        }
        let stores: Vec<(Value, Value, Value)> =
            st_t.iter().map(|&(a, vt)| (a, vt, st_e.iter().find(|(b, _)| *b == a).expect("same set").1)).collect();
        convert(m, fid, &s, &phis, &stores, opts, st);
        return true;
    }
    false
}

/// The select (or min / max) of `a` (cond true) and `b`, placed before the
/// header's terminator.
fn emit_select(m: &mut Module, fid: FuncId, s: &Shape, a: Value, b: Value, opts: &Options, st: &mut Stats) -> Value {
    if a == b {
        return a;
    }
    let f = m.func(fid);
    let ty = f.value_type(m, a);
    let mut op = Opcode::Select;
    let mut operands = vec![s.cond, a, b];
    if opts.min_max && m.types.is_int(ty) {
        if let Some(ci) = s.cond.as_inst() {
            let cd = f.inst(ci);
            let less = match cd.opcode {
                Opcode::Lt | Opcode::Le => Some(true),
                Opcode::Gt | Opcode::Ge => Some(false),
                _ => None,
            };
            if let Some(less) = less {
                let (x, y) = (cd.operands[0], cd.operands[1]);
                // x < y ? x : y = min; x < y ? y : x = max (ties give equal values).
                let same = (a, b) == (x, y);
                if same || (a, b) == (y, x) {
                    op = if less == same { Opcode::Min } else { Opcode::Max };
                    operands = vec![x, y];
                    st.min_max += 1;
                }
            }
        }
    }
    let mut d = InstData::new(op, ty);
    d.operands = operands.into_iter().collect();
    d.span = m.func(fid).inst_span(s.term);
    let f = m.func_mut(fid);
    st.selects += 1;
    Value::Inst(f.insert_before_terminator(s.head, d))
}

fn convert(
    m: &mut Module,
    fid: FuncId,
    s: &Shape,
    phis: &[(Inst, Value, Value)],
    stores: &[(Value, Value, Value)],
    opts: &Options,
    st: &mut Stats,
) {
    // Hoist the arms' computations (not their stores or branches).
    for arm in [s.t, s.e].into_iter().flatten() {
        let insts = m.func(fid).block(arm).insts().to_vec();
        for &i in &insts[..insts.len() - 1] {
            let f = m.func_mut(fid);
            if f.opcode(i) == Opcode::Store {
                continue;
            }
            let pos = f.block(s.head).insts().len() - 1;
            f.move_inst(i, s.head, pos);
        }
    }
    for &(p, a, b) in phis {
        let v = emit_select(m, fid, s, a, b, opts, st);
        let f = m.func_mut(fid);
        f.replace_all_uses(Value::Inst(p), v);
        f.remove_inst(p);
    }
    for &(addr, a, b) in stores {
        let v = emit_select(m, fid, s, a, b, opts, st);
        let mut d = InstData::new(Opcode::Store, TypeTable::VOID);
        d.operands.extend([addr, v]);
        d.span = m.func(fid).inst_span(s.term);
        m.func_mut(fid).insert_before_terminator(s.head, d);
        st.stores += 1;
    }
    let f = m.func_mut(fid);
    for arm in [s.t, s.e].into_iter().flatten() {
        f.remove_block(arm);
    }
    let span = f.inst_span(s.term);
    f.remove_inst(s.term);
    let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
    br.blocks.push(s.merge);
    br.span = span;
    let br = f.append_inst(s.head, br);
    st.converted += 1;
    // Merge `^m` into the header when only Phis (as an incoming block) and
    // the new branch name it.
    let refs = block_refs(f);
    let named_elsewhere =
        refs.get(&s.merge).is_some_and(|us| us.iter().any(|&u| u != br && f.opcode(u) != Opcode::Phi));
    if named_elsewhere {
        return;
    }
    f.remove_inst(br);
    for i in f.block(s.merge).insts().to_vec() {
        let pos = f.block(s.head).insts().len();
        f.move_inst(i, s.head, pos);
    }
    if let Some(us) = refs.get(&s.merge) {
        for &u in us {
            if f.opcode(u) == Opcode::Phi {
                f.retarget(u, s.merge, s.head);
            }
        }
    }
    f.remove_block(s.merge);
    st.merged += 1;
}
