//! Test aid, in debug builds only: with `XIR_DEBUG_INVALID_SPIRV=OPCODE` in
//! the environment, the module emitted for a kernel whose module holds an
//! instruction of that opcode loses its `OpMemoryModel`, which SPIRV-Tools
//! rejects ("EntryPoint cannot appear before the memory model
//! instruction"). No emission bug is known to test the validation-failure
//! path with (the error, the reproducer it writes, `xir-reduce
//! --spirv-val`), so this plants one; release builds do not read the
//! variable.

use xir::Module;

/// The variable naming the opcode.
pub const VAR: &str = "XIR_DEBUG_INVALID_SPIRV";

/// `words`, without its `OpMemoryModel` when the variable asks for it.
pub(crate) fn apply(module: &Module, words: Vec<u32>) -> Vec<u32> {
    let Ok(name) = std::env::var(VAR) else { return words };
    let holds = module.functions.iter().any(|f| f.all_insts().any(|(_, i)| f.opcode(i).name() == name));
    if !holds {
        return words;
    }
    const HEADER_WORDS: usize = 5;
    const OP_MEMORY_MODEL: u32 = 14;
    let mut out = words[..HEADER_WORDS.min(words.len())].to_vec();
    let mut k = HEADER_WORDS;
    while k < words.len() {
        let count = ((words[k] >> 16) as usize).max(1);
        if words[k] & 0xffff != OP_MEMORY_MODEL {
            out.extend_from_slice(&words[k..(k + count).min(words.len())]);
        }
        k += count;
    }
    out
}
