//! What the `autodiff` pass decides about one scope before it changes
//! anything: which values and variables carry gradients (activity), which
//! instructions the reverse sweep replays, and whether the scope is one the
//! pass can differentiate (docs/autodiff.md, "What a scope may not do").

use rustc_hash::FxHashSet;
use xir::autodiff::{differentiable, ScopeShape};
use xir::{Block, Diagnostic, Function, Inst, Module, Opcode, Trait, Value};

use super::emit::shape as shape_of;
use super::rules::{Rules, Shape};

/// Diagnostics of scopes the pass cannot differentiate.
pub const RULE: &str = "autodiff";

/// One scope's differentiation, decided.
#[derive(Debug)]
pub struct ScopePlan {
    pub shape: ScopeShape,
    /// The instructions before the backward (the tape), in layout order of
    /// their blocks.
    pub tape: FxHashSet<Inst>,
    /// Instruction results that carry gradients to the output (active and
    /// useful).
    pub active: FxHashSet<Value>,
    /// Local variables (allocas) that hold gradient-carrying data at some
    /// point of the tape, in first-use order.
    pub roots: Vec<Value>,
    /// `roots` as a set (asked once per memory access of the tape).
    root_set: FxHashSet<Value>,
}

impl ScopePlan {
    pub fn is_active(&self, v: Value) -> bool {
        self.active.contains(&v)
    }
    pub fn root_active(&self, f: &Function, p: Value) -> bool {
        root(f, p).is_some_and(|r| self.root_set.contains(&r))
    }
}

/// The variable an address points into (following `gep`s), if it is a
/// local variable.
pub fn root(f: &Function, mut p: Value) -> Option<Value> {
    loop {
        let i = p.as_inst()?;
        match f.opcode(i) {
            Opcode::Alloca => return Some(p),
            Opcode::Gep => p = f.inst(i).operands[0],
            _ => return None,
        }
    }
}

/// Results that carry no gradient whatever their operands.
pub fn zero_derivative(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Floor
            | Ceil
            | Trunc
            | Round
            | Rint
            | Step
            | Lt
            | Gt
            | Le
            | Ge
            | Eq
            | Ne
            | Isinf
            | Isnan
            | AutodiffDetach
            | AutodiffGradient
    )
}

/// Instructions the reverse sweep knows how to replay besides the rule
/// table's: data movement and the reductions whose rule is code.
fn moves_data(op: Opcode) -> bool {
    use Opcode::*;
    matches!(op, Load | Store | Gep | Extract | Insert | Aggregate | Shuffle | CastStatic | ReduceMin | ReduceMax)
}

pub fn located(f: &Function, i: Inst, msg: String) -> Box<Diagnostic> {
    Box::new(xir::verify::inst_diag(f, i, RULE, msg))
}

/// Decide the differentiation of `shape`, or say why the pass cannot.
pub fn plan_scope(m: &Module, f: &Function, shape: ScopeShape) -> Result<ScopePlan, Box<Diagnostic>> {
    let rules = Rules::builtin();
    let kb = shape.level_of(f.parent(shape.backward).expect("placed")).expect("in the scope");
    // The tape: everything before the backward.
    let mut tape_blocks: Vec<Block> = Vec::new();
    let mut tape = FxHashSet::default();
    for &(b, k) in &shape.blocks {
        if k < kb {
            tape_blocks.push(b);
            tape.extend(f.block(b).insts().iter().copied());
        }
    }
    let bb = shape.top_level[kb];
    for &i in f.block(bb).insts() {
        if i == shape.backward {
            break;
        }
        tape.insert(i);
    }
    tape_blocks.push(bb);
    // Shapes the pass replays: no Phi anywhere in the scope, no loop and no
    // falling-through switch case before the backward.
    for &(b, _) in &shape.blocks {
        for &i in f.block(b).insts() {
            if f.opcode(i) == Opcode::Phi {
                return Err(located(
                    f,
                    i,
                    "a `phi` in an autodiff scope: the pass works on memory form (run the scope through the pre-autodiff pipeline, or keep values in variables)".into(),
                ));
            }
        }
    }
    for &b in &tape_blocks {
        let Some(t) = f.terminator(b) else { continue };
        if !tape.contains(&t) {
            continue;
        }
        match f.opcode(t) {
            // Expanded before planning (`expand.rs`); one left is a defect.
            Opcode::Loop | Opcode::SimpleLoop => {
                return Err(located(f, t, "a loop before the backward was not expanded".into()))
            }
            Opcode::Switch => {
                let d = f.inst(t);
                let merge = d.blocks[0];
                let targets: Vec<Block> = d.blocks[1..].to_vec();
                for &x in &targets {
                    if x == merge {
                        continue;
                    }
                    let arm = xir::autodiff::reach(f, &[x], merge);
                    if targets.iter().any(|&y| y != x && y != merge && arm.contains(&y)) {
                        return Err(located(
                            f,
                            t,
                            "a switch case falls through into another before the backward".into(),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    // Buffers both written and read in the scope.
    let mut read = FxHashSet::default();
    let mut written = FxHashSet::default();
    for &(b, _) in &shape.blocks {
        for &i in f.block(b).insts() {
            let d = f.inst(i);
            if d.has(Trait::Resource) && !d.operands.is_empty() {
                if d.has(Trait::MemoryWrite) {
                    written.insert((d.operands[0], i));
                } else if d.has(Trait::MemoryRead) {
                    read.insert(d.operands[0]);
                }
            }
        }
    }
    let mut writes: Vec<(Value, Inst)> = written.into_iter().collect();
    writes.sort_by_key(|&(_, i)| i.index());
    if let Some(&(_, i)) = writes.iter().find(|(buf, _)| read.contains(buf)) {
        return Err(located(f, i, xir::autodiff::BUFFER_READ_AND_WRITTEN.into()));
    }
    // Activity, to a fixed point (a store makes its variable active for the
    // loads the layout placed before it only through another store, so two
    // or three rounds suffice; the loop stops when nothing changes).
    let order: Vec<Inst> =
        tape_blocks.iter().flat_map(|&b| f.block(b).insts().iter().copied()).filter(|i| tape.contains(i)).collect();
    let mut active: FxHashSet<Value> = FxHashSet::default();
    let mut roots: Vec<Value> = Vec::new();
    let mut root_set: FxHashSet<Value> = FxHashSet::default();
    for &i in &order {
        if f.opcode(i) == Opcode::AutodiffRequiresGradient && root_set.insert(f.inst(i).operands[0]) {
            roots.push(f.inst(i).operands[0]);
        }
    }
    loop {
        let mut changed = false;
        for &i in &order {
            let d = f.inst(i);
            let op = d.opcode;
            match op {
                Opcode::Store => {
                    let (p, v) = (d.operands[0], d.operands[1]);
                    if active.contains(&v) {
                        let Some(r) = root(f, p) else {
                            return Err(located(
                                f,
                                i,
                                "a value that carries a gradient is stored through an address that is not a local variable".into(),
                            ));
                        };
                        if root_set.insert(r) {
                            roots.push(r);
                            changed = true;
                        }
                    }
                }
                Opcode::Load => {
                    let p = d.operands[0];
                    if differentiable(m, d.ty) && root(f, p).is_some_and(|r| root_set.contains(&r)) {
                        changed |= active.insert(Value::Inst(i));
                    }
                }
                _ if zero_derivative(op) || d.has(Trait::Autodiff) => {}
                _ => {
                    if differentiable(m, d.ty) && d.operands.iter().any(|v| active.contains(v)) {
                        changed |= active.insert(Value::Inst(i));
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    // Every use of a gradient-carrying value is one the sweep replays.
    for &i in &order {
        let d = f.inst(i);
        let op = d.opcode;
        let uses_active = d.operands.iter().any(|v| active.contains(v));
        if !uses_active || zero_derivative(op) {
            continue;
        }
        let ok = match op {
            // (A cast to an integer is a zero-derivative use.)
            _ if moves_data(op) => true,
            Opcode::AutodiffBackward | Opcode::AutodiffGradientMarker | Opcode::AutodiffAccumulateGradient => true,
            // A buffer store keeps the primal value.
            _ if d.has(Trait::Resource) && d.has(Trait::MemoryWrite) && !d.has(Trait::Atomic) => true,
            _ => {
                // An operand without a rule has a zero derivative (a
                // condition, a sign, an edge).
                let shapes: Vec<Shape> = d.operands.iter().map(|&v| shape_of(&m.types, f.value_type(m, v))).collect();
                rules.find(op, &shapes).is_some()
            }
        };
        if !ok {
            return Err(located(
                f,
                i,
                format!("`{op}` is a non-differentiable operation on a gradient path (docs/autodiff.md lists what propagates)"),
            ));
        }
    }
    // Usefulness: a value that carries a gradient but does not reach the
    // output has a zero adjoint. Replaying it would multiply that zero by
    // its partial derivatives, and one that overflows (the `exp` of a large
    // value nothing reads) would turn a finite derivative into NaN; the
    // interpreter's tangents never meet it. The sweep replays only what is
    // both active and useful (refusals above stay those of the active set,
    // as the interpreter's).
    let useful = useful_values(f, &order, shape.backward);
    active.retain(|v| useful.contains(v));
    Ok(ScopePlan { shape, tape, active, roots, root_set })
}

/// The values and local variables the operand of `backward` depends on
/// through the tape's data flow: the operands of a useful instruction, the
/// variable a useful load reads, the value stored into a useful variable;
/// to a fixed point (a loop's stores reach loads laid out before them).
fn useful_values(f: &Function, order: &[Inst], backward: Inst) -> FxHashSet<Value> {
    let y = f.inst(backward).operands[0];
    let mut useful: FxHashSet<Value> = FxHashSet::default();
    useful.insert(y);
    useful.extend(root(f, y));
    loop {
        let mut changed = false;
        for &i in order.iter().rev() {
            let d = f.inst(i);
            if d.opcode == Opcode::Store {
                let (p, v) = (d.operands[0], d.operands[1]);
                if root(f, p).is_some_and(|r| useful.contains(&r)) {
                    changed |= useful.insert(v);
                }
            } else if useful.contains(&Value::Inst(i)) {
                if d.opcode == Opcode::Load {
                    if let Some(r) = root(f, d.operands[0]) {
                        changed |= useful.insert(r);
                    }
                }
                for &v in &d.operands {
                    changed |= useful.insert(v);
                }
            }
        }
        if !changed {
            return useful;
        }
    }
}
