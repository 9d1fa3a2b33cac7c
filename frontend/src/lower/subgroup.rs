//! WGSL subgroup operations onto XIR's `warp.*` operations.
//!
//! naga makes each subgroup built-in a statement with a result expression;
//! the result is bound to a temporary, as an atomic's is. The mapping:
//!
//! | WGSL | XIR |
//! |---|---|
//! | `subgroupAll` / `Any` | `warp.active_all` / `active_any` |
//! | `subgroupAdd` / `Mul` / `Min` / `Max` | `warp.active_sum` / `product` / `min` / `max` |
//! | `subgroupAnd` / `Or` / `Xor` | `warp.active_bit_and` / `or` / `xor` |
//! | `subgroupExclusiveAdd` / `Mul` | `warp.prefix_sum` / `prefix_product` |
//! | `subgroupInclusiveAdd` / `Mul` | the exclusive scan combined with the lane's own value |
//! | `subgroupBallot` | `warp.active_bit_mask` (`vec4<u32>`; no predicate = `true`) |
//! | `subgroupBroadcastFirst` | `warp.read_first_active_lane` |
//! | `subgroupBroadcast` / `Shuffle` / `ShuffleDown` / `Up` / `Xor`, `quadBroadcast` / `quadSwap*` | `warp.read_lane` of the source lane |
//!
//! WGSL leaves the value read from a lane outside the subgroup
//! indeterminate; the source lane is then the reading lane itself, so the
//! result is defined, the interpreter and a device agree, and the common
//! reduction `x += subgroupShuffleDown(x, d)` (whose upper lanes read past
//! the subgroup and are discarded) runs. A source lane inside the subgroup
//! that is not active is reported by the interpreter; on a device it is
//! undefined, as in WGSL.
//!
//! XIR folds float reductions and scans in lane order, and the SPIR-V
//! backend keeps that order for `f32` (`plan::warp_fold` there).

use naga::{CollectiveOperation, Expression, GatherMode, Handle, SubgroupOperation};
use xir::ir::TypeTable;
use xir_ast::*;
use xir_spec::{Opcode, SpecialRegister};

use super::{unsupported, FnCx, R};

impl<'a> FnCx<'_, 'a, '_> {
    /// `subgroupBallot(predicate)`.
    pub(super) fn subgroup_ballot(
        &mut self,
        predicate: Option<Handle<Expression>>,
        result: Handle<Expression>,
        span: naga::Span,
        out: &mut Scope<'a>,
    ) -> R<()> {
        let pred = match predicate {
            Some(p) => self.expr(p)?,
            None => self.ar().expr(TypeTable::BOOL, ExprKind::Literal(1), None),
        };
        let ty = self.expr_ty(result)?;
        self.flush(out)?;
        let ballot = self.builtin(Opcode::WarpActiveBitMask, ty, vec![pred], span);
        self.bind_result(ballot, result, span, out);
        Ok(())
    }

    /// A reduction or scan over the subgroup.
    pub(super) fn subgroup_collective(
        &mut self,
        op: SubgroupOperation,
        collective: CollectiveOperation,
        argument: Handle<Expression>,
        result: Handle<Expression>,
        span: naga::Span,
        out: &mut Scope<'a>,
    ) -> R<()> {
        use CollectiveOperation as C;
        use SubgroupOperation as S;
        let x = self.expr(argument)?;
        let ty = self.expr_ty(result)?;
        self.flush(out)?;
        let value = match collective {
            C::Reduce => {
                let warp_op = match op {
                    S::All => Opcode::WarpActiveAll,
                    S::Any => Opcode::WarpActiveAny,
                    S::Add => Opcode::WarpActiveSum,
                    S::Mul => Opcode::WarpActiveProduct,
                    S::Min => Opcode::WarpActiveMin,
                    S::Max => Opcode::WarpActiveMax,
                    S::And => Opcode::WarpActiveBitAnd,
                    S::Or => Opcode::WarpActiveBitOr,
                    S::Xor => Opcode::WarpActiveBitXor,
                };
                self.builtin(warp_op, ty, vec![x], span)
            }
            C::ExclusiveScan | C::InclusiveScan => {
                let (scan, combine) = match op {
                    S::Add => (Opcode::WarpPrefixSum, BinaryOp::Add),
                    S::Mul => (Opcode::WarpPrefixProduct, BinaryOp::Mul),
                    _ => return unsupported(span, format!("a subgroup scan by {op:?}: XIR scans by add and mul only")),
                };
                if collective == C::ExclusiveScan {
                    self.builtin(scan, ty, vec![x], span)
                } else {
                    // The lane's own value is read twice: bind it once.
                    let own = self.bound(x, span, out);
                    let prefix = self.builtin(scan, ty, vec![own], span);
                    self.mk(ty, ExprKind::Binary(combine, prefix, own), span)
                }
            }
        };
        self.bind_result(value, result, span, out);
        Ok(())
    }

    /// A value gathered from another lane.
    pub(super) fn subgroup_gather(
        &mut self,
        mode: GatherMode,
        argument: Handle<Expression>,
        result: Handle<Expression>,
        span: naga::Span,
        out: &mut Scope<'a>,
    ) -> R<()> {
        let x = self.expr(argument)?;
        let ty = self.expr_ty(result)?;
        let lane = |cx: &Self| cx.mk(TypeTable::U32, ExprKind::Register(SpecialRegister::WarpLaneId), span);
        let bin = |cx: &Self, op, l, r| cx.mk(TypeTable::U32, ExprKind::Binary(op, l, r), span);
        let source = match mode {
            GatherMode::BroadcastFirst => None,
            GatherMode::Broadcast(i) | GatherMode::Shuffle(i) => Some(self.lane_index(i)?),
            GatherMode::ShuffleDown(d) => {
                let d = self.lane_index(d)?;
                Some(bin(self, BinaryOp::Add, lane(self), d))
            }
            GatherMode::ShuffleUp(d) => {
                let d = self.lane_index(d)?;
                Some(bin(self, BinaryOp::Sub, lane(self), d))
            }
            GatherMode::ShuffleXor(m) => {
                let m = self.lane_index(m)?;
                Some(bin(self, BinaryOp::BitXor, lane(self), m))
            }
            GatherMode::QuadBroadcast(i) => {
                let i = self.lane_index(i)?;
                let quad = bin(self, BinaryOp::BitAnd, lane(self), self.lit_u32(!3));
                Some(bin(self, BinaryOp::BitOr, quad, i))
            }
            GatherMode::QuadSwap(direction) => {
                let mask = match direction {
                    naga::Direction::X => 1,
                    naga::Direction::Y => 2,
                    naga::Direction::Diagonal => 3,
                };
                Some(bin(self, BinaryOp::BitXor, lane(self), self.lit_u32(mask)))
            }
        };
        self.flush(out)?;
        let value = match source {
            None => self.builtin(Opcode::WarpReadFirstActiveLane, ty, vec![x], span),
            Some(source) => {
                // Outside the subgroup (WGSL: indeterminate) the lane reads itself.
                let wanted = self.bound(source, span, out);
                let size = self.mk(TypeTable::U32, ExprKind::Register(SpecialRegister::WarpSize), span);
                let inside = self.mk(TypeTable::BOOL, ExprKind::Binary(BinaryOp::Less, wanted, size), span);
                let source = self.builtin(Opcode::Select, TypeTable::U32, vec![inside, wanted, lane(self)], span);
                self.builtin(Opcode::WarpReadLane, ty, vec![x, source], span)
            }
        };
        self.bind_result(value, result, span, out);
        Ok(())
    }

    /// A lane number or offset as a `u32` (WGSL allows `i32` too; a
    /// negative one is past the subgroup as a `u32`).
    fn lane_index(&mut self, h: Handle<Expression>) -> R<ExprRef<'a>> {
        let e = self.expr(h)?;
        Ok(if e.ty == TypeTable::U32 {
            e
        } else {
            self.mk(TypeTable::U32, ExprKind::Cast(CastOp::Bitwise, e), self.espan(h))
        })
    }
}
