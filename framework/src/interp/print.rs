//! Formatting of `print`: each `{}` of the message takes the next argument;
//! arguments left over are appended, separated by spaces. Scalars print as
//! in Rust (floats in shortest round-trip form), vectors and aggregates as
//! `(a, b, c)`.
//!
//! [`format_value_bits`] is the same value formatter fed with exact scalar
//! bits instead of interpreter values: the Vulkan runner formats the bits a
//! shader printed with it, so device lines equal the interpreter's lines.

use crate::ir::{Type, TypeId, TypeTable};

use super::arith::{sext, to_f64, R};
use std::rc::Rc;

use super::value::{scalar_kind, Sk, Val};

fn scalar(sk: Sk, b: u64) -> String {
    match sk {
        Sk::Bool => (b != 0).to_string(),
        Sk::Int { bits, signed: true } => sext(b, bits).to_string(),
        Sk::Int { .. } => b.to_string(),
        Sk::F32 => f32::from_bits(b as u32).to_string(),
        _ => to_f64(sk, b).unwrap_or(0.0).to_string(),
    }
}

fn value(types: &TypeTable, ty: TypeId, v: &Val) -> R<String> {
    match (types.get(ty), v) {
        (_, Val::U) => Err("print of an undefined value".into()),
        (Type::Struct { fields, .. }, Val::A(m)) => {
            let parts: Vec<String> = fields.iter().zip(m.iter()).map(|(f, x)| value(types, *f, x)).collect::<R<_>>()?;
            Ok(format!("({})", parts.join(", ")))
        }
        (Type::Array { elem, .. }, Val::A(m)) | (Type::Vector { elem, .. }, Val::A(m)) => {
            let parts: Vec<String> = m.iter().map(|x| value(types, *elem, x)).collect::<R<_>>()?;
            Ok(format!("({})", parts.join(", ")))
        }
        (Type::Matrix { elem, .. }, Val::A(m)) => {
            let column = |c: &Val| -> R<String> {
                let lanes: Vec<String> = c.members()?.iter().map(|x| value(types, *elem, x)).collect::<R<_>>()?;
                Ok(format!("({})", lanes.join(", ")))
            };
            let parts: Vec<String> = m.iter().map(column).collect::<R<_>>()?;
            Ok(format!("({})", parts.join(", ")))
        }
        (_, Val::S(b) | Val::E(b, _)) => Ok(scalar(scalar_kind(types, ty).ok_or("print of a non-data value")?, *b)),
        _ => Err("print of a non-data value".into()),
    }
}

pub(crate) fn format(types: &TypeTable, fmt: &str, tys: &[TypeId], vals: &[Val]) -> R<String> {
    let mut out = String::new();
    let mut args = tys.iter().zip(vals);
    let mut rest = fmt;
    while let Some(p) = rest.find("{}") {
        out.push_str(&rest[..p]);
        match args.next() {
            Some((t, v)) => out.push_str(&value(types, *t, v)?),
            None => out.push_str("{}"),
        }
        rest = &rest[p + 2..];
    }
    out.push_str(rest);
    for (t, v) in args {
        out.push(' ');
        out.push_str(&value(types, *t, v)?);
    }
    Ok(out)
}

/// The text `print` gives a value of type `ty` whose scalar leaves, in
/// member order (vector lanes; matrix columns, each lane by lane; struct and
/// array members depth first), hold `leaves` (each zero-extended to 64
/// bits; a bool is 0 or 1). Fails when the leaf count does not fit the type
/// or the type holds something that is not data.
pub fn format_value_bits(types: &TypeTable, ty: TypeId, leaves: &[u64]) -> Result<String, FormatError> {
    let mut next = leaves.iter();
    let v = value_of_bits(types, ty, &mut next, 0).map_err(FormatError::Type)?;
    if next.next().is_some() {
        return Err(FormatError::TooManyLeaves { leaves: leaves.len() });
    }
    value(types, ty, &v).map_err(FormatError::Type)
}

/// Why [`format_value_bits`] cannot print a value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The type cannot be printed, or the leaves run out before it is
    /// filled (what is wrong, in words).
    #[error("{0}")]
    Type(String),
    #[error("{leaves} leaves for one value of this type")]
    TooManyLeaves { leaves: usize },
}

/// Deepest nesting of aggregate types [`format_value_bits`] follows.
const MAX_DEPTH: u32 = 16;

fn value_of_bits(types: &TypeTable, ty: TypeId, next: &mut std::slice::Iter<u64>, depth: u32) -> R<Val> {
    if depth > MAX_DEPTH {
        return Err("type nested too deeply to print".into());
    }
    let members = |tys: Vec<TypeId>, next: &mut std::slice::Iter<u64>| -> R<Val> {
        let vals: Vec<Val> = tys.into_iter().map(|t| value_of_bits(types, t, next, depth + 1)).collect::<R<_>>()?;
        Ok(Val::A(Rc::new(vals)))
    };
    match types.get(ty) {
        Type::Vector { elem, lanes } => members(vec![*elem; *lanes as usize], next),
        Type::Matrix { elem, dim } => {
            let cols: Vec<Val> = (0..*dim).map(|_| members(vec![*elem; *dim as usize], next)).collect::<R<_>>()?;
            Ok(Val::A(Rc::new(cols)))
        }
        Type::Array { elem, len } if *len <= 4096 => members(vec![*elem; *len as usize], next),
        Type::Struct { fields, .. } => members(fields.clone(), next),
        _ => {
            let sk = scalar_kind(types, ty).ok_or("print of a non-data value")?;
            let b = *next.next().ok_or("too few leaves for the value's type")?;
            let mask = if sk.bits() >= 64 { u64::MAX } else { (1u64 << sk.bits()) - 1 };
            Ok(Val::S(b & mask))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::FloatFormat;

    #[test]
    fn bits_format_like_values() {
        let mut t = TypeTable::default();
        let f32t = t.intern(Type::Float(FloatFormat::F32));
        let i8t = t.intern(Type::Int { bits: 8, signed: true });
        let v2 = t.intern(Type::Vector { elem: f32t, lanes: 2 });
        let m2 = t.intern(Type::Matrix { elem: f32t, dim: 2 });
        let b = t.intern(Type::Bool);
        assert_eq!(format_value_bits(&t, f32t, &[(-0.0f32).to_bits() as u64]).unwrap(), "-0");
        // Sign extension from the type's width, whatever the upper bits hold.
        assert_eq!(format_value_bits(&t, i8t, &[0xffff_ff80]).unwrap(), "-128");
        assert_eq!(format_value_bits(&t, b, &[1]).unwrap(), "true");
        let v = [1.5f32.to_bits() as u64, f32::NAN.to_bits() as u64];
        assert_eq!(format_value_bits(&t, v2, &v).unwrap(), "(1.5, NaN)");
        let m = [1.0f32, 2.0, 3.0, 4.0].map(|x| x.to_bits() as u64);
        assert_eq!(format_value_bits(&t, m2, &m).unwrap(), "((1, 2), (3, 4))");
        let short = FormatError::Type("too few leaves for the value's type".into());
        assert_eq!(format_value_bits(&t, v2, &v[..1]), Err(short));
        assert_eq!(format_value_bits(&t, f32t, &v), Err(FormatError::TooManyLeaves { leaves: 2 }));
    }
}
