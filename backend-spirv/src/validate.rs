//! SPIRV-Tools validation (Vulkan 1.2) and optimizer presets.
//!
//! Presets: 0 = no optional optimization; 1 = cheap cleanups (inlining,
//! dead-code and dead-branch elimination, CFG cleanup); 2 = the SPIRV-Tools
//! performance recipe (`-O`) without conditional constant propagation;
//! 3 = preset 2 followed by dead-constant / duplicate removal and id
//! compaction. The input must already validate (the optimizer is never a
//! repair step); an optimizer failure or an invalid output keeps the input.
//!
//! Why not `register_performance_passes`: its CCP pass aborts the process
//! (SPIRV-Tools assertion "Unsettled value" in `propagator.cpp`, bundled
//! version of spirv-tools 0.13.3) on modules with the
//! `SignedZeroInfNanPreserve` execution mode that every kernel now carries
//! (seen on the corpus `float_math` kernel). An abort cannot be caught, so
//! the recipe is spelled out here without it. Likewise its constant folder
//! aborts on a narrow-vector bitcast (`vec2<f16>` -> `u32`, how a half's
//! bits are read) of a constant, so levels 2 and 3 skip a module holding
//! one (`has_narrow_vector_bitcast`; found by fuzzing, RELIABILITY.md).

use std::ffi::{c_char, c_void, CString};

use spirv_tools::TargetEnv;

/// SPIRV-Tools rejects a module; `message` is the validator's (with the
/// VUID of the rule it breaks, when it names one).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    pub message: String,
}

impl ValidationError {
    /// Whether the validator names Vulkan valid-usage rule `vuid`.
    pub fn breaks(&self, vuid: &str) -> bool {
        self.message.contains(vuid)
    }
}

/// Validate for Vulkan 1.2.
///
/// Through the C API rather than `spirv_tools::val`, for one option the
/// crate does not expose: friendly names are off. With them on (the
/// library's default) every validation first builds a name for every id
/// from `OpName`s and types, 7% of a whole WGSL compilation, for error
/// messages only; ours print `%id`s, which match the disassembly that
/// comes with them.
pub fn validate(words: &[u32]) -> Result<(), ValidationError> {
    // SAFETY: the C API's documented lifecycle: create the context and the
    // options, validate `words` (which outlive the call), copy the
    // diagnostic's message out, destroy everything created here on every
    // path. The diagnostic, when set, is one allocation owned by us until
    // `spvDiagnosticDestroy`.
    unsafe {
        let context = spvContextCreate(TargetEnv::Vulkan_1_2);
        let options = spvValidatorOptionsCreate();
        if context.is_null() || options.is_null() {
            destroy(context, options);
            return Err(ValidationError { message: "SPIRV-Tools could not create a validator".into() });
        }
        spvValidatorOptionsSetFriendlyNames(options, false);
        let binary = ConstBinary { code: words.as_ptr(), word_count: words.len() };
        let mut diagnostic: *mut SpvDiagnostic = std::ptr::null_mut();
        let rc = spvValidateWithOptions(context, options, &binary, &mut diagnostic);
        let message = (!diagnostic.is_null()).then(|| {
            let d = &*diagnostic;
            let text = if d.error.is_null() {
                String::new()
            } else {
                std::ffi::CStr::from_ptr(d.error).to_string_lossy().trim_end().to_string()
            };
            let message = format!("error:{}:{} - {text}", d.position.line, d.position.column);
            spvDiagnosticDestroy(diagnostic);
            message
        });
        destroy(context, options);
        match rc {
            0 => Ok(()),
            rc => Err(ValidationError {
                message: message.unwrap_or_else(|| format!("validation failed (spv_result_t {rc})")),
            }),
        }
    }
}

/// # Safety
/// Each pointer is null or was created by the matching C constructor and
/// is not used afterwards.
unsafe fn destroy(context: *mut c_void, options: *mut c_void) {
    unsafe {
        if !options.is_null() {
            spvValidatorOptionsDestroy(options);
        }
        if !context.is_null() {
            spvContextDestroy(context);
        }
    }
}

#[repr(C)]
struct ConstBinary {
    code: *const u32,
    word_count: usize,
}

#[repr(C)]
struct Position {
    line: usize,
    column: usize,
    index: usize,
}

#[repr(C)]
struct SpvDiagnostic {
    position: Position,
    error: *const c_char,
    is_text_source: bool,
}

extern "C" {
    fn spvContextCreate(env: TargetEnv) -> *mut c_void;
    fn spvContextDestroy(context: *mut c_void);
    fn spvValidatorOptionsCreate() -> *mut c_void;
    fn spvValidatorOptionsDestroy(options: *mut c_void);
    fn spvValidatorOptionsSetFriendlyNames(options: *mut c_void, on: bool);
    fn spvValidateWithOptions(
        context: *const c_void,
        options: *const c_void,
        binary: *const ConstBinary,
        diagnostic: *mut *mut SpvDiagnostic,
    ) -> i32;
    fn spvDiagnosticDestroy(diagnostic: *mut SpvDiagnostic);
}

/// What optimization did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptOutcome {
    /// Level 0: nothing ran.
    Skipped,
    /// The optimized module validated and is returned.
    Optimized,
    /// The optimizer failed or produced an invalid module; the input is kept.
    Rejected(String),
}

/// SPIRV-Tools' performance recipe (`-O`) minus conditional constant
/// propagation (and scalar replacement), as the optimizer's pass flags.
const PERFORMANCE: [&str; 39] = [
    "--wrap-opkill",
    "--eliminate-dead-branches",
    "--merge-return",
    "--inline-entry-points-exhaustive",
    "--eliminate-dead-functions",
    "--eliminate-dead-code-aggressive",
    "--private-to-local",
    "--eliminate-local-single-block",
    "--eliminate-local-single-store",
    "--eliminate-dead-code-aggressive",
    "--convert-local-access-chains",
    "--eliminate-local-single-block",
    "--eliminate-local-single-store",
    "--eliminate-dead-code-aggressive",
    "--ssa-rewrite",
    "--eliminate-dead-code-aggressive",
    "--eliminate-dead-branches",
    "--redundancy-elimination",
    "--combine-access-chains",
    "--simplify-instructions",
    "--convert-local-access-chains",
    "--eliminate-local-single-block",
    "--eliminate-local-single-store",
    "--eliminate-dead-code-aggressive",
    "--ssa-rewrite",
    "--eliminate-dead-code-aggressive",
    "--vector-dce",
    "--eliminate-dead-inserts",
    "--eliminate-dead-branches",
    "--simplify-instructions",
    "--if-conversion",
    "--copy-propagate-arrays",
    "--reduce-load-size",
    // The recipe's tail: without it, stores into a local whose loads
    // CopyPropagateArrays redirected stay behind (`nested_loops`).
    "--eliminate-dead-code-aggressive",
    "--merge-blocks",
    "--redundancy-elimination",
    "--eliminate-dead-branches",
    "--merge-blocks",
    "--simplify-instructions",
];

/// Preset 1: cheap cleanups.
const CLEANUPS: [&str; 5] = [
    "--inline-entry-points-exhaustive",
    "--eliminate-dead-functions",
    "--eliminate-dead-branches",
    "--eliminate-dead-code-aggressive",
    "--cfg-cleanup",
];

/// Preset 3's tail after preset 2.
const COMPACTION: [&str; 4] =
    ["--eliminate-dead-const", "--remove-duplicates", "--eliminate-dead-code-aggressive", "--compact-ids"];

/// The pass flags of preset `level` (none at 0).
pub fn preset(level: u8) -> Vec<&'static str> {
    match level {
        0 => Vec::new(),
        1 => CLEANUPS.to_vec(),
        2 => PERFORMANCE.to_vec(),
        _ => PERFORMANCE.iter().chain(&COMPACTION).copied().collect(),
    }
}

/// Run preset `level` on an already valid module, then the capability trim
/// where its allowlist permits ([`crate::trim`]), and validate the result:
/// what is returned is the input or a module SPIRV-Tools validated.
///
/// Validation runs once here on the usual path (the final module), which
/// with the input's validation before it is the contract's "before and
/// after optimization": the optimizer's own validation of its input is off
/// (that input was just validated), and the optimized module is validated
/// on its own only when the trimmed one fails.
pub fn optimize_and_trim(words: &[u32], level: u8) -> (Vec<u32>, OptOutcome, crate::trim::TrimOutcome) {
    use crate::trim::{self, TrimOutcome};
    let untrimmed = TrimOutcome::Trimmed(Vec::new());
    if level == 0 {
        return (words.to_vec(), OptOutcome::Skipped, untrimmed);
    }
    if level >= 2 && has_narrow_vector_bitcast(words) {
        return (words.to_vec(), OptOutcome::Rejected(NARROW_BITCAST.to_string()), untrimmed);
    }
    let optimized = match run_optimizer(words, &preset(level)) {
        Ok(w) => w,
        Err(e) => return (words.to_vec(), OptOutcome::Rejected(format!("optimizer failed: {e}")), untrimmed),
    };
    let trim_outcome = match trim::trim_unvalidated(&optimized) {
        Ok((trimmed, removed)) => match validate(&trimmed) {
            Ok(()) => return (trimmed, OptOutcome::Optimized, TrimOutcome::Trimmed(removed)),
            Err(e) => TrimOutcome::Failed(format!("the trimmed module does not validate: {e}")),
        },
        Err(outcome) => outcome,
    };
    match validate(&optimized) {
        Ok(()) => (optimized, OptOutcome::Optimized, trim_outcome),
        Err(e) => (words.to_vec(), OptOutcome::Rejected(format!("optimized module failed validation: {e}")), untrimmed),
    }
}

#[repr(C)]
struct SpvBinary {
    code: *mut u32,
    word_count: usize,
}

extern "C" {
    fn spvOptimizerCreate(env: TargetEnv) -> *mut c_void;
    fn spvOptimizerDestroy(optimizer: *mut c_void);
    fn spvOptimizerSetMessageConsumer(
        optimizer: *mut c_void,
        consumer: extern "C" fn(i32, *const c_char, *const c_void, *const c_char),
    );
    fn spvOptimizerRegisterPassFromFlag(optimizer: *mut c_void, flag: *const c_char) -> bool;
    fn spvOptimizerRun(
        optimizer: *mut c_void,
        binary: *const u32,
        word_count: usize,
        optimized: *mut *mut SpvBinary,
        options: *const c_void,
    ) -> i32;
    fn spvOptimizerOptionsCreate() -> *mut c_void;
    fn spvOptimizerOptionsDestroy(options: *mut c_void);
    fn spvOptimizerOptionsSetRunValidator(options: *mut c_void, run: bool);
    fn spvBinaryDestroy(binary: *mut SpvBinary);
}

/// The optimizer failed; `message` says how, with what it reported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OptimizerError {
    pub message: String,
}

thread_local! {
    /// What the optimizer reported during the current [`run_optimizer`] on
    /// this thread (the C callback takes no context pointer).
    static MESSAGES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The optimizer's message consumer. It must be set: a pass that reports
/// (a warning of the inliner, ...) calls it, and an unset one throws a C++
/// exception, which aborts the process. Nothing here may unwind.
extern "C" fn consume_message(_level: i32, _source: *const c_char, _position: *const c_void, message: *const c_char) {
    if message.is_null() {
        return;
    }
    // SAFETY: SPIRV-Tools passes a NUL-terminated string valid for the call.
    let text = unsafe { std::ffi::CStr::from_ptr(message) }.to_string_lossy().into_owned();
    let _ = MESSAGES.try_with(|m| {
        if let Ok(mut m) = m.try_borrow_mut() {
            m.push(text);
        }
    });
}

/// Run the optimizer passes `flags` (SPIRV-Tools' command-line spellings,
/// registered through the C API, which has every pass, unlike the crate)
/// over `words`, without the optimizer's own validation: the caller
/// validates what it keeps.
pub(crate) fn run_optimizer(words: &[u32], flags: &[&str]) -> Result<Vec<u32>, OptimizerError> {
    let _ = MESSAGES.try_with(|m| m.borrow_mut().clear());
    let result = run_optimizer_passes(words, flags);
    let reported = MESSAGES.try_with(|m| std::mem::take(&mut *m.borrow_mut())).unwrap_or_default();
    result.map_err(|e| OptimizerError {
        message: if reported.is_empty() { e } else { format!("{e}; {}", reported.join("; ")) },
    })
}

fn run_optimizer_passes(words: &[u32], flags: &[&str]) -> Result<Vec<u32>, String> {
    let flags: Vec<CString> = flags.iter().map(|f| CString::new(*f).expect("no NUL in a pass flag")).collect();
    // SAFETY: the C API's documented lifecycle: create, register, run into a
    // fresh spv_binary, copy it out, destroy everything created here on every
    // path. `words` outlives the call; the binary's code/word_count describe
    // one allocation owned by the binary until `spvBinaryDestroy`.
    unsafe {
        let opt = spvOptimizerCreate(TargetEnv::Vulkan_1_2);
        if opt.is_null() {
            return Err("spvOptimizerCreate failed".into());
        }
        let options = spvOptimizerOptionsCreate();
        let result = (|| {
            if options.is_null() {
                return Err("spvOptimizerOptionsCreate failed".to_string());
            }
            spvOptimizerOptionsSetRunValidator(options, false);
            spvOptimizerSetMessageConsumer(opt, consume_message);
            for f in &flags {
                if !spvOptimizerRegisterPassFromFlag(opt, f.as_ptr()) {
                    return Err(format!("this SPIRV-Tools has no {} pass", f.to_string_lossy()));
                }
            }
            let mut bin: *mut SpvBinary = std::ptr::null_mut();
            let rc = spvOptimizerRun(opt, words.as_ptr(), words.len(), &mut bin, options);
            if rc != 0 || bin.is_null() {
                if !bin.is_null() {
                    spvBinaryDestroy(bin);
                }
                return Err(format!("spv_result_t {rc}"));
            }
            let b = &*bin;
            let out =
                if b.code.is_null() { Vec::new() } else { std::slice::from_raw_parts(b.code, b.word_count).to_vec() };
            spvBinaryDestroy(bin);
            Ok(out)
        })();
        if !options.is_null() {
            spvOptimizerOptionsDestroy(options);
        }
        spvOptimizerDestroy(opt);
        result
    }
}

/// Why the preset did not run on a module with a narrow-vector bitcast.
const NARROW_BITCAST: &str = "not run: the module bit-casts a vector of 8- or 16-bit lanes to one scalar \
     (a half's bits read as a `vec2<f16>` -> `u32`), which SPIRV-Tools' constant folder asserts on \
     (folding_rules.cpp, BitCastScalarOrVector) once the vector is constant";

/// Whether `words` hold an `OpBitcast` from a vector whose lanes are
/// narrower than 32 bits to a scalar, with a constant operand (a constant,
/// or built of constants by composite construction or extraction): the
/// crate's SPIRV-Tools 0.13 build aborts the process folding it (`print`
/// of an `f16` constant, widening an `f16` constant; found by the
/// `generated` fuzz target). The same bitcast of a run-time value (a half
/// read from a buffer) is left to the optimizer.
fn has_narrow_vector_bitcast(words: &[u32]) -> bool {
    use rspirv::dr::{Instruction, Operand};
    use rspirv::spirv::Op;
    let Ok(m) = rspirv::dr::load_words(words) else { return false };
    let mut scalar_width = std::collections::HashMap::new();
    let mut narrow_vector = std::collections::HashSet::new();
    let mut constant = std::collections::HashSet::new();
    for t in &m.types_global_values {
        match (t.class.opcode, t.result_id, t.operands.as_slice()) {
            (Op::TypeInt | Op::TypeFloat, Some(id), [Operand::LiteralBit32(w), ..]) => {
                scalar_width.insert(id, *w);
            }
            (Op::TypeVector, Some(id), [Operand::IdRef(lane), ..])
                if scalar_width.get(lane).is_some_and(|&w| w < 32) =>
            {
                narrow_vector.insert(id);
            }
            (Op::Constant | Op::ConstantComposite | Op::ConstantNull | Op::SpecConstant, Some(id), _) => {
                constant.insert(id);
            }
            _ => {}
        }
    }
    let insts = || m.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter()));
    let type_of: std::collections::HashMap<u32, u32> =
        m.types_global_values.iter().chain(insts()).filter_map(|i| Some((i.result_id?, i.result_type?))).collect();
    // Values the folder sees as constants without propagating through
    // memory or calls: composites of constants and their lanes (SSA
    // definitions come before their uses within these straight runs).
    let folds = |i: &Instruction, constant: &std::collections::HashSet<u32>| {
        matches!(i.class.opcode, Op::CompositeConstruct | Op::CompositeExtract | Op::CopyObject)
            && i.operands.iter().all(|o| match o {
                Operand::IdRef(v) => constant.contains(v),
                _ => true,
            })
    };
    for i in insts() {
        if let Some(id) = i.result_id.filter(|_| folds(i, &constant)) {
            constant.insert(id);
        }
    }
    insts().any(|i| {
        i.class.opcode == Op::Bitcast
            && i.result_type.is_some_and(|t| scalar_width.contains_key(&t))
            && matches!(i.operands.first(), Some(Operand::IdRef(v))
                if constant.contains(v) && type_of.get(v).is_some_and(|t| narrow_vector.contains(t)))
    })
}
