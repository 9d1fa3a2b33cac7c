//! The subgroup contract (docs/vulkan.md, "Subgroups"): what the device's
//! subgroups are (size, stages, operations), the features device creation
//! enables for them (`shaderSubgroupExtendedTypes`, maximal reconvergence),
//! and the check before every dispatch that the device supports, in
//! compute, each subgroup operation class the module declares.
//!
//! Why the size matters: the backend emits SPIR-V 1.5 and creates pipelines
//! without `ALLOW_VARYING_SUBGROUP_SIZE`, so a compute shader's
//! `SubgroupSize` is the device's `subgroupSize`; warp results depend on it,
//! so the interpreter is run at [`Subgroups::size`] when it is compared with
//! the device (`xir::interp::Options::warp_size`).

use std::ffi::CStr;

use ash::vk;
use xir_spirv::{Feature, FeatureSet};

use super::RunError;

/// The device extension whose feature the `MaximallyReconvergesKHR` mode needs.
pub(crate) const MAXIMAL_RECONVERGENCE: &CStr = c"VK_KHR_shader_maximal_reconvergence";

/// `VkPhysicalDeviceSubgroupProperties` of the device, and the subgroup
/// features it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subgroups {
    /// `subgroupSize`: the lanes of one subgroup (a compute shader's `SubgroupSize`).
    pub size: u32,
    /// Whether `supportedStages` has COMPUTE (no subgroup operation runs in a kernel without it).
    pub compute: bool,
    /// `supportedOperations`.
    pub operations: vk::SubgroupFeatureFlags,
    /// `shaderSubgroupExtendedTypes` (Vulkan 1.2).
    pub extended_types: bool,
    /// `shaderMaximalReconvergence` (and its extension).
    pub maximal_reconvergence: bool,
}

impl Subgroups {
    /// Query the physical device (`extended_types` from the Vulkan 1.2 features already read).
    pub(crate) fn probe(
        instance: &ash::Instance,
        physical: vk::PhysicalDevice,
        has_ext: impl Fn(&CStr) -> bool,
        extended_types: bool,
    ) -> Subgroups {
        let mut props = vk::PhysicalDeviceSubgroupProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
        // SAFETY: Vulkan 1.1 instance query with a valid chain.
        unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
        let mut maximal = false;
        if has_ext(MAXIMAL_RECONVERGENCE) {
            let mut mr = vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR::default();
            let mut query = vk::PhysicalDeviceFeatures2::default().push_next(&mut mr);
            // SAFETY: the extension is supported, so its structure may be chained.
            unsafe { instance.get_physical_device_features2(physical, &mut query) };
            maximal = mr.shader_maximal_reconvergence == vk::TRUE;
        }
        Subgroups {
            size: props.subgroup_size,
            compute: props.supported_stages.contains(vk::ShaderStageFlags::COMPUTE),
            operations: props.supported_operations,
            extended_types,
            maximal_reconvergence: maximal,
        }
    }

    /// The subgroup [`Feature`]s of this device: an operation class counts
    /// only when compute is among the supported stages.
    pub fn features(&self) -> FeatureSet {
        use vk::SubgroupFeatureFlags as S;
        let op = |f: S| self.compute && self.operations.contains(f);
        [
            (Feature::SubgroupBasic, op(S::BASIC)),
            (Feature::SubgroupVote, op(S::VOTE)),
            (Feature::SubgroupArithmetic, op(S::ARITHMETIC)),
            (Feature::SubgroupBallot, op(S::BALLOT)),
            (Feature::SubgroupShuffle, op(S::SHUFFLE)),
            (Feature::SubgroupExtendedTypes, self.compute && self.extended_types),
            (Feature::MaximalReconvergence, self.maximal_reconvergence),
        ]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(f, _)| f)
        .collect()
    }

    /// The extension and feature structure device creation chains for
    /// maximal reconvergence (`None` when the device lacks it).
    pub(crate) fn enable(
        &self,
        ext_names: &mut Vec<*const std::ffi::c_char>,
    ) -> Option<vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR<'static>> {
        if !self.maximal_reconvergence {
            return None;
        }
        ext_names.push(MAXIMAL_RECONVERGENCE.as_ptr());
        Some(vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR::default().shader_maximal_reconvergence(true))
    }
}

/// The subgroup features a module needs: its subgroup capabilities (one
/// operation class each), and maximal reconvergence when it declares the
/// `MaximallyReconvergesKHR` mode.
pub fn required(words: &[u32]) -> FeatureSet {
    use rspirv::spirv::{ExecutionMode, Op};
    let subgroup = [
        Feature::SubgroupBasic,
        Feature::SubgroupVote,
        Feature::SubgroupArithmetic,
        Feature::SubgroupBallot,
        Feature::SubgroupShuffle,
    ];
    let mut need: FeatureSet =
        FeatureSet::from_capabilities(xir_spirv::capabilities(words)).iter().filter(|f| subgroup.contains(f)).collect();
    if let Ok(m) = rspirv::dr::load_words(words) {
        let maximal = m.execution_modes.iter().any(|i| {
            i.class.opcode == Op::ExecutionMode
                && i.operands.get(1)
                    == Some(&rspirv::dr::Operand::ExecutionMode(ExecutionMode::MaximallyReconvergesKHR))
        });
        if maximal {
            need.insert(Feature::MaximalReconvergence);
        }
    }
    need
}

/// Before a dispatch: refuse a module whose subgroup operations the device
/// does not support in compute (or did not enable), naming each missing one
/// and the device's subgroup size. `shaderSubgroupExtendedTypes` is not
/// read back from the words (no capability shows it): the compilation for
/// the device (`CompileOptions::device_features`) checks it.
pub(crate) fn check(device: &super::Device, words: &[u32]) -> Result<(), RunError> {
    let need = required(words);
    let missing: Vec<&str> = need.missing_from(&device.enabled).into_iter().map(|f| f.vulkan_name()).collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(RunError::Feature(format!(
        "the kernel uses subgroup operations that {} (subgroup size {}) does not support in compute shaders: {}",
        device.name,
        device.subgroups.size,
        missing.join(", ")
    )))
}
