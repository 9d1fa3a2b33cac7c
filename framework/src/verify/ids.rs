//! Entity-validity checks that run before anything indexes the IR (naga's
//! handle validation): type members, constants, instruction operands, block
//! operands and result types all refer to existing entities; and the use
//! lists agree with the operands.

use super::{inst_diag, type_name, types};
use crate::diag::{Diagnostic, Rule};
use crate::ir::{ConstValue, Function, Inst, Module, Type, TypeId, TypeTable, Value};

/// Member ids of every type, then the kind's `rules`. False if a member id is
/// out of range (nothing else may index through it then).
pub(super) fn check_types(m: &Module, diags: &mut Vec<Diagnostic>) -> bool {
    let t = &m.types;
    let mut ok = true;
    for (id, ty) in t.iter() {
        for member in members(ty) {
            if !t.contains(member) {
                ok = false;
                diags.push(Diagnostic::error(Rule::TypeIds, format!("type {id} refers to missing type {member}")));
            } else if member >= id {
                // Interning defines members first; a later member could close a cycle.
                ok = false;
                diags.push(Diagnostic::error(
                    Rule::TypeIds,
                    format!("type {id} refers to {member}, which is not defined before it"),
                ));
            }
        }
    }
    if !ok {
        return false;
    }
    for (id, _) in t.iter() {
        let kind = t.kind_name(id);
        let Some(spec) = xir_spec::spec().type_kind(kind) else {
            diags.push(Diagnostic::error(Rule::TypeIds, format!("type {id} has a kind unknown to the spec ({kind})")));
            continue;
        };
        for rule in spec.rules.iter() {
            match types::lookup(rule) {
                Some(f) => {
                    if let Err(msg) = f(t, id) {
                        diags.push(Diagnostic::error(
                            Rule::named(&format!("type:{rule}")),
                            format!("type `{}`: {msg}", type_name(t, id)),
                        ));
                    }
                }
                None => diags.push(Diagnostic::error(Rule::Spec, format!("type rule `{rule}` has no implementation"))),
            }
        }
    }
    true
}

/// The type ids a type refers to.
pub fn members(ty: &Type) -> Vec<TypeId> {
    match ty {
        Type::Vector { elem, .. }
        | Type::Matrix { elem, .. }
        | Type::Array { elem, .. }
        | Type::Buffer(elem)
        | Type::Texture { elem, .. } => vec![*elem],
        Type::Struct { fields, .. } => fields.clone(),
        _ => Vec::new(),
    }
}

/// The member type of each slot of an aggregate constant: an array's are
/// all its element type (not spelled out: an array may have millions).
enum Slots {
    Same(TypeId, usize),
    Each(Vec<TypeId>),
}

impl Slots {
    fn len(&self) -> usize {
        match self {
            Slots::Same(_, n) => *n,
            Slots::Each(v) => v.len(),
        }
    }
    fn get(&self, k: usize) -> TypeId {
        match self {
            Slots::Same(t, _) => *t,
            Slots::Each(v) => v[k],
        }
    }
}

fn slot_types(t: &TypeTable, ty: TypeId) -> Option<Slots> {
    Some(match t.get(ty) {
        Type::Vector { elem, lanes } => Slots::Same(*elem, *lanes as usize),
        Type::Matrix { elem, dim } => Slots::Same(t.lookup(&Type::Vector { elem: *elem, lanes: *dim })?, *dim as usize),
        Type::Array { elem, len } => Slots::Same(*elem, usize::try_from(*len).ok()?),
        Type::Struct { fields, .. } => Slots::Each(fields.clone()),
        _ => return None,
    })
}

/// The constants added since the last verification that found all well
/// formed (`ConstTable`'s watermark); all of them when it finds none wrong.
pub(super) fn check_consts(m: &Module, diags: &mut Vec<Diagnostic>) {
    let t = &m.types;
    let before = diags.len();
    for (c, data) in m.consts.iter().skip(m.consts.verified_len()) {
        if !t.contains(data.ty) {
            diags.push(Diagnostic::error(Rule::ConstIds, format!("constant {c} has missing type {}", data.ty)));
            continue;
        }
        let name = type_name(t, data.ty);
        match &data.value {
            ConstValue::Scalar(bits) => {
                if !t.is_scalar(data.ty) {
                    diags.push(Diagnostic::error(Rule::ConstShape, format!("scalar constant {c} has type `{name}`")));
                    continue;
                }
                let w = if t.is_bool(data.ty) { 1 } else { t.scalar_bits(data.ty) };
                if w < 64 && bits >> w != 0 {
                    diags.push(Diagnostic::error(
                        Rule::ConstShape,
                        format!("constant {c} has bits {bits:#x} that do not fit `{name}`"),
                    ));
                }
            }
            ConstValue::Composite(items) => {
                let Some(slots) = slot_types(t, data.ty) else {
                    diags
                        .push(Diagnostic::error(Rule::ConstShape, format!("composite constant {c} has type `{name}`")));
                    continue;
                };
                if slots.len() != items.len() {
                    diags.push(Diagnostic::error(
                        Rule::ConstShape,
                        format!("constant {c} of type `{name}` needs {} members, has {}", slots.len(), items.len()),
                    ));
                    continue;
                }
                for (k, &item) in items.iter().enumerate() {
                    let slot = slots.get(k);
                    if !m.consts.contains(item) {
                        diags.push(Diagnostic::error(Rule::ConstIds, format!("constant {c} refers to missing {item}")));
                    } else if item.index() >= c.index() {
                        diags.push(Diagnostic::error(
                            Rule::ConstIds,
                            format!("constant {c} refers to {item}, which is not defined before it"),
                        ));
                    } else if m.consts.get(item).ty != slot {
                        diags.push(Diagnostic::error(
                            Rule::ConstShape,
                            format!(
                                "member {k} of constant {c} has type `{}`, expected `{}`",
                                type_name(t, m.consts.get(item).ty),
                                type_name(t, slot)
                            ),
                        ));
                    }
                }
            }
        }
    }
    if diags.len() == before {
        m.consts.set_verified(m.consts.len());
    }
}

/// Whether `v` names an existing entity (reported otherwise).
fn value_ok(m: &Module, f: &Function, i: Inst, k: usize, v: Value, diags: &mut Vec<Diagnostic>) -> bool {
    let problem = match v {
        Value::Inst(d) if !f.inst_exists(d) => Some(format!("operand {k} refers to missing instruction {d}")),
        Value::Inst(d) if !f.is_live(d) => Some(format!("operand {k} uses {d}, which is not placed in any block")),
        Value::Inst(d) if f.inst(d).ty == TypeTable::VOID => {
            Some(format!("operand {k} uses {d} (`{}`), which has no result", f.opcode(d)))
        }
        Value::Arg(a) if a as usize >= f.args.len() => Some(format!("operand {k} refers to missing argument {a}")),
        Value::Const(c) if !m.consts.contains(c) => Some(format!("operand {k} refers to missing {c}")),
        Value::Undef(t) if !m.types.contains(t) => Some(format!("operand {k} is undef of missing type {t}")),
        Value::Undef(TypeTable::VOID) => Some(format!("operand {k} is undef of type `void`")),
        Value::Func(g) if g.index() >= m.functions.len() => Some(format!("operand {k} refers to missing {g}")),
        Value::Reg(r) if m.register_type(r) == TypeTable::VOID => Some(format!(
            "operand {k} reads `${}`, whose type `{}` is not interned in the module",
            r.name(),
            xir_spec::spec().register(r).ty
        )),
        _ => None,
    };
    match problem {
        Some(msg) => {
            diags.push(inst_diag(f, i, Rule::Ids, msg));
            false
        }
        None => true,
    }
}

/// Operands, block operands and result type of `i` refer to existing entities.
pub(super) fn check_inst_ids(m: &Module, f: &Function, i: Inst, diags: &mut Vec<Diagnostic>) -> bool {
    let d = f.inst(i);
    let mut ok = true;
    if !m.types.contains(d.ty) {
        diags.push(inst_diag(f, i, Rule::Ids, format!("result type {} does not exist", d.ty)));
        ok = false;
    }
    for (k, &v) in d.operands.iter().enumerate() {
        ok &= value_ok(m, f, i, k, v, diags);
    }
    for (k, &b) in d.blocks.iter().enumerate() {
        if !f.block_exists(b) {
            diags.push(inst_diag(f, i, Rule::Ids, format!("block operand {k} refers to missing block {b}")));
            ok = false;
        }
    }
    ok
}

/// The recorded use lists equal the operand slots of placed instructions:
/// every recorded use names a distinct placed slot holding the value, and
/// each value has as many recorded uses as slots hold it. Linear time.
pub(super) fn check_use_lists(f: &Function, diags: &mut Vec<Diagnostic>) {
    let cap = f.inst_capacity();
    let mut listed = vec![false; cap];
    // Slot numbering: `offset[i] + k` is operand `k` of instruction `i`.
    let mut offset = vec![0usize; cap + 1];
    for (_, i) in f.all_insts() {
        listed[i.index()] = true;
    }
    for i in 0..cap {
        let n = if listed[i] { f.inst(Inst::new(i)).operands.len() } else { 0 };
        offset[i + 1] = offset[i] + n;
    }
    let mut marked = vec![false; offset[cap]];
    let (mut want_inst, mut want_arg) = (vec![0usize; cap], vec![0usize; f.args.len()]);
    for (_, i) in f.all_insts() {
        for &v in &f.inst(i).operands {
            match v {
                Value::Inst(d) => want_inst[d.index()] += 1,
                Value::Arg(a) => want_arg[a as usize] += 1,
                _ => {}
            }
        }
    }
    let locals = (0..f.args.len()).map(|a| (Value::Arg(a as u32), want_arg[a]));
    for (v, want) in locals.chain((0..cap).map(|i| (Value::Inst(Inst::new(i)), want_inst[i]))) {
        let have = f.uses(v);
        let bad_use = have.iter().find(|u| {
            let slot_ok = listed.get(u.user.index()).copied().unwrap_or(false)
                && f.inst(u.user).operands.get(u.index as usize) == Some(&v);
            !slot_ok || std::mem::replace(&mut marked[offset[u.user.index()] + u.index as usize], true)
        });
        if let Some(u) = bad_use {
            let msg = format!("use list of {v:?} records operand {} of {}, which does not hold it", u.index, u.user);
            diags.push(inst_diag(f, u.user, Rule::UseLists, msg));
        } else if have.len() != want {
            let user = f.all_insts().map(|(_, i)| i).find(|&i| f.inst(i).operands.contains(&v));
            let at = user.unwrap_or_else(|| v.as_inst().expect("arguments have users when counts differ"));
            let msg = format!("use list of {v:?} records {} uses, operands hold {want}", have.len());
            diags.push(inst_diag(f, at, Rule::UseLists, msg));
        }
    }
}
