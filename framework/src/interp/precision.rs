//! Vulkan's precision as a shadow of the interpreter's values
//! (docs/vulkan.md, "Precision"). With `Options::precision` set, every float
//! scalar the device may legally compute differently carries, beside its
//! exact bits, the largest absolute deviation Vulkan allows (`Val::E`); an
//! exact value stays a plain `Val::S`. Bounds are computed while
//! interpreting, from the concrete values of the run being compared, and
//! travel with the value through registers, memory, calls and buffers.
//!
//! Per operation (Vulkan spec, "Precision and Operation of SPIR-V
//! Instructions"; single-precision column for f32, half-precision column for
//! f16, and for f64 the single-precision bound, since "the precision of
//! double-precision instructions is at least that of single precision"):
//! `+ - *`, conversions, `min`/`max`/`clamp`, rounding functions and moves
//! are exact (correctly rounded: the device rounds the same real number);
//! `x / y` 2.5 ULP for `|y|` in range; `inversesqrt` 2 ULP; `exp`/`exp2`
//! `3 + 2|x|` ULP; `log`/`log2` 3 ULP outside `[0.5, 2]`, else absolute
//! 2^-21; `sin`/`cos` absolute 2^-11 inside `[-pi, pi]`; `atan`/`atan2`
//! 4096 ULP; the others are "inherited" and are evaluated here by their
//! defining formula (`sqrt = 1 / inversesqrt`, `pow = exp2(y * log2 x)`,
//! `tan = sin / cos`, `mix`, `smoothstep`, `dot`, `length`, ...). What the
//! backend emits decides the rest: f16/f32 `fma` is exact (computed through
//! f64), f64 `fma` is GLSL `Fma` (fused or not: half an ULP of the product);
//! `exp10` is `pow(10, x)`, `log10` is `log2(x) * log10(2)`; reductions are
//! chains in lane order, and so are warp folds (a loop over the lanes),
//! except with `--fast-math` (`any_fold_order`: the group instruction, any
//! order, bounded as `dot`); `dot` and matrix products sum in an order the
//! device chooses; `determinant` and `inverse` (left undefined by the spec)
//! are bounded as cofactor expansions in any order.
//!
//! Each operation is modelled as an [`A`]: the exact real result `v` of the
//! operation on the interpreter's inputs and the device's largest deviation
//! `e` from it, composed from the inputs' bounds (interval reasoning:
//! monotone functions at the interval's ends, `sin`/`cos` and `atan`
//! Lipschitz 1). The bound of the result against the interpreter's own bits
//! `r` is `e + |r - v|` (plus a few f64 ULPs for evaluating `v` in f64).
//! A bound of `f64::INFINITY` means "any value" (outside a documented range,
//! a possible division by zero, an integer or comparison result that may
//! differ, an operation not modelled here whose inputs are inexact).
//! Branches, switches and indices on such values are refused: the device
//! may take another path, and no per-element bound says where.

use serde_json::Value as Json;
use xir_spec::Opcode;

use crate::ir::{Function, InstCore, Module, Type};

use super::arith::{to_f64, R};
use super::io::{elements, json_float, same_value, Mismatch, Outputs};
use super::value::{scalar_kind, Sk, Val};

/// What the precision shadow assumes about the device run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Precision {
    /// The backend may fuse a multiply into the add that uses it
    /// (`--fast-math`): every float product may then stay unrounded.
    pub contraction: bool,
    /// The module declares no float controls (`--fast-math`: no
    /// `RoundingModeRTE`, no `SignedZeroInfNanPreserve`). Vulkan then leaves
    /// the rounding mode open, so a correctly rounded result is one ULP
    /// away at most (either neighbour), and the device may ignore the sign
    /// of zero and assume no infinity or NaN is ever an operand or result.
    pub any_rounding: bool,
    /// A float warp reduction or scan may combine the lanes in any order
    /// (`--fast-math`: the backend emits the group instruction, whose order
    /// is the device's, instead of a loop over the lanes in lane order).
    pub any_fold_order: bool,
}

impl Precision {
    /// The model of a build with or without `--fast-math`.
    pub fn for_fast_math(fast_math: bool) -> Precision {
        Precision { contraction: fast_math, any_rounding: fast_math, any_fold_order: fast_math }
    }
}

/// A device result: the exact value `v` and the device's deviation `e`.
#[derive(Copy, Clone, Debug, PartialEq)]
struct A {
    v: f64,
    e: f64,
}

const ANY: f64 = f64::INFINITY;

impl A {
    fn new(v: f64, e: f64) -> A {
        A { v, e: if e.is_nan() { ANY } else { e } }
    }
    fn exact(v: f64) -> A {
        A { v, e: 0.0 }
    }
    fn lo(self) -> f64 {
        self.v - self.e
    }
    fn hi(self) -> f64 {
        self.v + self.e
    }
    /// The largest magnitude the device's value may have.
    fn mag(self) -> f64 {
        self.v.abs() + self.e
    }
}

/// The ULP of `x` in format `sk` (the spacing of the binade holding `|x|`;
/// the smallest normal binade's below it).
/// The smallest normal magnitude of format `sk` (f64's for the others).
fn min_normal(sk: Sk) -> f64 {
    match sk {
        Sk::F16 | Sk::E5M2 => 2f64.powi(-14),
        Sk::F32 => 2f64.powi(-126),
        Sk::E4M3 => 2f64.powi(-6),
        _ => f64::MIN_POSITIVE,
    }
}

pub(crate) fn ulp_of(sk: Sk, x: f64) -> f64 {
    let (mant, emin) = match sk {
        Sk::F16 => (10, -14),
        Sk::F32 => (23, -126),
        Sk::E4M3 => (3, -6),
        Sk::E5M2 => (2, -14),
        _ => (52, -1022),
    };
    let x = x.abs();
    if !x.is_finite() {
        return ANY;
    }
    let exp = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    2f64.powi(exp.max(emin) - mant)
}

/// The device rules of one float format.
#[derive(Copy, Clone)]
struct Dev {
    sk: Sk,
    /// [`Precision::any_rounding`].
    any_rounding: bool,
}

impl Dev {
    /// The rules of format `sk` under the device model `p`.
    fn new(sk: Sk, p: &Precision) -> Dev {
        Dev { sk, any_rounding: p.any_rounding }
    }
    fn half(self) -> bool {
        self.sk == Sk::F16
    }
    /// The ULP the spec's bounds count in: the format's, f32's for f64.
    fn unit(self, x: f64) -> f64 {
        ulp_of(if self.sk == Sk::F64 { Sk::F32 } else { self.sk }, x)
    }
    /// A correctly rounded result: half an ULP of the device's value, or a
    /// whole one when the rounding mode is open (and then an exact zero
    /// still carries the smallest ULP, so either sign of zero is accepted).
    /// Without float controls nothing asks to preserve denormals either
    /// (`DenormPreserve`), and Vulkan lets the device flush a denormal
    /// result to zero: a result that may be denormal may be zero.
    fn round(self, v: f64, prop: f64) -> A {
        let e = prop + self.rounding_ulps() * ulp_of(self.sk, v.abs() + prop);
        if self.any_rounding && v.abs() - e < min_normal(self.sk) {
            return A::new(v, e.max(v.abs()));
        }
        A::new(v, e)
    }
    /// How far one rounding may move a result, in ULPs.
    fn rounding_ulps(self) -> f64 {
        if self.any_rounding {
            1.0
        } else {
            0.5
        }
    }
    fn add(self, a: A, b: A) -> A {
        self.round(a.v + b.v, a.e + b.e)
    }
    fn sub(self, a: A, b: A) -> A {
        self.round(a.v - b.v, a.e + b.e)
    }
    fn mul(self, a: A, b: A) -> A {
        self.round(a.v * b.v, a.v.abs() * b.e + b.v.abs() * a.e + a.e * b.e)
    }
    /// 2.5 ULP for `|y|` in `[2^-126, 2^126]` (f16: `[2^-14, 2^14]`).
    fn div(self, a: A, b: A) -> A {
        let (lo, hi) = if self.half() { (2f64.powi(-14), 2f64.powi(14)) } else { (2f64.powi(-126), 2f64.powi(126)) };
        let q = a.v / b.v;
        if b.e >= b.v.abs() || b.v.abs() - b.e < lo || b.mag() > hi {
            return A::new(q, ANY);
        }
        let prop = (a.e + q.abs() * b.e) / (b.v.abs() - b.e);
        A::new(q, prop + 2.5 * self.unit(q.abs() + prop))
    }
    /// 2 ULP.
    fn rsqrt(self, a: A) -> A {
        let v = 1.0 / a.v.sqrt();
        if a.lo() <= 0.0 {
            return A::new(v, ANY);
        }
        let prop = 1.0 / a.lo().sqrt() - v;
        A::new(v, prop + 2.0 * self.unit(v + prop))
    }
    /// Inherited from `1.0 / inversesqrt(x)`.
    fn sqrt(self, a: A) -> A {
        if a == A::exact(0.0) {
            return a;
        }
        let d = self.div(A::exact(1.0), self.rsqrt(a));
        A::new(a.v.sqrt(), d.e + (d.v - a.v.sqrt()).abs())
    }
    /// `3 + 2|x|` ULP (f16: `1 + 2|x|`) of `base^x`.
    fn exp_base(self, a: A, f: fn(f64) -> f64) -> A {
        let v = f(a.v);
        let prop = (f(a.hi()) - v).max(v - f(a.lo()));
        let ulps = if self.half() { 1.0 } else { 3.0 } + 2.0 * a.mag();
        A::new(v, prop + ulps * self.unit(v + prop))
    }
    /// 3 ULP outside `[0.5, 2]`, absolute 2^-21 (f16: 2^-7) inside.
    fn log_base(self, a: A, f: fn(f64) -> f64) -> A {
        let v = f(a.v);
        if a.lo() <= 0.0 {
            return A::new(v, ANY);
        }
        let prop = (f(a.hi()) - v).max(v - f(a.lo()));
        let inside = if self.half() { 2f64.powi(-7) } else { 2f64.powi(-21) };
        let outside = 3.0 * self.unit(v.abs() + prop);
        let own = match (a.lo() >= 0.5 && a.hi() <= 2.0, a.hi() < 0.5 || a.lo() > 2.0) {
            (true, _) => inside,
            (_, true) => outside,
            _ => inside.max(outside),
        };
        A::new(v, prop + own)
    }
    /// Absolute 2^-11 (f16: 2^-7) inside `[-pi, pi]`; undefined outside.
    fn trig(self, a: A, f: fn(f64) -> f64) -> A {
        let v = f(a.v);
        if a.mag() > std::f64::consts::PI {
            return A::new(v, ANY);
        }
        A::new(v, a.e.min(2.0) + if self.half() { 2f64.powi(-7) } else { 2f64.powi(-11) })
    }
    /// 4096 ULP (f16: 5 ULP).
    fn atan_own(self, v: f64, prop: f64) -> A {
        A::new(v, prop + if self.half() { 5.0 } else { 4096.0 } * self.unit(v.abs() + prop))
    }
    fn atan(self, a: A) -> A {
        self.atan_own(a.v.atan(), a.e)
    }
    fn atan2(self, y: A, x: A) -> A {
        let v = y.v.atan2(x.v);
        let (rho, e) = (y.v.hypot(x.v), x.e + y.e);
        let prop = if e == 0.0 {
            0.0
        } else if e < rho {
            (e / (rho - e)).min(2.0 * std::f64::consts::PI)
        } else {
            2.0 * std::f64::consts::PI
        };
        self.atan_own(v, prop)
    }
    fn exp(self, a: A) -> A {
        self.exp_base(a, f64::exp)
    }
    fn log(self, a: A) -> A {
        self.log_base(a, f64::ln)
    }
    /// Inherited from `exp2(y * log2(x))`.
    fn pow(self, x: A, y: A) -> A {
        let t = self.mul(y, self.log_base(x, f64::log2));
        let r = self.exp_base(t, f64::exp2);
        A::new(x.v.powf(y.v), r.e + (r.v - x.v.powf(y.v)).abs())
    }
    /// A correctly rounded rounding function on an inexact input: the
    /// spread of `f` over the input's interval.
    fn rounding(self, a: A, f: fn(f64) -> f64) -> A {
        let v = f(a.v);
        A::new(v, (f(a.hi()) - v).max(v - f(a.lo())))
    }
    /// Exact, but with the rounding mode open the sign of a zero is not
    /// kept either (the optimizer may rewrite `-(a - b)` as `b - a`).
    fn neg(self, a: A) -> A {
        if self.any_rounding && a.v == 0.0 {
            return A::new(-a.v, a.e.max(ulp_of(self.sk, 0.0)));
        }
        A::new(-a.v, a.e)
    }
    fn c(self, v: f64) -> A {
        A::exact(v)
    }
    /// `Σ a_i * b_i` summed in an order the device chooses.
    fn dot(self, a: &[A], b: &[A]) -> A {
        let p: Vec<A> = a.iter().zip(b).map(|(&x, &y)| self.mul(x, y)).collect();
        if p.len() == 1 {
            return p[0];
        }
        let v: f64 = p.iter().map(|q| q.v).sum();
        let mag: f64 = p.iter().map(|q| q.mag()).sum();
        let e: f64 = p.iter().map(|q| q.e).sum();
        A::new(v, e + (p.len() - 1) as f64 * self.rounding_ulps() * ulp_of(self.sk, mag))
    }
    /// The determinant as a sum of products in any grouping: each of the
    /// at most `n! * n` roundings is at most half an ULP of the permanent of
    /// `|a|`. Inexact entries: any value.
    fn det(self, a: &[Vec<A>]) -> A {
        let n = a.len();
        let vals: Vec<Vec<f64>> = a.iter().map(|c| c.iter().map(|x| x.v).collect()).collect();
        let v = det_f64(&vals);
        if a.iter().flatten().any(|x| x.e > 0.0) {
            return A::new(v, ANY);
        }
        let abs: Vec<Vec<f64>> = vals.iter().map(|c| c.iter().map(|x| x.abs()).collect()).collect();
        let perm = permanent(&abs);
        let ops = (1..=n).product::<usize>() * n;
        A::new(v, ops as f64 * self.rounding_ulps() * ulp_of(self.sk, perm))
    }
}

/// Determinant by cofactor expansion along the first column (f64).
fn det_f64(a: &[Vec<f64>]) -> f64 {
    let n = a.len();
    if n == 1 {
        return a[0][0];
    }
    (0..n).map(|r| if r % 2 == 0 { 1.0 } else { -1.0 } * a[0][r] * det_f64(&minor(a, 0, r))).sum()
}

fn permanent(a: &[Vec<f64>]) -> f64 {
    if a.len() == 1 {
        return a[0][0];
    }
    (0..a.len()).map(|r| a[0][r] * permanent(&minor(a, 0, r))).sum()
}

/// `a` (columns) without column `c` and row `r`.
fn minor<T: Clone>(a: &[Vec<T>], c: usize, r: usize) -> Vec<Vec<T>> {
    a.iter()
        .enumerate()
        .filter(|(k, _)| *k != c)
        .map(|(_, col)| col.iter().enumerate().filter(|(k, _)| *k != r).map(|(_, x)| x.clone()).collect())
        .collect()
}

/// Whether some scalar leaf of `v` carries a bound.
pub(crate) fn has_bound(v: &Val) -> bool {
    match v {
        Val::E(..) => true,
        Val::A(m) => m.iter().any(has_bound),
        _ => false,
    }
}

/// A scalar's bits and bound (0 when exact).
fn leaf(v: &Val) -> R<(u64, f64)> {
    match v {
        Val::E(b, e) => Ok((*b, *e)),
        v => Ok((v.bits()?, 0.0)),
    }
}

fn bounded(bits: u64, e: f64) -> Val {
    if e == 0.0 {
        Val::S(bits)
    } else {
        Val::E(bits, e)
    }
}

/// Every scalar leaf of `v` may be any value.
fn widen(v: &Val) -> Val {
    match v {
        Val::A(m) => Val::agg(m.iter().map(widen).collect()),
        Val::S(b) | Val::E(b, _) => Val::E(*b, ANY),
        v => v.clone(),
    }
}

/// The scalar leaves of a scalar, vector or matrix, in member order.
fn leaves(v: &Val) -> R<Vec<(u64, f64)>> {
    match v {
        Val::A(m) => Ok(m.iter().map(leaves).collect::<R<Vec<_>>>()?.concat()),
        v => Ok(vec![leaf(v)?]),
    }
}

/// `v` with its scalar leaves' bounds replaced, in member order.
fn rebuild(v: &Val, bounds: &mut impl Iterator<Item = f64>) -> R<Val> {
    match v {
        Val::A(m) => Ok(Val::agg(m.iter().map(|x| rebuild(x, bounds)).collect::<R<_>>()?)),
        v => Ok(bounded(v.bits()?, bounds.next().ok_or("result shape differs from its bounds")?)),
    }
}

/// Lane-wise: the operands and the result share one shape.
fn zip(ops: &[&Val], r: &Val, g: &mut impl FnMut(&[(u64, f64)], u64) -> f64) -> R<Val> {
    match r {
        Val::A(rm) => {
            let mut out = Vec::with_capacity(rm.len());
            for (k, x) in rm.iter().enumerate() {
                let sub: Vec<&Val> = ops
                    .iter()
                    .map(|o| match o {
                        Val::A(m) => m.get(k).ok_or_else(|| "operand shapes differ".to_string()),
                        o => Ok(*o),
                    })
                    .collect::<R<_>>()?;
                out.push(zip(&sub, x, g)?);
            }
            Ok(Val::agg(out))
        }
        r => {
            let ins: Vec<(u64, f64)> = ops.iter().map(|o| leaf(o)).collect::<R<_>>()?;
            let (rb, _) = leaf(r)?;
            Ok(bounded(rb, g(&ins, rb)))
        }
    }
}

/// The value of an integer's bits (exact in f64 up to 2^53, which is all a
/// bound needs: the rounding to the target format is far coarser).
fn int_value(bits: u64, width: u32, signed: bool) -> f64 {
    let shift = 64 - width.min(64);
    if signed {
        (((bits << shift) as i64) >> shift) as f64
    } else {
        ((bits << shift) >> shift) as f64
    }
}

fn is_float(sk: Option<Sk>) -> bool {
    matches!(sk, Some(Sk::F16 | Sk::F32 | Sk::F64 | Sk::E4M3 | Sk::E5M2))
}

/// Float operations the device may compute differently even from exact
/// inputs.
fn inexact_op(op: Opcode, sk: Option<Sk>, p: &Precision) -> bool {
    use Opcode::*;
    if !matches!(sk, Some(Sk::F16 | Sk::F32 | Sk::F64)) {
        return false;
    }
    if p.any_rounding {
        // Every rounding may go either way, every zero may change sign and
        // every infinity or NaN is undefined: only moves stay exact.
        return !matches!(op, Extract | Insert | Aggregate | Shuffle | Select | CastBitwise);
    }
    match op {
        Div | MatrixCompDiv | Mod | Sqrt | Rsqrt | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh
        | Asinh | Acosh | Atanh | Exp | Exp2 | Exp10 | Log | Log2 | Log10 | Pow | Atan2 | Lerp | Smoothstep | Dot
        | Length | LengthSquared | Normalize | Cross | Reflect | MatrixLinalgMul | OuterProduct | MatrixDeterminant
        | MatrixInverse => true,
        Fma => sk == Some(Sk::F64),
        Mul | MatrixCompMul => p.contraction,
        _ => false,
    }
}

/// The device model of one lane of a lane-wise float operation; `None`
/// when the operation is not modelled.
fn lane_model(op: Opcode, d: Dev, a: &[A], p: &Precision) -> Option<A> {
    use Opcode::*;
    let x = *a.first()?;
    let arg = |k: usize| a.get(k).copied();
    Some(match op {
        Neg | MatrixCompNeg => d.neg(x),
        Abs => A::new(x.v.abs(), x.e),
        Add | MatrixCompAdd => d.add(x, arg(1)?),
        Sub | MatrixCompSub => d.sub(x, arg(1)?),
        Mul | MatrixCompMul if p.contraction => {
            let y = arg(1)?;
            // Possibly fused into its add: unrounded, or rounded.
            d.round(x.v * y.v, x.v.abs() * y.e + y.v.abs() * x.e + x.e * y.e)
        }
        Mul | MatrixCompMul => d.mul(x, arg(1)?),
        Div | MatrixCompDiv => d.div(x, arg(1)?),
        // OpFRem: inherited from x - y * trunc(x / y).
        Mod => {
            let y = arg(1)?;
            let q = d.div(x, y);
            let t = A::new(q.v.trunc(), (q.hi().trunc() - q.v.trunc()).max(q.v.trunc() - q.lo().trunc()));
            let r = d.sub(x, d.mul(y, t));
            let exact = x.v % y.v;
            A::new(exact, r.e + (r.v - exact).abs())
        }
        Min => {
            let y = arg(1)?;
            A::new(x.v.min(y.v), x.e.max(y.e))
        }
        Max => {
            let y = arg(1)?;
            A::new(x.v.max(y.v), x.e.max(y.e))
        }
        Clamp => {
            let (lo, hi) = (arg(1)?, arg(2)?);
            A::new(x.v.max(lo.v).min(hi.v), x.e.max(lo.e).max(hi.e))
        }
        Saturate => A::new(x.v.clamp(0.0, 1.0), x.e),
        Copysign => {
            let y = arg(1)?;
            let flips = y.e > 0.0 && y.v.abs() <= y.e;
            A::new(x.v.abs().copysign(y.v), if flips { 2.0 * x.v.abs() + x.e } else { x.e })
        }
        Step => {
            let edge = x;
            let y = arg(1)?;
            let uncertain = (y.v - edge.v).abs() <= y.e + edge.e;
            A::new(if y.v < edge.v { 0.0 } else { 1.0 }, if uncertain { 1.0 } else { 0.0 })
        }
        Floor => d.rounding(x, f64::floor),
        Ceil => d.rounding(x, f64::ceil),
        Trunc => d.rounding(x, f64::trunc),
        Round => d.rounding(x, f64::round),
        Rint => d.rounding(x, f64::round_ties_even),
        Fract => {
            let fl = d.rounding(x, f64::floor);
            A::new(x.v - x.v.floor(), x.e + fl.e)
        }
        Sqrt => d.sqrt(x),
        Rsqrt => d.rsqrt(x),
        Exp => d.exp(x),
        Exp2 => d.exp_base(x, f64::exp2),
        Log => d.log(x),
        Log2 => d.log_base(x, f64::log2),
        // Emitted as pow(10, x).
        Exp10 => d.pow(d.c(10.0), x),
        // Emitted as log2(x) * log10(2), the constant rounded to the format.
        Log10 => {
            let k = super::arith::from_f64(d.sk, std::f64::consts::LOG10_2);
            let k = to_f64(d.sk, k)?;
            let l = d.mul(
                d.log_base(x, f64::log2),
                A::new(std::f64::consts::LOG10_2, (k - std::f64::consts::LOG10_2).abs()),
            );
            A::new(x.v.log10(), l.e + (l.v - x.v.log10()).abs())
        }
        Pow => d.pow(x, arg(1)?),
        Sin => d.trig(x, f64::sin),
        Cos => d.trig(x, f64::cos),
        // Inherited from sin / cos.
        Tan => inherit(x.v.tan(), d.div(d.trig(x, f64::sin), d.trig(x, f64::cos))),
        // Inherited from atan2(x, sqrt(1 - x * x)) and atan2(sqrt(1 - x * x), x).
        Asin => inherit(x.v.asin(), d.atan2(x, d.sqrt(d.sub(d.c(1.0), d.mul(x, x))))),
        Acos => inherit(x.v.acos(), d.atan2(d.sqrt(d.sub(d.c(1.0), d.mul(x, x))), x)),
        Atan => d.atan(x),
        Atan2 => d.atan2(x, arg(1)?),
        // Inherited from (exp(x) -+ exp(-x)) * 0.5, sinh / cosh.
        Sinh => inherit(x.v.sinh(), d.mul(d.sub(d.exp(x), d.exp(d.neg(x))), d.c(0.5))),
        Cosh => inherit(x.v.cosh(), d.mul(d.add(d.exp(x), d.exp(d.neg(x))), d.c(0.5))),
        Tanh => {
            let s = d.mul(d.sub(d.exp(x), d.exp(d.neg(x))), d.c(0.5));
            let c = d.mul(d.add(d.exp(x), d.exp(d.neg(x))), d.c(0.5));
            inherit(x.v.tanh(), d.div(s, c))
        }
        // Inherited from log(x + sqrt(x * x +- 1)), log((1 + x) / (1 - x)) * 0.5.
        Asinh => inherit(x.v.asinh(), d.log(d.add(x, d.sqrt(d.add(d.mul(x, x), d.c(1.0)))))),
        Acosh => inherit(x.v.acosh(), d.log(d.add(x, d.sqrt(d.sub(d.mul(x, x), d.c(1.0)))))),
        Atanh => inherit(x.v.atanh(), d.mul(d.log(d.div(d.add(d.c(1.0), x), d.sub(d.c(1.0), x))), d.c(0.5))),
        // Inherited from x * (1 - a) + y * a.
        Lerp => {
            let (y, t) = (arg(1)?, arg(2)?);
            let exact = x.v + t.v * (y.v - x.v);
            inherit(exact, d.add(d.mul(x, d.sub(d.c(1.0), t)), d.mul(y, t)))
        }
        // Inherited from t * t * (3 - 2 * t), t = clamp((x - e0) / (e1 - e0), 0, 1).
        Smoothstep => {
            let (e0, e1, y) = (x, arg(1)?, arg(2)?);
            let q = d.div(d.sub(y, e0), d.sub(e1, e0));
            let t = A::new(q.v.clamp(0.0, 1.0), q.e);
            let tv = ((y.v - e0.v) / (e1.v - e0.v)).clamp(0.0, 1.0);
            inherit(tv * tv * (3.0 - 2.0 * tv), d.mul(d.mul(t, t), d.sub(d.c(3.0), d.mul(d.c(2.0), t))))
        }
        Fma => {
            let (y, z) = (arg(1)?, arg(2)?);
            let exact = x.v.mul_add(y.v, z.v);
            if d.sk == Sk::F64 {
                // GLSL Fma: fused, or OpFMul followed by OpFAdd.
                inherit(exact, d.add(d.mul(x, y), z))
            } else {
                // Computed exactly through f64 (backend `exact_fma`).
                d.round(exact, x.v.abs() * y.e + y.v.abs() * x.e + x.e * y.e + z.e)
            }
        }
        _ => return None,
    })
}

/// A formula's device deviation measured against the exact value `v`.
fn inherit(v: f64, formula: A) -> A {
    A::new(v, formula.e + (formula.v - v).abs())
}

/// The bound of a result with bits `r` modelled by `m`.
fn finish(sk: Sk, m: A, r: u64) -> f64 {
    if m.e == 0.0 {
        return 0.0;
    }
    let r = to_f64(sk, r).unwrap_or(f64::NAN);
    if !m.v.is_finite() || !r.is_finite() || !m.e.is_finite() {
        return ANY;
    }
    m.e + (r - m.v).abs() + 4.0 * ulp_of(Sk::F64, m.v)
}

fn vals(sk: Sk, ls: &[(u64, f64)]) -> R<Vec<A>> {
    ls.iter().map(|&(b, e)| Ok(A::new(to_f64(sk, b).ok_or("not a float")?, e))).collect()
}

/// Columns of a square matrix value as device models.
fn mat(sk: Sk, v: &Val) -> R<Vec<Vec<A>>> {
    v.members()?.iter().map(|c| vals(sk, &leaves(c)?)).collect()
}

fn row(m: &[Vec<A>], i: usize) -> Vec<A> {
    m.iter().map(|c| c[i]).collect()
}

/// The results of a float warp reduction or exclusive scan `op` (sum,
/// product, min, max) over the active lanes' values `xs` in lane order, as
/// the interpreter folded them in lane order (`results`, one per lane), with
/// the bounds the device's run allows. The device folds in lane order too
/// (a loop over the lanes), so exact inputs give exact results, unless
/// `p.any_fold_order`: then a sum is bounded as `dot` is (one rounding per
/// term, in any order) and a product gets the same slack; `min` / `max` do
/// not depend on the order. Inexact inputs carry their bounds through.
pub(crate) fn warp_fold(op: Opcode, sk: Sk, xs: &[&Val], results: Vec<Val>, p: &Precision) -> R<Vec<Val>> {
    use Opcode::*;
    let scan = matches!(op, WarpPrefixSum | WarpPrefixProduct);
    if !p.any_fold_order && !xs.iter().any(|x| has_bound(x)) {
        return Ok(results);
    }
    let dev = Dev::new(sk, p);
    results
        .into_iter()
        .enumerate()
        .map(|(lane, r)| {
            let terms = if scan { &xs[..lane] } else { xs };
            if terms.is_empty() {
                return Ok(r); // the scan's identity
            }
            zip(terms, &r, &mut |ins, rb| {
                let Ok(a) = vals(sk, ins) else { return ANY };
                let n = a.len() as f64;
                let slack =
                    |m: f64| if p.any_fold_order { (n - 1.0) * dev.rounding_ulps() * ulp_of(sk, m) } else { 0.0 };
                let model = match op {
                    // Any order: as `dot`; lane order: each add as the device rounds it.
                    WarpActiveSum | WarpPrefixSum if p.any_fold_order => {
                        let mag: f64 = a.iter().map(|x| x.mag()).sum();
                        let e: f64 = a.iter().map(|x| x.e).sum();
                        A::new(a.iter().map(|x| x.v).sum(), e + slack(mag))
                    }
                    WarpActiveSum | WarpPrefixSum => a[1..].iter().fold(a[0], |acc, &x| dev.add(acc, x)),
                    WarpActiveProduct | WarpPrefixProduct => {
                        let acc = a[1..].iter().fold(a[0], |acc, &x| dev.mul(acc, x));
                        A::new(acc.v, acc.e + slack(acc.mag()))
                    }
                    WarpActiveMin | WarpActiveMax => {
                        let pick = |x: f64, y: f64| if op == WarpActiveMin { x.min(y) } else { x.max(y) };
                        let v = a.iter().map(|x| x.v).reduce(pick).unwrap_or(f64::NAN);
                        A::new(v, a.iter().map(|x| x.e).fold(0.0, f64::max))
                    }
                    _ => return ANY,
                };
                finish(sk, model, rb)
            })
        })
        .collect()
}

/// The result of pure instruction `d`, given its operands `ops` and the
/// interpreter's exact result `result`, with the bounds Vulkan allows.
pub(crate) fn annotate(
    m: &Module,
    f: &Function,
    d: &InstCore,
    sk0: Option<Sk>,
    ops: &[Val],
    result: Val,
    p: &Precision,
) -> R<Val> {
    use Opcode::*;
    let op = d.opcode;
    let inexact_in = ops.iter().any(has_bound);
    let types = &m.types;
    let rsk = scalar_kind(types, d.ty);
    // An integer converted to a float rounds in the open rounding mode.
    let int_to_float = p.any_rounding && op == CastStatic && !is_float(sk0) && is_float(rsk);
    if !inexact_in && !inexact_op(op, sk0, p) && !int_to_float {
        return Ok(result);
    }
    let refs: Vec<&Val> = ops.iter().collect();
    let float_in = is_float(sk0);
    match op {
        // Moves: the bounds travel inside the values.
        Extract | Insert | Aggregate | Shuffle => Ok(result),
        Select => select(rsk, ops, result),
        Lt | Gt | Le | Ge | Eq | Ne if float_in => {
            let sk = sk0.ok_or("no scalar kind")?;
            zip(&refs, &result, &mut |ins, _| {
                let (Some(a), Some(b)) = (to_f64(sk, ins[0].0), to_f64(sk, ins[1].0)) else { return ANY };
                let e = ins[0].1 + ins[1].1;
                let undefined = p.any_rounding && !(a.is_finite() && b.is_finite());
                if undefined || a.is_nan() || b.is_nan() || (a - b).abs() <= e {
                    ANY
                } else {
                    0.0
                }
            })
        }
        // Integer to float in the open rounding mode: either neighbour.
        CastStatic if int_to_float => {
            let (Some(Sk::Int { bits, signed }), Some(to)) = (sk0, rsk) else { return Ok(result) };
            zip(&refs, &result, &mut |ins, r| {
                let x = int_value(ins[0].0, bits, signed);
                finish(to, Dev::new(to, p).round(x, 0.0), r)
            })
        }
        CastStatic if float_in => {
            let (from, to) = (sk0.ok_or("no scalar kind")?, rsk.ok_or("no scalar kind")?);
            zip(&refs, &result, &mut |ins, r| {
                let (Some(x), e) = (to_f64(from, ins[0].0), ins[0].1) else { return ANY };
                if is_float(Some(to)) {
                    let widening = ulp_of(to, 1.0) <= ulp_of(from, 1.0);
                    let m = if widening { A::new(x, e) } else { Dev::new(to, p).round(x, e) };
                    finish(to, m, r)
                } else if (x - e).trunc() == (x + e).trunc() && x.is_finite() {
                    0.0
                } else {
                    ANY
                }
            })
        }
        _ if float_in && lane_model(op, Dev::new(sk0.expect("float"), p), &[A::exact(1.0); 3], p).is_some() => {
            let sk = sk0.ok_or("no scalar kind")?;
            let out = rsk.ok_or("no scalar kind")?;
            zip(&refs, &result, &mut |ins, r| {
                let Ok(a) = vals(sk, ins) else { return ANY };
                match lane_model(op, Dev::new(sk, p), &a, p) {
                    Some(model) => finish(out, model, r),
                    None => ANY,
                }
            })
        }
        Dot | LengthSquared | Length | Normalize | Cross | Reflect | Faceforward | ReduceSum | ReduceProduct
        | ReduceMin | ReduceMax
            if float_in =>
        {
            let sk = sk0.ok_or("no scalar kind")?;
            let dv = Dev::new(sk, p);
            let a = vals(sk, &leaves(&ops[0])?)?;
            let b = match ops.get(1) {
                Some(v) => vals(sk, &leaves(v)?)?,
                None => a.clone(),
            };
            let models: Vec<A> = match op {
                Dot | LengthSquared => vec![dv.dot(&a, &b)],
                Length => vec![dv.sqrt(dv.dot(&a, &a))],
                Normalize => {
                    let len = dv.sqrt(dv.dot(&a, &a));
                    a.iter().map(|&x| dv.div(x, len)).collect()
                }
                Cross if a.len() == 3 && b.len() == 3 => {
                    let c = |i: usize, j: usize| dv.sub(dv.mul(a[i], b[j]), dv.mul(a[j], b[i]));
                    vec![c(1, 2), c(2, 0), c(0, 1)]
                }
                // Inherited from i - 2 * dot(n, i) * n.
                Reflect => {
                    let two_d = dv.mul(dv.c(2.0), dv.dot(&b, &a));
                    a.iter().zip(&b).map(|(&x, &y)| dv.sub(x, dv.mul(two_d, y))).collect()
                }
                // dot(nref, i) < 0 ? n : -n.
                Faceforward => {
                    let nref = vals(sk, &leaves(ops.get(2).ok_or("faceforward needs 3 operands")?)?)?;
                    let dn = dv.dot(&nref, &b);
                    let flips = dn.v.abs() <= dn.e;
                    a.iter().map(|&x| A::new(x.v, if flips { 2.0 * x.v.abs() + x.e } else { x.e })).collect()
                }
                // Chains in lane order (the backend emits them so).
                ReduceSum | ReduceProduct => {
                    let mut acc = a[0];
                    for &x in &a[1..] {
                        acc = if op == ReduceSum { dv.add(acc, x) } else { dv.mul(acc, x) };
                    }
                    vec![acc]
                }
                _ => vec![A::new(0.0, a.iter().map(|x| x.e).fold(0.0, f64::max))],
            };
            if matches!(op, ReduceMin | ReduceMax | Faceforward) {
                return rebuild(&result, &mut models.iter().map(|m| m.e));
            }
            let rl = leaves(&result)?;
            let out = rsk.ok_or("no scalar kind")?;
            rebuild(&result, &mut models.iter().zip(&rl).map(|(m, (r, _))| finish(out, *m, *r)))
        }
        MatrixTranspose => {
            let cols: Vec<Vec<(u64, f64)>> = ops[0].members()?.iter().map(leaves).collect::<R<_>>()?;
            let n = cols.len();
            let t: Vec<f64> = (0..n).flat_map(|c| (0..n).map(move |r| (c, r))).map(|(c, r)| cols[r][c].1).collect();
            rebuild(&result, &mut t.into_iter())
        }
        MatrixLinalgMul | OuterProduct | MatrixDeterminant | MatrixInverse if float_in => {
            let sk = sk0.ok_or("no scalar kind")?;
            let dv = Dev::new(sk, p);
            let is_mat = |k: usize| matches!(types.get(f.value_type(m, d.operands[k])), Type::Matrix { .. });
            let models: Vec<A> = match op {
                MatrixDeterminant => vec![dv.det(&mat(sk, &ops[0])?)],
                MatrixInverse => {
                    let a = mat(sk, &ops[0])?;
                    let n = a.len();
                    let inv_det = dv.div(dv.c(1.0), dv.det(&a));
                    let mut out = Vec::new();
                    for c in 0..n {
                        for r in 0..n {
                            // inverse[c][r] = cofactor(r, c) / det.
                            let sign = if (r + c) % 2 == 0 { 1.0 } else { -1.0 };
                            let cof = if n == 1 { dv.c(1.0) } else { dv.det(&minor(&a, r, c)) };
                            out.push(dv.mul(A::new(sign * cof.v, cof.e), inv_det));
                        }
                    }
                    out
                }
                _ => {
                    let (am, bm) = (is_mat(0), is_mat(1));
                    let a = if am { mat(sk, &ops[0])? } else { vec![vals(sk, &leaves(&ops[0])?)?] };
                    let b = if bm { mat(sk, &ops[1])? } else { vec![vals(sk, &leaves(&ops[1])?)?] };
                    match (op, am, bm) {
                        // a * transpose(b): out[j][i] = row_i(a) . row_j(b).
                        (OuterProduct, true, _) => {
                            let n = a[0].len();
                            (0..n)
                                .flat_map(|j| (0..n).map(move |i| (i, j)))
                                .map(|(i, j)| dv.dot(&row(&a, i), &row(&b, j)))
                                .collect()
                        }
                        (OuterProduct, false, _) => {
                            b[0].iter().flat_map(|&y| a[0].iter().map(move |&x| dv.mul(x, y))).collect()
                        }
                        (_, true, true) => {
                            let n = a[0].len();
                            b.iter()
                                .flat_map(|col| (0..n).map(|i| dv.dot(&row(&a, i), col)).collect::<Vec<_>>())
                                .collect()
                        }
                        (_, true, false) => (0..a[0].len()).map(|i| dv.dot(&row(&a, i), &b[0])).collect(),
                        _ => b.iter().map(|col| dv.dot(&a[0], col)).collect(),
                    }
                }
            };
            let rl = leaves(&result)?;
            if rl.len() != models.len() {
                return Ok(widen(&result));
            }
            let out = rsk.ok_or("no scalar kind")?;
            rebuild(&result, &mut models.iter().zip(&rl).map(|(md, (r, _))| finish(out, *md, *r)))
        }
        // Not modelled: exact from exact inputs, any value otherwise.
        _ if inexact_in => Ok(widen(&result)),
        _ => Ok(result),
    }
}

/// `select`: a certain condition picks a value with its bound; under an
/// uncertain one the device may pick the other value.
fn select(rsk: Option<Sk>, ops: &[Val], result: Val) -> R<Val> {
    // `chosen` with bounds that also cover `other`.
    let mix = |chosen: &Val, other: &Val| -> R<Val> {
        let (cl, ol) = (leaves(chosen)?, leaves(other)?);
        let bounds: Vec<f64> = cl
            .iter()
            .zip(&ol)
            .map(|(&(cb, ce), &(ob, oe))| match rsk.filter(|s| is_float(Some(*s))) {
                _ if cb == ob => ce.max(oe),
                Some(sk) => match (to_f64(sk, cb), to_f64(sk, ob)) {
                    (Some(x), Some(y)) if x.is_finite() && y.is_finite() => ce.max(oe) + (x - y).abs(),
                    _ => ANY,
                },
                None => ANY,
            })
            .collect();
        rebuild(chosen, &mut bounds.into_iter())
    };
    match &ops[0] {
        Val::E(..) => mix(&result, if ops[0].bits()? != 0 { &ops[2] } else { &ops[1] }),
        Val::A(c) if c.iter().any(has_bound) => {
            let (t, e, r) = (ops[1].members()?, ops[2].members()?, result.members()?);
            let mut out = Vec::with_capacity(c.len());
            for (k, cv) in c.iter().enumerate() {
                let other = if cv.bits()? != 0 { &e[k] } else { &t[k] };
                out.push(if has_bound(cv) { mix(&r[k], other)? } else { r[k].clone() });
            }
            Ok(Val::agg(out))
        }
        _ => Ok(result),
    }
}

/// Refuse a decision (branch, switch, index) on a value the device may
/// compute differently.
pub(crate) fn certain(v: &Val, what: &str) -> R<()> {
    if has_bound(v) {
        return Err(format!(
            "{what} depends on a value Vulkan may compute differently (docs/vulkan.md, \"Precision\"): \
             the device may take another path, so the outputs cannot be bounded"
        ));
    }
    Ok(())
}

/// The bound of every scalar leaf of `v` in member order (0 when exact);
/// `None` when all are exact.
pub(crate) fn leaf_bounds(v: &Val) -> Option<Vec<f64>> {
    if !has_bound(v) {
        return None;
    }
    leaves(v).ok().map(|l| l.into_iter().map(|(_, e)| e).collect())
}

/// The first output element outside its bound.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundedMismatch {
    pub mismatch: Mismatch,
    /// The bound the first differing scalar had: 0 when it must be exact.
    pub bound: f64,
}

impl std::fmt::Display for BoundedMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.bound == 0.0 {
            write!(f, "{} (allowed: exact)", self.mismatch)
        } else {
            write!(f, "{} (allowed by Vulkan's precision: |difference| <= {:e})", self.mismatch, self.bound)
        }
    }
}

/// Device outputs compared with a precision run's (`Outputs::compare_bounded`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// The first element outside its bound.
    pub mismatch: Option<BoundedMismatch>,
    /// Elements that differ within their bounds.
    pub within: usize,
    /// The largest bound one of those used.
    pub max_bound: f64,
}

/// One scalar leaf within `bound` of the exact one (any NaN equals any NaN).
fn leaf_within(a: &Json, b: &Json, bound: f64) -> bool {
    if bound == ANY {
        return true;
    }
    match (json_float(a), json_float(b)) {
        (Some(x), Some(y)) if x.is_finite() && y.is_finite() => (x - y).abs() <= bound,
        _ => false,
    }
}

fn json_leaves(j: &Json) -> Vec<&Json> {
    match j {
        Json::Array(a) => a.iter().flat_map(json_leaves).collect(),
        j => vec![j],
    }
}

impl Outputs {
    /// Compare `device` with these outputs of a precision run: equal
    /// elements, or ones `tolerance` accepts (`same_value`, or a user's
    /// extra allowance), match; any other element must be within the bound
    /// of each of its scalars (`Outputs::bounds`). Printed lines compare
    /// exactly.
    pub fn compare_bounded(&self, device: &Outputs, tolerance: impl Fn(&Json, &Json) -> bool) -> Comparison {
        let mut out = Comparison::default();
        let names: std::collections::BTreeSet<&String> = self.buffers.keys().chain(device.buffers.keys()).collect();
        for name in names {
            let l = self.buffers.get(name).map(elements).unwrap_or_default();
            let r = device.buffers.get(name).map(elements).unwrap_or_default();
            let bounds = self.bounds.get(name);
            for k in 0..l.len().max(r.len()) {
                let (a, b) = (l.get(k).cloned().unwrap_or(Json::Null), r.get(k).cloned().unwrap_or(Json::Null));
                if a == b || (!a.is_null() && !b.is_null() && tolerance(&a, &b)) {
                    continue;
                }
                let fail = |bound: f64| BoundedMismatch {
                    mismatch: Mismatch { buffer: name.clone(), index: k, left: a.clone(), right: b.clone() },
                    bound,
                };
                let Some(eb) = bounds.and_then(|m| m.get(&k)) else {
                    out.mismatch = Some(fail(0.0));
                    return out;
                };
                let (la, lb) = (json_leaves(&a), json_leaves(&b));
                if la.len() != lb.len() || la.len() != eb.len() {
                    out.mismatch = Some(fail(0.0));
                    return out;
                }
                let mut used = 0.0f64;
                for ((x, y), &bound) in la.iter().zip(&lb).zip(eb) {
                    if same_value(x, y) || tolerance(x, y) {
                        continue;
                    }
                    if !leaf_within(x, y, bound) {
                        out.mismatch = Some(fail(bound));
                        return out;
                    }
                    used = used.max(bound);
                }
                out.within += 1;
                out.max_bound = out.max_bound.max(used);
            }
        }
        let printed = |o: &Outputs| Outputs { printed: o.printed.clone(), ..Outputs::default() };
        out.mismatch = printed(self)
            .first_mismatch(&printed(device), same_value)
            .map(|mismatch| BoundedMismatch { mismatch, bound: 0.0 });
        out
    }

    /// [`Outputs::compare_bounded`] against a module another compiler
    /// wrote. One that declares neither `NoContraction` nor float controls
    /// (`loose_floats`: naga's, glslang's) lets a device fuse, round either
    /// way and flush subnormals in it, which is the `--fast-math` model:
    /// where these (exact-model) bounds fail, `widened` (the interpreter's
    /// run under [`Precision::for_fast_math`], made only then) decides.
    /// Where that model cannot run the kernel (a branch on a value it leaves
    /// uncertain) or does not hold either, the exact comparison stands.
    /// Returns the comparison and whether the widened model accepted it.
    pub fn compare_foreign<E>(
        &self,
        theirs: &Outputs,
        loose_floats: bool,
        widened: impl FnOnce() -> Result<Outputs, E>,
        tolerance: impl Fn(&Json, &Json) -> bool,
    ) -> (Comparison, bool) {
        let exact = self.compare_bounded(theirs, &tolerance);
        if exact.mismatch.is_none() || !loose_floats {
            return (exact, false);
        }
        match widened().map(|w| w.compare_bounded(theirs, &tolerance)) {
            Ok(w) if w.mismatch.is_none() => (w, true),
            _ => (exact, false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{run_kernel_with, Inputs, Options};
    use serde_json::json;

    /// Run the module's only kernel with bounds; `args` are its inputs.
    fn run(src: &str, args: Json) -> Result<Outputs, String> {
        run_with(src, args, Precision::default())
    }

    /// `run` under the model of a `--fast-math` build.
    fn run_fast(src: &str, args: Json) -> Result<Outputs, String> {
        run_with(src, args, Precision::for_fast_math(true))
    }

    fn run_with(src: &str, args: Json, precision: Precision) -> Result<Outputs, String> {
        let m = crate::text::parse_module(src, "t.xir").map_err(|d| format!("{d:?}"))?;
        let k = m.func_ids().find(|&f| m.func(f).is_kernel()).ok_or("no kernel")?;
        let mut inputs = Inputs::new().with_dispatch([1, 1, 1]);
        for (name, v) in args.as_object().ok_or("args")? {
            inputs = inputs.with_arg(name, v.clone());
        }
        let opts = Options { precision: Some(precision), ..Options::default() };
        run_kernel_with(&m, k, &inputs, &opts).map_err(|e| e.to_string())
    }

    fn kernel(ty: &str, body: &str) -> String {
        format!("kernel @k(%x: {ty}, %out: buffer<{ty}>) block_size(1, 1, 1) {{\n^entry:\n{body}  return\n}}\n")
    }

    fn f32_ulp(x: f64) -> f64 {
        ulp_of(Sk::F32, x)
    }

    #[test]
    fn exact_operations_have_no_bound() {
        let src = kernel(
            "f32",
            "  %a = add %x, f32 0.1 : f32\n  %b = mul %a, %x : f32\n  %c = sub %b, f32 3.0 : f32\n\
             \x20 %d = max %c, %x : f32\n  %e = floor %d : f32\n  %f = cast.static %e : f64\n\
             \x20 %g = cast.static %f : f32\n  buffer.write %out, u32 0, %d\n  buffer.write %out, u32 1, %g\n",
        );
        let out = run(&src, json!({"x": 1.7, "out": {"fill": 0, "len": 2}})).unwrap();
        assert!(out.bounds.is_empty(), "{:?}", out.bounds);
    }

    fn device_out(v: &[f64]) -> Outputs {
        Outputs { buffers: [("out".to_string(), json!(v))].into(), ..Outputs::default() }
    }

    #[test]
    fn without_float_controls_a_rounding_may_go_to_either_neighbour() {
        // 1 + 2^-24 is a tie in f32: RTE gives 1, RTZ too; 1 + 3 * 2^-25 rounds
        // up under RTE (1 + 2^-23) and down under RTZ (1).
        let src = kernel(
            "f32",
            "  %a = add %x, f32 0x33c00000 : f32
  buffer.write %out, u32 0, %a
",
        );
        let args = json!({"x": 1.0, "out": {"fill": 0, "len": 1}});
        let rte = run(&src, args.clone()).unwrap();
        assert!(rte.bounds.is_empty(), "exact under RoundingModeRTE: {:?}", rte.bounds);
        let up = 1.0 + 2f64.powi(-23);
        assert_eq!(rte.buffers["out"], json!([up]));
        let rtz = rte.compare_bounded(&device_out(&[1.0]), same_value).mismatch.expect("RTZ refused under RTE");
        assert_eq!(rtz.bound, 0.0);
        let fast = run_fast(&src, args).unwrap();
        let c = fast.compare_bounded(&device_out(&[1.0]), same_value);
        assert_eq!((c.mismatch, c.within), (None, 1), "the other neighbour");
        // One more ULP is outside.
        let below = f32::from_bits(1.0f32.to_bits() - 1) as f64;
        assert!(fast.compare_bounded(&device_out(&[below]), same_value).mismatch.is_some());
    }

    /// A foreign module's result the exact bounds refuse is judged by the
    /// fast-math model only when the module declares no exact floats, and
    /// the exact comparison stands where that model cannot run.
    #[test]
    fn a_foreign_module_without_exact_floats_is_judged_by_the_fast_math_model() {
        let src = kernel("f32", "  %a = add %x, f32 0x33c00000 : f32\n  buffer.write %out, u32 0, %a\n");
        let args = json!({"x": 1.0, "out": {"fill": 0, "len": 1}});
        let exact = run(&src, args.clone()).unwrap();
        let rtz = device_out(&[1.0]);
        let widened = || run_fast(&src, args.clone());
        let (c, fast) = exact.compare_foreign(&rtz, true, widened, same_value);
        assert_eq!((c.mismatch, fast), (None, true));
        let (c, fast) = exact.compare_foreign(&rtz, false, || run_fast(&src, args.clone()), same_value);
        assert!(c.mismatch.is_some() && !fast, "declared exact floats: the exact bounds");
        let (c, fast) = exact.compare_foreign(&rtz, true, || Err::<Outputs, _>("cannot run"), same_value);
        assert!(c.mismatch.is_some() && !fast, "the widened model cannot run: the exact comparison");
    }

    #[test]
    fn without_float_controls_a_denormal_result_may_be_flushed_to_zero() {
        // 2^-100 * 2^-30 = 2^-130, a denormal f32: exact under the float
        // controls (`DenormPreserve`), zero allowed without them; a normal
        // result keeps its one-ULP bound.
        let src = kernel(
            "f32",
            "  %a = mul %x, f32 0x30800000 : f32
  %b = mul %x, f32 2.0 : f32
  buffer.write %out, u32 0, %a
  buffer.write %out, u32 1, %b
",
        );
        let args = json!({"x": 2f64.powi(-100), "out": {"fill": 0, "len": 2}});
        let tiny = 2f64.powi(-130);
        let exact = run(&src, args.clone()).unwrap();
        assert_eq!(exact.buffers["out"], json!([tiny, 2f64.powi(-99)]));
        assert!(exact.compare_bounded(&device_out(&[0.0, 2f64.powi(-99)]), same_value).mismatch.is_some());
        let fast = run_fast(&src, args).unwrap();
        let c = fast.compare_bounded(&device_out(&[0.0, 2f64.powi(-99)]), same_value);
        assert_eq!((c.mismatch, c.within), (None, 1), "flushed to zero");
        assert!(fast.compare_bounded(&device_out(&[tiny, 0.0]), same_value).mismatch.is_some(), "a normal one is not");
    }

    #[test]
    fn without_float_controls_conversions_round_either_way_and_zeros_lose_their_sign() {
        let src = "kernel @k(%n: u32, %x: f32, %out: buffer<f32>) block_size(1, 1, 1) {\n^entry:\n\
                   \x20 %f = cast.static %n : f32\n  %z = sub %x, %x : f32\n  %m = neg %z : f32\n\
                   \x20 buffer.write %out, u32 0, %f\n  buffer.write %out, u32 1, %m\n  return\n}\n";
        // 2^24 + 3 lies between 2^24 + 2 and 2^24 + 4: RTE rounds up.
        let args = json!({"n": 16777219u32, "x": 1.5, "out": {"fill": 0, "len": 2}});
        let exact = run(src, args.clone()).unwrap();
        assert_eq!(exact.buffers["out"], json!([16777220.0, "-0.0"]));
        assert!(exact.bounds.is_empty());
        let device = device_out(&[16777218.0, 0.0]);
        assert!(exact.compare_bounded(&device, same_value).mismatch.is_some());
        let fast = run_fast(src, args).unwrap();
        let c = fast.compare_bounded(&device, same_value);
        assert_eq!((c.mismatch, c.within), (None, 2), "RTZ conversion and +0 for -0");
    }

    #[test]
    fn without_float_controls_a_branch_on_an_infinity_is_refused() {
        let src = "kernel @k(%x: f32, %out: buffer<f32>) block_size(1, 1, 1) {\n^entry:\n\
                   \x20 %c = lt %x, f32 0.0 : bool\n  if %c, true ^a, false ^b, merge ^b\n\
                   ^a:\n  buffer.write %out, u32 0, f32 1.0\n  br target ^b\n^b:\n  return\n}\n";
        let args = json!({"x": "-inf", "out": {"fill": 0, "len": 1}});
        run(src, args.clone()).unwrap();
        let e = run_fast(src, args).unwrap_err();
        assert!(e.contains("a branch depends on a value Vulkan may compute differently"), "{e}");
    }

    #[test]
    fn division_is_bounded_by_two_and_a_half_ulp() {
        let src = kernel("f32", "  %q = div f32 1.0, %x : f32\n  buffer.write %out, u32 0, %q\n");
        let out = run(&src, json!({"x": 3.0, "out": {"fill": 0, "len": 1}})).unwrap();
        let (v, r) = (1.0 / 3.0, (1.0f32 / 3.0) as f64);
        let want = 2.5 * f32_ulp(v) + (r - v).abs() + 4.0 * ulp_of(Sk::F64, v);
        assert_eq!(out.bounds["out"][&0], vec![want]);
        // 2.5 ULP of 1/3 plus the interpreter's own rounding: under 3 ULP.
        assert!(want > 2.5 * f32_ulp(v) && want < 3.0 * f32_ulp(v));
    }

    #[test]
    fn a_chain_composes_the_bounds() {
        let src = kernel(
            "f32",
            "  %q = div f32 1.0, %x : f32\n  %s = add %q, f32 1.0 : f32\n  %p = mul %s, %s : f32\n\
             \x20 buffer.write %out, u32 0, %q\n  buffer.write %out, u32 1, %s\n  buffer.write %out, u32 2, %p\n",
        );
        let out = run(&src, json!({"x": 3.0, "out": {"fill": 0, "len": 3}})).unwrap();
        let b = &out.bounds["out"];
        // Each operation starts from its inputs' interpreter bits and bounds.
        let q = 1.0f32 / 3.0;
        let eq = b[&0][0];
        // add: the input's deviation plus the device's rounding of the sum.
        let (s, sv) = (q + 1.0, q as f64 + 1.0);
        let es = eq + 0.5 * f32_ulp(sv + eq);
        assert_eq!(b[&1], vec![es + (s as f64 - sv).abs() + 4.0 * ulp_of(Sk::F64, sv)]);
        // mul: |s| e + |s| e + e^2 plus rounding.
        let (es, sv) = (b[&1][0], s as f64);
        let ep = 2.0 * sv * es + es * es;
        let ep = ep + 0.5 * f32_ulp(sv * sv + ep);
        assert_eq!(b[&2], vec![ep + ((s * s) as f64 - sv * sv).abs() + 4.0 * ulp_of(Sk::F64, sv * sv)]);
        assert!(b[&0][0] < b[&1][0] && b[&1][0] < b[&2][0]);
    }

    /// fma_contract's f64 case: a * a - (1 + 2^-26) is 0 unfused, 2^-54 fused.
    #[test]
    fn f64_fma_accepts_fused_and_unfused_and_rejects_others() {
        let src = kernel(
            "f64",
            "  %c = add f64 1.0, f64 0x3e50000000000000 : f64\n  %nc = neg %c : f64\n\
             \x20 %f = fma %x, %x, %nc : f64\n  buffer.write %out, u32 0, %f\n",
        );
        let interp = run(&src, json!({"x": 1.0000000074505806, "out": {"fill": 0, "len": 1}})).unwrap();
        assert_eq!(interp.buffers["out"], json!([2f64.powi(-54)]));
        let device = |v: f64| Outputs { buffers: [("out".to_string(), json!([v]))].into(), ..Outputs::default() };
        let fused = interp.compare_bounded(&device(2f64.powi(-54)), same_value);
        assert_eq!((fused.mismatch, fused.within), (None, 0));
        let unfused = interp.compare_bounded(&device(0.0), same_value);
        assert_eq!(unfused.mismatch, None);
        assert_eq!(unfused.within, 1);
        let wrong = interp.compare_bounded(&device(2f64.powi(-50)), same_value);
        let m = wrong.mismatch.expect("2^-50 is neither fused nor unfused");
        assert!(m.bound > 2f64.powi(-54) && m.bound < 2f64.powi(-51), "{}", m.bound);
        assert!(m.to_string().starts_with("`out`[0]: "), "{m}");
        assert!(m.to_string().contains(&format!("|difference| <= {:e}", m.bound)), "{m}");
    }

    #[test]
    fn f32_fma_is_exact() {
        let src = kernel("f32", "  %f = fma %x, %x, f32 -1.00048828125 : f32\n  buffer.write %out, u32 0, %f\n");
        let out = run(&src, json!({"x": 1.000244140625, "out": {"fill": 0, "len": 1}})).unwrap();
        assert!(out.bounds.is_empty());
    }

    /// Eight lanes sum values of mixed magnitude, each lane writing its
    /// warp's sum. Lane-order folds (the default backend) are exact; with
    /// `any_fold_order` (fast math) the sum in reverse order is accepted and
    /// a value ten roundings away is not.
    #[test]
    fn warp_folds_are_exact_in_lane_order_and_bounded_in_any_order() {
        let src = "kernel @k(%x: buffer<f32>, %out: buffer<f32>) block_size(8, 1, 1) {\n^entry:\n  \
                   %t = extract $dispatch_id, u32 0 : u32\n  %v = buffer.read %x, %t : f32\n  \
                   %s = warp.active_sum %v : f32\n  buffer.write %out, %t, %s\n  return\n}\n";
        let x: Vec<f32> = vec![1.0e6, 3.3, -7.25e-3, 2.5e4, -1.0e6, 0.125, 9.9e2, -4.4];
        let m = crate::text::parse_module(src, "t.xir").unwrap();
        let k = m.func_ids().next().unwrap();
        let inputs = Inputs::new()
            .with_dispatch([8, 1, 1])
            .with_arg("x", json!(x))
            .with_arg("out", json!({"fill": 0, "len": 8}));
        let run = |p: Precision| {
            run_kernel_with(&m, k, &inputs, &Options { precision: Some(p), ..Options::default() }).unwrap()
        };
        let forward = x.iter().fold(-0.0f32, |a, &v| a + v);
        let backward = x.iter().rev().fold(-0.0f32, |a, &v| a + v);
        assert_ne!(forward, backward, "the order shows");
        let device = |v: f32| Outputs {
            buffers: [("x".to_string(), json!(x)), ("out".to_string(), json!(vec![v as f64; 8]))].into(),
            ..Outputs::default()
        };
        let refused = |o: &Outputs, v: f32| o.compare_bounded(&device(v), same_value).mismatch.map(|m| m.to_string());
        let exact = run(Precision::default());
        assert!(exact.bounds.is_empty(), "lane order, exact inputs: {:?}", exact.bounds);
        assert_eq!(exact.buffers["out"], json!(vec![forward as f64; 8]));
        let other_order = refused(&exact, backward).expect("another order is refused");
        assert!(other_order.starts_with("`out`[0]: "), "{other_order}");
        let any = run(Precision { any_fold_order: true, ..Precision::default() });
        assert_eq!(refused(&any, backward), None, "any order is accepted");
        let far = forward + 10.0 * (f32_ulp(2.0e6) as f32);
        let far_off = refused(&any, far).expect("far off is refused");
        assert!(far_off.starts_with("`out`[0]: "), "{far_off}");
    }

    #[test]
    fn a_wrong_value_is_rejected_with_its_bound() {
        let src = kernel("f32", "  %q = div f32 1.0, %x : f32\n  %s = sqrt %x : f32\n  buffer.write %out, u32 0, %q\n  buffer.write %out, u32 1, f32 2.0\n");
        let interp = run(&src, json!({"x": 3.0, "out": {"fill": 0, "len": 2}})).unwrap();
        let bound = interp.bounds["out"][&0][0];
        let q = 1.0f32 / 3.0;
        let device = |a: f32, b: f32| Outputs {
            buffers: [("out".to_string(), json!([a as f64, b as f64]))].into(),
            ..Outputs::default()
        };
        // Two ULP away: within 2.5 ULP.
        let near = f32::from_bits(q.to_bits() + 2);
        let c = interp.compare_bounded(&device(near, 2.0), same_value);
        assert_eq!((c.mismatch.is_none(), c.within, c.max_bound), (true, 1, bound));
        // Four ULP away: outside.
        let far = f32::from_bits(q.to_bits() + 4);
        let m = interp.compare_bounded(&device(far, 2.0), same_value).mismatch.expect("rejected");
        assert_eq!(m.bound, bound);
        assert_eq!(
            m.to_string(),
            format!(
                "`out`[0]: {} != {} (allowed by Vulkan's precision: |difference| <= {bound:e})",
                q as f64, far as f64
            )
        );
        // An exact element must match bit for bit.
        let next = f32::from_bits(2.0f32.to_bits() + 1);
        let m = interp.compare_bounded(&device(q, next), same_value).mismatch.expect("rejected");
        assert_eq!(m.to_string(), format!("`out`[1]: 2.0 != {} (allowed: exact)", next as f64));
    }

    #[test]
    fn transcendentals_follow_the_spec_table() {
        let src = kernel(
            "f32",
            "  %e = exp2 %x : f32\n  %l = log2 %x : f32\n  %s = sin %x : f32\n  %a = atan %x : f32\n\
             \x20 buffer.write %out, u32 0, %e\n  buffer.write %out, u32 1, %l\n  buffer.write %out, u32 2, %s\n\
             \x20 buffer.write %out, u32 3, %a\n",
        );
        let out = run(&src, json!({"x": 3.0, "out": {"fill": 0, "len": 4}})).unwrap();
        let b = &out.bounds["out"];
        // exp2(3) = 8: (3 + 2 * 3) ULP; log2(3) outside [0.5, 2]: 3 ULP; sin: 2^-11; atan: 4096 ULP.
        let slack = |v: f64, r: f32| (r as f64 - v).abs() + 4.0 * ulp_of(Sk::F64, v);
        assert_eq!(b[&0][0], 9.0 * f32_ulp(8.0) + slack(8.0, 8.0));
        let l = 3f64.log2();
        assert_eq!(b[&1][0], 3.0 * f32_ulp(l) + slack(l, 3f32.log2()));
        assert_eq!(b[&2][0], 2f64.powi(-11) + slack(3f64.sin(), 3f32.sin()));
        assert_eq!(b[&3][0], 4096.0 * f32_ulp(3f64.atan()) + slack(3f64.atan(), 3f32.atan()));
    }

    #[test]
    fn a_branch_on_an_uncertain_comparison_is_refused() {
        let src = "kernel @k(%x: f32, %out: buffer<f32>) block_size(1, 1, 1) {\n^entry:\n\
                   \x20 %s = sin %x : f32\n  %c = lt %s, f32 0.0 : bool\n  if %c, true ^a, false ^b, merge ^b\n\
                   ^a:\n  buffer.write %out, u32 0, f32 1.0\n  br target ^b\n^b:\n  return\n}\n";
        let e = run(src, json!({"x": 0.0, "out": {"fill": 0, "len": 1}})).unwrap_err();
        assert!(e.contains("a branch depends on a value Vulkan may compute differently"), "{e}");
        // Far from the decision: certain, so it runs.
        run(src, json!({"x": 1.0, "out": {"fill": 0, "len": 1}})).unwrap();
    }

    #[test]
    fn determinant_and_inverse_are_bounded_as_cofactor_expansions() {
        let src = "kernel @k(%d: mat<f32, 3>, %out: buffer<f32>) block_size(1, 1, 1) {\n^entry:\n\
                   \x20 %det = matrix_determinant %d : f32\n  %inv = matrix_inverse %d : mat<f32, 3>\n\
                   \x20 %i11 = extract %inv, u32 1, u32 1 : f32\n  %t = matrix_transpose %inv : mat<f32, 3>\n\
                   \x20 %t11 = extract %t, u32 1, u32 1 : f32\n  buffer.write %out, u32 0, %det\n\
                   \x20 buffer.write %out, u32 1, %i11\n  buffer.write %out, u32 2, %t11\n  return\n}\n";
        let d = json!([[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 8.0]]);
        let out = run(src, json!({"d": d, "out": {"fill": 0, "len": 3}})).unwrap();
        assert_eq!(out.buffers["out"], json!([64.0, 0.25, 0.25]));
        let b = &out.bounds["out"];
        // 3! * 3 roundings, each at most half an ULP of the permanent (64).
        assert_eq!(b[&0], vec![9.0 * f32_ulp(64.0) + 4.0 * ulp_of(Sk::F64, 64.0)]);
        // cofactor (16: 2 ULP) times 1 / det (det: 9 ULP, the division 2.5 ULP)
        // and the product's rounding: about 14 ULP of 0.25.
        assert!(b[&1][0] > 13.5 * f32_ulp(0.25) && b[&1][0] < 15.0 * f32_ulp(0.25), "{}", b[&1][0]);
        // The transpose moves the bound with its element.
        assert_eq!(b[&2], b[&1]);
    }
}
