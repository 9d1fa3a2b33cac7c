//! The backend's classification of every XIR opcode and type kind: the
//! data file `classify.ron`, compiled in by `build.rs` as a sorted table
//! (parsing the RON at first use cost every process 1.0 M instructions).
//!
//! The handoff consults this table before anything else: an `Unsupported`
//! entry becomes a focused diagnostic carrying the table's reason, never an
//! emitter panic. The tests below walk the whole spec and fail on any opcode
//! or type kind the table does not classify (or on a stale entry), and hold
//! the compiled-in entries equal to the file as [`parse`] reads it.

use std::collections::BTreeMap;

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

/// The file's contents, as [`parse`] reads them.
#[derive(Debug, Deserialize)]
pub struct Classification {
    pub opcodes: BTreeMap<String, Support>,
    pub types: BTreeMap<String, Support>,
}

/// One compiled-in entry: a [`Support`] whose text lives in the binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    Supported,
    SemanticNoOp(&'static str),
    Unsupported(&'static str),
}

impl From<Entry> for Support {
    fn from(e: Entry) -> Support {
        match e {
            Entry::Supported => Support::Supported,
            Entry::SemanticNoOp(why) => Support::SemanticNoOp(why.to_string()),
            Entry::Unsupported(why) => Support::Unsupported(why.to_string()),
        }
    }
}

// `OPCODES` and `TYPES`: `(name, Entry)` sorted by name.
include!(concat!(env!("OUT_DIR"), "/classify_table.rs"));

/// Parse a classification file (the tests read `classify.ron` with it; for
/// tools): the error is RON's, located in the text.
pub fn parse(src: &str) -> Result<Classification, ron::error::SpannedError> {
    ron::from_str(src)
}

fn lookup(table: &'static [(&'static str, Entry)], name: &str) -> Option<Support> {
    table.binary_search_by(|(n, _)| (*n).cmp(name)).ok().map(|i| table[i].1.into())
}

/// Classification of an opcode; an opcode missing from the table is unsupported.
pub fn opcode(op: Opcode) -> Support {
    lookup(OPCODES, op.name()).unwrap_or_else(|| {
        Support::Unsupported(format!("opcode `{}` is not classified by the SPIR-V backend", op.name()))
    })
}

/// Classification of a type kind (`TypeTable::kind_name` spelling).
pub fn type_kind(kind: &str) -> Support {
    lookup(TYPES, kind)
        .unwrap_or_else(|| Support::Unsupported(format!("type kind `{kind}` is not classified by the SPIR-V backend")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = include_str!("classify.ron");

    /// The compiled-in table as the map [`parse`] builds.
    fn compiled(table: &[(&str, Entry)]) -> BTreeMap<String, Support> {
        table.iter().map(|&(n, e)| (n.to_string(), e.into())).collect()
    }

    #[test]
    fn compiled_in_table_equals_the_parsed_file() {
        let t = parse(SOURCE).unwrap_or_else(|e| panic!("backend-spirv/src/classify.ron:{e}"));
        assert_eq!(compiled(OPCODES), t.opcodes);
        assert_eq!(compiled(TYPES), t.types);
        assert!(OPCODES.windows(2).all(|w| w[0].0 < w[1].0), "OPCODES is not sorted by name");
        assert!(TYPES.windows(2).all(|w| w[0].0 < w[1].0), "TYPES is not sorted by name");
    }

    #[test]
    fn parse_errors_are_located() {
        let e = parse("(\n    opcodes: {\n        \"add\": Supportd,\n    },\n    types: {},\n)").unwrap_err();
        assert_eq!((e.span.start.line, e.span.start.col), (3, 16), "{e}");
    }

    #[test]
    fn every_spec_opcode_and_type_kind_is_classified_exactly_once() {
        let t = parse(SOURCE).expect("classify.ron parses");
        let spec = xir_spec::spec();
        let mut missing = Vec::new();
        for op in spec.ops() {
            if !t.opcodes.contains_key(&*op.spec.name) {
                missing.push(format!("opcode `{}`", op.spec.name));
            }
        }
        for k in &spec.types {
            if !t.types.contains_key(&*k.name) {
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
        for &(name, e) in OPCODES.iter().chain(TYPES) {
            if let Entry::Unsupported(r) | Entry::SemanticNoOp(r) = e {
                assert!(r.len() > 10, "`{name}` needs a real reason, got {r:?}");
            }
        }
    }
}
