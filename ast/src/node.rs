//! AST nodes. Expressions and statements are allocated in `Arenas` and refer
//! to each other by `&'a` reference: a tree is built once, read many times
//! (printed, translated) and dropped as a whole, which is exactly what an
//! arena is for. Variables and functions are small ids into their tables.
//!
//! Types are `xir::ir::TypeId`s of the module's `TypeTable`: the AST speaks
//! the IR's type system (declared in `ir-spec`), so translation never maps
//! types. Built-in operations are spec opcodes (`Callee::Builtin`): an
//! opcode added to `opcodes.ron` can be called from the AST with no new
//! node kind.

use typed_arena::Arena;
use xir::ir::{ArgKind, Span, TypeId, TypeTable};
use xir_spec::{Opcode, SpecialRegister};

/// The arenas a module's nodes live in. Create one, build a `Module<'a>`
/// that borrows it, and drop both together.
#[derive(Default)]
pub struct Arenas<'a> {
    exprs: Arena<Expr<'a>>,
    stmts: Arena<Stmt<'a>>,
}

impl<'a> Arenas<'a> {
    pub fn expr(&'a self, ty: TypeId, kind: ExprKind<'a>, span: Option<Span>) -> ExprRef<'a> {
        self.exprs.alloc(Expr { ty, kind, span })
    }
    pub fn stmt(&'a self, kind: StmtKind<'a>, span: Option<Span>) -> StmtRef<'a> {
        self.stmts.alloc(Stmt { kind, span })
    }
}

pub type ExprRef<'a> = &'a Expr<'a>;
pub type StmtRef<'a> = &'a Stmt<'a>;

/// A variable of one function: index into `Function::vars`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// A function of the module: index into `Module::functions`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncRef(pub u32);

#[derive(Clone, Debug)]
pub struct Expr<'a> {
    /// The expression's type; `void` for calls without a result.
    pub ty: TypeId,
    pub kind: ExprKind<'a>,
    pub span: Option<Span>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Plus,
    Minus,
    /// Logical not (`!`): the operand is cast to bool.
    Not,
    BitNot,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    /// Logical and / or: both operands are evaluated and cast to bool.
    And,
    Or,
    Less,
    Greater,
    LessEqual,
    GreaterEqual,
    Equal,
    NotEqual,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CastOp {
    /// Value conversion (`cast.static`).
    Static,
    /// Reinterpretation of the bits (`cast.bitwise`).
    Bitwise,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Callee {
    /// A function of the module.
    Function(FuncRef),
    /// A spec opcode applied to the arguments in its operand order
    /// (`buffer.read(buf, i)`, `atomic.fetch_add(base, v, i)`, `sqrt(x)`).
    Builtin(Opcode),
}

/// A constant composite (vector, matrix, array, struct): members in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConstantData {
    /// Bits of a scalar, zero-extended (bool: 0 or 1).
    Scalar(u64),
    Composite(Vec<ConstantData>),
}

#[derive(Clone, Debug)]
pub enum ExprKind<'a> {
    Unary(UnaryOp, ExprRef<'a>),
    Binary(BinaryOp, ExprRef<'a>, ExprRef<'a>),
    /// Field `index` of a struct, or lane `index` of a vector.
    Member(ExprRef<'a>, u32),
    /// Several lanes of a vector (`v.zyx`).
    Swizzle(ExprRef<'a>, Vec<u32>),
    /// Element of an array, vector or matrix at a dynamic index.
    Access(ExprRef<'a>, ExprRef<'a>),
    /// A scalar literal: its bits in the expression's type.
    Literal(u64),
    /// A constant composite of the expression's type.
    Constant(ConstantData),
    /// A variable (local, shared or argument).
    Var(VarId),
    /// A special register (`$dispatch_id`, ...).
    Register(SpecialRegister),
    Call(Callee, Vec<ExprRef<'a>>),
    Cast(CastOp, ExprRef<'a>),
}

impl<'a> Expr<'a> {
    /// Whether the expression names storage (a variable or a member /
    /// element of one): it can be assigned and passed by reference.
    pub fn is_lvalue(&self, f: &Function<'a>) -> bool {
        match &self.kind {
            ExprKind::Var(v) => f.var(*v).is_storage(),
            ExprKind::Member(base, _) | ExprKind::Access(base, _) => base.is_lvalue(f),
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Stmt<'a> {
    pub kind: StmtKind<'a>,
    pub span: Option<Span>,
}

/// A statement list.
pub type Scope<'a> = Vec<StmtRef<'a>>;

#[derive(Clone, Debug)]
pub struct SwitchCase<'a> {
    /// Case literals (bits in the selector's type) that share this body.
    pub values: Vec<u64>,
    /// Whether `default` also runs this body.
    pub is_default: bool,
    pub body: Scope<'a>,
}

#[derive(Clone, Debug)]
pub enum StmtKind<'a> {
    Scope(Scope<'a>),
    /// Without an else arm (`None`) a false condition goes straight on;
    /// an empty else arm (`Some(vec![])`) is a block of its own.
    If {
        cond: ExprRef<'a>,
        then_body: Scope<'a>,
        else_body: Option<Scope<'a>>,
    },
    /// No fall-through: a body ends by `break` or by running to its end.
    /// Without a default case, a value no case matches does nothing.
    Switch {
        value: ExprRef<'a>,
        cases: Vec<SwitchCase<'a>>,
    },
    /// `for (; cond; update) body`: `cond` before each iteration, `update`
    /// after the body and after `continue`.
    For {
        cond: ExprRef<'a>,
        update: Scope<'a>,
        body: Scope<'a>,
    },
    /// Repeats the body until it breaks; `continue` starts the body again.
    Loop {
        body: Scope<'a>,
    },
    Break,
    Continue,
    Return(Option<ExprRef<'a>>),
    Assign {
        lhs: ExprRef<'a>,
        rhs: ExprRef<'a>,
    },
    /// Bind a `Let` variable to a value, or a `Ref` variable to storage;
    /// each binding variable has exactly one `Bind`.
    Bind {
        var: VarId,
        value: ExprRef<'a>,
    },
    /// An expression for its effect (a call); a terminating built-in
    /// (`unreachable`) ends the scope.
    Expr(ExprRef<'a>),
    /// A built-in that carries a message (`assert`, `assume`,
    /// `unreachable`): the spec opcode, its operands and the message.
    Checked {
        op: Opcode,
        args: Vec<ExprRef<'a>>,
        message: String,
    },
    /// Becomes comment metadata of the next instruction.
    Comment(String),
    Print {
        format: String,
        args: Vec<ExprRef<'a>>,
    },
    /// Traverse `query`: `on_surface` runs for each candidate triangle,
    /// `on_procedural` for each candidate box.
    RayQuery {
        query: ExprRef<'a>,
        on_surface: Scope<'a>,
        on_procedural: Scope<'a>,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// Function-local storage.
    Local,
    /// Storage shared by the threads of a block (workgroup).
    Shared,
    /// A parameter, passed as its kind says.
    Param(ArgKind),
    /// An immutable value (`let`), bound by its `Bind` statement: an SSA
    /// value, no storage.
    Let,
    /// A reference (`T& r = lvalue`), bound by its `Bind` statement to the
    /// storage its right side names; using or assigning it uses that storage.
    Ref,
}

#[derive(Clone, Debug)]
pub struct Variable {
    pub name: String,
    pub ty: TypeId,
    pub kind: VarKind,
    pub span: Option<Span>,
}

impl Variable {
    /// Whether the variable is storage (assignable, addressable): locals,
    /// shared variables and by-reference parameters. Value parameters are
    /// values; resources are handles.
    pub fn is_storage(&self) -> bool {
        matches!(self.kind, VarKind::Local | VarKind::Shared | VarKind::Param(ArgKind::Reference) | VarKind::Ref)
    }

    /// Whether the variable is bound once (`Let`, `Ref`) rather than stored to.
    pub fn is_binding(&self) -> bool {
        matches!(self.kind, VarKind::Let | VarKind::Ref)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// `whole_blocks`, `noalias`: XIR's kernel attributes of those names (the
    /// WGSL / GLSL dispatch and WebGPU's binding rule).
    Kernel {
        block_size: [u32; 3],
        whole_blocks: bool,
        noalias: bool,
    },
    Callable,
}

#[derive(Clone, Debug)]
pub struct Function<'a> {
    pub name: String,
    pub kind: FunctionKind,
    /// Return type; `void` for none. Kernels return void.
    pub ret: TypeId,
    /// Every variable of the function; parameters first, in order.
    pub vars: Vec<Variable>,
    pub param_count: usize,
    pub body: Scope<'a>,
    pub span: Option<Span>,
}

impl<'a> Function<'a> {
    pub fn new(name: impl Into<String>, kind: FunctionKind, ret: TypeId) -> Self {
        Function { name: name.into(), kind, ret, vars: Vec::new(), param_count: 0, body: Vec::new(), span: None }
    }

    pub fn var(&self, v: VarId) -> &Variable {
        &self.vars[v.0 as usize]
    }

    /// Add a parameter. Parameters must be added before any other variable.
    pub fn add_param(&mut self, name: impl Into<String>, ty: TypeId, kind: ArgKind) -> VarId {
        assert_eq!(self.param_count, self.vars.len(), "parameters come before other variables");
        self.param_count += 1;
        self.add_var(Variable { name: name.into(), ty, kind: VarKind::Param(kind), span: None })
    }

    pub fn add_var(&mut self, v: Variable) -> VarId {
        self.vars.push(v);
        VarId(self.vars.len() as u32 - 1)
    }

    pub fn params(&self) -> impl Iterator<Item = (VarId, &Variable)> {
        self.vars[..self.param_count].iter().enumerate().map(|(i, v)| (VarId(i as u32), v))
    }
}

/// A translation unit: types and functions. Callees come before callers
/// is not required; `Callee::Function` names any function of the module.
pub struct Module<'a> {
    pub types: TypeTable,
    pub functions: Vec<Function<'a>>,
}

impl<'a> Module<'a> {
    pub fn new() -> Self {
        Module { types: TypeTable::default(), functions: Vec::new() }
    }

    pub fn add_function(&mut self, f: Function<'a>) -> FuncRef {
        self.functions.push(f);
        FuncRef(self.functions.len() as u32 - 1)
    }

    pub fn function(&self, f: FuncRef) -> &Function<'a> {
        &self.functions[f.0 as usize]
    }
}

impl Default for Module<'_> {
    fn default() -> Self {
        Self::new()
    }
}
