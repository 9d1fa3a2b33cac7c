//! Functions and structured control flow, emitted from the frozen
//! [`FunctionPlan`](crate::plan::control_flow::FunctionPlan): every physical
//! block gets its label up front; Phis (and forwarding Phis) come first in
//! their host blocks with one incoming per planned physical predecessor;
//! merge instructions and branches follow the plan's roles and edges. After
//! the function is complete, the physical predecessor sets read back from
//! the emitted blocks must equal the plan's.

use rspirv::dr::{InsertPoint, Instruction, Operand};
use rspirv::spirv::{self, Op, StorageClass, Word};
use rustc_hash::{FxHashMap, FxHashSet};
use xir::{ArgKind, FuncId, Inst, Opcode, Payload, Value};

use super::{err, EResult, EmitError, Emitter, FnState};
use crate::plan::bindings::ArgBinding;
use crate::plan::control_flow::{FunctionPlan, Incoming, Merge, PhysKind};

pub(crate) fn be(e: rspirv::dr::Error) -> EmitError {
    EmitError { func: None, inst: None, message: format!("rspirv: {e:?}") }
}

impl Emitter<'_> {
    /// The labels of the four blocks planned inline for `i` (a CAS loop, a
    /// lane-order warp fold or a guarded read: `FunctionPlan::cas`); `what`
    /// names the construct in the internal error when none were planned.
    pub(crate) fn inline_blocks(&self, i: Inst, what: &str) -> EResult<[Word; 4]> {
        let fid = self.fs.func.expect("in function");
        match self.plans.control.get(&fid).and_then(|p| p.cas.get(&i)) {
            Some(ids) => Ok(ids.map(|p| self.fs.labels[p as usize])),
            None => err(format!("{what} without planned blocks")),
        }
    }

    pub(crate) fn emit_function(&mut self, fid: FuncId) -> EResult<()> {
        let m = self.m;
        let plans = self.plans;
        let f = m.func(fid);
        let plan: &FunctionPlan = &plans.control[&fid];
        let closure = &plans.closures[&fid];
        self.fs = FnState { func: Some(fid), ..Default::default() };
        // Result ids for every value-producing instruction of the reachable closure.
        for &b in &closure.blocks {
            if !closure.reachable.contains(&b) {
                continue;
            }
            for &i in f.block(b).insts() {
                if f.inst(i).ty != xir::TypeTable::VOID {
                    let id = self.b.id();
                    self.fs.values.insert(i, id);
                }
            }
        }
        let is_kernel = fid == plans.kernel;
        let ret = if is_kernel { self.b.type_void() } else { self.ty(f.ret)? };
        let mut params = Vec::new();
        if !is_kernel {
            for a in &f.args {
                let t = self.ty(a.ty)?;
                params.push(match a.kind {
                    ArgKind::Value => t,
                    ArgKind::Reference => self.ptr_ty(StorageClass::Function, t),
                    ArgKind::Resource => return err("resource parameters must be specialized before emission"),
                });
            }
        }
        let fnty = self.b.type_function(ret, params.clone());
        let fid_word = self.func_ids[&fid];
        self.b.begin_function(ret, Some(fid_word), spirv::FunctionControl::NONE, fnty).map_err(be)?;
        if !is_kernel {
            for (k, (a, &pt)) in f.args.iter().zip(&params).enumerate() {
                let p = self.b.function_parameter(pt).map_err(be)?;
                self.fs.args.insert(k as u32, p);
                if a.kind == ArgKind::Reference {
                    self.fs.ptr_class.insert(p, StorageClass::Function);
                    self.fs.mem_objects.insert(p);
                }
            }
        }
        self.fs.labels = (0..plan.blocks.len()).map(|_| self.b.id()).collect();
        self.fs.forwards = (0..plan.forwards.len()).map(|_| self.b.id()).collect();
        self.plan_contraction(fid, closure);
        for (k, &pid) in plan.schedule.iter().enumerate() {
            let pb = &plan.blocks[pid as usize];
            if matches!(pb.kind, PhysKind::Cas(..)) {
                continue;
            }
            self.b.begin_block(Some(self.fs.labels[pid as usize])).map_err(be)?;
            self.emit_phis(plan, pid)?;
            if k == 0 && is_kernel {
                self.load_kernel_args()?;
            }
            match pb.kind {
                PhysKind::Logical(b) => {
                    let insts: Vec<Inst> = f.block(b).insts().to_vec();
                    for &i in &insts {
                        let d = f.inst(i);
                        if d.opcode == Opcode::Phi || d.is_terminator() {
                            continue;
                        }
                        self.debug_line(i);
                        self.emit_inst(i).map_err(|mut e| {
                            e.inst.get_or_insert(i);
                            e
                        })?;
                    }
                    let t = f.terminator(b).ok_or_else(|| EmitError {
                        func: None,
                        inst: None,
                        message: format!("{b} has no terminator"),
                    })?;
                    self.debug_line(t);
                    self.emit_terminator(plan, b, t).map_err(|mut e| {
                        e.inst.get_or_insert(t);
                        e
                    })?;
                }
                PhysKind::LoopHeader(body) => {
                    self.emit_merge(pb.merge)?;
                    self.b.branch(self.fs.labels[plan.entry_of[&body] as usize]).map_err(be)?;
                }
                PhysKind::LoopContinue(_) | PhysKind::UnreachableContinue(_) => {
                    self.b.branch(self.fs.labels[pb.succs[0] as usize]).map_err(be)?;
                }
                PhysKind::UnreachableMerge(_) => self.b.unreachable().map_err(be)?,
                PhysKind::Cas(..) => {}
            }
        }
        // Function-storage variables go first in the entry block.
        let locals = std::mem::take(&mut self.fs.locals);
        if !locals.is_empty() {
            self.b.select_block(Some(0)).map_err(be)?;
            for (k, v) in locals.into_iter().enumerate() {
                self.b.insert_into_block(InsertPoint::FromBegin(k), v).map_err(be)?;
            }
            self.b.select_block(None).map_err(be)?;
        }
        self.check_predecessors(plan)?;
        self.debug_names(fid);
        self.b.end_function().map_err(be)?;
        Ok(())
    }

    /// A Function-storage variable in the entry block.
    pub(crate) fn local_var(&mut self, pointee: Word, id: Option<Word>) -> Word {
        let pty = self.ptr_ty(StorageClass::Function, pointee);
        let id = id.unwrap_or_else(|| self.b.id());
        self.fs.locals.push(Instruction::new(
            Op::Variable,
            Some(pty),
            Some(id),
            vec![Operand::StorageClass(StorageClass::Function)],
        ));
        self.fs.ptr_class.insert(id, StorageClass::Function);
        self.fs.mem_objects.insert(id);
        id
    }

    fn emit_phis(&mut self, plan: &FunctionPlan, pid: u32) -> EResult<()> {
        let f = self.m.func(self.fs.func.expect("in function"));
        for p in plan.phis_in(pid) {
            let d = f.inst(p.inst);
            let ty = self.ty(d.ty)?;
            self.debug_line(p.inst);
            let mut ops = Vec::new();
            for &(inc, from) in &p.incomings {
                let v = match inc {
                    Incoming::Value(v) => self.val(v)?,
                    Incoming::Forward(k) => self.fs.forwards[k],
                    Incoming::Undef => self.undef(ty),
                };
                ops.push(Operand::IdRef(v));
                ops.push(Operand::IdRef(self.fs.labels[from as usize]));
            }
            let id = self.fs.values[&p.inst];
            self.op(Op::Phi, Some(ty), Some(id), ops)?;
        }
        for (k, fw) in plan.forwards_in(pid) {
            self.debug_no_line();
            let ty = self.ty(fw.ty)?;
            let mut ops = Vec::new();
            for &(v, from) in &fw.incomings {
                let w = self.val(v)?;
                ops.push(Operand::IdRef(w));
                ops.push(Operand::IdRef(self.fs.labels[from as usize]));
            }
            let id = self.fs.forwards[k];
            self.op(Op::Phi, Some(ty), Some(id), ops)?;
        }
        Ok(())
    }

    fn load_kernel_args(&mut self) -> EResult<()> {
        let plans = self.plans;
        for (k, a) in plans.bindings.args.iter().enumerate() {
            if let (
                ArgBinding::PushConstant { ty, .. } | ArgBinding::BlockValue { ty, .. },
                Some((var, class, member)),
            ) = (a, self.value_slot(a))
            {
                let is_bool = self.m.types.is_bool(*ty);
                let st = if is_bool {
                    self.u32_ty()
                } else if self.needs_copy_logical(*ty) {
                    self.storage_ty(*ty)?
                } else {
                    self.ty(*ty)?
                };
                let pty = self.ptr_ty(class, st);
                let idx = self.u32_const(member);
                let p = self.op(Op::AccessChain, Some(pty), None, vec![Operand::IdRef(var), Operand::IdRef(idx)])?;
                let raw = self.op(Op::Load, Some(st), None, vec![Operand::IdRef(p)])?;
                let v = if is_bool {
                    let bt = self.b.type_bool();
                    let zero = self.u32_const(0);
                    self.op(Op::INotEqual, Some(bt), None, vec![Operand::IdRef(raw), Operand::IdRef(zero)])?
                } else if self.needs_copy_logical(*ty) {
                    let lt = self.ty(*ty)?;
                    self.op(Op::CopyLogical, Some(lt), None, vec![Operand::IdRef(raw)])?
                } else {
                    raw
                };
                self.fs.args.insert(k as u32, v);
            }
        }
        Ok(())
    }

    pub(crate) fn emit_merge(&mut self, merge: Merge) -> EResult<()> {
        match merge {
            Merge::None => {}
            Merge::Selection { merge } => {
                self.b.selection_merge(self.fs.labels[merge as usize], spirv::SelectionControl::NONE).map_err(be)?
            }
            Merge::Loop { merge, cont } => self
                .b
                .loop_merge(self.fs.labels[merge as usize], self.fs.labels[cont as usize], spirv::LoopControl::NONE, [])
                .map_err(be)?,
        }
        Ok(())
    }

    fn emit_terminator(&mut self, plan: &FunctionPlan, b: xir::Block, t: Inst) -> EResult<()> {
        let m = self.m;
        let f = m.func(self.fs.func.expect("in function"));
        let d = f.inst(t);
        let tail = plan.tail_of[&b];
        self.emit_merge(plan.blocks[tail as usize].merge)?;
        let lab = |e: &Self, s: xir::Block| -> EResult<Word> {
            match plan.edge.get(&(b, s)) {
                Some(&p) => Ok(e.fs.labels[p as usize]),
                None => err(format!("edge {b} -> {s} is not in the control-flow plan")),
            }
        };
        match d.opcode {
            Opcode::If | Opcode::CondBr => {
                let c = self.val(d.operands[0])?;
                let (tl, fl) = (lab(self, d.blocks[0])?, lab(self, d.blocks[1])?);
                self.b.branch_conditional(c, tl, fl, []).map_err(be)?;
            }
            Opcode::Switch => {
                let sel = self.val(d.operands[0])?;
                let st = self.shape(f.value_type(m, d.operands[0]))?;
                let default = lab(self, d.blocks[1])?;
                let Payload::Cases(cases) = f.payload(t) else { return err("switch without case literals") };
                let mut targets = Vec::new();
                for (k, &c) in cases.iter().enumerate() {
                    let l = lab(self, d.blocks[2 + k])?;
                    let lit = if st.bits() > 32 {
                        Operand::LiteralBit64(c)
                    } else {
                        let w = st.bits();
                        let mask = if w >= 32 { u32::MAX as u64 } else { (1u64 << w) - 1 };
                        let mut word = (c & mask) as u32;
                        if st.is_signed() && w < 32 && (word >> (w - 1)) & 1 == 1 {
                            word |= !(mask as u32);
                        }
                        Operand::LiteralBit32(word)
                    };
                    targets.push((lit, l));
                }
                self.b.switch(sel, default, targets).map_err(be)?;
            }
            Opcode::Loop | Opcode::SimpleLoop | Opcode::Br => {
                let l = lab(self, d.blocks[0])?;
                self.b.branch(l).map_err(be)?;
            }
            Opcode::Return => match d.operands.first() {
                Some(&v) if f.value_type(m, v) != xir::TypeTable::VOID => {
                    let w = self.val(v)?;
                    self.b.ret_value(w).map_err(be)?;
                }
                _ => self.b.ret().map_err(be)?,
            },
            Opcode::Unreachable => self.b.unreachable().map_err(be)?,
            op => return err(format!("terminator `{op}` reached emission")),
        }
        Ok(())
    }

    /// Planned physical predecessors must equal those of the emitted blocks.
    fn check_predecessors(&mut self, plan: &FunctionPlan) -> EResult<()> {
        let label_to_phys: FxHashMap<Word, u32> =
            self.fs.labels.iter().enumerate().map(|(k, &l)| (l, k as u32)).collect();
        let fidx = self.b.selected_function().expect("function under construction");
        let func = &self.b.module_ref().functions[fidx];
        let mut actual: Vec<FxHashSet<u32>> = vec![FxHashSet::default(); plan.blocks.len()];
        for blk in &func.blocks {
            let from = blk.label.as_ref().and_then(|l| l.result_id).and_then(|l| label_to_phys.get(&l).copied());
            let Some(from) = from else { continue };
            let Some(term) = blk.instructions.last() else { continue };
            let targets: Vec<Word> = match term.class.opcode {
                Op::Branch => vec![term.operands[0].unwrap_id_ref()],
                Op::BranchConditional => vec![term.operands[1].unwrap_id_ref(), term.operands[2].unwrap_id_ref()],
                Op::Switch => {
                    let mut v = vec![term.operands[1].unwrap_id_ref()];
                    v.extend(term.operands[2..].iter().skip(1).step_by(2).map(|o| o.unwrap_id_ref()));
                    v
                }
                _ => vec![],
            };
            for t in targets {
                if let Some(&tp) = label_to_phys.get(&t) {
                    actual[tp as usize].insert(from);
                }
            }
        }
        for (k, planned) in plan.preds.iter().enumerate() {
            let p: FxHashSet<u32> = planned.iter().copied().collect();
            if p != actual[k] {
                return err(format!(
                    "physical predecessors of block {k} ({:?}) differ from the plan: planned {:?}, emitted {:?}",
                    plan.blocks[k].kind, planned, actual[k]
                ));
            }
        }
        Ok(())
    }

    /// The single FMA contraction plan (fast math only): each float `add` fuses
    /// at most one single-use float `mul` of the same block; only that multiply
    /// is deferred.
    fn plan_contraction(&mut self, fid: FuncId, closure: &crate::plan::callgraph::Closure) {
        if !self.opts.fast_math {
            return;
        }
        let f = self.m.func(fid);
        for &b in &closure.blocks {
            if !closure.reachable.contains(&b) {
                continue;
            }
            for &i in f.block(b).insts() {
                let d = f.inst(i);
                if d.opcode != Opcode::Add || !self.m.types.is_float(self.m.types.scalar_of(d.ty)) {
                    continue;
                }
                for &opnd in &d.operands {
                    let Value::Inst(mi) = opnd else { continue };
                    let md = f.inst(mi);
                    if md.opcode == Opcode::Mul
                        && f.parent(mi) == Some(b)
                        && f.uses(opnd).len() == 1
                        && !self.fs.fused_mul.contains(&mi)
                        && d.operands[0] != d.operands[1]
                    {
                        self.fs.fused_mul.insert(mi);
                        self.fs.fma_of.insert(i, mi);
                        break;
                    }
                }
            }
        }
    }
}
