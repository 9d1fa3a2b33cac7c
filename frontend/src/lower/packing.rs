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
//! `pack2x16float` / `unpack2x16float` are refused: they convert to and from
//! binary16, which XIR spells as `f16` values, and those need the device's
//! `shaderFloat16`, which the shader never asked for.

use naga::MathFunction as M;
use xir::ir::{TypeId, TypeTable};
use xir_ast::*;
use xir_spec::Opcode;

use super::{unsupported, FnCx, R};

impl<'a> FnCx<'_, 'a, '_> {
    /// The packing built-in `fun` of `args`, of result type `ty`; `None`
    /// when `fun` is not one.
    pub(super) fn packing(
        &mut self,
        ty: TypeId,
        fun: M,
        args: &[ExprRef<'a>],
        span: naga::Span,
    ) -> R<Option<ExprRef<'a>>> {
        let e = args[0];
        Ok(Some(match fun {
            M::Pack4xU8 => self.pack_bytes(e, span),
            M::Pack4xI8 => {
                let u = self.bitcast_lanes(e, TypeTable::U32, span);
                self.pack_bytes(u, span)
            }
            M::Pack4xU8Clamp => {
                let max = self.splat_u32(255, e.ty, span);
                let clamped = self.builtin(Opcode::Min, e.ty, vec![e, max], span);
                self.pack_bytes(clamped, span)
            }
            M::Pack4xI8Clamp => {
                let (lo, hi) = (self.splat_int(-128, e.ty, span), self.splat_int(127, e.ty, span));
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
                let (lo, hi) = (self.splat_f32(lo, e.ty, span), self.splat_f32(1.0, e.ty, span));
                let clamped = self.builtin(Opcode::Clamp, e.ty, vec![e, lo, hi], span);
                let m = self.splat_f32(scale as f32, e.ty, span);
                let scaled = self.mk(e.ty, ExprKind::Binary(BinaryOp::Mul, m, clamped), span);
                let half = self.splat_f32(0.5, e.ty, span);
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
                let m = self.splat_f32(scale as f32, ty, span);
                let q = self.mk(ty, ExprKind::Binary(BinaryOp::Div, floats, m), span);
                if signed {
                    let minus_one = self.splat_f32(-1.0, ty, span);
                    self.builtin(Opcode::Max, ty, vec![q, minus_one], span)
                } else {
                    q
                }
            }
            M::Pack2x16float | M::Unpack2x16float => {
                return unsupported(
                    span,
                    format!("`{fun:?}`: a binary16 conversion, which XIR makes through `f16` values (the device's `shaderFloat16`)"),
                )
            }
            _ => return Ok(None),
        }))
    }

    /// The low 8 bits of each lane of a `vec4<u32>`, lane `i` at bit `8 i`.
    fn pack_bytes(&mut self, v: ExprRef<'a>, span: naga::Span) -> ExprRef<'a> {
        let masked = {
            let mask = self.splat_u32(0xFF, v.ty, span);
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

    fn splat_u32(&mut self, v: u32, like: TypeId, span: naga::Span) -> ExprRef<'a> {
        let s = self.lit_u32(v);
        self.splat_value(s, like, span)
    }

    fn splat_int(&mut self, v: i32, like: TypeId, span: naga::Span) -> ExprRef<'a> {
        let s = self.mk(TypeTable::I32, ExprKind::Literal(u64::from(v as u32)), span);
        self.splat_value(s, like, span)
    }

    fn splat_f32(&mut self, v: f32, like: TypeId, span: naga::Span) -> ExprRef<'a> {
        let s = self.mk(TypeTable::F32, ExprKind::Literal(u64::from(v.to_bits())), span);
        self.splat_value(s, like, span)
    }
}
