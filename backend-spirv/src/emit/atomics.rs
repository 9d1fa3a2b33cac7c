//! Atomics. Every atomic uses `Relaxed` memory semantics (XIR atomics carry
//! no memory order; block barriers own visibility) with the pointer-derived
//! scope: `Device` for kernel buffers, `Workgroup` for shared memory.
//! 64-bit integer atomics declare `Int64Atomics`. Float atomics follow the
//! plan's row (`plan/float_atomics.rs`): the native float opcode, one
//! integer atomic on the buffer's unsigned-integer view (exchange,
//! compare-exchange), or a structured compare-exchange loop over that view
//! (add/sub, min, max) in the four blocks the control-flow plan reserved.

use rspirv::spirv::{Capability, Decoration, MemorySemantics, Op, Scope, StorageClass, Word};
use xir::{Inst, Opcode};

use super::function::be;
use super::instructions::ids;
use super::{err, EResult, Emitter, ScalarKind, Shape};
use crate::plan::features::{atomic_space, AtomicSpace};
use crate::plan::float_atomics::Lowering;

/// A float atomic's target seen through its buffer's unsigned-integer view:
/// what the word and CAS-loop lowerings share.
struct IntView {
    shape: Shape,
    /// The float type and the unsigned type of the same width.
    ft: Word,
    ut: Word,
    ptr: Word,
    scope: Word,
    relaxed: Word,
}

impl Emitter<'_> {
    /// The integer view of float atomic `i`'s target (64-bit views declare
    /// `Int64Atomics`).
    fn int_view(&mut self, i: Inst) -> EResult<IntView> {
        let f = self.m.func(self.fs.func.expect("in function"));
        let shape = self.shape(f.inst(i).ty)?;
        let ft = self.shape_ty(shape);
        let ut = self.scalar_ty(ScalarKind::Int { bits: shape.bits(), signed: false });
        if shape.bits() == 64 {
            self.cap(Capability::Int64Atomics);
        }
        let (ptr, scope) = self.atomic_ptr(i, true)?;
        let relaxed = self.u32_const(MemorySemantics::RELAXED.bits());
        Ok(IntView { shape, ft, ut, ptr, scope, relaxed })
    }

    /// Pointer to the atomic's target scalar and its scope.
    fn atomic_ptr(&mut self, i: Inst, int_view: bool) -> EResult<(Word, Word)> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let nvals = if d.opcode == Opcode::AtomicCompareExchange { 2 } else { 1 };
        let indices = &d.operands[1 + nvals..];
        let space = atomic_space(f, d.operands[0]);
        let scalar = if int_view {
            let bits = m.types.scalar_bits(d.ty);
            self.scalar_ty(ScalarKind::Int { bits, signed: false })
        } else {
            self.ty(d.ty)?
        };
        let (ptr, class) = match space {
            AtomicSpace::Buffer => {
                let buf = self.buffer_var(d.operands[0])?;
                let Some((first, rest)) = indices.split_first() else {
                    return err("buffer atomics need an element index");
                };
                let mut chain = vec![self.u32_const(0), self.index32(*first)?];
                if !rest.is_empty() {
                    let elem = buf.elem.expect("typed buffer");
                    chain.extend(self.index_chain(elem, rest)?);
                }
                let pty = self.ptr_ty(StorageClass::StorageBuffer, scalar);
                let mut ops = vec![buf.var];
                ops.extend(chain);
                (self.op(Op::AccessChain, Some(pty), None, ids(&ops))?, StorageClass::StorageBuffer)
            }
            AtomicSpace::Shared => {
                let base = self.val(d.operands[0])?;
                if indices.is_empty() {
                    (base, StorageClass::Workgroup)
                } else {
                    let bt = f.value_type(m, d.operands[0]);
                    let chain = self.index_chain(bt, indices)?;
                    let pty = self.ptr_ty(StorageClass::Workgroup, scalar);
                    let mut ops = vec![base];
                    ops.extend(chain);
                    (self.op(Op::AccessChain, Some(pty), None, ids(&ops))?, StorageClass::Workgroup)
                }
            }
            AtomicSpace::Local => return err("atomic on function-local memory reached emission"),
        };
        let scope =
            self.u32_const(if class == StorageClass::Workgroup { Scope::Workgroup } else { Scope::Device } as u32);
        Ok((ptr, scope))
    }

    pub(crate) fn emit_atomic(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let fid = self.fs.func.expect("in function");
        let f = m.func(fid);
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let s = self.shape(d.ty)?;
        if s.bits() == 64 && !s.is_float() {
            self.cap(Capability::Int64Atomics);
        }
        let relaxed = self.u32_const(MemorySemantics::RELAXED.bits());
        if s.is_float() {
            return match self.plans.features.float_atomics.get(&(fid, i)).copied() {
                Some(Lowering::Native(_)) => self.emit_float_native(i),
                Some(Lowering::Word) => self.emit_float_word(i),
                Some(Lowering::CasLoop) => self.emit_float_cas(i),
                None => err("float atomic without a feature-plan decision"),
            };
        }
        let (ptr, scope) = self.atomic_ptr(i, false)?;
        let t = self.shape_ty(s);
        let signed = s.is_signed();
        let op = match d.opcode {
            Opcode::AtomicExchange => Op::AtomicExchange,
            Opcode::AtomicCompareExchange => {
                let expected = self.val(d.operands[1])?;
                let desired = self.val(d.operands[2])?;
                self.op(
                    Op::AtomicCompareExchange,
                    Some(t),
                    rid,
                    ids(&[ptr, scope, relaxed, relaxed, desired, expected]),
                )?;
                return Ok(());
            }
            Opcode::AtomicFetchAdd => Op::AtomicIAdd,
            Opcode::AtomicFetchSub => Op::AtomicISub,
            Opcode::AtomicFetchAnd => Op::AtomicAnd,
            Opcode::AtomicFetchOr => Op::AtomicOr,
            Opcode::AtomicFetchXor => Op::AtomicXor,
            Opcode::AtomicFetchMin => {
                if signed {
                    Op::AtomicSMin
                } else {
                    Op::AtomicUMin
                }
            }
            Opcode::AtomicFetchMax => {
                if signed {
                    Op::AtomicSMax
                } else {
                    Op::AtomicUMax
                }
            }
            op => return err(format!("`{op}` is not an atomic")),
        };
        let v = self.val(d.operands[1])?;
        self.op(op, Some(t), rid, ids(&[ptr, scope, relaxed, v]))?;
        Ok(())
    }

    /// The float opcode itself (the plan checked its device feature).
    fn emit_float_native(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let s = self.shape(d.ty)?;
        let t = self.shape_ty(s);
        let (ptr, scope) = self.atomic_ptr(i, false)?;
        let relaxed = self.u32_const(MemorySemantics::RELAXED.bits());
        let mut v = self.val(d.operands[1])?;
        let op = match d.opcode {
            Opcode::AtomicExchange => Op::AtomicExchange,
            Opcode::AtomicFetchAdd | Opcode::AtomicFetchSub => {
                if d.opcode == Opcode::AtomicFetchSub {
                    v = self.op(Op::FNegate, Some(t), None, ids(&[v]))?;
                }
                self.exts.insert("SPV_EXT_shader_atomic_float_add");
                if s.bits() == 16 {
                    self.exts.insert("SPV_EXT_shader_atomic_float16_add");
                }
                self.cap(match s.bits() {
                    16 => Capability::AtomicFloat16AddEXT,
                    64 => Capability::AtomicFloat64AddEXT,
                    _ => Capability::AtomicFloat32AddEXT,
                });
                Op::AtomicFAddEXT
            }
            Opcode::AtomicFetchMin | Opcode::AtomicFetchMax => {
                self.exts.insert("SPV_EXT_shader_atomic_float_min_max");
                self.cap(match s.bits() {
                    16 => Capability::AtomicFloat16MinMaxEXT,
                    64 => Capability::AtomicFloat64MinMaxEXT,
                    _ => Capability::AtomicFloat32MinMaxEXT,
                });
                if d.opcode == Opcode::AtomicFetchMin {
                    Op::AtomicFMinEXT
                } else {
                    Op::AtomicFMaxEXT
                }
            }
            op => return err(format!("`{op}` has no native float lowering")),
        };
        self.op(op, Some(t), rid, ids(&[ptr, scope, relaxed, v]))?;
        Ok(())
    }

    /// Exchange or compare-exchange on the unsigned view: the bits move
    /// unchanged (compare-exchange compares bits, as XIR defines it).
    fn emit_float_word(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let IntView { ft, ut, ptr, scope, relaxed, .. } = self.int_view(i)?;
        let a = self.val(d.operands[1])?;
        let a = self.op(Op::Bitcast, Some(ut), None, ids(&[a]))?;
        let old = match d.opcode {
            Opcode::AtomicExchange => self.op(Op::AtomicExchange, Some(ut), None, ids(&[ptr, scope, relaxed, a]))?,
            Opcode::AtomicCompareExchange => {
                let desired = self.val(d.operands[2])?;
                let desired = self.op(Op::Bitcast, Some(ut), None, ids(&[desired]))?;
                self.op(Op::AtomicCompareExchange, Some(ut), None, ids(&[ptr, scope, relaxed, relaxed, desired, a]))?
            }
            op => return err(format!("`{op}` has no word float lowering")),
        };
        self.op(Op::Bitcast, Some(ft), rid, ids(&[old]))?;
        Ok(())
    }

    /// `new = old (+) v` of a CAS loop: the add, or the interpreter's
    /// `min_num` / `max_num` exactly (a NaN operand loses to the other; if
    /// equal, the min is the negative one, the max the non-negative one, so
    /// -0 < +0). `old` is the unsigned view, `oldf` its float value.
    fn cas_new_value(&mut self, op: Opcode, s: Shape, old: Word, oldf: Word, v: Word) -> EResult<Word> {
        let ft = self.shape_ty(s);
        if matches!(op, Opcode::AtomicFetchAdd | Opcode::AtomicFetchSub) {
            let newf = self.op(Op::FAdd, Some(ft), None, ids(&[oldf, v]))?;
            if !self.opts.fast_math {
                self.decorate(newf, Decoration::NoContraction, &[]);
            }
            return Ok(newf);
        }
        let bt = self.b.type_bool();
        let (better, keep_on_tie) = if op == Opcode::AtomicFetchMin {
            (Op::FOrdLessThan, Op::SLessThan)
        } else {
            (Op::FOrdGreaterThan, Op::SGreaterThanEqual)
        };
        let zero = self.scalar_const(ScalarKind::Int { bits: s.bits(), signed: false }, 0);
        let wins = self.op(better, Some(bt), None, ids(&[oldf, v]))?;
        let tie = self.op(Op::FOrdEqual, Some(bt), None, ids(&[oldf, v]))?;
        // The sign bit as a signed comparison of the bits with zero.
        let sign_ok = self.op(keep_on_tie, Some(bt), None, ids(&[old, zero]))?;
        let tie_ok = self.op(Op::LogicalAnd, Some(bt), None, ids(&[tie, sign_ok]))?;
        let keep = self.op(Op::LogicalOr, Some(bt), None, ids(&[wins, tie_ok]))?;
        let picked = self.op(Op::Select, Some(ft), None, ids(&[keep, oldf, v]))?;
        let v_nan = self.op(Op::IsNan, Some(bt), None, ids(&[v]))?;
        let picked = self.op(Op::Select, Some(ft), None, ids(&[v_nan, oldf, picked]))?;
        let old_nan = self.op(Op::IsNan, Some(bt), None, ids(&[oldf]))?;
        self.op(Op::Select, Some(ft), None, ids(&[old_nan, v, picked]))
    }

    /// `old = atomic load; do { new = old (+) v; seen = cas(old -> new); } while (seen != old)`.
    fn emit_float_cas(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let fid = self.fs.func.expect("in function");
        let f = m.func(fid);
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let [h, body, c, mg] = self.inline_blocks(i, "a float CAS loop")?;
        let IntView { shape: s, ft, ut, ptr, scope, relaxed } = self.int_view(i)?;
        let mut v = self.val(d.operands[1])?;
        if d.opcode == Opcode::AtomicFetchSub {
            v = self.op(Op::FNegate, Some(ft), None, ids(&[v]))?;
        }
        let init = self.op(Op::AtomicLoad, Some(ut), None, ids(&[ptr, scope, relaxed]))?;
        let cur = self.current_block_label()?;
        self.b.branch(h).map_err(be)?;
        // Header: the value we expect to replace.
        self.b.begin_block(Some(h)).map_err(be)?;
        let old = self.b.id();
        let seen = self.b.id();
        self.op(Op::Phi, Some(ut), Some(old), ids(&[init, cur, seen, c]))?;
        self.b.loop_merge(mg, c, rspirv::spirv::LoopControl::NONE, []).map_err(be)?;
        self.b.branch(body).map_err(be)?;
        self.b.begin_block(Some(body)).map_err(be)?;
        let oldf = self.op(Op::Bitcast, Some(ft), None, ids(&[old]))?;
        let newf = self.cas_new_value(d.opcode, s, old, oldf, v)?;
        let newu = self.op(Op::Bitcast, Some(ut), None, ids(&[newf]))?;
        self.op(Op::AtomicCompareExchange, Some(ut), Some(seen), ids(&[ptr, scope, relaxed, relaxed, newu, old]))?;
        let bt = self.b.type_bool();
        let ok = self.op(Op::IEqual, Some(bt), None, ids(&[seen, old]))?;
        self.b.branch(c).map_err(be)?;
        self.b.begin_block(Some(c)).map_err(be)?;
        self.b.branch_conditional(ok, mg, h, []).map_err(be)?;
        self.b.begin_block(Some(mg)).map_err(be)?;
        self.op(Op::Bitcast, Some(ft), rid, ids(&[seen]))?;
        Ok(())
    }
}
