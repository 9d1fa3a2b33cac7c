//! Value replacement: each computed value (and each argument) is tried
//! replaced in all its uses by a simpler one of its type, the zero
//! constant first, then one, then `undef`, then an argument or an earlier
//! instruction of its block, and the instruction deleted. What the failure
//! needs stays; the rest of the data flow unravels for `ddmin`.

use xir::{ArgKind, ConstData, ConstValue, FloatFormat, FuncId, Function, Module, Opcode, Type, TypeId, Value};

use crate::Run;

/// Composite zeros larger than this are not built (`undef` is tried instead).
const MAX_ZERO_MEMBERS: u64 = 64;

/// The zero constant of `ty` (`false`, `0`, `+0.0`, composites of zeros).
pub(crate) fn zero(m: &mut Module, ty: TypeId) -> Option<Value> {
    let c = zero_const(m, ty, 0)?;
    Some(Value::Const(c))
}

fn zero_const(m: &mut Module, ty: TypeId, depth: u32) -> Option<xir::Const> {
    if depth > 8 {
        return None;
    }
    let members: Vec<TypeId> = match m.types.get(ty).clone() {
        Type::Bool | Type::Int { .. } | Type::Float(_) => {
            return Some(m.consts.intern(ConstData { ty, value: ConstValue::Scalar(0) }))
        }
        Type::Vector { elem, lanes } => vec![elem; lanes as usize],
        Type::Matrix { elem, dim } => {
            let col = m.types.vector(elem, dim);
            vec![col; dim as usize]
        }
        Type::Array { elem, len } if len <= MAX_ZERO_MEMBERS => vec![elem; len as usize],
        Type::Struct { fields, .. } => fields,
        _ => return None,
    };
    let consts: Option<Vec<_>> = members.into_iter().map(|t| zero_const(m, t, depth + 1)).collect();
    Some(m.consts.intern(ConstData { ty, value: ConstValue::Composite(consts?) }))
}

/// The bits of one in a scalar type (1.0 for floats; FP8 has none here).
pub(crate) fn one_bits(ty: &Type) -> Option<u64> {
    match ty {
        Type::Bool | Type::Int { .. } => Some(1),
        Type::Float(FloatFormat::F16) => Some(0x3c00),
        Type::Float(FloatFormat::F32) => Some(1f32.to_bits() as u64),
        Type::Float(FloatFormat::F64) => Some(1f64.to_bits()),
        _ => None,
    }
}

/// Values that may stand for `v` of type `ty` at `at`'s place: the zero
/// constant, `undef`, value arguments and earlier values of the same block.
fn replacements(m: &mut Module, f: FuncId, v: Value, ty: TypeId) -> Vec<Value> {
    let mut out = Vec::new();
    out.extend(zero(m, ty));
    // One, where zero loses the failure (`x + 0` and `x - 0` agree).
    let one = one_bits(m.types.get(ty));
    out.extend(one.map(|bits| m.const_scalar(ty, bits)));
    out.push(Value::Undef(ty));
    let func = m.func(f);
    for (k, a) in func.args.iter().enumerate() {
        let arg = Value::Arg(k as u32);
        if a.ty == ty && a.kind == ArgKind::Value && arg != v && out.len() < 4 {
            out.push(arg);
        }
    }
    if let Value::Inst(i) = v {
        if func.opcode(i) == Opcode::Phi {
            out.extend(func.inst(i).operands.iter().copied().filter(|&o| o != v));
        }
        if let (Some(b), Some(pos)) = (func.parent(i), func.position(i)) {
            let earlier = func.block(b).insts()[..pos].iter().rev();
            let same = earlier.filter(|&&e| func.inst(e).ty == ty && !func.is_lvalue(Value::Inst(e)));
            out.extend(same.take(2).map(|&e| Value::Inst(e)));
        }
    }
    out
}

/// The values of `f` worth replacing: used, not lvalues, arguments first.
fn candidates(func: &Function) -> Vec<(Value, TypeId)> {
    let mut out: Vec<(Value, TypeId)> = (0..func.args.len() as u32)
        .map(Value::Arg)
        .filter(|&a| func.args[a_index(a)].kind == ArgKind::Value && func.has_uses(a))
        .map(|a| (a, func.args[a_index(a)].ty))
        .collect();
    for (_, i) in func.all_insts() {
        let v = Value::Inst(i);
        if func.inst(i).ty != xir::TypeTable::VOID && !func.is_lvalue(v) && func.has_uses(v) {
            out.push((v, func.inst(i).ty));
        }
    }
    out
}

fn a_index(v: Value) -> usize {
    match v {
        Value::Arg(k) => k as usize,
        _ => unreachable!("arguments only"),
    }
}

pub(crate) fn replace_values(m: &mut Module, f: FuncId, run: &mut Run) -> bool {
    let mut changed = false;
    for (v, ty) in candidates(m.func(f)) {
        // An earlier replacement may have deleted it.
        if let Value::Inst(i) = v {
            if !m.func(f).is_live(i) {
                continue;
            }
        }
        if !m.func(f).has_uses(v) {
            continue;
        }
        for r in replacements(m, f, v, ty) {
            if run.spent() {
                return changed;
            }
            if run.attempt(m, |c| {
                let func = c.func_mut(f);
                func.replace_all_uses(v, r);
                if let Value::Inst(i) = v {
                    func.remove_inst(i);
                }
                true
            }) {
                changed = true;
                break;
            }
        }
    }
    changed
}
