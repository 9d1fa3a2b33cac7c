//! Instructions: an opcode from the spec, a result type, value operands,
//! block operands (structured roles, branch targets or Phi incoming blocks)
//! and a small payload. The meaning of each operand and block slot is given by
//! the opcode's entry in `ir-spec/spec/opcodes.ron`.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use xir_spec::{Opcode, Trait};

use super::{Block, Metadata, Span, TypeId, Value};

/// Non-value data an instruction carries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Payload {
    #[default]
    None,
    /// Case literals of `switch` / `br_indexed`, as raw bits of the
    /// selector's type (so width and signedness come from the selector).
    Cases(Vec<u64>),
    /// Message of `print` / `assert` / `assume` / `unreachable`.
    Text(String),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstData {
    #[serde(with = "opcode_serde")]
    pub opcode: Opcode,
    /// Result type; `void` when the instruction has no result.
    pub ty: TypeId,
    pub operands: SmallVec<[Value; 3]>,
    #[serde(default, skip_serializing_if = "SmallVec::is_empty")]
    pub blocks: SmallVec<[Block; 3]>,
    #[serde(default, skip_serializing_if = "is_none_payload")]
    pub payload: Payload,
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub md: Metadata,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
}

fn is_none_payload(p: &Payload) -> bool {
    matches!(p, Payload::None)
}

impl InstData {
    pub fn new(opcode: Opcode, ty: TypeId) -> Self {
        InstData {
            opcode,
            ty,
            operands: SmallVec::new(),
            blocks: SmallVec::new(),
            payload: Payload::None,
            md: Metadata::default(),
            span: None,
        }
    }

    pub fn has(&self, t: Trait) -> bool {
        xir_spec::spec().op(self.opcode).has(t)
    }

    pub fn is_terminator(&self) -> bool {
        self.has(Trait::Terminator)
    }

    /// Index of the named block role in `blocks`, per the spec.
    pub fn role(&self, role: &str) -> Option<Block> {
        let spec = &xir_spec::spec().op(self.opcode).spec;
        let i = spec.blocks.iter().position(|r| r == role)?;
        self.blocks.get(i).copied()
    }

    /// The merge block of a structured terminator.
    pub fn merge_block(&self) -> Option<Block> {
        self.role("merge")
    }

    pub fn cases(&self) -> &[u64] {
        match &self.payload {
            Payload::Cases(c) => c,
            _ => &[],
        }
    }

    pub fn text(&self) -> Option<&str> {
        match &self.payload {
            Payload::Text(t) => Some(t),
            _ => None,
        }
    }

    /// Control-flow successors as executed (not structured roles such as a
    /// loop's merge before the loop exits): the raw edges of this terminator.
    pub fn successors(&self) -> SmallVec<[Block; 4]> {
        self.successor_slice().iter().copied().collect()
    }

    /// `successors` without a copy: the executed edges are always one
    /// contiguous run of `blocks`, so CFG construction can read them in
    /// place.
    pub fn successor_slice(&self) -> &[Block] {
        use Opcode::*;
        let b = self.blocks.as_slice();
        let first = |k: usize| &b[..b.len().min(k)];
        match self.opcode {
            If => first(2),
            Switch => b.get(1..).unwrap_or(&[]),
            Loop | SimpleLoop | RayQueryLoop | AutodiffScope | Outline => first(1),
            RayQueryDispatch => b,
            Phi => &[],
            _ if self.is_terminator() => b,
            _ => &[],
        }
    }
}

mod opcode_serde {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};
    use xir_spec::Opcode;

    pub fn serialize<S: Serializer>(op: &Opcode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(op.name())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Opcode, D::Error> {
        let s = String::deserialize(d)?;
        Opcode::from_name(&s).ok_or_else(|| D::Error::custom(format!("unknown opcode `{s}`")))
    }
}

#[cfg(test)]
mod tests {
    /// Passes sweep the instruction table; every byte of `InstData` is paid
    /// per instruction at every sweep (BENCHMARKS.md, legalization).
    #[test]
    fn inst_data_stays_two_cache_lines() {
        let size = std::mem::size_of::<super::InstData>();
        eprintln!("InstData: {size} bytes");
        assert!(size <= 128, "InstData is {size} bytes");
    }
}
