//! `xir-vulkan`: running kernels compiled by `xir-spirv` on a real Vulkan
//! implementation (ash): Mesa's lavapipe in CI, NVIDIA GPUs on real
//! hardware. Its own crate so that embedding the compiler pulls in no
//! Vulkan. `Device` is created once; `dispatch` runs one kernel at the byte
//! level following `xir_spirv::abi` (storage images through `image`, the
//! bindless buffer heap in set 2, the sampler heap through `sampler`, the
//! texture heaps through `texture_heap`); the typed layer (`typed`) turns
//! interpreter-style inputs into those bytes and the bytes back into outputs
//! comparable with the interpreter's (bindless slots through `bindless`).
//! `run_foreign` runs a module the backend did not write (naga's,
//! glslang's), described by `xir_spirv::reflect` instead of an ABI.

mod accel;
mod bindless;
mod compare;
mod device;
mod dispatch;
mod filtered;
mod float_atomics;
mod foreign;
mod image;
mod limits;
mod printf;
mod sampler;
mod subgroup;
mod texture_heap;
mod typed;

pub use bindless::{check_descriptor_limits, DescriptorCounts, DescriptorLimits};
pub use compare::ulp_tolerance;
pub use device::Device;
pub use dispatch::{dispatch, dispatch_resources, Resource};
pub use filtered::{compare_sampling, filtered_outputs, sampling_tolerance, texel_range};
pub use foreign::{run_foreign, run_foreign_on};
pub use limits::{check_module, check_resources, footprint, DispatchLimits, Footprint, MAX_PRIVATE_BYTES};
pub use printf::{imports_debug_printf, run_kernel_printing, PrintCapture, PrintedLine, PRINTF_BUFFER_SIZE};
pub use subgroup::{required as required_subgroup_features, Subgroups};
pub use texture_heap::filter_tolerance;
pub use typed::{run_compiled, run_kernel, Compiled};

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// No loader, no instance or no device with compute: tests skip loudly on this.
    #[error("no Vulkan device: {0}")]
    NoVulkan(String),
    #[error("Vulkan error: {0}")]
    Vulkan(String),
    /// The ABI and the inputs do not fit together.
    #[error("ABI mismatch: {0}")]
    Abi(String),
    /// The kernel or its resources exceed a device limit, named (`limits.rs`).
    #[error("device limit: {0}")]
    Limit(String),
    /// A printing kernel cannot have its output captured (no validation
    /// layer, debug printf disabled by it, a damaged printer record or message).
    #[error("debug printf: {0}")]
    Printf(String),
    /// The module needs a device feature the device lacks (`subgroup.rs`: a
    /// subgroup operation class in compute, maximal reconvergence).
    #[error("device feature: {0}")]
    Feature(String),
    /// A foreign SPIR-V module (`reflect.rs`, `foreign.rs`) uses something the
    /// foreign runner refuses, or is not a valid module.
    #[error("foreign SPIR-V: {0}")]
    Foreign(String),
}

/// GPU time of the dispatch, from timestamp queries (when the queue has them): with
/// [`Device::timed_dispatches`] above 1, the median, minimum and maximum over those dispatches.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuTiming {
    pub dispatch_ns: Option<f64>,
    pub min_ns: Option<f64>,
    pub max_ns: Option<f64>,
}

/// Workgroup counts covering `dispatch` threads with `block_size` threads per
/// group. A zero dimension dispatches no workgroup (Vulkan allows a zero
/// count): a kernel dispatched in whole blocks has no entry check that would
/// keep a rounded-up group idle, and the interpreter runs no thread either.
pub fn group_counts(dispatch: [u32; 3], block_size: [u32; 3]) -> [u32; 3] {
    [0, 1, 2].map(|i| dispatch[i].div_ceil(block_size[i].max(1)))
}
