//! Resource operations other than typed-buffer element access: buffer
//! sizes, byte-buffer reads and writes in host layout, storage textures, and
//! bindless arrays whose slots hold byte buffers or textures (sampling is
//! `sampling.rs`; texel reads, writes and sizes of a slot with a mip chain
//! address level 0, sizes any level). Every access is bounds-checked.

use xir_spec::Opcode;

use crate::ir::{Function, InstCore, Module};

use super::arith::{mask, sext, R};
use super::memory::{decode, encode, Buf};
use super::ops::index_value;
use super::value::{scalar_kind, Sk, Val};

pub(crate) fn is_resource_op(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        BufferSize
            | ByteBufferSize
            | ByteBufferRead
            | ByteBufferWrite
            | TextureSize
            | TextureRead
            | TextureWrite
            | BindlessBufferSize
            | BindlessBufferRead
            | BindlessByteBufferRead
            | BindlessBufferWrite
            | BindlessTexture2dSize
            | BindlessTexture3dSize
            | BindlessTexture2dRead
            | BindlessTexture3dRead
            | BindlessTexture2dWrite
            | BindlessTexture3dWrite
            | TextureSample
            | TextureSampleLevel
            | TextureSampleGrad
    )
}

/// Execute a resource operation; `Some(result)` for those with a result.
pub(crate) fn resource_op(m: &Module, f: &Function, d: &InstCore, ops: &[Val], bufs: &mut [Buf]) -> R<Option<Val>> {
    use Opcode::*;
    let op = d.opcode;
    let Some(Val::R(b)) = ops.first() else { return Err(format!("operand 0 of `{op}` is not a resource")) };
    let bindless = op.name().starts_with("bindless.") || super::sampling::is_sample_op(op);
    // `k`: index of the first operand after the resource (and slot).
    let (buf, k) = if bindless {
        let Buf::Bindless(slots) = &mut bufs[*b as usize] else {
            return Err(format!("`{op}` on a resource that is not a bindless array"));
        };
        let mut slot = index_value(m, f, d, 1, ops.get(1).ok_or("missing slot")?)?;
        let n = slots.len();
        if let Some(Some(Buf::Alias(k))) = slots.get(slot as usize) {
            slot = *k as u64;
        }
        let s =
            slots.get_mut(slot as usize).ok_or_else(|| format!("bindless slot {slot} out of bounds (length {n})"))?;
        (s.as_mut().ok_or_else(|| format!("bindless slot {slot} is empty"))?, 2)
    } else {
        (&mut bufs[*b as usize], 1)
    };
    let want_dim = match op {
        BindlessTexture2dSize | BindlessTexture2dRead | BindlessTexture2dWrite => Some(2),
        BindlessTexture3dSize | BindlessTexture3dRead | BindlessTexture3dWrite => Some(3),
        _ => None,
    };
    if let (Some(w), Buf::Texture { dim, .. }) = (want_dim, &*buf) {
        if *dim != w {
            return Err(format!("`{op}` on a bindless slot holding a {dim}D texture"));
        }
    }
    if super::sampling::is_sample_op(op) {
        return super::sampling::sample_op(m, f, d, ops, buf, k).map(Some);
    }
    let arg = |i: usize| ops.get(i).ok_or_else(|| format!("`{op}` needs operand {i}"));
    let types = &m.types;
    match (op, buf) {
        (BufferSize | ByteBufferSize | BindlessBufferSize, buf) => {
            let n = match buf {
                Buf::Typed { data, .. } => data.len() as u64,
                Buf::Bytes(v) => v.len() as u64,
                _ => return Err(format!("`{op}` on a texture")),
            };
            let n = if op == BindlessBufferSize {
                let stride = index_value(m, f, d, k, arg(k)?)?;
                if stride == 0 {
                    return Err("bindless buffer size with stride 0".into());
                }
                n / stride
            } else {
                n
            };
            let bits = scalar_kind(types, d.ty).map(|s| s.bits()).unwrap_or(64);
            Ok(Some(Val::S(mask(n, bits))))
        }
        (ByteBufferRead | ByteBufferWrite | BindlessBufferRead | BindlessByteBufferRead | BindlessBufferWrite, buf) => {
            let Buf::Bytes(bytes) = buf else { return Err(format!("`{op}` on a typed buffer or texture")) };
            let write = matches!(op, ByteBufferWrite | BindlessBufferWrite);
            let ty = if write { f.value_type(m, d.operands[k + 1]) } else { d.ty };
            let size = types.size_align(ty).0 as usize;
            let pos = index_value(m, f, d, k, arg(k)?)? as usize;
            let off =
                if matches!(op, BindlessBufferRead | BindlessBufferWrite) { pos.checked_mul(size) } else { Some(pos) };
            let len = bytes.len();
            let Some(off) = off.filter(|o| o.checked_add(size).is_some_and(|end| end <= len)) else {
                return Err(format!(
                    "byte access of {size} bytes at offset {pos}{} out of bounds (length {len})",
                    if off == Some(pos) { "" } else { " (element index)" }
                ));
            };
            if write {
                encode(types, ty, arg(k + 1)?, &mut bytes[off..])?;
                Ok(None)
            } else {
                Ok(Some(decode(types, ty, &bytes[off..])?))
            }
        }
        (TextureSize | BindlessTexture2dSize | BindlessTexture3dSize, Buf::Texture { dim, size, .. }) => {
            let level = index_value(m, f, d, k, arg(k)?)?;
            let lanes =
                size[..*dim as usize].iter().map(|&s| Val::S(if level >= 32 { 1 } else { (s >> level).max(1) } as u64));
            Ok(Some(Val::agg(lanes.collect())))
        }
        (
            TextureRead
            | TextureWrite
            | BindlessTexture2dRead
            | BindlessTexture3dRead
            | BindlessTexture2dWrite
            | BindlessTexture3dWrite,
            Buf::Texture { dim, size, data, .. },
        ) => {
            let csk = scalar_kind(types, f.value_type(m, d.operands[k]))
                .ok_or("texture coordinate is not an integer vector")?;
            let lin = texel_index(*dim as usize, size, arg(k)?, csk)?;
            if matches!(op, TextureRead | BindlessTexture2dRead | BindlessTexture3dRead) {
                Ok(Some(data[lin].clone()))
            } else {
                let v = arg(k + 1)?;
                if v.any_undef() {
                    return Err("write of an undefined texel".into());
                }
                data[lin] = v.clone();
                Ok(None)
            }
        }
        _ => Err(format!("`{op}` on a resource of the wrong kind")),
    }
}

/// The linear (x-fastest) index of the texel at `coord`, bounds-checked.
fn texel_index(dim: usize, size: &[u32; 3], coord: &Val, sk: Sk) -> R<usize> {
    let coord = coord.members()?;
    let mut lin = 0u64;
    for k in (0..dim).rev() {
        let c = coord.get(k).ok_or("texture coordinate has too few lanes")?.bits()?;
        let c = match sk {
            Sk::Int { bits, signed: true } if sext(c, bits) < 0 => u64::MAX,
            _ => c,
        };
        if c >= size[k] as u64 {
            let shown = if c == u64::MAX { "negative".to_string() } else { c.to_string() };
            return Err(format!("texel coordinate {shown} out of bounds (size {}) in dimension {k}", size[k]));
        }
        lin = lin * size[k] as u64 + c;
    }
    Ok(lin as usize)
}
