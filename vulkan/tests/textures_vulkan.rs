//! Storage-image textures in the runner: good texels round trip, bad
//! texture inputs and non-canonical ABIs are refused by name (the compiler
//! side is `backend-spirv/tests/textures.rs`).

mod common;

use common::*;

const MIXED: &str = include_str!("../../backend-spirv/tests/kernels/textures_mixed.xir");

#[test]
fn the_runner_refuses_bad_texture_inputs_and_non_canonical_abis_by_name() {
    let Some(dev) = vulkan_device() else { return };
    let m = parse(MIXED);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let inputs = |a: &str| {
        xir::interp::Inputs::from_json(&format!(
            r#"{{"args": {{"a": {a}, "b": [0], "c": {{"size": [1, 1, 1], "fill": [1, 2, 3, 4]}}, "n": 5}}}}"#
        ))
        .expect("inputs")
    };
    let run = |abi: &xir_spirv::KernelAbi, a: &str| {
        xir_vulkan::run_kernel(&dev, &m, k, &out.words, abi, &inputs(a), [1, 1, 1]).map(|(o, _)| o)
    };
    // A good run writes every texel back unchanged and `n` to the buffer.
    let good = run(&out.abi, r#"{"size": [1, 1], "texels": [[0.5, -0.0, 2.0, 3.0]]}"#).expect("runs");
    assert_eq!(good.buffers["a"], serde_json::json!({"size": [1, 1], "texels": [[0.5, "-0.0", 2.0, 3.0]]}));
    assert_eq!(good.buffers["c"], serde_json::json!({"size": [1, 1, 1], "texels": [[1, 2, 3, 4]]}));
    assert_eq!(good.buffers["b"], serde_json::json!([5]));
    for (bad, why) in [
        (r#"{"size": [1, 1], "texels": [[0.5, 1.0, 2.0]]}"#, "four components"),
        (r#"{"size": [2, 1], "texels": [[0.5, 1.0, 2.0, 3.0]]}"#, "1 texels given"),
        (r#"{"size": [1], "fill": [0, 0, 0, 0]}"#, "needs 2 sizes"),
        (r#"{"size": [1, 1]}"#, "exactly one of"),
    ] {
        let e = run(&out.abi, bad).expect_err(bad).to_string();
        assert!(e.contains(why), "{bad}: {e}");
    }
    // A 3D size whose texel count overflows u64 is refused by the texel limit, not a panic.
    let huge = xir::interp::Inputs::from_json(
        r#"{"args": {"a": {"size": [1, 1], "fill": [0, 0, 0, 0]}, "b": [0],
            "c": {"size": [4294967295, 4294967295, 4294967295], "fill": [1, 2, 3, 4]}, "n": 5}}"#,
    )
    .expect("inputs");
    let e = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &huge, [1, 1, 1]).expect_err("huge").to_string();
    let texels = u128::from(u32::MAX).pow(3);
    assert!(e.contains(&format!("argument `c`: {texels} texels exceed the runner's limit of 16777216")), "{e}");
    // A shuffled property list is refused before anything is created.
    let mut shuffled = out.abi.clone();
    shuffled.properties.swap(1, 2);
    let e = run(&shuffled, r#"{"size": [1, 1], "fill": [0, 0, 0, 0]}"#).expect_err("non-canonical").to_string();
    assert!(e.contains("not canonical"), "{e}");
}
