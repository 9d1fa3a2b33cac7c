//! Typed buffer layout planning: whether a host-layout element type can be a
//! Vulkan typed storage-buffer element (`Offset` / `ArrayStride` /
//! `MatrixStride` / `ColMajor` at exactly the host offsets), or needs the
//! byte-exact `uint32` word ABI.
//!
//! Vulkan's standard storage layout (no scalar block layout: the runtime never
//! enables it) aligns a scalar to its size, a 2-vector to twice and a 3- or
//! 4-vector to four times its scalar size, a matrix like an array of its
//! columns, an array like its element and a struct like its strictest member.
//! The host (`TypeTable::size_align`) caps vector alignment at 16 bytes, so
//! 64-bit 3- and 4-vectors (and matrices of them) disagree; `bool` has no
//! storage representation at all. Both use word storage.

use xir::{Type, TypeId, TypeTable};

use crate::abi::BufferStorage;

/// Vulkan base alignment of a data type; `None` when the type has no typed
/// storage representation (it holds a `bool`).
pub fn vk_align(t: &TypeTable, ty: TypeId) -> Option<u64> {
    Some(match t.get(ty) {
        Type::Bool => return None,
        Type::Int { .. } | Type::Float(_) => (t.scalar_bits(ty) / 8) as u64,
        Type::Vector { elem, lanes } => {
            let s = (t.scalar_bits(*elem) / 8) as u64;
            if t.is_bool(*elem) {
                return None;
            }
            if *lanes == 2 {
                2 * s
            } else {
                4 * s
            }
        }
        Type::Matrix { elem, dim } => {
            let s = (t.scalar_bits(*elem) / 8) as u64;
            if *dim == 2 {
                2 * s
            } else {
                4 * s
            }
        }
        Type::Array { elem, .. } => vk_align(t, *elem)?,
        Type::Struct { fields, .. } => {
            let mut a = 1;
            for f in fields {
                a = a.max(vk_align(t, *f)?);
            }
            a
        }
        _ => return None,
    })
}

/// Whether `ty` in host layout is exactly a Vulkan standard-layout type: every
/// member at a host offset that is a multiple of its Vulkan alignment, and
/// every vector / matrix column aligned on the host as Vulkan requires.
pub fn typed_compatible(t: &TypeTable, ty: TypeId) -> bool {
    let Some(vk) = vk_align(t, ty) else { return false };
    let (size, host_align) = t.size_align(ty);
    if size == 0 {
        return false;
    }
    match t.get(ty) {
        Type::Int { .. } | Type::Float(_) => true,
        Type::Vector { .. } => host_align.is_multiple_of(vk),
        Type::Matrix { elem, dim } => {
            // Columns are host vectors of `dim` lanes.
            let s = (t.scalar_bits(*elem) / 8) as u64;
            let col_size = s * if *dim == 3 { 4 } else { *dim as u64 };
            col_size.min(16).is_multiple_of(vk)
        }
        Type::Array { elem, .. } => typed_compatible(t, *elem),
        Type::Struct { fields, .. } => {
            let offsets = t.struct_offsets(ty);
            fields
                .iter()
                .zip(offsets)
                .all(|(f, off)| typed_compatible(t, *f) && vk_align(t, *f).is_some_and(|a| off.is_multiple_of(a)))
        }
        _ => false,
    }
}

/// Host column stride of a matrix type (the `MatrixStride` decoration).
pub fn matrix_stride(t: &TypeTable, elem: TypeId, dim: u8) -> u32 {
    let s = t.scalar_bits(elem) / 8;
    s * if dim == 3 { 4 } else { dim as u32 }
}

/// One scalar of a word-ABI element: where it lives in the element (bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordLeaf {
    pub offset: u64,
    /// The scalar type (a 32- or 64-bit int/float, or `bool` stored as a word).
    pub ty: TypeId,
    /// Path of constant indices from the element to this scalar.
    pub path: Vec<u32>,
}

/// Decide how a `buffer<elem>` is stored. `Err` explains why it cannot be.
pub fn plan_buffer(t: &TypeTable, elem: TypeId) -> Result<BufferStorage, String> {
    if !t.is_data(elem) {
        return Err(format!("buffer element `{}` is not plain data", xir::verify::type_name(t, elem)));
    }
    let (size, align) = t.size_align(elem);
    if size == 0 {
        return Err("buffer elements of zero size have no ArrayStride".into());
    }
    if t.is_bool(elem) {
        return Ok(BufferStorage::Words { elem_size: 4, elem_align: 4 });
    }
    if typed_compatible(t, elem) {
        let stride = u32::try_from(size).map_err(|_| "buffer element larger than 4 GiB".to_string())?;
        return Ok(BufferStorage::Typed { stride });
    }
    word_leaves(t, elem)?;
    Ok(BufferStorage::Words {
        elem_size: u32::try_from(size).map_err(|_| "buffer element larger than 4 GiB".to_string())?,
        elem_align: align as u32,
    })
}

/// The scalars of a word-ABI element in host layout. Only whole 32- and 64-bit
/// scalars can be moved as words (and a top-level `bool`, one word each).
pub fn word_leaves(t: &TypeTable, elem: TypeId) -> Result<Vec<WordLeaf>, String> {
    if t.is_bool(elem) {
        return Ok(vec![WordLeaf { offset: 0, ty: elem, path: vec![] }]);
    }
    let mut out = Vec::new();
    collect_leaves(t, elem, 0, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn collect_leaves(
    t: &TypeTable,
    ty: TypeId,
    off: u64,
    path: &mut Vec<u32>,
    out: &mut Vec<WordLeaf>,
) -> Result<(), String> {
    let name = || xir::verify::type_name(t, ty);
    match t.get(ty) {
        Type::Bool => Err(format!(
            "`bool` inside an aggregate buffer element has no word representation (host bools are 1 byte): `{}`",
            name()
        )),
        Type::Int { .. } | Type::Float(_) => {
            let bits = t.scalar_bits(ty);
            if bits != 32 && bits != 64 {
                return Err(format!("{bits}-bit scalars cannot be moved through the word ABI (in `{}`)", name()));
            }
            out.push(WordLeaf { offset: off, ty, path: path.clone() });
            Ok(())
        }
        Type::Vector { elem, lanes } => {
            let s = t.size_align(*elem).0;
            for k in 0..*lanes as u32 {
                path.push(k);
                collect_leaves(t, *elem, off + s * k as u64, path, out)?;
                path.pop();
            }
            Ok(())
        }
        Type::Matrix { elem, dim } => {
            let stride = matrix_stride(t, *elem, *dim) as u64;
            let s = t.size_align(*elem).0;
            for c in 0..*dim as u32 {
                for r in 0..*dim as u32 {
                    path.extend([c, r]);
                    collect_leaves(t, *elem, off + stride * c as u64 + s * r as u64, path, out)?;
                    path.truncate(path.len() - 2);
                }
            }
            Ok(())
        }
        Type::Array { elem, len } => {
            if *len > 4096 {
                return Err(format!("word-ABI arrays are limited to 4096 elements, `{}` has {len}", name()));
            }
            let s = t.size_align(*elem).0;
            for k in 0..*len {
                path.push(k as u32);
                collect_leaves(t, *elem, off + s * k, path, out)?;
                path.pop();
            }
            Ok(())
        }
        Type::Struct { fields, .. } => {
            let offs = t.struct_offsets(ty);
            for (k, (f, o)) in fields.iter().zip(offs).enumerate() {
                path.push(k as u32);
                collect_leaves(t, *f, off + o, path, out)?;
                path.pop();
            }
            Ok(())
        }
        _ => Err(format!("`{}` is not plain data", name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xir::FloatFormat;

    #[test]
    fn bool_and_wide_three_vectors_use_words_others_are_typed() {
        let mut t = TypeTable::default();
        let f64t = t.float(FloatFormat::F64);
        let v3d = t.vector(f64t, 3);
        let v2d = t.vector(f64t, 2);
        let v3f = t.vector(TypeTable::F32, 3);
        assert_eq!(plan_buffer(&t, TypeTable::BOOL), Ok(BufferStorage::Words { elem_size: 4, elem_align: 4 }));
        assert_eq!(plan_buffer(&t, v3d), Ok(BufferStorage::Words { elem_size: 32, elem_align: 16 }));
        assert_eq!(plan_buffer(&t, v2d), Ok(BufferStorage::Typed { stride: 16 }));
        assert_eq!(plan_buffer(&t, v3f), Ok(BufferStorage::Typed { stride: 16 }));
        let leaves = word_leaves(&t, v3d).unwrap();
        assert_eq!(leaves.iter().map(|l| l.offset).collect::<Vec<_>>(), vec![0, 8, 16]);
    }

    #[test]
    fn struct_holding_a_wide_vector_at_a_16_byte_offset_uses_words() {
        let mut t = TypeTable::default();
        let f64t = t.float(FloatFormat::F64);
        let v4d = t.vector(f64t, 4);
        let s = t.intern(Type::Struct { fields: vec![TypeTable::F32, v4d], align: 4 });
        assert!(!typed_compatible(&t, s));
        let s_ok = t.intern(Type::Struct { fields: vec![TypeTable::F32, TypeTable::U32], align: 4 });
        assert_eq!(plan_buffer(&t, s_ok), Ok(BufferStorage::Typed { stride: 8 }));
        let bs = t.intern(Type::Struct { fields: vec![TypeTable::BOOL, TypeTable::U32], align: 4 });
        assert!(plan_buffer(&t, bs).unwrap_err().contains("bool"));
    }
}
