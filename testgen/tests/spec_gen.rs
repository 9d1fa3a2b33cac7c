//! The spec-driven generator (`xir_testgen::spec_gen`): what it derives
//! from the spec (and what it skips, by rule), that a new opcode entry in a
//! copy of the spec is generated with no generator code, that every
//! `undefined` condition has a guard, and that its modules verify, lie in
//! their dialect and (safe mode) run in the interpreter.
//!
//! Cases per property: 128, or `XIR_PROPTEST_CASES`.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use xir_spec::{SpecData, SpecSources};
use xir_testgen::spec_gen::{builtin_plan, generate, guard, modules, programs, Plan, Slot};

fn cases() -> u32 {
    std::env::var("XIR_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(128)
}

/// Every `pure` arithmetic, comparison, conversion and math opcode of
/// `xir.structured` (the spec classes `ArithmeticOp` and `CastInst`) has
/// templates; the skipped opcodes are printed with their reasons, and a
/// few reasons are pinned.
#[test]
fn plan_generates_every_arithmetic_and_cast_opcode() {
    let plan = builtin_plan("xir.structured");
    let spec = SpecData::builtin();
    let d = spec.dialect("xir.structured").expect("dialect");
    let generated = plan.generated();
    let mut missing = Vec::new();
    for o in spec.dialect_ops(d) {
        if matches!(&*o.spec.class, "ArithmeticOp" | "CastInst") && !generated.contains(&&*o.spec.name) {
            missing.push(format!("{}: {}", o.spec.name, plan.skip_reason(&o.spec.name).unwrap_or("?")));
        }
    }
    for s in &plan.skipped {
        eprintln!("skipped {}: {}", s.name, s.reason);
    }
    for (sig, why) in &plan.refused {
        eprintln!("refused by the interpreter: {sig}: {why}");
    }
    eprintln!(
        "{} opcodes generated ({} templates), {} skipped",
        generated.len(),
        plan.templates.len(),
        plan.skipped.len()
    );
    assert!(missing.is_empty(), "not generated: {missing:#?}");
    assert_eq!(generated.len() + plan.skipped.len(), d.ops.indices().count());
    let reason = |n| plan.skip_reason(n).unwrap_or_else(|| panic!("`{n}` is not skipped"));
    assert_eq!(reason("if"), "control flow: terminators and block operands belong to the program skeleton");
    assert_eq!(
        reason("buffer.size"),
        "operand `buffer` (class `buffer`): no value of the generator's types belongs to it"
    );
    assert_eq!(reason("gep"), "its result is an lvalue (an address), not a value");
    assert_eq!(reason("print"), "carries a `text` payload");
    assert!(reason("warp.active_sum").starts_with("not `pure` (traits: convergent, lane_fold)"));
    assert!(plan.skip_reason("br_indexed").is_none(), "xir.structured has no `br_indexed`");
}

/// Signatures read off the verifier's rules: `add` on every numeric
/// scalar and vector, `shuffle` only with in-range lane constants, `select`
/// with a bool or a bool vector of the value's lanes.
#[test]
fn templates_follow_the_verifier_rules() {
    let plan = builtin_plan("xir.structured");
    let of = |n: &'static str| plan.templates.iter().filter(move |t| t.name == n);
    assert_eq!(of("add").count(), 12, "i32, u32, f32 x scalar, vec2..4");
    for t in of("shuffle") {
        let Slot::Value(xir_testgen::spec_gen::Ty::Vec(_, lanes)) = t.operands[0] else { panic!("{t:?}") };
        for s in &t.operands[1..] {
            let Slot::Const(_, values) = s else { panic!("{t:?}") };
            assert_eq!(values, &(0..lanes as u64).collect::<Vec<_>>(), "{t:?}");
        }
    }
    assert!(of("select").all(|t| match (&t.operands[0], &t.operands[1]) {
        (Slot::Value(c), Slot::Value(v)) => *c == xir_testgen::spec_gen::Ty::Bool || *c == v.bool_shape(),
        _ => false,
    }));
}

/// The spec link. A copy of the spec files is written to a temporary
/// directory with one new opcode appended, `test.new_op`, declared like
/// `add` (same operand classes, result rule, traits, constraints); the copy
/// is loaded from those files ([`SpecData::load`]: this build's `Opcode`
/// enum lacks the entry, so [`xir_spec::Spec::load`] would refuse it), and
/// the plan derived from it has `test.new_op` in `xir.structured` with
/// exactly `add`'s signatures. The real generation path, driven by that
/// plan, chooses it, types its operands and records it in its trace.
///
/// What this proves and what it cannot: plan derivation and template
/// choice need no code for a new opcode. The instruction itself cannot be
/// put into a `Module` by this build (its `Opcode` is generated at build
/// time), so a constant of the result type stands in for it; after the
/// opcode is added to `opcodes.ron` and the crate rebuilt, the same path
/// emits the instruction.
#[test]
fn a_new_opcode_in_a_spec_copy_is_generated() {
    let dir = std::env::temp_dir().join(format!("xir-spec-copy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let builtin = SpecSources::builtin();
    let add_entry = {
        let t = &builtin.opcodes.1;
        let start = t.find("name: \"add\",").expect("add entry");
        let start = t[..start].rfind('(').expect("entry opens");
        let end = start + t[start..].find("\n    ),").expect("entry closes") + "\n    ),".len();
        t[start..end].replace("name: \"add\",", "name: \"test.new_op\",")
    };
    let end = builtin.opcodes.1.rfind(']').expect("list ends");
    let opcodes = format!("{}    {add_entry}\n{}", &builtin.opcodes.1[..end], &builtin.opcodes.1[end..]);
    for (name, text) in [
        ("types.ron", &builtin.types.1),
        ("opcodes.ron", &opcodes),
        ("registers.ron", &builtin.registers.1),
        ("dialects.ron", &builtin.dialects.1),
    ] {
        std::fs::write(dir.join(name), text).expect("write the spec copy");
    }
    let read = |name: &str| {
        let p = dir.join(name);
        (p.display().to_string(), std::fs::read_to_string(&p).expect("read the spec copy"))
    };
    let copy = SpecSources {
        types: read("types.ron"),
        opcodes: read("opcodes.ron"),
        registers: read("registers.ron"),
        dialects: read("dialects.ron"),
    };
    std::fs::remove_dir_all(&dir).ok();
    assert!(xir_spec::Spec::load(copy.clone()).is_err(), "this build cannot bind the new opcode");
    let spec = SpecData::load(copy).unwrap_or_else(|e| panic!("{e}"));
    let plan = Plan::derive(&spec, "xir.structured").expect("plan");
    let sig = |n: &str| -> Vec<String> {
        plan.templates.iter().filter(|t| t.name == n).map(|t| format!("{:?} -> {:?}", t.operands, t.result)).collect()
    };
    assert!(!sig("test.new_op").is_empty(), "no template for test.new_op: {:?}", plan.skip_reason("test.new_op"));
    assert_eq!(sig("test.new_op"), sig("add"));
    let base = builtin_plan("xir.structured");
    assert_eq!(plan.templates.len(), base.templates.len() + sig("add").len());
    // The generation path picks it.
    let mut runner = TestRunner::deterministic();
    let words = proptest::collection::vec(proptest::arbitrary::any::<u32>(), 64..160);
    let mut picked = 0;
    for _ in 0..64 {
        let w = words.new_tree(&mut runner).expect("words").current();
        let g = generate(&plan, &w, true, 4, &[1; 16], 3);
        picked += g.trace.iter().filter(|n| *n == "test.new_op").count();
        let diags = xir::verify::verify_module(&g.program.module);
        assert!(diags.is_empty(), "{}", xir::diag::render(&diags));
    }
    assert!(picked > 0, "test.new_op never chosen in 64 programs");
}

/// Every `undefined` name the spec uses has a guard, and every guard is
/// named by some opcode (a guard nothing needs is dead).
#[test]
fn every_undefined_condition_has_a_guard() {
    let spec = SpecData::builtin();
    let used: std::collections::BTreeSet<&str> =
        spec.ops.iter().flat_map(|o| o.spec.undefined.iter().map(|u| &**u)).collect();
    for u in &used {
        assert!(guard::lookup(u).is_some(), "`{u}` has no guard in testgen/src/spec_gen/guard.rs");
    }
    for g in guard::names() {
        assert!(used.contains(g), "guard `{g}` is named by no opcode's `undefined`");
    }
}

fn run(
    strategy: impl Strategy<Value = xir_testgen::programs::Program>,
    check: impl Fn(&xir_testgen::programs::Program) -> Result<(), String>,
) {
    let mut runner = TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    runner.run(&strategy, |p| check(&p).map_err(TestCaseError::fail)).unwrap_or_else(|e| panic!("{e}"));
}

fn verified_in(p: &xir_testgen::programs::Program, dialect: &str) -> Result<(), String> {
    let diags = xir::verify::verify_module(&p.module);
    if !diags.is_empty() {
        return Err(format!("verifier:\n{}\n{p:?}", xir::diag::render(&diags)));
    }
    let d = xir_spec::spec().dialect(dialect).expect("dialect");
    let diags = xir::dialect::check_module(&p.module, d);
    if !diags.is_empty() {
        return Err(format!("dialect `{dialect}`:\n{}\n{p:?}", xir::diag::render(&diags)));
    }
    Ok(())
}

#[test]
fn structured_modules_verify_and_lie_in_their_dialect() {
    run(modules("xir.structured"), |p| verified_in(p, "xir.structured"));
}

#[test]
fn raw_modules_verify_and_lie_in_their_dialect() {
    run(modules("xir.raw"), |p| verified_in(p, "xir.raw"));
}

/// Every signature the plan has survives the text and JSON formats:
/// print, parse, print gives the same text; JSON out and back too.
#[test]
fn modules_round_trip_through_text_and_json() {
    run(modules("xir.structured"), |p| {
        let text = xir::text::print_module(&p.module);
        let back = xir::text::parse_module(&text, "spec_gen.xir")
            .map_err(|d| format!("does not parse back:\n{}\n{text}", xir::diag::render(&d)))?;
        let again = xir::text::print_module(&back);
        if again != text {
            return Err(format!("print(parse(print(m))) differs:\n{text}\n---\n{again}"));
        }
        let json = xir::text::json::to_json(&p.module);
        let from = xir::text::json::from_json(&json, "spec_gen.json")
            .map_err(|d| format!("JSON does not read back:\n{}\n{text}", xir::diag::render(&d)))?;
        if xir::text::print_module(&from) != text {
            return Err(format!("JSON round trip differs:\n{text}"));
        }
        Ok(())
    });
}

/// Safe mode: every program runs in the interpreter without error.
#[test]
fn safe_programs_run_in_the_interpreter() {
    run(programs(), |p| {
        verified_in(p, "xir.structured")?;
        xir::interp::run_kernel(&p.module, p.kernel, &p.inputs).map(|_| ()).map_err(|e| format!("{e}\n{p:?}"))
    });
}

/// Over 1024 programs, every opcode the plan generates is used.
#[test]
fn programs_use_every_generated_opcode() {
    let plan = builtin_plan("xir.structured");
    let mut runner = TestRunner::deterministic();
    let words = proptest::collection::vec(proptest::arbitrary::any::<u32>(), 64..160);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..512 {
        let w = words.new_tree(&mut runner).expect("words").current();
        seen.extend(generate(plan, &w, true, 4, &[1; 16], 3).trace);
    }
    let unused: Vec<&str> = plan.generated().into_iter().filter(|n| !seen.contains(*n)).collect();
    assert!(unused.is_empty(), "never used in 1024 programs: {unused:?}");
}
