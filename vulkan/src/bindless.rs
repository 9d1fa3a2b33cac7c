//! The runner's side of bindless buffers (`abi.rs`, "Set 0" and the heaps):
//! interpreter-style `bindless_array` inputs (`{"slots": [...]}`,
//! docs/inputs-format.md) become one metadata buffer per argument that has a
//! `BindlessMetadata` property (per slot: heap index, byte size; an empty
//! slot is `u32::MAX, 0`) and the buffers of the global heap; after the
//! dispatch the heap buffers become the interpreter's output encoding
//! (`{"slots": [null | {"bytes": [...]}]}`) again. An alias slot
//! (`{"alias": k}`) shares slot `k`'s heap buffer. Texture slots are taken
//! out beforehand by `texture_heap.rs`; one reaching this parser is refused
//! by name.
//!
//! Limits ([`DescriptorLimits`], checked by [`check_descriptor_limits`]
//! before any layout exists; the reference: "runtime planning separately
//! checks ordinary descriptor limits, update-after-bind aggregate limits,
//! ..., set count, and `vkGetDescriptorSetLayoutSupport`"): the storage
//! buffers of every set (set 0's plus one per heap entry) against the
//! ordinary per-stage and per-set limits (no set is update-after-bind) and
//! the update-after-bind aggregate limits (Vulkan counts every set against
//! those), all descriptors against `maxPerStageResources` and
//! `maxPerStageUpdateAfterBindResources`, the set count against
//! `maxBoundDescriptorSets`, and the heap's variable-count layout against
//! `vkGetDescriptorSetLayoutSupport`. A refusal names the limit.

use ash::vk;
use serde_json::Value as Json;
use xir::{FloatFormat, Module, Type};

use super::device::Device;
use super::RunError;

/// One bindless argument's slots: `None` empty, else the slot's bytes (an
/// alias slot holds a copy of its target's, so it prints like the
/// interpreter's output); `alias[k]`: slot `k` shares the earlier slot's buffer.
pub(crate) struct Slots {
    bytes: Vec<Option<Vec<u8>>>,
    alias: Vec<Option<usize>>,
}

impl std::ops::Deref for Slots {
    type Target = [Option<Vec<u8>>];
    fn deref(&self) -> &Self::Target {
        &self.bytes
    }
}

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
    pub fn add(&mut self, arg: usize, slots: Slots) -> Result<Vec<u8>, SlotsError> {
        let mut meta = Vec::with_capacity(slots.len() * 8);
        let mut indices: Vec<Option<usize>> = Vec::with_capacity(slots.len());
        for (k, s) in slots.bytes.into_iter().enumerate() {
            let (index, size) = match s {
                // One heap buffer behind both slots: writes through either are seen through both.
                Some(bytes) if slots.alias[k].is_some() => {
                    let index = slots.alias[k]
                        .and_then(|t| indices[t])
                        .ok_or(SlotsError::at(k, "an alias of a slot without a buffer"))?;
                    indices.push(Some(index));
                    (index as u32, bytes.len() as u32)
                }
                Some(bytes) => {
                    let size =
                        u32::try_from(bytes.len()).map_err(|_| SlotsError::at(k, "a bindless slot over 4 GiB"))?;
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

/// Why a bindless array's input does not parse or fit the heap: the slot
/// it is about (none: the array as a whole) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", .slot.map(|k| format!("slot {k}: ")).unwrap_or_default())]
pub(crate) struct SlotsError {
    pub slot: Option<usize>,
    pub message: String,
}

impl SlotsError {
    fn at(k: usize, message: impl Into<String>) -> Self {
        SlotsError { slot: Some(k), message: message.into() }
    }
}

/// Parse `{"slots": [...]}`: `null`, `{"bytes": [...]}`, `{"<scalar>": [...]}` (values little-endian, packed),
/// or `{"alias": k}` (the buffer of the earlier buffer slot `k`).
pub(crate) fn slots_from_json(module: &Module, j: &Json) -> Result<Slots, SlotsError> {
    let slots = j
        .get("slots")
        .and_then(Json::as_array)
        .ok_or(SlotsError { slot: None, message: "a bindless array needs `slots`".into() })?;
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(slots.len());
    let mut alias = vec![None; slots.len()];
    for (k, s) in slots.iter().enumerate() {
        let slot = match s {
            Json::Null => None,
            Json::Object(o) if o.len() == 1 && o.contains_key("alias") => {
                let t = o["alias"].as_u64().filter(|&t| (t as usize) < k && alias[t as usize].is_none());
                let t = t.ok_or(SlotsError::at(k, "`alias` names an earlier slot that is not an alias"))? as usize;
                alias[k] = Some(t);
                Some(out[t].clone().ok_or(SlotsError::at(k, format!("`alias` {t}: slot {t} is not a buffer")))?)
            }
            Json::Object(o) if o.contains_key("texels") || o.contains_key("size") => {
                return Err(SlotsError::at(
                    k,
                    "it holds a texture, which `texture_heap.rs` takes out before this parser (an internal error)",
                ))
            }
            Json::Object(o) if o.len() == 1 => {
                let (key, vals) = o.iter().next().expect("one entry");
                if key == "bytes" {
                    let bytes = vals.as_array().ok_or(SlotsError::at(k, "`bytes` must be an array"))?;
                    Some(
                        bytes
                            .iter()
                            .map(|b| b.as_u64().filter(|b| *b <= 255).map(|b| b as u8))
                            .collect::<Option<Vec<u8>>>()
                            .ok_or(SlotsError::at(k, "a byte is 0..=255"))?,
                    )
                } else {
                    Some(scalar_bytes(module, key, vals).map_err(|e| SlotsError::at(k, e))?)
                }
            }
            other => {
                return Err(SlotsError::at(
                    k,
                    format!("expected null, {{\"bytes\": [...]}} or {{\"<scalar>\": [...]}}, found {other}"),
                ))
            }
        };
        out.push(slot);
    }
    Ok(Slots { bytes: out, alias })
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
        Some(id) => Ok(xir::interp::buffer_to_host_bytes(module, id, vals)?),
        None => {
            let mut m = module.clone();
            let id = m.types.intern(ty);
            Ok(xir::interp::buffer_to_host_bytes(&m, id, vals)?)
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

/// The device limits a kernel's descriptors are checked against (public so a
/// test can lower one to a reachable value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescriptorLimits {
    pub max_bound_descriptor_sets: u32,
    pub max_per_stage_resources: u32,
    pub max_per_stage_descriptor_storage_buffers: u32,
    pub max_descriptor_set_storage_buffers: u32,
    pub max_per_stage_update_after_bind_resources: u32,
    pub max_per_stage_descriptor_update_after_bind_storage_buffers: u32,
    pub max_descriptor_set_update_after_bind_storage_buffers: u32,
}

impl DescriptorLimits {
    /// The limits of `physical` (Vulkan 1.0 limits and the 1.2 update-after-bind ones).
    pub(crate) fn query(instance: &ash::Instance, physical: vk::PhysicalDevice) -> DescriptorLimits {
        let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p12);
        // SAFETY: Vulkan 1.2 instance query with a valid chain; `physical` comes from `instance`.
        unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
        let l = props2.properties.limits;
        DescriptorLimits {
            max_bound_descriptor_sets: l.max_bound_descriptor_sets,
            max_per_stage_resources: l.max_per_stage_resources,
            max_per_stage_descriptor_storage_buffers: l.max_per_stage_descriptor_storage_buffers,
            max_descriptor_set_storage_buffers: l.max_descriptor_set_storage_buffers,
            max_per_stage_update_after_bind_resources: p12.max_per_stage_update_after_bind_resources,
            max_per_stage_descriptor_update_after_bind_storage_buffers: p12
                .max_per_stage_descriptor_update_after_bind_storage_buffers,
            max_descriptor_set_update_after_bind_storage_buffers: p12
                .max_descriptor_set_update_after_bind_storage_buffers,
        }
    }
}

/// What a dispatch binds, by descriptor count (every descriptor is visible to the compute stage).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DescriptorCounts {
    /// Sets in the pipeline layout.
    pub sets: u32,
    /// Storage buffers outside the heap (set 0).
    pub storage_buffers: u32,
    /// Entries of the buffer heap (0: none).
    pub heap: u32,
    /// Every other descriptor (images, samplers, uniform buffers, accels, texture-heap entries).
    pub other: u32,
}

/// Check `counts` against `limits` (see the module doc); `Err` names the first limit exceeded.
pub fn check_descriptor_limits(limits: &DescriptorLimits, counts: &DescriptorCounts) -> Result<(), RunError> {
    let storage = u64::from(counts.storage_buffers) + u64::from(counts.heap);
    let all = storage + u64::from(counts.other);
    let checks = [
        ("maxBoundDescriptorSets", u64::from(counts.sets), limits.max_bound_descriptor_sets),
        ("maxPerStageDescriptorStorageBuffers", storage, limits.max_per_stage_descriptor_storage_buffers),
        ("maxDescriptorSetStorageBuffers", storage, limits.max_descriptor_set_storage_buffers),
        (
            "maxPerStageDescriptorUpdateAfterBindStorageBuffers",
            storage,
            limits.max_per_stage_descriptor_update_after_bind_storage_buffers,
        ),
        (
            "maxDescriptorSetUpdateAfterBindStorageBuffers",
            storage,
            limits.max_descriptor_set_update_after_bind_storage_buffers,
        ),
        ("maxPerStageResources", all, limits.max_per_stage_resources),
        ("maxPerStageUpdateAfterBindResources", all, limits.max_per_stage_update_after_bind_resources),
    ];
    for (name, n, max) in checks {
        if n > u64::from(max) {
            return Err(RunError::Abi(format!(
                "{n} descriptors exceed the device's {name} of {max} (the buffer heap has {} entries, set 0 {} \
                 storage buffers)",
                counts.heap, counts.storage_buffers
            )));
        }
    }
    Ok(())
}

/// Check a dispatch's descriptors before any layout is created: `bindings` is, per descriptor,
/// its type, its count and whether it is the buffer heap; `sets` the pipeline layout's set count.
pub(crate) fn check_dispatch_limits(
    device: &Device,
    sets: u32,
    bindings: &[(vk::DescriptorType, u32, bool)],
) -> Result<(), RunError> {
    let mut counts = DescriptorCounts { sets, ..Default::default() };
    for &(ty, n, heap) in bindings {
        match (heap, ty) {
            (true, _) => counts.heap += n,
            (false, vk::DescriptorType::STORAGE_BUFFER) => counts.storage_buffers += n,
            _ => counts.other += n,
        }
    }
    check_descriptor_limits(&device.descriptor_limits, &counts)?;
    if counts.heap > 0 {
        check_heap_layout_support(device, counts.heap)?;
    }
    Ok(())
}

/// `vkGetDescriptorSetLayoutSupport` for the buffer heap's set: binding 0, `n` storage buffers,
/// partially bound with a variable count (the layout `dispatch.rs` creates).
pub(crate) fn check_heap_layout_support(device: &Device, n: u32) -> Result<(), RunError> {
    let bindings = [vk::DescriptorSetLayoutBinding::default()
        .binding(0)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .descriptor_count(n)
        .stage_flags(vk::ShaderStageFlags::COMPUTE)];
    let flags = [vk::DescriptorBindingFlags::PARTIALLY_BOUND | vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT];
    let mut flag_info = vk::DescriptorSetLayoutBindingFlagsCreateInfo::default().binding_flags(&flags);
    let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings).push_next(&mut flag_info);
    let mut variable = vk::DescriptorSetVariableDescriptorCountLayoutSupport::default();
    let mut support = vk::DescriptorSetLayoutSupport::default().push_next(&mut variable);
    // SAFETY: a valid create info and output chain for a live device (Vulkan 1.1 core query).
    unsafe { device.device.get_descriptor_set_layout_support(&info, &mut support) };
    if support.supported != vk::TRUE {
        return Err(RunError::Abi(format!(
            "vkGetDescriptorSetLayoutSupport: a buffer heap of {n} storage buffers is not supported by {}",
            device.name
        )));
    }
    if variable.max_variable_descriptor_count < n {
        return Err(RunError::Abi(format!(
            "a buffer heap of {n} storage buffers exceeds the device's maxVariableDescriptorCount of {} \
             (vkGetDescriptorSetLayoutSupport)",
            variable.max_variable_descriptor_count
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(storage: u32) -> DescriptorLimits {
        DescriptorLimits {
            max_bound_descriptor_sets: 4,
            max_per_stage_resources: 1000,
            max_per_stage_descriptor_storage_buffers: 1000,
            max_descriptor_set_storage_buffers: 1000,
            max_per_stage_update_after_bind_resources: 1000,
            max_per_stage_descriptor_update_after_bind_storage_buffers: storage,
            max_descriptor_set_update_after_bind_storage_buffers: 1000,
        }
    }

    #[test]
    fn a_heap_one_over_a_limit_is_refused_by_the_limits_name() {
        let at = DescriptorCounts { sets: 3, storage_buffers: 2, heap: 6, other: 0 };
        assert_eq!(check_descriptor_limits(&limits(8), &at), Ok(()));
        let over = DescriptorCounts { heap: 7, ..at };
        let e = check_descriptor_limits(&limits(8), &over).unwrap_err().to_string();
        assert!(e.contains("maxPerStageDescriptorUpdateAfterBindStorageBuffers of 8") && e.contains("9 desc"), "{e}");
        let e = check_descriptor_limits(&limits(1000), &DescriptorCounts { sets: 5, ..at }).unwrap_err().to_string();
        assert!(e.contains("maxBoundDescriptorSets of 4"), "{e}");
        let e = check_descriptor_limits(&limits(1000), &DescriptorCounts { other: 993, ..at }).unwrap_err().to_string();
        assert!(e.contains("maxPerStageResources of 1000"), "{e}");
    }
}
