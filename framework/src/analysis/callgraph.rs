//! The call graph of a module and its strongly connected components
//! (petgraph's Tarjan), for recursion detection and bottom-up
//! (callee-before-caller) processing.

use petgraph::{algo::tarjan_scc, graph::DiGraph};

use crate::ir::{FuncId, Module, Opcode, Value};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallGraph {
    /// Distinct callees per function, in first-call order.
    pub callees: Vec<Vec<FuncId>>,
    /// Distinct callers per function.
    pub callers: Vec<Vec<FuncId>>,
    /// SCCs in reverse topological order: every callee's SCC comes before
    /// its callers' (Tarjan's output order).
    pub sccs: Vec<Vec<FuncId>>,
    /// SCC index of each function.
    pub scc_of: Vec<usize>,
}

impl CallGraph {
    pub fn compute(m: &Module) -> CallGraph {
        let n = m.functions.len();
        let mut callees = vec![Vec::new(); n];
        let mut callers = vec![Vec::new(); n];
        let mut g = DiGraph::<FuncId, ()>::with_capacity(n, n);
        let nodes: Vec<_> = m.func_ids().map(|f| g.add_node(f)).collect();
        for f in m.func_ids() {
            let func = m.func(f);
            // The opcode from the dense table; only calls' records are read.
            for (_, i) in func.all_insts() {
                if func.opcode(i) != Opcode::Call {
                    continue;
                }
                if let Some(Value::Func(callee)) = func.inst(i).operands.first() {
                    if callee.index() < n && !callees[f.index()].contains(callee) {
                        callees[f.index()].push(*callee);
                        callers[callee.index()].push(f);
                        g.add_edge(nodes[f.index()], nodes[callee.index()], ());
                    }
                }
            }
        }
        let sccs: Vec<Vec<FuncId>> =
            tarjan_scc(&g).into_iter().map(|c| c.into_iter().map(|ix| g[ix]).collect()).collect();
        let mut scc_of = vec![0; n];
        for (i, c) in sccs.iter().enumerate() {
            for f in c {
                scc_of[f.index()] = i;
            }
        }
        CallGraph { callees, callers, sccs, scc_of }
    }

    /// Whether `f` can reach itself through calls.
    pub fn is_recursive(&self, f: FuncId) -> bool {
        self.sccs[self.scc_of[f.index()]].len() > 1 || self.callees[f.index()].contains(&f)
    }

    /// Functions reachable from `roots` through calls (roots included), in
    /// callee-before-caller order.
    pub fn reachable_bottom_up(&self, roots: &[FuncId]) -> Vec<FuncId> {
        let mut seen = vec![false; self.callees.len()];
        let mut stack: Vec<FuncId> = roots.to_vec();
        while let Some(f) = stack.pop() {
            if std::mem::replace(&mut seen[f.index()], true) {
                continue;
            }
            stack.extend(self.callees[f.index()].iter().copied());
        }
        self.sccs.iter().flatten().copied().filter(|f| seen[f.index()]).collect()
    }
}
