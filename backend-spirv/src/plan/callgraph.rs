//! The kernel-reachable call graph, ordered callee before caller, and each
//! reachable function's structural closure (the blocks the backend emits).
//!
//! The closure is the ordinary CFG reachable from the body plus every role
//! block (merge, continue, ...) of a reachable structured construct. Role
//! blocks outside ordinary reachability keep their identity but not their
//! payload: the emitter writes them as canonical stubs. Functions and blocks
//! outside these sets never reach emission, descriptors or features.

use rustc_hash::FxHashSet;
use xir::{Block, FuncId, Function, Module, Opcode, Value};

/// The reachable functions of one kernel.
#[derive(Clone, Debug)]
pub struct CallGraph {
    /// Callees before callers; the kernel is last.
    pub order: Vec<FuncId>,
}

/// Compute the call graph from `kernel`. Recursion and calls to external
/// declarations are rejected with `(function, message)` pairs.
pub fn plan_call_graph(m: &Module, kernel: FuncId) -> Result<CallGraph, Vec<(FuncId, String)>> {
    let mut order = Vec::new();
    let mut state = vec![0u8; m.functions.len()]; // 0 new, 1 on stack, 2 done
    let mut errs = Vec::new();
    // Iterative DFS: (function, callees still to visit).
    let mut stack: Vec<(FuncId, Vec<FuncId>)> = vec![(kernel, callees(m, kernel))];
    state[kernel.index()] = 1;
    while let Some((f, rest)) = stack.last_mut() {
        let f = *f;
        match rest.pop() {
            Some(g) => match state[g.index()] {
                0 => {
                    if m.func(g).is_external() {
                        errs.push((f, format!("call to external @{} has no body to emit", m.func(g).name)));
                        state[g.index()] = 2;
                        continue;
                    }
                    state[g.index()] = 1;
                    stack.push((g, callees(m, g)));
                }
                1 => {
                    errs.push((f, format!("recursive call to @{}: SPIR-V forbids recursion", m.func(g).name)));
                }
                _ => {}
            },
            None => {
                state[f.index()] = 2;
                order.push(f);
                stack.pop();
            }
        }
    }
    if errs.is_empty() {
        Ok(CallGraph { order })
    } else {
        Err(errs)
    }
}

/// Direct callees of `f` within its structural closure, deduplicated, in first-call order.
fn callees(m: &Module, fid: FuncId) -> Vec<FuncId> {
    let f = m.func(fid);
    let mut seen = FxHashSet::default();
    let mut out = Vec::new();
    for b in structural_closure(f).blocks {
        for &i in f.block(b).insts() {
            let d = f.inst(i);
            if d.opcode == Opcode::Call {
                if let Some(Value::Func(g)) = d.operands.first() {
                    if (g.index()) < m.functions.len() && seen.insert(*g) {
                        out.push(*g);
                    }
                }
            }
        }
    }
    // Popped from the back: reverse so the first call is visited first.
    out.reverse();
    out
}

/// The blocks of one function the backend emits.
#[derive(Clone, Debug, Default)]
pub struct Closure {
    /// Every closure block, in discovery order (entry first).
    pub blocks: Vec<Block>,
    /// Ordinarily reachable blocks (a subset of `blocks`).
    pub reachable: FxHashSet<Block>,
}

/// The instructions of `f`'s ordinarily reachable blocks (the ones emitted
/// with their payload), in closure order: what descriptor and feature
/// requirements are read from, so unreachable code requires nothing.
pub fn reachable_insts(f: &Function) -> Vec<xir::Inst> {
    let c = structural_closure(f);
    let blocks = c.blocks.iter().filter(|b| c.reachable.contains(b));
    blocks.flat_map(|&b| f.block(b).insts().iter().copied()).collect()
}

/// The structural closure of `f` (empty for declarations).
pub fn structural_closure(f: &Function) -> Closure {
    let mut c = Closure::default();
    let Some(entry) = f.body() else { return c };
    let mut in_closure = FxHashSet::default();
    // Ordinary reachability first.
    let mut work = vec![entry];
    in_closure.insert(entry);
    c.reachable.insert(entry);
    c.blocks.push(entry);
    while let Some(b) = work.pop() {
        for s in f.successors(b) {
            if c.reachable.insert(s) {
                in_closure.insert(s);
                c.blocks.push(s);
                work.push(s);
            }
        }
    }
    // Then role blocks of constructs in the closure, recursively.
    let mut i = 0;
    while i < c.blocks.len() {
        let b = c.blocks[i];
        i += 1;
        if let Some(t) = f.terminator(b) {
            let d = f.inst(t);
            if d.has(xir::Trait::Structured) {
                for &r in &d.blocks {
                    if in_closure.insert(r) {
                        c.blocks.push(r);
                    }
                }
            }
        }
    }
    c
}
