//! WGSL's built-ins that take a float apart or put one together, written out
//! as the WGSL specification defines them (XIR has no opcodes for them):
//!
//! - `modf(e)`: `{ fract: e - trunc(e), whole: trunc(e) }`;
//! - `frexp(e)`: for a normal `e`, `{ fract, exp }` with `e = fract *
//!   2^exp` and `|fract|` in `[0.5, 1)`, read from the bits (the exponent
//!   field rebased, the fraction's exponent set to -1); a zero gives
//!   `{ e, 0 }`. WGSL leaves subnormals, infinities and NaN indeterminate.
//! - `ldexp(e1, e2)`: `e1 * 2^a * 2^b` with `a = e2 / 2`, `b = e2 - a` after
//!   clamping `e2` into `[-252, 254]`, so each power of two is a normal
//!   `f32` built from its bits and the products are exact unless the result
//!   is subnormal. Past the clamp WGSL allows zero (below) or leaves the
//!   result indeterminate (above).
//!
//! `f32` only (scalars and vectors): an `f16` or `f64` operand is refused.

use xir::ir::{TypeId, TypeTable};
use xir_ast::*;
use xir_spec::Opcode;

use super::{unsupported, FnCx, R};

impl<'a> FnCx<'_, 'a, '_> {
    /// `modf`, `frexp` or `ldexp` of `args`, of result type `ty`; `None`
    /// when `fun` is none of them.
    pub(super) fn float_parts(
        &mut self,
        ty: TypeId,
        fun: naga::MathFunction,
        args: &[ExprRef<'a>],
        span: naga::Span,
    ) -> R<Option<ExprRef<'a>>> {
        use naga::MathFunction as M;
        let e = args[0];
        if !matches!(fun, M::Modf | M::Frexp | M::Ldexp) {
            return Ok(None);
        }
        if self.lw.ast.types.scalar_of(e.ty) != TypeTable::F32 {
            return unsupported(span, format!("`{fun:?}` of a float other than `f32`"));
        }
        let u = self.types().with_scalar(e.ty, TypeTable::U32);
        let i = self.types().with_scalar(e.ty, TypeTable::I32);
        Ok(Some(match fun {
            M::Modf => {
                let whole = self.builtin(Opcode::Trunc, e.ty, vec![e], span);
                let fract = self.mk(e.ty, ExprKind::Binary(BinaryOp::Sub, e, whole), span);
                self.builtin(Opcode::Aggregate, ty, vec![fract, whole], span)
            }
            M::Frexp => {
                let bits = self.mk(u, ExprKind::Cast(CastOp::Bitwise, e), span);
                let k23 = self.splat_bits(23, u, span);
                let field = self.mk(u, ExprKind::Binary(BinaryOp::Shr, bits, k23), span);
                let kff = self.splat_bits(0xFF, u, span);
                let field = self.mk(u, ExprKind::Binary(BinaryOp::BitAnd, field, kff), span);
                let field = self.mk(i, ExprKind::Cast(CastOp::Bitwise, field), span);
                let k126 = self.splat_bits(126, i, span);
                let exp = self.mk(i, ExprKind::Binary(BinaryOp::Sub, field, k126), span);
                let keep = self.splat_bits(0x807F_FFFF, u, span);
                let fract = self.mk(u, ExprKind::Binary(BinaryOp::BitAnd, bits, keep), span);
                let half = self.splat_bits(0x3F00_0000, u, span);
                let fract = self.mk(u, ExprKind::Binary(BinaryOp::BitOr, fract, half), span);
                let fract = self.mk(e.ty, ExprKind::Cast(CastOp::Bitwise, fract), span);
                let zero = self.splat_bits(0, e.ty, span);
                let bty = self.types().with_scalar(e.ty, TypeTable::BOOL);
                let is_zero = self.mk(bty, ExprKind::Binary(BinaryOp::Equal, e, zero), span);
                let fract = self.builtin(Opcode::Select, e.ty, vec![is_zero, e, fract], span);
                let no_exp = self.splat_bits(0, i, span);
                let exp = self.builtin(Opcode::Select, i, vec![is_zero, no_exp, exp], span);
                self.builtin(Opcode::Aggregate, ty, vec![fract, exp], span)
            }
            _ => {
                let e2 = args[1];
                let (lo, hi) = (self.splat_bits(u64::from(-252i32 as u32), i, span), self.splat_bits(254, i, span));
                let n = self.builtin(Opcode::Clamp, i, vec![e2, lo, hi], span);
                let two = self.splat_bits(2, i, span);
                let a = self.mk(i, ExprKind::Binary(BinaryOp::Div, n, two), span);
                let b = self.mk(i, ExprKind::Binary(BinaryOp::Sub, n, a), span);
                let (pa, pb) = (self.power_of_two(a, e.ty, span), self.power_of_two(b, e.ty, span));
                let x = self.mk(e.ty, ExprKind::Binary(BinaryOp::Mul, e, pa), span);
                self.mk(e.ty, ExprKind::Binary(BinaryOp::Mul, x, pb), span)
            }
        }))
    }

    /// `2^k` as an `f32` (lanes of `like`) for `k` in `[-126, 127]`: the
    /// biased exponent in the exponent field.
    fn power_of_two(&mut self, k: ExprRef<'a>, like: TypeId, span: naga::Span) -> ExprRef<'a> {
        let i = k.ty;
        let bias = self.splat_bits(127, i, span);
        let biased = self.mk(i, ExprKind::Binary(BinaryOp::Add, k, bias), span);
        let u = self.types().with_scalar(like, TypeTable::U32);
        let biased = self.mk(u, ExprKind::Cast(CastOp::Bitwise, biased), span);
        let k23 = self.splat_bits(23, u, span);
        let bits = self.mk(u, ExprKind::Binary(BinaryOp::Shl, biased, k23), span);
        self.mk(like, ExprKind::Cast(CastOp::Bitwise, bits), span)
    }
}
