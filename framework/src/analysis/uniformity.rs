//! Uniformity: which values may differ between the threads of one block
//! (Vulkan's invocation group for compute), i.e. are *divergent*. The SPIR-V
//! backend puts `NonUniformEXT` on a descriptor index only when this says
//! divergent, so the analysis must never call a divergent value uniform; it
//! may be conservative the other way.
//!
//! Sources of divergence: the per-thread registers (`thread_id`,
//! `dispatch_id`, `warp_lane_id`), atomics, call results, results of
//! convergent (subgroup) operations, arguments of
//! callables (callers may pass anything), loads through divergent addresses,
//! loads of memory some thread may write differently (local slots written
//! under divergent control or with divergent values; shared memory and
//! buffers the function writes). Control: a branch on a divergent condition
//! makes its influence region (blocks reachable before its immediate
//! post-dominator) divergent; values defined in that region and used outside
//! it (joins and temporal divergence out of loops) are divergent. Everything
//! iterates to a fixed point.

use xir_spec::{SpecialRegister, Trait};

use super::{Cfg, PostDomTree};
use crate::ir::{Block, FuncId, Function, Inst, Module, Opcode, Value};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uniformity {
    divergent_inst: Vec<bool>,
    divergent_arg: Vec<bool>,
    divergent_block: Vec<bool>,
}

impl Uniformity {
    pub fn compute(m: &Module, f: FuncId) -> Uniformity {
        Self::of_function(m.func(f))
    }

    pub fn of_function(f: &Function) -> Uniformity {
        let cfg = Cfg::compute(f);
        let pdom = PostDomTree::from_cfg(&cfg);
        let mut u = Uniformity {
            divergent_inst: vec![false; f.inst_capacity()],
            // Kernel arguments are the same for every thread; a callable's
            // may come from a divergent caller.
            divergent_arg: vec![!f.is_kernel(); f.args.len()],
            divergent_block: vec![false; f.block_capacity()],
        };
        // Memory roots (alloca / argument) some thread may write differently.
        let mut divergent_memory: Vec<bool> = vec![false; f.inst_capacity() + f.args.len()];
        let mem_slot = |v: Value| -> Option<usize> {
            match v {
                Value::Inst(i) => Some(i.index()),
                Value::Arg(a) => Some(f.inst_capacity() + a as usize),
                _ => None,
            }
        };
        let roots = memory_roots(f);
        let root_of = |v: Value| -> Option<Value> {
            match v {
                Value::Inst(i) => roots[i.index()],
                Value::Arg(_) => Some(v),
                _ => None,
            }
        };
        loop {
            let mut changed = false;
            for (b, i) in f.all_insts() {
                let inst = f.inst(i);
                let operand_divergent = inst.operands.iter().any(|&v| u.is_divergent(v));
                let in_divergent_block = u.divergent_block[b.index()];
                let mut div = operand_divergent;
                match inst.opcode {
                    Opcode::Call => div = true,
                    // Subgroup-scoped results differ between the subgroups
                    // of one block.
                    _ if inst.has(Trait::Convergent) => div = true,
                    Opcode::Load => {
                        if let Some(r) = root_of(inst.operands[0]).and_then(mem_slot) {
                            div |= divergent_memory[r];
                        }
                    }
                    Opcode::Store if operand_divergent || in_divergent_block => {
                        if let Some(r) = root_of(inst.operands[0]).and_then(mem_slot) {
                            changed |= !std::mem::replace(&mut divergent_memory[r], true);
                        }
                    }
                    Opcode::Store => {}
                    _ if inst.has(Trait::Atomic) => {
                        div = true;
                        if let Some(r) = inst.operands.first().and_then(|&v| root_of(v)).and_then(mem_slot) {
                            changed |= !std::mem::replace(&mut divergent_memory[r], true);
                        }
                    }
                    _ if inst.has(Trait::MemoryWrite) && inst.has(Trait::Resource) => {
                        // A buffer written by some threads reads differently.
                        if let Some(r) = inst.operands.first().and_then(|&v| mem_slot(v)) {
                            changed |= !std::mem::replace(&mut divergent_memory[r], true);
                        }
                    }
                    _ if inst.has(Trait::MemoryRead) && inst.has(Trait::Resource) => {
                        if let Some(r) = inst.operands.first().and_then(|&v| mem_slot(v)) {
                            div |= divergent_memory[r];
                        }
                    }
                    _ => {}
                }
                if inst.opcode == Opcode::Phi && inst.blocks.iter().any(|&p| u.divergent_block[p.index()]) {
                    div = true;
                }
                if div && inst.ty != crate::ir::TypeTable::VOID && !u.divergent_inst[i.index()] {
                    u.divergent_inst[i.index()] = true;
                    changed = true;
                }
                // A divergent branch: its influence region diverges, and
                // values leaving the region diverge.
                if inst.is_terminator() && operand_divergent {
                    changed |= u.mark_region(f, &cfg, &pdom, b);
                }
            }
            if !changed {
                break;
            }
        }
        u
    }

    /// Mark the blocks between divergent branch block `b` and its immediate
    /// post-dominator, and values defined there that are used outside.
    fn mark_region(&mut self, f: &Function, cfg: &Cfg, pdom: &PostDomTree, b: Block) -> bool {
        let join = pdom.ipdom(b);
        let mut changed = false;
        let mut region = Vec::new();
        let mut seen = vec![false; f.block_capacity()];
        let mut stack: Vec<Block> = cfg.succs(b).to_vec();
        while let Some(x) = stack.pop() {
            if Some(x) == join || std::mem::replace(&mut seen[x.index()], true) {
                continue;
            }
            region.push(x);
            stack.extend(cfg.succs(x).iter().copied());
        }
        for &x in &region {
            changed |= !std::mem::replace(&mut self.divergent_block[x.index()], true);
        }
        for &x in &region {
            for &i in f.block(x).insts() {
                for u in f.uses(Value::Inst(i)) {
                    let user_block = f.parent(u.user);
                    if user_block.is_some_and(|ub| !seen[ub.index()]) && f.inst(i).ty != crate::ir::TypeTable::VOID {
                        changed |= !std::mem::replace(&mut self.divergent_inst[i.index()], true);
                    }
                }
            }
        }
        changed
    }

    /// Whether `v` may differ between threads of a block.
    pub fn is_divergent(&self, v: Value) -> bool {
        match v {
            Value::Inst(i) => self.divergent_inst.get(i.index()).copied().unwrap_or(true),
            Value::Arg(a) => self.divergent_arg.get(a as usize).copied().unwrap_or(true),
            Value::Reg(r) => {
                matches!(
                    r,
                    SpecialRegister::ThreadId
                        | SpecialRegister::DispatchId
                        | SpecialRegister::WarpLaneId
                        | SpecialRegister::WarpId
                )
            }
            Value::Const(_) | Value::Undef(_) | Value::Func(_) => false,
        }
    }

    pub fn is_uniform(&self, v: Value) -> bool {
        !self.is_divergent(v)
    }

    /// Whether threads may disagree on executing `b`.
    pub fn is_divergent_block(&self, b: Block) -> bool {
        self.divergent_block.get(b.index()).copied().unwrap_or(true)
    }

    /// Divergent instruction results, for reports.
    pub fn divergent_insts(&self) -> impl Iterator<Item = Inst> + '_ {
        self.divergent_inst.iter().enumerate().filter(|(_, d)| **d).map(|(i, _)| Inst::new(i))
    }
}

/// The alloca or argument each address instruction derives from (through
/// `gep` chains).
fn memory_roots(f: &Function) -> Vec<Option<Value>> {
    let mut roots = vec![None; f.inst_capacity()];
    // Layout order defines gep bases before their uses in verified code;
    // iterate twice to cover forward references in unusual layouts.
    for _ in 0..2 {
        for (_, i) in f.all_insts() {
            let inst = f.inst(i);
            roots[i.index()] = match inst.opcode {
                _ if inst.has(Trait::Alloca) => Some(Value::Inst(i)),
                Opcode::Gep => match inst.operands.first() {
                    Some(Value::Arg(a)) => Some(Value::Arg(*a)),
                    Some(Value::Inst(b)) => roots[b.index()],
                    _ => None,
                },
                _ => None,
            };
        }
    }
    roots
}
