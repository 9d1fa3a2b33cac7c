//! Storage of a dispatch: per-thread locals, per-block shared memory and the
//! dispatch's buffers, addressed by `Ptr`. Every access is bounds-checked;
//! reads of uninitialized scalars are reported by the caller (`Val::U`
//! leaves). Byte buffers store host-layout bytes (`TypeTable::size_align`).

use std::rc::Rc;

use crate::ir::{Type, TypeId, TypeTable};

use super::arith::{mask, R};
use super::value::{Ptr, Root, Val};

/// A buffer of the dispatch.
#[derive(Clone, Debug)]
pub(crate) enum Buf {
    Typed {
        elem: TypeId,
        data: Vec<Val>,
    },
    Bytes(Vec<u8>),
    /// A texture: texels (4-lane vectors of `elem`) in x-fastest order;
    /// storage-texture arguments have one level, bindless texture slots may
    /// carry a mip chain (`sampling.rs`).
    Texture {
        elem: TypeId,
        dim: u8,
        size: [u32; 3],
        /// Mip levels (at least 1); `data` holds every level, level 0 first, each x fastest.
        levels: u32,
        data: Vec<Val>,
    },
    /// A bindless array: slots holding byte buffers or textures.
    Bindless(Vec<Option<Buf>>),
    /// A bindless slot that is the same resource as the earlier slot `k` of
    /// its array (`{"alias": k}`): writes through either are seen by both.
    Alias(usize),
    /// An acceleration structure (`ray.rs`).
    Accel(super::ray::Accel),
}

pub(crate) struct Mem<'a> {
    pub locals: &'a mut [Val],
    pub shared: &'a mut [Val],
    pub bufs: &'a mut [Buf],
}

fn oob(i: u64, len: usize) -> String {
    format!("index {i} out of bounds (length {len})")
}

fn step_ref(v: &Val, i: u64) -> R<&Val> {
    match v {
        Val::A(m) => m.get(i as usize).ok_or_else(|| oob(i, m.len())),
        Val::U => Err("read of uninitialized memory".into()),
        _ => Err("address path goes through a scalar".into()),
    }
}

fn step_mut(v: &mut Val, i: u64) -> R<&mut Val> {
    match v {
        Val::A(m) => {
            let len = m.len();
            Rc::make_mut(m).get_mut(i as usize).ok_or_else(|| oob(i, len))
        }
        Val::U => Err("write into an undefined aggregate".into()),
        _ => Err("address path goes through a scalar".into()),
    }
}

impl Mem<'_> {
    fn root_ref(&self, p: &Ptr) -> R<(&Val, usize)> {
        Ok(match p.root {
            Root::Local(i) => (self.locals.get(i as usize).ok_or("dangling local address")?, 0),
            Root::Shared(i) => (self.shared.get(i as usize).ok_or("dangling shared address")?, 0),
            Root::Buffer(b) => match &self.bufs[b as usize] {
                Buf::Typed { data, .. } => {
                    let i = *p.path.first().ok_or("buffer address without an element index")?;
                    (data.get(i as usize).ok_or_else(|| oob(i, data.len()))?, 1)
                }
                _ => return Err("address into a byte_buffer or texture".into()),
            },
        })
    }

    /// The value at `p` (may contain undefined leaves).
    pub fn read(&self, p: &Ptr) -> R<Val> {
        let (mut v, skip) = self.root_ref(p)?;
        for &i in &p.path[skip..] {
            v = step_ref(v, i)?;
        }
        Ok(v.clone())
    }

    /// Apply `f` to the storage at `p`.
    pub fn modify<T>(&mut self, p: &Ptr, f: impl FnOnce(&mut Val) -> R<T>) -> R<T> {
        let (mut v, skip) = match p.root {
            Root::Local(i) => (self.locals.get_mut(i as usize).ok_or("dangling local address")?, 0),
            Root::Shared(i) => (self.shared.get_mut(i as usize).ok_or("dangling shared address")?, 0),
            Root::Buffer(b) => match &mut self.bufs[b as usize] {
                Buf::Typed { data, .. } => {
                    let i = *p.path.first().ok_or("buffer address without an element index")?;
                    let len = data.len();
                    (data.get_mut(i as usize).ok_or_else(|| oob(i, len))?, 1)
                }
                _ => return Err("address into a byte_buffer or texture".into()),
            },
        };
        for &i in &p.path[skip..] {
            v = step_mut(v, i)?;
        }
        f(v)
    }
}

/// Element size and column stride of a matrix in host layout (columns are
/// vectors: three lanes padded to four).
fn column_layout(types: &TypeTable, elem: TypeId, dim: u8) -> (u64, u64) {
    let (es, _) = types.size_align(elem);
    (es, es * if dim == 3 { 4 } else { dim as u64 })
}

/// Decode a value of `ty` from host-layout bytes.
pub(crate) fn decode(types: &TypeTable, ty: TypeId, bytes: &[u8]) -> R<Val> {
    let (size, _) = types.size_align(ty);
    if (bytes.len() as u64) < size {
        return Err(format!("read of {size} bytes past the end of the byte buffer"));
    }
    Ok(match types.get(ty) {
        Type::Bool => Val::S((bytes[0] != 0) as u64),
        Type::Int { .. } | Type::Float(_) => {
            let mut b = [0u8; 8];
            b[..size as usize].copy_from_slice(&bytes[..size as usize]);
            Val::S(u64::from_le_bytes(b))
        }
        Type::Vector { elem, lanes } => {
            let (es, _) = types.size_align(*elem);
            Val::agg((0..*lanes as u64).map(|k| decode(types, *elem, &bytes[(k * es) as usize..])).collect::<R<_>>()?)
        }
        Type::Matrix { elem, dim } => {
            let (es, cs) = column_layout(types, *elem, *dim);
            let col = |c: u64| -> R<Val> {
                let lanes = (0..*dim as u64).map(|k| decode(types, *elem, &bytes[(c * cs + k * es) as usize..]));
                Ok(Val::agg(lanes.collect::<R<_>>()?))
            };
            Val::agg((0..*dim as u64).map(col).collect::<R<_>>()?)
        }
        Type::Array { elem, len } => {
            let (es, _) = types.size_align(*elem);
            Val::agg((0..*len).map(|k| decode(types, *elem, &bytes[(k * es) as usize..])).collect::<R<_>>()?)
        }
        Type::Struct { fields, .. } => {
            let offs = types.struct_offsets(ty);
            Val::agg(fields.iter().zip(offs).map(|(f, o)| decode(types, *f, &bytes[o as usize..])).collect::<R<_>>()?)
        }
        _ => return Err("byte_buffer values must be plain data".into()),
    })
}

/// Encode `v` of `ty` into host-layout bytes (padding left untouched).
pub(crate) fn encode(types: &TypeTable, ty: TypeId, v: &Val, out: &mut [u8]) -> R<()> {
    let (size, _) = types.size_align(ty);
    if (out.len() as u64) < size {
        return Err(format!("write of {size} bytes past the end of the byte buffer"));
    }
    match types.get(ty) {
        Type::Bool | Type::Int { .. } | Type::Float(_) => {
            let b = mask(v.bits()?, size as u32 * 8).to_le_bytes();
            out[..size as usize].copy_from_slice(&b[..size as usize]);
        }
        Type::Vector { elem, .. } | Type::Array { elem, .. } => {
            let (es, _) = types.size_align(*elem);
            for (k, m) in v.members()?.iter().enumerate() {
                encode(types, *elem, m, &mut out[k * es as usize..])?;
            }
        }
        Type::Matrix { elem, dim } => {
            let (es, cs) = column_layout(types, *elem, *dim);
            for (c, col) in v.members()?.iter().enumerate() {
                for (k, x) in col.members()?.iter().enumerate() {
                    encode(types, *elem, x, &mut out[c * cs as usize + k * es as usize..])?;
                }
            }
        }
        Type::Struct { fields, .. } => {
            let offs = types.struct_offsets(ty);
            for ((f, o), m) in fields.iter().zip(offs).zip(v.members()?) {
                encode(types, *f, m, &mut out[o as usize..])?;
            }
        }
        _ => return Err("byte_buffer values must be plain data".into()),
    }
    Ok(())
}
