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
const PERFORMANCE: [Passes; 34] = [
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
    Passes::BlockMerge,
];

/// Run preset `level` on an already valid module.
pub fn optimize(words: &[u32], level: u8) -> (Vec<u32>, OptOutcome) {
    if level == 0 {
        return (words.to_vec(), OptOutcome::Skipped);
    }
    if level >= 2 && has_narrow_vector_bitcast(words) {
        return (words.to_vec(), OptOutcome::Rejected(NARROW_BITCAST.to_string()));
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
