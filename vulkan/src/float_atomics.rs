//! The float-atomic device features (VK_EXT_shader_atomic_float and
//! VK_EXT_shader_atomic_float2): queried when the extensions exist and
//! enabled bit by bit as the device reports them, so a kernel the planner
//! lowered to a native float atomic (`plan/float_atomics.rs`) runs. Image
//! float atomics stay off: no kernel uses them.

use std::ffi::{c_char, CStr};

use ash::vk;

use xir_spirv::{Feature, FeatureSet};

const FLOAT: &CStr = c"VK_EXT_shader_atomic_float";
const FLOAT2: &CStr = c"VK_EXT_shader_atomic_float2";

/// What the device supports of the buffer and shared float atomics.
#[derive(Clone, Copy, Default)]
pub(crate) struct FloatAtomics {
    float: Option<vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT<'static>>,
    /// Only with `float` (the second extension depends on the first).
    float2: Option<vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT<'static>>,
}

impl FloatAtomics {
    /// Query the feature structs of the extensions `has_ext` reports.
    pub(crate) fn probe(
        instance: &ash::Instance,
        physical: vk::PhysicalDevice,
        has_ext: impl Fn(&CStr) -> bool,
    ) -> FloatAtomics {
        if !has_ext(FLOAT) {
            return FloatAtomics::default();
        }
        let mut f1 = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
        let mut f2 = vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT::default();
        let with2 = has_ext(FLOAT2);
        let mut query = vk::PhysicalDeviceFeatures2::default().push_next(&mut f1);
        if with2 {
            query = query.push_next(&mut f2);
        }
        // SAFETY: Vulkan 1.2 query; only structs of supported extensions are chained.
        unsafe { instance.get_physical_device_features2(physical, &mut query) };
        let f1 = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT {
            p_next: std::ptr::null_mut(),
            shader_image_float32_atomics: vk::FALSE,
            shader_image_float32_atomic_add: vk::FALSE,
            sparse_image_float32_atomics: vk::FALSE,
            sparse_image_float32_atomic_add: vk::FALSE,
            ..f1
        };
        let f2 = vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT {
            p_next: std::ptr::null_mut(),
            shader_image_float32_atomic_min_max: vk::FALSE,
            sparse_image_float32_atomic_min_max: vk::FALSE,
            ..f2
        };
        FloatAtomics { float: Some(f1), float2: with2.then_some(f2) }
    }

    /// The feature bits the enabled structs grant.
    pub(crate) fn features(&self) -> FeatureSet {
        let on = |b: vk::Bool32| b == vk::TRUE;
        let mut bits = Vec::new();
        if let Some(f) = &self.float {
            bits.extend([
                (Feature::BufferFloat32Atomics, on(f.shader_buffer_float32_atomics)),
                (Feature::BufferFloat32AtomicAdd, on(f.shader_buffer_float32_atomic_add)),
                (Feature::BufferFloat64Atomics, on(f.shader_buffer_float64_atomics)),
                (Feature::BufferFloat64AtomicAdd, on(f.shader_buffer_float64_atomic_add)),
                (Feature::SharedFloat32Atomics, on(f.shader_shared_float32_atomics)),
                (Feature::SharedFloat32AtomicAdd, on(f.shader_shared_float32_atomic_add)),
                (Feature::SharedFloat64Atomics, on(f.shader_shared_float64_atomics)),
                (Feature::SharedFloat64AtomicAdd, on(f.shader_shared_float64_atomic_add)),
            ]);
        }
        if let Some(f) = &self.float2 {
            bits.extend([
                (Feature::BufferFloat16Atomics, on(f.shader_buffer_float16_atomics)),
                (Feature::BufferFloat16AtomicAdd, on(f.shader_buffer_float16_atomic_add)),
                (Feature::BufferFloat16AtomicMinMax, on(f.shader_buffer_float16_atomic_min_max)),
                (Feature::BufferFloat32AtomicMinMax, on(f.shader_buffer_float32_atomic_min_max)),
                (Feature::BufferFloat64AtomicMinMax, on(f.shader_buffer_float64_atomic_min_max)),
                (Feature::SharedFloat16Atomics, on(f.shader_shared_float16_atomics)),
                (Feature::SharedFloat16AtomicAdd, on(f.shader_shared_float16_atomic_add)),
                (Feature::SharedFloat16AtomicMinMax, on(f.shader_shared_float16_atomic_min_max)),
                (Feature::SharedFloat32AtomicMinMax, on(f.shader_shared_float32_atomic_min_max)),
                (Feature::SharedFloat64AtomicMinMax, on(f.shader_shared_float64_atomic_min_max)),
            ]);
        }
        bits.into_iter().filter(|(_, b)| *b).map(|(f, _)| f).collect()
    }

    /// Add the extensions and the feature bits; return the structs to chain
    /// into device creation (each `None` when its extension is absent).
    pub(crate) fn enable(
        &self,
        extensions: &mut Vec<*const c_char>,
        set: &mut FeatureSet,
    ) -> (
        Option<vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT<'static>>,
        Option<vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT<'static>>,
    ) {
        if self.float.is_some() {
            extensions.push(FLOAT.as_ptr());
        }
        if self.float2.is_some() {
            extensions.push(FLOAT2.as_ptr());
        }
        *set = set.union(self.features());
        (self.float, self.float2)
    }
}
