//! Warp operations on a device against the interpreter at the device's
//! subgroup size (docs/vulkan.md, "Subgroups"): per-thread results, so a
//! wrong lane grouping, a vote that compares floats differently or a
//! shuffle from the wrong lane shows; and the runner's refusal of a device
//! that lacks an operation class (the compiler side is
//! `backend-spirv/tests/subgroup.rs`; the corpus kernels `warp_reduce`,
//! `ballot_compact` and `warp_scan` run in `tests/tests/vulkan_corpus.rs`).

mod common;

use common::*;
use xir_spirv::Feature;

/// Per thread t (7 slots): the all-equal of a float whose warps mix -0.0
/// and +0.0, or hold a NaN, and of a `vec<u32, 2>`; the first active lane's
/// value; the value of the mirrored lane (`warp.read_lane` at a per-lane
/// index); inside a branch taken by lanes with `t % 3 == 0`: their sum, the
/// first of them, and their ballot's first word.
const LANES: &str = r#"
kernel @k(%f: buffer<f32>, %v: buffer<vec<u32, 2>>, %o: buffer<u32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %base = mul %t, u32 7 : u32
  %x = buffer.read %f, %t : f32
  %eq = warp.active_all_equal %x : bool
  %e0 = select %eq, u32 1, u32 0 : u32
  buffer.write %o, %base, %e0
  %w = buffer.read %v, %t : vec<u32, 2>
  %veq = warp.active_all_equal %w : vec<bool, 2>
  %vw = cast.static %veq : vec<u32, 2>
  %vx = extract %vw, u32 0 : u32
  %vy = extract %vw, u32 1 : u32
  %vs = shl %vy, u32 1 : u32
  %vb = bit_or %vx, %vs : u32
  %b1 = add %base, u32 1 : u32
  buffer.write %o, %b1, %vb
  %first = warp.read_first_active_lane %t : u32
  %b2 = add %base, u32 2 : u32
  buffer.write %o, %b2, %first
  %last = sub $warp_size, u32 1 : u32
  %mirror = sub %last, $warp_lane_id : u32
  %m = warp.read_lane %t, %mirror : u32
  %b3 = add %base, u32 3 : u32
  buffer.write %o, %b3, %m
  %r = mod %t, u32 3 : u32
  %pick = eq %r, u32 0 : bool
  if %pick, true ^some, false ^done, merge ^done
^some:
  %s = warp.active_sum %t : u32
  %b4 = add %base, u32 4 : u32
  buffer.write %o, %b4, %s
  %fl = warp.first_active_lane : u32
  %b5 = add %base, u32 5 : u32
  buffer.write %o, %b5, %fl
  %odd = bit_and %t, u32 1 : u32
  %isodd = ne %odd, u32 0 : bool
  %mask = warp.active_bit_mask %isodd : u32
  %b6 = add %base, u32 6 : u32
  buffer.write %o, %b6, %mask
  br target ^done
^done:
  return
}
"#;

fn lanes_inputs(n: u32) -> xir::interp::Inputs {
    // Warps of every size from 1 to 64 see some mixed zeros (threads 0..8),
    // a NaN next to the same NaN (8..16), and a lone NaN (16..24).
    let f: Vec<serde_json::Value> = (0..n)
        .map(|t| match t {
            0..8 => serde_json::json!(if t % 2 == 0 { "-0.0" } else { "0.0" }),
            8..16 => serde_json::json!("nan"),
            16 => serde_json::json!("nan"),
            _ => serde_json::json!(1.5),
        })
        .collect();
    let v: Vec<[u32; 2]> = (0..n).map(|t| [7, if t == 40 { 8 } else { 9 }]).collect();
    let text = serde_json::json!({
        "dispatch": [n, 1, 1],
        "args": {"f": f, "v": v, "o": {"fill": 4000000000u32, "len": n * 7}},
    });
    xir::interp::Inputs::from_json(&text.to_string()).expect("inputs")
}

#[test]
fn votes_broadcasts_shuffles_and_divergent_lanes_match_the_interpreter_at_the_device_size() {
    let Some(dev) = vulkan_device() else { return };
    let size = dev.subgroups.size;
    assert!(size.is_power_of_two() && size <= 128, "subgroup size {size}");
    let m = parse(LANES);
    let k = kernel_of(&m);
    let inputs = lanes_inputs(128);
    let opts_at = xir::interp::Options { warp_size: size, ..Default::default() };
    let want = xir::interp::run_kernel_with(&m, k, &inputs, &opts_at).expect("interpreter");
    // The interpreter's answer depends on the size; the device is compared at its own.
    if size != 32 {
        let at32 = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter at 32");
        assert_ne!(want.buffers["o"], at32.buffers["o"], "the kernel tells warp sizes apart");
    }
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [128, 1, 1]).expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level} at subgroup size {size}");
    }
}

/// The runner checks the module's subgroup classes against the device's
/// enabled set before it dispatches: without `SubgroupShuffle` the kernel
/// that shuffles is refused, naming the class and the subgroup size.
#[test]
fn a_device_without_an_operation_class_is_refused_before_dispatch() {
    let Some(mut dev) = vulkan_device() else { return };
    let m = parse(LANES);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let need = xir_vulkan::required_subgroup_features(&out.words);
    assert_eq!(
        need.iter().collect::<Vec<_>>(),
        [
            Feature::SubgroupBasic,
            Feature::SubgroupVote,
            Feature::SubgroupArithmetic,
            Feature::SubgroupBallot,
            Feature::SubgroupShuffle,
            Feature::MaximalReconvergence
        ]
    );
    for f in need.iter() {
        assert!(dev.enabled.contains(f), "{} ({f:?}) is not enabled on {}", f.vulkan_name(), dev.name);
    }
    dev.enabled.remove(Feature::SubgroupShuffle);
    let e = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &lanes_inputs(64), [64, 1, 1]).unwrap_err();
    let xir_vulkan::RunError::Feature(why) = &e else { panic!("not a feature refusal: {e}") };
    assert!(why.contains("subgroupSupportedOperations SHUFFLE (compute)"), "{why}");
    assert!(why.contains(&format!("subgroup size {}", dev.subgroups.size)), "{why}");
}

/// One callee's warp operation reached from two call sites in divergent
/// arms: two instances under maximal reconvergence, on the device as in the
/// interpreter (each arm counts its own lanes).
const TWO_CALL_SITES: &str = include_str!("../../backend-spirv/tests/kernels/two_call_sites.xir");

#[test]
fn one_callee_from_two_call_sites_is_two_instances_on_the_device_too() {
    let Some(dev) = vulkan_device() else { return };
    let size = dev.subgroups.size;
    let m = parse(TWO_CALL_SITES);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(r#"{"dispatch": [64, 1, 1], "args": {"o": {"fill": 0, "len": 64}}}"#)
        .expect("inputs");
    let opts_at = xir::interp::Options { warp_size: size, ..Default::default() };
    let want = xir::interp::run_kernel_with(&m, k, &inputs, &opts_at).expect("interpreter");
    let half = u64::from(size.div_ceil(2));
    let expected: Vec<u64> = (0..64).map(|t| if t % 2 == 1 { half } else { half + 100 }).collect();
    assert_eq!(want.buffers["o"], serde_json::json!(expected));
    for level in [0u8, 2] {
        let legal = legalize(TWO_CALL_SITES, level);
        let lk = kernel_of(&legal);
        let out = xir_spirv::compile(&legal, lk, &opts(level, false)).expect("compiles");
        let (got, _) = xir_vulkan::run_kernel(&dev, &legal, lk, &out.words, &out.abi, &inputs, [64, 1, 1])
            .expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level} at subgroup size {size}");
    }
}

/// `f32` reductions and scans, folded lane by lane on the device as the
/// interpreter folds them (`plan::warp_fold`): per thread its warp's sum,
/// product, min and max, its exclusive prefix sum and product, and, inside
/// a branch taken by two lanes in three, the sum of a `vec<f32, 2>` over the
/// lanes that took it. The values span twelve orders of magnitude, so
/// another order of addition rounds differently (checked below).
const FLOAT_FOLDS: &str = r#"
kernel @k(%x: buffer<f32>, %o: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %base = mul %t, u32 8 : u32
  %f = buffer.read %x, %t : f32
  %s = warp.active_sum %f : f32
  buffer.write %o, %base, %s
  %q = mul %f, f32 0.001 : f32
  %q1 = add %q, f32 1.0 : f32
  %p = warp.active_product %q1 : f32
  %b1 = add %base, u32 1 : u32
  buffer.write %o, %b1, %p
  %lo = warp.active_min %f : f32
  %b2 = add %base, u32 2 : u32
  buffer.write %o, %b2, %lo
  %hi = warp.active_max %f : f32
  %b3 = add %base, u32 3 : u32
  buffer.write %o, %b3, %hi
  %ps = warp.prefix_sum %f : f32
  %b4 = add %base, u32 4 : u32
  buffer.write %o, %b4, %ps
  %pp = warp.prefix_product %q1 : f32
  %b5 = add %base, u32 5 : u32
  buffer.write %o, %b5, %pp
  %r = mod %t, u32 3 : u32
  %pick = ne %r, u32 0 : bool
  if %pick, true ^some, false ^done, merge ^done
^some:
  %neg = mul %f, f32 -3.0 : f32
  %v = aggregate %f, %neg : vec<f32, 2>
  %vs = warp.active_sum %v : vec<f32, 2>
  %v0 = extract %vs, u32 0 : f32
  %v1 = extract %vs, u32 1 : f32
  %b6 = add %base, u32 6 : u32
  buffer.write %o, %b6, %v0
  %b7 = add %base, u32 7 : u32
  buffer.write %o, %b7, %v1
  br target ^done
^done:
  return
}
"#;

#[test]
fn float_reductions_and_scans_match_the_interpreter_bit_for_bit_at_the_device_size() {
    // Magnitudes 1e-6..1e6 with both signs, one -0.0 and one NaN lane late
    // in the dispatch (min / max skip it; sums and products carry it).
    let x: Vec<f32> = (0..128u32)
        .map(|t| {
            let mag = 10f32.powi((t * 7 % 13) as i32 - 6);
            let v = mag * (1.0 + (t % 5) as f32 / 7.0);
            if t % 2 == 0 {
                v
            } else {
                -v
            }
        })
        .collect();
    // The test can fail: adding the first warp's values in reverse order
    // (any size from 8 up) gives another sum.
    let forward = x[..8].iter().fold(-0.0f32, |a, &v| a + v);
    let backward = x[..8].iter().rev().fold(-0.0f32, |a, &v| a + v);
    assert_ne!(forward.to_bits(), backward.to_bits(), "the values make the order of addition visible");
    let mut values: Vec<serde_json::Value> = x.iter().map(|&v| serde_json::json!(v)).collect();
    values[3] = serde_json::json!("-0.0");
    values[100] = serde_json::json!("nan");
    let inputs = xir::interp::Inputs::from_json(
        &serde_json::json!({"dispatch": [128, 1, 1], "args": {"x": values, "o": {"fill": 7.0, "len": 1024}}})
            .to_string(),
    )
    .expect("inputs");
    let Some(dev) = vulkan_device() else { return };
    let size = dev.subgroups.size;
    let m = parse(FLOAT_FOLDS);
    let k = kernel_of(&m);
    let opts_at = xir::interp::Options { warp_size: size, ..Default::default() };
    let want = xir::interp::run_kernel_with(&m, k, &inputs, &opts_at).expect("interpreter");
    for level in [0u8, 2, 3] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [128, 1, 1]).expect("runs on Vulkan");
        // Bit for bit, but for a NaN's payload: neither IEEE 754 nor Vulkan
        // says which NaN an operation on a NaN gives (NVIDIA's sum carrying
        // lane 100's NaN is 0x7fffffff, the interpreter's the canonical one).
        let nans =
            |a: &serde_json::Value, b: &serde_json::Value| xir::interp::is_nan_json(a) && xir::interp::is_nan_json(b);
        assert_eq!(want.first_mismatch(&got, nans), None, "-O{level} at subgroup size {size}");
    }
    // With fast math: the group instructions, in the device's order, within
    // the bounds of any order.
    let fast = xir::interp::Options {
        warp_size: size,
        precision: Some(xir::interp::Precision::for_fast_math(true)),
        ..Default::default()
    };
    let bounded = xir::interp::run_kernel_with(&m, k, &inputs, &fast).expect("interpreter");
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, true)).expect("compiles");
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [128, 1, 1]).expect("runs on Vulkan");
        let c = bounded.compare_bounded(&got, xir::interp::same_value);
        assert!(
            c.mismatch.is_none(),
            "-O{level} --fast-math at subgroup size {size}: {:?}",
            c.mismatch.map(|m| m.to_string())
        );
    }
}
