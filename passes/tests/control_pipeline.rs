//! `pipelines/spirv-legalize.ron`: it passes the load-time check against
//! the registered passes, deleting `reg2mem` from it fails the load with a
//! message naming `reg2mem`, and every corpus kernel goes through it with
//! the verifier clean after each step and identical interpreter results.

mod control_support;

use control_support::{parse, run};
use xir::pass::PassRegistry;
use xir::pipeline::{Loader, PassManager, RunOptions};

fn registry() -> PassRegistry {
    let mut reg = PassRegistry::new();
    reg.declare_hook("callable_specialization", "target policy for callables");
    xir_passes::register_all(&mut reg);
    reg
}

fn pipeline_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pipelines/spirv-legalize.ron")
}

fn pipeline_text() -> String {
    std::fs::read_to_string(pipeline_path()).expect("spirv-legalize.ron")
}

// Check that the shipped pipeline loads: every pass exists and each step
// consumes what the previous one produces.
#[test]
fn spirv_legalize_loads() {
    let reg = registry();
    let p = Loader::new(&reg).load_text("spirv-legalize.ron".into(), Some(&pipeline_path()), &pipeline_text());
    let p = p.unwrap_or_else(|f| panic!("{f}"));
    let names: Vec<String> = p.pass_steps().iter().map(|s| s.name.clone()).collect();
    let pos = |n: &str| names.iter().position(|x| x == n).unwrap_or_else(|| panic!("{n} missing: {names:?}"));
    assert!(pos("destructure_cfg") < pos("reg2mem"));
    assert!(pos("reg2mem") < pos("restructure_cfg"));
    assert!(pos("restructure_cfg") < pos("clear_inactive_block_payloads"));
    assert!(pos("clear_inactive_block_payloads") < pos("mem2reg"));
    assert!(pos("mem2reg") < pos("audit_reg2mem_spills"));
    assert!(pos("audit_reg2mem_spills") < pos("fix_self_referential"));
}

// Check that removing reg2mem is caught at load time, naming it.
#[test]
fn spirv_legalize_without_reg2mem_fails_naming_it() {
    let reg = registry();
    let text = pipeline_text().replace("        Pass(\"reg2mem\"),\n", "");
    assert!(!text.contains("Pass(\"reg2mem\")"));
    let err = match Loader::new(&reg).load_text("spirv-legalize.ron".into(), Some(&pipeline_path()), &text) {
        Ok(_) => panic!("the pipeline without reg2mem loaded"),
        Err(f) => f,
    };
    let msg = err.to_string();
    assert!(msg.contains("reg2mem"), "{msg}");
    assert!(msg.contains("restructure_cfg"), "{msg}");
}

// Check that every corpus kernel goes through spirv-legalize, verified after
// each step, with the same interpreter outputs.
#[test]
fn corpus_through_spirv_legalize() {
    let reg = registry();
    let p = Loader::new(&reg)
        .load_text("spirv-legalize.ron".into(), Some(&pipeline_path()), &pipeline_text())
        .unwrap_or_else(|f| panic!("{f}"));
    for (k, level) in control_support::corpus().into_iter().flat_map(|k| [0u8, 2].map(|l| (k.clone(), l))) {
        let mut m = parse(&k.src);
        let before = run(&m, &k.kernel, &k.inputs);
        let opts = RunOptions { verify_each: true, opt_level: level, ..RunOptions::default() };
        let mut log = Vec::new();
        if let Err(e) = PassManager::new(&p, opts).run(&mut m, &mut log) {
            panic!("{} at -O{level}: {e}\n{}", k.name, String::from_utf8_lossy(&log));
        }
        let after = run(&m, &k.kernel, &k.inputs);
        if let Some(mm) = before.first_mismatch(&after, |_, _| false) {
            panic!("{}: outputs differ: {mm}\n{}", k.name, xir::text::print_module(&m));
        }
    }
}

// mem2reg produces per consumed dialect: on a raw CFG the IR stays raw (so a
// raw-only pass may follow), on a restructured CFG it becomes restructured SSA.
#[test]
fn mem2reg_output_depends_on_its_input_dialect() {
    let reg = registry();
    let load = |input: &str, output: &str, steps: &str| {
        let text = format!("Pipeline(name: \"t\", input: \"{input}\", output: \"{output}\", steps: [{steps}])");
        Loader::new(&reg).load_text("t.ron".into(), None, &text)
    };
    let raw =
        load("xir.structured", "xir.raw", "Pass(\"destructure_cfg\"), Pass(\"mem2reg\"), Pass(\"loop_rotation\")");
    raw.unwrap_or_else(|f| panic!("raw stretch after mem2reg: {f}"));
    let restructured = load(
        "xir.raw.phi_free",
        "xir.restructured.ssa",
        "Pass(\"restructure_cfg\"), Pass(\"mem2reg\"), Pass(\"audit_reg2mem_spills\")",
    );
    restructured.unwrap_or_else(|f| panic!("restructured SSA after mem2reg: {f}"));
    // A restructured-only pass cannot follow mem2reg on a raw CFG.
    let err = load(
        "xir.structured",
        "xir.raw",
        "Pass(\"destructure_cfg\"), Pass(\"mem2reg\"), Pass(\"audit_reg2mem_spills\")",
    )
    .err()
    .expect("audit after a raw mem2reg loaded");
    assert!(err.to_string().contains("audit_reg2mem_spills"), "{err}");
    let info = &reg.get("mem2reg").expect("mem2reg").info;
    assert_eq!(info.produced_from("xir.raw.phi_free"), Some("xir.raw"));
    assert_eq!(info.produced_from("xir.restructured"), Some("xir.restructured.ssa"));
    assert_eq!(info.produced_from("xir.restructured.unspilled"), None, "not consumed: Phis are allowed there");
}
