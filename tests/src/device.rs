//! Shared pieces of the tests that run kernels on Vulkan: opening the
//! device (skipping loudly when none exists at all), compiling through the
//! shipped `spirv` pipeline, and the comparison with the interpreter.

use serde_json::Value as Json;
use xir::{interp::Inputs, interp::Outputs, FuncId, Module};
use xir_spirv::vulkan::{Device, RunError};

/// The Vulkan device, or `None` (after a loud message) when the machine has
/// no Vulkan device at all. Any other failure is a test failure.
pub fn device() -> Option<Device> {
    match Device::new() {
        Ok(d) => Some(d),
        Err(RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING VULKAN TESTS: no Vulkan device at all ({why}) !!!!!!!!\n");
            None
        }
        Err(e) => panic!("creating the Vulkan device failed: {e}"),
    }
}

/// Legalize, compile and run kernel `kernel` of `module` on `dev`; returns
/// the outputs and the dispatch's GPU time in nanoseconds (when timed).
pub fn run_on_vulkan(
    dev: &Device,
    module: &Module,
    kernel: FuncId,
    inputs: &Inputs,
    opt_level: u8,
) -> Result<(Outputs, Option<f64>), String> {
    let name = module.func(kernel).name.clone();
    let (legal, kid, out) = xir_pipelines::backend::legalize_and_compile(module, Some(&name), opt_level, false)?;
    let dispatch = inputs.dispatch.ok_or("the inputs give no dispatch size")?;
    xir_spirv::vulkan::run_kernel(dev, &legal, kid, &out.words, &out.abi, inputs, dispatch)
        .map(|(o, t)| (o, t.dispatch_ns))
        .map_err(|e| e.to_string())
}

/// Whether a float element in the interpreter's encoding is a NaN: `"nan"`
/// or a hex bit pattern that is a NaN at its width (4, 8 or 16 digits).
pub fn is_nan(j: &Json) -> bool {
    let Json::String(s) = j else { return false };
    if s == "nan" {
        return true;
    }
    let Some(hex) = s.strip_prefix("0x") else { return false };
    let Ok(bits) = u64::from_str_radix(hex, 16) else { return false };
    match hex.len() {
        4 => bits & 0x7c00 == 0x7c00 && bits & 0x03ff != 0,
        8 => f32::from_bits(bits as u32).is_nan(),
        16 => f64::from_bits(bits).is_nan(),
        _ => false,
    }
}

/// Equal bit for bit, or both NaN: neither IEEE 754 (payload propagation is
/// a "should") nor Vulkan specifies the payload of a NaN an operation
/// produces, and devices differ (NVIDIA returns 0x7fffffff). Signed zeros
/// and everything else must match exactly.
pub fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        _ => a == b || (is_nan(a) && is_nan(b)),
    }
}
