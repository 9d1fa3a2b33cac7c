//! The scalar catalogue passes `reassociate`, `simplify_libcalls`,
//! `scalarizer` and `if_conversion` on XIR text: exact printed results,
//! statistics, and interpreter equality before and after on inputs chosen to
//! hit wrap-around, NaN, signed zero and both sides of every branch; negative
//! cases check that inexact rewrites are not made. More fixtures of these
//! passes and `cvp`'s are file tests (`tests/filetests/<pass>/`).

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

const REASSOC_FLOAT: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : f32
  %a = add %x, f32 1.0 : f32
  %b = add %a, f32 2.0 : f32
  buffer.write %out, u32 0, %b
  return
}
"#;

// The float rewrite under fast math (tests/filetests/reassociate/float_*.xir)
// is really inexact: 16777216 + 1 + 2 rounds differently from 16777216 + 3.
#[test]
fn reassociate_fast_math_float_rewrite_is_inexact() {
    let mut m = parse(REASSOC_FLOAT);
    run_pass(&mut m, "reassociate", None, true);
    let inp = inputs(r#"{"args": {"in": [16777216.0], "out": [0.0]}}"#);
    assert_ne!(interp(&m, &inp), interp(&parse(REASSOC_FLOAT), &inp));
}

// ---- simplify_libcalls ------------------------------------------------------

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

// Options are checked when the pass is built (the `ops` option at work:
// tests/filetests/scalarizer/only_chosen_opcodes.xir).
#[test]
fn scalarizer_rejects_bad_ops() {
    let reg = registry();
    let decl = reg.get("scalarizer").unwrap();
    for (bad, why) in [(r#"(ops: ["dot"])"#, "not a lane-wise"), (r#"(ops: ["mull"])"#, "unknown opcode")] {
        let v: ron::Value = ron::from_str(bad).unwrap();
        let err = (decl.create)(Some(&v)).err().expect("rejected");
        assert!(err.contains(why), "{err}");
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
