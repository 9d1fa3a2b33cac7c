//! The sampler heap of the runner (`abi.rs`: set 1, binding 0): LuisaCompute's
//! 16 samplers as immutable samplers, created once per device on first use
//! and destroyed with it. Sampler `s` is filter `s >> 2` (point,
//! linear_point, linear_linear, anisotropic) and address `s & 3` (edge,
//! repeat, mirror, zero) — the interpreter's `sampling.rs` rules:
//!
//! | filter | mag / min | mipmap | anisotropy |
//! |---|---|---|---|
//! | point | NEAREST | NEAREST | off |
//! | linear_point | LINEAR | NEAREST | off |
//! | linear_linear | LINEAR | LINEAR | off |
//! | anisotropic | LINEAR | LINEAR | `maxAnisotropy` = [`MAX_ANISOTROPY`] clamped to `maxSamplerAnisotropy`, when the device enables `samplerAnisotropy` |
//!
//! Address modes: CLAMP_TO_EDGE, REPEAT, MIRRORED_REPEAT, CLAMP_TO_BORDER
//! with FLOAT_TRANSPARENT_BLACK. Every sampler has `minLod` 0, `maxLod`
//! `VK_LOD_CLAMP_NONE`, no LOD bias, no compare, normalized coordinates. A
//! kernel that may select an anisotropic sampler requires `samplerAnisotropy`
//! (`plan/texture_heap.rs`), so on a device without it the anisotropic
//! entries (then plain trilinear) are never reached by a checked kernel.

use ash::vk;

use super::dispatch::vk_err;
use super::{device::Device, RunError};
use xir_spirv::abi::SAMPLER_COUNT;
pub use xir_spirv::plan::texture_heap::MAX_ANISOTROPY;

/// The create info of sampler `s` on a device with `anisotropy` (`None`: samplerAnisotropy off).
pub fn sampler_info(s: u32, anisotropy: Option<f32>) -> vk::SamplerCreateInfo<'static> {
    let (filter, address) = (s >> 2, s & 3);
    let mag = if filter == 0 { vk::Filter::NEAREST } else { vk::Filter::LINEAR };
    let mip = if filter >= 2 { vk::SamplerMipmapMode::LINEAR } else { vk::SamplerMipmapMode::NEAREST };
    let mode = [
        vk::SamplerAddressMode::CLAMP_TO_EDGE,
        vk::SamplerAddressMode::REPEAT,
        vk::SamplerAddressMode::MIRRORED_REPEAT,
        vk::SamplerAddressMode::CLAMP_TO_BORDER,
    ][address as usize];
    let aniso = if filter == 3 { anisotropy } else { None };
    vk::SamplerCreateInfo::default()
        .mag_filter(mag)
        .min_filter(mag)
        .mipmap_mode(mip)
        .address_mode_u(mode)
        .address_mode_v(mode)
        .address_mode_w(mode)
        .border_color(vk::BorderColor::FLOAT_TRANSPARENT_BLACK)
        .anisotropy_enable(aniso.is_some())
        .max_anisotropy(aniso.unwrap_or(1.0))
        .min_lod(0.0)
        .max_lod(vk::LOD_CLAMP_NONE)
        .unnormalized_coordinates(false)
}

/// The device's 16 immutable samplers, created on first use.
pub(crate) fn samplers(device: &Device) -> Result<Vec<vk::Sampler>, RunError> {
    let mut cache = device.samplers.lock().map_err(|_| RunError::Vulkan("the sampler cache is poisoned".into()))?;
    if !cache.is_empty() {
        return Ok(cache.clone());
    }
    // SAFETY: `physical` belongs to `instance`; the samplers are created from the live device and
    // destroyed in `Device::drop` (or here, on a partial failure).
    unsafe {
        let limits = device.instance.get_physical_device_properties(device.physical).limits;
        let aniso = device
            .enabled
            .contains(xir_spirv::Feature::SamplerAnisotropy)
            .then(|| MAX_ANISOTROPY.min(limits.max_sampler_anisotropy));
        let mut made = Vec::with_capacity(SAMPLER_COUNT as usize);
        for s in 0..SAMPLER_COUNT {
            match device.device.create_sampler(&sampler_info(s, aniso), None) {
                Ok(x) => made.push(x),
                Err(e) => {
                    for x in made {
                        device.device.destroy_sampler(x, None);
                    }
                    return Err(vk_err("vkCreateSampler")(e));
                }
            }
        }
        *cache = made;
    }
    Ok(cache.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_map_to_filters_and_address_modes() {
        let i = sampler_info(0, Some(16.0));
        assert_eq!(
            (i.mag_filter, i.mipmap_mode, i.address_mode_u),
            (vk::Filter::NEAREST, vk::SamplerMipmapMode::NEAREST, vk::SamplerAddressMode::CLAMP_TO_EDGE)
        );
        let i = sampler_info(6, Some(16.0));
        assert_eq!(
            (i.min_filter, i.mipmap_mode, i.address_mode_v),
            (vk::Filter::LINEAR, vk::SamplerMipmapMode::NEAREST, vk::SamplerAddressMode::MIRRORED_REPEAT)
        );
        let i = sampler_info(11, Some(16.0));
        assert_eq!(
            (i.mipmap_mode, i.address_mode_w, i.anisotropy_enable),
            (vk::SamplerMipmapMode::LINEAR, vk::SamplerAddressMode::CLAMP_TO_BORDER, vk::FALSE)
        );
        let i = sampler_info(13, Some(16.0));
        assert_eq!(
            (i.anisotropy_enable, i.max_anisotropy, i.address_mode_u),
            (vk::TRUE, 16.0, vk::SamplerAddressMode::REPEAT)
        );
        assert_eq!(sampler_info(13, None).anisotropy_enable, vk::FALSE);
    }
}
