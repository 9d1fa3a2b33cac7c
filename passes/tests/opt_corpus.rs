//! Differential test of the optimization passes on the corpus
//! (`tests/corpus/*.xir` with their inputs): each pass alone, the `O1` and
//! `O2` pipelines on the structured input, and O2 around the SPIR-V
//! legalization (`opt-spirv` less the backend's handoff check) must leave IR that the verifier and the dialect
//! check accept and that the interpreter runs to the same outputs.

mod opt_support;

use std::path::PathBuf;

use opt_support::*;
use xir::interp::Inputs;
use xir::pipeline::{Loader, PassManager, RunOptions};
use xir::Module;

fn corpus() -> Vec<(String, String, Inputs)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir).expect("corpus directory").flatten().map(|e| e.path()).collect();
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
    assert!(out.len() >= 10, "corpus found");
    out
}

fn check_dialect(m: &Module, dialect: &str, what: &str) {
    let d = xir_spec::spec().dialect(dialect).expect("dialect exists");
    let diags = xir::dialect::check_module(m, d);
    assert!(diags.is_empty(), "{what}: not {dialect}:\n{}", xir::diag::render(&diags));
}

#[test]
fn each_opt_pass_keeps_results_on_the_corpus() {
    for (name, text, inputs) in corpus() {
        let base = parse(&text);
        let before = interp(&base, &inputs);
        for pass in ["const_fold", "sccp", "early_cse", "gvn", "algebraic_simplify", "dead_arg_elim", "div_rem_pairs"] {
            let mut m = base.clone();
            run_pass(&mut m, pass, None, false);
            check_dialect(&m, "xir.structured", &format!("{pass} on {name}"));
            assert_eq!(interp(&m, &inputs), before, "{pass} changed the results of {name}");
        }
    }
}

/// `opt-spirv` without the backend's handoff pass (this crate does not
/// depend on the backend): O2 around the legalization.
const OPT_LEGALIZE: &str = r#"Pipeline(
    name: "opt-legalize",
    input: "xir.structured",
    output: "xir.restructured.audited",
    steps: [
        OptGroup(min_level: 2, steps: [Include("O2")]),
        Include("spirv-legalize"),
        OptGroup(min_level: 2, steps: [Include("O2")]),
    ],
)"#;

fn run_pipeline(m: &mut Module, pipeline: &str, opt_level: u8) -> Result<(), String> {
    let mut reg = registry();
    // Bound by the SPIR-V backend; unbound here, it does nothing.
    reg.declare_hook("callable_specialization", "callable policy of the target");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pipelines");
    let loader = Loader::new(&reg).with_search_dir(&dir);
    let p = if pipeline == "opt-legalize" {
        loader.load_text("opt-legalize.ron".into(), Some(&dir.join("opt-legalize.ron")), OPT_LEGALIZE)
    } else {
        loader.load(pipeline)
    };
    let p = p.unwrap_or_else(|e| panic!("{pipeline} loads: {e}"));
    let opts = RunOptions { opt_level, verify_each: true, ..RunOptions::default() };
    let mut log = Vec::new();
    PassManager::new(&p, opts).run(m, &mut log).map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn o1_o2_and_opt_spirv_keep_results_on_the_corpus() {
    let mut shrunk = 0;
    for (name, text, inputs) in corpus() {
        let base = parse(&text);
        let before = interp(&base, &inputs);
        for (pipeline, level, dialect) in
            [("O1", 0, "xir.structured"), ("O2", 0, "xir.structured"), ("opt-legalize", 2, "xir.restructured.audited")]
        {
            let mut m = base.clone();
            run_pipeline(&mut m, pipeline, level).unwrap_or_else(|e| panic!("{pipeline} on {name}: {e}"));
            check_dialect(&m, dialect, &format!("{pipeline} on {name}"));
            assert_eq!(interp(&m, &inputs), before, "{pipeline} changed the results of {name}");
            if pipeline == "O2" && m.inst_count() < base.inst_count() {
                shrunk += 1;
            }
        }
    }
    assert!(shrunk > 0, "O2 removed instructions from no corpus kernel");
}
