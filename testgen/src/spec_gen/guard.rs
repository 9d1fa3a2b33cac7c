//! Guards for the spec's `undefined` conditions: each name an opcode's
//! `undefined` list may use has one guard here, which rewrites the operands
//! before the instruction so the condition cannot hold (the spec names the
//! hazard; this table is the generator's one implementation of each name).
//! Only integer, float and bool scalars and vectors reach a guard.

use xir::ir::{Opcode, Value};

use super::build::Emitter;
use super::universe::{Scalar, Ty};

/// One guard: its spec name and the operand rewrite.
pub struct Guard {
    pub name: &'static str,
    pub doc: &'static str,
    apply: fn(&mut Emitter, &[Ty], Option<Ty>, &mut [Value]),
}

impl Guard {
    /// Rewrite `ops` (of types `tys`, for a result of `result`).
    pub fn apply(&self, e: &mut Emitter, tys: &[Ty], result: Option<Ty>, ops: &mut [Value]) {
        (self.apply)(e, tys, result, ops)
    }
}

fn is_int(t: Ty) -> bool {
    matches!(t.scalar(), Scalar::I32 | Scalar::U32)
}

/// `select(x == bad, good, x)`, lane-wise.
fn replace(e: &mut Emitter, t: Ty, x: Value, bad: u64, good: u64) -> Value {
    let bad = e.splat(t, bad);
    let good = e.splat(t, good);
    let cond = e.op(Opcode::Eq, t.bool_shape(), &[x, bad]);
    e.op(Opcode::Select, t, &[cond, good, x])
}

const GUARDS: &[Guard] = &[
    Guard {
        name: "zero_divisor",
        doc: "an integer divisor of 0 becomes 1",
        apply: |e, tys, _, ops| {
            if is_int(tys[1]) {
                ops[1] = replace(e, tys[1], ops[1], 0, 1);
            }
        },
    },
    Guard {
        name: "min_by_minus_one",
        doc: "a signed dividend of INT_MIN becomes 0",
        apply: |e, tys, _, ops| {
            if tys[0].scalar() == Scalar::I32 {
                ops[0] = replace(e, tys[0], ops[0], i32::MIN as u32 as u64, 0);
            }
        },
    },
    Guard {
        name: "shift_past_width",
        doc: "a shift amount is masked to the width (`& 31`)",
        apply: |e, tys, _, ops| {
            if is_int(tys[1]) {
                let mask = e.splat(tys[1], 31);
                ops[1] = e.op(Opcode::BitAnd, tys[1], &[ops[1], mask]);
            }
        },
    },
    Guard {
        name: "float_to_int_out_of_range",
        doc: "a float converted to an integer is made finite and clamped into the integer's range",
        apply: |e, tys, result, ops| {
            let Some(r) = result else { return };
            if tys[0].scalar() != Scalar::F32 || !is_int(r) {
                return;
            }
            let t = tys[0];
            let (lo, hi) =
                if r.scalar() == Scalar::I32 { (-2147483648.0f32, 2147483520.0f32) } else { (0.0f32, 4294967040.0f32) };
            let zero = e.splat(t, 0.0f32.to_bits() as u64);
            let nan = e.op(Opcode::Isnan, t.bool_shape(), &[ops[0]]);
            let x = e.op(Opcode::Select, t, &[nan, zero, ops[0]]);
            let (lo, hi) = (e.splat(t, lo.to_bits() as u64), e.splat(t, hi.to_bits() as u64));
            ops[0] = e.op(Opcode::Clamp, t, &[x, lo, hi]);
        },
    },
    Guard {
        name: "clamp_bounds_reversed",
        doc: "the bounds become `min(lo, hi)` and `max(lo, hi)`",
        apply: |e, tys, _, ops| {
            let t = tys[1];
            let lo = e.op(Opcode::Min, t, &[ops[1], ops[2]]);
            let hi = e.op(Opcode::Max, t, &[ops[1], ops[2]]);
            ops[1] = lo;
            ops[2] = hi;
        },
    },
    Guard {
        name: "smoothstep_edges_reversed",
        doc: "the edges become `min(e0, e1)` and `max(e0, e1) + 1`",
        apply: |e, tys, _, ops| {
            let t = tys[0];
            let lo = e.op(Opcode::Min, t, &[ops[0], ops[1]]);
            let hi = e.op(Opcode::Max, t, &[ops[0], ops[1]]);
            let one = e.splat(t, 1.0f32.to_bits() as u64);
            ops[0] = lo;
            ops[1] = e.op(Opcode::Add, t, &[hi, one]);
        },
    },
];

/// The guard of a spec `undefined` name.
pub fn lookup(name: &str) -> Option<&'static Guard> {
    GUARDS.iter().find(|g| g.name == name)
}

/// Every guard's name (for the test that each is used by the spec).
pub fn names() -> impl Iterator<Item = &'static str> {
    GUARDS.iter().map(|g| g.name)
}
