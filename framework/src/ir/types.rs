//! Interned types. Each `Type` names one kind of `ir-spec/spec/types.ron`;
//! the table hands out one `TypeId` per distinct type, so type equality is
//! id equality.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::TypeId;

/// Float formats, including the OCP FP8 formats.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FloatFormat {
    F16,
    F32,
    F64,
    E4M3,
    E5M2,
}

impl FloatFormat {
    pub fn bits(self) -> u32 {
        match self {
            FloatFormat::F16 => 16,
            FloatFormat::F32 => 32,
            FloatFormat::F64 => 64,
            FloatFormat::E4M3 | FloatFormat::E5M2 => 8,
        }
    }
}

/// A type. Aggregates refer to their members by id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Type {
    Void,
    Bool,
    Int {
        bits: u8,
        signed: bool,
    },
    Float(FloatFormat),
    Vector {
        elem: TypeId,
        lanes: u8,
    },
    /// Square, column-major.
    Matrix {
        elem: TypeId,
        dim: u8,
    },
    Array {
        elem: TypeId,
        len: u64,
    },
    Struct {
        fields: Vec<TypeId>,
        align: u32,
    },
    Buffer(TypeId),
    ByteBuffer,
    Texture {
        dim: u8,
        elem: TypeId,
    },
    BindlessArray,
    Accel,
    RayQuery {
        any_hit: bool,
    },
}

/// The module's type table.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeTable {
    types: Vec<Type>,
    map: FxHashMap<Type, TypeId>,
}

impl Default for TypeTable {
    fn default() -> Self {
        let mut t = TypeTable { types: Vec::new(), map: FxHashMap::default() };
        // Fixed ids for the common scalars keep constructors cheap.
        for ty in [
            Type::Void,
            Type::Bool,
            Type::Int { bits: 32, signed: true },
            Type::Int { bits: 32, signed: false },
            Type::Float(FloatFormat::F32),
        ] {
            t.intern(ty);
        }
        t
    }
}

impl TypeTable {
    /// Heap bytes of the table: each type held twice (by id and as its map
    /// key), a struct's field list with it.
    pub(crate) fn heap_bytes(&self) -> usize {
        use super::footprint::{hash_map_bytes, vec_bytes};
        let fields = |t: &Type| match t {
            Type::Struct { fields, .. } => vec_bytes(fields),
            _ => 0,
        };
        vec_bytes(&self.types)
            + hash_map_bytes(self.map.capacity(), std::mem::size_of::<(Type, TypeId)>())
            + 2 * self.types.iter().map(fields).sum::<usize>()
    }

    pub const VOID: TypeId = TypeId(0);
    pub const BOOL: TypeId = TypeId(1);
    pub const I32: TypeId = TypeId(2);
    pub const U32: TypeId = TypeId(3);
    pub const F32: TypeId = TypeId(4);

    pub fn intern(&mut self, ty: Type) -> TypeId {
        if let Some(&id) = self.map.get(&ty) {
            return id;
        }
        let id = TypeId::new(self.types.len());
        self.types.push(ty.clone());
        self.map.insert(ty, id);
        id
    }

    /// The id of `ty` if it was interned.
    pub fn lookup(&self, ty: &Type) -> Option<TypeId> {
        self.map.get(ty).copied()
    }

    pub fn get(&self, id: TypeId) -> &Type {
        &self.types[id.index()]
    }

    /// Whether `id` is a valid id of this table.
    pub fn contains(&self, id: TypeId) -> bool {
        id.index() < self.types.len()
    }

    pub fn len(&self) -> usize {
        self.types.len()
    }

    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (TypeId, &Type)> {
        self.types.iter().enumerate().map(|(i, t)| (TypeId::new(i), t))
    }

    pub fn int(&mut self, bits: u8, signed: bool) -> TypeId {
        self.intern(Type::Int { bits, signed })
    }
    pub fn float(&mut self, f: FloatFormat) -> TypeId {
        self.intern(Type::Float(f))
    }
    pub fn vector(&mut self, elem: TypeId, lanes: u8) -> TypeId {
        self.intern(Type::Vector { elem, lanes })
    }
    pub fn matrix(&mut self, elem: TypeId, dim: u8) -> TypeId {
        self.intern(Type::Matrix { elem, dim })
    }
    pub fn array(&mut self, elem: TypeId, len: u64) -> TypeId {
        self.intern(Type::Array { elem, len })
    }
    pub fn buffer(&mut self, elem: TypeId) -> TypeId {
        self.intern(Type::Buffer(elem))
    }

    /// The spec kind name (`i32`, `vec`, `buffer`, ...).
    pub fn kind_name(&self, id: TypeId) -> &'static str {
        match self.get(id) {
            Type::Void => "void",
            Type::Bool => "bool",
            Type::Int { bits: 8, signed: true } => "i8",
            Type::Int { bits: 8, signed: false } => "u8",
            Type::Int { bits: 16, signed: true } => "i16",
            Type::Int { bits: 16, signed: false } => "u16",
            Type::Int { bits: 32, signed: true } => "i32",
            Type::Int { bits: 32, signed: false } => "u32",
            Type::Int { bits: 64, signed: true } => "i64",
            Type::Int { bits: 64, signed: false } => "u64",
            Type::Int { .. } => "int?",
            Type::Float(FloatFormat::F16) => "f16",
            Type::Float(FloatFormat::F32) => "f32",
            Type::Float(FloatFormat::F64) => "f64",
            Type::Float(FloatFormat::E4M3) => "fp8e4m3",
            Type::Float(FloatFormat::E5M2) => "fp8e5m2",
            Type::Vector { .. } => "vec",
            Type::Matrix { .. } => "mat",
            Type::Array { .. } => "array",
            Type::Struct { .. } => "struct",
            Type::Buffer(_) => "buffer",
            Type::ByteBuffer => "byte_buffer",
            Type::Texture { dim: 3, .. } => "texture3d",
            Type::Texture { .. } => "texture2d",
            Type::BindlessArray => "bindless_array",
            Type::Accel => "accel",
            Type::RayQuery { any_hit: false } => "ray_query_all",
            Type::RayQuery { any_hit: true } => "ray_query_any",
        }
    }

    /// Whether the type belongs to the spec class `class` (`int`, `float`,
    /// `scalar`, `resource`, ...): the classes come from `types.ron`.
    pub fn has_class(&self, id: TypeId, class: &str) -> bool {
        let kind = self.kind_name(id);
        xir_spec::spec().type_kind(kind).is_some_and(|k| k.classes.iter().any(|c| c == class))
    }

    pub fn is_scalar(&self, id: TypeId) -> bool {
        matches!(self.get(id), Type::Bool | Type::Int { .. } | Type::Float(_))
    }
    pub fn is_bool(&self, id: TypeId) -> bool {
        matches!(self.get(id), Type::Bool)
    }
    pub fn is_int(&self, id: TypeId) -> bool {
        matches!(self.get(id), Type::Int { .. })
    }
    pub fn is_float(&self, id: TypeId) -> bool {
        matches!(self.get(id), Type::Float(_))
    }
    pub fn is_resource(&self, id: TypeId) -> bool {
        matches!(
            self.get(id),
            Type::Buffer(_) | Type::ByteBuffer | Type::Texture { .. } | Type::BindlessArray | Type::Accel
        )
    }
    /// Plain data: can live in memory and be loaded/stored.
    pub fn is_data(&self, id: TypeId) -> bool {
        match self.get(id) {
            Type::Bool | Type::Int { .. } | Type::Float(_) | Type::Vector { .. } | Type::Matrix { .. } => true,
            Type::Array { elem, .. } => self.is_data(*elem),
            Type::Struct { fields, .. } => fields.iter().all(|f| self.is_data(*f)),
            _ => false,
        }
    }

    /// Scalar element of a scalar or vector (or matrix) type; the type itself
    /// for scalars.
    pub fn scalar_of(&self, id: TypeId) -> TypeId {
        match self.get(id) {
            Type::Vector { elem, .. } | Type::Matrix { elem, .. } => *elem,
            _ => id,
        }
    }

    /// Lane count: 1 for scalars.
    pub fn lanes(&self, id: TypeId) -> u32 {
        match self.get(id) {
            Type::Vector { lanes, .. } => *lanes as u32,
            _ => 1,
        }
    }

    /// The same shape with a different scalar: `vec<f32,3>` -> `vec<bool,3>`.
    pub fn with_scalar(&mut self, id: TypeId, scalar: TypeId) -> TypeId {
        match self.get(id).clone() {
            Type::Vector { lanes, .. } => self.vector(scalar, lanes),
            Type::Matrix { dim, .. } => self.matrix(scalar, dim),
            _ => scalar,
        }
    }

    /// Width in bits of a scalar type (bool counts as 8, its host size).
    pub fn scalar_bits(&self, id: TypeId) -> u32 {
        match self.get(id) {
            Type::Bool => 8,
            Type::Int { bits, .. } => *bits as u32,
            Type::Float(f) => f.bits(),
            _ => 0,
        }
    }

    /// Host (Luisa) size and alignment: vectors of 3 lanes are padded to 4,
    /// vector alignment is capped at 16, matrices are arrays of column
    /// vectors, structs use their declared alignment. A size past `u64`
    /// saturates to `u64::MAX` (the verifier rejects such a type:
    /// [`TypeTable::checked_size_align`]).
    pub fn size_align(&self, id: TypeId) -> (u64, u64) {
        self.checked_size_align(id).unwrap_or((u64::MAX, 1))
    }

    /// [`TypeTable::size_align`] with every size and offset computed in
    /// checked arithmetic; `None` when the size does not fit in `u64`.
    pub fn checked_size_align(&self, id: TypeId) -> Option<(u64, u64)> {
        Some(match self.get(id) {
            Type::Void => (0, 1),
            Type::Bool | Type::Int { .. } | Type::Float(_) => {
                let b = (self.scalar_bits(id) / 8) as u64;
                (b, b)
            }
            Type::Vector { elem, lanes } => {
                let (s, _) = self.checked_size_align(*elem)?;
                let padded = if *lanes == 3 { 4 } else { *lanes as u64 };
                let size = s.checked_mul(padded)?;
                (size, size.min(16))
            }
            Type::Matrix { elem, dim } => {
                let col = self.lookup(&Type::Vector { elem: *elem, lanes: *dim });
                let (s, a) = match col {
                    Some(c) => self.checked_size_align(c)?,
                    None => {
                        let (es, _) = self.checked_size_align(*elem)?;
                        let padded = if *dim == 3 { 4 } else { *dim as u64 };
                        let s = es.checked_mul(padded)?;
                        (s, s.min(16))
                    }
                };
                (s.checked_mul(*dim as u64)?, a)
            }
            Type::Array { elem, len } => {
                let (s, a) = self.checked_size_align(*elem)?;
                (s.checked_mul(*len)?, a)
            }
            Type::Struct { fields, align } => {
                let mut off = 0u64;
                let mut max_a = (*align).max(1) as u64;
                for f in fields {
                    let (s, a) = self.checked_size_align(*f)?;
                    off = align_up(off, a)?.checked_add(s)?;
                    max_a = max_a.max(a);
                }
                (align_up(off, max_a)?, max_a)
            }
            _ => (8, 8),
        })
    }

    /// Byte offsets of the fields of a struct in host layout (saturating
    /// like [`TypeTable::size_align`]).
    pub fn struct_offsets(&self, id: TypeId) -> Vec<u64> {
        let Type::Struct { fields, .. } = self.get(id) else { return Vec::new() };
        let mut off = 0u64;
        fields
            .iter()
            .map(|f| {
                let (s, a) = self.size_align(*f);
                off = align_up(off, a).unwrap_or(u64::MAX);
                let here = off;
                off = off.saturating_add(s);
                here
            })
            .collect()
    }
}

/// `off` rounded up to a multiple of `align` (0 counts as 1); `None` past `u64`.
fn align_up(off: u64, align: u64) -> Option<u64> {
    let a = align.max(1);
    off.div_ceil(a).checked_mul(a)
}
