//! The immutable control-flow plan of one function: the physical SPIR-V
//! blocks (logical blocks, synthetic `simple_loop` headers and continue
//! targets, canonical stubs for unreachable merge / continue roles, and the
//! blocks of software float-atomic CAS loops, and the guarded selections of
//! committed ray-query reads), their merge instructions and
//! successors, a reverse-post-order schedule, and every `OpPhi` with one
//! incoming per *physical* predecessor (through forwarding Phis in synthetic
//! continue blocks where a logical incoming crosses one).
//!
//! Lowering (docs/text-format.md semantics):
//! - `if` -> `OpSelectionMerge merge` + `OpBranchConditional`;
//! - `switch` -> `OpSelectionMerge merge` + `OpSwitch`;
//! - `loop prepare ^p, body ^b, update ^u, merge ^m` -> the owner branches to
//!   `p`, which is the loop header (`OpLoopMerge m u`) and ends with its own
//!   `cond_br ^b / ^m` or `br ^b`; `u` is the continue target and its
//!   `br ^p` the single back edge;
//! - `simple_loop body ^b, merge ^m` -> a synthetic header `H`
//!   (`OpLoopMerge m C`, `OpBranch b`) and a synthetic continue target `C`
//!   (`OpBranch H`); every `br ^b` from inside the loop goes to `C`. The
//!   Phis of `b` live in `H`; incomings from inside the loop reach them
//!   through forwarding Phis in `C`.
//!
//! The emitter consumes this plan and never rediscovers edges; after
//! emission it checks that the physical predecessor sets it produced equal
//! `preds` here.

use rustc_hash::{FxHashMap, FxHashSet};
use xir::{Block, Function, Inst, Module, Opcode, TypeId, Value};

use super::callgraph::Closure;
use super::limits;

pub type PhysId = u32;

/// What a physical block is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PhysKind {
    /// The start of a reachable logical block (its Phis and payload).
    Logical(Block),
    /// An unreachable merge role: `OpLabel; OpUnreachable`.
    UnreachableMerge(Block),
    /// An unreachable continue role: `OpLabel; OpBranch header`.
    UnreachableContinue(Block),
    /// Synthetic header of the `simple_loop` whose body is the block.
    LoopHeader(Block),
    /// Synthetic continue target of the `simple_loop` whose body is the block.
    LoopContinue(Block),
    /// Part `k` (0 header, 1 body, 2 continue, 3 merge) of the CAS loop of an
    /// instruction; for a committed ray-query read (`plan::ray_query::needs_guarded_read`)
    /// the two selections that guard it: 1 reads the hit (selection merge 0),
    /// 2 reads the triangle barycentrics (0 is its header, merge 3).
    Cas(Inst, u8),
}

/// The merge instruction a physical block ends with (before its branch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    None,
    Selection { merge: PhysId },
    Loop { merge: PhysId, cont: PhysId },
}

#[derive(Clone, Debug)]
pub struct PhysBlock {
    pub kind: PhysKind,
    pub merge: Merge,
    /// Physical successors (deduplicated, in branch order).
    pub succs: Vec<PhysId>,
}

/// Where one Phi incoming comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Incoming {
    Value(Value),
    /// The result of forwarding Phi `k` of [`FunctionPlan::forwards`].
    Forward(usize),
    /// The predecessor is an unreachable stub.
    Undef,
}

/// One logical Phi, placed in its host block.
#[derive(Clone, Debug)]
pub struct PhiPlan {
    pub inst: Inst,
    pub host: PhysId,
    pub incomings: Vec<(Incoming, PhysId)>,
}

/// A synthetic Phi in a forwarding block.
#[derive(Clone, Debug)]
pub struct ForwardPhi {
    pub host: PhysId,
    pub ty: TypeId,
    pub incomings: Vec<(Value, PhysId)>,
}

/// The frozen plan.
#[derive(Clone, Debug)]
pub struct FunctionPlan {
    pub blocks: Vec<PhysBlock>,
    /// Emission order: reverse post-order of the reachable physical CFG, then stubs.
    pub schedule: Vec<PhysId>,
    pub entry_of: FxHashMap<Block, PhysId>,
    pub tail_of: FxHashMap<Block, PhysId>,
    /// Physical target of each executed logical edge.
    pub edge: FxHashMap<(Block, Block), PhysId>,
    pub phis: Vec<PhiPlan>,
    pub forwards: Vec<ForwardPhi>,
    /// Physical predecessors of each physical block.
    pub preds: Vec<Vec<PhysId>>,
    /// The four inline blocks of each CAS loop (or guarded committed ray-query read).
    pub cas: FxHashMap<Inst, [PhysId; 4]>,
}

impl FunctionPlan {
    pub fn phis_in(&self, host: PhysId) -> impl Iterator<Item = &PhiPlan> {
        self.phis.iter().filter(move |p| p.host == host)
    }
    pub fn forwards_in(&self, host: PhysId) -> impl Iterator<Item = (usize, &ForwardPhi)> {
        self.forwards.iter().enumerate().filter(move |(_, p)| p.host == host)
    }
}

/// A located planning error: (instruction, block, message).
pub type PlanError = (Option<Inst>, Option<Block>, String);

/// Plan function `f`. `cas_sites` lists, per block, the instructions that
/// expand to a software CAS loop or a guarded committed ray-query read.
/// Errors are `(inst or block, message)`.
pub fn plan_control_flow(
    m: &Module,
    f: &Function,
    closure: &Closure,
    cas_sites: &FxHashMap<Block, Vec<Inst>>,
) -> Result<FunctionPlan, Vec<PlanError>> {
    let mut errs: Vec<PlanError> = Vec::new();
    let mut blocks: Vec<PhysBlock> = Vec::new();
    let mut entry_of = FxHashMap::default();
    let mut tail_of = FxHashMap::default();
    let mut cas = FxHashMap::default();
    let new = |blocks: &mut Vec<PhysBlock>, kind| {
        blocks.push(PhysBlock { kind, merge: Merge::None, succs: Vec::new() });
        (blocks.len() - 1) as PhysId
    };
    let reachable: Vec<Block> = closure.blocks.iter().copied().filter(|b| closure.reachable.contains(b)).collect();
    // Simple-loop bodies and their owners; loop prepares.
    let mut simple_owner: FxHashMap<Block, Block> = FxHashMap::default();
    let mut prepares: FxHashSet<Block> = FxHashSet::default();
    for &b in &reachable {
        let Some(t) = f.terminator(b) else {
            errs.push((None, Some(b), "block has no terminator".into()));
            continue;
        };
        let d = f.inst(t);
        match d.opcode {
            Opcode::SimpleLoop => {
                simple_owner.insert(d.blocks[0], b);
            }
            Opcode::Loop => {
                prepares.insert(d.blocks[0]);
            }
            _ => {}
        }
    }
    // Physical blocks of reachable logical blocks (+ synthetic ones).
    let mut header_of: FxHashMap<Block, (PhysId, PhysId)> = FxHashMap::default();
    for &b in &reachable {
        if simple_owner.contains_key(&b) {
            let h = new(&mut blocks, PhysKind::LoopHeader(b));
            let c = new(&mut blocks, PhysKind::LoopContinue(b));
            header_of.insert(b, (h, c));
        }
        let e = new(&mut blocks, PhysKind::Logical(b));
        entry_of.insert(b, e);
        let mut tail = e;
        if let Some(sites) = cas_sites.get(&b) {
            if prepares.contains(&b) && !sites.is_empty() {
                errs.push((Some(sites[0]), Some(b), "a CAS loop (software float atomic, masked byte-buffer store, sub-word buffer write or sub-word bindless write), an f32 warp fold or a guarded committed ray-query read cannot be expanded inside a loop's prepare block (the loop header)".into()));
            }
            for &i in sites {
                let ids = [0u8, 1, 2, 3].map(|k| new(&mut blocks, PhysKind::Cas(i, k)));
                cas.insert(i, ids);
                tail = ids[3];
            }
        }
        tail_of.insert(b, tail);
    }
    // Stubs for unreachable merge / continue roles of reachable constructs.
    let stub = |blocks: &mut Vec<PhysBlock>, entry_of: &mut FxHashMap<Block, PhysId>, r: Block, cont: bool| {
        if let Some(&p) = entry_of.get(&r) {
            return p;
        }
        let p = new(blocks, if cont { PhysKind::UnreachableContinue(r) } else { PhysKind::UnreachableMerge(r) });
        entry_of.insert(r, p);
        p
    };
    let mut edge: FxHashMap<(Block, Block), PhysId> = FxHashMap::default();
    for &b in &reachable {
        let Some(t) = f.terminator(b) else { continue };
        let d = f.inst(t);
        let tail = tail_of[&b];
        let target = |entry_of: &FxHashMap<Block, PhysId>, s: Block| -> PhysId {
            match header_of.get(&s) {
                Some(&(h, c)) => {
                    if simple_owner.get(&s) == Some(&b) {
                        h
                    } else {
                        c
                    }
                }
                None => entry_of[&s],
            }
        };
        let mut succs: Vec<PhysId> = Vec::new();
        match d.opcode {
            Opcode::If | Opcode::Switch => {
                let m_role = d.blocks[if d.opcode == Opcode::If { 2 } else { 0 }];
                let mp = stub(&mut blocks, &mut entry_of, m_role, false);
                blocks[tail as usize].merge = Merge::Selection { merge: mp };
                if d.opcode == Opcode::Switch {
                    let sel_bits = m.types.scalar_bits(f.value_type(m, d.operands[0]));
                    if let Err(e) = limits::plan_switch(f.cases(t).len(), sel_bits) {
                        errs.push((Some(t), Some(b), e.to_string()));
                    }
                }
                // A switch's cases in the order written, then its default
                // (where WGSL and GLSL usually write it, and naga puts it):
                // the order `rpo` then lays them out in.
                let mut order = d.successors();
                if d.opcode == Opcode::Switch && !order.is_empty() {
                    order.rotate_left(1);
                }
                for s in order {
                    let p = if s == m_role { mp } else { target(&entry_of, s) };
                    edge.insert((b, s), p);
                    succs.push(p);
                }
            }
            Opcode::Loop => {
                let (p, body, u, mr) = (d.blocks[0], d.blocks[1], d.blocks[2], d.blocks[3]);
                let pp = entry_of[&p];
                edge.insert((b, p), pp);
                succs.push(pp);
                let mp = stub(&mut blocks, &mut entry_of, mr, false);
                let up = stub(&mut blocks, &mut entry_of, u, true);
                if let PhysKind::UnreachableContinue(_) = blocks[up as usize].kind {
                    blocks[up as usize].succs = vec![pp];
                }
                let ptail = tail_of[&p];
                blocks[ptail as usize].merge = Merge::Loop { merge: mp, cont: up };
                // The prepare block's own terminator must be br ^body or cond_br ^body, ^merge.
                match f.terminator(p).map(|pt| (pt, f.inst(pt))) {
                    Some((_, pd)) if pd.opcode == Opcode::Br && pd.blocks[0] == body => {}
                    Some((_, pd)) if pd.opcode == Opcode::CondBr && pd.blocks[0] == body && pd.blocks[1] == mr => {}
                    Some((pt, _)) => errs.push((
                        Some(pt),
                        Some(p),
                        "a loop's prepare block must end with `br target ^body` or `cond_br %c, true ^body, false ^merge`".into(),
                    )),
                    None => {}
                }
            }
            Opcode::SimpleLoop => {
                let (body, mr) = (d.blocks[0], d.blocks[1]);
                let (h, c) = header_of[&body];
                edge.insert((b, body), h);
                succs.push(h);
                let mp = stub(&mut blocks, &mut entry_of, mr, false);
                blocks[h as usize].merge = Merge::Loop { merge: mp, cont: c };
                blocks[h as usize].succs = vec![entry_of[&body]];
                blocks[c as usize].succs = vec![h];
            }
            Opcode::Br => {
                let p = target(&entry_of, d.blocks[0]);
                edge.insert((b, d.blocks[0]), p);
                succs.push(p);
            }
            Opcode::CondBr => {
                if !prepares.contains(&b) {
                    errs.push((
                        Some(t),
                        Some(b),
                        "`cond_br` is only allowed as the terminator of a loop's prepare block in xir.spirv".into(),
                    ));
                }
                for s in d.successors() {
                    let p = target(&entry_of, s);
                    edge.insert((b, s), p);
                    if !succs.contains(&p) {
                        succs.push(p);
                    }
                }
            }
            Opcode::Return | Opcode::Unreachable => {}
            op => errs.push((Some(t), Some(b), format!("terminator `{op}` is not allowed at the SPIR-V handoff"))),
        }
        succs.dedup();
        let mut uniq = Vec::new();
        for s in succs {
            if !uniq.contains(&s) {
                uniq.push(s);
            }
        }
        blocks[tail as usize].succs = uniq;
    }
    // CAS-loop chains inside logical blocks.
    for &b in &reachable {
        let mut prev = entry_of[&b];
        if let Some(sites) = cas_sites.get(&b) {
            for i in sites {
                let [h, body, c, mg] = cas[i];
                if super::ray_query::needs_guarded_read(m, f, *i) {
                    // `if committed { hit fields }` then `if triangle { barycentrics }`.
                    blocks[prev as usize].merge = Merge::Selection { merge: h };
                    blocks[prev as usize].succs = vec![body, h];
                    blocks[body as usize].succs = vec![h];
                    blocks[h as usize].merge = Merge::Selection { merge: mg };
                    blocks[h as usize].succs = vec![c, mg];
                    blocks[c as usize].succs = vec![mg];
                    prev = mg;
                    continue;
                }
                blocks[prev as usize].succs = vec![h];
                blocks[h as usize].merge = Merge::Loop { merge: mg, cont: c };
                blocks[h as usize].succs = vec![body];
                blocks[body as usize].succs = vec![c];
                blocks[c as usize].succs = vec![mg, h];
                prev = mg;
            }
        }
    }
    // Predecessors.
    let mut preds: Vec<Vec<PhysId>> = vec![Vec::new(); blocks.len()];
    for (i, pb) in blocks.iter().enumerate() {
        for &s in &pb.succs {
            preds[s as usize].push(i as PhysId);
        }
    }
    // Loop headers: exactly one back edge.
    for &b in &reachable {
        let Some(t) = f.terminator(b) else { continue };
        let d = f.inst(t);
        if d.opcode == Opcode::Loop {
            let pp = entry_of[&d.blocks[0]];
            let back: Vec<_> = preds[pp as usize].iter().filter(|&&q| q != tail_of[&b]).collect();
            if back.len() != 1 {
                errs.push((
                    Some(t),
                    Some(b),
                    format!(
                        "loop header has {} back edges; exactly one (from the update block) is required",
                        back.len()
                    ),
                ));
            }
        }
    }
    // Schedule: reverse post-order from the entry, then stubs.
    let entry = f.body().and_then(|e| entry_of.get(&e).copied()).unwrap_or(0);
    let schedule = rpo(&blocks, entry);
    let mut scheduled = vec![false; blocks.len()];
    for &s in &schedule {
        scheduled[s as usize] = true;
    }
    let mut schedule = schedule;
    for (i, pb) in blocks.iter().enumerate() {
        if !scheduled[i] {
            match pb.kind {
                PhysKind::UnreachableMerge(_) | PhysKind::UnreachableContinue(_) | PhysKind::LoopContinue(_) => {
                    schedule.push(i as PhysId)
                }
                _ => errs.push((
                    None,
                    None,
                    format!("physical block {i} ({:?}) is not reachable from the entry", pb.kind),
                )),
            }
        }
    }
    if !preds[entry as usize].is_empty() {
        errs.push((None, f.body(), "the function entry block has predecessors; SPIR-V requires none".into()));
    }
    // Phis.
    let logical_of_tail: FxHashMap<PhysId, Block> = tail_of.iter().map(|(&b, &p)| (p, b)).collect();
    let mut phis = Vec::new();
    let mut forwards: Vec<ForwardPhi> = Vec::new();
    for &b in &reachable {
        for &i in f.block(b).insts() {
            let d = f.inst(i);
            if d.opcode != Opcode::Phi {
                continue;
            }
            let logical: Vec<(Value, Block)> = d.operands.iter().copied().zip(d.blocks.iter().copied()).collect();
            let find = |from: Block| -> Option<Value> { logical.iter().find(|(_, lb)| *lb == from).map(|p| p.0) };
            let (host, cont) = match header_of.get(&b) {
                Some(&(h, c)) => (h, Some(c)),
                None => (entry_of[&b], None),
            };
            let mut incomings = Vec::new();
            let mut used: FxHashSet<Block> = FxHashSet::default();
            for &p in &preds[host as usize] {
                let inc = if Some(p) == cont && !preds[p as usize].is_empty() {
                    let mut fw = ForwardPhi { host: p, ty: d.ty, incomings: Vec::new() };
                    for &q in &preds[p as usize] {
                        match logical_of_tail.get(&q).and_then(|&lb| find(lb).map(|v| (v, lb))) {
                            Some((v, lb)) => {
                                used.insert(lb);
                                fw.incomings.push((v, q));
                            }
                            None => errs.push((
                                Some(i),
                                Some(b),
                                format!("Phi has no incoming for the loop back edge from physical block {q}"),
                            )),
                        }
                    }
                    if let Err(e) = limits::plan_phi(fw.incomings.len()) {
                        errs.push((Some(i), Some(b), e.to_string()));
                    }
                    forwards.push(fw);
                    Incoming::Forward(forwards.len() - 1)
                } else {
                    match logical_of_tail.get(&p) {
                        Some(&lb) => match find(lb) {
                            Some(v) => {
                                used.insert(lb);
                                Incoming::Value(v)
                            }
                            None => {
                                errs.push((Some(i), Some(b), format!("Phi has no incoming for predecessor {lb}")));
                                Incoming::Undef
                            }
                        },
                        None => Incoming::Undef,
                    }
                };
                incomings.push((inc, p));
            }
            for (_, lb) in &logical {
                if closure.reachable.contains(lb) && !used.contains(lb) {
                    errs.push((Some(i), Some(b), format!("Phi incoming from {lb}, which is not a predecessor of {b}")));
                }
            }
            if let Err(e) = limits::plan_phi(incomings.len()) {
                errs.push((Some(i), Some(b), e.to_string()));
            }
            phis.push(PhiPlan { inst: i, host, incomings });
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(FunctionPlan { blocks, schedule, entry_of, tail_of, edge, phis, forwards, preds, cas })
}

/// Reverse post-order. Successors are visited last to first, so that the
/// order keeps them first to first: a selection's `then` before its `else`,
/// a switch's cases in the order written, a loop's body before its merge
/// (the order of the source and of naga's modules, which drivers may lay
/// out as given).
fn rpo(blocks: &[PhysBlock], entry: PhysId) -> Vec<PhysId> {
    let mut post = Vec::new();
    let mut seen = vec![false; blocks.len()];
    let mut stack: Vec<(PhysId, usize)> = vec![(entry, 0)];
    seen[entry as usize] = true;
    while let Some((b, k)) = stack.last_mut() {
        let succs = &blocks[*b as usize].succs;
        if *k < succs.len() {
            let s = succs[succs.len() - 1 - *k];
            *k += 1;
            if !seen[s as usize] {
                seen[s as usize] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(*b);
            stack.pop();
        }
    }
    post.reverse();
    post
}
