//! Arithmetic: integer and float ops (signedness from the XIR type),
//! comparisons (ordered float comparisons, unordered `ne` so NaN != NaN),
//! GLSL.std.450 math, bit operations (CLZ = 31 - FindUMsb, which is 32 at 0
//! in wrapping arithmetic; CTZ = UMin(FindILsb, 32)), shifts and rotates with
//! the amount taken modulo the width, exact C `round`, reductions, and
//! matrices (component-wise by columns, linear-algebra products, both
//! outer-product forms).
//!
//! Contraction: without fast math every float multiply / add / subtract /
//! dot / matrix product that represents a source operation is decorated
//! `NoContraction`; with fast math the function's single FMA plan decides
//! which `add` fuses which `mul` (`FnState::fma_of`).

use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, GlslStd450Op as GLOp, Op, Word};
use xir::{Inst, Opcode, Type, TypeId};

use super::instructions::ids;
use super::{err, EResult, Emitter, ScalarKind, Shape};

/// Float opcodes that need `NoContraction` when fast math is off.
fn contractible(op: Op) -> bool {
    matches!(
        op,
        Op::FMul
            | Op::FAdd
            | Op::FSub
            | Op::Dot
            | Op::MatrixTimesMatrix
            | Op::MatrixTimesVector
            | Op::VectorTimesMatrix
            | Op::MatrixTimesScalar
            | Op::VectorTimesScalar
            | Op::OuterProduct
    )
}

impl Emitter<'_> {
    /// Emit a plain instruction, decorating it `NoContraction` where required.
    pub(crate) fn arith(&mut self, op: Op, ty: Word, rid: Option<Word>, args: &[Word]) -> EResult<Word> {
        let id = self.op(op, Some(ty), rid, ids(args))?;
        if contractible(op) && !self.opts.fast_math {
            self.decorate(id, Decoration::NoContraction, &[]);
        }
        Ok(id)
    }

    pub(crate) fn emit_arith(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        if self.fs.fused_mul.contains(&i) {
            return Ok(()); // emitted as part of its FMA
        }
        let rid = self.fs.values.get(&i).copied();
        let mut a = Vec::new();
        for &v in &d.operands {
            a.push(self.val(v)?);
        }
        let t0 = f.value_type(m, d.operands[0]);
        let rt = self.ty(d.ty)?;
        use Opcode as O;
        if self.emit_matrix(d.opcode, t0, &d.operands, &a, rt, rid)?.is_some() {
            return Ok(());
        }
        let s = self.shape(t0)?;
        let (fl, sg, bl) = (s.is_float(), s.is_signed(), s.is_bool());
        let pick = |fo: Op, so: Op, uo: Op| {
            if fl {
                fo
            } else if sg {
                so
            } else {
                uo
            }
        };
        match d.opcode {
            O::Neg => self.arith(if fl { Op::FNegate } else { Op::SNegate }, rt, rid, &a)?,
            O::BitNot => self.arith(if bl { Op::LogicalNot } else { Op::Not }, rt, rid, &a)?,
            O::Add if fl && self.fs.fma_of.contains_key(&i) => {
                let mi = self.fs.fma_of[&i];
                let md = f.inst(mi);
                let (x, y) = (self.val(md.operands[0])?, self.val(md.operands[1])?);
                let other = if d.operands[0] == xir::Value::Inst(mi) { a[1] } else { a[0] };
                self.glsl(rt, rid, GLOp::Fma, &[x, y, other])?
            }
            O::Add => self.arith(if fl { Op::FAdd } else { Op::IAdd }, rt, rid, &a)?,
            O::Sub => self.arith(if fl { Op::FSub } else { Op::ISub }, rt, rid, &a)?,
            O::Mul => self.arith(if fl { Op::FMul } else { Op::IMul }, rt, rid, &a)?,
            O::Div => self.arith(pick(Op::FDiv, Op::SDiv, Op::UDiv), rt, rid, &a)?,
            O::Mod if sg => self.emit_signed_rem(s, a[0], a[1], rt, rid)?,
            O::Mod => self.arith(if fl { Op::FRem } else { Op::UMod }, rt, rid, &a)?,
            O::BitAnd => self.arith(if bl { Op::LogicalAnd } else { Op::BitwiseAnd }, rt, rid, &a)?,
            O::BitOr => self.arith(if bl { Op::LogicalOr } else { Op::BitwiseOr }, rt, rid, &a)?,
            O::BitXor => self.arith(if bl { Op::LogicalNotEqual } else { Op::BitwiseXor }, rt, rid, &a)?,
            O::Shl | O::Shr | O::Rotl | O::Rotr => {
                let t1 = f.value_type(m, d.operands[1]);
                self.emit_shift(d.opcode, s, a[0], a[1], t1, rt, rid)?
            }
            O::Lt | O::Gt | O::Le | O::Ge | O::Eq | O::Ne => self.emit_compare(d.opcode, s, a[0], a[1], rt, rid)?,
            O::All => self.arith(Op::All, rt, rid, &a)?,
            O::Any => self.arith(Op::Any, rt, rid, &a)?,
            O::Select => self.arith(Op::Select, rt, rid, &a)?,
            O::Step => self.glsl(rt, rid, GLOp::Step, &a)?,
            O::Abs if fl => self.glsl(rt, rid, GLOp::FAbs, &a)?,
            O::Abs if sg => self.glsl(rt, rid, GLOp::SAbs, &a)?,
            O::Abs => self.op(Op::CopyObject, Some(rt), rid, ids(&a))?,
            O::Min => self.glsl(
                rt,
                rid,
                if fl {
                    GLOp::NMin
                } else if sg {
                    GLOp::SMin
                } else {
                    GLOp::UMin
                },
                &a,
            )?,
            O::Max => self.glsl(
                rt,
                rid,
                if fl {
                    GLOp::NMax
                } else if sg {
                    GLOp::SMax
                } else {
                    GLOp::UMax
                },
                &a,
            )?,
            O::Clamp => self.glsl(
                rt,
                rid,
                if fl {
                    GLOp::NClamp
                } else if sg {
                    GLOp::SClamp
                } else {
                    GLOp::UClamp
                },
                &a,
            )?,
            O::Saturate => {
                let (z, o) = (self.float_splat(s, 0.0), self.float_splat(s, 1.0));
                self.glsl(rt, rid, GLOp::NClamp, &[a[0], z, o])?
            }
            O::Lerp => self.glsl(rt, rid, GLOp::FMix, &a)?,
            O::Smoothstep => self.glsl(rt, rid, GLOp::SmoothStep, &a)?,
            O::Sin => self.glsl(rt, rid, GLOp::Sin, &a)?,
            O::Cos => self.glsl(rt, rid, GLOp::Cos, &a)?,
            O::Tan => self.glsl(rt, rid, GLOp::Tan, &a)?,
            O::Asin => self.glsl(rt, rid, GLOp::Asin, &a)?,
            O::Acos => self.glsl(rt, rid, GLOp::Acos, &a)?,
            O::Atan => self.glsl(rt, rid, GLOp::Atan, &a)?,
            O::Sinh => self.glsl(rt, rid, GLOp::Sinh, &a)?,
            O::Cosh => self.glsl(rt, rid, GLOp::Cosh, &a)?,
            O::Tanh => self.glsl(rt, rid, GLOp::Tanh, &a)?,
            O::Asinh => self.glsl(rt, rid, GLOp::Asinh, &a)?,
            O::Acosh => self.glsl(rt, rid, GLOp::Acosh, &a)?,
            O::Atanh => self.glsl(rt, rid, GLOp::Atanh, &a)?,
            O::Exp => self.glsl(rt, rid, GLOp::Exp, &a)?,
            O::Exp2 => self.glsl(rt, rid, GLOp::Exp2, &a)?,
            O::Exp10 => {
                let ten = self.float_splat(s, 10.0);
                self.glsl(rt, rid, GLOp::Pow, &[ten, a[0]])?
            }
            O::Log => self.glsl(rt, rid, GLOp::Log, &a)?,
            O::Log2 => self.glsl(rt, rid, GLOp::Log2, &a)?,
            O::Log10 => {
                let l2 = self.glsl(rt, None, GLOp::Log2, &a)?;
                let k = self.float_splat(s, std::f64::consts::LOG10_2);
                self.arith(Op::FMul, rt, rid, &[l2, k])?
            }
            O::Sqrt => self.glsl(rt, rid, GLOp::Sqrt, &a)?,
            O::Rsqrt => self.glsl(rt, rid, GLOp::InverseSqrt, &a)?,
            O::Atan2 => self.glsl(rt, rid, GLOp::Atan2, &a)?,
            O::Pow => self.glsl(rt, rid, GLOp::Pow, &a)?,
            O::Fma if s.bits() < 64 => self.exact_fma(s, &a, rid)?,
            O::Fma => self.glsl(rt, rid, GLOp::Fma, &a)?,
            O::Copysign => self.copysign(s, a[0], a[1], rid)?,
            O::Clz => {
                let msb = self.glsl(rt, None, GLOp::FindUMsb, &a)?;
                let k = self.splat(s, 31);
                self.op(Op::ISub, Some(rt), rid, ids(&[k, msb]))?
            }
            O::Ctz => {
                let lsb = self.glsl(rt, None, GLOp::FindILsb, &a)?;
                let k = self.splat(s, 32);
                self.glsl(rt, rid, GLOp::UMin, &[lsb, k])?
            }
            O::Popcount => self.arith(Op::BitCount, rt, rid, &a)?,
            O::Reverse => self.arith(Op::BitReverse, rt, rid, &a)?,
            O::Isinf => self.arith(Op::IsInf, rt, rid, &a)?,
            O::Isnan => self.arith(Op::IsNan, rt, rid, &a)?,
            O::Ceil => self.glsl(rt, rid, GLOp::Ceil, &a)?,
            O::Floor => self.glsl(rt, rid, GLOp::Floor, &a)?,
            O::Fract => self.glsl(rt, rid, GLOp::Fract, &a)?,
            O::Trunc => self.glsl(rt, rid, GLOp::Trunc, &a)?,
            O::Rint => self.glsl(rt, rid, GLOp::RoundEven, &a)?,
            O::Round => self.c_round(s, a[0], rid)?,
            O::Dot => self.arith(Op::Dot, rt, rid, &a)?,
            O::Cross => self.glsl(rt, rid, GLOp::Cross, &a)?,
            O::Length => self.glsl(rt, rid, GLOp::Length, &a)?,
            O::LengthSquared => self.arith(Op::Dot, rt, rid, &[a[0], a[0]])?,
            O::Normalize => self.glsl(rt, rid, GLOp::Normalize, &a)?,
            O::Faceforward => self.glsl(rt, rid, GLOp::FaceForward, &a)?,
            O::Reflect => self.glsl(rt, rid, GLOp::Reflect, &a)?,
            O::ReduceSum | O::ReduceProduct | O::ReduceMin | O::ReduceMax => {
                let lane = self.shape_ty(Shape { scalar: s.scalar, lanes: 1 });
                let mut acc = self.op(
                    Op::CompositeExtract,
                    Some(lane),
                    None,
                    vec![Operand::IdRef(a[0]), Operand::LiteralBit32(0)],
                )?;
                for k in 1..s.lanes {
                    let x = self.op(
                        Op::CompositeExtract,
                        Some(lane),
                        None,
                        vec![Operand::IdRef(a[0]), Operand::LiteralBit32(k)],
                    )?;
                    let out = if k + 1 == s.lanes { rid } else { None };
                    acc = match d.opcode {
                        O::ReduceSum => self.arith(if fl { Op::FAdd } else { Op::IAdd }, lane, out, &[acc, x])?,
                        O::ReduceProduct => self.arith(if fl { Op::FMul } else { Op::IMul }, lane, out, &[acc, x])?,
                        O::ReduceMin => self.glsl(
                            lane,
                            out,
                            if fl {
                                GLOp::NMin
                            } else if sg {
                                GLOp::SMin
                            } else {
                                GLOp::UMin
                            },
                            &[acc, x],
                        )?,
                        _ => self.glsl(
                            lane,
                            out,
                            if fl {
                                GLOp::NMax
                            } else if sg {
                                GLOp::SMax
                            } else {
                                GLOp::UMax
                            },
                            &[acc, x],
                        )?,
                    };
                }
                acc
            }
            op => return err(format!("arithmetic `{op}` has no lowering")),
        };
        Ok(())
    }

    /// Shifts and rotates: the amount is converted to the value's unsigned
    /// type and taken modulo the bit width.
    #[allow(clippy::too_many_arguments)]
    fn emit_shift(
        &mut self,
        op: Opcode,
        s: Shape,
        x: Word,
        amt: Word,
        amt_ty: TypeId,
        rt: Word,
        rid: Option<Word>,
    ) -> EResult<Word> {
        let w = s.bits();
        let us = s.with_scalar(ScalarKind::Int { bits: w, signed: false });
        let ut = self.shape_ty(us);
        let a_s = self.shape(amt_ty)?;
        let k = if a_s.bits() != w {
            self.op(Op::UConvert, Some(ut), None, ids(&[amt]))?
        } else if a_s.is_signed() {
            self.op(Op::Bitcast, Some(ut), None, ids(&[amt]))?
        } else {
            amt
        };
        let mask = self.splat(us, (w - 1) as u64);
        let k = self.op(Op::BitwiseAnd, Some(ut), None, ids(&[k, mask]))?;
        match op {
            Opcode::Shl => self.op(Op::ShiftLeftLogical, Some(rt), rid, ids(&[x, k])),
            Opcode::Shr => self.op(
                if s.is_signed() { Op::ShiftRightArithmetic } else { Op::ShiftRightLogical },
                Some(rt),
                rid,
                ids(&[x, k]),
            ),
            _ => {
                // rot(x, k) = (x << k) | (x >> ((w - k) mod w)), logical shifts; k = 0 gives x | x.
                let wk = self.splat(us, w as u64);
                let back = self.op(Op::ISub, Some(ut), None, ids(&[wk, k]))?;
                let back = self.op(Op::BitwiseAnd, Some(ut), None, ids(&[back, mask]))?;
                let (l, r) = if op == Opcode::Rotl { (k, back) } else { (back, k) };
                let hi = self.op(Op::ShiftLeftLogical, Some(rt), None, ids(&[x, l]))?;
                let lo = self.op(Op::ShiftRightLogical, Some(rt), None, ids(&[x, r]))?;
                self.op(Op::BitwiseOr, Some(rt), rid, ids(&[hi, lo]))
            }
        }
    }

    /// C remainder (truncated, the dividend's sign) of signed integers,
    /// computed on magnitudes with sign masks, without compares or selects:
    /// `m = x >> (w - 1)` (arithmetic), `|x| = (x ^ m) - m`, and the result
    /// is `((|a| umod |b|) ^ m_a) - m_a`.
    ///
    /// Not `OpSRem`: the NVIDIA H200 driver (580.159.04) evaluates `OpSRem`
    /// as an unsigned remainder (`-1 srem 3` gives 0, `i64::MIN srem -7`
    /// gives `i64::MIN`; measured 2026-11-30, see docs/vulkan.md), while its
    /// `OpUMod` and `OpSDiv` are right. Not compares either: lavapipe (Mesa
    /// with LLVM 15) evaluates `SLessThan(SConvert(-7 as i32 to i64), 0)` as
    /// false. The mask form is exact on every device, including `MIN % -1`
    /// (0), which `OpSRem` leaves undefined; `|MIN|` is `MIN`, whose unsigned
    /// reading is the right magnitude.
    fn emit_signed_rem(&mut self, s: Shape, a: Word, b: Word, rt: Word, rid: Option<Word>) -> EResult<Word> {
        let us = s.with_scalar(ScalarKind::Int { bits: s.bits(), signed: false });
        let ut = self.shape_ty(us);
        let top = self.splat(s, u64::from(s.bits() - 1));
        let sign_mask = |e: &mut Self, x: Word| e.op(Op::ShiftRightArithmetic, Some(rt), None, ids(&[x, top]));
        // (x ^ m) - m: |x| when m is the sign mask of x, -x when m is all ones.
        let apply_sign = |e: &mut Self, x: Word, m: Word, rid: Option<Word>| -> EResult<Word> {
            let flipped = e.op(Op::BitwiseXor, Some(rt), None, ids(&[x, m]))?;
            e.op(Op::ISub, Some(rt), rid, ids(&[flipped, m]))
        };
        let (ma, mb) = (sign_mask(self, a)?, sign_mask(self, b)?);
        let abs_a = apply_sign(self, a, ma, None)?;
        let abs_b = apply_sign(self, b, mb, None)?;
        let ua = self.op(Op::Bitcast, Some(ut), None, ids(&[abs_a]))?;
        let ub = self.op(Op::Bitcast, Some(ut), None, ids(&[abs_b]))?;
        let ur = self.op(Op::UMod, Some(ut), None, ids(&[ua, ub]))?;
        let r = self.op(Op::Bitcast, Some(rt), None, ids(&[ur]))?;
        apply_sign(self, r, ma, rid)
    }

    fn emit_compare(&mut self, op: Opcode, s: Shape, a: Word, b: Word, rt: Word, rid: Option<Word>) -> EResult<Word> {
        use Opcode as O;
        let (a, b, s) = if s.is_bool() && !matches!(op, O::Eq | O::Ne) {
            // Order bools as 0 < 1.
            let us = s.with_scalar(ScalarKind::Int { bits: 32, signed: false });
            let ut = self.shape_ty(us);
            let (one, zero) = (self.splat(us, 1), self.splat(us, 0));
            let a = self.op(Op::Select, Some(ut), None, ids(&[a, one, zero]))?;
            let b = self.op(Op::Select, Some(ut), None, ids(&[b, one, zero]))?;
            (a, b, us)
        } else {
            (a, b, s)
        };
        let code = match (op, s.scalar) {
            (O::Eq, ScalarKind::Bool) => Op::LogicalEqual,
            (O::Ne, ScalarKind::Bool) => Op::LogicalNotEqual,
            (O::Eq, ScalarKind::Float { .. }) => Op::FOrdEqual,
            (O::Ne, ScalarKind::Float { .. }) => Op::FUnordNotEqual,
            (O::Lt, ScalarKind::Float { .. }) => Op::FOrdLessThan,
            (O::Gt, ScalarKind::Float { .. }) => Op::FOrdGreaterThan,
            (O::Le, ScalarKind::Float { .. }) => Op::FOrdLessThanEqual,
            (O::Ge, ScalarKind::Float { .. }) => Op::FOrdGreaterThanEqual,
            (O::Eq, _) => Op::IEqual,
            (O::Ne, _) => Op::INotEqual,
            (O::Lt, ScalarKind::Int { signed: true, .. }) => Op::SLessThan,
            (O::Gt, ScalarKind::Int { signed: true, .. }) => Op::SGreaterThan,
            (O::Le, ScalarKind::Int { signed: true, .. }) => Op::SLessThanEqual,
            (O::Ge, ScalarKind::Int { signed: true, .. }) => Op::SGreaterThanEqual,
            (O::Lt, _) => Op::ULessThan,
            (O::Gt, _) => Op::UGreaterThan,
            (O::Le, _) => Op::ULessThanEqual,
            _ => Op::UGreaterThanEqual,
        };
        self.op(code, Some(rt), rid, ids(&[a, b]))
    }

    /// `|x|` with the sign bit of `y`, on the bits.
    fn copysign(&mut self, s: Shape, x: Word, y: Word, rid: Option<Word>) -> EResult<Word> {
        let w = s.bits();
        let us = s.with_scalar(ScalarKind::Int { bits: w, signed: false });
        let ut = self.shape_ty(us);
        let ft = self.shape_ty(s);
        let sign = self.splat(us, 1u64 << (w - 1));
        let rest = self.splat(us, (1u64 << (w - 1)) - 1);
        let xb = self.op(Op::Bitcast, Some(ut), None, ids(&[x]))?;
        let yb = self.op(Op::Bitcast, Some(ut), None, ids(&[y]))?;
        let mag = self.op(Op::BitwiseAnd, Some(ut), None, ids(&[xb, rest]))?;
        let sg = self.op(Op::BitwiseAnd, Some(ut), None, ids(&[yb, sign]))?;
        let r = self.op(Op::BitwiseOr, Some(ut), None, ids(&[mag, sg]))?;
        self.op(Op::Bitcast, Some(ft), rid, ids(&[r]))
    }

    /// C `round`: halfway cases away from zero, signed zero kept. The
    /// fractional magnitude is compared with an exact 0.5; the adjacent
    /// integral magnitude is chosen; then the sign of `x` is copied back.
    fn c_round(&mut self, s: Shape, x: Word, rid: Option<Word>) -> EResult<Word> {
        let ft = self.shape_ty(s);
        let bt = self.shape_ty(s.with_scalar(ScalarKind::Bool));
        let a = self.glsl(ft, None, GLOp::FAbs, &[x])?;
        let t = self.glsl(ft, None, GLOp::Trunc, &[a])?;
        let frac = self.arith(Op::FSub, ft, None, &[a, t])?; // exact
        let half = self.float_splat(s, 0.5);
        let up = self.op(Op::FOrdGreaterThanEqual, Some(bt), None, ids(&[frac, half]))?;
        let one = self.float_splat(s, 1.0);
        let t1 = self.arith(Op::FAdd, ft, None, &[t, one])?; // exact when selected (t < 2^mantissa)
        let mag = self.op(Op::Select, Some(ft), None, ids(&[up, t1, t]))?;
        self.copysign(s, mag, x, rid)
    }

    /// Correctly rounded `fma` for f16/f32: Vulkan may evaluate GLSL.std.450
    /// `Fma` unfused, so compute in f64 instead: the product is exact, the sum
    /// is rounded to odd (TwoSum error, then the odd neighbour), and the final
    /// conversion rounds to nearest even; 53 >= 2p + 2 bits makes that a
    /// single correct rounding (Boldo & Melquiond). Inf/NaN pass through.
    fn exact_fma(&mut self, s: Shape, a: &[Word], rid: Option<Word>) -> EResult<Word> {
        let ds = s.with_scalar(ScalarKind::Float { bits: 64 });
        let us = s.with_scalar(ScalarKind::Int { bits: 64, signed: false });
        let bs = s.with_scalar(ScalarKind::Bool);
        let (dt, ut, bt, ft) = (self.shape_ty(ds), self.shape_ty(us), self.shape_ty(bs), self.shape_ty(s));
        let mut w = Vec::new();
        for &x in a {
            w.push(self.op(Op::FConvert, Some(dt), None, ids(&[x]))?);
        }
        let nc = |e: &mut Self, op: Op, x: Word, y: Word| -> EResult<Word> {
            let id = e.op(op, Some(dt), None, ids(&[x, y]))?;
            e.decorate(id, Decoration::NoContraction, &[]);
            Ok(id)
        };
        let p = nc(self, Op::FMul, w[0], w[1])?; // exact
        let sum = nc(self, Op::FAdd, p, w[2])?;
        // TwoSum: p + c == sum + err exactly.
        let bb = nc(self, Op::FSub, sum, p)?;
        let sb = nc(self, Op::FSub, sum, bb)?;
        let e1 = nc(self, Op::FSub, p, sb)?;
        let e2 = nc(self, Op::FSub, w[2], bb)?;
        let err = nc(self, Op::FAdd, e1, e2)?;
        let zero = self.float_splat(ds, 0.0);
        let inexact = self.op(Op::FOrdNotEqual, Some(bt), None, ids(&[err, zero]))?;
        let bits = self.op(Op::Bitcast, Some(ut), None, ids(&[sum]))?;
        let one = self.splat(us, 1);
        let low = self.op(Op::BitwiseAnd, Some(ut), None, ids(&[bits, one]))?;
        let z64 = self.splat(us, 0);
        let even = self.op(Op::IEqual, Some(bt), None, ids(&[low, z64]))?;
        let adjust = self.op(Op::LogicalAnd, Some(bt), None, ids(&[inexact, even]))?;
        // Toward err: +1 ulp in magnitude when err has the sign of sum, else -1.
        let e_pos = self.op(Op::FOrdGreaterThan, Some(bt), None, ids(&[err, zero]))?;
        let sign_bit = self.splat(us, 1u64 << 63);
        let sbits = self.op(Op::BitwiseAnd, Some(ut), None, ids(&[bits, sign_bit]))?;
        let s_pos = self.op(Op::IEqual, Some(bt), None, ids(&[sbits, z64]))?;
        let up = self.op(Op::LogicalEqual, Some(bt), None, ids(&[e_pos, s_pos]))?;
        let inc = self.op(Op::IAdd, Some(ut), None, ids(&[bits, one]))?;
        let dec = self.op(Op::ISub, Some(ut), None, ids(&[bits, one]))?;
        let moved = self.op(Op::Select, Some(ut), None, ids(&[up, inc, dec]))?;
        let odd_bits = self.op(Op::Select, Some(ut), None, ids(&[adjust, moved, bits]))?;
        let odd = self.op(Op::Bitcast, Some(dt), None, ids(&[odd_bits]))?;
        self.op(Op::FConvert, Some(ft), rid, ids(&[odd]))
    }

    /// Matrix operations; `None` when `op` is not one.
    #[allow(clippy::too_many_arguments)]
    fn emit_matrix(
        &mut self,
        op: Opcode,
        t0: TypeId,
        operands: &[xir::Value],
        a: &[Word],
        rt: Word,
        rid: Option<Word>,
    ) -> EResult<Option<Word>> {
        use Opcode as O;
        let m = self.m;
        let types = &m.types;
        let is_mat = |t: TypeId| matches!(types.get(t), Type::Matrix { .. });
        let ty_of = |k: usize| -> TypeId { m.func(self.fs.func.expect("in function")).value_type(m, operands[k]) };
        Ok(Some(match op {
            O::MatrixCompNeg | O::MatrixCompAdd | O::MatrixCompSub | O::MatrixCompMul | O::MatrixCompDiv => {
                let Type::Matrix { elem, dim } = types.get(t0).clone() else {
                    return err("component-wise matrix op on a non-matrix");
                };
                let et = self.ty(elem)?;
                let col = self.b.type_vector(et, dim as u32);
                let code = match op {
                    O::MatrixCompNeg => Op::FNegate,
                    O::MatrixCompAdd => Op::FAdd,
                    O::MatrixCompSub => Op::FSub,
                    O::MatrixCompMul => Op::FMul,
                    _ => Op::FDiv,
                };
                let mut cols = Vec::new();
                for c in 0..dim as u32 {
                    let mut parts = Vec::new();
                    for &x in a {
                        parts.push(self.op(
                            Op::CompositeExtract,
                            Some(col),
                            None,
                            vec![Operand::IdRef(x), Operand::LiteralBit32(c)],
                        )?);
                    }
                    cols.push(self.arith(code, col, None, &parts)?);
                }
                self.op(Op::CompositeConstruct, Some(rt), rid, ids(&cols))?
            }
            O::MatrixLinalgMul => {
                let (l, r) = (is_mat(ty_of(0)), is_mat(ty_of(1)));
                let code = match (l, r) {
                    (true, true) => Op::MatrixTimesMatrix,
                    (true, false) => Op::MatrixTimesVector,
                    (false, true) => Op::VectorTimesMatrix,
                    _ => Op::Dot,
                };
                self.arith(code, rt, rid, a)?
            }
            O::OuterProduct => {
                if is_mat(ty_of(0)) && is_mat(ty_of(1)) {
                    // A * transpose(B)
                    let bt = self.ty(ty_of(1))?;
                    let tb = self.op(Op::Transpose, Some(bt), None, ids(&[a[1]]))?;
                    self.arith(Op::MatrixTimesMatrix, rt, rid, &[a[0], tb])?
                } else {
                    self.arith(Op::OuterProduct, rt, rid, a)?
                }
            }
            O::MatrixDeterminant => self.glsl(rt, rid, GLOp::Determinant, a)?,
            O::MatrixTranspose => self.op(Op::Transpose, Some(rt), rid, ids(a))?,
            O::MatrixInverse => self.glsl(rt, rid, GLOp::MatrixInverse, a)?,
            _ => return Ok(None),
        }))
    }
}
