//! The runner's side of bindless textures (`abi.rs`, the 2D / 3D texture
//! heaps; `emit/sampling.rs`): texture slots of `bindless_array` inputs
//! (`{"elem": "f32", "size": [...], "texels": [...], "mips": [...]}`,
//! docs/inputs-format.md) become sampled images with their whole mip chain
//! in the heap of their dimension, and the slot's metadata record holds its
//! index in that heap (`{heap index, 0}`: the first word, like a buffer
//! slot's buffer-heap index). The heaps are read-only (bindless texture
//! writes are refused at the handoff), so texture slots come back as given,
//! in the interpreter's output encoding.
//!
//! Each heap texture is one `R32G32B32A32_SFLOAT` image (the heaps are f32
//! sampled images; an i32 / u32 slot is refused by name) in device memory,
//! optimal tiling, `levels` mip levels uploaded from one staging buffer and
//! left in SHADER_READ_ONLY_OPTIMAL. The format must support sampled images
//! with linear filtering on the device (checked, refused by name
//! otherwise). An empty heap binds one 1×1 texture so the variable-count
//! binding is never empty.

use ash::vk;
use serde_json::Value as Json;
use xir::{Module, TypeTable};

use super::dispatch::{host_buffer, vk_err, Resource};
use super::{device::Device, RunError};
use xir_spirv::abi::{KernelAbi, PropertyKind};

/// A texture slot of a bindless argument's input that does not describe a
/// texture this runner can upload (the reason names the JSON field).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("slot {slot}: {reason}")]
pub struct SlotError {
    pub slot: usize,
    pub reason: String,
}
/// Bytes of one f32 RGBA texel.
const TEXEL_BYTES: usize = 16;

/// One texture of a heap: f32 RGBA texels of every level, level 0 first, x fastest.
#[derive(Clone, Debug, PartialEq)]
pub struct HeapTexture {
    pub dim: u32,
    pub size: [u32; 3],
    pub levels: u32,
    pub data: Vec<u8>,
}

fn level_extent(s: u32, l: u32) -> u32 {
    if l >= 32 {
        1
    } else {
        (s >> l).max(1)
    }
}

impl HeapTexture {
    /// Texels of level `l`, in u128: three u32 extents can overflow u64.
    fn level_texels_wide(&self, l: u32) -> u128 {
        (0..3).map(|k| u128::from(level_extent(self.size[k], l))).product()
    }

    /// Texels of level `l` of a texture within `MAX_TEXELS`.
    fn level_texels(&self, l: u32) -> usize {
        self.level_texels_wide(l) as usize
    }
}

/// The largest difference between a device's filtered sample and the
/// interpreter's, for texels within a range of `range` (max - min) on a
/// `dim`-dimensional texture (docs/vulkan.md, "Sampling"): each dimension's
/// weight is quantized to `subTexelPrecisionBits`, the mip blend to
/// `mipmapPrecisionBits`, so `(dim * 2^-subTexel + 2^-mipmap) * range`, plus
/// 2^-20 for f32 rounding. Point samples at texel centres have no such error
/// and are compared exactly.
pub fn filter_tolerance(device: &Device, dim: u32, range: f64) -> f64 {
    // SAFETY: `physical` belongs to `instance`.
    let limits = unsafe { device.instance.get_physical_device_properties(device.physical).limits };
    let sub = (-f64::from(limits.sub_texel_precision_bits)).exp2();
    let mip = (-f64::from(limits.mipmap_precision_bits)).exp2();
    (f64::from(dim) * sub + mip) * range + (-20f64).exp2()
}

/// Texture slots taken out of the bindless inputs, by heap.
#[derive(Default)]
pub(crate) struct Textures {
    /// The 2D and 3D heaps' textures, in heap-index order.
    pub heaps: [Vec<HeapTexture>; 2],
    /// Per bindless argument: its texture slots (slot, output JSON).
    owners: Vec<(usize, Vec<(usize, Json)>)>,
    /// The ABI binds a texture heap: a slot that cannot be bound is an error
    /// (otherwise such a slot is only passed through to the outputs).
    strict: bool,
}

impl Textures {
    /// Texture slots for a kernel of `abi`.
    pub fn for_abi(abi: &KernelAbi) -> Textures {
        let strict =
            abi.properties.iter().any(|p| matches!(p.kind, PropertyKind::Texture2dHeap | PropertyKind::Texture3dHeap));
        Textures { strict, ..Default::default() }
    }

    /// Take the texture slots of argument `arg`'s input `j` into the heaps;
    /// returns the input with those slots `null` (for the buffer side,
    /// `bindless.rs`) and per texture slot its heap index.
    pub fn take(&mut self, module: &Module, arg: usize, j: &Json) -> Result<(Json, Vec<(usize, u32)>), SlotError> {
        let mut rest = j.clone();
        let Some(slots) = rest.get_mut("slots").and_then(Json::as_array_mut) else { return Ok((rest, Vec::new())) };
        let mut indices = Vec::new();
        let mut mine = Vec::new();
        for (k, s) in slots.iter_mut().enumerate() {
            if !s.as_object().is_some_and(|o| o.contains_key("elem")) {
                continue;
            }
            let t = match texture_from_json(module, s) {
                Ok(t) => t,
                // No texture heap: the slot is never read; it comes back as given.
                Err(_) if !self.strict => {
                    mine.push((k, s.clone()));
                    *s = Json::Null;
                    continue;
                }
                Err(reason) => return Err(SlotError { slot: k, reason }),
            };
            let heap = &mut self.heaps[t.dim as usize - 2];
            indices.push((k, heap.len() as u32));
            mine.push((k, texture_to_json(module, &t).map_err(|reason| SlotError { slot: k, reason })?));
            heap.push(t);
            *s = Json::Null;
        }
        self.owners.push((arg, mine));
        Ok((rest, indices))
    }

    /// Put the texture slots' heap indices into metadata bytes (`{index, 0}` per slot).
    pub fn patch(meta: &mut [u8], indices: &[(usize, u32)]) {
        for &(k, index) in indices {
            if let Some(rec) = meta.get_mut(k * 8..k * 8 + 8) {
                rec[..4].copy_from_slice(&index.to_le_bytes());
                rec[4..].copy_from_slice(&0u32.to_le_bytes());
            }
        }
    }

    /// Insert the sampler heap and the texture heaps the ABI lists into
    /// `data` (the set-0 resources, then the buffer heap when `buffer_heap`),
    /// in descriptor order, after checking the sampled-image and sampler
    /// counts against the device's per-stage and per-set limits.
    pub fn push_resources(
        &self,
        device: &Device,
        abi: &KernelAbi,
        data: &mut Vec<Resource>,
        buffer_heap: bool,
    ) -> Result<(), RunError> {
        let has = |k: PropertyKind| abi.properties.iter().any(|p| p.kind == k);
        let samplers = has(PropertyKind::SamplerHeap);
        if samplers {
            let at = data.len() - usize::from(buffer_heap);
            data.insert(at, Resource::SamplerHeap);
        }
        let mut images = 0u64;
        for (k, kind) in [PropertyKind::Texture2dHeap, PropertyKind::Texture3dHeap].into_iter().enumerate() {
            if has(kind) {
                let mut t = self.heaps[k].clone();
                if t.is_empty() {
                    t.push(HeapTexture { dim: k as u32 + 2, size: [1, 1, 1], levels: 1, data: vec![0; TEXEL_BYTES] });
                }
                images += t.len() as u64;
                data.push(Resource::TextureHeap(t));
            }
        }
        // SAFETY: `physical` belongs to `instance`.
        let limits = unsafe { device.instance.get_physical_device_properties(device.physical).limits };
        let sampler_count = if samplers { u64::from(xir_spirv::abi::SAMPLER_COUNT) } else { 0 };
        for (name, n, max) in [
            ("maxPerStageDescriptorSampledImages", images, limits.max_per_stage_descriptor_sampled_images),
            ("maxDescriptorSetSampledImages", images, limits.max_descriptor_set_sampled_images),
            ("maxPerStageDescriptorSamplers", sampler_count, limits.max_per_stage_descriptor_samplers),
            ("maxDescriptorSetSamplers", sampler_count, limits.max_descriptor_set_samplers),
        ] {
            if n > u64::from(max) {
                return Err(RunError::Abi(format!("{n} descriptors exceed the device's {name} of {max}")));
            }
        }
        Ok(())
    }

    /// Remove the resources [`Textures::push_resources`] added from the dispatch's results.
    pub fn strip(out: &mut Vec<Resource>) {
        out.retain(|r| !matches!(r, Resource::SamplerHeap | Resource::TextureHeap(_)));
    }

    /// Put the texture slots back into the bindless outputs (`name(arg)` names an argument).
    pub fn restore(&self, outputs: &mut xir::interp::Outputs, name: impl Fn(usize) -> String) {
        for (a, slots) in &self.owners {
            let Some(list) = outputs.buffers.get_mut(&name(*a)).and_then(|j| j.get_mut("slots")) else { continue };
            let Some(list) = list.as_array_mut() else { continue };
            for (k, j) in slots {
                if let Some(s) = list.get_mut(*k) {
                    *s = j.clone();
                }
            }
        }
    }
}

/// Most texels one texture slot may have (bounds the host allocation).
const MAX_TEXELS: u64 = 1 << 26;

/// Parse a texture slot (f32 only), every level.
fn texture_from_json(module: &Module, j: &Json) -> Result<HeapTexture, String> {
    match j.get("elem").and_then(Json::as_str) {
        Some("f32") => {}
        Some(e @ ("i32" | "u32")) => {
            return Err(format!(
                "a `{e}` texture slot: the texture heaps are f32 sampled images (sampling returns f32; integer \
                 textures are `texture2d<T>` / `texture3d<T>` arguments)"
            ))
        }
        _ => return Err("a texture slot needs `elem`: \"f32\"".into()),
    }
    let sz = j.get("size").and_then(Json::as_array).ok_or("a texture needs `size`")?;
    let dim = sz.len() as u32;
    if !(2..=3).contains(&dim) {
        return Err(format!("a texture slot has 2 or 3 sizes, found {dim}"));
    }
    let mut size = [1u32; 3];
    for (k, s) in sz.iter().enumerate() {
        size[k] = s.as_u64().and_then(|v| u32::try_from(v).ok()).filter(|&v| v > 0).ok_or("bad texture size")?;
    }
    let mips = j.get("mips").map(|m| m.as_array().ok_or("`mips` must be an array of levels")).transpose()?;
    let levels = match (mips, j.get("levels")) {
        (Some(m), None) => m.len() as u64 + 1,
        (None, Some(l)) => l.as_u64().filter(|&l| l >= 1).ok_or("`levels` must be a positive integer")?,
        (None, None) => 1,
        (Some(_), Some(_)) => return Err("a texture takes `mips` or `levels`, not both".into()),
    };
    let most = 32 - size.iter().max().copied().unwrap_or(1).leading_zeros();
    if levels > most as u64 {
        return Err(format!("{levels} mip levels for a texture of size {:?} (at most {most})", &size[..dim as usize]));
    }
    let mut t = HeapTexture { dim, size, levels: levels as u32, data: Vec::new() };
    let total: u128 = (0..t.levels).map(|l| t.level_texels_wide(l)).sum();
    if total > u128::from(MAX_TEXELS) {
        return Err(format!("a texture of {total} texels exceeds the runner's limit"));
    }
    for l in 0..t.levels {
        let n = t.level_texels(l);
        let texels: Vec<Json> = match (j.get("fill"), l) {
            (Some(f), _) => vec![f.clone(); n],
            (None, 0) => {
                j.get("texels").and_then(Json::as_array).cloned().ok_or("a texture needs `texels` or `fill`")?
            }
            (None, _) => {
                mips.and_then(|m| m[l as usize - 1].as_array()).cloned().ok_or("a mip level is not an array")?
            }
        };
        if texels.len() != n {
            return Err(format!("{} texels given for level {l} of {n}", texels.len()));
        }
        for x in texels {
            let lanes = x.as_array().filter(|a| a.len() == 4).ok_or("a texel is 4 values")?;
            t.data.extend(xir::interp::buffer_to_host_bytes(module, TypeTable::F32, &Json::Array(lanes.clone()))?);
        }
    }
    Ok(t)
}

/// The interpreter's output encoding of a texture slot.
fn texture_to_json(module: &Module, t: &HeapTexture) -> Result<Json, String> {
    let mut at = 0;
    let mut level = |l: u32| -> Result<Json, String> {
        let n = t.level_texels(l) * TEXEL_BYTES;
        let lanes = xir::interp::buffer_from_host_bytes(module, TypeTable::F32, &t.data[at..at + n])?;
        at += n;
        let lanes = lanes.as_array().cloned().unwrap_or_default();
        Ok(Json::Array(lanes.chunks(4).map(|c| Json::Array(c.to_vec())).collect()))
    };
    let mut j = serde_json::json!({ "elem": "f32", "size": t.size[..t.dim as usize].to_vec(), "texels": level(0)? });
    if t.levels > 1 {
        j["mips"] = Json::Array((1..t.levels).map(&mut level).collect::<Result<_, _>>()?);
    }
    Ok(j)
}

/// The Vulkan objects of one heap texture; null handles until created.
#[derive(Default)]
pub struct HeapImage {
    pub image: vk::Image,
    pub memory: vk::DeviceMemory,
    pub view: vk::ImageView,
    pub staging: vk::Buffer,
    pub staging_memory: vk::DeviceMemory,
    regions: Vec<vk::BufferImageCopy>,
    levels: u32,
}

impl HeapImage {
    /// Destroy every object (null handles are skipped by Vulkan).
    ///
    /// # Safety
    /// The objects were created from `d` and are not in use by the device.
    pub unsafe fn destroy(self, d: &ash::Device) {
        d.destroy_image_view(self.view, None);
        d.destroy_image(self.image, None);
        d.free_memory(self.memory, None);
        d.destroy_buffer(self.staging, None);
        d.free_memory(self.staging_memory, None);
    }
}

/// Create the sampled image of `t` with its levels, view and staging buffer into `o`.
/// On error, whatever was created is in `o` for the caller to destroy.
///
/// # Safety
/// `device` is live.
pub unsafe fn create(device: &Device, o: &mut HeapImage, t: &HeapTexture) -> Result<(), RunError> {
    let d = &device.device;
    let fmt = vk::Format::R32G32B32A32_SFLOAT;
    let feats = device.instance.get_physical_device_format_properties(device.physical, fmt).optimal_tiling_features;
    let need = vk::FormatFeatureFlags::SAMPLED_IMAGE | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR;
    if !feats.contains(need) {
        return Err(RunError::Abi(format!(
            "{} cannot sample R32G32B32A32_SFLOAT with linear filtering (format features {feats:?})",
            device.name
        )));
    }
    let (image_type, view_type) = match t.dim {
        2 if t.size[2] == 1 => (vk::ImageType::TYPE_2D, vk::ImageViewType::TYPE_2D),
        3 => (vk::ImageType::TYPE_3D, vk::ImageViewType::TYPE_3D),
        _ => return Err(RunError::Abi(format!("a {}D heap texture of size {:?}", t.dim, t.size))),
    };
    let limits = device.instance.get_physical_device_properties(device.physical).limits;
    let (name, max) = if t.dim == 2 {
        ("maxImageDimension2D", limits.max_image_dimension2_d)
    } else {
        ("maxImageDimension3D", limits.max_image_dimension3_d)
    };
    if t.size.iter().any(|&s| s > max) {
        return Err(RunError::Abi(format!("a heap texture of size {:?} exceeds the device's {name} of {max}", t.size)));
    }
    let extent = vk::Extent3D { width: t.size[0], height: t.size[1], depth: t.size[2] };
    o.image = d
        .create_image(
            &vk::ImageCreateInfo::default()
                .image_type(image_type)
                .format(fmt)
                .extent(extent)
                .mip_levels(t.levels)
                .array_layers(1)
                .samples(vk::SampleCountFlags::TYPE_1)
                .tiling(vk::ImageTiling::OPTIMAL)
                .usage(vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST)
                .sharing_mode(vk::SharingMode::EXCLUSIVE)
                .initial_layout(vk::ImageLayout::UNDEFINED),
            None,
        )
        .map_err(vk_err("vkCreateImage"))?;
    o.memory = super::image::image_memory(device, o.image, "a sampled image")?;
    o.levels = t.levels;
    o.view = d
        .create_image_view(
            &vk::ImageViewCreateInfo::default()
                .image(o.image)
                .view_type(view_type)
                .format(fmt)
                .subresource_range(range(t.levels)),
            None,
        )
        .map_err(vk_err("vkCreateImageView"))?;
    let mut offset = 0u64;
    for l in 0..t.levels {
        let e = |k: usize| level_extent(t.size[k], l);
        o.regions.push(
            vk::BufferImageCopy::default()
                .buffer_offset(offset)
                .image_subresource(
                    vk::ImageSubresourceLayers::default()
                        .aspect_mask(vk::ImageAspectFlags::COLOR)
                        .mip_level(l)
                        .layer_count(1),
                )
                .image_extent(vk::Extent3D { width: e(0), height: e(1), depth: e(2) }),
        );
        offset += (t.level_texels(l) * TEXEL_BYTES) as u64;
    }
    let (staging, mem) = host_buffer(device, &t.data, vk::BufferUsageFlags::TRANSFER_SRC)?;
    o.staging = staging;
    o.staging_memory = mem;
    Ok(())
}

fn range(levels: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default().aspect_mask(vk::ImageAspectFlags::COLOR).level_count(levels).layer_count(1)
}

/// Record: staging -> every level, then the image in SHADER_READ_ONLY_OPTIMAL for the compute shader.
///
/// # Safety
/// `cmd` is recording; the objects are live.
pub unsafe fn record_upload(d: &ash::Device, cmd: vk::CommandBuffer, o: &HeapImage) {
    use vk::{AccessFlags as A, ImageLayout as L, PipelineStageFlags as S};
    let barrier = |from: L, to: L, src: A, dst: A| {
        [vk::ImageMemoryBarrier::default()
            .old_layout(from)
            .new_layout(to)
            .src_access_mask(src)
            .dst_access_mask(dst)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(o.image)
            .subresource_range(range(o.levels))]
    };
    let b = barrier(L::UNDEFINED, L::TRANSFER_DST_OPTIMAL, A::empty(), A::TRANSFER_WRITE);
    d.cmd_pipeline_barrier(cmd, S::TOP_OF_PIPE, S::TRANSFER, vk::DependencyFlags::empty(), &[], &[], &b);
    d.cmd_copy_buffer_to_image(cmd, o.staging, o.image, L::TRANSFER_DST_OPTIMAL, &o.regions);
    let b = barrier(L::TRANSFER_DST_OPTIMAL, L::SHADER_READ_ONLY_OPTIMAL, A::TRANSFER_WRITE, A::SHADER_READ);
    d.cmd_pipeline_barrier(cmd, S::TRANSFER, S::COMPUTE_SHADER, vk::DependencyFlags::empty(), &[], &[], &b);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn module() -> Module {
        xir::text::parse_module("kernel @k(%h: bindless_array) block_size(1, 1, 1) {\n^entry:\n  return\n}\n", "t.xir")
            .expect("parses")
    }

    #[test]
    fn texture_slots_go_to_their_heap_and_their_index_into_the_metadata() {
        let m = module();
        let j = json!({"slots": [
            {"u32": [1, 2]},
            {"elem": "f32", "size": [2, 2], "texels": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
             "mips": [[[9, 9, 9, 9]]]},
            {"elem": "f32", "size": [1, 1, 1], "fill": [5, 5, 5, 5]},
            null]});
        let mut t = Textures { strict: true, ..Default::default() };
        let (rest, idx) = t.take(&m, 0, &j).expect("takes");
        assert_eq!(rest["slots"][1], Json::Null);
        assert_eq!(rest["slots"][0], json!({"u32": [1, 2]}));
        assert_eq!(idx, vec![(1, 0), (2, 0)]);
        assert_eq!((t.heaps[0].len(), t.heaps[1].len()), (1, 1));
        let tex = &t.heaps[0][0];
        assert_eq!((tex.levels, tex.data.len()), (2, 5 * TEXEL_BYTES));
        assert_eq!(&tex.data[4 * TEXEL_BYTES..4 * TEXEL_BYTES + 4], &9.0f32.to_le_bytes());
        let mut meta = vec![0xff; 32];
        Textures::patch(&mut meta, &idx);
        assert_eq!(&meta[8..16], &[0, 0, 0, 0, 0, 0, 0, 0]);
        // Back in the outputs, in the interpreter's encoding.
        let mut outputs = xir::interp::Outputs::default();
        outputs.buffers.insert("h".into(), rest);
        t.restore(&mut outputs, |_| "h".into());
        assert_eq!(outputs.buffers["h"]["slots"][1]["mips"], json!([[[9.0, 9.0, 9.0, 9.0]]]));
        assert_eq!(outputs.buffers["h"]["slots"][1]["texels"][3], json!([3.0, 3.0, 3.0, 3.0]));
    }

    #[test]
    fn an_integer_slot_is_refused_only_where_a_texture_heap_is_bound() {
        let m = module();
        let j = json!({"slots": [{"elem": "i32", "size": [1, 1], "texels": [[1, 2, 3, 4]]}]});
        let e = Textures { strict: true, ..Default::default() }.take(&m, 0, &j).unwrap_err();
        assert_eq!(e.slot, 0);
        assert!(e.reason.contains("f32 sampled images"), "{e}");
        let mut t = Textures::default();
        let (rest, idx) = t.take(&m, 0, &j).expect("passes through");
        assert!(idx.is_empty() && t.heaps.iter().all(Vec::is_empty));
        let mut outputs = xir::interp::Outputs::default();
        outputs.buffers.insert("h".into(), rest);
        t.restore(&mut outputs, |_| "h".into());
        assert_eq!(outputs.buffers["h"], j);
        // Too many levels for the size, and a level of the wrong length, are refused.
        let bad = json!({"slots": [{"elem": "f32", "size": [2, 2], "levels": 3, "fill": [0, 0, 0, 0]}]});
        assert!(Textures { strict: true, ..Default::default() }.take(&m, 0, &bad).is_err());
        let bad = json!({"slots": [{"elem": "f32", "size": [2, 1], "texels": [[0, 0, 0, 0], [0, 0, 0, 0]],
            "mips": [[[0, 0, 0, 0], [0, 0, 0, 0]]]}]});
        assert!(Textures { strict: true, ..Default::default() }.take(&m, 0, &bad).is_err());
    }
}
