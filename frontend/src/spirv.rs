//! SPIR-V compute modules in: a binary another compiler wrote (glslang's
//! GLSL with the atomics naga's GLSL front end lacks, DXC's HLSL, Slang's,
//! rust-gpu's, ...) becomes a kernel AST through naga's SPIR-V front end and
//! the same lowering as WGSL and GLSL ([`crate::lower`]).
//!
//! Fail closed, in this order: the bytes must be whole 32-bit words starting
//! with the magic number (either byte order); SPIRV-Tools must validate the
//! module for Vulkan 1.2 (naga's SPIR-V front end assumes a valid module);
//! the structured control flow must nest at most [`depth::MAX_DEPTH`]
//! deep; no type may be larger than naga lays out (`i32::MAX` bytes: past
//! it naga's SPIR-V front end panics rather than refuses); naga must read
//! it (what it does not support it names); the lowering refuses what XIR
//! cannot express. A binary has no source text, so
//! diagnostics name the file without a position (rule `spirv`, or
//! `frontend:unsupported`). The front end runs on its own stack: a module's
//! nesting is not estimated as a text's is, and the thread costs little
//! beside SPIRV-Tools' validation.

use spirv_tools::val::Validator;

use crate::{depth, diag, Error, Language, Overrides, Source};

/// The SPIR-V magic number.
const MAGIC: u32 = 0x0723_0203;

/// Whether `bytes` start with the SPIR-V magic number, in either byte order
/// (as `xir_spirv::reflect::is_spirv`, which the drivers ask; this crate
/// does not depend on the backend).
fn is_spirv(bytes: &[u8]) -> bool {
    let Some(head) = bytes.get(..4) else { return false };
    let word = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    word == MAGIC || word.swap_bytes() == MAGIC
}

/// The module's words, in the host's order, or why the bytes are none.
fn words(src: &Source<'_>, bytes: &[u8]) -> Result<Vec<u32>, Error> {
    if !is_spirv(bytes) {
        return Err(diag(src, "spirv", "not a SPIR-V module: no magic number 0x07230203".into(), None));
    }
    if !bytes.len().is_multiple_of(4) {
        let message = format!("not a SPIR-V module: {} bytes, not a whole number of 32-bit words", bytes.len());
        return Err(diag(src, "spirv", message, None));
    }
    let swapped = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) != MAGIC;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| {
            let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if swapped {
                w.swap_bytes()
            } else {
                w
            }
        })
        .collect())
}

/// The module's instructions after its header: opcode and operands. A
/// word count of zero is read as one and a truncated last instruction
/// keeps the words there are, so any words can be walked.
pub(crate) fn instructions(words: &[u32]) -> impl Iterator<Item = (u32, &[u32])> {
    let mut at = 5;
    std::iter::from_fn(move || {
        let first = *words.get(at)?;
        let end = (at + ((first >> 16) as usize).max(1)).min(words.len());
        let operands = &words[at + 1..end];
        at = end;
        Some((first & 0xffff, operands))
    })
}

/// The deepest structured nesting of the module's functions: at each
/// block, the selection and loop constructs whose header came before it
/// and whose merge block did not (in the order the blocks are written,
/// which SPIR-V requires to put a header before its construct).
fn nesting(words: &[u32]) -> usize {
    const OP_LOOP_MERGE: u32 = 246;
    const OP_SELECTION_MERGE: u32 = 247;
    const OP_LABEL: u32 = 248;
    const OP_FUNCTION_END: u32 = 56;
    let mut open = rustc_hash::FxHashSet::default();
    let mut deepest = 0;
    for (opcode, operands) in instructions(words) {
        match (opcode, operands) {
            (OP_LABEL, [label, ..]) => {
                open.remove(label);
            }
            (OP_LOOP_MERGE | OP_SELECTION_MERGE, [merge, ..]) => {
                open.insert(*merge);
                deepest = deepest.max(open.len());
            }
            (OP_FUNCTION_END, _) => open.clear(),
            _ => {}
        }
    }
    deepest
}

/// The most bytes a type may have: naga's `MAX_TYPE_SIZE`.
const MAX_TYPE_SIZE: u64 = i32::MAX as u64;

/// The size in bytes of the module's largest type, laid out as naga's
/// `Layouter` does (a vector of three aligned as four, an array's stride
/// its `ArrayStride`, else its element's size rounded up to its alignment,
/// a struct to its last member's `Offset` and size), saturating rather than
/// overflowing.
fn largest_type(words: &[u32]) -> u64 {
    const OP_DECORATE: u32 = 71;
    const OP_MEMBER_DECORATE: u32 = 72;
    const OP_TYPE_BOOL: u32 = 20;
    const OP_TYPE_INT: u32 = 21;
    const OP_TYPE_FLOAT: u32 = 22;
    const OP_TYPE_VECTOR: u32 = 23;
    const OP_TYPE_MATRIX: u32 = 24;
    const OP_TYPE_ARRAY: u32 = 28;
    const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
    const OP_TYPE_STRUCT: u32 = 30;
    const OP_CONSTANT: u32 = 43;
    const OP_SPEC_CONSTANT: u32 = 50;
    const DECORATION_ARRAY_STRIDE: u32 = 6;
    const DECORATION_OFFSET: u32 = 35;
    let round_up = |n: u64, align: u64| n.div_ceil(align.max(1)).saturating_mul(align.max(1));
    // id -> (size, alignment) of each type; id -> value of each integer constant.
    let mut layout = rustc_hash::FxHashMap::<u32, (u64, u64)>::default();
    let mut constants = rustc_hash::FxHashMap::<u32, u64>::default();
    let mut offsets = rustc_hash::FxHashMap::<(u32, u32), u64>::default();
    let mut strides = rustc_hash::FxHashMap::<u32, u64>::default();
    let mut largest = 0;
    for (opcode, ops) in instructions(words) {
        let of = |id: Option<&u32>| id.and_then(|id| layout.get(id)).copied().unwrap_or((0, 1));
        let entry = match (opcode, ops) {
            (OP_DECORATE, [id, DECORATION_ARRAY_STRIDE, stride, ..]) => {
                strides.insert(*id, u64::from(*stride));
                None
            }
            (OP_MEMBER_DECORATE, [s, m, DECORATION_OFFSET, off, ..]) => {
                offsets.insert((*s, *m), u64::from(*off));
                None
            }
            (OP_CONSTANT | OP_SPEC_CONSTANT, [_, id, lo, rest @ ..]) => {
                let hi = rest.first().map_or(0, |&h| u64::from(h) << 32);
                constants.insert(*id, hi | u64::from(*lo));
                None
            }
            (OP_TYPE_BOOL, [id, ..]) => Some((*id, (1, 1))),
            (OP_TYPE_INT | OP_TYPE_FLOAT, [id, bits, ..]) => {
                let w = u64::from(*bits / 8).max(1);
                Some((*id, (w, w)))
            }
            (OP_TYPE_VECTOR, [id, c, n, ..]) => {
                let (w, _) = of(Some(c));
                let n = u64::from(*n);
                Some((*id, (n.saturating_mul(w), if n == 3 { 4 * w } else { n.saturating_mul(w) })))
            }
            (OP_TYPE_MATRIX, [id, column, n, ..]) => {
                let (_, align) = of(Some(column));
                Some((*id, (u64::from(*n).saturating_mul(align), align)))
            }
            (OP_TYPE_ARRAY | OP_TYPE_RUNTIME_ARRAY, [id, elem, len @ ..]) => {
                let (size, align) = of(Some(elem));
                let n = len.first().and_then(|l| constants.get(l)).copied().unwrap_or(1);
                let stride = strides.get(id).copied().unwrap_or_else(|| round_up(size, align));
                Some((*id, (n.saturating_mul(stride), align)))
            }
            (OP_TYPE_STRUCT, [id, members @ ..]) => {
                let (mut end, mut align) = (0u64, 1u64);
                for (k, m) in members.iter().enumerate() {
                    let (size, a) = of(Some(m));
                    let offset = offsets.get(&(*id, k as u32)).copied().unwrap_or_else(|| round_up(end, a));
                    end = end.max(offset.saturating_add(size));
                    align = align.max(a);
                }
                Some((*id, (round_up(end, align), align)))
            }
            _ => None,
        };
        if let Some((id, (size, align))) = entry {
            largest = largest.max(size);
            layout.insert(id, (size, align));
        }
    }
    largest
}

/// naga's validated module of the SPIR-V binary `bytes` (named `path` in
/// diagnostics), its overrides (specialization constants) given values.
pub fn parse(
    path: &str,
    bytes: &[u8],
    overrides: &Overrides,
) -> Result<(naga::Module, naga::valid::ModuleInfo), Error> {
    let src = Source { path, text: "", language: Language::Spirv };
    let words = words(&src, bytes)?;
    spirv_tools::val::create(Some(spirv_tools::TargetEnv::Vulkan_1_2))
        .validate(&words, None)
        .map_err(|e| diag(&src, "spirv", format!("SPIRV-Tools does not validate it for Vulkan 1.2: {e}"), None))?;
    let deepest = nesting(&words);
    if deepest > depth::MAX_DEPTH {
        let message = format!(
            "the module nests {deepest} selections and loops deep, more than {} (the front end's recursion limit)",
            depth::MAX_DEPTH
        );
        return Err(diag(&src, "spirv", message, None));
    }
    let largest = largest_type(&words);
    if largest > MAX_TYPE_SIZE {
        let message =
            format!("the module declares a type of {largest} bytes, more than naga lays out ({MAX_TYPE_SIZE})");
        return Err(diag(&src, "spirv", message, None));
    }
    // naga reads little-endian words.
    let little: Vec<u8>;
    let bytes = if u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == MAGIC {
        bytes
    } else {
        little = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        &little
    };
    run(&src, || {
        let options = naga::front::spv::Options { adjust_coordinate_space: false, ..Default::default() };
        let module = naga::front::spv::parse_u8_slice(bytes, &options)
            .map_err(|e| diag(&src, "spirv", format!("naga's SPIR-V front end: {}", crate::chain(&e)), None))?;
        crate::with_overrides(&src, module, overrides)
    })
}

/// The binary as structured XIR (`xir.structured`), verified: [`parse`],
/// the lowering and `ast2xir`, as [`crate::compile`] for a text.
pub fn compile(path: &str, bytes: &[u8], overrides: &Overrides) -> Result<xir::ir::Module, Error> {
    let (module, info) = parse(path, bytes, overrides)?;
    let src = Source { path, text: "", language: Language::Spirv };
    run(&src, || {
        let arenas = xir_ast::Arenas::default();
        let ast = crate::lower_parsed(&arenas, &src, &module, &info)?;
        crate::ast_to_module(&src, &ast)
    })
}

/// The binary as a kernel AST in `arenas` (`--emit ast`); the lowering runs
/// on this thread, as [`crate::to_ast`]'s does.
pub fn to_ast<'a>(
    arenas: &'a xir_ast::Arenas<'a>,
    path: &str,
    bytes: &[u8],
    overrides: &Overrides,
) -> Result<xir_ast::Module<'a>, Error> {
    let (module, info) = parse(path, bytes, overrides)?;
    crate::lower_parsed(arenas, &Source { path, text: "", language: Language::Spirv }, &module, &info)
}

fn run<T: Send>(src: &Source<'_>, f: impl FnOnce() -> Result<T, Error> + Send) -> Result<T, Error> {
    depth::run_placed(depth::Placement::OwnStack, f).unwrap_or_else(|e| {
        Err(diag(src, "frontend:internal", format!("could not start the front end's thread: {e}"), None))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(opcode: u32, operands: &[u32]) -> Vec<u32> {
        let mut w = vec![((operands.len() as u32 + 1) << 16) | opcode];
        w.extend_from_slice(operands);
        w
    }

    /// Constructs open at their merge instruction and close at their merge
    /// block's label; a function's end closes what is left.
    #[test]
    fn nesting_counts_the_constructs_open_at_each_block() {
        let mut words = vec![MAGIC, 0x0001_0000, 0, 100, 0];
        for (op, args) in [
            (248, vec![1]),     // %1 = OpLabel
            (247, vec![10, 0]), // OpSelectionMerge %10
            (248, vec![2]),
            (246, vec![11, 12, 0]), // OpLoopMerge %11 %12
            (248, vec![3]),
            (247, vec![13, 0]),
            (248, vec![13]), // the innermost merge block: two open
            (248, vec![11]),
            (248, vec![10]),
            (56, vec![]), // OpFunctionEnd
            (248, vec![20]),
            (247, vec![21, 0]),
        ] {
            words.extend(inst(op, &args));
        }
        assert_eq!(nesting(&words), 3);
        // A truncated instruction ends the scan without reading past the words.
        let mut cut = words.clone();
        cut.push((9 << 16) | 247);
        assert_eq!(nesting(&cut), 3);
    }
}
