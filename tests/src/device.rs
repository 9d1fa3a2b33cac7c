//! Shared pieces of the tests that run kernels on Vulkan: opening the
//! device (skipping loudly when none exists at all), compiling through the
//! shipped `spirv` pipeline, and the comparison with the interpreter.

use xir::{interp::Inputs, interp::Outputs, FuncId, Module};
use xir_vulkan::{Device, RunError};

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
    run_on_vulkan_with(dev, module, kernel, inputs, opt_level, false)
}

/// `run_on_vulkan`, compiled with or without `--fast-math`.
pub fn run_on_vulkan_with(
    dev: &Device,
    module: &Module,
    kernel: FuncId,
    inputs: &Inputs,
    opt_level: u8,
    fast_math: bool,
) -> Result<(Outputs, Option<f64>), String> {
    let name = module.func(kernel).name.clone();
    let (legal, kid, out) = xir_pipelines::backend::legalize_and_compile(module, Some(&name), opt_level, fast_math)?;
    let dispatch = inputs.dispatch.ok_or("the inputs give no dispatch size")?;
    xir_vulkan::run_compiled(dev, &legal, kid, (&out).into(), inputs, dispatch)
        .map(|(o, t)| (o, t.dispatch_ns))
        .map_err(|e| e.to_string())
}

/// NaN test and comparison of interpreter-encoded outputs: they live in
/// `xir::interp` so that `xir-run --compare` uses exactly the same rule.
pub use xir::interp::{is_nan_json as is_nan, same_value as same};
