//! Appending the adjoint code: instructions at the end of one block,
//! typed constants, leaf-wise sums of differentiable values, and rule
//! expressions instantiated on concrete operands (with the broadcasting the
//! rule file promises: a scalar meeting a vector or matrix is splat, and
//! `add sub mul div neg` on matrices are their `matrix_comp_*` forms).

use egg::{RecExpr, SymbolLang};
use smallvec::SmallVec;
use xir::{Block, FloatFormat, FuncId, InstData, Module, Opcode, Type, TypeId, TypeTable, Value};

use super::rules::{leaf, Leaf, Shape};
use crate::memory::util::zero_const;

/// A cursor at the end of one block of one function.
pub struct Emitter<'m> {
    pub m: &'m mut Module,
    pub func: FuncId,
    pub block: Block,
}

/// The values a rule's symbols stand for.
pub struct Env {
    pub operands: SmallVec<[Value; 3]>,
    pub result: Value,
    pub adjoint: Value,
}

impl Emitter<'_> {
    pub fn ty(&self, v: Value) -> TypeId {
        self.m.func(self.func).value_type(self.m, v)
    }

    /// Append `op` producing `ty`.
    pub fn op(&mut self, op: Opcode, ty: TypeId, operands: &[Value]) -> Value {
        let mut d = InstData::new(op, ty);
        d.operands = SmallVec::from_slice(operands);
        let b = self.block;
        Value::Inst(self.m.func_mut(self.func).append_inst(b, d))
    }

    pub fn load(&mut self, addr: Value) -> Value {
        let ty = self.ty(addr);
        self.op(Opcode::Load, ty, &[addr])
    }

    pub fn store(&mut self, addr: Value, v: Value) {
        self.op(Opcode::Store, TypeTable::VOID, &[addr, v]);
    }

    pub fn zero(&mut self, ty: TypeId) -> Value {
        zero_const(self.m, ty).expect("differentiable types are data types")
    }

    /// The constant of `ty` with `x` in every float leaf and zero elsewhere.
    pub fn filled(&mut self, ty: TypeId, x: f64) -> Value {
        filled_const(self.m, ty, x)
    }

    /// `a + b`, leaf by leaf over the float leaves of `ty` (other leaves
    /// keep `a`'s).
    pub fn add(&mut self, ty: TypeId, a: Value, b: Value) -> Value {
        match self.m.types.get(ty).clone() {
            Type::Float(_) | Type::Vector { .. } => self.op(Opcode::Add, ty, &[a, b]),
            Type::Matrix { .. } => self.op(Opcode::MatrixCompAdd, ty, &[a, b]),
            Type::Array { elem, len } => {
                let members: Vec<Value> = (0..len)
                    .map(|k| {
                        let i = self.m.const_u32(k as u32);
                        self.add_member(elem, a, b, i)
                    })
                    .collect();
                self.op(Opcode::Aggregate, ty, &members)
            }
            Type::Struct { fields, .. } => {
                let members: Vec<Value> = fields
                    .iter()
                    .enumerate()
                    .map(|(k, &t)| {
                        let i = self.m.const_u32(k as u32);
                        self.add_member(t, a, b, i)
                    })
                    .collect();
                self.op(Opcode::Aggregate, ty, &members)
            }
            _ => a,
        }
    }

    fn add_member(&mut self, ty: TypeId, a: Value, b: Value, i: Value) -> Value {
        let x = self.op(Opcode::Extract, ty, &[a, i]);
        if !xir::autodiff::differentiable(self.m, ty) {
            return x;
        }
        let y = self.op(Opcode::Extract, ty, &[b, i]);
        self.add(ty, x, y)
    }

    /// `*addr += v`.
    pub fn accumulate(&mut self, addr: Value, v: Value) {
        let ty = self.ty(addr);
        let old = self.load(addr);
        let new = self.add(ty, old, v);
        self.store(addr, new);
    }

    /// `v` as a value of `ty`: itself, or a scalar splat to `ty`'s lanes
    /// (and columns).
    pub fn broadcast(&mut self, v: Value, ty: TypeId) -> Value {
        let vt = self.ty(v);
        if vt == ty {
            return v;
        }
        match self.m.types.get(ty).clone() {
            Type::Vector { lanes, .. } if self.m.types.is_scalar(vt) => {
                self.op(Opcode::Aggregate, ty, &vec![v; lanes as usize])
            }
            Type::Matrix { elem, dim } if self.m.types.is_scalar(vt) => {
                let col = self.m.types.vector(elem, dim);
                let c = self.broadcast(v, col);
                self.op(Opcode::Aggregate, ty, &vec![c; dim as usize])
            }
            _ => panic!("autodiff: cannot broadcast a value to a different shape (a rule-file defect)"),
        }
    }

    /// Instantiate a rule expression. `scalar` is the float type literals
    /// take.
    pub fn instantiate(&mut self, e: &RecExpr<SymbolLang>, env: &Env, scalar: TypeId) -> Value {
        let mut vals: Vec<Value> = Vec::with_capacity(e.as_ref().len());
        for n in e.as_ref() {
            let v = if n.children.is_empty() {
                match leaf(n.op.as_str()).expect("checked when the rules loaded") {
                    Leaf::Operand(k) => env.operands[k],
                    Leaf::Result => env.result,
                    Leaf::Adjoint => env.adjoint,
                    Leaf::Literal(x) => self.filled(scalar, x),
                }
            } else {
                let op = Opcode::from_name(n.op.as_str()).expect("checked when the rules loaded");
                let args: Vec<Value> = n.children.iter().map(|&c| vals[usize::from(c)]).collect();
                self.apply(op, &args)
            };
            vals.push(v);
        }
        *vals.last().expect("a rule expression is not empty")
    }

    /// Append `op` on `args`, broadcasting lane-wise operands and typing
    /// the result.
    pub fn apply(&mut self, op: Opcode, args: &[Value]) -> Value {
        use Opcode::*;
        let tys: Vec<TypeId> = args.iter().map(|&v| self.ty(v)).collect();
        let scalar_of = |m: &Module, t: TypeId| m.types.scalar_of(t);
        match op {
            Dot | Length | LengthSquared | ReduceSum | ReduceProduct | MatrixDeterminant => {
                let t = scalar_of(self.m, tys[0]);
                self.op(op, t, args)
            }
            Cross | Normalize | MatrixTranspose | MatrixInverse => self.op(op, tys[0], args),
            MatrixLinalgMul => {
                let t = if self.shape(tys[0]) == Shape::Matrix {
                    if self.shape(tys[1]) == Shape::Matrix {
                        tys[0]
                    } else {
                        tys[1]
                    }
                } else {
                    tys[0]
                };
                self.op(op, t, args)
            }
            OuterProduct => {
                let t = match self.m.types.get(tys[0]).clone() {
                    Type::Vector { elem, lanes } => self.m.types.matrix(elem, lanes),
                    _ => tys[0],
                };
                self.op(op, t, args)
            }
            Select => {
                let t = self.widest(&tys[1..]);
                let x = self.broadcast(args[1], t);
                let y = self.broadcast(args[2], t);
                self.op(op, t, &[args[0], x, y])
            }
            Lt | Gt | Le | Ge | Eq | Ne => {
                let t = self.widest(&tys);
                let x = self.broadcast(args[0], t);
                let y = self.broadcast(args[1], t);
                let lanes = self.m.types.lanes(t);
                let b = if lanes > 1 { self.m.types.vector(TypeTable::BOOL, lanes as u8) } else { TypeTable::BOOL };
                self.op(op, b, &[x, y])
            }
            BitAnd | BitOr => self.op(op, tys[0], args),
            _ => {
                // Lane-wise: broadcast every operand to the widest shape.
                let t = self.widest(&tys);
                let xs: Vec<Value> = args.iter().map(|&v| self.broadcast(v, t)).collect();
                let op = if self.shape(t) == Shape::Matrix {
                    match op {
                        Add => MatrixCompAdd,
                        Sub => MatrixCompSub,
                        Mul => MatrixCompMul,
                        Div => MatrixCompDiv,
                        Neg => MatrixCompNeg,
                        o => o,
                    }
                } else {
                    op
                };
                self.op(op, t, &xs)
            }
        }
    }

    pub fn shape(&self, t: TypeId) -> Shape {
        shape(&self.m.types, t)
    }

    /// The non-scalar type among `tys`, else the first.
    fn widest(&self, tys: &[TypeId]) -> TypeId {
        tys.iter().copied().find(|&t| self.shape(t) != Shape::Scalar).unwrap_or(tys[0])
    }
}

pub fn shape(types: &TypeTable, t: TypeId) -> Shape {
    match types.get(t) {
        Type::Vector { .. } => Shape::Vector,
        Type::Matrix { .. } => Shape::Matrix,
        _ => Shape::Scalar,
    }
}

/// The constant of `ty` with `x` in every float leaf and zero elsewhere.
pub fn filled_const(m: &mut Module, ty: TypeId, x: f64) -> Value {
    let members: Vec<TypeId> = match m.types.get(ty).clone() {
        Type::Float(f) => {
            let bits = match f {
                FloatFormat::F16 => half::f16::from_f64(x).to_bits() as u64,
                FloatFormat::F32 => (x as f32).to_bits() as u64,
                _ => x.to_bits(),
            };
            return m.const_scalar(ty, bits);
        }
        Type::Vector { elem, lanes } => vec![elem; lanes as usize],
        Type::Matrix { elem, dim } => {
            let col = m.types.vector(elem, dim);
            vec![col; dim as usize]
        }
        Type::Array { elem, len } => vec![elem; len as usize],
        Type::Struct { fields, .. } => fields,
        _ => return zero_const(m, ty).expect("a data type"),
    };
    let cs = members.into_iter().map(|t| filled_const(m, t, x).as_const().expect("constant")).collect();
    m.const_composite(ty, cs)
}
