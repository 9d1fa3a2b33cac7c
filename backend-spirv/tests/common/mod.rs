//! Shared helpers of the backend's integration tests: parse XIR text,
//! compile its kernel at every optimizer preset, and check that every module
//! (before and after optimization) passes SPIRV-Tools for Vulkan 1.2.
#![allow(dead_code)]

use xir::{FuncId, Module};
use xir_spirv::{compile, validate, CompileOptions, FeatureSet, SpirvOutput};

pub fn parse(src: &str) -> Module {
    match xir::text::parse_module(src, "test.xir") {
        Ok(m) => m,
        Err(d) => panic!("parse failed:\n{}", xir::diag::render(&d)),
    }
}

pub fn kernel_of(m: &Module) -> FuncId {
    m.func_ids().find(|&f| m.func(f).is_kernel()).expect("module has a kernel")
}

pub fn opts(level: u8, fast_math: bool) -> CompileOptions {
    CompileOptions { opt_level: level, fast_math, device_features: None }
}

/// Compile at `o`, panicking with the diagnostics on failure.
pub fn compile_with(src: &str, o: &CompileOptions) -> SpirvOutput {
    let m = parse(src);
    let k = kernel_of(&m);
    match compile(&m, k, o) {
        Ok(out) => out,
        Err(d) => panic!("compile failed:\n{}", xir::diag::render(&d)),
    }
}

/// Compile at presets 0..=3; every module must validate before and after
/// optimization, and the optimizer's output must be kept at 1..=3. Returns
/// the preset-0 output.
pub fn compile_all_presets(src: &str) -> SpirvOutput {
    let mut first = None;
    for level in 0..=3u8 {
        let out = compile_with(src, &opts(level, false));
        validate::validate(&out.words_unoptimized).expect("unoptimized module validates");
        validate::validate(&out.words).expect("final module validates");
        if level > 0 {
            assert_eq!(out.opt, validate::OptOutcome::Optimized, "preset {level} output was rejected");
        }
        if first.is_none() {
            first = Some(out);
        }
    }
    first.expect("level 0 ran")
}

/// Compile expecting failure; returns the rendered diagnostics.
pub fn compile_err(src: &str, o: &CompileOptions) -> String {
    let m = parse(src);
    let k = kernel_of(&m);
    match compile(&m, k, o) {
        Ok(out) => panic!("expected a rejection, got a module:\n{}", out.disassembly()),
        Err(d) => xir::diag::render(&d),
    }
}

/// Lines of the disassembly containing `needle`.
pub fn count(dis: &str, needle: &str) -> usize {
    dis.lines().filter(|l| l.contains(needle)).count()
}

pub fn all_features() -> FeatureSet {
    FeatureSet::all()
}
