//! `xir-spec`: the XIR instruction set, type kinds, special registers and
//! dialects, declared as data in `spec/*.ron`.
//!
//! This crate owns the data and its structural checks (unknown names,
//! duplicates, `extends` cycles), reported with `file:line:col`. The meaning
//! of each named rule (operand classes, result rules, constraints,
//! invariants) lives in the `xir` crate, which checks at start-up that every
//! name used here has an implementation.

mod dialect;
mod error;
mod rule;
pub mod schema;
mod traits;

pub use dialect::{Dialect, DialectId, OpSet};
pub use error::SpecError;
pub use schema::{DialectSpec, OpcodeSpec, OperandSpec, RegisterSpec, TypeKindSpec};
pub use traits::{Trait, TraitSet};

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

/// The spec files' entries as Rust (`build.rs`).
mod builtin {
    use std::borrow::Cow;

    use crate::schema::{DialectSpec, OpcodeSpec, OperandSpec, RegisterSpec, TypeKindSpec};
    include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
}

use std::sync::OnceLock;

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

/// One opcode with its traits resolved.
#[derive(Clone, Debug)]
pub struct OpInfo {
    pub opcode: Opcode,
    pub spec: OpcodeSpec,
    pub traits: TraitSet,
}

impl OpInfo {
    pub fn has(&self, t: Trait) -> bool {
        self.traits.contains(t)
    }
}

/// One opcode entry with its traits resolved, not bound to the compiled
/// [`Opcode`] enum (an entry of a [`SpecData`]).
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

/// A spec checked by name only: the files parsed, names, duplicates,
/// traits and dialects checked and resolved as [`Spec::load`] does, but
/// the opcodes not bound to the [`Opcode`] enum of this build. A copy of
/// the spec with an opcode this build lacks loads here (test generators
/// derive their plans from it); a [`Dialect`]'s `ops` are positions in
/// [`SpecData::ops`].
#[derive(Debug)]
pub struct SpecData {
    pub types: Vec<TypeKindSpec>,
    pub ops: Vec<OpData>,
    pub registers: Vec<RegisterSpec>,
    pub dialects: Vec<Dialect>,
    pub sources: SpecSources,
}

impl SpecData {
    /// Parse and check the given sources by name.
    pub fn load(sources: SpecSources) -> Result<SpecData, SpecError> {
        let types: Vec<TypeKindSpec> = parse(&sources.types)?;
        let op_specs: Vec<OpcodeSpec> = parse(&sources.opcodes)?;
        let registers: Vec<RegisterSpec> = parse(&sources.registers)?;
        let dialect_specs: Vec<DialectSpec> = parse(&sources.dialects)?;
        check_data(types, op_specs, registers, dialect_specs, sources, false)
    }

    /// The built-in spec's entries, checked by name.
    pub fn builtin() -> Result<SpecData, SpecError> {
        use builtin::*;
        check_data(
            BUILTIN_TYPES.to_vec(),
            BUILTIN_OPCODES.to_vec(),
            BUILTIN_REGISTERS.to_vec(),
            BUILTIN_DIALECTS.to_vec(),
            SpecSources::builtin(),
            false,
        )
    }

    pub fn op_named(&self, name: &str) -> Option<&OpData> {
        self.ops.iter().find(|o| o.spec.name == name)
    }

    pub fn dialect(&self, name: &str) -> Option<&Dialect> {
        self.dialects.iter().find(|d| d.name == name)
    }

    /// The opcode entries `d` allows, in file order.
    pub fn dialect_ops<'a>(&'a self, d: &'a Dialect) -> impl Iterator<Item = &'a OpData> + 'a {
        d.ops.indices().filter_map(|i| self.ops.get(i))
    }
}

/// The checks shared by [`Spec`] and [`SpecData`]. With `bind`, each opcode
/// must also be compiled into this build (checked entry by entry, before
/// its traits, so the first error in file order is reported).
fn check_data(
    types: Vec<TypeKindSpec>,
    op_specs: Vec<OpcodeSpec>,
    registers: Vec<RegisterSpec>,
    dialect_specs: Vec<DialectSpec>,
    sources: SpecSources,
    bind: bool,
) -> Result<SpecData, SpecError> {
    no_duplicates(&sources.types, types.iter().map(|t| &*t.name), "type kind")?;
    no_duplicates(&sources.opcodes, op_specs.iter().map(|o| &*o.name), "opcode")?;
    no_duplicates(&sources.registers, registers.iter().map(|r| &*r.name), "special register")?;
    no_duplicates(&sources.dialects, dialect_specs.iter().map(|d| &*d.name), "dialect")?;

    let mut ops = Vec::with_capacity(op_specs.len());
    for spec in op_specs {
        if bind && Opcode::from_name(&spec.name).is_none() {
            return Err(SpecError::at(
                &sources.opcodes,
                &spec.name,
                format!(
                    "opcode `{}` is not compiled into this build (the Opcode enum is generated from the built-in spec)",
                    spec.name
                ),
            ));
        }
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
    if bind {
        // The generated enum and the loaded file must agree position by position.
        for (i, o) in ops.iter().enumerate() {
            if Opcode::from_name(&o.spec.name).map(Opcode::index) != Some(i) {
                return Err(SpecError::at(
                    &sources.opcodes,
                    &o.spec.name,
                    format!("opcode `{}` is out of the order compiled into this build", o.spec.name),
                ));
            }
        }
        if ops.len() != Opcode::ALL.len() {
            return Err(SpecError::whole(
                &sources.opcodes,
                format!("{} opcodes declared, {} compiled into this build", ops.len(), Opcode::ALL.len()),
            ));
        }
        for r in &registers {
            if SpecialRegister::from_name(&r.name).is_none() {
                return Err(SpecError::at(
                    &sources.registers,
                    &r.name,
                    format!("special register `{}` is not compiled into this build", r.name),
                ));
            }
        }
    }
    let dialects = dialect::resolve(&sources.dialects, dialect_specs, &ops, &types)?;
    Ok(SpecData { types, ops, registers, dialects, sources })
}

/// The loaded, checked spec.
#[derive(Debug)]
pub struct Spec {
    pub types: Vec<TypeKindSpec>,
    ops: Vec<OpInfo>,
    pub registers: Vec<RegisterSpec>,
    pub dialects: Vec<Dialect>,
    /// Kept so that later checks (in `xir`) can point into the files.
    pub sources: SpecSources,
}

impl Spec {
    /// Parse and check the given sources.
    pub fn load(sources: SpecSources) -> Result<Spec, SpecError> {
        let types: Vec<TypeKindSpec> = parse(&sources.types)?;
        let op_specs: Vec<OpcodeSpec> = parse(&sources.opcodes)?;
        let registers: Vec<RegisterSpec> = parse(&sources.registers)?;
        let dialect_specs: Vec<DialectSpec> = parse(&sources.dialects)?;
        Self::check(types, op_specs, registers, dialect_specs, sources)
    }

    /// The built-in spec: the entries `build.rs` read from the RON files,
    /// compiled in (nothing is parsed at start-up), checked as [`Spec::load`]
    /// checks parsed ones.
    pub fn builtin() -> Result<Spec, SpecError> {
        use builtin::*;
        Self::check(
            BUILTIN_TYPES.to_vec(),
            BUILTIN_OPCODES.to_vec(),
            BUILTIN_REGISTERS.to_vec(),
            BUILTIN_DIALECTS.to_vec(),
            SpecSources::builtin(),
        )
    }

    fn check(
        types: Vec<TypeKindSpec>,
        op_specs: Vec<OpcodeSpec>,
        registers: Vec<RegisterSpec>,
        dialect_specs: Vec<DialectSpec>,
        sources: SpecSources,
    ) -> Result<Spec, SpecError> {
        let d = check_data(types, op_specs, registers, dialect_specs, sources, true)?;
        let ops = d
            .ops
            .into_iter()
            .zip(Opcode::ALL)
            .map(|(o, &opcode)| OpInfo { opcode, spec: o.spec, traits: o.traits })
            .collect();
        Ok(Spec { types: d.types, ops, registers: d.registers, dialects: d.dialects, sources: d.sources })
    }

    pub fn op(&self, op: Opcode) -> &OpInfo {
        &self.ops[op.index()]
    }

    pub fn ops(&self) -> &[OpInfo] {
        &self.ops
    }

    pub fn register(&self, r: SpecialRegister) -> &RegisterSpec {
        &self.registers[r as usize]
    }

    pub fn type_kind(&self, name: &str) -> Option<&TypeKindSpec> {
        self.types.iter().find(|t| t.name == name)
    }

    pub fn dialect(&self, name: &str) -> Option<&Dialect> {
        self.dialects.iter().find(|d| d.name == name)
    }

    pub fn dialect_by_id(&self, id: DialectId) -> &Dialect {
        &self.dialects[id.0]
    }
}

/// The built-in spec, loaded once.
///
/// ```
/// let spec = xir_spec::spec();
/// let spirv = spec.dialect("xir.spirv").unwrap();
/// assert!(spirv.refines(spec.dialect("xir").unwrap()));
/// assert!(!spec.dialect("xir.raw").unwrap().refines(spec.dialect("xir.raw.phi_free").unwrap()));
/// ```
/// It is checked by the build and by tests,
/// so a failure here is a defect of this build, not of user input.
pub fn spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(|| match Spec::builtin() {
        Ok(s) => s,
        Err(e) => panic!("the built-in XIR spec is invalid: {e}"),
    })
}

fn parse<T: serde::de::DeserializeOwned>(src: &(String, String)) -> Result<Vec<T>, SpecError> {
    ron::from_str::<Vec<T>>(&src.1).map_err(|e| SpecError {
        file: src.0.clone(),
        line: e.span.start.line,
        col: e.span.start.col,
        message: e.code.to_string(),
    })
}

/// The first entry (in file order) whose name an earlier entry has. By
/// sorting, not hashing: this runs at every start-up on the built-in spec,
/// and a hash set of its ~250 names cost more than the rest of the check.
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
