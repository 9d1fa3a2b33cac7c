//! `sroa`: scalar replacement of aggregates. A slot (`alloca` or
//! `alloca.shared`) of aggregate type whose every use is a `gep` with a
//! constant first index is split into one slot per member; each gep then
//! addresses the member slot directly (dropping its first index, or
//! disappearing when that was its only index). The new slots are split again
//! when they qualify, so nested aggregates come apart down to what is
//! actually accessed; member slots nothing uses are not kept.
//!
//! Which aggregates split (options):
//! - structs and arrays (up to `max_members` members) always;
//! - vectors (into lanes) only with `decompose_vectors`;
//! - matrices (into columns) only with `decompose_matrices`.
//!
//! A slot also loaded or stored *as a whole* splits when some gep addresses
//! one of its members (a partial access: that member can then become an
//! SSA value on its own), or with `aggressive` even without one (a slot
//! accessed only whole is left to `mem2reg` otherwise: splitting it would
//! only trade one load for a load per member). A whole load becomes loads
//! of every member and an `aggregate`, a whole store an `extract` and a
//! store per member; `const_fold` then reads members of the rebuilt value
//! straight from the member loads (extract of aggregate / insert). Whole
//! loads split only for a thread-private `alloca` of the entry block, whose
//! member slots are then zero-initialized where the slot was: a load must
//! see some initialized part (the interpreter's rule), and a member nothing
//! was stored to would otherwise fail to load where the whole load did
//! not. (Undefined contents becoming zero is a refinement.) A member type
//! without a zero (a resource handle) keeps such a slot whole, and so does
//! a store of a value that may have undefined parts (it could make a member
//! wholly undefined again).
//!
//! Never-read members are dropped, not split: for a thread-private
//! `alloca` whose every use is a gep, load or store address (no call, no
//! atomic), the field bitmask (`analysis::field_mask`) says which leaves
//! some load may read; a member none of whose leaves is read gets no slot,
//! and the stores into it (through its geps, or the member's part of a
//! whole store) go with it. Its sub-slots inherit the member's part of the
//! mask, so nested members are dropped the same way.
//!
//! A slot passed to a call, used by an atomic, stored as a value (its
//! address escapes) or indexed dynamically in its first index stays whole;
//! a member slot indexed dynamically (an array member) stays one slot.
//! Member slots keep the slot's opcode (a shared slot splits into shared
//! slots: every thread still addresses the same members), its comments,
//! location and reg2mem spill provenance, and are named `name.k` after it.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`,
//!   `lexical_scopes`.

use serde::Deserialize;
use smallvec::SmallVec;
use xir::analysis::field_mask::member_range;
use xir::analysis::FieldMask;
use xir::pass::{OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{ConstData, ConstValue, FuncId, Inst, InstData, Module, Opcode, Type, TypeId, TypeTable, Value};

use crate::memory::util::{insert_before, zero_const};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    pub decompose_vectors: bool,
    pub decompose_matrices: bool,
    pub aggressive: bool,
    pub max_members: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { decompose_vectors: false, decompose_matrices: false, aggressive: false, max_members: 64 }
    }
}

const INFO: PassInfo = PassInfo {
    name: "sroa",
    doc: "Split aggregate slots accessed through constant-index geps into one slot per member",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["alloca", "alloca.shared"],
    preserves: super::CFG_ANALYSES,
};

const OPTIONS: &[OptionDoc] = &[
    OptionDoc { name: "decompose_vectors", ty: "bool", default: "false", doc: "Also split vector slots into lanes" },
    OptionDoc {
        name: "decompose_matrices",
        ty: "bool",
        default: "false",
        doc: "Also split matrix slots into column slots",
    },
    OptionDoc {
        name: "aggressive",
        ty: "bool",
        default: "false",
        doc: "Also split slots accessed only whole, through no member gep (loads rebuild with aggregate, stores extract members)",
    },
    OptionDoc { name: "max_members", ty: "u32", default: "64", doc: "Arrays with more elements stay whole" },
];

pub struct Sroa {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl { info: INFO, options: OPTIONS, create: |v| Ok(Box::new(Sroa { opts: xir::pass::options_from_ron(v)? })) }
}

impl Pass for Sroa {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut split, mut created, mut dropped) = (0, 0, 0);
        for f in crate::memory::util::defined_functions(module) {
            let masks = cx.analyses.field_masks(module, f);
            let read = |slot: Inst| {
                let r = masks.root(slot)?;
                let whole = xir::analysis::field_mask::leaf_count(&module.types, module.func(f).inst(slot).ty);
                let exact = !r.escapes && module.func(f).opcode(slot) == Opcode::Alloca && whole == r.leaves as u64;
                exact.then(|| r.read.clone())
            };
            let slots: Vec<(Inst, Option<FieldMask>)> = module
                .func(f)
                .select_in_layout_order(|op| matches!(op, Opcode::Alloca | Opcode::AllocaShared))
                .into_iter()
                .map(|s| (s, read(s)))
                .collect();
            let (s, c, d) = sroa_function(module, f, slots, &self.opts);
            split += s;
            created += c;
            dropped += d;
        }
        let mut out = PassOutcome::changed(split > 0);
        out.stats.push(("split_slots".into(), split.to_string()));
        out.stats.push(("member_slots".into(), created.to_string()));
        out.stats.push(("dropped_members".into(), dropped.to_string()));
        Ok(out)
    }
}

/// The member types of a splittable slot type.
fn members(t: &TypeTable, ty: TypeId, o: &Options) -> Option<Vec<TypeId>> {
    match t.get(ty) {
        Type::Struct { fields, .. } if !fields.is_empty() => Some(fields.clone()),
        Type::Array { elem, len } if *len >= 1 && *len <= o.max_members as u64 => Some(vec![*elem; *len as usize]),
        Type::Vector { elem, lanes } if o.decompose_vectors => Some(vec![*elem; *lanes as usize]),
        Type::Matrix { elem, dim } if o.decompose_matrices => {
            let col = t.lookup(&Type::Vector { elem: *elem, lanes: *dim })?;
            Some(vec![col; *dim as usize])
        }
        _ => None,
    }
}

/// Whether every use of `slot` allows splitting it into the members `tys`.
fn splittable(m: &Module, fid: FuncId, slot: Inst, tys: &[TypeId], o: &Options) -> bool {
    let f = m.func(fid);
    let uses = f.uses(Value::Inst(slot));
    let member_gep = |d: &xir::InstCore| {
        d.operands.get(1).and_then(|&v| m.const_int_value(v)).is_some_and(|c| c >= 0 && (c as usize) < tys.len())
    };
    let (mut partial, mut whole, mut whole_load) = (false, false, false);
    for u in uses {
        let d = f.inst(u.user);
        match d.opcode {
            Opcode::Gep if u.index == 0 && member_gep(d) => partial = true,
            Opcode::Store if u.index == 0 => whole = true,
            Opcode::Load => (whole, whole_load) = (true, true),
            _ => return false,
        }
    }
    !uses.is_empty()
        && (!whole || partial || o.aggressive)
        && (!whole_load || whole_loads_splittable(m, fid, slot, tys))
}

/// A whole load becomes per-member loads only for a thread-private slot of
/// the entry block whose members all have a zero: the member slots are
/// then zero-initialized (see the file doc). And only when every value
/// stored into the slot is surely defined: a store of a value with
/// undefined parts (a member of another slot's partly initialized whole
/// load) could leave a member wholly undefined, which its own load would
/// report where the whole load did not.
fn whole_loads_splittable(m: &Module, fid: FuncId, slot: Inst, tys: &[TypeId]) -> bool {
    let f = m.func(fid);
    let d = f.inst(slot);
    d.opcode == Opcode::Alloca
        && f.body().is_some_and(|e| f.parent(slot) == Some(e))
        && tys.iter().all(|&t| has_zero(&m.types, t))
        && stored_values(f, slot).into_iter().all(|v| surely_defined(m, f, slot, v))
}

/// The values stored into `slot`, whole or through its geps.
fn stored_values(f: &xir::Function, slot: Inst) -> Vec<Value> {
    let (mut out, mut addrs) = (Vec::new(), vec![slot]);
    while let Some(a) = addrs.pop() {
        for u in f.uses(Value::Inst(a)) {
            match f.opcode(u.user) {
                Opcode::Gep if u.index == 0 => addrs.push(u.user),
                Opcode::Store if u.index == 0 => out.push(f.inst(u.user).operands[1]),
                _ => {}
            }
        }
    }
    out
}

/// Whether `v` has no undefined part, by how it is made (`false` when
/// unknown). Arithmetic on an undefined scalar is an error, so its results
/// are defined; a scalar load of undefined memory is an error too; a whole
/// load of `slot` itself reads what the zero-initialized member slots hold
/// (defined, when every store into them is). Values are only moved by
/// extract / insert / aggregate / shuffle / select / Phi, so those are
/// defined when what they move is.
fn surely_defined(m: &Module, f: &xir::Function, slot: Inst, v: Value) -> bool {
    let (mut work, mut seen) = (vec![v], rustc_hash::FxHashSet::default());
    while let Some(v) = work.pop() {
        let i = match v {
            Value::Const(_) | Value::Reg(_) => continue,
            Value::Arg(_) if f.is_kernel() => continue,
            Value::Inst(i) => i,
            _ => return false,
        };
        if !seen.insert(i) {
            continue;
        }
        let d = f.inst(i);
        match d.opcode {
            Opcode::Load => {
                let from_slot = d.operands[0].as_inst().is_some_and(|a| rooted_at(f, a, slot));
                if !m.types.is_scalar(d.ty) && !from_slot {
                    return false;
                }
            }
            Opcode::Extract | Opcode::Insert | Opcode::Aggregate | Opcode::Shuffle | Opcode::Select | Opcode::Phi => {
                work.extend(d.operands.iter().copied());
            }
            Opcode::BufferRead => {}
            op if xir_spec::spec().op(op).has(xir_spec::Trait::Arithmetic) => {}
            _ => return false,
        }
    }
    true
}

/// Whether the address `a` is `slot` or a gep chain from it.
fn rooted_at(f: &xir::Function, mut a: Inst, slot: Inst) -> bool {
    loop {
        if a == slot {
            return true;
        }
        match (f.opcode(a), f.inst(a).operands.first()) {
            (Opcode::Gep, Some(&Value::Inst(b))) => a = b,
            _ => return false,
        }
    }
}

/// Whether `zero_const` makes a zero of `ty`.
fn has_zero(t: &TypeTable, ty: TypeId) -> bool {
    match t.get(ty) {
        Type::Bool | Type::Int { .. } | Type::Float(_) | Type::Vector { .. } | Type::Matrix { .. } => true,
        Type::Array { elem, .. } => has_zero(t, *elem),
        Type::Struct { fields, .. } => fields.iter().all(|&f| has_zero(t, f)),
        _ => false,
    }
}

/// Split slots of one function until none qualifies, each slot with the
/// leaves of it some load may read (`None`: unknown, keep every member);
/// returns (slots split, member slots kept, members dropped).
fn sroa_function(
    m: &mut Module,
    fid: FuncId,
    mut work: Vec<(Inst, Option<FieldMask>)>,
    o: &Options,
) -> (usize, usize, usize) {
    let (mut split, mut kept, mut dropped) = (0, 0, 0);
    while let Some((slot, read)) = work.pop() {
        let ty = m.func(fid).inst(slot).ty;
        let Some(tys) = members(&m.types, ty, o) else { continue };
        if !splittable(m, fid, slot, &tys, o) {
            continue;
        }
        // Each member's part of the read mask, in its own numbering.
        let reads: Vec<Option<FieldMask>> = (0..tys.len())
            .map(|k| {
                let r = read.as_ref()?;
                let range = member_range(&m.types, ty, k as u64)?;
                Some(r.slice(range.start, range.end - range.start))
            })
            .collect();
        let (parts, d) = split_slot(m, fid, slot, &tys, &reads);
        split += 1;
        kept += parts.len();
        dropped += d;
        work.extend(parts);
    }
    (split, kept, dropped)
}

/// The geps and stores under `gep` when they are all it has: what goes with
/// a member nothing reads (users before what they use).
fn write_only_tree(f: &xir::Function, gep: Inst) -> Option<Vec<Inst>> {
    let mut tree = vec![gep];
    let mut k = 0;
    while k < tree.len() {
        for u in f.uses(Value::Inst(tree[k])) {
            match f.opcode(u.user) {
                Opcode::Gep | Opcode::Store if u.index == 0 => tree.push(u.user),
                _ => return None,
            }
        }
        k += 1;
    }
    tree.reverse();
    Some(tree)
}

/// Replace `slot` by one slot per member type, dropping the members whose
/// read mask is known and empty; returns the member slots kept with their
/// read masks, and how many members were dropped.
fn split_slot(
    m: &mut Module,
    fid: FuncId,
    slot: Inst,
    tys: &[TypeId],
    reads: &[Option<FieldMask>],
) -> (Vec<(Inst, Option<FieldMask>)>, usize) {
    let never_read = |k: usize| reads[k].as_ref().is_some_and(|r| r.is_empty());
    let index: Vec<Value> = (0..tys.len())
        .map(|k| Value::Const(m.consts.intern(ConstData { ty: TypeTable::U32, value: ConstValue::Scalar(k as u64) })))
        .collect();
    // Each use with the member its gep selects (checked by `splittable`).
    let uses: Vec<(Inst, usize)> = {
        let f = m.func(fid);
        f.uses(Value::Inst(slot))
            .iter()
            .map(|u| {
                let k = f.inst(u.user).operands.get(1).and_then(|&v| m.const_int_value(v)).unwrap_or(0);
                (u.user, k as usize)
            })
            .collect()
    };
    let whole_load = uses.iter().any(|&(u, _)| m.func(fid).opcode(u) == Opcode::Load);
    let zeros: Vec<Option<Value>> = tys.iter().map(|&t| if whole_load { zero_const(m, t) } else { None }).collect();
    let f = m.func_mut(fid);
    let d = f.inst_data(slot);
    let parts: Vec<Inst> = tys
        .iter()
        .enumerate()
        .map(|(k, &ty)| {
            let mut p = InstData::new(d.opcode, ty);
            p.md = xir::Metadata::new(d.md.name.as_ref().map(|n| format!("{n}.{k}")), (*d.md).clone());
            let p = f.create_inst(p);
            insert_before(f, slot, p);
            p
        })
        .collect();
    for (&p, zero) in parts.iter().zip(zeros) {
        if let Some(zero) = zero {
            let mut z = InstData::new(Opcode::Store, TypeTable::VOID);
            z.operands.push(Value::Inst(p));
            z.operands.push(zero);
            let z = f.create_inst(z);
            insert_before(f, slot, z);
        }
    }
    let mut dropped = vec![false; tys.len()];
    for (user, k) in uses {
        match f.opcode(user) {
            Opcode::Gep => {
                if never_read(k) {
                    if let Some(tree) = write_only_tree(f, user) {
                        dropped[k] = true;
                        f.remove_insts(&tree);
                        continue;
                    }
                }
                let ops = f.inst(user).operands.clone();
                let part = Value::Inst(parts[k]);
                if ops.len() == 2 {
                    f.replace_all_uses(Value::Inst(user), part);
                    f.remove_inst(user);
                } else {
                    let mut new: SmallVec<[Value; 3]> = SmallVec::new();
                    new.push(part);
                    new.extend(ops[2..].iter().copied());
                    f.set_operands(user, new);
                }
            }
            Opcode::Load => {
                let mut loads: SmallVec<[Value; 3]> = SmallVec::new();
                for (k, &ty) in tys.iter().enumerate() {
                    let mut l = InstData::new(Opcode::Load, ty);
                    l.operands.push(Value::Inst(parts[k]));
                    let l = f.create_inst(l);
                    insert_before(f, user, l);
                    loads.push(Value::Inst(l));
                }
                let mut agg = InstData::new(Opcode::Aggregate, d.ty);
                agg.operands = loads;
                agg.md = f.inst_md(user).to_metadata();
                let agg = f.create_inst(agg);
                insert_before(f, user, agg);
                f.replace_all_uses(Value::Inst(user), Value::Inst(agg));
                f.remove_inst(user);
            }
            _ => {
                // A whole store: store every member.
                let v = f.inst(user).operands[1];
                for (k, &ty) in tys.iter().enumerate() {
                    if never_read(k) {
                        dropped[k] = true;
                        continue;
                    }
                    let mut e = InstData::new(Opcode::Extract, ty);
                    e.operands.push(v);
                    e.operands.push(index[k]);
                    let e = f.create_inst(e);
                    insert_before(f, user, e);
                    let mut s = InstData::new(Opcode::Store, TypeTable::VOID);
                    s.operands.push(Value::Inst(parts[k]));
                    s.operands.push(Value::Inst(e));
                    let s = f.create_inst(s);
                    insert_before(f, user, s);
                }
                f.remove_inst(user);
            }
        }
    }
    f.remove_inst(slot);
    let gone = (0..parts.len()).filter(|&k| dropped[k] && !f.has_uses(Value::Inst(parts[k]))).count();
    let (mut used, mut unused) = (Vec::new(), Vec::new());
    for (p, r) in parts.into_iter().zip(reads.iter().cloned()) {
        if f.has_uses(Value::Inst(p)) {
            used.push((p, r));
        } else {
            unused.push(p);
        }
    }
    f.remove_insts(&unused);
    (used, gone)
}
