//! Named constraints for aggregates, atomics and resources (the rest of the
//! constraint table lives in `constraints.rs`).

use xir_spec::Opcode;

use super::constraints::{ensure, same, same_op, texture_dim, walk_path};
use super::{InstCx, Violation};
use crate::ir::{Type, TypeId, TypeTable};

/// The type of each member slot of an aggregate type (matrices: columns).
fn slots(cx: &InstCx, ty: TypeId) -> Result<Vec<TypeId>, String> {
    let t = cx.types();
    Ok(match t.get(ty) {
        Type::Vector { elem, lanes } => vec![*elem; *lanes as usize],
        Type::Matrix { elem, dim } => {
            let col = t.lookup(&Type::Vector { elem: *elem, lanes: *dim });
            vec![col.ok_or_else(|| format!("the column type of `{}` is not interned", cx.name(ty)))?; *dim as usize]
        }
        Type::Array { elem, len } => {
            let n = usize::try_from(*len).ok().filter(|&n| n <= 1 << 16);
            vec![*elem; n.ok_or_else(|| format!("`{}` is too long to build member by member", cx.name(ty)))?]
        }
        Type::Struct { fields, .. } => fields.clone(),
        _ => return Err(format!("`{}` is not an aggregate type", cx.name(ty))),
    })
}

pub(super) fn aggregate_members(cx: &InstCx) -> Result<(), Violation> {
    let slots = slots(cx, cx.result())?;
    let ops = &cx.data.operands;
    ensure(ops.len() == slots.len(), || {
        format!("`{}` has {} members, {} given", cx.name(cx.result()), slots.len(), ops.len())
    })?;
    for (k, &slot) in slots.iter().enumerate() {
        same_op(cx, format_args!("member {k}"), k, slot)?;
    }
    Ok(())
}

pub(super) fn shuffle_lanes(cx: &InstCx) -> Result<(), Violation> {
    let t = cx.types();
    let src = cx.op_ty(0);
    let Type::Vector { elem, lanes } = *t.get(src) else { return Err("operand 0 is not a vector".into()) };
    let idx = cx.variadic();
    for (k, &v) in idx.iter().enumerate() {
        let c = cx.module.const_int_value(v).unwrap_or(-1);
        ensure((0..lanes as i128).contains(&c), || {
            format!("lane index {k} ({c}) is out of range for `{}`", cx.name(src))
        })?;
    }
    let want = match idx.len() {
        1 => Some(elem),
        n @ 2..=4 => t.lookup(&Type::Vector { elem, lanes: n as u8 }),
        n => return Err(format!("a shuffle selects 1..4 lanes, found {n}").into()),
    };
    ensure(want == Some(cx.result()), || {
        format!("selecting {} lanes of `{}` cannot give `{}`", idx.len(), cx.name(src), cx.name(cx.result()))
    })
}

pub(super) fn extract_path(cx: &InstCx) -> Result<(), Violation> {
    ensure(!cx.variadic().is_empty(), || "an extract needs at least one index".into())?;
    let target = walk_path(cx, cx.op_ty(0), cx.variadic())?;
    same(cx, "the result", cx.result(), target)
}

pub(super) fn insert_path(cx: &InstCx) -> Result<(), Violation> {
    ensure(!cx.variadic().is_empty(), || "an insert needs at least one index".into())?;
    let target = walk_path(cx, cx.op_ty(0), cx.variadic())?;
    same_op(cx, "the inserted value", 1, target)
}

pub(super) fn atomic_path(cx: &InstCx) -> Result<(), Violation> {
    let t = cx.types();
    let base = cx.op_ty(0);
    let idx = cx.variadic();
    let target = match t.get(base) {
        Type::Buffer(elem) if !cx.func.is_lvalue(cx.data.operands[0]) => {
            ensure(!idx.is_empty(), || "an atomic on a buffer needs the element index".into())?;
            ensure(t.is_int(cx.ty(idx[0])), || "the element index is not an integer".into())?;
            walk_path(cx, *elem, &idx[1..])?
        }
        _ => walk_path(cx, base, idx)?,
    };
    ensure(t.is_int(target) || t.is_float(target), || {
        format!("atomics act on integer or float scalars, found `{}`", cx.name(target))
    })?;
    for k in 1..cx.info.spec.operands.len() {
        same_op(cx, format_args!("operand {k}"), k, target)?;
    }
    same(cx, "the result", cx.result(), target)
}

/// The result is an unsigned integer of one of `widths`.
pub(super) fn result_int(cx: &InstCx, widths: &[u8]) -> Result<(), Violation> {
    let ok = matches!(cx.get(cx.result()), Type::Int { bits, signed: false } if widths.contains(bits));
    let want: Vec<String> = widths.iter().map(|w| format!("`u{w}`")).collect();
    ensure(ok, || format!("the result must be {}, found `{}`", want.join(" or "), cx.name(cx.result())))
}

/// The result is `vec<elem, lanes>` for one of `elems`.
fn result_vec(cx: &InstCx, elems: &[TypeId], lanes: u8) -> Result<TypeId, Violation> {
    let r = cx.result();
    match cx.get(r) {
        Type::Vector { elem, lanes: l } if *l == lanes && elems.contains(elem) => Ok(*elem),
        _ => {
            let names: Vec<String> = elems.iter().map(|e| format!("vec<{}, {lanes}>", cx.name(*e))).collect();
            Err(format!("the result must be `{}`, found `{}`", names.join("` or `"), cx.name(r)).into())
        }
    }
}

const TEXELS: [TypeId; 3] = [TypeTable::F32, TypeTable::I32, TypeTable::U32];

pub(super) fn texture_size_shape(cx: &InstCx) -> Result<(), Violation> {
    let dim = texture_dim(cx).ok_or("not a texture operation")?;
    result_vec(cx, &[TypeTable::U32], dim).map(|_| ())
}

pub(super) fn sample_shape(cx: &InstCx) -> Result<(), Violation> {
    let t = cx.types();
    result_vec(cx, &[TypeTable::F32], 4)?;
    let uv = cx.op_ty(2);
    ensure(matches!(t.lanes(uv), 2 | 3), || format!("coordinates must have 2 or 3 lanes, found `{}`", cx.name(uv)))?;
    if cx.data.opcode == Opcode::TextureSampleGrad {
        same_op(cx, "ddx", 3, uv)?;
        same_op(cx, "ddy", 4, uv)?;
    }
    Ok(())
}

pub(super) fn ray_shape(cx: &InstCx) -> Result<(), Violation> {
    let ray = cx.op_ty(1);
    ensure(matches!(cx.get(ray), Type::Struct { .. }), || {
        format!("the ray must be a struct, found `{}`", cx.name(ray))
    })?;
    let r = cx.get(cx.result());
    match cx.data.opcode {
        Opcode::RayQueryPipeline => {
            ensure(matches!(r, Type::RayQuery { .. }), || "the result must be a ray-query object".into())
        }
        Opcode::RayTraceClosest => {
            ensure(matches!(r, Type::Struct { .. }), || "the hit result must be a struct".into())
        }
        _ => Ok(()),
    }
}

/// Coordinates (operand `k`) have one lane per texture dimension.
fn coords(cx: &InstCx, k: usize) -> Result<(), Violation> {
    let dim = texture_dim(cx).ok_or("not a texture operation")?;
    let c = cx.op_ty(k);
    ensure(cx.types().lanes(c) == dim as u32, || format!("a {dim}d texel coordinate cannot be `{}`", cx.name(c)))
}

/// The texel scalar a texture operand holds, if it is a texture.
fn texel_of(cx: &InstCx) -> Option<TypeId> {
    match cx.get(cx.op_ty(0)) {
        Type::Texture { elem, .. } => Some(*elem),
        _ => None,
    }
}

pub(super) fn texel_read_shape(cx: &InstCx) -> Result<(), Violation> {
    let k = if texel_of(cx).is_some() { 1 } else { 2 };
    coords(cx, k)?;
    let elems: Vec<TypeId> = texel_of(cx).map(|e| vec![e]).unwrap_or(TEXELS.to_vec());
    result_vec(cx, &elems, 4).map(|_| ())
}

pub(super) fn texel_write_vec4(cx: &InstCx) -> Result<(), Violation> {
    let (k, v) = if texel_of(cx).is_some() { (1, 2) } else { (2, 3) };
    coords(cx, k)?;
    let elems: Vec<TypeId> = texel_of(cx).map(|e| vec![e]).unwrap_or(TEXELS.to_vec());
    let val = cx.op_ty(v);
    let ok = matches!(cx.get(val), Type::Vector { elem, lanes: 4 } if elems.contains(elem));
    ensure(ok, || format!("texel writes take exactly a 4-lane texel vector, found `{}`", cx.name(val)))
}

pub(super) fn buffer_write_type(cx: &InstCx) -> Result<(), Violation> {
    match cx.get(cx.op_ty(0)) {
        Type::Buffer(elem) => same_op(cx, "the written value", 2, *elem),
        _ => Err("operand 0 is not a buffer".into()),
    }
}

/// `buffer.write_part`: a non-empty path from the buffer's element, walked
/// as a gep's (`walk_path`: struct members constant, other indices may be
/// dynamic, constants in range), reaching exactly the written value's type.
pub(super) fn buffer_write_part_path(cx: &InstCx) -> Result<(), Violation> {
    let Type::Buffer(elem) = *cx.get(cx.op_ty(0)) else { return Err("operand 0 is not a buffer".into()) };
    let path = cx.variadic();
    ensure(!path.is_empty(), || {
        "a partial write needs a path into the element (a whole element is `buffer.write`)".into()
    })?;
    let target = walk_path(cx, elem, path)?;
    same_op(cx, "the written value", 2, target)
}
