//! `xir-spirv`: the native XIR -> SPIR-V backend for Vulkan compute kernels.
//!
//! [`compile`] runs, in order (the reference's compile sequence):
//! 1. the fail-closed handoff ([`handoff::check`], whose witness
//!    [`handoff::HandedOff`] is what planning and emission take; a
//!    pipeline's own handoff step can stand for it, [`handoff::run_pipeline`]);
//! 2. the immutable plans ([`plan::plan_all`]): call graph and structural
//!    closures, control flow, layout, bindings / ABI, target features, the
//!    constant UBO (large array constants read from one uniform buffer whose
//!    bytes are [`SpirvOutput::constants`]);
//! 3. emission with rspirv ([`emit`]);
//! 4. SPIRV-Tools validation for Vulkan 1.2 (at -O0 the only one), the
//!    optimizer preset ([`validate`]);
//! 5. after an optimizer preset, SPIRV-Tools' own trim-capabilities pass,
//!    only inside its audited allowlist ([`trim`]; the narrow arithmetic
//!    capabilities are exact from emission already), and validation of the
//!    result, kept only if valid (before and after optimization: twice at
//!    -O1+); then feature reconciliation from the final binary's
//!    `OpCapability`s plus the emission-owned bits, checked against the
//!    device snapshot.
//!
//! The kernel ABI is in [`abi`]. [`register_passes`] adds the backend's two
//! pipeline passes (`spirv_handoff`, `callable_specialization`).
//!
//! No Vulkan here: running a compiled kernel on a device is `xir-vulkan`, so
//! embedding the compiler links no loader (ARCHITECTURE.md, "Invariants and
//! boundaries").

pub mod abi;
pub mod artifact;
pub mod classify;
#[cfg(debug_assertions)]
pub mod debug_invalid;
pub mod emit;
pub mod features;
pub mod handoff;
mod passes;
pub mod plan;
pub mod reflect;
pub mod specialize;
pub mod trim;
pub mod validate;

use rspirv::binary::Disassemble;
use xir::{Diagnostic, FuncId, Module};

pub use abi::{BufferStorage, KernelAbi, Property, PropertyKind};
pub use features::{Feature, FeatureSet};
pub use passes::register_passes;

/// Options of one compilation.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// Optimizer preset 0..=3 (0 = no optional optimization).
    pub opt_level: u8,
    /// Allow FMA contraction (one planned FMA per add) and declare no float
    /// controls (no `SignedZeroInfNanPreserve`, no `RoundingModeRTE`: the
    /// device may round `+ - *` and conversions either way and ignore the
    /// sign of zero, infinities and NaNs). Off, every float multiply / add /
    /// sub / dot / matrix op is `NoContraction` and the controls are declared.
    pub fast_math: bool,
    /// The logical device's enabled features; `None` = unknown (no check, no
    /// optional native float atomics).
    pub device_features: Option<FeatureSet>,
    /// `-g`: `!loc` locations as `OpLine`s under `OpString` / `OpSource`,
    /// and XIR names as `OpName`s (`emit/debug.rs`, docs/debug-info.md).
    /// Off, the module is exactly what it is without debug info.
    pub debug_info: bool,
}

/// A compiled kernel.
#[derive(Clone, Debug)]
pub struct SpirvOutput {
    /// The validated module as emitted.
    pub words_unoptimized: Vec<u32>,
    /// The final module (optimized if the preset ran and its output validated).
    pub words: Vec<u32>,
    pub abi: KernelAbi,
    /// Required features, reconciled from the final binary.
    pub features: FeatureSet,
    /// What the optimizer did.
    pub opt: validate::OptOutcome,
    /// What the final capability trim did (`trim.rs`).
    pub trim: trim::TrimOutcome,
    /// One printer record per reachable `print` site (`emit::print`).
    pub printers: Vec<artifact::PrinterRecord>,
    /// The constant data: the exact std140 bytes of the uniform block the ABI's
    /// `ConstantData` property describes (empty when no constant was placed).
    pub constants: Vec<u8>,
    /// Why each large array constant that stays inline was not placed (printed XIR type, reason).
    pub inline_constants: Vec<(String, String)>,
}

impl SpirvOutput {
    /// Disassembly of the final module.
    pub fn disassembly(&self) -> String {
        disassemble(&self.words)
    }
    /// Disassembly of the module as emitted.
    pub fn disassembly_unoptimized(&self) -> String {
        disassemble(&self.words_unoptimized)
    }
}

/// rspirv disassembly of a word stream (or the load error).
pub fn disassemble(words: &[u32]) -> String {
    match rspirv::dr::load_words(words) {
        Ok(m) => m.disassemble(),
        Err(e) => format!("<cannot load SPIR-V: {e}>"),
    }
}

fn diag(rule: &str, msg: impl Into<String>, m: &Module, f: FuncId) -> Diagnostic {
    let mut d = Diagnostic::error(rule, msg);
    if let Some(func) = m.functions.get(f.index()) {
        d = d.in_function(&func.name).with_span(func.span);
    }
    d
}

/// Compile kernel `kernel` of `module` (in dialect `xir.spirv`) to SPIR-V:
/// the handoff ([`handoff::check`]), then [`compile_handed_off`].
pub fn compile(module: &Module, kernel: FuncId, opts: &CompileOptions) -> Result<SpirvOutput, Vec<Diagnostic>> {
    check_options(module, kernel, opts)?;
    compile_handed_off(handoff::check(module, kernel)?, opts)
}

fn check_options(module: &Module, kernel: FuncId, opts: &CompileOptions) -> Result<(), Vec<Diagnostic>> {
    if opts.opt_level > 3 {
        return Err(vec![diag(
            "spirv-options",
            format!("optimization level {} is not one of 0..=3", opts.opt_level),
            module,
            kernel,
        )]);
    }
    Ok(())
}

/// Compile a kernel that passed the handoff (steps 2-5 above).
pub fn compile_handed_off(
    handed: handoff::HandedOff<'_>,
    opts: &CompileOptions,
) -> Result<SpirvOutput, Vec<Diagnostic>> {
    let (module, kernel) = (handed.module(), handed.kernel());
    check_options(module, kernel, opts)?;
    let plans = plan::plan_all(&handed, opts.device_features.as_ref(), opts.fast_math)?;
    let printers = emit::print::plan_prints(module, &plans)?;
    let emitter = emit::Emitter::new(&handed, opts, &plans);
    let words = emitter.run().map_err(|e| {
        let f = e.func.unwrap_or(kernel);
        let fd = module.func(f);
        let mut d = Diagnostic::error(xir::diag::Rule::SpirvEmit, format!("internal emission error: {}", e.message))
            .in_function(&fd.name);
        if let Some(i) = e.inst {
            d = xir::verify::inst_diag(
                fd,
                i,
                xir::diag::Rule::SpirvEmit,
                format!("internal emission error: {}", e.message),
            );
        }
        vec![d]
    })?;
    #[cfg(debug_assertions)]
    let words = debug_invalid::apply(module, words);
    if let Err(e) = validate::validate(&words) {
        return Err(vec![diag(
            "spirv-validate",
            format!("emitted SPIR-V failed Vulkan 1.2 validation: {e}\n{}", disassemble(&words)),
            module,
            kernel,
        )]);
    }
    // Only after a preset ran can a capability have lost its last use, so
    // the trim runs there; the result is validated once more (or is `words`).
    let (final_words, opt, trim) = validate::optimize_and_trim(&words, opts.opt_level);
    let caps = capabilities(&final_words);
    let features = FeatureSet::from_capabilities(caps)
        .union(plans.features.required.emission_owned())
        .union(features::from_abi(&plans.bindings.abi));
    if let Some(dev) = &opts.device_features {
        if let Err(e) = features::check_available(&features, dev) {
            return Err(vec![diag("spirv-features", e.to_string(), module, kernel)]);
        }
    }
    Ok(SpirvOutput {
        words_unoptimized: words,
        words: final_words,
        abi: plans.bindings.abi.clone(),
        features,
        opt,
        trim,
        printers,
        constants: plans.constant_ubo.bytes.clone(),
        inline_constants: plans
            .constant_ubo
            .inline
            .iter()
            .map(|(c, why)| (xir::text::type_to_string(&module.types, module.consts.get(*c).ty), why.clone()))
            .collect(),
    })
}

/// The `OpCapability` operands of a module, read from the words: the
/// capabilities lead every module, so this stops at the first other
/// instruction after them instead of parsing the whole module (it runs on
/// every compilation). A stream that is not a SPIR-V module has none.
pub fn capabilities(words: &[u32]) -> Vec<rspirv::spirv::Capability> {
    const HEADER_WORDS: usize = 5;
    let mut caps = Vec::new();
    if words.first() != Some(&rspirv::spirv::MAGIC_NUMBER) {
        return caps;
    }
    let mut at = HEADER_WORDS;
    while let Some(&first) = words.get(at) {
        let (count, opcode) = ((first >> 16) as usize, first & 0xffff);
        if opcode != rspirv::spirv::Op::Capability as u32 || count != 2 {
            break;
        }
        match words.get(at + 1).and_then(|&c| rspirv::spirv::Capability::from_u32(c)) {
            Some(c) => caps.push(c),
            None => break,
        }
        at += count;
    }
    caps
}
