//! Running a foreign SPIR-V compute module: one this backend did not write
//! (naga's SPIR-V of a WGSL or GLSL shader, glslang's, ...), with the same
//! inputs JSON the interpreter takes and the same `Outputs` it returns, so
//! `Outputs::first_mismatch` / `compare_bounded` compare the three runs of a
//! differential test (interpreter, our SPIR-V, the foreign module) directly.
//!
//! There is no [`xir_spirv::KernelAbi`]: the module is described by
//! [`xir_spirv::reflect::reflect`], and each descriptor variable the entry point
//! uses is one input keyed by its `OpName` (docs/inputs-format.md, "Foreign
//! SPIR-V modules"):
//!
//! - a storage or uniform buffer is its block's value in the element
//!   encoding, laid out by the block's own `Offset` / `ArrayStride` /
//!   `MatrixStride` decorations (`foreign/codec.rs`); a block with one member
//!   takes that member's value (and a struct of one member inside it its
//!   member's, as deep as they nest: `codec::parts`), so naga's wrapper of
//!   `var<storage> x: array<T>` takes the element list of T, as an XIR
//!   `buffer<T>` does;
//! - a storage image or an image read without a sampler (2D / 3D, 32-bit
//!   RGBA; WGSL's `texture_2d<f32>` read by `textureLoad`, a sampled-image
//!   descriptor) is a texture as the interpreter's `texture2d<T>` /
//!   `texture3d<T>` take it;
//! - a push-constant block is its block's value too, pushed before the
//!   dispatch (`Reflection::push_constants`).
//!
//! Every variable the entry point uses must be given and every key must name
//! a descriptor variable (a variable the entry point does not use may be
//! given: it is not bound, and comes back as given). Every one comes back in
//! `buffers` (read-only ones too, as the interpreter reports input-only
//! buffers).
//!
//! The dispatch is a thread count, as for an XIR kernel; a foreign module
//! has no bound check of the dispatch size of its own, so a thread count
//! that is not a multiple of the workgroup size in every dimension is
//! refused rather than rounded up (the extra threads would run). Storage
//! buffers are bound with exactly the bytes of their input as the descriptor
//! range: `arrayLength` (and naga's `Restrict` clamping, which uses it) sees
//! the length the input gave.
//!
//! Fail closed, before any Vulkan object exists: the module must pass
//! SPIRV-Tools' validation for Vulkan 1.2 (`reflect` checks it first); every
//! `OpCapability` must be one the device enabled (through
//! [`xir_spirv::FeatureSet`], subgroup operations through the device's subgroup
//! properties) and every `OpExtension` one a Vulkan 1.2 device has without
//! enabling anything; a module that imports debug printf is refused (no
//! printer records to format its lines); the device limits are checked as for
//! our own kernels (`limits.rs`).

mod codec;
mod members;

use ash::vk;
use rspirv::spirv::Capability;
use serde_json::Value as Json;
use xir::interp::{Inputs, Outputs};

use super::dispatch::{compute_pipeline, host_buffer, read_back, record_and_submit, vk_err, Objects, Resource};
use super::image::{self, ImageObjects};
use super::{Device, GpuTiming, RunError};
use xir_spirv::reflect::{self, Reflection, Scalar, Variable, VariableKind};

/// Run the compute entry point `entry` (or the only one) of `words` on a
/// device opened for the run (no debug printf), with interpreter-style
/// inputs; `dispatch` (threads) overrides the inputs' `dispatch`, and without
/// either one workgroup runs.
pub fn run_foreign(
    words: &[u32],
    entry: Option<&str>,
    inputs: &Inputs,
    dispatch: Option<[u32; 3]>,
) -> Result<Outputs, RunError> {
    let device = Device::new()?;
    run_foreign_on(&device, words, entry, inputs, dispatch).map(|(o, _)| o)
}

/// [`run_foreign`] on a device the caller holds, with the dispatch's GPU time.
pub fn run_foreign_on(
    device: &Device,
    words: &[u32],
    entry: Option<&str>,
    inputs: &Inputs,
    dispatch: Option<[u32; 3]>,
) -> Result<(Outputs, GpuTiming), RunError> {
    let foreign = |e: reflect::ReflectError| RunError::Foreign(e.0);
    let r = reflect::reflect(words, entry).map_err(foreign)?;
    // The module as it runs (validated; `reflect.rs` may have removed naga's workgroup layouts).
    let words = &r.words[..];
    if super::printf::imports_debug_printf(words) {
        return Err(RunError::Foreign(
            "the module imports NonSemantic.DebugPrintf: a foreign module's print cannot be captured and formatted \
             (no printer records)"
                .into(),
        ));
    }
    check_device_support(device, words)?;
    let (inputs, joined) = members::join(&r, inputs)?;
    let inputs = &*inputs;
    check_input_keys(&r, inputs)?;
    let threads = dispatch.or(inputs.dispatch).unwrap_or(r.workgroup_size);
    let groups = group_counts(threads, r.workgroup_size)?;

    let codec = codec::Codec::new();
    let mut bound = Vec::with_capacity(r.variables.len());
    for v in &r.variables {
        let json = &inputs.args[&v.name];
        bound.push(encode(device, &codec, v, json)?);
    }
    let push = match &r.push_constants {
        Some(p) => {
            let json = &inputs.args[&p.name];
            let b = codec
                .block_to_bytes(&p.layout, json)
                .map_err(|e| RunError::Abi(format!("`{}` (push constants): {e}", p.name)))?;
            b.bytes
        }
        None => Vec::new(),
    };
    let fp = super::limits::footprint_with_local_size(words, r.workgroup_size)?;
    super::limits::check_module(&device.limits, &fp, push_size(&push), groups)?;
    let resources: Vec<Resource> = bound.iter().map(|b| b.resource.clone()).collect();
    let types: Vec<vk::DescriptorType> = bound.iter().map(|b| b.ty).collect();
    super::limits::check_resources(&device.limits, &resources, &types)?;
    let sets = bound.iter().map(|b| b.set + 1).max().unwrap_or(0);
    let counts: Vec<_> = types.iter().map(|&t| (t, 1, false)).collect();
    super::bindless::check_dispatch_limits(device, sets, &counts)?;

    // SAFETY: `device` is live; every object is created and destroyed in `dispatch_bound`.
    let (out, timing) = unsafe { dispatch_bound(device, words, &r.entry_point, &bound, &push, groups)? };

    let mut outputs = Outputs::default();
    for ((v, b), r) in r.variables.iter().zip(&bound).zip(out) {
        let json = decode(&codec, v, b, r).map_err(|e| RunError::Abi(format!("reading `{}` back: {e}", v.name)))?;
        outputs.buffers.insert(v.name.clone(), json);
    }
    // The push constants come back as given (normalized), as read-only buffers do.
    if let Some(p) = &r.push_constants {
        let back =
            codec.block_from_bytes(&p.layout, &push, None).map_err(|e| RunError::Abi(format!("`{}`: {e}", p.name)))?;
        outputs.buffers.insert(p.name.clone(), back);
    }
    // Unused variables that were given: not bound, back as given (normalized through the codec).
    for v in &r.unused {
        if let Some(json) = inputs.args.get(&v.name) {
            let b = encode(device, &codec, v, json)?;
            let r = b.resource.clone();
            let back = decode(&codec, v, &b, r).map_err(|e| RunError::Abi(format!("`{}`: {e}", v.name)))?;
            outputs.buffers.insert(v.name.clone(), back);
        }
    }
    members::split(&mut outputs, &joined)?;
    Ok((outputs, timing))
}

/// The push-constant range for a block's bytes: Vulkan counts it in whole words.
fn push_size(push: &[u8]) -> u32 {
    (push.len() as u32).next_multiple_of(4)
}

/// One bound descriptor: where, what, and how many bytes the descriptor covers.
struct Bound {
    set: u32,
    binding: u32,
    ty: vk::DescriptorType,
    resource: Resource,
    /// The descriptor's range (buffers): exactly the input's bytes.
    range: u64,
    runtime_len: Option<u64>,
}

fn encode(device: &Device, codec: &codec::Codec, v: &Variable, json: &Json) -> Result<Bound, RunError> {
    let bad = |e: String| RunError::Abi(format!("`{}` ({}): {e}", v.name, v.kind.descriptor_name()));
    let (ty, resource, range, runtime_len) = match &v.kind {
        VariableKind::StorageBuffer(layout) | VariableKind::UniformBuffer(layout) => {
            let single;
            let json = if is_single_value_buffer(&v.kind) {
                single = members::single_element(&v.name, json.clone())?;
                &single
            } else {
                json
            };
            let b = codec.block_to_bytes(layout, json).map_err(|e| bad(e.to_string()))?;
            if b.bytes.is_empty() {
                return Err(bad(
                    "an empty buffer cannot be bound (a Vulkan descriptor covers at least one byte)".into()
                ));
            }
            let uniform = matches!(v.kind, VariableKind::UniformBuffer(_));
            if uniform && b.bytes.len() as u64 > u64::from(device.max_uniform_buffer_range) {
                return Err(RunError::Limit(format!(
                    "`{}`: a {}-byte uniform block exceeds the device's maxUniformBufferRange of {}",
                    v.name,
                    b.bytes.len(),
                    device.max_uniform_buffer_range
                )));
            }
            let ty = if uniform { vk::DescriptorType::UNIFORM_BUFFER } else { vk::DescriptorType::STORAGE_BUFFER };
            let range = b.bytes.len() as u64;
            (ty, Resource::Buffer(b.bytes), range, b.runtime_len)
        }
        VariableKind::StorageImage(img) | VariableKind::SampledImage(img) => {
            let (m, elem) = codec.texel_type(texel_scalar(img.texel));
            let (size, data) = super::typed::texture_from_json(m, elem, img.dim, json).map_err(bad)?;
            let r = Resource::Image { dim: img.dim, size, texel: img.texel, data };
            let ty = match v.kind {
                VariableKind::SampledImage(_) => vk::DescriptorType::SAMPLED_IMAGE,
                _ => vk::DescriptorType::STORAGE_IMAGE,
            };
            (ty, r, 0, None)
        }
    };
    Ok(Bound { set: v.set, binding: v.binding, ty, resource, range, runtime_len })
}

/// A storage buffer holding one value that is not an array (`var<storage>
/// n: atomic<u32>`, or a struct's one such member): its input and output
/// are a one-element list, as the front end makes it an XIR buffer of one
/// element.
fn is_single_value_buffer(kind: &VariableKind) -> bool {
    let VariableKind::StorageBuffer(l) = kind else { return false };
    matches!(codec::parts(l)[..], [(ty, _)] if !matches!(ty, xir_spirv::reflect::DataType::Array { .. }))
}

fn decode(codec: &codec::Codec, v: &Variable, b: &Bound, r: Resource) -> Result<Json, String> {
    match (&v.kind, r) {
        (VariableKind::StorageBuffer(layout) | VariableKind::UniformBuffer(layout), Resource::Buffer(bytes)) => {
            let j = codec.block_from_bytes(layout, &bytes, b.runtime_len).map_err(|e| e.to_string())?;
            Ok(if is_single_value_buffer(&v.kind) { Json::Array(vec![j]) } else { j })
        }
        (VariableKind::StorageImage(img) | VariableKind::SampledImage(img), Resource::Image { size, data, .. }) => {
            let (m, elem) = codec.texel_type(texel_scalar(img.texel));
            super::typed::texture_to_json(m, elem, img.dim, size, &data)
        }
        _ => Err("a different kind of resource came back".into()),
    }
}

fn texel_scalar(t: xir_spirv::abi::TexelKind) -> Scalar {
    match t {
        xir_spirv::abi::TexelKind::F32 => Scalar::Float { bits: 32 },
        xir_spirv::abi::TexelKind::I32 => Scalar::Int { bits: 32, signed: true },
        xir_spirv::abi::TexelKind::U32 => Scalar::Int { bits: 32, signed: false },
    }
}

/// Every key names a descriptor variable; every variable the entry point uses is given.
fn check_input_keys(r: &Reflection, inputs: &Inputs) -> Result<(), RunError> {
    let names = || {
        let all: Vec<String> = r.variables.iter().map(|v| format!("`{}`", v.name)).collect();
        if all.is_empty() {
            "it uses none".to_string()
        } else {
            format!("it uses {}", all.join(", "))
        }
    };
    let push = r.push_constants.as_ref().map(|p| p.name.as_str());
    for key in inputs.args.keys() {
        if r.variable(key).is_none() && push != Some(key.as_str()) {
            return Err(RunError::Abi(format!(
                "input `{key}` names no descriptor variable of entry point `{}` ({})",
                r.entry_point,
                names()
            )));
        }
    }
    if let Some(p) = push.filter(|p| !inputs.args.contains_key(*p)) {
        return Err(RunError::Abi(format!("no input for `{p}` (push constants)")));
    }
    for v in &r.variables {
        if !inputs.args.contains_key(&v.name) {
            return Err(RunError::Abi(format!(
                "no input for `{}` ({}, set {} binding {})",
                v.name,
                v.kind.descriptor_name(),
                v.set,
                v.binding
            )));
        }
    }
    Ok(())
}

/// Workgroups for `threads`, which must be a multiple of the workgroup size in every dimension.
fn group_counts(threads: [u32; 3], workgroup: [u32; 3]) -> Result<[u32; 3], RunError> {
    for (k, axis) in ["x", "y", "z"].iter().enumerate() {
        if !threads[k].is_multiple_of(workgroup[k]) {
            return Err(RunError::Abi(format!(
                "dispatch {threads:?} is not a multiple of the workgroup size {workgroup:?}: {} threads along {axis} \
                 for workgroups of {} (a foreign module has no bound check of its own, so the runner does not round \
                 up)",
                threads[k], workgroup[k]
            )));
        }
    }
    Ok([0, 1, 2].map(|k| threads[k] / workgroup[k]))
}

/// SPIR-V extensions a Vulkan 1.2 device accepts without enabling a device
/// extension (promoted to core in 1.1 or 1.2); the features they need are
/// checked through the capabilities.
const CORE_EXTENSIONS: [&str; 8] = [
    "SPV_KHR_storage_buffer_storage_class",
    "SPV_KHR_16bit_storage",
    "SPV_KHR_8bit_storage",
    "SPV_KHR_variable_pointers",
    "SPV_KHR_shader_draw_parameters",
    "SPV_KHR_float_controls",
    "SPV_KHR_vulkan_memory_model",
    "SPV_EXT_descriptor_indexing",
];

/// Every capability and extension of the module against what `device` enabled.
fn check_device_support(device: &Device, words: &[u32]) -> Result<(), RunError> {
    let m = rspirv::dr::load_words(words).map_err(|e| RunError::Foreign(format!("the SPIR-V does not load: {e}")))?;
    for e in &m.extensions {
        if let Some(rspirv::dr::Operand::LiteralString(name)) = e.operands.first() {
            if !CORE_EXTENSIONS.contains(&name.as_str()) {
                return Err(RunError::Foreign(format!(
                    "OpExtension \"{name}\": the foreign runner enables no device extension for it"
                )));
            }
        }
    }
    let subgroups = subgroup_operations(device);
    for cap in xir_spirv::capabilities(words) {
        // Capabilities every Vulkan device has (the spec's table: no
        // feature needed); naga declares `Sampled1D` in every GLSL module.
        if matches!(
            cap,
            Capability::Shader
                | Capability::Matrix
                | Capability::ImageQuery
                | Capability::Sampled1D
                | Capability::Image1D
                | Capability::SampledBuffer
                | Capability::ImageBuffer
        ) {
            continue;
        }
        if let Some(op) = subgroup_operation(cap) {
            if !subgroups.contains(op) {
                return Err(RunError::Foreign(format!(
                    "OpCapability {cap:?}: {} does not support the {op:?} subgroup operations in compute shaders",
                    device.name
                )));
            }
            continue;
        }
        let needs = xir_spirv::FeatureSet::from_capabilities([cap]);
        if needs.is_empty() {
            return Err(RunError::Foreign(format!(
                "OpCapability {cap:?}: the foreign runner does not know which device feature it needs"
            )));
        }
        xir_spirv::features::check_available(&needs, &device.enabled)
            .map_err(|e| RunError::Foreign(format!("OpCapability {cap:?}: {e}")))?;
    }
    Ok(())
}

/// The subgroup operations a capability needs, or `None` for a capability that is not one.
fn subgroup_operation(cap: Capability) -> Option<vk::SubgroupFeatureFlags> {
    use vk::SubgroupFeatureFlags as S;
    Some(match cap {
        Capability::GroupNonUniform => S::BASIC,
        Capability::GroupNonUniformVote => S::VOTE,
        Capability::GroupNonUniformArithmetic => S::ARITHMETIC,
        Capability::GroupNonUniformBallot => S::BALLOT,
        Capability::GroupNonUniformShuffle => S::SHUFFLE,
        Capability::GroupNonUniformShuffleRelative => S::SHUFFLE_RELATIVE,
        Capability::GroupNonUniformClustered => S::CLUSTERED,
        Capability::GroupNonUniformQuad => S::QUAD,
        _ => return None,
    })
}

/// The subgroup operations the device supports in compute shaders (Vulkan 1.1 properties).
fn subgroup_operations(device: &Device) -> vk::SubgroupFeatureFlags {
    let mut sub = vk::PhysicalDeviceSubgroupProperties::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut sub);
    // SAFETY: a Vulkan 1.1 query with a valid chain on the device's own instance.
    unsafe { device.instance.get_physical_device_properties2(device.physical, &mut props) };
    if sub.supported_stages.contains(vk::ShaderStageFlags::COMPUTE) {
        sub.supported_operations
    } else {
        vk::SubgroupFeatureFlags::empty()
    }
}

/// Create the pipeline (one descriptor-set layout per set up to the highest
/// used, empty where none is used), bind the resources at their (set,
/// binding), dispatch `groups` and read every resource back. Every object is
/// destroyed before returning (`Objects`' `Drop`).
///
/// # Safety
/// `device` is live.
unsafe fn dispatch_bound(
    device: &Device,
    words: &[u32],
    entry: &str,
    bound: &[Bound],
    push: &[u8],
    groups: [u32; 3],
) -> Result<(Vec<Resource>, GpuTiming), RunError> {
    let d = &device.device;
    let mut o = Objects::new(d);
    o.shader = d
        .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None)
        .map_err(vk_err("vkCreateShaderModule"))?;
    let set_count = bound.iter().map(|b| b.set + 1).max().unwrap_or(0);
    for set in 0..set_count {
        let bindings: Vec<_> = bound
            .iter()
            .filter(|b| b.set == set)
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b.binding)
                    .descriptor_type(b.ty)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        o.set_layouts.push(d.create_descriptor_set_layout(&info, None).map_err(vk_err("vkCreateDescriptorSetLayout"))?);
    }
    let set_layouts = o.set_layouts.clone();
    let ranges =
        [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).offset(0).size(push_size(push))];
    let layout_info = vk::PipelineLayoutCreateInfo::default()
        .set_layouts(&set_layouts)
        .push_constant_ranges(if push.is_empty() { &[] } else { &ranges[..] });
    o.layout = d.create_pipeline_layout(&layout_info, None).map_err(vk_err("vkCreatePipelineLayout"))?;
    let name = std::ffi::CString::new(entry).map_err(|_| RunError::Foreign("entry point name contains NUL".into()))?;
    o.pipeline = compute_pipeline(d, o.shader, o.layout, &name)?;

    // `slots[k]`: index into `o.buffers` or `o.images`.
    let mut slots = Vec::with_capacity(bound.len());
    for b in bound {
        match &b.resource {
            Resource::Buffer(bytes) => {
                let usage = if b.ty == vk::DescriptorType::UNIFORM_BUFFER {
                    vk::BufferUsageFlags::UNIFORM_BUFFER
                } else {
                    vk::BufferUsageFlags::STORAGE_BUFFER
                };
                o.buffers.push(host_buffer(device, bytes, usage)?);
                slots.push(o.buffers.len() - 1);
            }
            Resource::Image { dim, size, texel, data } => {
                let mut img = ImageObjects::default();
                let made = image::create(device, &mut img, *dim, *size, *texel, data);
                o.images.push(img);
                made?;
                slots.push(o.images.len() - 1);
            }
            _ => return Err(RunError::Foreign("internal: only buffers and storage images are bound".into())),
        }
    }

    let mut sets = Vec::new();
    if set_count > 0 {
        let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
        for b in bound {
            match sizes.iter_mut().find(|s| s.ty == b.ty) {
                Some(s) => s.descriptor_count += 1,
                None => sizes.push(vk::DescriptorPoolSize::default().ty(b.ty).descriptor_count(1)),
            }
        }
        // A pool without sizes is invalid: sets that are all empty still take one.
        if sizes.is_empty() {
            sizes.push(vk::DescriptorPoolSize::default().ty(vk::DescriptorType::STORAGE_BUFFER).descriptor_count(1));
        }
        let pool_info = vk::DescriptorPoolCreateInfo::default().max_sets(set_count).pool_sizes(&sizes);
        o.pool = d.create_descriptor_pool(&pool_info, None).map_err(vk_err("vkCreateDescriptorPool"))?;
        let alloc = vk::DescriptorSetAllocateInfo::default().descriptor_pool(o.pool).set_layouts(&set_layouts);
        sets = d.allocate_descriptor_sets(&alloc).map_err(vk_err("vkAllocateDescriptorSets"))?;
        let buffer_infos: Vec<[vk::DescriptorBufferInfo; 1]> = bound
            .iter()
            .zip(&slots)
            .map(|(b, &k)| match b.resource {
                Resource::Buffer(_) => {
                    [vk::DescriptorBufferInfo::default().buffer(o.buffers[k].0).offset(0).range(b.range)]
                }
                _ => [vk::DescriptorBufferInfo::default()],
            })
            .collect();
        let image_infos: Vec<[vk::DescriptorImageInfo; 1]> = bound
            .iter()
            .zip(&slots)
            .map(|(b, &k)| match b.resource {
                Resource::Image { .. } => [vk::DescriptorImageInfo::default()
                    .image_view(o.images[k].view)
                    .image_layout(vk::ImageLayout::GENERAL)],
                _ => [vk::DescriptorImageInfo::default()],
            })
            .collect();
        let writes: Vec<_> = bound
            .iter()
            .enumerate()
            .map(|(n, b)| {
                let w = vk::WriteDescriptorSet::default()
                    .dst_set(sets[b.set as usize])
                    .dst_binding(b.binding)
                    .descriptor_type(b.ty);
                if matches!(b.resource, Resource::Image { .. }) {
                    w.image_info(&image_infos[n])
                } else {
                    w.buffer_info(&buffer_infos[n])
                }
            })
            .collect();
        d.update_descriptor_sets(&writes, &[]);
    }

    let timing = record_and_submit(device, &mut o, &sets, push, push_size(push), groups)?;
    let mut out = Vec::with_capacity(bound.len());
    for (b, &k) in bound.iter().zip(&slots) {
        out.push(match &b.resource {
            Resource::Buffer(bytes) => Resource::Buffer(read_back(d, o.buffers[k].1, bytes.len())?),
            Resource::Image { dim, size, texel, data } => Resource::Image {
                dim: *dim,
                size: *size,
                texel: *texel,
                data: read_back(d, o.images[k].staging_memory, data.len())?,
            },
            _ => return Err(RunError::Foreign("internal: only buffers and storage images are bound".into())),
        });
    }
    Ok((out, timing))
}
