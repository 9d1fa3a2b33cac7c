//! Float atomics on a device: each operation runs on Vulkan, contended on
//! one address, like the interpreter (natively where the device has the
//! feature, through the unsigned word view or a CAS loop where it has not).
//! The compiler side (every table row's opcodes) is
//! `backend-spirv/tests/float_atomics.rs`.

mod common;

use common::*;
use xir_spirv::plan::float_atomics::TABLE;
use xir_spirv::{CompileOptions, Feature, FeatureSet};

/// The float-atomic feature bits of a set (every table feature).
fn float_atomic_features(s: &FeatureSet) -> Vec<Feature> {
    s.iter().filter(|f| TABLE.iter().any(|r| r.native == Some(*f))).collect()
}

/// Every float atomic of buffer `%x`, contended by 128 threads on one
/// address each, with results that do not depend on the order threads run
/// in: sums of small integers (exact), min, max, an exchange of a constant
/// whose returned values are summed (the first sees the initial value, the
/// others 7). Compare-exchange on `%c` (its own buffer: it needs the word
/// view): one winner of a constant swap, whose returns are summed too; a
/// swap that never matches; -0.0 against +0.0 and NaN against NaN, compared
/// as bits.
const BUFFER_OPS: &str = include_str!("../../backend-spirv/tests/kernels/float_atomics_buffer_ops.xir");

/// The same operations on shared memory (no compare-exchange: it has no
/// legal lowering there): each block loads its slots, contends, stores back.
const SHARED_OPS: &str = r#"
kernel @k(%out: buffer<f32>, %v: buffer<f32>, %init: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %sh = alloca.shared : array<f32, 64>
  %tid = extract $thread_id, u32 0 : u32
  %gid = extract $dispatch_id, u32 0 : u32
  %i0 = buffer.read %init, %tid : f32
  %slot = gep %sh, %tid : f32
  store %slot, %i0
  sync_block
  %a = buffer.read %v, %gid : f32
  %o0 = atomic.fetch_add %sh, %a, u32 0 : f32
  %o1 = atomic.fetch_min %sh, %a, u32 1 : f32
  %o2 = atomic.fetch_max %sh, %a, u32 2 : f32
  %e = atomic.exchange %sh, f32 7.0, u32 3 : f32
  %o4 = atomic.fetch_add %sh, %e, u32 4 : f32
  %o5 = atomic.fetch_sub %sh, %a, u32 5 : f32
  sync_block
  %r = load %slot : f32
  buffer.write %out, %gid, %r
  return
}
"#;

/// Min and max where a NaN must lose and -0.0 < +0.0 (the interpreter's
/// `min_num` / `max_num`), on one contended address each.
const MIN_MAX_EDGES: &str = r#"
kernel @k(%x: buffer<f32>, %v: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %a = buffer.read %v, %t : f32
  %o0 = atomic.fetch_min %x, %a, u32 0 : f32
  %o1 = atomic.fetch_max %x, %a, u32 1 : f32
  %o2 = atomic.fetch_min %x, %a, u32 2 : f32
  %o3 = atomic.fetch_max %x, %a, u32 3 : f32
  return
}
"#;

/// `t % 7 - 3` as floats: -3..3, every partial sum exact.
fn small_values(n: usize) -> String {
    (0..n).map(|t| format!("{}.0", (t % 7) as i32 - 3)).collect::<Vec<_>>().join(", ")
}

/// The float-atomic features Mesa 25 lavapipe has (vulkaninfo: no 16- or 64-bit ones).
const LAVAPIPE_F32: [Feature; 6] = [
    Feature::BufferFloat32Atomics,
    Feature::BufferFloat32AtomicAdd,
    Feature::BufferFloat32AtomicMinMax,
    Feature::SharedFloat32Atomics,
    Feature::SharedFloat32AtomicAdd,
    Feature::SharedFloat32AtomicMinMax,
];

fn without_float_atomics(dev: FeatureSet) -> FeatureSet {
    let mut d = dev;
    for r in &TABLE {
        if let Some(f) = r.native {
            d.remove(f);
        }
    }
    d
}

/// Compile `src` for `device` at -O0 and -O2, run 128 threads on Vulkan,
/// compare every buffer with the interpreter bit for bit; the -O0 output for more checks.
fn run_like_interp(dev: &xir_vulkan::Device, src: &str, device: FeatureSet, inputs: &str) -> xir_spirv::SpirvOutput {
    let m = parse(src);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(inputs).expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    let mut first = None;
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &CompileOptions { device_features: Some(device), ..opts(level, false) })
            .unwrap_or_else(|d| panic!("compile:\n{}", xir::diag::render(&d)));
        let (got, _) =
            xir_vulkan::run_kernel(dev, &m, k, &out.words, &out.abi, &inputs, [128, 1, 1]).expect("runs on Vulkan");
        let feats = float_atomic_features(&out.features);
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level} {feats:?}");
        first.get_or_insert(out);
    }
    first.expect("-O0 ran")
}

#[test]
fn buffer_float_atomics_run_on_vulkan_like_the_interpreter_native_and_through_words() {
    let Some(dev) = vulkan_device() else { return };
    let inputs = format!(
        r#"{{"dispatch": [128, 1, 1], "args": {{"x": [0.5, 100.0, -100.0, 2.5, 0.0, 1.0, 0.0, 0.0],
            "c": [2.5, 1.0, 0.0, "nan"], "v": [{}]}}}}"#,
        small_values(128)
    );
    // The interpreter's result, spelled out: 0.5 + sum(v) = 0.5 - 3 (128 = 18 * 7 + 2: -3, -2 left over),
    // min -3, max 3, 7 after the exchanges, 2.5 + 127 * 7, 1 - sum(v), 2.5 + 127 * 42, the
    // failed swaps' returns summed (1 + 0 each), +0.0 kept, NaN swapped.
    let m = parse(BUFFER_OPS);
    let want = xir::interp::run_kernel(&m, kernel_of(&m), &xir::interp::Inputs::from_json(&inputs).unwrap())
        .expect("interpreter");
    assert_eq!(want.buffers["x"], serde_json::json!([-4.5, -3.0, 3.0, 7.0, 891.5, 6.0, 5336.5, 128.0]));
    assert_eq!(want.buffers["c"], serde_json::json!([42.0, 1.0, 0.0, 4.0]));
    if dev.name.contains("llvmpipe") {
        // Mesa 25 lavapipe reports every 32-bit buffer and shared float-atomic bit: the runner enables them.
        assert!(LAVAPIPE_F32.iter().all(|f| dev.enabled.contains(*f)), "{:?}", float_atomic_features(&dev.enabled));
    }
    let native = run_like_interp(&dev, BUFFER_OPS, dev.enabled, &inputs);
    // Without the min/max feature, min and max on `x` go through its
    // integer view, and then every float atomic on `x` does (the H200 has
    // add and exchange but not min/max): nothing is native.
    let expected_native: Vec<Feature> = if dev.enabled.contains(Feature::BufferFloat32AtomicMinMax) {
        [Feature::BufferFloat32AtomicAdd, Feature::BufferFloat32Atomics, Feature::BufferFloat32AtomicMinMax]
            .into_iter()
            .filter(|f| dev.enabled.contains(*f))
            .collect()
    } else {
        Vec::new()
    };
    let mut got = float_atomic_features(&native.features);
    got.sort();
    let mut want_feats = expected_native.clone();
    want_feats.sort();
    assert_eq!(got, want_feats, "every float atomic the device enables is native");
    let words = run_like_interp(&dev, BUFFER_OPS, without_float_atomics(dev.enabled), &inputs);
    assert!(float_atomic_features(&words.features).is_empty());
    assert_eq!(count(&words.disassembly_unoptimized(), "OpLoopMerge"), 7, "four adds, min, max, sub: loops");
}

#[test]
fn shared_float_atomics_run_natively_on_vulkan_like_the_interpreter() {
    let Some(dev) = vulkan_device() else { return };
    let needed = [Feature::SharedFloat32AtomicAdd, Feature::SharedFloat32Atomics, Feature::SharedFloat32AtomicMinMax];
    let init: Vec<String> = [0.5, 100.0, -100.0, 2.5, 0.0, 1.0].iter().map(|x| format!("{x:?}")).collect();
    let init = format!("{}, {}", init.join(", "), vec!["0.0"; 58].join(", "));
    let inputs = format!(
        r#"{{"dispatch": [128, 1, 1], "args": {{"out": [{}], "v": [{}], "init": [{init}]}}}}"#,
        vec!["0.0"; 128].join(", "),
        small_values(128)
    );
    let missing: Vec<_> = needed.iter().filter(|f| !dev.enabled.contains(**f)).collect();
    if !missing.is_empty() {
        // Without the features there is no legal lowering: refused, naming them.
        let e = compile_err(SHARED_OPS, &CompileOptions { device_features: Some(dev.enabled), ..opts(0, false) });
        assert!(missing.iter().all(|f| e.contains(f.vulkan_name())), "{e}");
        eprintln!("!!!!!!!! {}: no native shared float atomics ({missing:?}); checked the refusal only", dev.name);
        return;
    }
    let out = run_like_interp(&dev, SHARED_OPS, dev.enabled, &inputs);
    let mut got = float_atomic_features(&out.features);
    got.sort();
    let mut want = needed.to_vec();
    want.sort();
    assert_eq!(got, want);
    let e = compile_err(
        SHARED_OPS,
        &CompileOptions { device_features: Some(without_float_atomics(dev.enabled)), ..opts(0, false) },
    );
    assert!(e.contains("shaderSharedFloat32AtomicAdd") && e.contains("shaderSharedFloat32AtomicMinMax"), "{e}");
}

#[test]
fn software_min_max_order_nans_and_signed_zeros_like_the_interpreter_on_vulkan() {
    let Some(dev) = vulkan_device() else { return };
    // Threads offer NaN, -0.0 and +0.0 (and NaN of another payload); slots
    // start at +0.0 (min must reach -0.0), -0.0 (max must reach +0.0) and NaN.
    let v: Vec<&str> = (0..128).map(|t| ["\"nan\"", "\"-0.0\"", "0.0", "\"0x7fc00001\""][t % 4]).collect();
    let inputs = format!(
        r#"{{"dispatch": [128, 1, 1], "args": {{"x": [0.0, "-0.0", "nan", "nan"], "v": [{}]}}}}"#,
        v.join(", ")
    );
    let m = parse(MIN_MAX_EDGES);
    let want = xir::interp::run_kernel(&m, kernel_of(&m), &xir::interp::Inputs::from_json(&inputs).unwrap())
        .expect("interpreter");
    assert_eq!(want.buffers["x"], serde_json::json!(["-0.0", 0.0, "-0.0", 0.0]));
    let out = run_like_interp(&dev, MIN_MAX_EDGES, without_float_atomics(dev.enabled), &inputs);
    assert_eq!(count(&out.disassembly_unoptimized(), "OpLoopMerge"), 4);
}

/// Known gap: the native `OpAtomicF{Min,Max}EXT` leave signed zeros to the
/// device (SPV_EXT_shader_atomic_float_min_max does not order them), so the
/// native run matches the interpreter only up to the sign of a zero (and NaN
/// payloads). On lavapipe a NaN loses as in the interpreter, but an equal
/// zero keeps the old one: min(+0.0, -0.0) stays +0.0 where the interpreter
/// gives -0.0. The software loop (above) is exact.
#[test]
fn native_min_max_match_the_interpreter_up_to_the_sign_of_zero() {
    let Some(dev) = vulkan_device() else { return };
    if !dev.enabled.contains(Feature::BufferFloat32AtomicMinMax) {
        eprintln!("!!!!!!!! {}: no shaderBufferFloat32AtomicMinMax; nothing native to check", dev.name);
        return;
    }
    let v: Vec<&str> = (0..128).map(|t| ["\"nan\"", "\"-0.0\"", "0.0", "\"0x7fc00001\""][t % 4]).collect();
    let inputs = format!(
        r#"{{"dispatch": [128, 1, 1], "args": {{"x": [0.0, "-0.0", "nan", "nan"], "v": [{}]}}}}"#,
        v.join(", ")
    );
    let m = parse(MIN_MAX_EDGES);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(&inputs).expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    let out = xir_spirv::compile(&m, k, &CompileOptions { device_features: Some(dev.enabled), ..opts(0, false) })
        .expect("compiles");
    assert_eq!(float_atomic_features(&out.features), vec![Feature::BufferFloat32AtomicMinMax]);
    let (got, _) =
        xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [128, 1, 1]).expect("runs on Vulkan");
    assert_eq!(want.first_mismatch(&got, xir::interp::close(0.0, 0.0)), None, "zeros of either sign, NaNs lost");
    if dev.name.contains("llvmpipe") {
        // The gap is still there (remove this and the docs' note when the native path orders zeros).
        assert_eq!(got.buffers["x"][0], serde_json::json!(0.0), "lavapipe keeps +0.0 against -0.0");
    }
}
