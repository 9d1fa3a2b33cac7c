//! The arity rules every reader enforces, read from the spec: how many value
//! operands an opcode takes, which block roles follow, and the shape of
//! `case` lists, phi incomings and payloads. Typing rules are the verifier's.

use xir_spec::Opcode;

use crate::ir::Payload;

/// Check the operand/block/payload shape of one instruction against its
/// opcode's spec entry. The error reads `expected X, found Y`.
pub fn check_shape(op: Opcode, operands: usize, blocks: usize, payload: &Payload) -> Result<(), String> {
    let spec = &xir_spec::spec().op(op).spec;
    let fixed = spec.operands.len();
    let name = op.name();
    match spec.variadic {
        Some(_) if operands < fixed => {
            return Err(format!("expected at least {fixed} operands for `{name}`, found {operands}"))
        }
        None if operands != fixed => return Err(format!("expected {fixed} operands for `{name}`, found {operands}")),
        _ => {}
    }
    let roles = spec.blocks.len();
    match spec.variadic_blocks.as_deref() {
        None if blocks != roles => return Err(format!("expected {roles} blocks for `{name}`, found {blocks}")),
        Some(_) if blocks < roles => {
            return Err(format!("expected at least {roles} blocks for `{name}`, found {blocks}"))
        }
        Some("incoming") if operands != blocks => {
            return Err(format!("expected one block per incoming value of `{name}` ({operands}), found {blocks}"))
        }
        _ => {}
    }
    match (spec.payload.as_deref(), payload) {
        (Some("cases"), Payload::Cases(c)) if c.len() == blocks - roles => Ok(()),
        (Some("cases"), Payload::Cases(c)) => {
            Err(format!("expected {} case literals for `{name}`, found {}", blocks - roles, c.len()))
        }
        (Some("cases"), _) => Err(format!("expected a case-literal payload for `{name}`, found none")),
        (Some("text"), Payload::Text(_) | Payload::None) => Ok(()),
        (_, Payload::None) => Ok(()),
        (_, Payload::Text(_)) => Err(format!("expected no text payload for `{name}`, found one")),
        (_, Payload::Cases(_)) => Err(format!("expected no case literals for `{name}`, found some")),
    }
}
