//! `xir-reduce`: shrinks a module to the smallest one that still fails the
//! same way (in the spirit of llvm-reduce). The interestingness test runs in
//! process (`oracle`): each candidate must verify (else it is skipped, so a
//! different failure is never reported) and then fail as the signature
//! says. The reductions, one module each, run in turn to a fixed point
//! within a test and time budget; each tries small edits on a copy and keeps
//! those that still fail.

use std::time::Instant;

use xir::{FuncId, Module};

mod branches;
mod constants;
mod ddmin;
mod functions;
mod loops;
mod merge;
mod operands;
mod oracle;
mod params;
pub mod shader;
mod types;
mod values;

pub use oracle::{Device, Mismatch, Oracle, Signature};

/// Limits and what happened.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub tests: usize,
    /// Stop after this many tests (0 = no limit).
    pub max_tests: usize,
    /// Stop at this instant.
    pub deadline: Option<Instant>,
    pub progress: bool,
}

impl Stats {
    /// Whether the budget is spent: no further candidate is tried.
    pub fn spent(&self) -> bool {
        (self.max_tests != 0 && self.tests >= self.max_tests) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// One reduction run: the oracle and the budget, shared by the reductions.
pub(crate) struct Run<'a> {
    pub oracle: &'a Oracle,
    pub stats: &'a mut Stats,
}

impl Run<'_> {
    pub fn spent(&self) -> bool {
        self.stats.spent()
    }

    /// Apply `edit` to a copy of `m`; keep the copy if it still fails. An
    /// edit that returns false does not apply and costs no test.
    pub fn attempt(&mut self, m: &mut Module, edit: impl FnOnce(&mut Module) -> bool) -> bool {
        if self.spent() {
            return false;
        }
        let mut c = m.clone();
        if !edit(&mut c) {
            return false;
        }
        self.stats.tests += 1;
        if self.stats.progress && self.stats.tests.is_multiple_of(100) {
            eprintln!("xir-reduce: {} tests, {} instructions", self.stats.tests, m.inst_count());
        }
        if self.oracle.fails(&c) {
            *m = c;
            true
        } else {
            false
        }
    }
}

/// Reduce `m`, which must already fail as `oracle` asks, to a fixed point
/// (or until the budget is spent). Panics inside candidates are silenced.
pub fn reduce(m: Module, oracle: &Oracle, stats: &mut Stats) -> Module {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let out = reduce_inner(m, &mut Run { oracle, stats });
    std::panic::set_hook(hook);
    out
}

/// A reduction of one function.
type FuncReduction = fn(&mut Module, FuncId, &mut Run) -> bool;

/// Coarse first (whole constructs, blocks), then values and instructions.
const PER_FUNCTION: &[FuncReduction] = &[
    loops::remove_loops,
    branches::collapse_branches,
    operands::drop_switch_cases,
    merge::merge_blocks,
    values::replace_values,
    ddmin::delete_insts,
    constants::simplify_constants,
    types::shrink_arrays,
];

fn reduce_inner(mut m: Module, run: &mut Run) -> Module {
    loop {
        let mut changed = functions::delete_functions(&mut m, run);
        changed |= params::remove_params(&mut m, run);
        let ids: Vec<FuncId> = m.func_ids().collect();
        for f in ids {
            for r in PER_FUNCTION {
                changed |= r(&mut m, f, run);
            }
        }
        if !changed || run.spent() {
            return m;
        }
    }
}

/// Remove the blocks no longer reached (or named) from the entry.
pub(crate) fn drop_unreachable(func: &mut xir::Function) {
    let Some(entry) = func.body() else { return };
    let mut seen = vec![entry];
    let mut work = vec![entry];
    while let Some(b) = work.pop() {
        // Every block a terminator names, not only its executed edges: a
        // structured construct's merge stays while the construct does.
        let named = func.terminator(b).map(|t| func.inst(t).blocks.clone()).unwrap_or_default();
        for s in named {
            if !seen.contains(&s) {
                seen.push(s);
                work.push(s);
            }
        }
    }
    let dead: Vec<_> = func.blocks().iter().copied().filter(|b| !seen.contains(b)).collect();
    for &b in &dead {
        func.remove_block(b);
    }
    // Phis forget the removed predecessors.
    let phis: Vec<_> = func.all_insts().filter(|&(_, i)| func.opcode(i) == xir::Opcode::Phi).map(|(_, i)| i).collect();
    for phi in phis {
        while let Some(k) = func.inst(phi).blocks.iter().position(|b| dead.contains(b)) {
            func.remove_incoming(phi, k);
        }
    }
}
