//! The spec's structural check: duplicate names, unknown traits, and the
//! dialects resolved (unknown names, `extends` cycles), each error located
//! in its file.
//!
//! `build.rs` shares this module: the built-in spec is checked and its
//! dialects resolved when the crate is built (a broken spec file fails the
//! build with the file, line and column), and the result is compiled in, so
//! no process checks it again at start-up. A spec read from files at run
//! time ([`crate::Spec::load`]) goes through the same check.

use crate::{
    dialect::{self, Dialect},
    schema::{DialectSpec, OpcodeSpec, RegisterSpec, TypeKindSpec},
    SpecError, Trait, TraitSet,
};

/// The texts of the four spec files, with the names used in diagnostics.
#[derive(Clone, Debug)]
pub struct SpecSources {
    pub types: (String, String),
    pub opcodes: (String, String),
    pub registers: (String, String),
    pub dialects: (String, String),
}

impl SpecSources {
    /// The spec compiled into this crate.
    pub fn builtin() -> Self {
        let f = |name: &str, text: &str| (format!("ir-spec/spec/{name}"), text.to_string());
        SpecSources {
            types: f("types.ron", include_str!("../spec/types.ron")),
            opcodes: f("opcodes.ron", include_str!("../spec/opcodes.ron")),
            registers: f("registers.ron", include_str!("../spec/registers.ron")),
            dialects: f("dialects.ron", include_str!("../spec/dialects.ron")),
        }
    }
}

/// One opcode entry with its traits resolved, not bound to the compiled
/// [`Opcode`](crate::Opcode) enum (an entry of a
/// [`SpecData`](crate::SpecData)).
#[derive(Clone, Debug)]
pub struct OpData {
    pub spec: OpcodeSpec,
    pub traits: TraitSet,
}

impl OpData {
    pub fn has(&self, t: Trait) -> bool {
        self.traits.contains(t)
    }
}

/// The entries of a spec, checked and resolved by name.
pub struct Checked {
    pub types: Vec<TypeKindSpec>,
    pub ops: Vec<OpData>,
    pub registers: Vec<RegisterSpec>,
    pub dialects: Vec<Dialect>,
}

/// What binding a spec to a build's compiled enums adds to the check: each
/// opcode as it is read (before its traits, so the first error in file
/// order is the one reported), then the lists as a whole. A spec checked by
/// name only binds nothing (`()`).
pub trait Bind {
    fn opcode(&self, _spec: &OpcodeSpec, _sources: &SpecSources) -> Result<(), SpecError> {
        Ok(())
    }
    fn lists(&self, _ops: &[OpData], _registers: &[RegisterSpec], _sources: &SpecSources) -> Result<(), SpecError> {
        Ok(())
    }
}

impl Bind for () {}

/// Check the entries of the four files and resolve traits and dialects.
pub fn check(
    types: Vec<TypeKindSpec>,
    op_specs: Vec<OpcodeSpec>,
    registers: Vec<RegisterSpec>,
    dialect_specs: Vec<DialectSpec>,
    sources: &SpecSources,
    bind: &impl Bind,
) -> Result<Checked, SpecError> {
    no_duplicates(&sources.types, types.iter().map(|t| &*t.name), "type kind")?;
    no_duplicates(&sources.opcodes, op_specs.iter().map(|o| &*o.name), "opcode")?;
    no_duplicates(&sources.registers, registers.iter().map(|r| &*r.name), "special register")?;
    no_duplicates(&sources.dialects, dialect_specs.iter().map(|d| &*d.name), "dialect")?;

    let mut ops = Vec::with_capacity(op_specs.len());
    for spec in op_specs {
        bind.opcode(&spec, sources)?;
        let mut traits = TraitSet::default();
        for t in spec.traits.iter() {
            match Trait::from_name(t) {
                Some(t) => traits.insert(t),
                None => {
                    return Err(SpecError::at_in_entry(
                        &sources.opcodes,
                        &spec.name,
                        t,
                        format!("unknown trait `{t}` on opcode `{}`", spec.name),
                    ))
                }
            }
        }
        ops.push(OpData { spec, traits });
    }
    bind.lists(&ops, &registers, sources)?;
    let dialects = dialect::resolve(&sources.dialects, dialect_specs, &ops, &types)?;
    Ok(Checked { types, ops, registers, dialects })
}

/// The first entry (in file order) whose name an earlier entry has.
fn no_duplicates<'a>(
    src: &(String, String),
    names: impl Iterator<Item = &'a str>,
    what: &str,
) -> Result<(), SpecError> {
    let mut sorted: Vec<(&str, usize)> = names.zip(0..).collect();
    sorted.sort_unstable();
    let first_repeat = sorted.windows(2).filter(|w| w[0].0 == w[1].0).map(|w| (w[1].1, w[1].0)).min();
    match first_repeat {
        Some((_, n)) => Err(SpecError::nth(src, n, 1, format!("duplicate {what} `{n}`"))),
        None => Ok(()),
    }
}
