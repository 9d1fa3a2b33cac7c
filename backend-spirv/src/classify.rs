//! The backend's classification of every XIR opcode and type kind, loaded
//! from the data file `classify.ron` (compiled in).
//!
//! The handoff consults this table before anything else: an `Unsupported`
//! entry becomes a focused diagnostic carrying the table's reason, never an
//! emitter panic. The tests below walk the whole spec and fail on any opcode
//! or type kind the table does not classify (or on a stale entry).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use xir::Opcode;

/// What the backend does with one opcode or type kind.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub enum Support {
    /// Accepted and lowered exactly.
    Supported,
    /// Accepted and emitted as nothing; the text says why that is exact.
    SemanticNoOp(String),
    /// Rejected at the handoff; the text is the diagnostic's reason.
    Unsupported(String),
}

#[derive(Debug, Deserialize)]
pub struct Classification {
    pub opcodes: BTreeMap<String, Support>,
    pub types: BTreeMap<String, Support>,
}

const SOURCE: &str = include_str!("classify.ron");

/// Parse the table (exposed for the completeness test and tools); the
/// error is RON's, located in the text.
pub fn parse(src: &str) -> Result<Classification, ron::error::SpannedError> {
    ron::from_str(src)
}

/// The compiled-in table. It is checked by the tests of this crate, so a
/// failure here is a defect of this build, not of user input.
pub fn table() -> &'static Classification {
    static T: OnceLock<Classification> = OnceLock::new();
    T.get_or_init(|| match parse(SOURCE) {
        Ok(t) => t,
        Err(e) => panic!("the built-in SPIR-V classification table is invalid: backend-spirv/src/classify.ron:{e}"),
    })
}

/// Classification of an opcode; an opcode missing from the table is unsupported.
pub fn opcode(op: Opcode) -> Support {
    table().opcodes.get(op.name()).cloned().unwrap_or_else(|| {
        Support::Unsupported(format!("opcode `{}` is not classified by the SPIR-V backend", op.name()))
    })
}

/// Classification of a type kind (`TypeTable::kind_name` spelling).
pub fn type_kind(kind: &str) -> Support {
    table()
        .types
        .get(kind)
        .cloned()
        .unwrap_or_else(|| Support::Unsupported(format!("type kind `{kind}` is not classified by the SPIR-V backend")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_opcode_and_type_kind_is_classified_exactly_once() {
        let t = parse(SOURCE).expect("classify.ron parses");
        let spec = xir_spec::spec();
        let mut missing = Vec::new();
        for op in spec.ops() {
            if !t.opcodes.contains_key(op.spec.name.as_str()) {
                missing.push(format!("opcode `{}`", op.spec.name));
            }
        }
        for k in &spec.types {
            if !t.types.contains_key(k.name.as_str()) {
                missing.push(format!("type kind `{}`", k.name));
            }
        }
        assert!(missing.is_empty(), "unclassified: {missing:?}");
        let stale: Vec<&String> = t
            .opcodes
            .keys()
            .filter(|n| Opcode::from_name(n).is_none())
            .chain(t.types.keys().filter(|n| spec.type_kind(n).is_none()))
            .collect();
        assert!(stale.is_empty(), "entries for names the spec does not have: {stale:?}");
    }

    #[test]
    fn dialect_removed_opcodes_are_not_claimed_supported() {
        let spirv = xir_spec::spec().dialect("xir.spirv").unwrap();
        for op in xir_spec::spec().ops() {
            if !spirv.ops.contains(op.opcode) {
                assert!(
                    !matches!(opcode(op.opcode), Support::Supported),
                    "`{}` is outside xir.spirv but classified Supported",
                    op.spec.name
                );
            }
        }
    }

    #[test]
    fn unsupported_entries_carry_reasons() {
        for (name, s) in table().opcodes.iter().chain(table().types.iter()) {
            if let Support::Unsupported(r) | Support::SemanticNoOp(r) = s {
                assert!(r.len() > 10, "`{name}` needs a real reason, got {r:?}");
            }
        }
    }
}
