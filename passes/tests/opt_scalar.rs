//! Tests of the scalar optimizations `const_fold` and `early_cse` on XIR
//! text: exact printed results and interpreter equality before and after.

mod opt_support;

use opt_support::*;
use xir::interp::Inputs;

const FOLD_IN: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<u32>, %fo: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : f32
  %a = add u32 0xffffffff, u32 2 : u32
  %b = mul %a, u32 40 : u32
  %c = shl %b, u32 33 : u32
  %lt = lt i32 -1, i32 0 : bool
  %s = select %lt, %c, u32 9 : u32
  %n = add f32 nan, f32 1.0 : f32
  %z = sub f32 -0.0, f32 0.0 : f32
  %t = sin f32 1.0 : f32
  %ci = cast.static f32 -3.75 : i32
  %cu = cast.static %ci : u32
  %q = select bool false, %x, %t : f32
  buffer.write %out, u32 0, %s
  buffer.write %out, u32 1, %cu
  buffer.write %fo, u32 0, %n
  buffer.write %fo, u32 1, %z
  buffer.write %fo, u32 2, %q
  return
}
"#;

// Wrap-around, shift amounts modulo the width, NaN and signed zero, casts
// and selects fold exactly as the interpreter computes them; `sin` stays.
const FOLD_OUT: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<u32>, %fo: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : f32
  %t = sin f32 1.0 : f32
  buffer.write %out, u32 0, u32 80
  buffer.write %out, u32 1, u32 4294967293
  buffer.write %fo, u32 0, f32 0x7fc00000
  buffer.write %fo, u32 1, f32 -0.0
  buffer.write %fo, u32 2, %t
  return
}
"#;

fn fold_inputs() -> Inputs {
    Inputs::from_json(r#"{"args": {"in": [2.5], "out": [0, 0], "fo": [0.0, 0.0, 0.0]}}"#).unwrap()
}

#[test]
fn const_fold_is_exact() {
    let out = check_exact(FOLD_IN, "const_fold", None, false, FOLD_OUT, &fold_inputs());
    assert_eq!(stat(&out, "folded"), "10");
}

#[test]
fn const_fold_transcendental_only_on_request() {
    let mut m = parse(FOLD_IN);
    run_pass(&mut m, "const_fold", Some("(fold_transcendental: true)"), false);
    let text = xir::text::print_module(&m);
    assert!(!text.contains("sin"), "sin folded on request:\n{text}");
    assert!(text.contains(&format!("f32 {:?}", 1.0f32.sin())) || text.contains("buffer.write %fo, u32 2, f32"));
}

#[test]
fn const_fold_leaves_errors_alone() {
    // The interpreter reports integer division by zero: never folded.
    let src = r#"kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %d = div u32 1, u32 0 : u32
  %r = mod i32 5, i32 0 : i32
  %e = add %d, u32 1 : u32
  buffer.write %out, u32 0, %e
  return
}
"#;
    unchanged(src, "const_fold", None);
}

const CSE_IN: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %y = buffer.read %in, u32 1 : u32
  %a = add %x, %y : u32
  %b = add %y, %x : u32
  %c = lt %x, %y : bool
  if %c, true ^t, false ^f, merge ^m
^t:
  %d = mul %a, %b : u32
  %e = mul %x, %y : u32
  buffer.write %out, u32 0, %d
  buffer.write %out, u32 1, %e
  br target ^m
^f:
  %g = mul %y, %x : u32
  %h = sub %x, %y : u32
  %i = sub %y, %x : u32
  buffer.write %out, u32 0, %g
  buffer.write %out, u32 1, %h
  buffer.write %out, u32 2, %i
  br target ^m
^m:
  %j = add %x, %y : u32
  buffer.write %out, u32 3, %j
  return
}
"#;

// `add` commutes (b = a, j = a: the entry dominates both); `mul` in sibling
// arms stays twice (neither dominates the other); `sub` does not commute.
const CSE_OUT: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %y = buffer.read %in, u32 1 : u32
  %a = add %x, %y : u32
  %c = lt %x, %y : bool
  if %c, true ^t, false ^f, merge ^m
^t:
  %d = mul %a, %a : u32
  %e = mul %x, %y : u32
  buffer.write %out, u32 0, %d
  buffer.write %out, u32 1, %e
  br target ^m
^f:
  %g = mul %y, %x : u32
  %h = sub %x, %y : u32
  %i = sub %y, %x : u32
  buffer.write %out, u32 0, %g
  buffer.write %out, u32 1, %h
  buffer.write %out, u32 2, %i
  br target ^m
^m:
  buffer.write %out, u32 3, %a
  return
}
"#;

#[test]
fn early_cse_by_dominance_with_commutative_operands() {
    for input in ["[3, 5]", "[9, 2]"] {
        let inputs = Inputs::from_json(&format!(r#"{{"args": {{"in": {input}, "out": [0, 0, 0, 0]}}}}"#)).unwrap();
        let out = check_exact(CSE_IN, "early_cse", None, false, CSE_OUT, &inputs);
        assert_eq!(stat(&out, "removed"), "2");
    }
}

#[test]
fn early_cse_keeps_convergent_and_memory_ops() {
    let src = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(32, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %y = buffer.read %in, u32 0 : u32
  %s = warp.active_sum %x : u32
  %t = warp.active_sum %x : u32
  %u = add %s, %t : u32
  %v = add %u, %y : u32
  buffer.write %out, u32 0, %v
  return
}
"#;
    unchanged(src, "early_cse", None);
}

#[test]
fn early_cse_merges_addresses_unless_told_not_to() {
    let src = r#"kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %s = alloca : struct<align 4>{u32, u32}
  %a = gep %s, u32 1 : u32
  store %a, u32 7
  %b = gep %s, u32 1 : u32
  %v = load %b : u32
  buffer.write %out, u32 0, %v
  return
}
"#;
    let merged = r#"kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %s = alloca : struct<align 4>{u32, u32}
  %a = gep %s, u32 1 : u32
  store %a, u32 7
  %v = load %a : u32
  buffer.write %out, u32 0, %v
  return
}
"#;
    let inputs = Inputs::from_json(r#"{"args": {"out": [0]}}"#).unwrap();
    check_exact(src, "early_cse", None, false, merged, &inputs);
    let out = check_exact(src, "early_cse", Some("(cse_addresses: false)"), false, src, &inputs);
    assert!(!out.changed);
}

const SCCP_IN: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %c = lt u32 1, u32 2 : bool
  cond_br %c, true ^a, false ^b
^a:
  br target ^loop
^b:
  br target ^loop
^loop:
  %p = phi [u32 5, ^a], [%x, ^b], [%p2, ^body] : u32
  %i = phi [u32 0, ^a], [u32 0, ^b], [%i2, ^body] : u32
  %more = lt %i, %x : bool
  cond_br %more, true ^body, false ^exit
^body:
  %p2 = mul %p, u32 1 : u32
  %i2 = add %i, u32 1 : u32
  br target ^loop
^exit:
  %q = add %p, u32 1 : u32
  buffer.write %out, u32 0, %q
  buffer.write %out, u32 1, %i
  return
}
"#;

// ^b never runs, so %p is 5 on entry and stays 5 around the loop (p2 = p * 1):
// SCCP proves it although %p has a non-constant incoming; %i is not constant.
const SCCP_OUT: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  cond_br bool true, true ^a, false ^b
^a:
  br target ^loop
^b:
  br target ^loop
^loop:
  %i = phi [u32 0, ^a], [u32 0, ^b], [%i2, ^body] : u32
  %more = lt %i, %x : bool
  cond_br %more, true ^body, false ^exit
^body:
  %i2 = add %i, u32 1 : u32
  br target ^loop
^exit:
  buffer.write %out, u32 0, u32 6
  buffer.write %out, u32 1, %i
  return
}
"#;

#[test]
fn sccp_propagates_through_phis_and_branches() {
    for n in [0, 3] {
        let inputs = Inputs::from_json(&format!(r#"{{"args": {{"in": [{n}], "out": [0, 0]}}}}"#)).unwrap();
        let out = check_exact(SCCP_IN, "sccp", None, false, SCCP_OUT, &inputs);
        assert_eq!(stat(&out, "constant_values"), "4");
        assert_eq!(stat(&out, "constant_branches"), "1");
    }
    // const_fold alone cannot see it: only the branch condition folds.
    let mut m = parse(SCCP_IN);
    run_pass(&mut m, "const_fold", None, false);
    let text = xir::text::print_module(&m);
    assert!(text.contains("%q = add %p, u32 1 : u32"), "{text}");
}

#[test]
fn sccp_leaves_errors_and_overdefined_values() {
    let src = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %c = lt %x, u32 2 : bool
  cond_br %c, true ^a, false ^b
^a:
  br target ^m
^b:
  br target ^m
^m:
  %p = phi [u32 5, ^a], [u32 6, ^b] : u32
  %d = div u32 1, u32 0 : u32
  %s = add %p, %d : u32
  buffer.write %out, u32 0, %s
  return
}
"#;
    unchanged(src, "sccp", None);
}

const DAE_IN: &str = r#"callable @f(%a: u32, %b: u32, %c: ref u32) -> u32 {
^entry:
  %r = mul %b, u32 3 : u32
  return %r
}

callable @g(%a: u32) -> u32 {
^entry:
  return %a
}

kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %s = alloca : u32
  %x = buffer.read %in, u32 0 : u32
  %y = add %x, u32 1 : u32
  %v = call @f, %y, %x, %s : u32
  %w = call @g, %v : u32
  buffer.write %out, u32 0, %w
  return
}
"#;

// @f loses %a and %c (unused) and its calls the matching operands; %b is
// renumbered; @g uses its only argument; the kernel keeps its signature.
const DAE_OUT: &str = r#"callable @f(%b: u32) -> u32 {
^entry:
  %r = mul %b, u32 3 : u32
  return %r
}

callable @g(%a: u32) -> u32 {
^entry:
  return %a
}

kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %s = alloca : u32
  %x = buffer.read %in, u32 0 : u32
  %y = add %x, u32 1 : u32
  %v = call @f, %x : u32
  %w = call @g, %v : u32
  buffer.write %out, u32 0, %w
  return
}
"#;

#[test]
fn dead_arg_elim_drops_unused_arguments_and_call_operands() {
    let inputs = Inputs::from_json(r#"{"args": {"in": [5], "out": [0]}}"#).unwrap();
    let out = check_exact(DAE_IN, "dead_arg_elim", None, false, DAE_OUT, &inputs);
    assert_eq!(stat(&out, "removed_args"), "2");
    // A second run finds nothing.
    let mut m = parse(DAE_OUT);
    assert!(!run_pass(&mut m, "dead_arg_elim", None, false).changed);
}

const GVN_IN: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %c = lt %x, u32 2 : bool
  cond_br %c, true ^a, false ^b
^a:
  br target ^m
^b:
  br target ^m
^m:
  %p = phi [%x, ^a], [u32 7, ^b] : u32
  %q = phi [%x, ^a], [u32 7, ^b] : u32
  %r = phi [u32 7, ^a], [%x, ^b] : u32
  %s = add %p, u32 1 : u32
  %t = add u32 1, %q : u32
  %u = mul %s, %t : u32
  %v = add %u, %r : u32
  buffer.write %out, u32 0, %v
  return
}
"#;

// %q is %p (same incomings), so %t is %s (add commutes); %r differs.
const GVN_OUT: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : u32
  %c = lt %x, u32 2 : bool
  cond_br %c, true ^a, false ^b
^a:
  br target ^m
^b:
  br target ^m
^m:
  %p = phi [%x, ^a], [u32 7, ^b] : u32
  %r = phi [u32 7, ^a], [%x, ^b] : u32
  %s = add %p, u32 1 : u32
  %u = mul %s, %s : u32
  %v = add %u, %r : u32
  buffer.write %out, u32 0, %v
  return
}
"#;

#[test]
fn gvn_merges_congruent_phis_and_their_users() {
    for n in [1, 5] {
        let inputs = Inputs::from_json(&format!(r#"{{"args": {{"in": [{n}], "out": [0]}}}}"#)).unwrap();
        let out = check_exact(GVN_IN, "gvn", None, false, GVN_OUT, &inputs);
        assert_eq!(stat(&out, "removed"), "2");
    }
    // early_cse does not merge Phis.
    let mut m = parse(GVN_IN);
    assert!(!run_pass(&mut m, "early_cse", None, false).changed);
}

const DRP_IN: &str = r#"kernel @k(%in: buffer<i32>, %out: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %in, u32 0 : i32
  %b = buffer.read %in, u32 1 : i32
  %q = div %a, %b : i32
  %r = mod %a, %b : i32
  %s = mod %b, %a : i32
  %f = cast.static %a : f32
  %g = div %f, f32 2.0 : f32
  %h = mod %f, f32 2.0 : f32
  %hi = cast.static %h : i32
  %t = add %q, %r : i32
  %u = add %t, %s : i32
  %v = add %u, %hi : i32
  buffer.write %out, u32 0, %v
  return
}
"#;

// Only the integer mod with a dominating div of the same operands changes.
const DRP_OUT: &str = r#"kernel @k(%in: buffer<i32>, %out: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %a = buffer.read %in, u32 0 : i32
  %b = buffer.read %in, u32 1 : i32
  %q = div %a, %b : i32
  %0 = mul %q, %b : i32
  %r = sub %a, %0 : i32
  %s = mod %b, %a : i32
  %f = cast.static %a : f32
  %g = div %f, f32 2.0 : f32
  %h = mod %f, f32 2.0 : f32
  %hi = cast.static %h : i32
  %t = add %q, %r : i32
  %u = add %t, %s : i32
  %v = add %u, %hi : i32
  buffer.write %out, u32 0, %v
  return
}
"#;

#[test]
fn div_rem_pairs_reuses_the_quotient_exactly() {
    // MIN / -1 (an error, the same before and after) and negative operands included.
    for (a, b) in [(17, 5), (-17, 5), (17, -5), (-2147483648, -1), (5, -2147483648)] {
        let inputs = Inputs::from_json(&format!(r#"{{"args": {{"in": [{a}, {b}], "out": [0]}}}}"#)).unwrap();
        let out = check_exact(DRP_IN, "div_rem_pairs", None, false, DRP_OUT, &inputs);
        assert_eq!(stat(&out, "pairs"), "1");
    }
}

/// Option-less passes (declared with `PassDecl::without_options`) accept
/// no options and `()`, and reject any named option at load time, naming it.
#[test]
fn option_less_passes_reject_every_option_at_load() {
    let mut reg = xir::pass::PassRegistry::new();
    xir_passes::register_all(&mut reg);
    let load = |steps: &str| {
        let text = format!("Pipeline(name: \"t\", input: \"xir\", output: \"xir\", steps: [{steps}])");
        xir::pipeline::Loader::new(&reg).load_text("t.ron".into(), None, &text)
    };
    for pass in ["sccp", "cvp", "licm", "trace_gep", "local_load_elimination", "dead_store_elimination"] {
        assert!(load(&format!("Pass(\"{pass}\")")).is_ok(), "{pass} without options");
        assert!(load(&format!("Pass(\"{pass}\", ())")).is_ok(), "{pass} with ()");
        let err =
            load(&format!("Pass(\"{pass}\", (budget: 3))")).err().unwrap_or_else(|| panic!("{pass} took an option"));
        assert!(err.to_string().contains("budget"), "{pass}: {err}");
    }
}
