//! Acceleration structures for the Vulkan runner: an `accel` input (the
//! interpreter's scene, `xir::interp::Accel`) becomes the objects a ray-query
//! kernel binds.
//!
//! - The instance buffer holds one `VkAccelerationStructureInstanceKHR`
//!   record (64 bytes, [`INSTANCE_RECORD_BYTES`]) per instance: the row-major
//!   3x4 `f32` transform (words 0..12), `user_id | mask << 24` (word 12),
//!   `sbt offset 0 | flags << 24` (word 13: `TRIANGLE_FACING_CULL_DISABLE`,
//!   the interpreter culls nothing) and the bottom-level structure's device
//!   address (words 14..16). It is the storage buffer of the instance-property
//!   role *and* the build input of the top-level structure: one `VkBuffer`.
//! - With the traversal role, each instance gets its own bottom-level
//!   structure: one geometry of its triangles (`R32G32B32_SFLOAT`, no index
//!   buffer) or of its AABBs (an instance with both is refused), `OPAQUE`
//!   when the instance is opaque, `NO_DUPLICATE_ANY_HIT_INVOCATION` always;
//!   then one top-level structure over the instance buffer. Build sizes come
//!   from `vkGetAccelerationStructureBuildSizesKHR`; each scratch address is
//!   aligned up to `minAccelerationStructureScratchOffsetAlignment`; every
//!   buffer whose device address is taken is created with
//!   `SHADER_DEVICE_ADDRESS` usage and allocated with the `DEVICE_ADDRESS`
//!   flag. The builds run in one command buffer (bottom level, a barrier, top
//!   level) that is waited on before the dispatch.
//! - Device creation (`device.rs`) enables `VK_KHR_acceleration_structure`,
//!   `VK_KHR_ray_query`, `VK_KHR_deferred_host_operations`, their feature
//!   structs and `bufferDeviceAddress` together or not at all
//!   ([`RayFeatures`]); a traversal on a device without them, a scene over the
//!   device's limits, and every failing Vulkan call are a [`RunError`].
//!
//! Every object made here is owned by an [`AccelObjects`] that the caller
//! destroys (on success and on every error path).

use std::ffi::{c_char, CStr};

use ash::{khr, vk};
use xir::interp::{Accel, AccelInstance, MAX_INSTANCE_MASK, MAX_INSTANCE_USER_ID};

use super::dispatch::vk_err;
use super::{device::Device, RunError};
use xir_spirv::{Feature, FeatureSet};

/// The device extensions ray queries need (all or none are enabled).
pub(crate) const DEVICE_EXTENSIONS: [&CStr; 3] =
    [khr::acceleration_structure::NAME, khr::ray_query::NAME, khr::deferred_host_operations::NAME];

/// Bytes of one `VkAccelerationStructureInstanceKHR`.
pub const INSTANCE_RECORD_BYTES: usize = 64;
/// `VK_GEOMETRY_INSTANCE_TRIANGLE_FACING_CULL_DISABLE_BIT_KHR` in the record's flags byte.
const CULL_DISABLE: u32 = 1;

/// Whether the device has ray queries enabled, and the limits builds obey.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RayFeatures {
    on: bool,
    scratch_align: u64,
    max_instances: u64,
    max_primitives: u64,
}

impl RayFeatures {
    /// What the device supports: the extensions, `accelerationStructure`,
    /// `rayQuery` and `bufferDeviceAddress`, with the build limits.
    pub(crate) fn probe(
        instance: &ash::Instance,
        physical: vk::PhysicalDevice,
        extensions: bool,
        asf: &vk::PhysicalDeviceAccelerationStructureFeaturesKHR,
        rqf: &vk::PhysicalDeviceRayQueryFeaturesKHR,
        v12: &vk::PhysicalDeviceVulkan12Features,
    ) -> RayFeatures {
        let on = extensions
            && asf.acceleration_structure == vk::TRUE
            && rqf.ray_query == vk::TRUE
            && v12.buffer_device_address == vk::TRUE;
        if !on {
            return RayFeatures::default();
        }
        let mut p = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
        let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p);
        // SAFETY: Vulkan 1.2 query; the extension is supported, so its struct may be chained.
        unsafe { instance.get_physical_device_properties2(physical, &mut p2) };
        RayFeatures {
            on,
            scratch_align: u64::from(p.min_acceleration_structure_scratch_offset_alignment).max(1),
            max_instances: p.max_instance_count,
            max_primitives: p.max_primitive_count,
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.on
    }

    /// When supported: add the extensions and the feature bits, and return
    /// the feature structs to chain into device creation.
    pub(crate) fn enable(
        &self,
        extensions: &mut Vec<*const c_char>,
        set: &mut FeatureSet,
    ) -> (vk::PhysicalDeviceAccelerationStructureFeaturesKHR<'static>, vk::PhysicalDeviceRayQueryFeaturesKHR<'static>)
    {
        if self.on {
            extensions.extend(DEVICE_EXTENSIONS.iter().map(|n| n.as_ptr()));
            set.insert(Feature::RayQuery);
            set.insert(Feature::AccelerationStructure);
        }
        (
            vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default().acceleration_structure(true),
            vk::PhysicalDeviceRayQueryFeaturesKHR::default().ray_query(true),
        )
    }
}

/// The instance records of `scene` (see the module doc), each bottom-level
/// reference from `blas` (zero when there is no traversal).
pub fn instance_records(scene: &Accel, blas: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(scene.instances.len() * INSTANCE_RECORD_BYTES);
    for (k, i) in scene.instances.iter().enumerate() {
        for x in i.transform {
            out.extend(x.to_le_bytes());
        }
        out.extend(((i.user_id & MAX_INSTANCE_USER_ID) | (i.mask & MAX_INSTANCE_MASK) << 24).to_le_bytes());
        out.extend((CULL_DISABLE << 24).to_le_bytes());
        out.extend(blas.get(k).copied().unwrap_or(0).to_le_bytes());
    }
    out
}

/// `scene` with the transform, user id and mask of each record in `bytes`
/// (the instance buffer after a dispatch); geometry and opacity are kept.
pub fn apply_records(scene: &Accel, bytes: &[u8]) -> Result<Accel, RunError> {
    if bytes.len() < scene.instances.len() * INSTANCE_RECORD_BYTES {
        return Err(RunError::Abi(format!(
            "the instance buffer came back with {} bytes for {} instances",
            bytes.len(),
            scene.instances.len()
        )));
    }
    let word = |k: usize, w: usize| {
        let at = k * INSTANCE_RECORD_BYTES + 4 * w;
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
    };
    let instances = scene
        .instances
        .iter()
        .enumerate()
        .map(|(k, i)| AccelInstance {
            transform: std::array::from_fn(|w| f32::from_bits(word(k, w))),
            user_id: word(k, 12) & MAX_INSTANCE_USER_ID,
            mask: word(k, 12) >> 24,
            ..i.clone()
        })
        .collect();
    Ok(Accel { instances })
}

/// The Vulkan objects of one `accel` argument; [`AccelObjects::destroy`] frees them.
#[derive(Default)]
pub(crate) struct AccelObjects {
    loader: Option<khr::acceleration_structure::Device>,
    /// Bottom-level structures, then the top-level one.
    structures: Vec<vk::AccelerationStructureKHR>,
    /// The top-level structure (null without traversal).
    pub tlas: vk::AccelerationStructureKHR,
    /// Vertex, AABB, storage and scratch buffers.
    buffers: Vec<(vk::Buffer, vk::DeviceMemory)>,
    /// The instance records: the instance-property descriptor and the top-level build input.
    pub instances: (vk::Buffer, vk::DeviceMemory),
    /// Bytes of the instance records.
    pub instance_bytes: usize,
    pool: vk::CommandPool,
    fence: vk::Fence,
}

impl AccelObjects {
    /// Destroy everything (null handles are no-ops).
    ///
    /// # Safety
    /// No object is in use by the device; `d` created them.
    pub(crate) unsafe fn destroy(&mut self, d: &ash::Device) {
        d.destroy_fence(self.fence, None);
        d.destroy_command_pool(self.pool, None);
        if let Some(l) = &self.loader {
            for a in self.structures.drain(..) {
                l.destroy_acceleration_structure(a, None);
            }
        }
        for (b, m) in self.buffers.drain(..).chain(std::iter::once(self.instances)) {
            d.destroy_buffer(b, None);
            d.free_memory(m, None);
        }
        self.instances = Default::default();
    }
}

/// `Err` unless `device` was created with ray query enabled.
pub(crate) fn require_ray_query(device: &Device) -> Result<(), RunError> {
    if device.ray.on {
        return Ok(());
    }
    Err(RunError::Vulkan(format!(
        "device `{}` has no ray query (rayQuery, accelerationStructure and bufferDeviceAddress with \
         VK_KHR_ray_query and VK_KHR_acceleration_structure)",
        device.name
    )))
}

/// Which of the scene's geometry kinds an instance uses, refusing a mix.
fn geometry_kind(k: usize, i: &AccelInstance) -> Result<bool, RunError> {
    if !i.triangles.is_empty() && !i.aabbs.is_empty() {
        return Err(RunError::Abi(format!(
            "accel instance {k} has both triangles and AABBs; a Vulkan bottom-level structure holds one kind"
        )));
    }
    Ok(i.aabbs.is_empty())
}

/// Build the objects of `scene` into `o`: the instance buffer always, the
/// structures only with `traversal`.
///
/// # Safety
/// `device` is live; `o` is destroyed by the caller.
pub(crate) unsafe fn build(
    device: &Device,
    scene: &Accel,
    traversal: bool,
    o: &mut AccelObjects,
) -> Result<(), RunError> {
    let d = &device.device;
    let ray = device.ray;
    if !traversal {
        let records = instance_records(scene, &[]);
        o.instance_bytes = records.len();
        o.instances = buffer(device, &records, records.len() as u64, vk::BufferUsageFlags::STORAGE_BUFFER, true)?;
        return Ok(());
    }
    require_ray_query(device)?;
    let n = scene.instances.len() as u64;
    if n > ray.max_instances {
        return Err(RunError::Abi(format!(
            "{n} accel instances exceed the device's maxInstanceCount {}",
            ray.max_instances
        )));
    }
    let loader = khr::acceleration_structure::Device::new(&device.instance, d);
    o.loader = Some(loader.clone());
    let input = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
    // Geometry of every bottom-level structure.
    let mut geometries = Vec::with_capacity(scene.instances.len());
    let mut counts = Vec::with_capacity(scene.instances.len());
    for (k, i) in scene.instances.iter().enumerate() {
        let triangles = geometry_kind(k, i)?;
        let count = if triangles { i.triangles.len() } else { i.aabbs.len() } as u64;
        if count > ray.max_primitives {
            return Err(RunError::Abi(format!(
                "accel instance {k}: {count} primitives exceed the device's maxPrimitiveCount {}",
                ray.max_primitives
            )));
        }
        let floats: Vec<f32> = if triangles {
            i.triangles.iter().flatten().flatten().copied().collect()
        } else {
            i.aabbs.iter().flatten().copied().collect()
        };
        let bytes: Vec<u8> = floats.iter().flat_map(|x| x.to_le_bytes()).collect();
        let buf = buffer(device, &bytes, bytes.len() as u64, input, true)?;
        o.buffers.push(buf);
        let address = vk::DeviceOrHostAddressConstKHR { device_address: address(d, buf.0) };
        let data = if triangles {
            vk::AccelerationStructureGeometryDataKHR {
                triangles: vk::AccelerationStructureGeometryTrianglesDataKHR::default()
                    .vertex_format(vk::Format::R32G32B32_SFLOAT)
                    .vertex_data(address)
                    .vertex_stride(12)
                    .max_vertex((3 * count).saturating_sub(1) as u32)
                    .index_type(vk::IndexType::NONE_KHR),
            }
        } else {
            vk::AccelerationStructureGeometryDataKHR {
                aabbs: vk::AccelerationStructureGeometryAabbsDataKHR::default().data(address).stride(24),
            }
        };
        let mut flags = vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION;
        if i.opaque {
            flags |= vk::GeometryFlagsKHR::OPAQUE;
        }
        let ty = if triangles { vk::GeometryTypeKHR::TRIANGLES } else { vk::GeometryTypeKHR::AABBS };
        geometries
            .push([vk::AccelerationStructureGeometryKHR::default().geometry_type(ty).geometry(data).flags(flags)]);
        counts.push(count as u32);
    }
    let mut blas = Vec::with_capacity(geometries.len());
    let mut infos = Vec::with_capacity(geometries.len() + 1);
    for (g, &count) in geometries.iter().zip(&counts) {
        let (a, info) = structure(device, &loader, o, vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL, g, count)?;
        blas.push(loader.get_acceleration_structure_device_address(
            &vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(a),
        ));
        infos.push(info);
    }
    // The instance buffer: the top-level build input and the instance-property storage buffer.
    let records = instance_records(scene, &blas);
    o.instance_bytes = records.len();
    o.instances = buffer(device, &records, records.len() as u64, input | vk::BufferUsageFlags::STORAGE_BUFFER, true)?;
    let top = [vk::AccelerationStructureGeometryKHR::default().geometry_type(vk::GeometryTypeKHR::INSTANCES).geometry(
        vk::AccelerationStructureGeometryDataKHR {
            instances: vk::AccelerationStructureGeometryInstancesDataKHR::default()
                .data(vk::DeviceOrHostAddressConstKHR { device_address: address(d, o.instances.0) }),
        },
    )];
    let (tlas, top_info) = structure(device, &loader, o, vk::AccelerationStructureTypeKHR::TOP_LEVEL, &top, n as u32)?;
    o.tlas = tlas;
    // Record: bottom-level builds, a barrier, the top-level build, a barrier to the shader.
    o.pool = d
        .create_command_pool(&vk::CommandPoolCreateInfo::default().queue_family_index(device.queue_family), None)
        .map_err(vk_err("vkCreateCommandPool"))?;
    let cmd = d
        .allocate_command_buffers(
            &vk::CommandBufferAllocateInfo::default()
                .command_pool(o.pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1),
        )
        .map_err(vk_err("vkAllocateCommandBuffers"))?[0];
    d.begin_command_buffer(
        cmd,
        &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
    )
    .map_err(vk_err("vkBeginCommandBuffer"))?;
    let ranges: Vec<[vk::AccelerationStructureBuildRangeInfoKHR; 1]> =
        counts.iter().map(|&c| [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(c)]).collect();
    let range_refs: Vec<&[vk::AccelerationStructureBuildRangeInfoKHR]> = ranges.iter().map(|r| &r[..]).collect();
    if !infos.is_empty() {
        loader.cmd_build_acceleration_structures(cmd, &infos, &range_refs);
    }
    let build = vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR;
    let barrier = |src: vk::AccessFlags, dst: vk::AccessFlags, to: vk::PipelineStageFlags| {
        let b = [vk::MemoryBarrier::default().src_access_mask(src).dst_access_mask(dst)];
        d.cmd_pipeline_barrier(cmd, build, to, vk::DependencyFlags::empty(), &b, &[], &[]);
    };
    let written = vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR;
    barrier(written, vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR, build);
    let top_range = [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(n as u32)];
    loader.cmd_build_acceleration_structures(cmd, &[top_info], &[&top_range]);
    barrier(written, vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR, vk::PipelineStageFlags::COMPUTE_SHADER);
    d.end_command_buffer(cmd).map_err(vk_err("vkEndCommandBuffer"))?;
    o.fence = d.create_fence(&vk::FenceCreateInfo::default(), None).map_err(vk_err("vkCreateFence"))?;
    let cmds = [cmd];
    d.queue_submit(device.queue, &[vk::SubmitInfo::default().command_buffers(&cmds)], o.fence)
        .map_err(vk_err("vkQueueSubmit (acceleration-structure builds)"))?;
    d.wait_for_fences(&[o.fence], true, 60_000_000_000)
        .map_err(vk_err("vkWaitForFences (acceleration-structure builds)"))?;
    Ok(())
}

/// Create one structure of `ty` over `geometries` (`count` primitives or
/// instances) with its storage and aligned scratch; returns it and its build info.
///
/// # Safety
/// `device` is live; every object is pushed into `o`.
unsafe fn structure<'g>(
    device: &Device,
    loader: &khr::acceleration_structure::Device,
    o: &mut AccelObjects,
    ty: vk::AccelerationStructureTypeKHR,
    geometries: &'g [vk::AccelerationStructureGeometryKHR<'g>],
    count: u32,
) -> Result<(vk::AccelerationStructureKHR, vk::AccelerationStructureBuildGeometryInfoKHR<'g>), RunError> {
    let d = &device.device;
    let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
        .ty(ty)
        .flags(vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE)
        .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
        .geometries(geometries);
    let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
    loader.get_acceleration_structure_build_sizes(
        vk::AccelerationStructureBuildTypeKHR::DEVICE,
        &info,
        &[count],
        &mut sizes,
    );
    let storage = buffer(
        device,
        &[],
        sizes.acceleration_structure_size,
        vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR,
        false,
    )?;
    o.buffers.push(storage);
    let create = vk::AccelerationStructureCreateInfoKHR::default()
        .buffer(storage.0)
        .size(sizes.acceleration_structure_size)
        .ty(ty);
    let a = loader.create_acceleration_structure(&create, None).map_err(vk_err("vkCreateAccelerationStructureKHR"))?;
    o.structures.push(a);
    let align = device.ray.scratch_align;
    let scratch = buffer(device, &[], sizes.build_scratch_size + align, vk::BufferUsageFlags::STORAGE_BUFFER, false)?;
    o.buffers.push(scratch);
    let scratch_address = address(d, scratch.0).div_ceil(align) * align;
    let info =
        info.dst_acceleration_structure(a).scratch_data(vk::DeviceOrHostAddressKHR { device_address: scratch_address });
    Ok((a, info))
}

/// The device address of `b`.
///
/// # Safety
/// `b` was created with `SHADER_DEVICE_ADDRESS` and is bound to memory allocated with `DEVICE_ADDRESS`.
unsafe fn address(d: &ash::Device, b: vk::Buffer) -> u64 {
    d.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(b))
}

/// A buffer of `size` bytes (at least 16) with `usage | SHADER_DEVICE_ADDRESS`
/// (device-address memory only when the device has ray query), holding
/// `bytes` (zero-filled) when `host` (host-visible, coherent memory), else in
/// device-local memory where there is one.
///
/// # Safety
/// `device` is live.
unsafe fn buffer(
    device: &Device,
    bytes: &[u8],
    size: u64,
    usage: vk::BufferUsageFlags,
    host: bool,
) -> Result<(vk::Buffer, vk::DeviceMemory), RunError> {
    let addressed = device.ray.on;
    let usage = if addressed { usage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS } else { usage };
    super::dispatch::new_buffer(device, bytes, size.max(16).div_ceil(16) * 16, usage, host, addressed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene() -> Accel {
        let j = serde_json::json!({"instances": [
            {"transform": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], "mask": 0x81, "user_id": 0xabcdef,
             "triangles": [[[0, 0, 0], [1, 0, 0], [0, 1, 0]]]},
            {"opaque": false, "aabbs": [[0, 0, 0, 1, 1, 1]]}]});
        xir::interp::accel_from_json(&j).unwrap()
    }

    // Check the VkAccelerationStructureInstanceKHR layout of the records.
    #[test]
    fn records_have_the_vulkan_instance_layout() {
        let r = instance_records(&scene(), &[0x1122_3344_5566_7788, 0x10]);
        assert_eq!(r.len(), 2 * INSTANCE_RECORD_BYTES);
        let word = |k: usize| u32::from_le_bytes(r[4 * k..4 * k + 4].try_into().unwrap());
        assert_eq!(
            (0..12).map(|k| f32::from_bits(word(k))).collect::<Vec<_>>(),
            (1..=12).map(|x| x as f32).collect::<Vec<_>>()
        );
        assert_eq!(word(12), 0x81ab_cdef, "user id in the low 24 bits, mask in the high 8");
        assert_eq!(word(13), 1 << 24, "SBT offset 0, TRIANGLE_FACING_CULL_DISABLE");
        assert_eq!(u64::from_le_bytes(r[56..64].try_into().unwrap()), 0x1122_3344_5566_7788);
        assert_eq!(u64::from_le_bytes(r[120..128].try_into().unwrap()), 0x10);
    }

    // Check that records read back update transform, user id and mask only,
    // and that a short read-back is an error.
    #[test]
    fn records_read_back_into_the_scene() {
        let s = scene();
        let mut r = instance_records(&s, &[]);
        r[64 + 48..64 + 52].copy_from_slice(&(0x0200_0005u32).to_le_bytes());
        r[64..68].copy_from_slice(&2.5f32.to_le_bytes());
        let back = apply_records(&s, &r).unwrap();
        assert_eq!((back.instances[1].user_id, back.instances[1].mask, back.instances[1].transform[0]), (5, 2, 2.5));
        assert_eq!(back.instances[0], s.instances[0]);
        assert!(!back.instances[1].opaque && back.instances[1].aabbs.len() == 1);
        assert!(apply_records(&s, &r[..100]).is_err());
    }
}
