//! `callable_specialization` on a device: a kernel whose callables keep an
//! unused resource argument runs on Vulkan like the interpreter (the
//! compiler side is `backend-spirv/tests/specialize.rs`).

mod common;

use common::*;
use xir::Opcode;

fn calls(m: &xir::Module, k: xir::FuncId) -> usize {
    let f = m.func(k);
    f.all_insts().filter(|&(_, i)| f.inst(i).opcode == Opcode::Call).count()
}

/// The unused buffer through the shipped `spirv` pipeline: at -O0 the
/// callables stay SPIR-V functions (the policy deletes the unused argument
/// instead of inlining), at -O2 the optimizer inlines them like every
/// callable, and either way Vulkan computes what the interpreter does.
#[test]
fn a_kernel_with_an_unused_resource_argument_runs_on_vulkan() {
    let src = r#"
callable @ignore(%b: buffer<u32>, %i: u32) -> u32 {
^entry:
  %r = mul %i, u32 3 : u32
  return %r
}

callable @pass(%i: u32, %b: buffer<u32>) -> u32 {
^entry:
  %r = call @ignore, %b, %i : u32
  %s = add %r, u32 1 : u32
  return %s
}

kernel @k(%out: buffer<u32>, %unused: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %r = call @pass, %t, %unused : u32
  buffer.write %out, %t, %r
  return
}
"#;
    let original = parse(src);
    let inputs = xir::interp::Inputs::from_json(
        r#"{"dispatch": [8, 1, 1], "args": {"out": {"fill": 0, "len": 8}, "unused": {"fill": 5, "len": 2}}}"#,
    )
    .expect("inputs");
    let want = xir::interp::run_kernel(&original, kernel_of(&original), &inputs).expect("interpreter");
    assert_eq!(want.buffers["out"], serde_json::json!([1, 4, 7, 10, 13, 16, 19, 22]));
    for level in [0u8, 2] {
        let (m, out) = through_spirv(src, level);
        let k = kernel_of(&m);
        let want_calls = usize::from(level == 0);
        assert_eq!(calls(&m, k), want_calls, "-O{level}: the call to @pass is inlined only by -O2");
        if level == 0 {
            let dis = out.disassembly_unoptimized();
            // The entry point calls the kernel's body, which calls @pass,
            // which calls @ignore.
            assert_eq!(count(&dis, "OpFunctionCall"), 3, "{dis}");
        }
        let Some(dev) = vulkan_device() else { return };
        let (got, _) =
            xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs, [8, 1, 1]).expect("runs on Vulkan");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}: {got:?} vs {want:?}");
    }
}
