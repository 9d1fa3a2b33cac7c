//! Dialects resolved from `dialects.ron`: each flattened to the exact set of
//! opcodes and type kinds it allows and the invariants that hold in it.
//!
//! The pipeline checker relies on one relation: IR in dialect `a` may be
//! handed to a pass consuming `b` when `a` refines `b` (`a.refines(b)`):
//! every opcode and type `a` allows, `b` allows too, and every invariant `b`
//! demands holds in `a`.

use std::collections::BTreeSet;

use crate::{
    schema::{DialectSpec, Str},
    OpData, Opcode, SpecError, Trait, TypeKindSpec,
};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DialectId(pub usize);

/// A set of opcodes, as a bit set indexed by position in the opcode file
/// (`Opcode::index` for a [`Spec`](crate::Spec), which checks the two agree;
/// the entry's position for a [`SpecData`](crate::SpecData)).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OpSet(Vec<u64>);

/// A set of small indices: a dialect's type kinds (positions in the type
/// file) and invariants (positions among every invariant name of the spec),
/// so that [`Dialect::refines`], asked for every step of every pipeline
/// loaded, compares words instead of walking sets of strings.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct IndexSet(OpSet);

impl OpSet {
    pub fn insert(&mut self, op: Opcode) {
        self.insert_index(op.index())
    }
    pub fn remove(&mut self, op: Opcode) {
        self.remove_index(op.index())
    }
    pub fn contains(&self, op: Opcode) -> bool {
        self.contains_index(op.index())
    }
    pub fn insert_index(&mut self, i: usize) {
        if self.0.len() <= i / 64 {
            self.0.resize(i / 64 + 1, 0);
        }
        self.0[i / 64] |= 1 << (i % 64);
    }
    pub fn remove_index(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }
    pub fn contains_index(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    /// The positions in the set, ascending.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.0.len() * 64).filter(|&i| self.contains_index(i))
    }
    pub fn is_subset(&self, other: &OpSet) -> bool {
        self.0.iter().enumerate().all(|(k, w)| w & !other.0.get(k).copied().unwrap_or(0) == 0)
    }
    pub fn iter(&self) -> impl Iterator<Item = Opcode> + '_ {
        Opcode::ALL.iter().copied().filter(|&op| self.contains(op))
    }
}

/// A resolved dialect.
#[derive(Clone, Debug)]
pub struct Dialect {
    pub id: DialectId,
    pub name: Str,
    pub doc: Str,
    pub parent: Option<DialectId>,
    pub ops: OpSet,
    pub types: BTreeSet<Str>,
    /// Every invariant that holds, inherited ones included.
    pub invariants: BTreeSet<Str>,
    /// As written in the file.
    pub spec: DialectSpec,
    /// `types` and `invariants` as index sets, for [`Dialect::refines`].
    type_bits: IndexSet,
    invariant_bits: IndexSet,
}

impl Dialect {
    /// Whether IR in `self` is acceptable where `other` is required.
    pub fn refines(&self, other: &Dialect) -> bool {
        self.ops.is_subset(&other.ops)
            && self.type_bits.0.is_subset(&other.type_bits.0)
            && other.invariant_bits.0.is_subset(&self.invariant_bits.0)
    }

    /// Why `self` does not refine `other`, as readable reasons.
    pub fn refinement_gaps(&self, other: &Dialect) -> Vec<String> {
        let mut gaps = Vec::new();
        let extra: Vec<_> = self.ops.iter().filter(|&op| !other.ops.contains(op)).map(|op| op.name()).collect();
        if !extra.is_empty() {
            gaps.push(format!("`{}` allows opcodes `{}` forbids: {}", self.name, other.name, extra.join(", ")));
        }
        let extra_types: Vec<_> = self.types.difference(&other.types).cloned().collect();
        if !extra_types.is_empty() {
            gaps.push(format!("`{}` allows types `{}` forbids: {}", self.name, other.name, extra_types.join(", ")));
        }
        let missing: Vec<_> = other.invariants.difference(&self.invariants).cloned().collect();
        if !missing.is_empty() {
            gaps.push(format!("`{}` requires invariants not established: {}", other.name, missing.join(", ")));
        }
        gaps
    }
}

pub(crate) fn resolve(
    src: &(String, String),
    specs: Vec<DialectSpec>,
    ops: &[OpData],
    types: &[TypeKindSpec],
) -> Result<Vec<Dialect>, SpecError> {
    // Parents first: order by depth, detecting unknown parents and cycles.
    let index_of = |name: &str| specs.iter().position(|d| d.name == name);
    for d in &specs {
        if let Some(p) = &d.extends {
            if index_of(p).is_none() {
                return Err(SpecError::at_in_entry(
                    src,
                    &d.name,
                    p,
                    format!("dialect `{}` extends unknown dialect `{p}`", d.name),
                ));
            }
        }
        let mut seen = vec![&*d.name];
        let mut cur = d;
        while let Some(p) = &cur.extends {
            if seen.contains(&&**p) {
                return Err(SpecError::at_in_entry(
                    src,
                    &d.name,
                    p,
                    format!("`extends` cycle: {} -> {p}", seen.join(" -> ")),
                ));
            }
            seen.push(p);
            cur = &specs[index_of(p).unwrap_or(0)];
        }
    }
    let mut invariant_names: Vec<&str> = specs.iter().flat_map(|d| d.invariants.iter().map(|i| &**i)).collect();
    invariant_names.sort_unstable();
    invariant_names.dedup();
    // The type kinds in name order, so each dialect's name set is built from
    // sorted input (`BTreeSet::from_iter` then only checks the order).
    let mut types_by_name: Vec<usize> = (0..types.len()).collect();
    types_by_name.sort_unstable_by(|&a, &b| types[a].name.cmp(&types[b].name));
    let names = Names { invariants: &invariant_names, types_by_name: &types_by_name };
    let mut out: Vec<Option<Dialect>> = vec![None; specs.len()];
    let mut remaining: Vec<usize> = (0..specs.len()).collect();
    while !remaining.is_empty() {
        let before = remaining.len();
        let mut next = Vec::new();
        for i in remaining {
            let d = &specs[i];
            let parent = match &d.extends {
                None => None,
                Some(p) => match index_of(p) {
                    Some(pi) if out[pi].is_some() => Some(pi),
                    _ => {
                        next.push(i);
                        continue;
                    }
                },
            };
            let base = parent.and_then(|p| out[p].as_ref());
            out[i] = Some(resolve_one(src, DialectId(i), d, base, ops, types, &names)?);
        }
        if next.len() == before {
            return Err(SpecError::whole(src, "unresolvable `extends` chain".into()));
        }
        remaining = next;
    }
    Ok(out.into_iter().map(|d| d.expect("every dialect resolved")).collect())
}

/// Orders of the spec's names that every dialect's sets are built from.
struct Names<'a> {
    /// Every invariant any dialect names, sorted: positions of the invariant
    /// index sets.
    invariants: &'a [&'a str],
    /// Positions in the type file, in name order.
    types_by_name: &'a [usize],
}

fn resolve_one(
    src: &(String, String),
    id: DialectId,
    d: &DialectSpec,
    parent: Option<&Dialect>,
    ops: &[OpData],
    types: &[TypeKindSpec],
    names: &Names,
) -> Result<Dialect, SpecError> {
    let mut op_set = parent.map(|p| p.ops.clone()).unwrap_or_default();
    let mut type_bits = parent.map(|p| p.type_bits.clone()).unwrap_or_default();
    let mut invariants = parent.map(|p| p.invariants.clone()).unwrap_or_default();
    for (names, add) in [(&d.allow_ops, true), (&d.remove_ops, false)] {
        for name in names.iter() {
            let selected = select_ops(name, ops).ok_or_else(|| {
                SpecError::at_in_entry(
                    src,
                    &d.name,
                    name,
                    format!("unknown opcode or group `{name}` in dialect `{}`", d.name),
                )
            })?;
            for op in selected {
                if add {
                    op_set.insert_index(op)
                } else {
                    op_set.remove_index(op)
                }
            }
        }
    }
    for (names, add) in [(&d.allow_types, true), (&d.remove_types, false)] {
        for name in names.iter() {
            let selected: Vec<usize> = if name == "@all" {
                (0..types.len()).collect()
            } else if let Some(class) = name.strip_prefix('@') {
                let v: Vec<usize> = (0..types.len()).filter(|&k| types[k].classes.iter().any(|c| c == class)).collect();
                if v.is_empty() {
                    return Err(SpecError::at_in_entry(src, &d.name, name, format!("unknown type class `{class}`")));
                }
                v
            } else if let Some(k) = types.iter().position(|t| &t.name == name) {
                vec![k]
            } else {
                return Err(SpecError::at_in_entry(
                    src,
                    &d.name,
                    name,
                    format!("unknown type kind `{name}` in dialect `{}`", d.name),
                ));
            };
            for k in selected {
                if add {
                    type_bits.0.insert_index(k);
                } else {
                    type_bits.0.remove_index(k);
                }
            }
        }
    }
    for inv in d.drop_invariants.iter() {
        if !invariants.remove(inv) {
            return Err(SpecError::at_in_entry(
                src,
                &d.name,
                inv,
                format!("dialect `{}` drops invariant `{inv}`, which its parent does not have", d.name),
            ));
        }
    }
    for inv in d.invariants.iter() {
        if !invariants.insert(inv.clone()) {
            return Err(SpecError::at_in_entry(
                src,
                &d.name,
                inv,
                format!("invariant `{inv}` is already inherited by dialect `{}`", d.name),
            ));
        }
    }
    let type_set: BTreeSet<Str> = names
        .types_by_name
        .iter()
        .filter(|&&k| type_bits.0.contains_index(k))
        .map(|&k| types[k].name.clone())
        .collect();
    let mut invariant_bits = IndexSet::default();
    for inv in &invariants {
        // Every invariant here is one of the spec's: the universe holds them all.
        if let Ok(k) = names.invariants.binary_search(&&**inv) {
            invariant_bits.0.insert_index(k);
        }
    }
    Ok(Dialect {
        id,
        name: d.name.clone(),
        doc: d.doc.clone(),
        parent: parent.map(|p| p.id),
        ops: op_set,
        types: type_set,
        invariants,
        spec: d.clone(),
        type_bits,
        invariant_bits,
    })
}

/// Positions of the opcodes named by a dialect entry: a name, `@all`,
/// `@<trait>` or `@class:<Class>`.
fn select_ops(name: &str, ops: &[OpData]) -> Option<Vec<usize>> {
    let positions = |keep: &dyn Fn(&OpData) -> bool| -> Vec<usize> {
        ops.iter().enumerate().filter(|(_, o)| keep(o)).map(|(i, _)| i).collect()
    };
    if name == "@all" {
        return Some((0..ops.len()).collect());
    }
    if let Some(class) = name.strip_prefix("@class:") {
        let v = positions(&|o| o.spec.class == class);
        return (!v.is_empty()).then_some(v);
    }
    if let Some(t) = name.strip_prefix('@') {
        let t = Trait::from_name(t)?;
        return Some(positions(&|o| o.traits.contains(t)));
    }
    ops.iter().position(|o| o.spec.name == name).map(|i| vec![i])
}
