//! Arithmetic lowering checked on the module: contraction decorations (and
//! FMA only under fast math), bit operations, exact C `round`, shifts modulo
//! the width, both outer-product forms.

mod common;

use common::*;

const SCALAR: &str = r#"
kernel @k(%x: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %x, u32 0 : f32
  %b = buffer.read %x, u32 1 : f32
  %c = buffer.read %x, u32 2 : f32
  %ab = mul %a, %b : f32
  %r = add %ab, %c : f32
  buffer.write %x, u32 3, %r
  return
}
"#;

const REDUCTION: &str = r#"
kernel @k(%x: buffer<vec<f32, 4>>, %y: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %v = buffer.read %x, u32 0 : vec<f32, 4>
  %s = reduce_sum %v : f32
  buffer.write %y, u32 0, %s
  return
}
"#;

const MATRIX: &str = r#"
kernel @k(%m: buffer<mat<f32, 4>>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %m, u32 0 : mat<f32, 4>
  %b = buffer.read %m, u32 1 : mat<f32, 4>
  %p = matrix_linalg_mul %a, %b : mat<f32, 4>
  %s = matrix_comp_add %p, %a : mat<f32, 4>
  buffer.write %m, u32 2, %s
  return
}
"#;

#[test]
fn no_contraction_on_every_float_op_without_fast_math() {
    let scalar = compile_all_presets(SCALAR);
    assert_eq!(no_contraction(&load(&scalar.words_unoptimized)), 2, "mul + add");
    let red = compile_all_presets(REDUCTION);
    assert_eq!(no_contraction(&load(&red.words_unoptimized)), 3, "three lane adds");
    let mat = compile_all_presets(MATRIX);
    // one OpMatrixTimesMatrix + four column adds
    assert_eq!(no_contraction(&load(&mat.words_unoptimized)), 5, "{}", mat.disassembly_unoptimized());
    assert_eq!(count(&scalar.disassembly_unoptimized(), "Fma"), 0);
}

#[test]
fn fast_math_contracts_one_planned_fma_and_drops_no_contraction() {
    let out = compile_with(SCALAR, &opts(0, true));
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "Fma"), 1, "{dis}");
    assert_eq!(count(&dis, "OpFMul"), 0, "the fused multiply is not emitted separately:\n{dis}");
    assert_eq!(no_contraction(&load(&out.words_unoptimized)), 0);
    // A multiply with two uses is not fused.
    let two_uses =
        SCALAR.replace("buffer.write %x, u32 3, %r", "buffer.write %x, u32 3, %r\n  buffer.write %x, u32 4, %ab");
    let dis = compile_with(&two_uses, &opts(0, true)).disassembly_unoptimized();
    assert_eq!(count(&dis, "Fma"), 0, "{dis}");
    for level in 0..=3 {
        compile_with(SCALAR, &opts(level, true));
    }
}

#[test]
fn fast_math_declares_no_float_controls_and_requires_no_float_control_features() {
    let exact = compile_with(SCALAR, &opts(0, false));
    let dis = exact.disassembly_unoptimized();
    assert_eq!(count(&dis, "RoundingModeRTE 32"), 1, "{dis}");
    assert_eq!(count(&dis, "SignedZeroInfNanPreserve 32"), 1, "{dis}");
    assert!(exact.features.contains(xir_spirv::Feature::RoundingModeRte));
    assert!(exact.features.contains(xir_spirv::Feature::SignedZeroInfNanPreserve));
    for level in 0..=3 {
        let fast = compile_with(SCALAR, &opts(level, true));
        for dis in [fast.disassembly_unoptimized(), fast.disassembly()] {
            assert_eq!(count(&dis, "RoundingModeRTE"), 0, "-O{level}: {dis}");
            assert_eq!(count(&dis, "SignedZeroInfNanPreserve"), 0, "-O{level}: {dis}");
        }
        assert!(!fast.features.contains(xir_spirv::Feature::RoundingModeRte), "-O{level}");
        assert!(!fast.features.contains(xir_spirv::Feature::SignedZeroInfNanPreserve), "-O{level}");
    }
}

const BITS: &str = r#"
kernel @k(%x: buffer<u32>, %s: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %v = buffer.read %x, u32 0 : u32
  %a = clz %v : u32
  %b = ctz %v : u32
  %c = popcount %v : u32
  %d = reverse %v : u32
  %n = buffer.read %s, u32 0 : i32
  %e = shr %n, %v : i32
  %f = rotl %v, %n : u32
  %g = shl %v, u64 33 : u32
  buffer.write %x, u32 1, %a
  buffer.write %x, u32 2, %b
  buffer.write %x, u32 3, %c
  buffer.write %x, u32 4, %d
  buffer.write %s, u32 1, %e
  buffer.write %x, u32 5, %f
  buffer.write %x, u32 6, %g
  return
}
"#;

#[test]
fn bit_operations_use_find_msb_lsb_and_masked_shift_amounts() {
    let out = compile_all_presets(BITS);
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "FindUMsb"), 1, "{dis}");
    assert_eq!(count(&dis, "FindILsb"), 1, "{dis}");
    assert_eq!(count(&dis, "FindSMsb"), 0);
    assert_eq!(count(&dis, "OpBitCount"), 1);
    assert_eq!(count(&dis, "OpBitReverse"), 1);
    assert_eq!(count(&dis, "OpShiftRightArithmetic"), 1, "signed shr");
    // every shift amount is masked with width - 1 = 31
    let m = load(&out.words_unoptimized);
    let consts = const_values(&m);
    let ands: Vec<_> = insts(&m).into_iter().filter(|i| i.class.opcode == Op::BitwiseAnd).collect();
    let masked = ands.iter().filter(|i| consts.get(&i.operands[1].unwrap_id_ref()) == Some(&31)).count();
    assert!(masked >= 4, "shr, rotl (twice), shl amounts masked: {masked}\n{dis}");
    assert_eq!(count(&dis, "OpUConvert"), 1, "the u64 shift amount is narrowed to the value's width");
}

#[test]
fn c_round_compares_the_fraction_with_an_exact_half_and_copies_the_sign() {
    let src = r#"
kernel @k(%x: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %v = buffer.read %x, u32 0 : f32
  %r = round %v : f32
  buffer.write %x, u32 1, %r
  return
}
"#;
    let out = compile_all_presets(src);
    let m = load(&out.words_unoptimized);
    let consts = const_values(&m);
    let dis = out.disassembly_unoptimized();
    assert!(dis.contains("Trunc") && dis.contains("FAbs"), "{dis}");
    let ge: Vec<_> = insts(&m).into_iter().filter(|i| i.class.opcode == Op::FOrdGreaterThanEqual).collect();
    assert_eq!(ge.len(), 1);
    assert_eq!(consts.get(&ge[0].operands[1].unwrap_id_ref()), Some(&(0.5f32.to_bits() as u64)), "exact 0.5");
    // Never trunc(x + 0.5): the only FAdd adds 1.0 to the truncated magnitude.
    let adds: Vec<_> = insts(&m).into_iter().filter(|i| i.class.opcode == Op::FAdd).collect();
    assert_eq!(adds.len(), 1);
    assert_eq!(consts.get(&adds[0].operands[1].unwrap_id_ref()), Some(&(1.0f32.to_bits() as u64)));
    assert_eq!(consts.values().filter(|&&v| v == 0x8000_0000).count(), 1, "sign mask for the copy-sign");
}

#[test]
fn outer_product_vector_and_matrix_forms() {
    let src = r#"
kernel @k(%v: buffer<vec<f32, 3>>, %m: buffer<mat<f32, 3>>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %v, u32 0 : vec<f32, 3>
  %b = buffer.read %v, u32 1 : vec<f32, 3>
  %o = outer_product %a, %b : mat<f32, 3>
  %x = buffer.read %m, u32 0 : mat<f32, 3>
  %y = buffer.read %m, u32 1 : mat<f32, 3>
  %p = outer_product %x, %y : mat<f32, 3>
  buffer.write %m, u32 2, %o
  buffer.write %m, u32 3, %p
  return
}
"#;
    let out = compile_all_presets(src);
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpOuterProduct"), 1, "{dis}");
    assert_eq!(count(&dis, "OpTranspose"), 1, "{dis}");
    assert_eq!(count(&dis, "OpMatrixTimesMatrix"), 1, "{dis}");
    assert_eq!(no_contraction(&load(&out.words_unoptimized)), 2);
    assert!(dis.contains("MatrixStride 16"), "mat3 columns are 16 bytes apart on the host:\n{dis}");
}

#[test]
fn f32_fma_is_computed_exactly_through_f64_round_to_odd() {
    let src = r#"
kernel @k(%x: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %x, u32 0 : f32
  %r = fma %a, %a, %a : f32
  buffer.write %x, u32 1, %r
  return
}
"#;
    let out = compile_all_presets(src);
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "Fma"), 0, "GLSL Fma may be evaluated unfused on Vulkan:\n{dis}");
    assert_eq!(count(&dis, "OpFConvert"), 4, "three widenings and the final rounding:\n{dis}");
    assert!(out.features.contains(xir_spirv::Feature::Float64));
}

const SIGNED_REM: &str = r#"
kernel @k(%x: buffer<i32>, %v: buffer<vec<i64, 3>>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %x, u32 0 : i32
  %r = mod %a, i32 -7 : i32
  buffer.write %x, u32 1, %r
  %w = buffer.read %v, u32 0 : vec<i64, 3>
  %q = mod %w, %w : vec<i64, 3>
  buffer.write %v, u32 1, %q
  return
}
"#;

#[test]
fn signed_remainder_is_computed_on_magnitudes_never_srem() {
    // The H200 driver evaluates OpSRem as unsigned (docs/vulkan.md).
    let out = compile_all_presets(SIGNED_REM);
    for dis in [out.disassembly_unoptimized(), out.disassembly()] {
        assert_eq!(count(&dis, "OpSRem"), 0, "{dis}");
        assert_eq!(count(&dis, "OpSMod"), 0, "{dis}");
    }
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpUMod"), 2, "one scalar, one vector remainder: {dis}");
    // sign masks of a and b, no signed compares
    assert_eq!(count(&dis, "OpShiftRightArithmetic"), 4, "{dis}");
    assert_eq!(count(&dis, "OpSLessThan"), 0, "{dis}");
}

const HALF_WIDEN: &str = r#"
kernel @k(%x: buffer<f32>, %y: buffer<vec<f32, 3>>, %d: buffer<f64>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %x, u32 0 : f32
  %h = cast.static %a : f16
  %back = cast.static %h : f32
  buffer.write %x, u32 1, %back
  %v = buffer.read %y, u32 0 : vec<f32, 3>
  %hv = cast.static %v : vec<f16, 3>
  %bv = cast.static %hv : vec<f32, 3>
  buffer.write %y, u32 1, %bv
  %wide = cast.static %h : f64
  buffer.write %d, u32 0, %wide
  return
}
"#;

#[test]
fn half_widening_is_rebuilt_from_the_bits_and_every_width_rounds_to_nearest_even() {
    // The H200 driver folds FConvert(FConvert(x to f16) to f32) to x.
    let out = compile_all_presets(HALF_WIDEN);
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "UnpackHalf2x16"), 0, "{dis}");
    // scalar: one pair; vec3: two pairs; f64: one pair then f32 -> f64
    assert_eq!(count(&dis, "OpConvertUToF"), 3, "one subnormal path per widening: {dis}");
    let fconvert_lines: Vec<&str> = dis.lines().filter(|l| l.contains("OpFConvert")).collect();
    assert_eq!(fconvert_lines.len(), 3, "two narrowings, one f32 -> f64: {dis}");
    for width in [16, 32, 64] {
        assert_eq!(count(&dis, &format!("RoundingModeRTE {width}")), 1, "{dis}");
    }
    assert_eq!(count(&dis, "OpCapability RoundingModeRTE"), 1, "{dis}");
}

const SIGN_EXTEND: &str = r#"
kernel @k(%b: i8, %x: buffer<i32>, %l: buffer<i64>) block_size(1, 1, 1) {
^entry:
  %w = cast.static %b : i32
  buffer.write %x, u32 0, %w
  %a = buffer.read %x, u32 1 : i32
  %wide = cast.static %a : i64
  buffer.write %l, u32 0, %wide
  return
}
"#;

#[test]
fn sign_extension_uses_bitfield_extract_for_narrow_and_shifts_for_i32() {
    // lavapipe miscompiles compares of SConvert'ed i32; the H200 treats
    // SConvert of narrow values as a no-op (docs/vulkan.md).
    let out = compile_all_presets(SIGN_EXTEND);
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpSConvert"), 0, "{dis}");
    assert_eq!(count(&dis, "OpBitFieldSExtract"), 1, "i8 -> i32: {dis}");
    assert_eq!(count(&dis, "OpShiftRightArithmetic"), 1, "i32 -> i64: {dis}");
}
