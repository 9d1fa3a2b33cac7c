//! Random kernels through the shipped `spirv` pipeline on Vulkan at -O0 and
//! -O2, compared with the interpreter: the differential generator's
//! (`xir_testgen::programs`) bit for bit (any NaN equals any NaN), at least
//! 100 per run; and the spec-driven generator's (`xir_testgen::spec_gen`:
//! every pure opcode `xir.structured` allows, the spec's `undefined`
//! conditions guarded) within Vulkan's precision (`Outputs::compare_bounded`,
//! as `xir-run --compare`: integers bit for bit, floats within the bound of
//! the operations on their data path), at least 48 per run.
//! `XIR_VULKAN_CASES` raises both.

use proptest::{
    prelude::*,
    test_runner::{Config, TestRunner},
};
use xir_tests::device::{device, run_on_vulkan, same};

#[test]
fn random_programs_match_the_interpreter_on_vulkan() {
    let Some(dev) = device() else { return };
    let cases = std::env::var("XIR_VULKAN_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(100u32);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let ran = std::cell::Cell::new(0u32);
    let result = runner.run(&xir_testgen::programs::program(), |p| {
        let want = xir::interp::run_kernel(&p.module, p.kernel, &p.inputs)
            .map_err(|e| TestCaseError::fail(format!("interpreter: {e}")))?;
        for opt_level in [0u8, 2] {
            let (got, _) = run_on_vulkan(&dev, &p.module, p.kernel, &p.inputs, opt_level)
                .map_err(|e| TestCaseError::fail(format!("-O{opt_level}: {e}")))?;
            for (name, w) in &want.buffers {
                let g = got.buffers.get(name).ok_or_else(|| TestCaseError::fail(format!("`{name}` missing")))?;
                prop_assert!(same(w, g), "-O{opt_level} `{name}`: interpreter {w} != Vulkan {g}");
            }
        }
        ran.set(ran.get() + 1);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(ran.get() >= cases, "{} of {cases} programs ran", ran.get());
    eprintln!("{} random programs match on {}", ran.get(), dev.name);
}

#[test]
fn spec_generated_programs_match_the_interpreter_on_vulkan() {
    let Some(dev) = device() else { return };
    let cases = std::env::var("XIR_VULKAN_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48u32);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let ran = std::cell::Cell::new(0u32);
    let opts = xir::interp::Options { precision: Some(xir::interp::Precision::default()), ..Default::default() };
    let result = runner.run(&xir_testgen::spec_gen::programs(), |p| {
        let want = xir::interp::run_kernel_with(&p.module, p.kernel, &p.inputs, &opts)
            .map_err(|e| TestCaseError::fail(format!("interpreter: {e}")))?;
        for opt_level in [0u8, 2] {
            let (got, _) = run_on_vulkan(&dev, &p.module, p.kernel, &p.inputs, opt_level)
                .map_err(|e| TestCaseError::fail(format!("-O{opt_level}: {e}")))?;
            if let Some(m) = want.compare_bounded(&got, same).mismatch {
                return Err(TestCaseError::fail(format!("-O{opt_level}: interpreter != Vulkan: {m}")));
            }
        }
        ran.set(ran.get() + 1);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(ran.get() >= cases, "{} of {cases} programs ran", ran.get());
    eprintln!("{} spec-generated programs match on {}", ran.get(), dev.name);
}
