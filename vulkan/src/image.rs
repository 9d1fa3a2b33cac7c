//! Storage images for the runner: one `R32G32B32A32` image (float, signed or
//! unsigned, by the ABI's texel kind) per texture argument, in device memory
//! with optimal tiling, its view, and one host-visible staging buffer that
//! carries the texels in (before the dispatch) and out (after it). The
//! layout moves UNDEFINED -> TRANSFER_DST -> GENERAL (the dispatch) ->
//! TRANSFER_SRC, with a barrier at each step.

use ash::vk;

use super::dispatch::{host_buffer, vk_err};
use super::{device::Device, RunError};
use xir_spirv::abi::TexelKind;

/// Bytes of one texel (four 32-bit components).
pub const TEXEL_BYTES: usize = 16;

/// The Vulkan objects of one image; null handles until created.
#[derive(Default)]
pub struct ImageObjects {
    pub image: vk::Image,
    pub memory: vk::DeviceMemory,
    pub view: vk::ImageView,
    pub staging: vk::Buffer,
    pub staging_memory: vk::DeviceMemory,
    pub extent: vk::Extent3D,
}

impl ImageObjects {
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

/// The format of a texel kind.
pub fn format(texel: TexelKind) -> vk::Format {
    match texel {
        TexelKind::F32 => vk::Format::R32G32B32A32_SFLOAT,
        TexelKind::I32 => vk::Format::R32G32B32A32_SINT,
        TexelKind::U32 => vk::Format::R32G32B32A32_UINT,
    }
}

/// Create the image, its memory, view and staging buffer (holding `data`) into `o`.
/// On error, whatever was created is in `o` for the caller to destroy.
///
/// # Safety
/// `device` is live.
pub unsafe fn create(
    device: &Device,
    o: &mut ImageObjects,
    dim: u32,
    size: [u32; 3],
    texel: TexelKind,
    data: &[u8],
) -> Result<(), RunError> {
    let d = &device.device;
    let texels: u64 = size.iter().map(|&s| u64::from(s)).product();
    if size.contains(&0) || texels * TEXEL_BYTES as u64 != data.len() as u64 {
        return Err(RunError::Abi(format!("image of size {size:?} with {} bytes of texels", data.len())));
    }
    let (image_type, view_type) = match dim {
        2 if size[2] == 1 => (vk::ImageType::TYPE_2D, vk::ImageViewType::TYPE_2D),
        3 => (vk::ImageType::TYPE_3D, vk::ImageViewType::TYPE_3D),
        _ => return Err(RunError::Abi(format!("a {dim}D image of size {size:?}"))),
    };
    o.extent = vk::Extent3D { width: size[0], height: size[1], depth: size[2] };
    let fmt = format(texel);
    o.image = d
        .create_image(
            &vk::ImageCreateInfo::default()
                .image_type(image_type)
                .format(fmt)
                .extent(o.extent)
                .mip_levels(1)
                .array_layers(1)
                .samples(vk::SampleCountFlags::TYPE_1)
                .tiling(vk::ImageTiling::OPTIMAL)
                // SAMPLED too: a foreign module may read it as a sampled
                // image (`OpImageFetch`; every RGBA32 format supports it).
                .usage(
                    vk::ImageUsageFlags::STORAGE
                        | vk::ImageUsageFlags::SAMPLED
                        | vk::ImageUsageFlags::TRANSFER_SRC
                        | vk::ImageUsageFlags::TRANSFER_DST,
                )
                .sharing_mode(vk::SharingMode::EXCLUSIVE)
                .initial_layout(vk::ImageLayout::UNDEFINED),
            None,
        )
        .map_err(vk_err("vkCreateImage"))?;
    o.memory = image_memory(device, o.image, "a storage image")?;
    o.view = d
        .create_image_view(
            &vk::ImageViewCreateInfo::default()
                .image(o.image)
                .view_type(view_type)
                .format(fmt)
                .subresource_range(range()),
            None,
        )
        .map_err(vk_err("vkCreateImageView"))?;
    let (staging, mem) =
        host_buffer(device, data, vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST)?;
    o.staging = staging;
    o.staging_memory = mem;
    Ok(())
}

fn range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default().aspect_mask(vk::ImageAspectFlags::COLOR).level_count(1).layer_count(1)
}

fn copy_region(o: &ImageObjects) -> [vk::BufferImageCopy; 1] {
    [vk::BufferImageCopy::default()
        .image_subresource(
            vk::ImageSubresourceLayers::default().aspect_mask(vk::ImageAspectFlags::COLOR).layer_count(1),
        )
        .image_extent(o.extent)]
}

/// A layout transition of the whole image.
///
/// # Safety
/// `cmd` is recording; `o.image` is live.
unsafe fn transition(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    o: &ImageObjects,
    from: (vk::ImageLayout, vk::AccessFlags, vk::PipelineStageFlags),
    to: (vk::ImageLayout, vk::AccessFlags, vk::PipelineStageFlags),
) {
    let barrier = [vk::ImageMemoryBarrier::default()
        .old_layout(from.0)
        .new_layout(to.0)
        .src_access_mask(from.1)
        .dst_access_mask(to.1)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(o.image)
        .subresource_range(range())];
    d.cmd_pipeline_barrier(cmd, from.2, to.2, vk::DependencyFlags::empty(), &[], &[], &barrier);
}

/// Record: staging -> image, then the image in GENERAL for the compute shader.
///
/// # Safety
/// `cmd` is recording; the objects are live.
pub unsafe fn record_upload(d: &ash::Device, cmd: vk::CommandBuffer, o: &ImageObjects) {
    use vk::{AccessFlags as A, ImageLayout as L, PipelineStageFlags as S};
    transition(
        d,
        cmd,
        o,
        (L::UNDEFINED, A::empty(), S::TOP_OF_PIPE),
        (L::TRANSFER_DST_OPTIMAL, A::TRANSFER_WRITE, S::TRANSFER),
    );
    d.cmd_copy_buffer_to_image(cmd, o.staging, o.image, L::TRANSFER_DST_OPTIMAL, &copy_region(o));
    transition(
        d,
        cmd,
        o,
        (L::TRANSFER_DST_OPTIMAL, A::TRANSFER_WRITE, S::TRANSFER),
        (L::GENERAL, A::SHADER_READ | A::SHADER_WRITE, S::COMPUTE_SHADER),
    );
}

/// Record: after the dispatch, image -> staging (the host barrier follows in the caller).
///
/// # Safety
/// `cmd` is recording; the objects are live.
pub unsafe fn record_download(d: &ash::Device, cmd: vk::CommandBuffer, o: &ImageObjects) {
    use vk::{AccessFlags as A, ImageLayout as L, PipelineStageFlags as S};
    transition(
        d,
        cmd,
        o,
        (L::GENERAL, A::SHADER_WRITE, S::COMPUTE_SHADER),
        (L::TRANSFER_SRC_OPTIMAL, A::TRANSFER_READ, S::TRANSFER),
    );
    d.cmd_copy_image_to_buffer(cmd, o.image, L::TRANSFER_SRC_OPTIMAL, o.staging, &copy_region(o));
}

/// Device-local memory (any memory type where the device has no such one)
/// allocated for and bound to `image`; freed again if binding fails, so the
/// caller owns it exactly when this returns `Ok`.
///
/// # Safety
/// `device` is live and `image` is an unbound image of it.
pub(crate) unsafe fn image_memory(device: &Device, image: vk::Image, what: &str) -> Result<vk::DeviceMemory, RunError> {
    let d = &device.device;
    let req = d.get_image_memory_requirements(image);
    let ty = device
        .memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::DEVICE_LOCAL)
        .or_else(|| device.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::empty()))
        .ok_or_else(|| RunError::Vulkan(format!("no memory type for {what}")))?;
    let memory = d
        .allocate_memory(&vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty), None)
        .map_err(vk_err("vkAllocateMemory"))?;
    if let Err(e) = d.bind_image_memory(image, memory, 0) {
        d.free_memory(memory, None);
        return Err(vk_err("vkBindImageMemory")(e));
    }
    Ok(memory)
}
