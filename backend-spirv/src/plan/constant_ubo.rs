//! The constant UBO planner: which large array constants may live in one
//! uniform buffer instead of being spelled inline as `OpConstantComposite`,
//! where each goes, and the exact bytes of that buffer.
//!
//! Only layouts with an exact host -> std140 serializer are eligible: arrays
//! whose element is a 32- or 64-bit integer or float scalar, or a 2-, 3- or
//! 4-lane vector of 32-bit integers or floats. In std140 an array's stride is
//! its element size rounded up to 16; an element's bytes are the prefix of
//! its host bytes (a host `vec3` is padded to 16 bytes, std140 keeps the
//! first 12 and pads the rest to the stride). Every step is checked: the
//! element size against its alignment, `stride * len` with checked
//! multiplication, each offset 16-aligned, and the cumulative range against
//! the portable limit [`PORTABLE_UBO_RANGE`] (16 KiB, Vulkan's minimum
//! `maxUniformBufferRange`). A constant that does not fit is kept inline,
//! with the reason recorded; it is never truncated.
//!
//! Consumes: the module and the kernel-reachable functions' structural
//! closures. Produces: [`ConstantUboPlan`] (placements, inline reasons and
//! the serialized bytes, which the artifact's constant-data section holds).
//! Preserves: the module (a plan only).
//!
//! Status: the planner and serializer are complete and tested; emission does
//! not yet read from the buffer (placed constants are still emitted inline)
//! and the runner does not bind it, so `compile` does not call the planner.

use xir::{Const, ConstValue, FuncId, Module, Type, TypeId, TypeTable, Value};

/// Vulkan's guaranteed minimum `maxUniformBufferRange`, in bytes.
pub const PORTABLE_UBO_RANGE: u64 = 16 * 1024;
/// Array constants of at least this many host bytes are candidates.
pub const UBO_THRESHOLD: u64 = 256;
/// std140 array stride and member alignment granule.
const STD140_GRANULE: u64 = 16;

/// The std140 layout of an eligible array constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Std140Array {
    /// Elements.
    pub len: u64,
    /// Bytes of one element in the host layout (its stride there).
    pub host_stride: u64,
    /// Meaningful bytes of one element (the std140 element size).
    pub elem_size: u64,
    /// std140 array stride: `elem_size` rounded up to 16.
    pub stride: u64,
    /// `stride * len`.
    pub size: u64,
}

/// The std140 layout of `ty`, or why it has no exact serializer here.
pub fn std140_array(t: &TypeTable, ty: TypeId) -> Result<Std140Array, String> {
    let name = || xir::verify::type_name(t, ty);
    let Type::Array { elem, len } = t.get(ty) else {
        return Err(format!("`{}` is not an array", name()));
    };
    let (elem, len) = (*elem, *len);
    let scalar_ok = |s: TypeId, wide: bool| match t.get(s) {
        Type::Int { bits, .. } => *bits == 32 || (wide && *bits == 64),
        Type::Float(f) => f.bits() == 32 || (wide && f.bits() == 64),
        _ => false,
    };
    let elem_size = match t.get(elem) {
        Type::Int { .. } | Type::Float(_) if scalar_ok(elem, true) => (t.scalar_bits(elem) / 8) as u64,
        Type::Vector { elem: s, lanes } if (2..=4).contains(lanes) && scalar_ok(*s, false) => 4 * *lanes as u64,
        _ => {
            return Err(format!(
                "`{}`: only arrays of 32/64-bit scalars and 32-bit 2-4 lane vectors have an exact std140 serializer",
                name()
            ))
        }
    };
    let (host_stride, host_align) = t.size_align(elem);
    if host_stride < elem_size || host_stride % host_align != 0 {
        return Err(format!("`{}`: host element size {host_stride} does not hold {elem_size} bytes", name()));
    }
    let stride = elem_size.div_ceil(STD140_GRANULE) * STD140_GRANULE;
    let size = stride.checked_mul(len).ok_or_else(|| format!("`{}`: std140 size overflows", name()))?;
    Ok(Std140Array { len, host_stride, elem_size, stride, size })
}

/// The host bytes of a scalar, vector or array constant (little-endian).
fn host_bytes(m: &Module, c: Const, out: &mut Vec<u8>) -> Result<(), String> {
    let d = m.consts.get(c);
    let (size, _) = m.types.size_align(d.ty);
    let start = out.len();
    match &d.value {
        ConstValue::Scalar(bits) => {
            let n = size as usize;
            if n > 8 {
                return Err("scalar constant wider than 64 bits".into());
            }
            out.extend_from_slice(&bits.to_le_bytes()[..n]);
        }
        ConstValue::Composite(members) => {
            for &k in members {
                host_bytes(m, k, out)?;
            }
        }
    }
    // Padding (a vec3's fourth lane) is zero.
    let want = start.checked_add(size as usize).ok_or("constant size overflows")?;
    if out.len() > want {
        return Err("constant members exceed their type's host size".into());
    }
    out.resize(want, 0);
    Ok(())
}

/// Serialize an array constant to its exact std140 bytes (`layout.size` long).
pub fn serialize_std140(m: &Module, c: Const) -> Result<Vec<u8>, String> {
    let layout = std140_array(&m.types, m.consts.get(c).ty)?;
    let mut host = Vec::new();
    host_bytes(m, c, &mut host)?;
    let host_len = layout.host_stride.checked_mul(layout.len).ok_or("host size overflows")?;
    if host.len() as u64 != host_len {
        return Err(format!("host bytes {} differ from {} x {}", host.len(), layout.len, layout.host_stride));
    }
    let mut out = vec![0u8; layout.size as usize];
    for i in 0..layout.len {
        let (src, dst) = ((i * layout.host_stride) as usize, (i * layout.stride) as usize);
        let n = layout.elem_size as usize;
        out[dst..dst + n].copy_from_slice(&host[src..src + n]);
    }
    Ok(out)
}

/// One constant placed in the buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    pub constant: Const,
    /// Byte offset in the buffer (a multiple of 16).
    pub offset: u64,
    pub layout: Std140Array,
}

/// The planner's result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConstantUboPlan {
    pub placed: Vec<Placed>,
    /// Candidates kept inline, each with the reason.
    pub inline: Vec<(Const, String)>,
    /// The buffer's bytes (`placed` serialized at their offsets).
    pub bytes: Vec<u8>,
}

/// Plan the given candidate constants in order (first come, first placed),
/// within `limit` bytes. Constants under [`UBO_THRESHOLD`] host bytes and
/// non-arrays are not candidates and are skipped silently.
pub fn plan_constants(m: &Module, candidates: &[Const], limit: u64) -> ConstantUboPlan {
    let mut plan = ConstantUboPlan::default();
    let mut end = 0u64;
    for &c in candidates {
        if plan.placed.iter().any(|p| p.constant == c) || plan.inline.iter().any(|(k, _)| *k == c) {
            continue;
        }
        let ty = m.consts.get(c).ty;
        if !matches!(m.types.get(ty), Type::Array { .. }) || m.types.size_align(ty).0 < UBO_THRESHOLD {
            continue;
        }
        let layout = match std140_array(&m.types, ty) {
            Ok(l) => l,
            Err(e) => {
                plan.inline.push((c, e));
                continue;
            }
        };
        let offset = end.div_ceil(STD140_GRANULE) * STD140_GRANULE;
        let fits = offset.checked_add(layout.size).filter(|&e| e <= limit);
        let Some(new_end) = fits else {
            plan.inline.push((
                c,
                format!(
                    "{} std140 bytes at offset {offset} exceed the portable uniform-buffer range of {limit} bytes",
                    layout.size
                ),
            ));
            continue;
        };
        match serialize_std140(m, c) {
            Ok(bytes) => {
                plan.bytes.resize(offset as usize, 0);
                plan.bytes.extend_from_slice(&bytes);
                plan.placed.push(Placed { constant: c, offset, layout });
                end = new_end;
            }
            Err(e) => plan.inline.push((c, e)),
        }
    }
    plan
}

/// The array constants the reachable code of `order` uses as operands, in
/// first-use order (functions, then their closure blocks, then instructions).
pub fn candidates(m: &Module, order: &[(FuncId, Vec<xir::Block>)]) -> Vec<Const> {
    let mut out = Vec::new();
    for (fid, blocks) in order {
        let f = m.func(*fid);
        for &b in blocks {
            for &i in &f.block(b).insts {
                for v in &f.inst(i).operands {
                    if let Value::Const(c) = v {
                        if matches!(m.types.get(m.consts.get(*c).ty), Type::Array { .. }) && !out.contains(c) {
                            out.push(*c);
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use xir::{ConstData, FloatFormat};

    fn array_const(m: &mut Module, elem: Type, lanes: Option<u8>, n: u64, val: impl Fn(u64) -> u64) -> Const {
        let s = m.types.intern(elem);
        let e = match lanes {
            Some(l) => m.types.intern(Type::Vector { elem: s, lanes: l }),
            None => s,
        };
        let arr = m.types.intern(Type::Array { elem: e, len: n });
        let members: Vec<Const> = (0..n)
            .map(|i| match lanes {
                None => m.consts.intern(ConstData { ty: s, value: ConstValue::Scalar(val(i)) }),
                Some(l) => {
                    let lane: Vec<Const> = (0..l as u64)
                        .map(|k| m.consts.intern(ConstData { ty: s, value: ConstValue::Scalar(val(i * 8 + k)) }))
                        .collect();
                    m.consts.intern(ConstData { ty: e, value: ConstValue::Composite(lane) })
                }
            })
            .collect();
        m.consts.intern(ConstData { ty: arr, value: ConstValue::Composite(members) })
    }

    #[test]
    fn std140_bytes_are_exact() {
        let mut m = Module::default();
        let f32s = array_const(&mut m, Type::Float(FloatFormat::F32), None, 80, |i| (i as f32 * 0.5).to_bits() as u64);
        let b = serialize_std140(&m, f32s).unwrap();
        assert_eq!(b.len(), 80 * 16);
        for i in 0..80usize {
            assert_eq!(&b[i * 16..i * 16 + 4], &(i as f32 * 0.5).to_bits().to_le_bytes());
            assert!(b[i * 16 + 4..i * 16 + 16].iter().all(|&x| x == 0));
        }
        // vec3<u32>: host stride 16 (padded), std140 element 12, stride 16.
        let v3 = array_const(&mut m, Type::Int { bits: 32, signed: false }, Some(3), 30, |k| k + 1);
        let l = std140_array(&m.types, m.consts.get(v3).ty).unwrap();
        assert_eq!((l.host_stride, l.elem_size, l.stride, l.size), (16, 12, 16, 480));
        let b = serialize_std140(&m, v3).unwrap();
        let word = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        assert_eq!((word(16), word(20), word(24), word(28)), (9, 10, 11, 0));
        // i64: 8 bytes, stride 16, both halves kept.
        let wide = array_const(&mut m, Type::Int { bits: 64, signed: true }, None, 40, |i| (1u64 << 40) | i);
        let b = serialize_std140(&m, wide).unwrap();
        assert_eq!(u64::from_le_bytes(b[16 * 7..16 * 7 + 8].try_into().unwrap()), (1 << 40) | 7);
    }

    #[test]
    fn exactly_16_kib_is_placed_and_one_element_more_stays_inline() {
        let mut m = Module::default();
        let at_limit = array_const(&mut m, Type::Float(FloatFormat::F32), None, 1024, |i| i);
        let over = array_const(&mut m, Type::Float(FloatFormat::F32), None, 1025, |i| i);
        let p = plan_constants(&m, &[at_limit], PORTABLE_UBO_RANGE);
        assert_eq!(p.placed.len(), 1);
        assert_eq!((p.placed[0].offset, p.placed[0].layout.size, p.bytes.len()), (0, 16384, 16384));
        let p = plan_constants(&m, &[over], PORTABLE_UBO_RANGE);
        assert!(p.placed.is_empty() && p.bytes.is_empty());
        assert_eq!(p.inline.len(), 1);
        assert!(p.inline[0].1.contains("16400 std140 bytes") && p.inline[0].1.contains("16384"), "{}", p.inline[0].1);
    }

    #[test]
    fn placement_is_cumulative_aligned_and_skips_small_or_ineligible_constants() {
        let mut m = Module::default();
        let a = array_const(&mut m, Type::Float(FloatFormat::F32), None, 600, |i| i);
        let b = array_const(&mut m, Type::Int { bits: 32, signed: true }, None, 500, |i| i);
        let c = array_const(&mut m, Type::Int { bits: 32, signed: true }, None, 424, |i| i + 1);
        let small = array_const(&mut m, Type::Float(FloatFormat::F32), None, 4, |i| i);
        let halves = array_const(&mut m, Type::Float(FloatFormat::F16), None, 300, |i| i);
        let p = plan_constants(&m, &[a, small, b, c, halves], PORTABLE_UBO_RANGE);
        // a: 9600 bytes at 0; b: 8000 would end at 17600 > 16384 -> inline; c: 6784 at 9600 ends at 16384.
        let got: Vec<(Const, u64)> = p.placed.iter().map(|x| (x.constant, x.offset)).collect();
        assert_eq!(got, vec![(a, 0), (c, 9600)]);
        assert_eq!(p.bytes.len(), 16384);
        let inline: Vec<Const> = p.inline.iter().map(|x| x.0).collect();
        assert_eq!(inline, vec![b, halves]);
        assert!(p.inline[1].1.contains("exact std140 serializer"), "{}", p.inline[1].1);
        assert_eq!(&p.bytes[9600..9604], &1u32.to_le_bytes());
    }
}
