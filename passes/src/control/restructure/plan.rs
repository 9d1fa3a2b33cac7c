//! The immutable plan of `restructure_cfg` for one function, computed before
//! any IR changes.
//!
//! **Regions.** The loop forest splits the reachable CFG into regions: the
//! function's top level and one body per loop. A region's nodes are its own
//! blocks plus one node per directly nested loop (the loop collapsed to a
//! single node whose successors are the loop's exit targets). In a loop's
//! region an edge to the header (or to the latch chosen as `update`) is a
//! *continue*, an edge leaving the loop a *break*; what remains is acyclic.
//!
//! **Stages.** Each node `n` is emitted together with the nodes it
//! dominates in its region, `D(n)`: first `n`'s own branch, whose arms
//! inline the children that only `n` enters; then, in RPO order, the
//! children entered from several places ("merge children"). A transfer to a
//! node outside the current arm is a *goto*: it falls through to the end of
//! the enclosing constructs. A merge child is entered unconditionally when
//! every goto still pending at that point targets it; otherwise a guard
//! `if (sel == id)` selects it, and the gotos that pass a guard store their
//! target's id in the selector slot first. Structured input (diamonds,
//! if-without-else, switches, loops) needs no guards at all.
//!
//! **Loops.** A loop becomes `loop prepare, body, update, merge`: the header
//! serves as `prepare` when it ends in `cond_br` (one arm leaving the loop)
//! or `br`; the only latch serves as `update` when it just branches back.
//! A loop with several exit targets stores the target's id before breaking
//! and dispatches on it after its merge.

use smallvec::SmallVec;
use xir::analysis::{Cfg, DomTree, FlatLists, LoopForest, LoopId};
use xir::{Block, Function, Opcode, Trait, Value};

/// A node of a region: a reachable block, numbered by its position in the
/// reverse post order (`< cap`), or a collapsed loop (`cap + loop`). RPO
/// numbers keep the node table dense and walked front to back.
pub type NodeId = usize;

/// Where a transfer goes, seen from inside a region.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tgt {
    Node(NodeId),
    /// To the enclosing loop's header: the next iteration.
    Continue,
    /// Out of the enclosing loop, to this block.
    Break(Block),
}

/// A node's own transfer, with targets seen from its region.
#[derive(Clone, Debug)]
pub enum Branch {
    /// Return / unreachable / discard: the terminator stays.
    Exit,
    Br(Tgt),
    Cond(Value, Tgt, Tgt),
    /// `br_indexed`: selector and arms (boxed: rare, and the node table
    /// holds one `Branch` per block).
    Indexed(Value, Box<IndexedArms>),
    /// After a loop with several exit targets: `(selector id, target)`.
    Dispatch(Vec<(u32, Tgt)>),
    /// After a loop that is never left.
    Dead,
}

/// The arms of an indexed branch.
#[derive(Clone, Debug)]
pub struct IndexedArms {
    pub cases: Vec<u64>,
    pub default: Tgt,
    pub arms: Vec<Tgt>,
}

/// Node lists of the plan: almost always one or two nodes, kept inline.
pub type NodeList = SmallVec<[NodeId; 2]>;

/// How a loop's `prepare` and `body` roles are filled.
#[derive(Clone, Debug)]
pub enum Prepare {
    /// A fresh `prepare: br body`; the header starts the body.
    Fresh,
    /// The header is `prepare` and ends in `cond_br %c, body, merge`
    /// (the break target is `exit`); `body` is `None` when the body is empty.
    Cond { cond: Value, body: Option<NodeId>, exit: Block },
    /// The header is `prepare` and ends in `br body`.
    Br { body: NodeId },
}

#[derive(Clone, Debug)]
pub struct LoopPlan {
    pub header: Block,
    /// The header's block node (the first of the loop's own region).
    pub header_node: NodeId,
    /// The only latch, reused as the `update` block.
    pub update: Option<Block>,
    pub prepare: Prepare,
    pub multi_exit: bool,
}

#[derive(Clone, Debug, Default)]
pub struct NodeInfo {
    pub live: bool,
    pub branch: Option<Branch>,
    pub idom: Option<NodeId>,
    /// Whether only the idom enters this node (it is inlined in an arm).
    pub arm: bool,
    pub merge_children: NodeList,
    /// Guarded merge child (entered under `if (sel == id)`).
    pub guarded: bool,
    /// Position among the parent's merge children, 1-based (0 for arms).
    pub stage: usize,
    /// First stage boundary reached when control falls out of `D(node)`.
    pub next_boundary: Option<(NodeId, usize)>,
    /// Targets outside `D(node)` that gotos from inside it reach.
    pub exits: NodeList,
    pub rpo: usize,
}

pub struct FnPlan {
    /// Number of block nodes (reachable blocks).
    pub cap: usize,
    /// The block of each block node (the CFG's reverse post order).
    pub blocks: Vec<Block>,
    pub nodes: Vec<NodeInfo>,
    pub loops: Vec<LoopPlan>,
    /// The top-level region's entry node.
    pub root: NodeId,
    /// Owned blocks the CFG never reaches.
    pub unreachable: Vec<Block>,
}

impl FnPlan {
    pub fn as_loop(&self, n: NodeId) -> Option<LoopId> {
        (n >= self.cap).then(|| n - self.cap)
    }
    /// The block of a block node.
    pub fn block(&self, n: NodeId) -> Block {
        self.blocks[n]
    }
    /// Whether the entry block stays the entry (the root is no loop; a loop
    /// at the entry gets a fresh header block in front of it).
    pub fn keeps_entry(&self) -> bool {
        self.as_loop(self.root).is_none()
    }
    /// The selector id of a node: its (header) block index.
    pub fn id(&self, n: NodeId) -> u32 {
        match self.as_loop(n) {
            Some(l) => self.loops[l].header.0,
            None => self.blocks[n].0,
        }
    }
    /// First stage boundary reached when control falls out of `n`'s branch.
    pub fn first_boundary(&self, n: NodeId) -> Option<(NodeId, usize)> {
        if self.nodes[n].merge_children.is_empty() {
            self.nodes[n].next_boundary
        } else {
            Some((n, 1))
        }
    }
    /// Whether a goto from `site` to `t` must store `t`'s id first.
    pub fn needs_store(&self, site: NodeId, t: NodeId) -> bool {
        let ti = &self.nodes[t];
        ti.guarded || self.first_boundary(site) != ti.idom.map(|p| (p, ti.stage))
    }
    /// Whether `c` is a child of `n` that only `n` enters.
    pub fn is_arm_child(&self, n: NodeId, c: NodeId) -> bool {
        self.nodes[c].arm && self.nodes[c].idom == Some(n)
    }
}

/// Raw CFG facts the planner reads.
struct Facts<'a> {
    f: &'a Function,
    cfg: &'a Cfg,
    lf: &'a LoopForest,
    cap: usize,
    updates: Vec<Option<Block>>,
}

impl Facts<'_> {
    /// The node of region `r` (a loop, or the top level) holding block `t`:
    /// the block itself, or the directly nested loop containing it.
    fn node_containing(&self, r: Option<LoopId>, t: Block) -> Result<NodeId, PlanError> {
        let mut l = self.lf.innermost(t);
        if l == r {
            return self.node_of(t);
        }
        while let Some(c) = l {
            if self.lf.loops[c].parent == r {
                return Ok(self.cap + c);
            }
            l = self.lf.loops[c].parent;
        }
        Err(PlanError::OutsideRegion(t))
    }

    /// Like `node_containing`, for a transfer target: a nested loop may
    /// only be entered at its header.
    fn node_in(&self, r: Option<LoopId>, t: Block) -> Result<NodeId, PlanError> {
        let n = self.node_containing(r, t)?;
        if n >= self.cap && self.lf.loops[n - self.cap].header != t {
            return Err(PlanError::LoopEnteredBelowHeader(t));
        }
        Ok(n)
    }

    /// How a transfer to block `t` looks from region `r`.
    fn map(&self, r: Option<LoopId>, t: Block) -> Result<Tgt, PlanError> {
        if let Some(p) = r {
            let lp = &self.lf.loops[p];
            if t == lp.header || Some(t) == self.updates[p] {
                return Ok(Tgt::Continue);
            }
            if !self.lf.contains(p, t) {
                return Ok(Tgt::Break(t));
            }
        }
        Ok(Tgt::Node(self.node_in(r, t)?))
    }

    /// The node of a reachable block.
    fn node_of(&self, b: Block) -> Result<NodeId, PlanError> {
        match self.cfg.rpo_index.get(b.index()) {
            Some(&k) if k < self.cap => Ok(k),
            _ => Err(PlanError::Unreached(b)),
        }
    }

    fn entry_block(&self, n: NodeId) -> Block {
        if n < self.cap {
            self.cfg.rpo[n]
        } else {
            self.lf.loops[n - self.cap].header
        }
    }

    fn region_of(&self, n: NodeId) -> Option<LoopId> {
        if n < self.cap {
            self.lf.innermost(self.cfg.rpo[n])
        } else {
            self.lf.loops[n - self.cap].parent
        }
    }
}

/// A CFG shape the planner cannot handle (never produced for verified,
/// reducible raw input), with the block it is about.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("{0} lies outside the region it is reached from")]
    OutsideRegion(Block),
    #[error("{0} enters a loop other than at its header")]
    LoopEnteredBelowHeader(Block),
    #[error("{0} is not reached from the entry")]
    Unreached(Block),
    #[error("{0} has no terminator")]
    NoTerminator(Block),
    #[error("{block} ends in `{op}`, which is not a raw terminator")]
    NotRawTerminator { block: Block, op: Opcode },
    #[error("function has no body")]
    NoBody,
}

impl PlanError {
    /// The block the error is about.
    pub fn block(&self) -> Option<Block> {
        match *self {
            PlanError::OutsideRegion(b)
            | PlanError::LoopEnteredBelowHeader(b)
            | PlanError::Unreached(b)
            | PlanError::NoTerminator(b)
            | PlanError::NotRawTerminator { block: b, .. } => Some(b),
            PlanError::NoBody => None,
        }
    }
}

/// Build the plan, or say which shape it cannot handle.
pub fn plan_function(f: &Function, cfg: &Cfg, dom: &DomTree, lf: &LoopForest) -> Result<FnPlan, PlanError> {
    let cap = cfg.rpo.len();
    let nl = lf.loops.len();
    let lf = &absorb_exit_blocks(cfg, lf);
    // Choose the latch that doubles as `update`.
    let mut updates = vec![None; nl];
    for (l, ld) in lf.loops.iter().enumerate() {
        if let [u] = ld.latches[..] {
            let only_back = cfg.succs(u).iter().all(|&s| s == ld.header);
            if u != ld.header && only_back && lf.innermost(u) == Some(l) {
                updates[l] = Some(u);
            }
        }
    }
    let fx = Facts { f, cfg, lf, cap, updates };
    let mut nodes = vec![NodeInfo::default(); cap + nl];
    let mut order: Vec<NodeId> = Vec::new();
    let mut is_update = vec![false; f.block_capacity()];
    for u in fx.updates.iter().flatten() {
        is_update[u.index()] = true;
    }
    for (n, &b) in cfg.rpo.iter().enumerate() {
        nodes[n].live = !is_update[b.index()];
        nodes[n].rpo = n;
        if let Some(l) = lf.innermost(b).filter(|&l| lf.loops[l].header == b) {
            let ln = cap + l;
            nodes[ln].live = true;
            nodes[ln].rpo = n;
            order.push(ln);
        }
        order.push(n);
    }
    // Branches.
    let loop_exits = loop_exits(cfg, lf);
    // Block nodes are RPO positions, and `order` is the RPO with the loop
    // nodes interleaved: the walk over the RPO is kept at each block node.
    let mut terminators = f.walk(&cfg.rpo, xir::reads::Terminator);
    for &n in &order {
        if n < cap {
            terminators.seek(f, n);
        }
        if !nodes[n].live {
            continue;
        }
        let r = fx.region_of(n);
        let branch = if let Some(l) = (n >= cap).then(|| n - cap) {
            let mut ex = loop_exits[l].clone();
            ex.sort_by_key(|t| cfg.rpo_index[t.index()]);
            match ex.len() {
                0 => Branch::Dead,
                1 => Branch::Br(fx.map(r, ex[0])?),
                _ => Branch::Dispatch(ex.iter().map(|&t| Ok((t.0, fx.map(r, t)?))).collect::<Result<_, PlanError>>()?),
            }
        } else {
            block_branch(&fx, r, fx.entry_block(n))?
        };
        nodes[n].branch = Some(branch);
    }
    // Region dominator trees and preds.
    let mut preds: Vec<Vec<NodeId>> = vec![Vec::new(); cap + nl];
    for &n in &order {
        if !nodes[n].live {
            continue;
        }
        let eb = fx.entry_block(n);
        let r = fx.region_of(n);
        let is_region_entry = match r {
            Some(p) => lf.loops[p].header == eb && n < cap,
            None => Some(eb) == cfg.entry && (n >= cap || lf.innermost(eb).is_none()),
        };
        if is_region_entry {
            continue;
        }
        let Some(d) = dom.idom(eb) else { continue };
        nodes[n].idom = Some(fx.node_containing(r, d)?);
        let own_loop = if n >= cap { Some(n - cap) } else { None };
        for &p in cfg.preds(eb) {
            if !cfg.is_reachable(p) || own_loop.is_some_and(|l| lf.contains(l, p)) {
                continue;
            }
            let pn = fx.node_containing(r, p)?;
            if !preds[n].contains(&pn) {
                preds[n].push(pn);
            }
        }
    }
    for &n in &order {
        if let Some(d) = nodes[n].idom {
            if nodes[n].live {
                nodes[n].arm = preds[n].iter().all(|&p| p == d);
                if !nodes[n].arm {
                    nodes[d].merge_children.push(n);
                }
            }
        }
    }
    // Exits of D(n), bottom-up (children come later in RPO).
    for &n in order.iter().rev() {
        if !nodes[n].live {
            continue;
        }
        let mut ex = NodeList::new();
        for t in node_targets(nodes[n].branch.as_ref()) {
            if nodes[t].idom != Some(n) || !nodes[t].arm {
                ex.push(t);
            }
        }
        nodes[n].exits = ex;
    }
    finish_exits(&mut nodes, &order);
    Ok(FnPlan {
        cap,
        blocks: cfg.rpo.clone(),
        nodes,
        loops: loop_plans(&fx, &loop_exits)?,
        root: root_node(&fx)?,
        unreachable: f.blocks().iter().copied().filter(|&b| !cfg.is_reachable(b)).collect(),
    })
}

/// Exit targets of every loop: blocks outside it that its blocks branch to.
fn loop_exits(cfg: &Cfg, lf: &LoopForest) -> Vec<Vec<Block>> {
    let mut out: Vec<Vec<Block>> = vec![Vec::new(); lf.loops.len()];
    for &b in &cfg.rpo {
        for &t in cfg.succs(b) {
            let mut l = lf.innermost(b);
            while let Some(c) = l {
                if lf.contains(c, t) {
                    break;
                }
                if !out[c].contains(&t) {
                    out[c].push(t);
                }
                l = lf.loops[c].parent;
            }
        }
    }
    out
}

/// Move into each loop (innermost first) the exit blocks that only the
/// loop enters and that end the function or go on to other exits of the
/// same loop, such as `break` and early-`return` arms. Left outside, each
/// would be a separate exit target needing the selector dispatch.
fn absorb_exit_blocks(cfg: &Cfg, lf: &LoopForest) -> LoopForest {
    let mut lf = lf.clone();
    let mut exits = loop_exits(cfg, &lf);
    for l in 0..lf.loops.len() {
        loop {
            let ex = exits[l].clone();
            if ex.len() <= 1 {
                break;
            }
            let h = lf.loops[l].header;
            // The header's own exit and blocks other exits flow into stay out:
            // they are the natural merge.
            let downstream = |t: Block| cfg.succs(h).contains(&t) || ex.iter().any(|&x| cfg.succs(x).contains(&t));
            let pick = ex.iter().copied().find(|&t| {
                let preds = cfg.preds(t);
                !preds.is_empty()
                    && !downstream(t)
                    && preds.iter().all(|&p| cfg.is_reachable(p) && lf.contains(l, p))
                    && cfg.succs(t).iter().all(|&x| x != t && ex.contains(&x))
            });
            let Some(t) = pick else { break };
            lf.loop_of[t.index()] = Some(l);
            let mut a = Some(l);
            while let Some(c) = a {
                exits[c].retain(|&x| x != t);
                a = lf.loops[c].parent;
            }
        }
    }
    lf
}

/// Node targets of a branch, each once.
pub fn node_targets(b: Option<&Branch>) -> NodeList {
    let mut out = NodeList::new();
    let mut add = |t: &Tgt| {
        if let Tgt::Node(n) = t {
            if !out.contains(n) {
                out.push(*n);
            }
        }
    };
    match b {
        Some(Branch::Br(t)) => add(t),
        Some(Branch::Cond(_, a, b)) => {
            add(a);
            add(b);
        }
        Some(Branch::Indexed(_, ia)) => {
            add(&ia.default);
            ia.arms.iter().for_each(add);
        }
        Some(Branch::Dispatch(ts)) => ts.iter().for_each(|(_, t)| add(t)),
        _ => {}
    }
    out
}

/// Complete `exits`, stage numbers, guards and fall-through boundaries.
/// `nodes[n].exits` holds only `n`'s own goto targets on entry.
fn finish_exits(nodes: &mut [NodeInfo], order: &[NodeId]) {
    // Arm children of each node, in `order`.
    let arm_pairs = order.iter().filter_map(|&c| {
        let ci = &nodes[c];
        if ci.live && ci.arm {
            ci.idom.map(|d| (d, c))
        } else {
            None
        }
    });
    let arm_children = FlatLists::from_pairs(nodes.len(), arm_pairs);
    for &n in order {
        let mut mc = std::mem::take(&mut nodes[n].merge_children);
        mc.sort_by_key(|&c| nodes[c].rpo);
        nodes[n].merge_children = mc;
    }
    // Bottom-up: pending gotos through the stages of D(n).
    fn add_all(pending: &mut NodeList, from: &[NodeId]) {
        for &e in from {
            if !pending.contains(&e) {
                pending.push(e);
            }
        }
    }
    for &n in order.iter().rev() {
        if !nodes[n].live {
            continue;
        }
        let mut pending = std::mem::take(&mut nodes[n].exits);
        for &c in arm_children.get(n) {
            add_all(&mut pending, &nodes[c].exits);
        }
        for j in 0..nodes[n].merge_children.len() {
            let c = nodes[n].merge_children[j];
            nodes[c].stage = j + 1;
            nodes[c].guarded = !(pending.len() == 1 && pending[0] == c);
            pending.retain(|x| *x != c);
            add_all(&mut pending, &nodes[c].exits);
        }
        nodes[n].exits = pending;
    }
    // Top-down: where control lands when it falls out of D(c).
    for &n in order {
        if !nodes[n].live {
            continue;
        }
        let m = nodes[n].merge_children.len();
        let nb = nodes[n].next_boundary;
        for &c in arm_children.get(n) {
            nodes[c].next_boundary = if m >= 1 { Some((n, 1)) } else { nb };
        }
        for j in 0..m {
            let c = nodes[n].merge_children[j];
            nodes[c].next_boundary = if j + 1 < m { Some((n, j + 2)) } else { nb };
        }
    }
}

fn block_branch(fx: &Facts, r: Option<LoopId>, b: Block) -> Result<Branch, PlanError> {
    let f = fx.f;
    let t = f.terminator(b).ok_or(PlanError::NoTerminator(b))?;
    let d = f.inst(t);
    Ok(match d.opcode {
        Opcode::Br => Branch::Br(fx.map(r, d.blocks[0])?),
        Opcode::CondBr => {
            let (a, b) = (fx.map(r, d.blocks[0])?, fx.map(r, d.blocks[1])?);
            if a == b {
                Branch::Br(a)
            } else {
                Branch::Cond(d.operands[0], a, b)
            }
        }
        Opcode::BrIndexed => {
            let ts = d.blocks.iter().map(|&x| fx.map(r, x)).collect::<Result<Vec<_>, _>>()?;
            if ts.iter().all(|x| *x == ts[0]) {
                Branch::Br(ts[0])
            } else {
                let arms = IndexedArms { cases: f.cases(t).to_vec(), default: ts[0], arms: ts[1..].to_vec() };
                Branch::Indexed(d.operands[0], Box::new(arms))
            }
        }
        _ if d.has(Trait::FunctionExit) => Branch::Exit,
        op => return Err(PlanError::NotRawTerminator { block: b, op }),
    })
}

fn loop_plans(fx: &Facts, loop_exits: &[Vec<Block>]) -> Result<Vec<LoopPlan>, PlanError> {
    let mut out = Vec::new();
    for (l, ld) in fx.lf.loops.iter().enumerate() {
        let h = ld.header;
        let hn = fx.node_of(h)?;
        let r = Some(l);
        let multi_exit = loop_exits[l].len() > 1;
        let t = fx.f.terminator(h).ok_or(PlanError::NoTerminator(h))?;
        let d = fx.f.inst(t);
        let prepare = match d.opcode {
            Opcode::CondBr if d.blocks[0] != d.blocks[1] => match (fx.map(r, d.blocks[0])?, fx.map(r, d.blocks[1])?) {
                (Tgt::Node(body), Tgt::Break(exit)) if body != hn => {
                    Prepare::Cond { cond: d.operands[0], body: Some(body), exit }
                }
                (Tgt::Continue, Tgt::Break(exit)) if fx.updates[l] == Some(d.blocks[0]) => {
                    Prepare::Cond { cond: d.operands[0], body: None, exit }
                }
                _ => Prepare::Fresh,
            },
            Opcode::Br => match fx.map(r, d.blocks[0])? {
                Tgt::Node(body) if body != hn => Prepare::Br { body },
                _ => Prepare::Fresh,
            },
            _ => Prepare::Fresh,
        };
        out.push(LoopPlan { header: h, header_node: hn, update: fx.updates[l], prepare, multi_exit });
    }
    Ok(out)
}

fn root_node(fx: &Facts) -> Result<NodeId, PlanError> {
    let e = fx.cfg.entry.ok_or(PlanError::NoBody)?;
    fx.node_in(None, e)
}
