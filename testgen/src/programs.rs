//! Random executable structured kernels for differential tests of passes
//! and backends: a proptest [`Strategy`] of [`Program`]s, each a module in
//! `xir.structured` with one kernel (and a few callables) plus the
//! [`Inputs`] to run it with.
//!
//! Every program is well formed and terminates without run-time errors:
//! - control flow: nested `if`, `switch` (cases ending in `break` or `br`),
//!   counted `loop`s and do-while `simple_loop`s (trip counts 0..=3, the
//!   counter stepped before any `continue` can skip it), conditional
//!   `break` / `continue` / early `return`;
//! - locals: every variable is an `alloca` initialized in the entry block;
//! - arithmetic on `u32`, `i32`, `f32`: wrapping integer ops, shifts,
//!   min/max, division and remainder only by non-zero constants, exact float
//!   ops; conversions are bitwise (int <-> int, f32 -> int) or static
//!   (int -> f32), so no conversion is out of range;
//! - memory: `buffer.read` of the input at `(e mod LEN)`, `buffer.write` of
//!   the output only at `tid * SLOTS + k`, so threads never race;
//! - callables with value arguments and a reference argument (the caller
//!   passes one of its `u32` locals); a callable may call earlier ones.
//!
//! The generator builds a small untyped AST with proptest and lowers it
//! with the [`Builder`](xir::ir::Builder); expressions are typed during
//! lowering, so every AST is valid.

use std::fmt;

use proptest::prelude::*;
use serde_json::json;

use xir::interp::Inputs;
use xir::ir::{
    ArgKind, Block, Builder, FuncId, Function, FunctionKind, InstData, Metadata, Module, Opcode, SpecialRegister,
    TypeId, TypeTable, Value,
};

/// Elements of the input buffer `%inp`.
pub const INPUT_LEN: u32 = 16;
/// Output elements per thread in `%out`.
pub const SLOTS: u32 = 4;
/// Threads per block of the generated kernel.
pub const BLOCK: u32 = 4;

/// A generated kernel with its inputs.
#[derive(Clone)]
pub struct Program {
    pub module: Module,
    pub kernel: FuncId,
    pub inputs: Inputs,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", xir::text::print_module(&self.module))?;
        write!(f, "inputs: {}", serde_json::to_string(&self.inputs).unwrap_or_default())
    }
}

// ---- the AST ------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug)]
pub enum CmpOp {
    Lt,
    Le,
    Eq,
    Ne,
}

#[derive(Clone, Debug)]
pub enum Expr {
    Lit(u32),
    Var(u8),
    Tid,
    Scalar,
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// Division (or remainder) by a non-zero constant.
    DivC(bool, Box<Expr>, u8),
    Select(Box<Cond>, Box<Expr>, Box<Expr>),
    Read(Box<Expr>),
    /// Call callable `k` (modulo those visible) with two value arguments.
    Call(u8, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Debug)]
pub enum Cond {
    /// Compare at type `ty % 3` (u32, i32, f32).
    Cmp(CmpOp, u8, Expr, Expr),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Assign(u8, Expr),
    If(Cond, Vec<Stmt>, Vec<Stmt>),
    /// Selector, cases (literal, body, ends with `break`), default.
    Switch(Expr, Vec<(u8, Vec<Stmt>, bool)>, Vec<Stmt>),
    For(u8, Vec<Stmt>),
    DoWhile(u8, Vec<Stmt>),
    Break(Cond),
    Continue(Cond),
    Return(Cond),
    Write(u8, Expr),
}

#[derive(Clone, Debug)]
pub struct Ast {
    pub callables: Vec<Vec<Stmt>>,
    pub kernel: Vec<Stmt>,
    pub dispatch: u32,
    pub input: Vec<u32>,
    pub scalar: u32,
}

fn expr() -> BoxedStrategy<Expr> {
    let leaf = prop_oneof![
        any::<u32>().prop_map(Expr::Lit),
        (0u8..8).prop_map(|x| Expr::Lit(x as u32)),
        any::<u8>().prop_map(Expr::Var),
        Just(Expr::Tid),
        Just(Expr::Scalar),
    ];
    leaf.prop_recursive(3, 16, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| Expr::Neg(Box::new(e))),
            inner.clone().prop_map(|e| Expr::Not(Box::new(e))),
            (binop(), inner.clone(), inner.clone()).prop_map(|(o, a, b)| Expr::Bin(o, Box::new(a), Box::new(b))),
            (any::<bool>(), inner.clone(), 1u8..8).prop_map(|(r, a, d)| Expr::DivC(r, Box::new(a), d)),
            (cond_leaf(inner.clone().boxed()), inner.clone(), inner.clone()).prop_map(|(c, a, b)| Expr::Select(
                Box::new(c),
                Box::new(a),
                Box::new(b)
            )),
            inner.clone().prop_map(|e| Expr::Read(Box::new(e))),
            (any::<u8>(), inner.clone(), inner).prop_map(|(k, a, b)| Expr::Call(k, Box::new(a), Box::new(b))),
        ]
    })
    .boxed()
}

fn binop() -> impl Strategy<Value = BinOp> {
    use BinOp::*;
    prop_oneof![
        Just(Add),
        Just(Sub),
        Just(Mul),
        Just(Min),
        Just(Max),
        Just(And),
        Just(Or),
        Just(Xor),
        Just(Shl),
        Just(Shr)
    ]
}

fn cond_leaf(e: BoxedStrategy<Expr>) -> impl Strategy<Value = Cond> {
    let op = prop_oneof![Just(CmpOp::Lt), Just(CmpOp::Le), Just(CmpOp::Eq), Just(CmpOp::Ne)];
    (op, 0u8..3, e.clone(), e).prop_map(|(o, t, a, b)| Cond::Cmp(o, t, a, b))
}

fn cond() -> impl Strategy<Value = Cond> {
    cond_leaf(expr()).prop_recursive(2, 4, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|c| Cond::Not(Box::new(c))),
            (inner.clone(), inner).prop_map(|(a, b)| Cond::And(Box::new(a), Box::new(b))),
        ]
    })
}

fn stmts() -> impl Strategy<Value = Vec<Stmt>> {
    let simple = prop_oneof![
        4 => (any::<u8>(), expr()).prop_map(|(v, e)| Stmt::Assign(v, e)),
        2 => (0u8..SLOTS as u8, expr()).prop_map(|(k, e)| Stmt::Write(k, e)),
        1 => cond().prop_map(Stmt::Break),
        1 => cond().prop_map(Stmt::Continue),
        1 => cond().prop_map(Stmt::Return),
    ];
    let stmt = simple.prop_recursive(3, 24, 4, |inner| {
        let body = prop::collection::vec(inner, 0..4);
        prop_oneof![
            (cond(), body.clone(), body.clone()).prop_map(|(c, t, e)| Stmt::If(c, t, e)),
            (expr(), prop::collection::vec((0u8..4, body.clone(), any::<bool>()), 1..4), body.clone())
                .prop_map(|(s, cases, d)| Stmt::Switch(s, cases, d)),
            (0u8..4, body.clone()).prop_map(|(n, b)| Stmt::For(n, b)),
            (1u8..4, body).prop_map(|(n, b)| Stmt::DoWhile(n, b)),
        ]
    });
    prop::collection::vec(stmt, 1..6)
}

/// The AST strategy (exposed so tests can shrink on the AST).
pub fn ast() -> impl Strategy<Value = Ast> {
    (
        prop::collection::vec(stmts(), 0..3),
        stmts(),
        prop_oneof![Just(BLOCK), Just(2 * BLOCK)],
        prop::collection::vec(any::<u32>(), INPUT_LEN as usize),
        any::<u32>(),
    )
        .prop_map(|(callables, kernel, dispatch, input, scalar)| Ast {
            callables,
            kernel,
            dispatch,
            input,
            scalar,
        })
}

/// Random well-formed, terminating structured kernels with their inputs.
pub fn program() -> impl Strategy<Value = Program> {
    ast().prop_map(|a| lower(&a))
}

// ---- lowering -----------------------------------------------------------

#[derive(Clone, Copy)]
enum Ctx {
    Loop { brk: Block, cont: Block },
    Switch { brk: Block },
}

struct Lower<'a> {
    m: &'a mut Module,
    f: FuncId,
    cur: Option<Block>,
    /// (lvalue, type) of each variable.
    vars: Vec<(Value, TypeId)>,
    ctx: Vec<Ctx>,
    /// Callables this function may call.
    callees: Vec<FuncId>,
    /// Kernel only: input, output, scalar, thread index.
    kernel: Option<(Value, Value, Value, Value)>,
}

const TYS: [TypeId; 3] = [TypeTable::U32, TypeTable::I32, TypeTable::F32];

impl Lower<'_> {
    fn b(&mut self) -> Builder<'_> {
        let mut b = Builder::new(self.m, self.f);
        if let Some(c) = self.cur {
            b.switch_to(c);
        }
        b
    }
    fn op(&mut self, op: Opcode, ty: TypeId, ops: &[Value]) -> Value {
        self.b().op(op, ty, ops, &[])
    }
    fn term(&mut self, op: Opcode, ops: &[Value], blocks: &[Block]) {
        self.b().op(op, TypeTable::VOID, ops, blocks);
        self.cur = None;
    }
    fn block(&mut self) -> Block {
        self.m.func_mut(self.f).add_block()
    }
    fn entry_alloca(&mut self, ty: TypeId) -> Value {
        let f = self.m.func_mut(self.f);
        let entry = f.body().expect("entry exists");
        let i = f.create_inst(InstData::new(Opcode::Alloca, ty));
        f.insert_inst(entry, 0, i);
        Value::Inst(i)
    }

    /// Convert `v` of type `from` to `to` without any out-of-range case.
    fn convert(&mut self, v: Value, from: TypeId, to: TypeId) -> Value {
        if from == to {
            v
        } else if to == TypeTable::F32 {
            self.op(Opcode::CastStatic, to, &[v])
        } else {
            self.op(Opcode::CastBitwise, to, &[v])
        }
    }

    fn lit(&mut self, x: u32, ty: TypeId) -> Value {
        match ty {
            TypeTable::F32 => self.m.const_f32((x % 4096) as f32 / 8.0 - 256.0),
            TypeTable::I32 => self.m.const_i32(x as i32),
            _ => self.m.const_u32(x),
        }
    }

    fn expr(&mut self, e: &Expr, ty: TypeId) -> Value {
        let is_f = ty == TypeTable::F32;
        match e {
            Expr::Lit(x) => self.lit(*x, ty),
            Expr::Var(k) => {
                let (lv, vty) = self.vars[*k as usize % self.vars.len()];
                let v = self.op(Opcode::Load, vty, &[lv]);
                self.convert(v, vty, ty)
            }
            Expr::Tid | Expr::Scalar => {
                let v = match (e, self.kernel) {
                    (Expr::Tid, Some(k)) => k.3,
                    (Expr::Scalar, Some(k)) => k.2,
                    _ => self.m.const_u32(3),
                };
                self.convert(v, TypeTable::U32, ty)
            }
            Expr::Neg(a) => {
                let a = self.expr(a, ty);
                self.op(Opcode::Neg, ty, &[a])
            }
            Expr::Not(a) => {
                let a = self.expr(a, ty);
                self.op(if is_f { Opcode::Floor } else { Opcode::BitNot }, ty, &[a])
            }
            Expr::Bin(o, a, b) => {
                let (a, b) = (self.expr(a, ty), self.expr(b, ty));
                use BinOp::*;
                let op = match (o, is_f) {
                    (Add, _) | (Shr, true) => Opcode::Add,
                    (Sub, _) | (Xor, true) => Opcode::Sub,
                    (Mul, _) | (Shl, true) => Opcode::Mul,
                    (Min, _) | (And, true) => Opcode::Min,
                    (Max, _) | (Or, true) => Opcode::Max,
                    (And, false) => Opcode::BitAnd,
                    (Or, false) => Opcode::BitOr,
                    (Xor, false) => Opcode::BitXor,
                    (Shl, false) => Opcode::Shl,
                    (Shr, false) => Opcode::Shr,
                };
                self.op(op, ty, &[a, b])
            }
            Expr::DivC(rem, a, d) => {
                let a = self.expr(a, ty);
                let d = if is_f { self.m.const_f32(*d as f32) } else { self.lit(*d as u32, ty) };
                self.op(if *rem && !is_f { Opcode::Mod } else { Opcode::Div }, ty, &[a, d])
            }
            Expr::Select(c, a, b) => {
                let c = self.cond(c);
                let (a, b) = (self.expr(a, ty), self.expr(b, ty));
                self.op(Opcode::Select, ty, &[c, a, b])
            }
            Expr::Read(i) => {
                let Some((inp, ..)) = self.kernel else { return self.lit(7, ty) };
                let i = self.expr(i, TypeTable::U32);
                let len = self.m.const_u32(INPUT_LEN);
                let i = self.op(Opcode::Mod, TypeTable::U32, &[i, len]);
                let v = self.op(Opcode::BufferRead, TypeTable::U32, &[inp, i]);
                self.convert(v, TypeTable::U32, ty)
            }
            Expr::Call(k, a, b) => {
                if self.callees.is_empty() {
                    return self.lit(*k as u32, ty);
                }
                let g = self.callees[*k as usize % self.callees.len()];
                let a = self.expr(a, TypeTable::U32);
                let b = self.expr(b, TypeTable::F32);
                // The reference argument: one of the u32 variables (in a
                // callable possibly its own reference argument, passed on).
                let u32s: Vec<Value> = self.vars.iter().filter(|v| v.1 == TypeTable::U32).map(|v| v.0).collect();
                let r = u32s[*k as usize / 7 % u32s.len()];
                let v = self.op(Opcode::Call, TypeTable::U32, &[Value::Func(g), a, b, r]);
                self.convert(v, TypeTable::U32, ty)
            }
        }
    }

    fn cond(&mut self, c: &Cond) -> Value {
        match c {
            Cond::Cmp(o, t, a, b) => {
                let ty = TYS[*t as usize % 3];
                let (a, b) = (self.expr(a, ty), self.expr(b, ty));
                let op = match o {
                    CmpOp::Lt => Opcode::Lt,
                    CmpOp::Le => Opcode::Le,
                    CmpOp::Eq => Opcode::Eq,
                    CmpOp::Ne => Opcode::Ne,
                };
                self.op(op, TypeTable::BOOL, &[a, b])
            }
            Cond::Not(a) => {
                let a = self.cond(a);
                self.op(Opcode::BitNot, TypeTable::BOOL, &[a])
            }
            Cond::And(a, b) => {
                let (a, b) = (self.cond(a), self.cond(b));
                self.op(Opcode::BitAnd, TypeTable::BOOL, &[a, b])
            }
        }
    }

    /// `if c { <jump> }` where `jump` terminates the arm.
    fn guarded(&mut self, c: &Cond, jump: impl FnOnce(&mut Self)) {
        let c = self.cond(c);
        let (t, e, m) = (self.block(), self.block(), self.block());
        self.b().if_(c, t, e, m);
        self.cur = Some(t);
        jump(self);
        self.cur = Some(e);
        self.term(Opcode::Br, &[], &[m]);
        self.cur = Some(m);
    }

    fn ret(&mut self) {
        if self.kernel.is_some() {
            self.term(Opcode::Return, &[], &[]);
        } else {
            let (lv, ty) = self.vars[0];
            let v = self.op(Opcode::Load, ty, &[lv]);
            self.term(Opcode::Return, &[v], &[]);
        }
    }

    fn body(&mut self, stmts: &[Stmt], end: impl FnOnce(&mut Self)) {
        for s in stmts {
            if self.cur.is_none() {
                return;
            }
            self.stmt(s);
        }
        if self.cur.is_some() {
            end(self);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign(k, e) => {
                let (lv, ty) = self.vars[*k as usize % self.vars.len()];
                let v = self.expr(e, ty);
                self.b().store(lv, v);
            }
            Stmt::Write(k, e) => {
                let Some((_, out, _, tid)) = self.kernel else { return };
                let v = self.expr(e, TypeTable::U32);
                let slots = self.m.const_u32(SLOTS);
                let base = self.op(Opcode::Mul, TypeTable::U32, &[tid, slots]);
                let k = self.m.const_u32(*k as u32);
                let i = self.op(Opcode::Add, TypeTable::U32, &[base, k]);
                self.b().op(Opcode::BufferWrite, TypeTable::VOID, &[out, i, v], &[]);
            }
            Stmt::If(c, t, e) => {
                let c = self.cond(c);
                let (tb, eb, m) = (self.block(), self.block(), self.block());
                self.b().if_(c, tb, eb, m);
                for (blk, list) in [(tb, t), (eb, e)] {
                    self.cur = Some(blk);
                    self.body(list, |l| l.term(Opcode::Br, &[], &[m]));
                }
                self.cur = Some(m);
            }
            Stmt::Switch(sel, cases, default) => {
                let v = self.expr(sel, TypeTable::U32);
                let four = self.m.const_u32(4);
                let v = self.op(Opcode::Mod, TypeTable::U32, &[v, four]);
                let (m, d) = (self.block(), self.block());
                let mut seen: Vec<u8> = Vec::new();
                let mut arms: Vec<(u64, Block, &Vec<Stmt>, bool)> = Vec::new();
                for (lit, body, brk) in cases {
                    if !seen.contains(lit) {
                        seen.push(*lit);
                        arms.push((*lit as u64, self.block(), body, *brk));
                    }
                }
                let table: Vec<(u64, Block)> = arms.iter().map(|a| (a.0, a.1)).collect();
                self.b().switch(v, m, d, &table);
                self.ctx.push(Ctx::Switch { brk: m });
                for (_, blk, body, brk) in arms {
                    self.cur = Some(blk);
                    let op = if brk { Opcode::Break } else { Opcode::Br };
                    self.body(body, |l| l.term(op, &[], &[m]));
                }
                self.cur = Some(d);
                self.body(default, |l| l.term(Opcode::Br, &[], &[m]));
                self.ctx.pop();
                self.cur = Some(m);
            }
            Stmt::For(n, body) => {
                let ctr = self.entry_alloca(TypeTable::U32);
                let zero = self.m.const_u32(0);
                self.b().store(ctr, zero);
                let (p, b, u, m) = (self.block(), self.block(), self.block(), self.block());
                self.term(Opcode::Loop, &[], &[p, b, u, m]);
                self.cur = Some(p);
                let k = self.op(Opcode::Load, TypeTable::U32, &[ctr]);
                let n = self.m.const_u32(*n as u32);
                let more = self.op(Opcode::Lt, TypeTable::BOOL, &[k, n]);
                self.term(Opcode::CondBr, &[more], &[b, m]);
                self.cur = Some(u);
                let k = self.op(Opcode::Load, TypeTable::U32, &[ctr]);
                let one = self.m.const_u32(1);
                let k1 = self.op(Opcode::Add, TypeTable::U32, &[k, one]);
                self.b().store(ctr, k1);
                self.term(Opcode::Br, &[], &[p]);
                self.cur = Some(b);
                self.ctx.push(Ctx::Loop { brk: m, cont: u });
                self.body(body, |l| l.term(Opcode::Br, &[], &[u]));
                self.ctx.pop();
                self.cur = Some(m);
            }
            Stmt::DoWhile(n, body) => {
                let ctr = self.entry_alloca(TypeTable::U32);
                let zero = self.m.const_u32(0);
                self.b().store(ctr, zero);
                let (b, m) = (self.block(), self.block());
                self.term(Opcode::SimpleLoop, &[], &[b, m]);
                self.cur = Some(b);
                let k = self.op(Opcode::Load, TypeTable::U32, &[ctr]);
                let one = self.m.const_u32(1);
                let k1 = self.op(Opcode::Add, TypeTable::U32, &[k, one]);
                self.b().store(ctr, k1);
                let n = self.m.const_u32(*n as u32);
                let done = self.op(Opcode::Gt, TypeTable::BOOL, &[k1, n]);
                let (t, e, c) = (self.block(), self.block(), self.block());
                self.b().if_(done, t, e, c);
                self.cur = Some(t);
                self.term(Opcode::Break, &[], &[m]);
                self.cur = Some(e);
                self.term(Opcode::Br, &[], &[c]);
                self.cur = Some(c);
                self.ctx.push(Ctx::Loop { brk: m, cont: b });
                self.body(body, |l| l.term(Opcode::Br, &[], &[b]));
                self.ctx.pop();
                self.cur = Some(m);
            }
            Stmt::Break(c) => {
                let target = match self.ctx.last() {
                    Some(Ctx::Loop { brk, .. }) | Some(Ctx::Switch { brk }) => *brk,
                    None => return,
                };
                self.guarded(c, |l| l.term(Opcode::Break, &[], &[target]));
            }
            Stmt::Continue(c) => {
                let Some(target) = self.ctx.iter().rev().find_map(|x| match x {
                    Ctx::Loop { cont, .. } => Some(*cont),
                    Ctx::Switch { .. } => None,
                }) else {
                    return;
                };
                self.guarded(c, |l| l.term(Opcode::Continue, &[], &[target]));
            }
            Stmt::Return(c) => self.guarded(c, |l| l.ret()),
        }
    }
}

/// Build the module of an AST.
pub fn lower(a: &Ast) -> Program {
    let mut m = Module::new();
    m.intern_register_types();
    let mut callables: Vec<FuncId> = Vec::new();
    for (k, body) in a.callables.iter().enumerate() {
        let mut f = Function::new(format!("c{k}"), FunctionKind::Callable, TypeTable::U32);
        let p0 = f.add_arg(TypeTable::U32, ArgKind::Value, Metadata::named("a"));
        let p1 = f.add_arg(TypeTable::F32, ArgKind::Value, Metadata::named("b"));
        let r = f.add_arg(TypeTable::U32, ArgKind::Reference, Metadata::named("r"));
        let entry = f.add_block();
        let fid = m.add_function(f);
        let mut l = Lower {
            m: &mut m,
            f: fid,
            cur: Some(entry),
            vars: Vec::new(),
            ctx: Vec::new(),
            callees: callables.clone(),
            kernel: None,
        };
        let x = l.entry_alloca(TypeTable::U32);
        let y = l.entry_alloca(TypeTable::F32);
        l.b().store(x, p0);
        l.b().store(y, p1);
        l.vars = vec![(x, TypeTable::U32), (y, TypeTable::F32), (r, TypeTable::U32)];
        l.body(body, |l| l.ret());
        callables.push(fid);
    }

    let mut f = Function::new(
        "main",
        FunctionKind::Kernel { block_size: [BLOCK, 1, 1], whole_blocks: false, noalias: false },
        TypeTable::VOID,
    );
    let inp_ty = m.types.buffer(TypeTable::U32);
    let inp = f.add_arg(inp_ty, ArgKind::Resource, Metadata::named("inp"));
    let out = f.add_arg(inp_ty, ArgKind::Resource, Metadata::named("out"));
    let scalar = f.add_arg(TypeTable::U32, ArgKind::Value, Metadata::named("s"));
    let entry = f.add_block();
    let kid = m.add_function(f);
    let zero = m.const_u32(0);
    let mut l = Lower {
        m: &mut m,
        f: kid,
        cur: Some(entry),
        vars: Vec::new(),
        ctx: Vec::new(),
        callees: callables,
        kernel: None,
    };
    let tid = l.op(Opcode::Extract, TypeTable::U32, &[Value::Reg(SpecialRegister::DispatchId), zero]);
    l.kernel = Some((inp, out, scalar, tid));
    let inits: [(TypeId, Expr); 4] = [
        (TypeTable::U32, Expr::Tid),
        (TypeTable::I32, Expr::Scalar),
        (TypeTable::F32, Expr::Read(Box::new(Expr::Tid))),
        (TypeTable::U32, Expr::Lit(1)),
    ];
    for (ty, init) in inits {
        let lv = l.entry_alloca(ty);
        let v = l.expr(&init, ty);
        l.b().store(lv, v);
        l.vars.push((lv, ty));
    }
    let body = a.kernel.clone();
    l.body(&body, |l| l.ret());

    let inputs = Inputs::new()
        .with_dispatch([a.dispatch, 1, 1])
        .with_arg("inp", json!(a.input))
        .with_arg("out", json!(vec![0u32; (a.dispatch * SLOTS) as usize]))
        .with_arg("s", json!(a.scalar));
    Program { module: m, kernel: kid, inputs }
}
