//! Fixed-point argument usage: for every function argument, whether the
//! function (or anything it calls with that argument) reads it, writes it,
//! both, or neither. Computed bottom-up over call-graph SCCs; within a
//! recursive SCC it iterates to a fixed point (usage only grows, so it
//! terminates).
//!
//! Reads and writes are tracked through lvalue derivation (`gep` chains of a
//! reference or resource argument) and through resource ops, atomics and
//! calls. A value argument counts as read when it has any use.

use xir_spec::Trait;

use super::CallGraph;
use crate::ir::{FuncId, Function, Module, Opcode, Value};

/// Usage of one argument, as two flags.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Usage {
    pub read: bool,
    pub write: bool,
}

impl Usage {
    pub const NONE: Usage = Usage { read: false, write: false };
    pub const READ: Usage = Usage { read: true, write: false };
    pub const WRITE: Usage = Usage { read: false, write: true };
    pub const READ_WRITE: Usage = Usage { read: true, write: true };

    pub fn union(self, o: Usage) -> Usage {
        Usage { read: self.read || o.read, write: self.write || o.write }
    }
    pub fn is_used(self) -> bool {
        self.read || self.write
    }
}

/// Usage per argument, per function (indexed by `FuncId`, then argument).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentUsage {
    pub usage: Vec<Vec<Usage>>,
}

impl ArgumentUsage {
    pub fn compute(m: &Module) -> ArgumentUsage {
        Self::compute_with(m, &CallGraph::compute(m))
    }

    pub fn compute_with(m: &Module, cg: &CallGraph) -> ArgumentUsage {
        let mut usage: Vec<Vec<Usage>> = m.functions.iter().map(|f| vec![Usage::NONE; f.args.len()]).collect();
        // External functions: assume every argument is read and written.
        for f in m.func_ids() {
            if m.func(f).is_external() {
                usage[f.index()].iter_mut().for_each(|u| *u = Usage::READ_WRITE);
            }
        }
        for scc in &cg.sccs {
            loop {
                let mut changed = false;
                for &f in scc {
                    if m.func(f).is_external() {
                        continue;
                    }
                    let new = local_usage(m.func(f), &usage);
                    if new != usage[f.index()] {
                        usage[f.index()] = new;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
        }
        ArgumentUsage { usage }
    }

    pub fn get(&self, f: FuncId, arg: usize) -> Usage {
        self.usage[f.index()].get(arg).copied().unwrap_or_default()
    }
}

/// Usage of `f`'s arguments given the current usage of its callees.
fn local_usage(f: &Function, callee_usage: &[Vec<Usage>]) -> Vec<Usage> {
    usage_with(f, |callee, k| callee_usage.get(callee.index()).and_then(|c| c.get(k)).copied())
}

/// Usage of `f`'s arguments given `callee(g, k)`, the usage of argument `k`
/// of callee `g` (`None`: unknown, taken as read-write). The incremental
/// database uses this with callees looked up by name.
pub fn usage_with(f: &Function, callee: impl Fn(FuncId, usize) -> Option<Usage>) -> Vec<Usage> {
    let mut out = vec![Usage::NONE; f.args.len()];
    // Which argument (if any) each lvalue-producing instruction derives from.
    let mut root: Vec<Option<usize>> = vec![None; f.inst_capacity()];
    fn root_of(root: &[Option<usize>], v: Value) -> Option<usize> {
        match v {
            Value::Arg(a) => Some(a as usize),
            Value::Inst(i) => root.get(i.index()).copied().flatten(),
            _ => None,
        }
    }
    fn mark(root: &[Option<usize>], out: &mut [Usage], v: Value, u: Usage) {
        if let Some(a) = root_of(root, v) {
            out[a] = out[a].union(u);
        }
    }
    // Instructions are visited in layout order; a gep's base is defined
    // before it in any verified function except through forward references
    // in unreachable code, which at worst under-approximates there.
    for (_, i) in f.all_insts() {
        let inst = f.inst(i);
        match inst.opcode {
            Opcode::Gep => {
                if let Some(&base) = inst.operands.first() {
                    root[i.index()] = root_of(&root, base);
                }
                // Indices are plain reads of value arguments.
                for &v in inst.operands.iter().skip(1) {
                    mark(&root, &mut out, v, Usage::READ);
                }
            }
            Opcode::Load => mark(&root, &mut out, inst.operands[0], Usage::READ),
            Opcode::Store => {
                mark(&root, &mut out, inst.operands[0], Usage::WRITE);
                mark(&root, &mut out, inst.operands[1], Usage::READ);
            }
            Opcode::Call => {
                if let Some(Value::Func(callee_id)) = inst.operands.first() {
                    for (k, &v) in inst.operands.iter().skip(1).enumerate() {
                        let u = callee(*callee_id, k).unwrap_or(Usage::READ_WRITE);
                        // A value argument passed on is read here regardless.
                        let u = if root_of(&root, v).is_some_and(|a| f.args[a].kind == crate::ir::ArgKind::Value) {
                            Usage::READ
                        } else {
                            u
                        };
                        mark(&root, &mut out, v, u);
                    }
                }
            }
            _ => {
                let spec = xir_spec::spec().op(inst.opcode);
                let base_usage = match (spec.has(Trait::MemoryRead), spec.has(Trait::MemoryWrite)) {
                    (true, true) => Usage::READ_WRITE,
                    (false, true) => Usage::WRITE,
                    (true, false) => Usage::READ,
                    (false, false) => Usage::READ,
                };
                // The first operand of a memory / resource op is the memory
                // it touches; the others are read as values.
                let touches_memory =
                    spec.has(Trait::MemoryRead) || spec.has(Trait::MemoryWrite) || spec.has(Trait::Atomic);
                for (k, &v) in inst.operands.iter().enumerate() {
                    let u = if k == 0 && touches_memory { base_usage } else { Usage::READ };
                    mark(&root, &mut out, v, u);
                }
            }
        }
    }
    out
}
