//! The value types the spec-driven generator works with: a small, fixed
//! set of scalars, their vectors and float matrices, filtered by the type
//! kinds the chosen dialect allows. Every operand class and result rule is
//! tried against these types only, so an opcode that needs any other type
//! (a resource, a ray query, an lvalue) is skipped by rule.

use xir::ir::{TypeId, TypeTable};
use xir_spec::Dialect;

/// One type of the universe, independent of any module's type table.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Bool,
    I32,
    U32,
    F32,
    Vec(Scalar, u8),
    Mat(u8),
}

/// The scalar kinds of the universe.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    I32,
    U32,
    F32,
}

impl Scalar {
    pub const ALL: [Scalar; 4] = [Scalar::Bool, Scalar::I32, Scalar::U32, Scalar::F32];

    pub fn ty(self) -> Ty {
        match self {
            Scalar::Bool => Ty::Bool,
            Scalar::I32 => Ty::I32,
            Scalar::U32 => Ty::U32,
            Scalar::F32 => Ty::F32,
        }
    }
}

impl Ty {
    /// Interned in `t`.
    pub fn intern(self, t: &mut TypeTable) -> TypeId {
        match self {
            Ty::Bool => TypeTable::BOOL,
            Ty::I32 => TypeTable::I32,
            Ty::U32 => TypeTable::U32,
            Ty::F32 => TypeTable::F32,
            Ty::Vec(s, n) => {
                let e = s.ty().intern(t);
                t.vector(e, n)
            }
            Ty::Mat(n) => t.matrix(TypeTable::F32, n),
        }
    }

    /// The scalar of a scalar or vector; `F32` for matrices.
    pub fn scalar(self) -> Scalar {
        match self {
            Ty::Bool => Scalar::Bool,
            Ty::I32 => Scalar::I32,
            Ty::U32 => Scalar::U32,
            Ty::F32 | Ty::Mat(_) => Scalar::F32,
            Ty::Vec(s, _) => s,
        }
    }

    /// `bool` for a scalar, a bool vector of as many lanes for a vector.
    pub fn bool_shape(self) -> Ty {
        match self {
            Ty::Vec(_, n) => Ty::Vec(Scalar::Bool, n),
            _ => Ty::Bool,
        }
    }

    /// Scalar leaves in element order (lanes, or columns times rows).
    pub fn leaves(self) -> u32 {
        match self {
            Ty::Vec(_, n) => n as u32,
            Ty::Mat(n) => n as u32 * n as u32,
            _ => 1,
        }
    }

    /// The `types.ron` kind names this type is built from.
    fn kinds(self) -> Vec<&'static str> {
        let scalar = |s: Scalar| match s {
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::F32 => "f32",
        };
        match self {
            Ty::Vec(s, _) => vec!["vec", scalar(s)],
            Ty::Mat(_) => vec!["mat", "vec", "f32"],
            t => vec![scalar(t.scalar())],
        }
    }
}

/// Every type of the universe whose kinds `dialect` allows, in a fixed order.
pub fn universe(dialect: &Dialect) -> Vec<Ty> {
    let mut all: Vec<Ty> = Scalar::ALL.iter().map(|s| s.ty()).collect();
    for n in 2..=4 {
        all.extend(Scalar::ALL.iter().map(|&s| Ty::Vec(s, n)));
    }
    all.extend((2..=4).map(Ty::Mat));
    all.into_iter().filter(|t| t.kinds().iter().all(|k| dialect.types.contains(k))).collect()
}
