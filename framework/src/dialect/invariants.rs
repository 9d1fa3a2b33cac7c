//! Dialect invariants: one Rust predicate per name used in `dialects.ron`.
//! Each returns the violations it finds, named after the invariant (the
//! checker renames them `dialect:<dialect>:<invariant>`). Except for
//! `verified`, they run only on modules that pass the generic verifier, so
//! they may index freely.
//!
//! - `verified`: the generic verifier accepts the module.
//! - `structured_roles_wellformed`: every block is a role of at most one
//!   structured construct; `cond_br` ends only a loop's `prepare` block;
//!   `break` targets the merge of a loop, simple loop or switch; `continue`
//!   targets a loop's `update` or a simple loop's `body`.
//! - `spill_slots_tagged`: spill metadata sits only on `alloca`; every
//!   tagged slot holds plain data and is used only as the address of
//!   `load`/`store` or the base of `gep`.
//! - `reducible_cfg`: every retreating edge of the reachable CFG is a back
//!   edge (its target dominates its source).
//! - `no_spill_markers`: no function, argument, block or instruction carries
//!   spill metadata.
//! - `exact_typed_memory`: memory is moved at exactly its storage type, and
//!   storage types have a representation: device memory moves only plain
//!   data (a `bool` is one byte holding 0 or 1, the host layout of the
//!   interpreter and of LuisaCompute), and no buffer element is zero-sized.
//! - `positive_array_lengths`: every array type the module uses has a
//!   length of at least 1.
//! - `phi_first_in_block`: Phis precede all other instructions of a block.
//! - `no_self_referential_values`: no Phi reaches itself through a chain of
//!   Phi incomings alone (e.g. `%x = phi [%x, ^l], ...`).

use rustc_hash::FxHashSet;
use xir_spec::{Opcode, Trait};

use crate::analysis::{Cfg, DomTree};
use crate::diag::{Diagnostic, Rule};
use crate::ir::{Block, Function, Inst, Module, Type, TypeId, TypeTable, Value};
use crate::verify::{block_diag, inst_diag, type_name};

/// An invariant: the violations found in a module.
pub type Invariant = fn(&Module) -> Vec<Diagnostic>;

const INVARIANTS: &[(&str, Invariant)] = &[
    ("verified", crate::verify::verify_module),
    ("structured_roles_wellformed", structured_roles_wellformed),
    ("spill_slots_tagged", spill_slots_tagged),
    ("reducible_cfg", reducible_cfg),
    ("no_spill_markers", no_spill_markers),
    ("exact_typed_memory", exact_typed_memory),
    ("positive_array_lengths", positive_array_lengths),
    ("phi_first_in_block", phi_first_in_block),
    ("no_self_referential_values", no_self_referential_values),
];

pub fn lookup(name: &str) -> Option<Invariant> {
    INVARIANTS.iter().find(|i| i.0 == name).map(|i| i.1)
}

pub fn names() -> impl Iterator<Item = &'static str> {
    INVARIANTS.iter().map(|i| i.0)
}

/// `(block, terminator)` of every block ending in a structured construct.
fn constructs(f: &Function) -> impl Iterator<Item = (Block, Inst)> + '_ {
    f.blocks().iter().filter_map(|&b| f.terminator(b).filter(|&t| f.inst(t).has(Trait::Structured)).map(|t| (b, t)))
}

fn structured_roles_wellformed(m: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in &m.functions {
        let mut owner: Vec<Option<Inst>> = vec![None; f.block_capacity()];
        let mut prepares = FxHashSet::default();
        let mut break_targets = FxHashSet::default();
        let mut continue_targets = FxHashSet::default();
        for (_, t) in constructs(f) {
            let d = f.inst(t);
            let mut mine: Vec<Block> = d.blocks.to_vec();
            mine.sort();
            mine.dedup();
            for rb in mine {
                if let Some(prev) = owner[rb.index()].replace(t) {
                    let msg =
                        format!("{rb} is a role block of both {prev} (`{}`) and this `{}`", f.opcode(prev), d.opcode);
                    out.push(inst_diag(f, t, Rule::StructuredRolesWellformed, msg));
                }
            }
            match d.opcode {
                Opcode::Loop => {
                    prepares.extend(d.role("prepare"));
                    break_targets.extend(d.role("merge"));
                    continue_targets.extend(d.role("update"));
                }
                Opcode::SimpleLoop => {
                    break_targets.extend(d.role("merge"));
                    continue_targets.extend(d.role("body"));
                }
                Opcode::Switch => break_targets.extend(d.role("merge")),
                _ => {}
            }
        }
        for &b in f.blocks() {
            let Some(t) = f.terminator(b) else { continue };
            let d = f.inst(t);
            let target = d.blocks.first().copied();
            let bad = if d.has(Trait::StructuredJump) {
                let (targets, msg) = match d.opcode {
                    Opcode::Break => (&break_targets, "`break` must target the merge of a loop, simple loop or switch"),
                    _ => (&continue_targets, "`continue` must target a loop's update or a simple loop's body"),
                };
                (!target.is_some_and(|x| targets.contains(&x))).then(|| msg.to_string())
            } else if d.opcode == Opcode::CondBr && !prepares.contains(&b) {
                Some("`cond_br` may only end a loop's prepare block".to_string())
            } else {
                None
            };
            if let Some(msg) = bad {
                out.push(inst_diag(f, t, Rule::StructuredRolesWellformed, msg));
            }
        }
    }
    out
}

fn spill_slots_tagged(m: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in &m.functions {
        for (_, i) in f.all_insts() {
            let d = f.inst(i);
            let Some(kind) = f.inst_fields(i).spill else { continue };
            // Spill slots are function-local: an alloca, never a shared one.
            if !d.has(Trait::Alloca) || d.has(Trait::Shared) {
                out.push(inst_diag(
                    f,
                    i,
                    Rule::SpillSlotsTagged,
                    format!("spill metadata `{}` on `{}`, not on an alloca", kind.name(), d.opcode),
                ));
                continue;
            }
            if !m.types.is_data(d.ty) {
                out.push(inst_diag(
                    f,
                    i,
                    Rule::SpillSlotsTagged,
                    format!("spill slot of non-data type `{}`", type_name(&m.types, d.ty)),
                ));
            }
            for u in f.uses(Value::Inst(i)) {
                let ud = f.inst(u.user);
                let ok = u.index == 0 && matches!(ud.opcode, Opcode::Load | Opcode::Store | Opcode::Gep);
                if !ok {
                    let msg = format!("spill slot {i} is used as operand {} of `{}`", u.index, ud.opcode);
                    out.push(inst_diag(f, u.user, Rule::SpillSlotsTagged, msg));
                }
            }
        }
    }
    out
}

fn reducible_cfg(m: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in m.functions.iter().filter(|f| !f.is_external()) {
        let cfg = Cfg::compute(f);
        let dom = DomTree::from_cfg(&cfg);
        for &b in &cfg.rpo {
            for &s in cfg.succs(b) {
                if cfg.rpo_index[s.index()] <= cfg.rpo_index[b.index()] && !dom.dominates(s, b) {
                    let msg =
                        format!("edge {b} -> {s} enters a cycle at a block that does not dominate it (irreducible)");
                    out.push(block_diag(f, b, Rule::ReducibleCfg, msg));
                }
            }
        }
    }
    out
}

fn no_spill_markers(m: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in &m.functions {
        let fail = |what: String| {
            Diagnostic::error(Rule::NoSpillMarkers, format!("{what} still carries reg2mem spill metadata"))
        };
        if f.md.spill.is_some() {
            out.push(fail("the function".into()).in_function(&f.name));
        }
        for (k, a) in f.args.iter().enumerate() {
            if a.md.spill.is_some() {
                out.push(fail(format!("argument {k}")).in_function(&f.name));
            }
        }
        for &b in f.blocks() {
            if f.block_md(b).spill.is_some() {
                out.push(block_diag(
                    f,
                    b,
                    Rule::NoSpillMarkers,
                    format!("block {b} still carries reg2mem spill metadata"),
                ));
            }
            for &i in f.block(b).insts() {
                if let Some(k) = f.inst_fields(i).spill {
                    out.push(inst_diag(
                        f,
                        i,
                        Rule::NoSpillMarkers,
                        format!("`{}` still carries spill metadata `{}`", f.opcode(i), k.name()),
                    ));
                }
            }
        }
    }
    out
}

fn exact_typed_memory(m: &Module) -> Vec<Diagnostic> {
    let t = &m.types;
    let mut out = Vec::new();
    for f in &m.functions {
        for (_, i) in f.all_insts() {
            let d = f.inst(i);
            let ty = |k: usize| f.value_type(m, d.operands[k]);
            let mut fail = |msg: String| out.push(inst_diag(f, i, Rule::ExactTypedMemory, msg));
            // (the value moved, the storage type it must equal if known)
            let (moved, storage) = match d.opcode {
                Opcode::Load => (d.ty, Some(ty(0))),
                Opcode::Store => (ty(1), Some(ty(0))),
                Opcode::BufferRead | Opcode::BufferVolatileRead => (d.ty, Some(buffer_elem(t, ty(0)))),
                Opcode::BufferWrite | Opcode::BufferVolatileWrite => (ty(2), Some(buffer_elem(t, ty(0)))),
                // The part's type is the value's by the verifier (`buffer_write_part_path`).
                Opcode::BufferWritePart => (ty(2), None),
                Opcode::ByteBufferRead | Opcode::BindlessBufferRead | Opcode::BindlessByteBufferRead => (d.ty, None),
                Opcode::DeviceAddressRead => (d.ty, None),
                Opcode::ByteBufferWrite => (ty(2), None),
                Opcode::BindlessBufferWrite => (ty(3), None),
                Opcode::DeviceAddressWrite => (ty(1), None),
                _ => continue,
            };
            if let Some(s) = storage {
                if s != moved {
                    fail(format!("moves `{}` through storage of type `{}`", type_name(t, moved), type_name(t, s)));
                }
            }
            let device = !matches!(d.opcode, Opcode::Load | Opcode::Store);
            if device && !t.is_data(moved) {
                fail(format!("`{}` has no device-memory representation", type_name(t, moved)));
            }
        }
    }
    for (ty, (k, at)) in crate::dialect::used_types(m) {
        if let Type::Buffer(e) = t.get(ty) {
            let f = &m.functions[k];
            if t.size_align(*e).0 == 0 {
                let msg = format!(
                    "buffer type `{}` has a zero-sized element (array stride must be positive)",
                    type_name(t, ty)
                );
                out.push(match at {
                    Some(i) => inst_diag(f, i, Rule::ExactTypedMemory, msg),
                    None => Diagnostic::error(Rule::ExactTypedMemory, msg).in_function(&f.name).with_span(f.span),
                });
            }
        }
    }
    out
}

fn buffer_elem(t: &TypeTable, ty: TypeId) -> TypeId {
    match t.get(ty) {
        Type::Buffer(e) => *e,
        _ => ty,
    }
}

fn positive_array_lengths(m: &Module) -> Vec<Diagnostic> {
    let t = &m.types;
    let mut out = Vec::new();
    for (ty, (k, at)) in crate::dialect::used_types(m) {
        if matches!(t.get(ty), Type::Array { len: 0, .. }) {
            let f = &m.functions[k];
            let msg = format!("array type `{}` has length 0", type_name(t, ty));
            out.push(match at {
                Some(i) => inst_diag(f, i, Rule::PositiveArrayLengths, msg),
                None => Diagnostic::error(Rule::PositiveArrayLengths, msg).in_function(&f.name).with_span(f.span),
            });
        }
    }
    out
}

fn phi_first_in_block(m: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in &m.functions {
        for &b in f.blocks() {
            let insts = f.block(b).insts();
            if let Some(first_other) = insts.iter().position(|&i| f.opcode(i) != Opcode::Phi) {
                for &i in &insts[first_other..] {
                    if f.opcode(i) == Opcode::Phi {
                        out.push(inst_diag(
                            f,
                            i,
                            Rule::PhiFirstInBlock,
                            format!("Phi after a non-Phi instruction in {b}"),
                        ));
                    }
                }
            }
        }
    }
    out
}

fn no_self_referential_values(m: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in &m.functions {
        for (_, i) in f.all_insts() {
            if f.opcode(i) != Opcode::Phi {
                continue;
            }
            // Depth-first through Phi incomings only.
            let mut seen = FxHashSet::default();
            let mut stack: Vec<Inst> = phi_inputs(f, i).collect();
            while let Some(p) = stack.pop() {
                if p == i {
                    out.push(inst_diag(
                        f,
                        i,
                        Rule::NoSelfReferentialValues,
                        format!("Phi {i} refers to itself through Phi incomings"),
                    ));
                    break;
                }
                if seen.insert(p) {
                    stack.extend(phi_inputs(f, p));
                }
            }
        }
    }
    out
}

/// The Phi instructions among the incomings of Phi `i`.
fn phi_inputs(f: &Function, i: Inst) -> impl Iterator<Item = Inst> + '_ {
    f.inst(i).operands.iter().filter_map(|v| v.as_inst()).filter(|&p| f.opcode(p) == Opcode::Phi)
}
