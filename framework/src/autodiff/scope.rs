//! The shape of an `autodiff.scope` and its structural checks.
//!
//! A scope's **body region** is the blocks reached from its `body` block
//! before its `merge`. Its **top level** is the chain of body blocks that
//! no construct nested in the body encloses: starting at `body`, each top
//! level block ends in a `br` to the next one (or to the merge), or in a
//! construct whose merge is the next one. Every body block is placed on
//! that chain by the index of the top-level block it belongs to (its own,
//! or the one whose construct encloses it), which is all the ordering the
//! intrinsics need: an instruction of a construct headed by top-level block
//! `k` runs after every instruction of block `k` and before block `k + 1`.

use rustc_hash::{FxHashMap, FxHashSet};
use xir_spec::Opcode;

use crate::{Block, Diagnostic, Function, Inst, Module};

/// Diagnostics of malformed scopes (docs/diagnostics.md).
const RULE: &str = "autodiff-scope";

/// The refusal of a scope inside another (the interpreter also says it of
/// a scope that starts in a function a scope calls).
pub const NESTED_SCOPE: &str = "a scope nested in another autodiff scope";

/// The refusal of a buffer a scope both writes and reads (the pass sees it
/// in the code, the interpreter when it happens).
pub const BUFFER_READ_AND_WRITTEN: &str =
    "a buffer written in the autodiff scope is also read in it; gradients do not flow through buffer memory";

/// One scope, its region and its intrinsics, computed without changing
/// anything.
#[derive(Clone, Debug)]
pub struct ScopeShape {
    /// The `autodiff.scope` terminator and its block.
    pub scope: Inst,
    pub header: Block,
    pub body: Block,
    pub merge: Block,
    /// The top-level blocks, in execution order (`top_level[0] == body`).
    pub top_level: Vec<Block>,
    /// Every body block with the index (into `top_level`) of the top-level
    /// block it belongs to; in the function's layout order.
    pub blocks: Vec<(Block, usize)>,
    /// The one `autodiff.backward`.
    pub backward: Inst,
    /// `autodiff.requires_gradient` instructions, in execution order.
    pub marks: Vec<Inst>,
    /// `blocks` as a map: the sweep asks for the level of every operand's
    /// block, so a scan of `blocks` would make it quadratic in scopes with
    /// many blocks (expanded loops).
    level: FxHashMap<Block, usize>,
}

impl ScopeShape {
    /// Whether `b` is a block of the body region.
    pub fn contains(&self, b: Block) -> bool {
        self.level.contains_key(&b)
    }
    /// The top-level index `b` belongs to.
    pub fn level_of(&self, b: Block) -> Option<usize> {
        self.level.get(&b).copied()
    }
    /// Whether instruction `i` (in body block `b`) runs after the backward:
    /// in a later top-level block, in a construct of the backward's block,
    /// or later in that block itself.
    pub fn after_backward(&self, f: &Function, b: Block, i: Inst) -> bool {
        let kb = self.level_of(f.parent(self.backward).expect("placed")).expect("in the scope");
        let Some(k) = self.level_of(b) else { return false };
        k > kb || (k == kb && (b != self.top_level[k] || f.position(i) > f.position(self.backward)))
    }
}

/// Every scope of `f`, checked; or the diagnostics of those that are
/// malformed (all of them, not only the first).
pub fn check_scopes(m: &Module, f: &Function) -> Result<Vec<ScopeShape>, Vec<Diagnostic>> {
    let mut shapes = Vec::new();
    let mut diags = Vec::new();
    for (b, i) in f.all_insts() {
        if f.opcode(i) == Opcode::AutodiffScope {
            match scope_shape(m, f, b, i) {
                Ok(s) => shapes.push(s),
                Err(d) => diags.push(*d),
            }
        }
    }
    // Intrinsics outside every scope mean nothing.
    for (b, i) in f.all_insts() {
        let op = f.opcode(i);
        if op != Opcode::AutodiffScope
            && f.inst(i).has(crate::Trait::Autodiff)
            && !shapes.iter().any(|s| s.contains(b))
            && diags.is_empty()
        {
            diags.push(*diag(f, i, format!("`{op}` outside an autodiff scope")));
        }
    }
    if diags.is_empty() {
        Ok(shapes)
    } else {
        Err(diags)
    }
}

fn diag(f: &Function, i: Inst, msg: String) -> Box<Diagnostic> {
    Box::new(crate::verify::inst_diag(f, i, RULE, msg))
}

fn name(f: &Function, b: Block) -> String {
    f.block_name(b).map(str::to_string).unwrap_or_else(|| format!("bb{}", b.index()))
}

/// The blocks reached from `from` without passing `stop`: a scope's body,
/// or one arm or loop of a construct (`stop` its merge).
pub fn reach(f: &Function, from: &[Block], stop: Block) -> FxHashSet<Block> {
    let mut seen = FxHashSet::default();
    let mut stack: Vec<Block> = from.to_vec();
    while let Some(b) = stack.pop() {
        if b != stop && seen.insert(b) {
            stack.extend(f.successors(b));
        }
    }
    seen
}

/// The checked shape of the scope whose terminator is `scope` (in `header`).
pub fn scope_shape(m: &Module, f: &Function, header: Block, scope: Inst) -> Result<ScopeShape, Box<Diagnostic>> {
    let d = f.inst(scope);
    let (body, merge) = (d.blocks[0], d.blocks[1]);
    let region = reach(f, &[body], merge);
    if region.contains(&header) || f.body().is_some_and(|e| region.contains(&e)) {
        return Err(diag(f, scope, "the scope's body reaches its own header again".into()));
    }
    // Exits, nesting and entries.
    for (b, i) in f.all_insts() {
        let op = f.opcode(i);
        let inside = region.contains(&b);
        if !inside {
            if i != scope && f.inst(i).blocks.iter().any(|x| region.contains(x)) {
                return Err(diag(f, i, format!("`^{}` jumps into the scope's body", name(f, b))));
            }
            continue;
        }
        match op {
            Opcode::AutodiffScope => return Err(diag(f, i, NESTED_SCOPE.into())),
            Opcode::Return | Opcode::RasterDiscard | Opcode::Unreachable => {
                return Err(diag(f, i, format!("`{op}` inside an autodiff scope; the scope must end at its merge")))
            }
            _ => {}
        }
        for &x in &f.inst(i).blocks {
            if !region.contains(&x) && x != merge {
                return Err(diag(f, i, format!("the scope's body leaves to `^{}`, not to its merge", name(f, x))));
            }
        }
    }
    // The top level: follow `br` and construct merges from the body.
    let mut top_level = Vec::new();
    let mut level: FxHashMap<Block, usize> = FxHashMap::default();
    let mut b = body;
    loop {
        let k = top_level.len();
        top_level.push(b);
        level.insert(b, k);
        let Some(t) = f.terminator(b) else {
            return Err(Box::new(
                Diagnostic::error(RULE, format!("`^{}` has no terminator", name(f, b))).in_function(&f.name),
            ));
        };
        let td = f.inst(t);
        let next = match td.opcode {
            Opcode::Br => td.blocks[0],
            Opcode::If | Opcode::Switch | Opcode::Loop | Opcode::SimpleLoop => {
                let cm = construct_merge(f, t);
                let arms: Vec<Block> = td.blocks.iter().copied().filter(|&x| x != cm).collect();
                for x in reach(f, &arms, cm) {
                    level.entry(x).or_insert(k);
                }
                cm
            }
            op => {
                return Err(diag(
                    f,
                    t,
                    format!(
                    "`{op}` at the scope's top level; only `br` and structured constructs may end a top-level block"
                ),
                ))
            }
        };
        if next == merge {
            break;
        }
        if level.contains_key(&next) {
            return Err(diag(f, t, "the scope's top level loops back on itself".into()));
        }
        b = next;
    }
    let blocks: Vec<(Block, usize)> = f
        .blocks()
        .iter()
        .filter(|b| region.contains(b))
        .map(|&b| (b, level.get(&b).copied().unwrap_or(usize::MAX)))
        .collect();
    if let Some(&(b, _)) = blocks.iter().find(|&&(_, k)| k == usize::MAX) {
        return Err(Box::new(crate::verify::block_diag(
            f,
            b,
            RULE,
            format!("`^{}` is in the scope but on none of its paths", name(f, b)),
        )));
    }
    // The intrinsics.
    let top = |b: Block| level.get(&b).is_some_and(|&k| top_level[k] == b);
    let in_order: Vec<(Block, Inst)> =
        top_level.iter().flat_map(|&b| f.block(b).insts().iter().map(move |&i| (b, i))).collect();
    let backwards: Vec<Inst> = blocks
        .iter()
        .flat_map(|&(b, _)| f.block(b).insts().iter().copied())
        .filter(|&i| f.opcode(i) == Opcode::AutodiffBackward)
        .collect();
    let backward = match backwards.as_slice() {
        [] => return Err(diag(f, scope, "the scope has no `autodiff.backward`".into())),
        [one] => *one,
        [_, second, ..] => return Err(diag(f, *second, "a second `autodiff.backward` in one scope".into())),
    };
    if !top(f.parent(backward).expect("placed")) {
        return Err(diag(
            f,
            backward,
            "`autodiff.backward` inside a construct; it must be at the scope's top level".into(),
        ));
    }
    let shape_so_far = ScopeShape {
        scope,
        header,
        body,
        merge,
        top_level: top_level.clone(),
        blocks: blocks.clone(),
        backward,
        marks: Vec::new(),
        level: blocks.iter().copied().collect(),
    };
    let mut marks: Vec<Inst> = Vec::new();
    for &(b, _) in &blocks {
        for &i in f.block(b).insts() {
            let id = f.inst(i);
            match id.opcode {
                Opcode::AutodiffRequiresGradient => {
                    if !top(b) || shape_so_far.after_backward(f, b, i) {
                        return Err(diag(
                            f,
                            i,
                            "`autodiff.requires_gradient` must be at the scope's top level, before the backward".into(),
                        ));
                    }
                    let p = id.operands[0];
                    let is_alloca = p.as_inst().is_some_and(|a| f.opcode(a) == Opcode::Alloca);
                    if !is_alloca {
                        return Err(diag(
                            f,
                            i,
                            "`autodiff.requires_gradient` needs the address of a whole local variable (an `alloca`)"
                                .into(),
                        ));
                    }
                    if !differentiable(m, f.value_type(m, p)) {
                        return Err(diag(
                            f,
                            i,
                            format!(
                                "`{}` has no float leaf to differentiate",
                                crate::verify::type_name(&m.types, f.value_type(m, p))
                            ),
                        ));
                    }
                    if marks.iter().any(|&k| f.inst(k).operands[0] == p) {
                        return Err(diag(f, i, "this variable already requires a gradient in this scope".into()));
                    }
                    marks.push(i);
                }
                Opcode::AutodiffGradient if !shape_so_far.after_backward(f, b, i) => {
                    return Err(diag(f, i, "`autodiff.gradient` is read before the scope's backward has run".into()));
                }
                Opcode::AutodiffGradientMarker if id.operands[0] != f.inst(backward).operands[0] => {
                    return Err(diag(
                        f,
                        i,
                        "`autodiff.gradient_marker` names a value the scope's backward does not start from".into(),
                    ));
                }
                _ => {}
            }
        }
    }
    // `gradient` and `accumulate_gradient` name a marked variable.
    for &(b, _) in &blocks {
        for &i in f.block(b).insts() {
            let id = f.inst(i);
            if matches!(id.opcode, Opcode::AutodiffGradient | Opcode::AutodiffAccumulateGradient)
                && !marks.iter().any(|&k| f.inst(k).operands[0] == id.operands[0])
            {
                return Err(diag(
                    f,
                    i,
                    format!("`{}` names a variable no `requires_gradient` of this scope marks", id.opcode),
                ));
            }
        }
    }
    marks.sort_by_key(|&i| in_order.iter().position(|&(_, x)| x == i));
    Ok(ScopeShape { marks, ..shape_so_far })
}

/// The merge block of a structured construct terminator.
fn construct_merge(f: &Function, t: Inst) -> Block {
    let d = f.inst(t);
    match d.opcode {
        // if: true, false, merge; loop: prepare, body, update, merge.
        Opcode::If => d.blocks[2],
        Opcode::Loop => d.blocks[3],
        // switch: merge, default, cases; simple_loop: body, merge.
        Opcode::Switch => d.blocks[0],
        Opcode::SimpleLoop => d.blocks[1],
        _ => unreachable!("not a construct"),
    }
}

/// Whether values of `ty` carry gradients (docs/autodiff.md,
/// "Differentiable values").
pub fn differentiable(m: &Module, ty: crate::TypeId) -> bool {
    use crate::{FloatFormat, Type};
    match m.types.get(ty) {
        Type::Float(f) => matches!(f, FloatFormat::F16 | FloatFormat::F32 | FloatFormat::F64),
        Type::Vector { elem, .. } | Type::Matrix { elem, .. } | Type::Array { elem, .. } => differentiable(m, *elem),
        Type::Struct { fields, .. } => fields.iter().any(|&t| differentiable(m, t)),
        _ => false,
    }
}
