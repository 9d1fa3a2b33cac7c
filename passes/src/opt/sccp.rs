//! `sccp`: sparse conditional constant propagation (Wegman–Zadeck) over SSA
//! with Phis. Values start undefined (`Top`), become a constant, or
//! overdefined (`Bottom`); blocks become executable only along edges whose
//! branch condition may take that way, and a Phi meets only the incomings of
//! executable edges. This finds constants that folding instruction by
//! instruction cannot: a loop-carried Phi that never changes, a value that is
//! constant because the other arm of a branch never runs.
//!
//! Constants fold with the interpreter's arithmetic
//! (`xir::interp::fold_scalar`): what the interpreter reports as an error, and
//! transcendental or convergent operations, are overdefined. At the fixed
//! point, every value of an executable block that is a constant is replaced
//! by it (and deleted), and a branch (`cond_br`, `br_indexed`, `if`,
//! `switch`) whose selector is a constant gets the constant as its operand;
//! removing the dead arm is left to `dce`, so the pass never changes the CFG
//! and keeps every dialect.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops`.

use smallvec::SmallVec;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Block, FuncId, Function, Inst, Module, Opcode, TypeTable, Value};
use xir_spec::Trait;

const INFO: PassInfo = PassInfo {
    name: "sccp",
    doc: "Sparse conditional constant propagation over SSA with Phis; constant branch selectors",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &[],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

#[derive(Default)]
pub struct Sccp;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<Sccp>(INFO)
}

impl Pass for Sccp {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut values, mut branches) = (0, 0);
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            let (v, b) = sccp_function(module, fid);
            values += v;
            branches += b;
        }
        let mut out = PassOutcome::changed(values + branches > 0);
        out.stats.push(("constant_values".into(), values.to_string()));
        out.stats.push(("constant_branches".into(), branches.to_string()));
        Ok(out)
    }
}

/// The lattice of a value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Lat {
    Top,
    Const(u64),
    Bottom,
}

fn meet(a: Lat, b: Lat) -> Lat {
    match (a, b) {
        (Lat::Top, x) | (x, Lat::Top) => x,
        (Lat::Const(x), Lat::Const(y)) if x == y => a,
        _ => Lat::Bottom,
    }
}

struct State<'a> {
    m: &'a Module,
    f: &'a Function,
    /// Per instruction id.
    lat: Vec<Lat>,
    /// Per block id, the predecessors whose edge into it is executable.
    /// (A hash set of edges was a random access per edge and per Phi
    /// incoming on large functions; these lists sit next to the block.)
    exec_in: Vec<SmallVec<[Block; 2]>>,
    /// Executable, per block id.
    blocks: Vec<bool>,
}

impl State<'_> {
    fn val(&self, v: Value) -> Lat {
        match v {
            Value::Inst(i) => self.lat.get(i.index()).copied().unwrap_or(Lat::Top),
            Value::Const(_) => self.m.const_bits(v).map_or(Lat::Bottom, Lat::Const),
            _ => Lat::Bottom,
        }
    }

    fn eval(&self, b: Block, i: Inst) -> Lat {
        let d = self.f.inst(i);
        if d.opcode == Opcode::Phi {
            let mut acc = Lat::Top;
            for (k, &v) in d.operands.iter().enumerate() {
                if d.blocks.get(k).is_some_and(|p| self.exec_in[b.index()].contains(p)) {
                    acc = meet(acc, self.val(v));
                }
            }
            return acc;
        }
        let spec = xir_spec::spec().op(d.opcode);
        let types = &self.m.types;
        if !spec.has(Trait::Pure)
            || spec.has(Trait::Convergent)
            || spec.has(Trait::Transcendental)
            || spec.has(Trait::Lvalue)
            || !d.blocks.is_empty()
            || !types.is_scalar(d.ty)
            || d.operands.is_empty()
        {
            return Lat::Bottom;
        }
        if d.opcode == Opcode::Select && types.is_bool(self.f.value_type(self.m, d.operands[0])) {
            return match self.val(d.operands[0]) {
                Lat::Top => Lat::Top,
                Lat::Const(c) => self.val(d.operands[if c & 1 == 1 { 1 } else { 2 }]),
                Lat::Bottom => meet(self.val(d.operands[1]), self.val(d.operands[2])),
            };
        }
        let mut bits: SmallVec<[u64; 4]> = SmallVec::new();
        let mut top = false;
        for &v in &d.operands {
            match self.val(v) {
                Lat::Bottom => return Lat::Bottom,
                Lat::Top => top = true,
                Lat::Const(c) => bits.push(c),
            }
        }
        if top {
            return Lat::Top;
        }
        let op_ty = self.f.value_type(self.m, d.operands[0]);
        xir::interp::fold_scalar(types, d.opcode, op_ty, d.ty, &bits).map_or(Lat::Bottom, Lat::Const)
    }

    /// The successors of `b` its terminator may take, given the lattice.
    fn feasible(&self, t: Inst) -> SmallVec<[Block; 2]> {
        let d = self.f.inst(t);
        let all = || SmallVec::from_slice(d.successor_slice());
        match d.opcode {
            Opcode::CondBr | Opcode::If => match self.val(d.operands[0]) {
                Lat::Top => SmallVec::new(),
                Lat::Const(c) => smallvec::smallvec![if c & 1 == 1 { d.blocks[0] } else { d.blocks[1] }],
                Lat::Bottom => all(),
            },
            Opcode::Switch | Opcode::BrIndexed => match self.val(d.operands[0]) {
                Lat::Top => SmallVec::new(),
                Lat::Const(bits) => {
                    let w = self.m.types.scalar_bits(self.f.value_type(self.m, d.operands[0]));
                    let mask = if w >= 64 || w == 0 { u64::MAX } else { (1u64 << w) - 1 };
                    // switch: [merge, default, cases..]; br_indexed: [default, cases..]
                    let first = usize::from(d.opcode == Opcode::Switch);
                    let pos = self.f.cases(t).iter().position(|&c| c & mask == bits & mask);
                    smallvec::smallvec![match pos {
                        Some(k) => d.blocks[first + 1 + k],
                        None => d.blocks[first],
                    }]
                }
                Lat::Bottom => all(),
            },
            _ => all(),
        }
    }
}

/// Run SCCP on one function; returns (values replaced, branches given a
/// constant selector).
fn sccp_function(m: &mut Module, fid: FuncId) -> (usize, usize) {
    let f = m.func(fid);
    let entry = f.body().expect("has a body");
    let mut st = State {
        m,
        f,
        lat: vec![Lat::Top; f.inst_capacity()],
        exec_in: vec![SmallVec::new(); f.block_capacity()],
        blocks: vec![false; f.block_capacity()],
    };
    st.blocks[entry.index()] = true;
    // Iterate in layout order to the fixed point (the lattice only descends).
    loop {
        let mut changed = false;
        let mut walk = f.walk(f.blocks(), xir::reads::BlockInsts);
        while let Some(b) = walk.next(f) {
            if !st.blocks[b.index()] {
                continue;
            }
            for &i in f.block(b).insts() {
                let d = f.inst(i);
                if d.ty != TypeTable::VOID {
                    let old = st.lat[i.index()];
                    let new = match (old, st.eval(b, i)) {
                        (Lat::Top, n) => n,
                        (o, Lat::Top) => o,
                        (o, n) if o == n => o,
                        _ => Lat::Bottom,
                    };
                    if new != old {
                        st.lat[i.index()] = new;
                        changed = true;
                    }
                }
                if d.is_terminator() {
                    for s in st.feasible(i) {
                        let Some(into) = st.exec_in.get_mut(s.index()) else { continue };
                        if !into.contains(&b) {
                            into.push(b);
                            changed = true;
                        }
                        st.blocks[s.index()] = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    // Rewrite.
    let mut consts: Vec<(Inst, u64)> = Vec::new();
    let mut selectors: Vec<(Inst, u64)> = Vec::new();
    let mut walk = f.walk(f.blocks(), xir::reads::BlockInsts);
    while let Some(b) = walk.next(f) {
        if !st.blocks[b.index()] {
            continue;
        }
        for &i in f.block(b).insts() {
            let d = f.inst(i);
            if d.is_terminator() {
                if matches!(d.opcode, Opcode::CondBr | Opcode::If | Opcode::Switch | Opcode::BrIndexed)
                    && d.operands[0].as_const().is_none()
                {
                    if let Lat::Const(c) = st.val(d.operands[0]) {
                        selectors.push((i, c));
                    }
                }
            } else if let Lat::Const(c) = st.lat[i.index()] {
                if m.types.is_scalar(d.ty) {
                    consts.push((i, c));
                }
            }
        }
    }
    let mut dead = Vec::new();
    for &(i, c) in &consts {
        let ty = m.func(fid).inst(i).ty;
        let v = m.const_scalar(ty, c);
        m.func_mut(fid).replace_all_uses(Value::Inst(i), v);
        dead.push(i);
    }
    for &(t, c) in &selectors {
        let f = m.func(fid);
        let sel = f.inst(t).operands[0];
        let ty = f.value_type(m, sel);
        let v = m.const_scalar(ty, c);
        m.func_mut(fid).set_operand(t, 0, v);
    }
    m.func_mut(fid).remove_insts(&dead);
    (consts.len(), selectors.len())
}
