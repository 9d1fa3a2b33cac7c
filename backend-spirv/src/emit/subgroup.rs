//! Warp (subgroup) operations as `OpGroupNonUniform*` at `Subgroup` scope.
//!
//! Each lowering computes the interpreter's value (`xir::interp`'s warp
//! model: the active lanes are the lanes of one subgroup that execute the
//! same dynamic instance, which the `MaximallyReconvergesKHR` mode declared
//! in `globals.rs` guarantees on the device):
//! - integer reductions and exclusive scans are exact in any combining order
//!   (wrapping add and multiply, min / max, bit operations); `f32` ones are
//!   loops over the lanes in lane order (`fold_in_lane_order`,
//!   `plan::warp_fold`), or with fast math the float group instructions in
//!   the device's order; other float widths are refused at the handoff;
//! - `active_all_equal` compares per component; a float is compared by its
//!   bits with `-0.0` made `+0.0`, which is the interpreter's "equal bits or
//!   `==`" (a NaN equals only a NaN with the same bits), and leaves nothing
//!   to the device's float comparison;
//! - counts come from a ballot (`BallotBitCount`), so a count and the ballot
//!   it summarizes agree; `first_active_lane` broadcasts the first lane's id.
//!
//! Capabilities are declared here, per instruction; the matching device
//! features are reconciled from the final binary (`features.rs`).

use rspirv::dr::Operand;
use rspirv::spirv::{Capability, GlslStd450Op as GLOp, GroupOperation, LoopControl, Op, Scope, Word};
use xir::{Inst, Opcode, SpecialRegister};

use super::function::be;
use super::instructions::ids;
use super::{err, EResult, Emitter, ScalarKind, Shape};
use crate::plan::warp_fold;

impl Emitter<'_> {
    fn subgroup_scope(&mut self) -> Word {
        self.u32_const(Scope::Subgroup as u32)
    }

    /// One group instruction with the scope first and `rest` after it.
    fn group(&mut self, op: Op, cap: Capability, ty: Word, rid: Option<Word>, rest: Vec<Operand>) -> EResult<Word> {
        self.cap(cap);
        let mut ops = vec![Operand::IdScope(self.subgroup_scope())];
        ops.extend(rest);
        self.op(op, Some(ty), rid, ops)
    }

    /// A reduction or exclusive scan over the active lanes.
    fn group_arith(&mut self, op: Op, how: GroupOperation, ty: Word, rid: Option<Word>, x: Word) -> EResult<Word> {
        self.group(
            op,
            Capability::GroupNonUniformArithmetic,
            ty,
            rid,
            vec![Operand::GroupOperation(how), Operand::IdRef(x)],
        )
    }

    /// The ballot of a `bool` (a `uvec4`: lane k is bit k % 32 of word k / 32).
    fn ballot(&mut self, pred: Word) -> EResult<Word> {
        let u32t = self.u32_ty();
        let uvec4 = self.b.type_vector(u32t, 4);
        self.group(
            Op::GroupNonUniformBallot,
            Capability::GroupNonUniformBallot,
            uvec4,
            None,
            vec![Operand::IdRef(pred)],
        )
    }

    pub(crate) fn emit_warp(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        if warp_fold::is_lane_order_loop(m, f, i, self.opts.fast_math) {
            return self.fold_in_lane_order(i);
        }
        let d = f.inst(i);
        let float = warp_fold::is_f32_fold(m, f, i);
        let rid = self.fs.values.get(&i).copied();
        let t = self.ty(d.ty)?;
        let x = match d.operands.first() {
            Some(&v) => Some(self.val(v)?),
            None => None,
        };
        let x = || x.ok_or_else(|| super::EmitError { func: None, inst: None, message: "warp operand".into() });
        let signed = || -> EResult<bool> {
            let s = self.shape(f.value_type(m, d.operands[0]))?;
            Ok(s.is_signed())
        };
        use GroupOperation::{ExclusiveScan, Reduce};
        match d.opcode {
            Opcode::WarpIsFirstActiveLane => {
                self.group(Op::GroupNonUniformElect, Capability::GroupNonUniform, t, rid, vec![])?;
            }
            Opcode::WarpFirstActiveLane => {
                let lane = self.register(SpecialRegister::WarpLaneId)?;
                self.group(
                    Op::GroupNonUniformBroadcastFirst,
                    Capability::GroupNonUniformBallot,
                    t,
                    rid,
                    vec![Operand::IdRef(lane)],
                )?;
            }
            Opcode::WarpReadFirstActiveLane => {
                self.group(
                    Op::GroupNonUniformBroadcastFirst,
                    Capability::GroupNonUniformBallot,
                    t,
                    rid,
                    vec![Operand::IdRef(x()?)],
                )?;
            }
            Opcode::WarpReadLane => {
                let lane = self.index32(d.operands[1])?;
                self.group(Op::GroupNonUniformShuffle, Capability::GroupNonUniformShuffle, t, rid, ids(&[x()?, lane]))?;
            }
            Opcode::WarpActiveAll | Opcode::WarpActiveAny => {
                let op =
                    if d.opcode == Opcode::WarpActiveAll { Op::GroupNonUniformAll } else { Op::GroupNonUniformAny };
                self.group(op, Capability::GroupNonUniformVote, t, rid, vec![Operand::IdRef(x()?)])?;
            }
            Opcode::WarpActiveAllEqual => {
                let s = self.shape(f.value_type(m, d.operands[0]))?;
                self.all_equal(s, x()?, t, rid)?;
            }
            Opcode::WarpActiveBitMask => {
                let b = self.ballot(x()?)?;
                if d.ty == xir::TypeTable::U32 {
                    self.op(Op::CompositeExtract, Some(t), rid, vec![Operand::IdRef(b), Operand::LiteralBit32(0)])?;
                } else {
                    self.op(Op::CopyObject, Some(t), rid, ids(&[b]))?;
                }
            }
            Opcode::WarpActiveCountBits | Opcode::WarpPrefixCountBits => {
                let b = self.ballot(x()?)?;
                let how = if d.opcode == Opcode::WarpActiveCountBits { Reduce } else { ExclusiveScan };
                self.group(
                    Op::GroupNonUniformBallotBitCount,
                    Capability::GroupNonUniformBallot,
                    t,
                    rid,
                    vec![Operand::GroupOperation(how), Operand::IdRef(b)],
                )?;
            }
            Opcode::WarpActiveBitAnd => {
                self.group_arith(Op::GroupNonUniformBitwiseAnd, Reduce, t, rid, x()?)?;
            }
            Opcode::WarpActiveBitOr => {
                self.group_arith(Op::GroupNonUniformBitwiseOr, Reduce, t, rid, x()?)?;
            }
            Opcode::WarpActiveBitXor => {
                self.group_arith(Op::GroupNonUniformBitwiseXor, Reduce, t, rid, x()?)?;
            }
            // Floats here only with fast math: the device's combining order.
            Opcode::WarpActiveSum => {
                let op = if float { Op::GroupNonUniformFAdd } else { Op::GroupNonUniformIAdd };
                self.group_arith(op, Reduce, t, rid, x()?)?;
            }
            Opcode::WarpActiveProduct => {
                let op = if float { Op::GroupNonUniformFMul } else { Op::GroupNonUniformIMul };
                self.group_arith(op, Reduce, t, rid, x()?)?;
            }
            Opcode::WarpPrefixSum => {
                let op = if float { Op::GroupNonUniformFAdd } else { Op::GroupNonUniformIAdd };
                self.group_arith(op, ExclusiveScan, t, rid, x()?)?;
            }
            Opcode::WarpPrefixProduct => {
                let op = if float { Op::GroupNonUniformFMul } else { Op::GroupNonUniformIMul };
                self.group_arith(op, ExclusiveScan, t, rid, x()?)?;
            }
            Opcode::WarpActiveMin => {
                let op = match () {
                    _ if float => Op::GroupNonUniformFMin,
                    _ if signed()? => Op::GroupNonUniformSMin,
                    _ => Op::GroupNonUniformUMin,
                };
                self.group_arith(op, Reduce, t, rid, x()?)?;
            }
            Opcode::WarpActiveMax => {
                let op = match () {
                    _ if float => Op::GroupNonUniformFMax,
                    _ if signed()? => Op::GroupNonUniformSMax,
                    _ => Op::GroupNonUniformUMax,
                };
                self.group_arith(op, Reduce, t, rid, x()?)?;
            }
            op => return err(format!("`{op}` is not a warp operation")),
        }
        Ok(())
    }

    /// An `f32` reduction or exclusive scan folded as the interpreter folds
    /// it (`plan::warp_fold`): for `k` in `0..size`, lane `k`'s value is
    /// shuffled to every lane (`k` is uniform) and combined into `acc` where
    /// lane `k` is active (and, for a scan, below the reading lane).
    /// `acc` starts at `-0.0` for a sum (`-0.0 + x == x` for every `x`), at
    /// `+0.0` / `1.0` for a scan's empty prefix, at `1.0` for a product, and
    /// at the first active lane's value for `min` / `max` (folding it twice
    /// changes nothing).
    fn fold_in_lane_order(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let fid = self.fs.func.expect("in function");
        let f = m.func(fid);
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let [h, body, c, mg] = self.inline_blocks(i, "a lane-order warp fold")?;
        let t = self.ty(d.ty)?;
        let s = self.shape(d.ty)?;
        let x = self.val(d.operands[0])?;
        let u32t = self.u32_ty();
        let bt = self.scalar_ty(ScalarKind::Bool);
        let scan = warp_fold::is_scan(d.opcode);
        let yes = self.scalar_const(ScalarKind::Bool, 1);
        let active = self.ballot(yes)?;
        let size = self.register(SpecialRegister::WarpSize)?;
        let lane = if scan { Some(self.register(SpecialRegister::WarpLaneId)?) } else { None };
        let init = match d.opcode {
            Opcode::WarpActiveSum => self.float_splat(s, -0.0),
            Opcode::WarpPrefixSum => self.float_splat(s, 0.0),
            Opcode::WarpActiveProduct | Opcode::WarpPrefixProduct => self.float_splat(s, 1.0),
            _ => self.group(
                Op::GroupNonUniformBroadcastFirst,
                Capability::GroupNonUniformBallot,
                t,
                None,
                vec![Operand::IdRef(x)],
            )?,
        };
        let (zero, one) = (self.u32_const(0), self.u32_const(1));
        let before = self.current_block_label()?;
        self.b.branch(h).map_err(be)?;
        // Header: the lane `k` to fold next and the value so far.
        self.b.begin_block(Some(h)).map_err(be)?;
        let (k, next_k, acc, next_acc) = (self.b.id(), self.b.id(), self.b.id(), self.b.id());
        self.op(Op::Phi, Some(u32t), Some(k), ids(&[zero, before, next_k, c]))?;
        self.op(Op::Phi, Some(t), Some(acc), ids(&[init, before, next_acc, c]))?;
        self.b.loop_merge(mg, c, LoopControl::NONE, []).map_err(be)?;
        self.b.branch(body).map_err(be)?;
        // Body: lane k's value, combined where it counts.
        self.b.begin_block(Some(body)).map_err(be)?;
        let v = self.group(Op::GroupNonUniformShuffle, Capability::GroupNonUniformShuffle, t, None, ids(&[x, k]))?;
        let mut take = self.group(
            Op::GroupNonUniformBallotBitExtract,
            Capability::GroupNonUniformBallot,
            bt,
            None,
            ids(&[active, k]),
        )?;
        if let Some(lane) = lane {
            let below = self.op(Op::ULessThan, Some(bt), None, ids(&[k, lane]))?;
            take = self.op(Op::LogicalAnd, Some(bt), None, ids(&[take, below]))?;
        }
        let combined = match d.opcode {
            Opcode::WarpActiveSum | Opcode::WarpPrefixSum => self.arith(Op::FAdd, t, None, &[acc, v])?,
            Opcode::WarpActiveProduct | Opcode::WarpPrefixProduct => self.arith(Op::FMul, t, None, &[acc, v])?,
            Opcode::WarpActiveMin => self.glsl(t, None, GLOp::NMin, &[acc, v])?,
            _ => self.glsl(t, None, GLOp::NMax, &[acc, v])?,
        };
        let take = if s.lanes > 1 {
            let bvec = self.b.type_vector(bt, s.lanes);
            self.op(Op::CompositeConstruct, Some(bvec), None, ids(&vec![take; s.lanes as usize]))?
        } else {
            take
        };
        self.op(Op::Select, Some(t), Some(next_acc), ids(&[take, combined, acc]))?;
        self.b.branch(c).map_err(be)?;
        // Continue: the next lane, while one is left.
        self.b.begin_block(Some(c)).map_err(be)?;
        self.op(Op::IAdd, Some(u32t), Some(next_k), ids(&[k, one]))?;
        let more = self.op(Op::ULessThan, Some(bt), None, ids(&[next_k, size]))?;
        self.b.branch_conditional(more, h, mg, []).map_err(be)?;
        self.b.begin_block(Some(mg)).map_err(be)?;
        self.op(Op::CopyObject, Some(t), rid, ids(&[next_acc]))?;
        Ok(())
    }

    /// `OpGroupNonUniformAllEqual` per component (it answers one `bool` for
    /// a whole vector); floats by their bits with `-0.0` as `+0.0`.
    fn all_equal(&mut self, s: Shape, x: Word, t: Word, rid: Option<Word>) -> EResult<()> {
        let one = Shape { scalar: s.scalar, lanes: 1 };
        let bool_t = self.scalar_ty(ScalarKind::Bool);
        let mut parts = Vec::new();
        for k in 0..s.lanes {
            let single = s.lanes == 1;
            let out = if single { rid } else { None };
            let c = if single {
                x
            } else {
                let ct = self.shape_ty(one);
                self.op(Op::CompositeExtract, Some(ct), None, vec![Operand::IdRef(x), Operand::LiteralBit32(k)])?
            };
            let c = if let ScalarKind::Float { bits } = one.scalar {
                let ut = self.scalar_ty(ScalarKind::Int { bits, signed: false });
                let zero_f = self.float_splat(one, 0.0);
                let zero_u = self.scalar_const(ScalarKind::Int { bits, signed: false }, 0);
                let is_zero = self.op(Op::FOrdEqual, Some(bool_t), None, ids(&[c, zero_f]))?;
                let raw = self.op(Op::Bitcast, Some(ut), None, ids(&[c]))?;
                self.op(Op::Select, Some(ut), None, ids(&[is_zero, zero_u, raw]))?
            } else {
                c
            };
            let ty = if single { t } else { bool_t };
            let eq = self.group(
                Op::GroupNonUniformAllEqual,
                Capability::GroupNonUniformVote,
                ty,
                out,
                vec![Operand::IdRef(c)],
            )?;
            parts.push(eq);
        }
        if s.lanes > 1 {
            self.op(Op::CompositeConstruct, Some(t), rid, ids(&parts))?;
        }
        Ok(())
    }
}
