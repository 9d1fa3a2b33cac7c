//! Coherence: which kernel buffer arguments are reached by a volatile access
//! (`buffer.volatile_read` / `buffer.volatile_write`) and so need `Coherent`
//! on their declaration (`emit::globals`), beside the `Volatile` memory
//! operand and the device fence of each access (`emit::memory`).
//!
//! The role is an argument role computed to a fixed point over the call
//! graph: a callable's buffer formal is volatile when the callable accesses
//! it volatile or passes it to a callee whose formal at that position is, and
//! the caller's actual argument inherits the role. Only the buffers reached
//! this way become coherent: never every buffer of the same element type,
//! as `Coherent` disables caching for the whole declaration. The shipped
//! pipeline inlines resource-taking call sites (`callable_specialization`)
//! before the handoff, so there the fixed point is reached within the
//! kernel; the analysis does not depend on it.

use rustc_hash::{FxHashMap, FxHashSet};
use xir::{Block, FuncId, Module, Opcode, Value};

/// Whether `op` is a volatile buffer access.
pub fn is_volatile_access(op: Opcode) -> bool {
    matches!(op, Opcode::BufferVolatileRead | Opcode::BufferVolatileWrite)
}

/// The coherent arguments of each reachable function (the kernel's are the
/// declarations to decorate).
#[derive(Clone, Debug, Default)]
pub struct CoherencePlan {
    /// Per function: the indices of its buffer arguments with the volatile role.
    pub volatile_args: FxHashMap<FuncId, FxHashSet<u32>>,
}

impl CoherencePlan {
    /// Whether argument `arg` of `f` is accessed volatile (directly or through callees).
    pub fn is_coherent(&self, f: FuncId, arg: u32) -> bool {
        self.volatile_args.get(&f).is_some_and(|s| s.contains(&arg))
    }
}

/// The volatile argument roles of the functions in `blocks_of` (each with
/// the blocks it emits), to a fixed point.
pub fn plan_coherence(m: &Module, blocks_of: &[(FuncId, Vec<Block>)]) -> CoherencePlan {
    let mut roles: FxHashMap<FuncId, FxHashSet<u32>> = FxHashMap::default();
    // Direct accesses, and the call sites that pass an argument on.
    let mut forwards: Vec<(FuncId, FuncId, u32, u32)> = Vec::new(); // (caller, callee, formal, caller arg)
    for (fid, blocks) in blocks_of {
        let f = m.func(*fid);
        for &b in blocks {
            for &i in f.block(b).insts() {
                let d = f.inst(i);
                if is_volatile_access(d.opcode) {
                    if let Some(Value::Arg(a)) = d.operands.first() {
                        roles.entry(*fid).or_default().insert(*a);
                    }
                } else if d.opcode == Opcode::Call {
                    if let Some(Value::Func(callee)) = d.operands.first() {
                        for (k, v) in d.operands.iter().skip(1).enumerate() {
                            if let Value::Arg(a) = v {
                                forwards.push((*fid, *callee, k as u32, *a));
                            }
                        }
                    }
                }
            }
        }
    }
    // Propagate from callees to callers until nothing changes (the call
    // graph is acyclic, so this ends after at most its depth + 1 rounds).
    loop {
        let mut changed = false;
        for &(caller, callee, formal, arg) in &forwards {
            if roles.get(&callee).is_some_and(|s| s.contains(&formal)) {
                changed |= roles.entry(caller).or_default().insert(arg);
            }
        }
        if !changed {
            break;
        }
    }
    CoherencePlan { volatile_args: roles }
}
