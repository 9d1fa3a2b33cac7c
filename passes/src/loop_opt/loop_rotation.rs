//! `loop_rotation`: turn a while-loop into a guarded do-while loop.
//!
//! A loop is rotated when its header `H` ends in the exit test
//! (`cond_br` with one successor `Bd` in the loop and one `X` outside), it
//! has one latch `L` that is not exiting (`br H`), one preheader edge from
//! `P`, and `Bd` is entered only from `H`:
//!
//! ```text
//! P: br H                          P:  br G
//! H: phis; h; cond_br c, Bd, X     G:  h[phi := init]; cond_br c', PH, X
//! Bd: ...                    =>    PH: br Bd
//! L: br H                          Bd: psi = phi [init/h', PH], [next/h, H]; ...
//!                                  L:  br H
//!                                  H:  phis (latch incoming only); h; cond_br c, Bd, XE
//!                                  XE: br X
//! ```
//!
//! The header's instructions are duplicated into the guard `G` (each
//! dynamic execution runs exactly one copy); `H` becomes the loop's bottom
//! test, and the loop's new header is `Bd`. Values of `H` used in the body
//! read the Phis `psi` at `Bd`; uses after the loop are reconnected by an
//! SSA update over the new CFG (Phis where paths from `G`, `XE` and the
//! body's other exits meet). `PH` is the rotated loop's dedicated
//! preheader (for `licm`) and `XE` its dedicated exit (for
//! `indvar_simplify`'s exit values). Headers with convergent operations,
//! barriers or allocas, or more than `max_header_size` instructions, are
//! not duplicated. A rotated loop has an exiting latch, so it is never
//! rotated twice.
//!
//! - Consumes: `xir.raw` (it adds blocks, so a structured stretch rejects
//!   it at load time).
//! - Produces: `xir.raw` (it may add Phis, so Phi-free input does not stay
//!   Phi-free).
//! - Preserves: nothing (the CFG changes).

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use smallvec::SmallVec;
use xir::analysis::{Cfg, DomTree, LoopForest, LoopId};
use xir::pass::{OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Block, Function, Inst, InstData, Module, Opcode, Trait, TypeTable, Value};

const INFO: PassInfo = PassInfo {
    name: "loop_rotation",
    doc: "Rotate while-loops into guarded do-while loops (raw CFG)",
    consumes: &["xir.raw"],
    produces: Produces::Dialect("xir.raw"),
    preserves: &[],
    eliminates: &[],
};

const OPTIONS: &[OptionDoc] = &[OptionDoc {
    name: "max_header_size",
    ty: "u32",
    default: "16",
    doc: "Most non-Phi instructions of a header that rotation duplicates",
}];

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    pub max_header_size: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_header_size: 16 }
    }
}

pub struct LoopRotation {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(LoopRotation { opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for LoopRotation {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut rotated = 0;
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            rotated += rotate_function(module.func_mut(fid), &self.opts);
        }
        let mut out = PassOutcome::changed(rotated > 0);
        out.stats.push(("rotated".into(), rotated.to_string()));
        Ok(out)
    }
}

/// Rotate every eligible loop of `f`; returns how many were rotated.
///
/// The loops are visited once, in the forest's order (latest header in
/// reverse post order first, so inner loops before outer ones), each
/// checked against the CFG as the rotations before it left it. The CFG
/// edges and the loop forest are updated in place by each rotation instead
/// of being recomputed: a rotation only inserts blocks on the edges
/// `P -> H` (`G`, `PH`) and `H -> X` (`XE`), and keeps every loop's block
/// set and nesting. This visits the candidates that recomputing the forest
/// after every rotation and taking its first candidate would, in the same
/// order: a loop that is not a candidate never becomes one through another
/// loop's rotation except by its latch edge `H -> X` getting `XE` (handled
/// by the latch update), and an unrotated loop's header keeps its place in
/// reverse post order.
pub fn rotate_function(f: &mut Function, opts: &Options) -> usize {
    let cfg = Cfg::compute(f);
    let dom = DomTree::from_cfg(&cfg);
    let Ok(mut forest) = LoopForest::compute(&cfg, &dom) else { return 0 };
    let mut edges = Edges { succs: cfg.succ_lists(), preds: cfg.pred_lists(), reachable: Vec::new() };
    edges.reachable = cfg.rpo_index.iter().map(|&i| i != usize::MAX).collect();
    let mut n = 0;
    for l in 0..forest.loops.len() {
        if let Some(c) = candidate(f, &edges, &forest, l, opts) {
            rotate(f, &mut edges, &mut forest, c);
            n += 1;
        }
    }
    n
}

/// The CFG's edges, kept up to date across rotations (each edge once per
/// terminator target, like `Cfg`).
struct Edges {
    succs: Vec<xir::analysis::Edges>,
    preds: Vec<xir::analysis::Edges>,
    reachable: Vec<bool>,
}

impl Edges {
    fn preds(&self, b: Block) -> &[Block] {
        self.preds.get(b.index()).map_or(&[], |p| p.as_slice())
    }

    fn is_reachable(&self, b: Block) -> bool {
        self.reachable.get(b.index()).copied().unwrap_or(false)
    }

    /// Re-read the successors of `b` from its terminator.
    fn reset(&mut self, f: &Function, b: Block, reachable: bool) {
        let n = f.block_capacity();
        if self.succs.len() < n {
            self.succs.resize(n, Default::default());
            self.preds.resize(n, Default::default());
            self.reachable.resize(n, false);
        }
        self.reachable[b.index()] = reachable;
        for s in std::mem::take(&mut self.succs[b.index()]) {
            let ps = &mut self.preds[s.index()];
            if let Some(k) = ps.iter().position(|&p| p == b) {
                ps.remove(k);
            }
        }
        let succs: xir::analysis::Edges = f.successors(b).into_iter().collect();
        for &s in &succs {
            if s.index() < n {
                self.preds[s.index()].push(b);
            }
        }
        self.succs[b.index()] = succs;
    }
}

/// The shape of a rotatable loop.
struct Candidate {
    l: LoopId,
    pre: Block,
    header: Block,
    body: Block,
    exit: Block,
}

fn candidate(f: &Function, cfg: &Edges, forest: &LoopForest, l: LoopId, opts: &Options) -> Option<Candidate> {
    let data = &forest.loops[l];
    let h = data.header;
    let [latch] = data.latches.as_slice() else { return None };
    let latch = *latch;
    if latch == h || f.inst(f.terminator(latch)?).opcode != Opcode::Br {
        return None;
    }
    let t = f.inst(f.terminator(h)?);
    if t.opcode != Opcode::CondBr || t.blocks.len() != 2 || t.blocks[0] == t.blocks[1] {
        return None;
    }
    let (body, exit) = match (forest.contains(l, t.blocks[0]), forest.contains(l, t.blocks[1])) {
        (true, false) => (t.blocks[0], t.blocks[1]),
        (false, true) => (t.blocks[1], t.blocks[0]),
        _ => return None,
    };
    if body == h || cfg.preds(body) != [h] {
        return None;
    }
    let outside: Vec<Block> = cfg.preds(h).iter().copied().filter(|&p| !forest.contains(l, p)).collect();
    let [pre] = outside.as_slice() else { return None };
    let pre = *pre;
    if pre == exit || cfg.preds(h).len() != 2 {
        return None;
    }
    let mut size = 0;
    for &i in f.block(h).insts() {
        let d = f.inst(i);
        if d.opcode == Opcode::Phi {
            let mut bs: Vec<Block> = d.blocks.to_vec();
            bs.sort();
            let mut want = vec![pre, latch];
            want.sort();
            if bs != want {
                return None;
            }
        } else if !d.is_terminator() {
            if d.has(Trait::Convergent) || d.has(Trait::Barrier) || d.has(Trait::Alloca) {
                return None;
            }
            size += 1;
        }
    }
    (size <= opts.max_header_size).then_some(Candidate { l, pre, header: h, body, exit })
}

fn rotate(f: &mut Function, cfg: &mut Edges, forest: &mut LoopForest, c: Candidate) {
    let Candidate { l, pre, header: h, body, exit } = c;
    let insts: Vec<Inst> = f.block(h).insts().to_vec();
    let phis: Vec<Inst> = insts.iter().copied().filter(|&i| f.opcode(i) == Opcode::Phi).collect();
    let term = f.terminator(h).expect("candidate header has a terminator");
    let plain: Vec<Inst> = insts.iter().copied().filter(|&i| f.opcode(i) != Opcode::Phi && i != term).collect();
    // Every value `H` defines, and its uses outside `H` (before any edit).
    let defined: Vec<Inst> = phis.iter().chain(&plain).copied().filter(|&i| f.inst(i).ty != TypeTable::VOID).collect();
    let uses: Vec<(Inst, Vec<(Inst, usize)>)> = defined
        .iter()
        .map(|&v| {
            let us = f
                .uses(Value::Inst(v))
                .iter()
                .filter(|u| f.parent(u.user) != Some(h) || f.opcode(u.user) == Opcode::Phi)
                .map(|u| (u.user, u.index as usize))
                .collect();
            (v, us)
        })
        .collect();
    // The guard: the header's instructions with the entry values of its Phis.
    let mut entry_val: FxHashMap<Value, Value> = FxHashMap::default();
    for &p in &phis {
        let d = f.inst(p);
        let k = d.blocks.iter().position(|&b| b == pre).expect("phi has a preheader incoming");
        entry_val.insert(Value::Inst(p), d.operands[k]);
    }
    let g = f.add_block();
    let ph = f.add_block();
    let xe = f.add_block();
    let map = |m: &FxHashMap<Value, Value>, v: Value| m.get(&v).copied().unwrap_or(v);
    for &i in &plain {
        let mut d = f.inst_data(i);
        d.operands = d.operands.iter().map(|&v| map(&entry_val, v)).collect();
        let ni = f.append_inst(g, d);
        entry_val.insert(Value::Inst(i), Value::Inst(ni));
    }
    let mut gt = f.inst_data(term);
    gt.operands = gt.operands.iter().map(|&v| map(&entry_val, v)).collect();
    gt.blocks = gt.blocks.iter().map(|&b| if b == body { ph } else { exit }).collect();
    f.append_inst(g, gt);
    f.append_inst(ph, br(body));
    f.append_inst(xe, br(exit));
    retarget(f, pre, h, g);
    retarget(f, h, exit, xe);
    for b in [pre, h, g, ph, xe] {
        cfg.reset(f, b, true);
    }
    place_new_blocks(forest, l, body, exit, [g, ph, xe]);
    // Exit Phis: the header's edge now comes through `XE`, and `G` adds one.
    for p in phis_of(f, exit) {
        // Existing incomings keep their positions (recorded uses index them).
        let inc: Vec<(Value, Block)> = incomings(f, p);
        let mut out: Vec<(Value, Block)> = inc.iter().map(|&(v, b)| (v, if b == h { xe } else { b })).collect();
        out.extend(inc.iter().filter(|x| x.1 == h).map(|&(v, _)| (map(&entry_val, v), g)));
        set_incomings(f, p, &out);
    }
    // `Bd`'s own Phis (single incoming from `H`) get the preheader edge.
    for p in phis_of(f, body) {
        let inc = incomings(f, p);
        let mut out = inc.clone();
        for &(v, b) in &inc {
            if b == h {
                out.push((map(&entry_val, v), ph));
            }
        }
        set_incomings(f, p, &out);
    }
    // psi Phis at `Bd` for values used outside `H`.
    let mut psi: FxHashMap<Inst, Value> = FxHashMap::default();
    for (v, us) in &uses {
        if us.is_empty() {
            continue;
        }
        let ty = f.inst(*v).ty;
        let mut d = InstData::new(Opcode::Phi, ty);
        d.operands = SmallVec::from_slice(&[map(&entry_val, Value::Inst(*v)), Value::Inst(*v)]);
        d.blocks = SmallVec::from_slice(&[ph, h]);
        let p = f.create_inst(d);
        f.insert_inst(body, 0, p);
        psi.insert(*v, Value::Inst(p));
    }
    // Rewire the recorded uses.
    let cfg = &*cfg;
    let forest = &*forest;
    let in_loop = |b: Block| forest.contains(l, b);
    let mut created: Vec<Inst> = Vec::new();
    for (v, us) in uses {
        let Some(&psi_v) = psi.get(&v) else { continue };
        let mut upd = Updater {
            ty: f.inst(v).ty,
            ends: FxHashMap::default(),
            in_loop: None,
            starts: FxHashMap::default(),
            visiting: FxHashSet::default(),
        };
        upd.ends.insert(h, Value::Inst(v));
        upd.ends.insert(g, map(&entry_val, Value::Inst(v)));
        upd.ends.insert(ph, map(&entry_val, Value::Inst(v)));
        for &(user, k) in &us {
            let ud = f.inst(user);
            let is_phi = ud.opcode == Opcode::Phi;
            let ub = f.parent(user).expect("recorded users are live");
            let at = if is_phi { ud.blocks[k] } else { ub };
            if is_phi && ((ub == body && at == h) || (ub == exit && at == xe)) {
                // Edges out of `H` still carry `H`'s own value.
                continue;
            }
            // In `H` only a Phi's latch incoming can use `v` here: like the
            // rest of the loop, it reads this iteration's value.
            let new = if ub == h || in_loop(at) {
                psi_v
            } else {
                // Every loop block but `H` ends with `psi` (when no other
                // definition was recorded there).
                upd.in_loop = Some((&in_loop, h, psi_v));
                if is_phi {
                    upd.at_end(f, cfg, at, &mut created)
                } else {
                    upd.at_start(f, cfg, at, &mut created)
                }
            };
            f.set_operand(user, k, new);
        }
    }
    // The header keeps only its latch incomings.
    for &p in &phis {
        let inc: Vec<(Value, Block)> = incomings(f, p).into_iter().filter(|x| x.1 != pre).collect();
        set_incomings(f, p, &inc);
    }
    remove_trivial_phis(f, &created);
}

/// Reaching definitions of one value over the new CFG, creating Phis where
/// paths with different definitions meet.
/// Whether a block is in the rotated loop.
type InLoop<'a> = &'a dyn Fn(Block) -> bool;

struct Updater<'a> {
    ty: xir::TypeId,
    ends: FxHashMap<Block, Value>,
    /// The rotated loop's membership, its old header and `psi`: a loop
    /// block other than the header not in `ends` ends with `psi`.
    in_loop: Option<(InLoop<'a>, Block, Value)>,
    starts: FxHashMap<Block, Value>,
    visiting: FxHashSet<Block>,
}

impl Updater<'_> {
    fn at_end(&mut self, f: &mut Function, cfg: &Edges, b: Block, created: &mut Vec<Inst>) -> Value {
        if let Some(&v) = self.ends.get(&b) {
            return v;
        }
        match self.in_loop {
            Some((in_loop, h, psi)) if b != h && in_loop(b) => psi,
            _ => self.at_start(f, cfg, b, created),
        }
    }

    fn at_start(&mut self, f: &mut Function, cfg: &Edges, b: Block, created: &mut Vec<Inst>) -> Value {
        if let Some(&v) = self.starts.get(&b) {
            return v;
        }
        let preds: Vec<Block> = cfg.preds(b).to_vec();
        if preds.is_empty() || !cfg.is_reachable(b) {
            return Value::Undef(self.ty);
        }
        if !self.visiting.insert(b) {
            // Back at a single-predecessor block on a cycle: a Phi here
            // closes it (the outer visit fills in its incoming).
            let phi = self.new_phi(f, b, created);
            self.starts.insert(b, phi);
            return phi;
        }
        let v = if let [p] = preds.as_slice() {
            let v = self.at_end(f, cfg, *p, created);
            match self.starts.get(&b) {
                Some(&phi) => {
                    set_incomings(f, phi.as_inst().expect("a phi"), &[(v, *p)]);
                    phi
                }
                None => v,
            }
        } else {
            let phi = self.new_phi(f, b, created);
            self.starts.insert(b, phi);
            let inc: Vec<(Value, Block)> = preds.iter().map(|&p| (self.at_end(f, cfg, p, created), p)).collect();
            set_incomings(f, phi.as_inst().expect("a phi"), &inc);
            phi
        };
        self.visiting.remove(&b);
        self.starts.insert(b, v);
        v
    }

    fn new_phi(&mut self, f: &mut Function, b: Block, created: &mut Vec<Inst>) -> Value {
        let phi = f.create_inst(InstData::new(Opcode::Phi, self.ty));
        f.insert_inst(b, 0, phi);
        created.push(phi);
        Value::Inst(phi)
    }
}

/// Enter the blocks a rotation of loop `l` (exit `exit`) added into the
/// forest: `G` and `PH` sit on the entry edge, in `l`'s parent; `XE` on the
/// exit edge, in the innermost loop around `l` that holds the exit (when
/// the exit is that loop's header, `XE` replaces `H` as its latch). The
/// rotated loop's header is now its old body block, its latch the old
/// header.
fn place_new_blocks(forest: &mut LoopForest, l: LoopId, body: Block, exit: Block, [g, ph, xe]: [Block; 3]) {
    let parent = forest.loops[l].parent;
    let mut outer = parent;
    while let Some(p) = outer {
        if forest.contains(p, exit) {
            break;
        }
        outer = forest.loops[p].parent;
    }
    let n = [g, ph, xe].iter().map(|b| b.index() + 1).max().unwrap_or(0).max(forest.loop_of.len());
    forest.loop_of.resize(n, None);
    forest.loop_of[g.index()] = parent;
    forest.loop_of[ph.index()] = parent;
    forest.loop_of[xe.index()] = outer;
    let h = forest.loops[l].header;
    if let Some(p) = outer.filter(|&p| forest.loops[p].header == exit) {
        for x in forest.loops[p].latches.iter_mut() {
            if *x == h {
                *x = xe;
            }
        }
    }
    forest.loops[l].header = body;
    forest.loops[l].latches = vec![h];
}

/// Fold Phis made by the updater whose incomings are one value (or the Phi).
fn remove_trivial_phis(f: &mut Function, created: &[Inst]) {
    let mut changed = true;
    while changed {
        changed = false;
        for &p in created {
            if !f.is_live(p) {
                continue;
            }
            let me = Value::Inst(p);
            let mut vals: Vec<Value> = f.inst(p).operands.iter().copied().filter(|&v| v != me).collect();
            vals.dedup();
            if let [w] = vals.as_slice() {
                let w = *w;
                f.replace_all_uses(me, w);
                f.remove_inst(p);
                changed = true;
            }
        }
    }
}

fn br(t: Block) -> InstData {
    let mut d = InstData::new(Opcode::Br, TypeTable::VOID);
    d.blocks.push(t);
    d
}

/// Point the terminator edges of `b` that go to `from` at `to`.
fn retarget(f: &mut Function, b: Block, from: Block, to: Block) {
    let t = f.terminator(b).expect("edge source has a terminator");
    f.retarget(t, from, to);
}

fn phis_of(f: &Function, b: Block) -> Vec<Inst> {
    f.block(b).insts().iter().copied().filter(|&i| f.opcode(i) == Opcode::Phi).collect()
}

fn incomings(f: &Function, p: Inst) -> Vec<(Value, Block)> {
    let d = f.inst(p);
    d.operands.iter().copied().zip(d.blocks.iter().copied()).collect()
}

fn set_incomings(f: &mut Function, p: Inst, inc: &[(Value, Block)]) {
    f.set_phi_incomings(p, inc);
}
