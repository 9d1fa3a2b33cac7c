//! The arity rules every reader enforces, read from the spec: how many value
//! operands an opcode takes, which block roles follow, and the shape of
//! `case` lists, phi incomings and payloads. Typing rules are the verifier's.
//! A broken shape is a typed [`ShapeError`], so readers can map it to the
//! verifier's rule (`operand-count`, `block-count`, `payload`).

use xir_spec::{Opcode, Rule};

use crate::ir::Payload;

/// How an instruction's shape differs from its opcode's spec entry. Each
/// reads `expected X, found Y`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("expected {}{expected} operands for `{op}`, found {found}", if *.at_least { "at least " } else { "" })]
    Operands { op: Opcode, expected: usize, at_least: bool, found: usize },
    #[error("expected {}{expected} blocks for `{op}`, found {found}", if *.at_least { "at least " } else { "" })]
    Blocks { op: Opcode, expected: usize, at_least: bool, found: usize },
    #[error("expected one block per incoming value of `{op}` ({incoming}), found {found}")]
    IncomingBlocks { op: Opcode, incoming: usize, found: usize },
    #[error("expected {expected} case literals for `{op}`, found {found}")]
    CaseCount { op: Opcode, expected: usize, found: usize },
    #[error("expected a case-literal payload for `{op}`, found none")]
    MissingCases { op: Opcode },
    #[error("expected no text payload for `{op}`, found one")]
    UnexpectedText { op: Opcode },
    #[error("expected no case literals for `{op}`, found some")]
    UnexpectedCases { op: Opcode },
}

impl ShapeError {
    /// The verifier rule the same shape breaks.
    pub fn rule(&self) -> Rule {
        match self {
            ShapeError::Operands { .. } => Rule::OperandCount,
            ShapeError::Blocks { .. } | ShapeError::IncomingBlocks { .. } => Rule::BlockCount,
            _ => Rule::Payload,
        }
    }
}

/// Check the operand/block/payload shape of one instruction against its
/// opcode's spec entry.
pub fn check_shape(op: Opcode, operands: usize, blocks: usize, payload: &Payload) -> Result<(), ShapeError> {
    let spec = &xir_spec::spec().op(op).spec;
    let fixed = spec.operands.len();
    match spec.variadic {
        Some(_) if operands < fixed => {
            return Err(ShapeError::Operands { op, expected: fixed, at_least: true, found: operands })
        }
        None if operands != fixed => {
            return Err(ShapeError::Operands { op, expected: fixed, at_least: false, found: operands })
        }
        _ => {}
    }
    let roles = spec.blocks.len();
    match spec.variadic_blocks.as_deref() {
        None if blocks != roles => {
            return Err(ShapeError::Blocks { op, expected: roles, at_least: false, found: blocks })
        }
        Some(_) if blocks < roles => {
            return Err(ShapeError::Blocks { op, expected: roles, at_least: true, found: blocks })
        }
        Some("incoming") if operands != blocks => {
            return Err(ShapeError::IncomingBlocks { op, incoming: operands, found: blocks })
        }
        _ => {}
    }
    match (spec.payload.as_deref(), payload) {
        (Some("cases"), Payload::Cases(c)) if c.len() == blocks - roles => Ok(()),
        (Some("cases"), Payload::Cases(c)) => {
            Err(ShapeError::CaseCount { op, expected: blocks - roles, found: c.len() })
        }
        (Some("cases"), _) => Err(ShapeError::MissingCases { op }),
        (Some("text"), Payload::Text(_) | Payload::None) => Ok(()),
        (_, Payload::None) => Ok(()),
        (_, Payload::Text(_)) => Err(ShapeError::UnexpectedText { op }),
        (_, Payload::Cases(_)) => Err(ShapeError::UnexpectedCases { op }),
    }
}
