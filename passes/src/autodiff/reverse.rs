//! The reverse sweep of one planned scope, written into the function.
//!
//! Adjoints live in memory, so the sweep needs neither Phis nor SSA
//! bookkeeping across its branches: every gradient-carrying value `v` gets
//! a slot `adj(v)` of its type, and every active local variable a shadow
//! variable of the same type, addressed through the same `gep` paths. The
//! sweep replays the tape backwards, construct by construct: an `if` of the
//! tape becomes an `if` on the same condition whose arms replay the arms
//! backwards (likewise `switch`). A primal value the sweep needs where its
//! definition does not dominate (one defined inside a construct) is stored
//! to a slot when it is computed and loaded where it is needed. The slots
//! are ordinary variables that the post-restructure `mem2reg` promotes.
//!
//! Around the sweep: each input's gradient is a variable zeroed where the
//! scope starts; the backward's position now zeroes the adjoints, seeds the
//! output's adjoint, runs the sweep and continues with the code after the
//! backward; at each `requires_gradient` (replayed last to first) the
//! variable's adjoint is added to its gradient and cleared, so the gradient
//! belongs to the value the variable held at the mark.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use xir::{
    Block, FuncId, Function, Inst, InstData, Metadata, Module, Opcode, Payload, SpillKind, TypeId, TypeTable, Value,
};

use super::emit::{shape, Emitter, Env};
use super::plan::ScopePlan;
use super::rules::{Rules, Shape};

/// The sweep's state: the forward function as it was, and the slots
/// created so far.
struct Sweep<'a> {
    m: &'a mut Module,
    func: FuncId,
    /// The function before any change (the sweep reads the tape here).
    src: Function,
    plan: &'a ScopePlan,
    /// The top-level index of the backward.
    kb: usize,
    cur: Block,
    new_blocks: Vec<Block>,
    new_allocas: Vec<Inst>,
    adj: FxHashMap<Value, Value>,
    shadow: FxHashMap<Value, Value>,
    /// The shadow and adjoint slots in creation order: the backward zeroes
    /// them in this order (kept as they are made rather than sorted from
    /// the maps, which cost `n log n` on large scopes).
    zeroed: Vec<Value>,
    spill: FxHashMap<Value, Value>,
    grad: FxHashMap<Value, Value>,
}

/// Differentiate the planned scope in `func`.
pub fn differentiate(m: &mut Module, func: FuncId, plan: &ScopePlan) {
    let src = m.func(func).clone();
    let shape = &plan.shape;
    let kb = shape.level_of(src.parent(shape.backward).expect("placed")).expect("in the scope");
    let mut s = Sweep {
        m,
        func,
        src,
        plan,
        kb,
        cur: Block::new(0),
        new_blocks: Vec::new(),
        new_allocas: Vec::new(),
        adj: FxHashMap::default(),
        shadow: FxHashMap::default(),
        zeroed: Vec::new(),
        spill: FxHashMap::default(),
        grad: FxHashMap::default(),
    };
    for &r in &plan.roots {
        let ty = s.src.value_type(s.m, r);
        let a = s.alloca(ty, r, "adj");
        s.shadow.insert(r, a);
        s.zeroed.push(a);
    }
    for &mk in &shape.marks {
        let p = s.src.inst(mk).operands[0];
        let ty = s.src.value_type(s.m, p);
        let g = s.alloca(ty, p, "grad");
        s.grad.insert(p, g);
    }
    let y = s.src.inst(shape.backward).operands[0];
    let y_ty = s.src.value_type(s.m, y);
    let markers: Vec<Inst> = s.scope_insts().filter(|&i| s.src.opcode(i) == Opcode::AutodiffGradientMarker).collect();
    let seed_slot = (!markers.is_empty()).then(|| s.alloca(y_ty, y, "seed"));

    // The sweep, from a fresh block; the code after the backward moves to
    // `cont`.
    let start = s.block("backward");
    let sweep = s.block("sweep");
    s.cur = sweep;
    let bb = shape.top_level[kb];
    let chain: Vec<Block> = shape.top_level[..=kb].to_vec();
    s.reverse_chain(&chain);
    let cont = s.block("after_backward");
    s.emitter().op_blocks(Opcode::Br, &[cont]);
    // The sweep's entry: zero every adjoint, seed the output, go.
    s.cur = start;
    for slot in std::mem::take(&mut s.zeroed) {
        let ty = s.src_ty_of_slot(slot);
        let mut e = s.emitter();
        let z = e.zero(ty);
        e.store(slot, z);
    }
    let seed = match seed_slot {
        Some(slot) => s.emitter().load(slot),
        None => s.emitter().filled(y_ty, 1.0),
    };
    if s.src.is_lvalue(y) {
        if plan.root_active(&s.src, y) {
            let a = s.adj_addr(y);
            s.emitter().accumulate(a, seed);
        }
    } else if plan.is_active(y) {
        let a = s.adj_slot(y);
        s.emitter().accumulate(a, seed);
    }
    s.emitter().op_blocks(Opcode::Br, &[sweep]);

    // Now the forward code: split at the backward, enter the sweep.
    let Sweep { m, new_blocks, new_allocas, spill, grad, .. } = s;
    let mut fwd = Rewrite { m, func, src_scope: shape.scope };
    fwd.split_at_backward(shape.backward, bb, start, cont);
    fwd.replace_intrinsics(plan, cont, &grad, seed_slot);
    fwd.store_spills(&spill);
    fwd.initialize(shape.body, &grad, seed_slot, y_ty);
    let f = fwd.m.func_mut(func);
    let entry = f.body().expect("a function with a scope has a body");
    for (k, &a) in new_allocas.iter().enumerate() {
        f.insert_inst(entry, k, a);
    }
    // Layout: the sweep's blocks right after the backward's block, then
    // the code that followed the backward.
    let fresh: rustc_hash::FxHashSet<Block> = new_blocks.iter().copied().collect();
    let mut layout: Vec<Block> = f.blocks().iter().copied().filter(|b| !fresh.contains(b)).collect();
    let at = layout.iter().position(|&b| b == bb).expect("in the layout") + 1;
    layout.splice(at..at, new_blocks.iter().copied());
    f.set_layout(layout);
}

impl Sweep<'_> {
    fn emitter(&mut self) -> Emitter<'_> {
        Emitter { m: self.m, func: self.func, block: self.cur }
    }

    /// A new block of the sweep, named for what it holds.
    fn block(&mut self, name: &str) -> Block {
        let f = self.m.func_mut(self.func);
        let b = f.add_block();
        f.set_block_name(b, Some(name));
        self.new_blocks.push(b);
        b
    }

    /// A new variable of `ty` named after `v` (`%v.suffix`), placed in the
    /// entry block at the end.
    fn alloca(&mut self, ty: TypeId, v: Value, suffix: &str) -> Value {
        let md = Metadata::named(self.name_of(v, suffix));
        self.alloca_with(ty, md)
    }

    fn name_of(&self, v: Value, suffix: &str) -> String {
        let base = match v {
            Value::Inst(i) => self.src.inst_name(i).map(str::to_string),
            Value::Arg(a) => self.src.args[a as usize].md.name.clone(),
            _ => None,
        };
        format!("{}.{suffix}", base.unwrap_or_else(|| "ad".into()))
    }

    /// A slot used only by whole loads and stores, tagged like a reg2mem
    /// spill: the post-restructure `mem2reg` promotes it and the spill
    /// audit fails if one survives.
    fn slot(&mut self, ty: TypeId, v: Value, suffix: &str) -> Value {
        let mut md = Metadata::named(self.name_of(v, suffix));
        md.spill = Some(SpillKind::CrossBlock);
        self.alloca_with(ty, md)
    }

    fn alloca_with(&mut self, ty: TypeId, md: Metadata) -> Value {
        let mut d = InstData::new(Opcode::Alloca, ty);
        d.md = md;
        let i = self.m.func_mut(self.func).create_inst(d);
        self.new_allocas.push(i);
        Value::Inst(i)
    }

    fn src_ty_of_slot(&self, slot: Value) -> TypeId {
        self.m.func(self.func).inst(slot.as_inst().expect("a slot")).ty
    }

    fn scope_insts(&self) -> impl Iterator<Item = Inst> + '_ {
        self.plan.shape.blocks.iter().flat_map(|&(b, _)| self.src.block(b).insts().iter().copied())
    }

    /// Whether `v` is usable anywhere in the sweep: defined outside the
    /// scope or in a top-level block up to the backward's.
    fn available(&self, v: Value) -> bool {
        let Value::Inst(i) = v else { return true };
        let Some(b) = self.src.parent(i) else { return true };
        match self.plan.shape.level_of(b) {
            None => true,
            Some(k) => k <= self.kb && self.plan.shape.top_level[k] == b,
        }
    }

    /// `v`'s primal value at the sweep's current point.
    fn primal(&mut self, v: Value) -> Value {
        if self.available(v) {
            return v;
        }
        let slot = match self.spill.get(&v) {
            Some(&s) => s,
            None => {
                let ty = self.src.value_type(self.m, v);
                let s = self.slot(ty, v, "primal");
                self.spill.insert(v, s);
                s
            }
        };
        self.emitter().load(slot)
    }

    /// The adjoint slot of a gradient-carrying value.
    fn adj_slot(&mut self, v: Value) -> Value {
        if let Some(&s) = self.adj.get(&v) {
            return s;
        }
        let ty = self.src.value_type(self.m, v);
        let s = self.slot(ty, v, "adj");
        self.adj.insert(v, s);
        self.zeroed.push(s);
        s
    }

    /// `adj(v) += c` when `v` carries a gradient.
    fn acc(&mut self, v: Value, c: Value) {
        if self.plan.is_active(v) {
            let slot = self.adj_slot(v);
            self.emitter().accumulate(slot, c);
        }
    }

    /// The shadow address of a local address (same path, shadow root).
    fn adj_addr(&mut self, p: Value) -> Value {
        let i = p.as_inst().expect("a local address");
        if self.src.opcode(i) == Opcode::Alloca {
            return self.shadow[&p];
        }
        let d = self.src.inst(i);
        let (base, idx, ty) = (d.operands[0], d.operands[1..].to_vec(), d.ty);
        let base = self.adj_addr(base);
        let mut ops = vec![base];
        for v in idx {
            let v = self.primal(v);
            ops.push(v);
        }
        self.emitter().op(Opcode::Gep, ty, &ops)
    }

    /// Replay the blocks of a chain (top-level blocks, or one arm) backwards.
    fn reverse_chain(&mut self, chain: &[Block]) {
        for &b in chain.iter().rev() {
            let insts: Vec<Inst> =
                self.src.block(b).insts().iter().copied().filter(|i| self.plan.tape.contains(i)).collect();
            if let Some(&t) = insts.last() {
                if matches!(self.src.opcode(t), Opcode::If | Opcode::Switch) {
                    self.reverse_construct(t);
                }
            }
            for &i in insts.iter().rev() {
                self.reverse_inst(i);
            }
        }
    }

    /// The chain of blocks from `entry` to (not including) `stop`.
    fn chain(&self, entry: Block, stop: Block) -> Vec<Block> {
        let mut out = Vec::new();
        let mut b = entry;
        while b != stop {
            out.push(b);
            let t = self.src.terminator(b).expect("terminated");
            let d = self.src.inst(t);
            b = match d.opcode {
                Opcode::If => d.blocks[2],
                Opcode::Switch => d.blocks[0],
                _ => d.blocks[0],
            };
        }
        out
    }

    fn reverse_construct(&mut self, t: Inst) {
        let d = self.src.inst_data(t);
        match d.opcode {
            Opcode::If => {
                let (tb, fb, mb) = (d.blocks[0], d.blocks[1], d.blocks[2]);
                let c = self.primal(d.operands[0]);
                let (rt, rf, rm) = (self.block("sweep.then"), self.block("sweep.else"), self.block("sweep.join"));
                self.emitter().op_full(Opcode::If, &[c], &[rt, rf, rm], Payload::None);
                for (arm, r) in [(tb, rt), (fb, rf)] {
                    self.cur = r;
                    let chain = self.chain(arm, mb);
                    self.reverse_chain(&chain);
                    self.emitter().op_blocks(Opcode::Br, &[rm]);
                }
                self.cur = rm;
            }
            Opcode::Switch => {
                let mb = d.blocks[0];
                let v = self.primal(d.operands[0]);
                let rm = self.block("sweep.join");
                let mut mirror: FxHashMap<Block, Block> = FxHashMap::default();
                let mut blocks = vec![rm];
                for &x in &d.blocks[1..] {
                    let r = match mirror.get(&x) {
                        Some(&r) => r,
                        None => {
                            let r = self.block("sweep.case");
                            mirror.insert(x, r);
                            r
                        }
                    };
                    blocks.push(r);
                }
                let cases = self.src.cases(t).to_vec();
                self.emitter().op_full(Opcode::Switch, &[v], &blocks, Payload::Cases(cases));
                let mut arms: Vec<(Block, Block)> = mirror.into_iter().collect();
                arms.sort_by_key(|&(_, r)| r.index());
                for (arm, r) in arms {
                    self.cur = r;
                    let chain = self.chain(arm, mb);
                    self.reverse_chain(&chain);
                    self.emitter().op_blocks(Opcode::Br, &[rm]);
                }
                self.cur = rm;
            }
            _ => unreachable!("the plan refused other constructs"),
        }
    }

    /// Replay one tape instruction backwards.
    fn reverse_inst(&mut self, i: Inst) {
        let d = self.src.inst_data(i);
        let r = Value::Inst(i);
        match d.opcode {
            Opcode::AutodiffRequiresGradient => {
                let p = d.operands[0];
                let (a, g) = (self.shadow[&p], self.grad[&p]);
                let ty = d_ty(self, p);
                let mut e = self.emitter();
                let v = e.load(a);
                e.accumulate(g, v);
                let z = e.zero(ty);
                e.store(a, z);
                return;
            }
            Opcode::Store => {
                let (p, v) = (d.operands[0], d.operands[1]);
                if self.plan.root_active(&self.src, p) {
                    let a = self.adj_addr(p);
                    let ty = d_ty(self, p);
                    let t = self.emitter().load(a);
                    self.acc(v, t);
                    let mut e = self.emitter();
                    let z = e.zero(ty);
                    e.store(a, z);
                }
                return;
            }
            _ => {}
        }
        if !self.plan.is_active(r) {
            return;
        }
        let slot = self.adj_slot(r);
        match d.opcode {
            Opcode::Load => {
                let a = self.adj_addr(d.operands[0]);
                let mut e = self.emitter();
                let g = e.load(slot);
                e.accumulate(a, g);
            }
            Opcode::Extract => {
                let x = d.operands[0];
                if self.plan.is_active(x) {
                    let g = self.emitter().load(slot);
                    let s = self.adj_slot(x);
                    let mut ops = vec![s];
                    for &v in &d.operands[1..] {
                        let v = self.primal(v);
                        ops.push(v);
                    }
                    let mut e = self.emitter();
                    let at = e.op(Opcode::Gep, d.ty, &ops);
                    e.accumulate(at, g);
                }
            }
            Opcode::Insert => {
                let (x, v) = (d.operands[0], d.operands[1]);
                let g = self.emitter().load(slot);
                let idx: Vec<Value> = d.operands[2..].iter().map(|&v| self.primal(v)).collect();
                let vt = d_ty(self, v);
                if self.plan.is_active(v) {
                    let mut ops = vec![g];
                    ops.extend(&idx);
                    let part = self.emitter().op(Opcode::Extract, vt, &ops);
                    self.acc(v, part);
                }
                if self.plan.is_active(x) {
                    let mut e = self.emitter();
                    let z = e.zero(vt);
                    let mut ops = vec![g, z];
                    ops.extend(&idx);
                    let rest = e.op(Opcode::Insert, d.ty, &ops);
                    self.acc(x, rest);
                }
            }
            Opcode::Aggregate => {
                let g = self.emitter().load(slot);
                for (k, &mk) in d.operands.iter().enumerate() {
                    if self.plan.is_active(mk) {
                        let ty = d_ty(self, mk);
                        let kc = self.m.const_u32(k as u32);
                        let part = self.emitter().op(Opcode::Extract, ty, &[g, kc]);
                        self.acc(mk, part);
                    }
                }
            }
            Opcode::Shuffle => {
                let x = d.operands[0];
                if self.plan.is_active(x) {
                    let g = self.emitter().load(slot);
                    let s = self.adj_slot(x);
                    let lane_ty = self.m.types.scalar_of(d.ty);
                    for (j, &lane) in d.operands[1..].iter().enumerate() {
                        let jc = self.m.const_u32(j as u32);
                        let mut e = self.emitter();
                        let part = e.op(Opcode::Extract, lane_ty, &[g, jc]);
                        let at = e.op(Opcode::Gep, lane_ty, &[s, lane]);
                        e.accumulate(at, part);
                    }
                }
            }
            Opcode::CastStatic => {
                let x = d.operands[0];
                if !xir::autodiff::differentiable(self.m, d.ty) {
                    return;
                }
                let xt = d_ty(self, x);
                let g = self.emitter().load(slot);
                let back = self.emitter().op(Opcode::CastStatic, xt, &[g]);
                self.acc(x, back);
            }
            Opcode::ReduceMin | Opcode::ReduceMax => self.reverse_reduce_extremum(i, &d, slot),
            op => {
                let shapes: Vec<Shape> = d.operands.iter().map(|&v| shape(&self.m.types, d_ty(self, v))).collect();
                let rule = Rules::builtin().find(op, &shapes).expect("the plan checked every replayed opcode");
                let g = self.emitter().load(slot);
                let operands: SmallVec<[Value; 3]> = d.operands.iter().map(|&v| self.primal(v)).collect();
                let result = self.primal(r);
                let env = Env { operands, result, adjoint: g };
                let scalar = self.m.types.scalar_of(d.ty);
                for (k, adj) in rule.adjoints.iter().enumerate() {
                    let v = d.operands[k];
                    let Some(e) = adj else { continue };
                    if !self.plan.is_active(v) {
                        continue;
                    }
                    let vt = d_ty(self, v);
                    let mut em = self.emitter();
                    let c = em.instantiate(e, &env, scalar);
                    let c = em.broadcast(c, vt);
                    self.acc(v, c);
                }
            }
        }
    }

    /// `reduce_min` / `reduce_max`: the gradient goes to the first lane
    /// equal to the result (docs/autodiff.md); a select chain, since "the
    /// first" is not a lane-wise rule.
    fn reverse_reduce_extremum(&mut self, i: Inst, d: &InstData, slot: Value) {
        let x = d.operands[0];
        if !self.plan.is_active(x) {
            return;
        }
        let xt = d_ty(self, x);
        let lanes = self.m.types.lanes(xt);
        let xv = self.primal(x);
        let rv = self.primal(Value::Inst(i));
        let g = self.emitter().load(slot);
        let zero = self.emitter().zero(d.ty);
        let no = self.m.const_bool(false);
        let mut found = no;
        let mut parts = Vec::new();
        for j in 0..lanes {
            let jc = self.m.const_u32(j);
            let mut e = self.emitter();
            let xj = e.op(Opcode::Extract, d.ty, &[xv, jc]);
            let eq = e.op(Opcode::Eq, TypeTable::BOOL, &[xj, rv]);
            let not_found = e.op(Opcode::BitNot, TypeTable::BOOL, &[found]);
            let take = e.op(Opcode::BitAnd, TypeTable::BOOL, &[eq, not_found]);
            parts.push(e.op(Opcode::Select, d.ty, &[take, g, zero]));
            found = e.op(Opcode::BitOr, TypeTable::BOOL, &[found, eq]);
        }
        let v = self.emitter().op(Opcode::Aggregate, xt, &parts);
        self.acc(x, v);
    }
}

/// The type of a local value in the function as it was.
fn d_ty(s: &Sweep<'_>, v: Value) -> TypeId {
    s.src.value_type(s.m, v)
}

/// The forward function's changes around the sweep.
struct Rewrite<'a> {
    m: &'a mut Module,
    func: FuncId,
    src_scope: Inst,
}

impl Rewrite<'_> {
    fn f(&mut self) -> &mut Function {
        self.m.func_mut(self.func)
    }

    /// Move the backward and what follows it to `cont`, and enter the
    /// sweep (`start`) in its place; the scope becomes a plain branch.
    fn split_at_backward(&mut self, backward: Inst, bb: Block, start: Block, cont: Block) {
        let f = self.f();
        let mut c = f.cursor().at_inst(backward);
        c.split_block(cont);
        let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
        br.blocks.push(start);
        f.append_inst(bb, br);
        f.remove_inst(backward);
        let scope = self.src_scope;
        let body = self.f().inst(scope).blocks[0];
        let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
        br.blocks.push(body);
        self.f().replace_inst(scope, br);
    }

    /// Each intrinsic becomes ordinary code.
    fn replace_intrinsics(
        &mut self,
        plan: &ScopePlan,
        cont: Block,
        grad: &FxHashMap<Value, Value>,
        seed: Option<Value>,
    ) {
        let insts: Vec<Inst> = {
            let f = self.m.func(self.func);
            // This scope's blocks and the code after its backward (now in
            // `cont`); another scope of the function keeps its own.
            plan.shape
                .blocks
                .iter()
                .map(|&(b, _)| b)
                .chain([cont])
                .flat_map(|b| f.block(b).insts().to_vec())
                .filter(|&i| f.inst_exists(i) && f.is_live(i) && f.inst(i).has(xir::Trait::Autodiff))
                .collect()
        };
        let mut done = rustc_hash::FxHashSet::default();
        for i in insts {
            if !done.insert(i) {
                continue;
            }
            let d = self.m.func(self.func).inst_data(i);
            match d.opcode {
                Opcode::AutodiffRequiresGradient => self.f().remove_inst(i),
                Opcode::AutodiffGradient => {
                    let mut l = InstData::new(Opcode::Load, d.ty);
                    l.operands.push(grad[&d.operands[0]]);
                    l.span = d.span;
                    self.f().replace_inst(i, l);
                }
                Opcode::AutodiffGradientMarker => {
                    let mut st = InstData::new(Opcode::Store, TypeTable::VOID);
                    st.operands.extend([seed.expect("a seed slot when markers exist"), d.operands[1]]);
                    st.span = d.span;
                    self.f().replace_inst(i, st);
                }
                Opcode::AutodiffAccumulateGradient => {
                    let g = grad[&d.operands[0]];
                    self.before(i, |e| e.accumulate(g, d.operands[1]));
                    self.f().remove_inst(i);
                }
                Opcode::AutodiffDetach => {
                    self.f().replace_all_uses(Value::Inst(i), d.operands[0]);
                    self.f().remove_inst(i);
                }
                _ => {}
            }
        }
    }

    /// Emit code right before `i`.
    fn before(&mut self, i: Inst, emit: impl FnOnce(&mut Emitter<'_>)) {
        let f = self.f();
        let (b, at) = (f.parent(i).expect("placed"), f.position(i).expect("placed"));
        self.emit_at(b, at, emit);
    }

    /// Emit code at position `at` of block `b` (the emitter appends, so it
    /// writes to a scratch block whose instructions then move into place).
    fn emit_at(&mut self, b: Block, at: usize, emit: impl FnOnce(&mut Emitter<'_>)) {
        let tmp = self.f().add_block();
        let mut e = Emitter { m: self.m, func: self.func, block: tmp };
        emit(&mut e);
        let f = self.f();
        let moved: Vec<Inst> = f.block(tmp).insts().to_vec();
        for (k, i) in moved.into_iter().enumerate() {
            f.move_inst(i, b, at + k);
        }
        f.remove_block(tmp);
    }

    /// Store each spilled primal value where it is computed.
    fn store_spills(&mut self, spill: &FxHashMap<Value, Value>) {
        let mut items: Vec<(Value, Value)> = spill.iter().map(|(&v, &s)| (v, s)).collect();
        items.sort_by_key(|(v, _)| v.as_inst().map(|i| i.index()));
        for (v, slot) in items {
            let i = v.as_inst().expect("spilled values are instruction results");
            let f = self.f();
            let b = f.parent(i).expect("placed");
            let at = f.position(i).expect("placed") + 1;
            let mut st = InstData::new(Opcode::Store, TypeTable::VOID);
            st.operands.extend([slot, v]);
            let k = f.create_inst(st);
            f.insert_inst(b, at, k);
        }
    }

    /// Where the scope starts: gradients zero, the seed ones.
    fn initialize(&mut self, body: Block, grad: &FxHashMap<Value, Value>, seed: Option<Value>, y_ty: TypeId) {
        let mut slots: Vec<Value> = grad.values().copied().collect();
        slots.sort_by_key(|v| v.as_inst().map(|i| i.index()));
        self.emit_at(body, 0, |e| {
            for g in slots {
                let ty = e.ty(g);
                let z = e.zero(ty);
                e.store(g, z);
            }
            if let Some(s) = seed {
                let one = e.filled(y_ty, 1.0);
                e.store(s, one);
            }
        });
    }
}

impl Emitter<'_> {
    /// Append a terminator with these successor blocks.
    pub fn op_blocks(&mut self, op: Opcode, blocks: &[Block]) {
        self.op_full(op, &[], blocks, Payload::None);
    }

    pub fn op_full(&mut self, op: Opcode, operands: &[Value], blocks: &[Block], payload: Payload) {
        let mut d = InstData::new(op, TypeTable::VOID);
        d.operands = SmallVec::from_slice(operands);
        d.blocks = SmallVec::from_slice(blocks);
        d.payload = payload;
        let b = self.block;
        self.m.func_mut(self.func).append_inst(b, d);
    }
}
