//! Target features: the optional Vulkan device features a compiled kernel
//! needs, as a small bit set.
//!
//! Two kinds of bits (see the reference, "Target features"):
//! - *capability-owned* bits map one-to-one to an `OpCapability`; they are
//!   reconciled from the final binary (`from_capabilities`), so an optimizer
//!   that removes the last use also removes the requirement;
//! - *emission-owned* bits (float atomics per storage class and width, the
//!   non-semantic-info extension of `print`, the accel descriptor ABI, the
//!   binding flags of the bindless buffer heap) are
//!   decided before or at emission and kept as emitted, whatever
//!   capabilities survive.
//!
//! The six 8/16-bit bits (`shaderFloat16`, `shaderInt8`,
//! `storageBuffer8BitAccess`, `uniformAndStorageBuffer8BitAccess`,
//! `storageBuffer16BitAccess`, `uniformAndStorageBuffer16BitAccess`) are
//! separate features, never a width bundle: the emitter declares `Int8`,
//! `Int16` and `Float16` only for narrow values it uses outside storage
//! (`emit/narrow_caps.rs`), so narrow storage is reconciled without narrow
//! arithmetic and the reverse; nothing strips capabilities from a finished
//! binary (the reference's rule), and no trim pass runs.
//!
//! `check_available` compares a requirement against a device snapshot and
//! names every missing feature.

use rspirv::spirv::Capability;
use serde::{Deserialize, Serialize};

/// One optional device feature.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Feature {
    /// `shaderInt8` (8-bit arithmetic).
    Int8,
    /// `shaderInt16`.
    Int16,
    /// `shaderInt64`.
    Int64,
    /// `shaderFloat16`.
    Float16,
    /// `shaderFloat64`.
    Float64,
    /// `storageBuffer8BitAccess`.
    StorageBuffer8BitAccess,
    /// `storageBuffer16BitAccess`.
    StorageBuffer16BitAccess,
    /// `storagePushConstant8`.
    StoragePushConstant8,
    /// `storagePushConstant16`.
    StoragePushConstant16,
    /// `shaderBufferInt64Atomics` / `shaderSharedInt64Atomics`.
    Int64Atomics,
    /// `shaderBufferFloat32AtomicAdd` (native float add on buffers).
    BufferFloat32AtomicAdd,
    /// `shaderSharedFloat32AtomicAdd`.
    SharedFloat32AtomicAdd,
    /// `shaderBufferFloat64AtomicAdd`.
    BufferFloat64AtomicAdd,
    /// `shaderSharedFloat64AtomicAdd`.
    SharedFloat64AtomicAdd,
    /// The float-controls properties `shaderSignedZeroInfNanPreserveFloat{16,32,64}`
    /// (IEEE signed zeros, infinities and NaNs; every kernel needs the 32-bit one).
    SignedZeroInfNanPreserve,
    /// The float-controls properties `shaderRoundingModeRTEFloat{16,32,64}`:
    /// round to nearest even for every float width in use. Without it Vulkan
    /// leaves the rounding of narrowing conversions undefined (the H200 keeps
    /// an f32 through an `f32 -> f16 -> f32` round trip unrounded).
    RoundingModeRte,
    /// `rayQuery` (VK_KHR_ray_query) with `accelerationStructure`
    /// (VK_KHR_acceleration_structure): accel descriptors and ray queries.
    RayQuery,
    /// `shaderStorageImageReadWithoutFormat`: `OpImageRead` of a storage image declared with format `Unknown`.
    StorageImageReadWithoutFormat,
    /// `shaderStorageImageWriteWithoutFormat`: `OpImageWrite` to a storage image declared with format `Unknown`.
    StorageImageWriteWithoutFormat,
    /// `uniformAndStorageBuffer8BitAccess`: 8-bit loads and stores in uniform blocks too.
    UniformAndStorageBuffer8BitAccess,
    /// `uniformAndStorageBuffer16BitAccess`: 16-bit loads and stores in uniform blocks too.
    UniformAndStorageBuffer16BitAccess,
    /// The device extension `VK_KHR_shader_non_semantic_info` (core in 1.3):
    /// the `NonSemantic.DebugPrintf` ext-inst set of `print`. Emission-owned:
    /// it is an extension, not a capability.
    ShaderNonSemanticInfo,
    /// `accelerationStructure` (VK_KHR_acceleration_structure): an accel
    /// descriptor in the kernel ABI. Emission-owned (the ray-query descriptor
    /// ABI): it follows the persisted properties, not `RayQueryKHR`.
    AccelerationStructure,
    /// `runtimeDescriptorArray`: the unbounded bindless buffer heap (capability `RuntimeDescriptorArray`).
    RuntimeDescriptorArray,
    /// `shaderStorageBufferArrayNonUniformIndexing`: a heap index the uniformity analysis calls divergent.
    StorageBufferArrayNonUniformIndexing,
    /// `descriptorBindingPartiallyBound` and `descriptorBindingVariableDescriptorCount`:
    /// the binding flags of the buffer heap. Emission-owned (the bindless heap ABI):
    /// it follows the persisted `BufferHeap` property, not a capability.
    BufferHeapBindingFlags,
    /// `samplerAnisotropy`: the anisotropic samplers of the sampler heap (selectors 12..16).
    /// Emission-owned (the sampler-heap contract, `plan/texture_heap.rs`): a constant
    /// anisotropic selector or a selector that is not a constant needs it.
    SamplerAnisotropy,
    /// `shaderSampledImageArrayNonUniformIndexing`: a texture-heap or sampler-heap index the
    /// uniformity analysis calls divergent.
    SampledImageArrayNonUniformIndexing,
    /// `shaderBufferFloat32Atomics`: a native f32 exchange on a storage buffer.
    BufferFloat32Atomics,
    /// `shaderSharedFloat32Atomics`: a native f32 exchange on shared memory.
    SharedFloat32Atomics,
    /// `shaderBufferFloat64Atomics`.
    BufferFloat64Atomics,
    /// `shaderSharedFloat64Atomics`.
    SharedFloat64Atomics,
    /// `shaderBufferFloat16Atomics` (VK_EXT_shader_atomic_float2).
    BufferFloat16Atomics,
    /// `shaderSharedFloat16Atomics`.
    SharedFloat16Atomics,
    /// `shaderBufferFloat16AtomicAdd`.
    BufferFloat16AtomicAdd,
    /// `shaderSharedFloat16AtomicAdd`.
    SharedFloat16AtomicAdd,
    /// `shaderBufferFloat16AtomicMinMax`.
    BufferFloat16AtomicMinMax,
    /// `shaderSharedFloat16AtomicMinMax`.
    SharedFloat16AtomicMinMax,
    /// `shaderBufferFloat32AtomicMinMax`.
    BufferFloat32AtomicMinMax,
    /// `shaderSharedFloat32AtomicMinMax`.
    SharedFloat32AtomicMinMax,
    /// `shaderBufferFloat64AtomicMinMax`.
    BufferFloat64AtomicMinMax,
    /// `shaderSharedFloat64AtomicMinMax`.
    SharedFloat64AtomicMinMax,
    /// `subgroupSupportedStages` has COMPUTE and `subgroupSupportedOperations`
    /// has BASIC: the `GroupNonUniform` capability (the lane id and warp size
    /// registers, `warp.is_first_active_lane`).
    SubgroupBasic,
    /// Subgroup VOTE in compute (`GroupNonUniformVote`: all / any / all-equal).
    SubgroupVote,
    /// Subgroup ARITHMETIC in compute (`GroupNonUniformArithmetic`: reductions and scans).
    SubgroupArithmetic,
    /// Subgroup BALLOT in compute (`GroupNonUniformBallot`: ballots, bit counts, broadcast-first).
    SubgroupBallot,
    /// Subgroup SHUFFLE in compute (`GroupNonUniformShuffle`: `warp.read_lane`).
    SubgroupShuffle,
    /// `shaderSubgroupExtendedTypes`: a subgroup operation on 8-, 16- or
    /// 64-bit values. Emission-owned: no capability says which types a group
    /// operation took.
    SubgroupExtendedTypes,
    /// `shaderMaximalReconvergence` (VK_KHR_shader_maximal_reconvergence):
    /// the `MaximallyReconvergesKHR` execution mode every kernel with a warp
    /// operation declares, so that the active lanes are the interpreter's
    /// (docs/vulkan.md, "Subgroups"). Emission-owned: an execution mode, not
    /// a capability.
    MaximalReconvergence,
    /// `shaderSubgroupClock` (VK_KHR_shader_clock): `clock`, lowered to
    /// `OpReadClockKHR` at Subgroup scope (the scope every device with the
    /// extension supports).
    ShaderSubgroupClock,
}

impl Feature {
    /// Every feature, in persisted-bit order (bit *i* = entry *i*; append only).
    pub const ALL: [Feature; 50] = [
        Feature::Int8,
        Feature::Int16,
        Feature::Int64,
        Feature::Float16,
        Feature::Float64,
        Feature::StorageBuffer8BitAccess,
        Feature::StorageBuffer16BitAccess,
        Feature::StoragePushConstant8,
        Feature::StoragePushConstant16,
        Feature::Int64Atomics,
        Feature::BufferFloat32AtomicAdd,
        Feature::SharedFloat32AtomicAdd,
        Feature::BufferFloat64AtomicAdd,
        Feature::SharedFloat64AtomicAdd,
        Feature::SignedZeroInfNanPreserve,
        Feature::RoundingModeRte,
        Feature::RayQuery,
        Feature::StorageImageReadWithoutFormat,
        Feature::StorageImageWriteWithoutFormat,
        Feature::UniformAndStorageBuffer8BitAccess,
        Feature::UniformAndStorageBuffer16BitAccess,
        Feature::ShaderNonSemanticInfo,
        Feature::AccelerationStructure,
        Feature::RuntimeDescriptorArray,
        Feature::StorageBufferArrayNonUniformIndexing,
        Feature::BufferHeapBindingFlags,
        Feature::SamplerAnisotropy,
        Feature::SampledImageArrayNonUniformIndexing,
        Feature::BufferFloat32Atomics,
        Feature::SharedFloat32Atomics,
        Feature::BufferFloat64Atomics,
        Feature::SharedFloat64Atomics,
        Feature::BufferFloat16Atomics,
        Feature::SharedFloat16Atomics,
        Feature::BufferFloat16AtomicAdd,
        Feature::SharedFloat16AtomicAdd,
        Feature::BufferFloat16AtomicMinMax,
        Feature::SharedFloat16AtomicMinMax,
        Feature::BufferFloat32AtomicMinMax,
        Feature::SharedFloat32AtomicMinMax,
        Feature::BufferFloat64AtomicMinMax,
        Feature::SharedFloat64AtomicMinMax,
        Feature::SubgroupBasic,
        Feature::SubgroupVote,
        Feature::SubgroupArithmetic,
        Feature::SubgroupBallot,
        Feature::SubgroupShuffle,
        Feature::SubgroupExtendedTypes,
        Feature::MaximalReconvergence,
        Feature::ShaderSubgroupClock,
    ];

    /// The capability that owns this feature one-to-one, if any.
    pub fn capability(self) -> Option<Capability> {
        Some(match self {
            Feature::Int8 => Capability::Int8,
            Feature::Int16 => Capability::Int16,
            Feature::Int64 => Capability::Int64,
            Feature::Float16 => Capability::Float16,
            Feature::Float64 => Capability::Float64,
            Feature::StorageBuffer8BitAccess => Capability::StorageBuffer8BitAccess,
            Feature::StorageBuffer16BitAccess => Capability::StorageBuffer16BitAccess,
            Feature::StoragePushConstant8 => Capability::StoragePushConstant8,
            Feature::StoragePushConstant16 => Capability::StoragePushConstant16,
            Feature::Int64Atomics => Capability::Int64Atomics,
            Feature::SignedZeroInfNanPreserve => Capability::SignedZeroInfNanPreserve,
            Feature::RoundingModeRte => Capability::RoundingModeRTE,
            Feature::RayQuery => Capability::RayQueryKHR,
            Feature::StorageImageReadWithoutFormat => Capability::StorageImageReadWithoutFormat,
            Feature::StorageImageWriteWithoutFormat => Capability::StorageImageWriteWithoutFormat,
            Feature::UniformAndStorageBuffer8BitAccess => Capability::UniformAndStorageBuffer8BitAccess,
            Feature::UniformAndStorageBuffer16BitAccess => Capability::UniformAndStorageBuffer16BitAccess,
            Feature::RuntimeDescriptorArray => Capability::RuntimeDescriptorArray,
            Feature::StorageBufferArrayNonUniformIndexing => Capability::StorageBufferArrayNonUniformIndexing,
            Feature::SampledImageArrayNonUniformIndexing => Capability::SampledImageArrayNonUniformIndexing,
            Feature::SubgroupBasic => Capability::GroupNonUniform,
            Feature::SubgroupVote => Capability::GroupNonUniformVote,
            Feature::SubgroupArithmetic => Capability::GroupNonUniformArithmetic,
            Feature::SubgroupBallot => Capability::GroupNonUniformBallot,
            Feature::SubgroupShuffle => Capability::GroupNonUniformShuffle,
            Feature::ShaderSubgroupClock => Capability::ShaderClockKHR,
            Feature::SubgroupExtendedTypes | Feature::MaximalReconvergence => return None,
            Feature::ShaderNonSemanticInfo
            | Feature::AccelerationStructure
            | Feature::BufferHeapBindingFlags
            | Feature::SamplerAnisotropy => return None,
            // One capability (or none, for exchange) serves both storage
            // classes: the float-atomic bits are emission-owned (`plan/float_atomics.rs`).
            Feature::BufferFloat32AtomicAdd
            | Feature::SharedFloat32AtomicAdd
            | Feature::BufferFloat64AtomicAdd
            | Feature::SharedFloat64AtomicAdd
            | Feature::BufferFloat32Atomics
            | Feature::SharedFloat32Atomics
            | Feature::BufferFloat64Atomics
            | Feature::SharedFloat64Atomics
            | Feature::BufferFloat16Atomics
            | Feature::SharedFloat16Atomics
            | Feature::BufferFloat16AtomicAdd
            | Feature::SharedFloat16AtomicAdd
            | Feature::BufferFloat16AtomicMinMax
            | Feature::SharedFloat16AtomicMinMax
            | Feature::BufferFloat32AtomicMinMax
            | Feature::SharedFloat32AtomicMinMax
            | Feature::BufferFloat64AtomicMinMax
            | Feature::SharedFloat64AtomicMinMax => return None,
        })
    }

    /// The Vulkan feature name, for messages.
    pub fn vulkan_name(self) -> &'static str {
        match self {
            Feature::Int8 => "shaderInt8",
            Feature::Int16 => "shaderInt16",
            Feature::Int64 => "shaderInt64",
            Feature::Float16 => "shaderFloat16",
            Feature::Float64 => "shaderFloat64",
            Feature::StorageBuffer8BitAccess => "storageBuffer8BitAccess",
            Feature::StorageBuffer16BitAccess => "storageBuffer16BitAccess",
            Feature::StoragePushConstant8 => "storagePushConstant8",
            Feature::StoragePushConstant16 => "storagePushConstant16",
            Feature::Int64Atomics => "shaderBufferInt64Atomics/shaderSharedInt64Atomics",
            Feature::BufferFloat32AtomicAdd => "shaderBufferFloat32AtomicAdd",
            Feature::SharedFloat32AtomicAdd => "shaderSharedFloat32AtomicAdd",
            Feature::BufferFloat64AtomicAdd => "shaderBufferFloat64AtomicAdd",
            Feature::SharedFloat64AtomicAdd => "shaderSharedFloat64AtomicAdd",
            Feature::SignedZeroInfNanPreserve => "shaderSignedZeroInfNanPreserveFloat16/32/64",
            Feature::RoundingModeRte => "shaderRoundingModeRTEFloat16/32/64",
            Feature::RayQuery => "rayQuery (VK_KHR_ray_query)",
            Feature::StorageImageReadWithoutFormat => "shaderStorageImageReadWithoutFormat",
            Feature::StorageImageWriteWithoutFormat => "shaderStorageImageWriteWithoutFormat",
            Feature::UniformAndStorageBuffer8BitAccess => "uniformAndStorageBuffer8BitAccess",
            Feature::UniformAndStorageBuffer16BitAccess => "uniformAndStorageBuffer16BitAccess",
            Feature::ShaderNonSemanticInfo => "VK_KHR_shader_non_semantic_info",
            Feature::AccelerationStructure => "accelerationStructure (VK_KHR_acceleration_structure)",
            Feature::RuntimeDescriptorArray => "runtimeDescriptorArray",
            Feature::StorageBufferArrayNonUniformIndexing => "shaderStorageBufferArrayNonUniformIndexing",
            Feature::BufferHeapBindingFlags => {
                "descriptorBindingPartiallyBound/descriptorBindingVariableDescriptorCount"
            }
            Feature::SamplerAnisotropy => "samplerAnisotropy",
            Feature::SampledImageArrayNonUniformIndexing => "shaderSampledImageArrayNonUniformIndexing",
            Feature::BufferFloat32Atomics => "shaderBufferFloat32Atomics",
            Feature::SharedFloat32Atomics => "shaderSharedFloat32Atomics",
            Feature::BufferFloat64Atomics => "shaderBufferFloat64Atomics",
            Feature::SharedFloat64Atomics => "shaderSharedFloat64Atomics",
            Feature::BufferFloat16Atomics => "shaderBufferFloat16Atomics",
            Feature::SharedFloat16Atomics => "shaderSharedFloat16Atomics",
            Feature::BufferFloat16AtomicAdd => "shaderBufferFloat16AtomicAdd",
            Feature::SharedFloat16AtomicAdd => "shaderSharedFloat16AtomicAdd",
            Feature::BufferFloat16AtomicMinMax => "shaderBufferFloat16AtomicMinMax",
            Feature::SharedFloat16AtomicMinMax => "shaderSharedFloat16AtomicMinMax",
            Feature::BufferFloat32AtomicMinMax => "shaderBufferFloat32AtomicMinMax",
            Feature::SharedFloat32AtomicMinMax => "shaderSharedFloat32AtomicMinMax",
            Feature::BufferFloat64AtomicMinMax => "shaderBufferFloat64AtomicMinMax",
            Feature::SharedFloat64AtomicMinMax => "shaderSharedFloat64AtomicMinMax",
            Feature::SubgroupBasic => "subgroupSupportedOperations BASIC (compute)",
            Feature::SubgroupVote => "subgroupSupportedOperations VOTE (compute)",
            Feature::SubgroupArithmetic => "subgroupSupportedOperations ARITHMETIC (compute)",
            Feature::SubgroupBallot => "subgroupSupportedOperations BALLOT (compute)",
            Feature::SubgroupShuffle => "subgroupSupportedOperations SHUFFLE (compute)",
            Feature::SubgroupExtendedTypes => "shaderSubgroupExtendedTypes",
            Feature::MaximalReconvergence => "shaderMaximalReconvergence (VK_KHR_shader_maximal_reconvergence)",
            Feature::ShaderSubgroupClock => "shaderSubgroupClock (VK_KHR_shader_clock)",
        }
    }

    fn bit(self) -> u64 {
        1 << (self as u32)
    }
}

/// A set of [`Feature`]s.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FeatureSet(u64);

impl FeatureSet {
    pub const fn empty() -> Self {
        FeatureSet(0)
    }
    /// Every feature (a device that supports everything).
    pub fn all() -> Self {
        Feature::ALL.iter().copied().collect()
    }
    pub fn insert(&mut self, f: Feature) {
        self.0 |= f.bit();
    }
    pub fn remove(&mut self, f: Feature) {
        self.0 &= !f.bit();
    }
    pub fn contains(&self, f: Feature) -> bool {
        self.0 & f.bit() != 0
    }
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }
    pub fn union(self, o: FeatureSet) -> FeatureSet {
        FeatureSet(self.0 | o.0)
    }
    pub fn iter(&self) -> impl Iterator<Item = Feature> + '_ {
        Feature::ALL.into_iter().filter(|f| self.contains(*f))
    }
    /// Features of `self` that `available` lacks.
    pub fn missing_from(&self, available: &FeatureSet) -> Vec<Feature> {
        self.iter().filter(|f| !available.contains(*f)).collect()
    }

    /// The capability-owned features declared by a list of capabilities.
    pub fn from_capabilities(caps: impl IntoIterator<Item = Capability>) -> FeatureSet {
        let caps: Vec<Capability> = caps.into_iter().collect();
        Feature::ALL.into_iter().filter(|f| f.capability().is_some_and(|c| caps.contains(&c))).collect()
    }

    /// Only the emission-owned bits of `self`.
    pub fn emission_owned(&self) -> FeatureSet {
        self.iter().filter(|f| f.capability().is_none()).collect()
    }
}

impl FromIterator<Feature> for FeatureSet {
    fn from_iter<I: IntoIterator<Item = Feature>>(it: I) -> Self {
        let mut s = FeatureSet::empty();
        for f in it {
            s.insert(f);
        }
        s
    }
}

/// The device features a kernel requires that the target does not enable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the kernel requires device feature(s) the target does not enable: {}",
    .missing.iter().map(|f| f.vulkan_name()).collect::<Vec<_>>().join(", ")
)]
pub struct MissingFeatures {
    /// In feature order; never empty.
    pub missing: Vec<Feature>,
}

/// `Err` naming every required feature the device lacks.
pub fn check_available(required: &FeatureSet, device: &FeatureSet) -> Result<(), MissingFeatures> {
    let missing = required.missing_from(device);
    if missing.is_empty() {
        return Ok(());
    }
    Err(MissingFeatures { missing })
}

/// The emission-owned bits the kernel ABI implies: an accel descriptor needs
/// `accelerationStructure` whether or not `RayQueryKHR` survives optimization;
/// the buffer and texture heaps need their binding flags (partially bound,
/// variable count).
pub fn from_abi(abi: &crate::abi::KernelAbi) -> FeatureSet {
    let accel = abi
        .properties
        .iter()
        .any(|p| matches!(p.kind, crate::abi::PropertyKind::AccelerationStructure { .. }) && p.kind.is_descriptor());
    let mut s = FeatureSet::empty();
    if accel {
        s.insert(Feature::AccelerationStructure);
    }
    use crate::abi::PropertyKind as K;
    if abi.properties.iter().any(|p| matches!(p.kind, K::BufferHeap | K::Texture2dHeap | K::Texture3dHeap)) {
        s.insert(Feature::BufferHeapBindingFlags);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_reconciliation_keeps_only_capability_owned_bits() {
        let s = FeatureSet::from_capabilities([Capability::Shader, Capability::Int64, Capability::Float16]);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![Feature::Int64, Feature::Float16]);
        let mut e = FeatureSet::empty();
        e.insert(Feature::BufferFloat32AtomicAdd);
        e.insert(Feature::Int8);
        assert_eq!(e.emission_owned().iter().collect::<Vec<_>>(), vec![Feature::BufferFloat32AtomicAdd]);
    }

    #[test]
    fn missing_features_are_named() {
        let req: FeatureSet = [Feature::Int64, Feature::Float64].into_iter().collect();
        let dev: FeatureSet = [Feature::Int64].into_iter().collect();
        let err = check_available(&req, &dev).unwrap_err();
        assert_eq!(err.missing, vec![Feature::Float64]);
        assert_eq!(err.to_string(), "the kernel requires device feature(s) the target does not enable: shaderFloat64");
        assert!(check_available(&req, &FeatureSet::all()).is_ok());
    }
}
