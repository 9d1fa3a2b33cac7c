//! SPIRV-Tools validation (Vulkan 1.2) and optimizer presets.
//!
//! Presets: 0 = no optional optimization; 1 = cheap cleanups (inlining,
//! dead-code and dead-branch elimination, CFG cleanup); 2 = the SPIRV-Tools
//! performance recipe; 3 = the performance recipe followed by the size
//! recipe. The input must already validate (the optimizer is never a repair
//! step); an optimizer failure or an invalid output keeps the input.

use spirv_tools::opt::{Optimizer, Passes};
use spirv_tools::val::Validator;
use spirv_tools::TargetEnv;

/// Validate for Vulkan 1.2; `Err` is the validator's message.
pub fn validate(words: &[u32]) -> Result<(), String> {
    let v = spirv_tools::val::create(Some(TargetEnv::Vulkan_1_2));
    v.validate(words, None).map_err(|e| e.to_string())
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

/// Run preset `level` on an already valid module.
pub fn optimize(words: &[u32], level: u8) -> (Vec<u32>, OptOutcome) {
    if level == 0 {
        return (words.to_vec(), OptOutcome::Skipped);
    }
    let mut o = spirv_tools::opt::create(Some(TargetEnv::Vulkan_1_2));
    match level {
        1 => {
            for p in [
                Passes::InlineExhaustive,
                Passes::EliminateDeadFunctions,
                Passes::DeadBranchElim,
                Passes::AggressiveDCE,
                Passes::CFGCleanup,
            ] {
                o.register_pass(p);
            }
        }
        2 => {
            o.register_performance_passes();
        }
        _ => {
            o.register_performance_passes();
            o.register_size_passes();
        }
    }
    let mut messages = Vec::new();
    let out = o.optimize(words, &mut |m: spirv_tools::error::Message| messages.push(format!("{m:?}")), None);
    match out {
        Ok(bin) => {
            let opt = bin.as_words().to_vec();
            match validate(&opt) {
                Ok(()) => (opt, OptOutcome::Optimized),
                Err(e) => (words.to_vec(), OptOutcome::Rejected(format!("optimized module failed validation: {e}"))),
            }
        }
        Err(e) => (words.to_vec(), OptOutcome::Rejected(format!("optimizer failed: {e}; {}", messages.join("; ")))),
    }
}
