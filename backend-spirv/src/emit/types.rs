//! SPIR-V types: logical types for SSA values and Function / Workgroup
//! memory (no layout decorations), and laid-out storage types for buffers and
//! push constants (`Offset`, `ArrayStride`, `ColMajor` + `MatrixStride` at
//! exactly the host layout). Aggregates get distinct ids per role; scalars,
//! vectors, matrices and pointers are deduplicated by the builder. Declaring
//! a narrow or wide scalar records its capability.

use rspirv::dr::Operand;
use rspirv::spirv::{Capability, Decoration, StorageClass, Word};
use xir::{Type, TypeId};

use super::{err, EResult, Emitter};
use crate::plan::layout;

/// The scalar of a scalar or vector value (helpers build SPIR-V types from it
/// without needing an interned XIR type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    Bool,
    Int { bits: u32, signed: bool },
    Float { bits: u32 },
}

/// A scalar (`lanes == 1`) or vector shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    pub scalar: ScalarKind,
    pub lanes: u32,
}

impl Shape {
    pub fn with_scalar(self, scalar: ScalarKind) -> Shape {
        Shape { scalar, lanes: self.lanes }
    }
    pub fn bits(&self) -> u32 {
        match self.scalar {
            ScalarKind::Bool => 1,
            ScalarKind::Int { bits, .. } | ScalarKind::Float { bits } => bits,
        }
    }
    pub fn is_float(&self) -> bool {
        matches!(self.scalar, ScalarKind::Float { .. })
    }
    pub fn is_signed(&self) -> bool {
        matches!(self.scalar, ScalarKind::Int { signed: true, .. })
    }
    pub fn is_bool(&self) -> bool {
        matches!(self.scalar, ScalarKind::Bool)
    }
}

impl Emitter<'_> {
    /// Shape of a scalar or vector XIR type.
    pub(crate) fn shape(&self, t: TypeId) -> EResult<Shape> {
        let m = self.m;
        let types = &m.types;
        let (s, lanes) = match types.get(t) {
            Type::Vector { elem, lanes } => (*elem, *lanes as u32),
            _ => (t, 1),
        };
        let scalar = match types.get(s) {
            Type::Bool => ScalarKind::Bool,
            Type::Int { bits, signed } => ScalarKind::Int { bits: *bits as u32, signed: *signed },
            // FP8 has no SPIR-V type the Vulkan 1.2 validator accepts: its
            // values travel as their `u8` bits (conversions in `fp8.rs`).
            Type::Float(f) if f.bits() == 8 => ScalarKind::Int { bits: 8, signed: false },
            Type::Float(f) => ScalarKind::Float { bits: f.bits() },
            _ => return err(format!("`{}` is not a scalar or vector", xir::verify::type_name(types, t))),
        };
        Ok(Shape { scalar, lanes })
    }

    pub(crate) fn scalar_ty(&mut self, k: ScalarKind) -> Word {
        match k {
            ScalarKind::Bool => self.b.type_bool(),
            ScalarKind::Int { bits, signed } => {
                // Int8 / Int16 are derived from the emitted uses
                // (`narrow_caps`): narrow storage needs no narrow arithmetic.
                if bits == 64 {
                    self.cap(Capability::Int64);
                }
                self.b.type_int(bits, signed as u32)
            }
            ScalarKind::Float { bits } => {
                // Float16 likewise comes from `narrow_caps`.
                if bits == 64 {
                    self.cap(Capability::Float64);
                }
                self.b.type_float(bits, None)
            }
        }
    }

    pub(crate) fn shape_ty(&mut self, s: Shape) -> Word {
        let e = self.scalar_ty(s.scalar);
        if s.lanes == 1 {
            e
        } else {
            self.b.type_vector(e, s.lanes)
        }
    }

    pub(crate) fn u32_ty(&mut self) -> Word {
        self.scalar_ty(ScalarKind::Int { bits: 32, signed: false })
    }

    pub(crate) fn ptr_ty(&mut self, class: StorageClass, pointee: Word) -> Word {
        self.b.type_pointer(None, class, pointee)
    }

    /// The logical type of an XIR type.
    pub(crate) fn ty(&mut self, t: TypeId) -> EResult<Word> {
        if let Some(&w) = self.logical.get(&t) {
            return Ok(w);
        }
        let m = self.m;
        let types = &m.types;
        let w = match types.get(t).clone() {
            Type::Void => self.b.type_void(),
            Type::Bool | Type::Int { .. } | Type::Float(_) | Type::Vector { .. } => {
                let s = self.shape(t)?;
                self.shape_ty(s)
            }
            Type::Matrix { elem, dim } => {
                let e = self.ty(elem)?;
                let col = self.b.type_vector(e, dim as u32);
                self.b.type_matrix(col, dim as u32)
            }
            Type::Array { elem, len } => {
                let e = self.ty(elem)?;
                let n = self.array_len(len)?;
                let id = self.b.id();
                self.b.type_array_id(Some(id), e, n)
            }
            Type::Struct { fields, .. } => {
                let mut ms = Vec::new();
                for f in fields {
                    ms.push(self.ty(f)?);
                }
                let id = self.b.id();
                self.b.type_struct_id(Some(id), ms)
            }
            other => return err(format!("type {other:?} has no logical SPIR-V type")),
        };
        self.logical.insert(t, w);
        Ok(w)
    }

    fn array_len(&mut self, len: u64) -> EResult<Word> {
        let Ok(n) = u32::try_from(len) else { return err(format!("array length {len} does not fit 32 bits")) };
        if n == 0 {
            return err("zero-length array reached emission");
        }
        Ok(self.u32_const(n))
    }

    /// Whether a type needs a distinct laid-out variant (it holds an array or struct).
    pub(crate) fn needs_copy_logical(&self, t: TypeId) -> bool {
        matches!(self.m.types.get(t), Type::Array { .. } | Type::Struct { .. })
    }

    /// The laid-out storage type (host layout) of a data type.
    pub(crate) fn storage_ty(&mut self, t: TypeId) -> EResult<Word> {
        if let Some(&w) = self.storage.get(&t) {
            return Ok(w);
        }
        let m = self.m;
        let types = &m.types;
        let w = match types.get(t).clone() {
            Type::Int { .. } | Type::Float(_) if bits_of(types, t) < 32 => {
                let bits = bits_of(types, t);
                self.cap(if bits == 8 {
                    Capability::StorageBuffer8BitAccess
                } else {
                    Capability::StorageBuffer16BitAccess
                });
                if bits == 8 {
                    self.exts.insert("SPV_KHR_8bit_storage");
                } else {
                    self.exts.insert("SPV_KHR_16bit_storage");
                }
                self.ty(t)?
            }
            Type::Vector { elem, .. } | Type::Matrix { elem, .. } => {
                self.storage_ty(elem)?;
                self.ty(t)?
            }
            Type::Bool => return err("bool has no storage type (word ABI expected)"),
            Type::Array { elem, len } => {
                let e = self.storage_ty(elem)?;
                let n = self.array_len(len)?;
                let id = self.b.id();
                let w = self.b.type_array_id(Some(id), e, n);
                let stride = types.size_align(elem).0 as u32;
                self.decorate(w, Decoration::ArrayStride, &[stride]);
                w
            }
            Type::Struct { fields, .. } => {
                let mut ms = Vec::new();
                for &f in &fields {
                    ms.push(self.storage_ty(f)?);
                }
                let id = self.b.id();
                let w = self.b.type_struct_id(Some(id), ms);
                let offs = types.struct_offsets(t);
                for (k, (&f, off)) in fields.iter().zip(offs).enumerate() {
                    self.b.member_decorate(w, k as u32, Decoration::Offset, [Operand::LiteralBit32(off as u32)]);
                    self.matrix_member_layout(w, k as u32, f);
                }
                w
            }
            _ => self.ty(t)?,
        };
        self.storage.insert(t, w);
        Ok(w)
    }

    /// `ColMajor` + `MatrixStride` on a struct member holding matrices (directly or in arrays).
    pub(crate) fn matrix_member_layout(&mut self, st: Word, member: u32, mut t: TypeId) {
        let m = self.m;
        let types = &m.types;
        while let Type::Array { elem, .. } = types.get(t) {
            t = *elem;
        }
        if let Type::Matrix { elem, dim } = types.get(t) {
            let stride = layout::matrix_stride(types, *elem, *dim);
            self.b.member_decorate(st, member, Decoration::ColMajor, []);
            self.b.member_decorate(st, member, Decoration::MatrixStride, [Operand::LiteralBit32(stride)]);
        }
    }
}

fn bits_of(t: &xir::TypeTable, ty: TypeId) -> u32 {
    t.scalar_bits(ty)
}
