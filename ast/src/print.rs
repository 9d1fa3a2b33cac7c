//! The AST as readable C-like code (`xir-opt --emit ast`). Types print in
//! the IR's text spelling; built-ins by their spec name (`buffer.read(x,
//! i)`); every variable is declared at the top of its function, as the AST
//! keeps them (function-level, like the allocas they become). The output
//! is for reading, not parsing back.

use std::fmt::Write;

use xir::ir::{ArgKind, TypeId, TypeTable};
use xir::text::{type_to_string, write_scalar};

use crate::node::*;

pub fn print_module(m: &Module<'_>) -> String {
    let mut out = String::new();
    for (i, f) in m.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        Printer { m, f, out: &mut out, names: display_names(f) }.function();
    }
    out
}

struct Printer<'p, 'a> {
    m: &'p Module<'a>,
    f: &'p Function<'a>,
    out: &'p mut String,
    /// Each variable's printed name: its own, suffixed `_N` when an earlier
    /// variable of the function has it, `vN` when it has none.
    names: Vec<String>,
}

fn display_names(f: &Function<'_>) -> Vec<String> {
    let mut seen = rustc_hash::FxHashSet::default();
    f.vars
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let base = if v.name.is_empty() { format!("v{i}") } else { v.name.clone() };
            let mut name = base.clone();
            let mut n = 0;
            while !seen.insert(name.clone()) {
                n += 1;
                name = format!("{base}_{n}");
            }
            name
        })
        .collect()
}

/// Binding strength of an expression, for parentheses: higher binds tighter.
fn precedence(e: &Expr<'_>) -> u8 {
    match &e.kind {
        ExprKind::Binary(op, ..) => match op {
            BinaryOp::Or => 1,
            BinaryOp::And => 2,
            BinaryOp::BitOr => 3,
            BinaryOp::BitXor => 4,
            BinaryOp::BitAnd => 5,
            BinaryOp::Equal | BinaryOp::NotEqual => 6,
            BinaryOp::Less | BinaryOp::Greater | BinaryOp::LessEqual | BinaryOp::GreaterEqual => 7,
            BinaryOp::Shl | BinaryOp::Shr => 8,
            BinaryOp::Add | BinaryOp::Sub => 9,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => 10,
        },
        ExprKind::Unary(..) | ExprKind::Cast(..) => 11,
        _ => 12,
    }
}

fn binary_symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Mod => "%",
        BinaryOp::BitAnd => "&",
        BinaryOp::BitOr => "|",
        BinaryOp::BitXor => "^",
        BinaryOp::Shl => "<<",
        BinaryOp::Shr => ">>",
        BinaryOp::And => "&&",
        BinaryOp::Or => "||",
        BinaryOp::Less => "<",
        BinaryOp::Greater => ">",
        BinaryOp::LessEqual => "<=",
        BinaryOp::GreaterEqual => ">=",
        BinaryOp::Equal => "==",
        BinaryOp::NotEqual => "!=",
    }
}

const LANES: [char; 4] = ['x', 'y', 'z', 'w'];

impl Printer<'_, '_> {
    fn types(&self) -> &TypeTable {
        &self.m.types
    }

    fn ty(&mut self, t: TypeId) {
        let s = type_to_string(self.types(), t);
        self.out.push_str(&s);
    }

    fn var_name(&self, v: VarId) -> String {
        self.names[v.0 as usize].clone()
    }

    fn function(&mut self) {
        let f = self.f;
        match f.kind {
            FunctionKind::Kernel { .. } => self.out.push_str("kernel void "),
            FunctionKind::Callable => {
                self.ty(f.ret);
                self.out.push(' ');
            }
        }
        let _ = write!(self.out, "{}(", f.name);
        for (i, (v, p)) in f.params().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.ty(p.ty);
            let amp = if p.kind == VarKind::Param(ArgKind::Reference) { " &" } else { " " };
            let _ = write!(self.out, "{amp}{}", self.var_name(v));
        }
        self.out.push(')');
        if let FunctionKind::Kernel { block_size: [x, y, z], whole_blocks, noalias } = f.kind {
            let _ = write!(self.out, " block_size({x}, {y}, {z})");
            if whole_blocks {
                self.out.push_str(" whole_blocks");
            }
            if noalias {
                self.out.push_str(" noalias");
            }
        }
        self.out.push_str(" {\n");
        for (i, v) in f.vars.iter().enumerate().skip(f.param_count) {
            if v.is_binding() {
                continue; // declared where it is bound
            }
            self.indent(1);
            if v.kind == VarKind::Shared {
                self.out.push_str("shared ");
            }
            self.ty(v.ty);
            let _ = writeln!(self.out, " {};", self.var_name(VarId(i as u32)));
        }
        self.scope(&f.body, 1);
        self.out.push_str("}\n");
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("    ");
        }
    }

    fn scope(&mut self, stmts: &[StmtRef<'_>], depth: usize) {
        for s in stmts {
            self.stmt(s, depth);
        }
    }

    fn block(&mut self, stmts: &[StmtRef<'_>], depth: usize) {
        self.out.push_str("{\n");
        self.scope(stmts, depth + 1);
        self.indent(depth);
        self.out.push('}');
    }

    fn stmt(&mut self, s: &Stmt<'_>, depth: usize) {
        self.indent(depth);
        match &s.kind {
            StmtKind::Scope(body) => {
                self.block(body, depth);
                self.out.push('\n');
            }
            StmtKind::If { cond, then_body, else_body } => {
                self.out.push_str("if (");
                self.expr(cond, 0);
                self.out.push_str(") ");
                self.block(then_body, depth);
                if let Some(else_body) = else_body {
                    self.out.push_str(" else ");
                    self.block(else_body, depth);
                }
                self.out.push('\n');
            }
            StmtKind::Switch { value, cases } => {
                self.out.push_str("switch (");
                self.expr(value, 0);
                self.out.push_str(") {\n");
                for c in cases {
                    self.indent(depth + 1);
                    let mut labels: Vec<String> = c
                        .values
                        .iter()
                        .map(|&v| {
                            let mut s = String::from("case ");
                            write_scalar(self.types(), value.ty, v, &mut s);
                            s
                        })
                        .collect();
                    if c.is_default {
                        labels.push("default".into());
                    }
                    let _ = write!(self.out, "{}: ", labels.join(": "));
                    self.block(&c.body, depth + 1);
                    self.out.push('\n');
                }
                self.indent(depth);
                self.out.push_str("}\n");
            }
            StmtKind::For { cond, update, body } => {
                self.out.push_str("for (; ");
                self.expr(cond, 0);
                self.out.push_str("; ");
                for (i, u) in update.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.inline_stmt(u);
                }
                self.out.push_str(") ");
                self.block(body, depth);
                self.out.push('\n');
            }
            StmtKind::Loop { body } => {
                self.out.push_str("loop ");
                self.block(body, depth);
                self.out.push('\n');
            }
            StmtKind::RayQuery { query, on_surface, on_procedural } => {
                self.out.push_str("ray_query (");
                self.expr(query, 0);
                self.out.push_str(") on_surface ");
                self.block(on_surface, depth);
                self.out.push_str(" on_procedural ");
                self.block(on_procedural, depth);
                self.out.push('\n');
            }
            StmtKind::Comment(text) => {
                for (i, line) in text.lines().enumerate() {
                    if i > 0 {
                        self.out.push('\n');
                        self.indent(depth);
                    }
                    let _ = write!(self.out, "// {line}");
                }
                self.out.push('\n');
            }
            _ => {
                self.inline_stmt(s);
                self.out.push_str(";\n");
            }
        }
    }

    /// A simple statement without its `;` (also used in a `for` header).
    fn inline_stmt(&mut self, s: &Stmt<'_>) {
        match &s.kind {
            StmtKind::Break => self.out.push_str("break"),
            StmtKind::Continue => self.out.push_str("continue"),
            StmtKind::Return(None) => self.out.push_str("return"),
            StmtKind::Return(Some(v)) => {
                self.out.push_str("return ");
                self.expr(v, 0);
            }
            StmtKind::Bind { var, value } => {
                self.out.push_str(if self.f.var(*var).kind == VarKind::Ref { "ref " } else { "let " });
                self.ty(self.f.var(*var).ty);
                let _ = write!(self.out, " {} = ", self.var_name(*var));
                self.expr(value, 0);
            }
            StmtKind::Assign { lhs, rhs } => {
                self.expr(lhs, 0);
                self.out.push_str(" = ");
                self.expr(rhs, 0);
            }
            StmtKind::Expr(e) => self.expr(e, 0),
            StmtKind::Print { format, args } => {
                let _ = write!(self.out, "print({format:?}");
                for a in args {
                    self.out.push_str(", ");
                    self.expr(a, 0);
                }
                self.out.push(')');
            }
            StmtKind::Comment(text) => {
                let _ = write!(self.out, "/* {text} */");
            }
            StmtKind::Checked { op, args, message } => {
                let _ = write!(self.out, "{}(", op.name());
                for a in args {
                    self.expr(a, 0);
                    self.out.push_str(", ");
                }
                let _ = write!(self.out, "{message:?})");
            }
            StmtKind::Scope(_)
            | StmtKind::If { .. }
            | StmtKind::Switch { .. }
            | StmtKind::For { .. }
            | StmtKind::Loop { .. }
            | StmtKind::RayQuery { .. } => self.out.push_str("/* compound statement */"),
        }
    }

    fn args(&mut self, args: &[ExprRef<'_>]) {
        self.out.push('(');
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(a, 0);
        }
        self.out.push(')');
    }

    /// Print `e`, in parentheses when it binds looser than `min`.
    fn expr(&mut self, e: &Expr<'_>, min: u8) {
        let p = precedence(e);
        let paren = p < min;
        if paren {
            self.out.push('(');
        }
        match &e.kind {
            ExprKind::Unary(op, x) => {
                self.out.push_str(match op {
                    UnaryOp::Plus => "+",
                    UnaryOp::Minus => "-",
                    UnaryOp::Not => "!",
                    UnaryOp::BitNot => "~",
                });
                self.expr(x, p);
            }
            ExprKind::Binary(op, l, r) => {
                self.expr(l, p);
                let _ = write!(self.out, " {} ", binary_symbol(*op));
                self.expr(r, p + 1);
            }
            ExprKind::Member(base, i) => {
                self.expr(base, 12);
                if matches!(self.types().get(base.ty), xir::ir::Type::Vector { .. }) && *i < 4 {
                    let _ = write!(self.out, ".{}", LANES[*i as usize]);
                } else {
                    let _ = write!(self.out, ".m{i}");
                }
            }
            ExprKind::Swizzle(base, lanes) => {
                self.expr(base, 12);
                self.out.push('.');
                for &l in lanes {
                    self.out.push(LANES.get(l as usize).copied().unwrap_or('?'));
                }
            }
            ExprKind::Access(base, i) => {
                self.expr(base, 12);
                self.out.push('[');
                self.expr(i, 0);
                self.out.push(']');
            }
            ExprKind::Literal(bits) => {
                let mut s = String::new();
                write_scalar(self.types(), e.ty, *bits, &mut s);
                self.out.push_str(&s);
                if self.types().is_int(e.ty)
                    && !self.types().get(e.ty).eq(&xir::ir::Type::Int { bits: 32, signed: true })
                {
                    let t = type_to_string(self.types(), e.ty);
                    self.out.push_str(&t);
                }
            }
            ExprKind::Constant(data) => {
                self.ty(e.ty);
                self.constant(e.ty, data);
            }
            ExprKind::Var(v) => {
                let n = self.var_name(*v);
                self.out.push_str(&n);
            }
            ExprKind::Register(r) => {
                let _ = write!(self.out, "${}", r.name());
            }
            ExprKind::Call(callee, args) => {
                match callee {
                    Callee::Function(f) => self.out.push_str(&self.m.function(*f).name),
                    Callee::Builtin(op) => self.out.push_str(op.name()),
                }
                if !matches!(callee, Callee::Function(_)) && e.ty != TypeTable::VOID && needs_type_hint(&e.kind) {
                    self.out.push('<');
                    self.ty(e.ty);
                    self.out.push('>');
                }
                self.args(args);
            }
            ExprKind::Cast(op, x) => {
                self.out.push_str(match op {
                    CastOp::Static => "static_cast<",
                    CastOp::Bitwise => "bit_cast<",
                });
                self.ty(e.ty);
                self.out.push_str(">(");
                self.expr(x, 0);
                self.out.push(')');
            }
        }
        if paren {
            self.out.push(')');
        }
    }

    fn constant(&mut self, ty: TypeId, data: &ConstantData) {
        match data {
            ConstantData::Scalar(bits) => {
                let mut s = String::new();
                write_scalar(self.types(), ty, *bits, &mut s);
                self.out.push_str(&s);
            }
            ConstantData::Composite(members) => {
                let member_ty = |i: usize| match self.types().get(ty) {
                    xir::ir::Type::Vector { elem, .. } | xir::ir::Type::Array { elem, .. } => Some(*elem),
                    xir::ir::Type::Struct { fields, .. } => fields.get(i).copied(),
                    xir::ir::Type::Matrix { elem, dim } => {
                        self.types().lookup(&xir::ir::Type::Vector { elem: *elem, lanes: *dim })
                    }
                    _ => None,
                };
                let tys: Vec<Option<TypeId>> = (0..members.len()).map(member_ty).collect();
                self.out.push('{');
                for (i, (d, t)) in members.iter().zip(tys).enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    match t {
                        Some(t) => self.constant(t, d),
                        None => self.out.push('?'),
                    }
                }
                self.out.push('}');
            }
        }
    }
}

/// Built-ins whose result type is not evident from their arguments
/// (aggregates, reads of typed storage) print it: `aggregate<vec<f32, 3>>(..)`.
fn needs_type_hint(k: &ExprKind<'_>) -> bool {
    matches!(k, ExprKind::Call(Callee::Builtin(op), _) if matches!(op.name(), "aggregate"))
}
