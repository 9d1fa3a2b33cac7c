//! Atomics. Every atomic uses `Relaxed` memory semantics (XIR atomics carry
//! no memory order; block barriers own visibility) with the pointer-derived
//! scope: `Device` for kernel buffers, `Workgroup` for shared memory.
//! 64-bit integer atomics declare `Int64Atomics`. Float add/sub is native
//! (`OpAtomicFAddEXT`) when the feature plan says so, otherwise a structured
//! compare-exchange loop over the buffer's unsigned-integer view, in the
//! four blocks the control-flow plan reserved for it.

use rspirv::spirv::{Capability, Decoration, MemorySemantics, Op, Scope, StorageClass, Word};
use xir::{Inst, Opcode};

use super::function::be;
use super::instructions::ids;
use super::{err, EResult, Emitter, ScalarKind};
use crate::plan::features::{atomic_space, AtomicSpace, FloatAdd};

impl Emitter<'_> {
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
            let how = self.plans.features.float_add.get(&(fid, i)).copied();
            return match how {
                Some(FloatAdd::Native) => {
                    let (ptr, scope) = self.atomic_ptr(i, false)?;
                    let t = self.shape_ty(s);
                    let mut v = self.val(d.operands[1])?;
                    if d.opcode == Opcode::AtomicFetchSub {
                        v = self.op(Op::FNegate, Some(t), None, ids(&[v]))?;
                    }
                    self.exts.insert("SPV_EXT_shader_atomic_float_add");
                    self.cap(if s.bits() == 64 {
                        Capability::AtomicFloat64AddEXT
                    } else {
                        Capability::AtomicFloat32AddEXT
                    });
                    self.op(Op::AtomicFAddEXT, Some(t), rid, ids(&[ptr, scope, relaxed, v]))?;
                    Ok(())
                }
                Some(FloatAdd::CasLoop) => self.emit_float_cas(i),
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

    /// `old = atomic load; do { new = old + v; seen = cas(old -> new); } while (seen != old)`.
    fn emit_float_cas(&mut self, i: Inst) -> EResult<()> {
        let m = self.m;
        let fid = self.fs.func.expect("in function");
        let f = m.func(fid);
        let d = f.inst(i);
        let rid = self.fs.values.get(&i).copied();
        let plan = &self.plans.control[&fid];
        let [h, body, c, mg] = match plan.cas.get(&i) {
            Some(ids) => ids.map(|p| self.fs.labels[p as usize]),
            None => return err("float CAS loop without planned blocks"),
        };
        let s = self.shape(d.ty)?;
        let ft = self.shape_ty(s);
        let ut = self.scalar_ty(ScalarKind::Int { bits: s.bits(), signed: false });
        if s.bits() == 64 {
            self.cap(Capability::Int64Atomics);
        }
        let (ptr, scope) = self.atomic_ptr(i, true)?;
        let relaxed = self.u32_const(MemorySemantics::RELAXED.bits());
        let mut v = self.val(d.operands[1])?;
        if d.opcode == Opcode::AtomicFetchSub {
            v = self.op(Op::FNegate, Some(ft), None, ids(&[v]))?;
        }
        let init = self.op(Op::AtomicLoad, Some(ut), None, ids(&[ptr, scope, relaxed]))?;
        let cur = self.current_label()?;
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
        let newf = self.op(Op::FAdd, Some(ft), None, ids(&[oldf, v]))?;
        if !self.opts.fast_math {
            self.decorate(newf, Decoration::NoContraction, &[]);
        }
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

    fn current_label(&self) -> EResult<Word> {
        let fidx = self.b.selected_function();
        let bidx = self.b.selected_block();
        match (fidx, bidx) {
            (Some(fi), Some(bi)) => {
                Ok(self.b.module_ref().functions[fi].blocks[bi].label.as_ref().and_then(|l| l.result_id).unwrap_or(0))
            }
            _ => err("no current block"),
        }
    }
}
