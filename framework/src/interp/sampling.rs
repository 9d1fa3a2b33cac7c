//! Texture sampling (`texture.sample`, `texture.sample_level`,
//! `texture.sample_grad`) on bindless 2D / 3D texture slots with mip levels:
//! the interpreter's exact rules for LuisaCompute's 16 samplers, written as
//! the Vulkan specification's "Texel Filtering" chapter computes them, so
//! that a Vulkan device can be compared with these results.
//!
//! **Sampler selector** (LuisaCompute's `Sampler::code()`): `filter << 2 |
//! address`, so `selector = filter * 4 + address`; filters `0` point, `1`
//! linear_point, `2` linear_linear, `3` anisotropic; address modes `0` edge
//! (clamp to edge), `1` repeat, `2` mirror (mirrored repeat), `3` zero
//! (clamp to a transparent-black border). A selector of 16 or more is an
//! error (a Vulkan device, which cannot report it, yields `(0, 0, 0, 0)`
//! there: docs/vulkan.md, "Sampling").
//!
//! **Level of detail** `λ`: `sample` in a compute kernel is level 0 (there
//! are no implicit derivatives outside fragment shaders: Vulkan's implicit
//! LOD is undefined in compute, so the backend lowers it to an explicit
//! `Lod 0`); `sample_level` takes `λ = level`; `sample_grad` takes `λ =
//! log2(ρmax)` with `ρx = |ddx · size0|`, `ρy = |ddy · size0|` (the
//! gradients scaled by the level-0 size per dimension, Euclidean length),
//! `ρmax = max(ρx, ρy)`. `λ` is clamped to `[0, levels - 1]` (min LOD 0, max
//! LOD unclamped). Mip selection: point and linear_point take the nearest
//! level `ceil(λ + 0.5) - 1`; linear_linear and anisotropic blend levels
//! `floor(λ)` and `floor(λ) + 1` (capped at the last) with weight
//! `frac(λ)`.
//!
//! **Anisotropic**: the interpreter computes it as linear_linear with the
//! isotropic `λ` above. Vulkan's anisotropic rule (`η = min(ρmax / ρmin,
//! maxAnisotropy)`, `λ = log2(ρmax / η)`, up to `η` probes) equals that when
//! `ρx = ρy` and for explicit levels; otherwise devices differ by design
//! (their footprint approximations are implementation-defined), so only
//! isotropic gradients are compared.
//!
//! **Within a level** of size `n` per dimension: `u = uv · n` in f32. Point:
//! texel `floor(u)`. Linear: `u' = u - 0.5`, texels `floor(u')` and
//! `floor(u') + 1` weighted `1 - frac(u')` and `frac(u')`, over 2^dim
//! corners. Each integer texel coordinate is then wrapped by the address
//! mode: edge clamps to `[0, n - 1]`; repeat takes `i mod n`; mirror takes
//! `t = i mod 2n` and `t < n ? t : 2n - 1 - t`; zero makes any texel with a
//! coordinate outside `[0, n)` the border `(0, 0, 0, 0)`. Weights and sums
//! are in f64 from the f32 texels; the result is rounded once to f32.
//!
//! **Texel types**: filtering is defined for f32 texels only. An i32 / u32
//! texture can be sampled only with a point sampler (the texel's integer
//! values converted to f32); any other filter on it is an error. Non-finite
//! coordinates, levels or gradients are errors (Vulkan leaves them
//! undefined).

use xir_spec::Opcode;

use crate::ir::{Function, InstCore, Module};

use super::arith::{sext, to_f64, R};
use super::memory::Buf;
use super::ops::index_value;
use super::value::{scalar_kind, Sk, Val};

/// Immutable samplers in the heap (4 filters × 4 address modes).
pub const SAMPLER_COUNT: u64 = 16;

/// The filter of a sampler selector (`selector >> 2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    Point,
    LinearPoint,
    LinearLinear,
    Anisotropic,
}

/// The address mode of a sampler selector (`selector & 3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Address {
    Edge,
    Repeat,
    Mirror,
    Zero,
}

/// Decode a sampler selector (`filter * 4 + address`).
pub fn decode_selector(s: u64) -> R<(Filter, Address)> {
    if s >= SAMPLER_COUNT {
        return Err(format!("sampler selector {s} is out of range (the heap has {SAMPLER_COUNT} samplers)"));
    }
    let filter = [Filter::Point, Filter::LinearPoint, Filter::LinearLinear, Filter::Anisotropic][(s >> 2) as usize];
    let address = [Address::Edge, Address::Repeat, Address::Mirror, Address::Zero][(s & 3) as usize];
    Ok((filter, address))
}

/// How the level of detail is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lod<'a> {
    /// An explicit `λ` (`sample` is `Explicit(0.0)`).
    Explicit(f64),
    /// Gradients `ddx`, `ddy` in normalized coordinates.
    Grad(&'a [f64], &'a [f64]),
}

/// A texture as sampling sees it: every level's texels, level 0 first, x fastest.
#[derive(Clone, Copy, Debug)]
pub struct TexView<'a> {
    /// The texel scalar kind (f32, i32 or u32).
    pub elem: Sk,
    pub dim: usize,
    pub size: [u32; 3],
    pub levels: u32,
    pub data: &'a [Val],
}

/// Size of level `l` in dimension `k` (`max(1, size >> l)`).
pub fn level_extent(size: u32, l: u32) -> u32 {
    if l >= 32 {
        1
    } else {
        (size >> l).max(1)
    }
}

/// Texels of one level of a `dim`-dimensional texture of level-0 `size`.
pub fn level_texels(dim: usize, size: &[u32; 3], l: u32) -> usize {
    (0..dim).map(|k| level_extent(size[k], l) as usize).product()
}

/// The most mip levels a texture of `size` can have (down to 1 in every dimension).
pub fn max_levels(dim: usize, size: &[u32; 3]) -> u32 {
    let m = size[..dim].iter().copied().max().unwrap_or(1).max(1);
    32 - m.leading_zeros()
}

impl TexView<'_> {
    fn level_offset(&self, l: u32) -> usize {
        (0..l).map(|j| level_texels(self.dim, &self.size, j)).sum()
    }

    /// The texel at wrapped integer coordinates `c` of level `l` as f64 lanes.
    fn texel(&self, l: u32, c: &[i64; 3]) -> R<[f64; 4]> {
        let mut lin = 0usize;
        for k in (0..self.dim).rev() {
            lin = lin * level_extent(self.size[k], l) as usize + c[k] as usize;
        }
        let v = self.data.get(self.level_offset(l) + lin).ok_or("texel outside the texture's data")?;
        let lanes = v.members()?;
        let mut out = [0.0; 4];
        for (o, x) in out.iter_mut().zip(lanes) {
            let b = x.bits().map_err(|_| "sampling an undefined texel".to_string())?;
            *o = match self.elem {
                Sk::Int { bits, signed: true } => sext(b, bits) as f64,
                Sk::Int { bits, signed: false } => (b & ((1u64 << bits) - 1)) as f64,
                sk => to_f64(sk, b).ok_or("texture texels are f32, i32 or u32")?,
            };
        }
        Ok(out)
    }

    /// Filter level `l` at normalized `uv`; `linear` selects bilinear / trilinear-in-space.
    fn filter_level(&self, l: u32, uv: &[f64], linear: bool, address: Address) -> R<[f64; 4]> {
        // Per dimension: (texel a, texel b, weight of b); point uses a only.
        let mut taps = [(0i64, 0i64, 0.0f64); 3];
        for k in 0..self.dim {
            let n = level_extent(self.size[k], l);
            let u = (uv[k] as f32) * (n as f32);
            taps[k] = if linear {
                let u = u - 0.5;
                let i = u.floor();
                (i as i64, i as i64 + 1, (u - i) as f64)
            } else {
                let i = u.floor() as i64;
                (i, i, 0.0)
            };
        }
        let corners = if linear { 1usize << self.dim } else { 1 };
        let mut acc = [0.0f64; 4];
        for corner in 0..corners {
            let mut w = 1.0f64;
            let mut c = [0i64; 3];
            let mut border = false;
            for k in 0..self.dim {
                let (a, b, f) = taps[k];
                let (i, wk) = if corner >> k & 1 == 1 { (b, f) } else { (a, 1.0 - f) };
                w *= wk;
                match wrap(i, level_extent(self.size[k], l) as i64, address) {
                    Some(x) => c[k] = x,
                    None => border = true,
                }
            }
            if border || w == 0.0 {
                continue;
            }
            let t = self.texel(l, &c)?;
            for (a, x) in acc.iter_mut().zip(t) {
                *a += w * x;
            }
        }
        Ok(acc)
    }
}

/// Wrap integer texel coordinate `i` into `[0, n)`; `None` is the zero border.
pub fn wrap(i: i64, n: i64, address: Address) -> Option<i64> {
    match address {
        Address::Edge => Some(i.clamp(0, n - 1)),
        Address::Repeat => Some(i.rem_euclid(n)),
        Address::Mirror => {
            let t = i.rem_euclid(2 * n);
            Some(if t < n { t } else { 2 * n - 1 - t })
        }
        Address::Zero => (0..n).contains(&i).then_some(i),
    }
}

/// Sample `tex` at normalized `uv` with the sampler `selector` and level of detail `lod`.
pub fn sample(tex: &TexView, uv: &[f64], lod: Lod, selector: u64) -> R<[f32; 4]> {
    let (filter, address) = decode_selector(selector)?;
    if uv.len() != tex.dim {
        return Err(format!("{} sampling coordinates for a {}D texture", uv.len(), tex.dim));
    }
    if tex.size[..tex.dim].contains(&0) {
        return Err("sampling an empty texture".into());
    }
    if !matches!(tex.elem, Sk::F32) && filter != Filter::Point {
        return Err(format!(
            "filter {filter:?} (selector {selector}) on an integer texture: filtering is defined for f32 texels \
             only; integer textures take point samplers (selectors 0..=3)"
        ));
    }
    if uv.iter().any(|x| !x.is_finite()) {
        return Err("non-finite sampling coordinate (undefined in Vulkan)".into());
    }
    let lambda = match lod {
        Lod::Explicit(l) => l,
        Lod::Grad(dx, dy) => {
            if dx.len() != tex.dim || dy.len() != tex.dim {
                return Err("sampling gradients do not match the texture's dimension".into());
            }
            if dx.iter().chain(dy).any(|x| !x.is_finite()) {
                return Err("non-finite sampling gradient (undefined in Vulkan)".into());
            }
            let rho =
                |g: &[f64]| g.iter().zip(&tex.size).map(|(d, &s)| (d * s as f64) * (d * s as f64)).sum::<f64>().sqrt();
            rho(dx).max(rho(dy)).log2()
        }
    };
    if lambda.is_nan() {
        return Err("NaN level of detail (undefined in Vulkan)".into());
    }
    let q = tex.levels.max(1) - 1;
    let d = lambda.clamp(0.0, q as f64);
    let linear = filter != Filter::Point;
    let out = match filter {
        Filter::Point | Filter::LinearPoint => {
            let l = ((d + 0.5).ceil() - 1.0).clamp(0.0, q as f64) as u32;
            tex.filter_level(l, uv, linear, address)?
        }
        Filter::LinearLinear | Filter::Anisotropic => {
            let hi = d.floor() as u32;
            let lo = (hi + 1).min(q);
            let delta = d - hi as f64;
            let a = tex.filter_level(hi, uv, true, address)?;
            if delta == 0.0 || lo == hi {
                a
            } else {
                let b = tex.filter_level(lo, uv, true, address)?;
                [0, 1, 2, 3].map(|k| (1.0 - delta) * a[k] + delta * b[k])
            }
        }
    };
    Ok(out.map(|x| x as f32))
}

/// True for the three sampling opcodes.
pub(crate) fn is_sample_op(op: Opcode) -> bool {
    matches!(op, Opcode::TextureSample | Opcode::TextureSampleLevel | Opcode::TextureSampleGrad)
}

/// Float lanes of operand `k` (a float vector or scalar).
fn floats(m: &Module, f: &Function, d: &InstCore, k: usize, v: &Val) -> R<Vec<f64>> {
    let sk = scalar_kind(&m.types, f.value_type(m, d.operands[k])).ok_or("sampling operand is not a float")?;
    let one = |x: &Val| -> R<f64> {
        let b = x.bits().map_err(|_| "undefined sampling operand".to_string())?;
        to_f64(sk, b).ok_or_else(|| "sampling operand is not a float".to_string())
    };
    match v {
        Val::A(lanes) => lanes.iter().map(one).collect(),
        x => Ok(vec![one(x)?]),
    }
}

/// Execute a sampling opcode on the texture `buf` (the slot already resolved); `k` is the uv operand.
pub(crate) fn sample_op(m: &Module, f: &Function, d: &InstCore, ops: &[Val], buf: &Buf, k: usize) -> R<Val> {
    let Buf::Texture { elem, dim, size, levels, data } = buf else {
        return Err(format!("`{}` on a bindless slot that does not hold a texture", d.opcode));
    };
    let arg = |i: usize| ops.get(i).ok_or_else(|| format!("`{}` needs operand {i}", d.opcode));
    let uv = floats(m, f, d, k, arg(k)?)?;
    let sel_at = ops.len() - 1;
    let selector = index_value(m, f, d, sel_at, arg(sel_at)?)?;
    let (dx, dy);
    let lod = match d.opcode {
        Opcode::TextureSample => Lod::Explicit(0.0),
        Opcode::TextureSampleLevel => {
            let l = floats(m, f, d, k + 1, arg(k + 1)?)?;
            let l = *l.first().ok_or("missing level")?;
            if !l.is_finite() {
                return Err("non-finite sampling level (undefined in Vulkan)".into());
            }
            Lod::Explicit(l)
        }
        _ => {
            dx = floats(m, f, d, k + 1, arg(k + 1)?)?;
            dy = floats(m, f, d, k + 2, arg(k + 2)?)?;
            Lod::Grad(&dx, &dy)
        }
    };
    let sk = scalar_kind(&m.types, *elem).ok_or("texture texels are f32, i32 or u32")?;
    let view = TexView { elem: sk, dim: *dim as usize, size: *size, levels: *levels, data };
    let out = sample(&view, &uv, lod, selector)?;
    Ok(Val::agg(out.iter().map(|x| Val::S(x.to_bits() as u64)).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-channel f32 texture (other lanes 0) with levels given level by level.
    fn tex(levels: &[&[f32]]) -> Vec<Val> {
        levels
            .iter()
            .flat_map(|l| l.iter())
            .map(|x| Val::agg(vec![Val::S(x.to_bits() as u64), Val::S(0), Val::S(0), Val::S(0)]))
            .collect()
    }

    fn view(dim: usize, size: [u32; 3], levels: u32, data: &[Val]) -> TexView<'_> {
        TexView { elem: Sk::F32, dim, size, levels, data }
    }

    fn r(t: &TexView, uv: &[f64], lod: Lod, s: u64) -> f32 {
        sample(t, uv, lod, s).unwrap()[0]
    }

    #[test]
    fn selector_is_filter_times_four_plus_address() {
        assert_eq!(decode_selector(0).unwrap(), (Filter::Point, Address::Edge));
        assert_eq!(decode_selector(6).unwrap(), (Filter::LinearPoint, Address::Mirror));
        assert_eq!(decode_selector(11).unwrap(), (Filter::LinearLinear, Address::Zero));
        assert_eq!(decode_selector(13).unwrap(), (Filter::Anisotropic, Address::Repeat));
        assert!(decode_selector(16).is_err());
    }

    #[test]
    fn address_modes_wrap_integer_coordinates() {
        let n = 4;
        let got = |a| (-5..9).map(|i| wrap(i, n, a)).collect::<Vec<_>>();
        let s = |v: &[i64]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
        assert_eq!(got(Address::Edge), s(&[0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3]));
        assert_eq!(got(Address::Repeat), s(&[3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0]));
        assert_eq!(got(Address::Mirror), s(&[3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0]));
        let z = got(Address::Zero);
        assert_eq!(z[4], None);
        assert_eq!(&z[5..9], &s(&[0, 1, 2, 3])[..]);
        assert_eq!(z[9], None);
    }

    #[test]
    fn point_sampling_in_each_address_mode_2d() {
        // 4x2 texture, value = 10 * y + x.
        let l0: Vec<f32> = (0..8).map(|i| (10 * (i / 4) + i % 4) as f32).collect();
        let d = tex(&[&l0]);
        let t = view(2, [4, 2, 1], 1, &d);
        // Texel centers.
        assert_eq!(r(&t, &[0.625, 0.75], Lod::Explicit(0.0), 0), 12.0);
        // u = -0.125 * 4 = -0.5 -> texel -1; v = 0.75 * 2 = 1.5 -> row 1.
        assert_eq!(r(&t, &[-0.125, 0.75], Lod::Explicit(0.0), 0), 10.0); // edge: x 0
        assert_eq!(r(&t, &[-0.125, 0.75], Lod::Explicit(0.0), 1), 13.0); // repeat: x 3
        assert_eq!(r(&t, &[-0.125, 0.75], Lod::Explicit(0.0), 2), 10.0); // mirror: x 0
        assert_eq!(r(&t, &[-0.125, 0.75], Lod::Explicit(0.0), 3), 0.0); // border
                                                                        // u = 1.375 * 4 = 5.5 -> texel 5; v = 1.75 * 2 = 3.5 -> row 3.
        assert_eq!(r(&t, &[1.375, 1.75], Lod::Explicit(0.0), 0), 13.0); // (3, 1)
        assert_eq!(r(&t, &[1.375, 1.75], Lod::Explicit(0.0), 1), 11.0); // (1, 1)
        assert_eq!(r(&t, &[1.375, 1.75], Lod::Explicit(0.0), 2), 2.0); // (2, 0)
        assert_eq!(r(&t, &[1.375, 0.75], Lod::Explicit(0.0), 3), 0.0);
        assert_eq!(r(&t, &[0.375, 0.75], Lod::Explicit(0.0), 3), 11.0);
    }

    #[test]
    fn bilinear_weights_and_borders() {
        // 2x2: [0 1; 2 3].
        let d = tex(&[&[0.0, 1.0, 2.0, 3.0]]);
        let t = view(2, [2, 2, 1], 1, &d);
        // The center: u' = v' = 0.5 -> all four at 1/4.
        assert_eq!(r(&t, &[0.5, 0.5], Lod::Explicit(0.0), 4), 1.5);
        // u = 0.375 * 2 - 0.5 = 0.25: 0.75 * t0 + 0.25 * t1, row 0 (v at center 0.25).
        assert_eq!(r(&t, &[0.375, 0.25], Lod::Explicit(0.0), 4), 0.25);
        // Edge clamps: at uv (0, 0) u' = -0.5 -> texels -1 and 0 weighted 0.5, both clamp to 0.
        assert_eq!(r(&t, &[0.0, 0.0], Lod::Explicit(0.0), 4), 0.0);
        // Zero border: half of each dimension's weight falls outside: 0.25 * t0.
        let d1 = tex(&[&[4.0, 1.0, 2.0, 3.0]]);
        let t1 = view(2, [2, 2, 1], 1, &d1);
        assert_eq!(r(&t1, &[0.0, 0.0], Lod::Explicit(0.0), 7), 1.0);
        // Repeat wraps to the far texels: 0.25 * (t0 + t1 + t2 + t3) with texel -1 = 1.
        assert_eq!(r(&t1, &[0.0, 0.0], Lod::Explicit(0.0), 5), 2.5);
        // Mirror: texel -1 mirrors to 0: equals edge clamping here.
        assert_eq!(r(&t1, &[0.0, 0.0], Lod::Explicit(0.0), 6), 4.0);
    }

    #[test]
    fn mip_selection_and_trilinear_blend() {
        // 4x4 levels: 16 at level 0, 4 at level 1, 1 at level 2; constant per level.
        let (l0, l1, l2) = ([1.0f32; 16], [5.0f32; 4], [9.0f32; 1]);
        let d = tex(&[&l0, &l1, &l2]);
        let t = view(2, [4, 4, 1], 3, &d);
        let uv = [0.3, 0.6];
        // sample = level 0 whatever the filter.
        assert_eq!(r(&t, &uv, Lod::Explicit(0.0), 0), 1.0);
        // Nearest level: 0.4 -> 0, 0.6 -> 1, 1.7 -> 2, beyond the last clamps.
        assert_eq!(r(&t, &uv, Lod::Explicit(0.4), 0), 1.0);
        assert_eq!(r(&t, &uv, Lod::Explicit(0.6), 4), 5.0);
        assert_eq!(r(&t, &uv, Lod::Explicit(1.7), 0), 9.0);
        assert_eq!(r(&t, &uv, Lod::Explicit(7.0), 4), 9.0);
        assert_eq!(r(&t, &uv, Lod::Explicit(-3.0), 4), 1.0);
        // Trilinear: 0.25 between levels 0 and 1 -> 0.75 * 1 + 0.25 * 5 = 2.
        assert_eq!(r(&t, &uv, Lod::Explicit(0.25), 8), 2.0);
        assert_eq!(r(&t, &uv, Lod::Explicit(1.5), 8), 7.0);
        // Anisotropic with an explicit level is trilinear.
        assert_eq!(r(&t, &uv, Lod::Explicit(1.5), 12), 7.0);
    }

    #[test]
    fn gradients_give_log2_of_the_larger_footprint() {
        let (l0, l1, l2) = ([1.0f32; 16], [5.0f32; 4], [9.0f32; 1]);
        let d = tex(&[&l0, &l1, &l2]);
        let t = view(2, [4, 4, 1], 3, &d);
        let uv = [0.3, 0.6];
        // ddx = (0.5, 0) -> rho_x = 2; ddy = (0, 0.25) -> rho_y = 1: lambda = 1.
        assert_eq!(r(&t, &uv, Lod::Grad(&[0.5, 0.0], &[0.0, 0.25]), 8), 5.0);
        // Diagonal (0.25, 0.25) * 4 = (1, 1): |.| = sqrt 2 -> lambda 0.5: halfway.
        assert_eq!(r(&t, &uv, Lod::Grad(&[0.25, 0.25], &[0.0, 0.0]), 8), 3.0);
        // Zero gradients: lambda = -inf clamps to level 0.
        assert_eq!(r(&t, &uv, Lod::Grad(&[0.0, 0.0], &[0.0, 0.0]), 8), 1.0);
        assert!(sample(&t, &uv, Lod::Grad(&[f64::NAN, 0.0], &[0.0, 0.0]), 8).is_err());
    }

    #[test]
    fn trilinear_in_3d_and_point_mirror_in_3d() {
        // 2x2x2, value = x + 2y + 4z.
        let l0: Vec<f32> = (0..8).map(|i| i as f32).collect();
        let d = tex(&[&l0, &[100.0]]);
        let t = view(3, [2, 2, 2], 2, &d);
        // The center: the average of all eight = 3.5.
        assert_eq!(r(&t, &[0.5, 0.5, 0.5], Lod::Explicit(0.0), 8), 3.5);
        // Point, mirror: u = 1.25 * 2 = 2.5 -> texel 2 -> mirrors to 1; y 0, z 1.
        assert_eq!(r(&t, &[1.25, 0.25, 0.75], Lod::Explicit(0.0), 2), 5.0);
        // Halfway to the 1x1x1 level: 0.5 * 3.5 + 0.5 * 100.
        assert_eq!(r(&t, &[0.5, 0.5, 0.5], Lod::Explicit(0.5), 8), 51.75);
    }

    #[test]
    fn integer_textures_take_point_samplers_only() {
        let d = vec![Val::agg(vec![Val::S(0xffff_fffe), Val::S(7), Val::S(0), Val::S(1)])];
        let t = TexView { elem: Sk::Int { bits: 32, signed: true }, dim: 2, size: [1, 1, 1], levels: 1, data: &d };
        assert_eq!(sample(&t, &[0.5, 0.5], Lod::Explicit(0.0), 1).unwrap(), [-2.0, 7.0, 0.0, 1.0]);
        let e = sample(&t, &[0.5, 0.5], Lod::Explicit(0.0), 4).unwrap_err();
        assert!(e.contains("integer texture"), "{e}");
    }
}
