//! The loop passes (`licm`, `loop_rotation`, `indvar_simplify`) beyond
//! their fixtures (which are file tests, `tests/filetests/licm/`,
//! `loop_rotation/`, `indvar_simplify/`): the dialect contract (rotation is
//! refused in a structured stretch at load time), the corpus through raw SSA
//! with all three, and licm's effect on executed instructions.

mod opt_support;

use opt_support::*;
use xir::interp::Inputs;
use xir::Module;

#[test]
fn rotation_is_refused_in_a_structured_stretch_at_load_time() {
    let reg = registry();
    let loader = xir::pipeline::Loader::new(&reg);
    let text = r#"Pipeline(name: "p", input: "xir.structured", output: "xir", steps: [Pass("loop_rotation")])"#;
    let err = loader.load_text("p.ron".into(), None, text).err().expect("rejected");
    let msg = err.to_string();
    assert!(msg.contains("`loop_rotation` needs `xir.raw`"), "{msg}");
    // After destructure_cfg it loads.
    let ok = r#"Pipeline(name: "p", input: "xir.structured", output: "xir.raw",
        steps: [Pass("destructure_cfg"), Pass("loop_rotation"), Pass("licm"), Pass("indvar_simplify")])"#;
    assert!(loader.load_text("p.ron".into(), None, ok).is_ok());
}

// ---- all three on the corpus --------------------------------------------

fn corpus() -> Vec<(String, String, Inputs)> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir).expect("corpus").flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.extension().and_then(|e| e.to_str()) != Some("xir") {
            continue;
        }
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&p).unwrap();
        let inputs = std::fs::read_to_string(dir.join(format!("{name}.inputs.json")))
            .map(|j| Inputs::from_json(&j).expect("inputs parse"))
            .unwrap_or_default();
        out.push((name, text, inputs));
    }
    out
}

#[test]
fn loop_passes_keep_results_on_the_corpus_in_raw_ssa() {
    let mut fired = std::collections::BTreeMap::<&str, usize>::new();
    for (name, text, inp) in corpus() {
        let mut m = parse(&text);
        let before = interp(&m, &inp);
        for p in ["promote_ref_arg", "destructure_cfg", "mem2reg"] {
            run_pass(&mut m, p, None, false);
        }
        for (p, key) in [("loop_rotation", "rotated"), ("licm", "hoisted"), ("indvar_simplify", "exit_uses_rewritten")]
        {
            let out = run_pass(&mut m, p, None, false);
            *fired.entry(p).or_default() += stat(&out, key).parse::<usize>().unwrap();
            let d = xir_spec::spec().dialect("xir.raw").unwrap();
            let diags = xir::dialect::check_module(&m, d);
            assert!(diags.is_empty(), "{p} on {name}:\n{}", xir::diag::render(&diags));
            assert_eq!(interp(&m, &inp), before, "{p} changed the results of {name}");
        }
    }
    eprintln!("corpus: {fired:?}");
    assert!(fired["loop_rotation"] > 0 && fired["licm"] > 0, "the passes fire on the corpus: {fired:?}");
}

/// Where the passes go in a real pipeline: `loop_rotation` (with `licm`)
/// in the raw stretch of the SPIR-V legalization, `licm` and
/// `indvar_simplify` again on the legalized SSA. The pipeline loads (every
/// dialect transition checks) and, on the corpus, keeps every result with
/// verification after each step.
#[test]
fn loop_passes_inside_the_legalization_keep_results_on_the_corpus() {
    use xir::pipeline::{Loader, PassManager, RunOptions};
    let text = r#"Pipeline(
        name: "legalize-loops",
        input: "xir.structured",
        output: "xir.restructured.audited",
        steps: [
            Pass("promote_ref_arg"),
            Pass("destructure_cfg"),
            Pass("loop_rotation"),
            Pass("licm"),
            Pass("reg2mem"),
            Pass("restructure_cfg"),
            Pass("canonicalize_one_shot_loops"),
            Pass("clear_inactive_block_payloads"),
            Pass("mem2reg"),
            Pass("audit_reg2mem_spills"),
            Pass("fix_self_referential"),
            Pass("licm"),
            Pass("indvar_simplify"),
            Pass("dce"),
        ],
    )"#;
    let reg = registry();
    let p = Loader::new(&reg).load_text("legalize-loops.ron".into(), None, text).unwrap_or_else(|e| panic!("{e}"));
    let mut fired = std::collections::BTreeMap::<String, usize>::new();
    for (name, src, inp) in corpus() {
        let mut m = parse(&src);
        let before = interp(&m, &inp);
        let opts = RunOptions { verify_each: true, time_passes: true, ..RunOptions::default() };
        let mut log = Vec::new();
        let report = PassManager::new(&p, opts).run(&mut m, &mut log).unwrap_or_else(|e| panic!("{name}: {e}"));
        let d = xir_spec::spec().dialect("xir.restructured.audited").unwrap();
        let diags = xir::dialect::check_module(&m, d);
        assert!(diags.is_empty(), "{name}:\n{}", xir::diag::render(&diags));
        assert_eq!(interp(&m, &inp), before, "{name}");
        for row in &report.timings {
            for (k, v) in &row.stats {
                if let Ok(n) = v.parse::<usize>() {
                    *fired.entry(format!("{}.{k}", row.name)).or_default() += n;
                }
            }
        }
    }
    eprintln!("legalization with loop passes, corpus totals: {fired:?}");
    assert!(fired["loop_rotation.rotated"] > 0, "{fired:?}");
    assert!(fired["licm.hoisted"] > 0, "{fired:?}");
}

/// Instructions the run executes, all threads together: the smallest
/// interpreter step limit (global to a run) under which the kernel still
/// completes.
fn run_steps(m: &Module, inp: &Inputs) -> u64 {
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
    let ok = |steps: u64| {
        let opts = xir::interp::Options { max_steps: steps, ..xir::interp::Options::default() };
        xir::interp::run_kernel_with(m, k, inp, &opts).is_ok()
    };
    let (mut lo, mut hi) = (0u64, xir::interp::Options::default().max_steps);
    assert!(ok(hi), "kernel completes");
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Check that hoisting pays off at run time: on the legalized corpus, the
/// runs execute fewer instructions in total after `licm` (each
/// kernel is listed with its counts before and after).
#[test]
fn licm_reduces_executed_instructions_on_the_corpus() {
    let (mut before_total, mut after_total) = (0, 0);
    for (name, src, inp) in corpus() {
        let mut m = parse(&src);
        for &p in xir_testgen::passes::LEGALIZE {
            run_pass(&mut m, p, None, false);
        }
        let before = run_steps(&m, &inp);
        let expected = interp(&m, &inp);
        let out = run_pass(&mut m, "licm", None, false);
        assert_eq!(interp(&m, &inp), expected, "{name}");
        let after = run_steps(&m, &inp);
        eprintln!("{name:<22} {before:>8} {after:>8}  hoisted {}", stat(&out, "hoisted"));
        before_total += before;
        after_total += after;
    }
    eprintln!("total {before_total} -> {after_total}");
    assert!(after_total < before_total, "{before_total} -> {after_total}");
}

#[path = "loop_opt/random.rs"]
mod random;
