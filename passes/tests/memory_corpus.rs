//! The kernel corpus (`tests/corpus/*.xir` with `*.inputs.json`) through the
//! legalization spine, with the optional memory passes (inline, DCE, Phi
//! cleanup, unused-callable removal) spliced in: after every step the module
//! verifies, lies in the declared dialect, and the interpreter gives the
//! same outputs as the original kernel. The corpus covers what the random
//! generator does not: GEPs into aggregates, shared memory and barriers,
//! atomics, vectors and matrices, byte buffers.

use std::path::PathBuf;

use xir::interp::{run_kernel, Inputs, Outputs};
use xir::pass::{AnalysisCache, PassContext, PassRegistry};
use xir::Module;

/// The legalization spine (`xir_testgen::passes::LEGALIZE`) with inlining
/// after the CFG is destructured and the cleanups after it.
fn spine() -> Vec<&'static str> {
    let (to_raw, rest) = xir_testgen::passes::LEGALIZE.split_at(2);
    [to_raw, &["inline", "dce"], rest, &["phi_cleanup", "dce", "unused_callable_removal"]].concat()
}

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
    out
}

fn kernels(m: &Module) -> Vec<String> {
    m.functions.iter().filter(|f| f.is_kernel()).map(|f| f.name.clone()).collect()
}

fn run_all(m: &Module, inputs: &Inputs) -> Vec<(String, Result<Outputs, String>)> {
    kernels(m)
        .into_iter()
        .map(|k| {
            let id = m.find_function(&k).expect("kernel");
            let r = run_kernel(m, id, inputs).map_err(|e| e.to_string());
            (k, r)
        })
        .collect()
}

#[test]
fn corpus_through_the_spine_keeps_results() {
    let mut reg = PassRegistry::new();
    xir_passes::register_all(&mut reg);
    let steps: Vec<&str> = spine().into_iter().filter(|s| reg.get(s).is_some()).collect();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, text, inputs) in corpus() {
        let mut m = xir::text::parse_module(&text, &name).expect("corpus parses");
        let expected = run_all(&m, &inputs);
        if let Some((k, Err(e))) = expected.iter().find(|r| r.1.is_err()) {
            failures.push(format!("{name}: @{k} fails before any pass: {e}"));
            continue;
        }
        let mut dialect: &'static str = "xir.structured";
        for step in &steps {
            let decl = reg.get(step).unwrap();
            if !decl.info.consumes.iter().any(|c| {
                let s = xir_spec::spec();
                s.dialect(dialect).unwrap().refines(s.dialect(c).unwrap())
            }) {
                failures.push(format!("{name}: `{step}` cannot take `{dialect}`"));
                break;
            }
            let pass = (decl.create)(None).unwrap();
            let mut cache = AnalysisCache::default();
            let mut cx = PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
            if let Err(e) = pass.run(&mut m, &mut cx) {
                failures.push(format!("{name}: {step}: {e}\n{}", xir::diag::render(&e.diagnostics)));
                break;
            }
            if let Some(d) = decl.info.produced_from(dialect) {
                dialect = d;
            }
            let diags = xir::dialect::check_module(&m, xir_spec::spec().dialect(dialect).unwrap());
            if !diags.is_empty() {
                failures.push(format!("{name}: after {step} not in {dialect}:\n{}", xir::diag::render(&diags)));
                break;
            }
            let got = run_all(&m, &inputs);
            if got != expected {
                failures.push(format!("{name}: results differ after {step}"));
                break;
            }
        }
        checked += 1;
    }
    assert!(checked >= 20, "corpus found ({checked} kernels)");
    assert!(failures.is_empty(), "{} of {checked} corpus files failed:\n{}", failures.len(), failures.join("\n"));
}
