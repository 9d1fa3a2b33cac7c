//! Ray queries on a real Vulkan device (the runner has no acceleration
//! structures, so this test builds its own with `VK_KHR_acceleration_structure`):
//! a bottom-level structure of two non-opaque triangles where the farther one
//! comes first and overlaps the nearer one, one instance with a translation,
//! then the closest-hit and any-hit kernel compiled through the `spirv`
//! pipeline, compared with the interpreter (primitive ids and any-hit flags
//! exactly, `t` within 4 ULP: hardware intersection is not bit-exact). A
//! premature committed read would report the farther primitive.
//!
//! On a device without `rayQuery` (lavapipe) the test prints why and returns.

mod common;

use ash::{khr, vk};
use common::*;
use xir::pass::PassRegistry;
use xir::pipeline::{Loader, PassManager, RunOptions};
use xir_spirv::PropertyKind;

const KERNEL: &str = r#"
kernel @trace(%scene: accel, %t_out: buffer<f32>, %hit_out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %xf = cast.static %x : f32
  %h = mul %xf, f32 0.5 : f32
  %ox = sub %h, f32 1.75 : f32
  %origin = aggregate %ox, f32 0.0, f32 10.0 : array<f32, 3>
  %ray = aggregate %origin, f32 0.0, array<f32, 3> [0.0, 0.0, -1.0], f32 100.0 : struct<align 16>{array<f32, 3>, f32, array<f32, 3>, f32}
  %hit = ray.trace_closest %scene, %ray, u32 255 : struct<align 8>{u32, u32, vec<f32, 2>, f32}
  %t = extract %hit, u32 3 : f32
  buffer.write %t_out, %x, %t
  %prim = extract %hit, u32 1 : u32
  %any = ray.trace_any %scene, %ray, u32 255 : bool
  %anyu = cast.static %any : u32
  %k = shl %prim, u32 4 : u32
  %r = bit_or %k, %anyu : u32
  buffer.write %hit_out, %x, %r
  return
}
"#;

/// Object-space triangles (farther first), the instance translation in z.
const TRIANGLES: [[[f32; 3]; 3]; 2] =
    [[[-1.0, -1.0, -1.0], [1.0, -1.0, -1.0], [0.0, 1.0, -1.0]], [[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]]];
const TZ: f32 = 2.0;

fn registry() -> PassRegistry {
    let mut reg = PassRegistry::new();
    reg.declare_hook("callable_specialization", "SPIR-V callable policy");
    xir_passes::register_all(&mut reg);
    xir_spirv::register_passes(&mut reg);
    reg.bind_hook("callable_specialization", "callable_specialization").expect("backend pass registered");
    reg
}

fn scene_json() -> String {
    format!(
        r#"{{"instances": [{{"opaque": false, "transform": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, {TZ}], "triangles": {TRIANGLES:?}}}]}}"#
    )
}

struct Gpu {
    instance: ash::Instance,
    device: ash::Device,
    physical: vk::PhysicalDevice,
    queue: vk::Queue,
    family: u32,
    memory: vk::PhysicalDeviceMemoryProperties,
    accel: khr::acceleration_structure::Device,
    pool: vk::CommandPool,
}

/// A device with ray query, or why there is none.
fn open() -> Result<Gpu, String> {
    let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("no Vulkan loader: {e}"))?;
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
    let instance = unsafe { entry.create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None) }
        .map_err(|e| format!("vkCreateInstance: {e}"))?;
    let needed = [khr::acceleration_structure::NAME, khr::ray_query::NAME, khr::deferred_host_operations::NAME];
    for physical in unsafe { instance.enumerate_physical_devices() }.map_err(|e| e.to_string())? {
        let exts = unsafe { instance.enumerate_device_extension_properties(physical) }.map_err(|e| e.to_string())?;
        let has = |n: &std::ffi::CStr| exts.iter().any(|e| e.extension_name_as_c_str() == Ok(n));
        if !needed.iter().all(|n| has(n)) {
            continue;
        }
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let Some(family) = families.iter().position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE)) else {
            continue;
        };
        let family = family as u32;
        let prio = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&prio)];
        let ext_ptrs: Vec<_> = needed.iter().map(|n| n.as_ptr()).collect();
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
        let mut asf = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default().acceleration_structure(true);
        let mut rq = vk::PhysicalDeviceRayQueryFeaturesKHR::default().ray_query(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&ext_ptrs)
            .push_next(&mut v12)
            .push_next(&mut asf)
            .push_next(&mut rq);
        let device =
            unsafe { instance.create_device(physical, &info, None) }.map_err(|e| format!("vkCreateDevice: {e}"))?;
        let queue = unsafe { device.get_device_queue(family, 0) };
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        let accel = khr::acceleration_structure::Device::new(&instance, &device);
        let pool = unsafe {
            device.create_command_pool(&vk::CommandPoolCreateInfo::default().queue_family_index(family), None)
        }
        .map_err(|e| e.to_string())?;
        return Ok(Gpu { instance, device, physical, queue, family, memory, accel, pool });
    }
    Err("no device with VK_KHR_acceleration_structure + VK_KHR_ray_query".into())
}

impl Gpu {
    /// A host-visible, coherent buffer holding `data` (zero-filled to `size`).
    fn buffer(&self, size: u64, usage: vk::BufferUsageFlags, data: &[u8]) -> (vk::Buffer, vk::DeviceMemory) {
        let usage = usage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let b =
            unsafe { self.device.create_buffer(&vk::BufferCreateInfo::default().size(size.max(4)).usage(usage), None) }
                .unwrap();
        let req = unsafe { self.device.get_buffer_memory_requirements(b) };
        let want = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let ty = (0..self.memory.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && self.memory.memory_types[i as usize].property_flags.contains(want)
            })
            .expect("a host-visible memory type");
        let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let info =
            vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty).push_next(&mut flags);
        let mem = unsafe { self.device.allocate_memory(&info, None) }.unwrap();
        unsafe { self.device.bind_buffer_memory(b, mem, 0) }.unwrap();
        let p = unsafe { self.device.map_memory(mem, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }.unwrap();
        unsafe {
            std::ptr::write_bytes(p as *mut u8, 0, req.size as usize);
            std::ptr::copy_nonoverlapping(data.as_ptr(), p as *mut u8, data.len());
            self.device.unmap_memory(mem);
        }
        (b, mem)
    }

    fn address(&self, b: vk::Buffer) -> u64 {
        unsafe { self.device.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(b)) }
    }

    fn read(&self, mem: vk::DeviceMemory, len: usize) -> Vec<u8> {
        let p = unsafe { self.device.map_memory(mem, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }.unwrap();
        let out = unsafe { std::slice::from_raw_parts(p as *const u8, len) }.to_vec();
        unsafe { self.device.unmap_memory(mem) };
        out
    }

    /// Record with `f` and run one command buffer to completion.
    fn submit(&self, f: impl FnOnce(vk::CommandBuffer)) {
        let info = vk::CommandBufferAllocateInfo::default().command_pool(self.pool).command_buffer_count(1);
        let cb = unsafe { self.device.allocate_command_buffers(&info) }.unwrap()[0];
        unsafe { self.device.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default()) }.unwrap();
        f(cb);
        unsafe {
            self.device.end_command_buffer(cb).unwrap();
            let cbs = [cb];
            self.device
                .queue_submit(self.queue, &[vk::SubmitInfo::default().command_buffers(&cbs)], vk::Fence::null())
                .unwrap();
            self.device.queue_wait_idle(self.queue).unwrap();
        }
    }

    /// Build one acceleration structure of `geometry` with `count` primitives.
    fn build(
        &self,
        ty: vk::AccelerationStructureTypeKHR,
        geometry: vk::AccelerationStructureGeometryKHR,
        count: u32,
    ) -> vk::AccelerationStructureKHR {
        let geometries = [geometry];
        let mut info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(ty)
            .flags(vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .geometries(&geometries);
        let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
        unsafe {
            self.accel.get_acceleration_structure_build_sizes(
                vk::AccelerationStructureBuildTypeKHR::DEVICE,
                &info,
                &[count],
                &mut sizes,
            )
        };
        let (storage, _) = self.buffer(
            sizes.acceleration_structure_size,
            vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR,
            &[],
        );
        let create = vk::AccelerationStructureCreateInfoKHR::default()
            .buffer(storage)
            .size(sizes.acceleration_structure_size)
            .ty(ty);
        let a = unsafe { self.accel.create_acceleration_structure(&create, None) }.unwrap();
        let (scratch, _) = self.buffer(sizes.build_scratch_size + 256, vk::BufferUsageFlags::STORAGE_BUFFER, &[]);
        let scratch_addr = self.address(scratch).div_ceil(256) * 256;
        info = info
            .dst_acceleration_structure(a)
            .scratch_data(vk::DeviceOrHostAddressKHR { device_address: scratch_addr });
        let range = [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(count)];
        self.submit(|cb| unsafe { self.accel.cmd_build_acceleration_structures(cb, &[info], &[&range]) });
        a
    }
}

fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

// Check the closest-hit loop and the any-hit single proceed on a device
// against the interpreter (see the module doc).
#[test]
fn closest_and_any_hit_match_the_interpreter_on_a_ray_query_device() {
    let gpu = match open() {
        Ok(g) => g,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let name = unsafe { gpu.instance.get_physical_device_properties(gpu.physical) };
    eprintln!("device: {:?}", name.device_name_as_c_str());
    // The interpreter's answer.
    let module = parse(KERNEL);
    let k = kernel_of(&module);
    let inputs = format!(
        r#"{{"args": {{"scene": {}, "t_out": {{"fill": 0, "len": 8}}, "hit_out": {{"fill": 0, "len": 8}}}}}}"#,
        scene_json()
    );
    let want = xir::interp::run_kernel(&module, k, &xir::interp::Inputs::from_json(&inputs).unwrap()).unwrap();
    // Compile through the shipped pipeline.
    let reg = registry();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let pipeline =
        Loader::new(&reg).with_search_dir(std::path::PathBuf::from(format!("{root}/pipelines"))).load("spirv").unwrap();
    let mut m = module.clone();
    PassManager::new(&pipeline, RunOptions::default()).run(&mut m, &mut std::io::sink()).unwrap();
    let out = xir_spirv::compile(&m, kernel_of(&m), &opts(0, false)).unwrap();
    // Geometry: one BLAS (non-opaque triangles), one translated instance.
    let verts: Vec<f32> = TRIANGLES.iter().flatten().flatten().copied().collect();
    let (vb, _) = gpu.buffer(
        (verts.len() * 4) as u64,
        vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR,
        &bytes_f32(&verts),
    );
    let tris = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
        .vertex_format(vk::Format::R32G32B32_SFLOAT)
        .vertex_data(vk::DeviceOrHostAddressConstKHR { device_address: gpu.address(vb) })
        .vertex_stride(12)
        .max_vertex(verts.len() as u32 / 3 - 1)
        .index_type(vk::IndexType::NONE_KHR);
    let geometry = vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
        .geometry(vk::AccelerationStructureGeometryDataKHR { triangles: tris });
    let blas = gpu.build(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL, geometry, TRIANGLES.len() as u32);
    let blas_addr = unsafe {
        gpu.accel.get_acceleration_structure_device_address(
            &vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(blas),
        )
    };
    let instance = vk::AccelerationStructureInstanceKHR {
        transform: vk::TransformMatrixKHR { matrix: [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, TZ] },
        instance_custom_index_and_mask: vk::Packed24_8::new(0, 0xff),
        instance_shader_binding_table_record_offset_and_flags: vk::Packed24_8::new(0, 0),
        acceleration_structure_reference: vk::AccelerationStructureReferenceKHR { device_handle: blas_addr },
    };
    let inst_bytes = unsafe {
        std::slice::from_raw_parts(
            &instance as *const _ as *const u8,
            std::mem::size_of::<vk::AccelerationStructureInstanceKHR>(),
        )
    };
    let (ib, _) = gpu.buffer(
        inst_bytes.len() as u64,
        vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR,
        inst_bytes,
    );
    let insts = vk::AccelerationStructureGeometryInstancesDataKHR::default()
        .data(vk::DeviceOrHostAddressConstKHR { device_address: gpu.address(ib) });
    let geometry = vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::INSTANCES)
        .geometry(vk::AccelerationStructureGeometryDataKHR { instances: insts });
    let tlas = gpu.build(vk::AccelerationStructureTypeKHR::TOP_LEVEL, geometry, 1);
    // Descriptors from the ABI: the accel, then the two buffers.
    let d = &gpu.device;
    let descs: Vec<_> = out.abi.descriptors().collect();
    let bindings: Vec<_> = descs
        .iter()
        .map(|p| {
            let ty = match p.kind {
                PropertyKind::AccelerationStructure { .. } => vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
                _ => vk::DescriptorType::STORAGE_BUFFER,
            };
            vk::DescriptorSetLayoutBinding::default()
                .binding(p.binding)
                .descriptor_type(ty)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        })
        .collect();
    let layout = unsafe {
        d.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)
    }
    .unwrap();
    let sizes = [
        vk::DescriptorPoolSize { ty: vk::DescriptorType::ACCELERATION_STRUCTURE_KHR, descriptor_count: 1 },
        vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 4 },
    ];
    let pool = unsafe {
        d.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None)
    }
    .unwrap();
    let layouts = [layout];
    let set = unsafe {
        d.allocate_descriptor_sets(
            &vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts),
        )
    }
    .unwrap()[0];
    let (t_buf, t_mem) = gpu.buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER, &[]);
    let (h_buf, h_mem) = gpu.buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER, &[]);
    let tlases = [tlas];
    let mut as_write = vk::WriteDescriptorSetAccelerationStructureKHR::default().acceleration_structures(&tlases);
    let infos: Vec<[vk::DescriptorBufferInfo; 1]> = [t_buf, h_buf]
        .iter()
        .map(|&b| [vk::DescriptorBufferInfo { buffer: b, offset: 0, range: vk::WHOLE_SIZE }])
        .collect();
    let accel_binding = descs
        .iter()
        .find(|p| matches!(p.kind, PropertyKind::AccelerationStructure { .. }))
        .expect("an accel descriptor")
        .binding;
    let mut w = vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(accel_binding)
        .descriptor_type(vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)
        .push_next(&mut as_write);
    w.descriptor_count = 1;
    let mut writes = vec![w];
    for (p, info) in descs.iter().filter(|p| p.kind == PropertyKind::StorageBuffer).zip(&infos) {
        writes.push(
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(p.binding)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(info),
        );
    }
    unsafe { d.update_descriptor_sets(&writes, &[]) };
    let ranges =
        [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).size(out.abi.push_constant_size)];
    let playout = unsafe {
        d.create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts).push_constant_ranges(&ranges),
            None,
        )
    }
    .unwrap();
    let shader =
        unsafe { d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&out.words), None) }.unwrap();
    let entry = c"main";
    let stage =
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(shader).name(entry);
    let pipe = unsafe {
        d.create_compute_pipelines(
            vk::PipelineCache::null(),
            &[vk::ComputePipelineCreateInfo::default().stage(stage).layout(playout)],
            None,
        )
    }
    .map_err(|e| e.1)
    .unwrap()[0];
    let mut push = vec![0u8; out.abi.push_constant_size as usize];
    push[..12].copy_from_slice(&[8u32, 1, 1].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>());
    gpu.submit(|cb| unsafe {
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipe);
        d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, playout, 0, &[set], &[]);
        d.cmd_push_constants(cb, playout, vk::ShaderStageFlags::COMPUTE, 0, &push);
        d.cmd_dispatch(cb, 1, 1, 1);
    });
    let t: Vec<f32> = gpu.read(t_mem, 32).chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let hits: Vec<u32> = gpu.read(h_mem, 32).chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let want_t: Vec<f32> =
        want.buffers["t_out"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
    let want_hits: Vec<u32> =
        want.buffers["hit_out"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
    eprintln!("device t {t:?} hits {hits:x?}\ninterp t {want_t:?} hits {want_hits:x?}");
    assert_eq!(hits, want_hits, "primitive ids / any-hit flags differ from the interpreter");
    for (a, b) in t.iter().zip(&want_t) {
        assert!((a.to_bits() as i64 - b.to_bits() as i64).abs() <= 4, "t {a} vs {b}");
    }
    // The scene makes the test meaningful: some rays hit the nearer,
    // later primitive (1), some miss.
    assert!(want_hits.contains(&(1 << 4 | 1)) && want_hits.contains(&0xffff_fff0), "{want_hits:x?}");
    let _ = gpu.family;
}
