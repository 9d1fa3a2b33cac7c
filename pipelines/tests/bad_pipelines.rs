//! Every file of `pipelines/bad/` is a pipeline with one load-time mistake;
//! loading it with the real registry must fail with the expected message at
//! the expected `line:col`. Every shipped pipeline must load cleanly.

use std::path::PathBuf;

use xir::diag::Severity;

/// (file, line, col, message substring)
const CASES: &[(&str, usize, usize, &str)] = &[
    ("syntax.ron", 4, 5, "RON syntax: Expected comma"),
    ("unknown_pass.ron", 7, 14, "unknown pass `mem2rag`; did you mean `mem2reg`?"),
    ("unknown_option.ron", 7, 22, "unknown option `fold_structure` for pass `dce`; did you mean `fold_structured`?"),
    ("wrong_option_type.ron", 7, 54, "option `fold_structured` of pass `dce` expects bool, found the number 3"),
    ("duplicate_option.ron", 7, 45, "option `fold_structured` of pass `dce` is given twice"),
    ("bad_options_form.ron", 7, 21, "options of pass `dce` must be written `(option: value, ...)`, found a list"),
    ("include_cycle.ron", 8, 17, "include cycle: include_cycle.ron -> include_cycle.ron"),
    (
        "missing_include.ron",
        7,
        17,
        "cannot include `claenup`: no shipped pipeline named `claenup`; did you mean `cleanup`?",
    ),
    (
        "dialect_flow.ron",
        9,
        9,
        "`restructure_cfg` needs `xir.raw.phi_free`, but after `destructure_cfg` the IR is `xir.raw`: insert `reg2mem`",
    ),
    (
        "output_not_reached.ron",
        5,
        13,
        "pipeline `output-not-reached` declares output `xir.restructured`, but after `destructure_cfg` the IR is \
         `xir.raw`: append `reg2mem`, then `restructure_cfg`",
    ),
    ("unknown_dialect.ron", 5, 13, "unknown dialect `xir.spirv2`; did you mean `xir.spirv`?"),
    ("empty_pipeline.ron", 6, 12, "pipeline has no steps"),
    ("bad_opt_gate.ron", 7, 29, "opt-level gate 7 can never open"),
    ("fixed_point_zero.ron", 7, 36, "`max_iterations` must be between 1 and 4294967295, found 0"),
    ("unknown_hook.ron", 7, 14, "unknown hook `callable_specialisation`; did you mean `callable_specialization`?"),
    ("unknown_field.ron", 5, 5, "unknown field `ouptut` in pipeline; did you mean `output`?"),
    ("missing_field.ron", 2, 1, "missing field `input`"),
    ("wrong_field_type.ron", 3, 11, "field `name` must be a string, found the number 3"),
    ("unknown_step_kind.ron", 7, 9, "unknown step kind `Passs`; did you mean `Pass`?"),
    (
        "include_dialect.ron",
        7,
        9,
        "included pipeline `to-raw` needs `xir.structured`, but at the pipeline input the IR is `xir.raw`: insert ",
    ),
    (
        "fixed_point_unstable.ron",
        9,
        13,
        "`destructure_cfg` needs `xir.structured` or `xir.structured.lowered`, but after `destructure_cfg` the IR is \
         `xir.raw`",
    ),
    (
        "opt_group_skipped.ron",
        9,
        9,
        "`reg2mem` needs `xir.raw`, but at the pipeline input (when the opt-level 1 group at",
    ),
];

fn bad_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bad")
}

#[test]
fn every_bad_pipeline_fails_with_its_message_at_its_position() {
    let reg = xir_pipelines::registry();
    let loader = xir_pipelines::loader(&reg, None);
    let mut wrong = Vec::new();
    for &(file, line, col, message) in CASES {
        let path = bad_dir().join(file);
        match loader.load_path(&path) {
            Ok(_) => wrong.push(format!("{file}: loaded without error")),
            Err(f) => {
                let e = f.errors().next().expect("a failure carries an error");
                let got = (e.loc.line, e.loc.col);
                let rendered = format!("{}:{}:{}: error: {}", path.display(), line, col, e.message);
                if got != (line, col) || !e.message.contains(message) || e.to_string() != rendered {
                    wrong.push(format!("{file}: expected {line}:{col} `{message}`\n   got {e}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_fixture_has_a_case_and_the_classes_are_distinct() {
    let mut files: Vec<String> = std::fs::read_dir(bad_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ron"))
        .collect();
    files.sort();
    let mut cased: Vec<String> = CASES.iter().map(|c| c.0.to_string()).collect();
    cased.sort();
    assert_eq!(files, cased);
    assert!(CASES.len() >= 15);
}

#[test]
fn every_shipped_pipeline_loads_without_errors_or_warnings() {
    let reg = xir_pipelines::registry();
    let loader = xir_pipelines::loader(&reg, None);
    let shipped = loader.shipped();
    assert!(shipped.iter().any(|s| s == "cleanup") && shipped.iter().any(|s| s == "to-raw"), "{shipped:?}");
    for name in shipped {
        let p = loader.load(&name).unwrap_or_else(|f| panic!("{name}:\n{f}"));
        let warnings: Vec<String> =
            p.warnings.iter().filter(|w| w.severity == Severity::Warning).map(|w| w.to_string()).collect();
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        assert!(!p.pass_steps().is_empty());
    }
}

#[test]
fn the_registry_is_consistent_with_the_spec() {
    let reg = xir_pipelines::registry();
    assert_eq!(reg.validate(), Vec::<String>::new());
    assert!(reg.get("debug.break_ir").is_some());
    assert!(reg.hook(xir_pipelines::CALLABLE_SPECIALIZATION).is_some());
}

/// A rules file that a pass option names is located in that file, with the
/// option as a secondary label; one that cannot be read, at the option.
#[test]
fn a_bad_options_file_is_located_in_that_file_with_the_option_as_label() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.ron");
    std::fs::write(&rules, "[\n  (name: \"x\", lhs: \"(+ ?a 0)\", rhs: \"?a\",\n  oops\n]\n").unwrap();
    let pipeline = dir.path().join("p.ron");
    let text = format!(
        "Pipeline(\n    name: \"p\",\n    input: \"xir.raw\",\n    output: \"xir.raw\",\n    steps: [\n        Pass(\"algebraic_simplify\", (rules_file: {:?})),\n    ],\n)\n",
        rules.display().to_string()
    );
    std::fs::write(&pipeline, &text).unwrap();
    let reg = xir_pipelines::registry();
    let loader = xir_pipelines::loader(&reg, None);
    let f = loader.load_path(&pipeline).err().expect("the bad rules file fails the load");
    let d: Vec<_> = f.diagnostics.iter().map(|d| d.to_diagnostic()).collect();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].file.as_deref(), Some(rules.display().to_string().as_str()));
    let span = d[0].span.expect("located in the rules file");
    assert_eq!((span.line, span.col), (3, 3), "{}", d[0]);
    assert_eq!(d[0].labels.len(), 1);
    let label = &d[0].labels[0];
    assert_eq!(label.file.as_deref(), Some(pipeline.display().to_string().as_str()));
    assert_eq!((label.span.line, label.span.col), (6, 49));
    assert_eq!(label.message, "the file named by option `rules_file` here");

    std::fs::remove_file(&rules).unwrap();
    let f = loader.load_path(&pipeline).err().expect("a missing rules file fails the load");
    let e = f.errors().next().unwrap();
    assert_eq!((e.loc.line, e.loc.col), (6, 49));
    assert!(e.message.starts_with("option `rules_file`: "), "{e}");
    assert!(e.message.contains("cannot read rules file"), "{e}");
}
