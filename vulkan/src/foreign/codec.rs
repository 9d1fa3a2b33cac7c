//! The interpreter's JSON element encoding (docs/inputs-format.md) to and
//! from the bytes of a foreign module's block, placed by the block's own
//! decorations (`reflect::DataType`): every scalar at the offset the module
//! reads it from, padding left zero on the way in and ignored on the way out.
//!
//! Scalars go through the interpreter's own codec (`buffer_to_host_bytes` /
//! `buffer_from_host_bytes` on a small XIR type table), so an input accepted
//! by the interpreter is accepted here with the same bits, and an output is
//! spelled exactly as the interpreter spells it (`"nan"`, `"-0.0"`, bit
//! patterns, decimal strings past 2^53): `Outputs::first_mismatch` compares
//! the two directly. Arrays of scalars or vectors whose stride is the host
//! layout's go through that codec in one call (the common case: a storage
//! buffer of `f32`, `vec4<f32>`, ...).

use rustc_hash::FxHashMap;
use serde_json::Value as Json;
use xir::interp::{buffer_from_host_bytes, buffer_to_host_bytes};
use xir::{FloatFormat, Module, TypeId};

use xir_spirv::reflect::{DataType, Scalar, StructLayout};

/// Most elements a `{"fill": v, "len": n}` runtime array may have (the interpreter's limit).
pub(crate) const MAX_FILL_LEN: u64 = 1 << 26;

/// Scalar and vector types of a small XIR table, for the interpreter's codec.
pub(crate) struct Codec {
    m: Module,
    ids: FxHashMap<(Scalar, u32), TypeId>,
}

/// Why a block's value does not encode or decode: the member it is about
/// (index and name; none for a block of one member or the block as a
/// whole) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", match .member {
    Some((k, Some(n))) => format!("member {k} (`{n}`): "),
    Some((k, None)) => format!("member {k}: "),
    None => String::new(),
})]
pub(crate) struct CodecError {
    pub member: Option<(usize, Option<String>)>,
    pub message: String,
}

impl From<String> for CodecError {
    fn from(message: String) -> Self {
        CodecError { member: None, message }
    }
}

/// A block input's bytes and the length of its trailing runtime array (when it has one).
pub(crate) struct BlockBytes {
    pub bytes: Vec<u8>,
    pub runtime_len: Option<u64>,
}

fn scalars() -> impl Iterator<Item = Scalar> {
    let ints = [8, 16, 32, 64].into_iter().flat_map(|bits| [false, true].map(|signed| Scalar::Int { bits, signed }));
    ints.chain([16, 32, 64].map(|bits| Scalar::Float { bits }))
}

impl Codec {
    pub(crate) fn new() -> Codec {
        let mut m = Module::new();
        let mut ids = FxHashMap::default();
        for s in scalars() {
            let t = match s {
                Scalar::Int { bits, signed } => m.types.int(bits as u8, signed),
                Scalar::Float { bits: 16 } => m.types.float(FloatFormat::F16),
                Scalar::Float { bits: 32 } => m.types.float(FloatFormat::F32),
                Scalar::Float { .. } => m.types.float(FloatFormat::F64),
            };
            ids.insert((s, 1), t);
            for lanes in 2..=4u32 {
                let v = m.types.vector(t, lanes as u8);
                ids.insert((s, lanes), v);
            }
        }
        Codec { m, ids }
    }

    /// The XIR type of a scalar (`lanes` 1) or vector.
    fn xir(&self, s: Scalar, lanes: u32) -> Result<TypeId, String> {
        self.ids.get(&(s, lanes)).copied().ok_or_else(|| format!("no codec for {s:?} x {lanes}"))
    }

    /// The interpreter's table and the type of a texel component (storage images).
    pub(crate) fn texel_type(&self, s: Scalar) -> (&Module, TypeId) {
        (&self.m, self.ids[&(s, 1)])
    }

    /// The host-layout element type of `ty` when an array of it with
    /// `stride` is exactly the host layout (one bulk call).
    fn bulk(&self, ty: &DataType, stride: u32) -> Option<TypeId> {
        let t = match ty {
            DataType::Scalar(s) => self.xir(*s, 1).ok()?,
            DataType::Vector { scalar, lanes } => self.xir(*scalar, *lanes).ok()?,
            _ => return None,
        };
        (self.m.types.size_align(t).0 == u64::from(stride)).then_some(t)
    }

    fn scalar_bytes(&self, s: Scalar, j: &Json) -> Result<Vec<u8>, String> {
        let t = self.xir(s, 1)?;
        buffer_to_host_bytes(&self.m, t, &Json::Array(vec![j.clone()])).map_err(|e| {
            let e = e.to_string();
            e.strip_prefix("element 0: ").map(str::to_string).unwrap_or(e)
        })
    }

    fn scalar_json(&self, s: Scalar, bytes: &[u8]) -> Result<Json, String> {
        let t = self.xir(s, 1)?;
        match buffer_from_host_bytes(&self.m, t, bytes).map_err(|e| e.to_string())? {
            Json::Array(mut v) if v.len() == 1 => Ok(v.remove(0)),
            other => Err(format!("a scalar decoded to {other}")),
        }
    }

    /// The bytes of a block's input: its parts ([`parts`]) in the element
    /// encoding. A trailing runtime array takes a list or
    /// `{"fill": v, "len": n}`; its length sizes the buffer.
    pub(crate) fn block_to_bytes(&self, layout: &StructLayout, j: &Json) -> Result<BlockBytes, CodecError> {
        let parts = parts(layout);
        let values: Vec<&Json> = match parts.len() {
            1 => vec![j],
            n => list(j, n, "members")?.iter().collect(),
        };
        let mut size = layout.extent();
        let mut runtime_len = None;
        if let (Some(&(DataType::Array { len: None, stride, .. }, offset)), Some(v)) = (parts.last(), values.last()) {
            let k = parts.len() - 1;
            let n = runtime_len_of(v).map_err(|e| at_member(layout, k, e))?;
            let end = n
                .checked_mul(u64::from(*stride))
                .and_then(|b| b.checked_add(u64::from(offset)))
                .filter(|&b| b <= isize::MAX as u64)
                .ok_or_else(|| CodecError::from(format!("a runtime array of {n} elements does not fit in memory")))?;
            size = size.max(end);
            runtime_len = Some(n);
        }
        let mut bytes = vec![0u8; size as usize];
        for (k, (&(ty, offset), v)) in parts.iter().zip(&values).enumerate() {
            self.encode(ty, v, &mut bytes, offset as usize, true).map_err(|e| at_member(layout, k, e))?;
        }
        Ok(BlockBytes { bytes, runtime_len })
    }

    /// A block's contents in the element encoding (the inverse of [`Codec::block_to_bytes`]).
    pub(crate) fn block_from_bytes(
        &self,
        layout: &StructLayout,
        bytes: &[u8],
        runtime_len: Option<u64>,
    ) -> Result<Json, CodecError> {
        let parts = parts(layout);
        let mut values = Vec::with_capacity(parts.len());
        for (k, &(ty, offset)) in parts.iter().enumerate() {
            let v = match (ty, runtime_len) {
                (DataType::Array { elem, len: None, stride }, Some(n)) => {
                    self.array_json(elem, n, *stride, bytes, offset as usize)
                }
                _ => self.decode(ty, bytes, offset as usize),
            };
            values.push(v.map_err(|e| at_member(layout, k, e))?);
        }
        Ok(if values.len() == 1 { values.remove(0) } else { Json::Array(values) })
    }

    /// Write `j` as a `ty` at `at`; `top` allows a runtime array (a block's last member).
    fn encode(&self, ty: &DataType, j: &Json, out: &mut [u8], at: usize, top: bool) -> Result<(), String> {
        match ty {
            DataType::Scalar(s) => {
                let b = self.scalar_bytes(*s, j)?;
                place(out, at, &b)
            }
            DataType::Vector { scalar, lanes } => {
                let lanes_json = list(j, *lanes as usize, "lanes")?;
                for (k, l) in lanes_json.iter().enumerate() {
                    let b = self.scalar_bytes(*scalar, l).map_err(|e| format!("lane {k}: {e}"))?;
                    place(out, at + k * scalar.bytes() as usize, &b)?;
                }
                Ok(())
            }
            DataType::Matrix { scalar, columns, rows, stride, row_major } => {
                let cols = list(j, *columns as usize, "columns")?;
                for (c, col) in cols.iter().enumerate() {
                    let lanes = list(col, *rows as usize, "rows").map_err(|e| format!("column {c}: {e}"))?;
                    for (r, l) in lanes.iter().enumerate() {
                        let b = self.scalar_bytes(*scalar, l).map_err(|e| format!("column {c}, row {r}: {e}"))?;
                        place(out, at + matrix_offset(*scalar, *stride, *row_major, c, r), &b)?;
                    }
                }
                Ok(())
            }
            DataType::Array { elem, len, stride } => {
                let n = match len {
                    Some(n) => *n,
                    None if top => runtime_len_of(j)?,
                    None => return Err("a runtime array that is not a block's last member".into()),
                };
                // A fill: encode the value once, copy it to every element. A
                // block's fixed-size array takes one too, of its length: the
                // interpreter's `buffer<T>` of a `var<storage> x: array<T, N>`.
                if let Json::Object(o) = j {
                    if top {
                        let fill_len = runtime_len_of(j)?;
                        if fill_len != n {
                            return Err(format!("a fill of {fill_len} elements for an array of {n}"));
                        }
                        let mut one = vec![0u8; elem.extent() as usize];
                        self.encode(elem, &o["fill"], &mut one, 0, false).map_err(|e| format!("fill: {e}"))?;
                        for k in 0..n as usize {
                            place(out, at + k * *stride as usize, &one)?;
                        }
                        return Ok(());
                    }
                }
                let items = list(j, n as usize, "elements")?;
                if let Some(t) = self.bulk(elem, *stride) {
                    let b = buffer_to_host_bytes(&self.m, t, j)?;
                    return place(out, at, &b);
                }
                for (k, e) in items.iter().enumerate() {
                    self.encode(elem, e, out, at + k * *stride as usize, false)
                        .map_err(|e| format!("element {k}: {e}"))?;
                }
                Ok(())
            }
            // A struct inside a block is always its member list, as the
            // interpreter spells a struct value (only the block itself, the
            // binding's interface, stands for its one member).
            DataType::Struct(s) => {
                let fields = list(j, s.members.len(), "members")?;
                for (k, (m, v)) in s.members.iter().zip(fields).enumerate() {
                    self.encode(&m.ty, v, out, at + m.offset as usize, false)
                        .map_err(|e| at_member(s, k, e).to_string())?;
                }
                Ok(())
            }
        }
    }

    fn decode(&self, ty: &DataType, bytes: &[u8], at: usize) -> Result<Json, String> {
        match ty {
            DataType::Scalar(s) => self.scalar_json(*s, slice(bytes, at, s.bytes() as usize)?),
            DataType::Vector { scalar, lanes } => (0..*lanes as usize)
                .map(|k| {
                    self.scalar_json(*scalar, slice(bytes, at + k * scalar.bytes() as usize, scalar.bytes() as usize)?)
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Json::Array),
            DataType::Matrix { scalar, columns, rows, stride, row_major } => {
                let mut cols = Vec::with_capacity(*columns as usize);
                for c in 0..*columns as usize {
                    let mut col = Vec::with_capacity(*rows as usize);
                    for r in 0..*rows as usize {
                        let off = at + matrix_offset(*scalar, *stride, *row_major, c, r);
                        col.push(self.scalar_json(*scalar, slice(bytes, off, scalar.bytes() as usize)?)?);
                    }
                    cols.push(Json::Array(col));
                }
                Ok(Json::Array(cols))
            }
            DataType::Array { elem, len: Some(n), stride } => self.array_json(elem, *n, *stride, bytes, at),
            DataType::Array { len: None, .. } => Err("a runtime array that is not a block's last member".into()),
            DataType::Struct(s) => s
                .members
                .iter()
                .enumerate()
                .map(|(k, m)| {
                    self.decode(&m.ty, bytes, at + m.offset as usize).map_err(|e| at_member(s, k, e).to_string())
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Json::Array),
        }
    }

    fn array_json(&self, elem: &DataType, n: u64, stride: u32, bytes: &[u8], at: usize) -> Result<Json, String> {
        if let Some(t) = self.bulk(elem, stride) {
            let len = (n as usize).checked_mul(stride as usize).ok_or("array size overflows")?;
            return Ok(buffer_from_host_bytes(&self.m, t, slice(bytes, at, len)?)?);
        }
        (0..n as usize)
            .map(|k| self.decode(elem, bytes, at + k * stride as usize).map_err(|e| format!("element {k}: {e}")))
            .collect::<Result<Vec<_>, _>>()
            .map(Json::Array)
    }
}

/// Where lane (`column`, `row`) of a matrix lives.
fn matrix_offset(scalar: Scalar, stride: u32, row_major: bool, column: usize, row: usize) -> usize {
    let b = scalar.bytes() as usize;
    if row_major {
        row * stride as usize + column * b
    } else {
        column * stride as usize + row * b
    }
}

/// What a block's value is made of: each part's type and byte offset. A
/// block of one member stands for that member, and a struct of one member
/// for its member, as deep as they nest: naga wraps a WGSL struct and a
/// GLSL block in a block of its own where glslang writes the GLSL block as
/// it is, and the front end binds all of them by this one reading. A
/// struct with several members, or one inside an array, is its member
/// list, as the interpreter spells a struct value.
pub(crate) fn parts(layout: &StructLayout) -> Vec<(&DataType, u32)> {
    let [m] = &layout.members[..] else {
        return layout.members.iter().map(|m| (&m.ty, m.offset)).collect();
    };
    let (mut ty, mut at) = (&m.ty, m.offset);
    while let DataType::Struct(s) = ty {
        let [inner] = &s.members[..] else { break };
        (ty, at) = (&inner.ty, at + inner.offset);
    }
    vec![(ty, at)]
}

fn runtime_len_of(j: &Json) -> Result<u64, String> {
    match j {
        Json::Array(a) => Ok(a.len() as u64),
        Json::Object(o) if o.contains_key("fill") && o.len() == 2 => {
            let len = o.get("len").and_then(Json::as_u64).ok_or("`fill` needs a `len`")?;
            if len > MAX_FILL_LEN {
                return Err(format!("`len` {len} exceeds the runner's limit of {MAX_FILL_LEN} elements"));
            }
            Ok(len)
        }
        _ => Err(format!("expected a runtime array (a list or {{\"fill\": v, \"len\": n}}), found {}", short(j))),
    }
}

fn list<'j>(j: &'j Json, n: usize, what: &str) -> Result<&'j Vec<Json>, String> {
    match j {
        Json::Array(a) if a.len() == n => Ok(a),
        Json::Array(a) => Err(format!("expected {n} {what}, found {}", a.len())),
        _ => Err(format!("expected a list of {n} {what}, found {}", short(j))),
    }
}

/// A JSON value for a message, cut to a readable length.
fn short(j: &Json) -> String {
    let s = j.to_string();
    if s.len() > 60 {
        let cut = (0..=57).rev().find(|&k| s.is_char_boundary(k)).unwrap_or(0);
        format!("{}...", &s[..cut])
    } else {
        s
    }
}

fn at_member(layout: &StructLayout, k: usize, message: String) -> CodecError {
    let member = (layout.members.len() > 1).then(|| (k, layout.members[k].name.clone()));
    CodecError { member, message }
}

fn place(out: &mut [u8], at: usize, b: &[u8]) -> Result<(), String> {
    let end = at
        .checked_add(b.len())
        .filter(|&e| e <= out.len())
        .ok_or_else(|| format!("internal: {} bytes at offset {at} outside the {}-byte block", b.len(), out.len()))?;
    out[at..end].copy_from_slice(b);
    Ok(())
}

fn slice(bytes: &[u8], at: usize, len: usize) -> Result<&[u8], String> {
    at.checked_add(len)
        .and_then(|end| bytes.get(at..end))
        .ok_or_else(|| format!("{len} bytes at offset {at} outside the {}-byte buffer read back", bytes.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use xir_spirv::reflect::Member;

    const F32: Scalar = Scalar::Float { bits: 32 };
    const U32: Scalar = Scalar::Int { bits: 32, signed: false };

    fn block(members: Vec<(u32, DataType)>) -> StructLayout {
        StructLayout {
            name: None,
            members: members.into_iter().map(|(offset, ty)| Member { name: None, offset, ty }).collect(),
        }
    }

    fn runtime(elem: DataType, stride: u32) -> DataType {
        DataType::Array { elem: Box::new(elem), len: None, stride }
    }

    #[test]
    fn a_runtime_array_block_is_its_element_list_with_the_interpreters_spelling() {
        let c = Codec::new();
        let b = block(vec![(0, runtime(DataType::Scalar(F32), 4))]);
        let j = json!([1.5, "nan", "-0.0", "inf", "0x7fc00001"]);
        let enc = c.block_to_bytes(&b, &j).unwrap();
        assert_eq!(enc.bytes.len(), 20);
        assert_eq!(enc.runtime_len, Some(5));
        assert_eq!(c.block_from_bytes(&b, &enc.bytes, enc.runtime_len).unwrap(), j);
        let fill = c.block_to_bytes(&b, &json!({"fill": 2, "len": 3})).unwrap();
        assert_eq!(c.block_from_bytes(&b, &fill.bytes, fill.runtime_len).unwrap(), json!([2.0, 2.0, 2.0]));
    }

    #[test]
    fn a_fixed_size_array_block_takes_a_fill_of_its_length() {
        let c = Codec::new();
        let b = block(vec![(0, DataType::Array { elem: Box::new(DataType::Scalar(U32)), len: Some(3), stride: 4 })]);
        let fill = c.block_to_bytes(&b, &json!({"fill": 7, "len": 3})).unwrap();
        assert_eq!(fill.runtime_len, None);
        assert_eq!(c.block_from_bytes(&b, &fill.bytes, None).unwrap(), json!([7, 7, 7]));
        let Err(short) = c.block_to_bytes(&b, &json!({"fill": 7, "len": 2})) else { panic!("a short fill encoded") };
        assert_eq!(short.to_string(), "a fill of 2 elements for an array of 3");
    }

    #[test]
    fn explicit_offsets_and_strides_are_honoured() {
        let c = Codec::new();
        // struct { u32 n @0; vec3<f32> v @16; f32 data[] @32 stride 8 }
        let vec3 = DataType::Vector { scalar: F32, lanes: 3 };
        let b = block(vec![(0, DataType::Scalar(U32)), (16, vec3), (32, runtime(DataType::Scalar(F32), 8))]);
        let j = json!([7, [1.0, 2.0, 3.0], [4.0, 5.0]]);
        let enc = c.block_to_bytes(&b, &j).unwrap();
        assert_eq!(enc.bytes.len(), 48);
        assert_eq!(&enc.bytes[0..4], &7u32.to_le_bytes());
        assert_eq!(&enc.bytes[24..28], &3.0f32.to_le_bytes());
        assert_eq!(&enc.bytes[40..44], &5.0f32.to_le_bytes());
        assert_eq!(&enc.bytes[44..48], &[0; 4], "padding stays zero");
        assert_eq!(c.block_from_bytes(&b, &enc.bytes, enc.runtime_len).unwrap(), j);
    }

    #[test]
    fn a_block_wrapping_a_struct_of_one_member_is_that_member_and_other_structs_are_member_lists() {
        let c = Codec::new();
        let one = |ty| DataType::Struct(block(vec![(0, ty)]));
        let round_trip = |b: &StructLayout, j: Json| {
            let enc = c.block_to_bytes(b, &j).unwrap();
            assert_eq!(c.block_from_bytes(b, &enc.bytes, enc.runtime_len).unwrap(), j);
            enc.bytes
        };
        // naga's block around a WGSL `struct Counter { n: u32 }`: the value of `n`.
        let counter = block(vec![(4, one(DataType::Scalar(U32)))]);
        assert_eq!(round_trip(&counter, json!(7)), [0, 0, 0, 0, 7, 0, 0, 0]);
        // A runtime array of `struct W { v: f32 }`: each element `[v]`.
        round_trip(&block(vec![(0, runtime(one(DataType::Scalar(F32)), 4))]), json!([[1.5], [2.5]]));
        // A struct of one member beside another member, and two levels down.
        let pair = block(vec![(0, one(DataType::Scalar(U32))), (4, DataType::Scalar(F32))]);
        assert_eq!(round_trip(&pair, json!([[7], 1.0]))[..4], 7u32.to_le_bytes());
        // naga's block around a GLSL block of one struct of one member.
        round_trip(&block(vec![(0, one(one(one(DataType::Scalar(U32)))))]), json!(7));
        let e = c.block_to_bytes(&pair, &json!([7, 1.0])).err().unwrap();
        assert_eq!(e.to_string(), "member 0: expected a list of 1 members, found 7");
    }

    #[test]
    fn matrices_are_column_lists_in_either_major_order() {
        let c = Codec::new();
        let m = |row_major| DataType::Matrix { scalar: F32, columns: 2, rows: 3, stride: 16, row_major };
        let j = json!([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let col = c.block_to_bytes(&block(vec![(0, m(false))]), &j).unwrap();
        assert_eq!(&col.bytes[16..20], &4.0f32.to_le_bytes(), "column 1 row 0");
        let row = c.block_to_bytes(&block(vec![(0, m(true))]), &j).unwrap();
        assert_eq!(&row.bytes[4..8], &4.0f32.to_le_bytes(), "row 0 column 1");
        assert_eq!(&row.bytes[16..20], &2.0f32.to_le_bytes(), "row 1 column 0");
        assert_eq!(c.block_from_bytes(&block(vec![(0, m(true))]), &row.bytes, None).unwrap(), j);
    }

    #[test]
    fn errors_name_the_member_and_element() {
        let c = Codec::new();
        let b = block(vec![(0, DataType::Scalar(U32)), (16, runtime(DataType::Scalar(F32), 4))]);
        let err = |member: Option<usize>, message: &str| CodecError {
            member: member.map(|k| (k, None)),
            message: message.to_string(),
        };
        let e = c.block_to_bytes(&b, &json!([1, [1.0, true]])).err().unwrap();
        assert_eq!(e, err(Some(1), "element 1: expected a float, found true"));
        assert_eq!(e.to_string(), "member 1: element 1: expected a float, found true");
        let e = c.block_to_bytes(&b, &json!([1])).err().unwrap();
        assert_eq!(e, err(None, "expected 2 members, found 1"));
        assert_eq!(e.to_string(), "expected 2 members, found 1");
        let e = c.block_to_bytes(&b, &json!([-1, []])).err().unwrap();
        assert_eq!(e, err(Some(0), "-1 does not fit in u32"));
        let e = c.block_to_bytes(&b, &json!([1, {"fill": 0, "len": MAX_FILL_LEN + 1}])).err().unwrap();
        let limit = format!("`len` {} exceeds the runner's limit of {MAX_FILL_LEN} elements", MAX_FILL_LEN + 1);
        assert_eq!(e, err(Some(1), &limit));
    }
}
