//! naga compiles a compute shader to SPIR-V its own way: the second oracle.
//!
//! Our own path is WGSL / GLSL -> kernel AST -> XIR -> our SPIR-V backend;
//! [`naga_spirv`] is naga's whole path instead (its front end, its validator,
//! its SPIR-V writer). Running both modules on the same device with the same
//! inputs (`xir_vulkan::run_foreign` for naga's) and the interpreter on
//! our XIR gives a three-way comparison in which a disagreement points at one
//! of the three.
//!
//! The writer options are chosen so that the two compilers agree by
//! construction wherever WGSL leaves a choice to the implementation:
//!
//! - **Bounds checks: `Restrict` for indices, buffer accesses and image
//!   loads.** WGSL lets an out-of-bounds access do one of several things; our
//!   front end clamps every dynamic index into range (`min(i, len - 1)`),
//!   which is what naga's `Restrict` policy emits. With `Unchecked` the two
//!   would differ exactly on the programs a differential test most wants to
//!   see, and `ReadZeroSkipWrite` is a different (also legal) semantics.
//!   Binding-array indices keep naga's default: the foreign runner refuses
//!   binding arrays.
//! - **Names kept** (`WriterFlags::DEBUG`): naga emits `OpName` only with that
//!   flag, and the foreign runner keys its inputs and outputs by the
//!   variables' `OpName`s, i.e. by the WGSL / GLSL names.
//! - **SPIR-V 1.3**: what Vulkan 1.1 accepts, so every device the runner
//!   opens (Vulkan 1.2, lavapipe included) takes it.
//! - Workgroup memory zero-initialized by naga's polyfill (WGSL requires
//!   zeroed `var<workgroup>`; the polyfill needs no device extension), and
//!   naga's integer division guards (WGSL defines `x / 0` and `MIN / -1`).
//! - No `StorageInputOutput16`: naga declares it for any `f16` unless told
//!   not to, and it asks the device for 16-bit shader inputs and outputs,
//!   which a compute shader has none of (its built-ins are 32-bit).
//! - Pipeline-overridable constants (`override`) take their defaults: the
//!   runner passes no specialization, so a module without defaults is refused
//!   with naga's message.
//!
//! The validator gets the capabilities the runner can use when the device has
//! them (64-bit and 16-bit arithmetic, 64-bit atomics, subgroups); the runner
//! checks the module's `OpCapability`s against the device it opened. Every
//! failure is an [`OracleError`] carrying naga's message and, when naga gives
//! one, the source position as `file:line:col`; naga panicking is caught and
//! reported as an internal error, never propagated.

use std::fmt;

use naga::back::spv;
use naga::valid::{Capabilities, ValidationFlags, Validator};

/// The source language (the front end's own: one list of what naga reads).
pub use crate::Language;

/// Which of naga's stages failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Parse,
    Validate,
    /// Resolving `override` constants to their defaults.
    Overrides,
    /// The SPIR-V writer.
    Write,
    /// naga panicked (a naga bug); the message is the panic's.
    Internal,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::Parse => "parse",
            Stage::Validate => "validation",
            Stage::Overrides => "override resolution",
            Stage::Write => "SPIR-V writer",
            Stage::Internal => "internal error",
        }
    }
}

/// A failure of naga's path, located in the source when naga says where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OracleError {
    /// The file name the caller gave (for messages only).
    pub file: String,
    /// 1-based line and column (bytes) of naga's first span, when it has one.
    pub location: Option<(u32, u32)>,
    pub stage: Stage,
    /// naga's message, its error chain and the span's label joined with `: `.
    pub message: String,
}

impl OracleError {
    /// The same failure as a project diagnostic (rule `naga`).
    pub fn to_diagnostic(&self) -> xir::Diagnostic {
        let span = self.location.map(|(line, col)| xir::Span::new(line, col));
        xir::Diagnostic::error(xir::diag::Rule::Naga, format!("{}: {}", self.stage.name(), self.message))
            .with_span(span)
            .with_file(self.file.clone())
    }
}

impl fmt::Display for OracleError {
    /// `file:line:col: error: [naga] stage: message`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_diagnostic())
    }
}

impl std::error::Error for OracleError {}

/// The validator capabilities: what the foreign runner binds when the device
/// has it (it checks each `OpCapability` against the device it opened).
/// Binding arrays, float atomics and ray queries are left out: the runner
/// refuses them. Push constants (`IMMEDIATES`) it pushes.
pub fn capabilities() -> Capabilities {
    Capabilities::IMMEDIATES
        | Capabilities::FLOAT64
        | Capabilities::SHADER_INT64
        | Capabilities::SHADER_INT64_ATOMIC_MIN_MAX
        | Capabilities::SHADER_INT64_ATOMIC_ALL_OPS
        | Capabilities::SHADER_FLOAT16
        | Capabilities::SHADER_INT16
        | Capabilities::SUBGROUP
        | Capabilities::SUBGROUP_BARRIER
        // `quantizeToF16` and the half-float packs: core SPIR-V
        // (`OpQuantizeToF16`, GLSL.std.450 `PackHalf2x16`), no device feature.
        | Capabilities::SHADER_FLOAT16_IN_FLOAT32
}

/// naga's SPIR-V writer options (module doc: why each).
pub fn writer_options() -> spv::Options<'static> {
    let policy = naga::proc::BoundsCheckPolicy::Restrict;
    spv::Options {
        lang_version: (1, 3),
        flags: spv::WriterFlags::DEBUG,
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: policy,
            buffer: policy,
            image_load: policy,
            ..Default::default()
        },
        zero_initialize_workgroup_memory: spv::ZeroInitializeWorkgroupMemoryMode::Polyfill,
        use_storage_input_output_16: false,
        ..spv::Options::default()
    }
}

/// Compile `source` (named `file` in messages) with naga alone: parse,
/// validate, resolve overrides to their defaults, write SPIR-V 1.3 words.
pub fn naga_spirv(source: &str, language: Language, file: &str) -> Result<Vec<u32>, OracleError> {
    naga_spirv_with(source, language, file, &crate::Overrides::new())
}

/// `naga_spirv` with values for the shader's `override`s (the ones given
/// to our front end, so both compilers build the same program).
pub fn naga_spirv_with(
    source: &str,
    language: Language,
    file: &str,
    overrides: &crate::Overrides,
) -> Result<Vec<u32>, OracleError> {
    // The same depth bound and stack as our front end (`crate::depth`):
    // naga's recursion is the same on this path.
    let src = crate::Source { path: file, text: source, language };
    let placement = match crate::depth::check(&src) {
        Ok(placement) => placement,
        Err(d) => {
            let location = d.span.map(|s| (s.line, s.col));
            return Err(OracleError { file: file.into(), location, stage: Stage::Parse, message: d.message });
        }
    };
    let run = std::panic::AssertUnwindSafe(|| {
        crate::depth::run_placed(placement, || compile(source, language, file, overrides)).unwrap_or_else(|e| {
            Err(OracleError {
                file: file.into(),
                location: None,
                stage: Stage::Internal,
                message: format!("could not start the front end's thread: {e}"),
            })
        })
    });
    match std::panic::catch_unwind(run) {
        Ok(r) => r,
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            Err(OracleError {
                file: file.into(),
                location: None,
                stage: Stage::Internal,
                message: format!("naga panicked: {why}"),
            })
        }
    }
}

fn compile(
    source: &str,
    language: Language,
    file: &str,
    overrides: &crate::Overrides,
) -> Result<Vec<u32>, OracleError> {
    let err = |stage: Stage, location: Option<naga::SourceLocation>, message: String| OracleError {
        file: file.into(),
        location: location.map(|l| (l.line_number, l.line_position)),
        stage,
        message,
    };
    let module = match language {
        // The module itself is its own oracle: it runs as it is.
        Language::Spirv => {
            let message = "a SPIR-V module is no source for naga's SPIR-V: run the module itself".to_string();
            return Err(err(Stage::Parse, None, message));
        }
        Language::Wgsl => naga::front::wgsl::parse_str(source).map_err(|e| {
            let label =
                e.labels().next().map(|(_, l)| l.to_string()).filter(|l| !l.is_empty() && !e.message().contains(l));
            let message = match label {
                Some(l) => format!("{}: {l}", e.message()),
                None => e.message().to_string(),
            };
            err(Stage::Parse, e.location(source), message)
        })?,
        Language::Glsl => {
            let options = naga::front::glsl::Options::from(naga::ShaderStage::Compute);
            naga::front::glsl::Frontend::default().parse(&options, source).map_err(|e| {
                let first = e.errors.first();
                let message = if e.errors.is_empty() {
                    "the GLSL front end failed without a message".to_string()
                } else {
                    e.errors.iter().map(|x| x.kind.to_string()).collect::<Vec<_>>().join("; ")
                };
                let location = first.filter(|x| x.meta.is_defined()).map(|x| x.meta.location(source));
                err(Stage::Parse, location, message)
            })?
        }
    };
    let mut validator = Validator::new(ValidationFlags::all(), capabilities());
    let info = validator.validate(&module).map_err(|e| spanned(&e, source, Stage::Validate, &err))?;
    let mut constants = naga::back::PipelineConstants::default();
    for (k, v) in overrides {
        constants.insert(k.clone(), *v);
    }
    let (module, info) = naga::back::pipeline_constants::process_overrides(&module, &info, None, &constants)
        .map_err(|e| err(Stage::Overrides, None, chain(&e)))?;
    spv::write_vec(&module, &info, &writer_options(), None).map_err(|e| err(Stage::Write, None, chain(&e)))
}

/// A `WithSpan` error's message chain with its first span's label, located.
fn spanned<E: std::error::Error>(
    e: &naga::WithSpan<E>,
    source: &str,
    stage: Stage,
    err: &impl Fn(Stage, Option<naga::SourceLocation>, String) -> OracleError,
) -> OracleError {
    let mut message = chain(e.as_inner());
    if let Some((_, label)) = e.spans().next().filter(|(_, l)| !l.is_empty() && !message.contains(l.as_str())) {
        message = format!("{message} ({label})");
    }
    err(stage, e.location(source), message)
}

/// An error's message and its sources, joined with `: `.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let m = s.to_string();
        if !out.contains(&m) {
            out = format!("{out}: {m}");
        }
        next = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAXPY: &str = "
@group(0) @binding(0) var<uniform> a: f32;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    y[id.x] = a * x[id.x] + y[id.x];
}
";

    fn names(words: &[u32]) -> Vec<String> {
        let m = rspirv_free_names(words);
        let mut n: Vec<String> = m.into_iter().filter(|s| ["a", "x", "y", "main"].contains(&s.as_str())).collect();
        n.sort();
        n.dedup();
        n
    }

    /// The `OpName` strings of a module, read without a SPIR-V library.
    fn rspirv_free_names(words: &[u32]) -> Vec<String> {
        let mut at = 5;
        let mut out = Vec::new();
        while at < words.len() {
            let (len, op) = ((words[at] >> 16) as usize, words[at] & 0xffff);
            assert!(len > 0 && at + len <= words.len(), "malformed naga output at word {at}");
            if op == 5 {
                let bytes: Vec<u8> = words[at + 2..at + len].iter().flat_map(|w| w.to_le_bytes()).collect();
                out.push(String::from_utf8_lossy(bytes.split(|&b| b == 0).next().unwrap_or(&[])).into_owned());
            }
            at += len;
        }
        out
    }

    #[test]
    fn wgsl_compiles_to_spirv_1_3_with_the_variables_named() {
        let words = naga_spirv(SAXPY, Language::Wgsl, "saxpy.wgsl").unwrap();
        assert_eq!(words[0], 0x0723_0203);
        assert_eq!(words[1], 0x0001_0300, "SPIR-V 1.3");
        assert_eq!(names(&words), ["a", "main", "x", "y"]);
    }

    #[test]
    fn glsl_compute_compiles() {
        let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer Data { float v[]; } data;
void main() { data.v[gl_GlobalInvocationID.x] *= 2.0; }
";
        let words = naga_spirv(src, Language::Glsl, "k.comp").unwrap();
        assert_eq!(words[0], 0x0723_0203);
    }

    #[test]
    fn a_push_constant_block_is_written_for_the_runner_to_push() {
        let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer Data { float v[]; } data;
layout(push_constant) uniform PC { float scale; } pc;
void main() { data.v[gl_GlobalInvocationID.x] *= pc.scale; }
";
        let words = naga_spirv(src, Language::Glsl, "k.comp").expect("compiles");
        // OpVariable (59) whose storage class (its third operand) is PushConstant (9).
        let push = crate::spirv::instructions(&words).filter(|(op, ops)| *op == 59 && ops.get(2) == Some(&9)).count();
        assert_eq!(push, 1);
    }

    #[test]
    fn a_parse_error_is_located_with_nagas_message() {
        let src = "@compute @workgroup_size(1)\nfn main() {\n    let x: f32 = ;\n}\n";
        let e = naga_spirv(src, Language::Wgsl, "bad.wgsl").unwrap_err();
        assert_eq!(e.stage, Stage::Parse);
        assert_eq!(e.location, Some((3, 18)));
        let shown = e.to_string();
        assert!(shown.starts_with("bad.wgsl:3:18: error: [naga] parse: expected"), "{shown}");
    }

    #[test]
    fn a_validation_error_is_located() {
        // Parses, but the validator refuses a store through a read-only binding.
        let src = "@group(0) @binding(0) var<storage, read> x: array<f32>;\n\
                   @compute @workgroup_size(1)\nfn main() {\n  x[0] = 1.0;\n}\n";
        let e = naga_spirv(src, Language::Wgsl, "v.wgsl").unwrap_err();
        assert_eq!(e.stage, Stage::Validate);
        assert_eq!(e.location, Some((4, 3)));
        let shown = e.to_string();
        assert!(
            shown.starts_with("v.wgsl:4:3: error: [naga] validation: Entry point main at Compute is invalid: "),
            "{shown}"
        );
        assert!(shown.contains("writing to this location is not permitted"), "{shown}");
    }

    #[test]
    fn an_override_without_a_default_is_refused_by_name() {
        let src = "override n: u32;\n@group(0) @binding(0) var<storage, read_write> x: array<u32>;\n\
                   @compute @workgroup_size(1)\nfn main() { x[0] = n; }\n";
        let e = naga_spirv(src, Language::Wgsl, "o.wgsl").unwrap_err();
        assert_eq!(e.stage, Stage::Overrides);
        assert!(e.message.contains("'n'"), "{e}");
        // With a default, the default is what runs.
        let ok = src.replace("override n: u32;", "override n: u32 = 7u;");
        assert!(naga_spirv(&ok, Language::Wgsl, "o.wgsl").is_ok());
    }

    #[test]
    fn a_glsl_error_is_located() {
        let src = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undefined_name = 1; }\n";
        let e = naga_spirv(src, Language::Glsl, "g.comp").unwrap_err();
        assert_eq!(e.stage, Stage::Parse);
        assert_eq!(e.location.map(|l| l.0), Some(3), "{e}");
        assert!(e.to_string().starts_with("g.comp:3:"), "{e}");
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Language::from_path("k.WGSL"), Some(Language::Wgsl));
        assert_eq!(Language::from_path("k.comp"), Some(Language::Glsl));
        assert_eq!(Language::from_path("k.glsl"), Some(Language::Glsl));
        assert_eq!(Language::from_path("k.spv"), None);
    }
}
