//! The interpreter's autodiff oracle (docs/autodiff.md): an `autodiff.scope`
//! runs in forward mode with vector tangents, independently of the
//! `autodiff` pass, so that the pass can be tested against it.
//!
//! Inside a scope each float leaf on a gradient path is a `Val::D`: its
//! exact bits and a tangent, one f64 per input leaf marked so far (a leaf
//! `requires_gradient` marked gets a unit vector at a fresh index). The
//! data-movement operations carry the leaves along untouched (registers,
//! local memory, aggregates, `select`, phis); every other differentiable
//! operation computes its primal exactly as outside a scope and its
//! tangent here, by dual-number arithmetic in f64 over the same formula.
//! `backward` then reads the gradient off the tangents in one step:
//! `sum_j seed_j * tangent(y_j)[k]` for every input leaf `k`.
//!
//! This file holds the scope's state (inputs, gradient, markers, buffers
//! touched) and the derivative table; `exec.rs` calls it around the step.

use std::rc::Rc;

use xir_spec::Opcode;

use crate::ir::{Block, Type, TypeId, TypeTable, Value};

use super::arith::{self, R};
use super::value::{scalar_kind, undef_of, Ptr, Sk, Val};

/// The error of a differentiable value reaching an operation outside
/// docs/autodiff.md's lists.
pub(crate) const NON_DIFFERENTIABLE: &str = "non-differentiable operation on a gradient path";

/// A scope starting in a function its scope calls: the shared check's
/// words, since the pass, which inlines the callee, sees a nested scope.
pub(crate) use crate::autodiff::NESTED_SCOPE as NESTED;

/// The state of the autodiff scope a thread is running.
pub(crate) struct Scope {
    /// The scope's merge block: reaching it ends the scope.
    pub merge: Block,
    /// Frames on the thread's stack where the scope runs (its body is in
    /// the top one of these).
    pub depth: usize,
    inputs: Vec<Input>,
    /// The gradient of every input leaf so far (`accumulate_gradient` may
    /// add before the `backward`).
    grad: Vec<f64>,
    /// The seeds `gradient_marker` set: its operand and the seed (the
    /// last one executed wins).
    markers: Vec<(Value, Val)>,
    /// Buffers (dispatch indices) read and written in the scope.
    read: Vec<u32>,
    written: Vec<u32>,
}

/// A variable marked by `requires_gradient`: its address, type and the
/// index of its first float leaf among the inputs.
struct Input {
    ptr: Ptr,
    ty: TypeId,
    first: usize,
}

impl Scope {
    pub fn new(merge: Block, depth: usize) -> Scope {
        Scope {
            merge,
            depth,
            inputs: Vec::new(),
            grad: Vec::new(),
            markers: Vec::new(),
            read: Vec::new(),
            written: Vec::new(),
        }
    }

    /// `requires_gradient`: the value `v` of the variable at `ptr` becomes
    /// an input; returns the value with a unit tangent on each float leaf.
    /// (`xir::autodiff::check_scopes` has made sure that the mark is of a
    /// whole variable with a float leaf, once, before the backward.)
    pub fn mark(&mut self, types: &TypeTable, ptr: &Ptr, ty: TypeId, mut v: Val) -> R<Val> {
        let first = self.grad.len();
        let mut next = first;
        walk(types, ty, &mut v, &mut |sk, leaf| {
            if sk.is_some_and(differentiable) {
                if let Ok(b) = leaf.bits() {
                    let mut t = vec![0.0; next + 1];
                    t[next] = 1.0;
                    *leaf = Val::D(b, Rc::new(t));
                }
                next += 1;
            }
            Ok(())
        })?;
        self.grad.resize(next, 0.0);
        self.inputs.push(Input { ptr: ptr.clone(), ty, first });
        Ok(v)
    }

    /// The input marked at `ptr` (the static checks made sure there is
    /// one, at the top level before every use).
    fn input(&self, ptr: &Ptr) -> R<&Input> {
        self.inputs
            .iter()
            .find(|i| i.ptr == *ptr)
            .ok_or_else(|| "address of a variable not marked by `requires_gradient` in this scope".to_string())
    }

    /// `gradient %p : T`: the gradient of the input at `ptr` so far, each
    /// leaf rounded to its type (zero in the leaves that are not floats).
    /// The static checks placed it after the backward.
    pub fn gradient(&self, types: &TypeTable, ptr: &Ptr, ty: TypeId) -> R<Val> {
        let input = self.input(ptr)?;
        if input.ty != ty {
            return Err("`gradient` of a type other than the variable's".into());
        }
        let mut v = undef_of(types, ty);
        let mut k = input.first;
        walk(types, ty, &mut v, &mut |sk, leaf| {
            *leaf = match sk {
                Some(sk) if differentiable(sk) => {
                    k += 1;
                    Val::S(arith::from_f64(sk, self.grad[k - 1]))
                }
                _ => Val::S(0),
            };
            Ok(())
        })?;
        Ok(v)
    }

    /// `accumulate_gradient %p, %s`: adds `s` to the input's gradient.
    pub fn accumulate(&mut self, types: &TypeTable, ptr: &Ptr, mut s: Val) -> R<()> {
        let (first, ty) = {
            let input = self.input(ptr)?;
            (input.first, input.ty)
        };
        let mut k = first;
        let grad = &mut self.grad;
        walk(types, ty, &mut s, &mut |sk, leaf| {
            if let Some(sk) = sk.filter(|&sk| differentiable(sk)) {
                grad[k] += arith::to_f64(sk, leaf.bits()?).unwrap_or(0.0);
                k += 1;
            }
            Ok(())
        })
    }

    /// `gradient_marker %y, %s`: the seed of the next `backward` of `y`.
    pub fn marker(&mut self, operand: Value, seed: Val) {
        self.markers.retain(|m| m.0 != operand);
        self.markers.push((operand, strip(&seed)));
    }

    /// `backward %y` (the value `y` of type `ty`): adds `sum_j seed_j *
    /// tangent(y_j)` to the gradient. The static checks made it the
    /// scope's only backward, and every marker's operand its operand.
    pub fn backward(&mut self, types: &TypeTable, ty: TypeId, mut y: Val) -> R<()> {
        let mut seed = self.markers.pop().map(|(_, s)| s);
        let mut seeds = Vec::new();
        if let Some(s) = &mut seed {
            walk(types, ty, s, &mut |sk, leaf| {
                if let Some(sk) = sk.filter(|&sk| differentiable(sk)) {
                    seeds.push(arith::to_f64(sk, leaf.bits()?).unwrap_or(0.0));
                }
                Ok(())
            })?;
        }
        let (mut j, grad) = (0, &mut self.grad);
        walk(types, ty, &mut y, &mut |sk, leaf| {
            if sk.is_some_and(differentiable) {
                let s = seeds.get(j).copied().unwrap_or(1.0);
                j += 1;
                if let Val::D(_, t) = leaf {
                    for (g, tk) in grad.iter_mut().zip(t.iter()) {
                        *g += s * tk;
                    }
                }
            }
            Ok(())
        })?;
        Ok(())
    }

    /// A read (`write == false`) or write of buffer `b`: refused when the
    /// scope both reads and writes one buffer.
    pub fn touch(&mut self, b: u32, write: bool) -> R<()> {
        let (mine, other) = if write { (&mut self.written, &self.read) } else { (&mut self.read, &self.written) };
        if other.contains(&b) {
            return Err(crate::autodiff::BUFFER_READ_AND_WRITTEN.into());
        }
        if !mine.contains(&b) {
            mine.push(b);
        }
        Ok(())
    }
}

/// Whether a float format carries gradients (the 8-bit ones do not).
fn differentiable(sk: Sk) -> bool {
    matches!(sk, Sk::F16 | Sk::F32 | Sk::F64)
}

/// Visit the scalar leaves of `v` (of type `ty`) in member order with their
/// scalar kinds.
fn walk(types: &TypeTable, ty: TypeId, v: &mut Val, f: &mut impl FnMut(Option<Sk>, &mut Val) -> R<()>) -> R<()> {
    let member = |k: usize| -> Option<TypeId> {
        match types.get(ty) {
            Type::Vector { elem, .. } | Type::Array { elem, .. } => Some(*elem),
            Type::Struct { fields, .. } => fields.get(k).copied(),
            _ => None,
        }
    };
    match (types.get(ty), v) {
        (Type::Matrix { elem, .. }, Val::A(cols)) => {
            for col in Rc::make_mut(cols) {
                let Val::A(xs) = col else { return Err("matrix value without columns".into()) };
                for x in Rc::make_mut(xs) {
                    f(scalar_kind(types, *elem), x)?;
                }
            }
            Ok(())
        }
        (Type::Vector { .. } | Type::Array { .. } | Type::Struct { .. }, Val::A(ms)) => {
            for (k, m) in Rc::make_mut(ms).iter_mut().enumerate() {
                walk(types, member(k).ok_or("value has more members than its type")?, m, f)?;
            }
            Ok(())
        }
        (Type::Vector { .. } | Type::Array { .. } | Type::Struct { .. } | Type::Matrix { .. }, _) => {
            Err("use of an undefined value".into())
        }
        (_, leaf) => f(scalar_kind(types, ty), leaf),
    }
}

/// Whether some leaf of `v` carries a tangent.
pub(crate) fn has_tangent(v: &Val) -> bool {
    match v {
        Val::D(..) => true,
        Val::A(m) => m.iter().any(has_tangent),
        _ => false,
    }
}

/// `v` without tangents (`detach`, buffer writes).
pub(crate) fn strip(v: &Val) -> Val {
    let mut v = v.clone();
    strip_in_place(&mut v);
    v
}

/// Drop the tangents of `v` in place (the end of a scope).
pub(crate) fn strip_in_place(v: &mut Val) {
    match v {
        Val::D(b, _) => *v = Val::S(*b),
        Val::A(m) if m.iter().any(has_tangent) => Rc::make_mut(m).iter_mut().for_each(strip_in_place),
        _ => {}
    }
}

/// Whether `op` moves values without computing on them: the interpreter's
/// evaluator already carries the tangents of the leaves it moves.
pub(crate) fn moves(op: Opcode) -> bool {
    use Opcode::*;
    matches!(op, Extract | Insert | Aggregate | Shuffle | Select)
}

/// A dual number: a value and its tangent (`None`: not on a gradient path).
#[derive(Clone, Debug)]
struct Dual {
    v: f64,
    t: Option<Rc<Vec<f64>>>,
}

/// `sum_i d_i * x_i.t` with value `v`: the chain rule of every operation.
fn lin(v: f64, terms: &[(f64, &Dual)]) -> Dual {
    let mut out: Option<Vec<f64>> = None;
    for (d, x) in terms {
        if let Some(t) = &x.t {
            let o = out.get_or_insert_with(Vec::new);
            if o.len() < t.len() {
                o.resize(t.len(), 0.0);
            }
            for (ok, tk) in o.iter_mut().zip(t.iter()) {
                *ok += d * tk;
            }
        }
    }
    Dual { v, t: out.map(Rc::new) }
}

impl Dual {
    fn c(v: f64) -> Dual {
        Dual { v, t: None }
    }
    fn add(&self, o: &Dual) -> Dual {
        lin(self.v + o.v, &[(1.0, self), (1.0, o)])
    }
    fn sub(&self, o: &Dual) -> Dual {
        lin(self.v - o.v, &[(1.0, self), (-1.0, o)])
    }
    fn mul(&self, o: &Dual) -> Dual {
        lin(self.v * o.v, &[(o.v, self), (self.v, o)])
    }
    fn div(&self, o: &Dual) -> Dual {
        lin(self.v / o.v, &[(1.0 / o.v, self), (-self.v / (o.v * o.v), o)])
    }
    fn neg(&self) -> Dual {
        lin(-self.v, &[(-1.0, self)])
    }
    fn sqrt(&self) -> Dual {
        let r = self.v.sqrt();
        lin(r, &[(0.5 / r, self)])
    }
    /// `clamp(x, 0, 1)`: the identity inside `[0, 1]`, constant outside.
    fn saturate(&self) -> Dual {
        if (0.0..=1.0).contains(&self.v) {
            self.clone()
        } else {
            Dual::c(self.v.clamp(0.0, 1.0))
        }
    }
}

/// Sum of products in index order, as `ops.rs` evaluates `dot`.
fn ddot(a: &[Dual], b: &[Dual]) -> R<Dual> {
    if a.is_empty() || a.len() != b.len() {
        return Err("vector lengths differ".into());
    }
    let mut acc = a[0].mul(&b[0]);
    for k in 1..a.len() {
        acc = acc.add(&a[k].mul(&b[k]));
    }
    Ok(acc)
}

/// The leaves of `v` as duals (scalar: one; vector: lanes; matrix:
/// columns in order).
fn flat(sk: Option<Sk>, v: &Val, out: &mut Vec<Dual>) -> R<()> {
    match v {
        Val::A(m) => m.iter().try_for_each(|x| flat(sk, x, out)),
        Val::D(b, t) => {
            let x = sk.and_then(|sk| arith::to_f64(sk, *b)).ok_or(NON_DIFFERENTIABLE)?;
            out.push(Dual { v: x, t: Some(t.clone()) });
            Ok(())
        }
        v => {
            let b = v.bits()?;
            out.push(Dual::c(sk.and_then(|sk| arith::to_f64(sk, b)).unwrap_or(0.0)));
            Ok(())
        }
    }
}

fn duals(sk: Option<Sk>, v: &Val) -> R<Vec<Dual>> {
    let mut out = Vec::new();
    flat(sk, v, &mut out)?;
    Ok(out)
}

/// A square matrix of duals, `m[col][row]`.
fn dmat(sk: Option<Sk>, v: &Val) -> R<Vec<Vec<Dual>>> {
    let m: Vec<Vec<Dual>> = v.members()?.iter().map(|c| duals(sk, c)).collect::<R<_>>()?;
    if m.is_empty() || m.iter().any(|c| c.len() != m.len()) {
        return Err("matrix value is not square".into());
    }
    Ok(m)
}

fn is_matrix(v: &Val) -> bool {
    matches!(v, Val::A(m) if m.first().is_some_and(|c| matches!(c, Val::A(_))))
}

/// Give the leaves of `result` (in member order) the tangents of `ts`.
fn attach(result: &mut Val, ts: &mut impl Iterator<Item = Dual>) -> R<()> {
    match result {
        Val::A(m) => Rc::make_mut(m).iter_mut().try_for_each(|x| attach(x, ts)),
        leaf => {
            let b = leaf.bits()?;
            let d = ts.next().ok_or("result has more leaves than its derivative")?;
            *leaf = match d.t {
                Some(t) => Val::D(b, t),
                None => Val::S(b),
            };
            Ok(())
        }
    }
}

/// Determinant by cofactor expansion along the first column, as `ops.rs`.
fn ddet(a: &[Vec<Dual>]) -> Dual {
    let n = a.len();
    if n == 1 {
        return a[0][0].clone();
    }
    if n == 2 {
        return a[0][0].mul(&a[1][1]).sub(&a[1][0].mul(&a[0][1]));
    }
    let mut s = Dual::c(0.0);
    for r in 0..n {
        let minor: Vec<Vec<Dual>> = a[1..]
            .iter()
            .map(|c| c.iter().enumerate().filter(|(i, _)| *i != r).map(|(_, x)| x.clone()).collect())
            .collect();
        let term = a[0][r].mul(&ddet(&minor));
        s = if r % 2 == 0 { s.add(&term) } else { s.sub(&term) };
    }
    s
}

/// Inverse as adjugate / determinant, as `ops.rs`.
fn dinverse(a: &[Vec<Dual>]) -> Vec<Vec<Dual>> {
    let n = a.len();
    let d = ddet(a);
    (0..n)
        .map(|c| {
            (0..n)
                .map(|r| {
                    let minor: Vec<Vec<Dual>> = a
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != r)
                        .map(|(_, col)| {
                            col.iter().enumerate().filter(|(i, _)| *i != c).map(|(_, x)| x.clone()).collect()
                        })
                        .collect();
                    let cof = if (r + c) % 2 == 0 { ddet(&minor) } else { ddet(&minor).neg() };
                    cof.div(&d)
                })
                .collect()
        })
        .collect()
}

/// The derivative of a lane-wise one-operand operation at `x`.
fn d1(op: Opcode, x: f64) -> Option<f64> {
    use std::f64::consts::{LN_10, LN_2};
    use Opcode::*;
    Some(match op {
        Neg | MatrixCompNeg => -1.0,
        Abs => {
            if x.is_sign_negative() {
                -1.0
            } else {
                1.0
            }
        }
        Sqrt => 0.5 / x.sqrt(),
        Rsqrt => -0.5 / (x * x.sqrt()),
        Exp => x.exp(),
        Exp2 => x.exp2() * LN_2,
        Exp10 => 10f64.powf(x) * LN_10,
        Log => 1.0 / x,
        Log2 => 1.0 / (x * LN_2),
        Log10 => 1.0 / (x * LN_10),
        Sin => x.cos(),
        Cos => -x.sin(),
        Tan => 1.0 / (x.cos() * x.cos()),
        Asin => 1.0 / (1.0 - x * x).sqrt(),
        Acos => -1.0 / (1.0 - x * x).sqrt(),
        Atan => 1.0 / (1.0 + x * x),
        Sinh => x.cosh(),
        Cosh => x.sinh(),
        Tanh => 1.0 - x.tanh() * x.tanh(),
        Asinh => 1.0 / (x * x + 1.0).sqrt(),
        Acosh => 1.0 / (x * x - 1.0).sqrt(),
        Atanh => 1.0 / (1.0 - x * x),
        Fract => 1.0,
        Saturate => {
            if (0.0..=1.0).contains(&x) {
                1.0
            } else {
                0.0
            }
        }
        _ => return None,
    })
}

/// The partial derivatives of a lane-wise two-operand operation at
/// `(a, b)` with result `y`; ties and kinks as docs/autodiff.md fixes them.
fn d2(op: Opcode, a: f64, b: f64, y: f64) -> Option<(f64, f64)> {
    use Opcode::*;
    Some(match op {
        Add | MatrixCompAdd => (1.0, 1.0),
        Sub | MatrixCompSub => (1.0, -1.0),
        Mul | MatrixCompMul => (b, a),
        Div | MatrixCompDiv => (1.0 / b, -a / (b * b)),
        Mod => (1.0, -(a / b).trunc()),
        // The first operand that attains the result.
        Min | Max => {
            if a == y {
                (1.0, 0.0)
            } else {
                (0.0, 1.0)
            }
        }
        Atan2 => {
            let r = a * a + b * b;
            (b / r, -a / r)
        }
        // d/db = a^b ln a, taken as 0 where a <= 0 (no real logarithm).
        Pow => (b * a.powf(b - 1.0), if a > 0.0 { a.powf(b) * a.ln() } else { 0.0 }),
        Copysign => (if a.is_sign_negative() == b.is_sign_negative() { 1.0 } else { -1.0 }, 0.0),
        _ => return None,
    })
}

/// The result of `op` (primal `result`, already computed by the evaluator)
/// with tangents on its float leaves, when some operand carries one.
/// `sks` are the operands' scalar kinds, `to` the result's.
pub(crate) fn derive(op: Opcode, sks: &[Option<Sk>], to: Option<Sk>, ops: &[Val], result: Val) -> R<Val> {
    use Opcode::*;
    let sk = |k: usize| sks.get(k).copied().flatten();
    let arg = |k: usize| -> R<Vec<Dual>> { duals(sk(k), ops.get(k).ok_or("missing operand")?) };
    let mut result = result;
    let out: Vec<Dual> = match op {
        // Piecewise constant or not a float: nothing propagates.
        Floor | Ceil | Trunc | Round | Rint | Step | Lt | Gt | Le | Ge | Eq | Ne | Isinf | Isnan | All | Any => {
            strip_in_place(&mut result);
            return Ok(result);
        }
        CastStatic => match to {
            Some(t) if differentiable(t) => arg(0)?,
            Some(Sk::Bool | Sk::Int { .. }) => {
                strip_in_place(&mut result);
                return Ok(result);
            }
            _ => return Err(NON_DIFFERENTIABLE.into()),
        },
        _ if d1(op, 0.0).is_some() => arg(0)?.iter().map(|x| lin(0.0, &[(d1(op, x.v).unwrap_or(0.0), x)])).collect(),
        _ if d2(op, 0.0, 0.0, 0.0).is_some() => {
            let (a, b, y) = (arg(0)?, arg(1)?, duals(to, &result)?);
            if a.len() != b.len() || a.len() != y.len() {
                return Err("operand shapes differ".into());
            }
            (0..a.len())
                .map(|i| {
                    let (da, db) = d2(op, a[i].v, b[i].v, y[i].v).unwrap_or_default();
                    lin(0.0, &[(da, &a[i]), (db, &b[i])])
                })
                .collect()
        }
        Fma | Lerp | Clamp | Smoothstep => {
            let (a, b, c, y) = (arg(0)?, arg(1)?, arg(2)?, duals(to, &result)?);
            if a.len() != b.len() || a.len() != c.len() || a.len() != y.len() {
                return Err("operand shapes differ".into());
            }
            (0..a.len())
                .map(|i| {
                    let (a, b, c) = (&a[i], &b[i], &c[i]);
                    match op {
                        Fma => lin(0.0, &[(b.v, a), (a.v, b), (1.0, c)]),
                        // a + t (b - a)
                        Lerp => lin(0.0, &[(1.0 - c.v, a), (c.v, b), (b.v - a.v, c)]),
                        Clamp if b.v <= a.v && a.v <= c.v => a.clone(),
                        Clamp if y[i].v == b.v => b.clone(),
                        Clamp => c.clone(),
                        // t = saturate((x - e0) / (e1 - e0)); t t (3 - 2 t)
                        _ => {
                            let t = c.sub(a).div(&b.sub(a)).saturate();
                            t.mul(&t).mul(&Dual::c(3.0).sub(&Dual::c(2.0).mul(&t)))
                        }
                    }
                })
                .collect()
        }
        ReduceSum | ReduceProduct => {
            let l = arg(0)?;
            let first = l.first().ok_or("empty vector")?.clone();
            let r = l[1..].iter().fold(first, |acc, x| if op == ReduceSum { acc.add(x) } else { acc.mul(x) });
            vec![r]
        }
        ReduceMin | ReduceMax => {
            let (l, y) = (arg(0)?, duals(to, &result)?);
            let y = y.first().ok_or("reduction without a result")?.v;
            // The first lane that attains the result.
            vec![l.iter().find(|x| x.v == y).or(l.last()).ok_or("empty vector")?.clone()]
        }
        Dot => vec![ddot(&arg(0)?, &arg(1)?)?],
        LengthSquared => {
            let a = arg(0)?;
            vec![ddot(&a, &a)?]
        }
        Length => {
            let a = arg(0)?;
            vec![ddot(&a, &a)?.sqrt()]
        }
        Normalize => {
            let a = arg(0)?;
            let len = ddot(&a, &a)?.sqrt();
            a.iter().map(|x| x.div(&len)).collect()
        }
        Cross => {
            let (a, b) = (arg(0)?, arg(1)?);
            if a.len() != 3 || b.len() != 3 {
                return Err("cross needs 3-lane vectors".into());
            }
            let c = |i: usize, j: usize| a[i].mul(&b[j]).sub(&a[j].mul(&b[i]));
            vec![c(1, 2), c(2, 0), c(0, 1)]
        }
        Reflect => {
            let (i, n) = (arg(0)?, arg(1)?);
            let two_d = Dual::c(2.0).mul(&ddot(&n, &i)?);
            i.iter().zip(&n).map(|(x, y)| x.sub(&two_d.mul(y))).collect()
        }
        Faceforward => {
            // The sign choice is constant: read it off the result's bits.
            let n = arg(0)?;
            let kept = match (&ops[0], &result) {
                (Val::A(a), Val::A(r)) => a.iter().zip(r.iter()).all(|(x, y)| x.bits().ok() == y.bits().ok()),
                (a, r) => a.bits().ok() == r.bits().ok(),
            };
            n.iter().map(|x| if kept { x.clone() } else { x.neg() }).collect()
        }
        MatrixTranspose => {
            let a = dmat(sk(0), &ops[0])?;
            let n = a.len();
            (0..n).flat_map(|c| (0..n).map(move |r| (c, r))).map(|(c, r)| a[r][c].clone()).collect()
        }
        MatrixLinalgMul | OuterProduct => {
            let (am, bm) = (is_matrix(&ops[0]), is_matrix(&ops[1]));
            let row = |m: &[Vec<Dual>], i: usize| -> Vec<Dual> { m.iter().map(|c| c[i].clone()).collect() };
            if op == OuterProduct {
                // a * transpose(b) (vectors) or A * transpose(B) (matrices).
                let (a, b) =
                    if am { (dmat(sk(0), &ops[0])?, dmat(sk(1), &ops[1])?) } else { (vec![arg(0)?], vec![arg(1)?]) };
                let (rows, cols) = (a[0].len(), b[0].len());
                let mut out = Vec::with_capacity(rows * cols);
                for j in 0..cols {
                    for i in 0..rows {
                        out.push(ddot(&row(&a, i), &row(&b, j))?);
                    }
                }
                out
            } else {
                match (am, bm) {
                    (true, true) => {
                        let (a, b) = (dmat(sk(0), &ops[0])?, dmat(sk(1), &ops[1])?);
                        let mut out = Vec::new();
                        for bj in &b {
                            for i in 0..a.len() {
                                out.push(ddot(&row(&a, i), bj)?);
                            }
                        }
                        out
                    }
                    (true, false) => {
                        let (a, v) = (dmat(sk(0), &ops[0])?, arg(1)?);
                        (0..a.len()).map(|i| ddot(&row(&a, i), &v)).collect::<R<_>>()?
                    }
                    (false, true) => {
                        let (v, b) = (arg(0)?, dmat(sk(1), &ops[1])?);
                        b.iter().map(|c| ddot(&v, c)).collect::<R<_>>()?
                    }
                    (false, false) => return Err("matrix_linalg_mul needs a matrix operand".into()),
                }
            }
        }
        MatrixDeterminant => vec![ddet(&dmat(sk(0), &ops[0])?)],
        MatrixInverse => dinverse(&dmat(sk(0), &ops[0])?).into_iter().flatten().collect(),
        _ => return Err(NON_DIFFERENTIABLE.into()),
    };
    let mut it = out.into_iter();
    attach(&mut result, &mut it)?;
    if it.next().is_some() {
        return Err("result has fewer leaves than its derivative".into());
    }
    Ok(result)
}
