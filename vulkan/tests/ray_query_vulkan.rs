//! Ray queries on a real Vulkan device through the runner (which builds the
//! bottom- and top-level structures from the interpreter's scene input,
//! `vulkan/accel.rs`), compared with the interpreter's software traversal
//! for every thread, at -O0 and -O2 through the `spirv` pipeline
//! (spirv-legalize): integers (instance, primitive, any-hit flags) exactly,
//! `t` and barycentrics within 1e-4 relative (hardware intersection is not
//! bit-exact).
//!
//! The scene: instance 0 holds a farther triangle *before* an overlapping
//! nearer one (a committed read before traversal completes would report the
//! farther), translated; instance 1 is rotated, scaled and translated;
//! instance 2 is a non-opaque background; each has its own mask, and rays
//! carry masks that select some, all or none of them, so some rays hit the
//! nearer primitive, some a transformed instance, some only the background,
//! and some miss (by position, by mask and by `t_max`). Every ray passes at
//! least 0.049 from every triangle edge, so hardware and software
//! intersection cannot disagree on which primitive a ray crosses.
//!
//! A device without ray query skips loudly (the feature is named); no
//! Vulkan device at all skips through `common::vulkan_device`.

mod common;

use common::*;
use xir::interp::Inputs;
use xir_spirv::Feature;

const THREADS: u32 = 64;

const KERNEL: &str = r#"
kernel @trace(%scene: accel, %u_out: buffer<u32>, %f_out: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %i = mod %x, u32 8 : u32
  %j = div %x, u32 8 : u32
  %fi = cast.static %i : f32
  %fj = cast.static %j : f32
  %ox0 = mul %fi, f32 0.83 : f32
  %ox = sub %ox0, f32 2.02 : f32
  %oy0 = mul %fj, f32 0.77 : f32
  %oy = sub %oy0, f32 3.18 : f32
  %origin = aggregate %ox, %oy, f32 10.0 : array<f32, 3>
  %m5 = mod %x, u32 5 : u32
  %m3 = add %m5, u32 3 : u32
  %sh = mod %m3, u32 4 : u32
  %bit = shl u32 1, %sh : u32
  %all = eq %m5, u32 0 : bool
  %mask = select %all, u32 255, %bit : u32
  %m7 = mod %x, u32 7 : u32
  %short = eq %m7, u32 3 : bool
  %tmax = select %short, f32 9.5, f32 100.0 : f32
  %ray = aggregate %origin, f32 0.0, array<f32, 3> [0.0, 0.0, -1.0], %tmax : struct<align 16>{array<f32, 3>, f32, array<f32, 3>, f32}
  %hit = ray.trace_closest %scene, %ray, %mask : struct<align 8>{u32, u32, vec<f32, 2>, f32}
  %any = ray.trace_any %scene, %ray, %mask : bool
  %inst = extract %hit, u32 0 : u32
  %prim = extract %hit, u32 1 : u32
  %bary = extract %hit, u32 2 : vec<f32, 2>
  %t = extract %hit, u32 3 : f32
  %anyu = cast.static %any : u32
  %b0 = extract %bary, u32 0 : f32
  %b1 = extract %bary, u32 1 : f32
  %x3 = mul %x, u32 3 : u32
  %x3a = add %x3, u32 1 : u32
  %x3b = add %x3, u32 2 : u32
  buffer.write %u_out, %x3, %inst
  buffer.write %u_out, %x3a, %prim
  buffer.write %u_out, %x3b, %anyu
  buffer.write %f_out, %x3, %t
  buffer.write %f_out, %x3a, %b0
  buffer.write %f_out, %x3b, %b1
  return
}
"#;

/// The scene (see the module doc), in the interpreter's accel encoding.
const SCENE: &str = r#"{"instances": [
  {"opaque": false, "mask": 1, "user_id": 7,
   "transform": [1, 0, 0, 0.25, 0, 1, 0, -0.5, 0, 0, 1, 2],
   "triangles": [[[-2.0, -2.0, -1.0], [2.0, -2.0, -1.0], [0.0, 2.0, -1.0]],
                 [[-1.5, -1.5, 0.0], [1.5, -1.5, 0.0], [0.0, 1.5, 0.0]]]},
  {"mask": 2, "user_id": 300,
   "transform": [0, -2, 0, 1.5, 2, 0, 0, 1.0, 0, 0, 2, -3],
   "triangles": [[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
                 [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]]},
  {"opaque": false, "mask": 4,
   "triangles": [[[-3.0, -3.0, -8.0], [1.0, -3.0, -8.0], [-3.0, 3.0, -8.0]]]}
]}"#;

/// The device when it has ray query; otherwise a loud skip naming the feature.
fn ray_device() -> Option<xir_vulkan::Device> {
    let dev = vulkan_device()?;
    if !dev.enabled.contains(Feature::RayQuery) || !dev.enabled.contains(Feature::AccelerationStructure) {
        eprintln!(
            "\n!!!!!!!! SKIPPING RAY-QUERY VULKAN TEST: device `{}` lacks rayQuery / accelerationStructure \
             (VK_KHR_ray_query, VK_KHR_acceleration_structure) !!!!!!!!\n",
            dev.name
        );
        return None;
    }
    Some(dev)
}

/// Run `src` in the interpreter and on `dev` at -O0 and -O2; the outputs
/// must agree (integers exactly, floats within 1e-4 relative). Returns the
/// interpreter's outputs.
fn matches_interpreter(dev: &xir_vulkan::Device, src: &str, inputs: &str, threads: u32) -> xir::interp::Outputs {
    let m = parse(src);
    let inputs = Inputs::from_json(inputs).expect("inputs parse");
    let want = xir::interp::run_kernel(&m, kernel_of(&m), &inputs).expect("interpreter runs");
    for level in [0u8, 2] {
        let (lm, out) = through_spirv(src, level);
        let (got, _) = xir_vulkan::run_kernel(dev, &lm, kernel_of(&lm), &out.words, &out.abi, &inputs, [threads, 1, 1])
            .unwrap_or_else(|e| panic!("-O{level} runs on `{}`: {e}", dev.name));
        if let Some(d) = want.first_mismatch(&got, xir::interp::close(1e-4, 1e-5)) {
            panic!(
                "-O{level} on `{}` differs from the interpreter: {d:?}\ndevice: {got:?}\ninterp: {want:?}",
                dev.name
            );
        }
    }
    want
}

fn u32s(o: &xir::interp::Outputs, name: &str) -> Vec<u32> {
    o.buffers[name].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

// Check closest-hit and any-hit traversal of the scene on the device
// against the interpreter for every thread, and that the scene exercises
// what it is for: the nearer (later) primitive of instance 0, the
// transformed instance 1, the background instance 2, any-hit, and misses.
#[test]
fn closest_and_any_hit_match_the_interpreter_for_every_thread() {
    let Some(dev) = ray_device() else { return };
    eprintln!("device: {} ({})", dev.name, dev.driver);
    let inputs = format!(
        r#"{{"dispatch": [{THREADS}, 1, 1], "args": {{"scene": {SCENE}, "u_out": {{"fill": 0, "len": {n}}},
           "f_out": {{"fill": 0.0, "len": {n}}}}}}}"#,
        n = 3 * THREADS
    );
    let want = matches_interpreter(&dev, KERNEL, &inputs, THREADS);
    let u = u32s(&want, "u_out");
    let hits: Vec<(u32, u32, u32)> = u.chunks(3).map(|c| (c[0], c[1], c[2])).collect();
    assert!(hits.contains(&(0, 1, 1)), "some ray hits the nearer, later primitive of instance 0: {hits:?}");
    // The nearer triangle lies inside the farther one's shadow: a ray reporting it passed over
    // both; the distances are the scene's (origin z = 10, instance 0 translated by z + 2).
    let f: Vec<f64> = want.buffers["f_out"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    for (k, h) in hits.iter().enumerate() {
        match (h.0, h.1) {
            (0, 1) => assert_eq!(f[3 * k], 8.0, "thread {k}: the nearer triangle is at t = 8"),
            (0, 0) => assert_eq!(f[3 * k], 9.0, "thread {k}: the farther triangle is at t = 9"),
            _ => {}
        }
    }
    assert!(hits.iter().any(|h| h.0 == 1), "some ray hits the transformed instance 1");
    assert!(hits.contains(&(2, 0, 1)), "some ray hits only the background");
    assert!(hits.contains(&(u32::MAX, u32::MAX, 0)), "some ray misses");
    assert!(hits.iter().all(|h| (h.0 != u32::MAX) == (h.2 == 1)), "any-hit agrees with closest-hit on hit/miss");
}

// Check that scenes the device cannot build are refused with a RunError
// before any structure is built (an instance with both triangles and AABBs:
// a bottom-level structure holds one geometry kind), and that a user id
// beyond 24 bits is refused by the input parser on both sides.
#[test]
fn unbuildable_scenes_are_run_errors_not_crashes() {
    let Some(dev) = ray_device() else { return };
    let (lm, out) = through_spirv(KERNEL, 0);
    let run = |scene: &str| {
        let inputs = format!(
            r#"{{"args": {{"scene": {scene}, "u_out": {{"fill": 0, "len": 192}}, "f_out": {{"fill": 0.0, "len": 192}}}}}}"#
        );
        let inputs = Inputs::from_json(&inputs).expect("inputs parse");
        xir_vulkan::run_kernel(&dev, &lm, kernel_of(&lm), &out.words, &out.abi, &inputs, [THREADS, 1, 1])
    };
    let mixed = r#"{"instances": [{"triangles": [[[0, 0, 0], [1, 0, 0], [0, 1, 0]]], "aabbs": [[0, 0, 0, 1, 1, 1]]}]}"#;
    let e = run(mixed).expect_err("mixed geometry cannot be one bottom-level structure");
    assert!(matches!(e, xir_vulkan::RunError::Abi(_)) && e.to_string().contains("both triangles and AABBs"), "{e}");
    let wide = r#"{"instances": [{"user_id": 16777216, "triangles": [[[0, 0, 0], [1, 0, 0], [0, 1, 0]]]}]}"#;
    let e = run(wide).expect_err("a 25-bit user id does not fit the instance record");
    assert!(e.to_string().contains("24 bits"), "{e}");
    // An empty scene builds (zero instances) and every ray misses.
    let (got, _) = run(r#"{"instances": []}"#).expect("an empty scene runs");
    assert!(got.buffers["u_out"].as_array().unwrap().chunks(3).all(|c| c[0] == u32::MAX && c[2] == 0));
}

// Check a ray-query loop with candidate handlers (tests/ray/ray_query_loop.xir)
// on procedural geometry: AABB candidates generate a hit at t = 5.5 in front
// of an opaque triangle, so the committed kind is procedural (2) whichever
// order the device visits them in; rays between the boxes commit the
// triangle (kind 1) or miss (kind 0). Non-opaque triangles are left out: how
// many of them a device reports as candidates depends on its traversal order.
#[test]
fn procedural_candidates_generate_hits_like_the_interpreter() {
    let Some(dev) = ray_device() else { return };
    let src = include_str!("../../tests/ray/ray_query_loop.xir");
    let inputs = r#"{"dispatch": [4, 1, 1], "args": {"scene": {"instances": [
        {"aabbs": [[1.0, -1.0, 4.0, 2.0, 1.0, 5.0]]},
        {"aabbs": [[-2.0, -1.0, 3.0, -1.0, 1.0, 6.0]]},
        {"triangles": [[[-1.0, -3.0, 0.0], [3.0, -3.0, 0.0], [1.0, 3.0, 0.0]]]}
      ]}, "t_out": [0, 0, 0, 0], "hit_out": [0, 0, 0, 0]}}"#;
    let want = matches_interpreter(&dev, src, inputs, 4);
    let hits = u32s(&want, "hit_out");
    // kind << 16 | instance << 8 | triangle candidates seen.
    assert_eq!(hits, vec![2 << 16 | 1 << 8, u32::MAX << 8, 1 << 16 | 2 << 8, 2 << 16], "{hits:x?}");
}

// Check that direct tracing ignores procedural geometry like the
// interpreter: an AABB in front of a triangle neither hides the triangle
// from `ray.trace_any` (whose single proceed would otherwise stop at the
// AABB candidate: it skips AABBs) nor from `ray.trace_closest`.
#[test]
fn direct_tracing_skips_procedural_geometry() {
    let Some(dev) = ray_device() else { return };
    let src = r#"
kernel @k(%scene: accel, %out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %xf = cast.static %x : f32
  %ox = sub %xf, f32 1.5 : f32
  %origin = aggregate %ox, f32 0.1, f32 10.0 : array<f32, 3>
  %ray = aggregate %origin, f32 0.0, array<f32, 3> [0.0, 0.0, -1.0], f32 100.0 : struct<align 16>{array<f32, 3>, f32, array<f32, 3>, f32}
  %any = ray.trace_any %scene, %ray, u32 255 : bool
  %hit = ray.trace_closest %scene, %ray, u32 255 : struct<align 8>{u32, u32, vec<f32, 2>, f32}
  %inst = extract %hit, u32 0 : u32
  %anyu = cast.static %any : u32
  %k = shl %inst, u32 1 : u32
  %r = bit_or %k, %anyu : u32
  buffer.write %out, %x, %r
  return
}
"#;
    let inputs = r#"{"dispatch": [4, 1, 1], "args": {"scene": {"instances": [
        {"aabbs": [[-3.0, -3.0, 4.0, 3.0, 3.0, 6.0]]},
        {"triangles": [[[-1.0, -3.0, 0.0], [3.0, -3.0, 0.0], [1.0, 3.0, 0.0]]]}
      ]}, "out": [0, 0, 0, 0]}}"#;
    let want = matches_interpreter(&dev, src, inputs, 4);
    assert_eq!(u32s(&want, "out"), vec![u32::MAX << 1, u32::MAX << 1, 3, 3]);
}
