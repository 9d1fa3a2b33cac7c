//! FP8 at the SPIR-V boundary: values travel as u8 bits with exact
//! constants, conversions are software (emit/fp8.rs), and anything but
//! transport and conversion is refused at the handoff with its reason. The
//! bit-exact conversions against the interpreter are in
//! tests/tests/vulkan_fp8.rs.

mod common;

use common::*;

const TRANSPORT: &str = r#"
kernel @k(%a: buffer<fp8e4m3>, %b: buffer<fp8e5m2>, %o: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %a, u32 0 : fp8e4m3
  %c = lt u32 1, u32 2 : bool
  %y = select %c, %x, fp8e4m3 0x7e : fp8e4m3
  buffer.write %a, u32 1, %y
  %z = cast.static %y : fp8e5m2
  buffer.write %b, u32 0, %z
  %f = cast.static %z : f32
  buffer.write %o, u32 0, %f
  return
}
"#;

#[test]
fn fp8_is_carried_as_u8_bits_with_exact_constants() {
    let out = compile_all_presets(TRANSPORT);
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpTypeFloat 8"), 0, "{dis}");
    assert!(dis.contains("OpTypeInt 8 0"), "{dis}");
    // the constant keeps its bits (0x7e = 448 in E4M3)
    assert!(dis.lines().any(|l| l.contains("OpConstant") && l.trim_end().ends_with(" 126")), "{dis}");
    // encode rounds with integer operations only: no float rounding
    // instruction, whose f64 form lavapipe on LLVM 15 got wrong
    assert_eq!(count(&dis, "RoundEven"), 0, "{dis}");
    assert!(count(&dis, "OpShiftRightLogical") >= 3, "{dis}");
}

#[test]
fn fp8_arithmetic_and_comparison_are_refused_before_emission() {
    // `add`: the verifier's operand classes refuse it; `lt` (any float
    // compares) passes the verifier and meets the handoff's FP8 rule.
    for (op, why) in [("add %x, %x : fp8e4m3", "non-fp8"), ("lt %x, %x : bool", "transport and conversion only")] {
        let src = format!(
            "kernel @k(%a: buffer<fp8e4m3>) block_size(1, 1, 1) {{\n^entry:\n  %x = buffer.read %a, u32 0 : fp8e4m3\n  %y = {op}\n  return\n}}\n"
        );
        let err = compile_err(&src, &opts(0, false));
        assert!(err.contains(why) && err.contains("fp8e4m3"), "{op}: {err}");
        assert!(err.contains(":4:3"), "located at the instruction: {err}");
    }
}
