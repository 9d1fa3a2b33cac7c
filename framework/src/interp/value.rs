//! Run-time values of the interpreter: scalars as raw bits (their meaning
//! comes from the static type), aggregates as shared member lists
//! (copy-on-write), addresses (lvalues) and resource handles. An undefined
//! scalar (`Val::U`) doubles as "uninitialized" in memory, so initialization
//! is tracked per scalar leaf at no extra cost.

use std::rc::Rc;

use smallvec::SmallVec;

use crate::ir::{FloatFormat, Type, TypeId, TypeTable};

/// A value during interpretation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val {
    /// A scalar's bits, zero-extended to 64 (bool: 0 or 1).
    S(u64),
    /// An undefined scalar / uninitialized memory.
    U,
    /// A scalar the device may compute differently (a precision run only,
    /// `precision.rs`): its exact bits and the largest absolute deviation
    /// Vulkan allows (`f64::INFINITY`: any value).
    E(u64, f64),
    /// A float scalar on an autodiff scope's gradient path (`autodiff.rs`):
    /// its bits and its tangent, one f64 per input leaf marked so far (a
    /// shorter vector is zero-extended). Exists only while a scope runs.
    D(u64, Rc<Vec<f64>>),
    /// Members of a vector, matrix (columns), array or struct.
    A(Rc<Vec<Val>>),
    /// An address (the result of alloca / gep, a reference argument).
    P(Rc<Ptr>),
    /// A resource argument: index into the dispatch's buffer list.
    R(u32),
}

/// Where an address points: the root storage and a member path inside it
/// (for buffers the first path element is the element index).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ptr {
    pub root: Root,
    pub path: SmallVec<[u64; 4]>,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum Root {
    /// A slot of the thread's local memory.
    Local(u32),
    /// A slot of the block's shared memory.
    Shared(u32),
    /// A buffer of the dispatch.
    Buffer(u32),
}

/// The scalar kind of a scalar type (or of a vector / matrix element).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Sk {
    Bool,
    Int { bits: u32, signed: bool },
    F16,
    F32,
    F64,
    E4M3,
    E5M2,
}

impl Sk {
    pub fn bits(self) -> u32 {
        match self {
            Sk::Bool => 1,
            Sk::Int { bits, .. } => bits,
            Sk::F16 => 16,
            Sk::F32 => 32,
            Sk::F64 => 64,
            Sk::E4M3 | Sk::E5M2 => 8,
        }
    }
}

/// The scalar kind of `ty`'s scalar element, if it has one.
pub(crate) fn scalar_kind(types: &TypeTable, ty: TypeId) -> Option<Sk> {
    let s = types.scalar_of(ty);
    Some(match types.get(s) {
        Type::Bool => Sk::Bool,
        Type::Int { bits, signed } => Sk::Int { bits: *bits as u32, signed: *signed },
        Type::Float(FloatFormat::F16) => Sk::F16,
        Type::Float(FloatFormat::F32) => Sk::F32,
        Type::Float(FloatFormat::F64) => Sk::F64,
        Type::Float(FloatFormat::E4M3) => Sk::E4M3,
        Type::Float(FloatFormat::E5M2) => Sk::E5M2,
        _ => return None,
    })
}

/// An all-undefined value of `ty` with the member structure of the type, so
/// that stores through member addresses find their slot.
pub(crate) fn undef_of(types: &TypeTable, ty: TypeId) -> Val {
    match types.get(ty) {
        Type::Vector { lanes, .. } => Val::A(Rc::new(vec![Val::U; *lanes as usize])),
        Type::Matrix { elem, dim } => {
            let col = Val::A(Rc::new(vec![Val::U; *dim as usize]));
            let _ = elem;
            Val::A(Rc::new(vec![col; *dim as usize]))
        }
        Type::Array { elem, len } => {
            let e = undef_of(types, *elem);
            Val::A(Rc::new(vec![e; *len as usize]))
        }
        Type::Struct { fields, .. } => Val::A(Rc::new(fields.iter().map(|f| undef_of(types, *f)).collect())),
        _ => Val::U,
    }
}

impl Val {
    /// Whether every scalar leaf is undefined (a whole uninitialized value).
    pub fn all_undef(&self) -> bool {
        match self {
            Val::U => true,
            Val::A(m) => !m.is_empty() && m.iter().all(Val::all_undef),
            _ => false,
        }
    }
    /// Whether some scalar leaf is undefined.
    pub fn any_undef(&self) -> bool {
        match self {
            Val::U => true,
            Val::A(m) => m.iter().any(Val::any_undef),
            _ => false,
        }
    }
    pub fn agg(members: Vec<Val>) -> Val {
        Val::A(Rc::new(members))
    }
    pub fn bool(b: bool) -> Val {
        Val::S(b as u64)
    }
    /// The bits of a defined scalar.
    pub fn bits(&self) -> Result<u64, ValueError> {
        match self {
            Val::S(b) | Val::E(b, _) | Val::D(b, _) => Ok(*b),
            Val::U => Err(ValueError::Undefined),
            _ => Err(ValueError::NotScalar),
        }
    }
    /// Members of an aggregate.
    pub fn members(&self) -> Result<&[Val], ValueError> {
        match self {
            Val::A(m) => Ok(m),
            Val::U => Err(ValueError::Undefined),
            _ => Err(ValueError::NotAggregate),
        }
    }
}

/// A value of the wrong shape where an operation needs a scalar or an
/// aggregate.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("use of an undefined value")]
    Undefined,
    #[error("expected a scalar value")]
    NotScalar,
    #[error("expected an aggregate value")]
    NotAggregate,
}

/// The interpreter's operations report with messages, located by the
/// caller at the failing instruction.
impl From<ValueError> for String {
    fn from(e: ValueError) -> String {
        e.to_string()
    }
}
