//! `ast2xir`: a kernel AST becomes structured XIR (`xir.structured`), by
//! the reference's mapping tables (`xir-pipeline.md`, "AST -> XIR
//! Translation"):
//!
//! | AST | XIR |
//! |---|---|
//! | unary | `neg` / `bit_not` (`matrix_comp_neg` on matrices); `+x` is elided; `!x` casts `x` to bool |
//! | binary | the arithmetic / comparison opcode, a scalar beside a vector or matrix broadcast; on matrices `matrix_comp_*` and `matrix_linalg_mul`; `&&` / `||` cast both sides to bool |
//! | member / swizzle | `extract` / `shuffle` of a value, `gep` + `load` of storage |
//! | access | `gep` + `load` (a value indexed dynamically is first copied to a local) |
//! | literal, constant | a module constant (interned: each one exists once) |
//! | variable, register | the variable's storage or argument; `$register` |
//! | call | `call` of a function, or the named spec opcode (arithmetic, atomics, resources, thread group, ray query, assert / assume / unreachable) |
//! | cast | `cast.static` / `cast.bitwise` |
//! | if / switch | `if` / `switch` with their arms and a merge |
//! | for | `loop` with prepare (the condition) / body / update / merge |
//! | loop | `simple_loop` with body / merge |
//! | break / continue | `break` / `continue` to the innermost target |
//! | return, assign, print | `return`, `store`, `print` |
//! | expression | its instructions; a terminating built-in ends the block |
//! | comment | comment metadata on the next instruction |
//! | ray query | `ray_query.loop` + `ray_query.dispatch` |
//!
//! Variables become `alloca` (`alloca.shared`) at the top of the entry
//! block, so `mem2reg` finds them; a value parameter that is assigned or
//! indexed dynamically gets a local copy there. Statements after a
//! `return`, `break`, `continue` or `unreachable` in the same scope are dead
//! and not translated.

use rustc_hash::FxHashSet;
use smallvec::SmallVec;
use xir::ir::{
    ArgKind, Block, Const, ConstData, ConstValue, FuncId, Function as XFunction, FunctionKind as XKind, InstData,
    Metadata, Module as XModule, Payload, Span, Type, TypeId, TypeTable, Value,
};
use xir_spec::{Opcode, Trait};

use crate::node::*;

/// Why a tree could not be translated: the AST broke a rule the front end
/// should have kept (assigning to a value, `break` outside a loop, ...).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("in function `{function}`: {message}")]
pub struct TranslateError {
    pub function: String,
    pub span: Option<Span>,
    pub message: String,
}

/// Translate every function of `ast` into one XIR module. Function `i` of
/// the AST is function `i` of the result.
pub fn ast_to_xir(ast: &Module<'_>) -> Result<XModule, TranslateError> {
    let mut m = XModule::new();
    m.types = ast.types.clone();
    m.intern_register_types();
    for f in &ast.functions {
        let kind = match f.kind {
            FunctionKind::Kernel { block_size, whole_blocks, noalias } => {
                XKind::Kernel { block_size, whole_blocks, noalias }
            }
            FunctionKind::Callable => XKind::Callable,
        };
        let mut xf = XFunction::new(f.name.clone(), kind, f.ret);
        xf.span = f.span;
        for (_, p) in f.params() {
            let VarKind::Param(k) = p.kind else { unreachable!("params() yields parameters") };
            xf.add_arg(p.ty, k, Metadata::named(p.name.clone()));
        }
        m.add_function(xf);
    }
    for (i, f) in ast.functions.iter().enumerate() {
        FnCx::new(&mut m, ast, FuncId::new(i), f).translate()?;
    }
    Ok(m)
}

/// Where `break` and `continue` go inside the construct being translated.
#[derive(Copy, Clone)]
enum Target {
    Loop {
        brk: Block,
        cont: Block,
    },
    Switch {
        brk: Block,
    },
    /// A loop's update scope or a ray-query callback: no jumps out.
    Closed,
}

struct FnCx<'x, 'a> {
    m: &'x mut XModule,
    ast: &'x Module<'a>,
    fid: FuncId,
    f: &'x Function<'a>,
    /// Each variable's storage (an lvalue) or value (a parameter).
    vars: Vec<Value>,
    entry: Block,
    /// Where the next entry-block `alloca` goes (after the ones before it).
    alloca_pos: usize,
    /// The block being filled; `None` after a terminator.
    cur: Option<Block>,
    /// Blocks in the order they were entered: the printed layout.
    layout: Vec<Block>,
    targets: Vec<Target>,
    comments: Vec<String>,
    /// The span of the statement being translated, given to its instructions.
    span: Option<Span>,
}

type R<T> = Result<T, TranslateError>;

impl<'x, 'a> FnCx<'x, 'a> {
    fn new(m: &'x mut XModule, ast: &'x Module<'a>, fid: FuncId, f: &'x Function<'a>) -> Self {
        let entry = m.func_mut(fid).add_block();
        FnCx {
            m,
            ast,
            fid,
            f,
            vars: Vec::new(),
            entry,
            alloca_pos: 0,
            cur: Some(entry),
            layout: vec![entry],
            targets: Vec::new(),
            comments: Vec::new(),
            span: f.span,
        }
    }

    fn err(&self, message: impl Into<String>) -> TranslateError {
        TranslateError { function: self.f.name.clone(), span: self.span, message: message.into() }
    }

    fn func(&mut self) -> &mut XFunction {
        self.m.func_mut(self.fid)
    }

    fn translate(mut self) -> R<()> {
        let needs_copy = assigned_or_indexed_params(self.f);
        for (i, v) in self.f.vars.iter().enumerate() {
            let value = match v.kind {
                VarKind::Param(ArgKind::Value) if needs_copy.contains(&VarId(i as u32)) => {
                    let slot = self.entry_alloca(Opcode::Alloca, v.ty, &v.name);
                    self.emit(Opcode::Store, TypeTable::VOID, &[slot, Value::Arg(i as u32)], &[]);
                    slot
                }
                VarKind::Param(_) => Value::Arg(i as u32),
                VarKind::Local => self.entry_alloca(Opcode::Alloca, v.ty, &v.name),
                // Bound by their assignment.
                VarKind::Let | VarKind::Ref => Value::Undef(TypeTable::VOID),
                VarKind::Shared => {
                    if !matches!(self.f.kind, FunctionKind::Kernel { .. }) {
                        self.span = v.span;
                        return Err(self.err(format!("shared variable `{}` outside a kernel", v.name)));
                    }
                    self.entry_alloca(Opcode::AllocaShared, v.ty, &v.name)
                }
            };
            self.vars.push(value);
        }
        self.scope(&self.f.body)?;
        if self.cur.is_some() {
            // A function with a result never runs off its end (every path
            // returns; the front end's checker said so): the end is
            // unreachable, as after a switch whose every case returns.
            let op = if self.f.ret == TypeTable::VOID { Opcode::Return } else { Opcode::Unreachable };
            self.emit(op, TypeTable::VOID, &[], &[]);
        }
        let layout = std::mem::take(&mut self.layout);
        self.func().set_layout(layout);
        Ok(())
    }

    // ---- emission -----------------------------------------------------

    fn emit_data(&mut self, mut d: InstData) -> Value {
        let b = self.cur.expect("emission into a terminated block");
        if !self.comments.is_empty() {
            d.md.comments = std::mem::take(&mut self.comments);
        }
        d.span = self.span;
        let is_terminator = xir_spec::spec().op(d.opcode).has(Trait::Terminator);
        let i = self.func().append_inst(b, d);
        if is_terminator {
            self.cur = None;
        }
        Value::Inst(i)
    }

    fn emit(&mut self, op: Opcode, ty: TypeId, operands: &[Value], blocks: &[Block]) -> Value {
        let mut d = InstData::new(op, ty);
        d.operands = SmallVec::from_slice(operands);
        d.blocks = SmallVec::from_slice(blocks);
        self.emit_data(d)
    }

    fn entry_alloca(&mut self, op: Opcode, ty: TypeId, name: &str) -> Value {
        let mut d = InstData::new(op, ty);
        if !name.is_empty() {
            d.md = Metadata::named(name);
        }
        d.span = self.span;
        let (entry, pos) = (self.entry, self.alloca_pos);
        let f = self.func();
        let i = f.create_inst(d);
        f.insert_inst(entry, pos, i);
        self.alloca_pos += 1;
        Value::Inst(i)
    }

    fn new_block(&mut self) -> Block {
        self.func().add_block()
    }

    /// Continue emission in `b` (which nothing has filled yet).
    fn enter(&mut self, b: Block) {
        self.layout.push(b);
        self.cur = Some(b);
    }

    fn ty(&self, t: TypeId) -> &Type {
        self.m.types.get(t)
    }

    fn value_type(&self, v: Value) -> TypeId {
        self.m.func(self.fid).value_type(self.m, v)
    }

    fn u32(&mut self, v: u32) -> Value {
        self.m.const_u32(v)
    }

    // ---- statements ---------------------------------------------------

    fn scope(&mut self, stmts: &[StmtRef<'a>]) -> R<()> {
        for s in stmts {
            if self.cur.is_none() {
                break; // dead code after a terminator
            }
            self.span = s.span.or(self.span);
            self.stmt(s)?;
        }
        Ok(())
    }

    /// Translate `body` into the fresh block `b`, then branch to `next`
    /// unless the body ended in a terminator.
    fn arm(&mut self, b: Block, body: &[StmtRef<'a>], next: Block) -> R<()> {
        self.enter(b);
        self.scope(body)?;
        if self.cur.is_some() {
            self.emit(Opcode::Br, TypeTable::VOID, &[], &[next]);
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt<'a>) -> R<()> {
        match &s.kind {
            StmtKind::Scope(body) => self.scope(body)?,
            StmtKind::If { cond, then_body, else_body } => {
                let c = self.rvalue(cond)?;
                let c = self.as_bool(c);
                let (t, merge) = (self.new_block(), self.new_block());
                let f = if else_body.is_none() { merge } else { self.new_block() };
                self.emit(Opcode::If, TypeTable::VOID, &[c], &[t, f, merge]);
                self.arm(t, then_body, merge)?;
                if let Some(else_body) = else_body {
                    self.arm(f, else_body, merge)?;
                }
                self.enter(merge);
            }
            StmtKind::Switch { value, cases } => self.switch(value, cases)?,
            StmtKind::For { cond, update, body } => {
                let [prep, bb, upd, merge] = [(); 4].map(|_| self.new_block());
                self.emit(Opcode::Loop, TypeTable::VOID, &[], &[prep, bb, upd, merge]);
                self.enter(prep);
                let c = self.rvalue(cond)?;
                let c = self.as_bool(c);
                self.emit(Opcode::CondBr, TypeTable::VOID, &[c], &[bb, merge]);
                self.targets.push(Target::Loop { brk: merge, cont: upd });
                self.arm(bb, body, upd)?;
                self.targets.pop();
                self.targets.push(Target::Closed);
                self.arm(upd, update, prep)?;
                self.targets.pop();
                self.enter(merge);
            }
            StmtKind::Loop { body } => {
                let (bb, merge) = (self.new_block(), self.new_block());
                self.emit(Opcode::SimpleLoop, TypeTable::VOID, &[], &[bb, merge]);
                self.targets.push(Target::Loop { brk: merge, cont: bb });
                self.arm(bb, body, bb)?;
                self.targets.pop();
                self.enter(merge);
            }
            StmtKind::Break => match self.targets.last() {
                Some(Target::Loop { brk, .. } | Target::Switch { brk }) => {
                    let brk = *brk;
                    self.emit(Opcode::Break, TypeTable::VOID, &[], &[brk]);
                }
                _ => return Err(self.err("`break` outside a loop or switch")),
            },
            StmtKind::Continue => {
                let target = self.targets.iter().rev().find(|t| !matches!(t, Target::Switch { .. }));
                match target {
                    Some(Target::Loop { cont, .. }) => {
                        let cont = *cont;
                        self.emit(Opcode::Continue, TypeTable::VOID, &[], &[cont]);
                    }
                    _ => return Err(self.err("`continue` outside a loop")),
                }
            }
            StmtKind::Return(v) => {
                let ops = match v {
                    Some(e) => vec![self.rvalue(e)?],
                    None => Vec::new(),
                };
                self.emit(Opcode::Return, TypeTable::VOID, &ops, &[]);
            }
            StmtKind::Bind { var: v, value: rhs } => {
                let v = *v;
                let var = self.f.var(v);
                if !var.is_binding() {
                    return Err(self.err(format!("`{}` is not a let or a reference", var.name)));
                }
                if self.vars[v.0 as usize] != Value::Undef(TypeTable::VOID) {
                    return Err(self.err(format!("`{}` is bound twice", var.name)));
                }
                let value = if var.kind == VarKind::Ref {
                    if !self.is_addressable(rhs) {
                        return Err(self.err(format!("reference `{}` bound to a value, not storage", var.name)));
                    }
                    self.lvalue(rhs)?
                } else {
                    self.rvalue(rhs)?
                };
                if let (Value::Inst(i), false) = (value, var.name.is_empty()) {
                    let f = self.m.func_mut(self.fid);
                    if f.inst_name(i).is_none() {
                        f.set_inst_name(i, Some(&var.name));
                    }
                }
                self.vars[v.0 as usize] = value;
            }
            StmtKind::Assign { lhs, rhs } => {
                if !lhs.is_lvalue(self.f) {
                    return Err(self.err("the left side of an assignment is not storage"));
                }
                let addr = self.lvalue(lhs)?;
                let v = self.rvalue(rhs)?;
                self.emit(Opcode::Store, TypeTable::VOID, &[addr, v], &[]);
            }
            StmtKind::Expr(e) => {
                self.rvalue(e)?;
            }
            StmtKind::Comment(text) => self.comments.push(text.clone()),
            StmtKind::Checked { op, args, message } => {
                let mut d = InstData::new(*op, TypeTable::VOID);
                for a in args {
                    let v = self.rvalue(a)?;
                    d.operands.push(v);
                }
                d.payload = Payload::Text(message.clone());
                self.emit_data(d);
            }
            StmtKind::Print { format, args } => {
                let mut d = InstData::new(Opcode::Print, TypeTable::VOID);
                for a in args {
                    let v = self.rvalue(a)?;
                    d.operands.push(v);
                }
                d.payload = Payload::Text(format.clone());
                self.emit_data(d);
            }
            StmtKind::RayQuery { query, on_surface, on_procedural } => {
                let q = self.rvalue(query)?;
                let [dispatch, surface, procedural, exit, merge] = [(); 5].map(|_| self.new_block());
                self.emit(Opcode::RayQueryLoop, TypeTable::VOID, &[], &[dispatch, merge]);
                self.enter(dispatch);
                self.emit(Opcode::RayQueryDispatch, TypeTable::VOID, &[q], &[exit, surface, procedural]);
                self.targets.push(Target::Closed);
                self.arm(surface, on_surface, dispatch)?;
                self.arm(procedural, on_procedural, dispatch)?;
                self.targets.pop();
                self.arm(exit, &[], merge)?;
                self.enter(merge);
            }
        }
        Ok(())
    }

    fn switch(&mut self, value: ExprRef<'a>, cases: &[SwitchCase<'a>]) -> R<()> {
        let v = self.rvalue(value)?;
        let merge = self.new_block();
        let blocks: Vec<Block> = cases.iter().map(|_| self.new_block()).collect();
        let mut default = merge;
        let mut literals = Vec::new();
        let mut case_blocks = SmallVec::<[Block; 3]>::new();
        let mut seen = FxHashSet::default();
        for (c, &b) in cases.iter().zip(&blocks) {
            if c.is_default {
                if default != merge {
                    return Err(self.err("a switch with two default cases"));
                }
                default = b;
            }
            for &lit in &c.values {
                if !seen.insert(lit) {
                    return Err(self.err(format!("a switch with case {lit} twice")));
                }
                literals.push(lit);
                case_blocks.push(b);
            }
        }
        let mut d = InstData::new(Opcode::Switch, TypeTable::VOID);
        d.operands.push(v);
        d.blocks.push(merge);
        d.blocks.push(default);
        d.blocks.extend(case_blocks);
        d.payload = Payload::Cases(literals);
        self.emit_data(d);
        self.targets.push(Target::Switch { brk: merge });
        for (c, &b) in cases.iter().zip(&blocks) {
            self.arm(b, &c.body, merge)?;
        }
        self.targets.pop();
        self.enter(merge);
        Ok(())
    }

    // ---- expressions --------------------------------------------------

    /// The address of storage named by `e` (a variable, or a member or
    /// element of one).
    fn lvalue(&mut self, e: ExprRef<'a>) -> R<Value> {
        let (root, path) = self.access_path(e)?;
        let base = self.vars[root.0 as usize];
        if base == Value::Undef(TypeTable::VOID) {
            return Err(self.err(format!("`{}` is used before it is bound", self.f.var(root).name)));
        }
        if path.is_empty() {
            return Ok(base);
        }
        let mut ops = vec![base];
        ops.extend(path);
        Ok(self.emit(Opcode::Gep, e.ty, &ops, &[]))
    }

    /// Root variable and index values of an lvalue expression.
    fn access_path(&mut self, e: ExprRef<'a>) -> R<(VarId, Vec<Value>)> {
        match &e.kind {
            ExprKind::Var(v) if self.f.var(*v).is_storage() || self.is_copied_param(*v) => Ok((*v, Vec::new())),
            ExprKind::Member(base, i) => {
                let (root, mut path) = self.access_path(base)?;
                path.push(self.u32(*i));
                Ok((root, path))
            }
            ExprKind::Access(base, i) => {
                let (root, mut path) = self.access_path(base)?;
                path.push(self.rvalue(i)?);
                Ok((root, path))
            }
            _ => Err(self.err("expected storage (a variable or a member or element of one)")),
        }
    }

    /// A value parameter given a local copy (it is assigned or indexed).
    fn is_copied_param(&self, v: VarId) -> bool {
        matches!(self.f.var(v).kind, VarKind::Param(ArgKind::Value)) && self.vars[v.0 as usize].as_inst().is_some()
    }

    fn is_addressable(&self, e: ExprRef<'a>) -> bool {
        match &e.kind {
            ExprKind::Var(v) => self.f.var(*v).is_storage() || self.is_copied_param(*v),
            ExprKind::Member(b, _) | ExprKind::Access(b, _) => self.is_addressable(b),
            _ => false,
        }
    }

    fn rvalue(&mut self, e: ExprRef<'a>) -> R<Value> {
        if let Some(span) = e.span {
            self.span = Some(span);
        }
        match &e.kind {
            ExprKind::Var(v) => {
                let slot = self.vars[v.0 as usize];
                if slot == Value::Undef(TypeTable::VOID) {
                    return Err(self.err(format!("`{}` is used before it is bound", self.f.var(*v).name)));
                }
                if self.is_addressable(e) {
                    Ok(self.emit(Opcode::Load, e.ty, &[slot], &[]))
                } else {
                    Ok(slot)
                }
            }
            ExprKind::Member(..) | ExprKind::Access(..) if self.is_addressable(e) => {
                let addr = self.lvalue(e)?;
                Ok(self.emit(Opcode::Load, e.ty, &[addr], &[]))
            }
            ExprKind::Member(base, i) => {
                let b = self.rvalue(base)?;
                let i = self.u32(*i);
                Ok(self.emit(Opcode::Extract, e.ty, &[b, i], &[]))
            }
            ExprKind::Access(base, index) => {
                let b = self.rvalue(base)?;
                let i = self.rvalue(index)?;
                if i.as_const().is_some() {
                    return Ok(self.emit(Opcode::Extract, e.ty, &[b, i], &[]));
                }
                // A value indexed at run time: copy it to a local first.
                let slot = self.entry_alloca(Opcode::Alloca, base.ty, "");
                self.emit(Opcode::Store, TypeTable::VOID, &[slot, b], &[]);
                let addr = self.emit(Opcode::Gep, e.ty, &[slot, i], &[]);
                Ok(self.emit(Opcode::Load, e.ty, &[addr], &[]))
            }
            ExprKind::Swizzle(base, lanes) => {
                let b = self.rvalue(base)?;
                let mut ops = vec![b];
                for &l in lanes {
                    ops.push(self.u32(l));
                }
                Ok(self.emit(Opcode::Shuffle, e.ty, &ops, &[]))
            }
            ExprKind::Literal(bits) => Ok(self.m.const_scalar(e.ty, *bits)),
            ExprKind::Constant(data) => {
                let c = self.constant(e.ty, data)?;
                Ok(Value::Const(c))
            }
            ExprKind::Register(r) => Ok(Value::Reg(*r)),
            ExprKind::Unary(op, x) => self.unary(e, *op, x),
            ExprKind::Binary(op, l, r) => self.binary(e, *op, l, r),
            ExprKind::Cast(op, x) => {
                let v = self.rvalue(x)?;
                let opcode = match op {
                    CastOp::Static => Opcode::CastStatic,
                    CastOp::Bitwise => Opcode::CastBitwise,
                };
                Ok(self.emit(opcode, e.ty, &[v], &[]))
            }
            ExprKind::Call(callee, args) => self.call(e, *callee, args),
        }
    }

    fn constant(&mut self, ty: TypeId, data: &ConstantData) -> R<Const> {
        let value = match data {
            ConstantData::Scalar(bits) => ConstValue::Scalar(*bits),
            ConstantData::Composite(members) => {
                let member_types = self.member_types(ty, members.len())?;
                let mut cs = Vec::with_capacity(members.len());
                for (t, d) in member_types.into_iter().zip(members) {
                    cs.push(self.constant(t, d)?);
                }
                ConstValue::Composite(cs)
            }
        };
        Ok(self.m.consts.intern(ConstData { ty, value }))
    }

    /// The types of `n` members of a composite type, or an error if the
    /// type has another number of members.
    fn member_types(&mut self, ty: TypeId, n: usize) -> R<Vec<TypeId>> {
        let types = match self.ty(ty).clone() {
            Type::Vector { elem, lanes } => vec![elem; lanes as usize],
            Type::Matrix { elem, dim } => vec![self.m.types.vector(elem, dim); dim as usize],
            Type::Array { elem, len } if len == n as u64 => vec![elem; n],
            Type::Struct { fields, .. } => fields,
            _ => Vec::new(),
        };
        if types.len() != n {
            let name = xir::text::type_to_string(&self.m.types, ty);
            return Err(self.err(format!("a constant of type {name} with {n} members")));
        }
        Ok(types)
    }

    fn as_bool(&mut self, v: Value) -> Value {
        let ty = self.value_type(v);
        if self.m.types.scalar_of(ty) == TypeTable::BOOL {
            return v;
        }
        let b = self.m.types.with_scalar(ty, TypeTable::BOOL);
        self.emit(Opcode::CastStatic, b, &[v], &[])
    }

    /// `v` broadcast to the shape of `like` (a vector or matrix) when `v`
    /// is a scalar and `like` is not.
    fn broadcast(&mut self, v: Value, like: TypeId) -> Value {
        let vt = self.value_type(v);
        if !self.m.types.is_scalar(vt) || self.m.types.is_scalar(like) {
            return v;
        }
        match self.ty(like).clone() {
            Type::Vector { lanes, .. } => {
                let t = self.m.types.vector(vt, lanes);
                self.emit(Opcode::Aggregate, t, &vec![v; lanes as usize], &[])
            }
            Type::Matrix { dim, .. } => {
                let col_t = self.m.types.vector(vt, dim);
                let col = self.emit(Opcode::Aggregate, col_t, &vec![v; dim as usize], &[]);
                let t = self.m.types.matrix(vt, dim);
                self.emit(Opcode::Aggregate, t, &vec![col; dim as usize], &[])
            }
            _ => v,
        }
    }

    fn is_matrix(&self, t: TypeId) -> bool {
        matches!(self.ty(t), Type::Matrix { .. })
    }

    fn unary(&mut self, e: ExprRef<'a>, op: UnaryOp, x: ExprRef<'a>) -> R<Value> {
        let v = self.rvalue(x)?;
        Ok(match op {
            UnaryOp::Plus => v,
            UnaryOp::Minus if self.is_matrix(x.ty) => self.emit(Opcode::MatrixCompNeg, e.ty, &[v], &[]),
            UnaryOp::Minus => self.emit(Opcode::Neg, e.ty, &[v], &[]),
            UnaryOp::Not => {
                let b = self.as_bool(v);
                let ty = self.value_type(b);
                self.emit(Opcode::BitNot, ty, &[b], &[])
            }
            UnaryOp::BitNot => self.emit(Opcode::BitNot, e.ty, &[v], &[]),
        })
    }

    fn binary(&mut self, e: ExprRef<'a>, op: BinaryOp, l: ExprRef<'a>, r: ExprRef<'a>) -> R<Value> {
        let lv = self.rvalue(l)?;
        let rv = self.rvalue(r)?;
        if let BinaryOp::And | BinaryOp::Or = op {
            let (a, b) = (self.as_bool(lv), self.as_bool(rv));
            let ty = self.value_type(a);
            let opcode = if op == BinaryOp::And { Opcode::BitAnd } else { Opcode::BitOr };
            return Ok(self.emit(opcode, ty, &[a, b], &[]));
        }
        let (lm, rm) = (self.is_matrix(l.ty), self.is_matrix(r.ty));
        if lm || rm {
            let both_composite = !self.m.types.is_scalar(l.ty) && !self.m.types.is_scalar(r.ty);
            let opcode = match op {
                BinaryOp::Mul if both_composite => Opcode::MatrixLinalgMul,
                BinaryOp::Mul => Opcode::MatrixCompMul,
                BinaryOp::Add => Opcode::MatrixCompAdd,
                BinaryOp::Sub => Opcode::MatrixCompSub,
                BinaryOp::Div => Opcode::MatrixCompDiv,
                _ => return Err(self.err(format!("operator {op:?} on a matrix"))),
            };
            let (lv, rv) = if opcode == Opcode::MatrixLinalgMul {
                (lv, rv)
            } else {
                (self.broadcast(lv, r.ty), self.broadcast(rv, l.ty))
            };
            return Ok(self.emit(opcode, e.ty, &[lv, rv], &[]));
        }
        let lv = self.broadcast(lv, r.ty);
        let rv = self.broadcast(rv, l.ty);
        let opcode = match op {
            BinaryOp::Add => Opcode::Add,
            BinaryOp::Sub => Opcode::Sub,
            BinaryOp::Mul => Opcode::Mul,
            BinaryOp::Div => Opcode::Div,
            BinaryOp::Mod => Opcode::Mod,
            BinaryOp::BitAnd => Opcode::BitAnd,
            BinaryOp::BitOr => Opcode::BitOr,
            BinaryOp::BitXor => Opcode::BitXor,
            BinaryOp::Shl => Opcode::Shl,
            BinaryOp::Shr => Opcode::Shr,
            BinaryOp::Less => Opcode::Lt,
            BinaryOp::Greater => Opcode::Gt,
            BinaryOp::LessEqual => Opcode::Le,
            BinaryOp::GreaterEqual => Opcode::Ge,
            BinaryOp::Equal => Opcode::Eq,
            BinaryOp::NotEqual => Opcode::Ne,
            BinaryOp::And | BinaryOp::Or => unreachable!("handled above"),
        };
        Ok(self.emit(opcode, e.ty, &[lv, rv], &[]))
    }

    fn call(&mut self, e: ExprRef<'a>, callee: Callee, args: &[ExprRef<'a>]) -> R<Value> {
        let mut ops = Vec::with_capacity(args.len() + 1);
        let opcode = match callee {
            Callee::Function(f) => {
                let target = self.ast.function(f);
                if target.param_count != args.len() {
                    return Err(self.err(format!(
                        "call of `{}` with {} arguments; it takes {}",
                        target.name,
                        args.len(),
                        target.param_count
                    )));
                }
                ops.push(Value::Func(FuncId::new(f.0 as usize)));
                for ((_, p), a) in target.params().zip(args) {
                    let v = if p.kind == VarKind::Param(ArgKind::Reference) {
                        if !self.is_addressable(a) {
                            return Err(self.err(format!("argument `{}` is by reference: it needs storage", p.name)));
                        }
                        self.lvalue(a)?
                    } else {
                        self.rvalue(a)?
                    };
                    ops.push(v);
                }
                Opcode::Call
            }
            Callee::Builtin(op) => {
                let spec = &xir_spec::spec().op(op).spec;
                for (k, a) in args.iter().enumerate() {
                    let class = spec.operands.get(k).or(spec.variadic.as_ref()).map(|o| &*o.class);
                    let v = match class {
                        Some("lvalue" | "gep_base") => {
                            if !self.is_addressable(a) {
                                return Err(self.err(format!("operand {k} of `{}` must be storage", op.name())));
                            }
                            self.lvalue(a)?
                        }
                        Some("atomic_base" | "value_or_lvalue") if self.is_addressable(a) => self.lvalue(a)?,
                        _ => self.rvalue(a)?,
                    };
                    ops.push(v);
                }
                op
            }
        };
        Ok(self.emit(opcode, e.ty, &ops, &[]))
    }
}

/// Value parameters that need storage: assigned, or the root of a dynamic
/// index (indexing a value at run time goes through memory).
fn assigned_or_indexed_params(f: &Function<'_>) -> FxHashSet<VarId> {
    fn root(e: ExprRef<'_>) -> Option<VarId> {
        match &e.kind {
            ExprKind::Var(v) => Some(*v),
            ExprKind::Member(b, _) | ExprKind::Access(b, _) => root(b),
            _ => None,
        }
    }
    fn expr(e: ExprRef<'_>, out: &mut FxHashSet<VarId>) {
        match &e.kind {
            ExprKind::Access(b, i) => {
                if i.as_literal().is_none() {
                    out.extend(root(b));
                }
                expr(b, out);
                expr(i, out);
            }
            ExprKind::Unary(_, x) | ExprKind::Member(x, _) | ExprKind::Swizzle(x, _) | ExprKind::Cast(_, x) => {
                expr(x, out)
            }
            ExprKind::Binary(_, l, r) => {
                expr(l, out);
                expr(r, out);
            }
            ExprKind::Call(_, args) => args.iter().for_each(|a| expr(a, out)),
            ExprKind::Literal(_) | ExprKind::Constant(_) | ExprKind::Var(_) | ExprKind::Register(_) => {}
        }
    }
    fn scope(s: &[StmtRef<'_>], out: &mut FxHashSet<VarId>) {
        for st in s {
            match &st.kind {
                StmtKind::Scope(b) | StmtKind::Loop { body: b } => scope(b, out),
                StmtKind::If { cond, then_body, else_body } => {
                    expr(cond, out);
                    scope(then_body, out);
                    scope(else_body.as_deref().unwrap_or_default(), out);
                }
                StmtKind::Switch { value, cases } => {
                    expr(value, out);
                    cases.iter().for_each(|c| scope(&c.body, out));
                }
                StmtKind::For { cond, update, body } => {
                    expr(cond, out);
                    scope(update, out);
                    scope(body, out);
                }
                StmtKind::Return(v) => v.iter().for_each(|e| expr(e, out)),
                StmtKind::Assign { lhs, rhs } => {
                    out.extend(root(lhs));
                    expr(lhs, out);
                    expr(rhs, out);
                }
                StmtKind::Expr(e) | StmtKind::Bind { value: e, .. } => expr(e, out),
                StmtKind::Print { args, .. } | StmtKind::Checked { args, .. } => args.iter().for_each(|a| expr(a, out)),
                StmtKind::RayQuery { query, on_surface, on_procedural } => {
                    expr(query, out);
                    scope(on_surface, out);
                    scope(on_procedural, out);
                }
                StmtKind::Break | StmtKind::Continue | StmtKind::Comment(_) => {}
            }
        }
    }
    let mut out = FxHashSet::default();
    scope(&f.body, &mut out);
    out.retain(|v| matches!(f.var(*v).kind, VarKind::Param(ArgKind::Value)));
    out
}

impl Expr<'_> {
    /// The bits of a scalar literal.
    pub fn as_literal(&self) -> Option<u64> {
        match self.kind {
            ExprKind::Literal(b) => Some(b),
            _ => None,
        }
    }
}
