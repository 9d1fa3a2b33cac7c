//! What the verifier's rule tables (result rules, constraints, type rules)
//! return when a rule fails: a typed [`Violation`], the message plus the
//! second place the rule involves (the operand whose type disagrees, the
//! callee whose signature is not met), which the verifier turns into a
//! secondary label instead of burying it in the message.

use std::fmt;

use super::InstCx;
use crate::ir::{FuncId, Span, Value};

/// The second place a failed rule involves.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Related {
    /// Operand `k` of the instruction: the label points at its definition.
    Operand(usize),
    /// A function (a call's callee): the label points at its header.
    Function(FuncId),
}

/// A failed rule: what is wrong, and where else to look.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub message: String,
    pub related: Option<Related>,
}

impl Violation {
    pub fn new(message: impl Into<String>) -> Self {
        Violation { message: message.into(), related: None }
    }
    /// The same violation, about operand `k`.
    pub fn operand(self, k: usize) -> Self {
        Violation { related: Some(Related::Operand(k)), ..self }
    }
    /// The same violation, about function `f`.
    pub fn function(self, f: FuncId) -> Self {
        Violation { related: Some(Related::Function(f)), ..self }
    }
}

impl From<String> for Violation {
    fn from(message: String) -> Self {
        Violation::new(message)
    }
}

impl From<&str> for Violation {
    fn from(message: &str) -> Self {
        Violation::new(message)
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Violation {}

/// The secondary label for `r` at `cx`'s instruction: its span and text,
/// when the place has a span (the IR came from text).
pub(super) fn label(cx: &InstCx, r: Related) -> Option<(Span, String)> {
    match r {
        Related::Operand(k) => {
            let v = *cx.data.operands.get(k)?;
            let ty = cx.name(cx.ty(v));
            match v {
                Value::Inst(def) => {
                    Some((cx.func.inst_span(def)?, format!("operand {k} is defined here, with type `{ty}`")))
                }
                Value::Arg(a) => {
                    Some((cx.func.span?, format!("operand {k} is argument {a} of `@{}`, of type `{ty}`", cx.func.name)))
                }
                _ => None,
            }
        }
        Related::Function(g) => {
            let callee = cx.module.functions.get(g.index())?;
            Some((callee.span?, format!("`@{}` is defined here", callee.name)))
        }
    }
}
