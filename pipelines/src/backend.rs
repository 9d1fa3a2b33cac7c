//! The integration point of the SPIR-V backend (`xir-spirv`) with the
//! drivers: the backend's passes (its callable specialization binds the
//! `callable_specialization` hook; `spirv_handoff` ends the `spirv`
//! pipeline), `--emit spirv | spirv-asm | artifact`, and the one function
//! both `xir-opt` and `xir-run` use to take structured XIR to SPIR-V.

use xir::pass::PassRegistry;
use xir::pipeline::{LoadFailure, RunError, RunOptions};
use xir::{Diagnostic, FuncId, Module};
use xir_spirv::handoff::Handoffs;
use xir_spirv::{CompileOptions, SpirvOutput};

/// The shipped pipeline that takes structured XIR to the backend's input:
/// what `xir-run` and a backend `--emit` of `xir-opt` run when no
/// `--pipeline` is named.
pub const DEFAULT_PIPELINE: &str = "spirv";

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

/// Why the backend path failed. Its text is what the drivers printed
/// before the error was typed (callers that want a message still get it
/// through `to_string()` or `String::from`).
#[derive(Clone, Debug, thiserror::Error)]
pub enum BackendError {
    #[error("no kernel named `{0}`")]
    NoKernelNamed(String),
    #[error("the module has no kernel")]
    NoKernel,
    /// The kernels' names, without `@`.
    #[error("the module has {} kernels ({}); name one with --kernel", .0.len(), .0.iter().map(|k| format!("@{k}")).collect::<Vec<_>>().join(", "))]
    ManyKernels(Vec<String>),
    /// The backend refused the module (planning, validation): located diagnostics.
    #[error("{}", xir::diag::render(.0))]
    Compile(Vec<Diagnostic>),
    #[error("{0}")]
    Pipeline(LoadFailure),
    #[error("{0}")]
    Pass(Box<RunError>),
    #[error("cannot write the shader artifact: {0}")]
    Artifact(String),
}

impl BackendError {
    /// The failure as diagnostics for the shared renderers.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        match self {
            BackendError::Compile(d) => d.clone(),
            BackendError::Pipeline(f) => f.diagnostics.iter().map(|d| d.to_diagnostic()).collect(),
            BackendError::Pass(e) => e.to_diagnostics(),
            e => vec![Diagnostic::error(xir::diag::Rule::SpirvEmit, e.to_string())],
        }
    }
}

impl From<BackendError> for String {
    fn from(e: BackendError) -> String {
        e.to_string()
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
pub fn select_kernel(module: &Module, name: Option<&str>) -> Result<FuncId, BackendError> {
    let kernels: Vec<FuncId> = module.func_ids().filter(|&f| module.func(f).is_kernel()).collect();
    match name {
        Some(n) => kernels
            .iter()
            .copied()
            .find(|&f| module.func(f).name == n)
            .ok_or_else(|| BackendError::NoKernelNamed(n.to_string())),
        None => match kernels.as_slice() {
            [k] => Ok(*k),
            [] => Err(BackendError::NoKernel),
            many => Err(BackendError::ManyKernels(many.iter().map(|&k| module.func(k).name.clone()).collect())),
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
) -> Result<(FuncId, SpirvOutput), BackendError> {
    compile_from(&Handoffs::new(module), kernel, opt_level, fast_math, device_features)
}

/// [`compile`] after [`run_pipeline`]: a kernel the pipeline's own handoff
/// step passed is not checked again.
pub fn compile_from(
    handoffs: &Handoffs<'_>,
    kernel: Option<&str>,
    opt_level: u8,
    fast_math: bool,
    device_features: Option<xir_spirv::FeatureSet>,
) -> Result<(FuncId, SpirvOutput), BackendError> {
    let opts = CompileOptions { opt_level, fast_math, device_features, debug_info: false };
    compile_with(handoffs, kernel, &opts)
}

/// [`compile_from`] with every backend option (debug info among them).
pub fn compile_with(
    handoffs: &Handoffs<'_>,
    kernel: Option<&str>,
    opts: &CompileOptions,
) -> Result<(FuncId, SpirvOutput), BackendError> {
    let k = select_kernel(handoffs.module(), kernel)?;
    let handed = handoffs.kernel(k).map_err(BackendError::Compile)?;
    xir_spirv::compile_handed_off(handed, opts).map(|out| (k, out)).map_err(BackendError::Compile)
}

/// Run a pipeline as the drivers do before the backend, keeping its final
/// handoff step's verdict.
pub use xir_spirv::handoff::run_pipeline;

/// Structured XIR -> the shipped `spirv` pipeline -> SPIR-V: what `xir-run
/// --vulkan` and the end-to-end tests do. Returns the legalized module too.
pub fn legalize_and_compile(
    module: &Module,
    kernel: Option<&str>,
    opt_level: u8,
    fast_math: bool,
) -> Result<(Module, FuncId, SpirvOutput), BackendError> {
    let reg = crate::registry();
    let mut pipeline = crate::loader(&reg, None).load(DEFAULT_PIPELINE).map_err(BackendError::Pipeline)?;
    let mut legal = module.clone();
    let options = RunOptions { opt_level, fast_math, ..RunOptions::default() };
    let (_, handoffs) =
        run_pipeline(&mut pipeline, options, &mut legal, &mut std::io::sink()).map_err(BackendError::Pass)?;
    let (k, out) = compile_from(&handoffs, kernel, opt_level, fast_math, None)?;
    Ok((legal, k, out))
}

/// Bytes for `--emit` of a module already in `xir.spirv`, for an unknown
/// device.
pub fn emit_with(module: &Module, what: BackendEmit, opt_level: u8, fast_math: bool) -> Result<Vec<u8>, BackendError> {
    emit_for(module, what, opt_level, fast_math, None)
}

/// Bytes for `--emit` of a module already in `xir.spirv`, planned for
/// `device_features` (`None`: unknown device) and refused when the kernel
/// needs a feature they lack.
pub fn emit_for(
    module: &Module,
    what: BackendEmit,
    opt_level: u8,
    fast_math: bool,
    device_features: Option<xir_spirv::FeatureSet>,
) -> Result<Vec<u8>, BackendError> {
    emit_from(&Handoffs::new(module), what, opt_level, fast_math, device_features)
}

/// [`emit_for`] after [`run_pipeline`] (no second handoff check).
pub fn emit_from(
    handoffs: &Handoffs<'_>,
    what: BackendEmit,
    opt_level: u8,
    fast_math: bool,
    device_features: Option<xir_spirv::FeatureSet>,
) -> Result<Vec<u8>, BackendError> {
    let opts = CompileOptions { opt_level, fast_math, device_features, debug_info: false };
    emit_from_with(handoffs, None, what, &opts)
}

/// [`emit_from`] with every backend option (debug info among them), of
/// `kernel` (`None`: the module's only one).
pub fn emit_from_with(
    handoffs: &Handoffs<'_>,
    kernel: Option<&str>,
    what: BackendEmit,
    opts: &CompileOptions,
) -> Result<Vec<u8>, BackendError> {
    let (k, out) = compile_with(handoffs, kernel, opts)?;
    match what {
        BackendEmit::Spirv => Ok(out.words.iter().flat_map(|w| w.to_le_bytes()).collect()),
        BackendEmit::SpirvAsm => Ok(out.disassembly().into_bytes()),
        // The codec (docs/artifact.md) is the only writer of artifacts.
        BackendEmit::Artifact => xir_spirv::artifact::ShaderArtifact::from_compiled(handoffs.module(), k, &out)
            .encode()
            .map_err(|e| BackendError::Artifact(e.to_string())),
    }
}

/// `emit_with` at optimization level 0 without fast math.
pub fn emit(module: &Module, what: BackendEmit) -> Result<Vec<u8>, BackendError> {
    emit_with(module, what, 0, false)
}
