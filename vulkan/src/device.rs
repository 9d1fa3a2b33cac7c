//! One Vulkan instance + logical device with a compute queue, created once
//! and reused for many dispatches. Picks a discrete GPU when there is one,
//! else any device (Mesa's lavapipe in CI); `XIR_VULKAN_DEVICE=<substring>`
//! selects by name. Optional Khronos validation with `XIR_VULKAN_VALIDATION=1`.
//! [`Device::with_printf`] opens the device with the validation layer's
//! debug printf and a messenger capturing its messages (`printf.rs`), for
//! kernels that `print`.

use std::ffi::{c_char, CStr, CString};

use ash::vk;

use super::RunError;

pub struct Device {
    // Field order is drop order for the raw handles we own; see `Drop`.
    pub(crate) entry: ash::Entry,
    pub(crate) instance: ash::Instance,
    pub(crate) physical: vk::PhysicalDevice,
    pub(crate) device: ash::Device,
    pub(crate) queue: vk::Queue,
    pub(crate) queue_family: u32,
    pub(crate) memory: vk::PhysicalDeviceMemoryProperties,
    /// Nanoseconds per timestamp tick (0 when timestamps are unsupported).
    pub(crate) timestamp_period: f32,
    pub name: String,
    pub driver: String,
    /// The optional features this logical device was created with (the
    /// device snapshot artifacts and compilations are checked against).
    pub enabled: xir_spirv::FeatureSet,
    /// `maxUniformBufferRange`: the largest constant-data uniform block the
    /// runner binds (public so tests can lower it to check the refusal).
    pub max_uniform_buffer_range: u32,
    /// The debug-printf capture (`Device::with_printf`); destroyed before the instance.
    pub(crate) printf: Option<super::printf::Capture>,
    /// Whether ray query and acceleration structures are enabled, with their limits.
    pub(crate) ray: super::accel::RayFeatures,
    /// The device's subgroups (size, stages, operations): what the interpreter
    /// is compared at and what every dispatch is checked against (`subgroup.rs`).
    pub subgroups: super::subgroup::Subgroups,
    /// The descriptor limits every dispatch is checked against (`bindless.rs`); a test may lower one.
    pub descriptor_limits: super::bindless::DescriptorLimits,
    /// The work-group, memory, image and push-constant limits every dispatch is checked against
    /// (`limits.rs`); a test may lower one.
    pub limits: super::limits::DispatchLimits,
    /// The sampler heap's immutable samplers, created on first use (`sampler.rs`), destroyed in `Drop`.
    pub(crate) samplers: std::sync::Mutex<Vec<vk::Sampler>>,
    /// Dispatches recorded per run, one after the other, each timed (benchmarks: GPU time as the
    /// median over several dispatches without re-uploading; the outputs are those after the last
    /// one, so a kernel that updates a buffer in place applies the update that many times). 1 by
    /// default.
    pub timed_dispatches: u32,
}

impl Device {
    pub fn new() -> Result<Device, RunError> {
        // First, before any loader call of this process: the layer settings
        // may set an environment variable, which no other thread may be
        // reading then (every device creation passes here or `with_printf`).
        let _ = super::printf::prepare_settings();
        // SAFETY: loading the system Vulkan loader; failure is reported.
        let entry =
            unsafe { ash::Entry::load() }.map_err(|e| RunError::NoVulkan(format!("cannot load libvulkan: {e}")))?;
        let app_name = CString::new("xir-run").expect("static name");
        let app = vk::ApplicationInfo::default().application_name(&app_name).api_version(vk::API_VERSION_1_2);
        let validation = CString::new("VK_LAYER_KHRONOS_validation").expect("static name");
        let layers: Vec<*const c_char> = if std::env::var("XIR_VULKAN_VALIDATION").as_deref() == Ok("1") {
            vec![validation.as_ptr()]
        } else {
            vec![]
        };
        let info = vk::InstanceCreateInfo::default().application_info(&app).enabled_layer_names(&layers);
        // SAFETY: valid create info; the instance is destroyed in Drop.
        let instance = unsafe { entry.create_instance(&info, None) }
            .map_err(|e| RunError::NoVulkan(format!("vkCreateInstance: {e}")))?;
        Self::open(entry, instance, None)
    }

    /// A device whose instance has the validation layer's debug printf and a
    /// messenger capturing it (`printf.rs`): what printing kernels run on.
    /// Refused with [`RunError::Printf`] when the layer is absent or disables
    /// debug printf on this device.
    pub fn with_printf() -> Result<Device, RunError> {
        let settings = super::printf::prepare_settings().map_err(|e| RunError::Printf(e.to_string()))?;
        // SAFETY: loading the system Vulkan loader; failure is reported.
        let entry =
            unsafe { ash::Entry::load() }.map_err(|e| RunError::NoVulkan(format!("cannot load libvulkan: {e}")))?;
        let (instance, capture) = super::printf::create_instance(&entry, settings)?;
        let device = Self::open(entry, instance, Some(capture))?;
        match device.printf.as_ref().and_then(|c| c.setup_problem()) {
            Some(problem) => Err(RunError::Printf(format!("on {}: {problem}", device.name))),
            None => Ok(device),
        }
    }

    /// Pick a device and create it; on failure the instance is destroyed here.
    fn open(
        entry: ash::Entry,
        instance: ash::Instance,
        printf: Option<super::printf::Capture>,
    ) -> Result<Device, RunError> {
        let printf = std::cell::Cell::new(printf);
        let fail = |instance: ash::Instance, e: RunError| {
            // The messenger goes before its instance.
            drop(printf.take());
            // SAFETY: nothing else refers to the instance.
            unsafe { instance.destroy_instance(None) };
            Err(e)
        };
        // SAFETY: instance is valid.
        let physicals = match unsafe { instance.enumerate_physical_devices() } {
            Ok(p) => p,
            Err(e) => return fail(instance, RunError::NoVulkan(format!("vkEnumeratePhysicalDevices: {e}"))),
        };
        let wanted = std::env::var("XIR_VULKAN_DEVICE").ok();
        let mut candidates: Vec<(vk::PhysicalDevice, vk::PhysicalDeviceProperties, u32)> = Vec::new();
        for p in physicals {
            // SAFETY: p comes from this instance.
            let props = unsafe { instance.get_physical_device_properties(p) };
            let families = unsafe { instance.get_physical_device_queue_family_properties(p) };
            if let Some(q) = families.iter().position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE)) {
                candidates.push((p, props, q as u32));
            }
        }
        let name_of = |props: &vk::PhysicalDeviceProperties| {
            props.device_name_as_c_str().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default()
        };
        let pick = match &wanted {
            Some(w) => candidates.iter().find(|(_, props, _)| name_of(props).contains(w.as_str())),
            None => candidates
                .iter()
                .find(|(_, props, _)| props.device_type == vk::PhysicalDeviceType::DISCRETE_GPU)
                .or(candidates.first()),
        };
        let Some(&(physical, props, queue_family)) = pick else {
            let msg = match wanted {
                Some(w) => format!("no Vulkan device with compute matches XIR_VULKAN_DEVICE={w}"),
                None => "no Vulkan device with a compute queue".to_string(),
            };
            return fail(instance, RunError::NoVulkan(msg));
        };
        let priorities = [1.0f32];
        let queue_info =
            [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&priorities)];
        // Enable every optional shader feature the device supports (narrow
        // and wide arithmetic, 8/16-bit storage, 64-bit atomics, ...): a
        // kernel declaring a capability whose feature is not enabled has
        // undefined behaviour (seen: f16 conversions skipped on NVIDIA).
        // Each bit is enabled independently; robust buffer access stays off
        // so out-of-bounds behaviour is not silently changed.
        // SAFETY: physical comes from this instance.
        let exts = unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
        let has_ext = |n: &CStr| exts.iter().any(|e| e.extension_name_as_c_str() == Ok(n));
        let ray_exts = super::accel::DEVICE_EXTENSIONS.iter().all(|n| has_ext(n));
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut asf = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default();
        let mut rqf = vk::PhysicalDeviceRayQueryFeaturesKHR::default();
        let mut query = vk::PhysicalDeviceFeatures2::default().push_next(&mut v11).push_next(&mut v12);
        if ray_exts {
            // Only structures of supported extensions may be chained.
            query = query.push_next(&mut asf).push_next(&mut rqf);
        }
        // SAFETY: Vulkan 1.2 query with a valid chain.
        unsafe { instance.get_physical_device_features2(physical, &mut query) };
        let mut core = query.features;
        let ray = super::accel::RayFeatures::probe(&instance, physical, ray_exts, &asf, &rqf, &v12);
        core.robust_buffer_access = vk::FALSE;
        let v11 = vk::PhysicalDeviceVulkan11Features {
            storage_buffer16_bit_access: v11.storage_buffer16_bit_access,
            uniform_and_storage_buffer16_bit_access: v11.uniform_and_storage_buffer16_bit_access,
            storage_push_constant16: v11.storage_push_constant16,
            variable_pointers_storage_buffer: v11.variable_pointers_storage_buffer,
            variable_pointers: v11.variable_pointers,
            ..Default::default()
        };
        let v12 = vk::PhysicalDeviceVulkan12Features {
            storage_buffer8_bit_access: v12.storage_buffer8_bit_access,
            uniform_and_storage_buffer8_bit_access: v12.uniform_and_storage_buffer8_bit_access,
            storage_push_constant8: v12.storage_push_constant8,
            shader_buffer_int64_atomics: v12.shader_buffer_int64_atomics,
            shader_shared_int64_atomics: v12.shader_shared_int64_atomics,
            shader_float16: v12.shader_float16,
            shader_int8: v12.shader_int8,
            vulkan_memory_model: v12.vulkan_memory_model,
            vulkan_memory_model_device_scope: v12.vulkan_memory_model_device_scope,
            runtime_descriptor_array: v12.runtime_descriptor_array,
            descriptor_binding_partially_bound: v12.descriptor_binding_partially_bound,
            descriptor_binding_variable_descriptor_count: v12.descriptor_binding_variable_descriptor_count,
            shader_storage_buffer_array_non_uniform_indexing: v12.shader_storage_buffer_array_non_uniform_indexing,
            shader_sampled_image_array_non_uniform_indexing: v12.shader_sampled_image_array_non_uniform_indexing,
            shader_subgroup_extended_types: v12.shader_subgroup_extended_types,
            buffer_device_address: ray.enabled() as vk::Bool32,
            ..Default::default()
        };
        let (mut v11, mut v12) = (v11, v12);
        // VK_KHR_shader_non_semantic_info (core in 1.3) admits the
        // `NonSemantic.DebugPrintf` set that `print` lowers to.
        let non_semantic = c"VK_KHR_shader_non_semantic_info";
        let has_non_semantic = has_ext(non_semantic);
        let mut ext_names: Vec<*const c_char> = if has_non_semantic { vec![non_semantic.as_ptr()] } else { vec![] };
        let mut enabled_set = enabled_features(&instance, physical, &core, &v11, &v12, has_non_semantic);
        // Subgroups (`subgroup.rs`): each operation class supported in compute, extended
        // types, and maximal reconvergence with its extension.
        let subgroups = super::subgroup::Subgroups::probe(
            &instance,
            physical,
            has_ext,
            v12.shader_subgroup_extended_types == vk::TRUE,
        );
        enabled_set = enabled_set.union(subgroups.features());
        let mut reconvergence = subgroups.enable(&mut ext_names);
        // Ray query (`accel.rs`): both extensions, their feature structs and bufferDeviceAddress, or none.
        let (mut asf, mut rqf) = ray.enable(&mut ext_names, &mut enabled_set);
        // Float atomics (`float_atomics.rs`): each supported buffer / shared bit.
        let float_atomics = super::float_atomics::FloatAtomics::probe(&instance, physical, has_ext);
        let (mut fa1, mut fa2) = float_atomics.enable(&mut ext_names, &mut enabled_set);
        // The shader clock (VK_KHR_shader_clock): `clock` reads it at
        // Subgroup scope, which every device with the extension has.
        let shader_clock = c"VK_KHR_shader_clock";
        let mut clock = has_ext(shader_clock).then(|| {
            let mut f = vk::PhysicalDeviceShaderClockFeaturesKHR::default();
            let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f);
            // SAFETY: physical device from this instance; `f` outlives the call.
            unsafe { instance.get_physical_device_features2(physical, &mut f2) };
            vk::PhysicalDeviceShaderClockFeaturesKHR::default()
                .shader_subgroup_clock(f.shader_subgroup_clock == vk::TRUE)
        });
        if clock.as_ref().is_some_and(|f| f.shader_subgroup_clock == vk::TRUE) {
            ext_names.push(shader_clock.as_ptr());
            enabled_set.insert(xir_spirv::Feature::ShaderSubgroupClock);
        } else {
            clock = None;
        }
        let mut enabled = vk::PhysicalDeviceFeatures2::default().features(core).push_next(&mut v11).push_next(&mut v12);
        if ray.enabled() {
            enabled = enabled.push_next(&mut asf).push_next(&mut rqf);
        }
        if let Some(f) = fa1.as_mut() {
            enabled = enabled.push_next(f);
        }
        if let Some(f) = fa2.as_mut() {
            enabled = enabled.push_next(f);
        }
        if let Some(f) = reconvergence.as_mut() {
            enabled = enabled.push_next(f);
        }
        if let Some(f) = clock.as_mut() {
            enabled = enabled.push_next(f);
        }
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_info)
            .enabled_extension_names(&ext_names)
            .push_next(&mut enabled);
        // SAFETY: physical device and queue family come from this instance.
        let device = match unsafe { instance.create_device(physical, &info, None) } {
            Ok(d) => d,
            Err(e) => return fail(instance, RunError::NoVulkan(format!("vkCreateDevice: {e}"))),
        };
        // SAFETY: queue 0 of the family we created.
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let timestamps = families[queue_family as usize].timestamp_valid_bits > 0;
        let driver = {
            let mut driver_props = vk::PhysicalDeviceDriverProperties::default();
            let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver_props);
            // SAFETY: Vulkan 1.2 instance query with a valid chain.
            unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
            let c: &CStr = driver_props.driver_name_as_c_str().unwrap_or(c"");
            c.to_string_lossy().into_owned()
        };
        let descriptor_limits = super::bindless::DescriptorLimits::query(&instance, physical);
        Ok(Device {
            entry,
            instance,
            physical,
            device,
            queue,
            queue_family,
            memory,
            timestamp_period: if timestamps { props.limits.timestamp_period } else { 0.0 },
            name: name_of(&props),
            driver,
            enabled: enabled_set,
            max_uniform_buffer_range: props.limits.max_uniform_buffer_range,
            printf: printf.take(),
            ray,
            subgroups,
            descriptor_limits,
            limits: super::limits::DispatchLimits::from_vk(&props.limits),
            samplers: std::sync::Mutex::new(Vec::new()),
            timed_dispatches: 1,
        })
    }

    /// A memory type index with all of `flags` among `type_bits`.
    pub(crate) fn memory_type(&self, type_bits: u32, flags: vk::MemoryPropertyFlags) -> Option<u32> {
        (0..self.memory.memory_type_count)
            .find(|&i| type_bits & (1 << i) != 0 && self.memory.memory_types[i as usize].property_flags.contains(flags))
    }
}

/// The [`xir_spirv::FeatureSet`] of what device creation enables: each of the six
/// 8/16-bit bits on its own; the float-controls bits only when every enabled
/// float width has the property.
fn enabled_features(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    core: &vk::PhysicalDeviceFeatures,
    v11: &vk::PhysicalDeviceVulkan11Features,
    v12: &vk::PhysicalDeviceVulkan12Features,
    non_semantic: bool,
) -> xir_spirv::FeatureSet {
    use xir_spirv::Feature as F;
    let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p12);
    // SAFETY: Vulkan 1.2 instance query with a valid chain.
    unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
    let on = |b: vk::Bool32| b == vk::TRUE;
    let widths = |f16: vk::Bool32, f32: vk::Bool32, f64: vk::Bool32| {
        on(f32) && (!on(v12.shader_float16) || on(f16)) && (!on(core.shader_float64) || on(f64))
    };
    let bits = [
        (F::Int8, on(v12.shader_int8)),
        (F::Int16, on(core.shader_int16)),
        (F::Int64, on(core.shader_int64)),
        (F::Float16, on(v12.shader_float16)),
        (F::Float64, on(core.shader_float64)),
        (F::StorageBuffer8BitAccess, on(v12.storage_buffer8_bit_access)),
        (F::UniformAndStorageBuffer8BitAccess, on(v12.uniform_and_storage_buffer8_bit_access)),
        (F::StoragePushConstant8, on(v12.storage_push_constant8)),
        (F::StorageBuffer16BitAccess, on(v11.storage_buffer16_bit_access)),
        (F::UniformAndStorageBuffer16BitAccess, on(v11.uniform_and_storage_buffer16_bit_access)),
        (F::StoragePushConstant16, on(v11.storage_push_constant16)),
        (F::Int64Atomics, on(v12.shader_buffer_int64_atomics) && on(v12.shader_shared_int64_atomics)),
        (
            F::SignedZeroInfNanPreserve,
            widths(
                p12.shader_signed_zero_inf_nan_preserve_float16,
                p12.shader_signed_zero_inf_nan_preserve_float32,
                p12.shader_signed_zero_inf_nan_preserve_float64,
            ),
        ),
        (
            F::RoundingModeRte,
            widths(
                p12.shader_rounding_mode_rte_float16,
                p12.shader_rounding_mode_rte_float32,
                p12.shader_rounding_mode_rte_float64,
            ),
        ),
        (F::StorageImageReadWithoutFormat, on(core.shader_storage_image_read_without_format)),
        (F::StorageImageWriteWithoutFormat, on(core.shader_storage_image_write_without_format)),
        (F::ShaderNonSemanticInfo, non_semantic),
        (F::RuntimeDescriptorArray, on(v12.runtime_descriptor_array)),
        (F::StorageBufferArrayNonUniformIndexing, on(v12.shader_storage_buffer_array_non_uniform_indexing)),
        (F::SampledImageArrayNonUniformIndexing, on(v12.shader_sampled_image_array_non_uniform_indexing)),
        (F::SamplerAnisotropy, on(core.sampler_anisotropy)),
        (
            F::BufferHeapBindingFlags,
            on(v12.descriptor_binding_partially_bound) && on(v12.descriptor_binding_variable_descriptor_count),
        ),
    ];
    bits.into_iter().filter(|(_, b)| *b).map(|(f, _)| f).collect()
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: every object created from the device is destroyed by the
        // dispatch that created it before it returns.
        unsafe {
            let _ = self.device.device_wait_idle();
            if let Ok(samplers) = self.samplers.get_mut() {
                for s in samplers.drain(..) {
                    self.device.destroy_sampler(s, None);
                }
            }
            self.device.destroy_device(None);
            drop(self.printf.take());
            self.instance.destroy_instance(None);
        }
        let _ = &self.entry;
        let _ = self.physical;
    }
}
