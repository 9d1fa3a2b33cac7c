//! Load-time checks of RON pipelines against a registry of stand-in passes
//! whose contracts mirror the SPIR-V legalization chain. Each case states
//! what it checks; errors are asserted by message and exact `line:col`.

use serde::Deserialize;
use xir::diag::Severity;
use xir::pass::{
    options_from_ron, AnalysisKind, OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome,
    PassRegistry, Produces,
};
use xir::pipeline::{LoadFailure, Loader, Pipeline};
use xir::Module;

struct Fake(&'static PassInfo);

impl Pass for Fake {
    fn info(&self) -> &PassInfo {
        self.0
    }
    fn run(&self, _m: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        Ok(PassOutcome::changed(false))
    }
}

macro_rules! fake {
    ($reg:expr, $name:literal, [$($c:literal),*], $prod:expr, [$($e:literal),*]) => {{
        static INFO: PassInfo = PassInfo {
            name: $name,
            doc: "stand-in",
            consumes: &[$($c),*],
            produces: $prod,
            preserves: &[AnalysisKind::Cfg],
            eliminates: &[$($e),*],
        };
        $reg.register(PassDecl { info: INFO.clone(), options: &[], create: |v| {
            options_from_ron::<()>(v)?;
            Ok(Box::new(Fake(&INFO)))
        }});
    }};
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[allow(dead_code)]
struct DceOptions {
    aggressive: bool,
    budget: u32,
}

static DCE: PassInfo = PassInfo {
    name: "dce",
    doc: "stand-in dead code elimination",
    consumes: &["xir"],
    produces: Produces::Same,
    preserves: &[],
    eliminates: &[],
};

fn registry() -> PassRegistry {
    let mut reg = PassRegistry::new();
    fake!(
        reg,
        "lower_break_continue",
        ["xir.structured"],
        Produces::Dialect("xir.structured.lowered"),
        ["@structured_jump"]
    );
    fake!(reg, "destructure_cfg", ["xir.structured", "xir.structured.lowered"], Produces::Dialect("xir.raw"), []);
    fake!(reg, "reg2mem", ["xir.raw"], Produces::Dialect("xir.raw.phi_free"), []);
    fake!(reg, "restructure_cfg", ["xir.raw.phi_free"], Produces::Dialect("xir.restructured"), []);
    fake!(reg, "mem2reg", ["xir"], Produces::Same, []);
    reg.register(PassDecl {
        info: DCE.clone(),
        options: &[
            OptionDoc { name: "aggressive", ty: "bool", default: "false", doc: "remove more" },
            OptionDoc { name: "budget", ty: "u32", default: "0", doc: "work limit" },
        ],
        create: |v| {
            let _o: DceOptions = options_from_ron(v)?;
            Ok(Box::new(Fake(&DCE)))
        },
    });
    reg.declare_hook("callable_specialization", "target policy");
    reg
}

fn load(text: &str) -> Result<Pipeline, LoadFailure> {
    let reg = Box::leak(Box::new(registry()));
    Loader::new(reg).load_text("test.ron".into(), None, text)
}

/// The first error, as `line:col: message`.
fn first_error(text: &str) -> String {
    match load(text) {
        Ok(_) => panic!("pipeline unexpectedly loaded:\n{text}"),
        Err(f) => {
            let e = f.errors().next().expect("a failure has an error");
            format!("{}:{}: {}", e.loc.line, e.loc.col, e.message)
        }
    }
}

fn header(steps: &str) -> String {
    format!("Pipeline(\n    name: \"t\",\n    input: \"xir.structured\",\n    output: \"xir.restructured\",\n    steps: [\n{steps}\n    ],\n)\n")
}

#[test]
fn a_well_formed_pipeline_loads_with_every_step() {
    let p = load(&header(
        "        Pass(\"lower_break_continue\"),\n        Pass(name: \"dce\", options: (aggressive: true)),\n        OptGroup(min_level: 2, steps: [Pass(\"mem2reg\")]),\n        Pass(\"destructure_cfg\"),\n        FixedPoint(max_iterations: 3, steps: [Pass(\"dce\", (budget: 7))]),\n        Hook(\"callable_specialization\"),\n        Pass(\"reg2mem\"),\n        Pass(\"restructure_cfg\"),",
    ))
    .unwrap_or_else(|f| panic!("{f}"));
    let names: Vec<_> = p.pass_steps().iter().map(|s| s.name.clone()).collect();
    assert_eq!(
        names,
        ["lower_break_continue", "dce", "mem2reg", "destructure_cfg", "dce", "reg2mem", "restructure_cfg"]
    );
    assert_eq!(p.pass_steps()[1].options.as_deref(), Some("(aggressive: true)"));
    // The unbound hook is noted, not an error.
    assert!(p.warnings.iter().any(|w| w.severity == Severity::Note && w.message.contains("not bound")));
}

#[test]
fn check_that_a_dialect_mismatch_names_the_missing_pass() {
    let e = first_error(&header("        Pass(\"destructure_cfg\"),\n        Pass(\"restructure_cfg\"),"));
    assert_eq!(
        e,
        "7:9: `restructure_cfg` needs `xir.raw.phi_free`, but after `destructure_cfg` the IR is `xir.raw`: insert `reg2mem`"
    );
}

#[test]
fn check_that_an_unreached_output_suggests_what_to_append() {
    let e = first_error(&header("        Pass(\"destructure_cfg\"),"));
    assert_eq!(
        e,
        "4:13: pipeline `t` declares output `xir.restructured`, but after `destructure_cfg` the IR is `xir.raw`: append `reg2mem`, then `restructure_cfg`"
    );
}

#[test]
fn check_that_unknown_passes_get_the_nearest_name() {
    let e = first_error(&header("        Pass(\"lower_break_continue\"),\n        Pass(\"mem2rag\"),"));
    assert_eq!(e, "7:14: unknown pass `mem2rag`; did you mean `mem2reg`?");
}

#[test]
fn check_that_options_are_checked_by_name_and_type() {
    let e = first_error(&header("        Pass(\"dce\", (agressive: true)),"));
    assert_eq!(e, "6:22: unknown option `agressive` for pass `dce`; did you mean `aggressive`?");
    let e = first_error(&header("        Pass(\"dce\", (aggressive: true, budget: \"lots\")),"));
    assert!(e.starts_with("6:48: option `budget` of pass `dce` expects u32, found the string \"lots\""), "{e}");
    let e = first_error(&header("        Pass(\"mem2reg\", (x: 1)),"));
    assert!(e.starts_with("6:26: unknown option `x` for pass `mem2reg` (`mem2reg` takes no options)"), "{e}");
}

#[test]
fn check_that_an_opt_group_is_checked_on_both_branches() {
    // When the group is skipped the IR is still structured, which
    // `reg2mem` does not accept.
    let e = first_error(&header(
        "        OptGroup(min_level: 1, steps: [Pass(\"destructure_cfg\")]),\n        Pass(\"reg2mem\"),\n        Pass(\"restructure_cfg\"),",
    ));
    assert!(
        e.starts_with("7:9: `reg2mem` needs `xir.raw`, but at the pipeline input (when the opt-level 1 group at test.ron:6:9 is skipped) the IR is `xir.structured`: insert `destructure_cfg`"),
        "{e}"
    );
}

#[test]
fn check_that_a_fixed_point_body_must_accept_its_own_output() {
    let e = first_error(&header("        FixedPoint(max_iterations: 2, steps: [Pass(\"destructure_cfg\")]),"));
    assert_eq!(
        e,
        "6:47: `destructure_cfg` needs `xir.structured` or `xir.structured.lowered`, but after `destructure_cfg` the IR \
         is `xir.raw`: insert `reg2mem`, then `restructure_cfg` (on iteration 2 of the fixed-point group at test.ron:6:9)"
    );
}

#[test]
fn lint_warns_about_a_step_that_can_never_fire() {
    let p = load(&header(
        "        Pass(\"lower_break_continue\"),\n        Pass(\"destructure_cfg\"),\n        Pass(\"reg2mem\"),\n        Pass(\"restructure_cfg\"),",
    ))
    .unwrap();
    assert!(p.warnings.iter().all(|w| !w.message.contains("never")), "{:?}", p.warnings);
    let text = "Pipeline(name: \"t\", input: \"xir.raw\", output: \"xir.raw.phi_free\", steps: [\n  Pass(\"reg2mem\"),\n  Pass(\"reg2mem\"),\n])";
    let p = load(text).unwrap();
    let w: Vec<String> = p.warnings.iter().map(|w| format!("{}:{}: {}", w.loc.line, w.loc.col, w.message)).collect();
    assert_eq!(w, ["3:3: `reg2mem` re-establishes spill_slots_tagged for nothing: after `reg2mem` the IR is `xir.raw.phi_free`, where it already holds"]);
    let text = "Pipeline(name: \"t\", input: \"xir.structured.lowered\", output: \"xir.raw\", steps: [\n  Pass(\"destructure_cfg\"),\n])";
    assert!(load(text).unwrap().warnings.is_empty());
    // lower_break_continue on IR that cannot contain break/continue.
    let mut reg = registry();
    static LBC: PassInfo = PassInfo {
        name: "lower_any",
        doc: "stand-in",
        consumes: &["xir"],
        produces: Produces::Same,
        preserves: &[],
        eliminates: &["break", "continue"],
    };
    reg.register(PassDecl { info: LBC.clone(), options: &[], create: |_| Ok(Box::new(Fake(&LBC))) });
    let text = "Pipeline(name: \"t\", input: \"xir.raw\", output: \"xir.raw\", steps: [\n  Pass(\"lower_any\"),\n])";
    let p = Loader::new(&reg).load_text("t.ron".into(), None, text).unwrap();
    assert_eq!(p.warnings.len(), 1);
    assert_eq!(
        p.warnings[0].message,
        "`lower_any` can never change anything here: at the pipeline input the IR is `xir.raw`, which allows none of break, continue"
    );
    assert_eq!((p.warnings[0].loc.line, p.warnings[0].loc.col), (2, 3));
}

#[test]
fn includes_resolve_relative_paths_and_detect_cycles() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let a = dir.join("a.ron");
    let b = dir.join("b.ron");
    std::fs::write(
        &a,
        "Pipeline(name: \"a\", input: \"xir.structured\", output: \"xir.raw\", steps: [Include(\"b.ron\")])",
    )
    .unwrap();
    std::fs::write(
        &b,
        "Pipeline(name: \"b\", input: \"xir.structured\", output: \"xir.raw\", steps: [Pass(\"destructure_cfg\")])",
    )
    .unwrap();
    let reg = registry();
    let p = Loader::new(&reg).load_path(&a).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(p.pass_steps()[0].name, "destructure_cfg");
    assert!(p.pass_steps()[0].loc.file.ends_with("b.ron"));
    std::fs::write(
        &b,
        "Pipeline(name: \"b\", input: \"xir.structured\", output: \"xir.raw\", steps: [\n  Include(\"a.ron\")])",
    )
    .unwrap();
    let f = Loader::new(&reg).load_path(&a).err().expect("cycle");
    let e = f.errors().next().unwrap();
    assert_eq!((e.loc.line, e.loc.col), (2, 11));
    assert!(e.loc.file.ends_with("b.ron"));
    assert_eq!(e.message, "include cycle: a.ron -> b.ron -> a.ron");
}

/// A chain of 3,500 includes (it once overflowed the stack at about
/// 3,400) stops at the documented nesting limit with a located error.
#[test]
fn a_long_include_chain_is_refused_at_the_nesting_limit() {
    const N: usize = 3_500;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let head = "Pipeline(name: \"p\", input: \"xir.structured\", output: \"xir.raw\", steps: [\n";
    for i in 0..N {
        let step =
            if i + 1 < N { format!("  Include(\"p{}.ron\")", i + 1) } else { "  Pass(\"destructure_cfg\")".into() };
        std::fs::write(dir.join(format!("p{i}.ron")), format!("{head}{step}])")).unwrap();
    }
    let reg = registry();
    let f = Loader::new(&reg).load_path(&dir.join("p0.ron")).err().expect("too deep");
    let errors: Vec<_> = f.errors().collect();
    let e = errors[0];
    assert!(e.loc.file.ends_with(&format!("p{}.ron", xir::pipeline::MAX_NESTING)), "{}", e.loc.file);
    assert_eq!((e.loc.line, e.loc.col), (2, 11));
    assert_eq!(e.message, "steps nest more than 64 deep (includes and groups together)");
    // Every enclosing include says why it failed; nothing deeper was read.
    assert_eq!(errors.len(), 1 + xir::pipeline::MAX_NESTING);
    // At the limit itself the chain loads.
    let at_limit = dir.join(format!("p{}.ron", N - 1 - xir::pipeline::MAX_NESTING));
    let p = Loader::new(&reg).load_path(&at_limit).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(p.pass_steps()[0].name, "destructure_cfg");
}

#[test]
fn syntax_errors_carry_rons_position() {
    let e = first_error("Pipeline(\n  name: \"t\"\n  input: \"xir\",\n)");
    assert!(e.starts_with("3:3: RON syntax:"), "{e}");
}

/// Embedded pipelines skip `ron`'s syntax pass (their syntax was checked
/// when they were embedded); a directory's file that overrides one, by
/// name or as an include, still gets it, located in that file.
#[test]
fn an_override_of_an_embedded_pipeline_keeps_rons_located_syntax_error() {
    const INNER: &str =
        "Pipeline(name: \"inner\", input: \"xir.structured\", output: \"xir.raw\", steps: [Pass(\"destructure_cfg\")])";
    const OUTER: &str =
        "Pipeline(name: \"outer\", input: \"xir.structured\", output: \"xir.raw\", steps: [Include(\"inner\")])";
    const SHIPPED: &[(&str, &str)] = &[("inner", INNER), ("outer", OUTER)];
    let reg = registry();
    let p = Loader::new(&reg).with_shipped(SHIPPED).load("outer").unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(p.pass_steps()[0].name, "destructure_cfg");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("inner.ron"), "Pipeline(\n  name: \"inner\"\n  input: \"xir.structured\",\n)")
        .unwrap();
    let loader = Loader::new(&reg).with_search_dir(tmp.path()).with_shipped(SHIPPED);
    for name in ["inner", "outer"] {
        let f = loader.load(name).err().unwrap_or_else(|| panic!("`{name}` loaded the broken override"));
        let e = f.errors().next().unwrap();
        assert!(e.loc.file.ends_with("inner.ron"), "{}", e.loc.file);
        assert_eq!((e.loc.line, e.loc.col, e.message.starts_with("RON syntax:")), (3, 3, true), "{}", e.message);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

    /// Loading never panics: every mangled pipeline either loads or fails
    /// with located diagnostics.
    #[test]
    fn mangled_pipelines_never_panic(edits in proptest::collection::vec((0usize..400, proptest::char::any(), proptest::bool::ANY), 1..6)) {
        let mut text: Vec<char> = header(
            "        Pass(\"lower_break_continue\"),\n        Pass(\"dce\", (budget: 2)),\n        OptGroup(min_level: 1, steps: [Pass(\"mem2reg\")]),\n        FixedPoint(max_iterations: 2, steps: [Pass(name: \"dce\", options: (aggressive: true))]),\n        Pass(\"destructure_cfg\"), Hook(\"callable_specialization\"), Pass(\"reg2mem\"), Pass(\"restructure_cfg\"),",
        )
        .chars()
        .collect();
        for (at, c, insert) in edits {
            let at = at % (text.len() + 1);
            if insert {
                text.insert(at, c);
            } else if at < text.len() {
                text.remove(at);
            }
        }
        let text: String = text.into_iter().collect();
        if let Err(f) = load(&text) {
            proptest::prop_assert!(f.errors().count() > 0);
            for e in f.errors() {
                proptest::prop_assert!(e.loc.line >= 1 && e.loc.col >= 1);
            }
        }
    }
}
