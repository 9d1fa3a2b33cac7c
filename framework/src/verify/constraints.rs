//! Named typing constraints (`constraints` of an opcode in `opcodes.ron`):
//! control flow, memory, calls, casts and arithmetic shapes here; aggregate,
//! atomic and resource shapes in `constraints_ops.rs`. They run after the
//! operand classes and operand counts held.

use rustc_hash::FxHashSet;
use xir_spec::Opcode;

use super::{constraints_ops as ops, InstCx, Violation};
use crate::ir::{ArgKind, Type, TypeId, TypeTable, Value};

/// A constraint: `Err` says what is wrong, and which operand or callee.
pub type Constraint = fn(&InstCx) -> Result<(), Violation>;

pub(super) fn ensure(ok: bool, msg: impl FnOnce() -> String) -> Result<(), Violation> {
    if ok {
        Ok(())
    } else {
        Err(Violation::new(msg()))
    }
}

/// `Err` unless `got == want`, naming `what`.
pub(super) fn same(cx: &InstCx, what: impl std::fmt::Display, got: TypeId, want: TypeId) -> Result<(), Violation> {
    ensure(got == want, || format!("{what} has type `{}`, expected `{}`", cx.name(got), cx.name(want)))
}

/// `Err` unless operand `k` has type `want`, about that operand.
pub(super) fn same_op(cx: &InstCx, what: impl std::fmt::Display, k: usize, want: TypeId) -> Result<(), Violation> {
    same(cx, what, cx.op_ty(k), want).map_err(|v| v.operand(k))
}

fn cases_unique(cx: &InstCx) -> Result<(), Violation> {
    let sel = cx.op_ty(0);
    let t = cx.types();
    let w = t.scalar_bits(sel);
    let mut seen = FxHashSet::default();
    for &c in cx.func.cases(cx.inst) {
        ensure(w >= 64 || c >> w == 0, || {
            format!("case literal {c:#x} does not fit the selector type `{}`", cx.name(sel))
        })?;
        ensure(seen.insert(c), || format!("case literal {c:#x} appears twice"))?;
    }
    Ok(())
}

fn return_matches_function(cx: &InstCx) -> Result<(), Violation> {
    let ret = cx.func.ret;
    match cx.data.operands.as_slice() {
        [] => ensure(ret == TypeTable::VOID, || {
            format!("the function returns `{}`, but no value is returned", cx.name(ret))
        }),
        [_] => same_op(cx, "the returned value", 0, ret),
        more => Err(format!("returns {} values; at most one is allowed", more.len()).into()),
    }
}

fn phi_incoming_types(cx: &InstCx) -> Result<(), Violation> {
    ensure(cx.result() != TypeTable::VOID, || "a Phi must have a non-void type".into())?;
    for k in 0..cx.data.operands.len() {
        same_op(cx, format_args!("incoming value {k}"), k, cx.result())?;
    }
    Ok(())
}

fn alloca_data_type(cx: &InstCx) -> Result<(), Violation> {
    let t = cx.result();
    ensure(cx.types().is_data(t), || format!("allocated type `{}` is not plain data", cx.name(t)))
}

fn store_exact_type(cx: &InstCx) -> Result<(), Violation> {
    same_op(cx, "the stored value", 1, cx.op_ty(0))
}

/// The type reached by indexing `ty` with `indices` (struct members need
/// constant indices; constant indices are range-checked everywhere).
pub(super) fn walk_path(cx: &InstCx, mut ty: TypeId, indices: &[Value]) -> Result<TypeId, Violation> {
    let t = cx.types();
    for (k, &ix) in indices.iter().enumerate() {
        ensure(t.is_int(cx.ty(ix)), || format!("index {k} is not an integer"))?;
        let konst = cx.module.const_int_value(ix);
        let (len, next) = match t.get(ty) {
            Type::Vector { elem, lanes } => (*lanes as u64, *elem),
            Type::Matrix { elem, dim } => {
                let col = t.lookup(&Type::Vector { elem: *elem, lanes: *dim });
                let col = col.ok_or_else(|| format!("the column type of `{}` is not interned", cx.name(ty)))?;
                (*dim as u64, col)
            }
            Type::Array { elem, len } => (*len, *elem),
            Type::Struct { fields, .. } => {
                let c = konst.ok_or_else(|| format!("index {k} selects a struct member and must be a constant"))?;
                let f = usize::try_from(c).ok().and_then(|c| fields.get(c));
                let f = f.ok_or_else(|| format!("index {k} ({c}) is out of range for `{}`", cx.name(ty)))?;
                ty = *f;
                continue;
            }
            _ => return Err(format!("index {k} indexes into non-aggregate `{}`", cx.name(ty)).into()),
        };
        if let Some(c) = konst {
            ensure(c >= 0 && (c as u128) < len as u128, || {
                format!("index {k} ({c}) is out of range for `{}`", cx.name(ty))
            })?;
        }
        ty = next;
    }
    Ok(ty)
}

fn gep_path(cx: &InstCx) -> Result<(), Violation> {
    ensure(!cx.variadic().is_empty(), || "a gep needs at least one index".into())?;
    let target = walk_path(cx, cx.op_ty(0), cx.variadic())?;
    same(cx, "the result", cx.result(), target)
}

fn call_signature(cx: &InstCx) -> Result<(), Violation> {
    let Value::Func(g) = cx.data.operands[0] else { return Err("the callee is not a function".into()) };
    let callee = cx.module.func(g);
    let about_callee = |v: Violation| v.function(g);
    ensure(!callee.is_kernel(), || format!("`@{}` is a kernel and cannot be called", callee.name))
        .map_err(about_callee)?;
    let args = cx.variadic();
    ensure(args.len() == callee.args.len(), || {
        format!("`@{}` takes {} arguments, {} given", callee.name, callee.args.len(), args.len())
    })
    .map_err(about_callee)?;
    let first = cx.data.operands.len() - args.len();
    for (k, (&v, formal)) in args.iter().zip(&callee.args).enumerate() {
        same_op(cx, format_args!("argument {k}"), first + k, formal.ty)?;
        if formal.kind == ArgKind::Reference {
            ensure(cx.func.is_lvalue(v), || format!("argument {k} is passed by reference and must be an lvalue"))
                .map_err(|e| e.operand(first + k))?;
        } else {
            ensure(!cx.func.is_lvalue(v), || format!("argument {k} is passed by value and must not be an lvalue"))
                .map_err(|e| e.operand(first + k))?;
        }
    }
    same(cx, "the result", cx.result(), callee.ret).map_err(about_callee)
}

fn static_cast_shape(cx: &InstCx) -> Result<(), Violation> {
    let t = cx.types();
    let (from, to) = (cx.op_ty(0), cx.result());
    let to_ok = match t.get(to) {
        Type::Vector { elem, .. } => t.is_scalar(*elem),
        _ => t.is_scalar(to),
    };
    ensure(to_ok, || format!("casts produce scalars or vectors, not `{}`", cx.name(to)))?;
    let same_shape = matches!(t.get(from), Type::Vector { .. }) == matches!(t.get(to), Type::Vector { .. })
        && t.lanes(from) == t.lanes(to);
    ensure(same_shape, || format!("cannot cast `{}` to `{}`: lane counts differ", cx.name(from), cx.name(to)))
}

fn has_bool(t: &TypeTable, id: TypeId) -> bool {
    match t.get(id) {
        Type::Bool => true,
        Type::Struct { fields, .. } => fields.iter().any(|f| has_bool(t, *f)),
        _ => super::ids::members(t.get(id)).into_iter().any(|m| has_bool(t, m)),
    }
}

fn bitcast_same_size(cx: &InstCx) -> Result<(), Violation> {
    let t = cx.types();
    let (from, to) = (cx.op_ty(0), cx.result());
    for x in [from, to] {
        ensure(t.is_data(x) && !has_bool(t, x), || format!("`{}` has no defined bit representation", cx.name(x)))?;
    }
    // Scalars and vectors by their bits (a 3-lane vector's storage padding
    // is no bits of its value: `vec<f32, 3>` is not `vec<i32, 4>`); other
    // data by its storage size.
    let bits = |x: TypeId| match t.get(x) {
        Type::Vector { elem, lanes } => Some(*lanes as u64 * t.scalar_bits(*elem) as u64),
        _ if t.is_scalar(x) => Some(t.scalar_bits(x) as u64),
        _ => None,
    };
    if let (Some(a), Some(b)) = (bits(from), bits(to)) {
        return ensure(a == b, || format!("`{}` is {a} bits but `{}` is {b}", cx.name(from), cx.name(to)));
    }
    let (a, b) = (t.size_align(from).0, t.size_align(to).0);
    ensure(a == b, || format!("`{}` is {a} bytes but `{}` is {b}", cx.name(from), cx.name(to)))
}

fn operands_same_type(cx: &InstCx) -> Result<(), Violation> {
    let first = cx.op_ty(0);
    for k in 1..cx.data.operands.len() {
        same_op(cx, format_args!("operand {k}"), k, first)?;
    }
    Ok(())
}

fn shift_operands(cx: &InstCx) -> Result<(), Violation> {
    let t = cx.types();
    let (a, b) = (cx.op_ty(0), cx.op_ty(1));
    let shape = |x| (matches!(t.get(x), Type::Vector { .. }), t.lanes(x));
    ensure(shape(a) == shape(b), || {
        format!("shift amount `{}` does not match `{}` lane for lane", cx.name(b), cx.name(a))
    })
}

fn select_shape(cx: &InstCx) -> Result<(), Violation> {
    let t = cx.types();
    same_op(cx, "operand 2", 2, cx.op_ty(1))?;
    let (c, v) = (cx.op_ty(0), cx.op_ty(1));
    let ok = match t.get(c) {
        Type::Vector { lanes, .. } => matches!(t.get(v), Type::Vector { lanes: l, .. } if l == lanes),
        _ => true,
    };
    ensure(ok, || format!("condition `{}` does not match `{}` lane for lane", cx.name(c), cx.name(v)))
}

fn three_lanes(cx: &InstCx) -> Result<(), Violation> {
    ensure(cx.types().lanes(cx.op_ty(0)) == 3, || format!("needs 3-lane vectors, found `{}`", cx.name(cx.op_ty(0))))
}

fn outer_product_shape(cx: &InstCx) -> Result<(), Violation> {
    let t = cx.types();
    same_op(cx, "operand 1", 1, cx.op_ty(0))?;
    let a = cx.op_ty(0);
    let want = match t.get(a) {
        Type::Vector { elem, lanes } => t.lookup(&Type::Matrix { elem: *elem, dim: *lanes }),
        _ => Some(a),
    };
    ensure(want == Some(cx.result()), || {
        format!("the outer product of `{}` values cannot have type `{}`", cx.name(a), cx.name(cx.result()))
    })
}

fn linalg_mul_shape(cx: &InstCx) -> Result<(), Violation> {
    let t = cx.types();
    let (a, b) = (cx.op_ty(0), cx.op_ty(1));
    let want = match (t.get(a), t.get(b)) {
        (Type::Matrix { .. }, Type::Matrix { .. }) if a == b => Some(a),
        (Type::Matrix { elem, dim }, Type::Vector { elem: e, lanes }) if elem == e && dim == lanes => Some(b),
        (Type::Vector { elem: e, lanes }, Type::Matrix { elem, dim }) if elem == e && dim == lanes => Some(a),
        _ => None,
    };
    let want = want.ok_or_else(|| Violation::new(format!("cannot multiply `{}` by `{}`", cx.name(a), cx.name(b))))?;
    same(cx, "the result", cx.result(), want)
}

/// Every named constraint, keyed by its `opcodes.ron` name.
const CONSTRAINTS: &[(&str, Constraint)] = &[
    ("cases_unique", cases_unique),
    ("return_matches_function", return_matches_function),
    ("phi_incoming_types", phi_incoming_types),
    ("alloca_data_type", alloca_data_type),
    ("store_exact_type", store_exact_type),
    ("gep_path", gep_path),
    ("call_signature", call_signature),
    ("static_cast_shape", static_cast_shape),
    ("bitcast_same_size", bitcast_same_size),
    ("operands_same_type", operands_same_type),
    ("shift_operands", shift_operands),
    ("select_shape", select_shape),
    ("three_lanes", three_lanes),
    ("outer_product_shape", outer_product_shape),
    ("linalg_mul_shape", linalg_mul_shape),
    ("aggregate_members", ops::aggregate_members),
    ("shuffle_lanes", ops::shuffle_lanes),
    ("extract_path", ops::extract_path),
    ("insert_path", ops::insert_path),
    ("atomic_path", ops::atomic_path),
    ("result_u32", |cx| same(cx, "the result", cx.result(), TypeTable::U32)),
    ("result_u64", |cx| ops::result_int(cx, &[64])),
    ("result_u32_or_u64", |cx| ops::result_int(cx, &[32, 64])),
    ("texture_size_shape", ops::texture_size_shape),
    ("sample_shape", ops::sample_shape),
    ("ray_shape", ops::ray_shape),
    ("texel_read_shape", ops::texel_read_shape),
    ("texel_write_vec4", ops::texel_write_vec4),
    ("buffer_write_type", ops::buffer_write_type),
    ("buffer_write_part_path", ops::buffer_write_part_path),
];

pub fn lookup(name: &str) -> Option<Constraint> {
    CONSTRAINTS.iter().find(|c| c.0 == name).map(|c| c.1)
}

pub fn names() -> impl Iterator<Item = &'static str> {
    CONSTRAINTS.iter().map(|c| c.0)
}

/// Texture dimension an opcode works on: from its name for bindless slots,
/// else from the texture operand.
pub(super) fn texture_dim(cx: &InstCx) -> Option<u8> {
    use Opcode::*;
    match cx.data.opcode {
        BindlessTexture2dSize | BindlessTexture2dRead | BindlessTexture2dWrite => Some(2),
        BindlessTexture3dSize | BindlessTexture3dRead | BindlessTexture3dWrite => Some(3),
        _ => match cx.get(cx.op_ty(0)) {
            Type::Texture { dim, .. } => Some(*dim),
            _ => None,
        },
    }
}
