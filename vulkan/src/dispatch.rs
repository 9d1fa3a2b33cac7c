//! One compute dispatch at the byte level: bind the kernel's set-0
//! resources (storage buffers, the argument block, storage images, dense
//! bindings as `abi.rs` says), push constants, dispatch, read the resources
//! back, and time the dispatch with GPU timestamps. Images are uploaded and
//! read back through staging buffers (`image.rs`). Every Vulkan object
//! created here is destroyed before returning, on success and on every error
//! path (`Objects`' `Drop`). The bindless buffer heap (`BufferHeap`, set 2)
//! is one binding of as many storage buffers as it has entries, partially
//! bound with a variable count; so are the 2D / 3D texture heaps (sampled
//! images with their mip chains, `texture_heap.rs`); the sampler heap
//! (set 1) is the device's immutable samplers (`sampler.rs`), bound in the
//! layout and never written; a set no property uses gets an empty layout.
//! An `accel` argument's structures and instance buffer are built by
//! `accel.rs` before the dispatch (one instance buffer per argument, shared
//! by its two descriptors). The constant data (`UniformBuffer`) is a
//! host-visible uniform buffer, refused over the device's
//! `maxUniformBufferRange`. The module, the group counts and the resources
//! are checked against the device's other limits first (`limits.rs`).

use ash::vk;

use super::accel::{self, AccelObjects};
use super::image::{self, ImageObjects};
use super::{device::Device, GpuTiming, RunError};
use xir_spirv::abi::{KernelAbi, PropertyKind, Role, TexelKind};

/// The contents of one set-0 descriptor, in binding order.
#[derive(Clone, Debug, PartialEq)]
pub enum Resource {
    /// A storage buffer's bytes.
    Buffer(Vec<u8>),
    /// The bindless buffer heap: one storage buffer per heap index (at least one).
    Heap(Vec<Vec<u8>>),
    /// A storage image: `size` (unused dimensions 1) and 16 bytes per texel, x fastest.
    Image { dim: u32, size: [u32; 3], texel: TexelKind, data: Vec<u8> },
    /// An `accel` argument's top-level structure (the traversal role),
    /// built from the scene before the dispatch; it comes back unchanged.
    Accel(xir::interp::Accel),
    /// An `accel` argument's instance buffer (the instance-property roles):
    /// the scene's instance records; it comes back with the records as the
    /// kernel left them. Right after the same argument's `Accel` it is the
    /// very buffer that structure was built from.
    AccelInstances(xir::interp::Accel),
    /// The sampler heap (set 1): the device's immutable samplers (`sampler.rs`); no data.
    SamplerHeap,
    /// A 2D or 3D sampled-texture heap: one f32 texture per heap index with its mip chain
    /// (`texture_heap.rs`, at least one); read-only, it comes back unchanged.
    TextureHeap(Vec<super::texture_heap::HeapTexture>),
}

/// Objects of one dispatch, destroyed in reverse creation order.
pub(super) struct Objects<'d> {
    pub(super) dev: &'d ash::Device,
    pub(super) shader: vk::ShaderModule,
    pub(super) set_layouts: Vec<vk::DescriptorSetLayout>,
    pub(super) layout: vk::PipelineLayout,
    pub(super) pipeline: vk::Pipeline,
    pub(super) pool: vk::DescriptorPool,
    pub(super) buffers: Vec<(vk::Buffer, vk::DeviceMemory)>,
    pub(super) images: Vec<ImageObjects>,
    pub(super) accels: Vec<AccelObjects>,
    pub(super) heap_images: Vec<super::texture_heap::HeapImage>,
    pub(super) cmd_pool: vk::CommandPool,
    pub(super) query_pool: vk::QueryPool,
    pub(super) fence: vk::Fence,
}

impl<'d> Objects<'d> {
    /// Null handles and empty lists: each is filled as it is created, and
    /// `Drop` destroys what was.
    pub(super) fn new(dev: &'d ash::Device) -> Self {
        Objects {
            dev,
            shader: vk::ShaderModule::null(),
            set_layouts: Vec::new(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            pool: vk::DescriptorPool::null(),
            buffers: Vec::new(),
            images: Vec::new(),
            accels: Vec::new(),
            heap_images: Vec::new(),
            cmd_pool: vk::CommandPool::null(),
            query_pool: vk::QueryPool::null(),
            fence: vk::Fence::null(),
        }
    }
}

impl Drop for Objects<'_> {
    fn drop(&mut self) {
        // SAFETY: the fence was waited on (or nothing was submitted), so no
        // object is in use; destroying null handles is a no-op.
        unsafe {
            let d = self.dev;
            d.destroy_fence(self.fence, None);
            d.destroy_query_pool(self.query_pool, None);
            d.destroy_command_pool(self.cmd_pool, None);
            for mut a in self.accels.drain(..) {
                a.destroy(d);
            }
            for i in self.heap_images.drain(..) {
                i.destroy(d);
            }
            for (b, m) in self.buffers.drain(..) {
                d.destroy_buffer(b, None);
                d.free_memory(m, None);
            }
            for i in self.images.drain(..) {
                i.destroy(d);
            }
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            for l in self.set_layouts.drain(..) {
                d.destroy_descriptor_set_layout(l, None);
            }
            d.destroy_shader_module(self.shader, None);
        }
    }
}

/// The compute pipeline of `shader`'s entry point `entry` with `layout`
/// (ours and a foreign module's alike).
pub(crate) unsafe fn compute_pipeline(
    d: &ash::Device,
    shader: vk::ShaderModule,
    layout: vk::PipelineLayout,
    entry: &std::ffi::CStr,
) -> Result<vk::Pipeline, RunError> {
    let stage =
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(shader).name(entry);
    let info = [vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout)];
    d.create_compute_pipelines(vk::PipelineCache::null(), &info, None)
        .map(|p| p[0])
        .map_err(|(_, e)| RunError::Vulkan(format!("vkCreateComputePipelines: {e}")))
}

pub(crate) fn vk_err(what: &'static str) -> impl Fn(vk::Result) -> RunError {
    move |e| RunError::Vulkan(format!("{what}: {e}"))
}

/// Run `words` with `buffers` (one byte vector per descriptor, in binding
/// order) and `push` (the push-constant block); returns the buffers after
/// the dispatch.
pub fn dispatch(
    device: &Device,
    words: &[u32],
    abi: &KernelAbi,
    buffers: &[Vec<u8>],
    push: &[u8],
    groups: [u32; 3],
) -> Result<(Vec<Vec<u8>>, GpuTiming), RunError> {
    let resources: Vec<Resource> = buffers.iter().cloned().map(Resource::Buffer).collect();
    let (out, timing) = dispatch_resources(device, words, abi, &resources, push, groups)?;
    let bytes = out
        .into_iter()
        .map(|r| match r {
            Resource::Buffer(b) => Ok(b),
            Resource::Image { .. } => Err(RunError::Abi("an image where a buffer was bound".into())),
            Resource::Heap(_) => Err(RunError::Abi("a heap where a buffer was bound".into())),
            Resource::Accel(_) | Resource::AccelInstances(_) => {
                Err(RunError::Abi("an acceleration structure where a buffer was bound".into()))
            }
            Resource::SamplerHeap | Resource::TextureHeap(_) => {
                Err(RunError::Abi("a sampler or texture heap where a buffer was bound".into()))
            }
        })
        .collect::<Result<_, _>>()?;
    Ok((bytes, timing))
}

/// Run `words` with `resources` (one per set-0 descriptor, in binding order)
/// and `push`; returns the resources after the dispatch.
pub fn dispatch_resources(
    device: &Device,
    words: &[u32],
    abi: &KernelAbi,
    resources: &[Resource],
    push: &[u8],
    groups: [u32; 3],
) -> Result<(Vec<Resource>, GpuTiming), RunError> {
    abi.check_shape().map_err(|e| RunError::Abi(format!("the kernel ABI is not canonical: {e}")))?;
    super::subgroup::check(device, words)?;
    let descriptors: Vec<_> = abi.descriptors().collect();
    if descriptors.len() != resources.len() {
        return Err(RunError::Abi(format!(
            "{} descriptors in the ABI, {} resources given",
            descriptors.len(),
            resources.len()
        )));
    }
    let mut types = Vec::with_capacity(descriptors.len());
    for (p, r) in descriptors.iter().zip(resources) {
        let ty = match (p.kind, r) {
            (PropertyKind::StorageBuffer, Resource::Buffer(_)) => vk::DescriptorType::STORAGE_BUFFER,
            (PropertyKind::StorageImage { dim, texel }, Resource::Image { dim: d, texel: t, .. })
                if dim == *d && texel == *t =>
            {
                vk::DescriptorType::STORAGE_IMAGE
            }
            (PropertyKind::BufferHeap, Resource::Heap(b)) if !b.is_empty() => vk::DescriptorType::STORAGE_BUFFER,
            (PropertyKind::SamplerHeap, Resource::SamplerHeap) => vk::DescriptorType::SAMPLER,
            (PropertyKind::Texture2dHeap | PropertyKind::Texture3dHeap, Resource::TextureHeap(t))
                if !t.is_empty() && t.iter().all(|x| (x.dim == 2) == (p.kind == PropertyKind::Texture2dHeap)) =>
            {
                vk::DescriptorType::SAMPLED_IMAGE
            }
            // The constant data: a uniform buffer within the device's maxUniformBufferRange.
            (PropertyKind::UniformBuffer, Resource::Buffer(b)) => {
                if b.len() as u64 > u64::from(device.max_uniform_buffer_range) {
                    return Err(RunError::Abi(format!(
                        "binding {}: {} bytes of constant data exceed the device's maxUniformBufferRange of {}",
                        p.binding,
                        b.len(),
                        device.max_uniform_buffer_range
                    )));
                }
                vk::DescriptorType::UNIFORM_BUFFER
            }
            (PropertyKind::AccelerationStructure { .. }, Resource::Accel(_)) => {
                // Before any Vulkan object: a ray-query module on a device without it is invalid usage.
                accel::require_ray_query(device)?;
                vk::DescriptorType::ACCELERATION_STRUCTURE_KHR
            }
            (PropertyKind::StorageBuffer, Resource::AccelInstances(_)) if p.role == Role::AccelInstance => {
                vk::DescriptorType::STORAGE_BUFFER
            }
            (kind, _) => {
                return Err(RunError::Abi(format!(
                    "binding {} ({kind:?}, {}): this runner binds storage buffers, storage images, the \
                     buffer heap and acceleration structures only, with a matching resource",
                    p.binding,
                    kind.descriptor_type_name()
                )))
            }
        };
        if p.set != xir_spirv::abi::LOCAL_SET && p.role != Role::Heap {
            return Err(RunError::Abi(format!("set {} is not bound by this runner", p.set)));
        }
        types.push(ty);
    }
    if push.len() as u32 > abi.push_constant_size {
        return Err(RunError::Abi(format!(
            "{} push-constant bytes for a {}-byte block",
            push.len(),
            abi.push_constant_size
        )));
    }
    // Every device limit, before any Vulkan object exists (`limits.rs`).
    let footprint = super::limits::footprint(words)?;
    super::limits::check_module(&device.limits, &footprint, abi.push_constant_size, groups)?;
    super::limits::check_resources(&device.limits, resources, &types)?;
    let d = &device.device;
    let mut o = Objects::new(d);
    // SAFETY (whole block): every handle passed to Vulkan below was created
    // from `d` in this function and is still alive (owned by `o`).
    unsafe {
        o.shader = d
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None)
            .map_err(vk_err("vkCreateShaderModule"))?;
        // One layout per set up to the highest in use (at least set 0); the heap binding is
        // partially bound with a variable count.
        let count = |r: &Resource| match r {
            Resource::Heap(b) => b.len() as u32,
            Resource::SamplerHeap => xir_spirv::abi::SAMPLER_COUNT,
            Resource::TextureHeap(t) => t.len() as u32,
            _ => 1,
        };
        let bound: Vec<_> =
            types.iter().zip(resources).map(|(t, r)| (*t, count(r), matches!(r, Resource::Heap(_)))).collect();
        super::bindless::check_dispatch_limits(device, abi.set_count().max(1), &bound)?;
        let immutable =
            if resources.contains(&Resource::SamplerHeap) { super::sampler::samplers(device)? } else { Vec::new() };
        for set in 0..abi.set_count().max(1) {
            let in_set: Vec<usize> = (0..descriptors.len()).filter(|&k| descriptors[k].set == set).collect();
            let bindings: Vec<_> = in_set
                .iter()
                .map(|&k| {
                    let b = vk::DescriptorSetLayoutBinding::default()
                        .binding(descriptors[k].binding)
                        .descriptor_type(types[k])
                        .descriptor_count(count(&resources[k]))
                        .stage_flags(vk::ShaderStageFlags::COMPUTE);
                    if resources[k] == Resource::SamplerHeap {
                        b.immutable_samplers(&immutable)
                    } else {
                        b
                    }
                })
                .collect();
            let flags: Vec<vk::DescriptorBindingFlags> = in_set
                .iter()
                .map(|&k| match resources[k] {
                    Resource::Heap(_) | Resource::TextureHeap(_) => {
                        vk::DescriptorBindingFlags::PARTIALLY_BOUND
                            | vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT
                    }
                    _ => vk::DescriptorBindingFlags::empty(),
                })
                .collect();
            let mut flag_info = vk::DescriptorSetLayoutBindingFlagsCreateInfo::default().binding_flags(&flags);
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings).push_next(&mut flag_info);
            o.set_layouts
                .push(d.create_descriptor_set_layout(&info, None).map_err(vk_err("vkCreateDescriptorSetLayout"))?);
        }
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(abi.push_constant_size)];
        let set_layouts = o.set_layouts.clone();
        let layout_info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(&set_layouts)
            .push_constant_ranges(if abi.push_constant_size > 0 { &ranges[..] } else { &[] });
        o.layout = d.create_pipeline_layout(&layout_info, None).map_err(vk_err("vkCreatePipelineLayout"))?;
        let entry = std::ffi::CString::new(abi.entry_point.as_str())
            .map_err(|_| RunError::Abi("entry point name contains NUL".into()))?;
        o.pipeline = compute_pipeline(d, o.shader, o.layout, &entry)?;

        // Host-visible, coherent buffers (simple and exact; timing is of the dispatch only);
        // images in device memory with a host-visible staging buffer each.
        // `slots[k]`: index into `o.buffers` (buffers) or `o.images` (images).
        let mut slots = Vec::with_capacity(resources.len());
        for r in resources {
            match r {
                Resource::Buffer(bytes) => {
                    let usage = if types[slots.len()] == vk::DescriptorType::UNIFORM_BUFFER {
                        vk::BufferUsageFlags::UNIFORM_BUFFER
                    } else {
                        vk::BufferUsageFlags::STORAGE_BUFFER
                    };
                    let (buf, mem) = host_buffer(device, bytes, usage)?;
                    o.buffers.push((buf, mem));
                    slots.push(o.buffers.len() - 1);
                }
                Resource::Heap(entries) => {
                    slots.push(o.buffers.len());
                    for bytes in entries {
                        let (buf, mem) = host_buffer(device, bytes, vk::BufferUsageFlags::STORAGE_BUFFER)?;
                        o.buffers.push((buf, mem));
                    }
                }
                Resource::Image { dim, size, texel, data } => {
                    let mut img = ImageObjects::default();
                    let made = image::create(device, &mut img, *dim, *size, *texel, data);
                    o.images.push(img);
                    made?;
                    slots.push(o.images.len() - 1);
                }
                Resource::SamplerHeap => slots.push(0),
                // `slots[k]`: index of the heap's first texture in `o.heap_images`.
                Resource::TextureHeap(textures) => {
                    slots.push(o.heap_images.len());
                    for t in textures {
                        o.heap_images.push(super::texture_heap::HeapImage::default());
                        let last = o.heap_images.last_mut().expect("just pushed");
                        super::texture_heap::create(device, last, t)?;
                    }
                }
                // `slots[k]`: index into `o.accels`; an argument's two descriptors share one.
                Resource::Accel(scene) | Resource::AccelInstances(scene) => {
                    let k = slots.len();
                    let traversal = matches!(r, Resource::Accel(_));
                    let shared = k > 0
                        && !traversal
                        && matches!(resources[k - 1], Resource::Accel(_))
                        && descriptors[k - 1].arg_index == descriptors[k].arg_index;
                    if shared {
                        slots.push(slots[k - 1]);
                    } else {
                        o.accels.push(AccelObjects::default());
                        let last = o.accels.last_mut().expect("just pushed");
                        accel::build(device, scene, traversal, last)?;
                        slots.push(o.accels.len() - 1);
                    }
                }
            }
        }

        let sets = if !descriptors.is_empty() {
            let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
            for (ty, r) in types.iter().zip(resources) {
                match sizes.iter_mut().find(|s| s.ty == *ty) {
                    Some(s) => s.descriptor_count += count(r),
                    None => sizes.push(vk::DescriptorPoolSize::default().ty(*ty).descriptor_count(count(r))),
                }
            }
            let pool_info =
                vk::DescriptorPoolCreateInfo::default().max_sets(set_layouts.len() as u32).pool_sizes(&sizes);
            o.pool = d.create_descriptor_pool(&pool_info, None).map_err(vk_err("vkCreateDescriptorPool"))?;
            // The variable count of each set (only the heap's set has a variable binding).
            let variable: Vec<u32> = (0..set_layouts.len() as u32)
                .map(|set| {
                    descriptors
                        .iter()
                        .zip(resources)
                        .find(|(p, r)| p.set == set && matches!(r, Resource::Heap(_) | Resource::TextureHeap(_)))
                        .map_or(0, |(_, r)| count(r))
                })
                .collect();
            // One set per call, the variable count chained only for a set with a variable binding:
            // validation layer 1.3.239 crashes on a chain covering an empty layout (the sampler
            // set of a buffer-only kernel; KhronosGroup/Vulkan-ValidationLayers#5074), the spec allows both.
            let mut sets = Vec::with_capacity(set_layouts.len());
            for (layout, &n) in set_layouts.iter().zip(&variable) {
                let (layouts, counts) = ([*layout], [n]);
                let mut variable_info =
                    vk::DescriptorSetVariableDescriptorCountAllocateInfo::default().descriptor_counts(&counts);
                let mut info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(o.pool).set_layouts(&layouts);
                if n > 0 {
                    info = info.push_next(&mut variable_info);
                }
                sets.push(d.allocate_descriptor_sets(&info).map_err(vk_err("vkAllocateDescriptorSets"))?[0]);
            }
            let buffer_infos: Vec<[vk::DescriptorBufferInfo; 1]> = o
                .buffers
                .iter()
                .map(|(b, _)| [vk::DescriptorBufferInfo::default().buffer(*b).offset(0).range(vk::WHOLE_SIZE)])
                .collect();
            let image_infos: Vec<[vk::DescriptorImageInfo; 1]> = o
                .images
                .iter()
                .map(|i| [vk::DescriptorImageInfo::default().image_view(i.view).image_layout(vk::ImageLayout::GENERAL)])
                .collect();
            let instance_infos: Vec<[vk::DescriptorBufferInfo; 1]> = o
                .accels
                .iter()
                .map(|a| [vk::DescriptorBufferInfo::default().buffer(a.instances.0).offset(0).range(vk::WHOLE_SIZE)])
                .collect();
            let tlases: Vec<[vk::AccelerationStructureKHR; 1]> = o.accels.iter().map(|a| [a.tlas]).collect();
            let mut tlas_writes: Vec<vk::WriteDescriptorSetAccelerationStructureKHR> = slots
                .iter()
                .zip(resources)
                .map(|(&k, r)| match r {
                    Resource::Accel(_) => {
                        vk::WriteDescriptorSetAccelerationStructureKHR::default().acceleration_structures(&tlases[k])
                    }
                    _ => vk::WriteDescriptorSetAccelerationStructureKHR::default(),
                })
                .collect();
            let heap_infos: Vec<Vec<vk::DescriptorBufferInfo>> = resources
                .iter()
                .zip(&slots)
                .map(|(r, &k)| match r {
                    Resource::Heap(b) => buffer_infos[k..k + b.len()].iter().map(|i| i[0]).collect(),
                    _ => Vec::new(),
                })
                .collect();
            let heap_image_infos: Vec<Vec<vk::DescriptorImageInfo>> = resources
                .iter()
                .zip(&slots)
                .map(|(r, &k)| match r {
                    Resource::TextureHeap(t) => o.heap_images[k..k + t.len()]
                        .iter()
                        .map(|i| {
                            vk::DescriptorImageInfo::default()
                                .image_view(i.view)
                                .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)
                        })
                        .collect(),
                    _ => Vec::new(),
                })
                .collect();
            let writes: Vec<_> = descriptors
                .iter()
                .zip(types.iter().zip(&slots))
                .zip(tlas_writes.iter_mut())
                .enumerate()
                .map(|(n, ((p, (ty, &k)), tlas_write))| {
                    let w = vk::WriteDescriptorSet::default()
                        .dst_set(sets[p.set as usize])
                        .dst_binding(p.binding)
                        .descriptor_type(*ty);
                    if *ty == vk::DescriptorType::STORAGE_IMAGE {
                        w.image_info(&image_infos[k])
                    } else if *ty == vk::DescriptorType::ACCELERATION_STRUCTURE_KHR {
                        let mut w = w.push_next(tlas_write);
                        w.descriptor_count = 1;
                        w
                    } else if matches!(resources[n], Resource::AccelInstances(_)) {
                        w.buffer_info(&instance_infos[k])
                    } else if matches!(resources[n], Resource::Heap(_)) {
                        w.buffer_info(&heap_infos[n])
                    } else if matches!(resources[n], Resource::TextureHeap(_)) {
                        w.image_info(&heap_image_infos[n])
                    } else {
                        w.buffer_info(&buffer_infos[k])
                    }
                })
                .collect();
            // The sampler heap's immutable samplers take no write.
            let writes: Vec<_> = writes
                .into_iter()
                .zip(resources)
                .filter(|(_, r)| **r != Resource::SamplerHeap)
                .map(|(w, _)| w)
                .collect();
            d.update_descriptor_sets(&writes, &[]);
            sets
        } else {
            Vec::new()
        };

        let timing = record_and_submit(device, &mut o, &sets, push, abi.push_constant_size, groups)?;
        let mut out = Vec::with_capacity(resources.len());
        for (r, &k) in resources.iter().zip(&slots) {
            out.push(match r {
                Resource::Buffer(bytes) => Resource::Buffer(read_back(d, o.buffers[k].1, bytes.len())?),
                Resource::Heap(entries) => Resource::Heap(
                    entries
                        .iter()
                        .enumerate()
                        .map(|(j, b)| read_back(d, o.buffers[k + j].1, b.len()))
                        .collect::<Result<_, _>>()?,
                ),
                Resource::Image { dim, size, texel, data } => Resource::Image {
                    dim: *dim,
                    size: *size,
                    texel: *texel,
                    data: read_back(d, o.images[k].staging_memory, data.len())?,
                },
                Resource::Accel(scene) => Resource::Accel(scene.clone()),
                Resource::SamplerHeap => Resource::SamplerHeap,
                Resource::TextureHeap(t) => Resource::TextureHeap(t.clone()),
                Resource::AccelInstances(scene) => {
                    let a = &o.accels[k];
                    let bytes = read_back(d, a.instances.1, a.instance_bytes)?;
                    Resource::AccelInstances(accel::apply_records(scene, &bytes)?)
                }
            });
        }
        Ok((out, timing))
    }
}

/// Record the dispatch (image uploads, timestamps, the bound sets, the push
/// constants zero-padded to `push_size`, the dispatch, image downloads, a
/// barrier to the host), submit it and wait; `o` holds the pipeline, its
/// layout and the images, and takes the command pool, query pool and fence.
///
/// # Safety
/// Every handle in `o` and `sets` was created from `device` and is alive.
pub(super) unsafe fn record_and_submit(
    device: &Device,
    o: &mut Objects<'_>,
    sets: &[vk::DescriptorSet],
    push: &[u8],
    push_size: u32,
    groups: [u32; 3],
) -> Result<GpuTiming, RunError> {
    let d = &device.device;
    o.cmd_pool = d
        .create_command_pool(&vk::CommandPoolCreateInfo::default().queue_family_index(device.queue_family), None)
        .map_err(vk_err("vkCreateCommandPool"))?;
    let cmd = d
        .allocate_command_buffers(
            &vk::CommandBufferAllocateInfo::default()
                .command_pool(o.cmd_pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1),
        )
        .map_err(vk_err("vkAllocateCommandBuffers"))?[0];
    let timed = device.timestamp_period > 0.0;
    let repeats = device.timed_dispatches.max(1);
    if timed {
        o.query_pool = d
            .create_query_pool(
                &vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2 * repeats),
                None,
            )
            .map_err(vk_err("vkCreateQueryPool"))?;
    }
    d.begin_command_buffer(
        cmd,
        &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
    )
    .map_err(vk_err("vkBeginCommandBuffer"))?;
    for img in &o.images {
        image::record_upload(d, cmd, img);
    }
    for img in &o.heap_images {
        super::texture_heap::record_upload(d, cmd, img);
    }
    if timed {
        d.cmd_reset_query_pool(cmd, o.query_pool, 0, 2 * repeats);
    }
    d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, o.pipeline);
    if !sets.is_empty() {
        d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, o.layout, 0, sets, &[]);
    }
    if push_size > 0 {
        let mut block = vec![0u8; push_size as usize];
        block[..push.len()].copy_from_slice(push);
        d.cmd_push_constants(cmd, o.layout, vk::ShaderStageFlags::COMPUTE, 0, &block);
    }
    for r in 0..repeats {
        if r > 0 {
            // Each dispatch sees the previous one's writes and does not overlap it.
            let after = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)];
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &after,
                &[],
                &[],
            );
        }
        if timed {
            d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, o.query_pool, 2 * r);
        }
        d.cmd_dispatch(cmd, groups[0], groups[1], groups[2]);
        if timed {
            d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, o.query_pool, 2 * r + 1);
        }
    }
    for img in &o.images {
        image::record_download(d, cmd, img);
    }
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ)];
    d.cmd_pipeline_barrier(
        cmd,
        vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
        vk::PipelineStageFlags::HOST,
        vk::DependencyFlags::empty(),
        &barrier,
        &[],
        &[],
    );
    d.end_command_buffer(cmd).map_err(vk_err("vkEndCommandBuffer"))?;
    o.fence = d.create_fence(&vk::FenceCreateInfo::default(), None).map_err(vk_err("vkCreateFence"))?;
    let cmds = [cmd];
    let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
    d.queue_submit(device.queue, &submit, o.fence).map_err(vk_err("vkQueueSubmit"))?;
    d.wait_for_fences(&[o.fence], true, 60_000_000_000).map_err(vk_err("vkWaitForFences"))?;

    let mut timing = GpuTiming::default();
    if timed {
        let mut stamps = vec![0u64; 2 * repeats as usize];
        if d.get_query_pool_results(
            o.query_pool,
            0,
            &mut stamps,
            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
        )
        .is_ok()
        {
            let mut ns: Vec<f64> = stamps
                .chunks_exact(2)
                .map(|p| p[1].saturating_sub(p[0]) as f64 * device.timestamp_period as f64)
                .collect();
            ns.sort_by(f64::total_cmp);
            timing.dispatch_ns = Some(ns[ns.len() / 2]);
            timing.min_ns = ns.first().copied();
            timing.max_ns = ns.last().copied();
        }
    }
    Ok(timing)
}

/// The first `len` bytes of a host-visible, coherent allocation.
///
/// # Safety
/// `mem` is a live, host-visible allocation of at least `len` bytes, not in use by the device.
pub(super) unsafe fn read_back(d: &ash::Device, mem: vk::DeviceMemory, len: usize) -> Result<Vec<u8>, RunError> {
    let ptr = d.map_memory(mem, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()).map_err(vk_err("vkMapMemory"))?;
    let v = std::slice::from_raw_parts(ptr as *const u8, len).to_vec();
    d.unmap_memory(mem);
    Ok(v)
}

/// A host-visible, coherent buffer holding `bytes` (zero-padded to a multiple of 4, at least 4).
///
/// # Safety
/// `device` is live.
pub(crate) unsafe fn host_buffer(
    device: &Device,
    bytes: &[u8],
    usage: vk::BufferUsageFlags,
) -> Result<(vk::Buffer, vk::DeviceMemory), RunError> {
    let size = (bytes.len().max(4).div_ceil(4) * 4) as u64;
    new_buffer(device, bytes, size, usage, true, false)
}

/// A buffer of `size` bytes (`size >= bytes.len()`): host-visible and
/// coherent, holding `bytes` zero-padded, when `host`; else device-local where
/// the device has such memory (contents undefined). With `addressed` its
/// memory is allocated with `DEVICE_ADDRESS` (the caller adds the
/// `SHADER_DEVICE_ADDRESS` usage). On every error path nothing is left
/// allocated.
///
/// # Safety
/// `device` is live.
pub(crate) unsafe fn new_buffer(
    device: &Device,
    bytes: &[u8],
    size: u64,
    usage: vk::BufferUsageFlags,
    host: bool,
    addressed: bool,
) -> Result<(vk::Buffer, vk::DeviceMemory), RunError> {
    let d = &device.device;
    let buf = d
        .create_buffer(
            &vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE),
            None,
        )
        .map_err(vk_err("vkCreateBuffer"))?;
    let req = d.get_buffer_memory_requirements(buf);
    let visible = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let ty = if host {
        device.memory_type(req.memory_type_bits, visible)
    } else {
        device
            .memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::DEVICE_LOCAL)
            .or_else(|| device.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::empty()))
    };
    let Some(ty) = ty else {
        d.destroy_buffer(buf, None);
        let kind = if host { "host-visible coherent" } else { "device" };
        return Err(RunError::Vulkan(format!("no {kind} memory type for a buffer ({usage:?})")));
    };
    let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
    let mut info = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty);
    if addressed {
        info = info.push_next(&mut flags);
    }
    let mem = match d.allocate_memory(&info, None) {
        Ok(m) => m,
        Err(e) => {
            d.destroy_buffer(buf, None);
            return Err(RunError::Vulkan(format!("vkAllocateMemory: {e}")));
        }
    };
    let fill = || -> Result<(), RunError> {
        d.bind_buffer_memory(buf, mem, 0).map_err(vk_err("vkBindBufferMemory"))?;
        if host {
            let ptr = d.map_memory(mem, 0, size, vk::MemoryMapFlags::empty()).map_err(vk_err("vkMapMemory"))?;
            let dst = std::slice::from_raw_parts_mut(ptr as *mut u8, size as usize);
            dst.fill(0);
            dst[..bytes.len()].copy_from_slice(bytes);
            d.unmap_memory(mem);
        }
        Ok(())
    };
    if let Err(e) = fill() {
        d.destroy_buffer(buf, None);
        d.free_memory(mem, None);
        return Err(e);
    }
    Ok((buf, mem))
}
