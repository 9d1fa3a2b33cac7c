//! The randomized and corpus-wide checks of the catalogue passes (a child
//! of `opt_catalogue`, whose helpers it uses): every splittable opcode
//! through the scalarizer with special values, the five passes on random
//! programs at three stages of the legalization spine, and on the corpus.

use super::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use xir::pass::{AnalysisCache, PassContext};
use xir_testgen::passes::{LEGALIZE, RAW_SSA};

/// Every opcode the scalarizer splits, on every element type its operand
/// class admits (f32, f64, i32, u32), at 3 and 4 lanes, with NaN, signed
/// zeros, infinities, a subnormal, division by -1 and wrap-around in the
/// inputs (MIN / -1 is an interpreter error, so MIN meets other divisors):
/// the split program computes the same bits as the vector one.
#[test]
fn scalarizer_is_exact_for_every_splittable_opcode() {
    use xir::Opcode;
    let float_sets = [
        ["[1.5, \"nan\", \"-0.0\", \"inf\"]", "[-2.25, 0.0, \"-0.0\", 3.0]", "[0.5, \"-inf\", 1e-40, 2.0]"],
        ["[0.25, -3.5, 1e30, -0.75]", "[0.25, 2.0, \"nan\", 0.5]", "[-1.0, 0.125, 7.0, \"0x7fc00001\"]"],
    ];
    let signed_sets = [
        ["[-7, -2147483648, 0, 123456]", "[3, 7, 5, -1]", "[9, 1, -3, 40]"],
        ["[2147483647, -1, 17, -100]", "[2, 31, -8, 100]", "[-5, 0, 8, 33]"],
    ];
    let unsigned_sets = [
        ["[7, 4294967295, 0, 123456]", "[3, 1, 5, 31]", "[9, 1, 3, 40]"],
        ["[2147483648, 1, 17, 100]", "[2, 33, 8, 4294967295]", "[5, 0, 8, 33]"],
    ];
    let mut checked = 0;
    for &op in xir_passes::opt::scalarizer::SPLITTABLE {
        let spec = &xir_spec::spec().op(op).spec;
        let arity = spec.operands.len();
        let class = &*spec.operands[if op == Opcode::Select { 1 } else { 0 }].class;
        let elems: &[&str] = match class {
            "float" => &["f32", "f64"],
            "numeric" | "scalar_or_vector" => &["f32", "i32", "u32"],
            "int" | "int_or_bool" => &["i32", "u32"],
            "uint32" => &["u32"],
            other => panic!("no element types for class `{other}` of `{op}`"),
        };
        for &elem in elems {
            for lanes in [3usize, 4] {
                let vt = format!("vec<{elem}, {lanes}>");
                let (res_elem, body) = match op {
                    Opcode::Select => {
                        (elem, format!("%cond = lt %a, %b : vec<bool, {lanes}>\n  %r = select %cond, %a, %b : {vt}\n"))
                    }
                    Opcode::CastStatic => {
                        let to = if elem == "f32" { "i32" } else { "f32" };
                        (to, format!("%r = cast.static %a : vec<{to}, {lanes}>\n"))
                    }
                    _ => {
                        let ops = ["%a", "%b", "%c"][..arity].join(", ");
                        let boolean = matches!(
                            op,
                            Opcode::Lt
                                | Opcode::Gt
                                | Opcode::Le
                                | Opcode::Ge
                                | Opcode::Eq
                                | Opcode::Ne
                                | Opcode::Isnan
                                | Opcode::Isinf
                        );
                        if boolean {
                            ("u32", format!("%rb = {op} {ops} : vec<bool, {lanes}>\n  %r = cast.static %rb : vec<u32, {lanes}>\n"))
                        } else {
                            (elem, format!("%r = {op} {ops} : {vt}\n"))
                        }
                    }
                };
                let src = format!(
                    "kernel @k(%in: buffer<{vt}>, %out: buffer<vec<{res_elem}, {lanes}>>) block_size(1, 1, 1) {{\n^entry:\n  %a = buffer.read %in, u32 0 : {vt}\n  %b = buffer.read %in, u32 1 : {vt}\n  %c = buffer.read %in, u32 2 : {vt}\n  {body}  buffer.write %out, u32 0, %r\n  return\n}}\n"
                );
                let sets = match elem {
                    "f32" | "f64" => &float_sets,
                    "i32" => &signed_sets,
                    _ => &unsigned_sets,
                };
                for set in sets {
                    let lane = |s: &str| {
                        let items: Vec<&str> = s.trim_matches(|c| c == '[' || c == ']').split(", ").collect();
                        format!("[{}]", items[..lanes].join(", "))
                    };
                    let zero = if res_elem.starts_with('f') { "0.0" } else { "0" };
                    let out = format!("[{}]", vec![zero; lanes].join(", "));
                    let inp = inputs(&format!(
                        r#"{{"args": {{"in": [{}, {}, {}], "out": [{out}]}}}}"#,
                        lane(set[0]),
                        lane(set[1]),
                        lane(set[2])
                    ));
                    let mut m = parse(&src);
                    let before = interp(&m, &inp);
                    assert!(before.is_ok(), "`{op}` on {vt} fails to run: {before:?}\n{src}");
                    let out = run_pass(&mut m, "scalarizer", None, false);
                    assert_ne!(stat(&out, "split"), "0", "{src}");
                    let text = xir::text::print_module(&m);
                    let vector_op = format!(" = {op} ");
                    assert!(!text.lines().any(|l| l.contains(&vector_op) && l.contains(": vec<")), "{text}");
                    assert_eq!(interp(&m, &inp), before, "`{op}` on {vt} differs after scalarizer:\n{text}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} cases");
}

// ---- differential, on raw SSA and legalized IR --------------------------------
//
// `differential.rs` runs every registered pass on the generator's structured
// programs. These passes keep their dialect and act on Phis and raw
// branches too, so they are also run after `destructure_cfg` + `mem2reg`
// (raw CFG with Phis: where `if_conversion` meets `cond_br` diamonds) and
// after the whole legalization spine (restructured SSA). Each run must keep
// the verifier, the dialect and the interpreter's results; and over the
// cases each pass must have changed some program, so the property is not
// vacuous.

const OURS: &[&str] = &["reassociate", "simplify_libcalls", "scalarizer", "cvp", "if_conversion"];

fn cases() -> u32 {
    std::env::var("XIR_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(128)
}

/// Run `name`; verifier and dialect checks after it. Returns whether it changed the module.
fn step(m: &mut xir::Module, name: &str, dialect: &mut &'static str) -> Result<bool, String> {
    let reg = registry();
    let decl = reg.get(name).ok_or_else(|| format!("`{name}` is not registered"))?;
    let pass = (decl.create)(None).map_err(|e| e.to_string())?;
    let mut cache = AnalysisCache::default();
    let mut cx = PassContext { analyses: &mut cache, opt_level: 2, fast_math: false };
    let out = pass.run(m, &mut cx).map_err(|e| e.to_string())?;
    let diags = xir::verify::verify_module(m);
    if !diags.is_empty() {
        return Err(format!("verifier after {name}:\n{}", xir::diag::render(&diags)));
    }
    if let Some(d) = decl.info.produced_from(dialect) {
        *dialect = d;
    }
    let diags = xir::dialect::check_module(m, xir_spec::spec().dialect(dialect).expect("known dialect"));
    if !diags.is_empty() {
        return Err(format!("dialect `{dialect}` after {name}:\n{}", xir::diag::render(&diags)));
    }
    Ok(out.changed)
}

/// Every pass of `OURS` after `prefix`, on random programs of both
/// generators (the hand-written one, and the spec-driven one on half the
/// cases); returns how many programs each pass changed.
fn differential_after(prefix: &[&str]) -> Vec<usize> {
    let mut changed = vec![0usize; OURS.len()];
    differential_with(prefix, xir_testgen::programs::program(), cases(), &mut changed);
    differential_with(prefix, xir_testgen::spec_gen::programs(), cases() / 2, &mut changed);
    changed
}

fn differential_with(
    prefix: &[&str],
    strategy: impl proptest::strategy::Strategy<Value = xir_testgen::programs::Program>,
    cases: u32,
    changed: &mut [usize],
) {
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let counts = std::cell::RefCell::new(changed);
    runner
        .run(&strategy, |p| {
            let run = |m: &xir::Module| {
                let k = m.find_function("main").ok_or("kernel @main disappeared")?;
                xir::interp::run_kernel(m, k, &p.inputs).map_err(|e| e.to_string())
            };
            let expected = run(&p.module).map_err(TestCaseError::fail)?;
            let mut base = p.module.clone();
            let mut d: &'static str = "xir.structured";
            for s in prefix {
                step(&mut base, s, &mut d).map_err(TestCaseError::fail)?;
            }
            for (k, pass) in OURS.iter().enumerate() {
                let mut m = base.clone();
                let mut dk = d;
                let input = xir::text::print_module(&m);
                let ch =
                    step(&mut m, pass, &mut dk).map_err(|e| TestCaseError::fail(format!("{e}\ninput:\n{input}")))?;
                counts.borrow_mut()[k] += ch as usize;
                let got = run(&m).map_err(|e| TestCaseError::fail(format!("after {pass}: {e}\ninput:\n{input}")))?;
                if let Some(why) = expected.first_mismatch(&got, xir::interp::same_value) {
                    return Err(TestCaseError::fail(format!(
                        "results differ after {pass} (prefix {prefix:?}): {why}\ninput:\n{input}\noutput:\n{}",
                        xir::text::print_module(&m)
                    )));
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

fn assert_all_fired(changed: &[usize], except: &[&str]) {
    for (pass, n) in OURS.iter().zip(changed) {
        if !except.contains(pass) {
            assert!(*n > 0, "{pass} never changed a program (counts {changed:?})");
        }
    }
}

#[test]
fn differential_on_structured_programs() {
    let changed = differential_after(&[]);
    eprintln!("changed per pass {OURS:?}: {changed:?}");
    assert_all_fired(&changed, &["scalarizer"]);
}

#[test]
fn differential_on_raw_ssa() {
    let changed = differential_after(RAW_SSA);
    eprintln!("changed per pass {OURS:?}: {changed:?}");
    assert_all_fired(&changed, &["scalarizer"]);
}

#[test]
fn differential_on_legalized_ir() {
    let changed = differential_after(LEGALIZE);
    eprintln!("changed per pass {OURS:?}: {changed:?}");
    assert_all_fired(&changed, &["scalarizer"]);
}

// ---- corpus -------------------------------------------------------------------

/// The corpus kernels (`tests/corpus/*.xir`) with their inputs.
fn corpus() -> Vec<(String, String, Inputs)> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).expect("corpus directory").flatten().map(|e| e.path()).collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "xir")) {
        let name = p.file_stem().expect("a file name").to_string_lossy().to_string();
        let text = std::fs::read_to_string(&p).expect("readable");
        let inputs =
            std::fs::read_to_string(dir.join(format!("{name}.inputs.json"))).map(|j| inputs(&j)).unwrap_or_default();
        out.push((name, text, inputs));
    }
    assert!(out.len() >= 10, "corpus found");
    out
}

#[test]
fn corpus_results_are_kept_structured_and_legalized() {
    let mut fired = vec![0usize; OURS.len()];
    for (name, text, inp) in corpus() {
        let base = parse(&text);
        let expected = interp(&base, &inp);
        let mut d: &'static str = "xir.structured";
        let mut legal = base.clone();
        for s in LEGALIZE {
            step(&mut legal, s, &mut d).unwrap_or_else(|e| panic!("{s} on {name}: {e}"));
        }
        for (start, dialect) in [(&base, "xir.structured"), (&legal, d)] {
            for (k, pass) in OURS.iter().enumerate() {
                let mut m = start.clone();
                let mut dk = dialect;
                let ch = step(&mut m, pass, &mut dk).unwrap_or_else(|e| panic!("{pass} on {name}: {e}"));
                fired[k] += ch as usize;
                assert_eq!(interp(&m, &inp), expected, "{pass} changed the results of {name} ({dialect})");
            }
        }
    }
    eprintln!("corpus runs changed per pass {OURS:?}: {fired:?}");
    // The corpus has no compare decided by a dominating branch and no math
    // call with special arguments: `cvp` and `simplify_libcalls` act on the
    // random programs above instead.
    for (pass, n) in OURS.iter().zip(&fired) {
        if !["cvp", "simplify_libcalls"].contains(pass) {
            assert!(*n > 0, "{pass} acts on no corpus kernel: {fired:?}");
        }
    }
}
