//! Dialects resolved from `dialects.ron`: each flattened to the exact set of
//! opcodes and type kinds it allows and the invariants that hold in it.
//!
//! The pipeline checker relies on one relation: IR in dialect `a` may be
//! handed to a pass consuming `b` when `a` refines `b` (`a.refines(b)`):
//! every opcode and type `a` allows, `b` allows too, and every invariant `b`
//! demands holds in `a`.
//!
//! `build.rs` shares this module (and `check.rs`) to resolve the built-in
//! dialects when the crate is built, so nothing here names the [`Opcode`]
//! enum the build script generates; what does is in `dialect_ops.rs`.
//!
//! [`Opcode`]: crate::Opcode

use std::{borrow::Cow, collections::BTreeSet};

use crate::{
    schema::{DialectSpec, Str},
    OpData, SpecError, Trait, TypeKindSpec,
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
    /// The set's words, lowest positions first.
    pub fn words(&self) -> &[u64] {
        &self.0
    }
}

/// A sorted set of names (a dialect's type kinds or invariants): borrowed
/// from the tables `build.rs` compiles in for the built-in spec, owned for
/// a spec read from files.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct NameSet(Cow<'static, [Str]>);

impl NameSet {
    /// Names already sorted, without repeats (`build.rs` writes them so).
    pub const fn compiled(sorted: &'static [Str]) -> Self {
        NameSet(Cow::Borrowed(sorted))
    }
    pub fn contains(&self, name: &str) -> bool {
        self.0.binary_search_by(|n| (**n).cmp(name)).is_ok()
    }
    /// The names in order, as the spec holds them (borrowed from the
    /// compiled-in tables for the built-in spec, so a clone is free).
    pub fn names(&self) -> &[Str] {
        &self.0
    }
    /// The names in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.iter().map(|n| &**n)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn is_subset(&self, other: &NameSet) -> bool {
        self.iter().all(|n| other.contains(n))
    }
    /// The names of `self` that `other` lacks, in order.
    pub fn difference<'a>(&'a self, other: &'a NameSet) -> impl Iterator<Item = &'a str> + 'a {
        self.iter().filter(|n| !other.contains(n))
    }
}

impl FromIterator<Str> for NameSet {
    fn from_iter<I: IntoIterator<Item = Str>>(names: I) -> Self {
        let set: BTreeSet<Str> = names.into_iter().collect();
        NameSet(set.into_iter().collect())
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
    pub types: NameSet,
    /// Every invariant that holds, inherited ones included.
    pub invariants: NameSet,
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
}

/// A resolved dialect as `build.rs` writes it into the crate, so the
/// built-in spec is resolved once, when the crate is built, and not at
/// every start-up: the sets as bit words (positions in the opcode file, the
/// type file, and the order of every invariant any dialect names, sorted) and the name sets.
#[derive(Clone, Debug)]
pub struct CompiledDialect {
    pub parent: Option<usize>,
    pub ops: &'static [u64],
    pub type_bits: &'static [u64],
    pub invariant_bits: &'static [u64],
    pub types: NameSet,
    pub invariants: NameSet,
}

impl Dialect {
    /// The words `build.rs` writes: opcodes, type kinds, invariants.
    pub fn compiled_words(&self) -> [&[u64]; 3] {
        [self.ops.words(), self.type_bits.0.words(), self.invariant_bits.0.words()]
    }

    /// The dialect `build.rs` resolved from its entry `spec`.
    pub fn from_compiled(id: DialectId, spec: &DialectSpec, c: &CompiledDialect) -> Dialect {
        Dialect {
            id,
            name: spec.name.clone(),
            doc: spec.doc.clone(),
            parent: c.parent.map(DialectId),
            ops: OpSet(c.ops.to_vec()),
            types: c.types.clone(),
            invariants: c.invariants.clone(),
            spec: spec.clone(),
            type_bits: IndexSet(OpSet(c.type_bits.to_vec())),
            invariant_bits: IndexSet(OpSet(c.invariant_bits.to_vec())),
        }
    }
}

/// Every invariant any dialect names, sorted and without repeats: the
/// positions of each dialect's invariant bits.
pub fn invariant_names(specs: &[DialectSpec]) -> Vec<&str> {
    let mut names: Vec<&str> = specs.iter().flat_map(|d| d.invariants.iter().map(|i| &**i)).collect();
    names.sort_unstable();
    names.dedup();
    names
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
    let invariant_names = invariant_names(&specs);
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
    let mut invariants: BTreeSet<Str> = parent.map(|p| p.invariants.0.iter().cloned().collect()).unwrap_or_default();
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
    let type_set: NameSet = names
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
        invariants: invariants.into_iter().collect(),
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
