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

/// The part of an instruction that passes read on every walk: opcode,
/// result type, value operands and block operands. A function stores these
/// in one table of 64-byte, line-aligned records, and keeps the rarely read
/// rest (payload, metadata, span) in side tables: a pass reading an
/// instruction then touches exactly one cache line, and a walk over many
/// instructions streams half the bytes a 120-byte record cost
/// (BENCHMARKS.md, legalization).
#[derive(Clone, Debug, PartialEq)]
#[repr(align(64))]
pub struct InstCore {
    pub opcode: Opcode,
    /// Result type; `void` when the instruction has no result.
    pub ty: TypeId,
    pub operands: SmallVec<[Value; 3]>,
    pub blocks: SmallVec<[Block; 3]>,
}

/// A whole instruction as a value: what is created, replaced, copied out of
/// a function and serialized. Its core fields are reached through `Deref`
/// (`data.opcode`, `data.operands.push(..)`).
#[derive(Clone, Debug, PartialEq)]
pub struct InstData {
    pub core: InstCore,
    pub payload: Payload,
    pub md: Metadata,
    pub span: Option<Span>,
}

impl std::ops::Deref for InstData {
    type Target = InstCore;
    fn deref(&self) -> &InstCore {
        &self.core
    }
}

impl std::ops::DerefMut for InstData {
    fn deref_mut(&mut self) -> &mut InstCore {
        &mut self.core
    }
}

impl InstData {
    pub fn new(opcode: Opcode, ty: TypeId) -> Self {
        InstData {
            core: InstCore { opcode, ty, operands: SmallVec::new(), blocks: SmallVec::new() },
            payload: Payload::None,
            md: Metadata::default(),
            span: None,
        }
    }

    pub fn cases(&self) -> &[u64] {
        self.payload.cases()
    }

    pub fn text(&self) -> Option<&str> {
        self.payload.text()
    }
}

impl Payload {
    /// Heap bytes the payload owns.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Payload::None => 0,
            Payload::Cases(c) => crate::ir::footprint::vec_bytes(c),
            Payload::Text(t) => t.capacity(),
        }
    }

    /// Case literals (empty for other payloads).
    pub fn cases(&self) -> &[u64] {
        match self {
            Payload::Cases(c) => c,
            _ => &[],
        }
    }

    /// Message text, if this is a text payload.
    pub fn text(&self) -> Option<&str> {
        match self {
            Payload::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl InstCore {
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

/// The serialized form of an instruction (the JSON interchange): one flat
/// record, as before the core was split from the rest.
#[derive(Serialize)]
struct InstRef<'a> {
    #[serde(with = "opcode_serde")]
    opcode: Opcode,
    ty: TypeId,
    operands: &'a SmallVec<[Value; 3]>,
    #[serde(skip_serializing_if = "SmallVec::is_empty")]
    blocks: &'a SmallVec<[Block; 3]>,
    #[serde(skip_serializing_if = "is_none_payload")]
    payload: &'a Payload,
    #[serde(skip_serializing_if = "Metadata::is_empty")]
    md: &'a Metadata,
    #[serde(skip_serializing_if = "Option::is_none")]
    span: &'a Option<Span>,
}

#[derive(Deserialize)]
struct InstOwned {
    #[serde(with = "opcode_serde")]
    opcode: Opcode,
    ty: TypeId,
    operands: SmallVec<[Value; 3]>,
    #[serde(default)]
    blocks: SmallVec<[Block; 3]>,
    #[serde(default)]
    payload: Payload,
    #[serde(default)]
    md: Metadata,
    #[serde(default)]
    span: Option<Span>,
}

fn is_none_payload(p: &&Payload) -> bool {
    matches!(p, Payload::None)
}

impl Serialize for InstData {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = &self.core;
        InstRef {
            opcode: c.opcode,
            ty: c.ty,
            operands: &c.operands,
            blocks: &c.blocks,
            payload: &self.payload,
            md: &self.md,
            span: &self.span,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for InstData {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let o = InstOwned::deserialize(d)?;
        Ok(InstData {
            core: InstCore { opcode: o.opcode, ty: o.ty, operands: o.operands, blocks: o.blocks },
            payload: o.payload,
            md: o.md,
            span: o.span,
        })
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
    /// Passes read the core table; every byte of `InstCore` is paid per
    /// instruction read (BENCHMARKS.md, legalization).
    #[test]
    fn inst_core_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<super::InstCore>(), 64);
        assert_eq!(std::mem::align_of::<super::InstCore>(), 64);
    }
}
