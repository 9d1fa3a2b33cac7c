//! A printing kernel on the Vulkan device. Where the device offers
//! `VK_KHR_shader_non_semantic_info` (NVIDIA), the runner enables it, the
//! enabled-feature snapshot satisfies the kernel's requirements (including
//! the emission-owned `ShaderNonSemanticInfo` bit), and the buffer results
//! equal the interpreter's at -O0 and -O2 with the `DebugPrintf`
//! instructions in place. Where it does not (Mesa 22 lavapipe), compiling
//! against the snapshot is refused naming the extension.
//! The printf text itself goes to a debug-printf consumer (the validation
//! layer), which the runner does not install: the interpreter's printed lines
//! are checked against the printer records' formats instead.

mod common;

use common::*;
use xir_spirv::Feature;

const SRC: &str = r#"
kernel @k(%out: buffer<u32>, %x: f32) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %v = aggregate %x, %x : vec<f32, 2>
  %sq = mul %t, %t : u32
  print "t={} v={}", %t, %v
  buffer.write %out, %t, %sq
  return
}
"#;

#[test]
fn a_printing_kernel_runs_and_matches_the_interpreter() {
    let Some(dev) = vulkan_device() else { return };
    eprintln!("device {} ({}), enabled {:?}", dev.name, dev.driver, dev.enabled.iter().collect::<Vec<_>>());
    let m = parse(SRC);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(r#"{"dispatch": [4, 1, 1], "args": {"out": [9, 9, 9, 9], "x": 1.5}}"#)
        .expect("inputs");
    let mut want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    let mut lines = want.printed.clone();
    lines.sort();
    assert_eq!(lines, ["t=0 v=(1.5, 1.5)", "t=1 v=(1.5, 1.5)", "t=2 v=(1.5, 1.5)", "t=3 v=(1.5, 1.5)"]);
    want.printed.clear();
    if !dev.enabled.contains(Feature::ShaderNonSemanticInfo) {
        // Fail closed: without the extension (lavapipe of Mesa 22 does not
        // list it, and the runner asks for Vulkan 1.2) the kernel is refused
        // by name before any SPIR-V reaches the driver.
        let o = xir_spirv::CompileOptions { device_features: Some(dev.enabled), ..opts(0, false) };
        let e = xir::diag::render(&xir_spirv::compile(&m, k, &o).expect_err("must be refused"));
        assert!(e.contains("VK_KHR_shader_non_semantic_info"), "{e}");
        eprintln!(
            "\n!!!!!!!! {} lacks VK_KHR_shader_non_semantic_info: refusal checked, run skipped !!!!!!!!\n",
            dev.name
        );
        return;
    }
    for level in [0u8, 2] {
        let o = xir_spirv::CompileOptions { device_features: Some(dev.enabled), ..opts(level, false) };
        let out = xir_spirv::compile(&m, k, &o).expect("the device snapshot satisfies the kernel");
        assert!(out.features.contains(Feature::ShaderNonSemanticInfo));
        assert_eq!(out.printers.len(), 1);
        assert_eq!(out.printers[0].format, "t={} v={}");
        assert!(out.disassembly().contains("NonSemantic.DebugPrintf"));
        let (got, _) = xir_spirv::vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [4, 1, 1])
            .expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}");
        assert_eq!(got.buffers["out"], serde_json::json!([0, 1, 4, 9]));
    }
}
