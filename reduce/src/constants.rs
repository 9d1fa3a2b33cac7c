//! Constant simplification: every constant operand is tried as 0, then as
//! 1 (scalars; 1.0 for floats), or as the zero composite, so that what remains of a
//! reduced module reads as the smallest numbers that still fail.

use xir::{ConstValue, FuncId, Module, Value};

use crate::values::zero;
use crate::Run;

pub(crate) fn simplify_constants(m: &mut Module, f: FuncId, run: &mut Run) -> bool {
    let mut changed = false;
    let insts: Vec<_> = m.func(f).all_insts().map(|(_, i)| i).collect();
    for i in insts {
        for k in 0..m.func(f).inst(i).operands.len() {
            let Value::Const(old) = m.func(f).inst(i).operands[k] else { continue };
            let data = m.consts.get(old).clone();
            let mut simpler = Vec::new();
            match data.value {
                ConstValue::Scalar(bits) => {
                    let one = crate::values::one_bits(m.types.get(data.ty));
                    // 0 before 1 before anything else: only ever down this
                    // order, so two constants never trade places forever.
                    let rank = |b: u64| {
                        if b == 0 {
                            0
                        } else if Some(b) == one {
                            1
                        } else {
                            2
                        }
                    };
                    let tries = [Some(0), one].into_iter().flatten().filter(|&b| rank(b) < rank(bits));
                    simpler.extend(tries.map(|b| (data.ty, Some(b))));
                }
                ConstValue::Composite(_) => simpler.push((data.ty, None)),
            }
            for (ty, bits) in simpler {
                if run.spent() {
                    return changed;
                }
                let replaced = run.attempt(m, |c| {
                    let v = match bits {
                        Some(b) => c.const_scalar(ty, b),
                        None => match zero(c, ty) {
                            Some(z) if z != Value::Const(old) => z,
                            _ => return false,
                        },
                    };
                    c.func_mut(f).set_operand(i, k, v);
                    true
                });
                if replaced {
                    changed = true;
                    break;
                }
            }
        }
    }
    changed
}
