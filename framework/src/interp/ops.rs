//! Pure operations on values: lane-wise arithmetic, comparisons, casts,
//! vector geometry and reductions (lane order), matrix algebra
//! (column-major), and aggregate construction / access. Composite operations
//! are built from the exact scalar operations of `arith`, so they round like
//! the sequence of scalar operations written in their doc.

use xir_spec::Opcode;

use crate::ir::{Function, InstCore, Module, Type, TypeId, TypeTable};

use super::arith::{self, binop, cmp, mask, sext, ternop, unop, R};
use super::value::{scalar_kind, Sk, Val};

pub(crate) fn map1(x: &Val, f: &mut impl FnMut(u64) -> R<u64>) -> R<Val> {
    match x {
        Val::A(m) => Ok(Val::agg(m.iter().map(|v| map1(v, f)).collect::<R<_>>()?)),
        v => Ok(Val::S(f(v.bits()?)?)),
    }
}

pub(crate) fn map2(a: &Val, b: &Val, f: &mut impl FnMut(u64, u64) -> R<u64>) -> R<Val> {
    match (a, b) {
        (Val::A(x), Val::A(y)) if x.len() == y.len() => {
            Ok(Val::agg(x.iter().zip(y.iter()).map(|(p, q)| map2(p, q, f)).collect::<R<_>>()?))
        }
        (Val::A(_), _) | (_, Val::A(_)) => Err("operand shapes differ".into()),
        (p, q) => Ok(Val::S(f(p.bits()?, q.bits()?)?)),
    }
}

fn map3(a: &Val, b: &Val, c: &Val, f: &mut impl FnMut(u64, u64, u64) -> R<u64>) -> R<Val> {
    match (a, b, c) {
        (Val::A(x), Val::A(y), Val::A(z)) if x.len() == y.len() && y.len() == z.len() => {
            Ok(Val::agg(x.iter().zip(y.iter()).zip(z.iter()).map(|((p, q), r)| map3(p, q, r, f)).collect::<R<_>>()?))
        }
        (Val::A(_), _, _) | (_, Val::A(_), _) | (_, _, Val::A(_)) => Err("operand shapes differ".into()),
        (p, q, r) => Ok(Val::S(f(p.bits()?, q.bits()?, r.bits()?)?)),
    }
}

/// Scalar bits of the lanes of a scalar or vector value.
fn lanes(v: &Val) -> R<Vec<u64>> {
    match v {
        Val::A(m) if m.is_empty() => Err("empty vector".into()),
        Val::A(m) => m.iter().map(|v| Ok(v.bits()?)).collect(),
        v => Ok(vec![v.bits()?]),
    }
}

fn from_lanes(l: Vec<u64>) -> Val {
    Val::agg(l.into_iter().map(Val::S).collect())
}

/// Column-major matrix elements: `m[col][row]`.
/// A square matrix (columns of equal length); anything else is an error.
fn mat(v: &Val) -> R<Vec<Vec<u64>>> {
    let m: Vec<Vec<u64>> = v.members()?.iter().map(lanes).collect::<R<_>>()?;
    if m.is_empty() || m.iter().any(|c| c.len() != m.len()) {
        return Err("matrix value is not square".into());
    }
    Ok(m)
}

fn from_mat(m: Vec<Vec<u64>>) -> Val {
    Val::agg(m.into_iter().map(from_lanes).collect())
}

/// Sum of products in index order: ((a0*b0 + a1*b1) + a2*b2) + ...
fn dot(sk: Sk, a: &[u64], b: &[u64]) -> R<u64> {
    if a.is_empty() || a.len() != b.len() {
        return Err(format!("vector lengths differ ({} and {})", a.len(), b.len()));
    }
    let mut acc = binop(Opcode::Mul, sk, a[0], b[0])?;
    for k in 1..a.len() {
        let p = binop(Opcode::Mul, sk, a[k], b[k])?;
        acc = binop(Opcode::Add, sk, acc, p)?;
    }
    Ok(acc)
}

fn ty_of(m: &Module, f: &Function, d: &InstCore, k: usize) -> TypeId {
    f.value_type(m, d.operands[k])
}

fn sk_of(types: &TypeTable, ty: TypeId) -> R<Sk> {
    scalar_kind(types, ty).ok_or_else(|| "operand has no scalar element type".to_string())
}

/// Evaluate a pure (non-memory, non-control) instruction.
/// `sk` is the scalar kind of operand 0 when it has one (precomputed).
pub(crate) fn eval_pure(m: &Module, f: &Function, d: &InstCore, sk: Option<Sk>, ops: &[Val]) -> R<Val> {
    use Opcode::*;
    let op = d.opcode;
    let types = &m.types;
    let sk0 = || sk.ok_or_else(|| "operand has no scalar element type".to_string());
    let need = |n: usize| -> R<()> {
        if ops.len() < n {
            Err(format!("`{op}` needs {n} operands, found {}", ops.len()))
        } else {
            Ok(())
        }
    };
    match op {
        Neg | BitNot | Abs | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh
        | Exp | Exp2 | Exp10 | Log | Log2 | Log10 | Sqrt | Rsqrt | Ceil | Floor | Fract | Trunc | Round | Rint
        | Clz | Ctz | Popcount | Reverse | Saturate | MatrixCompNeg => {
            need(1)?;
            let sk = sk0()?;
            let op = if op == MatrixCompNeg { Neg } else { op };
            map1(&ops[0], &mut |x| unop(op, sk, x))
        }
        Isinf | Isnan => {
            need(1)?;
            let sk = sk0()?;
            map1(&ops[0], &mut |x| {
                Ok(if op == Isinf { arith::is_inf_bits(sk, x) } else { arith::is_nan_bits(sk, x) } as u64)
            })
        }
        Add | Sub | Mul | Div | Mod | BitAnd | BitOr | BitXor | Shl | Shr | Rotl | Rotr | Min | Max | Atan2 | Pow
        | Copysign | Step | MatrixCompAdd | MatrixCompSub | MatrixCompMul | MatrixCompDiv => {
            need(2)?;
            let sk = sk0()?;
            let op = match op {
                MatrixCompAdd => Add,
                MatrixCompSub => Sub,
                MatrixCompMul => Mul,
                MatrixCompDiv => Div,
                o => o,
            };
            map2(&ops[0], &ops[1], &mut |a, b| binop(op, sk, a, b))
        }
        Lt | Gt | Le | Ge | Eq | Ne => {
            need(2)?;
            let sk = sk0()?;
            map2(&ops[0], &ops[1], &mut |a, b| Ok(cmp(op, sk, a, b)? as u64))
        }
        Clamp | Lerp | Smoothstep | Fma => {
            need(3)?;
            let sk = sk0()?;
            map3(&ops[0], &ops[1], &ops[2], &mut |a, b, c| ternop(op, sk, a, b, c))
        }
        Select => {
            need(3)?;
            match &ops[0] {
                Val::A(c) => {
                    let (t, e) = (ops[1].members()?, ops[2].members()?);
                    if t.len() != c.len() || e.len() != c.len() {
                        return Err("select operands have different lane counts".into());
                    }
                    let mut out = Vec::with_capacity(c.len());
                    for (k, cv) in c.iter().enumerate() {
                        let pick = if cv.bits()? != 0 { &t[k] } else { &e[k] };
                        out.push(pick.clone());
                    }
                    Ok(Val::agg(out))
                }
                c => Ok(if c.bits()? != 0 { ops[1].clone() } else { ops[2].clone() }),
            }
        }
        All | Any => {
            need(1)?;
            let l = lanes(&ops[0])?;
            Ok(Val::bool(if op == All { l.iter().all(|&x| x != 0) } else { l.iter().any(|&x| x != 0) }))
        }
        ReduceSum | ReduceProduct | ReduceMin | ReduceMax => {
            need(1)?;
            let sk = sk0()?;
            let bop = match op {
                ReduceSum => Add,
                ReduceProduct => Mul,
                ReduceMin => Min,
                _ => Max,
            };
            let l = lanes(&ops[0])?;
            let mut acc = l[0];
            for &x in &l[1..] {
                acc = binop(bop, sk, acc, x)?;
            }
            Ok(Val::S(acc))
        }
        Dot | LengthSquared | Length => {
            let sk = sk0()?;
            let a = lanes(&ops[0])?;
            let b = if op == Dot { lanes(&ops[1])? } else { a.clone() };
            let d2 = dot(sk, &a, &b)?;
            Ok(Val::S(if op == Length { unop(Sqrt, sk, d2)? } else { d2 }))
        }
        Normalize => {
            let sk = sk0()?;
            let a = lanes(&ops[0])?;
            let len = unop(Sqrt, sk, dot(sk, &a, &a)?)?;
            Ok(from_lanes(a.iter().map(|&x| binop(Div, sk, x, len)).collect::<R<_>>()?))
        }
        Cross => {
            need(2)?;
            let sk = sk0()?;
            let (a, b) = (lanes(&ops[0])?, lanes(&ops[1])?);
            if a.len() != 3 || b.len() != 3 {
                return Err("cross needs 3-lane vectors".into());
            }
            let c = |i: usize, j: usize| -> R<u64> {
                binop(Sub, sk, binop(Mul, sk, a[i], b[j])?, binop(Mul, sk, a[j], b[i])?)
            };
            Ok(from_lanes(vec![c(1, 2)?, c(2, 0)?, c(0, 1)?]))
        }
        Faceforward => {
            need(3)?;
            let sk = sk0()?;
            let (n, i, nref) = (lanes(&ops[0])?, lanes(&ops[1])?, lanes(&ops[2])?);
            let dn = dot(sk, &nref, &i)?;
            if cmp(Lt, sk, dn, arith::from_f64(sk, 0.0))? {
                Ok(ops[0].clone())
            } else {
                Ok(from_lanes(n.iter().map(|&x| unop(Neg, sk, x)).collect::<R<_>>()?))
            }
        }
        Reflect => {
            need(2)?;
            let sk = sk0()?;
            let (i, n) = (lanes(&ops[0])?, lanes(&ops[1])?);
            let two_d = binop(Mul, sk, arith::from_f64(sk, 2.0), dot(sk, &n, &i)?)?;
            let r = i.iter().zip(&n).map(|(&x, &y)| binop(Sub, sk, x, binop(Mul, sk, two_d, y)?)).collect::<R<_>>()?;
            Ok(from_lanes(r))
        }
        MatrixTranspose => {
            let a = mat(&ops[0])?;
            let n = a.len();
            Ok(from_mat((0..n).map(|c| (0..n).map(|r| a[r][c]).collect()).collect()))
        }
        MatrixLinalgMul | OuterProduct => {
            need(2)?;
            let sk = sk0()?;
            let (ta, tb) = (ty_of(m, f, d, 0), ty_of(m, f, d, 1));
            let is_mat = |t| matches!(types.get(t), Type::Matrix { .. });
            let (am, bm) = (is_mat(ta), is_mat(tb));
            if op == OuterProduct {
                // a * transpose(b) (vectors) or A * transpose(B) (matrices).
                let (a, b) =
                    if am { (mat(&ops[0])?, mat(&ops[1])?) } else { (vec![lanes(&ops[0])?], vec![lanes(&ops[1])?]) };
                let rows = a[0].len();
                let cols = b[0].len();
                let mut out = vec![vec![0u64; rows]; cols];
                for (j, col) in out.iter_mut().enumerate() {
                    for (i, e) in col.iter_mut().enumerate() {
                        let ar: Vec<u64> = a.iter().map(|c| c[i]).collect();
                        let br: Vec<u64> = b.iter().map(|c| c[j]).collect();
                        *e = dot(sk, &ar, &br)?;
                    }
                }
                return Ok(from_mat(out));
            }
            match (am, bm) {
                (true, true) => {
                    let (a, b) = (mat(&ops[0])?, mat(&ops[1])?);
                    if a.len() != b.len() {
                        return Err("matrix dimensions differ".into());
                    }
                    let n = a.len();
                    let mut out = vec![vec![0u64; n]; n];
                    for (j, col) in out.iter_mut().enumerate() {
                        for (i, e) in col.iter_mut().enumerate() {
                            let row: Vec<u64> = a.iter().map(|c| c[i]).collect();
                            *e = dot(sk, &row, &b[j])?;
                        }
                    }
                    Ok(from_mat(out))
                }
                (true, false) => {
                    let (a, v) = (mat(&ops[0])?, lanes(&ops[1])?);
                    let n = a.len();
                    let r = (0..n)
                        .map(|i| {
                            let row: Vec<u64> = a.iter().map(|c| c[i]).collect();
                            dot(sk, &row, &v)
                        })
                        .collect::<R<_>>()?;
                    Ok(from_lanes(r))
                }
                (false, true) => {
                    let (v, b) = (lanes(&ops[0])?, mat(&ops[1])?);
                    Ok(from_lanes(b.iter().map(|c| dot(sk, &v, c)).collect::<R<_>>()?))
                }
                (false, false) => Err("matrix_linalg_mul needs a matrix operand".into()),
            }
        }
        MatrixDeterminant => {
            let sk = sk0()?;
            let a = to_f64_mat(sk, &mat(&ops[0])?)?;
            Ok(Val::S(arith::from_f64(sk, det(&a))))
        }
        MatrixInverse => {
            let sk = sk0()?;
            let a = to_f64_mat(sk, &mat(&ops[0])?)?;
            let inv = inverse(&a);
            Ok(from_mat(inv.iter().map(|c| c.iter().map(|&x| arith::from_f64(sk, x)).collect()).collect()))
        }
        Aggregate => Ok(Val::agg(ops.to_vec())),
        Shuffle => {
            need(1)?;
            let src = ops[0].members()?;
            let mut out = Vec::with_capacity(ops.len() - 1);
            for (k, l) in ops[1..].iter().enumerate() {
                let i = index_value(m, f, d, k + 1, l)?;
                out.push(src.get(i as usize).ok_or_else(|| format!("shuffle lane {i} out of bounds"))?.clone());
            }
            // One lane selected gives the element type (`shuffle_lanes`), a scalar.
            match <[Val; 1]>::try_from(out) {
                Ok([one]) => Ok(one),
                Err(out) => Ok(Val::agg(out)),
            }
        }
        Extract => {
            need(1)?;
            let mut v = &ops[0];
            for (k, iv) in ops[1..].iter().enumerate() {
                let i = index_value(m, f, d, k + 1, iv)?;
                let mem = v.members()?;
                v = mem.get(i as usize).ok_or_else(|| format!("index {i} out of bounds (length {})", mem.len()))?;
            }
            Ok(v.clone())
        }
        Insert => {
            need(2)?;
            let path =
                ops[2..].iter().enumerate().map(|(k, iv)| index_value(m, f, d, k + 2, iv)).collect::<R<Vec<u64>>>()?;
            let mut out = ops[0].clone();
            insert_at(&mut out, &path, ops[1].clone())?;
            Ok(out)
        }
        CastStatic => {
            need(1)?;
            let from = sk0()?;
            let to = sk_of(types, d.ty)?;
            map1(&ops[0], &mut |x| Ok(arith::cast_static(from, to, x)))
        }
        CastBitwise => {
            need(1)?;
            let (from_ty, to_ty) = (ty_of(m, f, d, 0), d.ty);
            let (fs, ts) = (sk_of(types, from_ty)?, sk_of(types, to_ty)?);
            let bytes = arith::pack_lanes(&lanes(&ops[0])?, fs.bits());
            let out = arith::unpack_lanes(&bytes, ts.bits());
            if out.len() as u32 != types.lanes(to_ty) || bytes.len() as u32 * 8 != ts.bits() * types.lanes(to_ty) {
                return Err("cast.bitwise between types of different sizes".into());
            }
            Ok(if matches!(types.get(to_ty), Type::Vector { .. }) { from_lanes(out) } else { Val::S(out[0]) })
        }
        _ => Err(match super::semantics::semantics(op) {
            super::semantics::Semantics::Refused(why) => format!("the interpreter does not support `{op}`: {why}"),
            _ => format!("the interpreter does not support `{op}`"),
        }),
    }
}

/// The value of index operand `k` as an unsigned position (negative: error).
pub(crate) fn index_value(m: &Module, f: &Function, d: &InstCore, k: usize, v: &Val) -> R<u64> {
    super::precision::certain(v, "an index")?;
    let b = v.bits()?;
    match scalar_kind(&m.types, ty_of(m, f, d, k)) {
        Some(Sk::Int { bits, signed: true }) if sext(b, bits) < 0 => Err(format!("negative index {}", sext(b, bits))),
        Some(Sk::Int { bits, .. }) => Ok(mask(b, bits)),
        _ => Err("index operand is not an integer".into()),
    }
}

fn insert_at(v: &mut Val, path: &[u64], x: Val) -> R<()> {
    let Some((&i, rest)) = path.split_first() else {
        *v = x;
        return Ok(());
    };
    match v {
        Val::A(m) => {
            let len = m.len();
            let slot = std::rc::Rc::make_mut(m)
                .get_mut(i as usize)
                .ok_or_else(|| format!("index {i} out of bounds (length {len})"))?;
            insert_at(slot, rest, x)
        }
        _ => Err("insert path goes through a scalar".into()),
    }
}

fn to_f64_mat(sk: Sk, a: &[Vec<u64>]) -> R<Vec<Vec<f64>>> {
    a.iter()
        .map(|c| c.iter().map(|&x| arith::to_f64(sk, x).ok_or_else(|| "matrix of non-floats".to_string())).collect())
        .collect()
}

/// Determinant by cofactor expansion along the first column (f64).
fn det(a: &[Vec<f64>]) -> f64 {
    let n = a.len();
    if n == 1 {
        return a[0][0];
    }
    if n == 2 {
        return a[0][0] * a[1][1] - a[1][0] * a[0][1];
    }
    let mut s = 0.0;
    for r in 0..n {
        let minor: Vec<Vec<f64>> =
            a[1..].iter().map(|c| c.iter().enumerate().filter(|(i, _)| *i != r).map(|(_, &x)| x).collect()).collect();
        let sign = if r % 2 == 0 { 1.0 } else { -1.0 };
        s += sign * a[0][r] * det(&minor);
    }
    s
}

/// Inverse as adjugate / determinant (f64; a singular matrix gives inf/NaN).
fn inverse(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = a.len();
    let d = det(a);
    let mut out = vec![vec![0.0; n]; n];
    for (c, col) in out.iter_mut().enumerate() {
        for (r, e) in col.iter_mut().enumerate() {
            // inv[c][r] (column c, row r) = cofactor(row c, col r) / det
            let minor: Vec<Vec<f64>> = a
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != r)
                .map(|(_, colv)| colv.iter().enumerate().filter(|(i, _)| *i != c).map(|(_, &x)| x).collect())
                .collect();
            let sign = if (r + c) % 2 == 0 { 1.0 } else { -1.0 };
            *e = sign * det(&minor) / d;
        }
    }
    out
}
