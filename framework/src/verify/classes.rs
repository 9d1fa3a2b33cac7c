//! Operand classes: the named predicates `opcodes.ron` uses for each operand
//! slot (`lvalue`, `numeric`, `index`, ...). One table entry per name; the
//! spec composes them and `check_spec_names` proves none is missing.

use crate::ir::{Type, TypeId, TypeTable, Value};

use super::InstCx;

/// One operand class: its spec name, a phrase for messages, the predicate.
pub struct OperandClass {
    pub name: &'static str,
    pub doc: &'static str,
    pub test: fn(&InstCx, Value) -> bool,
}

/// Whether `t`'s scalar (itself, or a vector's lanes) is in the `types.ron`
/// class `class`, and `t` is a scalar or a vector.
fn scalar_or_vec_of(t: &TypeTable, id: TypeId, class: &str) -> bool {
    match t.get(id) {
        Type::Vector { elem, .. } => t.has_class(*elem, class),
        _ => t.is_scalar(id) && t.has_class(id, class),
    }
}

fn vec_of(t: &TypeTable, id: TypeId, class: &str) -> bool {
    matches!(t.get(id), Type::Vector { elem, .. } if t.has_class(*elem, class))
}

/// A value with a type (not a function, not void, not an lvalue: a
/// variable is an address, and only the lvalue classes take one).
fn is_value(cx: &InstCx, v: Value) -> bool {
    !matches!(v, Value::Func(_)) && cx.ty(v) != TypeTable::VOID && !cx.func.is_lvalue(v)
}

fn kind(cx: &InstCx, v: Value, f: fn(&Type) -> bool) -> bool {
    is_value(cx, v) && f(cx.get(cx.ty(v)))
}

fn ty_class(cx: &InstCx, v: Value, f: fn(&TypeTable, TypeId) -> bool) -> bool {
    is_value(cx, v) && f(cx.types(), cx.ty(v))
}

fn is_aggregate(t: &Type) -> bool {
    matches!(t, Type::Vector { .. } | Type::Matrix { .. } | Type::Array { .. } | Type::Struct { .. })
}

const CLASSES: &[OperandClass] = &[
    OperandClass { name: "any", doc: "a value (not a function, not void, not an lvalue)", test: is_value },
    OperandClass {
        name: "value_or_lvalue",
        doc: "a value or an lvalue (call arguments: by reference or by value)",
        test: |cx, v| is_value(cx, v) || cx.func.is_lvalue(v),
    },
    OperandClass { name: "function", doc: "a function (`@name`)", test: |_, v| matches!(v, Value::Func(_)) },
    OperandClass {
        name: "lvalue",
        doc: "an lvalue (alloca, gep or reference argument)",
        test: |cx, v| cx.func.is_lvalue(v),
    },
    OperandClass {
        name: "gep_base",
        doc: "an lvalue of aggregate type",
        test: |cx, v| cx.func.is_lvalue(v) && is_aggregate(cx.get(cx.ty(v))),
    },
    OperandClass {
        name: "atomic_base",
        doc: "a buffer or an lvalue",
        test: |cx, v| cx.func.is_lvalue(v) || kind(cx, v, |t| matches!(t, Type::Buffer(_))),
    },
    OperandClass { name: "index", doc: "an integer scalar", test: |cx, v| ty_class(cx, v, |t, id| t.is_int(id)) },
    OperandClass {
        name: "const_index",
        doc: "an integer constant",
        test: |cx, v| matches!(v, Value::Const(_)) && cx.types().is_int(cx.ty(v)),
    },
    OperandClass { name: "bool_scalar", doc: "a `bool`", test: |cx, v| ty_class(cx, v, |t, id| t.is_bool(id)) },
    OperandClass {
        name: "bool",
        doc: "a `bool` or bool vector",
        test: |cx, v| ty_class(cx, v, |t, id| scalar_or_vec_of(t, id, "bool")),
    },
    OperandClass {
        name: "bool_vector",
        doc: "a bool vector",
        test: |cx, v| ty_class(cx, v, |t, id| vec_of(t, id, "bool")),
    },
    OperandClass {
        name: "int",
        doc: "an integer scalar or vector",
        test: |cx, v| ty_class(cx, v, |t, id| scalar_or_vec_of(t, id, "int")),
    },
    OperandClass {
        name: "int_vector",
        doc: "an integer vector",
        test: |cx, v| ty_class(cx, v, |t, id| vec_of(t, id, "int")),
    },
    OperandClass {
        name: "uint32",
        doc: "a `u32` scalar or vector",
        test: |cx, v| {
            ty_class(cx, v, |t, id| {
                id == TypeTable::U32 || vec_of(t, id, "unsigned") && t.scalar_of(id) == TypeTable::U32
            })
        },
    },
    OperandClass {
        name: "int_or_bool",
        doc: "an integer or bool scalar or vector",
        test: |cx, v| ty_class(cx, v, |t, id| scalar_or_vec_of(t, id, "int") || scalar_or_vec_of(t, id, "bool")),
    },
    OperandClass {
        name: "float",
        doc: "a float scalar or vector (not fp8)",
        test: |cx, v| ty_class(cx, v, |t, id| scalar_or_vec_of(t, id, "float") && scalar_or_vec_of(t, id, "numeric")),
    },
    OperandClass {
        name: "float_vector",
        doc: "a float vector (not fp8)",
        test: |cx, v| ty_class(cx, v, |t, id| vec_of(t, id, "float") && vec_of(t, id, "numeric")),
    },
    OperandClass {
        name: "numeric",
        doc: "a numeric scalar or vector (integer or non-fp8 float)",
        test: |cx, v| ty_class(cx, v, |t, id| scalar_or_vec_of(t, id, "numeric")),
    },
    OperandClass {
        name: "numeric_vector",
        doc: "a numeric vector",
        test: |cx, v| ty_class(cx, v, |t, id| vec_of(t, id, "numeric")),
    },
    OperandClass {
        name: "scalar_or_vector",
        doc: "a scalar or vector",
        test: |cx, v| ty_class(cx, v, |t, id| scalar_or_vec_of(t, id, "scalar")),
    },
    OperandClass { name: "vector", doc: "a vector", test: |cx, v| kind(cx, v, |t| matches!(t, Type::Vector { .. })) },
    OperandClass { name: "matrix", doc: "a matrix", test: |cx, v| kind(cx, v, |t| matches!(t, Type::Matrix { .. })) },
    OperandClass {
        name: "vector_or_matrix",
        doc: "a vector or matrix",
        test: |cx, v| kind(cx, v, |t| matches!(t, Type::Vector { .. } | Type::Matrix { .. })),
    },
    OperandClass {
        name: "aggregate",
        doc: "a vector, matrix, array or struct",
        test: |cx, v| kind(cx, v, is_aggregate),
    },
    OperandClass { name: "buffer", doc: "a `buffer<T>`", test: |cx, v| kind(cx, v, |t| matches!(t, Type::Buffer(_))) },
    OperandClass {
        name: "byte_buffer",
        doc: "a `byte_buffer`",
        test: |cx, v| kind(cx, v, |t| matches!(t, Type::ByteBuffer)),
    },
    OperandClass {
        name: "texture",
        doc: "a texture",
        test: |cx, v| kind(cx, v, |t| matches!(t, Type::Texture { .. })),
    },
    OperandClass {
        name: "bindless",
        doc: "a `bindless_array`",
        test: |cx, v| kind(cx, v, |t| matches!(t, Type::BindlessArray)),
    },
    OperandClass { name: "accel", doc: "an `accel`", test: |cx, v| kind(cx, v, |t| matches!(t, Type::Accel)) },
    OperandClass {
        name: "ray_query",
        doc: "a ray-query object",
        test: |cx, v| kind(cx, v, |t| matches!(t, Type::RayQuery { .. })),
    },
];

/// The operand class named `name`.
pub fn lookup(name: &str) -> Option<&'static OperandClass> {
    CLASSES.iter().find(|c| c.name == name)
}

/// Every implemented class name (for the dead-rule test).
pub fn names() -> impl Iterator<Item = &'static str> {
    CLASSES.iter().map(|c| c.name)
}
