//! Kernels dispatched in whole blocks on a device: every thread of the
//! rounded-up workgroups runs and reads the rounded-up dispatch size, as in
//! the interpreter, at every level, with and without value arguments in
//! push constants, and a zero dimension runs nothing (the compiler side is
//! `backend-spirv/tests/whole_blocks.rs`).

mod common;

use common::*;

const WHOLE: &str = include_str!("../../backend-spirv/tests/kernels/whole_blocks.xir");
const WHOLE_VALUE: &str = include_str!("../../backend-spirv/tests/kernels/whole_blocks_value.xir");

fn run_both(dev: &xir_vulkan::Device, src: &str, inputs: &str, want_out: serde_json::Value) {
    let m = parse(src);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(inputs).expect("inputs");
    let dispatch = inputs.dispatch.expect("a dispatch");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    assert_eq!(want.buffers["out"], want_out, "interpreter");
    for level in [0u8, 2] {
        let out = xir_spirv::compile(&m, k, &opts(level, false)).expect("compiles");
        let (got, _) =
            xir_vulkan::run_kernel(dev, &m, k, &out.words, &out.abi, &inputs, dispatch).expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}: {got:?} vs {want:?}");
    }
}

#[test]
fn every_thread_of_the_rounded_up_blocks_runs_on_the_device() {
    let Some(dev) = vulkan_device() else { return };
    let fill = |n: u32| format!(r#"{{"fill": 99, "len": {n}}}"#);
    run_both(
        &dev,
        WHOLE,
        &format!(r#"{{"dispatch": [5, 1, 1], "args": {{"out": {}}}}}"#, fill(18)),
        serde_json::json!([8, 0, 8, 0, 8, 0, 8, 0, 8, 1, 8, 1, 8, 1, 8, 1, 99, 99]),
    );
    run_both(
        &dev,
        WHOLE,
        &format!(r#"{{"dispatch": [4, 1, 1], "args": {{"out": {}}}}}"#, fill(10)),
        serde_json::json!([4, 0, 4, 0, 4, 0, 4, 0, 99, 99]),
    );
    run_both(
        &dev,
        WHOLE,
        &format!(r#"{{"dispatch": [0, 1, 1], "args": {{"out": {}}}}}"#, fill(2)),
        serde_json::json!([99, 99]),
    );
    // `a * 8 + i` for the eight threads of two blocks: the value sits after the dispatch size.
    run_both(
        &dev,
        WHOLE_VALUE,
        &format!(r#"{{"dispatch": [6, 1, 1], "args": {{"a": 10, "out": {}}}}}"#, fill(9)),
        serde_json::json!([80, 81, 82, 83, 84, 85, 86, 87, 99]),
    );
}
