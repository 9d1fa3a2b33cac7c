//! The constant UBO planner: which large array constants may live in one
//! uniform buffer instead of being spelled inline as `OpConstantComposite`,
//! where each goes, and the exact bytes of that buffer.
//!
//! Only layouts with an exact host -> std140 serializer are eligible: arrays
//! whose element is a 32- or 64-bit integer or float scalar, or a 2-, 3- or
//! 4-lane vector of 32-bit integers or floats; 8-bit integer and 16-bit
//! integer or `f16` scalars and vectors only when the target enables the
//! matching Uniform-storage feature (`uniformAndStorageBuffer8BitAccess` /
//! `uniformAndStorageBuffer16BitAccess`, [`NarrowAccess`]), otherwise they
//! stay inline with that reason. In std140 an array's stride is
//! its element size rounded up to 16; an element's bytes are the prefix of
//! its host bytes (a host `vec3` is padded to 16 bytes, std140 keeps the
//! first 12 and pads the rest to the stride). Every step is checked: the
//! element size against its alignment, `stride * len` with checked
//! multiplication, each offset 16-aligned, and the cumulative range against
//! the portable limit [`PORTABLE_UBO_RANGE`] (16 KiB, Vulkan's minimum
//! `maxUniformBufferRange`). A constant that does not fit is kept inline,
//! with the reason recorded; it is never truncated.
//!
//! A candidate used as a `phi` incoming value stays inline (a load would
//! have to sit on the incoming edge, not in the phi's block).
//!
//! Consumes: the module, the kernel-reachable functions' structural
//! closures and the target's feature snapshot. Produces: [`ConstantUboPlan`]
//! (placements, inline reasons, the serialized bytes, which the artifact's
//! constant-data section holds, and the descriptor binding, [`bind`]).
//! Preserves: the module (a plan only). `compile` runs it ([`plan_kernel`]);
//! `emit::constant_ubo` reads the placed constants from the buffer.

use xir::{Block, Const, ConstValue, FuncId, Module, Opcode, Type, TypeId, TypeTable, Value};

use crate::abi::{BufferStorage, Property, PropertyKind, Role, LOCAL_SET};
use crate::features::{Feature, FeatureSet};
use crate::plan::bindings::BindingPlan;

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

/// Which narrow element widths the target may read from a uniform block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NarrowAccess {
    /// `uniformAndStorageBuffer8BitAccess` is enabled: 8-bit integer elements.
    pub bits8: bool,
    /// `uniformAndStorageBuffer16BitAccess` is enabled: 16-bit integer and `f16` elements.
    pub bits16: bool,
}

impl NarrowAccess {
    /// No narrow element (the target is unknown or enables neither feature).
    pub const NONE: NarrowAccess = NarrowAccess { bits8: false, bits16: false };

    /// What a device snapshot enables (`None`, an unknown target: nothing narrow).
    pub fn of_device(device: Option<&FeatureSet>) -> NarrowAccess {
        let on = |f| device.is_some_and(|d| d.contains(f));
        NarrowAccess {
            bits8: on(Feature::UniformAndStorageBuffer8BitAccess),
            bits16: on(Feature::UniformAndStorageBuffer16BitAccess),
        }
    }
}

/// Why an array constant has no exact std140 form here (it is then
/// emitted inline, with this reason in the plan).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Std140Error {
    #[error("`{0}` is not an array")]
    NotAnArray(String),
    #[error(
        "`{ty}`: {bits}-bit elements in a uniform block need the device feature {feature}, which the target does not \
         enable"
    )]
    NarrowNotEnabled { ty: String, bits: u32, feature: &'static str },
    #[error(
        "`{0}`: only arrays of 32/64-bit scalars and 32-bit 2-4 lane vectors (8/16-bit ones with the Uniform-storage \
         feature) have an exact std140 serializer"
    )]
    Lane(String),
    #[error("`{0}`: only arrays of 32/64-bit scalars and 32-bit 2-4 lane vectors have an exact std140 serializer")]
    Element(String),
    #[error("`{ty}`: host element size {host_stride} does not hold {elem_size} bytes")]
    HostStride { ty: String, host_stride: u64, elem_size: u64 },
    #[error("`{0}`: std140 size overflows")]
    SizeOverflow(String),
    #[error("scalar constant wider than 64 bits")]
    WideScalar,
    #[error("constant size overflows")]
    ConstantSizeOverflow,
    #[error("constant members exceed their type's host size")]
    MembersExceedHostSize,
    #[error("host size overflows")]
    HostSizeOverflow,
    #[error("host bytes {got} differ from {len} x {stride}")]
    HostBytes { got: usize, len: u64, stride: u64 },
}

/// Why the constant-data block could not join the kernel's bindings.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    #[error("constant data does not fit 32 bits")]
    TooLarge,
    #[error("internal: the kernel ABI with constant data is not canonical: {0}")]
    NotCanonical(crate::abi::ShapeError),
}

/// The std140 layout of `ty` without narrow elements, or why it has no exact serializer here.
pub fn std140_array(t: &TypeTable, ty: TypeId) -> Result<Std140Array, Std140Error> {
    std140_array_for(t, ty, NarrowAccess::NONE)
}

/// The std140 layout of `ty` when the target reads the `narrow` widths from
/// uniform blocks, or why it has no exact serializer here.
pub fn std140_array_for(t: &TypeTable, ty: TypeId, narrow: NarrowAccess) -> Result<Std140Array, Std140Error> {
    let name = || xir::verify::type_name(t, ty);
    let Type::Array { elem, len } = t.get(ty) else {
        return Err(Std140Error::NotAnArray(name()));
    };
    let (elem, len) = (*elem, *len);
    // Bytes of one scalar lane, or why the scalar is not eligible.
    let lane = |s: TypeId, wide: bool| -> Result<u64, Std140Error> {
        let (bits, fp8) = match t.get(s) {
            Type::Int { bits, .. } => (*bits as u32, false),
            Type::Float(f) => (f.bits(), f.bits() == 8),
            _ => (0, false),
        };
        match bits {
            32 => Ok(4),
            64 if wide => Ok(8),
            16 if narrow.bits16 => Ok(2),
            8 if narrow.bits8 && !fp8 => Ok(1),
            16 => Err(Std140Error::NarrowNotEnabled {
                ty: name(),
                bits: 16,
                feature: "uniformAndStorageBuffer16BitAccess",
            }),
            8 if !fp8 => {
                Err(Std140Error::NarrowNotEnabled { ty: name(), bits: 8, feature: "uniformAndStorageBuffer8BitAccess" })
            }
            _ => Err(Std140Error::Lane(name())),
        }
    };
    let elem_size = match t.get(elem) {
        Type::Int { .. } | Type::Float(_) => lane(elem, true)?,
        Type::Vector { elem: s, lanes } if (2..=4).contains(lanes) => lane(*s, false)? * *lanes as u64,
        _ => return Err(Std140Error::Element(name())),
    };
    let (host_stride, host_align) = t.size_align(elem);
    if host_stride < elem_size || host_stride % host_align != 0 {
        return Err(Std140Error::HostStride { ty: name(), host_stride, elem_size });
    }
    let stride = elem_size.div_ceil(STD140_GRANULE) * STD140_GRANULE;
    let size = stride.checked_mul(len).ok_or_else(|| Std140Error::SizeOverflow(name()))?;
    Ok(Std140Array { len, host_stride, elem_size, stride, size })
}

/// The host bytes of a scalar, vector or array constant (little-endian).
fn host_bytes(m: &Module, c: Const, out: &mut Vec<u8>) -> Result<(), Std140Error> {
    let d = m.consts.get(c);
    let (size, _) = m.types.size_align(d.ty);
    let start = out.len();
    match &d.value {
        ConstValue::Scalar(bits) => {
            let n = size as usize;
            if n > 8 {
                return Err(Std140Error::WideScalar);
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
    let want = start.checked_add(size as usize).ok_or(Std140Error::ConstantSizeOverflow)?;
    if out.len() > want {
        return Err(Std140Error::MembersExceedHostSize);
    }
    out.resize(want, 0);
    Ok(())
}

/// Serialize an array constant to its exact std140 bytes (`layout.size` long).
pub fn serialize_std140(m: &Module, c: Const) -> Result<Vec<u8>, Std140Error> {
    serialize_std140_for(m, c, NarrowAccess { bits8: true, bits16: true })
}

/// [`serialize_std140`] with only the `narrow` widths eligible.
pub fn serialize_std140_for(m: &Module, c: Const, narrow: NarrowAccess) -> Result<Vec<u8>, Std140Error> {
    let layout = std140_array_for(&m.types, m.consts.get(c).ty, narrow)?;
    let mut host = Vec::new();
    host_bytes(m, c, &mut host)?;
    let host_len = layout.host_stride.checked_mul(layout.len).ok_or(Std140Error::HostSizeOverflow)?;
    if host.len() as u64 != host_len {
        return Err(Std140Error::HostBytes { got: host.len(), len: layout.len, stride: layout.host_stride });
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
    /// The set-0 binding of the buffer, once [`bind`] gave it one (`None` while nothing is placed).
    pub binding: Option<u32>,
}

impl ConstantUboPlan {
    /// The placement of constant `c`, when it lives in the buffer.
    pub fn placement(&self, c: Const) -> Option<(usize, &Placed)> {
        self.placed.iter().enumerate().find(|(_, p)| p.constant == c)
    }

    /// The recorded reason constant `c` stays inline, when it was a candidate.
    pub fn inline_reason(&self, c: Const) -> Option<&str> {
        self.inline.iter().find(|(k, _)| *k == c).map(|(_, r)| r.as_str())
    }
}

/// Plan the given candidate constants in order (first come, first placed),
/// within `limit` bytes. Constants under [`UBO_THRESHOLD`] host bytes and
/// non-arrays are not candidates and are skipped silently.
pub fn plan_constants(m: &Module, candidates: &[Const], limit: u64) -> ConstantUboPlan {
    plan_constants_for(m, candidates, limit, NarrowAccess::NONE)
}

/// [`plan_constants`] for a target that reads the `narrow` widths from uniform blocks.
pub fn plan_constants_for(m: &Module, candidates: &[Const], limit: u64, narrow: NarrowAccess) -> ConstantUboPlan {
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
        let layout = match std140_array_for(&m.types, ty, narrow) {
            Ok(l) => l,
            Err(e) => {
                plan.inline.push((c, e.to_string()));
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
        match serialize_std140_for(m, c, narrow) {
            Ok(bytes) => {
                plan.bytes.resize(offset as usize, 0);
                plan.bytes.extend_from_slice(&bytes);
                plan.placed.push(Placed { constant: c, offset, layout });
                end = new_end;
            }
            Err(e) => plan.inline.push((c, e.to_string())),
        }
    }
    plan
}

/// The array constants the reachable code of `order` uses as operands, in
/// first-use order (functions, then their closure blocks, then instructions),
/// without those some `phi` uses ([`phi_constants`]).
pub fn candidates(m: &Module, order: &[(FuncId, Vec<Block>)]) -> Vec<Const> {
    let phi = phi_constants(m, order);
    array_operands(m, order, |op| op != Opcode::Phi).into_iter().filter(|c| !phi.contains(c)).collect()
}

/// The array constants some reachable `phi` takes as an incoming value, in first-use order.
pub fn phi_constants(m: &Module, order: &[(FuncId, Vec<Block>)]) -> Vec<Const> {
    array_operands(m, order, |op| op == Opcode::Phi)
}

fn array_operands(m: &Module, order: &[(FuncId, Vec<Block>)], keep: impl Fn(Opcode) -> bool) -> Vec<Const> {
    let mut out = Vec::new();
    for (fid, blocks) in order {
        let f = m.func(*fid);
        for &b in blocks {
            for &i in f.block(b).insts() {
                let d = f.inst(i);
                if !keep(d.opcode) {
                    continue;
                }
                for v in &d.operands {
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

/// The kernel's plan: its candidates placed within the portable range, with
/// narrow elements only where `device` enables the Uniform-storage feature;
/// large array constants some `phi` takes stay inline with that reason.
pub fn plan_kernel(m: &Module, order: &[(FuncId, Vec<Block>)], device: Option<&FeatureSet>) -> ConstantUboPlan {
    let mut plan = plan_constants_for(m, &candidates(m, order), PORTABLE_UBO_RANGE, NarrowAccess::of_device(device));
    for c in phi_constants(m, order) {
        let ty = m.consts.get(c).ty;
        if m.types.size_align(ty).0 >= UBO_THRESHOLD && plan.inline_reason(c).is_none() {
            plan.inline.push((
                c,
                format!(
                    "`{}` is a phi incoming value: it stays an inline constant",
                    xir::verify::type_name(&m.types, ty)
                ),
            ));
        }
    }
    plan
}

/// Give the buffer its descriptor: the next dense set-0 binding after the
/// argument descriptors, as a `UniformBuffer` property with role
/// `ConstantData` placed before the heaps, then re-check the canonical
/// shape. Nothing happens when nothing is placed.
pub fn bind(plan: &mut ConstantUboPlan, bindings: &mut BindingPlan) -> Result<(), BindError> {
    if plan.placed.is_empty() {
        return Ok(());
    }
    let props = &mut bindings.abi.properties;
    let binding = props.iter().filter(|p| p.kind.is_descriptor() && p.set == LOCAL_SET).count() as u32;
    let at = props.iter().position(|p| p.role == Role::Heap).unwrap_or(props.len());
    let size = u32::try_from(plan.bytes.len()).map_err(|_| BindError::TooLarge)?;
    props.insert(
        at,
        Property {
            kind: PropertyKind::UniformBuffer,
            role: Role::ConstantData,
            arg_index: None,
            set: LOCAL_SET,
            binding,
            storage: BufferStorage::Block { size },
        },
    );
    bindings.abi.check_shape().map_err(BindError::NotCanonical)?;
    plan.binding = Some(binding);
    Ok(())
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
        assert!(p.inline[1].1.contains("uniformAndStorageBuffer16BitAccess"), "{}", p.inline[1].1);
        assert_eq!(&p.bytes[9600..9604], &1u32.to_le_bytes());
    }

    #[test]
    fn narrow_elements_are_gated_by_their_uniform_storage_feature() {
        let mut m = Module::default();
        let halves = array_const(&mut m, Type::Float(FloatFormat::F16), None, 200, |i| 0x3c00 + i);
        let bytes = array_const(&mut m, Type::Int { bits: 8, signed: false }, None, 300, |i| i & 0xff);
        let h3 = array_const(&mut m, Type::Int { bits: 16, signed: true }, Some(3), 40, |k| k);
        let fp8 = array_const(&mut m, Type::Float(FloatFormat::E4M3), None, 300, |i| i & 0x7f);
        let sixteen = NarrowAccess { bits8: false, bits16: true };
        let eight = NarrowAccess { bits8: true, bits16: false };
        // Each width needs its own feature; FP8 never has an exact serializer here.
        let p = plan_constants_for(&m, &[halves, bytes, h3, fp8], PORTABLE_UBO_RANGE, sixteen);
        let placed: Vec<Const> = p.placed.iter().map(|x| x.constant).collect();
        assert_eq!(placed, vec![halves, h3]);
        assert!(p.inline_reason(bytes).unwrap().contains("uniformAndStorageBuffer8BitAccess"));
        assert!(p.inline_reason(fp8).unwrap().contains("exact std140 serializer"));
        let p = plan_constants_for(&m, &[halves, bytes], PORTABLE_UBO_RANGE, eight);
        assert_eq!(p.placed.iter().map(|x| x.constant).collect::<Vec<_>>(), vec![bytes]);
        assert!(p.inline_reason(halves).unwrap().contains("uniformAndStorageBuffer16BitAccess"));
        // Layouts: f16 element 2 bytes at stride 16; vec3<i16> host 8 bytes, element 6.
        let l = std140_array_for(&m.types, m.consts.get(halves).ty, sixteen).unwrap();
        assert_eq!((l.host_stride, l.elem_size, l.stride, l.size), (2, 2, 16, 3200));
        let l = std140_array_for(&m.types, m.consts.get(h3).ty, sixteen).unwrap();
        assert_eq!((l.host_stride, l.elem_size, l.stride), (8, 6, 16));
        let half = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let b = serialize_std140_for(&m, h3, sixteen).unwrap();
        assert_eq!((half(&b, 32), half(&b, 34), half(&b, 36), half(&b, 38)), (16, 17, 18, 0));
        let b = serialize_std140_for(&m, halves, sixteen).unwrap();
        assert_eq!((half(&b, 16 * 5), half(&b, 16 * 5 + 2)), (0x3c05, 0));
        assert_eq!(NarrowAccess::of_device(None), NarrowAccess::NONE);
        assert_eq!(NarrowAccess::of_device(Some(&FeatureSet::all())), NarrowAccess { bits8: true, bits16: true });
    }
}
