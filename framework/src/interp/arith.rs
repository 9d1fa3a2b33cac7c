//! Exact scalar arithmetic on raw bits: wrapping integers, IEEE floats
//! (f32/f64 natively, f16 computed in f64 and rounded once), comparisons,
//! and static / bitwise casts including the OCP FP8 formats. Every rule the
//! reference leaves open is fixed here and listed in `docs/inputs-format.md`.

use xir_spec::Opcode;

use super::value::Sk;

pub(crate) type R<T> = Result<T, String>;

pub(crate) fn mask(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// Sign-extend the low `bits` of `v`.
pub(crate) fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

/// A float format computed natively (f32, f64).
pub(crate) trait Fl: Copy + PartialOrd {
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
}

macro_rules! fl_impl {
    ($t:ty) => {
        impl Fl for $t {
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
        }
    };
}
fl_impl!(f32);
fl_impl!(f64);

/// IEEE minNum with a fixed choice for signed zeros: min(-0, +0) = -0.
pub(crate) fn min_num<F: Fl>(a: F, b: F) -> F {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// IEEE maxNum with a fixed choice for signed zeros: max(-0, +0) = +0.
pub(crate) fn max_num<F: Fl>(a: F, b: F) -> F {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a > b || (a == b && !a.is_sign_negative()) {
        a
    } else {
        b
    }
}

fn fp8_arith() -> String {
    "fp8 arithmetic is not supported (fp8 values are for transport and conversion only)".into()
}

/// Apply `f32`/`f64` implementations of a float operation to bits of `sk`.
macro_rules! float_dispatch {
    ($sk:expr, [$($x:ident),*], |$($p:ident),*| $body:expr) => {{
        match $sk {
            Sk::F32 => {
                $(let $p = f32::from_bits($x as u32);)*
                let r: f32 = $body;
                Ok(r.to_bits() as u64)
            }
            Sk::F64 => {
                $(let $p = f64::from_bits($x);)*
                let r: f64 = $body;
                Ok(r.to_bits())
            }
            Sk::F16 => {
                $(let $p = half::f16::from_bits($x as u16).to_f64();)*
                let r: f64 = $body;
                Ok(half::f16::from_f64(r).to_bits() as u64)
            }
            _ => Err(fp8_arith()),
        }
    }};
}

/// Unary arithmetic (neg, bit_not, abs, math functions, bit counts).
pub(crate) fn unop(op: Opcode, sk: Sk, x: u64) -> R<u64> {
    use Opcode::*;
    match sk {
        Sk::Bool => match op {
            BitNot => Ok(x ^ 1),
            _ => Err(format!("`{op}` is not defined on bool")),
        },
        Sk::Int { bits, signed } => {
            let r = match op {
                Neg => x.wrapping_neg(),
                BitNot => !x,
                Abs if signed => sext(x, bits).wrapping_abs() as u64,
                Abs => x,
                Clz | Ctz | Popcount | Reverse if bits != 32 || signed => {
                    return Err(format!("`{op}` is defined on u32 only"))
                }
                Clz => (x as u32).leading_zeros() as u64,
                Ctz => (x as u32).trailing_zeros() as u64,
                Popcount => (x as u32).count_ones() as u64,
                Reverse => (x as u32).reverse_bits() as u64,
                _ => return Err(format!("`{op}` is not defined on integers")),
            };
            Ok(mask(r, bits))
        }
        _ => {
            if matches!(op, Neg | Abs) && sk != Sk::E4M3 && sk != Sk::E5M2 {
                // Sign-bit operations: exact on every payload.
                let sign = 1u64 << (sk.bits() - 1);
                return Ok(if op == Neg { x ^ sign } else { x & !sign });
            }
            macro_rules! m {
                ($f:ident) => {
                    float_dispatch!(sk, [x], |a| num::$f(a))
                };
            }
            match op {
                Sin => m!(sin),
                Cos => m!(cos),
                Tan => m!(tan),
                Asin => m!(asin),
                Acos => m!(acos),
                Atan => m!(atan),
                Sinh => m!(sinh),
                Cosh => m!(cosh),
                Tanh => m!(tanh),
                Asinh => m!(asinh),
                Acosh => m!(acosh),
                Atanh => m!(atanh),
                Exp => m!(exp),
                Exp2 => m!(exp2),
                Exp10 => m!(exp10),
                Log => m!(ln),
                Log2 => m!(log2),
                Log10 => m!(log10),
                Sqrt => m!(sqrt),
                Rsqrt => m!(rsqrt),
                Ceil => m!(ceil),
                Floor => m!(floor),
                Trunc => m!(trunc),
                Round => m!(round),
                Rint => m!(rint),
                Fract => m!(fract),
                Saturate => m!(saturate),
                _ => Err(format!("`{op}` is not defined on floats")),
            }
        }
    }
}

/// Per-format math functions with one name for f32 and f64.
mod num {
    pub trait M: Sized {
        fn sin(self) -> Self;
        fn cos(self) -> Self;
        fn tan(self) -> Self;
        fn asin(self) -> Self;
        fn acos(self) -> Self;
        fn atan(self) -> Self;
        fn sinh(self) -> Self;
        fn cosh(self) -> Self;
        fn tanh(self) -> Self;
        fn asinh(self) -> Self;
        fn acosh(self) -> Self;
        fn atanh(self) -> Self;
        fn exp(self) -> Self;
        fn exp2(self) -> Self;
        fn exp10(self) -> Self;
        fn ln(self) -> Self;
        fn log2(self) -> Self;
        fn log10(self) -> Self;
        fn sqrt(self) -> Self;
        fn rsqrt(self) -> Self;
        fn ceil(self) -> Self;
        fn floor(self) -> Self;
        fn trunc(self) -> Self;
        fn round(self) -> Self;
        fn rint(self) -> Self;
        fn fract(self) -> Self;
        fn saturate(self) -> Self;
        fn fmod(self, o: Self) -> Self;
    }
    macro_rules! m_impl {
        ($t:ty) => {
            impl M for $t {
                fn sin(self) -> Self {
                    <$t>::sin(self)
                }
                fn cos(self) -> Self {
                    <$t>::cos(self)
                }
                fn tan(self) -> Self {
                    <$t>::tan(self)
                }
                fn asin(self) -> Self {
                    <$t>::asin(self)
                }
                fn acos(self) -> Self {
                    <$t>::acos(self)
                }
                fn atan(self) -> Self {
                    <$t>::atan(self)
                }
                fn sinh(self) -> Self {
                    <$t>::sinh(self)
                }
                fn cosh(self) -> Self {
                    <$t>::cosh(self)
                }
                fn tanh(self) -> Self {
                    <$t>::tanh(self)
                }
                fn asinh(self) -> Self {
                    <$t>::asinh(self)
                }
                fn acosh(self) -> Self {
                    <$t>::acosh(self)
                }
                fn atanh(self) -> Self {
                    <$t>::atanh(self)
                }
                fn exp(self) -> Self {
                    <$t>::exp(self)
                }
                fn exp2(self) -> Self {
                    <$t>::exp2(self)
                }
                fn exp10(self) -> Self {
                    (10.0 as $t).powf(self)
                }
                fn ln(self) -> Self {
                    <$t>::ln(self)
                }
                fn log2(self) -> Self {
                    <$t>::log2(self)
                }
                fn log10(self) -> Self {
                    <$t>::log10(self)
                }
                fn sqrt(self) -> Self {
                    <$t>::sqrt(self)
                }
                fn rsqrt(self) -> Self {
                    1.0 / <$t>::sqrt(self)
                }
                fn ceil(self) -> Self {
                    <$t>::ceil(self)
                }
                fn floor(self) -> Self {
                    <$t>::floor(self)
                }
                fn trunc(self) -> Self {
                    <$t>::trunc(self)
                }
                fn round(self) -> Self {
                    <$t>::round(self)
                }
                fn rint(self) -> Self {
                    <$t>::round_ties_even(self)
                }
                fn fract(self) -> Self {
                    self - <$t>::floor(self)
                }
                fn saturate(self) -> Self {
                    super::min_num(super::max_num(self, 0.0), 1.0)
                }
                fn fmod(self, o: Self) -> Self {
                    self % o
                }
            }
        };
    }
    m_impl!(f32);
    m_impl!(f64);
    macro_rules! fwd {
        ($($n:ident),*) => { $(pub fn $n<T: M>(x: T) -> T { x.$n() })* };
    }
    fwd!(
        sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, exp, exp2, exp10, ln, log2, log10,
        sqrt, rsqrt, ceil, floor, trunc, round, rint, fract, saturate
    );
}
use num::M;

/// Binary arithmetic producing a value of the operands' type.
pub(crate) fn binop(op: Opcode, sk: Sk, a: u64, b: u64) -> R<u64> {
    use Opcode::*;
    match sk {
        Sk::Bool => match op {
            BitAnd => Ok(a & b),
            BitOr => Ok(a | b),
            BitXor => Ok(a ^ b),
            Min => Ok(a & b),
            Max => Ok(a | b),
            _ => Err(format!("`{op}` is not defined on bool")),
        },
        Sk::Int { bits, signed } => {
            let (sa, sb) = (sext(a, bits), sext(b, bits));
            let amt = (b % bits as u64) as u32;
            let r = match op {
                Add => a.wrapping_add(b),
                Sub => a.wrapping_sub(b),
                Mul => a.wrapping_mul(b),
                Div | Mod if b == 0 => {
                    return Err(if op == Div { "integer division by zero" } else { "integer remainder by zero" }.into())
                }
                // SPIR-V leaves `OpSDiv` / `OpSRem` of MIN by -1 undefined.
                Div | Mod if signed && sb == -1 && sa == sext(1 << (bits - 1), bits) => {
                    let what = if op == Div { "division" } else { "remainder" };
                    return Err(format!("signed integer {what} overflows: {sa} by -1 (i{bits})"));
                }
                Div if signed => sa.wrapping_div(sb) as u64,
                Div => a / b,
                Mod if signed => sa.wrapping_rem(sb) as u64,
                Mod => a % b,
                BitAnd => a & b,
                BitOr => a | b,
                BitXor => a ^ b,
                Shl => a << amt,
                Shr if signed => (sa >> amt) as u64,
                Shr => a >> amt,
                Rotl | Rotr => {
                    let k = if op == Rotl { amt } else { (bits - amt) % bits };
                    if k == 0 {
                        a
                    } else {
                        (a << k) | (a >> (bits - k))
                    }
                }
                Min if signed => sa.min(sb) as u64,
                Min => a.min(b),
                Max if signed => sa.max(sb) as u64,
                Max => a.max(b),
                _ => return Err(format!("`{op}` is not defined on integers")),
            };
            Ok(mask(r, bits))
        }
        _ => match op {
            Add => float_dispatch!(sk, [a, b], |x, y| x + y),
            Sub => float_dispatch!(sk, [a, b], |x, y| x - y),
            Mul => float_dispatch!(sk, [a, b], |x, y| x * y),
            Div => float_dispatch!(sk, [a, b], |x, y| x / y),
            Mod => float_dispatch!(sk, [a, b], |x, y| x.fmod(y)),
            Min => float_dispatch!(sk, [a, b], |x, y| min_num(x, y)),
            Max => float_dispatch!(sk, [a, b], |x, y| max_num(x, y)),
            Atan2 => float_dispatch!(sk, [a, b], |x, y| x.atan2(y)),
            Pow => float_dispatch!(sk, [a, b], |x, y| x.powf(y)),
            Step => float_dispatch!(sk, [a, b], |e, x| if x < e { 0.0 } else { 1.0 }),
            Copysign if !matches!(sk, Sk::E4M3 | Sk::E5M2) => {
                let sign = 1u64 << (sk.bits() - 1);
                Ok((a & !sign) | (b & sign))
            }
            _ => Err(format!("`{op}` is not defined on floats")),
        },
    }
}

/// Three-operand arithmetic: clamp, lerp, smoothstep, fma.
pub(crate) fn ternop(op: Opcode, sk: Sk, a: u64, b: u64, c: u64) -> R<u64> {
    use Opcode::*;
    match op {
        Clamp => {
            let m = binop(Max, sk, a, b)?;
            binop(Min, sk, m, c)
        }
        Lerp => float_dispatch!(sk, [a, b, c], |x, y, t| x + t * (y - x)),
        Smoothstep => float_dispatch!(sk, [a, b, c], |e0, e1, x| {
            let t = ((x - e0) / (e1 - e0)).saturate();
            t * t * (3.0 - 2.0 * t)
        }),
        Fma => float_dispatch!(sk, [a, b, c], |x, y, z| x.mul_add(y, z)),
        _ => Err(format!("`{op}` is not a three-operand operation")),
    }
}

/// Comparisons: ordered for floats except `ne` (unordered).
pub(crate) fn cmp(op: Opcode, sk: Sk, a: u64, b: u64) -> R<bool> {
    use std::cmp::Ordering;
    use Opcode::*;
    let ord: Option<Ordering> = match sk {
        Sk::Bool => Some(a.cmp(&b)),
        Sk::Int { bits, signed: true } => Some(sext(a, bits).cmp(&sext(b, bits))),
        Sk::Int { .. } => Some(a.cmp(&b)),
        Sk::F32 => f32::from_bits(a as u32).partial_cmp(&f32::from_bits(b as u32)),
        Sk::F64 => f64::from_bits(a).partial_cmp(&f64::from_bits(b)),
        Sk::F16 => half::f16::from_bits(a as u16).partial_cmp(&half::f16::from_bits(b as u16)),
        Sk::E4M3 | Sk::E5M2 => return Err(fp8_arith()),
    };
    Ok(match (op, ord) {
        (Ne, None) => true,
        (_, None) => false,
        (Lt, Some(o)) => o == Ordering::Less,
        (Gt, Some(o)) => o == Ordering::Greater,
        (Le, Some(o)) => o != Ordering::Greater,
        (Ge, Some(o)) => o != Ordering::Less,
        (Eq, Some(o)) => o == Ordering::Equal,
        (Ne, Some(o)) => o != Ordering::Equal,
        _ => return Err(format!("`{op}` is not a comparison")),
    })
}

pub(crate) fn is_nan_bits(sk: Sk, x: u64) -> bool {
    to_f64(sk, x).is_some_and(f64::is_nan)
}

pub(crate) fn is_inf_bits(sk: Sk, x: u64) -> bool {
    to_f64(sk, x).is_some_and(f64::is_infinite)
}

/// The exact value of a float's bits as f64 (every format widens exactly).
pub(crate) fn to_f64(sk: Sk, x: u64) -> Option<f64> {
    Some(match sk {
        Sk::F16 => half::f16::from_bits(x as u16).to_f64(),
        Sk::F32 => f32::from_bits(x as u32) as f64,
        Sk::F64 => f64::from_bits(x),
        Sk::E4M3 => fp8::decode(fp8::E4M3, x as u8),
        Sk::E5M2 => fp8::decode(fp8::E5M2, x as u8),
        _ => return None,
    })
}

/// Round an f64 to the float format `sk` (round to nearest even).
pub(crate) fn from_f64(sk: Sk, v: f64) -> u64 {
    match sk {
        Sk::F16 => half::f16::from_f64(v).to_bits() as u64,
        Sk::F32 => (v as f32).to_bits() as u64,
        Sk::F64 => v.to_bits(),
        Sk::E4M3 => fp8::encode(fp8::E4M3, v) as u64,
        Sk::E5M2 => fp8::encode(fp8::E5M2, v) as u64,
        _ => 0,
    }
}

/// `cast.static` of one scalar.
pub(crate) fn cast_static(from: Sk, to: Sk, x: u64) -> u64 {
    match (from, to) {
        (_, Sk::Bool) => match from {
            Sk::Bool | Sk::Int { .. } => (x != 0) as u64,
            _ => (to_f64(from, x).unwrap_or(0.0) != 0.0) as u64,
        },
        (Sk::Bool, Sk::Int { .. }) => x,
        (Sk::Bool, _) => from_f64(to, x as f64),
        (Sk::Int { bits, signed }, Sk::Int { bits: tb, .. }) => {
            let wide = if signed { sext(x, bits) as u64 } else { x };
            mask(wide, tb)
        }
        (Sk::Int { bits, signed }, _) => match to {
            Sk::F32 if signed => (sext(x, bits) as f32).to_bits() as u64,
            Sk::F32 => (x as f32).to_bits() as u64,
            Sk::F64 if signed => (sext(x, bits) as f64).to_bits(),
            Sk::F64 => (x as f64).to_bits(),
            _ if signed => from_f64(to, sext(x, bits) as f64),
            _ => from_f64(to, x as f64),
        },
        (_, Sk::Int { bits, signed }) => {
            let v = to_f64(from, x).unwrap_or(0.0);
            let r = match (bits, signed) {
                (8, true) => v as i8 as u64,
                (8, false) => v as u8 as u64,
                (16, true) => v as i16 as u64,
                (16, false) => v as u16 as u64,
                (32, true) => v as i32 as u64,
                (32, false) => v as u32 as u64,
                (_, true) => v as i64 as u64,
                (_, false) => v as u64,
            };
            mask(r, bits)
        }
        (Sk::F64, Sk::F32) => (f64::from_bits(x) as f32).to_bits() as u64,
        _ if from == to => x,
        _ => from_f64(to, to_f64(from, x).unwrap_or(0.0)),
    }
}

/// The OCP FP8 formats (E4M3 without infinities, E5M2 IEEE-like).
pub(crate) mod fp8 {
    #[derive(Copy, Clone)]
    pub struct Format {
        pub mant: u32,
        pub bias: i32,
        /// Largest finite code (positive).
        pub max_code: u8,
        /// Code produced on overflow (positive): inf for E5M2, NaN for E4M3.
        pub overflow: u8,
        pub nan: u8,
        pub has_inf: bool,
    }
    pub const E4M3: Format = Format { mant: 3, bias: 7, max_code: 0x7e, overflow: 0x7f, nan: 0x7f, has_inf: false };
    pub const E5M2: Format = Format { mant: 2, bias: 15, max_code: 0x7b, overflow: 0x7c, nan: 0x7e, has_inf: true };

    pub fn decode(f: Format, b: u8) -> f64 {
        let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
        let mag = b & 0x7f;
        if mag > f.max_code {
            if f.has_inf && mag == f.overflow {
                return sign * f64::INFINITY;
            }
            return f64::NAN.copysign(sign);
        }
        sign * magnitude(f, mag)
    }

    fn magnitude(f: Format, code: u8) -> f64 {
        let e = (code >> f.mant) as i32;
        let m = (code & ((1 << f.mant) - 1)) as f64;
        let scale = (1u32 << f.mant) as f64;
        if e == 0 {
            m / scale * 2f64.powi(1 - f.bias)
        } else {
            (1.0 + m / scale) * 2f64.powi(e - f.bias)
        }
    }

    /// Round to nearest even; overflow gives inf (E5M2) or NaN (E4M3).
    pub fn encode(f: Format, v: f64) -> u8 {
        let sign = if v.is_sign_negative() { 0x80u8 } else { 0 };
        if v.is_nan() {
            return sign | f.nan;
        }
        let a = v.abs();
        // Codes are monotonic in magnitude: find the neighbours of `a`.
        let next_after_max = magnitude(f, f.max_code) + (magnitude(f, f.max_code) - magnitude(f, f.max_code - 1));
        let value = |c: u8| if c > f.max_code { next_after_max } else { magnitude(f, c) };
        let mut lo = 0u8;
        while lo < f.max_code + 1 && value(lo + 1) <= a {
            lo += 1;
        }
        let code = if value(lo) == a || lo > f.max_code {
            lo
        } else {
            let hi = lo + 1;
            let (dl, dh) = (a - value(lo), value(hi) - a);
            if dl < dh || (dl == dh && lo.is_multiple_of(2)) {
                lo
            } else {
                hi
            }
        };
        if code > f.max_code {
            sign | f.overflow
        } else {
            sign | code
        }
    }
}

/// Scalar lanes as little-endian bytes, each `bits` wide (for `cast.bitwise`).
pub(crate) fn pack_lanes(lanes: &[u64], bits: u32) -> Vec<u8> {
    let n = (bits / 8).max(1) as usize;
    lanes.iter().flat_map(|l| l.to_le_bytes().into_iter().take(n)).collect()
}

pub(crate) fn unpack_lanes(bytes: &[u8], bits: u32) -> Vec<u64> {
    let n = (bits / 8).max(1) as usize;
    bytes
        .chunks(n)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const I32: Sk = Sk::Int { bits: 32, signed: true };
    const U32: Sk = Sk::Int { bits: 32, signed: false };

    fn samples() -> Vec<u32> {
        let mut v = vec![0, 1, 2, 31, 32, 33, 63, 64, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0xdead_beef];
        let mut x = 0x1234_5678u32;
        for _ in 0..64 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            v.push(x);
        }
        v
    }

    #[test]
    fn integer_ops_match_rust_wrapping_semantics() {
        for &a in &samples() {
            for &b in &samples() {
                let (ia, ib) = (a as i32, b as i32);
                let bin = |op, sk| binop(op, sk, a as u64, b as u64).map(|r| r as u32);
                assert_eq!(bin(Opcode::Add, I32), Ok(ia.wrapping_add(ib) as u32));
                assert_eq!(bin(Opcode::Mul, U32), Ok(a.wrapping_mul(b)));
                assert_eq!(bin(Opcode::Shl, U32), Ok(a.wrapping_shl(b)));
                assert_eq!(bin(Opcode::Shr, U32), Ok(a.wrapping_shr(b)));
                assert_eq!(bin(Opcode::Shr, I32), Ok(ia.wrapping_shr(b) as u32));
                assert_eq!(bin(Opcode::Rotl, U32), Ok(a.rotate_left(b % 32)));
                assert_eq!(bin(Opcode::Rotr, U32), Ok(a.rotate_right(b % 32)));
                assert_eq!(bin(Opcode::Min, I32), Ok(ia.min(ib) as u32));
                if b != 0 {
                    assert_eq!(bin(Opcode::Div, I32).ok(), ia.checked_div(ib).map(|r| r as u32));
                    assert_eq!(bin(Opcode::Mod, I32).ok(), ia.checked_rem(ib).map(|r| r as u32));
                    assert_eq!(bin(Opcode::Div, U32).ok(), a.checked_div(b));
                } else {
                    assert!(bin(Opcode::Div, I32).is_err() && bin(Opcode::Mod, U32).is_err());
                }
            }
        }
    }

    #[test]
    fn signed_min_by_minus_one_is_an_error_at_every_width() {
        for bits in [8u32, 16, 32, 64] {
            let (min, minus_one) = (1u64 << (bits - 1), mask(u64::MAX, bits));
            let signed = Sk::Int { bits, signed: true };
            let lo = sext(min, bits);
            let msg = |what: &str| Err(format!("signed integer {what} overflows: {lo} by -1 (i{bits})"));
            assert_eq!(binop(Opcode::Div, signed, min, minus_one), msg("division"));
            assert_eq!(binop(Opcode::Mod, signed, min, minus_one), msg("remainder"));
            // Unsigned operands with the same bits divide normally.
            let unsigned = Sk::Int { bits, signed: false };
            assert_eq!(binop(Opcode::Div, unsigned, min, minus_one), Ok(0));
            assert_eq!(binop(Opcode::Mod, unsigned, min, minus_one), Ok(min));
            // MIN + 1 by -1 is defined.
            assert_eq!(binop(Opcode::Div, signed, min + 1, minus_one), Ok(mask(min - 1, bits)));
        }
    }

    #[test]
    fn fp8_codes_round_trip_and_decode_exactly() {
        for (f, sk) in [(fp8::E4M3, Sk::E4M3), (fp8::E5M2, Sk::E5M2)] {
            for c in 0..=255u8 {
                let v = fp8::decode(f, c);
                if v.is_nan() {
                    assert!(is_nan_bits(sk, c as u64));
                    continue;
                }
                assert_eq!(fp8::encode(f, v), c, "code {c:#04x} = {v}");
                // Conversions from f32 and f16 agree with the exact value.
                assert_eq!(cast_static(Sk::F32, sk, (v as f32).to_bits() as u64), c as u64);
            }
        }
        assert_eq!(fp8::decode(fp8::E4M3, 0x7e), 448.0);
        assert_eq!(fp8::decode(fp8::E4M3, 0x01), 2f64.powi(-9));
        assert_eq!(fp8::decode(fp8::E5M2, 0x7b), 57344.0);
        assert_eq!(fp8::decode(fp8::E5M2, 0x7c), f64::INFINITY);
        assert_eq!(fp8::decode(fp8::E5M2, 0x01), 2f64.powi(-16));
    }

    #[test]
    fn float_to_int_casts_saturate_and_map_nan_to_zero() {
        let f = |x: f32| (x.to_bits()) as u64;
        assert_eq!(cast_static(Sk::F32, I32, f(f32::NAN)), 0);
        assert_eq!(cast_static(Sk::F32, I32, f(-1e20)), i32::MIN as u32 as u64);
        assert_eq!(cast_static(Sk::F32, U32, f(-5.0)), 0);
        assert_eq!(cast_static(Sk::F32, Sk::Int { bits: 8, signed: true }, f(200.0)), 127);
        assert_eq!(cast_static(Sk::F32, Sk::Int { bits: 64, signed: false }, f(f32::INFINITY)), u64::MAX);
        // int -> float rounds to nearest even; i64 beyond 2^53 into f64 too.
        assert_eq!(
            cast_static(Sk::Int { bits: 64, signed: true }, Sk::F64, (1u64 << 53) + 1),
            ((1u64 << 53) as f64).to_bits()
        );
    }

    #[test]
    fn min_max_order_signed_zeros_and_skip_nan() {
        assert!(min_num(-0.0f32, 0.0).is_sign_negative() && min_num(0.0f32, -0.0).is_sign_negative());
        assert!(max_num(-0.0f32, 0.0).is_sign_positive() && max_num(0.0f32, -0.0).is_sign_positive());
        assert_eq!(min_num(f32::NAN, 2.0), 2.0);
        assert_eq!(max_num(3.0, f64::NAN), 3.0);
        assert!(min_num(f32::NAN, f32::NAN).is_nan());
    }
}
