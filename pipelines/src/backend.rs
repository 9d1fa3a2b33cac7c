//! The integration point of the SPIR-V backend (`xir-spirv`) with the
//! drivers: the backend's passes (its callable specialization binds the
//! `callable_specialization` hook; `spirv_handoff` ends the `spirv`
//! pipeline), `--emit spirv | spirv-asm | artifact`, and the one function
//! both `xir-opt` and `xir-run` use to take structured XIR to SPIR-V.

use xir::pass::PassRegistry;
use xir::pipeline::{PassManager, RunOptions};
use xir::{FuncId, Module};
use xir_spirv::{CompileOptions, SpirvOutput};

/// The backend outputs `--emit` can ask for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BackendEmit {
    /// A SPIR-V binary module.
    Spirv,
    /// SPIR-V disassembly text.
    SpirvAsm,
    /// The shader artifact (SPIR-V plus the kernel ABI).
    Artifact,
}

impl BackendEmit {
    pub fn flag(self) -> &'static str {
        match self {
            BackendEmit::Spirv => "spirv",
            BackendEmit::SpirvAsm => "spirv-asm",
            BackendEmit::Artifact => "artifact",
        }
    }
}

/// Register the backend's passes and bind its hooks.
pub fn register_passes(reg: &mut PassRegistry) {
    xir_spirv::register_passes(reg);
    reg.declare_hook(
        crate::CALLABLE_SPECIALIZATION,
        "target policy for callables (specialize or inline per call site); the SPIR-V backend binds it",
    );
    // The pass was registered just above, so binding cannot fail.
    let bound = reg.bind_hook(crate::CALLABLE_SPECIALIZATION, "callable_specialization");
    debug_assert!(bound.is_ok(), "{bound:?}");
}

/// The one kernel of `module`, or the one named `name`.
pub fn select_kernel(module: &Module, name: Option<&str>) -> Result<FuncId, String> {
    let kernels: Vec<FuncId> = module.func_ids().filter(|&f| module.func(f).is_kernel()).collect();
    match name {
        Some(n) => {
            kernels.iter().copied().find(|&f| module.func(f).name == n).ok_or_else(|| format!("no kernel named `{n}`"))
        }
        None => match kernels.as_slice() {
            [k] => Ok(*k),
            [] => Err("the module has no kernel".into()),
            many => Err(format!(
                "the module has {} kernels ({}); name one",
                many.len(),
                many.iter().map(|&k| format!("@{}", module.func(k).name)).collect::<Vec<_>>().join(", ")
            )),
        },
    }
}

/// Compile the module's kernel (already in `xir.spirv`) with the backend;
/// with `device_features` (what a device enabled), the planner may use
/// them (native float atomics, ...) and refuses what needs more.
pub fn compile(
    module: &Module,
    kernel: Option<&str>,
    opt_level: u8,
    fast_math: bool,
    device_features: Option<xir_spirv::FeatureSet>,
) -> Result<(FuncId, SpirvOutput), String> {
    let k = select_kernel(module, kernel)?;
    let opts = CompileOptions { opt_level, fast_math, device_features };
    xir_spirv::compile(module, k, &opts).map(|out| (k, out)).map_err(|d| xir::diag::render(&d))
}

/// Structured XIR -> the shipped `spirv` pipeline -> SPIR-V: what `xir-run
/// --vulkan` and the end-to-end tests do. Returns the legalized module too.
pub fn legalize_and_compile(
    module: &Module,
    kernel: Option<&str>,
    opt_level: u8,
    fast_math: bool,
) -> Result<(Module, FuncId, SpirvOutput), String> {
    let reg = crate::registry();
    let pipeline = crate::loader(&reg, None).load("spirv").map_err(|e| e.to_string())?;
    let mut legal = module.clone();
    let options = RunOptions { opt_level, fast_math, ..RunOptions::default() };
    PassManager::new(&pipeline, options).run(&mut legal, &mut std::io::sink()).map_err(|e| e.to_string())?;
    let (k, out) = compile(&legal, kernel, opt_level, fast_math, None)?;
    Ok((legal, k, out))
}

/// Bytes for `--emit` of a module already in `xir.spirv`.
pub fn emit_with(module: &Module, what: BackendEmit, opt_level: u8, fast_math: bool) -> Result<Vec<u8>, String> {
    let (k, out) = compile(module, None, opt_level, fast_math, None)?;
    match what {
        BackendEmit::Spirv => Ok(out.words.iter().flat_map(|w| w.to_le_bytes()).collect()),
        BackendEmit::SpirvAsm => Ok(out.disassembly().into_bytes()),
        // The codec (docs/artifact.md) is the only writer of artifacts.
        BackendEmit::Artifact => xir_spirv::artifact::ShaderArtifact::from_compiled(module, k, &out)
            .encode()
            .map_err(|e| format!("cannot write the shader artifact: {e}")),
    }
}

/// `emit_with` at optimization level 0 without fast math.
pub fn emit(module: &Module, what: BackendEmit) -> Result<Vec<u8>, String> {
    emit_with(module, what, 0, false)
}
