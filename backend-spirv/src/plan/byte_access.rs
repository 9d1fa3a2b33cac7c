//! Which path a byte-buffer access takes, decided before emission: the
//! proven alignment of an offset, the host leaves of a value, whether an
//! access takes the word fast path and whether a store needs the masked CAS
//! loop (`emit::bytes` lowers each path). The handoff, the control-flow plan
//! (CAS sites) and the bindless plan ask these too, so they live on the plan
//! side: emission reads plans, plans never read emission.

use xir::{ConstValue, Function, Inst, Module, Opcode, Type, TypeId, Value};

use super::layout;

/// The largest power of two (capped at 4) that offset `v` is proven to be a multiple of.
pub(crate) fn known_alignment(m: &Module, f: &Function, v: Value) -> u64 {
    fn go(m: &Module, f: &Function, v: Value, depth: u32) -> u64 {
        const CAP: u64 = 4;
        match v {
            Value::Const(c) => match m.consts.get(c).value {
                ConstValue::Scalar(0) => CAP,
                ConstValue::Scalar(x) => (1u64 << x.trailing_zeros().min(2)).min(CAP),
                ConstValue::Composite(_) => 1,
            },
            Value::Inst(i) if depth < 8 => {
                let d = f.inst(i);
                let a = |k: usize| go(m, f, d.operands[k], depth + 1);
                match d.opcode {
                    Opcode::Mul => (a(0) * a(1)).min(CAP),
                    Opcode::Add => a(0).min(a(1)),
                    Opcode::BitAnd => a(0).max(a(1)),
                    Opcode::Shl => match d.operands[1] {
                        Value::Const(c) => match m.consts.get(c).value {
                            ConstValue::Scalar(k) if k < 64 => (a(0) << k.min(2)).min(CAP),
                            _ => a(0),
                        },
                        _ => a(0),
                    },
                    _ => 1,
                }
            }
            _ => 1,
        }
    }
    go(m, f, v, 0)
}

/// Why a type has no byte-buffer representation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotPlainData {
    #[error("`bool` has no byte-buffer representation")]
    Bool,
    #[error("`{0}` is not plain data")]
    Leaf(String),
}

/// Every scalar of `ty` with its host byte offset and bit width; `Err` for `bool` or a non-data leaf.
pub(crate) fn byte_leaves(m: &Module, ty: TypeId) -> Result<Vec<(u64, u32)>, NotPlainData> {
    fn go(t: &xir::TypeTable, ty: TypeId, off: u64, out: &mut Vec<(u64, u32)>) -> Result<(), NotPlainData> {
        match t.get(ty) {
            Type::Bool => Err(NotPlainData::Bool),
            Type::Int { .. } | Type::Float(_) => {
                out.push((off, t.scalar_bits(ty)));
                Ok(())
            }
            Type::Vector { elem, lanes } => {
                let s = t.size_align(*elem).0;
                (0..*lanes as u64).try_for_each(|k| go(t, *elem, off + s * k, out))
            }
            Type::Matrix { elem, dim } => {
                let stride = layout::matrix_stride(t, *elem, *dim) as u64;
                let s = t.size_align(*elem).0;
                for c in 0..*dim as u64 {
                    for r in 0..*dim as u64 {
                        go(t, *elem, off + stride * c + s * r, out)?;
                    }
                }
                Ok(())
            }
            Type::Array { elem, len } => {
                let s = t.size_align(*elem).0;
                (0..*len).try_for_each(|k| go(t, *elem, off + s * k, out))
            }
            Type::Struct { fields, .. } => {
                let offs = t.struct_offsets(ty);
                fields.iter().zip(offs).try_for_each(|(f, o)| go(t, *f, off + o, out))
            }
            _ => Err(NotPlainData::Leaf(xir::verify::type_name(t, ty))),
        }
    }
    let mut out = Vec::new();
    go(&m.types, ty, 0, &mut out)?;
    Ok(out)
}

/// Whether byte access `i` (read or write of value type `vt` at its offset operand) takes the word fast path.
pub(crate) fn word_aligned(m: &Module, f: &Function, i: Inst, vt: TypeId) -> bool {
    word_aligned_at(m, f, f.inst(i).operands[1], vt)
}

/// Whether a value of type `vt` at byte offset `off` takes the word fast path.
pub(crate) fn word_aligned_at(m: &Module, f: &Function, off: Value, vt: TypeId) -> bool {
    known_alignment(m, f, off) >= 4
        && byte_leaves(m, vt).is_ok_and(|l| l.iter().all(|&(o, bits)| bits >= 32 && o % 4 == 0))
}

/// Whether `i` is a byte-buffer store that needs the masked CAS loop.
pub fn needs_masked_store(m: &Module, f: &Function, i: Inst) -> bool {
    let d = f.inst(i);
    d.opcode == Opcode::ByteBufferWrite && !word_aligned(m, f, i, f.value_type(m, d.operands[2]))
}
