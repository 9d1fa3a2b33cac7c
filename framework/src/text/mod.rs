//! The XIR text format (docs/text-format.md) and the JSON interchange form.
//!
//! - [`print_module`] / [`parse_module`]: the one text format for structured
//!   and raw CFG; `print(parse(print(m))) == print(m)` byte for byte.
//! - [`json`]: a compacted serde form with full id validation on input.
//! - [`source`]: reading a source file (size cap, located UTF-8 errors).
//! - [`tokens`]: the lexer's tokens as byte ranges, for editors.
//!
//! Both are generic over the spec (`ir-spec/spec/opcodes.ron`): operands,
//! block roles, `case`/phi shapes and payloads come from each opcode's entry.
//! **Invariant:** neither reader panics on any input; every malformed input
//! is a located [`Diagnostic`](crate::diag::Diagnostic) with rule `parse`.

mod header;
pub mod json;
mod lexer;
mod literal;
mod parser;
mod printer;
mod shape;
pub mod source;
pub mod tokens;

use std::borrow::Cow;

pub use literal::is_type_keyword;
pub use parser::parse_module;
pub use printer::{print_function, print_module, type_to_string, write_scalar, write_type};
pub use shape::{check_shape, ShapeError};

/// Nesting limit for types and composite literals, so that hostile input
/// cannot overflow the stack.
pub const MAX_DEPTH: u32 = 64;

/// Whether `s` is a value name of the text format: `[A-Za-z_][A-Za-z0-9_.]*`.
pub fn is_ident(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.')
}

/// A printable spelling of a metadata name: valid names unchanged, others
/// with each invalid character replaced by `_` (and a leading `_` before a
/// digit); `None` for an empty name, which prints as unnamed.
pub fn sanitize_name(s: &str) -> Option<Cow<'_, str>> {
    if s.is_empty() {
        return None;
    }
    if is_ident(s) {
        return Some(Cow::Borrowed(s));
    }
    let mut out = String::with_capacity(s.len() + 1);
    if !s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.push('_');
    }
    out.extend(s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '.' { c } else { '_' }));
    Some(Cow::Owned(out))
}
