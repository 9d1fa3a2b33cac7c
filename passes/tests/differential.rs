//! Differential tests of every pass: random structured kernels
//! (`xir_testgen::programs`, hand-written, and `xir_testgen::spec_gen`,
//! derived from the spec's opcodes) are run by the reference interpreter
//! before and after the pass; the buffers must be identical, and after every step the
//! module must pass the verifier and lie in the dialect the step declares.
//!
//! Passes are taken from the registry by name. A pass consuming a later
//! dialect of the legalization spine gets the prefix of `LEGALIZE` (`xir_testgen::passes`) it needs
//! (found from the dialect declarations, not hard-coded). Passes that keep
//! their dialect are also checked on raw CFG and on fully legalized IR. A
//! registered pass missing from the list below is still checked by
//! `registered_passes_without_own_test_are_checked`.
//!
//! Cases per property: 256, or `XIR_PROPTEST_CASES`.

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use xir::interp::{run_kernel, Outputs};
use xir::pass::{AnalysisCache, PassContext, PassRegistry};
use xir::Module;
use xir_testgen::passes::LEGALIZE;
use xir_testgen::programs::{program, Program};
use xir_testgen::spec_gen;

fn registry() -> PassRegistry {
    let mut reg = PassRegistry::new();
    xir_passes::register_all(&mut reg);
    reg
}

fn cases() -> u32 {
    std::env::var("XIR_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256)
}

fn refines(a: &str, b: &str) -> bool {
    let s = xir_spec::spec();
    match (s.dialect(a), s.dialect(b)) {
        (Some(a), Some(b)) => a.refines(b),
        _ => false,
    }
}

/// Where a pass is exercised.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Stage {
    /// On the generator's structured IR, or after the shortest prefix of
    /// `LEGALIZE` reaching a dialect the pass consumes.
    Natural,
    /// After `destructure_cfg` (raw CFG).
    Raw,
    /// After the whole `LEGALIZE`.
    Legalized,
    /// After `destructure_cfg` and `mem2reg`: raw CFG with Phis.
    RawSsa,
}

/// The steps to run before `pass`, or why it cannot be reached yet.
fn prefix(reg: &PassRegistry, pass: &str, stage: Stage) -> Result<Vec<&'static str>, String> {
    let decl = reg.get(pass).ok_or_else(|| format!("`{pass}` is not registered"))?;
    if stage == Stage::RawSsa {
        let steps = vec!["promote_ref_arg", "destructure_cfg", "mem2reg"];
        if let Some(missing) = steps.iter().find(|s| reg.get(s).is_none()) {
            return Err(format!("prefix step `{missing}` is not registered yet"));
        }
        return Ok(steps);
    }
    if stage == Stage::Natural {
        if let Some(pos) = LEGALIZE.iter().position(|&s| s == pass) {
            // A spine pass runs where the pipeline runs it.
            return match LEGALIZE[..pos].iter().find(|s| reg.get(s).is_none()) {
                Some(missing) => Err(format!("prefix step `{missing}` is not registered yet")),
                None => Ok(LEGALIZE[..pos].to_vec()),
            };
        }
    }
    let mut cur: &'static str = "xir.structured";
    let mut steps = Vec::new();
    for &step in LEGALIZE {
        let consumable = decl.info.consumes.iter().any(|c| refines(cur, c));
        let done = match stage {
            Stage::Natural => consumable,
            Stage::Raw => consumable && steps.contains(&"destructure_cfg"),
            Stage::Legalized => false,
            Stage::RawSsa => unreachable!("handled above"),
        };
        if done || (step == pass && stage == Stage::Natural) {
            break;
        }
        let s = reg.get(step).ok_or_else(|| format!("prefix step `{step}` is not registered yet"))?;
        cur = s.info.produced_from(cur).unwrap_or(cur);
        steps.push(step);
    }
    if !decl.info.consumes.iter().any(|c| refines(cur, c)) {
        return Err(format!("`{pass}` consumes {:?}; the chain reaches `{cur}`", decl.info.consumes));
    }
    Ok(steps)
}

fn fail(msg: String) -> TestCaseError {
    TestCaseError::fail(msg)
}

/// Run one pass, then the verifier and the dialect check.
fn apply(reg: &PassRegistry, m: &mut Module, name: &str, dialect: &mut &'static str) -> Result<(), TestCaseError> {
    let decl = reg.get(name).ok_or_else(|| fail(format!("`{name}` is not registered")))?;
    let pass = (decl.create)(None).map_err(|e| fail(format!("{name}: options: {e}")))?;
    let before = xir::text::print_module(m);
    let mut cache = AnalysisCache::default();
    let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
    pass.run(m, &mut cx)
        .map_err(|e| fail(format!("{name} failed: {e}\n{}\ninput:\n{before}", xir::diag::render(&e.diagnostics))))?;
    let diags = xir::verify::verify_module(m);
    if !diags.is_empty() {
        return Err(fail(format!(
            "verifier after {name}:\n{}\ninput:\n{before}\noutput:\n{}",
            xir::diag::render(&diags),
            xir::text::print_module(m)
        )));
    }
    if let Some(d) = decl.info.produced_from(dialect) {
        *dialect = d;
    }
    let d = xir_spec::spec().dialect(dialect).ok_or_else(|| fail(format!("unknown dialect {dialect}")))?;
    let diags = xir::dialect::check_module(m, d);
    if !diags.is_empty() {
        return Err(fail(format!(
            "dialect `{dialect}` after {name}:\n{}\ninput:\n{before}\noutput:\n{}",
            xir::diag::render(&diags),
            xir::text::print_module(m)
        )));
    }
    Ok(())
}

fn outputs(m: &Module, p: &Program) -> Result<Outputs, String> {
    let k = m.find_function("main").ok_or("kernel @main disappeared")?;
    run_kernel(m, k, &p.inputs).map_err(|e| e.to_string())
}

/// Property: every step of `steps` (all but the last form the prefix)
/// keeps the program valid and its results identical (any NaN equals any
/// NaN: a pass may change a NaN's payload). Run on the hand-written
/// generator's programs (calls, `switch`, `break` / `continue`, early
/// returns) and on the spec-driven generator's (every pure opcode the spec
/// allows in `xir.structured`, guarded), three quarters and one half of the
/// cases.
fn check_steps(steps: &[&str]) {
    check_steps_with(steps, program(), cases() - cases() / 4, "programs");
    check_steps_with(steps, spec_gen::programs(), cases() / 2, "spec_gen");
}

fn check_steps_with(steps: &[&str], strategy: impl Strategy<Value = Program>, cases: u32, generator: &str) {
    let reg = registry();
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let result = runner.run(&strategy, |p| {
        let mut d: &'static str = "xir.structured";
        let mut m = p.module.clone();
        let check = xir::dialect::check_module(&m, xir_spec::spec().dialect(d).expect("structured dialect"));
        if !check.is_empty() {
            return Err(fail(format!("generator produced invalid IR:\n{}", xir::diag::render(&check))));
        }
        let expected = outputs(&m, &p).map_err(|e| fail(format!("generated program fails to run: {e}")))?;
        for step in steps {
            apply(&reg, &mut m, step, &mut d)?;
            // Every step keeps the results (the last one is the pass under test).
            let got =
                outputs(&m, &p).map_err(|e| fail(format!("after {step}: {e}\n{}", xir::text::print_module(&m))))?;
            if let Some(why) = expected.first_mismatch(&got, xir::interp::same_value) {
                return Err(fail(format!(
                    "results differ after {step} (steps {steps:?}): {why}\n{}",
                    xir::text::print_module(&m)
                )));
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{steps:?} on {generator}: {e}");
    }
}

fn check_pass(pass: &str, stage: Stage) {
    let reg = registry();
    if reg.get(pass).is_none() {
        eprintln!("skipped: `{pass}` is not registered");
        return;
    }
    match prefix(&reg, pass, stage) {
        Ok(mut steps) => {
            steps.push(Box::leak(pass.to_string().into_boxed_str()));
            check_steps(&steps);
        }
        Err(why) => eprintln!("skipped: {pass} at {stage:?}: {why}"),
    }
}

macro_rules! differential {
    ($($test:ident => $pass:literal @ $stage:ident;)*) => {
        const COVERED: &[&str] = &[$($pass),*];
        $(
            #[test]
            fn $test() {
                check_pass($pass, Stage::$stage);
            }
        )*
    };
}

differential! {
    lower_break_continue => "lower_break_continue" @ Natural;
    early_return_elimination => "early_return_elimination" @ Natural;
    lower_switch => "lower_switch" @ Natural;
    destructure_cfg => "destructure_cfg" @ Natural;
    restructure_cfg => "restructure_cfg" @ Natural;
    canonicalize_one_shot_loops => "canonicalize_one_shot_loops" @ Natural;
    clear_inactive_block_payloads => "clear_inactive_block_payloads" @ Natural;
    simplify_cfg => "simplify_cfg" @ Natural;
    simplify_cfg_raw => "simplify_cfg" @ Raw;
    reg2mem => "reg2mem" @ Natural;
    mem2reg => "mem2reg" @ Natural;
    mem2reg_raw => "mem2reg" @ Raw;
    audit_reg2mem_spills => "audit_reg2mem_spills" @ Natural;
    fix_self_referential => "fix_self_referential" @ Natural;
    phi_cleanup => "phi_cleanup" @ Natural;
    phi_cleanup_legalized => "phi_cleanup" @ Legalized;
    dce => "dce" @ Natural;
    dce_raw => "dce" @ Raw;
    dce_legalized => "dce" @ Legalized;
    promote_ref_arg => "promote_ref_arg" @ Natural;
    inline => "inline" @ Natural;
    inline_raw_ssa => "inline" @ RawSsa;
    reg2mem_raw_ssa => "reg2mem" @ RawSsa;
    dce_raw_ssa => "dce" @ RawSsa;
    phi_cleanup_raw_ssa => "phi_cleanup" @ RawSsa;
    simplify_cfg_raw_ssa => "simplify_cfg" @ RawSsa;
    unused_callable_removal => "unused_callable_removal" @ Natural;
    licm => "licm" @ Natural;
    licm_raw_ssa => "licm" @ RawSsa;
    licm_legalized => "licm" @ Legalized;
    loop_rotation => "loop_rotation" @ Natural;
    loop_rotation_raw_ssa => "loop_rotation" @ RawSsa;
    indvar_simplify => "indvar_simplify" @ Natural;
    indvar_simplify_raw_ssa => "indvar_simplify" @ RawSsa;
    indvar_simplify_legalized => "indvar_simplify" @ Legalized;
    sroa => "sroa" @ Natural;
    local_load_elimination => "local_load_elimination" @ Natural;
    local_load_elimination_raw => "local_load_elimination" @ Raw;
    local_load_elimination_legalized => "local_load_elimination" @ Legalized;
    local_store_forward => "local_store_forward" @ Natural;
    local_store_forward_raw => "local_store_forward" @ Raw;
    local_store_forward_legalized => "local_store_forward" @ Legalized;
    dead_store_elimination => "dead_store_elimination" @ Natural;
    dead_store_elimination_raw => "dead_store_elimination" @ Raw;
    dead_store_elimination_legalized => "dead_store_elimination" @ Legalized;
    trace_gep => "trace_gep" @ Natural;
    transpose_gep => "transpose_gep" @ Natural;
    transpose_gep_raw => "transpose_gep" @ Raw;
    local_load_elimination_raw_ssa => "local_load_elimination" @ RawSsa;
    local_store_forward_raw_ssa => "local_store_forward" @ RawSsa;
    dead_store_elimination_raw_ssa => "dead_store_elimination" @ RawSsa;
    cvp => "cvp" @ Natural;
    cvp_raw_ssa => "cvp" @ RawSsa;
    cvp_legalized => "cvp" @ Legalized;
}

/// New passes are exercised even before someone lists them above.
#[test]
fn registered_passes_without_own_test_are_checked() {
    let reg = registry();
    for name in reg.names() {
        if !COVERED.contains(&name) {
            check_pass(name, Stage::Natural);
        }
    }
}

/// The legalization boundary as one property: destructure -> reg2mem ->
/// restructure -> mem2reg -> audit -> fix, checked after the last step
/// (every step is verified and dialect-checked on the way).
#[test]
fn legalization_chain() {
    let reg = registry();
    let chain =
        ["destructure_cfg", "reg2mem", "restructure_cfg", "mem2reg", "audit_reg2mem_spills", "fix_self_referential"];
    if let Some(missing) = chain.iter().find(|p| reg.get(p).is_none()) {
        eprintln!("skipped: `{missing}` is not registered yet");
        return;
    }
    check_steps(&chain);
}

/// SSA out and back in: Phis made by mem2reg on raw CFG go through reg2mem's
/// Phi path, restructuring, and SSA recovery again.
#[test]
fn ssa_round_trip_chain() {
    let reg = registry();
    let chain = [
        "destructure_cfg",
        "mem2reg",
        "reg2mem",
        "restructure_cfg",
        "mem2reg",
        "audit_reg2mem_spills",
        "fix_self_referential",
    ];
    if let Some(missing) = chain.iter().find(|p| reg.get(p).is_none()) {
        eprintln!("skipped: `{missing}` is not registered yet");
        return;
    }
    check_steps(&chain);
}

/// The generator itself: programs are valid structured IR and run.
#[test]
fn generated_programs_are_valid_and_run() {
    let mut runner = TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    runner
        .run(&program(), |p| {
            let diags = xir::verify::verify_module(&p.module);
            if !diags.is_empty() {
                return Err(fail(xir::diag::render(&diags)));
            }
            outputs(&p.module, &p).map(|_| ()).map_err(fail)
        })
        .unwrap();
}

/// The generator covers what the differential tests rely on: over the
/// cases of one run, each construct shows up in a fair share of programs.
#[test]
fn generated_programs_cover_the_constructs() {
    use proptest::strategy::{Strategy, ValueTree};
    use xir::Opcode::*;
    let wanted = [Call, Loop, SimpleLoop, Switch, If, Break, Continue, BufferRead, BufferWrite, Div, Mod];
    let mut seen = vec![0usize; wanted.len()];
    let mut early_returns = 0;
    let mut runner = TestRunner::deterministic();
    let n = 256;
    for _ in 0..n {
        let p = program().new_tree(&mut runner).expect("a program").current();
        let k = p.module.func(p.kernel);
        let returns = k.all_insts().filter(|&(_, i)| k.inst(i).opcode == Return).count();
        if returns > 1 {
            early_returns += 1;
        }
        for (w, c) in wanted.iter().zip(seen.iter_mut()) {
            if p.module.functions.iter().any(|f| f.all_insts().any(|(_, i)| f.inst(i).opcode == *w)) {
                *c += 1;
            }
        }
    }
    for (w, c) in wanted.iter().zip(&seen) {
        assert!(*c >= n / 20, "`{w}` appears in only {c} of {n} programs");
    }
    assert!(early_returns >= n / 20, "early returns in only {early_returns} of {n} programs");
}
