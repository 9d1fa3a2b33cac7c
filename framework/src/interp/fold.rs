//! Constant folding with the interpreter's exact semantics, for optimization
//! passes (`const_fold`, `sccp`, the e-graph simplifier): the same scalar
//! rules as running the program, so a fold can never change a result the
//! interpreter would compute. Anything the interpreter reports as an error
//! (integer division by zero, an op undefined on a type) does not fold.

use xir_spec::{Opcode, Trait};

use super::arith;
use super::exec::const_val;
use super::value::{scalar_kind, Val};
use crate::ir::{FuncId, Inst, Module, Type, TypeId, TypeTable, Value};

/// The result bits of the pure scalar operation `op` on `operands` (raw
/// bits, zero-extended to 64), where operand 0 has type `operand_ty` and the
/// result has type `result_ty`. `None` when either type is not a scalar,
/// the opcode is not a scalar arithmetic / comparison / select / static
/// cast, or the interpreter would report an error.
pub fn fold_scalar(
    types: &TypeTable,
    op: Opcode,
    operand_ty: TypeId,
    result_ty: TypeId,
    operands: &[u64],
) -> Option<u64> {
    use Opcode::*;
    if !types.is_scalar(operand_ty) || !types.is_scalar(result_ty) {
        return None;
    }
    let sk = scalar_kind(types, operand_ty)?;
    let spec = xir_spec::spec().op(op);
    if !spec.has(Trait::Pure) {
        return None;
    }
    let r = match (op, operands) {
        (Isinf, [x]) => Ok(arith::is_inf_bits(sk, *x) as u64),
        (Isnan, [x]) => Ok(arith::is_nan_bits(sk, *x) as u64),
        (Lt | Gt | Le | Ge | Eq | Ne, [a, b]) => arith::cmp(op, sk, *a, *b).map(u64::from),
        (Select, [c, a, b]) => Ok(if *c & 1 == 1 { *a } else { *b }),
        (CastStatic, [x]) => Ok(arith::cast_static(sk, scalar_kind(types, result_ty)?, *x)),
        (Clamp | Lerp | Smoothstep | Fma, [a, b, c]) => arith::ternop(op, sk, *a, *b, *c),
        (_, [x]) if spec.has(Trait::Arithmetic) => arith::unop(op, sk, *x),
        (_, [a, b]) if spec.has(Trait::Arithmetic) => arith::binop(op, sk, *a, *b),
        _ => return None,
    };
    r.ok()
}

/// The value the pure instruction `i` of `f` computes when every operand is
/// a constant and an operand or the result is not a scalar (a vector,
/// matrix, array or struct): the interpreter's own evaluation of it (lane
/// by lane for lane-wise operations, `aggregate` building a composite), as
/// a constant of the result type added to `m`. Scalar instructions are
/// [`fold_scalar`]'s. `None` when an operand is not a constant, the opcode
/// is not one the interpreter evaluates as a pure value (memory, control,
/// warp, resource, ray, debug operations), or the interpreter reports an
/// error. The caller decides which opcodes may fold (transcendental ones,
/// convergent ones).
pub fn fold_constant(m: &mut Module, fid: FuncId, i: Inst) -> Option<Value> {
    let f = m.func(fid);
    let d = f.inst(i);
    if super::semantics::semantics(d.opcode) != super::semantics::Semantics::Pure
        || !xir_spec::spec().op(d.opcode).has(Trait::Pure)
        || !d.blocks.is_empty()
    {
        return None;
    }
    let types = &m.types;
    let shaped = |ty: TypeId| !types.is_scalar(ty);
    if !shaped(d.ty) && !d.operands.iter().any(|&v| shaped(f.value_type(m, v))) {
        return None;
    }
    let ops: Option<Vec<Val>> = d
        .operands
        .iter()
        .map(|&v| match v {
            Value::Const(c) => Some(const_val(m, c)),
            _ => None,
        })
        .collect();
    let ops = ops?;
    let sk = d.operands.first().and_then(|&v| scalar_kind(types, f.value_type(m, v)));
    let v = super::ops::eval_pure(m, f, d, sk, &ops).ok()?;
    let ty = d.ty;
    intern(m, ty, &v)
}

/// `v` as a constant of type `ty` in `m` (`None` when its shape does not
/// fit the type).
fn intern(m: &mut Module, ty: TypeId, v: &Val) -> Option<Value> {
    let members: Vec<TypeId> = match (m.types.get(ty).clone(), v) {
        (_, Val::S(bits)) if m.types.is_scalar(ty) => return Some(m.const_scalar(ty, *bits)),
        (Type::Vector { elem, lanes }, Val::A(ms)) if ms.len() == lanes as usize => vec![elem; ms.len()],
        (Type::Matrix { elem, dim }, Val::A(ms)) if ms.len() == dim as usize => {
            vec![m.types.vector(elem, dim); ms.len()]
        }
        (Type::Array { elem, len }, Val::A(ms)) if ms.len() as u64 == len => vec![elem; ms.len()],
        (Type::Struct { fields, .. }, Val::A(ms)) if ms.len() == fields.len() => fields,
        _ => return None,
    };
    let Val::A(ms) = v else { return None };
    let mut consts = Vec::with_capacity(ms.len());
    for (t, x) in members.into_iter().zip(ms.iter()) {
        let Value::Const(c) = intern(m, t, x)? else { return None };
        consts.push(c);
    }
    Some(m.const_composite(ty, consts))
}
