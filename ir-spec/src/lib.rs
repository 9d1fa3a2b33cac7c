//! `xir-spec`: the XIR instruction set, type kinds, special registers and
//! dialects, declared as data in `spec/*.ron`.
//!
//! This crate owns the data and its structural checks (unknown names,
//! duplicates, `extends` cycles), reported with `file:line:col`. The
//! built-in spec is checked and resolved when the crate is built
//! (`build.rs` shares `check.rs` and `dialect.rs`): a broken spec file
//! fails the build, and [`spec()`] costs no check at start-up. The meaning
//! of each named rule (operand classes, result rules, constraints,
//! invariants) lives in the `xir` crate, which checks at start-up that every
//! name used here has an implementation.

mod check;
mod dialect;
mod dialect_ops;
mod error;
mod rule;
pub mod schema;
mod traits;

pub use check::{OpData, SpecSources};
pub use dialect::{CompiledDialect, Dialect, DialectId, NameSet, OpSet};
pub use error::SpecError;
pub use schema::{DialectSpec, OpcodeSpec, OperandSpec, RegisterSpec, TypeKindSpec};
pub use traits::{Trait, TraitSet};

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

/// The spec files' entries as Rust, checked and resolved (`build.rs`).
mod builtin {
    use std::borrow::Cow;

    use crate::schema::{DialectSpec, OpcodeSpec, OperandSpec, RegisterSpec, TypeKindSpec};
    use crate::{CompiledDialect, NameSet, OpInfo, Opcode, TraitSet};
    include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
}

use std::{borrow::Cow, sync::OnceLock};

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
        let c = check::check(types, op_specs, registers, dialect_specs, &sources, &())?;
        Ok(SpecData { types: c.types, ops: c.ops, registers: c.registers, dialects: c.dialects, sources })
    }

    /// The built-in spec's entries, as `build.rs` checked and resolved them.
    pub fn builtin() -> SpecData {
        let ops = builtin::BUILTIN_OPS.iter().map(|o| OpData { spec: o.spec.clone(), traits: o.traits }).collect();
        let (types, registers, dialects) = builtin_rest();
        SpecData { types, ops, registers, dialects, sources: SpecSources::builtin() }
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

/// The built-in type kinds, registers and dialects, as `build.rs` resolved them.
fn builtin_rest() -> (Vec<TypeKindSpec>, Vec<RegisterSpec>, Vec<Dialect>) {
    use builtin::*;
    let dialects = BUILTIN_DIALECTS
        .iter()
        .zip(BUILTIN_DIALECTS_RESOLVED)
        .enumerate()
        .map(|(i, (spec, c))| Dialect::from_compiled(DialectId(i), spec, c))
        .collect();
    (BUILTIN_TYPES.to_vec(), BUILTIN_REGISTERS.to_vec(), dialects)
}

/// Binding to this build's [`Opcode`] and [`SpecialRegister`] enums: every
/// opcode compiled in, in the order compiled in, and every register.
struct CompiledEnums;

impl check::Bind for CompiledEnums {
    fn opcode(&self, spec: &OpcodeSpec, sources: &SpecSources) -> Result<(), SpecError> {
        if Opcode::from_name(&spec.name).is_none() {
            return Err(SpecError::at(
                &sources.opcodes,
                &spec.name,
                format!(
                    "opcode `{}` is not compiled into this build (the Opcode enum is generated from the built-in spec)",
                    spec.name
                ),
            ));
        }
        Ok(())
    }

    fn lists(&self, ops: &[OpData], registers: &[RegisterSpec], sources: &SpecSources) -> Result<(), SpecError> {
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
        for r in registers {
            if SpecialRegister::from_name(&r.name).is_none() {
                return Err(SpecError::at(
                    &sources.registers,
                    &r.name,
                    format!("special register `{}` is not compiled into this build", r.name),
                ));
            }
        }
        Ok(())
    }
}

/// The loaded, checked spec.
#[derive(Debug)]
pub struct Spec {
    pub types: Vec<TypeKindSpec>,
    /// Borrowed from the compiled-in table for the built-in spec.
    ops: Cow<'static, [OpInfo]>,
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
        let c = check::check(types, op_specs, registers, dialect_specs, &sources, &CompiledEnums)?;
        let ops =
            c.ops.into_iter().zip(Opcode::ALL).map(|(o, &opcode)| OpInfo { opcode, spec: o.spec, traits: o.traits });
        Ok(Spec {
            types: c.types,
            ops: Cow::Owned(ops.collect()),
            registers: c.registers,
            dialects: c.dialects,
            sources,
        })
    }

    /// The built-in spec: the entries `build.rs` read from the RON files,
    /// checked and resolved there and compiled in (nothing is parsed or
    /// checked at start-up; `Spec::load` of the same files gives the same
    /// spec, which a test holds).
    pub fn builtin() -> Spec {
        let (types, registers, dialects) = builtin_rest();
        Spec { types, ops: Cow::Borrowed(builtin::BUILTIN_OPS), registers, dialects, sources: SpecSources::builtin() }
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
/// It was checked when this crate was built (`build.rs`).
pub fn spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(Spec::builtin)
}

fn parse<T: serde::de::DeserializeOwned>(src: &(String, String)) -> Result<Vec<T>, SpecError> {
    ron::from_str::<Vec<T>>(&src.1).map_err(|e| SpecError {
        file: src.0.clone(),
        line: e.span.start.line,
        col: e.span.start.col,
        message: e.code.to_string(),
    })
}
