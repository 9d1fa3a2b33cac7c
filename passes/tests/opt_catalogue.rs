//! Tests of the scalar catalogue passes `reassociate`, `simplify_libcalls`,
//! `scalarizer`, `cvp` and `if_conversion` on XIR text: exact printed
//! results, statistics, and interpreter equality before and after on inputs
//! chosen to hit wrap-around, NaN, signed zero and both sides of every
//! branch. Negative cases check that inexact rewrites are not made.

mod opt_support;

use opt_support::*;
use xir::interp::Inputs;

// ---- reassociate -----------------------------------------------------------

const REASSOC_IN: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %y = buffer.read %in, u32 1 : u32
  %a = add %x, u32 5 : u32
  %b = add %a, %y : u32
  %c = sub %b, %x : u32
  %d = add %c, u32 4294967293 : u32
  %m = mul %x, u32 3 : u32
  %m5 = mul %x, u32 5 : u32
  %n = add %m, %m5 : u32
  %p = bit_xor %x, %y : u32
  %q = bit_xor %p, %x : u32
  %r = bit_and %y, %x : u32
  %s = bit_and %r, %y : u32
  buffer.write %out, u32 0, %d
  buffer.write %out, u32 1, %n
  buffer.write %out, u32 2, %q
  buffer.write %out, u32 3, %s
  return
}
"#;

// (x + 5 + y) - x - 3 = y + 2; x*3 + x*5 = x*8; x ^ y ^ x = y; y & x & y = x & y
// (leaves in rank order: %x before %y).
const REASSOC_OUT: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %y = buffer.read %in, u32 1 : u32
  %d = add %y, u32 2 : u32
  %n = mul %x, u32 8 : u32
  %s = bit_and %x, %y : u32
  buffer.write %out, u32 0, %d
  buffer.write %out, u32 1, %n
  buffer.write %out, u32 2, %y
  buffer.write %out, u32 3, %s
  return
}
"#;

#[test]
fn reassociate_folds_cancels_and_sorts_integer_trees() {
    for xy in ["[7, 9]", "[4294967295, 4294967294]", "[0, 2147483648]"] {
        let inp = inputs(&format!(r#"{{"args": {{"in": {xy}, "out": [0, 0, 0, 0]}}}}"#));
        let out = check_exact(REASSOC_IN, "reassociate", None, false, REASSOC_OUT, &inp);
        assert_eq!(stat(&out, "trees"), "4");
        assert_eq!(stat(&out, "removed"), "8");
    }
    // A second run finds every tree canonical already.
    unchanged(REASSOC_OUT, "reassociate", None);
    // A rewrite may not trade instructions for new constants: `x + 0x9e3779b9`
    // is not `x - 0x61c88647`, `x - 7` is not `x + 0xfffffff9`, and
    // `x - q * -7` is not `x + q * 7`.
    let lone = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %a = add %x, u32 2654435769 : u32
  %b = sub %x, u32 7 : u32
  %q = mul %a, u32 4294967289 : u32
  %r = sub %x, %q : u32
  buffer.write %out, u32 0, %b
  buffer.write %out, u32 1, %r
  return
}
"#;
    unchanged(lone, "reassociate", None);
}

const REASSOC_CSE_IN: &str = r#"kernel @k(%in: buffer<i32>, %out: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : i32
  %y = buffer.read %in, u32 1 : i32
  %a = add %y, %x : i32
  %b = add %a, i32 1 : i32
  %c = add %x, i32 1 : i32
  %d = add %c, %y : i32
  %e = mul %b, %d : i32
  buffer.write %out, u32 0, %e
  return
}
"#;

#[test]
fn reassociate_makes_equal_sums_equal_instructions() {
    let inp = inputs(r#"{"args": {"in": [-2147483648, -5], "out": [0]}}"#);
    let mut m = parse(REASSOC_CSE_IN);
    let before = interp(&m, &inp);
    run_pass(&mut m, "reassociate", None, false);
    let text = xir::text::print_module(&m);
    // Both sums are now `x + y + 1`, written the same way.
    assert_eq!(text.matches("add %x, %y : i32").count(), 2, "{text}");
    assert_eq!(text.matches(", i32 1 : i32").count(), 2, "{text}");
    let out = run_pass(&mut m, "early_cse", None, false);
    assert_eq!(stat(&out, "removed"), "2");
    assert_eq!(interp(&m, &inp), before);
    // early_cse alone cannot merge them.
    let mut m = parse(REASSOC_CSE_IN);
    assert!(!run_pass(&mut m, "early_cse", None, false).changed);
}

const REASSOC_FLOAT: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : f32
  %a = add %x, f32 1.0 : f32
  %b = add %a, f32 2.0 : f32
  buffer.write %out, u32 0, %b
  return
}
"#;

#[test]
fn reassociate_touches_floats_only_under_fast_math() {
    // (x + 1) + 2 != x + 3 for x = -2^24 + ... : rounding; never without fast math.
    unchanged(REASSOC_FLOAT, "reassociate", None);
    let mut m = parse(REASSOC_FLOAT);
    let out = run_pass(&mut m, "reassociate", None, true);
    assert_eq!(stat(&out, "trees"), "1");
    assert!(xir::text::print_module(&m).contains("%b = add %x, f32 3.0 : f32"));
    let mut m = parse(REASSOC_FLOAT);
    run_pass(&mut m, "reassociate", Some("(fast_math: true)"), false);
    assert!(xir::text::print_module(&m).contains("%b = add %x, f32 3.0 : f32"));
    // The rewrite is really inexact: 16777216 + 1 + 2 rounds differently.
    let inp = inputs(r#"{"args": {"in": [16777216.0], "out": [0.0]}}"#);
    assert_ne!(interp(&m, &inp), interp(&parse(REASSOC_FLOAT), &inp));
}

// ---- simplify_libcalls ------------------------------------------------------

const LIBCALLS_IN: &str = r#"kernel @k(%in: buffer<f32>, %iu: buffer<u32>, %out: buffer<f32>, %ob: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : f32
  %y = buffer.read %in, u32 1 : f32
  %u = buffer.read %iu, u32 0 : u32
  %p0 = pow %x, f32 -0.0 : f32
  %p1 = pow f32 1.0, %y : f32
  %cs = copysign %x, f32 2.0 : f32
  %ng = neg %y : f32
  %cm = copysign %ng, %x : f32
  %cc = copysign %y, %y : f32
  %cl = clamp %x, f32 0.0, f32 1.0 : f32
  %f1 = floor %x : f32
  %f2 = ceil %f1 : f32
  %ci = cast.static %u : f32
  %f3 = trunc %ci : f32
  %ab = abs %x : f32
  %n1 = isnan %ab : bool
  %n2 = isinf %ci : bool
  %sq = sqrt f32 2.0 : f32
  %mx = max %y, %y : f32
  %au = abs %u : u32
  %mn = min %au, u32 0 : u32
  %mm = max %u, u32 4294967295 : u32
  %k1 = clamp %u, u32 0, u32 9 : u32
  buffer.write %out, u32 0, %p0
  buffer.write %out, u32 1, %p1
  buffer.write %out, u32 2, %cs
  buffer.write %out, u32 3, %cm
  buffer.write %out, u32 4, %cc
  buffer.write %out, u32 5, %cl
  buffer.write %out, u32 6, %f2
  buffer.write %out, u32 7, %f3
  buffer.write %out, u32 8, %sq
  buffer.write %out, u32 9, %mx
  %b1 = cast.static %n1 : u32
  %b2 = cast.static %n2 : u32
  buffer.write %ob, u32 0, %b1
  buffer.write %ob, u32 1, %b2
  buffer.write %ob, u32 2, %mn
  buffer.write %ob, u32 3, %mm
  buffer.write %ob, u32 4, %k1
  return
}
"#;

const LIBCALLS_OUT: &str = r#"kernel @k(%in: buffer<f32>, %iu: buffer<u32>, %out: buffer<f32>, %ob: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : f32
  %y = buffer.read %in, u32 1 : f32
  %u = buffer.read %iu, u32 0 : u32
  %cs = abs %x : f32
  %ng = neg %y : f32
  %cm = copysign %y, %x : f32
  %cl = saturate %x : f32
  %f1 = floor %x : f32
  %ci = cast.static %u : f32
  %ab = abs %x : f32
  %n1 = isnan %x : bool
  %k1 = min %u, u32 9 : u32
  buffer.write %out, u32 0, f32 1.0
  buffer.write %out, u32 1, f32 1.0
  buffer.write %out, u32 2, %cs
  buffer.write %out, u32 3, %cm
  buffer.write %out, u32 4, %y
  buffer.write %out, u32 5, %cl
  buffer.write %out, u32 6, %f1
  buffer.write %out, u32 7, %ci
  buffer.write %out, u32 8, f32 1.4142135
  buffer.write %out, u32 9, %y
  %b1 = cast.static %n1 : u32
  %b2 = cast.static bool false : u32
  buffer.write %ob, u32 0, %b1
  buffer.write %ob, u32 1, %b2
  buffer.write %ob, u32 2, u32 0
  buffer.write %ob, u32 3, u32 4294967295
  buffer.write %ob, u32 4, %k1
  return
}
"#;

#[test]
fn simplify_libcalls_rewrites_exactly() {
    for (x, y, u) in [
        ("2.5", "-3.25", "7"),
        ("\"nan\"", "\"-0.0\"", "0"),
        ("\"-inf\"", "\"0x7fc00123\"", "4294967295"),
        ("-0.0", "0.5", "12"),
        ("0.75", "\"inf\"", "3"),
    ] {
        let inp = inputs(&format!(
            r#"{{"args": {{"in": [{x}, {y}], "iu": [{u}], "out": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], "ob": [0, 0, 0, 0, 0]}}}}"#
        ));
        let out = check_exact(LIBCALLS_IN, "simplify_libcalls", None, false, LIBCALLS_OUT, &inp);
        assert_eq!(stat(&out, "rewritten"), "16");
    }
}

#[test]
fn simplify_libcalls_leaves_inexact_candidates() {
    // pow(x, 2) is not x*x with the host's powf; pow(x, 1) quiets sNaN;
    // clamp to [-0.0, 1.0] is not saturate; copysign with a negative
    // constant would need two instructions; float min with +inf is not x.
    let src = r#"kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : f32
  %a = pow %x, f32 2.0 : f32
  %b = pow %x, f32 1.0 : f32
  %c = clamp %x, f32 -0.0, f32 1.0 : f32
  %d = copysign %x, f32 -1.0 : f32
  %e = min %x, f32 inf : f32
  %f = rsqrt f32 2.0 : f32
  %g = floor %e : f32
  buffer.write %out, u32 0, %a
  buffer.write %out, u32 1, %b
  buffer.write %out, u32 2, %c
  buffer.write %out, u32 3, %d
  buffer.write %out, u32 4, %f
  buffer.write %out, u32 5, %g
  return
}
"#;
    unchanged(src, "simplify_libcalls", None);
}

// ---- scalarizer -------------------------------------------------------------

const SCALAR_IN: &str = r#"kernel @k(%in: buffer<vec<f32, 3>>, %out: buffer<vec<f32, 3>>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %in, u32 0 : vec<f32, 3>
  %b = buffer.read %in, u32 1 : vec<f32, 3>
  %s = add %a, %b : vec<f32, 3>
  %t = mul %s, vec<f32, 3> [2.0, -0.0, 0.5] : vec<f32, 3>
  %c = lt %a, %b : vec<bool, 3>
  %u = select %c, %t, %a : vec<f32, 3>
  %l = extract %u, u32 1 : f32
  %w = aggregate %l, %l, %l : vec<f32, 3>
  buffer.write %out, u32 0, %u
  buffer.write %out, u32 1, %w
  return
}
"#;

#[test]
fn scalarizer_splits_lanes_and_passes_scalars_along() {
    for (a, b) in [("[1.0, 2.0, 3.0]", "[0.5, -7.0, \"nan\"]"), ("[\"-0.0\", \"inf\", -1.0]", "[0.0, \"-inf\", -1.0]")]
    {
        let inp = inputs(&format!(r#"{{"args": {{"in": [{a}, {b}], "out": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]}}}}"#));
        let mut m = parse(SCALAR_IN);
        let before = interp(&m, &inp);
        let out = run_pass(&mut m, "scalarizer", None, false);
        assert_eq!(stat(&out, "split"), "4");
        assert_eq!(stat(&out, "scalar_insts"), "12");
        let text = xir::text::print_module(&m);
        // No vector arithmetic left; extracts only of the two loaded vectors
        // (3 lanes each), the split `add` lanes feed `mul` directly, the
        // constant's lanes are used as scalars, and `extract %u, 1` reads
        // the lane. Only the final `select` is rebuilt (plus the source's
        // own aggregate %w).
        for op in ["add", "mul", "lt", "select"] {
            let vector_op = |l: &str| l.contains(&format!(" = {op} ")) && l.contains(": vec<");
            assert!(!text.lines().any(vector_op), "{text}");
            assert_eq!(text.matches(&format!(" = {op} ")).count(), 3, "{op}:\n{text}");
        }
        assert_eq!(text.matches(" = extract ").count(), 6, "{text}");
        assert_eq!(text.matches(" = aggregate ").count(), 2, "{text}");
        assert!(text.contains(", f32 -0.0 : f32"), "{text}");
        assert!(!text.contains("extract %u"), "{text}");
        assert_eq!(interp(&m, &inp), before);
    }
}

#[test]
fn scalarizer_splits_only_the_chosen_opcodes() {
    let mut m = parse(SCALAR_IN);
    let out = run_pass(&mut m, "scalarizer", Some(r#"(ops: ["mul"])"#), false);
    assert_eq!(stat(&out, "split"), "1");
    let text = xir::text::print_module(&m);
    assert!(text.contains("%s = add %a, %b : vec<f32, 3>"), "{text}");
    assert_eq!(text.matches(" = mul ").count(), 3, "{text}");
    // Options are checked when the pass is built.
    let reg = registry();
    let decl = reg.get("scalarizer").unwrap();
    for (bad, why) in [(r#"(ops: ["dot"])"#, "not a lane-wise"), (r#"(ops: ["mull"])"#, "unknown opcode")] {
        let v: ron::Value = ron::from_str(bad).unwrap();
        let err = (decl.create)(Some(&v)).err().expect("rejected");
        assert!(err.contains(why), "{err}");
    }
}

// ---- cvp --------------------------------------------------------------------

const CVP_IN: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %y = buffer.read %in, u32 1 : u32
  %c = lt %x, u32 10 : bool
  if %c, true ^small, false ^big, merge ^m
^small:
  %c2 = lt %x, u32 20 : bool
  %r = mod %x, u32 16 : u32
  %q = div %x, u32 16 : u32
  %s = select %c, %r, %q : u32
  %t = select %c2, %s, u32 99 : u32
  %lt = lt %x, %y : bool
  if %lt, true ^inner, false ^m2, merge ^m2
^inner:
  %gt = gt %y, %x : bool
  %ge = ge %x, %y : bool
  %v = select %gt, u32 1, u32 2 : u32
  %w = select %ge, u32 4, u32 8 : u32
  %vw = add %v, %w : u32
  buffer.write %out, u32 2, %vw
  br target ^m2
^m2:
  buffer.write %out, u32 0, %t
  br target ^m
^big:
  %d = eq %y, u32 7 : bool
  if %d, true ^seven, false ^m3, merge ^m3
^seven:
  %z = add %y, %x : u32
  buffer.write %out, u32 1, %z
  br target ^m3
^m3:
  br target ^m
^m:
  %p = phi [%c, ^m2], [%c, ^m3] : bool
  %pu = cast.static %p : u32
  buffer.write %out, u32 3, %pu
  return
}
"#;

const CVP_OUT: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %y = buffer.read %in, u32 1 : u32
  %c = lt %x, u32 10 : bool
  if %c, true ^small, false ^big, merge ^m
^small:
  %lt = lt %x, %y : bool
  if %lt, true ^inner, false ^m2, merge ^m2
^inner:
  %vw = add u32 1, u32 8 : u32
  buffer.write %out, u32 2, %vw
  br target ^m2
^m2:
  buffer.write %out, u32 0, %x
  br target ^m
^big:
  %d = eq %y, u32 7 : bool
  if %d, true ^seven, false ^m3, merge ^m3
^seven:
  %z = add u32 7, %x : u32
  buffer.write %out, u32 1, %z
  br target ^m3
^m3:
  br target ^m
^m:
  %p = phi [bool true, ^m2], [bool false, ^m3] : bool
  %pu = cast.static %p : u32
  buffer.write %out, u32 3, %pu
  return
}
"#;

#[test]
fn cvp_uses_dominating_conditions_and_ranges() {
    for (x, y) in [(3, 5), (3, 1), (9, 9), (12, 7), (40, 2), (0u32, 4294967295u32)] {
        let inp = inputs(&format!(r#"{{"args": {{"in": [{x}, {y}], "out": [0, 0, 0, 0]}}}}"#));
        check_exact(CVP_IN, "cvp", None, false, CVP_OUT, &inp);
    }
}

#[test]
fn cvp_keeps_unordered_float_cases_and_switch_cases() {
    // `a < b` false does not make `a >= b` true for floats (NaN): kept.
    // `a < b` true makes `a != b` true even for floats.
    let src = r#"kernel @k(%in: buffer<f32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %in, u32 0 : f32
  %b = buffer.read %in, u32 1 : f32
  %c = lt %a, %b : bool
  if %c, true ^t, false ^f, merge ^m
^t:
  %n = ne %a, %b : bool
  %nu = cast.static %n : u32
  buffer.write %out, u32 0, %nu
  br target ^m
^f:
  %g = ge %a, %b : bool
  %gu = cast.static %g : u32
  buffer.write %out, u32 0, %gu
  br target ^m
^m:
  %i = cast.static %a : u32
  switch %i, merge ^sm, default ^d, case 3 ^c3
^c3:
  %j = add %i, u32 1 : u32
  buffer.write %out, u32 1, %j
  br target ^sm
^d:
  buffer.write %out, u32 1, %i
  br target ^sm
^sm:
  return
}
"#;
    let mut m = parse(src);
    let out = run_pass(&mut m, "cvp", None, false);
    let text = xir::text::print_module(&m);
    assert_eq!(stat(&out, "compares"), "1");
    assert_eq!(stat(&out, "constants"), "1");
    assert!(text.contains("%nu = cast.static bool true : u32"), "{text}");
    assert!(text.contains("%g = ge %a, %b : bool"), "{text}");
    assert!(text.contains("%j = add u32 3, u32 1 : u32"), "{text}");
    assert!(text.contains("buffer.write %out, u32 1, %i\n"), "{text}");
    for (a, b) in [("1.0", "2.0"), ("\"nan\"", "2.0"), ("3.5", "1.0"), ("3.0", "3.0")] {
        let inp = inputs(&format!(r#"{{"args": {{"in": [{a}, {b}], "out": [0, 0]}}}}"#));
        assert_eq!(interp(&m, &inp), interp(&parse(src), &inp), "a={a} b={b}");
    }
}

#[test]
fn cvp_excluded_values_decide_equalities_and_trim_ranges() {
    let src = r#"kernel @k(%in: buffer<i32>, %out: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : i32
  %nz = ne %x, i32 0 : bool
  if %nz, true ^t, false ^m, merge ^m
^t:
  %z = eq %x, i32 0 : bool
  %q = select %z, i32 7, %x : i32
  buffer.write %out, u32 0, %q
  %nn = ge %x, i32 0 : bool
  if %nn, true ^pos, false ^m2, merge ^m2
^pos:
  %p = gt %x, i32 0 : bool
  %pi = cast.static %p : i32
  buffer.write %out, u32 1, %pi
  br target ^m2
^m2:
  br target ^m
^m:
  switch %x, merge ^sm, default ^d, case 1 ^c1, case 2 ^c1
^c1:
  br target ^sm
^d:
  %e1 = eq %x, i32 1 : bool
  %e2 = ne %x, i32 2 : bool
  %e3 = eq %x, i32 5 : bool
  %a = bit_and %e2, %e3 : bool
  %b = bit_or %a, %e1 : bool
  %bi = cast.static %b : i32
  buffer.write %out, u32 2, %bi
  br target ^sm
^sm:
  return
}
"#;
    let mut m = parse(src);
    let out = run_pass(&mut m, "cvp", None, false);
    let text = xir::text::print_module(&m);
    assert_eq!(stat(&out, "compares"), "4", "{text}");
    assert!(text.contains("buffer.write %out, u32 0, %x\n"), "{text}");
    assert!(text.contains("%pi = cast.static bool true : i32"), "{text}");
    assert!(text.contains("%a = bit_and bool true, %e3 : bool"), "{text}");
    assert!(text.contains("%b = bit_or %a, bool false : bool"), "{text}");
    for x in [0, 1, 2, 5, -3, 9, -2147483648] {
        let inp = inputs(&format!(r#"{{"args": {{"in": [{x}], "out": [0, 0, 0]}}}}"#));
        assert_eq!(interp(&m, &inp), interp(&parse(src), &inp), "x = {x}");
    }
}

// ---- if_conversion ----------------------------------------------------------

const IFC_IN: &str = r#"kernel @k(%in: buffer<i32>, %out: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : i32
  %y = buffer.read %in, u32 1 : i32
  %c = lt %x, %y : bool
  if %c, true ^t, false ^f, merge ^m
^t:
  %a = mul %x, i32 3 : i32
  br target ^m
^f:
  %b = div %y, i32 -1 : i32
  br target ^m
^m:
  %p = phi [%a, ^t], [%b, ^f] : i32
  %q = phi [%x, ^t], [%y, ^f] : i32
  %e = eq %p, i32 0 : bool
  if %e, true ^t2, false ^m2, merge ^m2
^t2:
  %s = add %q, i32 1 : i32
  br target ^m2
^m2:
  %r = phi [%s, ^t2], [%q, ^m] : i32
  %o = add %p, %r : i32
  buffer.write %out, u32 0, %o
  return
}
"#;

// The diamond becomes selects (`%q` a `min`: x < y ? x : y), then the
// triangle after it; each merge block joins its header.
const IFC_OUT: &str = r#"kernel @k(%in: buffer<i32>, %out: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : i32
  %y = buffer.read %in, u32 1 : i32
  %c = lt %x, %y : bool
  %a = mul %x, i32 3 : i32
  %b = div %y, i32 -1 : i32
  %0 = select %c, %a, %b : i32
  %1 = min %x, %y : i32
  %e = eq %0, i32 0 : bool
  %s = add %1, i32 1 : i32
  %2 = select %e, %s, %1 : i32
  %o = add %0, %2 : i32
  buffer.write %out, u32 0, %o
  return
}
"#;

#[test]
fn if_conversion_turns_diamonds_and_triangles_into_selects() {
    for (x, y) in [(1, 2), (5, -3), (0, 7), (-2147483648, -2147483648), (4, 0)] {
        let inp = inputs(&format!(r#"{{"args": {{"in": [{x}, {y}], "out": [0]}}}}"#));
        let out = check_exact(IFC_IN, "if_conversion", None, false, IFC_OUT, &inp);
        assert_eq!(stat(&out, "converted"), "2");
        assert_eq!(stat(&out, "min_max"), "1");
        assert_eq!(stat(&out, "merged_blocks"), "2");
    }
    // Without min_max, a select stays.
    let mut m = parse(IFC_IN);
    run_pass(&mut m, "if_conversion", Some("(min_max: false)"), false);
    assert!(xir::text::print_module(&m).contains("%1 = select %c, %x, %y : i32"));
}

const IFC_STORES: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %v = alloca : f32
  %w = alloca : f32
  %x = buffer.read %in, u32 0 : f32
  %y = buffer.read %in, u32 1 : f32
  %c = lt %x, %y : bool
  if %c, true ^t, false ^f, merge ^m
^t:
  store %v, %x
  %h = mul %y, f32 0.5 : f32
  store %w, %h
  br target ^m
^f:
  store %w, %x
  store %v, %y
  br target ^m
^m:
  %a = load %v : f32
  %b = load %w : f32
  buffer.write %out, u32 0, %a
  buffer.write %out, u32 1, %b
  return
}
"#;

// Float: `x < y ? x : y` stays a select (minNum differs on NaN and -0.0).
const IFC_STORES_OUT: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %v = alloca : f32
  %w = alloca : f32
  %x = buffer.read %in, u32 0 : f32
  %y = buffer.read %in, u32 1 : f32
  %c = lt %x, %y : bool
  %h = mul %y, f32 0.5 : f32
  %0 = select %c, %x, %y : f32
  store %v, %0
  %1 = select %c, %h, %x : f32
  store %w, %1
  %a = load %v : f32
  %b = load %w : f32
  buffer.write %out, u32 0, %a
  buffer.write %out, u32 1, %b
  return
}
"#;

#[test]
fn if_conversion_merges_stores_to_the_same_variables() {
    for (x, y) in [("1.0", "2.0"), ("\"nan\"", "1.0"), ("-0.0", "0.0"), ("3.0", "\"-inf\"")] {
        let inp = inputs(&format!(r#"{{"args": {{"in": [{x}, {y}], "out": [0.0, 0.0]}}}}"#));
        let out = check_exact(IFC_STORES, "if_conversion", None, false, IFC_STORES_OUT, &inp);
        assert_eq!(stat(&out, "stores"), "2");
        assert_eq!(stat(&out, "min_max"), "0");
    }
    unchanged(IFC_STORES, "if_conversion", Some("(stores: false)"));
}

#[test]
fn if_conversion_refuses_unsafe_or_large_arms() {
    // A division by a value (may be zero), a buffer write, a store in only
    // one arm, and an arm over the size budget: all stay.
    let div = r#"kernel @k(%in: buffer<i32>, %out: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : i32
  %y = buffer.read %in, u32 1 : i32
  %c = ne %y, i32 0 : bool
  if %c, true ^t, false ^m, merge ^m
^t:
  %a = div %x, %y : i32
  br target ^m
^m:
  %p = phi [%a, ^t], [i32 0, ^entry] : i32
  buffer.write %out, u32 0, %p
  return
}
"#;
    unchanged(div, "if_conversion", None);
    let write = r#"kernel @k(%in: buffer<i32>, %out: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : i32
  %c = ne %x, i32 0 : bool
  if %c, true ^t, false ^m, merge ^m
^t:
  buffer.write %out, u32 0, %x
  br target ^m
^m:
  return
}
"#;
    unchanged(write, "if_conversion", None);
    let one_sided = r#"kernel @k(%in: buffer<i32>, %out: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %v = alloca : i32
  %x = buffer.read %in, u32 0 : i32
  store %v, %x
  %c = ne %x, i32 0 : bool
  if %c, true ^t, false ^f, merge ^m
^t:
  store %v, i32 1
  br target ^m
^f:
  br target ^m
^m:
  %a = load %v : i32
  buffer.write %out, u32 0, %a
  return
}
"#;
    unchanged(one_sided, "if_conversion", None);
    unchanged(IFC_IN, "if_conversion", Some("(max_speculated: 0)"));
}

const IFC_RAW: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %y = buffer.read %in, u32 1 : u32
  %c = ge %x, %y : bool
  cond_br %c, true ^t, false ^f
^t:
  %a = shl %x, u32 33 : u32
  br target ^m
^f:
  %b = mod %y, u32 7 : u32
  br target ^m
^m:
  %p = phi [%a, ^t], [%b, ^f] : u32
  %q = phi [%y, ^f], [%x, ^t] : u32
  %d = eq %p, %q : bool
  cond_br %d, true ^done, false ^other
^other:
  buffer.write %out, u32 1, %q
  br target ^done
^done:
  %r = phi [u32 0, ^m], [%p, ^other] : u32
  buffer.write %out, u32 0, %r
  return
}
"#;

// Raw CFG: the diamond converts (`%q`: x >= y ? x : y is max), `^m` joins
// the entry and the Phi after it now names the entry; then the triangle
// `^m -> ^other -> ^done` is not converted (`^other` writes a buffer).
const IFC_RAW_OUT: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %y = buffer.read %in, u32 1 : u32
  %c = ge %x, %y : bool
  %a = shl %x, u32 33 : u32
  %b = mod %y, u32 7 : u32
  %0 = select %c, %a, %b : u32
  %1 = max %x, %y : u32
  %d = eq %0, %1 : bool
  cond_br %d, true ^done, false ^other
^other:
  buffer.write %out, u32 1, %1
  br target ^done
^done:
  %r = phi [u32 0, ^entry], [%0, ^other] : u32
  buffer.write %out, u32 0, %r
  return
}
"#;

#[test]
fn if_conversion_on_raw_cfg() {
    for (x, y) in [(1, 2), (9, 3), (7, 7), (0, 4294967295u32)] {
        let inp = inputs(&format!(r#"{{"args": {{"in": [{x}, {y}], "out": [0, 0]}}}}"#));
        let out = check_exact(IFC_RAW, "if_conversion", None, false, IFC_RAW_OUT, &inp);
        assert_eq!(stat(&out, "converted"), "1");
    }
    // The same diamond in a function with structured control flow is left
    // alone: there `cond_br` belongs to a loop's prepare block.
    let structured =
        IFC_RAW.replace("  return\n}", "  simple_loop body ^b, merge ^e\n^b:\n  break target ^e\n^e:\n  return\n}");
    unchanged(&structured, "if_conversion", None);
}

#[path = "opt_catalogue/random.rs"]
mod random;
