//! Function-level structure: the signature, the block layout, termination,
//! block ownership, Phi placement and incomings, SSA dominance and the
//! generic shape of structured role blocks. See the module doc of `verify`
//! for the exact rules (the unreachable-region rule in particular).

use rustc_hash::FxHashMap;
use xir_spec::{Opcode, Trait};

use super::{block_diag, inst_diag, type_name};
use crate::analysis::{Cfg, DomTree, Edges};
use crate::diag::{Diagnostic, Rule};
use crate::ir::{ArgKind, Block, Function, FunctionKind, Module, TypeTable, Value};

pub(super) fn check_signature(m: &Module, f: &Function, diags: &mut Vec<Diagnostic>) {
    let t = &m.types;
    let mut err =
        |msg: String| diags.push(Diagnostic::error(Rule::Signature, msg).in_function(&f.name).with_span(f.span));
    if !t.contains(f.ret) {
        err(format!("return type {} does not exist", f.ret));
    } else if f.ret != TypeTable::VOID && !t.is_data(f.ret) {
        err(format!("functions return plain data or void, not `{}`", type_name(t, f.ret)));
    }
    match f.kind {
        FunctionKind::Kernel { block_size, .. } => {
            if f.ret != TypeTable::VOID {
                err("kernels return void".into());
            }
            if block_size.contains(&0) {
                err(format!("kernel block size {block_size:?} has a zero dimension"));
            }
        }
        FunctionKind::External if !f.blocks().is_empty() => err("external functions have no blocks".into()),
        FunctionKind::Callable if f.blocks().is_empty() => err("callables need a body block".into()),
        _ => {}
    }
    if f.is_kernel() && f.blocks().is_empty() {
        err("kernels need a body block".into());
    }
    for (k, a) in f.args.iter().enumerate() {
        if !t.contains(a.ty) {
            err(format!("argument {k} has missing type {}", a.ty));
            continue;
        }
        let name = type_name(t, a.ty);
        let ok = match a.kind {
            ArgKind::Resource => t.is_resource(a.ty),
            ArgKind::Reference => t.is_data(a.ty),
            ArgKind::Value => a.ty != TypeTable::VOID && !t.is_resource(a.ty),
        };
        if !ok {
            err(format!("argument {k} of type `{name}` cannot be a {:?} argument", a.kind));
        }
    }
}

/// Layout blocks exist and are unique; placed instructions are listed once,
/// by the block their parent names. False if the layout cannot be walked.
pub(super) fn check_layout(f: &Function, diags: &mut Vec<Diagnostic>) -> bool {
    let mut ok = true;
    let mut seen = vec![false; f.block_capacity()];
    for &b in f.blocks() {
        if !f.block_exists(b) {
            diags.push(Diagnostic::error(Rule::Layout, format!("layout lists missing block {b}")).in_function(&f.name));
            return false;
        }
        if std::mem::replace(&mut seen[b.index()], true) {
            diags.push(block_diag(f, b, Rule::Layout, format!("block {b} appears twice in the layout")));
            ok = false;
        }
    }
    let mut owner: Vec<Option<Block>> = vec![None; f.inst_capacity()];
    for &b in f.blocks() {
        for &i in f.block(b).insts() {
            if !f.inst_exists(i) {
                diags.push(block_diag(f, b, Rule::Layout, format!("block {b} lists missing instruction {i}")));
                return false;
            }
            if let Some(prev) = owner[i.index()].replace(b) {
                diags.push(inst_diag(f, i, Rule::Layout, format!("{i} is listed by {prev} and {b}")));
                ok = false;
            } else if f.parent(i) != Some(b) {
                diags.push(inst_diag(
                    f,
                    i,
                    Rule::Layout,
                    format!("{i} is listed by {b} but its parent is {:?}", f.parent(i)),
                ));
                ok = false;
            }
        }
    }
    ok
}

/// Every block ends with exactly one terminator, last.
pub(super) fn check_terminators(f: &Function, diags: &mut Vec<Diagnostic>) -> bool {
    let mut ok = true;
    for &b in f.blocks() {
        let insts = f.block(b).insts();
        let Some((&last, body)) = insts.split_last() else {
            diags.push(block_diag(f, b, Rule::Terminator, format!("block {b} is empty; it needs a terminator")));
            ok = false;
            continue;
        };
        if !f.inst(last).is_terminator() {
            let msg = format!("block {b} ends with `{}`, which is not a terminator", f.opcode(last));
            diags.push(inst_diag(f, last, Rule::Terminator, msg));
            ok = false;
        }
        for &i in body {
            if f.inst(i).is_terminator() {
                let msg = format!("terminator `{}` is followed by more instructions in {b}", f.opcode(i));
                diags.push(inst_diag(f, i, Rule::Terminator, msg));
                ok = false;
            }
        }
    }
    ok
}

/// Every block an instruction names is owned by the function.
pub(super) fn check_block_ownership(f: &Function, diags: &mut Vec<Diagnostic>) -> bool {
    let owned = f.owned_flags();
    let mut ok = true;
    for (_, i) in f.all_insts() {
        for &b in &f.inst(i).blocks {
            if !owned.get(b.index()).copied().unwrap_or(false) {
                diags.push(inst_diag(
                    f,
                    i,
                    Rule::BlockOwnership,
                    format!("refers to {b}, which the function does not own"),
                ));
                ok = false;
            }
        }
    }
    ok
}

/// Phi placement and incomings, SSA dominance, structured role shapes.
pub(super) fn check_cfg_rules(f: &Function, diags: &mut Vec<Diagnostic>) {
    let cfg = Cfg::compute(f);
    let dom = DomTree::from_cfg(&cfg);
    // Most functions have no unreachable block: skip the forest then.
    let forest = if cfg.rpo.len() < f.blocks().len() { Some(unreachable_forest(f, &cfg)) } else { None };
    check_phis(f, &cfg, diags);
    check_dominance(f, &cfg, &dom, forest.as_ref(), diags);
    check_roles(f, diags);
}

fn check_phis(f: &Function, cfg: &Cfg, diags: &mut Vec<Diagnostic>) {
    for &b in f.blocks() {
        let mut seen_other = false;
        for &i in f.block(b).insts() {
            let d = f.inst(i);
            if d.opcode != Opcode::Phi {
                seen_other = true;
                continue;
            }
            if seen_other {
                diags.push(inst_diag(f, i, Rule::PhiFirst, format!("Phi follows a non-Phi instruction in {b}")));
            }
            let mut want: FxHashMap<Block, usize> = FxHashMap::default();
            for &p in cfg.preds(b) {
                *want.entry(p).or_default() += 1;
            }
            let mut have: FxHashMap<Block, (usize, Value)> = FxHashMap::default();
            for (&v, &p) in d.operands.iter().zip(&d.blocks) {
                let e = have.entry(p).or_insert((0, v));
                e.0 += 1;
                if e.1 != v {
                    let msg = format!("two incomings from {p} carry different values");
                    let label = format!("{p} branches to {b} more than once");
                    diags.push(inst_diag(f, i, Rule::PhiPredecessors, msg).with_label(block_span(f, p), label));
                }
            }
            let mut blocks: Vec<Block> = want.keys().chain(have.keys()).copied().collect();
            blocks.sort();
            blocks.dedup();
            for p in blocks {
                let (w, h) = (want.get(&p).copied().unwrap_or(0), have.get(&p).map_or(0, |x| x.0));
                if w != h {
                    let (msg, label) = match w {
                        0 => (
                            format!("incoming from {p}, which is not a predecessor of {b}"),
                            format!("{p} does not branch to {b}"),
                        ),
                        _ => (
                            format!("{p} reaches {b} along {w} edge(s) but the Phi lists it {h} time(s)"),
                            format!("{p} branches to {b} here"),
                        ),
                    };
                    let at = if w == 0 { block_span(f, p) } else { terminator_span(f, p) };
                    diags.push(inst_diag(f, i, Rule::PhiPredecessors, msg).with_label(at, label));
                }
            }
        }
    }
}

/// Where block `b` is written (its label), when it exists and has a span.
fn block_span(f: &Function, b: Block) -> Option<crate::ir::Span> {
    if f.block_exists(b) {
        f.block(b).span
    } else {
        None
    }
}

/// Where `b`'s terminator is written: the edges a Phi counts start there.
fn terminator_span(f: &Function, b: Block) -> Option<crate::ir::Span> {
    f.terminator(b).and_then(|t| f.inst_span(t)).or_else(|| block_span(f, b))
}

/// Dominator forest of the unreachable blocks: a virtual root (index
/// `capacity`) feeds every unreachable block with no unreachable predecessor,
/// then the first still-unrooted block of each unreachable cycle.
fn unreachable_forest(f: &Function, cfg: &Cfg) -> DomTree {
    let n = f.block_capacity();
    let root = Block::new(n);
    let dead: Vec<Block> = f.blocks().iter().copied().filter(|&b| !cfg.is_reachable(b)).collect();
    let mut succs = vec![Edges::new(); n + 1];
    let mut preds = vec![Edges::new(); n + 1];
    let edge = |a: Block, b: Block, succs: &mut Vec<Edges>, preds: &mut Vec<Edges>| {
        succs[a.index()].push(b);
        preds[b.index()].push(a);
    };
    for &b in &dead {
        for &s in cfg.succs(b) {
            if !cfg.is_reachable(s) {
                edge(b, s, &mut succs, &mut preds);
            }
        }
    }
    for &b in &dead {
        if preds[b.index()].is_empty() {
            edge(root, b, &mut succs, &mut preds);
        }
    }
    loop {
        let sub = Cfg::from_lists(Some(root), &succs, &preds);
        match dead.iter().find(|b| !sub.is_reachable(**b)) {
            Some(&b) => edge(root, b, &mut succs, &mut preds),
            None => return DomTree::from_cfg(&sub),
        }
    }
}

/// Whether the definition `def` (in block `db` at position `dpos`) is
/// available at position `upos` of block `ub` (`usize::MAX`: block end).
fn available(
    cfg: &Cfg,
    dom: &DomTree,
    forest: Option<&DomTree>,
    db: Block,
    dpos: usize,
    ub: Block,
    upos: usize,
) -> bool {
    if db == ub {
        return dpos < upos;
    }
    if cfg.is_reachable(ub) {
        dom.dominates(db, ub)
    } else {
        cfg.is_reachable(db) || forest.is_some_and(|t| t.dominates(db, ub))
    }
}

fn check_dominance(f: &Function, cfg: &Cfg, dom: &DomTree, forest: Option<&DomTree>, diags: &mut Vec<Diagnostic>) {
    let mut pos: Vec<Option<usize>> = vec![None; f.inst_capacity()];
    for &b in f.blocks() {
        for (k, &i) in f.block(b).insts().iter().enumerate() {
            pos[i.index()] = Some(k);
        }
    }
    for &b in f.blocks() {
        for (upos, &i) in f.block(b).insts().iter().enumerate() {
            let d = f.inst(i);
            let is_phi = d.opcode == Opcode::Phi;
            for (k, &v) in d.operands.iter().enumerate() {
                let Value::Inst(def) = v else { continue };
                let (Some(db), Some(dpos)) = (f.parent(def), pos[def.index()]) else {
                    let msg = format!("operand {k} uses {def}, which no owned block lists");
                    diags.push(inst_diag(f, i, Rule::Ids, msg));
                    continue;
                };
                let (ub, up) = if is_phi { (d.blocks[k], usize::MAX) } else { (b, upos) };
                if !available(cfg, dom, forest, db, dpos, ub, up) {
                    let at = if is_phi { format!("at the end of incoming block {ub}") } else { "here".to_string() };
                    let msg = format!("operand {k} uses {def} (defined in {db}), which does not dominate its use {at}");
                    diags.push(
                        inst_diag(f, i, Rule::SsaDominance, msg)
                            .with_label(f.inst_span(def), format!("{def} is defined here, in {db}")),
                    );
                }
            }
        }
    }
}

/// Generic role shape: loop roles pairwise distinct; no role block is the
/// construct's own block or the entry block.
fn check_roles(f: &Function, diags: &mut Vec<Diagnostic>) {
    let entry = f.body();
    for &b in f.blocks() {
        let Some(t) = f.terminator(b) else { continue };
        let d = f.inst(t);
        if !d.has(Trait::Structured) {
            continue;
        }
        let roles = &xir_spec::spec().op(d.opcode).spec.blocks;
        for (r, &rb) in roles.iter().zip(&d.blocks) {
            if rb == b || Some(rb) == entry {
                let what = if rb == b { "the block holding the construct" } else { "the entry block" };
                diags.push(inst_diag(
                    f,
                    t,
                    Rule::StructuredRoles,
                    format!("role `{r}` of `{}` is {what} ({rb})", d.opcode),
                ));
            }
        }
        if d.has(Trait::Loop) {
            for (x, (rx, bx)) in roles.iter().zip(&d.blocks).enumerate() {
                for (ry, by) in roles.iter().zip(&d.blocks).skip(x + 1) {
                    if bx == by {
                        let msg = format!("loop roles `{rx}` and `{ry}` are the same block {bx}");
                        diags.push(inst_diag(f, t, Rule::StructuredRoles, msg));
                    }
                }
            }
        }
    }
}
