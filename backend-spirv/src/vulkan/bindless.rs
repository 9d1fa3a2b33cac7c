//! The runner's side of bindless buffers (`abi.rs`, "Set 0" and the heaps):
//! interpreter-style `bindless_array` inputs (`{"slots": [...]}`,
//! docs/inputs-format.md) become one metadata buffer per argument that has a
//! `BindlessMetadata` property (per slot: heap index, byte size; an empty
//! slot is `u32::MAX, 0`) and the buffers of the global heap; after the
//! dispatch the heap buffers become the interpreter's output encoding
//! (`{"slots": [null | {"bytes": [...]}]}`) again. Texture slots are refused
//! by name: the texture heaps are not emitted yet.

use serde_json::Value as Json;
use xir::{FloatFormat, Module, Type};

/// One bindless argument's slots: `None` empty, else the slot's bytes.
pub(crate) type Slots = Vec<Option<Vec<u8>>>;

/// The global buffer heap being assembled from every bound bindless argument.
#[derive(Default)]
pub(crate) struct Heap {
    /// The heap's buffers, in heap-index order.
    pub buffers: Vec<Vec<u8>>,
    /// Per bindless argument: its slots' heap indices (`None`: empty slot).
    pub owners: Vec<(usize, Vec<Option<usize>>)>,
}

impl Heap {
    /// Add argument `arg`'s slots to the heap; returns its metadata bytes.
    pub fn add(&mut self, arg: usize, slots: Slots) -> Result<Vec<u8>, String> {
        let mut meta = Vec::with_capacity(slots.len() * 8);
        let mut indices = Vec::with_capacity(slots.len());
        for s in slots {
            let (index, size) = match s {
                Some(bytes) => {
                    let size = u32::try_from(bytes.len()).map_err(|_| "a bindless slot over 4 GiB".to_string())?;
                    let index = self.buffers.len();
                    self.buffers.push(bytes);
                    indices.push(Some(index));
                    (index as u32, size)
                }
                None => {
                    indices.push(None);
                    (u32::MAX, 0)
                }
            };
            meta.extend_from_slice(&index.to_le_bytes());
            meta.extend_from_slice(&size.to_le_bytes());
        }
        if meta.is_empty() {
            // A zero-slot array still needs a non-empty descriptor range.
            meta.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        }
        self.owners.push((arg, indices));
        Ok(meta)
    }
}

/// Parse `{"slots": [...]}`: `null`, `{"bytes": [...]}`, or `{"<scalar>": [...]}` (values little-endian, packed).
pub(crate) fn slots_from_json(module: &Module, j: &Json) -> Result<Slots, String> {
    let slots = j.get("slots").and_then(Json::as_array).ok_or("a bindless array needs `slots`")?;
    let mut out = Vec::with_capacity(slots.len());
    for (k, s) in slots.iter().enumerate() {
        let slot = match s {
            Json::Null => None,
            Json::Object(o) if o.contains_key("texels") || o.contains_key("size") => {
                return Err(format!(
                    "slot {k} holds a texture; this runner binds only buffer slots (the texture heaps are not emitted)"
                ))
            }
            Json::Object(o) if o.len() == 1 => {
                let (key, vals) = o.iter().next().expect("one entry");
                if key == "bytes" {
                    let bytes = vals.as_array().ok_or(format!("slot {k}: `bytes` must be an array"))?;
                    Some(
                        bytes
                            .iter()
                            .map(|b| b.as_u64().filter(|b| *b <= 255).map(|b| b as u8))
                            .collect::<Option<Vec<u8>>>()
                            .ok_or(format!("slot {k}: a byte is 0..=255"))?,
                    )
                } else {
                    Some(scalar_bytes(module, key, vals).map_err(|e| format!("slot {k}: {e}"))?)
                }
            }
            other => {
                return Err(format!(
                    "slot {k}: expected null, {{\"bytes\": [...]}} or {{\"<scalar>\": [...]}}, found {other}"
                ))
            }
        };
        out.push(slot);
    }
    Ok(out)
}

/// Values of the scalar type named `key` as packed little-endian host bytes.
fn scalar_bytes(module: &Module, key: &str, vals: &Json) -> Result<Vec<u8>, String> {
    let ty = match key {
        "f16" => Type::Float(FloatFormat::F16),
        "f32" => Type::Float(FloatFormat::F32),
        "f64" => Type::Float(FloatFormat::F64),
        _ => {
            let signed = key.starts_with('i');
            let bits: u8 = key
                .get(1..)
                .and_then(|b| b.parse().ok())
                .filter(|b| [8, 16, 32, 64].contains(b) && (signed || key.starts_with('u')))
                .ok_or(format!("`{key}` is not a scalar type name"))?;
            Type::Int { bits, signed }
        }
    };
    // The slot's element type need not occur in the kernel: intern it in a copy.
    match module.types.lookup(&ty) {
        Some(id) => xir::interp::buffer_to_host_bytes(module, id, vals),
        None => {
            let mut m = module.clone();
            let id = m.types.intern(ty);
            xir::interp::buffer_to_host_bytes(&m, id, vals)
        }
    }
}

/// The output encoding of slots (every buffer slot as `{"bytes": [...]}`).
pub(crate) fn slots_to_json(slots: &[Option<Vec<u8>>]) -> Json {
    let slot = |s: &Option<Vec<u8>>| match s {
        None => Json::Null,
        Some(b) => serde_json::json!({ "bytes": b }),
    };
    serde_json::json!({ "slots": slots.iter().map(slot).collect::<Vec<_>>() })
}
