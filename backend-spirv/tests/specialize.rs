//! `callable_specialization` beyond its fixtures (file tests,
//! `tests/filetests/callable_specialization/`: resource and shared-pointer
//! call sites inlined, others kept, unused resources deleted): a recursive
//! resource callee is refused (the device run of a kernel with an unused
//! resource argument is `vulkan/tests/specialize_vulkan.rs`).

mod common;

use common::*;
#[test]
fn recursive_resource_callee_is_refused() {
    let src = r#"
callable @r(%b: buffer<u32>) -> void {
^entry:
  buffer.write %b, u32 0, u32 1
  call @r, %b
  return
}
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  call @r, %out
  return
}
"#;
    let mut m = parse(src);
    let e = xir_spirv::specialize::specialize_module(&mut m).unwrap_err();
    assert!(matches!(&e, xir_spirv::specialize::SpecializeError::Recursive { callee, .. } if callee == "r"), "{e:?}");
    // The error names its call site, so the pass's diagnostic is located.
    let (f, i) = e.site().expect("a call site");
    assert_eq!(m.func(f).opcode(i), xir::Opcode::Call);
}
