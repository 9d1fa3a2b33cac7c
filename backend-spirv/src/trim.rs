//! The final capability trim: SPIRV-Tools' own `trim-capabilities` pass, run
//! on the optimized module only when every capability it declares is in
//! [`TRIM_AUDITED`].
//!
//! Why: the optimizer presets can delete the last instruction that needed a
//! capability (a folded 64-bit computation, a dead f64 path); the capability
//! then stays declared and the artifact would require a device feature it no
//! longer uses. The reference's rule is to let the vendored trim pass remove
//! such declarations (never a hand-written binary rewrite), and to register it
//! only inside a locally audited domain, because the pass states an
//! incomplete input contract ("if the module contains unsupported
//! capabilities, results might be incorrect").
//!
//! The `spirv-tools` crate does not expose this pass, so it is registered by
//! flag through the library's C API (`spvOptimizerRegisterPassFromFlag`),
//! which the crate's static SPIRV-Tools build already contains. The result is
//! validated again; anything but a valid module keeps the input.
//!
//! Audit (this SPIRV-Tools revision, `trim_capabilities_pass.h`): every entry
//! of [`TRIM_AUDITED`] is either in the pass's supported set (`Shader`,
//! `Int16`, `Int64`, `Float16`, `Float64`, `StorageBuffer16BitAccess`, the
//! two storage-image format capabilities, `RayQueryKHR`) or enables only
//! execution modes (`SignedZeroInfNanPreserve`, `RoundingModeRTE`), whose
//! presence changes no requirement the pass computes. Excluded on purpose:
//! `UniformAndStorageBuffer16BitAccess` (the reference: this pass revision
//! removes it while storage-only uses still need it), every 8-bit capability
//! (the pass has no 8-bit handlers), and everything else the backend emits
//! (atomics, descriptor indexing, images, non-semantic info, ...), which keep
//! their provisional requirements.

use std::ffi::{c_char, c_void, CString};

use rspirv::spirv::Capability;

/// The capabilities a module may declare for the trim pass to run on it.
pub const TRIM_AUDITED: [Capability; 11] = [
    Capability::Shader,
    Capability::Int16,
    Capability::Int64,
    Capability::Float16,
    Capability::Float64,
    Capability::StorageBuffer16BitAccess,
    Capability::StorageImageReadWithoutFormat,
    Capability::StorageImageWriteWithoutFormat,
    Capability::RayQueryKHR,
    Capability::SignedZeroInfNanPreserve,
    Capability::RoundingModeRTE,
];

/// What [`trim`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrimOutcome {
    /// The pass ran and its valid output is returned (possibly unchanged).
    Trimmed(Vec<Capability>),
    /// Not run: the module declares a capability outside [`TRIM_AUDITED`].
    OutsideAllowlist(Capability),
    /// The pass failed or its output did not validate; the input is kept.
    Failed(String),
}

#[repr(C)]
struct SpvBinary {
    code: *mut u32,
    word_count: usize,
}

extern "C" {
    fn spvOptimizerCreate(env: spirv_tools::TargetEnv) -> *mut c_void;
    fn spvOptimizerDestroy(optimizer: *mut c_void);
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

/// Run the trim pass over `words` (a valid module) where the allowlist
/// permits; returns the module to keep and what happened.
pub fn trim(words: &[u32]) -> (Vec<u32>, TrimOutcome) {
    let declared = crate::capabilities(words);
    if let Some(c) = declared.iter().find(|c| !TRIM_AUDITED.contains(c)) {
        return (words.to_vec(), TrimOutcome::OutsideAllowlist(*c));
    }
    let out = match run_pass(words) {
        Ok(w) => w,
        Err(e) => return (words.to_vec(), TrimOutcome::Failed(e)),
    };
    if let Err(e) = crate::validate::validate(&out) {
        return (words.to_vec(), TrimOutcome::Failed(format!("the trimmed module does not validate: {e}")));
    }
    let kept = crate::capabilities(&out);
    let removed = declared.into_iter().filter(|c| !kept.contains(c)).collect();
    (out, TrimOutcome::Trimmed(removed))
}

fn run_pass(words: &[u32]) -> Result<Vec<u32>, String> {
    let flag = CString::new("--trim-capabilities").expect("no NUL");
    // SAFETY: the C API's documented lifecycle: create, register, run into a
    // fresh spv_binary, copy it out, destroy everything created here on every
    // path. `words` outlives the call; the binary's code/word_count describe
    // one allocation owned by the binary until `spvBinaryDestroy`.
    unsafe {
        let opt = spvOptimizerCreate(spirv_tools::TargetEnv::Vulkan_1_2);
        if opt.is_null() {
            return Err("spvOptimizerCreate failed".into());
        }
        let options = spvOptimizerOptionsCreate();
        let result = (|| {
            if options.is_null() {
                return Err("spvOptimizerOptionsCreate failed".to_string());
            }
            // Validation runs afterwards in Rust, with its message.
            spvOptimizerOptionsSetRunValidator(options, false);
            if !spvOptimizerRegisterPassFromFlag(opt, flag.as_ptr()) {
                return Err("this SPIRV-Tools has no --trim-capabilities pass".to_string());
            }
            let mut bin: *mut SpvBinary = std::ptr::null_mut();
            let rc = spvOptimizerRun(opt, words.as_ptr(), words.len(), &mut bin, options);
            if rc != 0 || bin.is_null() {
                if !bin.is_null() {
                    spvBinaryDestroy(bin);
                }
                return Err(format!("trim-capabilities failed (spv_result_t {rc})"));
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
