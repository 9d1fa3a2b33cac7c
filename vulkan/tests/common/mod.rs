//! Helpers shared by the device tests: the compiler-side helpers are the
//! backend tests' own (`backend-spirv/tests/common/mod.rs`, included here so
//! the two crates' tests build kernels the same way), plus the device.

#[path = "../../../backend-spirv/tests/common/mod.rs"]
mod compiler;
#[allow(unused_imports)]
pub use compiler::*;

/// The Vulkan device, or `None` after a loud message when the machine has no
/// Vulkan device at all (any other failure is a test failure).
pub fn vulkan_device() -> Option<xir_vulkan::Device> {
    match xir_vulkan::Device::new() {
        Ok(d) => Some(d),
        Err(xir_vulkan::RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING VULKAN TEST: no Vulkan device ({why}) !!!!!!!!\n");
            None
        }
        Err(e) => panic!("Vulkan device creation failed: {e}"),
    }
}
