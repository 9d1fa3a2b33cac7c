//! Turns a plan and a tape of random words into a kernel: the program
//! skeleton (inputs, structured or raw `if`s and counted loops, local
//! variables carrying values across regions, outputs) is fixed here; every
//! computed value comes from a [`Template`] of the plan, with its operands
//! taken from values already computed, and in safe mode each of the
//! template's `undefined` conditions guarded.
//!
//! Safe mode keeps every program inside the interpreter's defined
//! behaviour: divisions guarded, shift amounts masked, float-to-int
//! conversions clamped, indices constant and in bounds (templates), loops
//! counted (trip count 0..=3), every thread writing only its own output
//! slots, buffer reads at the thread's own index.

use std::collections::HashMap;

use serde_json::json;
use xir::interp::Inputs;
use xir::ir::{
    ArgKind, Block, Builder, FuncId, Function, FunctionKind, InstData, Metadata, Module, Opcode, SpecialRegister,
    TypeId, TypeTable, Value,
};

use super::guard;
use super::plan::{Plan, Slot, Template};
use super::universe::{Scalar, Ty};
use crate::programs::Program;

/// Elements of the input buffer `%inp`.
pub const INPUT_LEN: u32 = 16;
/// Output elements per thread in each of `%out_u` and `%out_f`.
pub const SLOTS: u32 = 16;
/// Threads per block of the generated kernel.
pub const BLOCK: u32 = 4;
/// Template instructions per program, at most.
const MAX_OPS: u32 = 48;

/// A stream of random words; zeros once it runs out.
pub struct Tape<'a> {
    words: &'a [u32],
    pos: usize,
}

impl<'a> Tape<'a> {
    pub fn new(words: &'a [u32]) -> Self {
        Tape { words, pos: 0 }
    }
    pub fn word(&mut self) -> u32 {
        let w = self.words.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        w
    }
    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.word() as usize % n.max(1)
    }
    pub fn done(&self) -> bool {
        self.pos >= self.words.len()
    }
}

/// Appends instructions to the current block of one function.
pub struct Emitter {
    pub m: Module,
    f: FuncId,
    cur: Block,
    ids: HashMap<Ty, TypeId>,
}

impl Emitter {
    pub fn id(&mut self, t: Ty) -> TypeId {
        if let Some(&id) = self.ids.get(&t) {
            return id;
        }
        let id = t.intern(&mut self.m.types);
        self.ids.insert(t, id);
        id
    }

    /// An instruction with a result of type `t`.
    pub fn op(&mut self, op: Opcode, t: Ty, ops: &[Value]) -> Value {
        let id = self.id(t);
        self.raw(op, id, ops, &[])
    }

    fn raw(&mut self, op: Opcode, ty: TypeId, ops: &[Value], blocks: &[Block]) -> Value {
        let mut b = Builder::new(&mut self.m, self.f);
        b.switch_to(self.cur);
        b.op(op, ty, ops, blocks)
    }

    /// A constant of `t` with every scalar leaf holding `bits`.
    pub fn splat(&mut self, t: Ty, bits: u64) -> Value {
        let leaves = vec![bits; t.leaves() as usize];
        self.constant(t, &leaves)
    }

    /// A constant of `t` from its scalar leaves (lanes; columns of rows).
    fn constant(&mut self, t: Ty, leaves: &[u64]) -> Value {
        let id = self.id(t);
        match t {
            Ty::Vec(..) => {
                let members = leaves.iter().map(|&b| self.scalar(t.scalar(), b)).collect();
                self.m.const_composite(id, members)
            }
            Ty::Mat(n) => {
                let col = Ty::Vec(Scalar::F32, n);
                let cols =
                    leaves.chunks(n as usize).map(|c| self.constant(col, c).as_const().expect("a constant")).collect();
                self.m.const_composite(id, cols)
            }
            _ => self.m.const_scalar(id, leaves[0]),
        }
    }

    fn scalar(&mut self, s: Scalar, bits: u64) -> xir::ir::Const {
        let id = self.id(s.ty());
        self.m.const_scalar(id, bits).as_const().expect("a constant")
    }

    fn block(&mut self) -> Block {
        self.m.func_mut(self.f).add_block()
    }

    /// A new `alloca` at the top of the entry block, stored `init` right after.
    fn local(&mut self, t: Ty, init: Value) -> Value {
        let id = self.id(t);
        let f = self.m.func_mut(self.f);
        let entry = f.body().expect("entry exists");
        let a = f.create_inst(InstData::new(Opcode::Alloca, id));
        f.insert_inst(entry, 0, a);
        let mut st = InstData::new(Opcode::Store, TypeTable::VOID);
        st.operands = [Value::Inst(a), init].into_iter().collect();
        let s = f.create_inst(st);
        f.insert_inst(entry, 1, s);
        Value::Inst(a)
    }

    fn store(&mut self, at: Value, v: Value) {
        self.raw(Opcode::Store, TypeTable::VOID, &[at, v], &[]);
    }

    fn load(&mut self, at: Value, t: Ty) -> Value {
        self.op(Opcode::Load, t, &[at])
    }

    fn term(&mut self, op: Opcode, ops: &[Value], blocks: &[Block]) {
        self.raw(op, TypeTable::VOID, ops, blocks);
    }
}

/// Whether the interpreter runs template `t` (on operands of all ones,
/// guarded): the verifier admits some signatures the interpreter refuses
/// (`cast.bitwise` between a vector and a matrix of equal storage size),
/// and a safe program must run. `Ok` for an opcode this build lacks.
pub(super) fn interpreter_runs(t: &Template) -> Result<(), String> {
    let Some(op) = Opcode::from_name(&t.name) else { return Ok(()) };
    let mut m = Module::new();
    m.intern_register_types();
    let mut f = Function::new(
        "main",
        FunctionKind::Kernel { block_size: [1, 1, 1], whole_blocks: false, noalias: false },
        TypeTable::VOID,
    );
    let entry = f.add_block();
    let kid = m.add_function(f);
    let mut e = Emitter { m, f: kid, cur: entry, ids: HashMap::new() };
    let mut ops = Vec::new();
    let mut tys = Vec::new();
    for s in &t.operands {
        let (ty, v) = match s {
            Slot::Value(ty) => {
                let one = match ty.scalar() {
                    Scalar::F32 => 1.0f32.to_bits() as u64,
                    _ => 1,
                };
                (*ty, e.splat(*ty, one))
            }
            Slot::Const(ty, values) => (*ty, e.splat(*ty, values.first().copied().unwrap_or(0))),
        };
        ops.push(v);
        tys.push(ty);
    }
    for u in &t.undefined {
        if let Some(g) = guard::lookup(u) {
            g.apply(&mut e, &tys, t.result, &mut ops);
        }
    }
    match t.result {
        Some(r) => {
            e.op(op, r, &ops);
        }
        None => {
            e.raw(op, TypeTable::VOID, &ops, &[]);
        }
    }
    e.term(Opcode::Return, &[], &[]);
    let inputs = Inputs::new().with_dispatch([1, 1, 1]);
    xir::interp::run_kernel(&e.m, kid, &inputs).map(|_| ()).map_err(|e| e.message)
}

/// A generated kernel, and the names of the templates it used in order.
/// A template whose opcode this build lacks (from a spec copy) is chosen
/// and recorded like any other, and a constant of its result type stands
/// in for its instruction (an `Opcode` cannot be made at run time).
pub struct Generated {
    pub program: Program,
    pub trace: Vec<String>,
}

struct Gen<'p, 't> {
    e: Emitter,
    plan: &'p Plan,
    safe: bool,
    tape: Tape<'t>,
    pool: Vec<(Ty, Value)>,
    vars: Vec<(Ty, Value)>,
    trace: Vec<String>,
    ops_left: u32,
    /// `%inp`, `%out_u`, `%out_f`, the thread index.
    io: [Value; 4],
}

/// The kernel of `plan` driven by `words`; `safe` guards undefined
/// behaviour. The dispatch is `BLOCK` or twice that; `input` fills `%inp`.
pub fn generate(plan: &Plan, words: &[u32], safe: bool, dispatch: u32, input: &[u32], scalar: u32) -> Generated {
    let mut m = Module::new();
    m.intern_register_types();
    let mut f = Function::new(
        "main",
        FunctionKind::Kernel { block_size: [BLOCK, 1, 1], whole_blocks: false, noalias: false },
        TypeTable::VOID,
    );
    let bu = m.types.buffer(TypeTable::U32);
    let bf = m.types.buffer(TypeTable::F32);
    let inp = f.add_arg(bu, ArgKind::Resource, Metadata::named("inp"));
    let out_u = f.add_arg(bu, ArgKind::Resource, Metadata::named("out_u"));
    let out_f = f.add_arg(bf, ArgKind::Resource, Metadata::named("out_f"));
    let s = f.add_arg(TypeTable::U32, ArgKind::Value, Metadata::named("s"));
    let entry = f.add_block();
    let kid = m.add_function(f);
    let e = Emitter { m, f: kid, cur: entry, ids: HashMap::new() };
    let mut g = Gen {
        e,
        plan,
        safe,
        tape: Tape::new(words),
        pool: Vec::new(),
        vars: Vec::new(),
        trace: Vec::new(),
        ops_left: MAX_OPS,
        io: [inp, out_u, out_f, inp],
    };
    g.seeds(s);
    g.stmts(0);
    g.outputs();
    g.e.term(Opcode::Return, &[], &[]);
    let n = (dispatch * SLOTS) as usize;
    let inputs = Inputs::new()
        .with_dispatch([dispatch, 1, 1])
        .with_arg("inp", json!(input))
        .with_arg("out_u", json!(vec![0u32; n]))
        .with_arg("out_f", json!(vec![0.0f32; n]))
        .with_arg("s", json!(scalar));
    Generated { program: Program { module: g.e.m, kernel: kid, inputs }, trace: g.trace }
}

impl Gen<'_, '_> {
    fn u32(&mut self, x: u32) -> Value {
        self.e.m.const_u32(x)
    }

    /// Inputs as the first values: the thread index, two input elements
    /// (at the thread's index and 8 past it: in bounds for `2 * BLOCK`
    /// threads), the scalar, and an `i32`, two `f32`s and a `bool` made of them.
    fn seeds(&mut self, s: Value) {
        let zero = self.u32(0);
        let tid = self.e.op(Opcode::Extract, Ty::U32, &[Value::Reg(SpecialRegister::DispatchId), zero]);
        self.io[3] = tid;
        let eight = self.u32(8);
        let t8 = self.e.op(Opcode::Add, Ty::U32, &[tid, eight]);
        let bu = self.e.m.types.buffer(TypeTable::U32);
        let _ = bu;
        let r0 = self.e.op(Opcode::BufferRead, Ty::U32, &[self.io[0], tid]);
        let r1 = self.e.op(Opcode::BufferRead, Ty::U32, &[self.io[0], t8]);
        let i = self.e.op(Opcode::CastBitwise, Ty::I32, &[r1]);
        let mask = self.u32(0xffff);
        let low = self.e.op(Opcode::BitAnd, Ty::U32, &[r0, mask]);
        let f0 = self.e.op(Opcode::CastStatic, Ty::F32, &[low]);
        let k = self.e.m.const_f32(0.0625);
        let f1 = self.e.op(Opcode::Mul, Ty::F32, &[f0, k]);
        let b = self.e.op(Opcode::Lt, Ty::Bool, &[r0, r1]);
        for (t, v) in [(Ty::U32, tid), (Ty::U32, r0), (Ty::U32, r1), (Ty::U32, s), (Ty::I32, i), (Ty::F32, f0)] {
            self.pool.push((t, v));
        }
        self.pool.push((Ty::F32, f1));
        self.pool.push((Ty::Bool, b));
    }

    fn stmts(&mut self, depth: u32) {
        let n = 1 + self.tape.below(6);
        for _ in 0..n {
            if self.ops_left == 0 || self.tape.done() {
                return;
            }
            let branches = self.plan.structured.is_some();
            match self.tape.below(16) {
                11 | 12 => self.keep(),
                13 if depth < 3 && branches => self.if_(depth),
                14 if depth < 2 && branches => self.loop_(depth),
                _ => self.template(),
            }
        }
    }

    /// Whether the pool has a value of every `Value` slot's type.
    fn available(&self, t: &Template) -> bool {
        t.operands.iter().all(|s| match s {
            Slot::Value(ty) => self.pool.iter().any(|p| p.0 == *ty),
            Slot::Const(..) => true,
        })
    }

    fn template(&mut self) {
        let plan = self.plan;
        if plan.templates.is_empty() {
            return;
        }
        self.ops_left -= 1;
        let mut t = &plan.templates[self.tape.below(plan.templates.len())];
        // Prefer templates whose operands exist already (chains of
        // computed values), but keep some that need constants: a rare
        // operand type would otherwise never be reached.
        for _ in 0..3 {
            if self.available(t) || self.tape.below(4) == 0 {
                break;
            }
            t = &plan.templates[self.tape.below(plan.templates.len())];
        }
        let mut ops = Vec::new();
        let mut tys = Vec::new();
        for s in &t.operands {
            match s {
                Slot::Value(ty) => {
                    ops.push(self.value(*ty));
                    tys.push(*ty);
                }
                Slot::Const(ty, values) => {
                    let v = values.get(self.tape.below(values.len())).copied().unwrap_or(0);
                    ops.push(self.e.splat(*ty, v));
                    tys.push(*ty);
                }
            }
        }
        if self.safe {
            for u in &t.undefined {
                if let Some(g) = guard::lookup(u) {
                    g.apply(&mut self.e, &tys, t.result, &mut ops);
                }
            }
        }
        self.trace.push(t.name.clone());
        let v = match (xir::ir::Opcode::from_name(&t.name), t.result) {
            (Some(op), Some(r)) => self.e.op(op, r, &ops),
            (Some(op), None) => {
                self.e.raw(op, TypeTable::VOID, &ops, &[]);
                return;
            }
            (None, Some(r)) => self.constant(r),
            (None, None) => return,
        };
        if let Some(r) = t.result {
            self.pool.push((r, v));
        }
    }

    /// A value of `t`: mostly one computed before (or a variable's), else a constant.
    fn value(&mut self, t: Ty) -> Value {
        let have: Vec<Value> = self.pool.iter().filter(|p| p.0 == t).map(|p| p.1).collect();
        let choice = self.tape.below(8);
        if choice == 0 {
            if let Some(&(_, at)) = self.vars.iter().find(|v| v.0 == t) {
                return self.e.load(at, t);
            }
        }
        if !have.is_empty() && choice != 1 {
            // Recent values are likelier: chains form.
            let k = self.tape.below(have.len().min(4));
            return have[have.len() - 1 - k];
        }
        self.constant(t)
    }

    fn constant(&mut self, t: Ty) -> Value {
        let leaves: Vec<u64> = (0..t.leaves())
            .map(|_| {
                let w = self.tape.word();
                match t.scalar() {
                    Scalar::Bool => (w & 1) as u64,
                    Scalar::I32 | Scalar::U32 if w.is_multiple_of(3) => (w >> 2) as u64 % 8,
                    Scalar::I32 | Scalar::U32 => w as u64,
                    Scalar::F32 => ((w % 4096) as f32 / 8.0 - 256.0).to_bits() as u64,
                }
            })
            .collect();
        self.e.constant(t, &leaves)
    }

    /// Store a computed value into the variable of its type.
    fn keep(&mut self) {
        if self.pool.is_empty() {
            return;
        }
        let (t, v) = self.pool[self.tape.below(self.pool.len())];
        match self.vars.iter().find(|x| x.0 == t) {
            Some(&(_, at)) => self.e.store(at, v),
            None => {
                let init = self.e.splat(t, 0);
                let at = self.e.local(t, init);
                self.e.store(at, v);
                self.vars.push((t, at));
            }
        }
    }

    fn cond(&mut self) -> Value {
        self.value(Ty::Bool)
    }

    /// Run `body` in a new region: values it computes stay inside.
    fn region(&mut self, depth: u32) {
        let mark = self.pool.len();
        self.stmts(depth + 1);
        self.pool.truncate(mark);
    }

    fn if_(&mut self, depth: u32) {
        let c = self.cond();
        let (t, f, m) = (self.e.block(), self.e.block(), self.e.block());
        if self.plan.structured == Some(true) {
            self.e.term(Opcode::If, &[c], &[t, f, m]);
        } else {
            self.e.term(Opcode::CondBr, &[c], &[t, f]);
        }
        for arm in [t, f] {
            self.e.cur = arm;
            self.region(depth);
            self.e.term(Opcode::Br, &[], &[m]);
        }
        self.e.cur = m;
    }

    /// A counted loop of 0..=3 trips; the counter steps in the update block
    /// (structured) or at the end of the body (raw).
    fn loop_(&mut self, depth: u32) {
        let n = self.tape.below(4) as u32;
        let zero = self.u32(0);
        let ctr = self.e.local(Ty::U32, zero);
        self.e.store(ctr, zero);
        let n = self.u32(n);
        let one = self.u32(1);
        let (p, b, u, m) = (self.e.block(), self.e.block(), self.e.block(), self.e.block());
        if self.plan.structured == Some(true) {
            self.e.term(Opcode::Loop, &[], &[p, b, u, m]);
        } else {
            self.e.term(Opcode::Br, &[], &[p]);
        }
        self.e.cur = p;
        let k = self.e.load(ctr, Ty::U32);
        let more = self.e.op(Opcode::Lt, Ty::Bool, &[k, n]);
        self.e.term(Opcode::CondBr, &[more], &[b, m]);
        self.e.cur = u;
        let k = self.e.load(ctr, Ty::U32);
        let k1 = self.e.op(Opcode::Add, Ty::U32, &[k, one]);
        self.e.store(ctr, k1);
        self.e.term(Opcode::Br, &[], &[p]);
        self.e.cur = b;
        self.region(depth);
        self.e.term(Opcode::Br, &[], &[u]);
        self.e.cur = m;
    }

    /// Write every variable and the last computed values, leaf by leaf,
    /// to this thread's output slots.
    fn outputs(&mut self) {
        let mut vals: Vec<(Ty, Value)> = Vec::new();
        for (t, at) in self.vars.clone() {
            let v = self.e.load(at, t);
            vals.push((t, v));
        }
        let n = self.pool.len();
        vals.extend(self.pool[n.saturating_sub(6)..].iter().copied());
        let mut slots = [0u32; 2];
        for (t, v) in vals {
            for (s, leaf) in self.leaves(t, v) {
                let buf = usize::from(s == Scalar::F32);
                if slots[buf] >= SLOTS {
                    continue;
                }
                let x = match s {
                    Scalar::U32 | Scalar::F32 => leaf,
                    Scalar::I32 => self.e.op(Opcode::CastBitwise, Ty::U32, &[leaf]),
                    Scalar::Bool => self.e.op(Opcode::CastStatic, Ty::U32, &[leaf]),
                };
                let (stride, k) = (self.u32(SLOTS), self.u32(slots[buf]));
                let base = self.e.op(Opcode::Mul, Ty::U32, &[self.io[3], stride]);
                let at = self.e.op(Opcode::Add, Ty::U32, &[base, k]);
                self.e.raw(Opcode::BufferWrite, TypeTable::VOID, &[self.io[1 + buf], at, x], &[]);
                slots[buf] += 1;
            }
        }
    }

    /// The scalar leaves of `v`, extracted with constant indices.
    fn leaves(&mut self, t: Ty, v: Value) -> Vec<(Scalar, Value)> {
        let s = t.scalar();
        match t {
            Ty::Vec(_, n) => (0..n as u32)
                .map(|j| {
                    let j = self.u32(j);
                    (s, self.e.op(Opcode::Extract, s.ty(), &[v, j]))
                })
                .collect(),
            Ty::Mat(n) => {
                let mut out = Vec::new();
                for c in 0..n as u32 {
                    for r in 0..n as u32 {
                        let (c, r) = (self.u32(c), self.u32(r));
                        out.push((s, self.e.op(Opcode::Extract, Ty::F32, &[v, c, r])));
                    }
                }
                out
            }
            _ => vec![(s, v)],
        }
    }
}
