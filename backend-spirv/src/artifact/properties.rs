//! The properties section: the [`KernelAbi`] as fixed 36-byte records, and
//! the canonical-shape check that both the writer and the reader run
//! (docs/artifact.md, "Properties").
//!
//! Canonical shape (version 1): entry point `main`; every block dimension
//! at least 1; `DispatchSize { offset: 0 }` first and only there; descriptor
//! properties at set 0 with bindings dense from 0 in list order;
//! push-constant pseudo-properties with [`NO_BINDING`], set 0, no buffer
//! storage, inside the push-constant block and not overlapping; argument
//! indices strictly increasing; a kind or storage code this build does not
//! know fails closed.

use crate::abi::{
    BufferStorage, KernelAbi, Property, PropertyKind, DESCRIPTOR_SET, ENTRY_POINT_NAME, FIRST_VALUE_OFFSET,
    MAX_PUSH_CONSTANT_SIZE, NO_BINDING,
};

use super::wire::{Reader, Writer};
use super::{ArtifactError, Section};

/// Most properties one artifact may carry.
pub const MAX_PROPERTIES: u32 = 1024;
const NO_ARG: u32 = u32::MAX;

const KIND_DISPATCH_SIZE: u32 = 1;
const KIND_PUSH_CONSTANT_VALUE: u32 = 2;
const KIND_STORAGE_BUFFER: u32 = 3;
const KIND_BYTE_BUFFER: u32 = 4;

const STORAGE_NOT_A_BUFFER: u32 = 0;
const STORAGE_TYPED: u32 = 1;
const STORAGE_WORDS: u32 = 2;

/// Check the canonical shape; `Err` names the first violation.
pub fn check_shape(abi: &KernelAbi) -> Result<(), ArtifactError> {
    let bad = |m: String| Err(ArtifactError::NonCanonicalAbi(m));
    if abi.entry_point != ENTRY_POINT_NAME {
        return bad(format!("entry point is `{}`, not `{ENTRY_POINT_NAME}`", abi.entry_point));
    }
    if abi.block_size.contains(&0) {
        return bad(format!("block size {:?} has a zero dimension", abi.block_size));
    }
    let pc = abi.push_constant_size;
    if !pc.is_multiple_of(4) || !(12..=MAX_PUSH_CONSTANT_SIZE).contains(&pc) {
        return bad(format!("push-constant size {pc} is not a multiple of 4 in 12..={MAX_PUSH_CONSTANT_SIZE}"));
    }
    match abi.properties.first() {
        Some(Property {
            kind: PropertyKind::DispatchSize { offset: 0 },
            arg_index: None,
            set: DESCRIPTOR_SET,
            binding: NO_BINDING,
            storage: BufferStorage::NotABuffer,
        }) => {}
        other => return bad(format!("the first property must be DispatchSize at offset 0, found {other:?}")),
    }
    let mut next_binding = 0u32;
    let mut last_arg: Option<u32> = None;
    let mut ranges: Vec<(u32, u32)> = vec![(0, 12)];
    for (i, p) in abi.properties.iter().enumerate().skip(1) {
        let Some(arg) = p.arg_index else { return bad(format!("property {i} ({:?}) serves no argument", p.kind)) };
        if last_arg.is_some_and(|l| arg <= l) {
            return bad(format!("property {i}: argument {arg} is out of argument order"));
        }
        last_arg = Some(arg);
        if p.set != DESCRIPTOR_SET {
            return bad(format!("property {i}: set {} (only set {DESCRIPTOR_SET} exists)", p.set));
        }
        match p.kind {
            PropertyKind::DispatchSize { .. } => return bad(format!("property {i}: a second DispatchSize")),
            PropertyKind::PushConstantValue { offset, size } => {
                if p.binding != NO_BINDING || p.storage != BufferStorage::NotABuffer {
                    return bad(format!("property {i}: a push-constant value needs NO_BINDING and no storage"));
                }
                let end = offset.saturating_add(size);
                if size == 0 || offset < FIRST_VALUE_OFFSET || end > pc {
                    return bad(format!(
                        "property {i}: push-constant range {offset}+{size} outside {FIRST_VALUE_OFFSET}..{pc}"
                    ));
                }
                ranges.push((offset, end));
            }
            PropertyKind::StorageBuffer | PropertyKind::ByteBuffer => {
                if p.binding != next_binding {
                    return bad(format!(
                        "property {i}: binding {} where the dense binding {next_binding} is due",
                        p.binding
                    ));
                }
                next_binding += 1;
                let ok = match (p.kind, p.storage) {
                    (PropertyKind::ByteBuffer, s) => s == BufferStorage::Words { elem_size: 1, elem_align: 1 },
                    (_, BufferStorage::Typed { stride }) => stride > 0,
                    (_, BufferStorage::Words { elem_size, elem_align }) => {
                        elem_size > 0 && elem_align.is_power_of_two() && elem_size.is_multiple_of(elem_align)
                    }
                    (_, BufferStorage::NotABuffer) => false,
                };
                if !ok {
                    return bad(format!("property {i}: storage {:?} does not fit {:?}", p.storage, p.kind));
                }
            }
        }
    }
    ranges.sort_unstable();
    if let Some(w) = ranges.windows(2).find(|w| w[1].0 < w[0].1) {
        return bad(format!("push-constant ranges {:?} and {:?} overlap", w[0], w[1]));
    }
    Ok(())
}

/// The section bytes of a canonical ABI.
pub fn encode(abi: &KernelAbi) -> Result<Vec<u8>, ArtifactError> {
    check_shape(abi)?;
    if abi.properties.len() > MAX_PROPERTIES as usize {
        return Err(ArtifactError::NonCanonicalAbi(format!(
            "{} properties (limit {MAX_PROPERTIES})",
            abi.properties.len()
        )));
    }
    let mut w = Writer::default();
    for d in abi.block_size {
        w.u32(d);
    }
    w.u32(abi.push_constant_size);
    w.u32(abi.properties.len() as u32);
    for p in &abi.properties {
        let (kind, k0, k1) = match p.kind {
            PropertyKind::DispatchSize { offset } => (KIND_DISPATCH_SIZE, offset, 0),
            PropertyKind::PushConstantValue { offset, size } => (KIND_PUSH_CONSTANT_VALUE, offset, size),
            PropertyKind::StorageBuffer => (KIND_STORAGE_BUFFER, 0, 0),
            PropertyKind::ByteBuffer => (KIND_BYTE_BUFFER, 0, 0),
        };
        let (storage, s0, s1) = match p.storage {
            BufferStorage::NotABuffer => (STORAGE_NOT_A_BUFFER, 0, 0),
            BufferStorage::Typed { stride } => (STORAGE_TYPED, stride, 0),
            BufferStorage::Words { elem_size, elem_align } => (STORAGE_WORDS, elem_size, elem_align),
        };
        for v in [kind, k0, k1, p.arg_index.unwrap_or(NO_ARG), p.set, p.binding, storage, s0, s1] {
            w.u32(v);
        }
    }
    Ok(w.bytes)
}

/// Parse the section (entry point from the header) and check its canonical shape.
pub fn decode(bytes: &[u8], entry_point: &str) -> Result<KernelAbi, ArtifactError> {
    let mut r = Reader::new(bytes, Section::Properties);
    let block_size = [r.u32()?, r.u32()?, r.u32()?];
    let push_constant_size = r.u32()?;
    let n = r.count("property", MAX_PROPERTIES)?;
    let mut properties = Vec::with_capacity(n as usize);
    for i in 0..n {
        let mut f = [0u32; 9];
        for v in &mut f {
            *v = r.u32()?;
        }
        let [kind, k0, k1, arg, set, binding, storage, s0, s1] = f;
        let unused_zero = |used: usize, rest: &[u32]| rest.iter().skip(used).all(|&v| v == 0);
        let kind = match kind {
            KIND_DISPATCH_SIZE if unused_zero(1, &[k0, k1]) => PropertyKind::DispatchSize { offset: k0 },
            KIND_PUSH_CONSTANT_VALUE => PropertyKind::PushConstantValue { offset: k0, size: k1 },
            KIND_STORAGE_BUFFER if unused_zero(0, &[k0, k1]) => PropertyKind::StorageBuffer,
            KIND_BYTE_BUFFER if unused_zero(0, &[k0, k1]) => PropertyKind::ByteBuffer,
            other => {
                return Err(r.malformed(format!("property {i}: unknown kind code {other} (or non-zero unused fields)")))
            }
        };
        let storage = match storage {
            STORAGE_NOT_A_BUFFER if s0 == 0 && s1 == 0 => BufferStorage::NotABuffer,
            STORAGE_TYPED if s1 == 0 => BufferStorage::Typed { stride: s0 },
            STORAGE_WORDS => BufferStorage::Words { elem_size: s0, elem_align: s1 },
            other => {
                return Err(
                    r.malformed(format!("property {i}: unknown storage code {other} (or non-zero unused fields)"))
                )
            }
        };
        let arg_index = (arg != NO_ARG).then_some(arg);
        properties.push(Property { kind, arg_index, set, binding, storage });
    }
    r.finish()?;
    let abi = KernelAbi { entry_point: entry_point.to_string(), block_size, push_constant_size, properties };
    check_shape(&abi)?;
    Ok(abi)
}
