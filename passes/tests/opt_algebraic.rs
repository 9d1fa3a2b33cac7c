//! Tests of `algebraic_simplify`: one `input => expected` case per rule of
//! `passes/rules/algebraic.ron` (every rule must have one), a negative case
//! for each conditional and each fast-math-only rule, load-time rejection of
//! malformed rules, a budget that stops saturation and is reported, and a
//! proptest that the rules without fast math preserve the interpreter's exact
//! bits on random expressions over i32 / u32 / f32 (NaN, signed zero,
//! infinities and wrap-around values among the inputs and constants).

mod opt_support;

use std::collections::BTreeSet;

use opt_support::*;
use proptest::prelude::*;
use xir::interp::Inputs;
use xir::Span;

fn kernel(ty: &str, body: &str) -> String {
    format!(
        "kernel @k(%in: buffer<{ty}>, %out: buffer<{ty}>) block_size(1, 1, 1) {{\n^entry:\n  \
         %x = buffer.read %in, u32 0 : {ty}\n  %y = buffer.read %in, u32 1 : {ty}\n  \
         %z = buffer.read %in, u32 2 : {ty}\n{body}\n  return\n}}\n"
    )
}

fn inputs(ty: &str) -> Inputs {
    let vals = if ty == "f32" { "[1.5, -2.25, 0.75]" } else { "[7, 3, 12]" };
    Inputs::from_json(&format!(r#"{{"args": {{"in": {vals}, "out": [0]}}}}"#)).unwrap()
}

/// (rule, type, fast math, input body, expected body). The body ends with
/// the write of the result.
const CASES: &[(&str, &str, bool, &str, &str)] = &[
    ("add-zero", "i32", false, "  %r = add %x, i32 0 : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("sub-zero", "i32", false, "  %r = sub %x, i32 0 : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("sub-self", "i32", false, "  %r = sub %x, %x : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, i32 0"),
    ("zero-sub", "i32", false, "  %a = sub i32 0, %x : i32\n  %r = sub i32 0, %a : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("sub-neg", "i32", false, "  %n = neg %y : i32\n  %r = sub %x, %n : i32\n  buffer.write %out, u32 0, %r", "  %0 = add %y, %x : i32\n  buffer.write %out, u32 0, %0"),
    ("add-neg", "i32", false, "  %n = neg %y : i32\n  %r = add %x, %n : i32\n  buffer.write %out, u32 0, %r", "  %0 = sub %x, %y : i32\n  buffer.write %out, u32 0, %0"),
    ("add-sub-cancel", "i32", false, "  %a = add %x, %y : i32\n  %r = sub %a, %y : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("sub-add-cancel", "i32", false, "  %a = sub %x, %y : i32\n  %r = add %a, %y : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("mul-one", "i32", false, "  %r = mul %x, i32 1 : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("mul-zero", "i32", false, "  %r = mul %x, i32 0 : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, i32 0"),
    ("mul-minus-one", "i32", false, "  %r = mul %x, i32 -1 : i32\n  buffer.write %out, u32 0, %r", "  %0 = neg %x : i32\n  buffer.write %out, u32 0, %0"),
    ("mul-two", "u32", false, "  %r = mul %x, u32 2 : u32\n  buffer.write %out, u32 0, %r", "  %0 = add %x, %x : u32\n  buffer.write %out, u32 0, %0"),
    ("div-one", "i32", false, "  %r = div %x, i32 1 : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("mod-one", "u32", false, "  %r = mod %x, u32 1 : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, u32 0"),
    ("neg-neg-int", "i32", false, "  %a = neg %x : i32\n  %r = neg %a : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("not-not", "u32", false, "  %a = bit_not %x : u32\n  %r = bit_not %a : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("and-self", "u32", false, "  %r = bit_and %x, %x : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("and-zero", "u32", false, "  %r = bit_and %x, u32 0 : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, u32 0"),
    ("and-ones", "u32", false, "  %r = bit_and %x, u32 0xffffffff : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("or-self", "u32", false, "  %r = bit_or %x, %x : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("or-zero", "u32", false, "  %r = bit_or %x, u32 0 : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("or-ones", "i32", false, "  %r = bit_or %x, i32 -1 : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, i32 -1"),
    ("xor-self", "u32", false, "  %r = bit_xor %x, %x : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, u32 0"),
    ("xor-zero", "u32", false, "  %r = bit_xor %x, u32 0 : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("xor-ones", "u32", false, "  %a = bit_xor %x, u32 4294967295 : u32\n  %r = bit_not %a : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("shl-zero", "u32", false, "  %r = shl %x, u32 0 : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("shr-zero", "i32", false, "  %r = shr %x, i32 0 : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("min-self", "i32", false, "  %r = min %x, %x : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("max-self", "u32", false, "  %r = max %x, %x : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("add-comm-int", "i32", false, "  %r = add i32 0, %x : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("mul-comm-int", "i32", false, "  %r = mul i32 1, %x : i32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("and-comm", "u32", false, "  %r = bit_and u32 0, %x : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, u32 0"),
    ("or-comm", "u32", false, "  %r = bit_or u32 0, %x : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("xor-comm", "u32", false, "  %a = bit_xor %x, %y : u32\n  %b = bit_xor %y, %x : u32\n  %r = bit_xor %a, %b : u32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, u32 0"),
    ("add-const-assoc", "i32", false, "  %a = add %x, i32 3 : i32\n  %r = add %a, i32 4 : i32\n  buffer.write %out, u32 0, %r", "  %0 = add %x, i32 7 : i32\n  buffer.write %out, u32 0, %0"),
    ("sub-const-assoc", "i32", false, "  %a = sub %x, i32 3 : i32\n  %r = sub %a, i32 4 : i32\n  buffer.write %out, u32 0, %r", "  %0 = sub %x, i32 7 : i32\n  buffer.write %out, u32 0, %0"),
    ("add-sub-const", "u32", false, "  %a = add %x, u32 3 : u32\n  %r = sub %a, u32 4 : u32\n  buffer.write %out, u32 0, %r", "  %0 = add %x, u32 4294967295 : u32\n  buffer.write %out, u32 0, %0"),
    ("mul-const-assoc", "i32", false, "  %a = mul %x, i32 3 : i32\n  %r = mul %a, i32 5 : i32\n  buffer.write %out, u32 0, %r", "  %0 = mul %x, i32 15 : i32\n  buffer.write %out, u32 0, %0"),
    ("and-const-assoc", "u32", false, "  %a = bit_and %x, u32 12 : u32\n  %r = bit_and %a, u32 10 : u32\n  buffer.write %out, u32 0, %r", "  %0 = bit_and %x, u32 8 : u32\n  buffer.write %out, u32 0, %0"),
    ("or-const-assoc", "u32", false, "  %a = bit_or %x, u32 12 : u32\n  %r = bit_or %a, u32 10 : u32\n  buffer.write %out, u32 0, %r", "  %0 = bit_or %x, u32 14 : u32\n  buffer.write %out, u32 0, %0"),
    ("xor-const-assoc", "u32", false, "  %a = bit_xor %x, u32 12 : u32\n  %r = bit_xor %a, u32 10 : u32\n  buffer.write %out, u32 0, %r", "  %0 = bit_xor %x, u32 6 : u32\n  buffer.write %out, u32 0, %0"),
    ("mul-distribute", "i32", false, "  %a = mul %x, %y : i32\n  %b = mul %x, %z : i32\n  %r = add %a, %b : i32\n  buffer.write %out, u32 0, %r", "  %0 = add %y, %z : i32\n  %1 = mul %x, %0 : i32\n  buffer.write %out, u32 0, %1"),
    ("fmul-one", "f32", false, "  %r = mul %x, f32 1.0 : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("fdiv-one", "f32", false, "  %r = div %x, f32 1.0 : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("fsub-zero", "f32", false, "  %r = sub %x, f32 0.0 : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("fadd-neg-zero", "f32", false, "  %r = add %x, f32 -0.0 : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("fneg-neg", "f32", false, "  %a = neg %x : f32\n  %r = neg %a : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("fmul-two", "f32", false, "  %r = mul %x, f32 2.0 : f32\n  buffer.write %out, u32 0, %r", "  %0 = add %x, %x : f32\n  buffer.write %out, u32 0, %0"),
    ("fmin-self", "f32", false, "  %r = min %x, %x : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("fmax-self", "f32", false, "  %r = max %x, %x : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    // fast math only: each also runs without fast math and must not change.
    ("fadd-zero", "f32", true, "  %r = add %x, f32 0.0 : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("fsub-self", "f32", true, "  %r = sub %x, %x : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, f32 0.0"),
    ("fmul-zero", "f32", true, "  %r = mul %x, f32 0.0 : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, f32 0.0"),
    ("fmul-minus-one", "f32", true, "  %r = mul %x, f32 -1.0 : f32\n  buffer.write %out, u32 0, %r", "  %0 = neg %x : f32\n  buffer.write %out, u32 0, %0"),
    ("fadd-comm", "f32", true, "  %a = add %x, %y : f32\n  %b = add %y, %x : f32\n  %r = sub %a, %b : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, f32 0.0"),
    ("fmul-comm", "f32", true, "  %r = mul f32 1.0, %x : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
    ("fadd-const-assoc", "f32", true, "  %a = add %x, f32 1.5 : f32\n  %r = add %a, f32 2.0 : f32\n  buffer.write %out, u32 0, %r", "  %0 = add %x, f32 3.5 : f32\n  buffer.write %out, u32 0, %0"),
    ("fmul-const-assoc", "f32", true, "  %a = mul %x, f32 3.0 : f32\n  %r = mul %a, f32 5.0 : f32\n  buffer.write %out, u32 0, %r", "  %0 = mul %x, f32 15.0 : f32\n  buffer.write %out, u32 0, %0"),
    ("fsub-add-cancel", "f32", true, "  %a = add %x, %y : f32\n  %r = sub %a, %y : f32\n  buffer.write %out, u32 0, %r", "  buffer.write %out, u32 0, %x"),
];

/// Conditional rules with a non-constant operand: nothing may change.
const NOT_CONST: &[(&str, &str, &str)] = &[
    ("add-const-assoc", "i32", "  %a = add %x, %y : i32\n  %r = add %a, %z : i32\n  buffer.write %out, u32 0, %r"),
    ("sub-const-assoc", "i32", "  %a = sub %x, %y : i32\n  %r = sub %a, %z : i32\n  buffer.write %out, u32 0, %r"),
    ("add-sub-const", "u32", "  %a = add %x, %y : u32\n  %r = sub %a, %z : u32\n  buffer.write %out, u32 0, %r"),
    ("mul-const-assoc", "i32", "  %a = mul %x, %y : i32\n  %r = mul %a, %z : i32\n  buffer.write %out, u32 0, %r"),
    (
        "and-const-assoc",
        "u32",
        "  %a = bit_and %x, %y : u32\n  %r = bit_and %a, %z : u32\n  buffer.write %out, u32 0, %r",
    ),
    ("or-const-assoc", "u32", "  %a = bit_or %x, %y : u32\n  %r = bit_or %a, %z : u32\n  buffer.write %out, u32 0, %r"),
    (
        "xor-const-assoc",
        "u32",
        "  %a = bit_xor %x, %y : u32\n  %r = bit_xor %a, %z : u32\n  buffer.write %out, u32 0, %r",
    ),
    ("fadd-const-assoc", "f32", "  %a = add %x, %y : f32\n  %r = add %a, %z : f32\n  buffer.write %out, u32 0, %r"),
    ("fmul-const-assoc", "f32", "  %a = mul %x, %y : f32\n  %r = mul %a, %z : f32\n  buffer.write %out, u32 0, %r"),
];

fn rule_names() -> BTreeSet<String> {
    let rs = xir_passes::opt::egraph::rules::RuleSet::parse(xir_passes::opt::egraph::rules::BUILTIN, "algebraic.ron")
        .expect("the shipped rules load");
    rs.rules.iter().map(|r| r.name.clone()).collect()
}

fn fast_math_rules() -> BTreeSet<String> {
    let rs = xir_passes::opt::egraph::rules::RuleSet::parse(xir_passes::opt::egraph::rules::BUILTIN, "algebraic.ron")
        .unwrap();
    rs.rules.iter().filter(|r| r.fast_math_only).map(|r| r.name.clone()).collect()
}

#[test]
fn every_rule_has_a_case() {
    let covered: BTreeSet<String> = CASES.iter().map(|c| c.0.to_string()).collect();
    assert_eq!(covered, rule_names(), "CASES must cover exactly the rules of algebraic.ron");
    let fast: BTreeSet<String> = CASES.iter().filter(|c| c.2).map(|c| c.0.to_string()).collect();
    assert_eq!(fast, fast_math_rules(), "fast-math cases must be exactly the fast_math_only rules");
}

#[test]
fn each_rule_rewrites_its_case() {
    // Every case runs; the failures are reported together.
    let mut failed = Vec::new();
    for &(rule, ty, fast, body, expected) in CASES {
        let r = std::panic::catch_unwind(|| {
            let out =
                check_exact(&kernel(ty, body), "algebraic_simplify", None, fast, &kernel(ty, expected), &inputs(ty));
            let fired = stat(&out, "rules_fired");
            assert!(fired.contains(&format!("{rule} x")), "{rule}: not among the rules fired: {fired}");
            assert!(out.changed, "{rule}: the pass reports no change");
        });
        if r.is_err() {
            failed.push(rule);
        }
    }
    assert!(failed.is_empty(), "failed cases: {failed:?}");
}

#[test]
fn fast_math_rules_stay_off_without_fast_math() {
    for &(rule, ty, fast, body, _) in CASES.iter().filter(|c| c.2) {
        assert!(fast);
        let src = kernel(ty, body);
        let out = check_exact(&src, "algebraic_simplify", None, false, &src, &inputs(ty));
        assert!(!stat(&out, "rules_fired").contains(&format!("{rule} x")), "{rule} fired without fast math");
        assert!(!out.changed, "{rule}: changed without fast math");
    }
}

#[test]
fn fast_math_option_enables_fast_rules() {
    let src = kernel("f32", "  %r = add %x, f32 0.0 : f32\n  buffer.write %out, u32 0, %r");
    let expected = kernel("f32", "  buffer.write %out, u32 0, %x");
    check_exact(&src, "algebraic_simplify", Some("(fast_math: true)"), false, &expected, &Inputs::new());
}

#[test]
fn const_conditions_block_non_constant_operands() {
    for &(rule, ty, body) in NOT_CONST {
        let src = kernel(ty, body);
        let out = check_exact(&src, "algebraic_simplify", None, true, &src, &inputs(ty));
        assert!(!stat(&out, "rules_fired").contains(&format!("{rule} x")), "{rule} fired on non-constants");
    }
}

#[test]
fn iteration_budget_is_hit_and_reported() {
    // A chain of additions of constants: each iteration folds one link, so
    // one iteration cannot saturate.
    let body = "  %a = add %x, i32 1 : i32\n  %b = add %a, i32 2 : i32\n  %c = add %b, i32 3 : i32\n  \
                %d = add %c, i32 4 : i32\n  %e = add %d, i32 5 : i32\n  buffer.write %out, u32 0, %e";
    let mut m = parse(&kernel("i32", body));
    let out = run_pass(&mut m, "algebraic_simplify", Some("(iterations: 1)"), false);
    assert_eq!(stat(&out, "stop_reasons"), "iteration limit: 1");
    let mut m = parse(&kernel("i32", body));
    let out = run_pass(&mut m, "algebraic_simplify", None, false);
    assert_eq!(stat(&out, "stop_reasons"), "saturated: 1");
    assert!(xir::text::print_module(&m).contains("%0 = add %x, i32 15 : i32"));
    let mut m = parse(&kernel("i32", body));
    let out = run_pass(&mut m, "algebraic_simplify", Some("(nodes: 4)"), false);
    assert_eq!(stat(&out, "stop_reasons"), "node limit: 1");
}

#[test]
fn malformed_rules_are_load_errors() {
    let bad: &[(&str, &str)] = &[
        (
            r#"[(name: "Bad_Name", law: "l", lhs: "(add ?x 0)", rhs: "?x", types: Int, fast_math_only: false)]"#,
            "kebab-case",
        ),
        (
            r#"[(name: "a", law: "l", lhs: "(add ?x 0)", rhs: "?x", types: Int, fast_math_only: false),
             (name: "a", law: "l", lhs: "(add ?x 0)", rhs: "?x", types: Int, fast_math_only: false)]"#,
            "duplicate",
        ),
        (
            r#"[(name: "a", law: "l", lhs: "(plus ?x 0)", rhs: "?x", types: Int, fast_math_only: false)]"#,
            "unknown opcode `plus`",
        ),
        (
            r#"[(name: "a", law: "l", lhs: "(add ?x 0.0)", rhs: "?x", types: Int, fast_math_only: false)]"#,
            "float literal",
        ),
        (
            r#"[(name: "a", law: "l", lhs: "(add ?x 0)", rhs: "?x", types: Float, fast_math_only: false)]"#,
            "integer literal",
        ),
        (r#"[(name: "a", law: "l", lhs: "(add ?x 0)", rhs: "?y", types: Int, fast_math_only: false)]"#, "?y"),
        (
            r#"[(name: "a", law: "l", lhs: "(add ?x)", rhs: "?x", types: Int, fast_math_only: false)]"#,
            "takes 2 operand",
        ),
        (
            r#"[(name: "a", law: "l", lhs: "(eq ?x ?x)", rhs: "?x", types: Int, fast_math_only: false)]"#,
            "not a pure arithmetic",
        ),
        (
            r#"[(name: "a", law: "l", lhs: "(add ?x ?c)", rhs: "?x", types: Int, fast_math_only: false, when: ["const ?d"])]"#,
            "does not bind",
        ),
        (
            r#"[(name: "a", law: "l", lhs: "(add ?x ?c)", rhs: "?x", types: Int, fast_math_only: false, when: ["odd ?c"])]"#,
            "unknown condition",
        ),
        (r#"[(name: "a", law: "", lhs: "(add ?x 0)", rhs: "?x", types: Int, fast_math_only: false)]"#, "law"),
        (r#"[(name: "a", law: "l", lhs: "?x", rhs: "?x", types: Int, fast_math_only: false)]"#, "bare variable"),
        (r#"[(name: "a", law: "l", lhs: "(add ?x 0)", rhs: "?x", types: Int)]"#, "fast_math_only"),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let reg = registry();
    let decl = reg.get("algebraic_simplify").unwrap();
    for (k, (src, want)) in bad.iter().enumerate() {
        let path = dir.join(format!("bad{k}.ron"));
        std::fs::write(&path, src).unwrap();
        let opts: ron::Value = ron::from_str(&format!("(rules_file: Some({:?}))", path.display().to_string())).unwrap();
        let err = match (decl.create)(Some(&opts)) {
            Ok(_) => panic!("bad rules #{k} loaded: {src}"),
            Err(xir::pass::OptionsError::File(e)) => e,
            Err(e) => panic!("bad rules #{k}: not a rules-file error: {e:?}"),
        };
        assert_eq!(err.file, path.display().to_string());
        assert!(err.message.contains(want), "bad rules #{k}: `{err}` does not mention `{want}`");
        // Each error points into the rules file: at the RON syntax error
        // (the missing field), else at the rule's name.
        let want_span = match k {
            0 => Span::with_len(1, 9, 10),
            1 => Span::with_len(2, 21, 3),
            12 => Span::new(1, 64),
            _ => Span::with_len(1, 9, 3),
        };
        assert_eq!(err.span, Some(want_span), "bad rules #{k}: {err}");
    }
}

#[test]
fn an_unreadable_rules_file_is_a_file_error() {
    let reg = registry();
    let decl = reg.get("algebraic_simplify").unwrap();
    let opts: ron::Value = ron::from_str(r#"(rules_file: Some("/nonexistent/rules.ron"))"#).unwrap();
    match (decl.create)(Some(&opts)) {
        Err(xir::pass::OptionsError::File(e)) => {
            assert_eq!((e.file.as_str(), e.span), ("/nonexistent/rules.ron", None));
            assert!(e.message.starts_with("cannot read rules file: "), "{e}");
        }
        other => panic!("expected a file error, got {:?}", other.err()),
    }
}

// ---- proptest: rules without fast math keep exact bits -------------------

#[derive(Clone, Debug)]
enum Expr {
    In(u8),
    Const(u32),
    Un(&'static str, Box<Expr>),
    Bin(&'static str, Box<Expr>, Box<Expr>),
}

const INT_EDGES: &[u32] = &[0, 1, 2, 3, 0xffff_ffff, 0x8000_0000, 0x7fff_ffff, 31, 32, 5];
const F32_EDGES: &[u32] = &[
    0x0000_0000, // +0
    0x8000_0000, // -0
    0x3f80_0000, // 1
    0xbf80_0000, // -1
    0x4000_0000, // 2
    0x7f80_0000, // inf
    0xff80_0000, // -inf
    0x7fc0_0000, // NaN
    0xffc0_0001, // -NaN with payload
    0x0000_0001, // smallest subnormal
    0x7f7f_ffff, // max
    0x3fc0_0000, // 1.5
];

fn expr(float: bool) -> impl Strategy<Value = Expr> {
    let edges: &'static [u32] = if float { F32_EDGES } else { INT_EDGES };
    let leaf = prop_oneof![(0u8..3).prop_map(Expr::In), prop::sample::select(edges).prop_map(Expr::Const)];
    let un: &'static [&'static str] = if float { &["neg"] } else { &["neg", "bit_not"] };
    let bin: &'static [&'static str] = if float {
        &["add", "sub", "mul", "div", "min", "max"]
    } else {
        &["add", "sub", "mul", "div", "mod", "bit_and", "bit_or", "bit_xor", "shl", "shr", "min", "max"]
    };
    leaf.prop_recursive(5, 40, 2, move |inner| {
        prop_oneof![
            (prop::sample::select(un), inner.clone()).prop_map(|(o, e)| Expr::Un(o, Box::new(e))),
            (prop::sample::select(bin), inner.clone(), inner).prop_map(|(o, a, b)| Expr::Bin(
                o,
                Box::new(a),
                Box::new(b)
            )),
        ]
    })
}

/// Emit `e` as instructions of type `ty`; returns the operand spelling.
fn emit(e: &Expr, ty: &str, lines: &mut Vec<String>) -> String {
    match e {
        Expr::In(k) => format!("%x{k}"),
        Expr::Const(bits) => format!("{ty} 0x{bits:x}"),
        Expr::Un(op, a) => {
            let a = emit(a, ty, lines);
            let n = format!("%t{}", lines.len());
            lines.push(format!("  {n} = {op} {a} : {ty}"));
            n
        }
        Expr::Bin(op, a, b) => {
            let (a, b) = (emit(a, ty, lines), emit(b, ty, lines));
            let n = format!("%t{}", lines.len());
            lines.push(format!("  {n} = {op} {a}, {b} : {ty}"));
            n
        }
    }
}

/// A kernel reading three u32 words, reinterpreting them as `ty`,
/// evaluating `e` and storing its bits.
fn expr_kernel(e: &Expr, ty: &str) -> String {
    let mut lines = Vec::new();
    for k in 0..3 {
        lines.push(format!("  %w{k} = buffer.read %in, u32 {k} : u32"));
        lines.push(if ty == "u32" {
            format!("  %x{k} = bit_or %w{k}, u32 0 : u32")
        } else {
            format!("  %x{k} = cast.bitwise %w{k} : {ty}")
        });
    }
    let r = emit(e, ty, &mut lines);
    let out = if ty == "u32" {
        r
    } else {
        lines.push(format!("  %bits = cast.bitwise {r} : u32"));
        "%bits".to_string()
    };
    format!(
        "kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {{\n^entry:\n{}\n  \
         buffer.write %out, u32 0, {out}\n  return\n}}\n",
        lines.join("\n")
    )
}

fn check_bits(e: &Expr, ty: &str, words: [u32; 3]) -> Result<(), TestCaseError> {
    let src = expr_kernel(e, ty);
    let mut m = parse(&src);
    let inputs =
        Inputs::from_json(&format!(r#"{{"args": {{"in": [{}, {}, {}], "out": [0]}}}}"#, words[0], words[1], words[2]))
            .unwrap();
    let before = interp(&m, &inputs);
    run_pass(&mut m, "algebraic_simplify", None, false);
    let after = interp(&m, &inputs);
    match before {
        // An expression that traps (integer division by zero) may trap or not
        // after simplification (`x / 0 * 0` becomes 0): only defined results
        // must be kept.
        Err(_) => Ok(()),
        Ok(b) => {
            prop_assert_eq!(after, Ok(b), "\n{}\n--- after ---\n{}", src, xir::text::print_module(&m));
            Ok(())
        }
    }
}

fn words(float: bool) -> impl Strategy<Value = [u32; 3]> {
    let edges: &'static [u32] = if float { F32_EDGES } else { INT_EDGES };
    let w = prop_oneof![prop::sample::select(edges), any::<u32>()];
    [w.clone(), w.clone(), w]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("XIR_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(200)))]

    #[test]
    fn rewrites_keep_exact_bits_u32(e in expr(false), w in words(false)) {
        check_bits(&e, "u32", w)?;
    }

    #[test]
    fn rewrites_keep_exact_bits_i32(e in expr(false), w in words(false)) {
        check_bits(&e, "i32", w)?;
    }

    #[test]
    fn rewrites_keep_exact_bits_f32(e in expr(true), w in words(true)) {
        check_bits(&e, "f32", w)?;
    }
}
