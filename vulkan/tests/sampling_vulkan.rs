//! Bindless textures and sampling on Vulkan against the interpreter, for 2D
//! and 3D textures with mip chains, through a divergent slot and a divergent
//! sampler selector: texel reads and mip sizes through the heap, and
//! `texture.sample` / `sample_level` / `sample_grad` with the four point
//! samplers (every address mode) must match bit for bit; the linear samplers
//! (bilinear, trilinear, anisotropic with isotropic gradients) must match
//! within the bound of docs/vulkan.md ("Sampling"), used for those results
//! only. Inputs are generated so that point samples sit at texel centres of
//! the level they read (no subtexel rounding can move them) and mip levels
//! are never chosen at a half-way LOD.

mod common;

use common::*;
use serde_json::{json, Value as Json};
use xir_spirv::Feature;

/// Threads per dispatch.
const THREADS: usize = 32;

fn kernel_src(d: usize, linear_grad_base: u32) -> String {
    let vf = format!("vec<f32, {d}>");
    let vu = format!("vec<u32, {d}>");
    format!(
        r#"kernel @k(%h: bindless_array, %uv0: buffer<{vf}>, %uv1: buffer<{vf}>, %ddx: buffer<{vf}>, %co: buffer<{vu}>, %pr: buffer<{vf}>, %gx: buffer<{vf}>, %gy: buffer<{vf}>, %exact: buffer<vec<f32, 4>>, %filt: buffer<vec<f32, 4>>, %sz: buffer<{vu}>) block_size(8, 1, 1) {{
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %s = mod %t, u32 2 : u32
  %sel = mod %t, u32 4 : u32
  %p = buffer.read %uv0, %t : {vf}
  %q = buffer.read %uv1, %t : {vf}
  %dx = buffer.read %ddx, %t : {vf}
  %c = buffer.read %co, %t : {vu}
  %a = texture.sample %h, %s, %p, %sel : vec<f32, 4>
  %b = texture.sample_level %h, %s, %q, f32 1.0, %sel : vec<f32, 4>
  %zero = buffer.read %gx, u32 0 : {vf}
  %zz = sub %zero, %zero : {vf}
  %g = texture.sample_grad %h, %s, %q, %dx, %zz, %sel : vec<f32, 4>
  %r = bindless.texture{d}d_read %h, %s, %c : vec<f32, 4>
  %lv = mod %t, u32 5 : u32
  %z = bindless.texture{d}d_size %h, %s, %lv : {vu}
  buffer.write %sz, %t, %z
  %e0 = mul %t, u32 4 : u32
  buffer.write %exact, %e0, %a
  %e1 = add %e0, u32 1 : u32
  buffer.write %exact, %e1, %b
  %e2 = add %e0, u32 2 : u32
  buffer.write %exact, %e2, %g
  %e3 = add %e0, u32 3 : u32
  buffer.write %exact, %e3, %r
  %pp = buffer.read %pr, %t : {vf}
  %x = buffer.read %gx, %t : {vf}
  %y = buffer.read %gy, %t : {vf}
  %f4 = add %sel, u32 4 : u32
  %f8 = add %sel, u32 8 : u32
  %fg = add %sel, u32 {linear_grad_base} : u32
  %la = texture.sample %h, %s, %pp, %f4 : vec<f32, 4>
  %lb = texture.sample_level %h, %s, %pp, f32 0.75, %f8 : vec<f32, 4>
  %lc = texture.sample_grad %h, %s, %pp, %x, %y, %fg : vec<f32, 4>
  %i0 = mul %t, u32 3 : u32
  buffer.write %filt, %i0, %la
  %i1 = add %i0, u32 1 : u32
  buffer.write %filt, %i1, %lb
  %i2 = add %i0, u32 2 : u32
  buffer.write %filt, %i2, %lc
  return
}}
"#
    )
}

/// A small deterministic generator (xorshift) of values in [0, 1) on a 1/256 grid.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        f64::from(self.0 % 256) / 256.0
    }
}

fn extent(s: u32, l: u32) -> u32 {
    (s >> l).max(1)
}

/// A texture slot of `size` (level 0) with `levels` levels of random texels.
fn texture(rng: &mut Rng, size: &[u32], levels: u32) -> Json {
    let mut level = |l: u32| -> Json {
        let n: u32 = size.iter().map(|&s| extent(s, l)).product();
        Json::Array((0..n).map(|_| json!([rng.next(), rng.next(), rng.next(), rng.next()])).collect())
    };
    let texels = level(0);
    let mips: Vec<Json> = (1..levels).map(level).collect();
    json!({"elem": "f32", "size": size, "texels": texels, "mips": mips})
}

/// Inputs for the kernel of dimension `d` over the two slot sizes.
fn inputs(d: usize, sizes: [&[u32]; 2], levels: [u32; 2]) -> xir::interp::Inputs {
    let mut rng = Rng(0x9e37_79b9);
    let slots = vec![texture(&mut rng, sizes[0], levels[0]), texture(&mut rng, sizes[1], levels[1])];
    let [mut uv0, mut uv1, mut ddx, mut co, mut pr, mut gx, mut gy]: [Vec<Json>; 7] = Default::default();
    let push = |v: &mut Vec<Json>, x: Vec<f64>| v.push(json!(x));
    for t in 0..THREADS {
        let size = sizes[t % 2];
        let centre = |level: u32, rng: &mut Rng| -> Vec<f64> {
            // A texel centre up to 3 texels outside the level (every address mode wraps it).
            size.iter()
                .map(|&s| {
                    let n = extent(s, level) as i64;
                    let i = (rng.next() * (n + 6) as f64) as i64 - 3;
                    (i as f64 + 0.5) / n as f64
                })
                .collect()
        };
        let (a, b) = (centre(0, &mut rng), centre(1, &mut rng));
        push(&mut uv0, a);
        push(&mut uv1, b);
        // rho_x = 2 exactly: LOD 1 (level 1 for the nearest-mip point samplers).
        push(&mut ddx, (0..d).map(|k| if k == 0 { 2.0 / f64::from(size[0]) } else { 0.0 }).collect());
        co.push(json!(size.iter().map(|&s| (rng.next() * f64::from(s)) as u32).collect::<Vec<_>>()));
        push(&mut pr, (0..d).map(|_| rng.next() * 2.0 - 0.5).collect());
        // Isotropic gradients: |ddx * size| = |ddy * size| = 1.5 (LOD log2 1.5, never a half-way level).
        push(&mut gx, (0..d).map(|k| if k == 0 { 1.5 / f64::from(size[0]) } else { 0.0 }).collect());
        push(&mut gy, (0..d).map(|k| if k == 1 { 1.5 / f64::from(size[1]) } else { 0.0 }).collect());
    }
    let zeros = |n: usize, lanes: usize| Json::Array(vec![json!(vec![0; lanes]); n]);
    let j = json!({"dispatch": [THREADS, 1, 1], "args": {
        "h": {"slots": slots}, "uv0": uv0, "uv1": uv1, "ddx": ddx, "co": co, "pr": pr, "gx": gx, "gy": gy,
        "exact": zeros(THREADS * 4, 4), "filt": zeros(THREADS * 3, 4), "sz": zeros(THREADS, d)}});
    xir::interp::Inputs::from_json(&j.to_string()).expect("inputs")
}

/// Largest absolute lane difference between two encoded `vec<f32, 4>` buffers.
fn max_error(a: &Json, b: &Json) -> f64 {
    let lanes = |j: &Json| -> Vec<f64> {
        j.as_array().unwrap().iter().flat_map(|v| v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap())).collect()
    };
    lanes(a).iter().zip(lanes(b)).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

fn run(d: usize, sizes: [&[u32]; 2], levels: [u32; 2], linear_grad_base: u32) {
    let Some(dev) = vulkan_device() else { return };
    let m = parse(&kernel_src(d, linear_grad_base));
    let k = kernel_of(&m);
    let inputs = inputs(d, sizes, levels);
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    for f in [Feature::SampledImageArrayNonUniformIndexing, Feature::RuntimeDescriptorArray, Feature::SamplerAnisotropy]
    {
        if !dev.enabled.contains(f) {
            eprintln!("\n!!!!!!!! SKIPPING: {} lacks {} !!!!!!!!\n", dev.name, f.vulkan_name());
            return;
        }
    }
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        let (got, _) = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [THREADS as u32, 1, 1])
            .expect("runs on Vulkan");
        // Everything but the filtered results: bit for bit (texture slots come back as given).
        let mut exact_want = want.clone();
        let mut exact_got = got.clone();
        let filt_want = exact_want.buffers.remove("filt").unwrap();
        let filt_got = exact_got.buffers.remove("filt").unwrap();
        assert_eq!(exact_want.first_mismatch(&exact_got, |_, _| false), None, "{d}D -O{level}");
        // Texels are in [0, 1): the documented bound (docs/vulkan.md) with range 1.
        let bound = xir_vulkan::filter_tolerance(&dev, d as u32, 1.0);
        let err = max_error(&filt_want, &filt_got);
        eprintln!("{d}D -O{level} on {}: largest filtered difference {err:e} (bound {bound:e})", dev.name);
        assert!(err <= bound, "{d}D -O{level}: {err} over the bound {bound}");
    }
}

#[test]
fn a_heap_slot_whose_texel_count_overflows_u64_is_refused_by_the_limit() {
    let Some(dev) = vulkan_device() else { return };
    let m = parse(&kernel_src(3, 8));
    let k = kernel_of(&m);
    let mut huge = inputs(3, [&[4, 4, 4], &[2, 4, 2]], [3, 2]);
    let big = [u32::MAX; 3];
    huge.args.get_mut("h").unwrap()["slots"][0] = json!({"elem": "f32", "size": big, "fill": [0.0, 0.0, 0.0, 0.0]});
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let e = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &huge, [THREADS as u32, 1, 1])
        .expect_err("refused")
        .to_string();
    let texels = u128::from(u32::MAX).pow(3);
    assert!(e.contains(&format!("a texture of {texels} texels exceeds the runner's limit")), "{e}");
}

#[test]
fn bindless_2d_textures_read_size_and_sample_like_the_interpreter_on_vulkan() {
    // Slot 0: 8x8 with 4 levels; slot 1: 4x8 with 3; linear sample_grad with the anisotropic samplers.
    run(2, [&[8, 8], &[4, 8]], [4, 3], 12);
}

#[test]
fn bindless_3d_textures_read_size_and_sample_like_the_interpreter_on_vulkan() {
    // Slot 0: 4x4x4 with 3 levels; slot 1: 2x4x2 with 2; linear sample_grad trilinear.
    run(3, [&[4, 4, 4], &[2, 4, 2]], [3, 2], 8);
}

/// A storage texture written with point samples of a divergent bindless slot and read back:
/// the set-0 image, the sampler heap (set 1) and the 2D heap (set 2) in one dispatch.
const WRITE_BACK: &str = r#"
kernel @k(%h: bindless_array, %out: texture2d<f32>) block_size(4, 2, 1) {
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %y = extract $dispatch_id, u32 1 : u32
  %s = bit_and %x, u32 1 : u32
  %fx = cast.static %x : f32
  %fy = cast.static %y : f32
  %u = add %fx, f32 0.5 : f32
  %v = add %fy, f32 0.5 : f32
  %u4 = mul %u, f32 0.25 : f32
  %v2 = mul %v, f32 0.5 : f32
  %uv = aggregate %u4, %v2 : vec<f32, 2>
  %a = texture.sample %h, %s, %uv, u32 1 : vec<f32, 4>
  %c = aggregate %x, %y : vec<u32, 2>
  texture.write %out, %c, %a
  return
}
"#;

#[test]
fn a_storage_texture_written_from_bindless_samples_reads_back_like_the_interpreter_on_vulkan() {
    let Some(dev) = vulkan_device() else { return };
    let m = parse(WRITE_BACK);
    let k = kernel_of(&m);
    let mut rng = Rng(7);
    let slots = vec![texture(&mut rng, &[4, 2], 2), texture(&mut rng, &[4, 2], 1)];
    let j = json!({"dispatch": [4, 2, 1], "args": {"h": {"slots": slots},
        "out": {"size": [4, 2], "fill": [0, 0, 0, 0]}}});
    let inputs = xir::interp::Inputs::from_json(&j.to_string()).expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    // Texel (x, y) of the output is texel (x, y) of slot x & 1 (point sampling at texel centres).
    let out = &want.buffers["out"]["texels"];
    for (n, texel) in out.as_array().unwrap().iter().enumerate() {
        let slot = &want.buffers["h"]["slots"][(n % 4) & 1];
        assert_eq!(texel, &slot["texels"][n], "texel {n}");
    }
    if !dev.enabled.contains(Feature::SampledImageArrayNonUniformIndexing) {
        eprintln!("\n!!!!!!!! SKIPPING: {} lacks shaderSampledImageArrayNonUniformIndexing !!!!!!!!\n", dev.name);
        return;
    }
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        let (got, _) = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [4, 2, 1]).expect("runs");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}");
    }
}

/// Point samples at the texel centres of a 4x1 slot through a dynamic selector per thread.
fn selector_kernel(sel_ty: &str) -> String {
    format!(
        r#"
kernel @k(%h: bindless_array, %sel: buffer<{sel_ty}>, %out: buffer<vec<f32, 4>>) block_size(4, 1, 1) {{
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %s = buffer.read %sel, %x : {sel_ty}
  %fx = cast.static %x : f32
  %u = add %fx, f32 0.5 : f32
  %u4 = mul %u, f32 0.25 : f32
  %uv = aggregate %u4, f32 0.5 : vec<f32, 2>
  %a = texture.sample %h, u32 0, %uv, %s : vec<f32, 4>
  buffer.write %out, %x, %a
  return
}}
"#
    )
}

// A dynamic sampler selector of 16 or more: the interpreter reports the error;
// the device, which cannot, samples nothing past the 16-entry sampler array
// and yields (0, 0, 0, 0) (docs/vulkan.md, "Sampling"). In-range selectors on
// the same dispatch sample as usual. A 64-bit selector of 2^32 is out of
// range too (not truncated to sampler 0).
#[test]
fn a_dynamic_sampler_selector_out_of_range_yields_zero_on_vulkan() {
    let Some(dev) = vulkan_device() else { return };
    for f in [Feature::SampledImageArrayNonUniformIndexing, Feature::SamplerAnisotropy, Feature::Int64] {
        if !dev.enabled.contains(f) {
            eprintln!("\n!!!!!!!! SKIPPING: {} lacks {} !!!!!!!!\n", dev.name, f.vulkan_name());
            return;
        }
    }
    let texels = json!([[0.25, 0.5, 0.75, 1.0], [1.5, 2.5, 3.5, 4.5], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]);
    let slot = json!({"elem": "f32", "size": [4, 1], "texels": texels, "mips": []});
    for (ty, sels, out_of_range) in [
        ("u32", json!([1, 16, 255, 0]), "sampler selector 16 is out of range"),
        ("u64", json!([1, 4294967296u64, 255, 2]), "sampler selector 4294967296 is out of range"),
    ] {
        let m = parse(&selector_kernel(ty));
        let k = kernel_of(&m);
        let j = json!({"dispatch": [4, 1, 1], "args": {"h": {"slots": [slot]}, "sel": sels,
            "out": vec![[0.0f32; 4]; 4]}});
        let inputs = xir::interp::Inputs::from_json(&j.to_string()).expect("inputs");
        let e = xir::interp::run_kernel(&m, k, &inputs).expect_err("the interpreter refuses the selector");
        assert!(e.to_string().contains(out_of_range), "{e}");
        for level in [0u8, 2] {
            let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
            let (got, _) = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [4, 1, 1]).expect("runs");
            let zero = json!([0.0, 0.0, 0.0, 0.0]);
            let want = json!([texels[0], zero, zero, texels[3]]);
            assert_eq!(got.buffers["out"], want, "{ty} -O{level}");
        }
    }
}
