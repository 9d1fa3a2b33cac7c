//! Small IR helpers shared by the memory / SSA passes: splitting a module
//! borrow into its type table and one function, placing allocas, reading and
//! editing Phi incomings, and the promotability rule for local slots.

use smallvec::SmallVec;
use xir::analysis::Cfg;
use xir::{
    Block, FuncId, Function, Inst, InstCore, InstData, Metadata, MetadataRef, Module, Opcode, Trait, TypeId, TypeTable,
    Value,
};

/// The comment that marks an alloca as not promotable (`// no_promote` above
/// it in XIR text). Annotated slots stay in memory through `mem2reg`.
pub const NO_PROMOTE: &str = "no_promote";

/// Borrow the type table and one function at the same time.
pub fn split(m: &mut Module, f: FuncId) -> (&mut TypeTable, &mut Function) {
    let Module { types, functions, .. } = m;
    (types, &mut functions[f.index()])
}

/// Function ids that have a body.
pub fn defined_functions(m: &Module) -> Vec<FuncId> {
    m.func_ids().filter(|&f| m.func(f).body().is_some()).collect()
}

/// Create `alloca ty` at the top of the entry block, with metadata `md`.
pub fn entry_alloca(f: &mut Function, ty: TypeId, md: Metadata) -> Option<Inst> {
    let entry = f.body()?;
    let mut d = InstData::new(Opcode::Alloca, ty);
    d.md = md;
    let i = f.create_inst(d);
    f.insert_inst(entry, 0, i);
    Some(i)
}

/// Create an unplaced instruction.
pub fn make(f: &mut Function, opcode: Opcode, ty: TypeId, operands: &[Value], md: Metadata) -> Inst {
    f.create_inst(data(opcode, ty, operands, md))
}

/// An instruction's data from its opcode, type, operands and metadata.
pub fn data(opcode: Opcode, ty: TypeId, operands: &[Value], md: Metadata) -> InstData {
    let mut d = InstData::new(opcode, ty);
    d.operands = SmallVec::from_slice(operands);
    d.md = md;
    d
}

/// Insert `i` immediately before `before` (in the same block).
pub fn insert_before(f: &mut Function, before: Inst, i: Inst) {
    let b = f.parent(before).expect("anchor instruction is placed");
    let pos = f.position(before).expect("anchor instruction is placed");
    f.insert_inst(b, pos, i);
}

/// Insert `i` immediately after `after` (in the same block).
pub fn insert_after(f: &mut Function, after: Inst, i: Inst) {
    let b = f.parent(after).expect("anchor instruction is placed");
    let pos = f.position(after).expect("anchor instruction is placed");
    f.insert_inst(b, pos + 1, i);
}

/// `(value, predecessor)` pairs of a Phi.
pub fn phi_incomings(f: &Function, phi: Inst) -> Vec<(Value, Block)> {
    let d = f.inst(phi);
    d.operands.iter().copied().zip(d.blocks.iter().copied()).collect()
}

/// Replace the incomings of a Phi.
pub fn set_phi_incomings(f: &mut Function, phi: Inst, inc: &[(Value, Block)]) {
    f.set_phi_incomings(phi, inc);
}

/// Make the Phis of `succ` carry exactly `edges` incomings from `pred` (the
/// verifier wants one per CFG edge): extra ones are dropped, missing ones
/// repeat the first (duplicated edges carry the same value).
pub fn set_edge_count(f: &mut Function, pred: Block, succ: Block, edges: usize) {
    for phi in phis_of(f, succ) {
        let inc = phi_incomings(f, phi);
        let from: Vec<(Value, Block)> = inc.iter().copied().filter(|p| p.1 == pred).collect();
        if from.len() == edges || (from.is_empty() && edges > 0) {
            continue;
        }
        let mut out: Vec<(Value, Block)> = inc.into_iter().filter(|p| p.1 != pred).collect();
        for k in 0..edges {
            out.push(*from.get(k).unwrap_or(&from[0]));
        }
        set_phi_incomings(f, phi, &out);
    }
}

/// Live Phis at the top of `b` (the verifier's `phi-first` rule puts every
/// Phi there, so the scan stops at the first other instruction instead of
/// reading the whole block).
pub fn phis_of(f: &Function, b: Block) -> Vec<Inst> {
    f.block(b).insts().iter().copied().take_while(|&i| f.opcode(i) == Opcode::Phi).collect()
}

/// How many CFG edges go from `pred` to `succ`.
pub fn edge_count(cfg: &Cfg, pred: Block, succ: Block) -> usize {
    cfg.succs(pred).iter().filter(|&&s| s == succ).count()
}

/// Whether an instruction may be deleted when its result is unused: pure
/// computations, Phis and loads (a dead load only loses a possible error).
pub fn removable_if_dead(d: &InstCore) -> bool {
    removable_if_dead_op(d.opcode)
}

/// `removable_if_dead` by opcode alone (it depends on nothing else), for
/// scans over `Function::live_opcodes_by_id`.
pub fn removable_if_dead_op(op: Opcode) -> bool {
    let o = xir_spec::spec().op(op);
    if o.has(Trait::Terminator) || o.has(Trait::SideEffect) || o.has(Trait::MemoryWrite) || o.has(Trait::Call) {
        return false;
    }
    o.has(Trait::Pure) || matches!(op, Opcode::Phi | Opcode::Load)
}

/// Whether `alloca` is a local slot `mem2reg` may promote: a function-local
/// `alloca` (not `alloca.shared`) of a plain data type, not annotated with a
/// `no_promote` comment, whose every use is the address operand of a `load`
/// or `store` (so no GEP into it, no reference passed to a call, no atomic,
/// and the address itself is never stored).
pub fn promotable(types: &TypeTable, f: &Function, alloca: Inst) -> bool {
    let d = f.inst(alloca);
    if d.opcode != Opcode::Alloca || !types.is_data(d.ty) {
        return false;
    }
    if f.inst_md(alloca).comments.iter().any(|c| c.trim() == NO_PROMOTE) {
        return false;
    }
    // The users' opcodes from the dense table: a slot's users are spread
    // over the function, and their records are not needed here.
    f.uses(Value::Inst(alloca))
        .iter()
        .all(|u| u.index == 0 && f.is_live(u.user) && matches!(f.opcode(u.user), Opcode::Load | Opcode::Store))
}

/// Name a derived value after `md`'s name (no other metadata is copied).
pub fn name_like(md: MetadataRef<'_>) -> Metadata {
    Metadata::with_name(md.name.map(str::to_string))
}

/// The type of a function-local value (instruction result or argument).
pub fn local_type(f: &Function, v: Value) -> Option<TypeId> {
    match v {
        Value::Inst(i) => Some(f.inst(i).ty),
        Value::Arg(a) => f.args.get(a as usize).map(|a| a.ty),
        _ => None,
    }
}

/// The all-zero constant of a data type (`None` for non-data types).
pub fn zero_const(m: &mut Module, ty: TypeId) -> Option<Value> {
    use xir::Type;
    let members: Vec<TypeId> = match m.types.get(ty).clone() {
        Type::Bool | Type::Int { .. } | Type::Float(_) => return Some(m.const_scalar(ty, 0)),
        Type::Vector { elem, lanes } => vec![elem; lanes as usize],
        Type::Matrix { elem, dim } => {
            let col = m.types.vector(elem, dim);
            vec![col; dim as usize]
        }
        Type::Array { elem, len } => vec![elem; usize::try_from(len).ok()?],
        Type::Struct { fields, .. } => fields,
        _ => return None,
    };
    let mut cs = Vec::with_capacity(members.len());
    for t in members {
        cs.push(zero_const(m, t)?.as_const()?);
    }
    Some(m.const_composite(ty, cs))
}
