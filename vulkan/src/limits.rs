//! The device limits a dispatch is checked against before any Vulkan object
//! is created: a module or a resource over one of them is undefined
//! behaviour (the validation layer's `VUID-RuntimeSpirv-x-06429`, `-06432`,
//! `-06530`, ...) or a driver crash, so each is refused here, by its Vulkan
//! name.
//!
//! - From the module's words ([`Footprint`]): the `LocalSize` against
//!   `maxComputeWorkGroupSize` and `maxComputeWorkGroupInvocations`; the
//!   `Workgroup` variables against `maxComputeSharedMemorySize`; the
//!   `Function` and `Private` variables against the runner's own
//!   [`MAX_PRIVATE_BYTES`] (Vulkan has no such limit; drivers allocate it
//!   per invocation as scratch memory, lavapipe crashed on 16 GiB).
//! - From the dispatch: the group counts against `maxComputeWorkGroupCount`,
//!   the push-constant block against `maxPushConstantsSize`, storage images
//!   against `maxImageDimension2D` / `maxImageDimension3D`, storage buffers
//!   against `maxStorageBufferRange`. Descriptor counts are checked by
//!   `bindless.rs`, the constant data by `dispatch.rs`, heap textures by
//!   `texture_heap.rs`.
//!
//! Sizes follow the std430 rules (a `vec3` aligned as a `vec4`, array and
//! matrix strides rounded up to the element's alignment, a `bool` one 32-bit
//! word), padding included; the arithmetic saturates, so no size wraps into
//! range.

use ash::vk;
use rspirv::dr::{Module, Operand};
use rspirv::spirv::{ExecutionMode, ExecutionModel, Op, StorageClass, Word};
use rustc_hash::FxHashMap;

use super::dispatch::Resource;
use super::RunError;

/// The runner's per-invocation limit on `Function` and `Private` memory.
/// Vulkan sets none, so it is the largest size measured to build on every
/// device this project runs on: lavapipe (Mesa 25) runs 64 KiB and crashed
/// on 512 KiB; the H200's driver (580.159.04) builds a dynamically indexed
/// 8 KiB array and fails `vkCreateComputePipelines` from 16 KiB on.
pub const MAX_PRIVATE_BYTES: u64 = 8 * 1024;

/// The limits a dispatch is checked against (public so a test can lower one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchLimits {
    pub max_compute_work_group_size: [u32; 3],
    pub max_compute_work_group_invocations: u32,
    pub max_compute_work_group_count: [u32; 3],
    pub max_compute_shared_memory_size: u32,
    pub max_push_constants_size: u32,
    pub max_image_dimension_2d: u32,
    pub max_image_dimension_3d: u32,
    pub max_storage_buffer_range: u32,
    /// Not a Vulkan limit: [`MAX_PRIVATE_BYTES`] unless a test lowers it.
    pub max_private_bytes: u64,
}

impl DispatchLimits {
    /// The limits of a physical device.
    pub(crate) fn from_vk(l: &vk::PhysicalDeviceLimits) -> DispatchLimits {
        DispatchLimits {
            max_compute_work_group_size: l.max_compute_work_group_size,
            max_compute_work_group_invocations: l.max_compute_work_group_invocations,
            max_compute_work_group_count: l.max_compute_work_group_count,
            max_compute_shared_memory_size: l.max_compute_shared_memory_size,
            max_push_constants_size: l.max_push_constants_size,
            max_image_dimension_2d: l.max_image_dimension2_d,
            max_image_dimension_3d: l.max_image_dimension3_d,
            max_storage_buffer_range: l.max_storage_buffer_range,
            max_private_bytes: MAX_PRIVATE_BYTES,
        }
    }
}

/// What a module asks of the device per work group and per invocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// The `main` entry point's `LocalSize`.
    pub local_size: [u32; 3],
    /// Bytes of `Workgroup` variables, padding included.
    pub shared_bytes: u64,
    /// Bytes of `Function` variables (every function) and `Private` variables.
    pub private_bytes: u64,
}

fn limit(msg: String) -> RunError {
    RunError::Limit(msg)
}

/// Size and alignment of a sized type (`None` for an opaque one: images,
/// samplers, ray queries, acceleration structures hold no invocation memory).
type Layout = Option<(u64, u64)>;

fn round_up(n: u64, align: u64) -> u64 {
    n.div_ceil(align.max(1)).saturating_mul(align.max(1))
}

fn id(o: Option<&Operand>) -> Option<Word> {
    match o {
        Some(Operand::IdRef(w)) => Some(*w),
        _ => None,
    }
}

fn literal(o: Option<&Operand>) -> Option<u64> {
    match o {
        Some(Operand::LiteralBit32(w)) => Some(u64::from(*w)),
        Some(Operand::LiteralBit64(w)) => Some(*w),
        _ => None,
    }
}

/// Read the footprint of `words` (a module that failed to load is refused).
pub fn footprint(words: &[u32]) -> Result<Footprint, RunError> {
    let (m, consts, shared_bytes, private_bytes) = scan(words)?;
    Ok(Footprint { local_size: local_size(&m, &consts)?, shared_bytes, private_bytes })
}

/// The footprint of a module whose workgroup size was read elsewhere: a
/// foreign module (`reflect.rs`), whose entry point has any name and whose
/// size may come from `LocalSizeId` or specialization constants.
pub(crate) fn footprint_with_local_size(words: &[u32], local_size: [u32; 3]) -> Result<Footprint, RunError> {
    let (_, _, shared_bytes, private_bytes) = scan(words)?;
    Ok(Footprint { local_size, shared_bytes, private_bytes })
}

/// The loaded module, its integer constants, and its shared and private bytes.
fn scan(words: &[u32]) -> Result<(Module, FxHashMap<Word, u64>, u64, u64), RunError> {
    let m = rspirv::dr::load_words(words).map_err(|e| RunError::Abi(format!("the SPIR-V does not load: {e}")))?;
    let bad = |what: String| RunError::Abi(format!("the SPIR-V module: {what}"));
    let mut consts: FxHashMap<Word, u64> = FxHashMap::default();
    let mut layouts: FxHashMap<Word, Layout> = FxHashMap::default();
    let mut pointees: FxHashMap<Word, Word> = FxHashMap::default();
    let mut shared = 0u64;
    let mut private = 0u64;
    let sized = |layouts: &FxHashMap<Word, Layout>, t: Option<Word>| -> Result<Layout, RunError> {
        t.and_then(|t| layouts.get(&t).copied()).ok_or_else(|| bad(format!("type {t:?} is not declared before use")))
    };
    for inst in &m.types_global_values {
        let (ops, rid) = (&inst.operands, inst.result_id);
        let layout = match inst.class.opcode {
            Op::Constant => {
                if let (Some(r), Some(v)) = (rid, literal(ops.first())) {
                    consts.insert(r, v);
                }
                continue;
            }
            Op::TypeBool => Some((4, 4)),
            Op::TypeInt | Op::TypeFloat => {
                let bytes = literal(ops.first()).ok_or_else(|| bad("a numeric type without a width".into()))? / 8;
                Some((bytes, bytes))
            }
            Op::TypeVector | Op::TypeMatrix => {
                let n = literal(ops.get(1)).ok_or_else(|| bad("a vector or matrix without a count".into()))?;
                sized(&layouts, id(ops.first()))?.map(|(s, a)| {
                    if inst.class.opcode == Op::TypeVector {
                        (s.saturating_mul(n), a.saturating_mul(if n == 3 { 4 } else { n }))
                    } else {
                        (round_up(s, a).saturating_mul(n), a)
                    }
                })
            }
            Op::TypeArray => {
                let len = id(ops.get(1))
                    .and_then(|c| consts.get(&c).copied())
                    .ok_or_else(|| bad("an array whose length is not a constant".into()))?;
                sized(&layouts, id(ops.first()))?.map(|(s, a)| (round_up(s, a).saturating_mul(len), a))
            }
            Op::TypeStruct => {
                let (mut size, mut align) = (0u64, 1u64);
                for member in ops {
                    if let Some((s, a)) = sized(&layouts, id(Some(member)))? {
                        size = round_up(size, a).saturating_add(s);
                        align = align.max(a);
                    }
                }
                Some((round_up(size, align), align))
            }
            Op::TypePointer => {
                if let (Some(r), Some(p)) = (rid, id(ops.get(1))) {
                    pointees.insert(r, p);
                }
                Some((8, 8))
            }
            Op::Variable => {
                let class = match ops.first() {
                    Some(Operand::StorageClass(c)) => *c,
                    _ => return Err(bad("a variable without a storage class".into())),
                };
                let pointee = inst.result_type.and_then(|t| pointees.get(&t).copied());
                let Some((s, a)) = sized(&layouts, pointee)? else { continue };
                match class {
                    StorageClass::Workgroup => shared = round_up(shared, a).saturating_add(s),
                    StorageClass::Private => private = round_up(private, a).saturating_add(s),
                    _ => {}
                }
                continue;
            }
            _ => None,
        };
        if let Some(r) = rid {
            layouts.insert(r, layout);
        }
    }
    for inst in m.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| &b.instructions)) {
        if inst.class.opcode == Op::Variable {
            let pointee = inst.result_type.and_then(|t| pointees.get(&t).copied());
            if let Some((s, a)) = sized(&layouts, pointee)? {
                private = round_up(private, a).saturating_add(s);
            }
        }
    }
    Ok((m, consts, shared, private))
}

/// The `LocalSize` (or `LocalSizeId`) of the `main` GLCompute entry point.
fn local_size(m: &Module, consts: &FxHashMap<Word, u64>) -> Result<[u32; 3], RunError> {
    let entry = m.entry_points.iter().find_map(|e| match e.operands.as_slice() {
        [Operand::ExecutionModel(ExecutionModel::GLCompute), Operand::IdRef(f), Operand::LiteralString(n), ..]
            if n == xir_spirv::abi::ENTRY_POINT_NAME =>
        {
            Some(*f)
        }
        _ => None,
    });
    let Some(entry) = entry else {
        return Err(RunError::Abi("the SPIR-V has no GLCompute entry point `main`".into()));
    };
    for e in &m.execution_modes {
        let ops = &e.operands;
        if id(ops.first()) != Some(entry) || ops.len() != 5 {
            continue;
        }
        let dims = |k: usize| match (&ops[1], &ops[k]) {
            (Operand::ExecutionMode(ExecutionMode::LocalSize), Operand::LiteralBit32(x)) => Some(u64::from(*x)),
            (Operand::ExecutionMode(ExecutionMode::LocalSizeId), Operand::IdRef(c)) => consts.get(c).copied(),
            _ => None,
        };
        if let (Some(x), Some(y), Some(z)) = (dims(2), dims(3), dims(4)) {
            let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
            return Ok([clamp(x), clamp(y), clamp(z)]);
        }
    }
    Err(RunError::Abi("the SPIR-V entry point `main` has no LocalSize".into()))
}

/// Check a module's footprint, its push-constant block and the group counts.
pub fn check_module(
    limits: &DispatchLimits,
    fp: &Footprint,
    push_constant_size: u32,
    groups: [u32; 3],
) -> Result<(), RunError> {
    for (k, axis) in ["x", "y", "z"].iter().enumerate() {
        let (n, max) = (fp.local_size[k], limits.max_compute_work_group_size[k]);
        if n > max {
            return Err(limit(format!(
                "block size {axis} = {n} exceeds the device's maxComputeWorkGroupSize[{k}] of {max}"
            )));
        }
    }
    let invocations: u64 = fp.local_size.iter().map(|&n| u64::from(n)).product();
    if invocations > u64::from(limits.max_compute_work_group_invocations) {
        return Err(limit(format!(
            "a block of {invocations} threads ({:?}) exceeds the device's maxComputeWorkGroupInvocations of {}",
            fp.local_size, limits.max_compute_work_group_invocations
        )));
    }
    if fp.shared_bytes > u64::from(limits.max_compute_shared_memory_size) {
        return Err(limit(format!(
            "{} bytes of shared memory exceed the device's maxComputeSharedMemorySize of {}",
            fp.shared_bytes, limits.max_compute_shared_memory_size
        )));
    }
    if fp.private_bytes > limits.max_private_bytes {
        return Err(limit(format!(
            "{} bytes of function-local and private memory per thread exceed the runner's limit of {} \
             (vulkan::MAX_PRIVATE_BYTES; Vulkan sets none)",
            fp.private_bytes, limits.max_private_bytes
        )));
    }
    if push_constant_size > limits.max_push_constants_size {
        return Err(limit(format!(
            "a {push_constant_size}-byte push-constant block exceeds the device's maxPushConstantsSize of {}",
            limits.max_push_constants_size
        )));
    }
    for (k, axis) in ["x", "y", "z"].iter().enumerate() {
        let (n, max) = (groups[k], limits.max_compute_work_group_count[k]);
        if n > max {
            return Err(limit(format!(
                "{n} blocks along {axis} exceed the device's maxComputeWorkGroupCount[{k}] of {max}"
            )));
        }
    }
    Ok(())
}

/// Check the storage images' dimensions and the storage buffers' sizes;
/// `types` holds each resource's descriptor type.
pub fn check_resources(
    limits: &DispatchLimits,
    resources: &[Resource],
    types: &[vk::DescriptorType],
) -> Result<(), RunError> {
    let buffer = |n: usize, what: String| {
        if n as u64 > u64::from(limits.max_storage_buffer_range) {
            return Err(limit(format!(
                "{what} of {n} bytes exceeds the device's maxStorageBufferRange of {}",
                limits.max_storage_buffer_range
            )));
        }
        Ok(())
    };
    for (k, (r, ty)) in resources.iter().zip(types).enumerate() {
        match r {
            Resource::Buffer(b) if *ty == vk::DescriptorType::STORAGE_BUFFER => {
                buffer(b.len(), format!("descriptor {k}: a storage buffer"))?
            }
            Resource::Heap(entries) => {
                for (j, b) in entries.iter().enumerate() {
                    buffer(b.len(), format!("descriptor {k}: buffer-heap entry {j}"))?;
                }
            }
            Resource::Image { dim, size, .. } => {
                let (name, max) = match dim {
                    3 => ("maxImageDimension3D", limits.max_image_dimension_3d),
                    _ => ("maxImageDimension2D", limits.max_image_dimension_2d),
                };
                if size.iter().any(|&s| s > max) {
                    return Err(limit(format!(
                        "descriptor {k}: a {dim}D texture of size {size:?} exceeds the device's {name} of {max}"
                    )));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> DispatchLimits {
        DispatchLimits {
            max_compute_work_group_size: [1024, 512, 64],
            max_compute_work_group_invocations: 1024,
            max_compute_work_group_count: [65535, 100, 7],
            max_compute_shared_memory_size: 32768,
            max_push_constants_size: 128,
            max_image_dimension_2d: 16384,
            max_image_dimension_3d: 2048,
            max_storage_buffer_range: 1000,
            max_private_bytes: 4096,
        }
    }

    fn fp(local_size: [u32; 3], shared_bytes: u64, private_bytes: u64) -> Footprint {
        Footprint { local_size, shared_bytes, private_bytes }
    }

    fn err(r: Result<(), RunError>) -> String {
        match r {
            Err(RunError::Limit(m)) => m,
            other => panic!("expected a limit refusal, got {other:?}"),
        }
    }

    #[test]
    fn each_module_limit_is_exact_and_named() {
        let l = limits();
        let at = fp([1024, 1, 1], 32768, 4096);
        assert_eq!(check_module(&l, &at, 128, [65535, 100, 7]), Ok(()));
        let over = [
            (fp([1025, 1, 1], 0, 0), 12, [1, 1, 1], "maxComputeWorkGroupSize[0] of 1024"),
            (fp([1, 513, 1], 0, 0), 12, [1, 1, 1], "maxComputeWorkGroupSize[1] of 512"),
            (fp([1, 1, 65], 0, 0), 12, [1, 1, 1], "maxComputeWorkGroupSize[2] of 64"),
            (fp([1, 512, 64], 0, 0), 12, [1, 1, 1], "a block of 32768 threads"),
            (fp([205, 5, 1], 0, 0), 12, [1, 1, 1], "maxComputeWorkGroupInvocations of 1024"),
            (
                fp([1, 1, 1], 32769, 0),
                12,
                [1, 1, 1],
                "32769 bytes of shared memory exceed the device's maxComputeSharedMemorySize",
            ),
            (fp([1, 1, 1], 0, 4097), 12, [1, 1, 1], "4097 bytes of function-local and private memory"),
            (fp([1, 1, 1], 0, 0), 132, [1, 1, 1], "maxPushConstantsSize of 128"),
            (fp([1, 1, 1], 0, 0), 12, [65536, 1, 1], "maxComputeWorkGroupCount[0] of 65535"),
            (fp([1, 1, 1], 0, 0), 12, [1, 1, 8], "maxComputeWorkGroupCount[2] of 7"),
        ];
        for (f, push, groups, want) in over {
            let e = err(check_module(&l, &f, push, groups));
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn images_and_storage_buffers_are_checked_by_name() {
        let l = limits();
        let image = |dim: u32, size: [u32; 3]| Resource::Image {
            dim,
            size,
            texel: xir_spirv::abi::TexelKind::F32,
            data: Vec::new(),
        };
        let (sb, img) = (vk::DescriptorType::STORAGE_BUFFER, vk::DescriptorType::STORAGE_IMAGE);
        let ok = [image(3, [1, 2048, 1]), image(2, [16384, 1, 1]), Resource::Buffer(vec![0; 1000])];
        assert_eq!(check_resources(&l, &ok, &[img, img, sb]), Ok(()));
        let e = err(check_resources(&l, &[image(3, [1, 2049, 1])], &[img]));
        assert!(e.contains("size [1, 2049, 1] exceeds the device's maxImageDimension3D of 2048"), "{e}");
        let e = err(check_resources(&l, &[image(2, [16385, 1, 1])], &[img]));
        assert!(e.contains("maxImageDimension2D of 16384"), "{e}");
        let e = err(check_resources(&l, &[Resource::Buffer(vec![0; 1001])], &[sb]));
        assert!(e.contains("1001 bytes exceeds the device's maxStorageBufferRange of 1000"), "{e}");
        let e = err(check_resources(&l, &[Resource::Heap(vec![vec![0; 4], vec![0; 1001]])], &[sb]));
        assert!(e.contains("buffer-heap entry 1"), "{e}");
        // A uniform buffer is not a storage buffer (its own limit is checked by the dispatch).
        let ubo = vk::DescriptorType::UNIFORM_BUFFER;
        assert_eq!(check_resources(&l, &[Resource::Buffer(vec![0; 1001])], &[ubo]), Ok(()));
    }
}
