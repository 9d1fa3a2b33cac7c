//! Property: the integer intervals of `analysis::int_range` contain every
//! value the reference interpreter computes. Random kernels
//! (`xir_testgen::programs` and `xir_testgen::spec_gen`) are brought to SSA
//! (raw CFG with Phis, and the legalized structured form the late `cvp`
//! of `spirv-legalize` reads), every instruction with an interval
//! narrower than its type gets `assert lo <= v && v <= hi` at the end of
//! its block, and the kernel must run to the same results with no
//! assertion failing.
//!
//! Cases: 256, or `XIR_PROPTEST_CASES`.

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use xir::analysis::{Cfg, DomTree, IntRanges};
use xir::interp::run_kernel;
use xir::ir::{InstData, Opcode, Payload, TypeTable};
use xir::pass::{AnalysisCache, PassContext, PassRegistry};
use xir::{Module, Value};
use xir_testgen::passes::{LEGALIZE, RAW_SSA};
use xir_testgen::programs::{program, Program};
use xir_testgen::spec_gen;

fn cases() -> u32 {
    std::env::var("XIR_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256)
}

fn run_steps(m: &mut Module, steps: &[&str]) -> Result<(), String> {
    let mut reg = PassRegistry::new();
    xir_passes::register_all(&mut reg);
    for name in steps {
        let decl = reg.get(name).ok_or(format!("`{name}` is not registered"))?;
        let pass = (decl.create)(None).map_err(|e| e.to_string())?;
        let mut cache = AnalysisCache::default();
        let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
        pass.run(m, &mut cx).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

/// Append a range assertion for every narrowed value; how many.
fn instrument(m: &mut Module) -> usize {
    let mut n = 0;
    for fid in m.func_ids().collect::<Vec<_>>() {
        let f = m.func(fid);
        if f.body().is_none() {
            continue;
        }
        let cfg = Cfg::compute(f);
        let dom = DomTree::from_cfg(&cfg);
        let ranges = IntRanges::compute(m, f, &cfg, &dom);
        let mut checks = Vec::new();
        for &b in &cfg.rpo {
            if f.terminator(b).is_none() {
                continue;
            }
            for &i in f.block(b).insts() {
                let ty = f.inst(i).ty;
                let Some(whole) = xir::analysis::int_range::type_bounds(m, ty) else { continue };
                let r = ranges.get(m, f, Value::Inst(i)).expect("an integer value");
                if r != whole {
                    checks.push((b, i, ty, r));
                }
            }
        }
        for (b, i, ty, (lo, hi)) in checks {
            let (lo, hi) = (m.const_int(ty, lo), m.const_int(ty, hi));
            let f = m.func_mut(fid);
            let op = |opcode, ty, ops: &[Value]| {
                let mut d = InstData::new(opcode, ty);
                d.operands.extend_from_slice(ops);
                d
            };
            let ge = f.insert_before_terminator(b, op(Opcode::Ge, TypeTable::BOOL, &[Value::Inst(i), lo]));
            let le = f.insert_before_terminator(b, op(Opcode::Le, TypeTable::BOOL, &[Value::Inst(i), hi]));
            let both =
                f.insert_before_terminator(b, op(Opcode::BitAnd, TypeTable::BOOL, &[Value::Inst(ge), Value::Inst(le)]));
            let mut a = op(Opcode::Assert, TypeTable::VOID, &[Value::Inst(both)]);
            a.payload = Payload::Text(format!("range of {i:?}"));
            f.insert_before_terminator(b, a);
            n += 1;
        }
    }
    n
}

fn check(strategy: impl Strategy<Value = Program>, cases: u32, steps: &[&str], what: &str) {
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let narrowed = std::cell::Cell::new(0usize);
    let result = runner.run(&strategy, |p| {
        let mut m = p.module.clone();
        run_steps(&mut m, steps).map_err(TestCaseError::fail)?;
        let k = m.find_function("main").ok_or(TestCaseError::fail("no @main"))?;
        let expected = run_kernel(&m, k, &p.inputs).map_err(|e| TestCaseError::fail(e.to_string()))?;
        narrowed.set(narrowed.get() + instrument(&mut m));
        let diags = xir::verify::verify_module(&m);
        if !diags.is_empty() {
            return Err(TestCaseError::fail(format!("instrumented module: {}", xir::diag::render(&diags))));
        }
        let got = run_kernel(&m, k, &p.inputs)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{}", xir::text::print_module(&m))))?;
        if let Some(why) = expected.first_mismatch(&got, xir::interp::same_value) {
            return Err(TestCaseError::fail(format!("results differ: {why}")));
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{what}: {e}");
    }
    // The property says something: some intervals were narrower than the type.
    assert!(narrowed.get() > 0, "{what}: no interval narrower than its type in {cases} programs");
}

#[test]
fn intervals_contain_the_interpreters_values_on_raw_ssa() {
    check(program(), cases(), RAW_SSA, "programs, raw SSA");
    check(spec_gen::programs(), cases() / 2, RAW_SSA, "spec_gen, raw SSA");
}

#[test]
fn intervals_contain_the_interpreters_values_when_legalized() {
    check(program(), cases(), LEGALIZE, "programs, legalized");
    check(spec_gen::programs(), cases() / 2, LEGALIZE, "spec_gen, legalized");
}
