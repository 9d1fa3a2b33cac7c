//! Random well-formed modules for the round-trip tests of the text and JSON
//! formats (and anything else that wants varied, verifier-clean IR).
//!
//! A module has several functions (kernels, callables, externs) calling each
//! other along an acyclic call graph; every scalar type, vectors, matrices,
//! arrays and structs; resource arguments; constants with the awkward bit
//! patterns (NaN payloads, -0.0, infinities, subnormals, f16/fp8 bits,
//! 64-bit extremes); structured control flow (if, switch on signed and
//! unsigned 32/64-bit selectors, loop, simple_loop, break/continue) and raw
//! control flow with phi and br_indexed; and metadata (duplicate and odd
//! names, comments, locations, spill tags), plus removed instructions and
//! blocks so that compaction is exercised. Generation is a deterministic
//! function of a seed, so a failing case reproduces from its seed.

use crate::SplitMix64;
use proptest::prelude::*;
use smallvec::SmallVec;
use xir_spec::{Opcode, SpecialRegister};

use xir::ir::{
    ArgKind, Block, FloatFormat, FuncId, Function, FunctionKind, Inst, InstData, Location, Metadata, Module, Payload,
    SpillKind, Type, TypeId, TypeTable, Value,
};

/// A proptest strategy of random well-formed modules.
pub fn modules() -> impl Strategy<Value = Module> {
    (any::<u64>(), 1usize..6, 1usize..24).prop_map(|(seed, functions, budget)| generate(seed, functions, budget))
}

/// The module for `seed`: `functions` functions, about `budget` statements
/// per region.
pub fn generate(seed: u64, functions: usize, budget: usize) -> Module {
    let mut g = Gen { rng: Rng(SplitMix64(seed ^ 0x9e37_79b9_7f4a_7c15)), m: Module::new(), sigs: Vec::new() };
    g.m.intern_register_types();
    g.module(functions.max(1), budget.max(1));
    g.m
}

/// Random choices over SplitMix64 (one stream per seed).
struct Rng(SplitMix64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

const NAMES: &[&str] = &["x", "y", "acc", "tmp", "v", "x.1", "9lives", "a-b", "é"];
const BLOCK_NAMES: &[&str] = &["then", "else", "merge", "body", "loop", "exit", "bb0", "bb1"];
const COMMENTS: &[&str] = &["note", "", "  indented", "two\nlines", "a // nested", "tab\there"];

/// A function's signature, decided before any body is built.
struct Sig {
    kind: FunctionKind,
    rank: usize,
}

struct Gen {
    rng: Rng,
    m: Module,
    sigs: Vec<Sig>,
}

/// What dominates the current program point.
struct Cx {
    f: FuncId,
    pool: Vec<(Value, TypeId)>,
}

impl Gen {
    fn scalar(&mut self) -> TypeId {
        let t = match self.rng.below(14) {
            0 => Type::Bool,
            k @ 1..=8 => Type::Int { bits: [8, 16, 32, 64][(k - 1) / 2], signed: k % 2 == 1 },
            9 => Type::Float(FloatFormat::F16),
            10 => Type::Float(FloatFormat::F32),
            11 => Type::Float(FloatFormat::F64),
            12 => Type::Float(FloatFormat::E4M3),
            _ => Type::Float(FloatFormat::E5M2),
        };
        self.m.types.intern(t)
    }

    /// A numeric (arithmetic-capable) scalar or vector type.
    fn numeric(&mut self) -> TypeId {
        let s = loop {
            let s = self.scalar();
            if self.m.types.has_class(s, "numeric") {
                break s;
            }
        };
        if self.rng.chance(25) {
            let lanes = 2 + self.rng.below(3) as u8;
            self.m.types.vector(s, lanes)
        } else {
            s
        }
    }

    /// A data type (can live in memory), nested up to `depth`.
    fn data(&mut self, depth: u32) -> TypeId {
        match if depth == 0 { 0 } else { self.rng.below(6) } {
            1 => {
                let s = self.scalar();
                let lanes = 2 + self.rng.below(3) as u8;
                self.m.types.vector(s, lanes)
            }
            2 => {
                let f = self.rng.pick(&[FloatFormat::F16, FloatFormat::F32, FloatFormat::F64]);
                let e = self.m.types.float(f);
                let dim = 2 + self.rng.below(3) as u8;
                self.m.types.matrix(e, dim)
            }
            3 => {
                let e = self.data(depth - 1);
                let len = 1 + self.rng.below(3) as u64;
                self.m.types.array(e, len)
            }
            4 => {
                let n = 1 + self.rng.below(3);
                let fields = (0..n).map(|_| self.data(depth - 1)).collect();
                let align = self.rng.pick(&[4, 8, 16]);
                self.m.types.intern(Type::Struct { fields, align })
            }
            _ => self.scalar(),
        }
    }

    fn scalar_bits(&mut self, ty: TypeId) -> u64 {
        let r = self.rng.next();
        match self.m.types.get(ty).clone() {
            Type::Bool => r & 1,
            Type::Int { bits, signed } => {
                let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
                let min = if signed { 1u64 << (bits - 1) } else { 0 };
                let max = if signed { min - 1 } else { mask };
                self.rng.pick(&[0, 1, mask, min, max, r & mask, r & 0xff])
            }
            Type::Float(FloatFormat::F32) => {
                let specials = [0x8000_0000u32, 0x7fc0_0001, 0xffbf_ffff, 0x7f80_0000, 0xff80_0000, 1, 0x3fc0_0000];
                if self.rng.chance(30) {
                    r & 0xffff_ffff
                } else {
                    self.rng.pick(&specials) as u64
                }
            }
            Type::Float(FloatFormat::F64) => {
                let specials = [1u64 << 63, 0x7ff8_0000_0000_0001, 0x7ff0_0000_0000_0000, 1, 0x3ff8_0000_0000_0000];
                if self.rng.chance(30) {
                    r
                } else {
                    self.rng.pick(&specials)
                }
            }
            Type::Float(FloatFormat::F16) => r & 0xffff,
            Type::Float(_) => r & 0xff,
            _ => 0,
        }
    }

    /// A constant of any data type.
    fn constant(&mut self, ty: TypeId) -> Value {
        let members: Vec<TypeId> = match self.m.types.get(ty).clone() {
            Type::Vector { elem, lanes } => vec![elem; lanes as usize],
            Type::Matrix { elem, dim } => {
                let col = self.m.types.vector(elem, dim);
                vec![col; dim as usize]
            }
            Type::Array { elem, len } => vec![elem; len as usize],
            Type::Struct { fields, .. } => fields,
            _ => {
                let bits = self.scalar_bits(ty);
                return self.m.const_scalar(ty, bits);
            }
        };
        let cs = members.into_iter().filter_map(|t| self.constant(t).as_const()).collect();
        self.m.const_composite(ty, cs)
    }

    fn metadata(&mut self, named: bool) -> Metadata {
        let mut md = Metadata::default();
        if named && self.rng.chance(60) {
            md.name = Some(self.rng.pick(NAMES).to_string());
        }
        if self.rng.chance(10) {
            md.comments.push(self.rng.pick(COMMENTS).to_string());
        }
        if self.rng.chance(10) {
            let (line, col) = (self.rng.below(500) as u32, self.rng.below(80) as u32);
            md.location = Some(Box::new(Location { file: "src/kernel \"a\".cpp".into(), line, col }));
        }
        md
    }

    fn module(&mut self, n: usize, budget: usize) {
        for k in 0..n {
            let kind = match self.rng.below(4) {
                0 if k > 0 => FunctionKind::External,
                1 | 2 => FunctionKind::Callable,
                _ => {
                    let bs = [1 + self.rng.below(256) as u32, 1 + self.rng.below(4) as u32, 1];
                    // Derived from a draw already made, not drawn: the fuzz targets'
                    // found inputs (fuzz/artifacts-found) must keep generating the
                    // modules they were found as.
                    FunctionKind::Kernel { block_size: bs, whole_blocks: bs[1] == 2, noalias: bs[1] >= 3 }
                }
            };
            let rank = self.rng.below(n * 2);
            self.sigs.push(Sig { kind, rank });
            let ret = match kind {
                FunctionKind::Kernel { .. } => TypeTable::VOID,
                _ if self.rng.chance(30) => TypeTable::VOID,
                _ => self.numeric(),
            };
            let mut f = Function::new(format!("f{k}"), kind, ret);
            if self.rng.chance(20) {
                f.name = format!("has space {k}");
            }
            f.md = self.metadata(false);
            for _ in 0..self.rng.below(4) {
                let (ty, ak) = match self.rng.below(3) {
                    0 if matches!(kind, FunctionKind::Kernel { .. }) => (self.resource(), ArgKind::Resource),
                    1 if kind == FunctionKind::Callable => (self.data(1), ArgKind::Reference),
                    _ => (self.numeric(), ArgKind::Value),
                };
                let md = self.metadata(true);
                f.add_arg(ty, ak, md);
            }
            self.m.add_function(f);
        }
        for k in 0..n {
            if self.sigs[k].kind != FunctionKind::External {
                self.body(FuncId::new(k), budget);
            }
        }
    }

    fn resource(&mut self) -> TypeId {
        match self.rng.below(6) {
            0 => {
                let e = self.data(1);
                self.m.types.buffer(e)
            }
            1 => self.m.types.intern(Type::ByteBuffer),
            2 => self.m.types.intern(Type::Texture { dim: 2, elem: TypeTable::F32 }),
            3 => self.m.types.intern(Type::Texture { dim: 3, elem: TypeTable::U32 }),
            4 => self.m.types.intern(Type::BindlessArray),
            _ => self.m.types.intern(Type::Accel),
        }
    }

    fn new_block(&mut self, cx: &Cx) -> Block {
        let b = self.m.func_mut(cx.f).add_block();
        let mut md = self.metadata(false);
        if self.rng.chance(40) {
            md.name = Some(self.rng.pick(BLOCK_NAMES).to_string());
        }
        self.m.func_mut(cx.f).set_block_md(b, md);
        b
    }

    fn emit(&mut self, cx: &Cx, b: Block, op: Opcode, ty: TypeId, ops: &[Value], blocks: &[Block]) -> Inst {
        let mut d = InstData::new(op, ty);
        d.operands = SmallVec::from_slice(ops);
        d.blocks = SmallVec::from_slice(blocks);
        d.md = self.metadata(ty != TypeTable::VOID);
        if op == Opcode::Alloca && self.rng.chance(30) {
            d.md.spill = Some(self.rng.pick(&[SpillKind::Phi, SpillKind::CrossBlock]));
        }
        self.m.func_mut(cx.f).append_inst(b, d)
    }

    /// A value of type `ty`: from the pool when one dominates, else a constant.
    fn value_of(&mut self, cx: &Cx, ty: TypeId) -> Value {
        let have: Vec<Value> = cx.pool.iter().filter(|p| p.1 == ty).map(|p| p.0).collect();
        if !have.is_empty() && self.rng.chance(70) {
            self.rng.pick(&have)
        } else if self.rng.chance(5) {
            Value::Undef(ty)
        } else {
            self.constant(ty)
        }
    }

    fn bool_value(&mut self, cx: &mut Cx, b: Block) -> Value {
        let ty = self.reuse_numeric(cx);
        let ty = self.m.types.scalar_of(ty);
        let (l, r) = (self.value_of(cx, ty), self.value_of(cx, ty));
        Value::Inst(self.emit(cx, b, Opcode::Lt, TypeTable::BOOL, &[l, r], &[]))
    }

    fn body(&mut self, f: FuncId, budget: usize) {
        let args = self.m.func(f).args.clone();
        let mut cx = Cx { f, pool: Vec::new() };
        for (k, a) in args.iter().enumerate() {
            if a.kind == ArgKind::Value {
                cx.pool.push((Value::Arg(k as u32), a.ty));
            }
        }
        let entry = self.new_block(&cx);
        if self.m.func(f).kind == FunctionKind::Callable && self.rng.chance(30) {
            self.raw_body(&mut cx, entry);
        } else {
            let end = self.region(&mut cx, entry, 0, budget);
            self.ret(&mut cx, end);
        }
        if self.rng.chance(20) {
            let dead = self.new_block(&cx);
            self.emit(&cx, dead, Opcode::Unreachable, TypeTable::VOID, &[], &[]);
            let gone = self.new_block(&cx);
            self.m.func_mut(f).remove_block(gone);
        }
    }

    fn ret(&mut self, cx: &mut Cx, b: Block) {
        let ret = self.m.func(cx.f).ret;
        let ops: Vec<Value> = if ret == TypeTable::VOID { vec![] } else { vec![self.value_of(cx, ret)] };
        self.emit(cx, b, Opcode::Return, TypeTable::VOID, &ops, &[]);
    }

    /// Raw CFG: a diamond whose one arm is a `br_indexed`, joined by a phi.
    fn raw_body(&mut self, cx: &mut Cx, entry: Block) {
        let c = self.bool_value(cx, entry);
        let (a, b, j, extra) = (self.new_block(cx), self.new_block(cx), self.new_block(cx), self.new_block(cx));
        self.emit(cx, entry, Opcode::CondBr, TypeTable::VOID, &[c], &[a, b]);
        self.emit(cx, a, Opcode::Br, TypeTable::VOID, &[], &[j]);
        let sel_ty = self.rng.pick(&[(32, true), (32, false), (64, true), (64, false)]);
        let sel_ty = self.m.types.int(sel_ty.0, sel_ty.1);
        let sel = self.value_of(cx, sel_ty);
        let lit = self.scalar_bits(sel_ty);
        let mut d = InstData::new(Opcode::BrIndexed, TypeTable::VOID);
        d.operands.push(sel);
        d.blocks.extend([j, extra]);
        d.payload = Payload::Cases(vec![lit]);
        self.m.func_mut(cx.f).append_inst(b, d);
        self.emit(cx, extra, Opcode::Br, TypeTable::VOID, &[], &[j]);
        let ty = self.numeric();
        let incoming: Vec<Value> = (0..3).map(|_| self.value_of(cx, ty)).collect();
        let phi = self.emit(cx, j, Opcode::Phi, ty, &incoming, &[a, b, extra]);
        cx.pool.push((Value::Inst(phi), ty));
        self.ret(cx, j);
    }

    /// Straight-line code and nested constructs from `b`; returns the open
    /// block where control continues.
    fn region(&mut self, cx: &mut Cx, mut b: Block, depth: u32, budget: usize) -> Block {
        let n = 1 + self.rng.below(budget);
        for _ in 0..n {
            let nested = depth < 3;
            match self.rng.below(if nested { 13 } else { 9 }) {
                0 | 1 => {
                    let ty = self.reuse_numeric(cx);
                    let (l, r) = (self.value_of(cx, ty), self.value_of(cx, ty));
                    let op = self.rng.pick(&[Opcode::Add, Opcode::Sub, Opcode::Mul]);
                    let v = self.emit(cx, b, op, ty, &[l, r], &[]);
                    cx.pool.push((Value::Inst(v), ty));
                    if self.rng.chance(15) {
                        // A removed (dead) instruction, for compaction.
                        let dead = self.emit(cx, b, op, ty, &[l, r], &[]);
                        self.m.func_mut(cx.f).remove_inst(dead);
                    }
                }
                2 => {
                    let v = self.bool_value(cx, b);
                    cx.pool.push((v, TypeTable::BOOL));
                }
                3 => {
                    let ty = self.data(2);
                    let p = Value::Inst(self.emit(cx, b, Opcode::Alloca, ty, &[], &[]));
                    let v = self.value_of(cx, ty);
                    self.emit(cx, b, Opcode::Store, TypeTable::VOID, &[p, v], &[]);
                    let l = self.emit(cx, b, Opcode::Load, ty, &[p], &[]);
                    cx.pool.push((Value::Inst(l), ty));
                }
                4 => self.call(cx, b),
                5 => {
                    let reg = self.rng.pick(&[SpecialRegister::DispatchId, SpecialRegister::ThreadId]);
                    let k = self.m.const_u32(self.rng.below(3) as u32);
                    let v = self.emit(cx, b, Opcode::Extract, TypeTable::U32, &[Value::Reg(reg), k], &[]);
                    cx.pool.push((Value::Inst(v), TypeTable::U32));
                }
                6 => {
                    let ty = self.numeric();
                    let v = self.value_of(cx, ty);
                    let mut d = InstData::new(Opcode::Print, TypeTable::VOID);
                    d.operands.push(v);
                    d.payload = Payload::Text(self.rng.pick(&["v = {}", "quote \" \\ \u{7}", ""]).to_string());
                    self.m.func_mut(cx.f).append_inst(b, d);
                    let c = self.bool_value(cx, b);
                    let mut d = InstData::new(Opcode::Assert, TypeTable::VOID);
                    d.operands.push(c);
                    d.payload = Payload::Text("must hold".into());
                    self.m.func_mut(cx.f).append_inst(b, d);
                }
                7 | 8 => {
                    let (from, to) = (self.int_ty(), self.int_ty());
                    let v = self.value_of(cx, from);
                    let r = self.emit(cx, b, Opcode::CastStatic, to, &[v], &[]);
                    cx.pool.push((Value::Inst(r), to));
                }
                9 | 10 => b = self.if_(cx, b, depth, budget),
                11 => b = self.switch(cx, b, depth, budget),
                _ => b = self.loop_(cx, b, depth, budget),
            }
        }
        b
    }

    /// Usually the type of a value already in the pool, so values get used.
    fn reuse_numeric(&mut self, cx: &Cx) -> TypeId {
        let have: Vec<TypeId> = cx.pool.iter().map(|p| p.1).filter(|&t| self.m.types.has_class(t, "numeric")).collect();
        if !have.is_empty() && self.rng.chance(70) {
            self.rng.pick(&have)
        } else {
            self.numeric()
        }
    }

    fn int_ty(&mut self) -> TypeId {
        let bits = self.rng.pick(&[8, 16, 32, 64]);
        let signed = self.rng.chance(50);
        self.m.types.int(bits, signed)
    }

    /// A call to a lower-ranked callable or extern, with matching arguments.
    fn call(&mut self, cx: &mut Cx, b: Block) {
        let me = self.sigs[cx.f.index()].rank;
        let callees: Vec<usize> = (0..self.sigs.len())
            .filter(|&k| {
                let s = &self.sigs[k];
                s.rank < me && !matches!(s.kind, FunctionKind::Kernel { .. })
            })
            .collect();
        if callees.is_empty() {
            return;
        }
        let g = self.rng.pick(&callees);
        let callee = self.m.func(FuncId::new(g));
        let (args, ret) = (callee.args.clone(), callee.ret);
        let mut ops = vec![Value::Func(FuncId::new(g))];
        for a in args {
            let v = match a.kind {
                ArgKind::Reference => Value::Inst(self.emit(cx, b, Opcode::Alloca, a.ty, &[], &[])),
                _ => self.value_of(cx, a.ty),
            };
            ops.push(v);
        }
        let r = self.emit(cx, b, Opcode::Call, ret, &ops, &[]);
        if ret != TypeTable::VOID {
            cx.pool.push((Value::Inst(r), ret));
        }
    }

    fn if_(&mut self, cx: &mut Cx, b: Block, depth: u32, budget: usize) -> Block {
        let c = self.bool_value(cx, b);
        let (t, f, m) = (self.new_block(cx), self.new_block(cx), self.new_block(cx));
        self.emit(cx, b, Opcode::If, TypeTable::VOID, &[c], &[t, f, m]);
        let keep = cx.pool.len();
        let t_end = self.region(cx, t, depth + 1, budget / 2 + 1);
        cx.pool.truncate(keep);
        self.emit(cx, t_end, Opcode::Br, TypeTable::VOID, &[], &[m]);
        let f_end = self.region(cx, f, depth + 1, budget / 2 + 1);
        cx.pool.truncate(keep);
        self.emit(cx, f_end, Opcode::Br, TypeTable::VOID, &[], &[m]);
        if self.rng.chance(50) {
            let ty = self.numeric();
            let (x, y) = (self.value_of(cx, ty), self.value_of(cx, ty));
            let phi = self.emit(cx, m, Opcode::Phi, ty, &[x, y], &[t_end, f_end]);
            cx.pool.push((Value::Inst(phi), ty));
        }
        m
    }

    fn switch(&mut self, cx: &mut Cx, b: Block, depth: u32, budget: usize) -> Block {
        let (bits, signed) = self.rng.pick(&[(32, true), (32, false), (64, true), (64, false)]);
        let ty = self.m.types.int(bits, signed);
        let sel = self.value_of(cx, ty);
        let (m, d) = (self.new_block(cx), self.new_block(cx));
        let mut lits: Vec<u64> = Vec::new();
        for _ in 0..1 + self.rng.below(3) {
            let l = self.scalar_bits(ty);
            if !lits.contains(&l) {
                lits.push(l);
            }
        }
        let cases: Vec<Block> = lits.iter().map(|_| self.new_block(cx)).collect();
        let mut data = InstData::new(Opcode::Switch, TypeTable::VOID);
        data.operands.push(sel);
        data.blocks.extend([m, d]);
        data.blocks.extend(cases.iter().copied());
        data.payload = Payload::Cases(lits);
        self.m.func_mut(cx.f).append_inst(b, data);
        let keep = cx.pool.len();
        for arm in std::iter::once(d).chain(cases) {
            let end = self.region(cx, arm, depth + 1, budget / 3 + 1);
            cx.pool.truncate(keep);
            let op = if self.rng.chance(50) { Opcode::Br } else { Opcode::Break };
            self.emit(cx, end, op, TypeTable::VOID, &[], &[m]);
        }
        m
    }

    fn loop_(&mut self, cx: &mut Cx, b: Block, depth: u32, budget: usize) -> Block {
        let keep = cx.pool.len();
        if self.rng.chance(50) {
            let (body, merge) = (self.new_block(cx), self.new_block(cx));
            self.emit(cx, b, Opcode::SimpleLoop, TypeTable::VOID, &[], &[body, merge]);
            let end = self.region(cx, body, depth + 1, budget / 2 + 1);
            cx.pool.truncate(keep);
            self.emit(cx, end, Opcode::Break, TypeTable::VOID, &[], &[merge]);
            return merge;
        }
        let (p, body, u, merge) = (self.new_block(cx), self.new_block(cx), self.new_block(cx), self.new_block(cx));
        self.emit(cx, b, Opcode::Loop, TypeTable::VOID, &[], &[p, body, u, merge]);
        let c = self.bool_value(cx, p);
        self.emit(cx, p, Opcode::CondBr, TypeTable::VOID, &[c], &[body, merge]);
        let end = self.region(cx, body, depth + 1, budget / 2 + 1);
        cx.pool.truncate(keep);
        let op = if self.rng.chance(50) { Opcode::Br } else { Opcode::Continue };
        self.emit(cx, end, op, TypeTable::VOID, &[], &[u]);
        self.emit(cx, u, Opcode::Br, TypeTable::VOID, &[], &[p]);
        merge
    }
}
