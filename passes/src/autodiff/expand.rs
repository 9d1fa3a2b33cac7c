//! The `autodiff` pass's private expansion of bounded loops (the
//! reference's "private bounded semantic expansion"; not a general unroll
//! pass). A loop on the tape (before the backward) is replayed backwards
//! only once it is straight code: each loop with a constant trip count is
//! replaced by that many copies of its prepare / body / update blocks and
//! a last copy of its prepare block, innermost loops first.
//!
//! A loop's trip count is constant when its prepare block is one block that
//! ends in `cond_br` on `cmp(load %i, K)` (either operand order) with `K` a
//! constant, `%i` is an integer variable stored exactly once in the loop as
//! `load %i` plus or minus a constant, nothing else takes its address, and
//! the block that enters the loop stores a constant to it last. The count
//! is found by running the counter in the variable's own width, and refused
//! past the limit.

use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;
use xir::autodiff::ScopeShape;
use xir::{Block, FuncId, Function, Inst, Module, Opcode, Value};

use xir::autodiff::reach;

/// Why a loop cannot be expanded (the caller locates it at the loop).
pub type Refusal = (Inst, String);

/// The innermost loop on the tape of `shape` (a loop whose block belongs
/// to a top-level block before the backward's), if any.
pub fn innermost_tape_loop(f: &Function, shape: &ScopeShape) -> Option<Inst> {
    let kb = shape.level_of(f.parent(shape.backward)?)?;
    let loops: Vec<(Inst, FxHashSet<Block>)> = shape
        .blocks
        .iter()
        .filter(|&&(_, k)| k < kb)
        .filter_map(|&(b, _)| f.terminator(b))
        .filter(|&t| matches!(f.opcode(t), Opcode::Loop | Opcode::SimpleLoop))
        .map(|t| {
            let d = f.inst(t);
            let merge = if d.opcode == Opcode::Loop { d.blocks[3] } else { d.blocks[1] };
            (t, reach(f, &[d.blocks[0]], merge))
        })
        .collect();
    loops
        .iter()
        .find(|(t, region)| !loops.iter().any(|(u, _)| u != t && region.contains(&f.parent(*u).expect("placed"))))
        .map(|(t, _)| *t)
}

/// The trip count of the loop `t`, or why it has none the pass can use.
pub fn trip_count(m: &Module, f: &Function, t: Inst, limit: u64) -> Result<u64, Refusal> {
    let no = |why: &str| Err((t, format!("a loop before the backward whose trip count is not a constant: {why}")));
    let d = f.inst(t);
    if d.opcode != Opcode::Loop {
        return no("only `loop` constructs with a counted prepare block are expanded");
    }
    let (prep, body, merge) = (d.blocks[0], d.blocks[1], d.blocks[3]);
    let Some(ct) = f.terminator(prep) else { return no("the prepare block has no terminator") };
    let cd = f.inst(ct);
    if cd.opcode != Opcode::CondBr {
        return no("its prepare block does not end in `cond_br`");
    }
    let continue_when = match (cd.blocks[0], cd.blocks[1]) {
        (x, y) if x == body && y == merge => true,
        (x, y) if x == merge && y == body => false,
        _ => return no("its prepare block does not choose between the body and the merge"),
    };
    let Some(ci) = cd.operands[0].as_inst() else { return no("its condition is not a comparison") };
    let cmp = f.inst(ci);
    if !matches!(cmp.opcode, Opcode::Lt | Opcode::Le | Opcode::Gt | Opcode::Ge | Opcode::Ne | Opcode::Eq) {
        return no("its condition is not a comparison");
    }
    let counter_of = |v: Value| -> Option<Value> {
        let i = v.as_inst()?;
        (f.opcode(i) == Opcode::Load && f.parent(i) == Some(prep)).then(|| f.inst(i).operands[0])
    };
    let (var, bound, flipped) = match (counter_of(cmp.operands[0]), counter_of(cmp.operands[1])) {
        (Some(v), None) => (v, cmp.operands[1], false),
        (None, Some(v)) => (v, cmp.operands[0], true),
        _ => return no("its condition does not compare a loaded counter with a constant"),
    };
    let Some(k) = m.const_int_value(bound) else { return no("the counter's bound is not a constant") };
    if var.as_inst().is_none_or(|a| f.opcode(a) != Opcode::Alloca) {
        return no("the counter is not a local variable");
    }
    let ty = f.value_type(m, var);
    let Some(signed) = int_signedness(m, ty) else { return no("the counter is not an integer") };
    let bits = m.types.scalar_bits(ty);
    // The one step: `store %i, add/sub (load %i), S` inside the loop.
    let region = reach(f, &[prep], merge);
    let mut step: Option<i128> = None;
    for u in f.uses(var) {
        let user = u.user;
        let inside = f.parent(user).is_some_and(|b| region.contains(&b));
        match f.opcode(user) {
            Opcode::Load => {}
            Opcode::Store if u.index == 0 && inside => {
                if step.is_some() {
                    return no("the counter is stored more than once in the loop");
                }
                let v = f.inst(user).operands[1];
                let s = v.as_inst().and_then(|a| {
                    let ad = f.inst(a);
                    let sign = match ad.opcode {
                        Opcode::Add => 1,
                        Opcode::Sub => -1,
                        _ => return None,
                    };
                    let from_counter = |x: Value| {
                        x.as_inst().is_some_and(|l| f.opcode(l) == Opcode::Load && f.inst(l).operands[0] == var)
                    };
                    if from_counter(ad.operands[0]) {
                        Some(sign * m.const_int_value(ad.operands[1])?)
                    } else if sign == 1 && from_counter(ad.operands[1]) {
                        m.const_int_value(ad.operands[0])
                    } else {
                        None
                    }
                });
                match s {
                    Some(s) => step = Some(s),
                    None => return no("the counter is not stepped by a constant"),
                }
            }
            Opcode::Store if u.index == 0 => {}
            _ => return no("the counter's address is used other than by loads and stores"),
        }
    }
    let Some(step) = step else { return no("the counter is not stepped in the loop") };
    // Its start: the last store to it in the block that enters the loop.
    let header = f.parent(t).expect("placed");
    let start = f.block(header).insts().iter().rev().find_map(|&i| {
        let id = f.inst(i);
        (id.opcode == Opcode::Store && id.operands[0] == var).then(|| id.operands[1])
    });
    let Some(mut i) = start.and_then(|v| m.const_int_value(v)) else {
        return no("the block entering the loop does not store a constant start to the counter");
    };
    let wrap = |x: i128| -> i128 {
        let mask = if bits >= 128 { -1i128 } else { (1i128 << bits) - 1 };
        let u = x & mask;
        if signed && bits < 128 && u >> (bits - 1) & 1 == 1 {
            u - (1i128 << bits)
        } else {
            u
        }
    };
    let k = wrap(k);
    let holds = |i: i128| {
        let (a, b) = if flipped { (k, i) } else { (i, k) };
        let r = match cmp.opcode {
            Opcode::Lt => a < b,
            Opcode::Le => a <= b,
            Opcode::Gt => a > b,
            Opcode::Ge => a >= b,
            Opcode::Eq => a == b,
            _ => a != b,
        };
        r == continue_when
    };
    let mut n = 0u64;
    i = wrap(i);
    while holds(i) {
        n += 1;
        if n > limit {
            return Err((
                t,
                format!("a loop before the backward runs more than {limit} times (`max_unrolled_iterations`): the pass expands loops privately and stops there"),
            ));
        }
        i = wrap(i + step);
    }
    Ok(n)
}

fn int_signedness(m: &Module, ty: xir::TypeId) -> Option<bool> {
    match m.types.get(ty) {
        xir::Type::Int { signed, .. } => Some(*signed),
        _ => None,
    }
}

/// Replace the loop `t` by `n` copies of its blocks and a last prepare.
pub fn expand(m: &mut Module, fid: FuncId, t: Inst, n: u64) {
    let f = m.func_mut(fid);
    let d = f.inst_data(t);
    let (prep, merge) = (d.blocks[0], d.blocks[3]);
    let header = f.parent(t).expect("placed");
    let region: Vec<Block> = {
        let r = reach(f, &[prep], merge);
        f.blocks().iter().copied().filter(|b| r.contains(b)).collect()
    };
    // Copy k (0..=n): a block map and a value map; the last copy is the
    // prepare block alone.
    let mut firsts: Vec<Block> = Vec::new();
    let mut last_values: FxHashMap<Value, Value> = FxHashMap::default();
    let mut new_layout: Vec<Block> = Vec::new();
    let mut copies: Vec<(FxHashMap<Block, Block>, FxHashMap<Value, Value>)> = Vec::new();
    for k in 0..=n {
        let blocks: Vec<Block> = if k == n { vec![prep] } else { region.clone() };
        let bmap: FxHashMap<Block, Block> = blocks.iter().map(|&b| (b, f.add_block())).collect();
        for &b in &blocks {
            f.set_block_md(bmap[&b], f.block_md(b).to_metadata());
        }
        new_layout.extend(blocks.iter().map(|b| bmap[b]));
        firsts.push(bmap[&prep]);
        copies.push((bmap, FxHashMap::default()));
    }
    let prep_branch = f.terminator(prep).expect("checked");
    #[allow(clippy::needless_range_loop)] // copy k also reads the first block of copy k + 1
    for k in 0..=n as usize {
        let blocks: Vec<Block> = if k == n as usize { vec![prep] } else { region.clone() };
        // Clone first, then rename operands: a use may precede its
        // definition in layout order.
        let mut clones: Vec<Inst> = Vec::new();
        for &b in &blocks {
            let nb = copies[k].0[&b];
            for &i in f.block(b).insts().to_vec().iter() {
                let mut nd = f.inst_data(i);
                if i == prep_branch {
                    // The counted branch: into this copy's body, or out.
                    let mut br = xir::InstData::new(Opcode::Br, xir::TypeTable::VOID);
                    br.blocks.push(if k == n as usize { merge } else { copies[k].0[&d.blocks[1]] });
                    nd = br;
                } else {
                    let bm = &copies[k].0;
                    let next = firsts.get(k + 1).copied();
                    nd.blocks = nd
                        .blocks
                        .iter()
                        .map(|x| {
                            if *x == prep {
                                next.expect("a back edge only in loop copies")
                            } else {
                                bm.get(x).copied().unwrap_or(*x)
                            }
                        })
                        .collect::<SmallVec<[Block; 3]>>();
                }
                let ni = f.append_inst(nb, nd);
                copies[k].1.insert(Value::Inst(i), Value::Inst(ni));
                clones.push(ni);
            }
        }
        for ni in clones {
            let ops: SmallVec<[Value; 3]> =
                f.inst(ni).operands.iter().map(|v| copies[k].1.get(v).copied().unwrap_or(*v)).collect();
            f.set_operands(ni, ops);
        }
        if k == n as usize {
            last_values = copies[k].1.clone();
        }
    }
    // Uses after the loop see the last prepare's values.
    for (&old, &new) in &last_values {
        f.replace_all_uses(old, new);
    }
    let mut enter = xir::InstData::new(Opcode::Br, xir::TypeTable::VOID);
    enter.blocks.push(firsts[0]);
    f.replace_inst(t, enter);
    let dead: Vec<Inst> = region.iter().flat_map(|&b| f.block(b).insts().to_vec()).collect();
    f.remove_insts(&dead);
    let gone: FxHashSet<Block> = region.iter().chain(&new_layout).copied().collect();
    let mut layout: Vec<Block> = f.blocks().iter().copied().filter(|b| !gone.contains(b)).collect();
    let at = layout.iter().position(|&b| b == header).expect("in the layout") + 1;
    layout.splice(at..at, new_layout);
    f.set_layout(layout);
}
