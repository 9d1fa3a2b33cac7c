//! Constant folding with the interpreter's exact semantics, for optimization
//! passes (`const_fold`, `sccp`, the e-graph simplifier): the same scalar
//! rules as running the program, so a fold can never change a result the
//! interpreter would compute. Anything the interpreter reports as an error
//! (integer division by zero, an op undefined on a type) does not fold.

use xir_spec::{Opcode, Trait};

use super::arith;
use super::value::scalar_kind;
use crate::ir::{TypeId, TypeTable};

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
