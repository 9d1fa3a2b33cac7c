//! One Vulkan instance + logical device with a compute queue, created once
//! and reused for many dispatches. Picks a discrete GPU when there is one,
//! else any device (Mesa's lavapipe in CI); `XIR_VULKAN_DEVICE=<substring>`
//! selects by name. Optional Khronos validation with `XIR_VULKAN_VALIDATION=1`.

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
}

impl Device {
    pub fn new() -> Result<Device, RunError> {
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
        Self::open(entry, instance)
    }

    /// Pick a device and create it; on failure the instance is destroyed here.
    fn open(entry: ash::Entry, instance: ash::Instance) -> Result<Device, RunError> {
        let fail = |instance: ash::Instance, e: RunError| {
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
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut query = vk::PhysicalDeviceFeatures2::default().push_next(&mut v11).push_next(&mut v12);
        // SAFETY: Vulkan 1.2 query with a valid chain.
        unsafe { instance.get_physical_device_features2(physical, &mut query) };
        let mut core = query.features;
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
            ..Default::default()
        };
        let (mut v11, mut v12) = (v11, v12);
        let mut enabled = vk::PhysicalDeviceFeatures2::default().features(core).push_next(&mut v11).push_next(&mut v12);
        let info = vk::DeviceCreateInfo::default().queue_create_infos(&queue_info).push_next(&mut enabled);
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
        })
    }

    /// A memory type index with all of `flags` among `type_bits`.
    pub(crate) fn memory_type(&self, type_bits: u32, flags: vk::MemoryPropertyFlags) -> Option<u32> {
        (0..self.memory.memory_type_count)
            .find(|&i| type_bits & (1 << i) != 0 && self.memory.memory_types[i as usize].property_flags.contains(flags))
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: every object created from the device is destroyed by the
        // dispatch that created it before it returns.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
        let _ = &self.entry;
        let _ = self.physical;
    }
}
