//! Type well-formedness rules named by `types.ron` (`rules` of each kind).
//! They run after member ids were checked, so they may index the table.

use super::Violation;
use crate::ir::{Type, TypeId, TypeTable};

/// A type rule: `Err` says what is wrong with the type.
pub type TypeRule = fn(&TypeTable, TypeId) -> Result<(), Violation>;

fn elem(t: &TypeTable, id: TypeId) -> Option<TypeId> {
    match t.get(id) {
        Type::Vector { elem, .. }
        | Type::Matrix { elem, .. }
        | Type::Array { elem, .. }
        | Type::Buffer(elem)
        | Type::Texture { elem, .. } => Some(*elem),
        _ => None,
    }
}

fn check(ok: bool, msg: impl FnOnce() -> String) -> Result<(), Violation> {
    if ok {
        Ok(())
    } else {
        Err(Violation::new(msg()))
    }
}

const RULES: &[(&str, TypeRule)] = &[
    ("vector_elem_is_scalar", |t, id| {
        let e = elem(t, id).unwrap_or(id);
        check(t.is_scalar(e), || format!("vector lanes must be scalars, found `{}`", super::type_name(t, e)))
    }),
    ("vector_lanes_2_to_4", |t, id| match t.get(id) {
        Type::Vector { lanes, .. } => {
            check((2..=4).contains(lanes), || format!("vectors have 2..4 lanes, found {lanes}"))
        }
        _ => Ok(()),
    }),
    ("matrix_elem_is_float", |t, id| {
        let e = elem(t, id).unwrap_or(id);
        check(t.is_float(e), || format!("matrix elements must be floats, found `{}`", super::type_name(t, e)))
    }),
    ("matrix_dim_2_to_4", |t, id| match t.get(id) {
        Type::Matrix { dim, .. } => check((2..=4).contains(dim), || format!("matrices are 2..4 square, found {dim}")),
        _ => Ok(()),
    }),
    ("element_is_data", |t, id| {
        let e = elem(t, id).unwrap_or(id);
        check(t.is_data(e), || format!("the element type `{}` is not plain data", super::type_name(t, e)))
    }),
    ("fields_are_data", |t, id| match t.get(id) {
        Type::Struct { fields, .. } => match fields.iter().position(|f| !t.is_data(*f)) {
            Some(k) => Err(format!("field {k} (`{}`) is not plain data", super::type_name(t, fields[k])).into()),
            None => Ok(()),
        },
        _ => Ok(()),
    }),
    ("align_power_of_two", |t, id| match t.get(id) {
        Type::Struct { align, .. } => {
            check(align.is_power_of_two(), || format!("alignment must be a power of two, found {align}"))
        }
        _ => Ok(()),
    }),
    ("size_fits_u64", |t, id| {
        check(t.checked_size_align(id).is_some(), || "its size in bytes does not fit in 64 bits".to_string())
    }),
    ("texel_is_32bit_scalar", |t, id| match t.get(id) {
        Type::Texture { dim, elem } => {
            let ok = *elem == TypeTable::F32 || *elem == TypeTable::I32 || *elem == TypeTable::U32;
            check(ok, || format!("texels are f32, i32 or u32, found `{}`", super::type_name(t, *elem)))?;
            check(*dim == 2 || *dim == 3, || format!("textures are 2d or 3d, found dimension {dim}"))
        }
        _ => Ok(()),
    }),
];

pub fn lookup(name: &str) -> Option<TypeRule> {
    RULES.iter().find(|r| r.0 == name).map(|r| r.1)
}

pub fn names() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|r| r.0)
}
