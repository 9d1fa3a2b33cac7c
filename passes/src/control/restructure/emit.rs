//! Emission of a `restructure_cfg` plan into a copy of the function: every
//! reachable block gets its structured terminator, fresh blocks provide
//! loop headers, `prepare` / `update` roles, merges, guards and
//! trampolines. See `plan.rs` for the scheme; this file only follows it.

use smallvec::SmallVec;
use xir::analysis::{Cfg, LoopId};
use xir::{Block, Function, Inst, InstData, Metadata, Module, Opcode, Payload, TypeTable, Value};

use super::plan::{Branch, FnPlan, NodeId, Prepare, Tgt};
use crate::control::util::{br, set_terminator, term, unreachable};

/// One step of emission left to do (see `Emitter::emit_d`).
enum Task {
    /// Emit `D(node)` continuing at the block (`free`: nothing merges there).
    D(NodeId, Option<Block>, bool),
    /// Emit the merge children of `n` from the `j`th on, at `bounds`.
    Children { n: NodeId, j: usize, k: Option<Block>, free: bool, bounds: SmallVec<[Block; 2]> },
    /// Leave the loop of node `n` (its body is emitted) and emit its branch.
    AfterLoop { n: NodeId, merge: Block, direct: Option<NodeId>, k: Option<Block>, free: bool },
}

/// What a construct's emission leaves to do once its own blocks are set.
enum Next {
    Nothing,
    /// Continue with `D(node)` at this continuation (a tail call).
    Tail(NodeId, Option<Block>, bool),
    /// Emit these arm children, in order, each merging at the block.
    Arms(Vec<NodeId>, Block),
}

impl Next {
    fn push_to(self, stack: &mut Vec<Task>) {
        match self {
            Next::Nothing => {}
            Next::Tail(n, k, free) => stack.push(Task::D(n, k, free)),
            Next::Arms(arms, mg) => stack.extend(arms.into_iter().rev().map(|s| Task::D(s, Some(mg), false))),
        }
    }
}

struct LoopCtx {
    update: Block,
    merge: Block,
    multi_exit: bool,
}

pub struct Emitter<'a> {
    m: &'a mut Module,
    pub f: Function,
    plan: &'a FnPlan,
    headers: Vec<Block>,
    sel: Option<Inst>,
    ctx: Vec<LoopCtx>,
    fresh_merges: Vec<Block>,
    /// Nodes are numbered in reverse post order, which emission roughly
    /// follows: the walk asks for the terminator records of the blocks
    /// after the one being emitted.
    terminators: xir::Walk<'a, Block, xir::reads::Terminator>,
}

impl<'a> Emitter<'a> {
    pub fn new(m: &'a mut Module, f: Function, plan: &'a FnPlan) -> Self {
        let terminators = f.walk(&plan.blocks, xir::reads::Terminator);
        let mut e = Emitter {
            m,
            f,
            plan,
            headers: Vec::new(),
            sel: None,
            ctx: Vec::new(),
            fresh_merges: Vec::new(),
            terminators,
        };
        e.headers = (0..plan.loops.len()).map(|_| e.f.add_block()).collect();
        e
    }

    /// Emit the whole function; returns it with its final CFG (its layout
    /// is that CFG's reverse post order, then the blocks it never reaches).
    pub fn run(mut self) -> (Function, Cfg) {
        for &b in &self.plan.unreachable {
            if let Some(t) = self.f.terminator(b) {
                if matches!(self.f.inst(t).opcode, Opcode::Br | Opcode::CondBr | Opcode::BrIndexed) {
                    set_terminator(&mut self.f, b, unreachable("unreachable block"));
                }
            }
        }
        let root = self.plan.root;
        self.emit_d(root, None, false);
        let entry = self.entry(root);
        self.f.set_body(entry);
        // Merges that nothing branches to say so. A block without
        // predecessors is unreachable (the entry is no fresh merge), so
        // this changes no reachable path.
        let mut targeted = vec![false; self.f.block_capacity()];
        for (_, t) in self.f.terminators_in_layout() {
            for &s in t.map(|t| self.f.inst(t).successor_slice()).unwrap_or(&[]) {
                if let Some(t) = targeted.get_mut(s.index()) {
                    *t = true;
                }
            }
        }
        for &b in &self.fresh_merges {
            if !targeted[b.index()] {
                set_terminator(&mut self.f, b, unreachable("merge of a construct whose arms never fall through"));
            }
        }
        if let Some(sel) = self.sel {
            self.f.insert_inst(entry, 0, sel);
        }
        // Layout: reverse post order, then the blocks the CFG never reaches.
        let cfg = Cfg::compute(&self.f);
        let mut layout = cfg.rpo.clone();
        layout.extend(self.f.blocks().iter().copied().filter(|&b| !cfg.is_reachable(b)));
        self.f.set_layout(layout);
        (self.f, cfg)
    }

    fn entry(&self, n: NodeId) -> Block {
        match self.plan.as_loop(n) {
            Some(l) => self.headers[l],
            None => self.plan.block(n),
        }
    }

    fn new_block(&mut self) -> Block {
        self.f.add_block()
    }

    fn sel_value(&mut self) -> Value {
        let i = *self.sel.get_or_insert_with(|| {
            let mut d = InstData::new(Opcode::Alloca, TypeTable::U32);
            d.md = Metadata::named("restructure.sel");
            self.f.create_inst(d)
        });
        Value::Inst(i)
    }

    /// `store sel, id` before the terminator of `b`.
    fn store_sel(&mut self, b: Block, id: u32) {
        let sel = self.sel_value();
        let c = self.m.const_u32(id);
        self.f.insert_before_terminator(b, term(Opcode::Store, &[sel, c], &[]));
    }

    /// `%s = load sel` before the terminator of `b`.
    fn load_sel(&mut self, b: Block) -> Value {
        let sel = self.sel_value();
        let mut d = InstData::new(Opcode::Load, TypeTable::U32);
        d.operands.push(sel);
        Value::Inst(self.f.insert_before_terminator(b, d))
    }

    fn eq_const(&mut self, b: Block, v: Value, id: u32) -> Value {
        let c = self.m.const_u32(id);
        let mut d = InstData::new(Opcode::Eq, TypeTable::BOOL);
        d.operands = SmallVec::from_slice(&[v, c]);
        Value::Inst(self.f.insert_before_terminator(b, d))
    }

    /// The merge of a construct continuing at `k`: `k` itself when no other
    /// construct merges there, else a fresh block branching to it.
    fn merge_for(&mut self, k: Option<Block>, free: bool) -> Block {
        match k {
            Some(k) if free => k,
            _ => {
                let b = self.new_block();
                let t = match k {
                    Some(k) => br(k),
                    None => unreachable("merge of a construct whose arms never fall through"),
                };
                set_terminator(&mut self.f, b, t);
                self.fresh_merges.push(b);
                b
            }
        }
    }

    /// Emit `D(n)` continuing at `k` (`free`: no construct merges at `k` yet).
    ///
    /// The scheme is recursive (a construct's arms and merge children are
    /// emitted inside it), but nesting depth follows the input, so the
    /// recursion runs on an explicit stack of tasks: thousands of nested
    /// `if`s must not overflow the thread's stack. Tasks run in the order
    /// the recursive calls would, so block and value ids are the same.
    fn emit_d(&mut self, n: NodeId, k: Option<Block>, free: bool) {
        let mut stack = vec![Task::D(n, k, free)];
        while let Some(task) = stack.pop() {
            match task {
                Task::D(n, k, free) => self.node(n, k, free, &mut stack),
                Task::Children { n, j, k, free, bounds } => self.merge_child(n, j, k, free, bounds, &mut stack),
                Task::AfterLoop { n, merge, direct, k, free } => {
                    self.ctx.pop();
                    if let Some(s) = direct {
                        stack.push(Task::D(s, k, free));
                    } else {
                        let plan = self.plan;
                        let branch = plan.nodes[n].branch.as_ref().expect("loop node has a branch");
                        let stored = matches!(branch, Branch::Dispatch(_));
                        let next = self.emit_branch(n, merge, branch, k, free, stored);
                        next.push_to(&mut stack);
                    }
                }
            }
        }
    }

    /// The start of `D(n)`: its stage 0 now, its merge children after.
    fn node(&mut self, n: NodeId, k: Option<Block>, free: bool, stack: &mut Vec<Task>) {
        self.terminators.seek(&self.f, n);
        let plan = self.plan;
        let mc = &plan.nodes[n].merge_children;
        let bounds: SmallVec<[Block; 2]> =
            mc.iter().map(|&c| if self.plan.nodes[c].guarded { self.new_block() } else { self.entry(c) }).collect();
        let (s0k, s0free) = if bounds.is_empty() { (k, free) } else { (Some(bounds[0]), true) };
        if !bounds.is_empty() {
            stack.push(Task::Children { n, j: 0, k, free, bounds });
        }
        let next = match self.plan.as_loop(n) {
            Some(l) => self.emit_loop(n, l, s0k, s0free, stack),
            None => {
                let b = self.plan.block(n);
                let branch = plan.nodes[n].branch.as_ref().expect("live node has a branch");
                self.emit_branch(n, b, branch, s0k, s0free, false)
            }
        };
        next.push_to(stack);
    }

    /// Merge child `j` of `n` (its stage 0 is emitted), then the next ones.
    fn merge_child(
        &mut self,
        n: NodeId,
        j: usize,
        k: Option<Block>,
        free: bool,
        bounds: SmallVec<[Block; 2]>,
        stack: &mut Vec<Task>,
    ) {
        let plan = self.plan;
        let c = plan.nodes[n].merge_children[j];
        let last = j + 1 == bounds.len();
        if self.plan.nodes[c].guarded {
            let g = bounds[j];
            let mg = if last { self.merge_for(k, free) } else { bounds[j + 1] };
            let s = self.load_sel(g);
            let e = self.eq_const(g, s, self.plan.id(c));
            let ec = self.entry(c);
            set_terminator(&mut self.f, g, term(Opcode::If, &[e], &[ec, mg, mg]));
            if !last {
                stack.push(Task::Children { n, j: j + 1, k, free, bounds });
            }
            stack.push(Task::D(c, Some(mg), false));
        } else if last {
            stack.push(Task::D(c, k, free));
        } else {
            let next = bounds[j + 1];
            stack.push(Task::Children { n, j: j + 1, k, free, bounds });
            stack.push(Task::D(c, Some(next), true));
        }
    }

    fn emit_loop(&mut self, n: NodeId, l: LoopId, k: Option<Block>, free: bool, stack: &mut Vec<Task>) -> Next {
        let plan = self.plan;
        let lp = &plan.loops[l];
        let x = self.headers[l];
        let h = lp.header;
        let update = match lp.update {
            Some(u) => u,
            None => self.new_block(),
        };
        let branch = plan.nodes[n].branch.as_ref().expect("loop node has a branch");
        let direct = match branch {
            &Branch::Br(Tgt::Node(s)) if self.plan.is_arm_child(n, s) => Some(s),
            _ => None,
        };
        let merge = match direct {
            Some(s) => self.entry(s),
            None => self.new_block(),
        };
        let (prepare, body, root) = match lp.prepare {
            Prepare::Fresh => {
                let p = self.new_block();
                set_terminator(&mut self.f, p, br(h));
                (p, h, Some(lp.header_node))
            }
            Prepare::Cond { cond, body, exit } => {
                let be = match body {
                    Some(bn) => self.entry(bn),
                    None => {
                        let e = self.new_block();
                        set_terminator(&mut self.f, e, br(update));
                        e
                    }
                };
                if lp.multi_exit {
                    self.store_sel(h, exit.0);
                }
                set_terminator(&mut self.f, h, term(Opcode::CondBr, &[cond], &[be, merge]));
                (h, be, body)
            }
            Prepare::Br { body } => {
                let be = self.entry(body);
                set_terminator(&mut self.f, h, br(be));
                (h, be, Some(body))
            }
        };
        set_terminator(&mut self.f, x, term(Opcode::Loop, &[], &[prepare, body, update, merge]));
        set_terminator(&mut self.f, update, br(prepare));
        // The body is emitted inside the loop's context; its branch after.
        self.ctx.push(LoopCtx { update, merge, multi_exit: lp.multi_exit });
        stack.push(Task::AfterLoop { n, merge, direct, k, free });
        if let Some(r) = root {
            stack.push(Task::D(r, Some(update), false));
        }
        Next::Nothing
    }

    fn loop_ctx(&self) -> &LoopCtx {
        self.ctx.last().expect("continue / break inside a loop region")
    }

    /// Emit `site`'s branch at the end of block `tb`.
    fn emit_branch(
        &mut self,
        site: NodeId,
        tb: Block,
        branch: &Branch,
        k: Option<Block>,
        free: bool,
        stored: bool,
    ) -> Next {
        match branch {
            Branch::Exit => Next::Nothing,
            Branch::Dead => {
                set_terminator(&mut self.f, tb, unreachable("the loop is never left"));
                Next::Nothing
            }
            Branch::Br(t) => {
                let target = match *t {
                    Tgt::Node(s) if self.plan.is_arm_child(site, s) => {
                        let e = self.entry(s);
                        set_terminator(&mut self.f, tb, br(e));
                        return Next::Tail(s, k, free);
                    }
                    Tgt::Node(s) => {
                        if !stored && self.plan.needs_store(site, s) {
                            self.store_sel(tb, self.plan.id(s));
                        }
                        k.expect("a goto leaves its construct through a continuation")
                    }
                    Tgt::Continue => self.loop_ctx().update,
                    Tgt::Break(x) => {
                        if self.loop_ctx().multi_exit && !stored {
                            self.store_sel(tb, x.0);
                        }
                        self.loop_ctx().merge
                    }
                };
                set_terminator(&mut self.f, tb, br(target));
                Next::Nothing
            }
            Branch::Cond(c, a, b) => {
                let mg = self.merge_for(k, free);
                let mut inl = Vec::new();
                let ta = self.arm(site, *a, mg, stored, &mut inl);
                let tf = self.arm(site, *b, mg, stored, &mut inl);
                set_terminator(&mut self.f, tb, term(Opcode::If, &[*c], &[ta, tf, mg]));
                Next::Arms(inl, mg)
            }
            Branch::Indexed(v, ia) => {
                let (cases, d, cs) = (&ia.cases, &ia.default, &ia.arms);
                let mg = self.merge_for(k, free);
                let mut inl = Vec::new();
                let mut memo: Vec<(Tgt, Block)> = Vec::new();
                let mut arm_of = |e: &mut Self, t: Tgt, inl: &mut Vec<NodeId>| {
                    if let Some(&(_, b)) = memo.iter().find(|p| p.0 == t) {
                        return b;
                    }
                    let b = e.arm(site, t, mg, stored, inl);
                    memo.push((t, b));
                    b
                };
                let db = arm_of(self, *d, &mut inl);
                let mut blocks: SmallVec<[Block; 3]> = SmallVec::from_slice(&[mg, db]);
                for &t in cs {
                    blocks.push(arm_of(self, t, &mut inl));
                }
                let mut data = term(Opcode::Switch, &[*v], &blocks);
                data.payload = Payload::Cases(cases.clone());
                set_terminator(&mut self.f, tb, data);
                Next::Arms(inl, mg)
            }
            Branch::Dispatch(ts) => {
                let mg = self.merge_for(k, free);
                let mut inl = Vec::new();
                let s = self.load_sel(tb);
                let arms: Vec<Block> = ts.iter().map(|&(_, t)| self.arm(site, t, mg, true, &mut inl)).collect();
                let data = if ts.len() == 2 {
                    let e = self.eq_const(tb, s, ts[0].0);
                    term(Opcode::If, &[e], &[arms[0], arms[1], mg])
                } else {
                    let last = ts.len() - 1;
                    let mut blocks: SmallVec<[Block; 3]> = SmallVec::from_slice(&[mg, arms[last]]);
                    blocks.extend(arms[..last].iter().copied());
                    let mut data = term(Opcode::Switch, &[s], &blocks);
                    data.payload = Payload::Cases(ts[..last].iter().map(|p| p.0 as u64).collect());
                    data
                };
                set_terminator(&mut self.f, tb, data);
                Next::Arms(inl, mg)
            }
        }
    }

    /// The role block of one arm of `site`'s construct merging at `mg`.
    fn arm(&mut self, site: NodeId, t: Tgt, mg: Block, stored: bool, inl: &mut Vec<NodeId>) -> Block {
        match t {
            Tgt::Node(s) if self.plan.is_arm_child(site, s) => {
                if !inl.contains(&s) {
                    inl.push(s);
                }
                self.entry(s)
            }
            Tgt::Node(s) => {
                if stored || !self.plan.needs_store(site, s) {
                    return mg;
                }
                let tr = self.new_block();
                set_terminator(&mut self.f, tr, br(mg));
                self.store_sel(tr, self.plan.id(s));
                tr
            }
            Tgt::Continue => {
                if self.plan.first_boundary(site).is_none() {
                    return mg;
                }
                let tr = self.new_block();
                let u = self.loop_ctx().update;
                set_terminator(&mut self.f, tr, br(u));
                tr
            }
            Tgt::Break(x) => {
                let tr = self.new_block();
                let m = self.loop_ctx().merge;
                set_terminator(&mut self.f, tr, br(m));
                if self.loop_ctx().multi_exit && !stored {
                    self.store_sel(tr, x.0);
                }
                tr
            }
        }
    }
}
