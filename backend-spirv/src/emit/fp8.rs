//! FP8 (OCP E4M3 and E5M2) without an FP8 SPIR-V type.
//!
//! In XIR, FP8 values are for transport and conversion only (no arithmetic:
//! the interpreter refuses it and the handoff rejects it). Vulkan 1.2 has no
//! FP8 type the bundled validator accepts, so an FP8 value travels as its
//! `u8` bits (`types.rs` maps the shape), which keeps loads, stores,
//! constants (exact bits), selects, Phis and aggregates unchanged. Only
//! `cast.static` needs the format, and goes through f32:
//!
//! - decode: FP8 bits -> f32 exactly (every FP8 value is an f32), rebuilt
//!   with integer operations; subnormals as `mantissa * 2^(1-bias-m)`;
//! - encode: f32 -> FP8 rounding to nearest even, with the interpreter's
//!   overflow rule (past the largest finite code: infinity for E5M2, NaN for
//!   E4M3) and NaN to the format's NaN, signs kept. Normal and subnormal
//!   results both round on the source's bits with integer operations (no
//!   float rounding instruction, whose f64 form a driver got wrong).
//!
//! Casts from other types reach f32 first (exactly: f16, bool and 32-bit
//! or narrower integers, whose values past 2^24 overflow FP8 anyway), or f64
//! for f64 and 64-bit integers, as the interpreter does: an f64 can lie
//! arbitrarily close to an FP8 midpoint, so rounding it to f32 first could
//! make a false tie.

use rspirv::spirv::{Op, Word};
use xir::{FloatFormat, Module, Type, TypeId};

use super::instructions::ids;
use super::{EResult, Emitter, ScalarKind, Shape};

/// The parameters of one FP8 format (the interpreter's `fp8::Format`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Format {
    mant: u32,
    bias: u32,
    /// Largest finite code (positive).
    max_code: u64,
    /// Code produced past it (positive): infinity for E5M2, NaN for E4M3.
    overflow: u64,
    nan: u64,
    has_inf: bool,
}

const E4M3: Format = Format { mant: 3, bias: 7, max_code: 0x7e, overflow: 0x7f, nan: 0x7f, has_inf: false };
const E5M2: Format = Format { mant: 2, bias: 15, max_code: 0x7b, overflow: 0x7c, nan: 0x7e, has_inf: true };

/// The FP8 format of a scalar or vector type, if it is one.
pub(crate) fn format_of(m: &Module, ty: TypeId) -> Option<Format> {
    match m.types.get(m.types.scalar_of(ty)) {
        Type::Float(FloatFormat::E4M3) => Some(E4M3),
        Type::Float(FloatFormat::E5M2) => Some(E5M2),
        _ => None,
    }
}

impl Emitter<'_> {
    /// `cast.static` with FP8 on either side (or both).
    pub(crate) fn fp8_cast(&mut self, from_ty: TypeId, to_ty: TypeId, v: Word, rid: Option<Word>) -> EResult<Word> {
        let m = self.m;
        let (from, to) = (self.shape(from_ty)?, self.shape(to_ty)?);
        // f64 and 64-bit integers go through f64: an f64 can lie arbitrarily
        // close to an FP8 rounding midpoint, so rounding it to f32 first
        // could create a false tie. Everything narrower is exact in f32
        // (integers past 2^24 overflow FP8 either way).
        let wide = from.bits() == 64 && format_of(m, from_ty).is_none();
        let mid = from.with_scalar(ScalarKind::Float { bits: if wide { 64 } else { 32 } });
        let x = match format_of(m, from_ty) {
            Some(f) => self.fp8_decode(f, from, v)?,
            None => self.convert(from, mid, v, None)?,
        };
        match format_of(m, to_ty) {
            Some(f) => self.fp8_encode(f, mid, x, rid),
            None => self.convert(mid, to, x, rid),
        }
    }

    /// The f32 value of FP8 bits (`u8` lanes of shape `s`).
    fn fp8_decode(&mut self, f: Format, s: Shape, v: Word) -> EResult<Word> {
        let us = s.with_scalar(ScalarKind::Int { bits: 32, signed: false });
        let fs = s.with_scalar(ScalarKind::Float { bits: 32 });
        let (ut, ft, bt) = (self.shape_ty(us), self.shape_ty(fs), self.shape_ty(s.with_scalar(ScalarKind::Bool)));
        let k = |e: &mut Self, c: u64| e.splat(us, c);
        let bin = |e: &mut Self, op: Op, x: Word, y: Word| e.op(op, Some(ut), None, ids(&[x, y]));
        let u = self.op(Op::UConvert, Some(ut), None, ids(&[v]))?;
        let (c7f, c80, c24) = (k(self, 0x7f), k(self, 0x80), k(self, 24));
        let mag = bin(self, Op::BitwiseAnd, u, c7f)?;
        let sign8 = bin(self, Op::BitwiseAnd, u, c80)?;
        let sign = bin(self, Op::ShiftLeftLogical, sign8, c24)?;
        let (cm, cmask) = (k(self, u64::from(f.mant)), k(self, (1u64 << f.mant) - 1));
        let exponent = bin(self, Op::ShiftRightLogical, mag, cm)?;
        let mantissa = bin(self, Op::BitwiseAnd, mag, cmask)?;
        // normal: rebias the exponent, widen the mantissa
        let rebias = k(self, u64::from(127 - f.bias));
        let e32 = bin(self, Op::IAdd, exponent, rebias)?;
        let c23 = k(self, 23);
        let e_bits = bin(self, Op::ShiftLeftLogical, e32, c23)?;
        let shift = k(self, u64::from(23 - f.mant));
        let m_bits = bin(self, Op::ShiftLeftLogical, mantissa, shift)?;
        let normal = bin(self, Op::BitwiseOr, e_bits, m_bits)?;
        // subnormal and zero: mantissa * 2^(1 - bias - m), exact
        let mf = self.op(Op::ConvertUToF, Some(ft), None, ids(&[mantissa]))?;
        let scale = self.float_splat(fs, 2f64.powi(1 - f.bias as i32 - f.mant as i32));
        let tiny_f = self.op(Op::FMul, Some(ft), None, ids(&[mf, scale]))?;
        let tiny = self.op(Op::Bitcast, Some(ut), None, ids(&[tiny_f]))?;
        let zero = k(self, 0);
        let is_tiny = self.op(Op::IEqual, Some(bt), None, ids(&[exponent, zero]))?;
        let finite = self.op(Op::Select, Some(ut), None, ids(&[is_tiny, tiny, normal]))?;
        // past the largest finite code: infinity (E5M2's overflow code) or NaN
        let (inf, nan) = (k(self, 0x7f80_0000), k(self, 0x7fc0_0000));
        let special = if f.has_inf {
            let ov = k(self, f.overflow);
            let is_inf = self.op(Op::IEqual, Some(bt), None, ids(&[mag, ov]))?;
            self.op(Op::Select, Some(ut), None, ids(&[is_inf, inf, nan]))?
        } else {
            nan
        };
        let max = k(self, f.max_code);
        let is_special = self.op(Op::UGreaterThan, Some(bt), None, ids(&[mag, max]))?;
        let magnitude = self.op(Op::Select, Some(ut), None, ids(&[is_special, special, finite]))?;
        let bits = bin(self, Op::BitwiseOr, magnitude, sign)?;
        self.op(Op::Bitcast, Some(ft), None, ids(&[bits]))
    }

    /// FP8 bits (`u8` lanes) of an f32 or f64 value of shape `s`, rounded
    /// to nearest even (the integer work is done at the float's width).
    fn fp8_encode(&mut self, f: Format, s: Shape, x: Word, rid: Option<Word>) -> EResult<Word> {
        let w = s.bits();
        let (mant, src_bias) = if w == 64 { (52u32, 1023u64) } else { (23, 127) };
        let us = s.with_scalar(ScalarKind::Int { bits: w, signed: false });
        let is = s.with_scalar(ScalarKind::Int { bits: w, signed: true });
        let (ut, it) = (self.shape_ty(us), self.shape_ty(is));
        let bt = self.shape_ty(s.with_scalar(ScalarKind::Bool));
        let out_t = self.shape_ty(s.with_scalar(ScalarKind::Int { bits: 8, signed: false }));
        let k = |e: &mut Self, c: u64| e.splat(us, c);
        let bin = |e: &mut Self, op: Op, a: Word, b: Word| e.op(op, Some(ut), None, ids(&[a, b]));
        let cmp = |e: &mut Self, op: Op, a: Word, b: Word| e.op(op, Some(bt), None, ids(&[a, b]));
        let sel = |e: &mut Self, c: Word, a: Word, b: Word| e.op(Op::Select, Some(ut), None, ids(&[c, a, b]));
        let b = self.op(Op::Bitcast, Some(ut), None, ids(&[x]))?;
        let (c_top, c80, cabs) = (k(self, u64::from(w - 8)), k(self, 0x80), k(self, (1u64 << (w - 1)) - 1));
        let top = bin(self, Op::ShiftRightLogical, b, c_top)?;
        let sign8 = bin(self, Op::BitwiseAnd, top, c80)?;
        let a_bits = bin(self, Op::BitwiseAnd, b, cabs)?;
        let inf_bits = k(self, ((1u64 << (w - 1 - mant)) - 1) << mant);
        let is_nan = cmp(self, Op::UGreaterThan, a_bits, inf_bits)?;
        // normal results: rebias and round on the source's bits
        let (c_mant, mmask) = (k(self, u64::from(mant)), k(self, (1u64 << mant) - 1));
        let e_src = bin(self, Op::ShiftRightLogical, a_bits, c_mant)?;
        let mantissa = bin(self, Op::BitwiseAnd, a_bits, mmask)?;
        let e_i = self.op(Op::Bitcast, Some(it), None, ids(&[e_src]))?;
        let rebias = self.splat(is, src_bias - u64::from(f.bias));
        let eb = self.op(Op::ISub, Some(it), None, ids(&[e_i, rebias]))?;
        let one_i = self.splat(is, 1);
        let is_normal = cmp(self, Op::SGreaterThanEqual, eb, one_i)?;
        let e_limit = self.splat(is, 1u64 << (7 - f.mant));
        let too_big = cmp(self, Op::SGreaterThanEqual, eb, e_limit)?;
        let eb_u = self.op(Op::Bitcast, Some(ut), None, ids(&[eb]))?;
        let cm = k(self, u64::from(f.mant));
        let e_code = bin(self, Op::ShiftLeftLogical, eb_u, cm)?;
        let drop = k(self, u64::from(mant - f.mant));
        let m_code = bin(self, Op::ShiftRightLogical, mantissa, drop)?;
        let truncated = bin(self, Op::BitwiseOr, e_code, m_code)?;
        let rest_mask = k(self, (1u64 << (mant - f.mant)) - 1);
        let rest = bin(self, Op::BitwiseAnd, mantissa, rest_mask)?;
        let half = k(self, 1u64 << (mant - f.mant - 1));
        let normal = self.round_half_even(us, truncated, rest, half)?;
        // subnormal results: the significand (implicit bit set) shifted
        // right by `mant - f.mant + 1 - eb`, rounded to even in integers.
        // The shift is capped at `mant + 2`, past which every significand
        // rounds to zero (this also covers zero and the source's own
        // subnormals, all far below half the smallest FP8 subnormal), and
        // normal lanes use the cap so that no lane shifts by its width.
        let implicit = k(self, 1u64 << mant);
        let sig = bin(self, Op::BitwiseOr, mantissa, implicit)?;
        let base = self.splat(is, u64::from(mant - f.mant + 1));
        let shift_i = self.op(Op::ISub, Some(it), None, ids(&[base, eb]))?;
        let shift_u = self.op(Op::Bitcast, Some(ut), None, ids(&[shift_i]))?;
        let cap = k(self, u64::from(mant + 2));
        let below_cap = cmp(self, Op::ULessThan, shift_u, cap)?;
        let shift = sel(self, below_cap, shift_u, cap)?;
        let shift = sel(self, is_normal, cap, shift)?;
        let one = k(self, 1);
        let q = bin(self, Op::ShiftRightLogical, sig, shift)?;
        let unit = bin(self, Op::ShiftLeftLogical, one, shift)?;
        let low_mask = bin(self, Op::ISub, unit, one)?;
        let rest = bin(self, Op::BitwiseAnd, sig, low_mask)?;
        let half = bin(self, Op::ShiftRightLogical, unit, one)?;
        let tiny = self.round_half_even(us, q, rest, half)?;
        let code = sel(self, is_normal, normal, tiny)?;
        // past the largest finite code (also infinities), then NaN
        let max = k(self, f.max_code);
        let over_max = cmp(self, Op::UGreaterThan, code, max)?;
        let overflows = self.op(Op::LogicalOr, Some(bt), None, ids(&[too_big, over_max]))?;
        let overflow = k(self, f.overflow);
        let code = sel(self, overflows, overflow, code)?;
        let nan = k(self, f.nan);
        let code = sel(self, is_nan, nan, code)?;
        let signed = bin(self, Op::BitwiseOr, code, sign8)?;
        self.op(Op::UConvert, Some(out_t), rid, ids(&[signed]))
    }

    /// `q` rounded to nearest even by its dropped bits `rest`, of which
    /// `half` is the midpoint (unsigned lanes of shape `us`). Integer-only,
    /// so that every driver rounds alike: lavapipe on LLVM 15 returned 0
    /// from an f64 `RoundEven` of a value just above 0.5.
    fn round_half_even(&mut self, us: Shape, q: Word, rest: Word, half: Word) -> EResult<Word> {
        let ut = self.shape_ty(us);
        let bt = self.shape_ty(us.with_scalar(ScalarKind::Bool));
        let above = self.op(Op::UGreaterThan, Some(bt), None, ids(&[rest, half]))?;
        let tie = self.op(Op::IEqual, Some(bt), None, ids(&[rest, half]))?;
        let one = self.splat(us, 1);
        let low = self.op(Op::BitwiseAnd, Some(ut), None, ids(&[q, one]))?;
        let odd = self.op(Op::IEqual, Some(bt), None, ids(&[low, one]))?;
        let tie_up = self.op(Op::LogicalAnd, Some(bt), None, ids(&[tie, odd]))?;
        let up = self.op(Op::LogicalOr, Some(bt), None, ids(&[above, tie_up]))?;
        let zero = self.splat(us, 0);
        let inc = self.op(Op::Select, Some(ut), None, ids(&[up, one, zero]))?;
        self.op(Op::IAdd, Some(ut), None, ids(&[q, inc]))
    }
}
