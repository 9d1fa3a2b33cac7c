//! Warp (subgroup) operations under cooperative scheduling. A thread that
//! reaches a warp operation waits there; once no thread of the block can run,
//! the threads of one warp (`Options::warp_size` consecutive linear thread
//! indices, 32 by default; a device run is compared at the device's
//! subgroup size) waiting at the same instruction, reached through the same
//! call sites, form its active lanes, the
//! operation is computed over them in lane order, and they go on. Lanes that
//! finished, wait at a barrier or wait at another warp operation are
//! inactive for it.

use xir_spec::Opcode;

use crate::ir::{Function, InstCore, Module, Type};

use super::arith::{binop, cmp, from_f64, R};
use super::exec::{Machine, State, Thread};
use super::ops::map2;
use super::value::{scalar_kind, Sk, Val};
use super::InterpError;

pub(crate) fn is_warp_op(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        WarpIsFirstActiveLane
            | WarpFirstActiveLane
            | WarpActiveAllEqual
            | WarpActiveBitAnd
            | WarpActiveBitOr
            | WarpActiveBitXor
            | WarpActiveCountBits
            | WarpActiveMax
            | WarpActiveMin
            | WarpActiveProduct
            | WarpActiveSum
            | WarpActiveAll
            | WarpActiveAny
            | WarpActiveBitMask
            | WarpPrefixCountBits
            | WarpPrefixSum
            | WarpPrefixProduct
            | WarpReadLane
            | WarpReadFirstActiveLane
    )
}

/// Release one group of threads waiting at a warp operation; false when no
/// thread waits at one.
pub(crate) fn resolve(mach: &mut Machine, threads: &mut [Thread]) -> Result<bool, InterpError> {
    let Some(first) = threads.iter().position(|t| matches!(t.state, State::WarpWait(..))) else {
        return Ok(false);
    };
    let State::WarpWait(func, block, inst, path) = threads[first].state else { unreachable!("matched above") };
    let size = mach.warp_size();
    let warp = threads[first].regs.lane / size;
    let group: Vec<usize> = (first..threads.len())
        .filter(|&k| {
            threads[k].state == State::WarpWait(func, block, inst, path) && threads[k].regs.lane / size == warp
        })
        .collect();
    let f = mach.m.func(func);
    let d = f.inst(inst);
    let lanes: Vec<u32> = group.iter().map(|&k| threads[k].regs.lane % size).collect();
    let args: Vec<&[Val]> = group.iter().map(|&k| threads[k].pending.as_slice()).collect();
    let results = compute(mach.m, f, d, &lanes, &args).and_then(|r| bounded(mach, f, d, &args, r)).map_err(|msg| {
        InterpError { thread: Some(threads[first].regs.did), ..mach.error(func, Some(block), Some(inst), msg) }
    })?;
    for (k, v) in group.into_iter().zip(results) {
        mach.resume_warp(&mut threads[k], v);
    }
    Ok(true)
}

/// Under the precision shadow, a float fold's results with the bounds the
/// device's run allows (`precision::warp_fold`); other results as they are
/// (moves carry their operands' bounds in the values).
fn bounded(mach: &Machine, f: &Function, d: &InstCore, args: &[&[Val]], results: Vec<Val>) -> R<Vec<Val>> {
    let Some(p) = mach.precision() else { return Ok(results) };
    let fold = xir_spec::spec().op(d.opcode).has(xir_spec::Trait::LaneFold);
    let sk = d.operands.first().and_then(|&v| scalar_kind(&mach.m.types, f.value_type(mach.m, v)));
    match sk {
        Some(sk @ (Sk::F16 | Sk::F32 | Sk::F64)) if fold => {
            let xs: Vec<&Val> = args.iter().filter_map(|a| a.first()).collect();
            super::precision::warp_fold(d.opcode, sk, &xs, results, p)
        }
        _ => Ok(results),
    }
}

/// Fold `op` over values in lane order.
fn fold(op: Opcode, sk: Sk, vals: &[&Val]) -> R<Val> {
    let mut acc = vals[0].clone();
    for v in &vals[1..] {
        acc = map2(&acc, v, &mut |a, b| binop(op, sk, a, b))?;
    }
    Ok(acc)
}

fn identity(op: Opcode, sk: Sk, like: &Val) -> Val {
    let one = match sk {
        Sk::Int { .. } | Sk::Bool => 1,
        _ => from_f64(sk, 1.0),
    };
    let e = if op == Opcode::Mul { one } else { 0 };
    match like {
        Val::A(m) => Val::agg(m.iter().map(|x| identity(op, sk, x)).collect()),
        _ => Val::S(e),
    }
}

fn compute(m: &Module, f: &Function, d: &InstCore, lanes: &[u32], args: &[&[Val]]) -> R<Vec<Val>> {
    use Opcode::*;
    let n = lanes.len();
    let x = |k: usize| -> R<&Val> { args[k].first().ok_or_else(|| format!("`{}` needs an operand", d.opcode)) };
    let xs: Vec<&Val> = (0..n).map(x).collect::<R<_>>().unwrap_or_default();
    let sk = || {
        d.operands
            .first()
            .and_then(|&v| scalar_kind(&m.types, f.value_type(m, v)))
            .ok_or_else(|| format!("`{}` needs a scalar operand", d.opcode))
    };
    let truth = |v: &Val| -> R<bool> { Ok(v.bits()? != 0) };
    let same = |v: Val| vec![v; n];
    Ok(match d.opcode {
        WarpIsFirstActiveLane => (0..n).map(|k| Val::bool(k == 0)).collect(),
        WarpFirstActiveLane => same(Val::S(lanes[0] as u64)),
        WarpActiveAllEqual => {
            let sk = sk()?;
            let mut acc = map2(xs[0], xs[0], &mut |_, _| Ok(1))?;
            for v in &xs[1..] {
                let eq = map2(xs[0], v, &mut |a, b| Ok((a == b || cmp(Eq, sk, a, b).unwrap_or(false)) as u64))?;
                acc = map2(&acc, &eq, &mut |a, b| Ok(a & b))?;
            }
            same(acc)
        }
        WarpActiveBitAnd | WarpActiveBitOr | WarpActiveBitXor | WarpActiveMax | WarpActiveMin | WarpActiveProduct
        | WarpActiveSum => {
            let op = match d.opcode {
                WarpActiveBitAnd => BitAnd,
                WarpActiveBitOr => BitOr,
                WarpActiveBitXor => BitXor,
                WarpActiveMax => Max,
                WarpActiveMin => Min,
                WarpActiveProduct => Mul,
                _ => Add,
            };
            same(fold(op, sk()?, &xs)?)
        }
        WarpActiveCountBits | WarpActiveAll | WarpActiveAny => {
            let t: Vec<bool> = xs.iter().map(|v| truth(v)).collect::<R<_>>()?;
            let c = t.iter().filter(|&&b| b).count();
            same(match d.opcode {
                WarpActiveCountBits => Val::S(c as u64),
                WarpActiveAll => Val::bool(c == n),
                _ => Val::bool(c > 0),
            })
        }
        WarpActiveBitMask => {
            // As `OpGroupNonUniformBallot`: lane k is bit k % 32 of word
            // k / 32 of a vector; a scalar holds the lanes below its width.
            let held: Vec<u32> =
                (0..n).filter_map(|k| truth(xs[k]).map(|b| b.then_some(lanes[k])).transpose()).collect::<R<_>>()?;
            same(match m.types.get(d.ty) {
                Type::Vector { lanes: l, .. } => {
                    let mut w = vec![0u64; *l as usize];
                    for lane in held {
                        if let Some(word) = w.get_mut(lane as usize / 32) {
                            *word |= 1 << (lane % 32);
                        }
                    }
                    Val::agg(w.into_iter().map(Val::S).collect())
                }
                _ => {
                    let bits = m.types.scalar_bits(d.ty).min(64);
                    Val::S(held.into_iter().filter(|&l| l < bits).fold(0u64, |a, l| a | 1 << l))
                }
            })
        }
        WarpPrefixCountBits => {
            let mut c = 0u64;
            let mut out = Vec::with_capacity(n);
            for v in &xs {
                out.push(Val::S(c));
                c += truth(v)? as u64;
            }
            out
        }
        WarpPrefixSum | WarpPrefixProduct => {
            let op = if d.opcode == WarpPrefixSum { Add } else { Mul };
            let sk = sk()?;
            let mut acc = identity(op, sk, xs[0]);
            let mut out = Vec::with_capacity(n);
            for v in &xs {
                out.push(acc.clone());
                acc = map2(&acc, v, &mut |a, b| binop(op, sk, a, b))?;
            }
            out
        }
        WarpReadLane => {
            let mut out = Vec::with_capacity(n);
            for a in args {
                let want = a.get(1).ok_or("`warp.read_lane` needs a lane")?.bits()?;
                let src = lanes.iter().position(|&l| l as u64 == want).ok_or_else(|| {
                    format!("`warp.read_lane` reads lane {want}, which is not active at this operation")
                })?;
                out.push(xs[src].clone());
            }
            out
        }
        WarpReadFirstActiveLane => same(xs[0].clone()),
        op => return Err(format!("the interpreter does not support `{op}`")),
    })
}
