//! The argument block on a device: the runner fills it and the kernel
//! matches the interpreter (the compiler side is
//! `backend-spirv/tests/argument_block.rs`).

mod common;

use common::*;

/// 2 x 64 + 2 + 16 + 4 bytes of values: over 128 with the dispatch size.
const BIG: &str = include_str!("../../backend-spirv/tests/kernels/argument_block_big.xir");

#[test]
fn the_runner_fills_the_block_and_matches_the_interpreter() {
    let Some(dev) = vulkan_device() else { return };
    let m = parse(BIG);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(
        r#"{"dispatch": [4, 1, 1], "args": {
        "a": [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]],
        "n": 7,
        "b": [[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 3, 0], [1, 1, 1, 1]],
        "out": [0, 0, 0, 0],
        "flag": true,
        "v": [0.5, 0.25, 2, -1],
        "o2": [0, 0, 0, 0]}}"#,
    )
    .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [4, 1, 1]).expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}: {got:?} vs {want:?}");
        assert_eq!(got.buffers["o2"], serde_json::json!([7, 8, 9, 10]));
    }
}
