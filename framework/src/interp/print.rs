//! Formatting of `print`: each `{}` of the message takes the next argument;
//! arguments left over are appended, separated by spaces. Scalars print as
//! in Rust (floats in shortest round-trip form), vectors and aggregates as
//! `(a, b, c)`.

use crate::ir::{Type, TypeId, TypeTable};

use super::arith::{sext, to_f64, R};
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
        (_, Val::S(b)) => Ok(scalar(scalar_kind(types, ty).ok_or("print of a non-data value")?, *b)),
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
