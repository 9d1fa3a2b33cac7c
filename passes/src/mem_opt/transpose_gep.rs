//! `transpose_gep`: turn element accesses of a local aggregate slot into
//! whole-slot accesses plus `extract` / `insert`, so that `mem2reg` (which
//! promotes only slots used by plain loads and stores) can promote it:
//!
//! ```text
//! %e = load (gep %a, idx...)        =>  %w = load %a
//!                                       %e = extract %w, idx...
//! store (gep %a, idx...), %v        =>  %w = load %a
//!                                       %n = insert %w, %v, idx...
//!                                       store %a, %n
//! ```
//!
//! Gep chains are traced first (`trace_gep`), so every address is one gep
//! from its root. A slot is transposed only when it is a thread-private
//! `alloca` (a read-modify-write of the whole of a shared slot or of a
//! caller's object would race with other threads), not annotated
//! `// no_promote`, and every use is a load, a store's address, or a gep
//! used only that way — so afterwards it is promotable. Geps left unused are
//! deleted.
//!
//! Reading a slot nothing was stored to is an error (the interpreter's rule:
//! a load must see some initialized part), so a slot whose element stores
//! are transposed is first zero-initialized right after its `alloca`; the
//! read-modify-write of its first element store then reads defined memory.
//! Only slots in the entry block are eligible for that (it runs once per
//! call; an `alloca` in a loop keeps its contents across iterations, which a
//! store after it would clobber); slots elsewhere with element stores stay.
//!
//! Dynamic indices carry over to `extract` / `insert`, which check bounds
//! like `gep` does. Option `dynamic_indices: false` leaves slots indexed at
//! run time in memory: the SPIR-V backend walks a dynamically indexed
//! aggregate value through a temporary variable, which can cost more than
//! the memory access it replaces. Measured on the corpus (spirv-legalize +
//! O2, SPIR-V instructions): transposing everything took `bytecode_vm` from
//! 229 to 285 and `matmul` from 163 to 159; with `dynamic_indices: false`
//! nothing in the corpus qualifies. The default keeps the reference's
//! behaviour (transpose everything).
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`,
//!   `lexical_scopes`.

use serde::Deserialize;
use smallvec::SmallVec;
use xir::pass::{OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{FuncId, Function, Inst, InstData, Module, Opcode, TypeTable, Value};

use crate::memory::util::{insert_after, insert_before, zero_const, NO_PROMOTE};

const INFO: PassInfo = PassInfo {
    name: "transpose_gep",
    doc: "Rewrite loads/stores through geps of local slots as whole-slot accesses with extract/insert",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["gep"],
    preserves: super::CFG_ANALYSES,
};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    pub dynamic_indices: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { dynamic_indices: true }
    }
}

const OPTIONS: &[OptionDoc] = &[OptionDoc {
    name: "dynamic_indices",
    ty: "bool",
    default: "true",
    doc: "Also transpose slots accessed with run-time indices (SPIR-V then walks the value through a temporary)",
}];

pub struct TransposeGep {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(TransposeGep { opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for TransposeGep {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut traced, mut loads, mut stores, mut zeroed) = (0, 0, 0, 0);
        for fid in crate::memory::util::defined_functions(module) {
            traced += super::trace_gep::trace_function(module.func_mut(fid)).0;
            let (l, s, z) = transpose_function(module, fid, &self.opts);
            loads += l;
            stores += s;
            zeroed += z;
        }
        let mut out = PassOutcome::changed(traced + loads + stores > 0);
        out.stats.push(("traced_geps".into(), traced.to_string()));
        out.stats.push(("transposed_loads".into(), loads.to_string()));
        out.stats.push(("transposed_stores".into(), stores.to_string()));
        out.stats.push(("zero_initialized".into(), zeroed.to_string()));
        Ok(out)
    }
}

/// The geps of `slot` if every use of the slot is a load, a store's address
/// or such a gep (used only as a load or store address).
fn transposable_geps(m: &Module, fid: FuncId, slot: Inst, o: &Options) -> Option<Vec<Inst>> {
    let f = m.func(fid);
    let d = f.inst(slot);
    if d.opcode != Opcode::Alloca || f.inst_md(slot).comments.iter().any(|c| c.trim() == NO_PROMOTE) {
        return None;
    }
    let in_entry = f.body().is_some_and(|e| f.parent(slot) == Some(e));
    let plain = |u: &xir::Use| {
        let ud = f.inst(u.user);
        u.index == 0 && matches!(ud.opcode, Opcode::Load | Opcode::Store)
    };
    let mut geps = Vec::new();
    for u in f.uses(Value::Inst(slot)) {
        if plain(u) {
            continue;
        }
        if f.opcode(u.user) != Opcode::Gep || u.index != 0 {
            return None;
        }
        if !o.dynamic_indices && f.inst(u.user).operands[1..].iter().any(|&v| m.const_int_value(v).is_none()) {
            return None;
        }
        if !f.uses(Value::Inst(u.user)).iter().all(plain) {
            return None;
        }
        let stores = f.uses(Value::Inst(u.user)).iter().any(|w| f.opcode(w.user) == Opcode::Store);
        if stores && !in_entry {
            return None;
        }
        geps.push(u.user);
    }
    (!geps.is_empty()).then_some(geps)
}

/// Returns (loads transposed, stores transposed, slots zero-initialized).
fn transpose_function(m: &mut Module, fid: FuncId, o: &Options) -> (usize, usize, usize) {
    let slots: Vec<Inst> = {
        let f = m.func(fid);
        f.select_in_layout_order(|op| op == Opcode::Alloca)
    };
    let (mut loads, mut stores, mut zeroed) = (0, 0, 0);
    for slot in slots {
        let Some(geps) = transposable_geps(m, fid, slot, o) else { continue };
        let slot_ty = m.func(fid).inst(slot).ty;
        let has_store = {
            let f = m.func(fid);
            geps.iter().any(|&g| f.uses(Value::Inst(g)).iter().any(|u| f.opcode(u.user) == Opcode::Store))
        };
        if has_store {
            let Some(zero) = zero_const(m, slot_ty) else { continue };
            let f = m.func_mut(fid);
            let mut z = InstData::new(Opcode::Store, TypeTable::VOID);
            z.operands.push(Value::Inst(slot));
            z.operands.push(zero);
            let z = f.create_inst(z);
            insert_after(f, slot, z);
            zeroed += 1;
        }
        let f = m.func_mut(fid);
        for g in geps {
            let indices: SmallVec<[Value; 3]> = f.inst(g).operands[1..].iter().copied().collect();
            let elem_ty = f.inst(g).ty;
            for u in f.uses(Value::Inst(g)).to_vec() {
                let access = u.user;
                let whole = whole_load(f, slot, slot_ty, access);
                if f.opcode(access) == Opcode::Load {
                    let mut e = InstData::new(Opcode::Extract, elem_ty);
                    e.operands.push(whole);
                    e.operands.extend(indices.iter().copied());
                    e.md = f.inst_md(access).to_metadata();
                    let e = f.create_inst(e);
                    insert_before(f, access, e);
                    f.replace_all_uses(Value::Inst(access), Value::Inst(e));
                    f.remove_inst(access);
                    loads += 1;
                } else {
                    let v = f.inst(access).operands[1];
                    let mut n = InstData::new(Opcode::Insert, slot_ty);
                    n.operands.push(whole);
                    n.operands.push(v);
                    n.operands.extend(indices.iter().copied());
                    let n = f.create_inst(n);
                    insert_before(f, access, n);
                    f.set_operands(access, SmallVec::from_slice(&[Value::Inst(slot), Value::Inst(n)]));
                    stores += 1;
                }
            }
            if !f.has_uses(Value::Inst(g)) {
                f.remove_inst(g);
            }
        }
    }
    (loads, stores, zeroed)
}

/// `load slot` placed before `before`.
fn whole_load(f: &mut Function, slot: Inst, ty: xir::TypeId, before: Inst) -> Value {
    let mut d = InstData::new(Opcode::Load, ty);
    d.operands.push(Value::Inst(slot));
    let l = f.create_inst(d);
    insert_before(f, before, l);
    Value::Inst(l)
}
