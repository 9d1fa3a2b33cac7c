//! WGSL's data packing built-ins, written out with shifts, masks, clamps
//! and conversions (XIR has no packing opcodes), as the WGSL specification
//! defines each:
//!
//! - `pack4xU8` / `pack4xI8`: the low 8 bits of each lane, lane `i` at bit
//!   `8 i`; the `Clamp` forms clamp each lane into the byte's range first;
//!   `unpack4xU8` / `unpack4xI8` take the bytes back (sign-extended for
//!   `I8`); `dot4U8Packed` / `dot4I8Packed` multiply the unpacked lanes and
//!   add the products.
//! - `pack4x8unorm` / `pack2x16unorm`: `floor(0.5 + M * clamp(e, 0, 1))`
//!   with `M` = 255 / 65535; the `snorm` forms `floor(0.5 + M * clamp(e, -1,
//!   1))` with `M` = 127 / 32767, as two's complement fields.
//! - `unpack4x8unorm` / `unpack2x16unorm`: `f32(field) / M`; the `snorm`
//!   forms `max(f32(field) / M, -1)`.
//!
//! - `pack2x16float` / `unpack2x16float` / `quantizeToF16` convert to and
//!   from binary16 bit patterns with integer operations (an `f16` value
//!   would need the device's `shaderFloat16`, which the shader never asked
//!   for): to binary16 rounds to nearest even (a subnormal through `rint` of
//!   `|e| * 2^24`, which is exact), past the largest finite value gives
//!   infinity and a NaN a quiet NaN (WGSL leaves both indeterminate); from
//!   binary16 is exact.

use naga::MathFunction as M;
use xir::ir::{TypeId, TypeTable};
use xir_ast::*;
use xir_spec::Opcode;

use super::FnCx;

/// An `f32` literal's bits.
fn f32_bits(x: f32) -> u64 {
    u64::from(x.to_bits())
}

impl<'a> FnCx<'_, 'a, '_> {
    /// The packing built-in `fun` of `args`, of result type `ty`; `None`
    /// when `fun` is not one.
    pub(super) fn packing(
        &mut self,
        ty: TypeId,
        fun: M,
        args: &[ExprRef<'a>],
        span: naga::Span,
    ) -> Option<ExprRef<'a>> {
        let e = args[0];
        Some(match fun {
            M::Pack4xU8 => self.pack_bytes(e, span),
            M::Pack4xI8 => {
                let u = self.bitcast_lanes(e, TypeTable::U32, span);
                self.pack_bytes(u, span)
            }
            M::Pack4xU8Clamp => {
                let max = self.splat_bits(255, e.ty, span);
                let clamped = self.builtin(Opcode::Min, e.ty, vec![e, max], span);
                self.pack_bytes(clamped, span)
            }
            M::Pack4xI8Clamp => {
                let (lo, hi) =
                    (self.splat_bits(u64::from(-128i32 as u32), e.ty, span), self.splat_bits(127, e.ty, span));
                let clamped = self.builtin(Opcode::Clamp, e.ty, vec![e, lo, hi], span);
                let u = self.bitcast_lanes(clamped, TypeTable::U32, span);
                self.pack_bytes(u, span)
            }
            M::Unpack4xU8 => self.unpack_fields(e, 4, false, span),
            M::Unpack4xI8 => self.unpack_fields(e, 4, true, span),
            M::Dot4U8Packed | M::Dot4I8Packed => {
                let signed = fun == M::Dot4I8Packed;
                let (a, b) = (self.unpack_fields(e, 4, signed, span), self.unpack_fields(args[1], 4, signed, span));
                let product = self.mk(a.ty, ExprKind::Binary(BinaryOp::Mul, a, b), span);
                let mut sum = self.mk(ty, ExprKind::Member(product, 0), span);
                for i in 1..4 {
                    let lane = self.mk(ty, ExprKind::Member(product, i), span);
                    sum = self.mk(ty, ExprKind::Binary(BinaryOp::Add, sum, lane), span);
                }
                sum
            }
            M::Pack4x8unorm | M::Pack2x16unorm | M::Pack4x8snorm | M::Pack2x16snorm => {
                let (bits, signed) = match fun {
                    M::Pack4x8unorm => (8, false),
                    M::Pack2x16unorm => (16, false),
                    M::Pack4x8snorm => (8, true),
                    _ => (16, true),
                };
                let scale = if signed { (1u32 << (bits - 1)) - 1 } else { (1u32 << bits) - 1 };
                let lo = if signed { -1.0 } else { 0.0 };
                let (lo, hi) = (self.splat_bits(f32_bits(lo), e.ty, span), self.splat_bits(f32_bits(1.0), e.ty, span));
                let clamped = self.builtin(Opcode::Clamp, e.ty, vec![e, lo, hi], span);
                let m = self.splat_bits(f32_bits(scale as f32), e.ty, span);
                let scaled = self.mk(e.ty, ExprKind::Binary(BinaryOp::Mul, m, clamped), span);
                let half = self.splat_bits(f32_bits(0.5), e.ty, span);
                let biased = self.mk(e.ty, ExprKind::Binary(BinaryOp::Add, half, scaled), span);
                let rounded = self.builtin(Opcode::Floor, e.ty, vec![biased], span);
                let int = if signed { TypeTable::I32 } else { TypeTable::U32 };
                let ity = self.types().with_scalar(e.ty, int);
                let fields = self.mk(ity, ExprKind::Cast(CastOp::Static, rounded), span);
                let fields = self.bitcast_lanes(fields, TypeTable::U32, span);
                self.pack_fields(fields, bits, span)
            }
            M::Unpack4x8unorm | M::Unpack2x16unorm | M::Unpack4x8snorm | M::Unpack2x16snorm => {
                let (lanes, signed) = match fun {
                    M::Unpack4x8unorm => (4, false),
                    M::Unpack2x16unorm => (2, false),
                    M::Unpack4x8snorm => (4, true),
                    _ => (2, true),
                };
                let bits = 32 / lanes;
                let scale = if signed { (1u32 << (bits - 1)) - 1 } else { (1u32 << bits) - 1 };
                let fields = self.unpack_fields(e, lanes, signed, span);
                let floats = self.mk(ty, ExprKind::Cast(CastOp::Static, fields), span);
                let m = self.splat_bits(f32_bits(scale as f32), ty, span);
                let q = self.mk(ty, ExprKind::Binary(BinaryOp::Div, floats, m), span);
                if signed {
                    let minus_one = self.splat_bits(f32_bits(-1.0), ty, span);
                    self.builtin(Opcode::Max, ty, vec![q, minus_one], span)
                } else {
                    q
                }
            }
            M::Pack2x16float => {
                let lo = self.mk(TypeTable::F32, ExprKind::Member(e, 0), span);
                let hi = self.mk(TypeTable::F32, ExprKind::Member(e, 1), span);
                let (lo, hi) = (self.f16_bits(lo, span), self.f16_bits(hi, span));
                let sixteen = self.lit_u32(16);
                let hi = self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::Shl, hi, sixteen), span);
                self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::BitOr, lo, hi), span)
            }
            M::Unpack2x16float => {
                let (mask, sixteen) = (self.lit_u32(0xFFFF), self.lit_u32(16));
                let lo = self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::BitAnd, e, mask), span);
                let hi = self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::Shr, e, sixteen), span);
                let lanes = vec![self.f32_of_f16_bits(lo, span), self.f32_of_f16_bits(hi, span)];
                self.builtin(Opcode::Aggregate, ty, lanes, span)
            }
            M::QuantizeToF16 => {
                let lanes = match *self.lw.ast.types.get(ty) {
                    xir::ir::Type::Vector { lanes, .. } => lanes as u32,
                    _ => 0,
                };
                if lanes == 0 {
                    let h = self.f16_bits(e, span);
                    self.f32_of_f16_bits(h, span)
                } else {
                    let out = (0..lanes)
                        .map(|k| {
                            let lane = self.mk(TypeTable::F32, ExprKind::Member(e, k), span);
                            let h = self.f16_bits(lane, span);
                            self.f32_of_f16_bits(h, span)
                        })
                        .collect();
                    self.builtin(Opcode::Aggregate, ty, out, span)
                }
            }
            _ => return None,
        })
    }

    /// The binary16 bit pattern (in a `u32`) nearest an `f32`, ties to even.
    fn f16_bits(&mut self, x: ExprRef<'a>, span: naga::Span) -> ExprRef<'a> {
        let u = TypeTable::U32;
        let bin = |cx: &mut Self, t, op, l, r| cx.mk(t, ExprKind::Binary(op, l, r), span);
        let lit = |cx: &mut Self, v: u32| cx.lit_u32(v);
        let b = self.mk(u, ExprKind::Cast(CastOp::Bitwise, x), span);
        let (k16, k8000) = (lit(self, 16), lit(self, 0x8000));
        let sign = bin(self, u, BinaryOp::Shr, b, k16);
        let sign = bin(self, u, BinaryOp::BitAnd, sign, k8000);
        let k7f = lit(self, 0x7FFF_FFFF);
        let a = bin(self, u, BinaryOp::BitAnd, b, k7f);
        // Normal: round the mantissa to 10 bits (ties to even), rebias the exponent.
        let (k13, one) = (lit(self, 13), lit(self, 1));
        let odd = bin(self, u, BinaryOp::Shr, a, k13);
        let odd = bin(self, u, BinaryOp::BitAnd, odd, one);
        let kfff = lit(self, 0x0FFF);
        let r = bin(self, u, BinaryOp::Add, a, kfff);
        let r = bin(self, u, BinaryOp::Add, r, odd);
        let k13 = lit(self, 13);
        let r = bin(self, u, BinaryOp::Shr, r, k13);
        let rebias = lit(self, 112 << 10);
        let normal = bin(self, u, BinaryOp::Sub, r, rebias);
        let inf = lit(self, 0x7C00);
        let normal = self.builtin(Opcode::Min, u, vec![normal, inf], span);
        // Subnormal (below 2^-14): |x| * 2^24 is exact, `rint` rounds ties to even.
        let ax = self.builtin(Opcode::Abs, TypeTable::F32, vec![x], span);
        let scale = self.mk(TypeTable::F32, ExprKind::Literal(u64::from(16_777_216f32.to_bits())), span);
        let scaled = bin(self, TypeTable::F32, BinaryOp::Mul, ax, scale);
        let rounded = self.builtin(Opcode::Rint, TypeTable::F32, vec![scaled], span);
        let sub = self.mk(u, ExprKind::Cast(CastOp::Static, rounded), span);
        let min_normal = lit(self, 0x3880_0000);
        let small = bin(self, TypeTable::BOOL, BinaryOp::Less, a, min_normal);
        let h = self.builtin(Opcode::Select, u, vec![small, sub, normal], span);
        let (inf32, qnan) = (lit(self, 0x7F80_0000), lit(self, 0x7E00));
        let nan = bin(self, TypeTable::BOOL, BinaryOp::Greater, a, inf32);
        let h = self.builtin(Opcode::Select, u, vec![nan, qnan, h], span);
        bin(self, u, BinaryOp::BitOr, sign, h)
    }

    /// The `f32` a binary16 bit pattern (the low 16 bits of a `u32`) holds.
    fn f32_of_f16_bits(&mut self, h: ExprRef<'a>, span: naga::Span) -> ExprRef<'a> {
        let u = TypeTable::U32;
        let bin = |cx: &mut Self, t, op, l, r| cx.mk(t, ExprKind::Binary(op, l, r), span);
        let lit = |cx: &mut Self, v: u32| cx.lit_u32(v);
        let (k8000, k16) = (lit(self, 0x8000), lit(self, 16));
        let sign = bin(self, u, BinaryOp::BitAnd, h, k8000);
        let sign = bin(self, u, BinaryOp::Shl, sign, k16);
        let (k10, k1f, k3ff) = (lit(self, 10), lit(self, 0x1F), lit(self, 0x3FF));
        let exp = bin(self, u, BinaryOp::Shr, h, k10);
        let exp = bin(self, u, BinaryOp::BitAnd, exp, k1f);
        let mant = bin(self, u, BinaryOp::BitAnd, h, k3ff);
        let (k7fff, k13) = (lit(self, 0x7FFF), lit(self, 13));
        let magnitude = bin(self, u, BinaryOp::BitAnd, h, k7fff);
        let shifted = bin(self, u, BinaryOp::Shl, magnitude, k13);
        let rebias = lit(self, 112 << 23);
        let normal = bin(self, u, BinaryOp::Add, shifted, rebias);
        let k13 = lit(self, 13);
        let mant_hi = bin(self, u, BinaryOp::Shl, mant, k13);
        let inf32 = lit(self, 0x7F80_0000);
        let special = bin(self, u, BinaryOp::BitOr, inf32, mant_hi);
        // Subnormal: m * 2^-24, exact in f32.
        let mf = self.mk(TypeTable::F32, ExprKind::Cast(CastOp::Static, mant), span);
        let tiny = self.mk(TypeTable::F32, ExprKind::Literal(u64::from((2f32).powi(-24).to_bits())), span);
        let sub = bin(self, TypeTable::F32, BinaryOp::Mul, mf, tiny);
        let sub = self.mk(u, ExprKind::Cast(CastOp::Bitwise, sub), span);
        let (zero, k31) = (lit(self, 0), lit(self, 31));
        let is_sub = bin(self, TypeTable::BOOL, BinaryOp::Equal, exp, zero);
        let is_special = bin(self, TypeTable::BOOL, BinaryOp::Equal, exp, k31);
        let bits = self.builtin(Opcode::Select, u, vec![is_special, special, normal], span);
        let bits = self.builtin(Opcode::Select, u, vec![is_sub, sub, bits], span);
        let bits = bin(self, u, BinaryOp::BitOr, sign, bits);
        self.mk(TypeTable::F32, ExprKind::Cast(CastOp::Bitwise, bits), span)
    }

    /// The low 8 bits of each lane of a `vec4<u32>`, lane `i` at bit `8 i`.
    fn pack_bytes(&mut self, v: ExprRef<'a>, span: naga::Span) -> ExprRef<'a> {
        let masked = {
            let mask = self.splat_bits(0xFF, v.ty, span);
            self.mk(v.ty, ExprKind::Binary(BinaryOp::BitAnd, v, mask), span)
        };
        self.pack_fields(masked, 8, span)
    }

    /// Lanes of a `vecN<u32>` as `bits`-wide fields of one `u32`, lane `i`
    /// at bit `bits * i` (each lane masked to the field).
    fn pack_fields(&mut self, v: ExprRef<'a>, bits: u32, span: naga::Span) -> ExprRef<'a> {
        let lanes = 32 / bits;
        let mut packed = None;
        for i in 0..lanes {
            let lane = self.mk(TypeTable::U32, ExprKind::Member(v, i), span);
            let mask = self.lit_u32(((1u64 << bits) - 1) as u32);
            let field = self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::BitAnd, lane, mask), span);
            let field = if i == 0 {
                field
            } else {
                let at = self.lit_u32(bits * i);
                self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::Shl, field, at), span)
            };
            packed = Some(match packed {
                None => field,
                Some(p) => self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::BitOr, p, field), span),
            });
        }
        packed.expect("at least two lanes")
    }

    /// The `lanes` fields of `e: u32` (each `32 / lanes` bits, field `i` at
    /// bit `(32 / lanes) i`) as a `vec<u32>`, or sign-extended as a
    /// `vec<i32>`.
    fn unpack_fields(&mut self, e: ExprRef<'a>, lanes: u32, signed: bool, span: naga::Span) -> ExprRef<'a> {
        let bits = 32 / lanes;
        let scalar = if signed { TypeTable::I32 } else { TypeTable::U32 };
        let ty = self.types().vector(scalar, lanes as u8);
        let fields = (0..lanes)
            .map(|i| {
                if signed {
                    // The field to the top, then an arithmetic shift down.
                    let up = self.lit_u32(32 - bits * (i + 1));
                    let top = self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::Shl, e, up), span);
                    let top = self.mk(TypeTable::I32, ExprKind::Cast(CastOp::Bitwise, top), span);
                    let down = self.lit_u32(32 - bits);
                    self.mk(TypeTable::I32, ExprKind::Binary(BinaryOp::Shr, top, down), span)
                } else {
                    let at = self.lit_u32(bits * i);
                    let shifted = self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::Shr, e, at), span);
                    let mask = self.lit_u32(((1u64 << bits) - 1) as u32);
                    self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::BitAnd, shifted, mask), span)
                }
            })
            .collect();
        self.builtin(Opcode::Aggregate, ty, fields, span)
    }

    /// `v`'s lanes reinterpreted as `scalar`.
    fn bitcast_lanes(&mut self, v: ExprRef<'a>, scalar: TypeId, span: naga::Span) -> ExprRef<'a> {
        let ty = self.types().with_scalar(v.ty, scalar);
        if ty == v.ty {
            return v;
        }
        self.mk(ty, ExprKind::Cast(CastOp::Bitwise, v), span)
    }
}
