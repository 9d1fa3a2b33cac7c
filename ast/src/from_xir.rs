//! `xir2ast`: structured XIR (`xir.structured`, without Phi) back to an
//! AST, as the inverse of `ast2xir`: translating the tree again gives the
//! same instructions in the same order (up to value names).
//!
//! - an `alloca` is a local (`alloca.shared` a shared variable), declared
//!   for the whole function as `ast2xir` declares it; an instruction's result is a `let` bound where the
//!   instruction stands, a `gep`'s a reference (`ref`);
//! - `if` / `switch` / `loop` / `simple_loop` become their statements, each
//!   arm the region from its block to the construct's merge; a loop's
//!   prepare block must compute its condition as one expression tree (each
//!   value used once, in evaluation order), as `ast2xir` writes it;
//! - arithmetic, comparisons, casts and single-lane extracts use the
//!   operator forms; every other opcode is a call of the built-in.
//!
//! Refused, with the instruction: Phi, undefined values, raw branches and
//! ray-query loops.

use rustc_hash::FxHashMap;
use xir::ir::{
    Block, ConstValue, FuncId, Function as XFunction, FunctionKind as XKind, Inst, Module as XModule, Payload, Type,
    TypeTable, Value,
};
use xir_spec::{Opcode, Trait};

use crate::node::*;

/// Why a module has no AST form, at an instruction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if function.is_empty() { String::new() } else { format!("in function `{function}`: ") })]
pub struct FromXirError {
    pub function: String,
    pub message: String,
}

/// The AST of `m`, in `arenas`. Function `i` of the module is function `i`
/// of the AST, with the types of `m`.
pub fn xir_to_ast<'a>(arenas: &'a Arenas<'a>, m: &XModule) -> Result<Module<'a>, FromXirError> {
    let structured = xir_spec::spec().dialect("xir.structured").expect("the spec declares xir.structured");
    if !xir::dialect::satisfies(m, structured) {
        let now = xir::dialect::dialect_of(m).map_or("no dialect", |d| &*d.name);
        return Err(FromXirError {
            function: String::new(),
            message: format!(
                "the AST form needs `xir.structured` (break and continue as instructions); the module is in `{now}`"
            ),
        });
    }
    let mut ast = Module { types: m.types.clone(), functions: Vec::new() };
    for fid in m.func_ids() {
        let f = m.func(fid);
        let kind = match f.kind {
            XKind::Kernel { block_size, whole_blocks, noalias } => {
                FunctionKind::Kernel { block_size, whole_blocks, noalias }
            }
            XKind::Callable => FunctionKind::Callable,
            XKind::External => {
                return Err(FromXirError {
                    function: f.name.clone(),
                    message: "an external function has no body".into(),
                })
            }
        };
        let af = FnCx::new(arenas, m, fid, Function::new(f.name.clone(), kind, f.ret)).translate()?;
        ast.functions.push(af);
    }
    Ok(ast)
}

/// The order in which `xir_to_ast` visits the blocks of `f` (and `ast2xir`
/// lays them out again): a construct's block, its arms in order, then its
/// merge.
pub fn structured_order(m: &XModule, fid: FuncId) -> Result<Vec<Block>, FromXirError> {
    let arenas = Arenas::default();
    let f = m.func(fid);
    let kind = match f.kind {
        XKind::Kernel { block_size, whole_blocks, noalias } => {
            FunctionKind::Kernel { block_size, whole_blocks, noalias }
        }
        _ => FunctionKind::Callable,
    };
    let mut cx = FnCx::new(&arenas, m, fid, Function::new(f.name.clone(), kind, f.ret));
    cx.declare()?;
    let entry = f.body().ok_or_else(|| cx.err("a function without blocks"))?;
    cx.region(entry, None)?;
    Ok(cx.order)
}

struct FnCx<'x, 'a> {
    ar: &'a Arenas<'a>,
    m: &'x XModule,
    f: &'x XFunction,
    af: Function<'a>,
    /// The variable standing for each instruction result and argument.
    insts: FxHashMap<Inst, VarId>,
    args: Vec<VarId>,
    /// Blocks in visiting order.
    order: Vec<Block>,
}

type R<T> = Result<T, FromXirError>;

impl<'x, 'a> FnCx<'x, 'a> {
    fn new(ar: &'a Arenas<'a>, m: &'x XModule, fid: FuncId, af: Function<'a>) -> Self {
        FnCx { ar, m, f: m.func(fid), af, insts: FxHashMap::default(), args: Vec::new(), order: Vec::new() }
    }

    fn err(&self, message: impl Into<String>) -> FromXirError {
        FromXirError { function: self.f.name.clone(), message: message.into() }
    }

    fn at(&self, i: Inst, message: &str) -> FromXirError {
        let op = self.f.opcode(i).name();
        self.err(format!("`{op}` (inst{}): {message}", i.index()))
    }

    fn name(&self, i: Inst) -> String {
        self.f.inst_name(i).map(str::to_string).unwrap_or_default()
    }

    /// Parameters, and the entry block's allocas as variables.
    fn declare(&mut self) -> R<()> {
        for (k, a) in self.f.args.iter().enumerate() {
            let name = a.md.name.clone().unwrap_or_else(|| format!("arg{k}"));
            let v = self.af.add_param(name, a.ty, a.kind);
            self.args.push(v);
        }
        // Allocas anywhere become function-level variables, as `ast2xir`
        // declares them (their storage is the function's either way).
        let allocas: Vec<Inst> =
            self.f.blocks().iter().flat_map(|&b| self.f.block(b).insts().iter().copied()).collect();
        for i in allocas {
            let kind = match self.f.opcode(i) {
                Opcode::Alloca => VarKind::Local,
                Opcode::AllocaShared => VarKind::Shared,
                _ => continue,
            };
            let (ty, name) = (self.f.inst(i).ty, self.name(i));
            let v = self.af.add_var(Variable { name, ty, kind, span: self.f.inst_span(i) });
            self.insts.insert(i, v);
        }
        Ok(())
    }

    fn translate(mut self) -> R<Function<'a>> {
        self.declare()?;
        let entry = self.f.body().ok_or_else(|| self.err("a function without blocks"))?;
        self.af.body = self.region(entry, None)?;
        Ok(self.af)
    }

    // ---- values -------------------------------------------------------

    fn expr(&self, ty: xir::ir::TypeId, kind: ExprKind<'a>) -> ExprRef<'a> {
        self.ar.expr(ty, kind, None)
    }

    /// An operand as an expression.
    fn value(&self, v: Value, user: Inst) -> R<ExprRef<'a>> {
        Ok(match v {
            Value::Inst(i) => {
                let var = *self.insts.get(&i).ok_or_else(|| self.at(user, "an operand defined later or elsewhere"))?;
                self.expr(self.af.var(var).ty, ExprKind::Var(var))
            }
            Value::Arg(k) => {
                let var = self.args[k as usize];
                self.expr(self.af.var(var).ty, ExprKind::Var(var))
            }
            Value::Const(c) => {
                let data = self.m.consts.get(c);
                match &data.value {
                    ConstValue::Scalar(bits) => self.expr(data.ty, ExprKind::Literal(*bits)),
                    ConstValue::Composite(_) => self.expr(data.ty, ExprKind::Constant(self.constant(c))),
                }
            }
            Value::Reg(r) => self.expr(self.m.register_type(r), ExprKind::Register(r)),
            Value::Undef(_) => return Err(self.at(user, "an undefined operand has no AST form")),
            Value::Func(_) => return Err(self.at(user, "a function used as a value")),
        })
    }

    fn constant(&self, c: xir::ir::Const) -> ConstantData {
        match &self.m.consts.get(c).value {
            ConstValue::Scalar(bits) => ConstantData::Scalar(*bits),
            ConstValue::Composite(ms) => ConstantData::Composite(ms.iter().map(|&m| self.constant(m)).collect()),
        }
    }

    /// The operands as expressions (a call's callee is not one).
    fn operands(&self, i: Inst) -> R<Vec<ExprRef<'a>>> {
        let ops = &self.f.inst(i).operands;
        let skip = usize::from(self.f.opcode(i) == Opcode::Call);
        ops[skip..].iter().map(|&v| self.value(v, i)).collect()
    }

    fn is_matrix(&self, t: xir::ir::TypeId) -> bool {
        matches!(self.m.types.get(t), Type::Matrix { .. })
    }

    /// The expression computing instruction `i` (not a terminator, not an
    /// alloca), its operands already bound.
    fn inst_expr(&self, i: Inst) -> R<ExprRef<'a>> {
        let ops = self.operands(i)?;
        self.inst_expr_from(i, &ops)
    }

    // ---- statements ---------------------------------------------------

    fn st(&self, kind: StmtKind<'a>, i: Option<Inst>) -> StmtRef<'a> {
        self.ar.stmt(kind, i.and_then(|i| self.f.inst_span(i)))
    }

    /// The statements of instruction `i` (a non-terminator).
    fn inst_stmts(&mut self, i: Inst, out: &mut Scope<'a>) -> R<()> {
        for c in &self.f.inst_md(i).comments {
            out.push(self.st(StmtKind::Comment(c.clone()), None));
        }
        let core = self.f.inst(i);
        match core.opcode {
            Opcode::Alloca | Opcode::AllocaShared if self.insts.contains_key(&i) => {}
            Opcode::Store => {
                let ops = self.operands(i)?;
                out.push(self.st(StmtKind::Assign { lhs: ops[0], rhs: ops[1] }, Some(i)));
            }
            Opcode::Print => {
                let args = self.operands(i)?;
                let format = self.f.text(i).unwrap_or_default().to_string();
                out.push(self.st(StmtKind::Print { format, args }, Some(i)));
            }
            op if core.ty == TypeTable::VOID && matches!(self.f.payload(i), Payload::Text(_)) => {
                let args = self.operands(i)?;
                let message = self.f.text(i).unwrap_or_default().to_string();
                out.push(self.st(StmtKind::Checked { op, args, message }, Some(i)));
            }
            _ => {
                let e = self.inst_expr(i)?;
                if core.ty == TypeTable::VOID {
                    out.push(self.st(StmtKind::Expr(e), Some(i)));
                } else {
                    let kind = if core.opcode == Opcode::Gep { VarKind::Ref } else { VarKind::Let };
                    let v =
                        self.af.add_var(Variable { name: self.name(i), ty: core.ty, kind, span: self.f.inst_span(i) });
                    self.insts.insert(i, v);
                    out.push(self.st(StmtKind::Bind { var: v, value: e }, Some(i)));
                }
            }
        }
        Ok(())
    }

    /// The statements from block `b` up to `exit` (the enclosing
    /// construct's continuation), or to the function's end.
    fn region(&mut self, mut b: Block, exit: Option<Block>) -> R<Scope<'a>> {
        let mut out = Vec::new();
        loop {
            self.order.push(b);
            let insts: Vec<Inst> = self.f.block(b).insts().to_vec();
            let Some((&term, body)) = insts.split_last() else {
                return Err(self.err(format!("block {} has no terminator", b.index())));
            };
            if !xir_spec::spec().op(self.f.opcode(term)).has(Trait::Terminator) {
                return Err(self.err(format!("block {} has no terminator", b.index())));
            }
            // A loop's prepare block is read as its condition tree instead.
            for &i in body {
                self.inst_stmts(i, &mut out)?;
            }
            let core = self.f.inst(term).clone();
            let blocks = core.blocks.clone();
            let next = match core.opcode {
                Opcode::Br => {
                    if Some(blocks[0]) != exit {
                        return Err(self.at(term, "a branch that does not end its construct's region (a lowered break or continue, as after restructure_cfg, has no AST form)"));
                    }
                    return Ok(out);
                }
                Opcode::Return => {
                    let v = core.operands.first().map(|&v| self.value(v, term)).transpose()?;
                    out.push(self.st(StmtKind::Return(v), Some(term)));
                    return Ok(out);
                }
                Opcode::Break => {
                    out.push(self.st(StmtKind::Break, Some(term)));
                    return Ok(out);
                }
                Opcode::Continue => {
                    out.push(self.st(StmtKind::Continue, Some(term)));
                    return Ok(out);
                }
                Opcode::Unreachable => {
                    let message = self.f.text(term).unwrap_or_default().to_string();
                    let stmt = if matches!(self.f.payload(term), Payload::Text(_)) {
                        StmtKind::Checked { op: Opcode::Unreachable, args: Vec::new(), message }
                    } else {
                        let e = self
                            .expr(TypeTable::VOID, ExprKind::Call(Callee::Builtin(Opcode::Unreachable), Vec::new()));
                        StmtKind::Expr(e)
                    };
                    out.push(self.st(stmt, Some(term)));
                    return Ok(out);
                }
                Opcode::If => {
                    let cond = self.value(core.operands[0], term)?;
                    let (t, f, merge) = (blocks[0], blocks[1], blocks[2]);
                    let then_body = self.region(t, Some(merge))?;
                    let else_body = if f == merge { None } else { Some(self.region(f, Some(merge))?) };
                    out.push(self.st(StmtKind::If { cond, then_body, else_body }, Some(term)));
                    merge
                }
                Opcode::Switch => {
                    let value = self.value(core.operands[0], term)?;
                    let (merge, default) = (blocks[0], blocks[1]);
                    let cases_lits = self.f.cases(term).to_vec();
                    let mut groups: Vec<(Block, Vec<u64>)> = Vec::new();
                    for (lit, &blk) in cases_lits.iter().zip(&blocks[2..]) {
                        match groups.iter_mut().find(|g| g.0 == blk) {
                            Some(g) => g.1.push(*lit),
                            None => groups.push((blk, vec![*lit])),
                        }
                    }
                    if default != merge && !groups.iter().any(|g| g.0 == default) {
                        groups.push((default, Vec::new()));
                    }
                    let mut cases = Vec::new();
                    for (blk, values) in groups {
                        let body = self.region(blk, Some(merge))?;
                        cases.push(SwitchCase { values, is_default: blk == default && default != merge, body });
                    }
                    out.push(self.st(StmtKind::Switch { value, cases }, Some(term)));
                    merge
                }
                Opcode::Loop => {
                    let (prep, body_b, update_b, merge) = (blocks[0], blocks[1], blocks[2], blocks[3]);
                    self.order.push(prep);
                    let cond = self.condition(prep, body_b, merge)?;
                    let body = self.region(body_b, Some(update_b))?;
                    let update = self.region(update_b, Some(prep))?;
                    out.push(self.st(StmtKind::For { cond, update, body }, Some(term)));
                    merge
                }
                Opcode::SimpleLoop => {
                    let (body_b, merge) = (blocks[0], blocks[1]);
                    let body = self.region(body_b, Some(body_b))?;
                    out.push(self.st(StmtKind::Loop { body }, Some(term)));
                    merge
                }
                _ => return Err(self.at(term, "a terminator with no AST form")),
            };
            b = next;
        }
    }

    /// A loop's prepare block as one condition expression: its
    /// instructions must form the tree `cond_br`'s operand is, each used
    /// once, in the order evaluating the tree emits them.
    fn condition(&mut self, prep: Block, body: Block, merge: Block) -> R<ExprRef<'a>> {
        let insts: Vec<Inst> = self.f.block(prep).insts().to_vec();
        let Some((&term, defs)) = insts.split_last() else {
            return Err(self.err("an empty loop prepare block"));
        };
        let core = self.f.inst(term);
        if core.opcode != Opcode::CondBr || core.blocks.as_slice() != [body, merge] {
            return Err(self.at(term, "a loop's prepare block must end in `cond_br` to its body or its merge"));
        }
        let mut emitted = Vec::new();
        let e = self.tree(core.operands[0], defs, &mut emitted, term)?;
        if emitted != defs {
            return Err(self.at(term, "the loop condition is not one expression tree in evaluation order"));
        }
        Ok(e)
    }

    fn tree(&mut self, v: Value, defs: &[Inst], emitted: &mut Vec<Inst>, user: Inst) -> R<ExprRef<'a>> {
        let Value::Inst(i) = v else { return self.value(v, user) };
        if !defs.contains(&i) {
            return self.value(v, user);
        }
        if self.f.uses(v).len() != 1 || emitted.contains(&i) {
            return Err(self.at(i, "a loop-condition value used more than once"));
        }
        let core = self.f.inst(i).clone();
        if matches!(core.opcode, Opcode::Gep | Opcode::Call)
            || !xir_spec::spec().op(core.opcode).has(Trait::Pure) && core.opcode != Opcode::Load
        {
            return Err(self.at(i, "a loop condition computing more than a pure expression"));
        }
        let mut children = Vec::new();
        for &o in &core.operands {
            children.push(self.tree(o, defs, emitted, i)?);
        }
        emitted.push(i);
        self.inst_expr_from(i, &children)
    }

    /// The expression of instruction `i` over the operand expressions `ops`.
    fn inst_expr_from(&self, i: Inst, ops: &[ExprRef<'a>]) -> R<ExprRef<'a>> {
        let core = self.f.inst(i);
        let ty = core.ty;
        let kind = match core.opcode {
            Opcode::Load => return Ok(ops[0]),
            Opcode::Gep => {
                let mut e = ops[0];
                for &idx in &ops[1..] {
                    e = self.expr(ty, ExprKind::Access(e, idx));
                }
                return Ok(e);
            }
            op @ (Opcode::Add
            | Opcode::Sub
            | Opcode::Mul
            | Opcode::Div
            | Opcode::Mod
            | Opcode::BitAnd
            | Opcode::BitOr
            | Opcode::BitXor
            | Opcode::Shl
            | Opcode::Shr
            | Opcode::Lt
            | Opcode::Gt
            | Opcode::Le
            | Opcode::Ge
            | Opcode::Eq
            | Opcode::Ne)
                if !self.is_matrix(ops[0].ty) =>
            {
                ExprKind::Binary(binary_op(op), ops[0], ops[1])
            }
            Opcode::Neg if !self.is_matrix(ty) => ExprKind::Unary(UnaryOp::Minus, ops[0]),
            Opcode::BitNot => ExprKind::Unary(UnaryOp::BitNot, ops[0]),
            Opcode::CastStatic => ExprKind::Cast(CastOp::Static, ops[0]),
            Opcode::CastBitwise => ExprKind::Cast(CastOp::Bitwise, ops[0]),
            Opcode::Extract if ops.len() == 2 && u32_literal(ops[1]).is_some() => {
                ExprKind::Member(ops[0], u32_literal(ops[1]).expect("checked by the guard"))
            }
            Opcode::Shuffle if ops[1..].iter().all(|o| u32_literal(o).is_some()) => {
                ExprKind::Swizzle(ops[0], ops[1..].iter().map(|o| u32_literal(o).expect("checked")).collect())
            }
            Opcode::Call => {
                let Value::Func(callee) = core.operands[0] else {
                    return Err(self.at(i, "a call without a callee"));
                };
                ExprKind::Call(Callee::Function(FuncRef(callee.index() as u32)), ops.to_vec())
            }
            Opcode::Phi => return Err(self.at(i, "Phi has no AST form (run reg2mem first)")),
            Opcode::Alloca | Opcode::AllocaShared => return Err(self.at(i, "an alloca of another function")),
            op => {
                if matches!(self.f.payload(i), Payload::Text(t) if !t.is_empty()) {
                    return Err(self.at(i, "a message on a built-in other than print"));
                }
                ExprKind::Call(Callee::Builtin(op), ops.to_vec())
            }
        };
        Ok(self.expr(ty, kind))
    }
}

fn u32_literal(e: &Expr<'_>) -> Option<u32> {
    match e.kind {
        ExprKind::Literal(b) if e.ty == TypeTable::U32 => Some(b as u32),
        _ => None,
    }
}

fn binary_op(op: Opcode) -> BinaryOp {
    match op {
        Opcode::Add => BinaryOp::Add,
        Opcode::Sub => BinaryOp::Sub,
        Opcode::Mul => BinaryOp::Mul,
        Opcode::Div => BinaryOp::Div,
        Opcode::Mod => BinaryOp::Mod,
        Opcode::BitAnd => BinaryOp::BitAnd,
        Opcode::BitOr => BinaryOp::BitOr,
        Opcode::BitXor => BinaryOp::BitXor,
        Opcode::Shl => BinaryOp::Shl,
        Opcode::Shr => BinaryOp::Shr,
        Opcode::Lt => BinaryOp::Less,
        Opcode::Gt => BinaryOp::Greater,
        Opcode::Le => BinaryOp::LessEqual,
        Opcode::Ge => BinaryOp::GreaterEqual,
        Opcode::Eq => BinaryOp::Equal,
        Opcode::Ne => BinaryOp::NotEqual,
        other => unreachable!("{other:?} is not a binary operator"),
    }
}
