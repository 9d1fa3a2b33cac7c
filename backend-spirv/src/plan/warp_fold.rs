//! Float warp reductions and scans folded lane by lane.
//!
//! The interpreter folds `warp.active_sum` / `product` / `min` / `max` and
//! the exclusive scans `warp.prefix_sum` / `prefix_product` over the active
//! lanes in lane order. For integers any order gives the same value, so the
//! `OpGroupNonUniform*` instructions serve; for floats the device's own
//! order rounds differently. So an `f32` fold is a loop over the subgroup's
//! lanes (`emit::subgroup`): lane `k`'s value is shuffled to every lane and
//! combined where lane `k` is active (for a scan, also below the reading
//! lane), with the same correctly rounded `+` / `*` and `NMin` / `NMax` as
//! scalar code. It costs one shuffle per lane of the subgroup where the
//! native instruction costs about log2 of it. The loop's four blocks are
//! planned as the CAS loops' are (`plan::control_flow`). With `--fast-math`
//! (`CompileOptions::fast_math`, which also lets the optimizer reassociate)
//! the fold is the group instruction (`OpGroupNonUniformFAdd` and its kin),
//! in the device's order; `--compare` then bounds it as any order
//! (`xir::interp::Precision::any_fold_order`). Other float widths are
//! refused at the handoff (f16 and FP8 arithmetic are widened by the
//! emitter, f64's rounding is not the interpreter's there).

use xir::{Function, Inst, Module, Opcode};

/// Whether `op` reduces or scans with arithmetic (where float rounding
/// depends on the order).
pub fn is_fold(op: Opcode) -> bool {
    xir_spec::spec().op(op).has(xir_spec::Trait::LaneFold)
}

/// Whether `i` is an `f32` (scalar or vector) fold: the float folds the
/// backend emits.
pub fn is_f32_fold(m: &Module, f: &Function, i: Inst) -> bool {
    let d = f.inst(i);
    if !is_fold(d.opcode) {
        return false;
    }
    let Some(&x) = d.operands.first() else { return false };
    let t = &m.types;
    t.scalar_of(f.value_type(m, x)) == xir::TypeTable::F32
}

/// Whether `i` is an exclusive scan (the lanes below the reading one).
pub fn is_scan(op: Opcode) -> bool {
    matches!(op, Opcode::WarpPrefixSum | Opcode::WarpPrefixProduct)
}

/// Whether `i` is emitted as a loop over the lanes (planned blocks): an
/// `f32` fold without fast math.
pub fn is_lane_order_loop(m: &Module, f: &Function, i: Inst, fast_math: bool) -> bool {
    !fast_math && is_f32_fold(m, f, i)
}
