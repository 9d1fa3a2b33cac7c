//! Target features on a device: narrow storage whose arithmetic
//! capabilities were trimmed runs on Vulkan like the interpreter (the
//! compiler side is `backend-spirv/tests/target_features.rs`).

mod common;

use common::*;
use xir_spirv::{CompileOptions, Feature};

/// u8 and i16 only move: loaded, widened, stored as 32-bit values. (An f16
/// widening is emitted as exact bit arithmetic that needs an f16 constant,
/// so f16 storage keeps `Float16`; see `a_narrow_constant_keeps_...`.)
const NARROW_STORAGE: &str = r#"
kernel @k(%a: buffer<u8>, %h: buffer<i16>, %out: buffer<u32>, %io: buffer<i32>) block_size(4, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %x = buffer.read %a, %i : u8
  %w = cast.static %x : u32
  buffer.write %out, %i, %w
  %y = buffer.read %h, %i : i16
  %z = cast.static %y : i32
  buffer.write %io, %i, %z
  return
}
"#;

#[test]
fn trimmed_narrow_storage_runs_on_vulkan_like_the_interpreter() {
    let Some(dev) = vulkan_device() else { return };
    let m = parse(NARROW_STORAGE);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(
        r#"{"dispatch": [4, 1, 1], "args": {"a": [1, 200, 255, 0], "h": [-1, 300, -32768, 7],
            "out": [9, 9, 9, 9], "io": [9, 9, 9, 9]}}"#,
    )
    .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    assert_eq!(want.buffers["io"], serde_json::json!([-1, 300, -32768, 7]));
    for level in [0u8, 2] {
        let out =
            xir_spirv::compile(&m, k, &CompileOptions { device_features: Some(dev.enabled), ..opts(level, false) })
                .expect("the device snapshot satisfies the trimmed kernel");
        assert!(!out.features.contains(Feature::Int8) && !out.features.contains(Feature::Int16));
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [4, 1, 1]).expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}");
    }
}
