//! `outline`: function outlining of marked regions (the reference's
//! `outline` pass). `outline target ^t, merge ^m` marks the blocks reached
//! from `^t` before `^m` as a region; the pass moves the region into a new
//! callable and leaves `call @F.outlined.N(live-ins...)` then `br ^m` in
//! its place.
//!
//! The region's live-ins become the callable's parameters, each passed the
//! way the IR passes it: an lvalue (an `alloca`, a `gep`, a reference
//! argument) by reference, a resource as a resource, anything else by
//! value. Each edge to `^m` becomes a `return`. Allocas of the region move
//! to the callable's entry. Everything is decided before anything changes;
//! a region the pass cannot outline exactly is refused with a located
//! diagnostic naming why: one that returns, or leaves other than by a `br`
//! to `^m`; one whose values are used after it, or that reaches a Phi of
//! `^m`; one entered other than through `^t`. Nested regions are outlined
//! innermost first (each planned again on the function as it is then).
//!
//! - Consumes: `xir` (any dialect with `outline`).
//! - Produces: the same dialect, without `outline`.
//! - Preserves: nothing (functions, CFGs and the call graph change).

use rustc_hash::{FxHashMap, FxHashSet};
use xir::pass::{Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{
    ArgKind, Block, Diagnostic, FuncId, Function, FunctionKind, Inst, InstData, Metadata, Module, Opcode, TypeTable,
    Value,
};

const INFO: PassInfo = PassInfo {
    name: "outline",
    doc: "Move each `outline` region into a new callable called in its place",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["outline"],
    preserves: &[],
};

#[derive(Default)]
pub struct Outline;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<Outline>(INFO)
}

/// One region, decided before any change.
struct Plan {
    func: FuncId,
    /// The `outline` terminator and its block.
    marker: Inst,
    at: Block,
    target: Block,
    merge: Block,
    /// The region's blocks, in the function's layout order.
    blocks: Vec<Block>,
    /// Values defined outside and used inside, in first-use order.
    live_ins: Vec<Value>,
}

impl Pass for Outline {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut plans = Vec::new();
        let mut diags = Vec::new();
        for fid in module.func_ids() {
            let f = module.func(fid);
            for (b, i) in f.all_insts() {
                if f.opcode(i) != Opcode::Outline {
                    continue;
                }
                match plan_region(f, fid, b, i) {
                    Ok(p) => plans.push(p),
                    Err(why) => diags.push(
                        Diagnostic::error("outline-region", format!("this region cannot be outlined: {why}"))
                            .in_function(&f.name)
                            .at_block(b)
                            .at_inst(i)
                            .with_span(f.inst_span(i)),
                    ),
                }
            }
        }
        if !diags.is_empty() {
            let mut e = PassError::new(INFO.name, format!("{} region(s) cannot be outlined", diags.len()));
            e.diagnostics = diags;
            return Err(e);
        }
        let n = plans.len();
        // A region holds every region nested in it, so it has more
        // blocks: smallest first is innermost first.
        plans.sort_by_key(|p| p.blocks.len());
        let mut counter: FxHashMap<FuncId, usize> = FxHashMap::default();
        for p in plans {
            let idx = counter.entry(p.func).or_default();
            *idx += 1;
            // An inner region moved out changed the outer one's blocks and
            // live-ins: plan it again on the function as it is now.
            let f = module.func(p.func);
            let p = plan_region(f, p.func, p.at, p.marker).map_err(|why| PassError::new(INFO.name, why))?;
            outline_region(module, &p, *idx);
        }
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("outlined".into(), n.to_string()));
        Ok(out)
    }
}

/// The region of the marker `i` (in block `at`), or why it cannot be outlined.
fn plan_region(f: &Function, func: FuncId, at: Block, i: Inst) -> Result<Plan, String> {
    let d = f.inst(i);
    let (target, merge) = (d.blocks[0], d.blocks[1]);
    // The blocks reached from the target before the merge.
    let mut seen: FxHashSet<Block> = FxHashSet::default();
    let mut stack = vec![target];
    while let Some(b) = stack.pop() {
        if b == merge || !seen.insert(b) {
            continue;
        }
        if Some(b) == f.body() || b == at {
            return Err(format!("it reaches `^{}` again, outside itself", block_name(f, b)));
        }
        stack.extend(f.successors(b));
    }
    let blocks: Vec<Block> = f.blocks().iter().copied().filter(|b| seen.contains(b)).collect();
    // Entered only through the target; left only to the merge; no return.
    for (b, k) in f.all_insts() {
        let inside = seen.contains(&b);
        let op = f.opcode(k);
        if !inside {
            if k != i && f.inst(k).blocks.iter().any(|x| seen.contains(x)) {
                return Err(if op == Opcode::Phi {
                    format!("a Phi of `^{}` has an incoming edge from it", block_name(f, b))
                } else {
                    format!("`^{}` jumps into it", block_name(f, b))
                });
            }
            continue;
        }
        if op == Opcode::Return {
            return Err("it returns from the function".into());
        }
        for &x in &f.inst(k).blocks {
            if !seen.contains(&x) && x != merge {
                return Err(format!("it leaves to `^{}`, not only to its merge", block_name(f, x)));
            }
            if x == merge && op != Opcode::Br {
                return Err(format!("a `{op}` inside it names its merge; only a `br` may leave"));
            }
        }
        if op == Opcode::Phi && b == target {
            return Err("its target holds a Phi".into());
        }
    }
    // Values: live-ins in first-use order; none used after the region.
    let mut live_ins = Vec::new();
    for &b in &blocks {
        for &k in f.block(b).insts() {
            for &v in &f.inst(k).operands {
                let outside = match v {
                    Value::Inst(x) => f.parent(x).is_some_and(|p| !seen.contains(&p)),
                    Value::Arg(_) => true,
                    _ => false,
                };
                if outside && !live_ins.contains(&v) {
                    live_ins.push(v);
                }
            }
            for u in f.uses(Value::Inst(k)) {
                if f.parent(u.user).is_some_and(|p| !seen.contains(&p)) {
                    let b = f.parent(u.user).expect("placed");
                    return Err(format!("a value it defines is used after it (in `^{}`)", block_name(f, b)));
                }
            }
        }
    }
    Ok(Plan { func, marker: i, at, target, merge, blocks, live_ins })
}

fn block_name(f: &Function, b: Block) -> String {
    f.block_name(b).map(str::to_string).unwrap_or_else(|| format!("bb{}", b.index()))
}

/// Move the planned region into a new callable and call it in its place.
fn outline_region(m: &mut Module, p: &Plan, idx: usize) {
    let src = m.func(p.func).clone();
    let name = format!("{}.outlined.{idx}", src.name);
    let mut g = Function::new(name, FunctionKind::Callable, TypeTable::VOID);
    let mut vmap: FxHashMap<Value, Value> = FxHashMap::default();
    for &v in &p.live_ins {
        let ty = src.value_type(m, v);
        let kind = if src.is_lvalue(v) {
            ArgKind::Reference
        } else if m.types.is_resource(ty) {
            ArgKind::Resource
        } else {
            ArgKind::Value
        };
        let md = match v {
            Value::Inst(x) => Metadata::with_name(src.inst_name(x).map(str::to_string)),
            Value::Arg(k) => Metadata::with_name(src.args[k as usize].md.name.clone()),
            _ => Metadata::default(),
        };
        let a = g.add_arg(ty, kind, md);
        vmap.insert(v, a);
    }
    // Blocks: the target first (the callable's entry), then the others.
    let mut order = vec![p.target];
    order.extend(p.blocks.iter().copied().filter(|&b| b != p.target));
    let bmap: FxHashMap<Block, Block> = order.iter().map(|&b| (b, g.add_block())).collect();
    for &b in &order {
        g.set_block_md(bmap[&b], src.block_md(b).to_metadata());
    }
    let insts: Vec<(Block, Inst)> =
        order.iter().flat_map(|&b| src.block(b).insts().iter().map(move |&k| (b, k))).collect();
    let mut imap: FxHashMap<Inst, Inst> = FxHashMap::default();
    for &(_, k) in &insts {
        imap.insert(k, g.create_inst(src.inst_data(k)));
    }
    let entry = bmap[&p.target];
    let mut hoisted = 0;
    for &(b, k) in &insts {
        let nk = imap[&k];
        let d = src.inst(k);
        let ops: smallvec::SmallVec<[Value; 3]> = d
            .operands
            .iter()
            .map(|&v| match v {
                Value::Inst(x) if imap.contains_key(&x) => Value::Inst(imap[&x]),
                v => vmap.get(&v).copied().unwrap_or(v),
            })
            .collect();
        g.set_operands(nk, ops);
        // An edge to the merge returns; a terminator whose only exit is
        // the merge becomes `return`.
        if d.opcode == Opcode::Br && d.blocks[0] == p.merge {
            let mut ret = InstData::new(Opcode::Return, TypeTable::VOID);
            ret.span = src.inst_span(k);
            g.replace_inst(nk, ret);
        } else {
            let blocks: smallvec::SmallVec<[Block; 3]> = d.blocks.iter().map(|x| bmap[x]).collect();
            g.set_block_operands(nk, blocks);
        }
        if d.has(xir::Trait::Alloca) {
            g.insert_inst(entry, hoisted, nk);
            hoisted += 1;
        } else {
            let nb = bmap[&b];
            let at = g.block(nb).insts().len();
            g.insert_inst(nb, at, nk);
        }
    }
    let gid = m.add_function(g);
    // In the function: the marker becomes the call and a branch to the
    // merge; the region's instructions and blocks go.
    let f = m.func_mut(p.func);
    let mut call = InstData::new(Opcode::Call, TypeTable::VOID);
    call.operands.push(Value::Func(gid));
    call.operands.extend(p.live_ins.iter().copied());
    call.span = f.inst_span(p.marker);
    let mut br = InstData::new(Opcode::Br, TypeTable::VOID);
    br.blocks.push(p.merge);
    f.replace_inst(p.marker, br);
    let pos = f.block(p.at).insts().len() - 1;
    let c = f.create_inst(call);
    f.insert_inst(p.at, pos, c);
    let dead: Vec<Inst> = p.blocks.iter().flat_map(|&b| f.block(b).insts().to_vec()).collect();
    f.remove_insts(&dead);
    let layout: Vec<Block> = f.blocks().iter().copied().filter(|b| !p.blocks.contains(b)).collect();
    f.set_layout(layout);
}
