//! Convergence regions: where the threads of a block (workgroup) that
//! entered the function still execute together.
//!
//! Derived from uniformity and post-dominance. A terminator that branches on
//! a divergent value (its operands are divergent per `Uniformity`) opens a
//! *divergence region*: the blocks reachable from its successors before its
//! immediate post-dominator, where the threads reconverge. A block is
//! *converged* when it is reachable and lies in no divergence region (this is
//! exactly `Uniformity::is_divergent_block` negated, for reachable blocks:
//! uniformity marks the same regions while it iterates, nested ones
//! included). A branch whose threads never reconverge inside the function
//! (one arm returns) has no reconvergence block, and everything it reaches
//! is divergent.
//!
//! For a callable, "converged" is relative to its entry: a caller may call
//! it under divergent control. Barriers must only run in converged blocks of
//! a kernel; `barriers_under_divergence` lists the ones that do not.

use xir_spec::Trait;

use super::{Cfg, PostDomTree, Uniformity};
use crate::ir::{Block, FuncId, Function, Inst, Module};

/// One divergent branch and the blocks its threads disagree on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DivergenceRegion {
    /// The block ending in the divergent branch.
    pub branch: Block,
    /// Where the threads reconverge (the branch's immediate post-dominator),
    /// if they do inside the function.
    pub reconverge: Option<Block>,
    /// The blocks between the branch and `reconverge`, in discovery order.
    pub blocks: Vec<Block>,
}

/// Converged blocks and divergence regions of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Convergence {
    converged: Vec<bool>,
    regions: Vec<DivergenceRegion>,
}

impl Convergence {
    pub fn compute(m: &Module, f: FuncId) -> Convergence {
        Self::of_function(m.func(f))
    }

    pub fn of_function(f: &Function) -> Convergence {
        let u = Uniformity::of_function(f);
        Self::with_uniformity(f, &u)
    }

    /// From an already computed uniformity of `f`.
    pub fn with_uniformity(f: &Function, u: &Uniformity) -> Convergence {
        let cfg = Cfg::compute(f);
        let pdom = PostDomTree::from_cfg(&cfg);
        let mut converged = vec![false; f.block_capacity()];
        let mut regions = Vec::new();
        for &b in &cfg.rpo {
            converged[b.index()] = !u.is_divergent_block(b);
            let Some(t) = f.terminator(b) else { continue };
            let mut succs = cfg.succs(b).to_vec();
            succs.sort();
            succs.dedup();
            if succs.len() < 2 || !f.inst(t).operands.iter().any(|&v| u.is_divergent(v)) {
                continue;
            }
            let join = pdom.ipdom(b);
            let mut seen = vec![false; f.block_capacity()];
            let mut blocks = Vec::new();
            let mut stack: Vec<Block> = succs.into_iter().rev().collect();
            while let Some(x) = stack.pop() {
                if Some(x) == join || std::mem::replace(&mut seen[x.index()], true) {
                    continue;
                }
                blocks.push(x);
                stack.extend(cfg.succs(x).iter().rev().copied());
            }
            // Uniformity marks these while it iterates; keep the two in
            // agreement even for a region it reached only through a
            // divergent branch (a conservative answer either way).
            for &x in &blocks {
                converged[x.index()] = false;
            }
            regions.push(DivergenceRegion { branch: b, reconverge: join, blocks });
        }
        Convergence { converged, regions }
    }

    /// Whether every thread that entered the function executes `b` together
    /// (false for unreachable blocks).
    pub fn is_converged(&self, b: Block) -> bool {
        self.converged.get(b.index()).copied().unwrap_or(false)
    }

    /// The divergence regions, one per divergent branch, in reverse post
    /// order of their branch blocks.
    pub fn regions(&self) -> &[DivergenceRegion] {
        &self.regions
    }

    /// Where the threads of divergent branch block `b` reconverge; `None`
    /// if `b` does not end in a divergent branch or they never do.
    pub fn reconvergence_point(&self, b: Block) -> Option<Block> {
        self.regions.iter().find(|r| r.branch == b).and_then(|r| r.reconverge)
    }

    /// Barriers placed in blocks that are not converged (reachable ones only).
    pub fn barriers_under_divergence(&self, f: &Function) -> Vec<Inst> {
        let reachable = Cfg::compute(f);
        f.all_insts()
            .filter(|&(b, i)| reachable.is_reachable(b) && !self.is_converged(b) && f.inst(i).has(Trait::Barrier))
            .map(|(_, i)| i)
            .collect()
    }
}
