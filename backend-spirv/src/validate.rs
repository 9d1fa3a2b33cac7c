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
//! the recipe is spelled out here without it.

use spirv_tools::opt::{Optimizer, Passes};
use spirv_tools::val::Validator;
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
pub fn validate(words: &[u32]) -> Result<(), ValidationError> {
    let v = spirv_tools::val::create(Some(TargetEnv::Vulkan_1_2));
    v.validate(words, None).map_err(|e| ValidationError { message: e.to_string() })
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

/// SPIRV-Tools' performance recipe (`-O`) minus conditional constant propagation
/// (and scalar replacement, which the crate does not expose).
const PERFORMANCE: [Passes; 39] = [
    Passes::WrapOpKill,
    Passes::DeadBranchElim,
    Passes::MergeReturn,
    Passes::InlineExhaustive,
    Passes::EliminateDeadFunctions,
    Passes::AggressiveDCE,
    Passes::PrivateToLocal,
    Passes::LocalSingleBlockLoadStoreElim,
    Passes::LocalSingleStoreElim,
    Passes::AggressiveDCE,
    Passes::LocalAccessChainConvert,
    Passes::LocalSingleBlockLoadStoreElim,
    Passes::LocalSingleStoreElim,
    Passes::AggressiveDCE,
    Passes::SSARewrite,
    Passes::AggressiveDCE,
    Passes::DeadBranchElim,
    Passes::RedundancyElimination,
    Passes::CombineAccessChains,
    Passes::Simplification,
    Passes::LocalAccessChainConvert,
    Passes::LocalSingleBlockLoadStoreElim,
    Passes::LocalSingleStoreElim,
    Passes::AggressiveDCE,
    Passes::SSARewrite,
    Passes::AggressiveDCE,
    Passes::VectorDCE,
    Passes::DeadInsertElim,
    Passes::DeadBranchElim,
    Passes::Simplification,
    Passes::IfConversion,
    Passes::CopyPropagateArrays,
    Passes::ReduceLoadSize,
    // The recipe's tail: without it, stores into a local whose loads
    // CopyPropagateArrays redirected stay behind (`nested_loops`).
    Passes::AggressiveDCE,
    Passes::BlockMerge,
    Passes::RedundancyElimination,
    Passes::DeadBranchElim,
    Passes::BlockMerge,
    Passes::Simplification,
];

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
        _ => {
            for p in PERFORMANCE {
                o.register_pass(p);
            }
            if level >= 3 {
                for p in
                    [Passes::EliminateDeadConstant, Passes::RemoveDuplicates, Passes::AggressiveDCE, Passes::CompactIds]
                {
                    o.register_pass(p);
                }
            }
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
