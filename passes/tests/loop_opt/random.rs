//! Randomized checks of the loop passes: the generator's programs (to show
//! the differential test is not vacuous for them) and a property over random
//! counted loops built for scalar evolution (directions, comparisons,
//! orientations, symbolic bounds, signedness, further recurrences).

use super::inputs;
use super::opt_support::*;
use xir::interp::Inputs;

/// The differential test (`differential.rs`) runs these passes on random
/// programs; check that it is not vacuous: over a fixed sample of generated
/// programs in raw SSA form, each pass changes some of them (and keeps
/// their results).
#[test]
fn loop_passes_fire_on_generated_programs() {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut fired = std::collections::BTreeMap::<&str, usize>::new();
    for _ in 0..200 {
        let p = xir_testgen::programs::program().new_tree(&mut runner).expect("a program").current();
        let mut m = p.module.clone();
        let k = m.find_function("main").unwrap();
        let before = xir::interp::run_kernel(&m, k, &p.inputs).map_err(|e| e.message);
        for s in ["promote_ref_arg", "destructure_cfg", "mem2reg"] {
            run_pass(&mut m, s, None, false);
        }
        for s in ["loop_rotation", "licm", "indvar_simplify"] {
            if run_pass(&mut m, s, None, false).changed {
                *fired.entry(s).or_default() += 1;
            }
        }
        let after = xir::interp::run_kernel(&m, k, &p.inputs).map_err(|e| e.message);
        assert_eq!(after, before, "{}", xir::text::print_module(&m));
    }
    eprintln!("programs changed: {fired:?}");
    // The generator's loops each have one counter, used only by the exit
    // test: `indvar_simplify` has nothing to do there (it is exercised by
    // `random_affine_loops` below instead).
    for s in ["loop_rotation", "licm"] {
        assert!(fired.get(s).copied().unwrap_or(0) >= 5, "{s} changed too few programs: {fired:?}");
    }
}

/// Parameters of one random counted loop (see `affine_loop`).
#[derive(Clone, Debug)]
struct LoopCase {
    signed: bool,
    /// Step of the counter `%i`.
    step: i64,
    op: &'static str,
    start: i64,
    bound: i64,
    start_is_arg: bool,
    bound_is_arg: bool,
    /// Test `bound <op'> %i` (mirrored) instead of `%i <op> bound`.
    mirrored: bool,
    /// Branch to the exit on true, with the negated comparison.
    exit_on_true: bool,
    /// (start, step, of the other signedness) of further recurrences.
    others: Vec<(i64, i64, bool)>,
}

fn mirror(op: &str) -> &'static str {
    match op {
        "lt" => "gt",
        "gt" => "lt",
        "le" => "ge",
        "ge" => "le",
        "ne" => "ne",
        _ => "eq",
    }
}

fn negate(op: &str) -> &'static str {
    match op {
        "lt" => "ge",
        "ge" => "lt",
        "gt" => "le",
        "le" => "gt",
        "ne" => "eq",
        _ => "ne",
    }
}

fn loop_case() -> impl proptest::strategy::Strategy<Value = LoopCase> {
    use proptest::prelude::*;
    let steps = prop::sample::select(vec![1i64, 2, 3, -1, -2, -3]);
    (
        any::<bool>(),
        steps,
        0usize..3,
        (-20i64..20, -20i64..20),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        prop::collection::vec(
            (-10i64..10, prop::sample::select(vec![-6i64, -4, -3, -2, -1, 1, 2, 3, 4, 6]), any::<bool>()),
            0..3,
        ),
    )
        .prop_map(|(signed, step, k, (a, b), (sa, ba, mirrored, exit_on_true), others)| {
            let ops: &[&str] = match step {
                1 => &["lt", "le", "ne"],
                -1 => &["gt", "ge", "ne"],
                s if s > 0 => &["lt", "le"],
                _ => &["gt", "ge"],
            };
            let op = ops[k % ops.len()];
            // Keep every run finite and free of unintended wrap-around:
            // unsigned values non-negative, a decreasing unsigned counter
            // stopping at least one step above zero, `ne` approached from
            // the right side.
            let (mut start, mut bound) = if signed { (a, b) } else { (a.abs(), b.abs()) };
            if !signed && step < 0 {
                bound = bound.max(step.abs());
            }
            if op == "ne" && (step > 0) == (start > bound) {
                std::mem::swap(&mut start, &mut bound);
            }
            LoopCase {
                signed,
                step,
                op,
                start,
                bound,
                start_is_arg: sa,
                bound_is_arg: ba,
                mirrored,
                exit_on_true,
                others,
            }
        })
}

/// A raw-SSA loop: counter `%i`, further recurrences `%v<k>`, a derived
/// value and a non-affine accumulator, all written to `%out` after it.
fn affine_loop(c: &LoopCase) -> (String, Inputs) {
    let t = if c.signed { "i32" } else { "u32" };
    // Unsigned literals are written as their 32-bit two's complement.
    let lit = |v: i64| if c.signed { format!("{t} {v}") } else { format!("{t} {}", v as i32 as u32) };
    let start = if c.start_is_arg { "%s".to_string() } else { lit(c.start) };
    let bound = if c.bound_is_arg { "%n".to_string() } else { lit(c.bound) };
    let mut head = format!("  %i = phi [{start}, ^entry], [%i1, ^latch] : {t}\n");
    let mut latch = format!("  %i1 = add %i, {} : {t}\n", lit(c.step));
    let mut exit = String::from("  buffer.write %out, u32 0, %i\n");
    for (k, (s, d, flip)) in c.others.iter().enumerate() {
        // Some recurrences have the other signedness than the counter.
        let (tk, litk) =
            if *flip == c.signed { ("u32", format!("u32 {}", *s as i32 as u32)) } else { ("i32", format!("i32 {s}")) };
        let stepk = if tk == "u32" { format!("u32 {}", *d as i32 as u32) } else { format!("i32 {d}") };
        head += &format!("  %v{k} = phi [{litk}, ^entry], [%v{k}n, ^latch] : {tk}\n");
        latch += &format!("  %v{k}n = add %v{k}, {stepk} : {tk}\n");
        exit += &format!("  %w{k} = cast.bitwise %v{k} : {t}\n  buffer.write %out, u32 {}, %w{k}\n", k + 3);
    }
    head += &format!("  %acc = phi [{}, ^entry], [%acc1, ^latch] : {t}\n", lit(1));
    let (mut op, (mut l, mut r)) = (c.op, ("%i".to_string(), bound.clone()));
    if c.mirrored {
        op = mirror(op);
        std::mem::swap(&mut l, &mut r);
    }
    let branch = if c.exit_on_true {
        op = negate(op);
        "true ^exit, false ^body"
    } else {
        "true ^body, false ^exit"
    };
    head += &format!("  %c = {op} {l}, {r} : bool\n  cond_br %c, {branch}\n");
    let src = format!(
        "kernel @k(%out: buffer<{t}>, %s: {t}, %n: {t}) block_size(1, 1, 1) {{\n^entry:\n  br target ^head\n\
         ^head:\n{head}^body:\n  %d = mul %i, {five} : {t}\n  %e = add %d, %s : {t}\n  %x = bit_xor %acc, %e : {t}\n  \
         %acc1 = mul %x, {three} : {t}\n  br target ^latch\n^latch:\n{latch}  br target ^head\n\
         ^exit:\n{exit}  buffer.write %out, u32 1, %acc\n  %q = mul %i, {seven} : {t}\n  buffer.write %out, u32 2, %q\n  return\n}}\n",
        five = lit(5),
        three = lit(3),
        seven = lit(7),
    );
    let json = format!(r#"{{"dispatch":[1,1,1],"args":{{"out":{:?},"s":{},"n":{}}}}}"#, vec![0; 8], c.start, c.bound);
    (src, inputs(&json))
}

/// Property: on random counted loops (counter direction, comparison,
/// orientation, constant or symbolic bounds, signedness, further
/// recurrences), `indvar_simplify` alone, after rotation, and with `licm`
/// and `dce`, keeps every result; over the run it rewrites many loops.
#[test]
fn random_affine_loops() {
    use proptest::test_runner::{Config, TestRunner};
    use std::cell::Cell;
    let replaced = Cell::new(0usize);
    let exits = Cell::new(0usize);
    let cases = std::env::var("XIR_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&loop_case(), |c| {
            let (src, inp) = affine_loop(&c);
            let base = parse(&src);
            let before = interp(&base, &inp);
            assert!(before.is_ok(), "fixture runs: {before:?}\n{src}");
            // The legalization spine from raw SSA on, then the loop passes.
            let legalized = [&xir_testgen::passes::LEGALIZE[2..], &["licm", "indvar_simplify"]].concat();
            for steps in [
                &["indvar_simplify"][..],
                &["loop_rotation", "indvar_simplify"],
                &["loop_rotation", "licm", "indvar_simplify", "dce"],
                &legalized[..],
            ] {
                let mut m = base.clone();
                for s in steps {
                    let out = run_pass(&mut m, s, None, false);
                    if *s == "indvar_simplify" {
                        replaced.set(replaced.get() + stat(&out, "ivs_replaced").parse::<usize>().unwrap());
                        exits.set(exits.get() + stat(&out, "exit_uses_rewritten").parse::<usize>().unwrap());
                    }
                }
                if steps.len() == legalized.len() {
                    // On structured SSA the passes keep the audited dialect.
                    let d = xir_spec::spec().dialect("xir.restructured.audited").unwrap();
                    let diags = xir::dialect::check_module(&m, d);
                    if !diags.is_empty() {
                        return Err(proptest::test_runner::TestCaseError::fail(format!(
                            "not audited after {steps:?}:\n{}\n{}",
                            xir::diag::render(&diags),
                            xir::text::print_module(&m)
                        )));
                    }
                }
                let after = interp(&m, &inp);
                if after != before {
                    return Err(proptest::test_runner::TestCaseError::fail(format!(
                        "{steps:?} changed results: {before:?} -> {after:?}\n{src}\n{}",
                        xir::text::print_module(&m)
                    )));
                }
            }
            Ok(())
        })
        .unwrap();
    eprintln!("ivs replaced: {}, exit uses rewritten: {}", replaced.get(), exits.get());
    assert!(replaced.get() >= cases as usize / 4 && exits.get() >= cases as usize, "too few rewrites");
}
