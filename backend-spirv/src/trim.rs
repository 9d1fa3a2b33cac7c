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
//! flag through the library's C API (`spvOptimizerRegisterPassFromFlag`,
//! [`crate::validate::run_optimizer`]), which the crate's static SPIRV-Tools
//! build already contains. The result is validated; anything but a valid
//! module keeps the input.
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

/// Run the trim pass over `words` (a valid module) where the allowlist
/// permits; returns the module to keep and what happened.
pub fn trim(words: &[u32]) -> (Vec<u32>, TrimOutcome) {
    match trim_unvalidated(words) {
        Ok((out, removed)) => match crate::validate::validate(&out) {
            Ok(()) => (out, TrimOutcome::Trimmed(removed)),
            Err(e) => (words.to_vec(), TrimOutcome::Failed(format!("the trimmed module does not validate: {e}"))),
        },
        Err(outcome) => (words.to_vec(), outcome),
    }
}

/// The trim pass's output and the capabilities it removed, not yet
/// validated (the caller validates what it keeps:
/// [`crate::validate::optimize_and_trim`]); or why it did not run.
pub(crate) fn trim_unvalidated(words: &[u32]) -> Result<(Vec<u32>, Vec<Capability>), TrimOutcome> {
    let declared = crate::capabilities(words);
    if let Some(c) = declared.iter().find(|c| !TRIM_AUDITED.contains(c)) {
        return Err(TrimOutcome::OutsideAllowlist(*c));
    }
    let out = crate::validate::run_optimizer(words, &["--trim-capabilities"])
        .map_err(|e| TrimOutcome::Failed(format!("trim-capabilities failed: {e}")))?;
    let kept = crate::capabilities(&out);
    let removed = declared.into_iter().filter(|c| !kept.contains(c)).collect();
    Ok((out, removed))
}
