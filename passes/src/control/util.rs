//! Small IR helpers shared by the control-flow passes: the functions with a
//! body, replacing a block's terminator while keeping its location, and
//! block labels for diagnostics.

use smallvec::SmallVec;
use xir::{Block, Function, Inst, InstData, Opcode, Payload, TypeTable, Value};

pub use crate::memory::util::defined_functions;

/// A terminator with the given opcode, operands and block operands.
pub fn term(opcode: Opcode, operands: &[Value], blocks: &[Block]) -> InstData {
    let mut d = InstData::new(opcode, TypeTable::VOID);
    d.operands = SmallVec::from_slice(operands);
    d.blocks = SmallVec::from_slice(blocks);
    d
}

/// `br target ^t`.
pub fn br(t: Block) -> InstData {
    term(Opcode::Br, &[], &[t])
}

/// `unreachable "why"`.
pub fn unreachable(why: &str) -> InstData {
    let mut d = term(Opcode::Unreachable, &[], &[]);
    d.payload = Payload::Text(why.to_string());
    d
}

/// Replace the terminator of `b` (or append one if it has none) by `data`,
/// keeping the old terminator's metadata and text position. An old
/// terminator is rewritten in place (`Function::replace_inst`: its id is
/// returned), so the block keeps its instructions together in the table.
pub fn set_terminator(f: &mut Function, b: Block, data: InstData) -> Inst {
    if let Some(old) = f.terminator(b) {
        f.replace_inst(old, data);
        return old;
    }
    f.append_inst(b, data)
}

/// The text label of a block for messages: its name, else its id.
pub fn label(f: &Function, b: Block) -> String {
    match f.block_name(b) {
        Some(n) => format!("^{n}"),
        None => format!("^{b}"),
    }
}
