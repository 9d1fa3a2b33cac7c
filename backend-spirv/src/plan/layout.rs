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
//! typed storage representation at all. Both use word storage: the element
//! keeps its host layout (a `bool` is one byte, 0 or 1, as the interpreter
//! and LuisaCompute hosts store it), and the device packs it into `uint32`
//! words ([`typed_access`]: sub-word leaves are extracted from their words
//! and written by whole-word stores or one masked CAS loop).

use xir::{Function, Inst, Module, Opcode, Type, TypeId, TypeTable};

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

/// One scalar of a word-storage element: its byte offset in the host
/// layout, its type (an 8..64-bit int/float, or a `bool`: one byte holding 0
/// or 1, as on the host) and its constant index path from the element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    pub offset: u64,
    pub ty: TypeId,
    pub path: Vec<u32>,
}

/// How an element of type `T` moves through word storage (a word-ABI
/// `buffer<T>` or the bindless heap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypedAccess {
    /// A whole number of words of 32/64-bit leaves at word offsets: plain words (`emit/memory.rs`).
    Words,
    /// Some 8/16-bit or `bool` leaf, or a size that is not a multiple of 4 (`emit/subword.rs`).
    SubWord {
        /// `size(T)` is a multiple of 4: the element starts at a word (`index * size / 4`);
        /// otherwise at byte `index * size` (alignment `gcd(size, 4)`).
        word_aligned: bool,
        /// A write must be a masked CAS loop: some word it touches is only partly covered
        /// (another element, or padding, shares it).
        masked_write: bool,
        leaves: Vec<Leaf>,
    },
}

/// Why a type has no buffer or word-storage layout. Type names are their
/// text spelling.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("buffer element `{0}` is not plain data")]
    ElementNotData(String),
    #[error("buffer elements of zero size have no ArrayStride")]
    ZeroSizeElement,
    #[error("buffer element larger than 4 GiB")]
    ElementTooLarge,
    #[error("`{0}` is not plain data")]
    NotData(String),
    #[error("word-storage arrays are limited to {MAX_WORD_ARRAY} elements, `{ty}` has {len}")]
    ArrayTooLong { ty: String, len: u64 },
    #[error("an element of zero size has no word-storage representation")]
    ZeroSizeWordElement,
    #[error("a {bytes}-byte leaf at byte {offset} of `{ty}` is not naturally aligned in word storage")]
    MisalignedLeaf { bytes: u64, offset: u64, ty: String },
}

/// The planners report with messages, located by their callers.
impl From<LayoutError> for String {
    fn from(e: LayoutError) -> String {
        e.to_string()
    }
}

/// Decide how a `buffer<elem>` is stored. `Err` explains why it cannot be.
pub fn plan_buffer(t: &TypeTable, elem: TypeId) -> Result<BufferStorage, LayoutError> {
    if !t.is_data(elem) {
        return Err(LayoutError::ElementNotData(xir::verify::type_name(t, elem)));
    }
    let (size, align) = t.size_align(elem);
    if size == 0 {
        return Err(LayoutError::ZeroSizeElement);
    }
    let size = u32::try_from(size).map_err(|_| LayoutError::ElementTooLarge)?;
    if typed_compatible(t, elem) {
        return Ok(BufferStorage::Typed { stride: size });
    }
    typed_access(t, elem)?;
    Ok(BufferStorage::Words { elem_size: size, elem_align: align as u32 })
}

/// The scalars of `ty` in host layout, with their paths; `Err` for a non-data leaf.
pub fn leaves(t: &TypeTable, ty: TypeId) -> Result<Vec<Leaf>, LayoutError> {
    fn go(t: &TypeTable, ty: TypeId, off: u64, path: &mut Vec<u32>, out: &mut Vec<Leaf>) -> Result<(), LayoutError> {
        let mut each = |path: &mut Vec<u32>, parts: Vec<(TypeId, u64, Vec<u32>)>| {
            parts.into_iter().try_for_each(|(e, o, k)| {
                let n = path.len();
                path.extend(k);
                let r = go(t, e, off + o, path, out);
                path.truncate(n);
                r
            })
        };
        match t.get(ty) {
            Type::Bool | Type::Int { .. } | Type::Float(_) => {
                out.push(Leaf { offset: off, ty, path: path.clone() });
                Ok(())
            }
            Type::Vector { elem, lanes } => {
                let s = t.size_align(*elem).0;
                each(path, (0..u32::from(*lanes)).map(|k| (*elem, s * u64::from(k), vec![k])).collect())
            }
            Type::Array { elem, len } => {
                if *len > MAX_WORD_ARRAY {
                    return Err(LayoutError::ArrayTooLong { ty: xir::verify::type_name(t, ty), len: *len });
                }
                let s = t.size_align(*elem).0;
                each(path, (0..*len as u32).map(|k| (*elem, s * u64::from(k), vec![k])).collect())
            }
            Type::Matrix { elem, dim } => {
                let stride = matrix_stride(t, *elem, *dim) as u64;
                let s = t.size_align(*elem).0;
                let d = u32::from(*dim);
                let parts =
                    (0..d * d).map(|k| (*elem, stride * u64::from(k / d) + s * u64::from(k % d), vec![k / d, k % d]));
                each(path, parts.collect())
            }
            Type::Struct { fields, .. } => {
                let parts =
                    fields.iter().zip(t.struct_offsets(ty)).enumerate().map(|(k, (f, o))| (*f, o, vec![k as u32]));
                each(path, parts.collect())
            }
            _ => Err(LayoutError::NotData(xir::verify::type_name(t, ty))),
        }
    }
    let mut out = Vec::new();
    go(t, ty, 0, &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// Longest array inside a word-storage element: each leaf is moved by its own instructions.
const MAX_WORD_ARRAY: u64 = 4096;

/// Decide how element type `ty` moves through word storage. A typed view's
/// offset and size are exact multiples of its element size, so element
/// `index` starts at byte `index * size(T)` with alignment `gcd(size(T), 4)`
/// (the reference, "typed word-storage"). Every leaf must be naturally
/// aligned there, so none straddles a word.
pub fn typed_access(t: &TypeTable, ty: TypeId) -> Result<TypedAccess, LayoutError> {
    let size = t.size_align(ty).0;
    if size == 0 {
        return Err(LayoutError::ZeroSizeWordElement);
    }
    let leaves = leaves(t, ty)?;
    let word_aligned = size.is_multiple_of(4);
    let word_leaf = |l: &Leaf| !t.is_bool(l.ty) && t.scalar_bits(l.ty) >= 32 && l.offset.is_multiple_of(4);
    if word_aligned && leaves.iter().all(word_leaf) {
        return Ok(TypedAccess::Words);
    }
    // The element's alignment is gcd(size, 4); a leaf's is that of its offset within it, too.
    let base_align = 1u64 << size.trailing_zeros().min(2);
    for l in &leaves {
        let bytes = u64::from(t.scalar_bits(l.ty) / 8);
        let align = base_align.min(if l.offset == 0 { 4 } else { 1 << l.offset.trailing_zeros().min(2) });
        if align < bytes.min(4) {
            return Err(LayoutError::MisalignedLeaf { bytes, offset: l.offset, ty: xir::verify::type_name(t, ty) });
        }
    }
    let masked_write = shares_a_word(t, size, &leaves);
    Ok(TypedAccess::SubWord { word_aligned, masked_write, leaves })
}

/// Whether writing `leaves` (offsets from the start of an element of `size`
/// bytes) touches a word that also holds other bytes, so the write must be
/// a masked CAS loop: the element does not start at a word, or a word the
/// leaves touch is only partly theirs.
fn shares_a_word(t: &TypeTable, size: u64, leaves: &[Leaf]) -> bool {
    let mut covered = vec![0u8; size.div_ceil(4) as usize];
    for l in leaves {
        for b in l.offset..l.offset + u64::from(t.scalar_bits(l.ty) / 8) {
            covered[(b / 4) as usize] |= 1 << (b % 4);
        }
    }
    !size.is_multiple_of(4) || covered.iter().any(|&c| c != 0 && c != 0xf)
}

/// How a `buffer.write_part` moves its part through word storage: the
/// element's leaves under the part's path (offsets from the element's
/// start, paths from the part), where the element starts, and whether some
/// word the part touches holds bytes outside the part (another leaf of the
/// element, padding or another element), so the write must be a masked CAS
/// loop that leaves those bytes alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartAccess {
    pub leaves: Vec<Leaf>,
    /// As `TypedAccess::SubWord`'s: the element starts at a word.
    pub word_aligned: bool,
    pub masked_write: bool,
}

/// Why a partial write into a word-storage element cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PartError {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(
        "a write to part of a word-storage element (`{0}`) needs a constant path: a dynamic index would select its words at run time"
    )]
    DynamicPath(String),
}

/// Plan a `buffer.write_part` of the word-storage element `elem` along the
/// constant `path` (`None` for a dynamic step: refused). Only the part's
/// bytes are written; a word it shares with other bytes goes through the
/// masked CAS loop, so a concurrent write to the element's other parts
/// survives.
pub fn part_access(t: &TypeTable, elem: TypeId, path: &[Option<u32>]) -> Result<PartAccess, PartError> {
    let dynamic = || PartError::DynamicPath(xir::verify::type_name(t, elem));
    let path: Vec<u32> = path.iter().map(|p| p.ok_or_else(dynamic)).collect::<Result<_, _>>()?;
    let size = t.size_align(elem).0;
    let word_aligned = size.is_multiple_of(4);
    // `typed_access` checks every leaf is naturally aligned in its word.
    typed_access(t, elem)?;
    let all = leaves(t, elem)?;
    let part: Vec<Leaf> = all
        .iter()
        .filter(|l| l.path.starts_with(&path))
        .map(|l| Leaf { offset: l.offset, ty: l.ty, path: l.path[path.len()..].to_vec() })
        .collect();
    let masked_write = shares_a_word(t, size, &part);
    Ok(PartAccess { leaves: part, word_aligned, masked_write })
}

/// The constant steps of a `buffer.write_part`'s path (`None` for a
/// dynamic one).
pub fn constant_path(m: &Module, path: &[xir::Value]) -> Vec<Option<u32>> {
    path.iter().map(|&v| m.const_int_value(v).and_then(|c| u32::try_from(c).ok())).collect()
}

/// Whether `i` is a `buffer.write` (or `buffer.volatile_write`, or a
/// `buffer.write_part` whose part shares a word with other bytes) to a
/// word-ABI buffer that expands to a masked CAS loop (a CAS site of the
/// control-flow plan).
pub fn needs_masked_buffer_write(m: &Module, f: &Function, i: Inst) -> bool {
    let d = f.inst(i);
    if !matches!(d.opcode, Opcode::BufferWrite | Opcode::BufferVolatileWrite | Opcode::BufferWritePart) {
        return false;
    }
    let Type::Buffer(elem) = m.types.get(f.value_type(m, d.operands[0])) else { return false };
    if !matches!(plan_buffer(&m.types, *elem), Ok(BufferStorage::Words { .. })) {
        return false;
    }
    if d.opcode == Opcode::BufferWritePart {
        let path = constant_path(m, &d.operands[3..]);
        return matches!(part_access(&m.types, *elem, &path), Ok(PartAccess { masked_write: true, .. }));
    }
    matches!(typed_access(&m.types, *elem), Ok(TypedAccess::SubWord { masked_write: true, .. }))
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
        // A bool keeps its 1-byte host layout.
        assert_eq!(plan_buffer(&t, TypeTable::BOOL), Ok(BufferStorage::Words { elem_size: 1, elem_align: 1 }));
        assert_eq!(plan_buffer(&t, v3d), Ok(BufferStorage::Words { elem_size: 32, elem_align: 16 }));
        assert_eq!(plan_buffer(&t, v2d), Ok(BufferStorage::Typed { stride: 16 }));
        assert_eq!(plan_buffer(&t, v3f), Ok(BufferStorage::Typed { stride: 16 }));
        assert_eq!(typed_access(&t, v3d), Ok(TypedAccess::Words));
        let leaves = leaves(&t, v3d).unwrap();
        assert_eq!(leaves.iter().map(|l| l.offset).collect::<Vec<_>>(), vec![0, 8, 16]);
    }

    #[test]
    fn bool_leaves_are_single_bytes_written_through_masked_words() {
        let mut t = TypeTable::default();
        let Ok(TypedAccess::SubWord { word_aligned, masked_write, leaves }) = typed_access(&t, TypeTable::BOOL) else {
            panic!("bool is a sub-word element")
        };
        assert!(!word_aligned && masked_write);
        assert_eq!(leaves, vec![Leaf { offset: 0, ty: TypeTable::BOOL, path: vec![] }]);
        // bool4 fills its word: whole-word stores, no CAS loop.
        let b4 = t.vector(TypeTable::BOOL, 4);
        assert_eq!(plan_buffer(&t, b4), Ok(BufferStorage::Words { elem_size: 4, elem_align: 4 }));
        let Ok(TypedAccess::SubWord { word_aligned: true, masked_write: false, leaves }) = typed_access(&t, b4) else {
            panic!("bool4 covers its word")
        };
        assert_eq!(
            leaves.iter().map(|l| (l.offset, l.path.clone())).collect::<Vec<_>>(),
            [(0, vec![0]), (1, vec![1]), (2, vec![2]), (3, vec![3])]
        );
    }

    #[test]
    fn struct_holding_a_wide_vector_or_a_bool_uses_words() {
        let mut t = TypeTable::default();
        let f64t = t.float(FloatFormat::F64);
        let v4d = t.vector(f64t, 4);
        let s = t.intern(Type::Struct { fields: vec![TypeTable::F32, v4d], align: 4 });
        assert!(!typed_compatible(&t, s));
        let s_ok = t.intern(Type::Struct { fields: vec![TypeTable::F32, TypeTable::U32], align: 4 });
        assert_eq!(plan_buffer(&t, s_ok), Ok(BufferStorage::Typed { stride: 8 }));
        // { bool, u32 }: the bool at byte 0, three padding bytes, the u32 at byte 4.
        let bs = t.intern(Type::Struct { fields: vec![TypeTable::BOOL, TypeTable::U32], align: 4 });
        assert_eq!(plan_buffer(&t, bs), Ok(BufferStorage::Words { elem_size: 8, elem_align: 4 }));
        let Ok(TypedAccess::SubWord { word_aligned: true, masked_write: true, leaves }) = typed_access(&t, bs) else {
            panic!("the bool's word is partly padding")
        };
        assert_eq!(leaves.iter().map(|l| l.offset).collect::<Vec<_>>(), vec![0, 4]);
        let big = t.array(TypeTable::BOOL, 4097);
        assert_eq!(plan_buffer(&t, big), Err(LayoutError::ArrayTooLong { ty: "array<bool, 4097>".into(), len: 4097 }));
    }

    #[test]
    fn a_part_writes_its_own_leaves_masked_where_it_shares_a_word() {
        let mut t = TypeTable::default();
        let u16t = t.int(16, false);
        // { bool, bool, u16 }: one word; the u16 shares it with the bools.
        let rec = t.intern(Type::Struct { fields: vec![TypeTable::BOOL, TypeTable::BOOL, u16t], align: 2 });
        let part = part_access(&t, rec, &[Some(2)]).unwrap();
        assert_eq!(part.leaves, vec![Leaf { offset: 2, ty: u16t, path: vec![] }]);
        assert!(part.word_aligned && part.masked_write);
        // { bool, u32 }: the u32 covers its word, a plain store.
        let bs = t.intern(Type::Struct { fields: vec![TypeTable::BOOL, TypeTable::U32], align: 4 });
        let part = part_access(&t, bs, &[Some(1)]).unwrap();
        assert_eq!((part.leaves.len(), part.masked_write), (1, false));
        // A lane of a vec<bool, 2> (two elements per word): masked, paths from the part.
        let b2 = t.vector(TypeTable::BOOL, 2);
        let part = part_access(&t, b2, &[Some(1)]).unwrap();
        assert_eq!(part.leaves, vec![Leaf { offset: 1, ty: TypeTable::BOOL, path: vec![] }]);
        assert!(!part.word_aligned && part.masked_write);
        assert_eq!(part_access(&t, b2, &[None]), Err(PartError::DynamicPath("vec<bool, 2>".into())));
    }
}
