//! Helpers shared by the `opt_*` tests: run one optimization pass through
//! the registry on XIR text, check the verifier, and compare interpreter
//! results before and after.

#![allow(dead_code)]

use xir::interp::{Inputs, Outputs};
use xir::pass::{AnalysisCache, PassContext, PassOutcome, PassRegistry};
use xir::Module;

pub fn registry() -> PassRegistry {
    let mut reg = PassRegistry::new();
    xir_passes::register_all(&mut reg);
    reg
}

pub fn parse(src: &str) -> Module {
    xir::text::parse_module(src, "test.xir")
        .unwrap_or_else(|d| panic!("parse failed:\n{}\n{src}", xir::diag::render(&d)))
}

/// Run pass `name` with RON options `opts` (`None`: defaults); the
/// verifier must accept the result.
pub fn run_pass(m: &mut Module, name: &str, opts: Option<&str>, fast_math: bool) -> PassOutcome {
    let reg = registry();
    let decl = reg.get(name).unwrap_or_else(|| panic!("pass `{name}` is registered"));
    let value: Option<ron::Value> = opts.map(|o| ron::from_str(o).expect("options parse"));
    let pass = (decl.create)(value.as_ref()).unwrap_or_else(|e| panic!("create {name}: {e}"));
    let mut cache = AnalysisCache::default();
    let mut cx = PassContext { analyses: &mut cache, opt_level: 2, fast_math };
    let out = pass.run(m, &mut cx).unwrap_or_else(|e| panic!("{name} failed: {e}"));
    let diags = xir::verify::verify_module(m);
    assert!(diags.is_empty(), "verifier after {name}:\n{}\n{}", xir::diag::render(&diags), xir::text::print_module(m));
    out
}

/// The statistic `key` of a pass outcome.
pub fn stat<'a>(out: &'a PassOutcome, key: &str) -> &'a str {
    out.stats.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("no stat `{key}`"))
}

/// Run the first kernel of `m`.
pub fn interp(m: &Module, inputs: &Inputs) -> Result<Outputs, String> {
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
    xir::interp::run_kernel(m, k, inputs).map_err(|e| e.message)
}

/// Run pass `name` on `src` and check: the printed result equals
/// `expected` exactly, and the interpreter gives the same outputs before and
/// after on `inputs`.
pub fn check_exact(
    src: &str,
    name: &str,
    opts: Option<&str>,
    fast: bool,
    expected: &str,
    inputs: &Inputs,
) -> PassOutcome {
    let mut m = parse(src);
    let before = interp(&m, inputs);
    let out = run_pass(&mut m, name, opts, fast);
    let printed = xir::text::print_module(&m);
    assert_eq!(printed.trim(), expected.trim(), "\n--- got ---\n{printed}\n--- expected ---\n{expected}");
    if !fast {
        assert_eq!(interp(&m, inputs), before, "interpreter results changed by {name}");
    }
    out
}

/// Inputs from JSON text; panics with the text on a parse error.
pub fn inputs(json: &str) -> Inputs {
    Inputs::from_json(json).unwrap_or_else(|e| panic!("inputs {json}: {e}"))
}

/// Run `pass` on `src`; the result must equal `src` (nothing changed).
pub fn unchanged(src: &str, pass: &str, opts: Option<&str>) {
    let mut m = parse(src);
    let out = run_pass(&mut m, pass, opts, false);
    assert!(!out.changed, "{pass} reported a change");
    assert_eq!(xir::text::print_module(&m), src);
}
