//! `xir-spirv`: the native XIR -> SPIR-V backend for Vulkan compute kernels.
//!
//! The public ABI contract lives in [`abi`]; the compile entry is being built.
pub mod abi;

pub use abi::{BufferStorage, KernelAbi, Property, PropertyKind};
