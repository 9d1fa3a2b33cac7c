//! Shared helpers of the control-flow pass tests: parse XIR text, run a
//! pass, check the verifier and a dialect, and compare interpreter runs
//! before and after.

#![allow(dead_code)]

use xir::interp::{run_kernel, Inputs, Outputs};
use xir::pass::{AnalysisCache, PassContext, PassDecl, PassError, PassOutcome};
use xir::text::{parse_module, print_module};
use xir::Module;

pub fn parse(src: &str) -> Module {
    match parse_module(src, "test.xir") {
        Ok(m) => m,
        Err(d) => panic!("parse failed:\n{}", xir::diag::render(&d)),
    }
}

pub fn run_pass(m: &mut Module, decl: PassDecl) -> Result<PassOutcome, PassError> {
    let pass = (decl.create)(None).expect("default options");
    let mut cache = AnalysisCache::default();
    let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
    pass.run(m, &mut cx)
}

/// Panic (showing the IR) unless `m` verifies and lies in `dialect`.
pub fn check(m: &Module, dialect: &str) {
    let mut diags = xir::verify::verify_module(m);
    let d = xir_spec::spec().dialect(dialect).expect("known dialect");
    diags.extend(xir::dialect::check_module(m, d));
    if !diags.is_empty() {
        panic!("not in `{dialect}`:\n{}\n{}", xir::diag::render(&diags), print_module(m));
    }
}

pub fn run(m: &Module, kernel: &str, inputs: &str) -> Outputs {
    let k = m.find_function(kernel).unwrap_or_else(|| panic!("no kernel @{kernel}"));
    let inputs = Inputs::from_json(inputs).expect("inputs parse");
    run_kernel(m, k, &inputs).unwrap_or_else(|e| panic!("interpreter: {e}\n{}", print_module(m)))
}

/// Run `passes` in order on `src`, checking `dialects[i]` after pass i and
/// equal interpreter outputs for `kernel` before and after all of them.
/// Returns the final module.
pub fn check_passes(src: &str, passes: &[PassDecl], dialects: &[&str], kernel: &str, inputs: &str) -> Module {
    let mut m = parse(src);
    let before = run(&m, kernel, inputs);
    for (p, d) in passes.iter().zip(dialects) {
        let name = p.info.name;
        if let Err(e) = run_pass(&mut m, p.clone()) {
            panic!("{name} failed: {e}\n{}\n{}", xir::diag::render(&e.diagnostics), print_module(&m));
        }
        check(&m, d);
        // The printed form must parse back (the tests read printed IR).
        let again = parse(&print_module(&m));
        assert_eq!(print_module(&again), print_module(&m), "round trip after {name}");
    }
    let after = run(&m, kernel, inputs);
    if let Some(mm) = before.first_mismatch(&after, |_, _| false) {
        panic!(
            "outputs differ after {:?}: {mm}\n{}",
            passes.iter().map(|p| p.info.name).collect::<Vec<_>>(),
            print_module(&m)
        );
    }
    m
}

/// Count the instructions with this opcode spelling in the printed module.
pub fn count_op(m: &Module, op: &str) -> usize {
    m.functions
        .iter()
        .flat_map(|f| f.all_insts().map(move |(_, i)| f.inst(i).opcode))
        .filter(|o| o.name() == op)
        .count()
}

/// A corpus kernel: its text, inputs and the kernel's name.
#[derive(Clone)]
pub struct CorpusCase {
    pub name: String,
    pub src: String,
    pub inputs: String,
    pub kernel: String,
}

/// Every kernel of `tests/corpus`, sorted by file name.
pub fn corpus() -> Vec<CorpusCase> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".xir").map(str::to_string))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "empty corpus");
    names
        .into_iter()
        .map(|name| {
            let src = std::fs::read_to_string(dir.join(format!("{name}.xir"))).expect("corpus kernel");
            let inputs = std::fs::read_to_string(dir.join(format!("{name}.inputs.json"))).expect("corpus inputs");
            let kernel = parse(&src).functions.iter().find(|f| f.is_kernel()).expect("a kernel").name.clone();
            CorpusCase { name, src, inputs, kernel }
        })
        .collect()
}
