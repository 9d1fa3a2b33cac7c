//! Test aids, in debug builds only, that plant backend failures which no
//! known bug provides, so the paths that report them (the validation
//! error, `xir-run --compare`'s mismatch, the reproducers both write,
//! `xir-reduce --spirv-val` / `--mismatch --vulkan`) can be tested end to
//! end. Release builds do not read the variables.
//!
//! - `XIR_DEBUG_INVALID_SPIRV=OPCODE`: the module emitted for a module that
//!   holds an instruction of that XIR opcode loses its `OpMemoryModel`,
//!   which SPIRV-Tools rejects ("EntryPoint cannot appear before the memory
//!   model instruction").
//! - `XIR_DEBUG_MISCOMPILE_SPIRV` (any value): the first `OpIAdd` or
//!   `OpFAdd` of the emitted module becomes `OpISub` / `OpFSub` (same
//!   operands): a valid module that computes the wrong thing.

use xir::Module;

/// The variable naming the opcode that makes the output invalid.
pub const INVALID_VAR: &str = "XIR_DEBUG_INVALID_SPIRV";
/// The variable that makes the first addition a subtraction.
pub const MISCOMPILE_VAR: &str = "XIR_DEBUG_MISCOMPILE_SPIRV";

const HEADER_WORDS: usize = 5;
const OP_MEMORY_MODEL: u32 = 14;
const OP_IADD: u32 = 128;
const OP_FADD: u32 = 129;
/// `OpISub` and `OpFSub` are the additions' opcodes plus 2.
const ADD_TO_SUB: u32 = 2;

/// The instructions of a module: (start, word count), after the header.
fn instructions(words: &[u32]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut k = HEADER_WORDS;
    while k < words.len() {
        let count = ((words[k] >> 16) as usize).max(1).min(words.len() - k);
        out.push((k, count));
        k += count;
    }
    out
}

/// `words`, with what the variables ask for planted.
pub(crate) fn apply(module: &Module, mut words: Vec<u32>) -> Vec<u32> {
    if std::env::var_os(MISCOMPILE_VAR).is_some() {
        let first = instructions(&words).into_iter().find(|&(k, _)| matches!(words[k] & 0xffff, OP_IADD | OP_FADD));
        if let Some((k, _)) = first {
            words[k] += ADD_TO_SUB;
        }
    }
    let Ok(name) = std::env::var(INVALID_VAR) else { return words };
    let holds = module.functions.iter().any(|f| f.all_insts().any(|(_, i)| f.opcode(i).name() == name));
    if !holds {
        return words;
    }
    let mut out = words[..HEADER_WORDS.min(words.len())].to_vec();
    for (k, count) in instructions(&words) {
        if words[k] & 0xffff != OP_MEMORY_MODEL {
            out.extend_from_slice(&words[k..k + count]);
        }
    }
    out
}
